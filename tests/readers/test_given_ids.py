"""One rule for an id the author gives a heading or an element (``{id="…"}``, ``id=""``), as
pandoc reads them: it is kept as written, white space too, up to 200 characters
(:data:`renderers.text.GIVEN_ID_RULE`). An id with a space was refused and its links led
nowhere; an id of 100,000 characters was kept as its own slug and repeated in every format.
Now the first lands in every format, and the second is refused with a note, its heading taking
an id of its text and its links the dead link's note."""

from __future__ import annotations

import html
import io
import zipfile
from pathlib import Path
from urllib.parse import quote

import pytest
from lxml import etree
from pypdf import PdfReader

from renderers.api import render
from renderers.document import Anchor, Document, Heading, Paragraph
from renderers.readers.html import read_html
from renderers.readers.markdown import read_markdown
from renderers.readers.sanitize import sanitize_html
from renderers.text import GIVEN_ID_RULE, MAX_GIVEN_ID
from tests.helpers import internal_links

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
FILLER = "\n\n".join(["A filler sentence that takes room on the page. " * 10] * 12)


def source(content_format: str, ident: str) -> str:
    """A document whose second page starts with the heading ``Head`` of id ``ident``, and
    whose first has a link ``to it`` there."""
    if content_format == "markdown":
        written = ident.replace("\\", "\\\\").replace('"', '\\"')
        return (f"# Doc\n\n[to it](#{quote(ident, safe='')})\n\n{FILLER}\n\n"
                f'## Head {{id="{written}"}}\n\nText.\n')
    paragraphs = "".join(f"<p>{p}</p>" for p in FILLER.split("\n\n"))
    return (f'<h1>Doc</h1><p><a href="#{quote(ident, safe="")}">to it</a></p>{paragraphs}'
            f'<h2 id="{html.escape(ident)}">Head</h2><p>Text.</p>')


def read(content_format: str, text: str) -> Document:
    return read_markdown(text) if content_format == "markdown" else read_html(text)


def head(document: Document) -> Heading:
    return next(b for b in document.blocks if isinstance(b, Heading) and b.level == 2)


def messages(document: Document) -> list[str]:
    return [note.message.split(": ", 1)[1] for note in document.notes]


#: Ids the rule keeps that the old one (no white space) refused, by input format: a heading's
#: line holds no line break, an HTML attribute may.
KEPT = [("markdown", "a b"), ("html", "a b"), ("html", "a\tb\nc"),
        ("markdown", "y" * MAX_GIVEN_ID), ("html", "y" * MAX_GIVEN_ID)]


@pytest.mark.parametrize(("content_format", "ident"), KEPT)
def test_an_id_of_at_most_200_characters_is_kept_white_space_and_all(
    content_format: str, ident: str
) -> None:
    """Pandoc keeps ``{id="a b"}`` and ``<h2 id="a b">`` as written, and ``[to it](#a%20b)``
    leads there: so does citerender, without a note."""
    document = read(content_format, source(content_format, ident))
    assert head(document).id == ident and head(document).given
    assert document.notes == () and not document.dead_links


@pytest.mark.parametrize("content_format", ["markdown", "html"])
@pytest.mark.parametrize("ident", ["y" * (MAX_GIVEN_ID + 1), " "])
def test_an_id_over_200_characters_or_all_white_space_is_refused_with_a_note(
    content_format: str, ident: str
) -> None:
    """The heading takes an id of its text, and both the id and the link to it are noted with
    the rule (the id quoted to 80 characters)."""
    if content_format == "markdown" and ident == " ":
        text = '## Head <a id=" "></a>\n\n[to it](#%20)\n'  # a block's value has no blank id
    else:
        text = source(content_format, ident)
    document = read(content_format, text)
    shown = ident[:80] + ("…" if len(ident) > 80 else "")
    assert head(document).id == "head" and not head(document).given
    link_note = f"the link to '#{shown}' leads nowhere: {GIVEN_ID_RULE}; its text is kept"
    if content_format == "markdown" and ident == " ":
        assert messages(document) == [link_note]  # an anchor's id, not a heading's
    else:
        assert messages(document) == [
            f"the heading's id '{shown}' is not kept: {GIVEN_ID_RULE}; the heading's id is "
            "'head'", link_note]
    assert document.dead_links == {ident}


