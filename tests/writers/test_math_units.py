"""siunitx quantities and ``\\intertext`` rows, case by case from
``tests/fixtures/math/units_tex.txt``: each is read, drawn and written in every form a format
shows (the checks of the agent corpus, :mod:`tests.writers.test_math_corpus`), or refused by
name; then the PDF of both engines and the Word file as LibreOffice lays it out."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree

import tests.hypothesis_profiles  # noqa: F401  (registers the Hypothesis profiles)
from renderers.math import MathError, parse_tex
from renderers.math.intertext import MARK
from renderers.math.linear import linear_text
from renderers.math.siunitx import expand
from renderers.math.spans import drawable
from tests.writers import test_math_corpus as corpus

CASES = corpus.load_cases(Path(__file__).resolve().parents[1] / "fixtures" / "math"
                          / "units_tex.txt")
DRAWN = [case for case in CASES if "refused" not in case.expected]
REFUSED = [case for case in CASES if "refused" in case.expected]


def test_the_fixture_covers_what_agents_write() -> None:
    assert len(DRAWN) >= 30 and len({case.title for case in CASES}) == len(CASES)
    assert sum("intertext" in case.tex for case in DRAWN) >= 4


#: The ``\intertext`` cases draw tables of tables (about 1 s each): slow, out of the fast loop.
EVERY_FORM = [pytest.param(case, marks=pytest.mark.slow) if "intertext" in case.tex else case
              for case in DRAWN]


@pytest.mark.parametrize("case", EVERY_FORM, ids=[case.title for case in DRAWN])
def test_each_quantity_in_every_form(case: corpus.Case) -> None:
    corpus.assert_in_every_form(case)


@pytest.mark.parametrize("case", REFUSED, ids=[case.title for case in REFUSED])
def test_what_is_refused_is_named(case: corpus.Case) -> None:
    corpus.test_what_is_refused_is_named(case)


def test_units_are_upright_text_and_numbers_are_numbers() -> None:
    """Each unit symbol one upright run (MathML text; in Word a normal-text run, which
    LibreOffice, unlike ``\\mathrm`` letters, also sets upright), its power a script."""
    formula = parse_tex(r"\SI{9.81}{\kilo\gram\metre\per\second\squared}")
    tokens = [node for node in corpus.walk(formula.root) if node.text]
    assert [node.text for node in tokens if node.tag == "mn"] == ["9.81", "2"]  # 2: the power
    assert [node.text for node in tokens if node.tag == "mtext"] == ["kg", "m", "s"]
    assert not [node for node in tokens if node.tag == "mi"]
    _, tags = corpus.omml_text(formula.tex)
    assert tags.count("m:nor") == 3 + 3  # three units, and the thin spaces before each


def test_the_expansion_grows_linearly_with_the_input() -> None:
    """Each command reads its arguments once: a formula of many quantities expands to a
    bounded multiple of its length (no re-scanning)."""
    one = r"\SI{12345.678e-9}{\kilo\gram\metre\per\second\squared} + "
    for count in (10, 1000):
        assert len(expand(one * count)) <= 6 * len(one * count)


#: Pieces of siunitx's numbers, lists, products and complex numbers, and what breaks parsers.
NUMBER_PIECES = st.sampled_from([
    "1", "25", "0", ".", ",", "+", "-", "i", "j", "e", "e-3", ":", ";", "x", " ", "{", "}",
    "\\pm", "+-", "(", ")", "<", "\\,", "ii",
])


@given(st.lists(NUMBER_PIECES, max_size=12).map("".join),
       st.sampled_from(["numlist", "qtylist", "numproduct", "qtyproduct", "complexnum",
                        "complexqty"]))
def test_fuzz_any_number_argument_is_read_or_refused(body: str, command: str) -> None:
    """Whatever an agent writes as the numbers: a checked formula or a MathError."""
    unit = "{\\ohm}" if command.startswith(("qty", "complexqty")) else ""
    try:
        formula = parse_tex(f"\\{command}{{{body}}}{unit}")
    except MathError:
        return
    assert "\\" not in linear_text(formula)


def test_a_text_row_drawn_keeps_the_alignment() -> None:
    """ziamath ignores ``columnspan``: the drawing stacks the runs of aligned rows and the text
    rows in one left-aligned column, each run holding a flat row as wide as the other runs'
    cells, so every run has the same column widths."""
    formula = parse_tex(r"\begin{align*} a &= b \\ \intertext{so} cc &= d \\ e &= f"
                        r"\end{align*}", display=True)
    stacked = next(node for node in corpus.walk(drawable(formula).root) if node.tag == "mtable")
    runs = [row.children[0].children[0] for row in stacked.children]
    assert [run.tag for run in runs] == ["mtable", "mtext", "mtable"]
    first, _, second = runs
    assert len(first.children) == 2 and len(second.children) == 3  # each with its width row
    width_row = first.children[-1]
    assert [cell.children[0].tag for cell in width_row.children] == ["mpadded", "mpadded"]
    assert MARK not in "".join(node.text for node in corpus.walk(formula.root))


def units_markdown() -> str:
    return corpus.corpus_markdown(DRAWN)


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_the_quantities_as_pdf_are_drawn(tmp_path: Path, engine: str) -> None:
    corpus.assert_drawn_in_pdf(DRAWN, tmp_path, engine,
                               ("\\SI", "\\intertext", "\\qty", "\\num", "\\complex"))


@pytest.mark.libreoffice
@pytest.mark.slow
def test_libreoffice_shows_the_quantities_of_the_docx(tmp_path: Path) -> None:
    from pypdf import PdfReader

    from renderers import render
    from tests.helpers import convert_all_with_libreoffice

    (result,) = render(units_markdown(), tmp_path, name="units", formats=("docx",),
                       sources_pool=[])
    assert not [w for w in result.warnings if "math" in w]
    body = etree.fromstring(zipfile.ZipFile(result.path).read("word/document.xml"))
    words = "".join(t.text or "" for t in body.iter(f"{{{corpus.M_NS}}}t"))
    assert "\\" not in words and MARK not in words
    (pdf,) = convert_all_with_libreoffice([result.path], tmp_path)
    text = "".join(page.extract_text() or "" for page in PdfReader(pdf).pages)
    assert "¿" not in text
    text = text.replace("\xa0", " ")  # latex2mathml writes the spaces of \text unbreakable
    for shown in ("9.81", "kg", "°C", "Ω", "µm", "GHz", "which expands to", "6.022", "∠45",
                  " and "):
        assert shown in text, shown
