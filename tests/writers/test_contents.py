"""The table of contents (issue 18, item 2): the shared rule, then each format read back — HTML
markup, PDF text, page numbers and links, the DOCX TOC field, the PPTX agenda slide, and DOCX
and PPTX as LibreOffice shows them."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import docx
import pytest
from pptx import Presentation
from pypdf import PdfReader

from renderers.api import write_pdf
from renderers.document import Cite, Heading, Math, Text
from renderers.labels import ENGLISH
from renderers.options import RenderOptions
from renderers.readers.markdown import read_markdown
from renderers.writers.common import document_title
from renderers.writers.contents import (
    CONTENTS_DEPTH,
    body_outline,
    contents_entries,
    contents_headings,
    contents_position,
    heading_text,
)
from tests.helpers import convert_all_with_libreoffice, outline_titles
from tests.support.render import WriterFormat, render_markdown

POOL = [
    {"sid": 1, "title": "Storage outlook", "url": "https://iea.example/storage"},
    {"sid": 2, "title": "Cost survey", "url": "https://irena.example/costs"},
]
REPORT = """# Grid Storage Outlook

## Introduction

Batteries are scaling fast.[[S:1]]

### Costs fall [[S:2]]

Cheaper every year.

##### Too deep for the contents

Detail.

## Outlook

More to come.[[S:1]]
"""
EXPECTED = [("Introduction", 1), ("Costs fall", 2), ("Outlook", 1), ("Sources", 1)]


# ---------------------------------------------------------------- the rule


def test_entries_skip_the_title_heading_and_citation_numbers_and_stay_three_deep() -> None:
    title = Heading(1, (Text("Report"),), "report")
    blocks = (
        title,
        Heading(2, (Text("Intro "), Cite((1,), (1,), "cite-1")), "intro"),
        Heading(4, (Text("Jumps two levels"),), "jump"),
        Heading(5, (Text("Four deep"),), "deep"),
        Heading(3, (Text("Back"),), "back"),
    )
    headings = contents_headings(body_outline(blocks, title), lambda h: f"#{h.id}", ENGLISH)
    assert headings[0] == (2, "Intro", "#intro")
    entries = contents_entries(headings, [("Sources", "sources")])
    assert [(e.text, e.anchor, e.depth) for e in entries] == [
        ("Intro", "#intro", 1),
        ("Jumps two levels", "#jump", 2),  # never deeper than one under the entry before
        ("Back", "#back", 2),
        ("Sources", "sources", 1),
    ]
    assert CONTENTS_DEPTH == 3  # "Four deep" is the fourth level from the top: left out


def test_the_deck_lists_only_headings_that_start_slides() -> None:
    blocks = (Heading(2, (Text("Slide"),), "s"), Heading(3, (Text("Sub"),), "t"))
    assert contents_headings(body_outline(blocks, None), lambda h: h.id, ENGLISH,
                             deepest=2) == [(2, "Slide", "s")]


SECTIONS = """# Top {.unlisted}

## In top

> ## Quoted {.unlisted}

### Deeper in top

# Report

## Aside {.unlisted}

### Under the aside

#### Deeper

## Next

