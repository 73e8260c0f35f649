"""The drawings' row layout (:mod:`renderers.math.row_layout`): linear in a formula's nesting
and length, and the same picture as ziamath's own layout.

No test asserts a time (:func:`tests.helpers.at_sizes`); the fast sizes took seconds before.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from markdown_it.utils import read_fixture_file

from renderers.math import MathError, parse_tex, svg
from renderers.math.mathml import mathml_markup
from renderers.math.row_layout import linear_rows
from tests.helpers import at_sizes

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "math"
#: Rows inside rows with stretchy operators, accents and tables: where a row laid out inside
#: the first pass could differ if a stretchy operator's size reached a height.
NESTED = [
    r"\left( \widehat{\left( x \right)} \right)",
    r"\left(\overbrace{\left[\frac{a}{b}\right]}^{n}\right)",
    r"\sqrt{\left(\frac{a}{b}\right)^2 + {\left[x\right]}}",
    r"\begin{pmatrix} \left( a \right) & {\left[ b \right]} \\ c & d \end{pmatrix}",
    r"\underbrace{\left(a+b\right) + {\left(c\right)}}_{\text{x}}",
    r"\complexqty{1+2i}{\ohm}",
]
#: Deeper ones, for the slow comparison (ziamath's own layout takes a second or so each).
DEEPER = [
    r"\left\{ {{\left( \sum_{i} \frac{x_i}{y_i} \right)}} \middle| z \right\}",
    "{{{" + r"\left(\frac{a}{b}\right)" + "}}}",
    r"\left(" * 4 + r"\widetilde{x}" + r"\right)" * 4,
]


@pytest.fixture
def ziamath_rows() -> Iterator[None]:
    """ziamath's own row layout while the test runs, the linear one after."""
    from ziamath.nodes.mrow import Mrow

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Mrow, "_setup_single_line", linear_rows())
        patch.setattr(svg, "linear_rows", lambda: None)
        yield


def _drawings(texs: list[str]) -> list[tuple[str, float, float, float] | None]:
    drawn: list[tuple[str, float, float, float] | None] = []
    for tex in texs:
        for display in (False, True):
            try:
                formula = parse_tex(tex, display)
            except MathError:
                drawn.append(None)
                continue
            picture = svg._draw(mathml_markup(svg._drawn_tree(formula), annotate=False))
            drawn.append((picture.svg, picture.width, picture.height, picture.depth))
    return drawn


def _compare(texs: list[str], original: pytest.FixtureRequest) -> None:
    svg.draw_formula(parse_tex("x"))  # ziamath imported and its rows replaced, as in a render
    ours = _drawings(texs)
    original.getfixturevalue("ziamath_rows")
    assert _drawings(texs) == ours


def test_nested_rows_draw_as_ziamath_draws_them(request: pytest.FixtureRequest) -> None:
    _compare(NESTED, request)


@pytest.mark.slow
def test_the_math_corpora_draw_as_ziamath_draws_them(request: pytest.FixtureRequest) -> None:
    # 440 drawings: 20 s with ziamath's layout, 3 s with the linear one.
    texs = [
        tex.strip()
        for name in ("agent_tex.txt", "chem_tex.txt", "units_tex.txt")
        for _line, _title, tex, _expected in read_fixture_file(FIXTURES / name)
    ]
    _compare(texs + DEEPER, request)


@at_sizes(12, 23)
def test_groups_nested_deep_draw_at_once(size: int) -> None:
    # Each nested row was laid out twice per level: 12 groups took 9.5 s, 23 (below the
    # 24 that parse_tex refuses) would have taken hours.
    drawn = svg.draw_formula(parse_tex("{" * size + "a+b" + "}" * size + "+c"))
    assert not drawn.fallback and 1 < drawn.width < 10


@at_sizes(600, 3_900)
def test_a_long_row_is_laid_out_in_linear_time(size: int) -> None:
    # Each letter's place rescanned the row: 1,990 letters took 10 s (now 1 s). A row this
    # long is wider than a page: its picture shows the source, as one too wide always did.
    drawn = svg.draw_formula(parse_tex("a" * size))
    assert drawn.fallback == "the drawing library gives it no size it can lay out"
