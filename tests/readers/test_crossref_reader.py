"""Cross-references in markdown: labels on figures and table captions, ``@fig:…`` references,
and what is never one (e-mail addresses, citation tokens, links)."""

from __future__ import annotations

import pytest

from renderers.document import (
    Cite,
    CrossRef,
    Figure,
    Image,
    Link,
    Paragraph,
    Table,
    Text,
    iter_inlines,
)
from renderers.readers.markdown import read_markdown

TABLE = "| a | b |\n|---|---|\n| 1 | 2 |\n"


def test_a_labelled_image_is_a_numbered_figure_candidate() -> None:
    (figure,) = read_markdown("![The array](solar.png){#fig:solar}\n").blocks
    assert figure == Figure(Image("solar.png", "The array"), (Text("The array"),), "fig:solar")


def test_pandoc_attributes_after_the_label_are_accepted() -> None:
    (figure,) = read_markdown("![A](a.png){#fig:a width=50% .wide}\n").blocks
    assert isinstance(figure, Figure) and figure.label == "fig:a"


def test_a_non_figure_label_after_an_image_stays_text() -> None:
    (paragraph,) = read_markdown("![A](a.png){#tbl:a}\n").blocks
    assert isinstance(paragraph, Paragraph) and paragraph.children[-1] == Text("{#tbl:a}")


@pytest.mark.parametrize(
    "caption", [": Costs per year {#tbl:costs}", "Table: Costs per year {#tbl:costs}"]
)
def test_a_caption_paragraph_after_a_table_labels_it(caption: str) -> None:
    (table,) = read_markdown(f"{TABLE}\n{caption}\n").blocks
    assert isinstance(table, Table)
    assert table.caption == (Text("Costs per year"),) and table.label == "tbl:costs"


def test_a_caption_before_a_table_and_one_without_label() -> None:
    (table,) = read_markdown(f": Costs\n\n{TABLE}").blocks
    assert isinstance(table, Table) and table.caption == (Text("Costs"),) and not table.label


def test_a_colon_paragraph_far_from_a_table_is_prose() -> None:
    blocks = read_markdown(f"{TABLE}\nText.\n\n: not a caption\n").blocks
    assert isinstance(blocks[0], Table) and not blocks[0].caption
    assert blocks[2] == Paragraph((Text(": not a caption"),))


def test_references_bare_bracketed_and_several() -> None:
    (paragraph,) = read_markdown(
        "See @fig:solar, [@tbl:costs] and [@fig:a; @tbl-b] (Quarto's fig-x too: @fig-x).\n"
    ).blocks
    refs = [n.label for n in paragraph.children if isinstance(n, CrossRef)]
    assert refs == ["fig:solar", "tbl:costs", "fig:a", "tbl-b", "fig-x"]
    assert Text(", ") in paragraph.children


@pytest.mark.parametrize(
    "text",
    [
        "mail ops@fig-tree.example or a.b@fig:x.org",
        "user+tag@tbl-host.example",
        "café@fig:x.org and Москва@fig-x.ru",  # letters of scripts that space their words
        "@figure and @tables are words; @section is one too",
        "`@fig:code` is code",
    ],
)
def test_what_is_never_a_reference(text: str) -> None:
    (paragraph,) = read_markdown(text + "\n").blocks
    assert not any(isinstance(n, CrossRef) for n in paragraph.children)


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("见@fig:cap。", "fig:cap"),  # Chinese: no spaces between words
        ("図@fig-cap を参照", "fig-cap"),  # Japanese, a Quarto label
        ("그림@tbl:costs", "tbl:costs"),  # Hangul
        ("ดูภาพ@fig:cap", "fig:cap"),  # Thai: no spaces between words
        ("انظر@fig:cap", "fig:cap"),  # Arabic
        ("ו@fig:cap", "fig:cap"),  # Hebrew: the prefix "and" joins the next word
    ],
)
def test_a_reference_right_after_a_letter_of_an_unspaced_script(text: str, label: str) -> None:
    (paragraph,) = read_markdown(text + "\n").blocks
    assert [n.label for n in paragraph.children if isinstance(n, CrossRef)] == [label]


def test_a_refused_reference_to_a_defined_label_is_a_warning() -> None:
    markdown = ("![Cap](a.png){#fig:cap}\n\n"
                "See Figure@fig:cap, x@fig:other, mail me@fig-cap.example or 见\\@fig:cap.\n")
    document = read_markdown(markdown)
    assert not any(isinstance(n, CrossRef) for n in document.blocks[1].children)
    (warning,) = document.warnings  # not the unknown label, the address, nor the escaped @
    assert warning.startswith("markdown input, line 3: 'Figure@fig:cap' is not read as a "
                              "cross-reference")
    assert "[@fig:cap]" in warning


