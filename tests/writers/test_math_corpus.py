"""The TeX agents write, case by case from ``tests/fixtures/math/agent_tex.txt``: each construct
is read, drawn and written in every form a format shows (MathML, Office Math, the picture of
PDF/PNG/slides, the linear text of slides) with nothing lost; or it is refused by name."""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from lxml import etree
from markdown_it.utils import read_fixture_file

from renderers.math import MathError, MathNode, parse_tex
from renderers.math.linear import linear_text
from renderers.math.mathml import mathml_markup
from renderers.math.omml import M_NS, omml_math
from renderers.math.svg import draw_formula

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "math" / "agent_tex.txt"
#: Script digits of the linear text back to the characters they raise or lower ("mc²" holds 2).
UNSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿ₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎", "0123456789+−=()n0123456789+−=()")
KEYS = frozenset({"parts", "rows", "mathml", "omml", "linear", "refused"})


@dataclass(frozen=True)
class Case:
    """One construct: its title, TeX and what must hold (the fixture's keys)."""

    title: str
    tex: str
    expected: dict[str, str]


def load_cases(path: Path = CORPUS) -> list[Case]:
    cases = []
    for _line, title, tex, expected in read_fixture_file(path):
        fields = dict(line.split(": ", 1) for line in expected.strip().splitlines())
        assert set(fields) <= KEYS and fields, title
        cases.append(Case(title, tex.strip(), fields))
    return cases


CASES = load_cases()
DRAWN = [case for case in CASES if "refused" not in case.expected]


def walk(node: MathNode) -> list[MathNode]:
    return [node, *(n for child in node.children for n in walk(child))]


def omml_text(tex: str) -> tuple[str, list[str]]:
    """The Office Math of ``tex``: its text with bracket and operator characters, and its tags."""
    root = omml_math(parse_tex(tex, display=True))
    text: list[str] = []
    tags: list[str] = []
    for element in root.iter():
        tag = etree.QName(element).localname
        tags.append(f"m:{tag}")
        if tag == "t":
            text.append(element.text or "")
        elif tag in ("chr", "begChr", "endChr"):
            text.append(element.get(f"{{{M_NS}}}val") or "")
    return "".join(text), tags


def test_the_corpus_covers_what_agents_write() -> None:
    assert len(CASES) >= 70 and len({case.title for case in CASES}) == len(CASES)
    assert len(DRAWN) >= 60


#: White space latex2mathml writes in text and operator names, read as a space by the fixtures.
SPACES = str.maketrans({"\xa0": " ", "\u2009": " "})


def assert_in_every_form(case: Case) -> None:
    """The case's formula in MathML, Office Math, the slides' linear text and the drawing, each
    holding what the fixture says (shared by the chemistry and units fixtures)."""
    formula = parse_tex(case.tex, display=True)
    tokens = "".join(node.text for node in walk(formula.root))
    omml, tags = omml_text(case.tex)
    linear = linear_text(formula)
    for part in case.expected.get("parts", "").split():
        assert part in tokens, f"MathML lost {part!r}: {tokens!r}"
        assert part in omml, f"Office Math lost {part!r}: {omml!r}"
        assert part in linear.translate(UNSCRIPT), f"linear text lost {part!r}: {linear!r}"
    markup = mathml_markup(formula, annotate=False).translate(SPACES)
    for part in case.expected.get("mathml", "").split(" | "):
        assert part in markup, markup
    for tag in case.expected.get("omml", "").split():
        assert tag in tags
    if "linear" in case.expected:
        assert linear.translate(SPACES) == case.expected["linear"]
    if "rows" in case.expected:
        table = next(node for node in walk(formula.root) if node.tag == "mtable")
        assert len(table.children) == int(case.expected["rows"])
        assert tags.count("m:mr") >= int(case.expected["rows"])
    assert "\\" not in tokens + omml + linear, "a command was left as text"
    assert draw_formula(formula).fallback == "", "the picture shows the TeX source"


@pytest.mark.parametrize("case", DRAWN, ids=[case.title for case in DRAWN])
def test_each_construct_in_every_form(case: Case) -> None:
    assert_in_every_form(case)


REFUSED = [case for case in CASES if "refused" in case.expected]


