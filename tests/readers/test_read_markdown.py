"""The markdown reader: every construct maps to the model, citations become Cite nodes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from citations.mdit_cite import cite_plugin
from citations.pool import SourcePool
from renderers.document import (
    Anchor,
    Block,
    BlockQuote,
    BulletList,
    Cite,
    Code,
    CodeBlock,
    Document,
    Emph,
    Figure,
    FootnoteDef,
    FootnoteRef,
    Heading,
    Image,
    LineBreak,
    Link,
    ListItem,
    OrderedList,
    Paragraph,
    RawInline,
    SoftBreak,
    Strike,
    Strong,
    Table,
    Text,
    ThematicBreak,
    iter_inlines,
    plain_text,
)
from renderers.errors import LimitError, StrictError
from renderers.options import Limits
from renderers.readers.markdown import read_markdown
from renderers.resolve import resolve
from renderers.text import document_text


def cites(document: Document) -> list[tuple[int, ...]]:
    return [node.sids for node in iter_inlines(document.blocks) if isinstance(node, Cite)]


def only_paragraph(text: str) -> tuple[object, ...]:
    document = read_markdown(text)
    assert len(document.blocks) == 1
    paragraph = document.blocks[0]
    assert isinstance(paragraph, Paragraph)
    return paragraph.children


# ---------------------------------------------------------------- the cite plugin


def test_plugin_renders_citations_and_keeps_code_verbatim() -> None:
    md = MarkdownIt("commonmark").use(cite_plugin)
    out = md.render("A [[S:1,3]] b `[[S:2]]` [[USAGE:4]] [[S:0]]\n")
    assert '<sup class="cite" data-sids="1,3">' in out
    assert "<code>[[S:2]]</code>" in out
    assert "USAGE" not in out
    assert "[[S:0]]" in out


def test_plugin_token_meta() -> None:
    md = MarkdownIt("commonmark").use(cite_plugin)
    inline = md.parse("x [[S:2-4]] y")[1]
    token = next(t for t in inline.children or [] if t.type == "cite")
    assert token.meta["kind"] == "cite"
    assert token.meta["sids"] == (2, 3, 4)
    assert token.meta["error"] is None
    assert token.meta["text"] == "[[S:2-4]]"
    assert token.meta["form"] == "bracket"


def test_fullwidth_token_inside_a_text_run() -> None:
    children = only_paragraph("claim［［S：1］］ and more")
    assert Cite((1,)) in children
    assert Text("claim") in children


# ---------------------------------------------------------------- citations


def test_citation_forms_become_cite_nodes() -> None:
    document = read_markdown(
        'One [[S:1]], two [[S:2, 4-5]], bare [S:7], sup <sup class="cite" '
        'data-sids=\'8\'>[S:8]</sup>, sup2 <sup class="cite" data-sids="9">[[S:9]]</sup>.'
    )
    assert cites(document) == [(1,), (2, 4, 5), (7,), (8,), (9,)]
    assert "[S:8]" not in document_text(document)
    assert "[[S:9]]" not in document_text(document)


@pytest.mark.parametrize(
    "text",
    [
        'a <sup class="cite" data-sids="1,2">[S:1,2]\n</sup> b',
        "a <SUP CLASS=cite DATA-SIDS=1,2>x</SUP> b",
        'a <sup class="note cite" data-sids="1-2">*[S:1]*</sup> b',
    ],
)
def test_sup_variants_are_one_citation(text: str) -> None:
    document = read_markdown(text)
    assert cites(document) == [(1, 2)]
    assert document_text(document).split() == ["a", "b"]


def test_unclosed_citation_sup_keeps_its_text() -> None:
    document = read_markdown('a <sup class="cite" data-sids="4">no close')
    assert cites(document) == [(4,)]
    assert "no close" in document_text(document)
    assert document.warnings


def test_citation_in_raw_html_block_text_cites_and_in_its_markup_is_reported() -> None:
    document = read_markdown('<div title="[[S:2]]">\nClaim [[S:1]]\n</div>\n\nText.\n')
    assert document.blocks[0] == Paragraph((Text("Claim "), Cite((1,))))
    assert any("line 1" in w and "'[[S:2]]' inside an HTML tag" in w for w in document.warnings)


def test_crlf_input() -> None:
    document = read_markdown("# T\r\n\r\nA [[S:1]]\r\nb\r\n")
    assert document.title == "T"
    assert document.blocks[1] == Paragraph((Text("A "), Cite((1,)), SoftBreak(), Text("b")))


def test_tokens_in_code_stay_verbatim() -> None:
    document = read_markdown("Use `[[S:1]]` here.\n\n```python\nx = [[S:2]]\n```\n\n    [[S:3]]\n")
    assert cites(document) == []
    code_span = document.blocks[0]
    assert isinstance(code_span, Paragraph)
    assert Code("[[S:1]]") in code_span.children
    assert document.blocks[1] == CodeBlock("x = [[S:2]]", "python")
    assert document.blocks[2] == CodeBlock("[[S:3]]")


def test_lookalikes_are_untouched() -> None:
    children = only_paragraph("np.array([[1, 2], [3, 4]]) and [link](https://a.example)")
    assert not any(isinstance(node, Cite) for node in children)
    assert isinstance(children[0], Text)
    assert children[0].text.startswith("np.array([[1, 2], [3, 4]])")


def test_usage_tags_never_render() -> None:
    document = read_markdown("A fact. [[USAGE:3]] More [[USAGE:1,3]] text.\n\n[[USAGE:5]]\n")
    assert document.usage_sids == (3, 1, 5)
    assert document.blocks == (Paragraph((Text("A fact. More text."),)),)
    assert "USAGE" not in document_text(document)


def test_invalid_tokens_stay_literal_with_a_warning() -> None:
    document = read_markdown("Intro.\n\nBad [[S:0]] and [[S:1,,3]] here.\n")
    assert cites(document) == []
    text = document_text(document)
    assert "[[S:0]]" in text and "[[S:1,,3]]" in text
    assert len(document.warnings) == 2
    assert "line 3" in document.warnings[0] and "[[S:0]]" in document.warnings[0]


def test_reversed_range_reads_forward_with_a_warning() -> None:
    document = read_markdown("x [[S:5-2]]")
    assert cites(document) == [(2, 3, 4, 5)]
    assert document.warnings


def test_dialects_are_off_by_default() -> None:
    assert cites(read_markdown("see [S1] and [2]")) == []
    both = frozenset({"s_dialect", "numeric"})
    assert cites(read_markdown("see [S1, S3] and [2]", dialects=both)) == [(1, 3), (2,)]


def test_citations_inside_links_emphasis_tables_and_footnotes() -> None:
    document = read_markdown(
        "*a [[S:1]]* [b [[S:2]]](https://x.example)\n\n| h |\n|---|\n| c [[S:3]] |\n\n"
        "x[^n]\n\n[^n]: note [[S:4]]\n"
    )
    assert cites(document) == [(1,), (2,), (3,), (4,)]


# ---------------------------------------------------------------- blocks


def test_headings_get_unique_slug_ids_and_the_first_h1_is_the_title() -> None:
    document = read_markdown("# Report *one*\n\n## Intro\n\n## Intro\n\n# Sources\n\n## Cite 1\n")
    headings = [b for b in document.blocks if isinstance(b, Heading)]
    assert [h.id for h in headings] == ["report-one", "intro", "intro-1", "sources-1", "cite-1-1"]
    assert [h.level for h in headings] == [1, 2, 2, 1, 2]
    assert document.title == "Report one"
    assert isinstance(document.blocks[0], Heading)


def test_lists_start_tight_and_tasks() -> None:
    document = read_markdown("3. a\n4. b\n\n- [x] done\n- [ ] open\n- plain\n\n* loose\n\n* list\n")
    ordered, tasks, loose = document.blocks
    assert isinstance(ordered, OrderedList) and ordered.start == 3 and ordered.tight
    assert isinstance(tasks, BulletList) and tasks.tight
    assert [item.checked for item in tasks.items] == [True, False, None]
    assert tasks.items[0].blocks == (Paragraph((Text("done"),)),)
    assert isinstance(loose, BulletList) and not loose.tight


def test_nested_lists_and_quotes() -> None:
    document = read_markdown("> quote\n>\n> - a\n>   - b\n")
    (quote,) = document.blocks
    assert isinstance(quote, BlockQuote)
    outer = quote.blocks[1]
    assert isinstance(outer, BulletList)
    inner = outer.items[0].blocks[1]
    assert isinstance(inner, BulletList)
    assert inner.items[0].blocks == (Paragraph((Text("b"),)),)


def test_table_with_alignment() -> None:
    (table,) = read_markdown("| L | C | R | D |\n|:--|:-:|--:|---|\n| 1 | 2 | 3 | 4 |\n").blocks
    assert isinstance(table, Table)
    assert table.aligns == ("left", "center", "right", "default")
    assert table.header[0].children == (Text("L"),)
    assert len(table.rows) == 1 and table.rows[0][3].children == (Text("4"),)


def test_code_thematic_break_and_html_blocks() -> None:
    document = read_markdown("```js extra\n  a\n\n  b\n```\n\n---\n\n<div>\n*raw*\n</div>\n")
    assert document.blocks[0] == CodeBlock("  a\n\n  b", "js")
    assert document.blocks[1] == ThematicBreak()
    assert document.blocks[2] == Paragraph((Text("*raw*"),))  # HTML: no markdown inside


def test_image_alone_is_a_figure_and_inline_image_stays_inline() -> None:
    document = read_markdown('![A *chart*](chart.png "T")\n\nText ![x](y.png) z\n')
    figure, paragraph = document.blocks
    assert isinstance(figure, Figure)
    assert figure.image == Image("chart.png", "A chart", "T")
    assert figure.caption == (Text("A "), Emph((Text("chart"),)))
    assert isinstance(paragraph, Paragraph) and Image("y.png", "x") in paragraph.children


def test_an_image_whose_alt_cites_a_source_is_a_figure_citing_it_in_its_caption() -> None:
    document = read_markdown("![Output by region [[S:2]]](chart.png)\n\nText ![x [[S:1]]](y.png)\n")
    figure, paragraph = document.blocks
    assert isinstance(figure, Figure)
    assert figure.image == Image("chart.png", "Output by region")
    assert figure.caption[0] == Text("Output by region ")
    assert isinstance(figure.caption[1], Cite) and figure.caption[1].sids == (2,)
    assert next(n for n in iter_inlines(document.blocks) if isinstance(n, Cite)).sids == (2,)
    assert isinstance(paragraph, Paragraph)  # inline: the citation follows the image
    assert [type(n) for n in paragraph.children] == [Text, Image, Cite]


def test_a_bad_token_in_a_figure_caption_is_reported_once() -> None:
    document = read_markdown("![A chart [[S:0]]](chart.png)\n")
    assert isinstance(document.blocks[0], Figure)
    assert len(document.warnings) == 1 and "[[S:0]]" in document.warnings[0]


def test_dangerous_image_sources_are_removed() -> None:
    document = read_markdown("![pw](file:///etc/passwd)\n\n![x](<javascript:alert(1)>)\n")
    images = [n for n in iter_inlines(document.blocks) if isinstance(n, Image)]
    assert all(image.src == "" for image in images)


# ---------------------------------------------------------------- inlines


def test_inline_nodes() -> None:
    children = only_paragraph(
        "*e* **s** ~~x~~ `c` a  \nb\nc <br> &amp; &copy; <span>r</span> "
        '[l](https://a.example "t") <https://b.example> <me@c.example>'
    )
    assert Emph((Text("e"),)) in children
    assert Strong((Text("s"),)) in children
    assert Strike((Text("x"),)) in children
    assert Code("c") in children
    assert LineBreak() in children and SoftBreak() in children
    assert children.count(LineBreak()) == 2  # the hard break and <br>
    assert not any(isinstance(n, RawInline) for n in children)  # other raw HTML: text only
    assert any(isinstance(n, Text) and " r " in n.text for n in children)
    assert Link("https://a.example", (Text("l"),), "t") in children
    assert Link("https://b.example", (Text("https://b.example"),)) in children
    assert Link("mailto:me@c.example", (Text("me@c.example"),)) in children
    assert any(isinstance(n, Text) and "& ©" in n.text for n in children)


def test_unsafe_links_keep_only_their_text() -> None:
    children = only_paragraph("[rel](page.html) [frag](#top) [ftp](ftp://x.example/f)")
    assert Link("#top", (Text("frag"),)) in children
    links = [n for n in children if isinstance(n, Link)]
    assert len(links) == 1
    assert "rel" in children[0].text  # type: ignore[attr-defined]
    assert "ftp" in document_text(read_markdown("[ftp](ftp://x.example/f)"))


def test_footnotes_are_kept_even_unreferenced() -> None:
    document = read_markdown("A[^a] and ^[inline].\n\n[^a]: First.\n[^b]: Never used.\n")
    paragraph = document.blocks[0]
    assert isinstance(paragraph, Paragraph)
    refs = [n for n in paragraph.children if isinstance(n, FootnoteRef)]
    defs = [b for b in document.blocks if isinstance(b, FootnoteDef)]
    assert [r.label for r in refs] == ["a", defs[1].label]
    assert defs[0].label == "a" and defs[2].label == "b"
    assert "Never used." in document_text(document)
    assert "inline" in document_text(document)


# ---------------------------------------------------------------- limits


@pytest.mark.parametrize(
    "text",
    [">" * 10_000 + " deep", "- " * 10_000 + "deep", "*" * 5_000 + "x" + "*" * 5_000],
    ids=["quotes", "lists", "emphasis"],
)
def test_very_deep_nesting_fails_fast(text: str) -> None:
    with pytest.raises(LimitError, match="max_nesting"):
        read_markdown(text)


def test_nesting_within_the_limit_is_read_completely() -> None:
    document = read_markdown("> " * 30 + "deep [[S:1]]")
    assert "deep" in document_text(document)
    assert cites(document) == [(1,)]


def test_content_and_citation_limits() -> None:
    with pytest.raises(LimitError, match="max_content_bytes"):
        read_markdown("é" * 600, limits=Limits(max_content_bytes=1_000))
    with pytest.raises(LimitError, match="max_citations"):
        read_markdown("[[S:1]] " * 11, limits=Limits(max_citations=10))
    with pytest.raises(LimitError, match="max_table_rows"):
        read_markdown("| a |\n|---|\n" + "| 1 |\n" * 6, limits=Limits(max_table_rows=5))


def test_reading_is_deterministic() -> None:
    text = "# T\n\nA [[S:1]] b[^x].\n\n[^x]: n\n"
    assert read_markdown(text) == read_markdown(text)


def test_a_citation_written_as_a_link_target_cites_after_the_link_text() -> None:
    """``[the study]([[S:6]])`` is how models write a link to a source: it becomes the text
    followed by the citation (where the audit counts it), not a link; a safe link stays one."""
    document = read_markdown("# T\n\nSee [the study]([[S:6]]) and [ok](https://e.org/).\n\n"
                             "Also [two](<[[S:2,3]]> \"title\") and [bad]([[S:]]).\n")
    assert document_text(document).startswith("T\nSee the study and ok.")
    cites = [n.sids for n in iter_inlines(document.blocks) if isinstance(n, Cite)]
    assert cites == [(6,), (2, 3)]
    links = [n.url for n in iter_inlines(document.blocks) if isinstance(n, Link)]
    assert links == ["https://e.org/"]
    (warning,) = document.warnings
    assert "line 5" in warning and "invalid citation token '[[S:]]'" in warning


def test_link_target_citations_count_toward_the_citation_limit() -> None:
    with pytest.raises(LimitError, match="max_citations"):
        read_markdown("[a]([[S:1]]) " * 11, limits=Limits(max_citations=10))


def test_the_audit_and_the_render_number_link_target_citations_alike() -> None:
    from citations.audit import audit

    text = "First [the study]([[S:2]]) then [[S:1]].\n"
    pool = [{"sid": 1, "url": "https://one.org"}, {"sid": 2, "url": "https://two.org"}]
    document = read_markdown(text)
    rendered = [n.sids for n in iter_inlines(document.blocks) if isinstance(n, Cite)]
    assert rendered == [(2,), (1,)]
    assert audit(text, pool).numbers == {2: 1, 1: 2}


# ---------------------------------------------------------------- raw HTML blocks


def test_html_blocks_become_the_model_the_html_reader_makes() -> None:
    document = read_markdown(
        "<table>\n<tr><th>Year</th><th>Price</th></tr>\n"
        '<tr><td>2024</td><td>8 <sup class="cite" data-sids="3">[S:3]</sup></td></tr>\n'
        "</table>\n\n<ul><li>one [[S:1]]</li><li>two</li></ul>\n\n<h2>Heading</h2>\n\n"
        '<blockquote>Quoted</blockquote>\n\n<p align="center"><img src="chart.png" '
        'alt="A chart"></p>\n\n<pre><code class="language-py">x = [[S:2]]\n</code></pre>\n'
    )
    table, items, heading, quote, figure, code = document.blocks
    assert isinstance(table, Table) and table.header[0].children == (Text("Year"),)
    assert table.rows[0][1].children == (Text("8 "), Cite((3,)))
    assert isinstance(items, BulletList) and cites(document)[:2] == [(3,), (1,)]
    assert isinstance(heading, Heading) and heading.id == "heading"
    assert quote == BlockQuote((Paragraph((Text("Quoted"),)),))
    assert figure == Figure(Image("chart.png", "A chart"), align="center")
    assert code == CodeBlock("x = [[S:2]]", "py") and cites(document) == [(3,), (1,)]


def test_markdown_between_html_blocks_that_open_and_close_a_wrapper_stays_markdown() -> None:
    document = read_markdown(
        "<details>\n<summary>Why it matters [[S:2]]</summary>\n\nPrices **fell** [[S:1]].\n"
        '\n- a list\n\n</details>\n\n<div align="center">\n\n| a | b |\n|---|---|\n| 1 | 2 |\n'
        "\n</div>\n\nAfter.\n"
    )
    summary, prose, items, table, after = document.blocks
    assert summary == Paragraph((Text("Why it matters "), Cite((2,))))
    assert prose == Paragraph((Text("Prices "), Strong((Text("fell"),)), Text(" "), Cite((1,)),
                               Text(".")))
    assert isinstance(items, BulletList) and isinstance(table, Table)
    assert after == Paragraph((Text("After."),))
    assert "<" not in document_text(document) and not document.warnings


def test_markdown_inside_a_table_cell_is_set_on_lines_of_the_cell() -> None:
    document = read_markdown(
        "<table>\n<tr>\n<td>\n\n**bold** [[S:1]]\n\nsecond\n\n</td>\n</tr>\n</table>\n"
    )
    (table,) = document.blocks
    assert isinstance(table, Table)
    assert table.rows[0][0].children == (
        Strong((Text("bold"),)), Text(" "), Cite((1,)), LineBreak(), Text("second"),
    )


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        # a closing tag nothing opened is dropped, as a browser drops it
        ("</div>\n\nText [[S:1]]\n\n</details>\n", ["Text [S1]"]),
        # a wrapper never closed ends with the last HTML block of its container
        ("<div>\n\nInside [[S:1]]\n\n<p>Last</p>\n\nAfter\n", ["Inside [S1]", "Last", "After"]),
        ("<blockquote>\n\nQuoted\n\n<hr>\n\nAfter\n", ["> Quoted", "> ---", "After"]),
        # inside a list item, the wrapper is the item's: the next item is not swallowed
        ("- <details>\n  <summary>S</summary>\n\n  Body\n\n  </details>\n- Next\n",
         ["- S", "- Body", "- Next"]),
        # a comment alone is dropped
        ("<!-- note [[S:1]] -->\n\nText\n", ["Text"]),
    ],
)
def test_unmatched_tags_never_show_and_never_swallow_what_follows(
    markdown: str, expected: list[str]
) -> None:
    document = read_markdown(markdown)
    assert outline(document.blocks) == expected


def outline(blocks: tuple[Block, ...], prefix: str = "") -> list[str]:
    """One line per block: quotes as ``> ``, list items as ``- ``, citations as ``[S<sid>]``."""
    lines: list[str] = []
    for block in blocks:
        if isinstance(block, BlockQuote):
            lines += outline(block.blocks, prefix + "> ")
        elif isinstance(block, BulletList):
            for item in block.items:
                lines += outline(item.blocks, prefix + "- ")
        elif isinstance(block, ThematicBreak):
            lines.append(prefix + "---")
        else:
            text = "".join(
                f"[S{','.join(map(str, n.sids))}]" if isinstance(n, Cite) else plain_text((n,))
                for n in getattr(block, "children", ())
            )
            lines.append(prefix + text)
    return lines


def test_hostile_html_in_a_block_is_sanitized_as_html_input_is() -> None:
    document = read_markdown(
        "<div onclick=\"steal()\">\n<script>alert([[S:1]])</script><style>p{x:y}</style>\n"
        '<a href="javascript:alert(1)">bad</a> <a href="https://ok.org" onmouseover="x()">ok</a>'
        '\n<img src="javascript:alert(1)" onerror="alert(2)" alt="pic">\n</div>\n'
    )
    (paragraph,) = document.blocks
    assert paragraph == Paragraph((
        Text("bad "), Link("https://ok.org", (Text("ok"),)), Text(" "), Image("", "pic"),
    ))
    assert [d.code for d in document.diagnostics] == ["image-refused"]
    assert not cites(document)  # the token in the script went with it


def test_deep_html_in_a_block_is_bounded() -> None:
    with pytest.raises(LimitError):
        read_markdown("<div>\n" + "<blockquote>" * 2000 + "deep" + "\n\ntext\n", limits=Limits())
    shallow = read_markdown("<div>\n" + "<section>" * 40 + "deep\n\nafter\n")
    assert document_text(shallow).split() == ["deep", "after"]


def test_plain_markdown_imports_neither_yaml_nor_the_html_reader() -> None:
    """Importing PyYAML, the HTML reader and nh3 costs a cold CLI render about 20 ms: markdown
    that opens without ``---`` and has no HTML block loads none of them."""
    script = (
        "import sys\n"
        "from renderers.readers.markdown import read_markdown\n"
        "read_markdown(sys.argv[1])\n"
        "print(*(m for m in ('yaml', 'renderers.readers.html', 'nh3') if m in sys.modules))\n"
    )
    front = "---\ntitle: A\n---\n\nText.\n"
    html = "Text.\n\n<div>HTML [[S:1]]</div>\n"
    shown = {
        text: subprocess.run(
            [sys.executable, "-c", script, text], capture_output=True, text=True, check=True,
        ).stdout.split()
        for text in ("Text [[S:1]].\n", front, html)
    }
    assert shown == {
        "Text [[S:1]].\n": [],
        front: ["yaml"],
        html: ["renderers.readers.html", "nh3"],
    }


def test_an_id_in_an_html_block_is_a_place_for_any_link_of_the_document() -> None:
    """Only a link in the same HTML block led to its id: a markdown link to it, before or after
    the block, or one in another block, led nowhere."""
    document = read_markdown(
        "Go [down](#para) and [in](#box).\n\n<div id=\"box\">\n\nBoxed.\n\n</div>\n\n"
        '<p id="para">A para.</p>\n\n<p id="unlinked">No link leads here.</p>\n\n'
        '<p><a href="#box">back</a></p>\n'
    )
    assert [block.children[0] for block in document.blocks[1:4]] == [
        Anchor("box"), Anchor("para"), Text("No link leads here."),
    ]


def test_an_html_block_id_taken_already_or_a_writers_own_stays_with_what_has_it() -> None:
    """Ids are places in document order, as headings dedupe: a repeated id stays the first
    element's; a writer's own anchor (``cite-1``) and a heading's id are never taken again."""
    document = read_markdown(
        "# Intro\n\n<div id=\"intro\">Not here.</div>\n\n<div id=\"box\">One</div>\n\n"
        '<div id="box">Two</div>\n\n<div id="cite-1">Three [[S:1]]</div>\n\n<div id="results">'
        "Four</div>\n\n## Results\n\n[a](#intro) [b](#box) [c](#cite-1) [d](#results)\n"
    )
    anchors = [node.id for node in iter_inlines(document.blocks) if isinstance(node, Anchor)]
    headings = [block.id for block in document.blocks if isinstance(block, Heading)]
    assert anchors == ["box", "results"]
    assert headings == ["intro", "results-1"]  # the element came first


