"""arydshln's dashed rules (``:`` in an array's columns, ``\\hdashline``) in every format that
shows them: dashed in MathML (attributes and the cell borders Chromium draws), 4 pt dashes
4 pt apart in the drawing of PDF/PNG/slides, a dashed bar column in Office Math (whose row
rules are bars over and under the rows, solid), "╎" in linear text."""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path

import pytest

from renderers.api import render
from renderers.math import parse_tex
from renderers.math.linear import tex_line
from renderers.math.svg import draw_formula
from renderers.math.table_drawing import dashes
from tests.writers.test_math_rules import word_bars, word_formulas, word_rows

DASHED = r"\begin{array}{c:c} 1 & 1 \\ \hdashline 1 & 1 \end{array}"
SOLID = r"\begin{array}{c|c} 1 & 1 \\ \hline 1 & 1 \end{array}"
#: A table with a header row under a rule, as answers write a table of values.
HEADER = (r"\begin{array}{c|cc} x & \sin x & x^2+1 \\ \hline 1 & 0.84 & 2 \\ 2 & 0.91 & 5 "
          r"\end{array}")
_RECT = re.compile(r'<rect x="([-\d.]+)" y="([-\d.]+)" width="([-\d.]+)" height="([-\d.]+)"')
#: Pixels of the drawing's em (20 px at its 10 pt), and arydshln's dash and gap (4 pt) in them.
EM = 20.0
DASH = 0.4 * EM


def _rects(svg: str) -> list[tuple[float, ...]]:
    return [tuple(map(float, found.groups())) for found in _RECT.finditer(svg)]


def test_html_gives_dashed_lines_and_dashed_borders(tmp_path: Path) -> None:
    (result,) = render(f"$${DASHED}$$\n", tmp_path, formats="html", sources_pool=[])
    html = result.path.read_text(encoding="utf-8")
    (table,) = re.findall(r"<mtable[^>]*>.*?</mtable>", html)
    assert 'columnlines="dashed"' in table and 'rowlines="dashed"' in table
    styles = [set(style.split(";")) for style in re.findall(r'<mtd[^>]*style="([^"]*)"', table)]
    assert styles == [{"border-right:.04em dashed", "border-bottom:.04em dashed"},
                      {"border-bottom:.04em dashed"}, {"border-right:.04em dashed"}]


def test_dashes_start_and_end_with_half_a_dash_and_keep_their_length() -> None:
    pieces = dashes(10.0, 0.4, 0.4)  # 12.5 periods: 12, the gaps a little wider
    assert pieces[0] == (0.0, 0.2) and pieces[-1] == pytest.approx((9.8, 0.2))
    assert all(length == 0.4 for _, length in pieces[1:-1]) and len(pieces) == 13
    gaps = [b[0] - (a[0] + a[1]) for a, b in pairwise(pieces)]
    assert gaps == pytest.approx([10.0 / 12 - 0.4] * 12)
    assert dashes(0.3, 0.4, 0.4) == [(0.0, 0.3)]  # under half a period: one dash


def test_the_drawing_dashes_the_rules_where_solid_ones_stand() -> None:
    dashed = draw_formula(parse_tex(DASHED, True))
    solid = draw_formula(parse_tex(SOLID, True))
    (column,) = [rect for rect in _rects(solid.svg) if rect[3] > rect[2]]
    (row,) = [rect for rect in _rects(solid.svg) if rect[2] > rect[3]]
    vertical = sorted((rect for rect in _rects(dashed.svg) if rect[3] > rect[2]),
                      key=lambda rect: rect[1])
    horizontal = sorted(rect for rect in _rects(dashed.svg) if rect[2] > rect[3])
    # x, y, width, height: where along the line, how long, how thick
    for pieces, whole, along, size, thick in ((vertical, column, 1, 3, 2),
                                              (horizontal, row, 0, 2, 3)):
        assert len(pieces) >= 3
        # the same line as the solid rule: its place, thickness and ends
        across = 1 - along
        assert {piece[across] for piece in pieces} == {whole[across]}
        assert {piece[thick] for piece in pieces} == {whole[thick]}
        assert pieces[0][along] == pytest.approx(whole[along], abs=0.01)
        end = pieces[-1][along] + pieces[-1][size]
        assert end == pytest.approx(whole[along] + whole[size], abs=0.01)
        # half dashes at the ends, arydshln's 4 pt between, gaps about as long
        lengths = [piece[size] for piece in pieces]
        assert lengths[0] == lengths[-1] == pytest.approx(DASH / 2, abs=0.01)
        assert set(map(round, lengths[1:-1])) == {round(DASH)}
        starts = [piece[along] for piece in pieces]
        gaps = [b - (a + length) for (a, b), length in zip(pairwise(starts), lengths,
                                                            strict=False)]
        assert all(DASH / 2 < gap < DASH * 2 for gap in gaps)
    # nothing else moves: the glyphs and the size are the solid table's
    glyphs = re.compile(r"<path [^>]*/>")
    assert glyphs.findall(dashed.svg) == glyphs.findall(solid.svg)
    assert (dashed.width, dashed.height) == (solid.width, solid.height)