@pytest.mark.parametrize("case", REFUSED, ids=[case.title for case in REFUSED])
def test_what_is_refused_is_named(case: Case) -> None:
    with pytest.raises(MathError) as raised:
        parse_tex(case.tex, display=True)
    assert str(raised.value).startswith(case.expected["refused"])


def corpus_markdown(cases: list[Case] = DRAWN) -> str:
    """Every drawn case as a titled displayed formula (a title's ``*`` escaped)."""
    titled = ((case.title.replace("*", "\\*"), case.tex) for case in cases)
    return "".join(f"**{title}**\n\n$$\n{tex}\n$$\n\n" for title, tex in titled)


def assert_drawn_in_pdf(cases: list[Case], folder: Path, engine: str,
                        commands: tuple[str, ...]) -> None:
    """The cases' PDF from ``engine``: no math warning, every case's title in the text, and
    none of ``commands`` (a formula left as its TeX source would show them)."""
    from pypdf import PdfReader

    from renderers import render

    (result,) = render(corpus_markdown(cases), folder, name="corpus", formats=("pdf",),
                       sources_pool=[], pdf_engine=engine)
    assert not [w for w in result.warnings if "math" in w]
    assert not [d for d in result.diagnostics if d.code == "math-not-drawn"]
    text = "".join(page.extract_text() or "" for page in PdfReader(result.path).pages)
    assert all(case.title.split(":")[0] in text for case in cases)
    assert not [command for command in commands if command in text]


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_the_corpus_as_pdf_draws_every_formula(tmp_path: Path, engine: str) -> None:
    assert_drawn_in_pdf(DRAWN, tmp_path, engine, ("\\begin", "\\frac"))


@pytest.mark.slow
def test_the_corpus_as_docx_is_office_math_throughout(tmp_path: Path) -> None:
    from renderers import render

    (result,) = render(corpus_markdown(), tmp_path, name="corpus", formats=("docx",),
                       sources_pool=[])
    assert not [w for w in result.warnings if "math" in w]
    body = etree.fromstring(zipfile.ZipFile(result.path).read("word/document.xml"))
    # each formula fills its paragraph (m:oMathPara), or one with a margin tag stands between
    # a centre and a right tab stop (an m:oMath beside the tag's run), or a multline's lines
    # stand at tab stops (an m:oMath each)
    paragraphs = [p for p in body.iter(f"{{{W_NS}}}p")
                  if p.find(f".//{{{M_NS}}}oMath") is not None]
    assert len(paragraphs) == len(DRAWN)
    for case, paragraph in zip(DRAWN, paragraphs, strict=True):
        words = "".join(t.text or "" for t in paragraph.iter(f"{{{M_NS}}}t"))
        assert "\\" not in words, case.title
        if "rows" in case.expected:
            lines = len(paragraph.findall(f"{{{M_NS}}}oMath"))
            rows = max(len(list(paragraph.iter(f"{{{M_NS}}}mr"))), lines if lines > 1 else 0)
            assert rows >= int(case.expected["rows"]), case.title


@pytest.mark.libreoffice
@pytest.mark.slow
def test_libreoffice_reads_every_formula_of_the_corpus_docx(tmp_path: Path) -> None:
    """LibreOffice marks Office Math it cannot read with "¿": an aligned ``=`` opening a
    column (the rest of the cell lost), an empty cell, ``\\lim`` with a subscript, "lim sup",
    a lone ``|`` and ``\\widehat`` were such marks. Left out: ``\\left.``, written as Word
    writes it (an empty opening), which LibreOffice 7.4 cannot read (its importer since reads
    it as ``left none``)."""
    from pypdf import PdfReader

    from renderers import render
    from tests.helpers import convert_all_with_libreoffice

    cases = [case for case in DRAWN if "\\left." not in case.tex]
    (result,) = render(
        corpus_markdown(cases), tmp_path, name="corpus", formats=("docx",), sources_pool=[]
    )
    (pdf,) = convert_all_with_libreoffice([result.path], tmp_path)
    text = "".join(page.extract_text() or "" for page in PdfReader(pdf).pages)
    assert "¿" not in text
    equals = sum("=" in case.expected.get("parts", "").split() for case in cases)
    assert text.count("=") >= equals  # no aligned "=" lost
    assert "❑" not in text  # LibreOffice's mark of an empty base
