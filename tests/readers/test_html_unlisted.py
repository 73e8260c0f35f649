"""An author's ``<h2 class="unlisted">`` in HTML input (pandoc's ``.unlisted``, which pandoc's
HTML reader honours too): the heading and its section stay out of the contents and the
outlines, as ``## Aside {.unlisted}`` in markdown does. The sanitizer used to drop the class on
the default path, so the HTML reader never saw it; it keeps that one class on a heading and no
other class anywhere."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest
from pypdf import PdfReader

from renderers.api import render
from renderers.document import Heading
from renderers.readers.html import read_html
from tests.helpers import outline_titles

POOL = [{"sid": 1, "title": "Alpha report", "url": "https://example.com/a"}]
PAGE = """<!doctype html><html><head><title>Annual report</title></head><body>
<h1>Annual report</h1>
<p>Read <a href="#aside">the aside</a>.</p>
<h2>Introduction</h2><p>Text [[S:1]].</p>
<h2 id="aside" class="unlisted">Aside</h2><p>An aside.</p>
<h3>Aside detail</h3><p>Under the aside, out with it.</p>
<h2 class="x unlisted">Second aside</h2><p>Another aside.</p>
<h2 class="evil">Results and costs</h2><p>The results.</p>
</body></html>"""
LISTED = ["Introduction", "Results and costs", "Sources"]


def test_the_reader_reads_each_headings_own_unlisted_class() -> None:
    """Only the author's own attribute: the writers keep the section out, knowing the title."""
    headings = [b for b in read_html(PAGE).blocks if isinstance(b, Heading)]
    assert [(h.id, h.listed) for h in headings] == [
        ("annual-report", True), ("introduction", True), ("aside", False),
        ("aside-detail", True), ("second-aside", False), ("results-and-costs", True)]


def test_the_html_and_docx_contents_leave_the_unlisted_section_out(
    tmp_path: Path,
) -> None:
    results = render(PAGE, tmp_path, sources_pool=POOL, content_format="html",
                     formats=["html", "docx"], toc=True)
    assert [r.warnings for r in results] == [[], []]
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    nav = re.search(r'<nav id="contents".*?</nav>', page, re.S)
    assert nav is not None
    assert re.findall(r'href="#([^"]+)"', nav.group()) == [
        "introduction", "results-and-costs", "sources"]
    assert '<a href="#aside">the aside</a>' in page  # still reached by its link
    assert "evil" not in page and 'class="x' not in page  # no other class came through

    xml = zipfile.ZipFile(tmp_path / "report.docx").read("word/document.xml").decode("utf-8")
    toc = re.search(r"<w:sdt>.*?</w:sdt>", xml, re.S)
    assert toc is not None
    assert "".join(re.findall(r"<w:t[^>]*>([^<]*)</w:t>", toc.group())).count("aside") == 0
    paragraphs = re.findall(r"<w:p[ >].*?</w:p>", xml[toc.end():], re.S)
    for text in ("Aside", "Aside detail", "Second aside", "Results and costs"):
        (heading,) = [p for p in paragraphs
                      if "".join(re.findall(r"<w:t[^>]*>([^<]*)</w:t>", p)) == text]
        # body text's outline level: out of the navigation pane and Word's own contents
        assert ('<w:outlineLvl w:val="9"/>' in heading) is (text != "Results and costs"), text



@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_both_pdf_engines_leave_the_unlisted_section_out(tmp_path: Path, engine: str) -> None:
    """WeasyPrint lays the page out in its author's own look (the section rule applied to the
    author's markup), Typst from the document model: the same contents and outline."""
    (pdf,) = render(PAGE, tmp_path, sources_pool=POOL, content_format="html",
                    formats="pdf", pdf_engine=engine, toc=True)
    assert not pdf.warnings
    reader = PdfReader(pdf.path)
    assert outline_titles(reader) == ["Annual report", *LISTED]
    entries = [line.split(" ..")[0] for line in reader.pages[0].extract_text().splitlines()
               if "...." in line]  # the contents' lines, each with its dot leader
    assert entries == LISTED
