"""pandoc-crossref's number-only reference ``[-@fig:a]`` ("2", no "Figure") in every writer,
read back from the file each one made: the number alone, still linked to its figure."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import lxml.html
import pytest
from lxml import etree
from pptx import Presentation

from renderers.document import Link, Paragraph, Text
from renderers.readers.markdown import read_markdown
from tests.helpers import ROOT, internal_links
from tests.support.render import render_markdown

OPTIONS: dict[str, Any] = {"base_dir": ROOT / "samples"}
MARKDOWN = (
    "![First](assets/chart.png){#fig:a}\n\n![Second](assets/chart.png){#fig:b}\n\n"
    "See [-@fig:b] and [-@fig:a; @fig:b].\n"
)
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def test_html_shows_the_number_alone_linked_to_the_figure() -> None:
    root = lxml.html.document_fromstring(render_markdown("html", MARKDOWN, [], **OPTIONS))
    (paragraph,) = [p for p in root.xpath("//p") if p.text_content().startswith("See")]
    assert paragraph.text_content() == "See 2 and 1 and Figure 2."
    assert [(a.get("href"), a.text) for a in paragraph.xpath(".//a")] == [
        ("#fig-2", "2"), ("#fig-1", "1"), ("#fig-2", "Figure 2")]
    assert root.xpath("//figure/@id") == ["fig-1", "fig-2"]


def test_markdown_writes_a_link_showing_the_number_that_reads_back_the_same() -> None:
    text = render_markdown("md", MARKDOWN, [], **OPTIONS).decode()
    assert "See [2](#fig-2) and [1](#fig-1) and [Figure 2](#fig-2)." in text
    again = read_markdown(text)
    (paragraph,) = [b for b in again.blocks if isinstance(b, Paragraph)
                    and isinstance(b.children[0], Text) and b.children[0].text == "See "]
    links = [n for n in paragraph.children if isinstance(n, Link)]
    assert [(link.url, link.children) for link in links] == [
        ("#fig-2", (Text("2"),)), ("#fig-1", (Text("1"),)), ("#fig-2", (Text("Figure 2"),))]
    html = render_markdown("html", text, [], **OPTIONS).decode()
    assert 'See <a href="#fig-2">2</a> and <a href="#fig-1">1</a>' in html


def test_docx_shows_the_number_alone_as_a_link_to_the_figure_bookmark() -> None:
    package = zipfile.ZipFile(io.BytesIO(render_markdown("docx", MARKDOWN, [], **OPTIONS)))
    body = etree.fromstring(package.read("word/document.xml"))
    (paragraph,) = [p for p in body.iter(f"{W}p")
                    if "".join(p.itertext()).startswith("See")]
    assert "".join(paragraph.itertext()) == "See 2 and 1 and Figure 2."
    links = [(h.get(f"{W}anchor"), "".join(h.itertext()))
             for h in paragraph.iter(f"{W}hyperlink")]
    assert links == [("fig_2", "2"), ("fig_1", "1"), ("fig_2", "Figure 2")]


def test_pptx_shows_the_number_alone_jumping_to_the_figure_slide() -> None:
    deck = Presentation(io.BytesIO(render_markdown("pptx", MARKDOWN, [], **OPTIONS)))
    paragraphs = [para for slide in deck.slides for shape in slide.shapes
                  if shape.has_text_frame for para in shape.text_frame.paragraphs]
    (paragraph,) = [p for p in paragraphs if "".join(r.text for r in p.runs).startswith("See")]
    assert "".join(run.text for run in paragraph.runs) == "See 2 and 1 and Figure 2."
    jumps = [run.text for run in paragraph.runs
             if run._r.xpath(".//a:hlinkClick[@action='ppaction://hlinksldjump']")]
    assert jumps == ["2", "1", "Figure 2"]


@pytest.mark.parametrize("engine", [pytest.param("weasyprint", marks=pytest.mark.slow), "typst"])
def test_pdf_shows_the_number_alone_linked_to_the_figure(engine: str) -> None:
    from pypdf import PdfReader

    pdf = render_markdown("pdf", MARKDOWN, [], pdf_engine=engine, **OPTIONS)
    text = "\n".join(page.extract_text() or "" for page in PdfReader(io.BytesIO(pdf)).pages)
    assert "See 2 and 1 and Figure 2." in " ".join(text.split())
    shown = [link[0] for link in internal_links(pdf)]
    assert shown.count("2") == 1 and shown.count("1") == 1 and "Figure 2" in shown
