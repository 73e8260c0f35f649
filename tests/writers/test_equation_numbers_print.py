"""Numbered equations in the files that take long to make or read: the WeasyPrint PDF (the same
checks as the Typst one in ``test_equation_numbers.py``) and the DOCX as LibreOffice lays it
out (the numbers at the right margin, in order, the formulas centred)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import convert_with_libreoffice, pdf_lines
from tests.support.render import render_markdown
from tests.writers.test_equation_numbers import MARKDOWN, WIDE, check_pdf, check_widths


@pytest.mark.slow
def test_weasyprint_pdf_sets_the_numbers_at_the_right_margin_linked_from_the_text() -> None:
    check_pdf(render_markdown("pdf", MARKDOWN, []))
    check_widths(render_markdown("pdf", WIDE, []))


@pytest.mark.libreoffice
def test_libreoffice_shows_the_docx_numbers_at_the_right_margin(tmp_path: Path) -> None:
    path = tmp_path / "equations.docx"
    # the first formula again without a label: Word centres it itself (m:oMathPara)
    path.write_bytes(render_markdown("docx", MARKDOWN + "\n$$ E = mc^2 $$\n", []))
    lines = pdf_lines(convert_with_libreoffice(path, tmp_path).read_bytes())
    prose = next(line for line in lines if line[2].startswith("Energy"))
    assert prose[2] == "Energy is Equation 1; see Equations 2 and 3 and 2, and Equation 4."
    marked = [line for line in lines if line[2].endswith(("(1)", "(2)", "(P)", "(3)", "(4)"))]
    assert [line[2][-3:] for line in marked] == ["(1)", "(2)", "(P)", "(3)", "(4)"]
    rights = [line[1] for line in marked]
    assert max(rights) - min(rights) < 1.5  # one right tab stop
    assert rights[0] > 595.3 - prose[0] - 3  # A4 less the left margin: the right margin
    numbered, centred = [line for line in lines if line[2].startswith("E=mc")]
    assert numbered[2] == "E=mc2(1)" and centred[2] == "E=mc2"
    assert abs(numbered[0] - centred[0]) < 2  # the number moves the formula off centre none
