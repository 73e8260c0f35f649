"""Arrows with text over or under them (``\\xrightarrow[below]{above}``, mhchem's
``->[above][below]``, ``\\overset{a}{\\to}``): found in the checked tree once
(:func:`labelled_arrow`) and rebuilt for the drawing, whose library stretches no arrow that
carries text (:func:`stretched_arrows`).

TeX makes such an arrow as wide as its longest text plus a little; ziamath draws the arrow at
its own width, so text longer than about six characters stuck out past both ends. ziamath
does stretch a one-character operator set *over* something (to that thing's width), so the
drawing sets the arrow over an empty box as wide as the texts, its top lowered so that the
arrow sits where it sits in a row, and the texts over and under that.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from renderers.math.tex import MathNode

#: Arrows latex2mathml and mhchem give → the arrows of the drawing's font (STIX Two Math) that
#: stretch, lowest first with the height (em) of each above the row's baseline; the long
#: arrows (⟶) have no stretched form there, their short ones do. A pair (⇌) is two arrows
#: stacked as the one glyph stacks them; a short arrow of a pair (⥂) is marked ``short``.
LAYERS: dict[str, tuple[tuple[str, float], ...]] = {
    **{arrow: ((stretched, 0.0),) for arrow, stretched in {
        "→": "→", "⟶": "→", "←": "←", "⟵": "←", "↔": "↔", "⟷": "↔", "⇒": "⇒", "⟹": "⇒",
        "⇐": "⇐", "⟸": "⇐", "⇔": "⇔", "⟺": "⇔", "↦": "↦", "⟼": "↦", "↪": "↪", "↩": "↩",
    }.items()},
    "⇌": (("↽", -0.1), ("⇀", 0.1)),
    "⇋": (("⇁", -0.1), ("↼", 0.1)),
    "⇄": (("←", -0.153), ("→", 0.153)),
    "⇆": (("→", -0.153), ("←", 0.153)),
    "⥂": (("short ←", -0.153), ("→", 0.153)),
    "⥄": (("←", -0.153), ("short →", 0.153)),
}
#: Long arrows → the arrow fonts stretch (browsers' math fonts, like the drawing's, have no
#: stretched form of the long ones): the arrow of a formula's MathML when it carries text.
STRETCHABLE = {"⟶": "→", "⟵": "←", "⟷": "↔", "⟹": "⇒", "⟸": "⇐", "⟺": "⇔", "⟼": "↦"}
#: The long arrow of each short one: the least width of an arrow carrying text (mhchem's
#: arrows are long; amsmath's ``\\xrightarrow{a}`` about as long), and Office Math's arrow.
LONG_ARROWS = {short: long for long, short in STRETCHABLE.items()}
#: A space of no width, as mhchem's arrow (``0``) and :mod:`renderers.math.atoms` (``0em``)
#: write it.
_NO_SPACE = frozenset({"0", "0em"})
#: Room (em) the arrow leaves beyond its longest text, about what ``\\xrightarrow`` leaves.
PAD = 0.6
#: A relation's space (TeX's ``\\;``), beside an operator arrow that has no spaces of its own.
RELATION_SPACE = "0.278em"


@dataclass(frozen=True)
class ArrowSize:
    """One arrow character as the drawing sets it (em): its width, how far its bottom and
    top are above its baseline, and how far above the top of the box under it ziamath sets that
    baseline when it sets the arrow over a box."""

    width: float
    bottom: float
    top: float
    raised: float


#: How the drawing measures one arrow character.
Measure = Callable[[str], ArrowSize]
#: How wide (em) the drawing sets a part of a formula.
TextWidth = Callable[[MathNode], float]


@dataclass(frozen=True)
class LabelledArrow:
    """An arrow character with the text set over and under it (either may be None).
    ``spaces`` (left, right) are those the drawing sets beside it: the arrow's own, which the
    drawing's TeX classes wrote (:mod:`renderers.math.atoms`: none at the end of its list or
    beside another relation), else a relation's (every arrow is one, mhchem's too)."""

    arrow: str
    above: MathNode | None
    below: MathNode | None
    spaces: tuple[str, str]


def labelled_arrow(node: MathNode) -> LabelledArrow | None:
    """``node`` as an arrow with text over or under it, or None when it is not one."""
    scripts = _scripts(node)
    if scripts is None:
        return None
    base, above, below = scripts
    if node.tag == "mover" and _single(base).tag == "munder":
        # mhchem's \overset{above}{\underset{below}{⟶}}
        base, _, below = _scripts(_single(base)) or (base, None, None)
    arrow = _single(base)
    if arrow is None or arrow.tag != "mo" or arrow.text not in LAYERS:
        return None
    above, below = _label(above), _label(below)
    if above is None and below is None:
        return None
    spaces = (arrow.attr("lspace").strip() or RELATION_SPACE,
              arrow.attr("rspace").strip() or RELATION_SPACE)
    return LabelledArrow(arrow.text, above, below, spaces)


def marked_up_arrows(node: MathNode) -> MathNode:
    """``node`` with each arrow carrying text as MathML readers stretch it: a stretchy
    operator (its short form, :data:`STRETCHABLE`) over and under its bare texts. latex2mathml
    wrapped ``\\xrightarrow``'s texts in a padding of relative sizes browsers do not read (the
    text ran into what followed), and a long arrow is the short one browsers stretch."""
    found = labelled_arrow(node)
    if found is not None:
        mark = MathNode("mo", (("stretchy", "true"),),
                        text=STRETCHABLE.get(found.arrow, found.arrow))
        return _over_under(mark, found.above, found.below)
    children = tuple(marked_up_arrows(child) for child in node.children)
    if children == node.children:
        return node
    return MathNode(node.tag, node.attrs, children, node.text)


def stretched_arrows(node: MathNode, measure: Measure, text_width: TextWidth) -> MathNode:
    """``node`` with each arrow that carries text drawn as wide as its text (ziamath)."""
    found = labelled_arrow(node)
    if found is not None:
        return _drawn(found, measure, text_width)
    children = tuple(stretched_arrows(child, measure, text_width) for child in node.children)
    if children == node.children:
        return node
    return MathNode(node.tag, node.attrs, children, node.text)


def _scripts(node: MathNode) -> tuple[MathNode, MathNode | None, MathNode | None] | None:
    """The base, over and under parts of an ``mover``/``munder``/``munderover``."""
    parts = node.children
    if node.tag == "mover" and len(parts) == 2:
        return parts[0], parts[1], None
    if node.tag == "munder" and len(parts) == 2:
        return parts[0], None, parts[1]
    if node.tag == "munderover" and len(parts) == 3:
        return parts[0], parts[2], parts[1]
    return None


def _single(node: MathNode) -> MathNode:
    """``node`` without the rows and styles of one child around it."""
    while node.tag in ("mrow", "mstyle") and len(node.children) == 1:
        node = node.children[0]
    return node


def _label(node: MathNode | None) -> MathNode | None:
    """A text over or under the arrow, without the padding ``\\xrightarrow`` wraps it in
    (latex2mathml's negative padded height set the text into the arrow); None when it shows
    nothing."""
    if node is None:
        return None
    if node.tag == "mpadded":
        kept = tuple(child for child in node.children
                     if not (child.tag == "mspace" and child.attr("depth")))
        node = MathNode("mrow", children=kept)
    if not any(part.text.strip() for part in _walk(node)):
        return None
    return node


def _walk(node: MathNode) -> list[MathNode]:
    return [node, *(part for child in node.children for part in _walk(child))]


def _em(value: float) -> str:
    """A box's length in em of the glyphs (the drawing converts it to ziamath's em:
    :func:`renderers.math.svg.ziamath_lengths`)."""
    return f"{value:.4f}em"


def _over_under(base: MathNode, above: MathNode | None, below: MathNode | None) -> MathNode:
    if above is not None and below is not None:
        return MathNode("munderover", (), (base, below, above))
    if above is not None:
        return MathNode("mover", (), (base, above))
    return MathNode("munder", (), (base, below or MathNode("mrow")))


def _drawn(found: LabelledArrow, measure: Measure, text_width: TextWidth) -> MathNode:
    """The arrow stretched over an empty box as wide as its texts (and no narrower than the
    arrow), with the texts over and under it. The box's top is where ziamath then sets the
    arrow at its height in :data:`LAYERS`, its bottom the arrow's bottom, so the text under
    it keeps the usual gap; a pair's upper arrow is set over the lower one, lowered to put
    it at its height. (Flat on purpose: ziamath lays out a row's children twice, so each
    nested row doubles the work.)"""
    layers = LAYERS[found.arrow]
    texts = text_width(_over_under(MathNode("mspace", (("width", "0"),)), found.above,
                                   found.below))
    width = max(texts + PAD, measure(LONG_ARROWS.get(found.arrow, found.arrow)).width)
    lowest, lowest_height = layers[0]
    bottom = lowest_height + measure(lowest.removeprefix("short ")).bottom
    base: MathNode | None = None
    below_top = 0.0  # the top of the arrow set last
    for arrow, height in layers:
        glyph = arrow.removeprefix("short ")
        size = measure(glyph)
        top = height - size.raised
        if base is None:
            boxed = MathNode("mspace", (("depth", _em(-bottom)), ("height", _em(top)),
                                        ("width", _em(width))))
        else:
            lowered = top - below_top
            boxed = MathNode("mpadded", (("height", f"{'+' if lowered >= 0 else '-'}"
                                                    f"{_em(abs(lowered))}"),), (base,))
        mark = MathNode("mo", (("stretchy", "true"),), text=glyph)
        # A row around a pair's short arrow: ziamath stretches only a bare operator.
        over = MathNode("mrow", (), (mark,)) if arrow != glyph else mark
        base = MathNode("mover", (("accent", "true"),), (boxed, over))
        below_top = height + size.top
    assert base is not None
    drawn = _over_under(base, found.above, found.below)
    left, right = (() if space in _NO_SPACE else (MathNode("mspace", (("width", space),)),)
                   for space in found.spaces)
    return MathNode("mrow", (), (*left, drawn, *right)) if left or right else drawn