### Under next
"""


@pytest.mark.parametrize(("title", "kept_out"), [
    # the first h1 shows the title: it keeps only itself out (of the PDF outline)
    ("", ["Top", "Aside", "Under the aside", "Deeper"]),
    # another title, added above the body: the first h1 is an ordinary one, its section out
    ("Other text", ["Top", "In top", "Deeper in top", "Aside", "Under the aside", "Deeper"]),
    # a later h1 shows it: the first is spared nothing
    ("Report", ["Top", "In top", "Deeper in top", "Aside", "Under the aside", "Deeper"]),
])
def test_an_unlisted_section_is_kept_out_whole_unless_it_shows_the_title(
    title: str, kept_out: list[str]
) -> None:
    """Pandoc's section rule, decided where the title is known: a section runs to the next
    heading of its level or above; a heading in a quote starts none and answers for itself."""
    document = read_markdown(SECTIONS)
    shown = document_title(document, RenderOptions(title=title))
    outline = body_outline(document.blocks, shown.heading)
    headings = [b for b in document.blocks if isinstance(b, Heading)]
    assert [heading_text(h, ENGLISH) for h in headings if not outline.lists(h)] == kept_out
    quoted = next(b for b in document.blocks if not isinstance(b, Heading)).blocks[0]
    assert isinstance(quoted, Heading) and not outline.lists(quoted)
    listed = [text for _, text, _ in contents_headings(outline, lambda h: h.id, ENGLISH)]
    assert listed == [heading_text(h, ENGLISH) for h in headings
                      if outline.lists(h) and h is not shown.heading]


def test_an_entry_shows_a_formula_as_text_not_tex() -> None:
    heading = Heading(3, (Text("Sub with "), Math("\\alpha"), Text(" and "), Math("x^2")), "s")
    assert heading_text(heading, ENGLISH) == "Sub with α and x²"
    assert heading_text(Heading(2, (Text("Raw "), Math("\\frac{")), "r"), ENGLISH) == "Raw \\frac{"


# ---------------------------------------------------------------- HTML and PDF


def html_of(markdown: str, **options: object) -> str:
    return render_markdown("html", markdown, POOL, **options).decode()


def test_html_contents_follow_the_title_and_link_to_every_heading() -> None:
    html = html_of(REPORT, toc=True)
    nav = re.search(r'<nav id="contents".*?</nav>', html, re.S)
    assert nav is not None
    assert html.index("Grid Storage Outlook</h1>") < nav.start() < html.index('id="introduction"')
    links = re.findall(r'<a href="#([^"]+)">([^<]+)</a>', nav.group(0))
    assert [text for _, text in links] == [text for text, _ in EXPECTED]
    for anchor, _ in links:
        assert f'id="{anchor}"' in html
    assert nav.group(0).count('<ul class="toc-list">') == 2  # "Costs fall" nested


def test_html_without_toc_has_no_contents() -> None:
    html = html_of(REPORT)
    assert "toc" not in html.split("<style>")[0] + html.split("</style>")[1]


def test_a_heading_called_contents_does_not_take_the_lists_id() -> None:
    html = html_of("# Report\n\n## Contents\n\nText.\n", toc=True)
    assert '<nav id="contents"' in html and '<h2 id="contents-1"' in html


def test_contents_follow_the_added_title_and_the_paragraphs_under_it() -> None:
    html = html_of("Intro text.\n\n## Part one\n\n## Part two\n", toc=True, title="Memo")
    assert html.index('<h1 class="doc-title">Memo</h1>') < html.index("Intro text.")
    assert html.index("Intro text.") < html.index('<nav id="contents"')
    assert html.index('<nav id="contents"') < html.index("Part one</h2>")
    table = html_of("| a |\n|---|\n| b |\n\n## Part one\n", toc=True, title="Memo")
    assert table.index('<nav id="contents"') < table.index("<table")  # only paragraphs stay


BYLINE = "# Grid Storage Outlook\n\n*Prepared for the board · May 2025*\n\n" + REPORT.split(
    "\n", 2)[2]


def test_contents_position_keeps_the_byline_with_the_title() -> None:
    blocks = read_markdown(BYLINE).blocks
    assert contents_position(blocks, blocks[0]) == 2  # after the title and its byline
    assert contents_position(blocks, None) == 0  # a title added above: the body starts
    assert contents_position(blocks[1:], None) == 1


@pytest.mark.parametrize("source", ["markdown-weasyprint", "markdown-typst", "html"])
def test_the_pdf_contents_come_after_the_byline(source: str, tmp_path: Path) -> None:
    """The byline under the title belongs to it: the contents follow it, in every PDF."""
    content, engine = BYLINE, source.rpartition("-")[2]
    if source == "html":
        content, engine = ("<h1>Grid Storage Outlook</h1><p><em>Prepared for the board · May "
                           "2025</em></p><h2>Introduction</h2><p>Text.</p>"), "weasyprint"
    result = write_pdf(content, tmp_path / "r.pdf", sources_pool=POOL, toc=True,
                       pdf_engine=engine)
    text = " ".join(PdfReader(str(result.path)).pages[0].extract_text().split())
    assert text.index("Prepared for the board") < text.index("Contents")


def test_docx_contents_come_after_the_byline() -> None:
    xml = docx_xml(render_markdown("docx", BYLINE, POOL, toc=True))
    assert xml.index("Prepared for the board") < xml.index("<w:sdt>")


def test_pdf_contents_show_page_numbers_and_link_to_the_headings(tmp_path: Path) -> None:
    long_section = "\n\n".join(["Filler sentence for the first section. " * 12] * 14)
    markdown = REPORT.replace("Cheaper every year.", long_section)
    result = write_pdf(markdown, tmp_path / "toc.pdf", sources_pool=POOL, toc=True)
    reader = PdfReader(str(result.path))
    first = reader.pages[0].extract_text()
    outlook_page = next(i for i, page in enumerate(reader.pages)
                        if "More to come." in (page.extract_text() or ""))
    assert outlook_page > 0
    assert re.search(rf"Outlook\W*\.+\W*{outlook_page + 1}\b", first), first
    assert re.search(r"Introduction\W*\.+\W*1\b", first), first
    targets = []
    for annotation in reader.pages[0].get("/Annots", []):
        action = annotation.get_object()
        destination = action.get("/Dest")
        if destination is None and "/A" in action:
            destination = action["/A"].get("/D")
        if destination is not None:
            named = reader.named_destinations.get(str(destination), destination)
            page = named.page if hasattr(named, "page") else named[0]
            targets.append(reader.get_page_number(page.get_object() if hasattr(page, "get_object")
                                                  else page))
    assert outlook_page in targets  # the contents entry jumps to the later page


def pdf_contents(html: str, target: Path) -> tuple[list[str], str]:
    """The contents entries of the PDF of HTML input with ``toc``, and its first page's text."""
    result = write_pdf(html, target, sources_pool=POOL, toc=True)
    text = PdfReader(str(result.path)).pages[0].extract_text()
    lines = [line for line in text.splitlines() if "...." in line]
    return [line.split(".")[0].strip() for line in lines], text


