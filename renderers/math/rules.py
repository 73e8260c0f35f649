"""The rules of a table: ``|`` in an ``array``'s column specification and ``\\hline`` between
its rows (augmented matrices ``{cc|c}``, ruled tables ``{|l|r|}``).

latex2mathml (3.81) counted an outer bar as the line after the first column and gave
``\\hline`` one ``rowlines`` value too many or too few; no writer drew either. Here the rules
are read from the TeX instead: before converting, the counts of bars at each column edge
(:func:`renderers.math.columns.array_columns`) and of ``\\hline`` at each row edge
(:func:`row_rules`) ride into the table's first cell behind an invisible mark
(:func:`marked`); after converting, :func:`ruled` takes the mark out and puts the counts on the
``mtable`` as two attributes, ``data-columnrules`` (one count per column edge, outer edges
included) and ``data-rowrules`` (one per row edge), each count 0, 1 or 2 (``||``,
``\\hline\\hline``). Every writer reads them through :func:`table_rules`: the MathML writer as
``columnlines``/``rowlines``/``frame`` and cell borders, the drawing as lines, Office Math as a
bar column and a border box, linear text as ``|``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from renderers.math.errors import MathError
from renderers.math.groups import table_marks

if TYPE_CHECKING:  # the tree's module imports this one's readers of the TeX
    from renderers.math.tex import MathNode

#: The invisible character (U+2064, invisible plus) that starts the counts in the first cell.
MARK = "\u2064"
#: Most rules drawn at one edge (``|||`` and ``\\hline\\hline\\hline`` draw two, as ``||``).
MOST = 2
_HLINE = re.compile(r"\\h(?:dash)?line(?![A-Za-z])")
#: Rules TeX draws that are not read: under some columns only, or inside one cell.
_PARTIAL = re.compile(r"\\(cline|vline|cdashline|hhline)(?![A-Za-z])")
_COUNTS = re.compile(r"^([0-2](?:\.[0-2])*)?;((?:\d{1,4}:[0-2](?:\.\d{1,4}:[0-2])*)?)$")


@dataclass(frozen=True)
class TableRules:
    """How many rules (0, 1 or 2) a table draws at each column edge, left to right, and at each
    row edge, top to bottom; the outer edges are the first and last of each."""

    columns: tuple[int, ...]
    rows: tuple[int, ...]

    def inner_columns(self) -> tuple[int, ...]:
        """The counts between two columns."""
        return self.columns[1:-1]

    def inner_rows(self) -> tuple[int, ...]:
        """The counts between two rows."""
        return self.rows[1:-1]


def row_rules(body: str) -> tuple[str, dict[int, int]]:
    """``body`` of a table without its ``\\hline``s (and ``\\hdashline``s, drawn solid), and
    how many stood at each row edge (0: above the first row, ``n``: after the ``n``-th ``\\\\``);
    those of a table nested in it are left to that table. ``\\cline`` and ``\\vline`` are
    refused by name (latex2mathml called them unknown commands)."""
    counts: dict[int, int] = {}
    out: list[str] = []
    edge = pos = 0
    for index, depth in table_marks(body):
        if body[index] != "\\":
            continue
        partial = _PARTIAL.match(body, index)
        if partial is not None:
            raise MathError(f"a table's \\{partial.group(1)} (a rule across some columns or "
                            "inside a cell) is not supported (accepted: \\hline between "
                            "rows, | in an array's column specification)")
        if depth:
            continue
        hline = _HLINE.match(body, index)
        if hline is not None:
            counts[edge] = min(counts.get(edge, 0) + 1, MOST)
            out.append(body[pos:index])
            pos = hline.end()
        elif body.startswith("\\\\", index):
            edge += 1
    out.append(body[pos:])
    return "".join(out), counts


def marked(columns: tuple[int, ...], rows: dict[int, int]) -> str:
    """The TeX that carries the counts into the table's first cell ("" when there is no rule)."""
    if not any(columns) and not rows:
        return ""
    shown_columns = ".".join(map(str, columns)) if any(columns) else ""
    shown_rows = ".".join(f"{edge}:{count}" for edge, count in sorted(rows.items()))
    return f"\\text{{{MARK}{shown_columns};{shown_rows}}}"


