"""ziamath's row layout without its exponential and quadratic costs, drawing the same.

ziamath lays out an ``<mrow>`` twice: its children once with ``nostretch`` (their heights
without stretchy operators, which a stretchy operator of the row is sized to), then for good.
The first pass lays out each child row the same way, its own first pass included, so a row
nested ``d`` deep was laid out ``2**d`` times: ``{{{{{{{{{{{{a+b}}}}}}}}}}}}`` took 9.5 s to
draw, 24 groups (what :data:`renderers.math.tex.MAX_GROUP_DEPTH` lets through) hours. And each
child's place recomputed the row's left edge over every child before it, quadratic in a long
row (4.5 s of a 2,000-letter formula's 10 s).

Inside the first pass only the heights are kept, and there a stretchy operator's height is
left out whatever size it would take, so a row laid out inside it needs no first pass of its
own: its stretchy operators keep their base glyph, which changes only widths the pass throws
away. The left edge is a running minimum of the same values. The picture is the same, byte for
byte (``tests/robustness/test_math_drawing_bounds.py`` compares the math corpus).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any
from xml.etree import ElementTree as ET


@lru_cache(maxsize=1)
def linear_rows() -> Callable[..., None]:
    """Replace ziamath's single-line row layout by :func:`_single_line` (once); ziamath's own,
    which the tests compare with."""
    from ziamath.nodes.mrow import Mrow

    original: Callable[..., None] = Mrow._setup_single_line
    Mrow._setup_single_line = _single_line  # type: ignore[method-assign]
    return original


def _single_line(self: Any, line: list[ET.Element], **kwargs: Any) -> None:
    """ziamath 0.13's ``Mrow._setup_single_line``, with no first pass inside a first pass and
    the left edge kept as a running minimum."""
    from ziafont.fonttypes import BBox
    from ziamath.nodes.mnode import Mnode

    if kwargs.get("nostretch"):
        kwargs.pop("rowymin", None)
        kwargs.pop("rowymax", None)
    else:
        kwargs["rowymin"], kwargs["rowymax"] = self._get_height_nostretch(line, **kwargs)
    ymax = -9999.0
    ymin = 9999.0
    x = xmax = 0.0
    xmin: float | None = None
    for child in line:
        if child.tag == "mo" and not _element_text(child):
            continue
        node = Mnode.fromelement(child, parent=self, **kwargs)
        self.nodes.append(node)
        self.nodexy.append((x, 0))
        xmax = max(xmax, x + node.bbox.xmax)
        left = x + node.bbox.xmin
        xmin = left if xmin is None else min(xmin, left)
        ymax = max(ymax, node.bbox.ymax)
        ymin = min(ymin, node.bbox.ymin)
        x += node.xadvance()
    self.bbox = BBox(0.0 if xmin is None else xmin, xmax, ymin, ymax)
    self._xadvance = x


def _element_text(element: ET.Element) -> str:
    """ziamath's own reading of an element's text (``nodetools.elementtext``)."""
    from ziamath.nodes.nodetools import elementtext

    text: str = elementtext(element)
    return text