def test_a_line_holding_only_an_anchor_gives_it_to_the_next_block() -> None:
    """``<a id="x"></a>`` on a line of its own was a paragraph of nothing: an empty line in
    the PDF, DOCX and slides. Its anchors now start the next block's first line; before a
    block without one (code) or at the end, the paragraph stays where the place is."""
    document = read_markdown(
        "[go](#install) [c](#code)\n\n<a id=\"install\"></a>\n\n## Install\n\n<a id=\"x\"></a>\n"
        "<a id=\"y\"></a>\n\n- item\n\n<div id=\"code\"></div>\n\n```\ncode\n```\n\n"
        "<a id=\"end\"></a>\n"
    )
    assert list(document.blocks[1:]) == [
        Heading(2, (Anchor("install"), Text("Install")), "install-1"),
        BulletList((ListItem((Paragraph((Anchor("x"), Anchor("y"), Text("item"))),)),), True),
        Paragraph((Anchor("code"),)),
        CodeBlock("code"),
        Paragraph((Anchor("end"),)),
    ]


def test_a_link_that_leads_nowhere_is_noted_at_its_line_in_both_readers() -> None:
    """Such a link lost its target in every writer without a word: one note per id, at the
    line of its first link (an HTML block's first line), as the HTML reader says it too. A
    writer's own places (``src-1``, ``notes``, ``contents``) are places."""
    from renderers.readers.html import read_html

    document = read_markdown(
        "# Top\n\n[a](#nowhere) [b](#top) [c](#src-1) [d](#notes) [e](#contents)\n\n"
        '<div>\n<a href="#gone">g</a> <a href="#box">h</a>\n</div>\n\n<p id="box">x</p>\n\n'
        "[again](#nowhere)\n"
    )
    assert [(note.line, note.message.split(": ", 1)[1]) for note in document.notes] == [
        (3, "the link to '#nowhere' leads nowhere: no heading or element has the id; its "
            "text is kept"),
        (5, "the link to '#gone' leads nowhere: no heading or element has the id; its text "
            "is kept"),
    ]
    html = read_html('<h1>T</h1>\n<p>\n<a href="#t">t</a>\n<a href="#missing">m</a></p>')
    assert [(note.line, "'#missing'" in note.message) for note in html.notes] == [(4, True)]