def test_the_number_only_form_is_read_for_each_reference_of_a_bracket() -> None:
    """pandoc-crossref's ``[-@fig:b]`` asks for the number alone; in a group each reference
    says so for itself (``[-@fig:a; @fig:b]``: "1 and Figure 2"); every reference after a
    group's first is marked as one of the group."""
    document = read_markdown("![A](a.png){#fig:a}\n\n![B](b.png){#fig:b}\n\n"
                             "See [-@fig:b] and [-@fig:a; @fig:b].\n")
    assert document.warnings == ()
    refs = [n for n in iter_inlines(document.blocks) if isinstance(n, CrossRef)]
    assert refs == [CrossRef("fig:b", form="number"), CrossRef("fig:a", form="number"),
                    CrossRef("fig:b", joiner="list")]


def test_a_number_only_reference_that_is_a_link_is_named_in_its_warning() -> None:
    """``[-@fig:cap](url)`` is a link (the ``-@`` of its text stays text): the warning says how
    the number-only form is written, rather than calling the ``-`` part of an e-mail address."""
    document = read_markdown("![Cap](a.png){#fig:cap}\n\nSee [-@fig:cap](https://x.example).\n")
    (warning,) = document.warnings
    assert warning == ("markdown input, line 3: '[-@fig:cap' is not read as a cross-reference: "
                       "the number-only form is a bracket holding only references, as "
                       "[-@fig:cap]")


def test_citation_tokens_and_links_keep_their_meaning() -> None:
    (paragraph,) = read_markdown("A [[S:1]] and [[S:2-3]] and [@fig:a](https://x.example).\n").blocks
    cites = [n for n in paragraph.children if isinstance(n, Cite)]
    assert [c.sids for c in cites] == [(1,), (2, 3)]
    link = next(n for n in paragraph.children if isinstance(n, Link))
    assert link.url == "https://x.example" and link.children == (CrossRef("fig:a"),)


@pytest.mark.parametrize(
    ("markdown", "label"),
    [
        ("![图表](a.png){#fig:图表}\n\n见@fig:图表。\n", "fig:图表"),  # pandoc's labels are Unicode
        ("![شكل](a.png){#fig:شكل}\n\nانظر [@fig:شكل].\n", "fig:شكل"),
        ("![Ölpreis](a.png){#fig-öl.preis}\n\nSee @fig-öl.preis.\n", "fig-öl.preis"),
    ],
)
def test_a_label_in_any_script_is_defined_and_referenced(markdown: str, label: str) -> None:
    figure, paragraph = read_markdown(markdown).blocks
    assert isinstance(figure, Figure) and figure.label == label
    assert [n.label for n in paragraph.children if isinstance(n, CrossRef)] == [label]


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("如图@fig:cap所示。", "fig:cap"),  # a Latin label ends where unspaced words go on
        ("그림@tbl:costs에서", "tbl:costs"),
        ("如[@fig:图表]所示", "fig:图表"),  # brackets bound a label in such a script
    ],
)
def test_a_bare_latin_label_ends_before_unspaced_words(text: str, label: str) -> None:
    (paragraph,) = read_markdown(text + "\n").blocks
    assert [n.label for n in paragraph.children if isinstance(n, CrossRef)] == [label]


def test_labels_with_marks_and_in_either_normal_form_are_one_label() -> None:
    """Devanagari vowel signs and a decomposed accent are marks, which ``\\w`` leaves out:
    ``{#fig:चित्र}`` stayed text and ``@fig:cafe\u0301`` referred to ``fig:cafe``."""
    markdown = ("![a](a.png){#fig:चित्र}\n\n![b](b.png){#fig:caf\u00e9}\n\n"
                "See @fig:चित्र, @fig:cafe\u0301 and [@fig:\u304b\u3099].\n")
    first, second, paragraph = read_markdown(markdown).blocks
    assert isinstance(first, Figure) and first.label == "fig:चित्र"
    assert isinstance(second, Figure) and second.label == "fig:caf\u00e9"
    labels = [n.label for n in paragraph.children if isinstance(n, CrossRef)]
    assert labels == ["fig:चित्र", "fig:caf\u00e9", "fig:\u304c"]


def test_a_bare_number_only_reference_is_pointed_to_its_brackets() -> None:
    """``-@fig:cap`` outside brackets stays text (pandoc reads ``-@`` only inside them); the
    warning shows the bracketed form that gives the number alone."""
    document = read_markdown("![Cap](a.png){#fig:cap}\n\nSee -@fig:cap.\n")
    (warning,) = document.warnings
    assert warning.endswith("write [-@fig:cap] for the number alone or [@fig:cap]")


def test_a_capitalised_prefix_is_read_as_the_same_reference() -> None:
    """pandoc-crossref's ``@Fig:a``/``[@Tbl:b]``: the label as written (an unknown one stays
    that text), the same figure for the warning of an ``@`` glued to a word."""
    document = read_markdown("![A](a.png){#fig:a}\n\nSee @Fig:a, [@Tbl:b] and Figure@Fig:a.\n")
    refs = [n for n in iter_inlines(document.blocks) if isinstance(n, CrossRef)]
    assert refs == [CrossRef("Fig:a"), CrossRef("Tbl:b")]
    assert [w for w in document.warnings if "Figure@Fig:a" in w]
