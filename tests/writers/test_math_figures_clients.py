"""Math and numbered figures as real clients show them: LibreOffice opens the DOCX (Office
Math becomes its equations) and the PPTX (equation pictures), Chromium lays out the MathML."""

from __future__ import annotations

import json
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as raw
import pytest

from renderers.options import RenderOptions
from renderers.resolve import ResolvedDocument
from tests.helpers import ROOT, chromium_browser, convert_all_with_libreoffice
from tests.support.ir import load_ir
from tests.support.render import resolve_rows, write_resolved

SAMPLES = ROOT / "samples"
OPTIONS = RenderOptions(base_dir=SAMPLES)


@pytest.fixture(scope="module")
def rdoc() -> ResolvedDocument:
    pool = json.loads((SAMPLES / "math-figures.pool.json").read_text(encoding="utf-8"))
    return resolve_rows(load_ir("math_figures"), pool)


def squeezed(pdf: Path) -> str:
    document = pdfium.PdfDocument(pdf)
    text = "".join(page.get_textpage().get_text_range() for page in document)
    return "".join(text.split())


def images_per_page(pdf: Path) -> list[int]:
    document = pdfium.PdfDocument(pdf)
    return [sum(1 for obj in page.get_objects() if obj.type == raw.FPDF_PAGEOBJ_IMAGE)
            for page in document]


@pytest.mark.libreoffice
@pytest.mark.slow
def test_libreoffice_shows_the_equations_and_numbered_captions(
    rdoc: ResolvedDocument, tmp_path: Path
) -> None:
    docx = tmp_path / "math.docx"
    pptx = tmp_path / "slides.pptx"
    docx.write_bytes(write_resolved("docx", rdoc, OPTIONS))
    pptx.write_bytes(write_resolved("pptx", rdoc, OPTIONS))
    docx_pdf, pptx_pdf = convert_all_with_libreoffice([docx, pptx], tmp_path)

    text = squeezed(docx_pdf)
    assert "E=A·r·H·PR" in text  # an inline formula, imported as a LibreOffice equation
    assert "≈539" in text and "LCOE" in text and "Δt" in text
    assert "¿" not in text  # LibreOffice marks formulas it cannot parse with ¿
    assert "Figure1:Globalrenewable" in text and "Table2:Annualyield" in text

    slides = squeezed(pptx_pdf)
    assert "E=A·r·H·PR" in slides and "Figure1:Globalrenewable" in slides
    # the two displayed formulas are pictures on the slide of the yield model
    assert max(images_per_page(pptx_pdf)) >= 2


@pytest.mark.browser
def test_chromium_lays_out_the_mathml_and_hides_the_print_drawing(
    rdoc: ResolvedDocument, tmp_path: Path
) -> None:
    page_file = tmp_path / "report.html"
    page_file.write_bytes(write_resolved("html", rdoc, OPTIONS))
    with chromium_browser() as browser:
        page = browser.new_page()
        page.goto(page_file.as_uri())
        shown = page.evaluate(
            """() => [...document.querySelectorAll('span.math')].map(span => {
                const math = span.querySelector('math').getBoundingClientRect();
                const img = span.querySelector('img.math-svg');
                return [math.width, math.height, getComputedStyle(img).display];
            })"""
        )
        fraction = page.evaluate(
            "() => document.querySelector('mfrac').getBoundingClientRect().height"
        )
        line = page.evaluate("() => document.querySelector('mi').getBoundingClientRect().height")
    assert len(shown) == 12
    assert all(width > 0 and height > 0 and display == "none" for width, height, display in shown)
    assert fraction > 1.5 * line  # a real fraction: numerator over denominator
