"""The HTML reader: sanitized HTML → the document model."""

from __future__ import annotations

import pytest

from renderers.document import (
    BlockQuote,
    BulletList,
    Cite,
    Code,
    CodeBlock,
    Document,
    Emph,
    Figure,
    Heading,
    Image,
    LineBreak,
    Link,
    OrderedList,
    Paragraph,
    Strike,
    Strong,
    Table,
    Text,
    ThematicBreak,
    iter_inlines,
)
from renderers.errors import LimitError
from renderers.options import Limits
from renderers.readers.html import read_html
from renderers.readers.markdown import read_markdown
from renderers.text import document_text
from tests.support.html_notes import NOTED_HTML, NOTES

HOSTILE = """<html><head><title>Report</title><script>alert("x")</script>
<link rel="stylesheet" href="http://evil.example/x.css"></head>
<body onload="steal()"><p onclick="steal()">Claim <sup class="cite" data-sids="1,3">[S:1,3]</sup>
<a href="javascript:alert(1)">js</a> <a href="https://ok.example/">ok</a>
<a href="mailto:a@b.example">mail</a> <img src="file:///etc/passwd" alt="pw">
<img src="pic.png" onerror="steal()" alt="pic"> <img src="data:image/png;base64,AA" alt="d">
</p><iframe src="http://evil.example/frame">frame text</iframe>
<form action="http://evil.example/post"><input value="v"><textarea>typed</textarea></form>
<svg><script>alert(2)</script></svg></body></html>"""


def cites(document: Document) -> list[tuple[int, ...]]:
    return [node.sids for node in iter_inlines(document.blocks) if isinstance(node, Cite)]


def test_citation_forms() -> None:
    document = read_html(
        "<p>A <sup class=\"cite\" data-sids='1,3'>[S:1,3]</sup> b "
        '<sup class="cite" data-sids="2">[[S:2]]</sup> c [[S:4-5]] d [S:6] '
        "e <code>[[S:7]]</code></p><pre>[S:8]</pre>"
    )
    assert cites(document) == [(1, 3), (2,), (4, 5), (6,)]
    paragraph, code = document.blocks
    assert isinstance(paragraph, Paragraph)
    assert Code("[[S:7]]") in paragraph.children
    assert code == CodeBlock("[S:8]")
    assert "[S:1,3]" not in document_text(document)


def test_usage_tags_and_invalid_tokens() -> None:
    document = read_html("<p>Fact. [[USAGE:4]] More. [[S:0]]</p>")
    assert document.usage_sids == (4,)
    assert document.blocks == (Paragraph((Text("Fact. More. [[S:0]]"),)),)
    assert len(document.warnings) == 1 and "[[S:0]]" in document.warnings[0]


def test_sup_with_invalid_data_sids_keeps_its_text() -> None:
    document = read_html('<p>x <sup class="cite" data-sids="0">[S:0]</sup></p>')
    assert cites(document) == []
    assert "[S:0]" in document_text(document)
    assert document.warnings


def test_sup_with_a_huge_sid_keeps_its_text_with_the_too_large_warning() -> None:
    document = read_html(f'<p>Hi <sup class="cite" data-sids="{"9" * 5000}">x</sup></p>')
    assert cites(document) == []
    assert document_text(document).strip() == "Hi x"
    (warning,) = document.warnings
    assert "invalid citation 'x': sid 999" in warning
    assert "(5000 digits) is too large (at most 2147483647); kept as text" in warning


def test_title_from_title_element_else_first_h1() -> None:
    with_title = read_html("<html><head><title>Doc &amp; Co</title></head><h1>Head</h1></html>")
    assert with_title.title == "Doc & Co"
    assert isinstance(with_title.blocks[0], Heading)
    assert read_html("<h2>Sub</h2><h1>Main <em>one</em></h1><h1>Other</h1>").title == "Main one"


