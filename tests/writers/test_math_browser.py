"""Aligned formulas in a browser of MathML Core (Chromium), which dropped ``columnalign`` and
``columnspacing``: the report's math CSS (:data:`renderers.writers.html.math.MATH_CSS`) must
line up the ``=`` of a derivation's rows, as the PDF drawing and Word do."""

from __future__ import annotations

from pathlib import Path

import pytest

from renderers.api import render

DERIVATIONS = r"""
$$
\begin{aligned}
f(x) &= (x+1)^2 \\
     &= x^2 + 2x + 1
\end{aligned}
$$

$$
\begin{align*}
x &= 1 & y &= 22 \\
xx &= 333 & yyy &= 4
\end{align*}
$$

$$ f(x) = \begin{cases} 1 & x > 0 \\ -1 & \text{otherwise} \end{cases} $$
"""

#: For each aligned table: per row, each cell's left and right edge and those of its content.
_CELLS = """
[...document.querySelectorAll("mtable[columnspacing^='0em']")].map(table =>
  [...table.querySelectorAll(':scope > mtr')].map(row =>
    [...row.children].map(cell => {
      const box = cell.getBoundingClientRect();
      const kids = [...cell.children].map(k => k.getBoundingClientRect()).filter(r => r.width);
      const left = Math.min(...kids.map(r => r.left)), right = Math.max(...kids.map(r => r.right));
      const equals = [...cell.querySelectorAll('mo')].find(mo => mo.textContent === '=');
      return {cell: [box.left, box.right], content: [left, right],
              em: parseFloat(getComputedStyle(cell).fontSize),
              equals: equals ? equals.getBoundingClientRect().left : null};
    })))
"""


@pytest.mark.browser
def test_chromium_lines_up_the_equals_signs_of_aligned_rows(tmp_path: Path) -> None:
    from tests.helpers import chromium_browser

    (result,) = render(DERIVATIONS, tmp_path, name="aligned", formats="html", sources_pool=[])
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 900, "height": 600})
        page.goto(result.path.as_uri())
        tables = page.evaluate(_CELLS)
        brace, em = page.evaluate(
            "(() => { const mo = [...document.querySelectorAll('mo')].find(m => "
            "m.textContent === '{'); return [mo.getBoundingClientRect().height, "
            "parseFloat(getComputedStyle(mo).fontSize)]; })()")
    # the math font stack finds a face with a MATH table: the brace of cases spans its rows
    assert brace > 1.8 * em
    aligned, pairs = tables
    # aligned: the = of both rows at one x, right after the right column's content
    first, second = aligned
    assert first[1]["equals"] == pytest.approx(second[1]["equals"], abs=0.5)
    assert first[0]["content"][1] == pytest.approx(first[1]["cell"][0], abs=0.5)  # cells touch
    # align*: right columns end at one x ("x" and "xx"), left ones start at one x
    for column in range(4):
        side = 1 if column % 2 == 0 else 0
        assert pairs[0][column]["content"][side] == pytest.approx(
            pairs[1][column]["content"][side], abs=0.5), column
    # pairs stand 2 em apart (the attribute's columnspacing), not two cell paddings (0.8 em)
    # (row 2 holds each column's widest content: "= 333", "yyy")
    gap, em = pairs[1][2]["content"][0] - pairs[1][1]["content"][1], pairs[1][2]["em"]
    assert 2 * em - 0.5 <= gap <= 2.4 * em + 0.5
