"""The rules of an array (``|`` in its column specification, outer ones and ``||`` included,
and ``\\hline``) in every format that shows it: the MathML of HTML (attributes and the cell
borders Chromium draws), the picture of PDF/PNG/slides (lines in the middle of the column
gaps, TeX's 0.4 pt), Office Math (a bar column, side bars, a border box), linear text; the
rules not read are refused by name."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest
from lxml import etree

from renderers.api import render
from renderers.math import MathNode, parse_tex
from renderers.math.linear import tex_line
from renderers.math.omml import M_NS
from renderers.math.svg import draw_formula
from renderers.math.tex import tex_error

AUGMENTED = r"\left[\begin{array}{cc|c} 1 & 2 & 3 \\ 4 & 5 & 6 \end{array}\right]"
RULED = r"\begin{array}{|l|r|}\hline a & b \\ \hline c & d \\ \hline\end{array}"
SIDES = r"\begin{array}{|c||c|} 1 & 0 \\ 0 & 1 \end{array}"
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _table(tex: str) -> MathNode:
    def tables(node: MathNode) -> list[MathNode]:
        found = [node] if node.tag == "mtable" else []
        return found + [table for child in node.children for table in tables(child)]

    return tables(parse_tex(tex, display=True).root)[0]


#: TeX, and the rules it counts at each column edge and each row edge.
COUNTS = {
    AUGMENTED: ("0 0 1 0", ""),
    RULED: ("1 1 1", "1 1 1"),
    SIDES: ("1 2 1", ""),
    r"\begin{array}{c} \hline\hline a \\ b \end{array}": ("", "2 0 0"),
    # a last "\\" before \hline opens no row: the rule is the bottom one
    r"\begin{array}{c} a \\ b \\ \hline \end{array}": ("", "0 0 1"),
    r"\begin{pmatrix} a & b \\ \hline c & d \end{pmatrix}": ("", "0 1 0"),
    # arydshln's dashed rules: an edge is dashed when each of its rules is
    r"\begin{array}{c:c} a & b \end{array}": ("0 1d 0", ""),
    r"\begin{array}{:c::c|:c} a & b & c \end{array}": ("1d 2d 2 0", ""),
    r"\begin{array}{c} \hdashline a \\ \hline\hdashline b \\ \hdashline\hdashline "
    r"\end{array}": ("", "1d 2 2d"),
}


@pytest.mark.parametrize(("tex", "expected"), COUNTS.items(),
                         ids=list(map(str, range(len(COUNTS)))))
def test_the_rules_are_counted_at_each_edge(tex: str, expected: tuple[str, str]) -> None:
    table = _table(tex)
    assert (table.attr("data-columnrules"), table.attr("data-rowrules")) == expected
    text = "".join(node.text for node in _walk(table))
    assert "\u2064" not in text and ";" not in text  # the counts' mark is gone from the cell


def test_a_nested_array_keeps_its_own_rules() -> None:
    outer = _table(r"\begin{array}{c|c} a & \begin{array}{|c} \hline x \end{array} \end{array}")
    inner = next(node for node in _walk(outer)[1:] if node.tag == "mtable")
    assert (outer.attr("data-columnrules"), outer.attr("data-rowrules")) == ("0 1 0", "")
    assert (inner.attr("data-columnrules"), inner.attr("data-rowrules")) == ("1 0", "1 0")


def _walk(node: MathNode) -> list[MathNode]:
    return [node, *(n for child in node.children for n in _walk(child))]


#: What is still refused, and the start of the reason.
REFUSED = {
    r"\begin{array}{cc} a & b \\ \cline{1-2} c & d \end{array}": "a table's \\cline (a rule",
    r"\begin{array}{cc} a & \vline b \end{array}": "a table's \\vline (a rule",
    r"\begin{array}{cc} a & b \\ \cdashline{1-2} c & d \end{array}": "a table's \\cdashline",
    r"\begin{array}{c;{2pt/2pt}c} a & b \end{array}": "array: the column specification's ';'",
}


@pytest.mark.parametrize(("tex", "reason"), REFUSED.items(),
                         ids=["cline", "vline", "cdashline", "dash-pattern"])
def test_rules_not_read_are_refused_by_name(tex: str, reason: str) -> None:
    error = tex_error(tex, display=True)
    assert error is not None and error.startswith(reason), error
    assert "accepted: " in error


def test_html_gives_the_rules_as_attributes_and_cell_borders(tmp_path: Path) -> None:
    (result,) = render(f"$${AUGMENTED}$$\n\n$${RULED}$$\n", tmp_path, formats="html",
                       sources_pool=[])
    html = result.path.read_text(encoding="utf-8")
    tables = re.findall(r"<mtable[^>]*>.*?</mtable>", html)
    augmented, ruled = tables
    assert 'columnlines="none solid"' in augmented and "rowlines" not in augmented
    # the rule after the second column: the right border of that column's cells, nowhere else
    borders = re.findall(r'<mtd[^>]*style="([^"]*)"', augmented)
    assert borders == ["border-right:.04em solid"] * 2
    assert 'columnlines="solid"' in ruled and 'rowlines="solid"' in ruled
    first_cell = re.search(r'<mtd[^>]*style="([^"]*)"', ruled)
    assert first_cell is not None
    assert set(first_cell.group(1).split(";")) == {
        "border-left:.04em solid", "border-right:.04em solid", "border-top:.04em solid",
        "border-bottom:.04em solid"}


def _rects(svg: str) -> list[tuple[float, float, float, float]]:
    """Each ``<rect>`` of a drawing: x, y, width, height."""
    return [tuple(float(found.group(name)) for name in ("x", "y", "w", "h"))  # type: ignore[misc]
            for found in re.finditer(r'<rect x="(?P<x>[-\d.]+)" y="(?P<y>[-\d.]+)" '
                                     r'width="(?P<w>[-\d.]+)" height="(?P<h>[-\d.]+)"', svg)]


def _glyph_spans(svg: str) -> list[tuple[float, float]]:
    """The left and right x of each glyph outline, left to right."""
    spans = []
    for path in re.findall(r'<path d="([^"]*)"', svg):
        xs = [float(value) for value in _NUMBER.findall(path)[0::2]]
        spans.append((min(xs), max(xs)))
    return sorted(spans)


def test_the_drawing_rules_the_middle_of_the_column_gap_and_changes_nothing_else() -> None:
    plain = draw_formula(parse_tex(r"\begin{array}{ccc} 1 & 1 & 1 \end{array}", True))
    ruled = draw_formula(parse_tex(r"\begin{array}{cc|c} 1 & 1 & 1 \end{array}", True))
    (rule,) = _rects(ruled.svg)
    x, y, width, height = rule
    assert width == pytest.approx(0.04 * 20, abs=0.01)  # TeX's 0.4 pt at 10 pt, 20 px a em
    ones = _glyph_spans(ruled.svg)  # the same "1" in each cell: its boxes' gap is the glyphs'
    assert ones[1][1] < x and x + width < ones[2][0]
    assert x + width / 2 == pytest.approx((ones[1][1] + ones[2][0]) / 2, abs=0.1)  # 0.005 em
    # full height of the drawing (the table is all of it), and all else byte for byte
    view = [float(value) for value in re.search(r'viewBox="([^"]*)"', ruled.svg)
            .group(1).split()]  # type: ignore[union-attr]
    assert (y, height) == pytest.approx((view[1], view[3]), abs=0.01)
    assert re.sub(r"<rect [^>]*/>", "", ruled.svg) == plain.svg
    assert (ruled.width, ruled.height, ruled.depth) == (plain.width, plain.height, plain.depth)


def test_the_drawing_frames_a_ruled_table_and_rules_between_its_rows() -> None:
    drawn = draw_formula(parse_tex(RULED, True))
    rects = _rects(drawn.svg)
    vertical = sorted(rect for rect in rects if rect[3] > rect[2])
    horizontal = sorted((rect for rect in rects if rect[2] > rect[3]), key=lambda r: r[1])
    assert len(vertical) == 3 and len(horizontal) == 3
    glyphs = _glyph_spans(drawn.svg)
    letters_left, letters_right = glyphs[0][0], glyphs[-1][1]
    assert vertical[0][0] < letters_left and letters_right < vertical[2][0]
    top, middle, bottom = (rect[1] for rect in horizontal)
    tops, bottoms = zip(*_glyph_heights(drawn.svg), strict=True)
    assert top < min(tops) and max(bottoms) < bottom and min(tops) < middle < max(bottoms)
    # the column rules run from the top rule to the bottom one; the rows span the frame
    for _, y, _, height in vertical:
        assert y == pytest.approx(top, abs=0.01)
        assert y + height == pytest.approx(bottom + horizontal[2][3], abs=0.01)
    for x, _, width, _ in horizontal:
        assert x <= vertical[0][0] and vertical[2][0] + vertical[2][2] <= x + width + 0.01


def _glyph_heights(svg: str) -> list[tuple[float, float]]:
    """The top and bottom y of each glyph outline."""
    heights = []
    for path in re.findall(r'<path d="([^"]*)"', svg):
        ys = [float(value) for value in _NUMBER.findall(path)[1::2]]
        heights.append((min(ys), max(ys)))
    return heights


def word_formulas(tmp_path: Path, *tex: str) -> list[etree._Element]:
    """The ``m:oMath`` of each displayed formula ``tex``, read back from the DOCX."""
    source = "".join(f"$${formula}$$\n\n" for formula in tex)
    (result,) = render(source, tmp_path, formats="docx", sources_pool=[])
    with zipfile.ZipFile(result.path) as package:
        root = etree.fromstring(package.read("word/document.xml"))
    return list(root.iterfind(".//m:oMath", {"m": M_NS}))


def word_rows(element: etree._Element) -> list[list[str]]:
    """The text of each cell of each matrix row in ``element`` (space runs left out)."""
    return [["".join(cell.itertext()).strip("\u2002\u2003\u2005\u205f\u2009")
             for cell in row.iterfind("m:e", {"m": M_NS})]
            for row in element.iterfind(".//m:mr", {"m": M_NS}) if row.find(".//m:mr",
                                                                              {"m": M_NS}) is None]


def word_bars(element: etree._Element) -> tuple[list[str], etree._Element]:
    """The positions of the bars ``element`` (an ``m:e``) holds one inside another, outside
    in, and what the innermost holds."""
    m = {"m": M_NS}
    positions = []
    while (bar := element.find("m:bar", m)) is not None:
        positions.append(bar.find("m:barPr/m:pos", m).get(f"{{{M_NS}}}val"))
        element = bar.find("m:e", m)
    return positions, element


def test_word_gives_bars_side_bars_and_bars_over_and_under_rows(tmp_path: Path) -> None:
    augmented, sides, ruled = word_formulas(tmp_path, AUGMENTED, SIDES, RULED)
    m = {"m": M_NS}
    assert word_rows(augmented) == [["1", "2", "\u01c0", "3"], ["4", "5", "\u01c0", "6"]]
    assert sides.find(".//m:borderBox", m) is None
    bars = sides.find(".//m:d/m:dPr", m)
    assert bars is not None
    assert [bars.find(f"m:{end}", m).get(f"{{{M_NS}}}val") for end in ("begChr", "endChr")] == [
        "|", "|"]
    assert word_rows(sides) == [["1", "‖", "0"], ["0", "‖", "1"]]
    # {|l|r|} with \hline above, between and below its rows: side bars around a column of
    # two matrices, the first under a bar and over one, the second over one
    assert ruled.find(".//m:borderBox", m) is None
    outer = ruled.find("m:d/m:e/m:m", m)
    assert outer is not None
    parts = [word_bars(row.find("m:e", m)) for row in outer.iterfind("m:mr", m)]
    assert [positions for positions, _ in parts] == [["bot", "top"], ["bot"]]
    assert [word_rows(inner) for _, inner in parts] == [[["a", "\u01c0", "b"]],
                                                         [["c", "\u01c0", "d"]]]


def test_linear_text_shows_the_rules_between_columns() -> None:
    assert tex_line(AUGMENTED) == "[1, 2 | 3; 4, 5 | 6]"
    assert tex_line(SIDES) == "1 ‖ 0; 0 ‖ 1"


#: For the first table: each cell of the first row, its right border's box and its content's.
_BORDERS = """
[...document.querySelector('mtable').querySelector('mtr').children].map(cell => {
  const box = cell.getBoundingClientRect(), style = getComputedStyle(cell);
  const ink = cell.firstElementChild.getBoundingClientRect();
  return {right: box.right, border: parseFloat(style.borderRightWidth),
          style: style.borderRightStyle, content: [ink.left, ink.right]};
})
"""


@pytest.mark.browser
def test_chromium_draws_the_rule_in_the_middle_of_the_column_gap(tmp_path: Path) -> None:
    from tests.helpers import chromium_browser

    (result,) = render(f"$${AUGMENTED}$$\n", tmp_path, formats="html", sources_pool=[])
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 800, "height": 400})
        page.goto(result.path.as_uri())
        first, second, third = page.evaluate(_BORDERS)
    assert first["border"] == 0 and third["border"] == 0
    assert second["style"] == "solid" and second["border"] >= 1
    rule = second["right"] - second["border"] / 2
    assert rule - second["content"][1] == pytest.approx(third["content"][0] - rule, abs=1)
    assert second["content"][1] < rule < third["content"][0]