HEAD = """<!DOCTYPE html><html lang="DE-at"><head>
<META NAME="Author" content="Ana  Ruiz"><meta name=author content='Li &amp; Wei'>
<meta name="author" content="  ">
<!-- <meta name="author" content="In a comment"> -->
<script>document.write('<meta name="author" content="In a script">')</script>
<meta name="keywords" content=" storage , grid,, storage"><meta name="keywords" content="cost">
<meta name="description" content="Costs &lt;b&gt; and
   prices"><meta name="description" content="Second">
<meta name="date" content="2024"><meta name="dcterms.date" content="2025-03-01">
<meta property="og:title" content="Not read"><meta name="generator" content="x">
<title>Grid storage</title></head><body><h1>Other</h1><p>Text.</p></body></html>"""


def test_the_head_s_meta_tags_are_the_documents_metadata() -> None:
    document = read_html(HEAD)
    assert (document.title, document.lang) == ("Grid storage", "de-AT")
    assert document.authors == ("Ana Ruiz", "Li & Wei")  # one a tag, as written: plain text
    assert document.keywords == ("storage", "grid", "cost")  # split at commas, each once
    assert document.description == "Costs <b> and prices"  # the first one
    assert document.date == "2025-03-01"  # dcterms.date (the HTML writer's) before date
    assert document.notes == ()
    assert document.blocks == read_html("<h1>Other</h1><p>Text.</p>").blocks


@pytest.mark.parametrize(
    ("head", "date"),
    [('<meta name="date" content="2024-05">', "2024-05"), ("", ""),
     ('<meta name="dcterms.date" content=" "><meta name="date" content="2024">', "2024")],
)
def test_a_date_is_dcterms_date_else_date(head: str, date: str) -> None:
    assert read_html(f"<head>{head}</head><p>x</p>").date == date


def test_metadata_past_the_front_matter_limit_is_left_out_with_a_note() -> None:
    description = f'<meta name="description" content="{"x" * 60}">'
    assert read_html(description, limits=Limits(max_front_matter_bytes=60)).description
    document = read_html(description + '<meta name="author" content="A"><p>Kept.</p>',
                         limits=Limits(max_front_matter_bytes=60))
    assert document.description and document.authors == ()
    assert "max_front_matter_bytes" in document.warnings[0]
    assert document_text(document).strip() == "Kept."
    other = f'<meta name="og:description" content="{"x" * 100}">'  # not read, not counted
    assert read_html(other, limits=Limits(max_front_matter_bytes=60)).description == ""


@pytest.mark.parametrize(
    ("html", "authors"),
    [('<p>x</p><meta name="author" content="Late">', ("Late",)),  # wherever it is
     ('<meta name="author" content="A"><p>x</p><!-- <meta name="author" content="B"> -->',
      ("A",)),
     ('<meta name="author" content="A"><pre>&lt;meta name="author" content="B"&gt;</pre>',
      ("A",)),
     ('<meta name="author" content="A"><metadata name="author" content="B">', ("A",))],
)
def test_only_meta_tags_count_wherever_they_are(html: str, authors: tuple[str, ...]) -> None:
    assert read_html(html).authors == authors


def test_an_unclosed_meta_tag_ends_the_scan() -> None:
    document = read_html('<meta name="author" content="A"><p>x</p><meta name="author" content="B')
    assert document.authors == ("A",)


def test_markdown_s_html_blocks_give_no_metadata() -> None:
    """Markdown's metadata is its front matter; a ``<meta>`` in its HTML is dropped, as pandoc
    drops it."""
    document = read_markdown('<meta name="author" content="A">\n\nText.\n')
    assert document.authors == () and document.description == ""


def test_blocks() -> None:
    document = read_html(
        "<h2>Intro</h2><h2>Intro</h2><p>Para</p><blockquote><p>Quote</p></blockquote><hr>"
        '<ol start="3"><li>a</li><li><p>b</p><ul><li>c</li></ul></li></ol>'
        '<pre><code class="language-python">def f():\n    return [[S:1]]\n</code></pre>'
    )
    h1, h2, para, quote, rule, ordered, code = document.blocks
    assert isinstance(h1, Heading) and isinstance(h2, Heading)
    assert (h1.id, h2.id, h1.level) == ("intro", "intro-1", 2)
    assert para == Paragraph((Text("Para"),))
    assert quote == BlockQuote((Paragraph((Text("Quote"),)),))
    assert rule == ThematicBreak()
    assert isinstance(ordered, OrderedList) and ordered.start == 3 and not ordered.tight
    nested = ordered.items[1].blocks[1]
    assert isinstance(nested, BulletList) and nested.items[0].blocks == (Paragraph((Text("c"),)),)
    assert code == CodeBlock("def f():\n    return [[S:1]]", "python")


