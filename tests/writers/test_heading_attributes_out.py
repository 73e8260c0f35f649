"""A markdown heading's attribute block in every output (``## Results {#results}``,
``{.unlisted}``): the link ``[see](#results)`` lands on the heading (HTML id, DOCX bookmark,
PPTX slide jump, both PDF engines' destinations, pandoc's reading of the Markdown written
and written again), and an unlisted heading stays out of every contents list and PDF
outline, with its sub-headings (pandoc's section), while links still reach it."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path
from typing import Any

import docx
import pytest
from docx.oxml.ns import qn
from pptx import Presentation
from pypdf import PdfReader

from renderers.api import render
from renderers.readers.markdown import read_markdown
from tests.helpers import convert_with_libreoffice, internal_links, outline_titles
from tests.support.render import render_markdown
from tests.writers.test_markdown_writer import _pandoc_ids_land

POOL = [{"sid": 1, "title": "Alpha report", "url": "https://example.com/a"}]
FILLER = "\n\n".join(["A filler sentence that takes room on the page. " * 10] * 12)
SOURCE = f"""# Annual report

Read [the results](#results) first, or [the aside](#aside).

## Introduction

Text [[S:1]].

{FILLER}

## Aside {{#aside .unlisted}}

An aside.

### Aside detail

Under the aside, out with it.

## Results and costs {{#results}}

The results.
"""


def test_html_has_the_ids_and_lists_only_the_listed_headings() -> None:
    page = render_markdown("html", SOURCE, POOL, toc=True).decode("utf-8")
    assert re.search(r'<h2 id="results"[^>]*>Results and costs</h2>', page)
    assert re.search(r'<h2 id="aside" class="unlisted"[^>]*>Aside</h2>', page)
    ids = re.findall(r'\bid="([^"]*)"', page)
    assert len(ids) == len(set(ids))
    assert {"results", "aside"} <= set(ids)
    assert '<a href="#results">the results</a>' in page
    nav = re.search(r'<nav id="contents".*?</nav>', page, re.S)
    assert nav is not None
    assert re.findall(r'href="#([^"]+)"', nav.group()) == ["introduction", "results", "sources"]
    assert "{#" not in page


def test_docx_bookmarks_the_heading_and_its_toc_leaves_the_unlisted_one_out() -> None:
    xml = zipfile.ZipFile(io.BytesIO(render_markdown("docx", SOURCE, POOL, toc=True))).read(
        "word/document.xml").decode("utf-8")
    for ident, text in (("results", "Results and costs"), ("aside", "Aside")):
        (marked,) = [p for p in re.findall(r"<w:p[ >].*?</w:p>", xml, re.S)
                     if f'w:name="{ident}"' in p]  # the heading's paragraph holds its bookmark
        assert "".join(re.findall(r"<w:t[^>]*>([^<]*)</w:t>", marked)) == text
        # body text's outline level: out of the navigation pane and the outline
        assert ('<w:outlineLvl w:val="9"/>' in marked) is (ident == "aside")
    toc = re.search(r"<w:sdt>.*?</w:sdt>", xml, re.S)
    assert toc is not None
    assert re.findall(r'w:anchor="([^"]+)"', toc.group()) == ["introduction", "results",
                                                              "sources"]
    body = xml[:toc.start()] + xml[toc.end():]
    assert re.findall(r'w:anchor="(results|aside)"', body)[:2] == ["results", "aside"]
    assert "{#" not in xml


def test_pptx_jumps_to_the_headings_slide_and_the_agenda_leaves_the_unlisted_one_out() -> None:
    deck = Presentation(io.BytesIO(render_markdown("pptx", SOURCE, POOL, toc=True)))
    slides = list(deck.slides)
    agenda = slides[1]
    body = next(s for s in agenda.shapes if s.has_text_frame and s != agenda.shapes.title)
    assert [p.text for p in body.text_frame.paragraphs] == [
        "Introduction", "Results and costs", "Sources"]
    lead = next(s for s in slides if "Read the results" in _slide_text(s))
    jumps = [rel.target_part for rel in lead.part.rels.values()
             if rel.reltype.endswith("/slide")]
    titles = [next(s for s in slides if s.part is part).shapes.title.text for part in jumps]
    assert titles == ["Results and costs", "Aside"]


@pytest.mark.libreoffice
def test_libreoffice_leaves_the_unlisted_heading_out_of_the_docx_pdf_outline(
    tmp_path: Path
) -> None:
    (tmp_path / "report.docx").write_bytes(render_markdown("docx", SOURCE, POOL, toc=True))
    pdf = convert_with_libreoffice(tmp_path / "report.docx", tmp_path)
    assert outline_titles(PdfReader(pdf)) == ["Introduction", "Results and costs", "Sources"]


def _slide_text(slide: object) -> str:
    return " ".join(shape.text_frame.text for shape in slide.shapes  # type: ignore[attr-defined]
                    if shape.has_text_frame)


@pytest.mark.parametrize("engine", ["typst", "weasyprint"])
def test_pdf_links_land_on_the_heading_and_the_outline_leaves_the_unlisted_one_out(
    tmp_path: Path, engine: str
) -> None:
    (result,) = render(SOURCE, tmp_path, sources_pool=POOL, formats="pdf", pdf_engine=engine,
                       toc=True)
    assert not result.warnings
    reader = PdfReader(result.path)
    pages = [page.extract_text() for page in reader.pages]
    results_page = next(i for i, text in enumerate(pages) if "The results." in text)
    aside_page = next(i for i, text in enumerate(pages) if "An aside." in text)
    assert results_page > 0  # after the filler: a link that leads nowhere would not get there
    landed = {shown: page for shown, page, _ in internal_links(result.path)}
    assert landed["the results"] == results_page
    assert landed["the aside"] == aside_page
    assert outline_titles(reader) == ["Annual report", "Introduction", "Results and costs",
                                      "Sources"]
    assert {"results", "aside"} <= set(reader.named_destinations)
    contents = pages[0][pages[0].index("Contents"):]
    assert "Results and costs" in contents and "Aside" not in contents
    assert "{#" not in "".join(pages)


def test_markdown_keeps_the_ids_for_pandoc_written_and_written_again(tmp_path: Path) -> None:
    """md → md → pandoc: the link leads to the heading in pandoc's ``markdown`` and ``gfm``,
    in the Markdown written and in that Markdown read back and written again."""
    source = ("# Report\n\nSee [the results](#results), [costs](#cost-table), "
              "[plain](#plain), [結果へ](#結果) and [café](#café).\n\n"
              "## Results {#results}\n\nText.\n\n"
              "## Costs 2024 {#cost-table .unnumbered}\n\nMore.\n\n## Plain {#plain}\n\n"
              "## 結果 {#結果}\n\n## Café {#café}\n")
    (first,) = render(source, tmp_path / "one", sources_pool=[], formats="md")
    written = first.path.read_text("utf-8")
    (second,) = render(written, tmp_path / "two", sources_pool=[], formats="md")
    rewritten = second.path.read_text("utf-8")
    assert rewritten == written
    for markdown in (written, rewritten):
        assert "{#" not in markdown
        assert not [n for n in read_markdown(markdown).notes if "leads nowhere" in n.message]
        for ids, links in _pandoc_ids_land(markdown).values():
            assert {"results", "cost-table", "plain", "結果", "café"} <= set(links) <= set(ids)


def test_the_html_page_read_back_keeps_the_unlisted_heading_unlisted() -> None:
    """citerender's own page is a faithful input: its ``class="unlisted"`` heading is read
    back unlisted, with its id."""
    from renderers.document import Heading
    from renderers.readers.html import read_html

    page = render_markdown("html", SOURCE, POOL, toc=True).decode("utf-8")
    headings = [b for b in read_html(page).blocks if isinstance(b, Heading)]
    assert [(h.id, h.listed) for h in headings] == [
        ("annual-report", True), ("introduction", True), ("aside", False),
        ("aside-detail", False), ("results", True)]


# ------------------------------------------------- a kept-out section, where the title is known

#: An unlisted first h1 whose section (its sub-headings) stays out of every contents and PDF
#: outline when it does not show the title: ``--title`` names other text, or a later h1 shows
#: it. Each case: the source, the title option, the headings the contents list and the PDF
#: outline's titles (the heading or the added title that shows the title included).
KEPT_OUT_SECTIONS = {
    "another title": (
        "# Top {.unlisted}\n\nIntro.\n\n## In top\n\nText.\n\n### Deeper in top\n\nText.\n\n"
        "# Last\n\nText.\n\n## Under last\n\nText.\n",
        "Other text", ["Last", "Under last"], ["Other text", "Last", "Under last"]),
    "a later h1 shows it": (
        "# Intro {.unlisted}\n\nIntro.\n\n## Sub\n\nText.\n\n# Report\n\nText.\n\n"
        "## Body\n\nText.\n",
        "Report", ["Body"], ["Report", "Body"]),
}
SECTION_CASES = pytest.mark.parametrize("case", list(KEPT_OUT_SECTIONS))
HEADING_NAMES = ("Top", "In top", "Deeper in top", "Last", "Under last", "Intro", "Sub",
                 "Report", "Body")


@SECTION_CASES
def test_html_contents_leave_out_the_sub_headings_of_an_unlisted_h1(case: str) -> None:
    source, title, listed, _ = KEPT_OUT_SECTIONS[case]
    page = render_markdown("html", source, POOL, toc=True, title=title).decode("utf-8")
    nav = re.search(r'<nav id="contents".*?</nav>', page, re.S)
    assert nav is not None
    assert re.findall(r'<a href="#[^"]+">([^<]*)</a>', nav.group()) == listed
    # the class that takes them out of WeasyPrint's outline too
    kept_out = re.findall(r'<h\d id="[^"]*" class="unlisted"[^>]*>([^<]*)</h\d>', page)
    assert kept_out == (["Top", "In top", "Deeper in top"] if case == "another title"
                        else ["Intro", "Sub"])


@SECTION_CASES
@pytest.mark.parametrize("engine", ["typst", "weasyprint"])
def test_pdf_outline_and_contents_leave_out_the_sub_headings_of_an_unlisted_h1(
    tmp_path: Path, engine: str, case: str
) -> None:
    source, title, listed, outline = KEPT_OUT_SECTIONS[case]
    (result,) = render(source, tmp_path, sources_pool=POOL, formats="pdf", pdf_engine=engine,
                       toc=True, title=title)
    reader = PdfReader(result.path)
    assert outline_titles(reader) == outline
    # the contents entries: the links to the headings (WeasyPrint's run on to the leader)
    entries = [re.sub(r"[.\s\d]+$", "", shown) for shown, _, _ in internal_links(result.path)]
    assert [entry for entry in entries if entry in HEADING_NAMES] == listed


def _docx_outline(data: bytes) -> list[str]:
    """The headings of a DOCX in Word's outline (navigation pane, PDF bookmarks): those whose
    outline level, the paragraph's own or else its style's, is not 9 (body text)."""
    document = docx.Document(io.BytesIO(data))
    shown: list[str] = []
    for paragraph in document.paragraphs:
        level = _outline_level(paragraph._p.pPr)
        style = paragraph.style
        while level is None and style is not None:
            level = _outline_level(style.element.pPr)
            style = style.base_style
        if level is not None and level < 9:
            shown.append(paragraph.text)
    return shown


def _outline_level(properties: Any) -> int | None:
    """The outline level a ``w:pPr`` sets, or None."""
    found = None if properties is None else properties.find(qn("w:outlineLvl"))
    return None if found is None else int(found.get(qn("w:val")))


@SECTION_CASES
def test_docx_outline_levels_and_toc_leave_out_the_sub_headings_of_an_unlisted_h1(
    case: str
) -> None:
    source, title, listed, _ = KEPT_OUT_SECTIONS[case]
    data = render_markdown("docx", source, POOL, toc=True, title=title)
    assert [text for text in _docx_outline(data) if text != title] == listed
    xml = zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml").decode("utf-8")
    toc = re.search(r"<w:sdt>.*?</w:sdt>", xml, re.S)
    assert toc is not None
    assert [name for name in HEADING_NAMES if f">{name}<" in toc.group()] == listed


@SECTION_CASES
def test_pptx_agenda_leaves_out_the_sub_headings_of_an_unlisted_h1(case: str) -> None:
    source, title, listed, _ = KEPT_OUT_SECTIONS[case]
    deck = Presentation(io.BytesIO(render_markdown("pptx", source, POOL, toc=True, title=title,
                                                   slide_level=3)))
    agenda = next(s for s in deck.slides if s.shapes.title and s.shapes.title.text == "Contents")
    body = next(s for s in agenda.shapes if s.has_text_frame and s != agenda.shapes.title)
    assert [p.text for p in body.text_frame.paragraphs] == listed


AUTHORS_HTML = (
    '<html><body><h1 class="unlisted">Top</h1><p>Intro.</p><h2>In top</h2><p>Text.</p>'
    '<h1>Last</h1><p>Text.</p><h2 class="unlisted">Aside</h2><p>Text.</p>'
    '<h3>Detail</h3><p>Text.</p><blockquote><h3>Quoted</h3></blockquote>'
    '<h2>Under last</h2><p>Text.</p></body></html>'
)


@pytest.mark.parametrize(("title", "outline"), [
    ("", ["In top", "Last", "Quoted", "Under last"]),  # the unlisted h1 shows the title
    ("Other text", ["Other text", "Last", "Quoted", "Under last"]),
])
def test_html_inputs_own_look_keeps_an_unlisted_section_out_of_the_pdf(
    tmp_path: Path, title: str, outline: list[str]
) -> None:
    """HTML input's PDF in its author's look: ``class="unlisted"`` keeps its section out of
    the contents and the outline as the other writers do (a quoted heading starts no section
    and is in none); the heading that shows the title keeps out only itself."""
    (result,) = render(AUTHORS_HTML, tmp_path, sources_pool=POOL, formats="pdf", toc=True,
                       title=title, content_format="html")
    assert outline_titles(PdfReader(result.path)) == outline
    entries = [re.sub(r"[.\s\d]+$", "", shown) for shown, _, _ in internal_links(result.path)]
    assert [entry for entry in entries if entry] == [t for t in outline if t != "Other text"]


@pytest.mark.parametrize("attributes", ["{#aside .unlisted}", "{.unlisted}"])
def test_the_markdown_written_keeps_the_heading_unlisted(tmp_path: Path, attributes: str) -> None:
    """``.unlisted`` was lost in the Markdown written (``## Aside``), which then read back
    listed. The heading is now written as HTML with the class (gfm shows ``{.unlisted}`` as
    text), which reads back as the same outline and is written again the same."""
    from renderers.document import Heading

    source = SOURCE.replace("{#aside .unlisted}", attributes).replace(" [[S:1]]", "")
    (first,) = render(source, tmp_path / "one", sources_pool=[], formats="md")
    written = first.path.read_text("utf-8")
    assert '<h2 id="aside" class="unlisted">' in written and "{." not in written

    def outline(markdown: str) -> list[tuple[str, bool, int]]:
        return [(b.id, b.listed, b.level) for b in read_markdown(markdown).blocks
                if isinstance(b, Heading)]

    assert outline(written) == outline(source)
    (second,) = render(written, tmp_path / "two", sources_pool=[], formats="md")
    assert second.path.read_text("utf-8") == written
