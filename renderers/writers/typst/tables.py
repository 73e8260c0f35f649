"""A table of the document model as a Typst ``table``: the report's style, the header row
repeated on every page, columns sized by their content as CSS's automatic table layout sizes
them (``report-table`` in report.typ), each cell in its own direction."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import cache
from typing import TYPE_CHECKING, Literal

from renderers.document import (
    Alignment,
    Cite,
    Code,
    Emph,
    Inline,
    LineBreak,
    Link,
    SoftBreak,
    Strike,
    Strong,
    Styled,
    Table,
    TableCell,
    Text,
    plain_text,
    walk_inlines,
)
from renderers.text import CJK_CLASS, LONG_WORD, needs_cjk, text_direction
from renderers.writers.typst.escape import SOFT_HYPHEN, string_literal
from renderers.writers.typst.math import numbered_anchor_of
from renderers.writers.typst.parts import array, call, content, label_call, labelled, optional

if TYPE_CHECKING:
    from renderers.writers.typst.markup import _Markup

_ALIGN: dict[str, str] = {"left": "left", "center": "center", "right": "right", "default": "start"}
#: How a piece of a cell's text is set, so that Typst measures it in its face.
PieceLook = Literal["plain", "strong", "code"]
#: The cells of each column with the longest text (and the longest pieces of its text) that
#: Typst measures for its max-content (and min-content) width.
CELLS_PER_COLUMN = PIECES_PER_COLUMN = 4
#: Where a line may break inside a word: after a dash, after a hyphen but before a digit,
#: after a soft hyphen (where the line shows a hyphen instead).
_BREAK_IN_WORD = re.compile(r"(?<=[–—\u00ad])|(?<=-)(?=\D)")


@cache
def _cjk_char() -> re.Pattern[str]:
    """A CJK character, kept by a split: a line may break before and after each. Compiled for
    the first piece with one (its Unicode class takes milliseconds to compile)."""
    return re.compile(f"({CJK_CLASS})")


def widest_cells(rows: Sequence[Sequence[TableCell]], columns: int) -> list[str]:
    """Per column, a Typst array of the indices (row by row, among ``rows``) of the cells that
    ``report-table`` measures for the column's max-content width: those whose text is longest.

    Measuring every cell would cost Typst about a second layout of the table (three times the
    compile time and twice the memory of a large cited table); the longest texts are the widest
    but for a few percent of glyph widths, so a handful per column finds the widest.
    """
    widest: list[str] = []
    for column in range(columns):
        lengths = {index: shown_length(row[column])
                   for index, row in enumerate(rows) if column < len(row)}
        longest = sorted(lengths, key=lambda index: -lengths[index])[:CELLS_PER_COLUMN]
        widest.append(array(str(index * columns + column) for index in longest))
    return widest


def shown_length(cell: TableCell) -> int:
    """How many characters ``cell`` shows: its text and its citations, whose in-line forms
    (a style's "(IEA, 2025)", a linked title) can be the longest text of a column."""
    length = len(plain_text(cell.children))
    for node in walk_inlines(cell.children):
        if isinstance(node, Cite):
            shown = plain_text(node.children) if node.children else ",".join(map(str, node.numbers))
            length += len(shown)
    return length


def column_pieces(rows: Sequence[Sequence[TableCell]], columns: int, *, header: bool) -> list[str]:
    """Per column, a Typst array of its longest unbreakable pieces of text, each in its look: the
    pieces ``report-table`` measures for the column's min-content width (CSS's auto layout gives
    a column at least that much). The first row is bold when the table has a ``header``.

    Typst cannot measure a cell's narrowest layout, so its widest pieces are named here: words
    between spaces and after dashes, each CJK character on its own, and no long word (of
    :data:`~renderers.text.LONG_WORD` characters: it may break anywhere in both engines).
    """
    found: list[dict[tuple[str, PieceLook], None]] = [{} for _ in range(columns)]
    for index, row in enumerate(rows):
        look: PieceLook = "strong" if header and index == 0 else "plain"
        for column, cell in enumerate(row[:columns]):
            for text, run_look in _joined(_runs(cell.children, look)):
                for piece in _pieces(text):
                    found[column][piece, run_look] = None
    return [
        array(_piece_markup(text, look)
              for text, look in sorted(pieces, key=lambda item: -len(item[0]))[:PIECES_PER_COLUMN])
        for pieces in found
    ]


def _runs(nodes: Sequence[Inline], look: PieceLook) -> Iterator[tuple[str, PieceLook]]:
    """The text ``nodes`` show, in runs of one look (a citation's in-line text included)."""
    for node in nodes:
        match node:
            case Text(text):
                yield text, look
            case Code(text):
                yield text, "code"
            case Strong(children):
                yield from _runs(children, "strong" if look == "plain" else look)
            case Cite(children=children):
                yield from _runs(children, look)
            case Emph(children) | Strike(children) | Styled(_, children) | Link(_, children):
                yield from _runs(children, look)
            case LineBreak() | SoftBreak():
                yield " ", look


def _joined(runs: Iterator[tuple[str, PieceLook]]) -> Iterator[tuple[str, PieceLook]]:
    """``runs`` with neighbours of one look joined (a word may span two text nodes)."""
    pending: tuple[str, PieceLook] | None = None
    for text, look in runs:
        if pending is not None and pending[1] == look:
            pending = (pending[0] + text, look)
        else:
            if pending is not None:
                yield pending
            pending = (text, look)
    if pending is not None:
        yield pending


def _pieces(text: str) -> Iterator[str]:
    """The pieces of ``text`` a line cannot break inside (long words left out)."""
    for word in text.split():
        if len(word) >= LONG_WORD:
            continue
        for part in _BREAK_IN_WORD.split(word):
            piece = part.removesuffix(SOFT_HYPHEN).replace(SOFT_HYPHEN, "")
            if piece and part.endswith(SOFT_HYPHEN):
                piece += "-"  # the hyphen drawn at the break
            if not needs_cjk(piece):
                if piece:
                    yield piece
            else:
                yield from filter(None, _cjk_char().split(piece))


def _piece_markup(text: str, look: PieceLook) -> str:
    literal = string_literal(text)
    return {"plain": literal, "strong": f"strong({literal})", "code": f"code-span({literal})"}[look]


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
        anchors: list[str] = []
        head: list[str] = []
        if header:
            writer.header_anchors = anchors
            try:
                head = [content(f"#strong[{c}];") for c in self.cells(header, columns, aligns)]
            finally:
                writer.header_anchors = None
        every = [header, *rows] if header else rows
        widest = widest_cells(every, columns)
        pieces = column_pieces(every, columns, header=bool(header))
        args = [array(aligns), array(head), array(widest), array(pieces)]
        args += [content(cell) for row in rows for cell in self.cells(row, columns, aligns)]
        body = f"report-table({', '.join(args)})"
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
