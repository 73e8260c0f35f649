"""A table's rules (:mod:`renderers.math.rules`) in ziamath's drawing, which draws neither
``columnlines`` nor ``rowlines``.

ziamath's table layout is kept as it is; after it, a table with rules gets TeX's 0.4 pt lines
(0.04 em). A rule between two columns stands midway between their boxes, as TeX sets it in the
middle of ``2\\arraycolsep``; an outer one at the edge of the space the drawing leaves outside
an ``array`` (``data-rulemargin``, set by :func:`renderers.math.svg.table_margins`: TeX's
``\\arraycolsep``). A rule between two rows stands in the middle of their gap, a top or bottom
one half the smallest gap outside the rows, and the table's box grows by that much, so brackets
around it (``\\left[``) reach past it as in TeX; the column rules run the box's full height (an
augmented matrix keeps its size, as in TeX). ``||`` draws two rules 0.2 em apart
(``\\doublerulesep``). A dashed rule (arydshln's ``:`` and ``\\hdashline``) is drawn as
arydshln's defaults draw it, 4 pt dashes 4 pt apart, each dash a rule of its own; the gaps are
evened out so that the line starts and ends with half a dash (its two ends alike, and a
frame's dashed sides meeting at its corners). A table without rules is laid out and drawn
byte for byte as before.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from renderers.math.rules import Edge, edges

#: TeX's rule (0.4 pt) and the space between a double rule's two (2 pt), in em at 10 pt.
RULE = 0.04
DOUBLE_GAP = 0.2
#: arydshln's ``\\dashlinedash`` and ``\\dashlinegap`` (4 pt each), in em at 10 pt.
DASH = 0.4
DASH_GAP = 0.4


@lru_cache(maxsize=1)
def ruled_tables() -> Callable[..., None]:
    """Have ziamath's table layout draw the rules (once); its own layout, which this wraps."""
    from ziamath.nodes.mtable import Mtable

    original: Callable[..., None] = Mtable._setup

    def setup(self: Any, **kwargs: Any) -> None:
        original(self, **kwargs)
        if self.element.get("data-columnrules") or self.element.get("data-rowrules"):
            _draw_rules(self)

    Mtable._setup = setup  # type: ignore[method-assign]
    return original


def dashes(length: float, dash: float, gap: float) -> list[tuple[float, float]]:
    """Where the dashes of a line ``length`` long fall: each one's start and length, half a
    dash at each end and whole periods between, the gaps stretched or shrunk to fit (a line
    shorter than half a period is one dash)."""
    periods = round(length / (dash + gap))
    if periods < 1:
        return [(0.0, length)]
    period = length / periods
    inner = [(index * period - dash / 2, dash) for index in range(1, periods)]
    return [(0.0, dash / 2), *inner, (length - dash / 2, dash / 2)]


def _draw_rules(table: Any) -> None:
    """Add the rules of ``table`` (a laid-out ziamath ``Mtable``) as lines to draw."""
    from ziafont.fonttypes import BBox
    from ziamath import drawable

    element = table.element
    sizes = [len(row) for row in element]
    if not sizes or not max(sizes):
        return
    width = max(sizes)
    cells = iter(zip(table.nodes, table.nodexy, strict=True))
    rows = [[next(cells) for _ in range(size)] for size in sizes]
    # Each column's boxes as TeX's, from a cell's origin to its advance (ziamath's box starts at
    # the ink, and it centres a cell by that box in a column as wide as its widest advance:
    # its own column widths would put a rule off the middle of the gap the reader sees).
    lefts = [min(xy[0] for row in rows if column < len(row) for _, xy in (row[column],))
             for column in range(width)]
    rights = [max(xy[0] + node.bbox.xmax for row in rows if column < len(row)
                  for node, xy in (row[column],)) for column in range(width)]
    margins = [table.size_px(side) for side in element.get("data-rulemargin", "0em").split()]
    # outer rules at the table's edges and the margin beyond (the drawing's space there; an
    # ``@{}`` may take one side's off)
    xs = [table.bbox.xmin - margins[0],
          *((right + left) / 2 for right, left in zip(rights, lefts[1:], strict=False)),
          table.bbox.xmax + margins[-1]]

    em = table.glyphsize
    line = RULE * em
    xs[0] += line / 2  # outer rules inside the margin, not half past it
    xs[-1] -= line / 2
    # Row edges, y downwards: rows' tops and bottoms from their cells, gaps halved.
    tops = [min(xy[1] - node.bbox.ymax for node, xy in row) for row in rows]
    bottoms = [max(xy[1] - node.bbox.ymin for node, xy in row) for row in rows]
    between = [(bottom + top) / 2 for bottom, top in zip(bottoms, tops[1:], strict=False)]
    pad = min((top - bottom for bottom, top in zip(bottoms, tops[1:], strict=False)),
              default=table.size_px(element.get("rowspacing", "0.3em").split()[0]))
    pad = max(pad, 0.0) / 2  # rows drawn overlapping (tall cells) leave no gap
    row_edges = edges(element.get("data-rowrules"), len(rows) + 1)
    apart = (DOUBLE_GAP * em + line) / 2
    thick = [line + (2 * apart if edge.count == 2 else 0.0) for edge in row_edges]
    above = pad + thick[0] if row_edges[0].count else 0.0
    below = pad + thick[-1] if row_edges[-1].count else 0.0
    top, bottom = -table.bbox.ymax - above, -table.bbox.ymin + below
    levels = [top + thick[0] / 2, *between, bottom - thick[-1] / 2]

    def place(node: Any, x: float, y: float) -> None:
        table.nodes.append(node)
        table.nodexy.append((x, y))

    def pieces(edge: Edge, length: float) -> list[tuple[float, float]]:
        """Where along a rule ``length`` long its ink is: all of it, or its dashes."""
        return dashes(length, DASH * em, DASH_GAP * em) if edge.dashed else [(0.0, length)]

    def offsets(edge: Edge) -> tuple[float, ...]:
        """Where an edge's rules stand from its middle: one, two or none."""
        return (0.0,) if edge.count == 1 else (-apart, apart) if edge.count else ()

    column_edges = edges(element.get("data-columnrules"), width + 1)
    for x, edge in zip(xs, column_edges, strict=False):
        for offset in offsets(edge):
            for start, length in pieces(edge, bottom - top):
                place(drawable.VLine(length, line, style=table.style), x + offset, top + start)
    across = xs[-1] - xs[0] + line
    for level, edge in zip(levels, row_edges, strict=True):
        for offset in offsets(edge):
            for start, length in pieces(edge, across):
                place(drawable.HLine(length, line, style=table.style),
                      xs[0] - line / 2 + start, level + offset - line / 2)
    box = table.bbox
    table.bbox = BBox(box.xmin, box.xmax, box.ymin - below, box.ymax + above)
