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
(``\\doublerulesep``). A table without rules is laid out and drawn byte for byte as before.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

#: TeX's rule (0.4 pt) and the space between a double rule's two (2 pt), in em at 10 pt.
RULE = 0.04
DOUBLE_GAP = 0.2


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


def _counts(value: str | None, size: int) -> list[int]:
    return [int(count) for count in value.split()] if value else [0] * size


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
    margin = table.size_px(element.get("data-rulemargin", "0em"))
    # outer rules at the table's edges and the margin beyond (the drawing's space there)
    edges = [table.bbox.xmin - margin,
             *((right + left) / 2 for right, left in zip(rights, lefts[1:], strict=False)),
             table.bbox.xmax + margin]

    em = table.glyphsize
    line = RULE * em
    edges[0] += line / 2  # outer rules inside the margin, not half past it
    edges[-1] -= line / 2
    # Row edges, y downwards: rows' tops and bottoms from their cells, gaps halved.
    tops = [min(xy[1] - node.bbox.ymax for node, xy in row) for row in rows]
    bottoms = [max(xy[1] - node.bbox.ymin for node, xy in row) for row in rows]
    between = [(bottom + top) / 2 for bottom, top in zip(bottoms, tops[1:], strict=False)]
    pad = min((top - bottom for bottom, top in zip(bottoms, tops[1:], strict=False)),
              default=table.size_px(element.get("rowspacing", "0.3em").split()[0]))
    pad = max(pad, 0.0) / 2  # rows drawn overlapping (tall cells) leave no gap
    row_counts = _counts(element.get("data-rowrules"), len(rows) + 1)
    apart = (DOUBLE_GAP * em + line) / 2
    thick = [line + (2 * apart if count == 2 else 0.0) for count in row_counts]
    above = pad + thick[0] if row_counts[0] else 0.0
    below = pad + thick[-1] if row_counts[-1] else 0.0
    top, bottom = -table.bbox.ymax - above, -table.bbox.ymin + below
    levels = [top + thick[0] / 2, *between, bottom - thick[-1] / 2]

    def place(node: Any, x: float, y: float) -> None:
        table.nodes.append(node)
        table.nodexy.append((x, y))

    for edge, count in zip(edges, _counts(element.get("data-columnrules"), width + 1),
                           strict=False):
        for offset in ((0.0,) if count == 1 else (-apart, apart) if count else ()):
            place(drawable.VLine(bottom - top, line, style=table.style), edge + offset, top)
    for level, count in zip(levels, row_counts, strict=True):
        for offset in ((0.0,) if count == 1 else (-apart, apart) if count else ()):
            place(drawable.HLine(edges[-1] - edges[0] + line, line, style=table.style),
                  edges[0] - line / 2, level + offset - line / 2)
    box = table.bbox
    table.bbox = BBox(box.xmin, box.xmax, box.ymin - below, box.ymax + above)
