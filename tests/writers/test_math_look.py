"""How formulas look where the drawing library or LibreOffice set them apart from TeX: arrows
stretched over their text in the drawing, upright symbols that LibreOffice keeps upright."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from lxml import etree

from renderers.math.omml import M_NS, omml_math
from renderers.math.svg import formula_png
from renderers.math.tex import parse_tex


def _ink_bands(tex: str) -> list[tuple[int, int]]:
    """The horizontal extent (first and last inked column) of each band of inked rows of the
    formula's picture, top to bottom."""
    from PIL import Image

    data, _, _ = formula_png(parse_tex(tex, display=True))
    ink = Image.open(io.BytesIO(data)).getchannel("A").point(lambda alpha: 255 * (alpha > 128))
    width, height = ink.size
    bands: list[tuple[int, int]] = []
    inked_before = False
    for y in range(height):
        row = ink.crop((0, y, width, y + 1)).getbbox()  # in C: the inked columns of the row
        if row and inked_before:
            left, right = bands[-1]
            bands[-1] = (min(left, row[0]), max(right, row[2]))
        elif row:
            bands.append((row[0], row[2]))
        inked_before = row is not None
    return bands


@pytest.mark.parametrize("label", ["a", "heat", "heat, pressure",
                                   "a very long text set above the arrow"])
@pytest.mark.parametrize("command", [r"\xrightarrow{\text{%s}}", r"\ce{->[{%s}]}",
                                     r"\ce{<=>[{%s}]}"])
def test_an_arrow_reaches_past_both_ends_of_its_text(command: str, label: str) -> None:
    text, *_, arrow = _ink_bands(command % label)
    assert arrow[0] < text[0] and arrow[1] > text[1], (text, arrow)
    assert (arrow[1] - arrow[0]) - (text[1] - text[0]) < 80 + 4 * 20 * 1.6  # not far past


def test_text_under_an_arrow_sits_under_it() -> None:
    over, arrow, under = _ink_bands(r"\xrightarrow[\text{a long text under it}]{\text{x}}")
    assert arrow[0] < under[0] and arrow[1] > under[1]
    assert over[1] - over[0] < under[1] - under[0]


def _runs(tex: str) -> list[tuple[str, bool]]:
    """Each Office Math run's text and whether it is normal text (``m:nor``)."""
    root = omml_math(parse_tex(tex, display=True))
    return [("".join(run.itertext()), run.find(f"{{{M_NS}}}rPr/{{{M_NS}}}nor") is not None)
            for run in root.iter(f"{{{M_NS}}}r")]


def test_upright_symbols_are_normal_text_runs_of_whole_symbols() -> None:
    runs = _runs(r"\ce{NaCl} + \mathrm{d}x + \operatorname{rank} A")
    assert ("NaCl", True) in runs and ("d", True) in runs and ("rank", True) in runs
    assert ("x", False) in runs and ("A", False) in runs


@pytest.mark.libreoffice
@pytest.mark.slow
def test_libreoffice_sets_upright_symbols_upright(tmp_path: Path) -> None:
    from pypdf import PdfReader

    from renderers import render
    from tests.helpers import convert_all_with_libreoffice

    markdown = "$$\\ce{NaCl + H2O}$$\n\n$$\\mathrm{d}x + \\operatorname{rank} A$$\n"
    (result,) = render(markdown, tmp_path, name="upright", formats=("docx",), sources_pool=[])
    body = etree.fromstring(zipfile.ZipFile(result.path).read("word/document.xml"))
    assert body.find(f".//{{{M_NS}}}oMath") is not None
    (pdf,) = convert_all_with_libreoffice([result.path], tmp_path)
    shown: list[tuple[str, str]] = []

    def visit(text: str, _cm: object, _tm: object, font: dict | None, _size: float) -> None:
        if text.strip() and font is not None:
            shown.append((text.strip(), str(font.get("/BaseFont", ""))))

    PdfReader(pdf).pages[0].extract_text(visitor_text=visit)
    italic = {text for text, font in shown if "Italic" in font}
    upright = {text for text, font in shown if "Italic" not in font}
    assert {"x", "A"} <= italic, shown
    for symbol in ("NaCl", "H", "O", "d", "rank"):
        assert symbol in upright and symbol not in italic, (symbol, shown)


def test_nolimits_keeps_the_limits_beside_the_operator_in_office_math() -> None:
    root = omml_math(parse_tex(r"\sum\nolimits_{i=1}^{n} a_i + \lim\nolimits_{x} f",
                               display=True))
    (location,) = root.iter(f"{{{M_NS}}}limLoc")
    assert location.get(f"{{{M_NS}}}val") == "subSup"
    assert root.find(f".//{{{M_NS}}}func") is None  # lim with its limit below
    assert ("lim", True) in _runs(r"\lim\nolimits_{x} f")


def test_an_arrow_with_text_is_the_long_arrow_under_limits_in_office_math() -> None:
    root = omml_math(parse_tex(r"A \xrightarrow[\text{below}]{\text{above}} B", display=True))
    upper = root.find(f"{{{M_NS}}}limUpp")
    assert upper is not None and upper.find(f".//{{{M_NS}}}limLow") is not None
    assert "⟶" in "".join(upper.itertext())