def test_text_outside_a_lists_items_is_read_where_a_browser_shows_it() -> None:
    """Before the first item: a paragraph before the list; after an item: more of that item
    (a browser shows both without a marker). Its tokens cite; white space alone is nothing."""
    document = read_html("<ul>Intro <b>now</b> [[S:3]] <li>a</li> then [[S:2]]\n<li>b</li> </ul>")
    intro, listed = document.blocks
    assert intro == Paragraph((Text("Intro "), Strong((Text("now"),)), Text(" "), Cite((3,))))
    assert isinstance(listed, BulletList) and listed.tight
    assert [item.blocks for item in listed.items] == [
        (Paragraph((Text("a"),)), Paragraph((Text("then "), Cite((2,))))),
        (Paragraph((Text("b"),)),),
    ]


def test_text_after_a_block_in_a_cell_starts_a_line_of_its_own() -> None:
    """A list's stray text after an item in a table cell (``<li>a</li>b``) is more of the item,
    shown by a browser on the next line: read as one word 'ab' it misquoted the cell; a block
    ending inside a link or emphasis puts the break after it."""
    (table,) = read_html(
        "<table><tr><td><ol>Intro [[S:2]]<li>a</li>b [[S:3]]</ol></td>"
        "<td><p>p</p>tail</td><td><b><p>x</p></b>y <a href='https://e.example/'><div>z</div>"
        "</a>w</td></tr></table>"
    ).blocks
    assert isinstance(table, Table)
    assert [cell.children for cell in table.rows[0]] == [
        (Text("Intro "), Cite((2,)), LineBreak(), Text("a"), LineBreak(), Text("b "), Cite((3,))),
        (Text("p"), LineBreak(), Text("tail")),
        (Strong((Text("x"),)), LineBreak(), Text("y "),
         Link("https://e.example/", (Text("z"),)), LineBreak(), Text("w")),
    ]


def test_table_header_alignment_and_caption() -> None:
    (table,) = read_html(
        "<table><caption>Cap</caption><thead><tr><th align=right>R</th>"
        '<th style="text-align: center">C</th><th>D</th></tr></thead>'
        "<tbody><tr><td>1</td><td>2 [[S:1]]</td></tr></tbody></table>"
    ).blocks
    assert isinstance(table, Table)
    assert table.aligns == ("right", "center", "default")
    assert [cell.children for cell in table.header] == [(Text("R"),), (Text("C"),), (Text("D"),)]
    assert len(table.rows) == 1 and len(table.rows[0]) == 3  # padded to the header width
    assert table.rows[0][1].children == (Text("2 "), Cite((1,)))
    assert table.caption == (Text("Cap"),)


def test_inlines_and_links() -> None:
    (paragraph,) = read_html(
        "<p><em>e</em> <i>i</i> <strong>s</strong> <b>b</b> <s>x</s> <del>d</del> a<br>b "
        '<a href="https://ok.example" title="T">ok</a> <a href="javascript:alert(1)">bad</a> '
        '<a href="page.html">rel</a> <a href="#top">top</a> <span>sp<u>an</u></span></p>'
    ).blocks
    assert isinstance(paragraph, Paragraph)
    children = paragraph.children
    assert Emph((Text("e"),)) in children and Emph((Text("i"),)) in children
    assert Strong((Text("s"),)) in children and Strong((Text("b"),)) in children
    assert Strike((Text("x"),)) in children and Strike((Text("d"),)) in children
    assert LineBreak() in children
    assert Link("https://ok.example", (Text("ok"),), "T") in children
    assert Link("#top", (Text("top"),)) in children
    links = [n for n in children if isinstance(n, Link)]
    assert len(links) == 2
    text = document_text(Document((paragraph,)))
    assert "bad" in text and "rel" in text and "span" in text


