"""TeX's spaces in the formulas' pictures (PDF, PNG, slides) are as wide as TeX sets them:
ziamath reads an ``em`` on a space as 4/3 of the em its glyphs are drawn in, which the drawing
corrects (``renderers.math.svg.ziamath_lengths``), as it does a table's gaps and a delimiter's
size; operators and relations are spaced by their neighbours' TeX classes
(``renderers.math.atoms``), and a table with no gap of its own takes TeX's, an ``array`` TeX's
space outside it too (``renderers.math.svg.table_gaps``)."""

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


#: Formulas whose binary operators and punctuation TeX spaces by their neighbours, each with
#: its unspaced reference (an operator braced is an ordinary symbol) and TeX's extra width in
#: em: a sign with no left operand (first, or after a relation, opening bracket, binary
#: operator, large operator or punctuation) or no right one takes no space (TeXbook, Appendix
#: G, rules 5 and 6); punctuation 3/18 em after it; a binary operator 4/18 em a side; a
#: relation 5/18 em beside an operand and none beside another relation (``:=``), arrows
#: ziamath does not know and those with text over them too; a function name 3/18 em after its
#: scripts; a change of style is no atom (``a\displaystyle -b`` keeps a binary minus).
ATOM_SPACES = {
    "-a": ("{-}a", 0),
    "x=-a": ("x{=}{-}a", 10 / 18),
    "(-a)": ("({-}a)", 0),
    "|-a|": ("|{-}a|", 0),
    r"a\cdot -b": (r"a{\cdot}{-}b", 8 / 18),
    "a+-b": ("a{+}{-}b", 8 / 18),
    r"\sum -x": (r"{\sum}{-}x", 3 / 18),
    r"\sin -x": (r"{\sin}{-}x", 3 / 18),
    "a,-b": ("a{,}{-}b", 3 / 18),
    "(a-)": ("(a{-})", 0),
    "a-b": ("a{-}b", 8 / 18),
    r"a\times b": (r"a{\times}b", 8 / 18),
    r"a\cup b": (r"a{\cup}b", 8 / 18),
    r"a\setminus b": (r"a{\setminus}b", 8 / 18),
    r"A\subset B": (r"A{\subset}B", 10 / 18),
    r"a\perp b": (r"a{\perp}b", 10 / 18),
    "a,b": ("a{,}b", 3 / 18),
    "f(x,y)": ("f(x{,}y)", 3 / 18),
    "a;b": ("a{;}b", 3 / 18),
    "x_{i,j}": ("x_{i{,}j}", 0),
    r"\sin x": (r"{\sin}x", 3 / 18),
    r"n\log n": (r"n{\log}n", 6 / 18),
    r"x=\sin y": (r"x{=}{\sin}y", 13 / 18),
    r"\max(a)": (r"{\max}(a)", 0),
    r"\sin^2 x": (r"{\sin^2}{x}", 3 / 18),
    r"\lim_{n} a": (r"{\lim_{n}}{a}", 3 / 18),
    r"\limsup_{n} a": (r"{\limsup_{n}}{a}", 3 / 18),
    r"\arg\max x": (r"{\arg}{\max}x", 6 / 18),
    r"\sum\sin x": (r"{\sum}{\sin}x", 6 / 18),
    "a:=b": ("a{:}{=}b", 10 / 18),
    # a colon is a relation; amsmath's \colon is 2 mu before and 6 mu after
    "a:b": ("a{:}b", 10 / 18),
    r"f\colon A\to B": (r"f{:}A\to B", 8 / 18),
    r"a\le\ge b": (r"a{\le}{\ge}b", 10 / 18),
    r"a=\!=b": (r"a{=}\!{=}b", 10 / 18),
    r"a\hookrightarrow b": (r"a{\hookrightarrow}b", 10 / 18),
    r"a\longmapsto b": (r"a{\longmapsto}b", 10 / 18),
    r"a\leadsto b": (r"a{\leadsto}b", 10 / 18),
    r"a\longrightarrow b": (r"a{\longrightarrow}b", 10 / 18),
    r"a\twoheadrightarrow b": (r"a{\twoheadrightarrow}b", 10 / 18),
    r"\xrightarrow{f} b": (r"{\xrightarrow{f}} b", 5 / 18),
    r"a\xrightarrow{f}\xrightarrow{g}b": (r"a{\xrightarrow{f}}{\xrightarrow{g}}b", 10 / 18),
    # mhchem writes its arrow between \; spaces of its own, and marks one with text unspaced
    r"\ce{A ->[x] B}": (r"\mathrm{A}{\overset{\mathrm{x}}{\longrightarrow}}\mathrm{B}", 10 / 18),
    r"a\displaystyle -b": ("a{-}b", 8 / 18),
    r"a\color{red}-b": ("a{-}b", 8 / 18),
    r"a{\displaystyle -b}": ("a{-}b", 0),
}


@pytest.mark.parametrize(("tex", "reference", "em"),
                         [(tex, *spaced) for tex, spaced in ATOM_SPACES.items()], ids=ATOM_SPACES)
