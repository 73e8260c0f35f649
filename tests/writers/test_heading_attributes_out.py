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

import pytest
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
