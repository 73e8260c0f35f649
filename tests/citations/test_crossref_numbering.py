"""The cross-reference pass at resolve time: figures and tables numbered apart in document
order, references resolved, unknown and repeated labels reported."""

from __future__ import annotations

import re

import pytest

from renderers.document import (
    CrossRef,
    Emph,
    Figure,
    Link,
    Paragraph,
    Table,
    Text,
    iter_blocks,
    iter_inlines,
    plain_text,
)
from renderers.errors import StrictError
from renderers.readers.markdown import read_markdown
from tests.support.render import resolve_rows

POOL = [{"sid": 1, "title": "A source", "url": "https://example.org/a"}]
TABLE = "| a | b |\n|---|---|\n| 1 | 2 |\n"
DOC = f"""See @tbl:second, @fig:one and [@fig:two].

![One](one.png){{#fig:one}}

{TABLE}
: First {{#tbl:first}}

![Unlabelled](x.png)

- ![Two](two.png){{#fig:two}}

> {TABLE.replace(chr(10), chr(10) + "> ")}
> : Second {{#tbl:second}}
"""


def numbered(markdown: str, **options: object) -> tuple[list[tuple[str, int]], list[CrossRef]]:
    rdoc = resolve_rows(read_markdown(markdown), POOL, **options)
    blocks = [(b.label, b.number) for b in iter_blocks(rdoc.document.blocks)
              if isinstance(b, Figure | Table)]
    refs = [n for n in iter_inlines(rdoc.document.blocks) if isinstance(n, CrossRef)]
    return blocks, refs


def test_figures_and_tables_count_apart_in_document_order_nested_ones_included() -> None:
    blocks, refs = numbered(DOC)
    assert blocks == [("fig:one", 1), ("tbl:first", 1), ("", 0), ("fig:two", 2),
                      ("tbl:second", 2)]
    assert [(r.label, r.number) for r in refs] == [("tbl:second", 2), ("fig:one", 1),
                                                   ("fig:two", 2)]


def test_an_unknown_label_keeps_its_text_with_a_warning() -> None:
    rdoc = resolve_rows(read_markdown("See @fig:nope and @fig:one.\n\n![A](a.png){#fig:one}\n"),
                        POOL)
    paragraph = rdoc.document.blocks[0]
    assert isinstance(paragraph, Paragraph) and paragraph.children[0] == Text("See @fig:nope and ")
    assert any("unknown label 'fig:nope'" in w for w in rdoc.warnings)


def test_strict_refuses_an_unknown_label() -> None:
    with pytest.raises(StrictError, match="fig:nope"):
        resolve_rows(read_markdown("See @fig:nope.\n"), POOL, strict=True)


def test_a_label_defined_twice_keeps_the_first() -> None:
    rdoc = resolve_rows(read_markdown(
        "@fig:a\n\n![A](a.png){#fig:a}\n\n![B](b.png){#fig:a}\n"), POOL)
    numbers = [b.number for b in rdoc.document.blocks if isinstance(b, Figure)]
    refs = [n.number for n in iter_inlines(rdoc.document.blocks) if isinstance(n, CrossRef)]
    assert numbers == [1, 2] and refs == [1]
    assert any("defined twice" in w for w in rdoc.warnings)


def test_a_document_without_labels_is_left_as_it_was() -> None:
    document = read_markdown("# T\n\n![A](a.png)\n\nText [[S:1]].\n")
    rdoc = resolve_rows(document, POOL)
    assert all(b.number == 0 for b in rdoc.document.blocks if isinstance(b, Figure))
    assert rdoc.warnings == ()


SIX = "".join(f"![{n}](x.png){{#fig:{n}}}\n\n" for n in "abcdef") + f"{TABLE}\n: T {{#tbl:t}}\n\n"


def shown(markdown: str) -> list[str]:
    """What each paragraph after the figures shows (a group's words and numbers in one)."""
    rdoc = resolve_rows(read_markdown(SIX + markdown), POOL)
    return [plain_text(b.children) for b in rdoc.document.blocks if isinstance(b, Paragraph)]