GENERATED = ("the document has no such citation, source, note, figure or table; its text is "
             "kept")


def test_a_link_to_a_number_the_writers_do_not_make_is_noted_after_resolution(
    tmp_path: Path,
) -> None:
    """``#cite-99``, ``#fn-7``, ``#fig-12`` have the writers' own form, so only resolution knows
    whether the writers make them: a link to one they do not make lost its target in silence.
    Now it gets the dead link's note at its line; ``#cite-1``, ``#fn-1``, ``#fig-1``,
    ``#src-1`` and ``#sources`` of a document that has them are places."""
    from renderers.api import render
    from renderers.readers.html import read_html

    pool = SourcePool.from_rows([{"sid": 1, "title": "A", "url": "https://a.example"}])
    markdown = ("Text [[S:1]].\n\n[a](#cite-1) [b](#fn-1) [c](#fig-1) [d](#src-1) "
                "[e](#sources) [f](#fnref-1)\n\n[g](#cite-99) [h](#fn-7)\n\n"
                "[i](#fig-12) [j](#tbl-1) [k](#cnote-2)[^x]\n\n![Cap](a.png){#fig:one}\n\n"
                "[^x]: A note.\n")
    document = read_markdown(markdown)
    assert document.notes == ()
    noted = [(n.line, n.message.split(": ", 1)[1]) for n in resolve(document, pool).notes]
    assert noted == [
        (5, f"the link to '#cite-99' leads nowhere: {GENERATED}"),
        (5, f"the link to '#fn-7' leads nowhere: {GENERATED}"),
        (7, f"the link to '#fig-12' leads nowhere: {GENERATED}"),
        (7, f"the link to '#tbl-1' leads nowhere: {GENERATED}"),
        (7, f"the link to '#cnote-2' leads nowhere: {GENERATED}"),
    ]
    with pytest.raises(StrictError, match="cite-99"):
        resolve(document, pool, strict=True)
    html = read_html('<p>A <sup class="cite" data-sids="1">1</sup>\n<a href="#cite-1">x</a>\n'
                     '<a href="#cite-2">y</a></p>')
    assert [(n.line, "'#cite-2'" in n.message) for n in resolve(html, pool).notes] == [(3, True)]
    (result,) = render("See [there](#fig-3).\n", tmp_path, sources_pool=[], formats=["md"])
    noted = [(d.line, d.message.split(": ", 1)[1]) for d in result.diagnostics
             if d.code == "reader-note"]
    assert noted == [(1, f"the link to '#fig-3' leads nowhere: {GENERATED}")]


