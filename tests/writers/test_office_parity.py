"""DOCX and PPTX against the PDF: what a reader relies on (text, numbers) reaches them too.

Each test opens the produced file (python-docx, python-pptx, the package's XML); the
``libreoffice`` ones read the text LibreOffice draws.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import docx
import pytest
from lxml import etree

from tests.helpers import convert_with_libreoffice, pdf_text
from tests.support.render import render_markdown

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"

POOL: list[dict[str, Any]] = [
    {"sid": 1, "title": "World Energy Outlook 2024", "url": "https://www.iea.org/reports/weo"},
    {"sid": 2, "title": "日本語のソース 🚀", "url": "https://jp.example.jp/a"},
]

CJK_MD = "# 日本語の見出し 🚀\n\nこれは日本語の段落です。[[S:1]] 本文。[[S:2]]\n"


def _styles(data: bytes) -> etree._Element:
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        return etree.fromstring(package.read("word/styles.xml"))


def test_docx_names_an_east_asian_font_where_the_theme_named_none() -> None:
    data = render_markdown("docx", CJK_MD, POOL)
    styles = _styles(data)
    themed = [f for f in styles.iter(f"{W}rFonts") if f.get(f"{W}eastAsiaTheme") is not None]
    assert themed == []
    default = styles.find(f"{W}docDefaults/{W}rPrDefault/{W}rPr/{W}rFonts")
    assert default is not None and default.get(f"{W}eastAsia") == "Noto Sans CJK JP"
    title = docx.Document(io.BytesIO(data)).styles["Title"].element
    fonts = title.find(f"{W}rPr/{W}rFonts")
    assert fonts is not None and fonts.get(f"{W}eastAsia") == "Noto Sans CJK JP"


def test_docx_without_cjk_text_keeps_the_theme_fonts() -> None:
    styles = _styles(render_markdown("docx", "# Title\n\nPlain.[[S:1]]\n", POOL[:1]))
    assert any(f.get(f"{W}eastAsiaTheme") for f in styles.iter(f"{W}rFonts"))


@pytest.mark.libreoffice
def test_libreoffice_draws_cjk_headings_and_sources_of_a_docx(tmp_path: Path) -> None:
    """The theme named no East Asian face: LibreOffice drew "日本語の見出し 🚀" as the emoji
    alone and the Sources title "日本語のソース 🚀" as nothing."""
    path = tmp_path / "cjk.docx"
    path.write_bytes(render_markdown("docx", CJK_MD, POOL))
    shown = "".join(pdf_text(convert_with_libreoffice(path, tmp_path)).split())
    assert "日本語の見出し" in shown
    assert "日本語のソース" in shown
    assert "これは日本語の段落です。" in shown


NESTED_OL_MD = """# Lists

3. three

   7. seven[[S:1]]
   8. eight

      0. zero
      1. one

4. four
"""


def _shown_lines(fmt: str, markdown: str, tmp_path: Path, name: str) -> list[str]:
    """The text lines LibreOffice shows of ``markdown`` rendered to ``fmt``, spaces squeezed."""
    path = tmp_path / f"{name}.{fmt}"
    path.write_bytes(render_markdown(fmt, markdown, POOL))
    return [" ".join(line.split()) for line in
            pdf_text(convert_with_libreoffice(path, tmp_path)).splitlines()]


def _docx_levels(data: bytes) -> dict[str, tuple[str, int]]:
    """Each list item's text → (its level's number format, its first number)."""
    document = docx.Document(io.BytesIO(data))
    numbering = document.part.numbering_part.element
    abstract = {a.get(f"{W}abstractNumId"): a for a in numbering.iter(f"{W}abstractNum")}
    nums = {n.get(f"{W}numId"): n for n in numbering.iter(f"{W}num")}
    found: dict[str, tuple[str, int]] = {}
    for p in document.element.body.iter(f"{W}p"):
        num_pr = p.find(f"{W}pPr/{W}numPr")
        if num_pr is None:
            continue
        num = nums[num_pr.find(f"{W}numId").get(f"{W}val")]
        level = num_pr.find(f"{W}ilvl").get(f"{W}val")
        definition = abstract[num.find(f"{W}abstractNumId").get(f"{W}val")]
        lvl = next(v for v in definition.iter(f"{W}lvl") if v.get(f"{W}ilvl") == level)
        start = num.find(f"{W}lvlOverride/{W}startOverride")
        text = "".join(t.text or "" for t in p.iter(f"{W}t"))
        found[text] = (lvl.find(f"{W}numFmt").get(f"{W}val"), int(start.get(f"{W}val")))
    return found


def test_docx_nested_ordered_lists_count_in_decimal_as_the_pdf() -> None:
    """Word's habit (a., i. below 1.) showed the input's "7. seven" as "g. seven" and a
    list from 0 as "0." then "i."; the PDF and the slides count 7., 8. and 0., 1."""
    items = _docx_levels(render_markdown("docx", NESTED_OL_MD, POOL))
    assert items["three"] == ("decimal", 3)
    assert items["seven1"] == ("decimal", 7)
    assert items["zero"] == ("decimal", 0)
    assert {fmt for fmt, _ in items.values()} == {"decimal"}


@pytest.mark.libreoffice
def test_libreoffice_shows_the_nested_numbers_of_a_docx(tmp_path: Path) -> None:
    lines = _shown_lines("docx", NESTED_OL_MD, tmp_path, "lists")
    for shown in ("3. three", "8. eight", "0. zero", "1. one", "4. four"):
        assert shown in lines
    assert any(line.startswith("7. seven") for line in lines)


LISTS_MD = """# Lists