def test_html_input_gets_contents_in_its_pdf(tmp_path: Path) -> None:
    html = ("<html><body><h1>Briefing</h1><h2>First <sup class=\"cite\" data-sids=\"1\">"
            "[S:1]</sup></h2><p>Text.</p><h2>Second</h2><p>More.</p></body></html>")
    entries, _ = pdf_contents(html, tmp_path / "brief.pdf")
    assert entries == ["First", "Second", "Sources"]


def test_html_input_with_text_right_after_a_heading_gets_contents(tmp_path: Path) -> None:
    """The heading was copied with its tail (the text after ``</h2>``), which lxml refused to
    read back as one element: an internal error for any such page with ``toc``."""
    html = ("<html><body><h2>First [[S:1]]</h2> loose text\n\n***\n<h2>Second</h2> more"
            "</body></html>")
    entries, text = pdf_contents(html, tmp_path / "brief.pdf")
    assert entries == ["First", "Second", "Sources"]
    assert "loose text" in text


# ---------------------------------------------------------------- DOCX


def docx_xml(data: bytes) -> str:
    return zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml").decode()


def test_docx_contents_are_a_filled_word_toc_field() -> None:
    data = render_markdown("docx", REPORT, POOL, toc=True)
    xml = docx_xml(data)
    sdt = re.search(r"<w:sdt>.*?</w:sdt>", xml, re.S)
    assert sdt is not None
    field = sdt.group(0)
    assert '<w:docPartGallery w:val="Table of Contents"/>' in field
    kinds = re.findall(r'w:fldCharType="(\w+)"', field)
    assert kinds == ["begin", "separate", "end"]
    assert ' TOC \\o "1-3" \\h \\z \\u ' in field
    anchors = re.findall(r'<w:hyperlink w:anchor="([^"]+)"', field)
    texts = re.findall(r"<w:hyperlink[^>]*><w:r><w:t>([^<]+)</w:t>", field)
    assert texts == [text for text, _ in EXPECTED]
    bookmarks = set(re.findall(r'<w:bookmarkStart w:id="\d+" w:name="([^"]+)"', xml))
    assert set(anchors) <= bookmarks
    styles = re.findall(r'<w:pStyle w:val="([^"]+)"/>', field)
    assert styles[0] == "TOCHeading" and styles[1:] == ["TOC1", "TOC2", "TOC1", "TOC1"]
    document = docx.Document(io.BytesIO(data))
    names = {style.style_id: style.name for style in document.styles}
    assert names["TOC2"] == "toc 2" and "TOC3" not in names
    assert xml.index("</w:sdt>") < xml.index(">Introduction</w:t></w:r><w:bookmarkEnd")


def test_docx_without_toc_has_no_field() -> None:
    assert "<w:sdt>" not in docx_xml(render_markdown("docx", REPORT, POOL))


# ---------------------------------------------------------------- PPTX


def test_pptx_agenda_slide_links_each_entry_to_its_slide() -> None:
    deck = Presentation(io.BytesIO(render_markdown("pptx", REPORT, POOL, toc=True)))
    slides = list(deck.slides)
    agenda = slides[1]
    assert agenda.shapes.title.text == "Contents"
    body = next(s for s in agenda.shapes if s.has_text_frame and s != agenda.shapes.title)
    paragraphs = body.text_frame.paragraphs
    assert [p.text for p in paragraphs] == ["Introduction", "Outlook", "Sources"]
    for paragraph in paragraphs:
        run = paragraph.runs[0]
        rid = run._r.find(".//{*}hlinkClick").get(
            "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id")
        target = agenda.part.related_part(rid)
        shown = next(s for s in slides if s.part is target)
        assert paragraph.text in shown.shapes.title.text


