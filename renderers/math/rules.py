"""The rules of a table: ``|`` in an ``array``'s column specification and ``\\hline`` between
its rows (augmented matrices ``{cc|c}``, ruled tables ``{|l|r|}``), and their dashed forms
from the arydshln package, ``:`` and ``\\hdashline``.

latex2mathml (3.81) counted an outer bar as the line after the first column and gave
``\\hline`` one ``rowlines`` value too many or too few; no writer drew either. Here the rules
are read from the TeX instead: before converting, the counts of bars at each column edge
(:func:`renderers.math.columns.array_columns`) and of ``\\hline`` at each row edge
(:func:`row_rules`) ride into the table's first cell behind an invisible mark
(:func:`marked`); after converting, :func:`ruled` takes the mark out and puts the counts on the
``mtable`` as two attributes, ``data-columnrules`` (one :class:`Edge` per column edge, outer
edges included) and ``data-rowrules`` (one per row edge), each a count 0, 1 or 2 (``||``,
``\\hline\\hline``) with ``d`` after it when the edge is dashed (``1d``). Every writer reads
them through :func:`table_rules`: the MathML writer as ``columnlines``/``rowlines`` and cell
borders, the drawing as lines, Office Math as a bar column, side bars and bars over and under
rows, linear text as ``|``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import TYPE_CHECKING, Literal

from renderers.math.errors import MathError
from renderers.math.groups import table_marks

if TYPE_CHECKING:  # the tree's module imports this one's readers of the TeX
    from renderers.math.tex import MathNode

#: The invisible character (U+2064, invisible plus) that starts the counts in the first cell.
MARK = "\u2064"
#: Most rules drawn at one edge (``|||`` and ``\\hline\\hline\\hline`` draw two, as ``||``).
MOST = 2
_HLINE = re.compile(r"\\h(dash)?line(?![A-Za-z])")
#: Rules TeX draws that are not read: under some columns only, or inside one cell.
_PARTIAL = re.compile(r"\\(cline|vline|cdashline|hhline)(?![A-Za-z])")
_COUNTS = re.compile(
    r"^([0-2]d?(?:\.[0-2]d?)*)?;((?:\d{1,4}:[0-2]d?(?:\.\d{1,4}:[0-2]d?)*)?)"
    r"(?:;(-?\d{1,3}\.\d{3}|)/(-?\d{1,3}\.\d{3}|))?$")
#: How an edge's rules are drawn, in MathML's words (``columnlines``, ``rowlines``).
LineStyle = Literal["none", "solid", "dashed"]


@dataclass(frozen=True)
class Edge:
    """The rules at one edge between (or outside) a table's columns or rows: how many (0, 1
    or 2) and whether they are dashed. An edge is dashed only when each of its rules is
    (``::``, ``\\hdashline``); a solid one among them (``|:``) draws it solid, as writers draw
    one style per edge."""

    count: int = 0
    dashed: bool = False

    @property
    def style(self) -> LineStyle:
        return "none" if not self.count else "dashed" if self.dashed else "solid"

    @property
    def token(self) -> str:
        """The edge in the table's attribute: ``0``, ``1``, ``2``, ``1d`` or ``2d``."""
        return f"{self.count}{'d' if self.dashed and self.count else ''}"

    @classmethod
    def read(cls, token: str) -> Edge:
        """The edge a :attr:`token` stands for."""
        return cls(int(token[0]), token.endswith("d"))

    def joined(self, other: Edge) -> Edge:
        """This edge with ``other``'s rules added (at most :data:`MOST`)."""
        if not self.count:
            return other
        return Edge(min(self.count + other.count, MOST), self.dashed and other.dashed)


NO_RULE = Edge()


@dataclass(frozen=True)
class TableRules:
    """The rules a table draws at each column edge, left to right, and at each row edge, top
    to bottom; the outer edges are the first and last of each."""

    columns: tuple[Edge, ...]
    rows: tuple[Edge, ...]

    def inner_columns(self) -> tuple[Edge, ...]:
        """The counts between two columns."""
        return self.columns[1:-1]

    def inner_rows(self) -> tuple[Edge, ...]:
        """The counts between two rows."""
        return self.rows[1:-1]


