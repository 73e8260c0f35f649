"""A checked formula drawn as SVG (ziamath, glyph outlines of its bundled STIX Two Math font) and
as PNG (resvg), for the outputs that cannot show MathML: WeasyPrint lays MathML out as plain
text, so the PDF and PNG show this SVG; a PPTX slide shows the PNG.

The drawing depends on no installed font, so it is the same on every machine. Sizes are given
in ``em`` of the surrounding text so that a formula scales with it. A formula ziamath cannot lay
out is drawn as its TeX source; the drawing says why (:attr:`DrawnFormula.fallback`), and
:func:`formula_drawing` hands that to the writer asking as a ``math-not-drawn`` diagnostic.
"""

from __future__ import annotations

import base64
import dataclasses
import re
import warnings
from dataclasses import dataclass
from functools import lru_cache
from xml.sax.saxutils import escape

from renderers.diagnostics import Code, Diagnostic, report
from renderers.math.arrows import ArrowSize, stretched_arrows
from renderers.math.atoms import LISTS, tex_atoms
from renderers.math.mathml import mathml_markup, node_markup
from renderers.math.row_layout import linear_rows
from renderers.math.rules import table_rules
from renderers.math.spans import drawable
from renderers.math.table_drawing import ruled_tables
from renderers.math.tex import MATHML_NS, Formula, MathNode, shown_tex

#: Font size (px) the formula is drawn at; sizes are reported relative to it.
DRAW_SIZE = 20.0
#: PNG pixels per SVG unit (sharp on a projected slide).
PNG_ZOOM = 4.0


@dataclass(frozen=True)
class DrawnFormula:
    """The SVG of a formula with its size in ``em``; ``depth`` is how far it reaches below
    the text's baseline; ``fallback`` says why it shows the formula's TeX source instead ("" when
    it shows the formula)."""

    svg: str
    width: float
    height: float
    depth: float
    fallback: str = ""

    def data_uri(self) -> str:
        """The SVG as a ``data:`` URI (an ``<img>`` source)."""
        return "data:image/svg+xml;base64," + base64.b64encode(self.svg.encode()).decode()


def _configure() -> None:
    """Plain ``<path>`` elements (no SVG 2 ``<symbol>``/``<use>``, which not every SVG reader
    draws) with coordinates rounded to a fixed precision (stable bytes); rows laid out in
    linear time (:mod:`renderers.math.row_layout`); tables' rules drawn
    (:mod:`renderers.math.table_drawing`)."""
    import ziamath

    ziamath.config.svg2 = False
    ziamath.config.precision = 3
    _operator_spaces()
    linear_rows()
    ruled_tables()


@lru_cache(maxsize=1)
def _operator_spaces() -> None:
    """ziamath's operator dictionary with its spaces in ziamath's em (:func:`_drawn_length`),
    so ``=`` takes TeX's 5/18 em a side.

    Done once, on the dictionary itself rather than on each ``mo``: ziamath picks an entry by
    the form (prefix, infix, postfix) it infers from where the ``mo`` sits in its row, which
    it decides while laying out; converting the entry ziamath picks keeps that choice its own
    instead of copying its rules here. An ``mo``'s own ``lspace``/``rspace`` still wins (and
    :func:`ziamath_lengths` has converted it): binary operators and punctuation have theirs
    by TeX's rules (:func:`~renderers.math.atoms.tex_atoms`)."""
    from ziamath import operators

    operators.operators = {
        (name, form): params | {
            side: _drawn_length(params[side]) for side in ("lspace", "rspace") if side in params}
        for (name, form), params in operators.operators.items()
    }


