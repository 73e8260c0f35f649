"""The markdown reader: every construct maps to the model, citations become Cite nodes."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from citations.mdit_cite import cite_plugin
from renderers.document import (
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
    OrderedList,
    Paragraph,
    RawBlock,
    RawInline,
    SoftBreak,
    Strike,
    Strong,
    Table,
    Text,
    ThematicBreak,
    iter_inlines,
)
from renderers.errors import LimitError
from renderers.options import Limits
from renderers.readers.markdown import read_markdown
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


def test_citation_in_raw_html_block_is_reported() -> None:
    document = read_markdown("<div>\nClaim [[S:1]]\n</div>\n\nText.\n")
    assert document.blocks[0] == RawBlock("<div>\nClaim [[S:1]]\n</div>", "html")
    assert any("line 2" in w and "raw HTML" in w for w in document.warnings)


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
    assert document.blocks[2] == RawBlock("<div>\n*raw*\n</div>", "html")


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
