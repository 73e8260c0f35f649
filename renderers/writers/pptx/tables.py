"""Table measurement: cells as runs, column widths, row heights, rows too tall for a slide split.

The layout (:mod:`.layout`) only places the measured rows: which rows go on which slide, with
the header repeated on every continuation slide.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from renderers.document import Alignment, Table, TableCell
from renderers.writers.common import ColumnNeed, narrow_cell_margin
from renderers.writers.common import column_widths as shared_widths
from renderers.writers.common import distribute as distribute  # the layout's EMU widths
from renderers.writers.pptx.metrics import TextMetrics, unbroken_width
from renderers.writers.pptx.model import INSET_X, INSET_Y, Para, Run
from renderers.writers.pptx.runs import (
    InlineRuns,
    continued_mark,
    segments,
    split_para,
    truncate_runs,
)

Row = tuple[tuple[Run, ...], ...]


@dataclass(frozen=True)
class MeasuredTable:
    """A table's runs and sizes (points); ``inset`` is the margin each side of every cell's
    text (:func:`table_inset`); ``clipped`` counts the rows that were shortened."""

    header: Row
    rows: tuple[Row, ...]
    aligns: tuple[Alignment, ...]
    widths: tuple[float, ...]
    header_height: float
    heights: tuple[float, ...]
    size: float
    inset: float
    clipped: int


def table_size(ncols: int) -> float:
    """The font size of a table's text: smaller as columns multiply."""
    return 14.0 if ncols <= 5 else 12.0 if ncols <= 8 else 10.0


def table_inset(ncols: int, width: float) -> float:
    """The side inset of a table's cells in a box ``width`` points wide: :data:`INSET_X`, or
    less when ``ncols`` equal columns are narrow (60 columns with full insets ran off the
    slide). Decided before the columns, whose minimums include it: every column is then two
    insets and an em of text wide, or all are equal shares whose text keeps half of them."""
    return narrow_cell_margin(width / ncols, INSET_X)


def measure_table(
    table: Table, inlines: InlineRuns, metrics: TextMetrics, width: float, height: float
) -> MeasuredTable | None:
    """``table`` measured for a box ``width`` × ``height`` points; None when it has no column.

    A row taller than the box (after the header) becomes several rows, each as tall as the
    box holds: every cell's lines go on in the next one, after "(cont.)" (the layout puts
    each on its own slide under the repeated header), as the PDF breaks a row across pages.
    """
    ncols = max([len(table.header), *(len(r) for r in table.rows)], default=0)
    if ncols == 0:
        return None
    size = table_size(ncols)
    inset = table_inset(ncols, width)
    header = _cells(inlines, table.header, ncols, bold=True) if table.header else ()
    rows = [_cells(inlines, r, ncols) for r in table.rows]
    aligns = tuple(_align(table.aligns, c) for c in range(ncols))
    widths = column_widths(metrics, [header, *rows] if header else rows, ncols, size, width,
                           inset)
    avail_row = height - 2 * INSET_Y
    header_h = row_height(metrics, header, widths, size, inset) if header else 0.0
    heights: list[float] = []
    placed: list[Row] = []
    clipped = 0
    for row in rows:
        h = row_height(metrics, row, widths, size, inset)
        pieces = [row]
        if header_h + h > avail_row:
            pieces = _split_row(metrics, row, widths, size, inset, avail_row - header_h,
                                continued_mark(inlines.words))
        for piece in pieces:
            h = row_height(metrics, piece, widths, size, inset)
            if header_h + h > avail_row:  # never expected: a safety net, reported
                piece = _clip_row(metrics, piece, widths, size, inset, avail_row - header_h)
                h = row_height(metrics, piece, widths, size, inset)
                clipped += 1
            placed.append(piece)
            heights.append(h)
    return MeasuredTable(header, tuple(placed), aligns, tuple(widths), header_h,
                         tuple(heights), size, inset, clipped)


