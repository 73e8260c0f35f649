"""An ``array``'s column specification as the array package writes it (``@{}cc@{}``,
``p{2cm}``, ``*{3}{c}``) is read as its columns: their alignments and the rules between them in
the checked tree, no "@" or "2cm" in a cell; what would put material in each row, or expand
past the bound, is refused by name. The rules (``|`` at each column edge, outer ones and
``||`` included) are counted on the table (``data-columnrules``)."""

from __future__ import annotations

import pytest

from renderers.math import MathNode, parse_tex
from renderers.math.columns import MAX_COLUMNS
from renderers.math.svg import draw_formula
from renderers.math.tex import tex_error


def _nodes(node: MathNode) -> list[MathNode]:
    return [node, *(n for child in node.children for n in _nodes(child))]


def _table(tex: str) -> tuple[list[str], str, str]:
    """The first table of ``tex``: its first row's alignments, its rules and its text."""
    nodes = _nodes(parse_tex(tex, display=True).root)
    table = next(node for node in nodes if node.tag == "mtable")
    first_row = table.children[0]
    text = "".join(node.text for node in _nodes(table))
    alignments = [cell.attr("columnalign") for cell in first_row.children]
    return alignments, table.attr("data-columnrules"), text


#: Specifications, with the columns' alignments and rules (bars at each edge) they read as.
SPECIFICATIONS = {
    "{@{}cc@{}}": (["center", "center"], ""),
    r"{@{\,}l@{\quad}r@{}}": (["left", "right"], ""),
    r"{!{\;}c>{}c<{}}": (["center", "center"], ""),
    "{p{2cm}m{1in}b{3em}}": (["left", "left", "left"], ""),
    "{*{3}{c}}": (["center", "center", "center"], ""),
    "{r*{2}{|c}}": (["right", "center", "center"], "0 1 1 0"),
    "{c|c}": (["center", "center"], "0 1 0"),
    "{cc|c}": (["center", "center", "center"], "0 0 1 0"),
    # latex2mathml read a bar outside the columns as the line after the first column
    "{|cc|}": (["center", "center"], "1 0 1"),
    "{|c||c|}": (["center", "center"], "1 2 1"),
    "{|c|||c}": (["center", "center"], "1 2 0"),
    "[t]{ l c }": (["left", "center"], ""),
}


@pytest.mark.parametrize(("spec", "expected"), SPECIFICATIONS.items(), ids=SPECIFICATIONS)
def test_an_array_specification_reads_as_its_columns(spec: str, expected: tuple[list[str], str],
                                                     ) -> None:
    columns = len(expected[0])
    row = " & ".join("xyzw"[:columns])
    alignments, lines, text = _table(rf"\begin{{array}}{spec} {row} \\ {row} \end{{array}}")
    assert (alignments, lines) == expected
    assert text == "xyzw"[:columns] * 2  # nothing of the specification in a cell


#: Specifications refused, and the start of the reason.
REFUSED = {
    "{@{,}cc}": "array: the column specification's '@{,}' puts material in each row",
    r"{>{\color{red}}c}": "array: the column specification's '>{\\color{red}}'",
    "{cx}": "array: the column specification's 'x' cannot be read (accepted: l, c, r, |",
    "{*{1000000}{c}}": f"array: more than {MAX_COLUMNS} columns",
    "{*{n}{c}}": "array: '*{n}' repeats a column a number of times; 'n' is no number",
    "{p}": "array: the column specification's 'p' takes a {…} argument",
    "{||}": "array: the column specification has no column",
}


@pytest.mark.parametrize(("spec", "reason"), REFUSED.items(), ids=REFUSED)
def test_a_specification_that_cannot_be_read_is_refused_by_name(spec: str, reason: str) -> None:
    error = tex_error(rf"\begin{{array}}{spec} a \end{{array}}", display=True)
    assert error is not None and error.startswith(reason), error


def test_bars_alone_repeated_are_read_once() -> None:
    assert _table(r"\begin{array}{c*{1000000}{|}c} a & b \end{array}")[:2] == (
        ["center", "center"], "0 1 0")


def test_a_style_before_a_column_sets_each_of_its_cells_in_it() -> None:
    nodes = _nodes(parse_tex(r"\begin{array}{>{\displaystyle}c|>{\scriptstyle}c c}"
                             r" a & b & c \\ \hline d & & f \end{array}", display=True).root)
    table = next(node for node in nodes if node.tag == "mtable")

    def style(cell: MathNode) -> tuple[str, str] | None:
        found = [node for node in _nodes(cell) if node.tag == "mstyle"]
        return (found[0].attr("displaystyle"), found[0].attr("scriptlevel")) if found else None

    styles = [[style(cell) for cell in row.children] for row in table.children]
    # the empty cell is left as it is
    assert styles == [[("true", "0"), ("false", "1"), None], [("true", "0"), None, None]]
    assert (table.attr("data-columnrules"), table.attr("data-rowrules")) == ("0 1 0 0", "0 1 0")


#: Specifications with an ``@{…}`` at a side, and the margins the drawing keeps there.
MARGINS = {
    "{@{}cc@{}}": "0.000em 0.000em",
    r"{@{\quad}c@{\,}c}": "1.000em -",
    r"{c@{\hspace{5pt}}}": "- 0.500em",
    "{|@{}c|}": "0.000em -",
    "{@{}|c|}": "",  # outside the rule: no space of the drawing's changes
    "{cc}": "",
}


@pytest.mark.parametrize(("spec", "margins"), MARGINS.items(), ids=MARGINS)
def test_an_insert_at_a_side_sets_that_margin(spec: str, margins: str) -> None:
    nodes = _nodes(parse_tex(rf"\begin{{array}}{spec} a & b \end{{array}}", display=True).root)
    table = next(node for node in nodes if node.tag == "mtable")
    assert table.attr("data-margins") == margins


def test_the_drawing_takes_an_arrays_margin_off_for_an_empty_insert() -> None:
    plain, bare, left = (draw_formula(parse_tex(
        rf"\left(\begin{{array}}{spec} 1 & 2 \end{{array}}\right)", True))
        for spec in ("{cc}", "{@{}cc@{}}", "{@{}cc}"))
    assert plain.width - bare.width == pytest.approx(1.0, abs=0.01)  # TeX's 5 pt each side
    assert plain.width - left.width == pytest.approx(0.5, abs=0.01)
    ruled = draw_formula(parse_tex(r"\begin{array}{|@{}c|} 1 \end{array}", True))
    ruled_plain = draw_formula(parse_tex(r"\begin{array}{|c|} 1 \end{array}", True))
    assert ruled_plain.width - ruled.width == pytest.approx(0.5, abs=0.01)