def test_operators_are_spaced_by_their_neighbours_as_in_tex(
        tex: str, reference: str, em: float) -> None:
    drawn = _ink_width(tex) - _ink_width(reference)
    assert abs(drawn - em * EM_PX) <= 1.5, (tex, drawn / EM_PX, em)


#: Tables with their columns apart and together, and TeX's gap between them in em: the
#: ``2\arraycolsep`` (10 pt at 10 pt) of ``array``, amsmath's matrices and ``eqnarray`` (each
#: side of its middle column), ``aligned``'s 2 em between its pairs of columns.
TABLE_GAPS = {
    "matrix": (r"\begin{matrix}a&b\end{matrix}", r"\begin{matrix}ab\end{matrix}", 1.0),
    "pmatrix": (r"\begin{pmatrix}a&b\end{pmatrix}", r"\begin{pmatrix}ab\end{pmatrix}", 1.0),
    "array": (r"\begin{array}{cc}a&b\end{array}", r"\begin{array}{c}ab\end{array}", 1.0),
    "eqnarray": (r"\begin{eqnarray}a&=&b\end{eqnarray}",
                 r"\begin{eqnarray}a{=}b\end{eqnarray}", 2.0),
    "aligned": (r"\begin{aligned}a&b&c\end{aligned}", r"\begin{aligned}a&bc\end{aligned}",
                2.0),
}


@pytest.mark.parametrize(("apart", "together", "em"), TABLE_GAPS.values(), ids=TABLE_GAPS)
def test_a_tables_columns_are_as_far_apart_as_in_tex(apart: str, together: str,
                                                     em: float) -> None:
    drawn = _ink_width(apart) - _ink_width(together)
    # ziamath sizes a column by its ink, so the letters' side bearings count differently
    # apart and together: 1/20 em (4 px); ziamath's own gaps were 0.4 em and 0.75 em short
    assert abs(drawn - em * EM_PX) <= 0.05 * EM_PX, (apart, drawn / EM_PX, em)


#: Tables beside something else and the same table as a matrix, with the space TeX adds
#: outside them in em: ``array``'s ``\arraycolsep`` on each side (brackets or not), none for
#: amsmath's matrices and ``cases`` (ziamath set 0.3 of its em inside a bracket before a table
#: whose cells are aligned, as ``array``'s and ``cases``' are).
TABLE_MARGINS = {
    "array": (r"x\begin{array}{cc}a&b\end{array}y", r"x\begin{matrix}a&b\end{matrix}y", 1.0),
    "array in brackets": (r"\left(\begin{array}{cc}a&b\end{array}\right)",
                          r"\left(\begin{matrix}a&b\end{matrix}\right)", 1.0),
    "pmatrix": (r"\begin{pmatrix}a&b\end{pmatrix}",
                r"\left(\begin{matrix}a&b\end{matrix}\right)", 0.0),
    "cases": (r"\begin{cases}a\end{cases}", r"\left\{\begin{matrix}a\end{matrix}\right.", 0.0),
    "cases of two columns": (r"\begin{cases}a&b\end{cases}x",
                             r"\left\{\begin{matrix}a&b\end{matrix}\right.x", 0.0),
    "rcases": (r"x\begin{rcases}a&b\end{rcases}",
               r"x\left.\begin{matrix}a&b\end{matrix}\right\}", 0.0),
    # an array after a brace is no cases: its \arraycolsep each side, 2\arraycolsep between
    "array after a brace": (r"\left\{\begin{array}{ll}a&b\end{array}\right.x",
                            r"\left\{\begin{matrix}a&b\end{matrix}\right.x", 1.0),
    "array between braces": (r"\left\{\begin{array}{ll}a&b\end{array}\right\}",
                             r"\left\{\begin{matrix}a&b\end{matrix}\right\}", 1.0),
    "gathered in brackets": (r"\left(\begin{gathered}a\end{gathered}\right)",
                             r"\left(\begin{matrix}a\end{matrix}\right)", 0.0),
}


@pytest.mark.parametrize(("table", "matrix", "em"), TABLE_MARGINS.values(), ids=TABLE_MARGINS)
def test_an_array_has_tex_s_space_outside_its_columns(table: str, matrix: str,
                                                      em: float) -> None:
    drawn = _ink_width(table) - _ink_width(matrix)
    assert abs(drawn - em * EM_PX) <= 1.5, (table, drawn / EM_PX, em)


def test_a_large_operator_is_followed_by_a_thin_space() -> None:
    drawn = _ink_width(r"\sum x") - _ink_width(r"{\sum} x")
    assert abs(drawn - 3 / 18 * EM_PX) <= 1.5, drawn / EM_PX


@pytest.mark.parametrize("tex", [r"\begin{aligned}x&=a-b\\&-c\end{aligned}", r"a{}-b", r"\sqrt{}",
                                 r"\begin{aligned}a\end{aligned}"])
def test_a_formula_with_empty_lists_is_drawn(tex: str) -> None:
    """An empty cell or group is a list with no atoms to space; a one-column ``aligned`` has
    an empty ``columnspacing``, which the table's gap replaces."""
    assert draw_formula(parse_tex(tex)).fallback == ""