#: The em ziamath reads a length in (``0.5em`` on a box) as a multiple of the em its glyphs are
#: drawn in: it converts em to points by a table made for TeX's 10 pt font (10.00002 pt), points
#: to pixels by 1.333, and then scales to the glyphs' size taken as pixels, so its em is 4/3 of
#: the glyphs' (``\\quad`` drew 1.333 em wide).
ZIAMATH_EM = 10.00002 / 10 * 1.333
#: The lengths ziamath reads in its em, by element: TeX's spaces and paddings, an operator's
#: own spaces and size (``\\Bigl(`` 1.623 em tall, as browsers set it; TeX's is 1.8 em,
#: ziamath drew 2.4 em), a table's gaps (``cases``' 1 em, ``aligned``'s 2 em; a list, one a
#: column); what :func:`ziamath_lengths` converts.
_LENGTHS = {
    "mspace": frozenset({"width", "height", "depth"}),
    "mpadded": frozenset({"width", "height", "depth", "lspace", "voffset"}),
    "mo": frozenset({"lspace", "rspace", "minsize", "maxsize"}),
    "mtable": frozenset({"columnspacing", "rowspacing", "data-rulemargin"}),
}
#: A length in em or math units (1/18 em), with an optional sign (``+0.2em`` on ``mpadded``).
_LENGTH = re.compile(r"^\s*([+-]?)(\d*\.?\d+)\s*(em|mu)\s*$")
#: MathML's named spaces (latex2mathml writes ``\\!`` as ``negativethinmathspace``) in 18ths
#: of an em, which ziamath reads in its em as well.
_NAMED_SPACES = {
    f"{negative}{name}mathspace": (-eighteenths if negative else eighteenths)
    for eighteenths, name in enumerate(
        ("veryverythin", "verythin", "thin", "medium", "thick", "verythick", "veryverythick"),
        start=1)
    for negative in ("", "negative")
}


def ziamath_lengths(node: MathNode) -> MathNode:
    """``node`` with each length in em (math units, named spaces) of :data:`_LENGTHS` in the em
    ziamath draws the glyphs in (:data:`ZIAMATH_EM`), so ``\\,`` is 3/18 em wide as in TeX;
    the one place the drawing's lengths are corrected, after arrows are built."""
    lengths = _LENGTHS.get(node.tag, frozenset())
    attrs = tuple((key, " ".join(map(_drawn_length, value.split())) if key in lengths else value)
                  for key, value in node.attrs)
    children = tuple(ziamath_lengths(child) for child in node.children)
    if attrs == node.attrs and children == node.children:
        return node
    return MathNode(node.tag, attrs, children, node.text)


def _drawn_length(value: str) -> str:
    """A length (em of the glyphs) as ziamath reads it; one in other units (``ex``,
    ``pt``), a percentage or a plain number (pixels) is left as it is."""
    found = _LENGTH.match(value)
    if found is not None:
        sign, number, unit = found.groups()
        em = float(number) / (18 if unit == "mu" else 1)
    elif value.strip() in _NAMED_SPACES:
        sign, em = "", _NAMED_SPACES[value.strip()] / 18
    else:
        return value
    return f"{sign}{em / ZIAMATH_EM:.4f}".rstrip("0").rstrip(".") + "em"


#: Tallest drawing (em) taken as sound; ziamath sizes a row it found empty by +-999.
_MAX_EM = 200.0


@lru_cache(maxsize=512)
def draw_formula(formula: Formula) -> DrawnFormula:
    """The formula as SVG (cached: a formula repeated in a report is drawn once). A tree
    ziamath cannot lay out (it raises AssertionError, IndexError … on some nestings of empty
    groups, ``\\overline{}``, or sizes them by its +-999 sentinel) is drawn as its TeX source
    in text, as a writer shows TeX that is not math, rather than failing the render; its
    ``fallback`` says why. The cache holds the reason, not a report: each render that draws the
    formula reports it (:func:`formula_drawing`)."""
    try:
        drawn = _draw(mathml_markup(_drawn_tree(formula), annotate=False))
    except Exception as exc:  # ziamath's own failures have no common type
        why = f"the drawing library failed ({type(exc).__name__})"
    else:
        if 0 < drawn.width < _MAX_EM and 0 < drawn.height < _MAX_EM:
            return drawn
        why = "the drawing library gives it no size it can lay out"
    source = escape(formula.tex)
    drawn = _draw(f'<math xmlns="{MATHML_NS}"><mtext>{source}</mtext></math>')
    return dataclasses.replace(drawn, fallback=why)


def _drawn_tree(formula: Formula) -> Formula:
    """``formula`` as ziamath draws it: text rows of aligned tables stacked
    (:func:`~renderers.math.spans.drawable`), operators spaced by TeX's classes
    (:func:`~renderers.math.atoms.tex_atoms`), arrows stretched to their text
    (:func:`~renderers.math.arrows.stretched_arrows`), tables' gaps as TeX's
    (:func:`table_gaps`) with an ``array``'s space outside it (:func:`table_margins`), lengths
    in ziamath's em (:func:`ziamath_lengths`)."""
    margined = table_margins(formula.root)
    shown = drawable(formula if margined is formula.root
                     else dataclasses.replace(formula, root=margined))
    spaced = stretched_arrows(tex_atoms(shown.root), arrow_size, drawn_width)
    root = ziamath_lengths(table_gaps(spaced))
    return shown if root is shown.root else dataclasses.replace(shown, root=root)


