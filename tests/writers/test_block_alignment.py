"""Paragraphs, headings and figures HTML aligns (``align``, ``<center>``, a kept
``text-align``) keep their alignment in every format, read back from the files a user opens.
The PDF engines' positions are compared in test_pdf_parity."""

from __future__ import annotations

import io
import shutil
import zipfile
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from renderers.readers.markdown import read_markdown
from tests.helpers import ROOT, convert_with_libreoffice, pdf_lines
from tests.support.render import render_markdown

POOL: list[dict[str, Any]] = [{"sid": 1, "title": "A source", "url": "https://example.org/a"}]
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"

#: A README's centring: the wrapper division around markdown, HTML paragraphs and headings.
ALIGNED = (
    '<div align="center">\n\n# Centred title\n\nCentred words [[S:1]].\n\n</div>\n\n'
    '<h2 align="right">Right heading</h2>\n\n'
    '<p align="right">Right words.</p>\n\n'
    '<h3 align="right">Right subheading</h3>\n\n'
    "<center>Old centre.</center>\n\n"
    '<p dir="rtl" align="left">\u0646\u0635 \u0639\u0631\u0628\u064a \u0628\u0627\u0644\u064a'
    "\u0633\u0627\u0631.</p>\n\n"
    "Plain words.\n"
)


@pytest.fixture
def logo(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "samples" / "assets" / "chart.png", tmp_path / "logo.png")
    return tmp_path


def test_html_output_names_the_alignment_as_a_class() -> None:
    html = render_markdown("html", ALIGNED, POOL).decode()
    assert '<h1 id="centred-title" class="al-center"' in html
    assert '<p class="al-center" dir="auto">Centred words' in html
    assert '<h2 id="right-heading" class="al-right"' in html
    assert '<p class="al-right" dir="auto">Right words.</p>' in html
    assert '<p dir="auto">Plain words.</p>' in html
    assert "style=" not in html.split("<body", 1)[1].split("img-defs", 1)[0]


def test_a_centred_figure_keeps_the_reports_own_centring_and_a_left_one_moves(
    logo: Path,
) -> None:
    markdown = ('<p align="center"><img src="logo.png" alt="logo"></p>\n\n'
                '<p align="left"><img src="logo.png" alt="left logo"></p>\n')
    html = render_markdown("html", markdown, POOL, base_dir=logo).decode()
    assert html.count("<figure>") == 1 and html.count('<figure class="al-left">') == 1


def _docx_jc(data: bytes) -> dict[str, str]:
    """Each paragraph's text → its ``w:jc`` ("" when it has none)."""
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        body = etree.fromstring(package.read("word/document.xml"))
    found = {}
    for p in body.iter(f"{W}p"):
        text = "".join(t.text or "" for t in p.iter(f"{W}t"))
        jc = p.find(f"{W}pPr/{W}jc")
        found[text] = jc.get(f"{W}val") if jc is not None else ""
    return found


def test_docx_paragraphs_carry_their_alignment() -> None:
    jc = _docx_jc(render_markdown("docx", ALIGNED, POOL))
    assert jc["Centred title"] == "center"
    assert jc["Right heading"] == "right" and jc["Right words."] == "right"
    assert jc["Old centre."] == "center" and jc["Plain words."] == ""
    # Word reads left/right of a right-to-left paragraph as its start/end: physical left is
    # its end.
    arabic = next(text for text in jc if text.startswith("\u0646"))
    assert jc[arabic] == "right"
    assert next(v for k, v in jc.items() if k.startswith("Centred words")) == "center"


def _pptx_algn(data: bytes) -> dict[str, str]:
    """Each slide paragraph's text → its ``algn``."""
    from pptx import Presentation

    found = {}
    for slide in Presentation(io.BytesIO(data)).slides:
        for shape in slide.shapes:
            if shape.has_text_frame:
                for p in shape.text_frame.paragraphs:
                    ppr = p._p.find(f"{A}pPr")
                    found[p.text] = ppr.get("algn", "") if ppr is not None else ""
    return found


