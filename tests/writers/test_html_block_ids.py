"""An id written in a markdown HTML block is a place for every link of the document, read back
from each produced file: the element's id and the kept href in HTML, a link annotation to the
place's page and line in both PDF engines, a bookmark and an internal hyperlink in DOCX (in
LibreOffice's PDF of it too), a slide jump in PPTX, ``<a id>`` in Markdown."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import lxml.html
import pypdfium2 as pdfium
import pytest
from pptx import Presentation
from pptx.oxml.ns import qn
from pypdf import PdfReader

from renderers.api import render
from tests.helpers import convert_with_libreoffice, internal_links

POOL = [{"sid": 1, "title": "T", "url": "https://e.org/a"}]
FILLER = "\n\n".join(f"Filler paragraph {n} with words that take room on the page." for n in
                     range(60))
#: The reported example, with a link before the block it leads to and a page of filler before
#: the second block, so a PDF link must lead to another page.
CONTENT = (
    "# A\n\nJump [ahead](#para) first.\n\n<div id=\"box\">\n\nBoxed text [[S:1]].\n\n</div>\n\n"
    f"See [the box](#box) and [intro](#a).\n\n{FILLER}\n\n<p id=\"para\">A para.</p>\n\n"
    "Jump [to para](#para).\n"
)
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def rendered(tmp_path: Path, fmt: str, **options: Any) -> Path:
    out = tmp_path / fmt
    (result,) = render(CONTENT, out, sources_pool=POOL, formats=[fmt], **options)
    assert not result.warnings
    return next(out.glob(f"report.{fmt}"))


def test_html_keeps_the_ids_and_the_links_to_them(tmp_path: Path) -> None:
    root = lxml.html.parse(str(rendered(tmp_path, "html"))).getroot()
    hrefs = {a.text_content(): a.get("href") for a in root.iter("a") if a.get("href")}
    assert hrefs["ahead"] == hrefs["to para"] == "#para"
    assert (hrefs["the box"], hrefs["intro"]) == ("#box", "#a")
    assert root.xpath("string(//*[@id='box']/following::text()[1])") == "Boxed text "
    assert root.xpath("string(//*[@id='para']/following::text()[1])") == "A para."


def test_markdown_names_the_places(tmp_path: Path) -> None:
    text = rendered(tmp_path, "md").read_text("utf-8")
    assert '<a id="box"></a>Boxed text [^1].' in text
    assert '<a id="para"></a>A para.' in text
    assert "[ahead](#para)" in text and "See [the box](#box)" in text


def line_of(pdf: Path, text: str) -> tuple[int, float]:
    """The page of the first ``text`` in the PDF and the top of its first character."""
    document = pdfium.PdfDocument(str(pdf))
    try:
        for index in range(len(document)):
            textpage = document[index].get_textpage()
            match = textpage.search(text).get_next()
            if match:
                return index, textpage.get_charbox(match[0])[3]
    finally:
        document.close()
    raise AssertionError(f"{text!r} is not in the PDF")


def assert_leads_to(links: list[tuple[str, int, float]], shown: str, pdf: Path,
                    place: str) -> None:
    """The link showing ``shown`` leads to the line of ``place``: its page, at most a line
    above the line's top (where both engines put a destination)."""
    page, top = line_of(pdf, place)
    (target,) = [(p, t) for text, p, t in links if text == shown]
    assert target[0] == page
    assert top <= target[1] <= top + 15


@pytest.mark.parametrize("engine", ["typst", "weasyprint"])
def test_pdf_links_lead_to_the_places(tmp_path: Path, engine: str) -> None:
    pdf = rendered(tmp_path, "pdf", pdf_engine=engine)
    links = internal_links(pdf)
    assert line_of(pdf, "Boxed text")[0] == 0 < line_of(pdf, "A para.")[0]
    assert_leads_to(links, "ahead", pdf, "A para.")
    assert_leads_to(links, "to para", pdf, "A para.")
    assert_leads_to(links, "the box", pdf, "Boxed text")