def test_an_element_s_id_follows_the_same_rule() -> None:
    """An HTML element's id a link names is an anchor when the rule keeps it, not otherwise."""
    long_id = "z" * (MAX_GIVEN_ID + 1)
    document = read_html(f'<p id="a b">here</p><p id="{long_id}">there</p>'
                         f'<p><a href="#a%20b">1</a> <a href="#{long_id}">2</a></p>')
    assert document.dead_links == {long_id}
    assert messages(document) == [
        f"the link to '#{'z' * 80}…' leads nowhere: {GIVEN_ID_RULE}; its text is kept"]


def bookmarked_link(docx: bytes) -> tuple[str, str]:
    """The DOCX's link ``to it``'s anchor, and the bookmark on the heading ``Head``."""
    body = etree.fromstring(zipfile.ZipFile(io.BytesIO(docx)).read("word/document.xml"))
    link = next(h for h in body.iter(f"{W}hyperlink")
                if "".join(h.itertext()) == "to it")
    heading = next(p for p in body.iter(f"{W}p") if "".join(p.itertext()) == "Head")
    return link.get(f"{W}anchor", ""), heading.find(f".//{W}bookmarkStart").get(f"{W}name")


@pytest.mark.parametrize(("content_format", "ident"), KEPT[:3])
def test_a_link_to_an_id_holding_white_space_lands_in_every_format(
    tmp_path: Path, content_format: str, ident: str
) -> None:
    """The HTML keeps the id and the link to it; the DOCX link leads to the heading's bookmark;
    both PDF engines' link lands on the heading's page (WeasyPrint made no anchor of an id a
    line break is in: the CSS string it writes the id in ended there)."""
    text = source(content_format, ident)
    results = render(text, tmp_path, formats=["html", "docx"], content_format=content_format)
    page = results[0].path.read_text("utf-8")
    assert f'id="{html.escape(ident)}"' in page
    assert f'href="#{quote(ident, safe="")}"' in page
    anchor, bookmark = bookmarked_link(results[1].path.read_bytes())
    assert anchor == bookmark
    for engine in ("typst", "weasyprint"):
        (pdf,) = render(text, tmp_path / engine, formats="pdf", pdf_engine=engine,
                        content_format=content_format)
        pages = [p.extract_text() for p in PdfReader(pdf.path).pages]
        landing = next(i for i, t in enumerate(pages) if "Head" in t.replace("Header", ""))
        assert {shown: at for shown, at, _ in internal_links(pdf.path)}["to it"] == landing
        assert not [d for d in pdf.diagnostics if "leads nowhere" in d.message]


@pytest.mark.parametrize("content_format", ["markdown", "html"])
def test_a_100_000_character_id_reaches_no_format(tmp_path: Path, content_format: str) -> None:
    """Kept as its own slug, the id was written in each format, once per place and link: 211 KB
    of HTML and 214 KB of Typst PDF for a 200 KB input. Now each output is small and holds no
    run of the id longer than the 80 characters a note quotes."""
    ident = "x" * 100_000
    text = source(content_format, ident).replace(FILLER, "Short.")
    results = render(text, tmp_path, formats=["html", "docx", "md"],
                     content_format=content_format)
    (typst,) = render(text, tmp_path / "typst", formats="pdf", pdf_engine="typst",
                      content_format=content_format)
    for result in (*results, typst):
        data = result.path.read_bytes()
        assert len(data) < 50_000, result.path.name
        if result.path.suffix == ".docx":
            data = zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml")
        assert b"x" * 81 not in data, result.path.name
    assert sum("leads nowhere" in d.message for d in typst.diagnostics) == 1