3. three
4. four
   1. deep one
   2. deep two
5. five
"""


def _slide_items(data: bytes) -> dict[str, tuple[int, str]]:
    """Each slide paragraph's text → (its ``lvl``, its auto-number's ``startAt`` or "")."""
    from pptx import Presentation

    a = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
    found: dict[str, tuple[int, str]] = {}
    for slide in Presentation(io.BytesIO(data)).slides:
        for shape in slide.shapes:
            if not shape.has_text_frame:
                continue
            for p in shape.text_frame.paragraphs:
                ppr = p._p.find(f"{a}pPr")
                auto = ppr.find(f"{a}buAutoNum") if ppr is not None else None
                found[p.text] = (int(ppr.get("lvl", "0")) if ppr is not None else 0,
                                 auto.get("startAt", "") if auto is not None else "")
    return found


def test_pptx_list_items_carry_their_nesting_level() -> None:
    items = _slide_items(render_markdown("pptx", LISTS_MD + "\n" + NESTED_OL_MD, POOL))
    assert items["three"] == (1, "3") and items["five"] == (1, "5")
    assert items["deep one"] == (2, "1") and items["deep two"] == (2, "2")
    assert items["seven1"] == (2, "7")
    # a list from 0: no auto-number shows 0, the item's text opens with it
    assert items["0. zero"] == (3, "") and items["one"] == (3, "1")


@pytest.mark.libreoffice
def test_libreoffice_numbers_a_nested_slide_list_from_its_own_start(tmp_path: Path) -> None:
    """All items were at level 0: LibreOffice counted "deep one" on from "4. four" (5.)."""
    lines = _shown_lines("pptx", LISTS_MD + "\n" + NESTED_OL_MD, tmp_path, "lists")
    for shown in ("3. three", "4. four", "1. deep one", "2. deep two", "5. five",
                  "8. eight", "0. zero", "1. one"):
        assert shown in lines, (shown, lines)


BULLETS_MD = "# Deep\n\n- a\n  - b\n    - c\n      - d\n        - e\n          - f[[S:1]]\n"


def test_docx_bullet_levels_name_a_face_for_their_marks() -> None:
    data = render_markdown("docx", BULLETS_MD, POOL)
    numbering = docx.Document(io.BytesIO(data)).part.numbering_part.element
    marks = {}
    for lvl in numbering.iter(f"{W}lvl"):
        if lvl.find(f"{W}numFmt").get(f"{W}val") == "bullet":
            fonts = lvl.find(f"{W}rPr/{W}rFonts")
            marks[lvl.find(f"{W}lvlText").get(f"{W}val")] = (
                fonts.get(f"{W}ascii") if fonts is not None else None)
    assert marks["\u25aa"] == marks["\u2022"] == marks["\u25e6"] == "Arial"


def _inked_marks(pdf: Path, mark: str) -> list[bool]:
    """Whether each ``mark`` character on the PDF's first page has ink in its box."""
    import pypdfium2 as pdfium

    page = pdfium.PdfDocument(str(pdf))[0]
    text = page.get_textpage()
    scale = 4
    image = page.render(scale=scale).to_pil().convert("L")
    height = page.get_height()
    inked = []
    for index in range(text.count_chars()):
        if text.get_text_range(index, 1) != mark:
            continue
        left, bottom, right, top = text.get_charbox(index)
        box = (int(left * scale), int((height - top) * scale),
               int(right * scale) + 1, int((height - bottom) * scale) + 1)
        low, _ = image.crop(box).getextrema()
        inked.append(low < 128)
    return inked