#: The gap between a table's columns where its markup gives none (the matrix family,
#: ``array``, ``eqnarray``): TeX's ``2\arraycolsep``, 10 pt at 10 pt; ziamath's own is 0.3 of
#: its em (0.4 em). ``cases``, the ``aligned`` family and ``smallmatrix`` come with theirs.
ARRAY_GAP = "1em"
#: The space TeX leaves outside an ``array``'s outer columns (``\arraycolsep``, 5 pt at
#: 10 pt), which amsmath's matrices take back (``\hskip -\arraycolsep``).
ARRAY_MARGIN = "0.5em"


def table_gaps(node: MathNode) -> MathNode:
    """``node`` with :data:`ARRAY_GAP` between the columns of each table that sets no gap."""
    children = tuple(table_gaps(child) for child in node.children)
    attrs = node.attrs
    if node.tag == "mtable" and not node.attr("columnspacing").strip():
        attrs = (*(attr for attr in attrs if attr[0] != "columnspacing"),
                 ("columnspacing", ARRAY_GAP))
    if attrs == node.attrs and children == node.children:
        return node
    return MathNode(node.tag, attrs, children, node.text)


def table_margins(node: MathNode) -> MathNode:
    """``node`` with :data:`ARRAY_MARGIN` outside each ``array`` (:func:`_margin`), in its row;
    taken from the checked tree, before the drawing adds tables of its own
    (:func:`~renderers.math.spans.drawable`)."""
    spaced = (_with_margins(table_margins(child), _margin(child)) for child in node.children)
    if node.tag in LISTS:
        children = tuple(part for parts in spaced for part in parts)
    else:
        children = tuple(_in_row(parts) for parts in spaced)
    if children == node.children:
        return node
    return MathNode(node.tag, node.attrs, children, node.text)


def _with_margins(node: MathNode, margin: str | None) -> tuple[MathNode, ...]:
    """``node`` with the space ``margin`` on each side (:func:`_margin`), or alone; a table
    with rules told where its outer ones go (:mod:`renderers.math.table_drawing`). An
    ``@{…}`` at a side of an ``array`` sets that side's (``data-margins``, "-" for a side
    without one: :func:`~renderers.math.columns.array_columns`)."""
    if margin is None:
        return (node,)
    left, right = (margin if side == "-" else side
                   for side in (node.attr("data-margins") or "- -").split())
    if table_rules(node) is not None:
        shown = margin if left == right == margin else f"{left} {right}"
        node = MathNode(node.tag, (*node.attrs, ("data-rulemargin", shown)), node.children)
    before = MathNode("mspace", (("width", left),))
    after = MathNode("mspace", (("width", right),))
    return (before, node) if float(right.removesuffix("em")) == 0 else (before, node, after)


def _margin(node: MathNode) -> str | None:
    """The space outside a table that ziamath would otherwise decide: latex2mathml writes an
    ``array``'s column alignments on its cells and nothing on a matrix's, and ziamath sets
    0.3 of its em beside a bracket around a table whose first cell has one (TeX: 0.5 em
    beside anything, :data:`ARRAY_MARGIN`). The tables an environment is rewritten to
    (``eqnarray``, ``gather``, ``multline``: an ``array`` of display-style cells) and those
    with a gap of their own (``cases``, ``aligned``) have none in TeX; a space of no width
    before them keeps ziamath's off. None: a table ziamath adds nothing to, or not a table."""
    rows = node.children if node.tag == "mtable" else ()
    cells = [cell for row in rows for cell in row.children]
    if not cells or not cells[0].attr("columnalign"):
        return None
    rules = table_rules(node)
    if rules is not None and (rules.columns[0].count or rules.columns[-1].count):
        return ARRAY_MARGIN  # TeX's outer rule stands \arraycolsep outside the column
    if node.attr("columnspacing").strip() or all(map(_display_style, cells)):
        return "0em"
    return ARRAY_MARGIN