def internal_links(reader: PdfReader, page: int) -> list[tuple[float, int]]:
    """The internal links of a page as LibreOffice exports them: (top of the link's box,
    index of the page it jumps to)."""
    links = []
    for annotation in reader.pages[page].get("/Annots", []):
        destination = annotation.get_object().get("/Dest")
        if destination is not None:
            links.append((float(annotation.get_object()["/Rect"][3]),
                          reader.get_page_number(destination[0].get_object())))
    return sorted(links, reverse=True)


@pytest.mark.libreoffice
def test_libreoffice_shows_the_docx_and_pptx_contents(tmp_path: Path) -> None:
    paths = []
    fmt: WriterFormat
    for fmt, toc in (("docx", True), ("docx", False), ("pptx", True)):
        path = tmp_path / f"contents-{fmt}-{toc}.{fmt}"
        path.write_bytes(render_markdown(fmt, REPORT, POOL, toc=toc))
        paths.append(path)
    with_toc, without_toc, deck = (PdfReader(str(p))
                                   for p in convert_all_with_libreoffice(paths, tmp_path))
    text = with_toc.pages[0].extract_text()
    start = text.index("Contents")
    shown = [line.strip() for line in text[start:].splitlines()[1:5]]
    assert shown == [t for t, _ in EXPECTED], text
    added = len(internal_links(with_toc, 0)) - len(internal_links(without_toc, 0))
    assert added == len(EXPECTED)  # each entry is a link within the document
    agenda = deck.pages[1].extract_text()
    assert agenda.splitlines()[0] == "Contents"
    for entry, (_, target) in zip(("Introduction", "Outlook", "Sources"),
                                  internal_links(deck, 1), strict=True):
        assert deck.pages[target].extract_text().startswith(entry)


# ---------------------------------------------------------------- formulas in headings

MATH_REPORT = """# Main title

## Growth of $x^2$ and `code`[[S:1]]

Text.[^n]

[^n]: A note.[[S:2]]

## $\\sqrt{x}$ first and last $\\beta$

### Sub with $\\alpha$

Text here.
"""
#: Every format's contents entries for MATH_REPORT: formulas as text, never TeX.
MATH_ENTRIES = ["Growth of x² and code", "√x first and last β", "Sub with α", "Notes", "Sources"]


def test_html_contents_and_outline_labels_show_formulas_as_text() -> None:
    html = html_of(MATH_REPORT, toc=True)
    nav = re.search(r'<nav id="contents".*?</nav>', html, re.S)
    assert nav is not None
    assert re.findall(r'<a href="#[^"]+">([^<]+)</a>', nav.group(0)) == MATH_ENTRIES
    assert re.findall(r'data-outline="([^"]+)"', html) == MATH_ENTRIES[:3]


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_pdf_contents_and_outline_show_formulas_as_the_same_text(engine: str) -> None:
    data = render_markdown("pdf", MATH_REPORT, POOL, toc=True, pdf_engine=engine)
    reader = PdfReader(io.BytesIO(data))
    assert outline_titles(reader) == ["Main title", *MATH_ENTRIES]  # no TeX, no stray spaces
    lines = [line for line in reader.pages[0].extract_text().splitlines() if "...." in line]
    assert [line.split("..")[0].strip() for line in lines] == MATH_ENTRIES


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_a_heading_of_only_a_citation_has_no_outline_entry(engine: str) -> None:
    """Its outline text is empty (citation numbers are left out): WeasyPrint leaves it out of
    the PDF outline, and Typst wrote a bookmark with an empty title for each."""
    data = render_markdown("pdf", "# [[S:1]]\n\n## [[S:2]]\n\nBody.[[S:1]]\n", POOL,
                           pdf_engine=engine)
    assert outline_titles(PdfReader(io.BytesIO(data))) == ["Sources"]


def test_docx_and_pptx_contents_show_formulas_as_text() -> None:
    field = re.search(r"<w:sdt>.*?</w:sdt>",
                      docx_xml(render_markdown("docx", MATH_REPORT, POOL, toc=True)), re.S)
    assert field is not None
    texts = re.findall(r"<w:hyperlink[^>]*><w:r><w:t>([^<]+)</w:t>", field.group(0))
    assert texts == MATH_ENTRIES
    deck = Presentation(io.BytesIO(render_markdown("pptx", MATH_REPORT, POOL, toc=True)))
    agenda = list(deck.slides)[1]
    body = next(s for s in agenda.shapes if s.has_text_frame and s != agenda.shapes.title)
    shown = [p.text for p in body.text_frame.paragraphs]
    assert shown == [e for e in MATH_ENTRIES if e != "Sub with α"]  # the slide level: h2
