"""TeX's spaces in the formulas' pictures (PDF, PNG, slides) are as wide as TeX sets them:
ziamath reads an ``em`` on a space as 4/3 of the em its glyphs are drawn in, which the drawing
corrects (``renderers.math.svg.ziamath_lengths``), as it does a table's gaps and a delimiter's
size."""

from __future__ import annotations

import io

import pytest

from renderers.math.svg import DRAW_SIZE, PNG_ZOOM, draw_formula, formula_png
from renderers.math.tex import parse_tex

#: Pixels of the PNG per em of the formula's glyphs.
EM_PX = DRAW_SIZE * PNG_ZOOM

#: TeX's spaces and their widths in em (a math unit is 1/18 em).
SPACES = {
    r"\,": 3 / 18,
    r"\:": 4 / 18,
    r"\;": 5 / 18,
    r"\!": -3 / 18,
    r"\quad": 1.0,
    r"\qquad": 2.0,
    r"\thinspace": 3 / 18,
    r"\mkern9mu": 9 / 18,
    r"\hspace{0.5em}": 0.5,
}


def _ink(tex: str) -> tuple[int, int, int, int]:
    """The box (pixels) of the ink of the formula's PNG picture."""
    from PIL import Image

    data, _, _ = formula_png(parse_tex(tex))
    box = Image.open(io.BytesIO(data)).getchannel("A").point(lambda a: 255 * (a > 128)).getbbox()
    assert box is not None
    return box


def _ink_width(tex: str) -> int:
    left, _, right, _ = _ink(tex)
    return right - left


@pytest.mark.parametrize(("space", "em"), SPACES.items())
def test_a_space_in_the_picture_is_as_wide_as_in_tex(space: str, em: float) -> None:
    drawn = _ink_width(f"a{space} b") - _ink_width("ab")
    # latex2mathml writes widths to 1/1000 em; a pixel is 1/80 em
    assert abs(drawn - em * EM_PX) <= 1.5, (space, drawn / EM_PX, em)


def test_the_drawing_reports_the_width_it_draws() -> None:
    """The size writers lay the picture out by grows by the space's width too."""
    grown = draw_formula(parse_tex(r"a\qquad b")).width - draw_formula(parse_tex("ab")).width
    assert grown == pytest.approx(2.0, abs=0.01)


def test_a_length_in_other_units_is_left_alone() -> None:
    from renderers.math.svg import ziamath_lengths
    from renderers.math.tex import MathNode

    node = MathNode("mpadded", (("width", "+100%"), ("height", "0"), ("depth", "2pt")))
    assert ziamath_lengths(node) is node


def test_the_gap_between_the_columns_of_cases_is_a_quad() -> None:
    gap = (_ink_width(r"\begin{cases} a & b \end{cases}")
           - _ink_width(r"\begin{cases} a b \end{cases}"))
    assert abs(gap - EM_PX) <= 1.5, gap / EM_PX


def test_a_sized_delimiter_is_as_tall_as_its_markup_asks() -> None:
    """latex2mathml sets ``\\Bigl(`` at least 1.623 em tall (TeX's is 1.8 em); ziamath's own em
    made it 2.4 em."""
    _, top, _, bottom = _ink(r"\Bigl(")
    assert 1.5 <= (bottom - top) / EM_PX <= 1.8


#: The spaces ziamath's operator dictionary puts on each side of an operator, at TeX's widths:
#: a relation's thick space (5/18 em), a binary operator's medium space (4/18 em); ``{=}`` (an
#: operator alone in its group, which TeX and ziamath set with no space) is the reference.
OPERATOR_SPACES = {"=": 5 / 18, "+": 4 / 18, "-": 4 / 18}


@pytest.mark.parametrize(("operator", "em"), OPERATOR_SPACES.items())
def test_an_operator_is_spaced_as_in_tex(operator: str, em: float) -> None:
    drawn = _ink_width(f"a{operator}b") - _ink_width(f"a{{{operator}}}b")
    assert abs(drawn - 2 * em * EM_PX) <= 1.5, (operator, drawn / EM_PX / 2, em)


def test_a_sign_before_its_operand_takes_no_space() -> None:
    """TeX sets ``-a``'s minus as an ordinary symbol; ziamath's dictionary gave it 1/18 em."""
    assert abs(_ink_width("-a") - _ink_width("{-}a")) <= 1


def test_a_large_operator_is_followed_by_a_thin_space() -> None:
    drawn = _ink_width(r"\sum x") - _ink_width(r"{\sum} x")
    assert abs(drawn - 3 / 18 * EM_PX) <= 1.5, drawn / EM_PX