def test_pptx_paragraphs_carry_their_alignment() -> None:
    algn = _pptx_algn(render_markdown("pptx", ALIGNED, POOL))
    # A heading that titles a slide stays where the layout puts titles.
    assert algn["Right subheading"] == "r" and algn["Right words."] == "r"
    assert algn["Old centre."] == "ctr" and algn["Plain words."] == "l"
    assert next(v for k, v in algn.items() if k.startswith("Centred words")) == "ctr"
    arabic = next(text for text in algn if text.startswith("\u0646"))
    assert algn[arabic] == "l"  # physical, as HTML's; an unaligned one starts at the right


def test_pptx_places_a_left_or_right_figure_at_that_edge(logo: Path) -> None:
    from pptx import Presentation

    lefts = {}
    for side in ("left", "center", "right"):
        markdown = f'# Slide\n\n<p align="{side}"><img src="logo.png" alt="logo" width="80"></p>\n'
        deck = Presentation(io.BytesIO(render_markdown("pptx", markdown, POOL, base_dir=logo)))
        picture = next(s for slide in deck.slides for s in slide.shapes if s.shape_type == 13)
        lefts[side] = picture.left
    assert lefts["left"] < lefts["center"] < lefts["right"]


def test_markdown_output_keeps_the_wrapper_and_reads_back_aligned() -> None:
    text = render_markdown("md", ALIGNED, POOL).decode()
    assert '<div align="center">\n\n# Centred title\n\n</div>' in text
    assert '<div align="right">\n\nRight words.\n\n</div>' in text
    again = read_markdown(text).blocks
    aligns = [(type(b).__name__, b.align) for b in again[:6]]  # type: ignore[union-attr]
    assert aligns == [("Heading", "center"), ("Paragraph", "center"), ("Heading", "right"),
                      ("Paragraph", "right"), ("Heading", "right"), ("Paragraph", "center")]


def _centres(pdf: Path, words: list[str]) -> dict[str, tuple[float, float]]:
    """Each of ``words`` → the (left, right) of the line LibreOffice drew it on."""
    lines = pdf_lines(pdf.read_bytes())
    return {word: next((left, right) for left, right, text in lines if word in text)
            for word in words}


@pytest.mark.libreoffice
@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["docx", "pptx"])
def test_libreoffice_draws_the_alignment(fmt: str, tmp_path: Path) -> None:
    path = tmp_path / f"aligned.{fmt}"
    path.write_bytes(render_markdown(fmt, ALIGNED, POOL))
    lines = _centres(convert_with_libreoffice(path, tmp_path),
                     ["Right words", "Old centre", "Plain words", "Right subheading"])
    plain_left = lines["Plain words"][0]
    right_edge = lines["Right words"][1]
    assert abs(lines["Right subheading"][1] - right_edge) < 2
    assert lines["Right words"][0] > plain_left + 100
    centre = sum(lines["Old centre"]) / 2
    assert abs(centre - (plain_left + right_edge) / 2) < 2, (lines, centre)


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_html_input_is_aligned_in_the_pdf_of_either_engine(engine: str, tmp_path: Path) -> None:
    """WeasyPrint sets HTML input in its author's own look, where it ignored ``align``."""
    from renderers.api import render

    html = ('<h1 align="center">Centred title</h1><div align="center"><p>Centred in a div</p>'
            '</div><p align="right">Right words</p><center>Old centre</center>'
            '<p align="center" style="text-align: left">Style wins</p><p>Plain words</p>')
    render(html, tmp_path, formats="pdf", sources_pool=POOL, content_format="html",
           pdf_engine=engine)
    pdf = (tmp_path / "report.pdf").read_bytes()
    lines = {text: (left, right) for left, right, text in pdf_lines(pdf)}
    plain_left = lines["Plain words"][0]
    right_edge = lines["Right words"][1]
    assert right_edge > plain_left + 400
    middle = (plain_left + right_edge) / 2
    for centred in ("Centred title", "Centred in a div", "Old centre"):
        assert abs(sum(lines[centred]) / 2 - middle) < 0.5, (centred, lines[centred], middle)
    assert abs(lines["Style wins"][0] - plain_left) < 0.5