def row_rules(body: str) -> tuple[str, dict[int, Edge]]:
    """``body`` of a table without its ``\\hline``s and ``\\hdashline``s, and the rules that
    stood at each row edge (0: above the first row, ``n``: after the ``n``-th ``\\\\``); those
    of a table nested in it are left to that table. ``\\cline`` and ``\\vline`` are
    refused by name (latex2mathml called them unknown commands)."""
    counts: dict[int, Edge] = {}
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
            counts[edge] = counts.get(edge, NO_RULE).joined(Edge(1, hline.group(1) is not None))
            out.append(body[pos:index])
            pos = hline.end()
        elif body.startswith("\\\\", index):
            edge += 1
    out.append(body[pos:])
    return "".join(out), counts


def marked(columns: tuple[Edge, ...], rows: dict[int, Edge],
           margins: tuple[float | None, float | None] = (None, None)) -> str:
    """The TeX that carries the rules, and the margins an ``@{…}`` sets at the table's sides
    (:func:`~renderers.math.columns.array_columns`), into its first cell ("" when it has
    neither)."""
    ruled = any(edge.count for edge in columns)
    if not ruled and not rows and margins == (None, None):
        return ""
    shown_columns = ".".join(edge.token for edge in columns) if ruled else ""
    shown_rows = ".".join(f"{index}:{edge.token}" for index, edge in sorted(rows.items()))
    shown = "" if margins == (None, None) else ";" + "/".join(
        "" if margin is None else f"{max(min(margin, 99.0), -99.0):.3f}" for margin in margins)
    return f"\\text{{{MARK}{shown_columns};{shown_rows}{shown}}}"


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
    columns = list(map(Edge.read, found.group(1).split("."))) if found.group(1) else []
    columns = (columns + [NO_RULE] * (width + 1))[: width + 1]
    between = [NO_RULE] * (len(rows) + 1)
    for pair in filter(None, found.group(2).split(".")):
        index, token = pair.split(":")
        at = min(int(index), len(rows))
        between[at] = between[at].joined(Edge.read(token))
    attrs: list[tuple[str, str]] = []
    for name, shown in (("data-columnrules", columns), ("data-rowrules", between)):
        if any(edge.count for edge in shown):
            attrs.append((name, " ".join(edge.token for edge in shown)))
    if found.group(3) is not None:
        sides = (found.group(3), found.group(4))
        attrs.append(("data-margins", " ".join(f"{side}em" if side else "-" for side in sides)))
    return tuple(attrs)


def edges(value: str | None, size: int) -> tuple[Edge, ...]:
    """The edges of a table's rule attribute (``size`` of none when it has no such rules)."""
    return tuple(map(Edge.read, value.split())) if value else (NO_RULE,) * size


def table_rules(node: MathNode) -> TableRules | None:
    """The rules of the table ``node`` (None when it draws none or is no table)."""
    if node.tag != "mtable":
        return None
    columns, rows = node.attr("data-columnrules"), node.attr("data-rowrules")
    if not columns and not rows:
        return None
    width = max((len(row.children) for row in node.children), default=0)
    return TableRules(edges(columns, width + 1), edges(rows, len(node.children) + 1))


#: The bar a rule between two columns is drawn as where a table has no rules (one, two,
#: dashed). One rule is U+01C0, a plain bar that LibreOffice 7.4 sets on the row's baseline: it
#: read "|" as its "or" (∨, or "¿" alone), and "∣" (U+2223) or "│" (U+2502) lifted the cells
#: after it. A dashed one is U+254E (╎, two dashes a line), which it sets as U+01C0 and which
#: of the dashed bars (┆ ┊ ⋮) looks most like arydshln's long dashes; linear text uses these too.
BARS = {Edge(1): "\u01c0", Edge(2): "‖", Edge(1, True): "\u254e", Edge(2, True): "\u254e\u254e"}