def ruled(node: MathNode) -> MathNode:
    """``node`` with each marked table's mark taken out and its counts as attributes."""
    children = tuple(ruled(child) for child in node.children)
    if node.tag == "mtable":
        found = _mark(children)
        if found is not None:
            mark, rows = found
            return replace(node, attrs=node.attrs + _attributes(mark, rows), children=rows)
    return node if children == node.children else replace(node, children=children)


def _mark(rows: tuple[MathNode, ...]) -> tuple[str, tuple[MathNode, ...]] | None:
    """The counts of the mark starting the first cell, and the rows without it."""
    if not rows or not rows[0].children:
        return None
    first_row = rows[0]
    cell = first_row.children[0]
    token = cell.children[0] if cell.children else None
    if token is None or token.tag != "mtext" or not token.text.startswith(MARK):
        return None
    cell = replace(cell, children=cell.children[1:])
    first_row = replace(first_row, children=(cell, *first_row.children[1:]))
    return token.text[len(MARK):], (first_row, *rows[1:])


def _attributes(mark: str, rows: tuple[MathNode, ...]) -> tuple[tuple[str, str], ...]:
    """The table's rule attributes from the mark's counts, fitted to its columns and rows."""
    found = _COUNTS.match(mark)
    if found is None:
        return ()
    width = max((len(row.children) for row in rows), default=0)
    columns = [int(count) for count in found.group(1).split(".")] if found.group(1) else []
    columns = (columns + [0] * (width + 1))[: width + 1]
    edges = [0] * (len(rows) + 1)
    for pair in filter(None, found.group(2).split(".")):
        edge, count = map(int, pair.split(":"))
        edges[min(edge, len(rows))] = min(edges[min(edge, len(rows))] + count, MOST)
    attrs: list[tuple[str, str]] = []
    if any(columns):
        attrs.append(("data-columnrules", " ".join(map(str, columns))))
    if any(edges):
        attrs.append(("data-rowrules", " ".join(map(str, edges))))
    return tuple(attrs)


def table_rules(node: MathNode) -> TableRules | None:
    """The rules of the table ``node`` (None when it draws none or is no table)."""
    if node.tag != "mtable":
        return None
    columns, rows = node.attr("data-columnrules"), node.attr("data-rowrules")
    if not columns and not rows:
        return None
    width = max((len(row.children) for row in node.children), default=0)
    return TableRules(
        tuple(map(int, columns.split())) if columns else (0,) * (width + 1),
        tuple(map(int, rows.split())) if rows else (0,) * (len(node.children) + 1),
    )


#: The bar a rule between two columns is drawn as where a table has no rules (one, two). One
#: rule is U+01C0, a plain bar that LibreOffice 7.4 sets on the row's baseline: it read "|" as
#: its "or" (∨, or "¿" alone), and "∣" (U+2223) or "│" (U+2502) lifted the cells after it.
BARS = {1: "\u01c0", 2: "‖"}


def bar_columns(table: MathNode, rules: TableRules) -> MathNode:
    """``table`` without its rule attributes, a column of bars in each row at each inner
    column rule (:data:`BARS`): for a writer whose tables have no rules (Office Math)."""
    rows = []
    for row in table.children:
        cells: list[MathNode] = []
        for index, cell in enumerate(row.children):
            count = rules.columns[index] if 0 < index < len(rules.columns) - 1 else 0
            if count:
                mark = replace(cell, tag="mo", attrs=(("stretchy", "false"),), children=(),
                               text=BARS[count])
                bar = replace(cell, attrs=(("columnalign", "center"),), text="",
                              children=(mark,))
                cells.append(bar)
            cells.append(cell)
        rows.append(replace(row, children=tuple(cells)))
    attrs = tuple(attr for attr in table.attrs if not attr[0].startswith("data-"))
    return replace(table, attrs=attrs, children=tuple(rows))