def test_a_refused_html_heading_id_is_noted_at_its_line() -> None:
    """Markdown's note named the heading's line and HTML's named none: the HTML reader finds
    each heading holding the id in the input (a comment's lines, a tag spread over two lines
    and an entity counted as written)."""
    long_id = "y" * (MAX_GIVEN_ID + 1)
    document = read_html(f'<h1>Doc</h1>\n<!-- a\n\n -->\n<h2 id="&#32;">A</h2>\n<h2\n id=" ">B</h2>'
                         f'\n<p>x</p>\n<h3 id="{long_id}">C</h3>\n<h3 id="{long_id}">D</h3>\n')
    assert [(note.line, note.message.split(":", 1)[0]) for note in document.notes] == [
        (5, "HTML input, line 5"), (6, "HTML input, line 6"),
        (9, "HTML input, line 9"), (10, "HTML input, line 10")]


def paragraph_source(content_format: str, written: str, fragment: str) -> str:
    """A document whose second page has an anchor written ``written`` inside the paragraph
    ``Here the place.``, and whose first has a link ``to it`` with ``fragment``."""
    if content_format == "markdown":
        return (f"# Doc\n\n[to it](#{fragment})\n\n{FILLER}\n\n"
                f'Here <a id="{written}"></a>the place.\n')
    paragraphs = "".join(f"<p>{p}</p>" for p in FILLER.split("\n\n"))
    return (f'<h1>Doc</h1><p><a href="#{fragment}">to it</a></p>{paragraphs}'
            f'<p>Here <a id="{written}"></a>the place.</p>')


#: An anchor's id as written, its link's fragment, and the id read: white space kept (the
#: markdown reader trimmed it, so its link led nowhere), and a form feed, which HTML keeps in a
#: quoted value and no XML format can carry, read as U+FFFD by the id and by its link alike
#: (the link decoded it to U+000C and led nowhere).
ANCHORS = [(fmt, written, fragment, ident) for fmt in ("markdown", "html")
           for written, fragment, ident in [(" x ", "%20x%20", " x "),
                                             ("a&#12;b", "a%0Cb", "a\ufffdb"),
                                             ("a&#12;b", "a%0cb", "a\ufffdb")]]


def anchors(document: Document) -> list[str]:
    return [node.id for block in document.blocks if isinstance(block, Paragraph)
            for node in block.children if isinstance(node, Anchor)]


@pytest.mark.parametrize(("content_format", "written", "fragment", "ident"), ANCHORS)
def test_an_anchor_s_id_is_read_as_written_by_both_readers_and_its_link_leads_there(
    content_format: str, written: str, fragment: str, ident: str
) -> None:
    document = read(content_format, paragraph_source(content_format, written, fragment))
    assert anchors(document) == [ident]
    assert document.notes == () and not document.dead_links


def paragraph_bookmark(docx: bytes) -> tuple[str, str]:
    """The DOCX's link ``to it``'s anchor, and the bookmark in the paragraph ``Here …``."""
    body = etree.fromstring(zipfile.ZipFile(io.BytesIO(docx)).read("word/document.xml"))
    link = next(h for h in body.iter(f"{W}hyperlink") if "".join(h.itertext()) == "to it")
    place = next(p for p in body.iter(f"{W}p") if "".join(p.itertext()).startswith("Here"))
    return link.get(f"{W}anchor", ""), place.find(f".//{W}bookmarkStart").get(f"{W}name")


@pytest.mark.parametrize(("content_format", "written", "fragment", "ident"), ANCHORS[0:5:4])
def test_a_link_to_an_anchor_s_odd_id_lands_in_every_format(
    tmp_path: Path, content_format: str, written: str, fragment: str, ident: str
) -> None:
    """The HTML's href names the anchor's id (a form feed's escape is U+FFFD's, as the id's
    character is), the DOCX link its bookmark, both PDF engines' link the anchor's page, and
    the Markdown output writes the id back as read."""
    text = paragraph_source(content_format, written, fragment)
    results = render(text, tmp_path, formats=["html", "docx", "md"],
                     content_format=content_format)
    page = results[0].path.read_text("utf-8")
    assert f'id="{html.escape(ident)}"' in page and f'href="#{quote(ident)}"' in page
    anchor, bookmark = paragraph_bookmark(results[1].path.read_bytes())
    assert anchor == bookmark
    markdown = results[2].path.read_text("utf-8")
    assert f'<a id="{ident}"></a>' in markdown and f"(#{quote(ident)})" in markdown
    for engine in ("typst", "weasyprint"):
        (pdf,) = render(text, tmp_path / engine, formats="pdf", pdf_engine=engine,
                        content_format=content_format)
        pages = [p.extract_text() for p in PdfReader(pdf.path).pages]
        landing = next(i for i, t in enumerate(pages) if "the place" in t)
        assert {shown: at for shown, at, _ in internal_links(pdf.path)}["to it"] == landing
        assert not pdf.diagnostics