def bar_columns(table: MathNode, rules: TableRules) -> MathNode:
    """``table`` without its rule attributes, a column of bars in each row at each inner
    column rule (:data:`BARS`): for a writer whose tables have no rules (Office Math)."""
    rows = []
    for row in table.children:
        cells: list[MathNode] = []
        for index, cell in enumerate(row.children):
            edge = rules.columns[index] if 0 < index < len(rules.columns) - 1 else NO_RULE
            if edge.count:
                mark = replace(cell, tag="mo", attrs=(("stretchy", "false"),), children=(),
                               text=BARS[edge])
                bar = replace(cell, attrs=(("columnalign", "center"),), text="",
                              children=(mark,))
                cells.append(bar)
            cells.append(cell)
        rows.append(replace(row, children=tuple(cells)))
    attrs = tuple(attr for attr in table.attrs if not attr[0].startswith("data-"))
    return replace(table, attrs=attrs, children=tuple(rows))


#: The element holding a part of a table with rules over and under it (its ``over`` and
#: ``under`` counts), for Office Math (``m:bar``); not MathML.
RULED_CELL = "x-ruled"


def barred_rows(table: MathNode, rules: TableRules,
                widths: Callable[[MathNode], Sequence[Sequence[float]]]) -> MathNode:
    """``table`` (its bar columns in, :func:`bar_columns`) with its row rules as bars, for
    Office Math, which has no rule in a matrix but a bar over or under anything: the rows
    between two rules are a matrix of their own, under a bar for each rule below them (over
    one for a rule above the first row), and these matrices are the rows of a one-column
    one. A bar under one row's cells would stop at each column gap (LibreOffice keeps its own
    gap, whatever ``m:cGp`` says); under a whole matrix it runs across. So that the columns
    of the parts line up, each cell is filled out with space to its column's widest
    (``widths`` measures each cell of a table in em, as the drawing sets it; Word's and
    LibreOffice's fonts differ from the drawing's by a little). A dashed rule is a solid bar
    (Office Math's bar has no dashes)."""
    rows = table.children
    columns = max((len(row.children) for row in rows), default=0)
    measured = widths(table)
    widest = [max((row[index] for row in measured if index < len(row)), default=0.0)
              for index in range(columns)]
    filled = [replace(row, children=tuple(
        replace(cell, children=_filled(cell, widest[index] - measured[number][index]))
        for index, cell in enumerate(row.children))) for number, row in enumerate(rows)]
    cuts = [0, *(edge for edge in range(1, len(rows)) if rules.rows[edge].count), len(rows)]
    parts = []
    for first, last in pairwise(cuts):
        over = rules.rows[0].count if first == 0 else 0
        part = replace(table, children=tuple(filled[first:last]))
        attrs = (("over", str(over)), ("under", str(rules.rows[last].count)))
        ruled_part = replace(table, tag=RULED_CELL, attrs=attrs, children=(part,), text="")
        cell = replace(table, tag="mtd", attrs=(), children=(ruled_part,), text="")
        parts.append(replace(table, tag="mtr", attrs=(), children=(cell,), text=""))
    return replace(table, attrs=(), children=tuple(parts))


def _filled(cell: MathNode, fill: float) -> tuple[MathNode, ...]:
    """The content of ``cell`` with ``fill`` em of space on the side away from its
    alignment (half on each side of a centred one)."""
    if fill < 0.05:
        return cell.children
    side = cell.attr("columnalign")
    before = fill if side == "right" else 0.0 if side == "left" else fill / 2
    spaces = [replace(cell, tag="mspace", attrs=(("width", f"{em:.3f}em"),), children=(),
                      text="") for em in (before, fill - before)]
    return tuple(part for part in (spaces[0], *cell.children, spaces[1])
                 if part.tag != "mspace" or part.attr("width") != "0.000em")
