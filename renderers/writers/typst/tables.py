"""A table of the document model as a Typst ``table``: the report's style, the header row
repeated on every page, columns sized by their content, each cell in its own direction."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from renderers.document import Alignment, Cite, Table, TableCell, plain_text, walk_inlines
from renderers.text import text_direction
from renderers.writers.typst.math import numbered_anchor_of
from renderers.writers.typst.parts import array, call, content, label_call, labelled, optional

if TYPE_CHECKING:
    from renderers.writers.typst.markup import _Markup

_ALIGN: dict[str, str] = {"left": "left", "center": "center", "right": "right", "default": "start"}
#: Bounds of a column's share of the table width, in characters of its longest cell.
_MIN_WEIGHT, _MAX_WEIGHT = 4, 40
#: A column whose cells are all this short takes the width of its content.
_SHORT = 12


def column_widths(rows: Sequence[Sequence[TableCell]], columns: int) -> list[str]:
    """Each column's width: its content's (``auto``) if every cell is short, else a share of
    the rest in proportion to its longest cell text, bounded.

    The report's tables are 100 % wide and a browser sizes their columns by content: short
    columns (numbers, a citation, one word) get the width of their content, and the others
    share the rest. ``fr`` columns by text length come close without measuring long cells, but
    a short column's share may be narrower than its longest word in bold (a header); measuring
    those few cells is cheap. A table of short columns only is shared out, to stay full width.
    """
    longest = [
        max((shown_length(row[index]) for row in rows if index < len(row)), default=0)
        for index in range(columns)
    ]
    if all(length <= _SHORT for length in longest):
        return [f"{max(_MIN_WEIGHT, length)}fr" for length in longest]
    return [
        "auto" if length <= _SHORT else f"{min(_MAX_WEIGHT, length)}fr" for length in longest
    ]


def shown_length(cell: TableCell) -> int:
    """How many characters ``cell`` shows: its text and its citations, whose in-line forms
    (a style's "(IEA, 2025)", a linked title) can be the longest text of a column."""
    length = len(plain_text(cell.children))
    for node in walk_inlines(cell.children):
        if isinstance(node, Cite):
            shown = plain_text(node.children) if node.children else ",".join(map(str, node.numbers))
            length += len(shown)
    return length


def table_aligns(aligns: Sequence[Alignment], columns: int) -> list[str]:
    """Typst alignments per column (``start`` where the table does not say)."""
    return [_ALIGN[aligns[i]] if i < len(aligns) else "start" for i in range(columns)]


class TableMarkup:
    """Writes one table with the inline writer of the document (citations, notes, links)."""

    def __init__(self, writer: _Markup) -> None:
        self.writer = writer

    def table(self, table: Table) -> str:
        writer = self.writer
        rows = [list(r) for r in table.rows]
        header = list(table.header)
        columns = max((len(r) for r in (header, *rows)), default=0)
        if columns == 0:
            return writer.caption(table.label, table.number, table.caption)
        aligns = table_aligns(table.aligns, columns)
        args = [
            f"columns: {array(column_widths([header, *rows], columns))}",
            f"align: {array(aligns)}",
        ]
        anchors: list[str] = []
        if header:
            writer.header_anchors = anchors
            try:
                cells = [content(f"#strong[{c}];") for c in self.cells(header, columns, aligns)]
            finally:
                writer.header_anchors = None
            args.append("fill: (_, y) => if y == 0 { header-fill }")
            args.append(f"table.header(repeat: true, {', '.join(cells)})")
        args += [content(cell) for row in rows for cell in self.cells(row, columns, aligns)]
        body = f"table({', '.join(args)})"
        placed = "".join(f"#metadata(none){label_call(anchor)};" for anchor in anchors)
        caption = writer.caption(table.label, table.number, table.caption)
        block = call("table-block", body, optional(caption))
        return placed + labelled(block, numbered_anchor_of(table.label, table.number))

    def cells(self, cells: list[TableCell], columns: int, aligns: list[str]) -> list[str]:
        """The markup of each cell of a row, padded (or cut) to ``columns`` cells; a cell whose
        text runs the other way than the table's is set in its own direction."""
        writer = self.writer
        padded = cells + [TableCell(())] * (columns - len(cells))
        out: list[str] = []
        writer.block_depth += 1
        try:
            for index, cell in enumerate(padded[:columns]):
                with writer.directed(text_direction(plain_text(cell.children))) as direction:
                    markup = writer.inlines(cell.children)
                if direction is not None and markup:
                    function = "directed-cell" if aligns[index] == "start" else "directed"
                    markup = call(function, direction, content(markup))
                out.append(markup)
        finally:
            writer.block_depth -= 1
        return out