def column_widths(
    metrics: TextMetrics, rows: Sequence[Row], ncols: int, size: float, total: float,
    inset: float,
) -> list[float]:
    """Column widths (points) summing to ``total``, by the shared rule
    (:func:`~renderers.writers.common.column_widths`) from each column's measured needs."""
    needs = _column_needs(metrics, rows, ncols, size, inset)
    return shared_widths(needs, total, 2 * inset + size)


def _column_needs(
    metrics: TextMetrics, rows: Sequence[Row], ncols: int, size: float, inset: float
) -> list[ColumnNeed]:
    """Each column's longest cell on one line and widest word unbroken, with the insets."""
    natural = [0.0] * ncols
    word = [0.0] * ncols
    for row in rows:
        for c, cell in enumerate(row):
            text_w = sum(metrics.text_width(r.text, r.style, size) for r in cell)
            natural[c] = max(natural[c], unbroken_width(text_w) + 2 * inset)
            widest = unbroken_width(metrics.widest_word(segments(cell), size)) + 2 * inset
            word[c] = max(word[c], widest)
    return [ColumnNeed(n, w) for n, w in zip(natural, word, strict=True)]


def row_height(
    metrics: TextMetrics, row: Row, widths: Sequence[float], size: float, inset: float
) -> float:
    """Height (points) of ``row``: its tallest cell's lines plus the cell insets."""
    line_h = metrics.line_height(size)
    lines = max(
        (metrics.line_count(segments(cell), w - 2 * inset, size)
         for cell, w in zip(row, widths, strict=True)),
        default=1,
    )
    return lines * line_h + 2 * INSET_Y


def _split_row(
    metrics: TextMetrics, row: Row, widths: Sequence[float], size: float, inset: float,
    room: float, marker: str,
) -> list[Row]:
    """A row taller than a whole slide as rows that each fit ``room``: every cell cut after
    the lines that fit, its rest (after ``marker``, "(cont.)") in the next row; a cell that
    has ended is empty there."""
    max_lines = max(1, int((room - 2 * INSET_Y) // metrics.line_height(size)))
    pieces: list[Row] = []
    rest = row
    while any(rest):
        head: list[tuple[Run, ...]] = []
        tail: list[tuple[Run, ...]] = []
        for cell, w in zip(rest, widths, strict=True):
            starts = metrics.line_starts(segments(cell), w - 2 * inset, size)
            if len(starts) <= max_lines:
                head.append(cell)
                tail.append(())
                continue
            first, second = split_para(Para(cell, size=size), starts[max_lines], marker=marker)
            head.append(first.runs)
            tail.append(second.runs)
        pieces.append(tuple(head))
        rest = tuple(tail)
    return pieces


def _clip_row(
    metrics: TextMetrics, row: Row, widths: Sequence[float], size: float, inset: float,
    room: float,
) -> Row:
    """A row taller than a whole slide: each cell shortened to the lines that fit."""
    max_lines = max(1, int((room - 2 * INSET_Y) // metrics.line_height(size)))
    return tuple(
        truncate_runs(cell, metrics, w - 2 * inset, size, max_lines)
        for cell, w in zip(row, widths, strict=True)
    )


def _cells(
    inlines: InlineRuns, cells: tuple[TableCell, ...], ncols: int, *, bold: bool = False
) -> Row:
    out: list[tuple[Run, ...]] = []
    for c in range(ncols):
        runs = inlines.para(cells[c].children) if c < len(cells) else ()
        runs = tuple(dataclasses.replace(r, text=r.text.replace("\n", " ")) for r in runs)
        if bold:
            runs = tuple(r if r.superscript else dataclasses.replace(r, bold=True) for r in runs)
        out.append(runs)
    return tuple(out)


def _align(aligns: tuple[Alignment, ...], column: int) -> Alignment:
    return aligns[column] if column < len(aligns) else "default"
