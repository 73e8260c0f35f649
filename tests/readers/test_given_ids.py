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
from renderers.document import Document, Heading
from renderers.readers.html import read_html
from renderers.readers.markdown import read_markdown
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