def test_images_and_figures() -> None:
    document = read_html(
        '<p><img src="a.png" alt="A"></p><figure><img src="b.png" alt="B">'
        "<figcaption>The <em>cap</em></figcaption></figure>"
        '<p>inline <img src="c.png" alt="C"> image</p><img src="file:///etc/passwd" alt="pw">'
    )
    first, second, third, fourth = document.blocks
    assert first == Figure(Image("a.png", "A"))
    assert second == Figure(Image("b.png", "B"), (Text("The "), Emph((Text("cap"),))))
    assert isinstance(third, Paragraph) and Image("c.png", "C") in third.children
    assert fourth == Figure(Image("", "pw"))


def test_unknown_elements_keep_their_text() -> None:
    document = read_html(
        "<custom-tag>custom</custom-tag><div>loose <b>bold</b><p>inner</p>tail</div>"
        "<details><summary>sum</summary>detail</details><dl><dt>term</dt><dd>def</dd></dl>"
    )
    text = document_text(document)
    for word in ("custom", "loose", "bold", "inner", "tail", "sum", "detail", "term", "def"):
        assert word in text


def test_white_space_is_collapsed_outside_pre() -> None:
    document = read_html("<p>  a \n\n  <em> b </em>  c  </p><pre>  x\n   y</pre>")
    assert document.blocks[0] == Paragraph((Text("a "), Emph((Text("b "),)), Text("c")))
    assert document.blocks[1] == CodeBlock("  x\n   y")


def test_hostile_input_leaves_nothing_hostile_in_the_model() -> None:
    document = read_html(HOSTILE)
    text = document_text(document)
    for needle in ("alert", "steal", "frame text", "typed", "evil.example", "etc/passwd"):
        assert needle not in text
    for node in iter_inlines(document.blocks):
        if isinstance(node, Link):
            assert node.url.startswith(("https:", "mailto:", "#"))
        if isinstance(node, Image):
            assert node.src in ("", "pic.png") or node.src.startswith("data:image/")
    assert cites(document) == [(1, 3)]
    assert document.title == "Report"


def test_deep_nesting_fails_fast() -> None:
    with pytest.raises(LimitError, match="max_nesting"):
        read_html("<blockquote>" * 5_000 + "deep")
    with pytest.raises(LimitError, match="max_nesting"):
        read_html("<span>" * 5_000 + "deep")


def test_limits() -> None:
    with pytest.raises(LimitError, match="max_citations"):
        read_html("<p>" + "[[S:1]] " * 4 + "</p>", limits=Limits(max_citations=3))
    with pytest.raises(LimitError, match="max_content_bytes"):
        read_html("<p>" + "x" * 200 + "</p>", limits=Limits(max_content_bytes=100))


# ---------------------------------------------------------------- where the notes point


def test_each_note_names_its_line_of_the_input() -> None:
    """Lines are the input's, not the sanitizer output's (where the script, style, comment and
    split tags before them leave no lines: a token on line 7 sits on its line 4)."""
    document = read_html(NOTED_HTML)
    reader_notes = [(str(n.code), n.line, n.message) for n in document.notes]
    assert reader_notes == [note for note in NOTES if note[0] == "reader-note"]
    assert [(str(d.code), d.line, d.message) for d in document.diagnostics] == [
        note for note in NOTES if note[0] == "image-refused"
    ]


def test_lines_count_crlf_and_cr_as_markdown_does() -> None:
    for newline in ("\r\n", "\r"):
        document = read_html(NOTED_HTML.replace("\n", newline))
        assert [n.line for n in document.notes] == [7, 10, 17], newline


