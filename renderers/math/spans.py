"""Text rows that span a table's columns (``\\intertext``, read by
:mod:`renderers.math.intertext`), in the MathML tree and in each writer.

After converting (:func:`spanned`), each row marked by :mod:`~renderers.math.intertext`
becomes one left-aligned cell spanning every column (MathML's ``columnspan``, which browsers
lay out). Writers with no spanning cell show
it another way: :func:`drawable` for the picture of PDF, PNG and slides (ziamath ignores
``columnspan``), :func:`office_cells` for Word.
"""

from __future__ import annotations

import dataclasses

from renderers.math.intertext import MARK
from renderers.math.tex import Formula, MathNode


def spanned(node: MathNode) -> MathNode:
    """``node`` with each marked row of a table one left-aligned cell spanning the columns."""
    children = tuple(spanned(child) for child in node.children)
    if node.tag == "mtable" and any(_marked_row(row) for row in children):
        children = _table_rows(children)
    if children == node.children:
        return node
    return MathNode(node.tag, node.attrs, children, node.text)


def _table_rows(rows: tuple[MathNode, ...]) -> tuple[MathNode, ...]:
    columns = max((len(row.children) for row in rows if not _marked_row(row)), default=1)
    out: list[MathNode] = []
    for row in rows:
        if _marked_row(row):
            content = _unmarked(row.children[0])
            cell = MathNode("mtd", (("columnalign", "left"), ("columnspan", str(columns))),
                            content)
            row = MathNode("mtr", row.attrs, (cell,))
        out.append(row)
    return tuple(out)


def _first_token(node: MathNode) -> MathNode | None:
    if not node.children:
        return node if node.text else None
    return _first_token(node.children[0])


def _marked_row(row: MathNode) -> bool:
    token = _first_token(row.children[0]) if row.tag == "mtr" and row.children else None
    return token is not None and token.tag == "mtext" and token.text.startswith(MARK)


def _unmarked(cell: MathNode) -> tuple[MathNode, ...]:
    """The content of a marked cell without its mark (an ``mtext`` holding only the mark
    left out)."""
    def strip(node: MathNode, first: bool) -> MathNode | None:
        if not first:
            return node
        if not node.children:
            text = node.text.removeprefix(MARK)
            return MathNode(node.tag, node.attrs, (), text) if text else None
        head = strip(node.children[0], True)
        rest = node.children[1:]
        return MathNode(node.tag, node.attrs, ((head,) if head else ()) + rest, node.text)

    stripped = strip(cell, True)
    return stripped.children if stripped is not None else ()


def spans(cell: MathNode) -> bool:
    """Whether ``cell`` is a text row's cell spanning its table's columns."""
    return cell.tag == "mtd" and bool(cell.attr("columnspan"))


def office_cells(row: MathNode, columns: int) -> tuple[MathNode, ...]:
    """The cells of ``row`` for an Office Math matrix, which has no spanning cell: a text
    row's text in the second column (in the align family the first left-aligned one, where
    the aligned relations start: however long the text, no column before it moves), the other
    cells empty."""
    if not row.children or not spans(row.children[0]) or columns < 2:
        return row.children
    empty = MathNode("mtd")
    return (empty, MathNode("mtd", children=row.children[0].children),
            *[empty] * (columns - 2))


def drawable(formula: Formula) -> Formula:
    """``formula`` as ziamath can draw it (:func:`_drawable`)."""
    root = _drawable(formula.root)
    return formula if root is formula.root else dataclasses.replace(formula, root=root)


def _drawable(node: MathNode) -> MathNode:
    """``node`` as ziamath can draw it, which ignores ``columnspan``: a table holding text
    rows becomes a one-column table of left-aligned rows: the text rows, and between them the
    runs of aligned rows, each run a table of the original columns with one row added that is
    as wide as every other run's cells and of no height, so that the columns of all runs have
    the same widths and the alignment carries on across the text."""
    children = tuple(_drawable(child) for child in node.children)
    if node.tag == "mtable" and any(row.children and spans(row.children[0])
                                    for row in children):
        return _stacked(node, children)
    if children == node.children:
        return node
    return MathNode(node.tag, node.attrs, children, node.text)


def _stacked(table: MathNode, rows: tuple[MathNode, ...]) -> MathNode:
    runs: list[list[MathNode]] = [[]]
    texts: dict[int, MathNode] = {}
    for row in rows:
        if row.children and spans(row.children[0]):
            texts[len(runs)] = row.children[0]
            runs.append([])
        else:
            runs[-1].append(row)
    left = (("columnalign", "left"),)
    stacked: list[MathNode] = []
    for index, run in enumerate(runs):
        if index in texts:
            stacked.append(MathNode("mtr", (), (MathNode("mtd", left, texts[index].children),)))
        if run:
            others = [row for other in runs if other is not run for row in other]
            width = (_width_row(others),) if others else ()
            inner = MathNode("mtable", table.attrs, (*run, *width))
            stacked.append(MathNode("mtr", (), (MathNode("mtd", left, (inner,)),)))
    return MathNode("mtable", (("columnalign", "left"), ("rowspacing", "3pt")), tuple(stacked))


def _width_row(rows: list[MathNode]) -> MathNode:
    """A row of no height whose cell in each column is as wide as the widest of ``rows``'
    cells there (each column a phantom one-column table of them)."""
    columns = max((len(row.children) for row in rows), default=0)
    cells: list[MathNode] = []
    for column in range(columns):
        stack = tuple(
            MathNode("mtr", (), (row.children[column],)) for row in rows
            if len(row.children) > column
        )
        phantom = MathNode("mphantom", (), (MathNode("mtable", (), stack),))
        flat = MathNode("mpadded", (("depth", "0"), ("height", "0")), (phantom,))
        cells.append(MathNode("mtd", (), (flat,)))
    return MathNode("mtr", (), tuple(cells))