def test_an_anchor_of_the_writers_own_form_is_a_place_unless_the_writers_make_it(
    tmp_path: Path,
) -> None:
    """``<a id="src-2"></a>`` is how the Markdown output names a Sources entry; read back (its
    citations are notes then) no writer makes ``src-2``, and the link to it led nowhere. Such an
    anchor is now a place, and so is a heading whose text pandoc names ``sources``; where the
    writers make the same place (a cited document) the input's is left out: one id, theirs."""
    from renderers.api import render

    markdown = ('# Doc\n\nSee [entry](#src-2) and [all](#sources).\n\n## Sources\n\n'
                '<a id="src-2"></a>Wind study.\n')
    assert read_markdown(markdown).notes == ()
    (page,) = render(markdown, tmp_path, sources_pool=[], formats=["html"])
    assert not [d for d in page.diagnostics if "leads nowhere" in d.message]
    text = page.path.read_text("utf-8")
    assert '<span id="src-2"></span>Wind study.' in text and 'href="#src-2"' in text
    assert 'id="sources"' in text and 'href="#sources"' in text
    cited = markdown.replace("Wind study.", "Wind study [[S:1]] [[S:2]].")
    rows = [{"sid": 1, "title": "A", "url": "https://a.example"},
            {"sid": 2, "title": "B", "url": "https://b.example"}]
    (page,) = render(cited, tmp_path / "cited", sources_pool=rows, formats=["html"])
    assert not [d for d in page.diagnostics if "leads nowhere" in d.message]
    ids = re.findall(r'\bid="([^"]*)"', page.path.read_text("utf-8"))
    assert ids.count("src-2") == 1 and ids.count("sources") == 1