@pytest.mark.libreoffice
def test_libreoffice_draws_every_bullet_of_a_deep_docx_list(tmp_path: Path) -> None:
    """With no face named, LibreOffice drew no "▪": items c and f had no mark."""
    path = tmp_path / "deep.docx"
    path.write_bytes(render_markdown("docx", BULLETS_MD, POOL))
    pdf = convert_with_libreoffice(path, tmp_path)
    for mark in ("\u2022", "\u25e6", "\u25aa"):
        assert _inked_marks(pdf, mark) == [True, True], mark


TALL_ROW_MD = ("# Tall row\n\n| A | B |\n|---|---|\n| "
               + " ".join(f"word{i}" for i in range(1400)) + " | short |\n| next | row[[S:1]] |\n")


def _table_cells(data: bytes) -> list[tuple[str, list[str]]]:
    """Each table on a slide: the slide's title and every cell's text, row by row."""
    from pptx import Presentation

    tables = []
    for slide in Presentation(io.BytesIO(data)).slides:
        title = next((s.text_frame.text for s in slide.shapes if s.has_text_frame), "")
        for shape in slide.shapes:
            if shape.has_table:
                tables.append((title, [c.text for r in shape.table.rows for c in r.cells]))
    return tables


def test_pptx_splits_a_row_taller_than_a_slide_and_keeps_every_word() -> None:
    """The row was shortened to what one slide holds, ending "…": 1,100 words were lost."""
    from renderers.writers.pptx.output import pptx_artifact
    from tests.writers.test_artifacts import source_of

    artifact = pptx_artifact(source_of(TALL_ROW_MD))
    assert artifact.diagnostics == ()
    tables = _table_cells(artifact.data)
    assert len(tables) >= 3
    assert all(cells[:2] == ["A", "B"] for _, cells in tables)  # the header on every slide
    words = [w for _, cells in tables for c in cells for w in c.split()
             if w.startswith("word")]
    assert words == [f"word{i}" for i in range(1400)]
    assert "short" in tables[0][1] and tables[-1][1][-2:] == ["next", "row1"]
    assert all(cells[2].startswith("(cont.) ") for _, cells in tables[1:])
    assert "…" not in "".join(c for _, cells in tables for c in cells)


TEN_MD = "# Ten\n\n" + "".join(f"{n}. item {n}\n" for n in range(8, 13)) + "\nEnd.[[S:1]]\n"


def test_pptx_numbers_past_nine_hang_further_than_one_digit() -> None:
    from pptx import Presentation

    a = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
    indents = {}
    for slide in Presentation(io.BytesIO(render_markdown("pptx", TEN_MD, POOL))).slides:
        for shape in slide.shapes:
            if shape.has_text_frame:
                for p in shape.text_frame.paragraphs:
                    ppr = p._p.find(f"{a}pPr")
                    if ppr is not None and ppr.find(f"{a}buAutoNum") is not None:
                        indents[p.text] = -int(ppr.get("indent")) / 12700  # points
    assert set(indents) == {f"item {n}" for n in range(8, 13)}
    # "12." at 18 pt is about 25 pt of Arial: the whole list hangs as far, aligned
    assert len(set(indents.values())) == 1 and min(indents.values()) >= 28


@pytest.mark.libreoffice
def test_libreoffice_keeps_a_gap_after_a_two_digit_slide_number(tmp_path: Path) -> None:
    """"10." was wider than the 18 pt hanging indent: LibreOffice showed "10.item 10"."""
    lines = _shown_lines("pptx", TEN_MD, tmp_path, "ten")
    for n in range(8, 13):
        assert f"{n}. item {n}" in lines, lines
