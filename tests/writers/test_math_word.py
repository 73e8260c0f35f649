"""Office Math in DOCX where Word and LibreOffice once showed it apart from TeX: a mass number
alone (a prescript, no placeholder box), the gap between the columns of ``cases`` and
``aligned``, and the lines of ``multline`` set left, centred and right."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from lxml import etree

from renderers.math.omml import M_NS, W_NS, omml_lines, omml_math
from renderers.math.tex import parse_tex

MASS_NUMBERS = (r"^{235}U", r"{}^{14}\mathrm{C}", r"{}_{92}\mathrm{U}", r"^{235}_{92}\mathrm{U}",
                r"\ce{^{235}_{92}U}")
MULTLINE = (r"\begin{multline} a + b + c + d + e + f \\ g + h + i \\"
            r" j + k + l + m + n + o + p + q \end{multline}")


def _m(tag: str) -> str:
    return f"{{{M_NS}}}{tag}"


@pytest.mark.parametrize("tex", MASS_NUMBERS)
def test_a_mass_number_alone_is_a_prescript_with_no_empty_script(tex: str) -> None:
    root = omml_math(parse_tex(tex))
    (pre,) = root.iter(_m("sPre"))
    for part in ("sub", "sup", "e"):
        # an empty argument is Word's placeholder, and LibreOffice's "❑"
        assert "".join(pre.find(_m(part)).itertext()), (tex, part)
    assert root.find(_m("sSup")) is None and root.find(_m("sSubSup")) is None


def _gap(tex: str) -> tuple[str | None, str | None]:
    props = omml_math(parse_tex(tex, display=True)).find(f".//{_m('mPr')}")
    if props is None:
        return None, None
    rule, gap = props.find(_m("cGpRule")), props.find(_m("cGp"))
    return (rule.get(_m("val")) if rule is not None else None,
            gap.get(_m("val")) if gap is not None else None)


@pytest.mark.parametrize(("tex", "gap"), [
    (r"f = \begin{cases} 1 & x > 0 \\ 0 & \text{otherwise} \end{cases}", ("4", "2")),  # a quad
    (r"\begin{dcases} \frac{1}{x} & x \neq 0 \\ 0 & x = 0 \end{dcases}", ("4", "2")),
    (r"\begin{aligned} a &= b + c \\ x + y &= 1 \end{aligned}", ("3", "0")),  # none
    (r"\begin{split} a &= b \end{split}", ("3", "0")),
    (r"\begin{pmatrix} a & b \\ c & d \end{pmatrix}", (None, None)),  # Word's own
])
def test_a_table_has_the_column_gap_tex_sets(tex: str, gap: tuple[str | None, str | None]) -> None:
    assert _gap(tex) == gap


def test_pairs_of_aligned_columns_stand_two_em_apart() -> None:
    root = omml_math(parse_tex(r"\begin{alignat}{2} a &= b & c &= d \end{alignat}", True))
    (row,) = root.iter(_m("mr"))
    starts = ["".join(cell.itertext())[:2] for cell in row.iterfind(_m("e"))]
    assert starts[2] == "\u2003\u2003" and not any("\u2003" in s for s in starts[:2] + starts[3:])


def test_a_multline_is_one_formula_a_line() -> None:
    lines = omml_lines(parse_tex(MULTLINE, display=True))
    assert ["".join(line.itertext()).replace("\u2062", "") for line in lines] == [
        "a+b+c+d+e+f", "g+h+i", "j+k+l+m+n+o+p+q"]
    assert not omml_lines(parse_tex(r"\begin{gather} a \\ b \end{gather}", display=True))
    assert not omml_lines(parse_tex(r"\begin{multline} a + b \end{multline}", display=True))
    assert not omml_lines(parse_tex(MULTLINE))  # inline: one table


def _paragraphs(path: Path) -> list[etree._Element]:
    body = etree.fromstring(zipfile.ZipFile(path).read("word/document.xml"))
    return [p for p in body.iter(f"{{{W_NS}}}p") if p.find(f".//{_m('oMath')}") is not None]


def _render(tmp_path: Path, markdown: str) -> Path:
    from renderers import render

    (result,) = render(markdown, tmp_path, name="word", formats=("docx",), sources_pool=[])
    assert not result.warnings
    return result.path


MARKDOWN = (f"$$ {MULTLINE} $$\n\n$$ {MULTLINE} $$ {{#eq:long}}\n\nSee @eq:long.\n\n"
            "Mass numbers: " + ", ".join(f"${tex}$" for tex in MASS_NUMBERS) + ".\n")


def test_multline_lines_stand_at_left_centre_and_right_tab_stops(tmp_path: Path) -> None:
    plain, numbered, _ = _paragraphs(_render(tmp_path, MARKDOWN))
    for p, mark in ((plain, ""), (numbered, "(1)")):
        assert p.find(_m("oMathPara")) is None and len(p.findall(_m("oMath"))) == 3
        stops = [(tab.get(f"{{{W_NS}}}val"), int(tab.get(f"{{{W_NS}}}pos")))
                 for tab in p.iter(f"{{{W_NS}}}tab") if tab.get(f"{{{W_NS}}}val")]
        assert [kind for kind, _ in stops] == ["left", "center", "right", "right"]
        assert stops[0][1] == 200 and stops[2][1] < stops[3][1]
        # before each line: a break (not the first), then tabs to its stop
        leads = [[child.tag.split("}")[1] for child in run if child.tag != f"{{{W_NS}}}rPr"]
                 for run in p.iterfind(f"{{{W_NS}}}r")]
        assert leads[:3] == [["tab"], ["br", "tab", "tab"], ["br", "tab", "tab", "tab"]]
        assert "".join(p.itertext()).endswith(mark)
    names = [b.get(f"{{{W_NS}}}name") for b in numbered.iter(f"{{{W_NS}}}bookmarkStart")]
    assert names == ["eq_1"]


@pytest.mark.libreoffice
@pytest.mark.slow
def test_libreoffice_shows_mass_numbers_and_multline_lines_as_tex_sets_them(
        tmp_path: Path) -> None:
    from pypdf import PdfReader

    from tests.helpers import convert_all_with_libreoffice

    (pdf,) = convert_all_with_libreoffice([_render(tmp_path, MARKDOWN)], tmp_path)
    page = PdfReader(pdf).pages[0]
    text = page.extract_text()
    assert "❑" not in text and "¿" not in text  # its marks of an empty or missing argument
    assert text.count("235") == 3 and "14" in text and text.count("92") == 3
    shown: list[tuple[str, float, float]] = []
    page.extract_text(visitor_text=lambda t, _cm, tm, _font, _size: shown.append(
        (t.strip(), tm[4], tm[5])))
    left, right = 72.0, float(page.mediabox.width) - 72.0  # the template's margins

    def where(token: str) -> list[tuple[float, float]]:
        return [(x, y) for text, x, y in shown if text == token]

    for (first, _), (g, _), (i, _), (q, _) in zip(
            where("a"), where("g"), where("i"), where("q"), strict=True):
        assert left < first < left + 20  # the first line at the left, 10 pt in
        assert abs((g + i) / 2 - (left + right) / 2) < 15  # the middle one centred
        assert q > right - 80  # the last at the right
    (number_x, number_y), = where("(1)")
    assert number_x > where("q")[1][0] and abs(number_y - where("q")[1][1]) < 2
