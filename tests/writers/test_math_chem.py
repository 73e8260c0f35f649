"""Chemistry as agents write it (mhchem's ``\\ce`` and ``\\pu``), case by case from
``tests/fixtures/math/chem_tex.txt``: each formula read into MathML with upright element
symbols, counts as subscripts, charges as superscripts after them and arrows as long as their
text, then written as Office Math, the slides' linear text and drawings; or refused by name."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree

import tests.hypothesis_profiles  # noqa: F401  (registers the Hypothesis profiles)
from renderers.math import MathError, parse_tex
from renderers.math.linear import linear_text
from renderers.math.mathml import mathml_markup
from renderers.math.mhchem import expand
from renderers.math.omml import M_NS
from tests.writers import test_math_corpus as corpus
from tests.writers.test_math_corpus import (
    Case,
    assert_drawn_in_pdf,
    assert_in_every_form,
    corpus_markdown,
    load_cases,
)

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "math" / "chem_tex.txt"


CASES = load_cases(CORPUS)
DRAWN = [case for case in CASES if "refused" not in case.expected]
REFUSED = [case for case in CASES if "refused" in case.expected]


def test_the_corpus_covers_what_agents_write() -> None:
    assert len({case.title for case in CASES}) == len(CASES)
    assert len(DRAWN) >= 30 and len(REFUSED) >= 3


@pytest.mark.parametrize("case", DRAWN, ids=[case.title for case in DRAWN])
def test_each_formula_in_every_form(case: Case) -> None:
    assert_in_every_form(case)


@pytest.mark.parametrize("case", REFUSED, ids=[case.title for case in REFUSED])
def test_what_is_refused_is_named(case: Case) -> None:
    corpus.test_what_is_refused_is_named(case)


def test_element_symbols_are_upright_and_variables_italic() -> None:
    markup = mathml_markup(parse_tex(r"\ce{C_nH_{2n+2}}"), annotate=False)
    assert '<mi mathvariant="normal">C</mi>' in markup and "<mi>n</mi>" in markup


def test_an_arrow_carries_its_text_over_and_under() -> None:
    """Text over and under an arrow, which the MathML gives as a stretchy → (browsers have
    no stretched ⟶); an arrow without text stays the long arrow."""
    labelled = parse_tex(r"\ce{A ->[catalyst][500 K] B}")
    assert linear_text(labelled) == "A →_(500 K)^(catalyst) B"
    assert "mpadded" not in mathml_markup(labelled, annotate=False)
    assert "⟶" in mathml_markup(parse_tex(r"\ce{A -> B}"), annotate=False)


def test_chemistry_outside_ce_is_left_alone() -> None:
    """Only ``\\ce``/``\\pu`` are rewritten: ``\\cec``, ``\\\\ce`` (a row break, then "ce")
    and the rest of the formula pass through as written."""
    assert expand(r"x^2 + \cdot") == r"x^2 + \cdot"
    assert expand(r"a \\ce") == r"a \\ce"
    assert expand(r"\cec{H2}") == r"\cec{H2}"
    assert expand(r"m_{\ce{H2O}}") == r"m_{{\mathrm{H}_{2}\mathrm{O}}}"


def test_text_in_ce_cannot_carry_markup() -> None:
    """``{…}`` in ``\\ce`` becomes ``\\text``, which latex2mathml copies unescaped: markup
    characters are refused before it sees them."""
    for tex in (r"\ce{A ->[{<b>x</b>}] B}", r"\ce{{a&b}}"):
        with pytest.raises(MathError, match="not supported"):
            parse_tex(tex)


def test_the_rewrite_grows_linearly() -> None:
    """The written TeX is a bounded multiple of the source, so the bounds checked on the
    source (length, depth) bound the converter's work too."""
    for unit in ("SO4^2- + ", "[Cu(NH3)4]^2+ ->[H2O] ", "CuSO4.5H2O <=> ", "^{14}_{6}C "):
        body = unit * (3000 // len(unit))
        assert len(expand(rf"\ce{{{body}}}")) < 12 * len(body)


#: Pieces of mhchem, its neighbours and what breaks parsers (unclosed groups, markup, ``$``).
PIECES = st.sampled_from([
    "H", "O", "Fe", "Cl", "2", "14", "+", "-", "=", "#", "^", "_", "{", "}", "(", ")", "[",
    "]", "$", ".", "*", "/", " ", "v", "->", "<=>", "<=>>", "<-", "(aq)", "\\ce{", "\\pu{",
    "\\Delta", "\\bond", "\\bond{", "~", "...", "\\text{", "<b>", "&", "%", "°", "e3",
    "mol", "\\\\",
])


@given(st.lists(PIECES, max_size=16).map("".join), st.sampled_from(["ce", "pu"]))
def test_fuzz_any_body_is_read_or_refused(body: str, command: str) -> None:
    """Whatever an agent writes in ``\\ce``/``\\pu``: a checked formula or a MathError."""
    try:
        formula = parse_tex(f"\\{command}{{{body}}}")
    except MathError:
        return
    assert "\\" not in linear_text(formula)


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_the_corpus_as_pdf_draws_every_formula(tmp_path: Path, engine: str) -> None:
    assert_drawn_in_pdf(DRAWN, tmp_path, engine, ("\\ce", "\\pu", "\\bond"))


@pytest.mark.libreoffice
@pytest.mark.slow
def test_libreoffice_reads_the_chemistry_of_the_docx(tmp_path: Path) -> None:
    from pypdf import PdfReader

    from renderers import render
    from tests.helpers import convert_all_with_libreoffice

    (result,) = render(corpus_markdown(DRAWN), tmp_path, name="chem", formats=("docx",),
                       sources_pool=[])
    assert not [w for w in result.warnings if "math" in w]
    body = etree.fromstring(zipfile.ZipFile(result.path).read("word/document.xml"))
    assert len(list(body.iter(f"{{{M_NS}}}oMathPara"))) == len(DRAWN)
    (pdf,) = convert_all_with_libreoffice([result.path], tmp_path)
    text = "".join(page.extract_text() or "" for page in PdfReader(pdf).pages)
    text = re.sub(r"\s+", " ", text)  # Word math's thin and em spaces read as one space
    assert "¿" not in text and "\\ce" not in text  # no charge or arrow lacking an operand
    for word in ("H2O", "CuSO4", "AgCl ↓", "SO4", "2−", "Fe3+", "⇌", "⟶", "kJ/mol", "μm",
                 "OCO•−", "≡"):
        assert word in text, word