def test_each_occurrence_of_a_token_gets_its_own_line() -> None:
    document = read_html("<p>[[S:0]]</p>\n<p>\n[[S:0]] and <sup class='cite' data-sids='0'>x</sup>"
                         "</p>\n\n<p><sup class='cite' data-sids='0'>y</sup> [[S:0]]</p>")
    assert [n.line for n in document.notes] == [1, 3, 3, 5, 5]


def test_a_token_the_input_spells_with_character_references_has_no_line() -> None:
    (note,) = read_html("<p>\n&#91;&#91;S:0]]</p>").notes
    assert note.line is None and note.message.startswith("HTML input: invalid citation token")


def test_notes_of_a_markdown_html_block_name_the_block_s_first_line() -> None:
    """HTML read from markdown's HTML blocks is rewritten (citations.codemap.block_html), so
    its own lines are not the input's: its notes name the line the block starts on."""
    document = read_markdown("Intro.\n\n<div>\n<p>[[S:0]]</p>\n<sup class='cite' "
                             "data-sids='x'>y</sup> <img src='javascript:1' alt='a'>\n</div>\n")
    assert [note.line for note in (*document.notes, *document.diagnostics)] == [3, 3, 3]


def test_swallowed_text_is_reported_where_the_swallowing_element_starts() -> None:
    html = ("<p>Intro.</p>\n<svg><path d='M0 0'/></svg>\n<p>Before <math><mtext><table><mglyph>"
            "<style>" + "<p>Findings the reader must see.</p>" * 4 + "\n<p>End.</p>")
    (note,) = read_html(html).notes
    assert note.line == 3 and note.message.startswith("HTML input, line 3: the HTML sanitizer")


# ---------------------------------------------------------------- alignment


def test_align_attributes_and_center_align_their_blocks() -> None:
    blocks = read_html(
        '<h1 align="center">Title</h1><p align="right">Right.</p><center>Old.</center>'
        '<p align="justify">Justified.</p><p>Plain.</p>'
    ).blocks
    assert [(type(b).__name__, b.align) for b in blocks] == [  # type: ignore[union-attr]
        ("Heading", "center"), ("Paragraph", "right"), ("Paragraph", "center"),
        ("Paragraph", "default"), ("Paragraph", "default"),
    ]


def test_text_align_is_read_from_the_style_the_sanitizer_keeps() -> None:
    blocks = read_html(
        '<p style="color: red; text-align: left; text-align: center">Last wins.</p>'
        '<div style="background: url(javascript:alert(1)); text-align:right">In a div.</div>'
    ).blocks
    assert [b.align for b in blocks] == ["center", "right"]  # type: ignore[union-attr]


def test_a_division_aligns_the_blocks_inside_it_that_ask_for_none() -> None:
    blocks = read_html(
        '<div align="center"><h2>Head</h2><p>Text.</p><p align="left">Own.</p>'
        "<blockquote><p>Quoted.</p></blockquote><ul><li>Item.</li></ul>"
        '<p><img src="logo.png" alt="logo"></p></div>'
    ).blocks
    heading, text, own, quote, items, figure = blocks
    assert isinstance(heading, Heading) and heading.align == "center"
    assert isinstance(text, Paragraph) and text.align == "center"
    assert isinstance(own, Paragraph) and own.align == "left"
    assert isinstance(quote, BlockQuote) and quote.blocks[0].align == "center"  # type: ignore[union-attr]
    assert isinstance(items, BulletList) and items.items[0].blocks[0].align == "default"  # type: ignore[union-attr]
    assert isinstance(figure, Figure) and figure.align == "center"


def test_markdown_between_the_html_blocks_of_an_aligned_division_takes_its_alignment() -> None:
    markdown = (
        '<p align="center"><img src="logo.png" alt="logo"></p>\n\n'
        '<div align="center">\n\n# Centred\n\nSome **markdown** text.\n\n</div>\n\n'
        "After the division.\n"
    )
    blocks = read_markdown(markdown).blocks
    assert [(type(b).__name__, b.align) for b in blocks] == [  # type: ignore[union-attr]
        ("Figure", "center"), ("Heading", "center"), ("Paragraph", "center"),
        ("Paragraph", "default"),
    ]