@pytest.mark.parametrize("content_format", ["markdown", "html"])
def test_a_heading_id_with_a_form_feed_reference_is_read_as_its_link_is(
    content_format: str
) -> None:
    """``{id="a&#12;b"}`` gave the heading a raw U+000C (no XML format carries it), and its
    link, read as U+FFFD, then led nowhere: both are U+FFFD now, as HTML's ``id`` is."""
    text = ('## Head {id="a&#12;b"}\n\n[to it](#a%0Cb)\n' if content_format == "markdown"
            else '<h2 id="a&#12;b">Head</h2><p><a href="#a%0Cb">to it</a></p>')
    document = read(content_format, text)
    assert head(document).id == "a\ufffdb" and head(document).given
    assert document.notes == () and not document.dead_links


@pytest.mark.parametrize("content_format", ["markdown", "html"])
def test_a_writer_s_anchor_with_white_space_around_is_the_author_s_in_both_readers(
    content_format: str
) -> None:
    """``" src-1 "`` is no writer's anchor (ids match as written): the markdown reader kept it
    and the sanitizer dropped it (it matched the writers' form once stripped), so the link to
    it led nowhere in HTML input only. ``"src-1"`` itself stays the writers'."""
    text = ('[to it](#%20src-1%20)\n\nHere <a id=" src-1 "></a>the place.\n'
            if content_format == "markdown" else
            '<p><a href="#%20src-1%20">to it</a></p><p id=" src-1 ">Here the place.</p>')
    document = read(content_format, text)
    assert anchors(document) == [" src-1 "]
    assert document.notes == () and not document.dead_links


def test_the_author_s_look_refuses_the_ids_the_reader_refuses(tmp_path: Path) -> None:
    """``<h2 id="&nbsp;">``: the reader took an id of the heading's text and said the link to
    it leads nowhere, while the author's-look PDF kept the id and the link went there. The
    author's look now drops such an id, so its link is text there too, as the note says; an id
    the rule keeps keeps its link."""
    text = source("html", "\xa0").replace(FILLER, "Short.").replace(
        "</p>", '</p><p><a href="#a%20b">kept</a></p><p id="a b">Here.</p>', 1)
    (pdf,) = render(text, tmp_path, formats="pdf", pdf_engine="weasyprint",
                    content_format="html")
    assert [d.message.split(": ", 1)[1] for d in pdf.diagnostics
            if "leads nowhere" in d.message] == [
        f"the link to '#\\xa0' leads nowhere: {GIVEN_ID_RULE}; its text is kept"]
    assert [shown for shown, _, _ in internal_links(pdf.path)] == ["kept"]


@pytest.mark.parametrize("ident", [" ", "\t\n", "y" * (MAX_GIVEN_ID + 1)])
def test_the_author_s_look_sanitizer_drops_every_id_the_rule_refuses(ident: str) -> None:
    """The one rule (:meth:`HeadingIds.can_keep`) decides for the author's look as for the
    reader, which keeps the id only to name it in its note."""
    written = f'<h2 id="{html.escape(ident)}">H</h2><p id="a b">P</p>'
    assert sanitize_html(written, keep_styles=True) == '<h2>H</h2><p id="a b">P</p>'
    assert "id=" in sanitize_html(written).split("</h2>")[0]
    kept = '<h2 id="&#12;">H</h2>'  # U+FFFD to the reader, a place its links lead to
    assert sanitize_html(kept, keep_styles=True) == '<h2 id="\ufffd">H</h2>'