def _display_style(cell: MathNode) -> bool:
    """Whether the cell's content is set in display style, as an environment rewritten to an
    ``array`` sets it (:mod:`renderers.math.normalise`)."""
    while cell.tag in ("mtd", "mrow") and len(cell.children) == 1:
        cell = cell.children[0]
    return cell.tag == "mstyle" and cell.attr("displaystyle") == "true"


def _in_row(parts: tuple[MathNode, ...]) -> MathNode:
    """One node for ``parts``: itself, or a row of them where the element holding it takes a
    fixed number of children (a fraction's part, a script)."""
    return parts[0] if len(parts) == 1 else MathNode("mrow", (), parts)


@lru_cache(maxsize=64)
def arrow_size(arrow: str) -> ArrowSize:
    """One arrow character as ziamath sets it, measured by drawing it alone and over a box of
    no width or height (what :mod:`~renderers.math.arrows` builds on)."""
    mark = f'<mo lspace="0" rspace="0" stretchy="true">{escape(arrow)}</mo>'
    alone = _draw(f'<math xmlns="{MATHML_NS}">{mark}</math>')
    over = _draw(f'<math xmlns="{MATHML_NS}"><mover accent="true"><mspace width="0"/>{mark}'
                 "</mover></math>")
    bottom = -alone.depth
    top = alone.height + bottom
    return ArrowSize(alone.width, bottom, top, over.height - over.depth - top)


def drawn_width(node: MathNode) -> float:
    """How wide (em) ziamath draws ``node`` alone, its lengths read as in the formula."""
    return _draw(f'<math xmlns="{MATHML_NS}">{node_markup(ziamath_lengths(node))}</math>').width


@lru_cache(maxsize=32)
def cell_widths(table: MathNode) -> tuple[tuple[float, ...], ...]:
    """How wide (em) ziamath draws each cell of ``table``, row by row: one layout of the
    table alone (a layout a cell costs ziamath some milliseconds more)."""
    with warnings.catch_warnings():  # ziamath finds its font with a deprecated importlib call
        warnings.simplefilter("ignore", DeprecationWarning)
        import ziamath
        from ziamath.nodes.mtable import Mtable

        _configure()
        markup = f'<math xmlns="{MATHML_NS}">{node_markup(ziamath_lengths(table))}</math>'
        pending = [ziamath.Math(markup, size=DRAW_SIZE, margin=0).node]
    while pending:  # the table's node: the first one of its kind, outside in
        node = pending.pop(0)
        if isinstance(node, Mtable):
            cells = iter(node.nodes)
            return tuple(tuple(next(cells).bbox.xmax / DRAW_SIZE for _ in row)
                         for row in node.element)
        pending.extend(getattr(node, "nodes", ()))
    return tuple((0.0,) * len(row.children) for row in table.children)


def formula_drawing(formula: Formula) -> DrawnFormula:
    """The formula's drawing for a writer (:func:`draw_formula`); one shown as its TeX source
    is reported as a ``math-not-drawn`` diagnostic of the artifact being written (the
    pipeline collects what its writers report, as pandoc's writers return their log)."""
    drawn = draw_formula(formula)
    if drawn.fallback:
        report(Diagnostic(
            Code.MATH_NOT_DRAWN,
            f"formula {shown_tex(formula.tex)} cannot be drawn ({drawn.fallback}); its picture "
            f"shows the TeX source instead",
        ))
    return drawn


def _draw(markup: str) -> DrawnFormula:
    """The MathML ``markup`` drawn by ziamath, with its size in ``em``."""
    with warnings.catch_warnings():  # ziamath finds its font with a deprecated importlib call
        warnings.simplefilter("ignore", DeprecationWarning)
        import ziamath

        _configure()
        math = ziamath.Math(markup, size=DRAW_SIZE, margin=0)
        width, height = math.getsize()
        depth = -math.getyofst()
        svg = math.svg()
    return DrawnFormula(svg, width / DRAW_SIZE, height / DRAW_SIZE, depth / DRAW_SIZE)


@lru_cache(maxsize=128)
def formula_png(formula: Formula) -> tuple[bytes, int, int]:
    """The formula as PNG bytes with its pixel width and height (black on transparent)."""
    import resvg_py

    drawn = draw_formula(formula)
    data = bytes(resvg_py.svg_to_bytes(svg_string=drawn.svg, zoom=PNG_ZOOM))
    width = int.from_bytes(data[16:20], "big")
    height = int.from_bytes(data[20:24], "big")
    return data, width, height