def test_word_gives_a_dashed_bar_column_and_a_bar_for_a_dashed_row_rule(
        tmp_path: Path) -> None:
    double = r"\begin{array}{cc} a & b \\ \hline\hline c & d \end{array}"
    dashed, header, twice = word_formulas(tmp_path, DASHED, HEADER, double)
    outer_rows = [word_bars(row.find("{*}e")) for row in dashed.find("{*}m")]
    assert [positions for positions, _ in outer_rows] == [["bot"], []]  # solid: no dashed bar
    assert [word_rows(inner) for _, inner in outer_rows] == [[["1", "╎", "1"]],
                                                             [["1", "╎", "1"]]]
    # the header and the body: two matrices of the same columns, the first over a bar
    (positions, head), (_, body) = (word_bars(row.find("{*}e")) for row in header.find("{*}m"))
    assert positions == ["bot"]
    assert word_rows(head) == [["x", "ǀ", "sinx", "x2+1"]]
    assert word_rows(body) == [["1", "ǀ", "0.84", "2"], ["2", "ǀ", "0.91", "5"]]
    # a narrower cell is filled out with space to its column's widest: "2" under "x²+1"
    narrow = body.find("{*}m/{*}mr").findall("{*}e")[3]
    spaces = "".join(text for text in narrow.itertext() if not text.strip())
    assert len(spaces) >= 2
    assert [word_bars(row.find("{*}e"))[0] for row in twice.find("{*}m")] == [
        ["bot", "bot"], []]


def test_linear_text_shows_a_dashed_rule() -> None:
    assert tex_line(r"\begin{array}{c:c} 1 & 2 \end{array}") == "1 ╎ 2"


@pytest.mark.libreoffice
@pytest.mark.slow
def test_libreoffice_draws_the_rule_under_a_header_row_across_the_table(
        tmp_path: Path) -> None:
    import pypdfium2 as pdfium
    from pypdf import PdfReader

    from tests.helpers import convert_all_with_libreoffice

    (result,) = render(f"$${HEADER}$$\n", tmp_path, formats="docx", sources_pool=[])
    (pdf,) = convert_all_with_libreoffice([result.path], tmp_path)
    page = PdfReader(pdf).pages[0]
    shown: list[tuple[str, float, float]] = []
    page.extract_text(visitor_text=lambda t, _cm, tm, _font, _size: shown.append(
        (t.strip(), tm[4], tm[5])))
    text = "".join(token for token, _, _ in shown)
    assert "❑" not in text and "¿" not in text
    height = float(page.mediabox.height)
    header = min(y for token, _, y in shown if token == "sin")
    body = max(y for token, _, y in shown if token in ("0.84", "0.91"))
    lefts = [x for token, x, _ in shown if token in ("sin", "0.84", "0.91", "5")]
    scale = 4
    image = pdfium.PdfDocument(str(pdf))[0].render(scale=scale).to_pil().convert("L")
    pixels = image.load()
    longest = (0, 0.0)  # the longest dark run of any pixel row, and where
    for row in range(image.height):
        run = best = 0
        for column in range(image.width):
            run = run + 1 if pixels[column, row] < 128 else 0
            best = max(best, run)
        longest = max(longest, (best, height - row / scale))
    length, level = longest
    # the rule between the header and the body (LibreOffice sets a bar under a row on its
    # baseline)
    assert body + 5 < level < header + 1
    # across the table: longer than from its second column to its last
    assert length / scale > max(lefts) - min(lefts)
    # the columns of the header and the body line up within an em (LibreOffice sets math
    # tighter than TeX and Word, whose widths fill the narrower cells out)
    (sine,), (first,) = ([x for token, x, _ in shown if token == name] for name in ("sin", "0.84"))
    assert abs(sine - first) < 12


_BORDER = """
getComputedStyle(document.querySelector('mtable mtd')).borderRightStyle
"""


@pytest.mark.browser
def test_chromium_draws_a_dashed_border(tmp_path: Path) -> None:
    from tests.helpers import chromium_browser

    (result,) = render(f"$${DASHED}$$\n", tmp_path, formats="html", sources_pool=[])
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 800, "height": 400})
        page.goto(result.path.as_uri())
        assert page.evaluate(_BORDER) == "dashed"