def docx_places(data: bytes) -> tuple[dict[str, str], dict[str, str]]:
    """Each bookmark (its name → the text of its paragraph), and each internal hyperlink (its
    text → the bookmark it leads to)."""
    body = lxml.etree.fromstring(zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml"))

    def text(element: Any) -> str:
        return "".join(element.itertext())

    marks = {mark.get(f"{W}name"): text(p) for p in body.iter(f"{W}p")
             for mark in p.iter(f"{W}bookmarkStart")}
    links = {text(h): h.get(f"{W}anchor") for h in body.iter(f"{W}hyperlink")
             if h.get(f"{W}anchor")}
    return marks, links


def test_docx_bookmarks_the_places_and_links_to_them(tmp_path: Path) -> None:
    marks, links = docx_places(rendered(tmp_path, "docx").read_bytes())
    assert links["ahead"] == links["to para"]
    assert marks[links["to para"]] == "A para."
    assert marks[links["the box"]] == "Boxed text 1."
    assert marks[links["intro"]] == "A"


@pytest.mark.libreoffice
def test_libreoffice_keeps_the_docx_links_to_the_places(tmp_path: Path) -> None:
    pdf = convert_with_libreoffice(rendered(tmp_path, "docx"), tmp_path / "lo")
    links = internal_links(pdf)
    page = line_of(pdf, "A para.")[0]
    assert page > 0
    assert [to for text, to, _ in links if text in ("ahead", "to para")] == [page, page]
    assert [to for text, to, _ in links if text == "the box"] == [0]


def test_pptx_links_jump_to_the_slide_of_the_place(tmp_path: Path) -> None:
    prs = Presentation(str(rendered(tmp_path, "pptx")))
    slides = list(prs.slides)
    by_part = {slide.part: slide for slide in slides}

    def slide_of(text: str) -> int:
        return next(n for n, slide in enumerate(slides) if any(
            shape.has_text_frame and text in shape.text_frame.text for shape in slide.shapes))

    jumps = {}
    for slide in slides:
        for run in slide.element.iter(qn("a:r")):
            link = run.find(qn("a:rPr")).find(qn("a:hlinkClick"))
            if link is not None and run.findtext(qn("a:t")) in ("ahead", "the box", "to para"):
                target = by_part[slide.part.related_part(link.get(qn("r:id")))]
                jumps[run.findtext(qn("a:t"))] = slides.index(target)
    assert slide_of("A para.") != slide_of("Boxed text")
    assert jumps == {"ahead": slide_of("A para."), "to para": slide_of("A para."),
                     "the box": slide_of("Boxed text")}


@pytest.mark.parametrize("engine", ["typst", "weasyprint"])
def test_an_id_on_an_element_without_a_line_of_text_leads_to_it(tmp_path: Path,
                                                                  engine: str) -> None:
    """``<div id><pre>…</pre></div>`` and ``<a id></a>`` on a line of their own: the place is
    just before the next block (Typst sets no empty line for it)."""
    content = ("# A\n\n[code](#pre) [below](#below)\n\n<div id=\"pre\"><pre>code only</pre>"
               "</div>\n\n<a id=\"below\"></a>\n\nBelow the code.\n")
    out = tmp_path / engine
    (result,) = render(content, out, sources_pool=POOL, formats=["pdf"], pdf_engine=engine)
    assert not result.warnings
    pdf = out / "report.pdf"
    links = internal_links(pdf)
    page, top = line_of(pdf, "code only")
    (code,) = [(to, y) for text, to, y in links if text == "code"]
    assert code[0] == page and top < code[1] <= top + 30  # the code box's padding above
    assert_leads_to(links, "below", pdf, "Below the code.")
    assert line_of(pdf, "below")[1] - top < 40  # no empty line between the links and the code


#: A place before a code block and one before a rule, which have no line of text to carry it.
BEFORE_BLOCKS = ("# A\n\nTo [code](#x), [same](#y), [rule](#r).\n\n<a id=\"x\"></a>\n"
                 "<a id=\"y\"></a>\n\n```\ncode only\n```\n\n<a id=\"r\"></a>\n\n---\n\n"
                 "After the rule.\n")


def test_html_marks_the_code_block_and_the_rule_themselves(tmp_path: Path) -> None:
    """No empty ``<p>`` for the anchors (it could stay at the foot of the page before the
    block): the ids are on elements around the block, so a link lands on it."""
    (result,) = render(BEFORE_BLOCKS, tmp_path, sources_pool=POOL, formats=["html"])
    assert not result.warnings
    root = lxml.html.parse(str(tmp_path / "report.html")).getroot()
    assert not [p for p in root.iter("p") if not p.text_content().strip()]
    assert root.xpath("string(//*[@id='x']//pre)") == "code only"
    assert root.xpath("//*[@id='y']/parent::*/@id") == ["x"]
    assert root.xpath("count(//*[@id='r']/hr)") == 1


def test_weasyprint_link_leads_to_the_code_block(tmp_path: Path) -> None:
    (result,) = render(BEFORE_BLOCKS, tmp_path, sources_pool=POOL, formats=["pdf"],
                       pdf_engine="weasyprint")
    assert not result.warnings
    pdf = tmp_path / "report.pdf"
    links = internal_links(pdf)
    page, top = line_of(pdf, "code only")
    targets = [(to, y) for text, to, y in links if text in ("code", "same")]
    assert len(targets) == 2
    assert all(to == page and top < y <= top + 30 for to, y in targets)  # the box's padding
    assert line_of(pdf, "code only")[1] - line_of(pdf, "To code")[1] > -40  # no empty line


def test_docx_bookmarks_the_code_line_and_the_rule(tmp_path: Path) -> None:
    (result,) = render(BEFORE_BLOCKS, tmp_path, sources_pool=POOL, formats=["docx"])
    assert not result.warnings
    data = (tmp_path / "report.docx").read_bytes()
    marks, links = docx_places(data)
    assert marks[links["code"]] == marks[links["same"]] == "code only"
    body = lxml.etree.fromstring(zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml"))
    parting = f"{W}pPr/{W}spacing[@{W}lineRule='exact']"  # the one after the code's table
    (empty,) = [p for p in body.iter(f"{W}p")
                if not "".join(p.itertext()).strip() and p.find(parting) is None]
    assert empty.find(f".//{W}pBdr") is not None  # the rule's own: no paragraph of anchors
    assert [m.get(f"{W}name") for m in empty.iter(f"{W}bookmarkStart")] == [links["rule"]]


@pytest.mark.parametrize("citations", ["superscript", "footnotes"])
def test_docx_links_to_a_citation(tmp_path: Path, citations: str) -> None:
    """``#cite-1`` (a citation's own id in HTML and PDF) is a bookmark on the citation."""
    content = "# A\n\nSee [the citation](#cite-2).\n\nOne [[S:1]]. Two [[S:1]].\n"
    (result,) = render(content, tmp_path, sources_pool=POOL, formats=["docx"],
                       docx_citations=citations)
    assert not result.warnings
    data = (tmp_path / "report.docx").read_bytes()
    body = lxml.etree.fromstring(zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml"))
    marks, links = docx_places(data)
    mark = links["the citation"]
    assert marks[mark].startswith("One")
    (start,) = [m for m in body.iter(f"{W}bookmarkStart") if m.get(f"{W}name") == mark]
    before = "".join(t.text or "" for t in start.itersiblings(preceding=True)
                     for t in t.iter(f"{W}t"))
    assert "One" in before and "Two" in before  # on the second citation


def test_an_author_id_of_a_section_the_writer_adds_leaves_it_to_the_section(
    tmp_path: Path,
) -> None:
    """``notes`` and ``contents`` are the ids of the Notes section and the contents list when
    the writer adds them: an author's element with one is no place (as in Typst), so the
    contents' own entry and the author's link lead to the section, not to that element; an id
    of a section the document does not have stays the author's."""
    content = ("# H\n\nSee [n](#notes), [c](#contents), [cn](#citation-notes).[^a]\n\n"
               '<p id="notes">Mine notes</p>\n\n<p id="contents">Mine contents</p>\n\n'
               '<p id="citation-notes">Mine cn</p>\n\n## Two\n\nCite [[S:1]].\n\n[^a]: The note.\n')
    (result,) = render(content, tmp_path, sources_pool=POOL, formats=["html"], toc=True)
    assert not result.warnings
    root = lxml.html.parse(str(tmp_path / "report.html")).getroot()
    assert [e.tag for e in root.xpath("//*[@id='notes']")] == ["section"]
    assert [e.tag for e in root.xpath("//*[@id='contents']")] == ["nav"]
    assert root.xpath("string(//*[@id='citation-notes']/following::text()[1])") == "Mine cn"
    (pdf_result,) = render(content, tmp_path / "pdf", sources_pool=POOL, formats=["pdf"],
                           toc=True, pdf_engine="weasyprint")
    assert not pdf_result.warnings
    links = internal_links(tmp_path / "pdf" / "report.pdf")
    (to_notes,) = {(to, y) for text, to, y in links if text == "n"}
    assert {(to, y) for text, to, y in links if text.startswith("Notes")} == {to_notes}
    assert to_notes[1] < line_of(tmp_path / "pdf" / "report.pdf", "Mine notes")[1]


@pytest.mark.parametrize("toc", [False, True])
def test_docx_links_to_the_notes_and_sources_it_adds(tmp_path: Path, toc: bool) -> None:
    """``#notes`` and ``#sources`` lead to the headings of those sections, as in HTML and PDF,
    with or without contents; an author's element with such an id is no place."""
    content = ("# H\n\nSee [n](#notes) and [s](#sources).[^a]\n\n"
               '<p id="notes">Mine notes</p>\n\nCite [[S:1]].\n\n[^a]: The note.\n')
    (result,) = render(content, tmp_path, sources_pool=POOL, formats=["docx"], toc=toc)
    assert not result.warnings
    marks, links = docx_places((tmp_path / "report.docx").read_bytes())
    assert (marks[links["n"]], marks[links["s"]]) == ("Notes", "Sources")
    assert "Mine notes" not in marks.values()


@pytest.mark.parametrize("engine", ["typst", "weasyprint"])
def test_pdf_links_to_any_citation_lead_to_it(tmp_path: Path, engine: str) -> None:
    """A link to a citation no Sources entry links back to (``#cite-5``, ``#cite-2``), from
    the abstract, the body, a table cell or a note, lands on its line in both engines (Typst
    linked only the first citations', which its back-links need)."""
    from tests.support.render import render_markdown
    from tests.writers.test_docx_link_targets import LINKED, ROWS

    pdf = tmp_path / "links.pdf"
    pdf.write_bytes(render_markdown("pdf", LINKED, ROWS, pdf_engine=engine))
    found = internal_links(pdf)
    assert_leads_to(found, "the body's", pdf, "Text ")
    for shown in ("the abstract's", "cell link", "the abstract's too"):
        assert_leads_to(found, shown, pdf, "Sum ")


#: Ids beyond ASCII: a markdown link's destination is percent-encoded (``#%C3%A9t%C3%A9``),
#: the id it names is not.
UNICODE_IDS = ("# A\n\nSee [summer](#été), [hello](#مرحبا-بالعالم) and [box](#boîte).\n\n"
               "## été\n\nWarm [[S:1]].\n\n## مرحبا بالعالم\n\nText.\n\n"
               '<div id="boîte">\n\nBoxed.\n\n</div>\n')


def test_links_to_ids_beyond_ascii_lead_there_in_docx_pptx_and_typst(tmp_path: Path) -> None:
    """DOCX, PPTX and the Typst PDF looked the encoded fragment up as it was written, found
    no such place and showed the link as text; HTML and WeasyPrint's PDF decode it."""
    (docx,) = render(UNICODE_IDS, tmp_path / "docx", sources_pool=POOL, formats="docx")
    with zipfile.ZipFile(docx.path) as package:
        document = package.read("word/document.xml").decode("utf-8")
    anchors = [a.split('"')[0] for a in document.split('w:anchor="')[1:]]
    places = [a for a in anchors if not a.startswith(("src_", "cite_"))]  # the citation's
    assert len(places) == 3 and all(f'w:name="{a}"' in document for a in places)
    (pptx,) = render(UNICODE_IDS, tmp_path / "pptx", sources_pool=POOL, formats="pptx")
    jumps = [run.findtext(qn("a:t")) for slide in Presentation(str(pptx.path)).slides
             for run in slide.element.iter(qn("a:r"))
             if (rpr := run.find(qn("a:rPr"))) is not None
             and rpr.find(qn("a:hlinkClick")) is not None]
    assert {"summer", "hello", "box"} <= set(jumps)
    (pdf,) = render(UNICODE_IDS, tmp_path / "typst", sources_pool=POOL, formats="pdf",
                    pdf_engine="typst")
    # Typst names a heading's destination (a byte string for "été"): the links' text is read
    shown = set()
    document = pdfium.PdfDocument(str(pdf.path))
    try:
        for index, page in enumerate(PdfReader(pdf.path).pages):
            for ref in page.get("/Annots") or []:
                annot = ref.get_object()
                if annot.get("/Subtype") == "/Link" and annot.get("/Dest") is not None:
                    x1, y1, x2, y2 = (float(v) for v in annot["/Rect"])
                    shown.add(document[index].get_textpage().get_text_bounded(
                        min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2)).strip())
    finally:
        document.close()
    assert {"summer", "hello", "box"} <= shown