def test_a_link_to_an_id_no_element_may_keep_says_why_briefly() -> None:
    """An id of 10,000 characters (or of white space only) is never a place, though an
    element has it: the note says what an id must be, and quotes the first 80 characters
    only."""
    long_id = "a" * 10_000
    document = read_markdown(f'# H\n\n[x](#{long_id}) [y](#%20)\n\n<p id="{long_id}">p</p>\n')
    messages = [note.message.split(": ", 1)[1] for note in document.notes]
    assert messages == [
        f"the link to '#{long_id[:80]}…' leads nowhere: an id is 1 to 200 characters, not all "
        "of them white space; its text is kept",
        "the link to '# ' leads nowhere: an id is 1 to 200 characters, not all of them white "
        "space; its text is kept",
    ]


def test_a_link_to_a_citation_note_leads_somewhere_only_when_a_note_style_writes_it(
    tmp_path: Path,
) -> None:
    """``#cnote-K`` is the note a note style gives citation K: without one no writer makes it,
    and a link to it gets the dead link's note (it was taken as a place for K up to the number
    of citations); with ``chicago-note`` the notes of the two citations are places, a third is
    not, and the Markdown keeps the live link and writes the dead one as its text."""
    from renderers.api import render

    pool = [{"sid": 1, "title": "A", "url": "https://a.example"},
            {"sid": 2, "title": "B", "url": "https://b.example"}]
    markdown = "Text [[S:1]] and [[S:2]].\n\n[one](#cnote-1) [three](#cnote-3)\n"

    def dead(**options: object) -> tuple[list[str], str]:
        """The ids noted as leading nowhere, and the Markdown written."""
        (result,) = render(markdown, tmp_path, formats=["md"], sources_pool=pool, **options)
        return ([d.message.split("'")[1] for d in result.diagnostics
                 if "leads nowhere" in d.message], result.path.read_text("utf-8"))

    noted, written = dead()
    assert noted == ["#cnote-1", "#cnote-3"] and "one three" in written
    noted, written = dead(csl="chicago-note")
    assert noted == ["#cnote-3"] and "[one](#cnote-1) three" in written
    (html,) = render(markdown, tmp_path, formats=["html"], sources_pool=pool, csl="chicago-note")
    assert '<a href="#cnote-1">one</a> three' in html.path.read_text("utf-8")
    with pytest.raises(StrictError, match="cnote-3"):
        render(markdown, tmp_path, formats=["md"], sources_pool=pool, csl="chicago-note",
               strict=True)