@pytest.mark.parametrize(
    ("markdown", "words"),
    [
        ("[@fig:a; @fig:b; @fig:c]", "Figures 1–3"),
        ("[@fig:a; @fig:b]", "Figures 1 and 2"),  # two in a row are no range
        ("[@fig:e; @fig:a; @fig:c]", "Figures 1, 3 and 5"),  # sorted
        ("[@fig:a; @fig:b; @fig:c; @fig:e; @fig:f]", "Figures 1–3, 5 and 6"),
        ("[@fig:b; @fig:b]", "Figure 2"),  # each number once
        ("[@fig:a; @tbl:t]", "Figure 1 and Table 1"),
        ("[@fig:a; @fig:b; @tbl:t; @fig:c]", "Figures 1 and 2, Table 1 and Figure 3"),
        ("[-@fig:a; -@fig:b; -@fig:c]", "1–3"),
        ("[-@fig:a; @fig:b]", "1 and Figure 2"),
        ("@Fig:a and [@Tbl:t; @fig:b]", "Figure 1 and Table 1 and Figure 2"),
    ],
)
def test_a_group_is_worded_once(markdown: str, words: str) -> None:
    assert shown(markdown + "\n") == [words]


@pytest.mark.parametrize(
    ("markdown", "words"),
    [
        ("[@fig:a; @fig:zz; @fig:b]", "Figures 1 and 2 and @fig:zz"),  # the known as one
        ("[@fig:zz; @fig:a; @fig:zz]", "Figure 1 and @fig:zz"),  # each label once
        ("[@fig:a; @tbl:zz; -@fig:yy; @tbl:t]", "Figure 1, Table 1, @tbl:zz and -@fig:yy"),
        ("[A @fig:zz; @fig:yy]", "A @fig:zz and @fig:yy"),  # none known: each as written
    ],
)
def test_a_group_keeps_each_unknown_label_as_written_after_the_known_ones(
    markdown: str, words: str
) -> None:
    """Each reference on its own ("Figure 1, @fig:zz, Figure 2") broke the group's wording
    for one typo; now the known ones are worded as one and each unknown one follows as its
    author wrote it, unlinked, with one note per label."""
    rdoc = resolve_rows(read_markdown(SIX + markdown + "\n"), POOL)
    (paragraph,) = [b for b in rdoc.document.blocks if isinstance(b, Paragraph)]
    assert plain_text(paragraph.children) == words
    unknown = [ref for ref in paragraph.children if isinstance(ref, CrossRef) and not ref.number]
    assert unknown and not any(ref.linked for ref in unknown)
    assert [note.message for note in rdoc.notes if note.code.value == "unknown-label"] == [
        f"cross-reference to unknown label {label!r} kept as text"
        for label in dict.fromkeys(re.findall(r"(?:fig|tbl):(?:zz|yy)", markdown))]


def test_a_section_reference_is_a_link_showing_the_heading_title() -> None:
    markdown = ("# The *method* {#sec:method}\n\n# Sec other\n\n"
                "See @sec:method, [@Sec:method] and @sec-other.\n")
    rdoc = resolve_rows(read_markdown(markdown), POOL)
    (paragraph,) = [b for b in rdoc.document.blocks if isinstance(b, Paragraph)]
    assert paragraph.children == (
        Text("See "), Link("#sec:method", (Text("The method"),)), Text(", "),
        Link("#sec:method", (Text("The method"),)),
        Text(" and @sec-other."),  # an id made from the text ("sec-other") is not a label
    )
    assert [n.message for n in rdoc.notes if "sec-other" in n.message] == [
        "cross-reference to unknown label 'sec-other' kept as text"]


def test_a_reference_inside_a_link_is_not_linked_and_a_heading_s_is_its_title() -> None:
    markdown = ("# Intro {#sec:intro}\n\n![A](a.png){#fig:a}\n\n"
                "See [the @sec:intro and *@fig:a*](https://example.org), then @sec:intro.\n")
    rdoc = resolve_rows(read_markdown(markdown), POOL)
    (paragraph,) = [b for b in rdoc.document.blocks if isinstance(b, Paragraph)
                    and plain_text(b.children).startswith("See")]
    outer, after = paragraph.children[1], paragraph.children[3]
    assert isinstance(outer, Link) and outer.children == (
        Text("the Intro and "), Emph((CrossRef("fig:a", number=1, linked=False),)))
    assert after == Link("#sec:intro", (Text("Intro"),))  # outside the link: linked
