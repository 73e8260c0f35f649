"""Formulas and numbered captions on slides.

A slide's text runs cannot hold a drawn formula, so inline math is its linear form
(:mod:`renderers.math.linear`: ``x²``, ``(a)/(b)``) in italics, and a displayed formula on its
own is a picture (:func:`renderers.math.svg.formula_png`) whose alt text is the TeX source,
its number or tag beside it at the right edge ("(1)", defining the anchor ``eq-1`` references
jump to). A numbered caption starts with "Figure 1:" and defines the anchor references jump to.
"""

from __future__ import annotations

from renderers.document import CrossRef, Inline, Math, numbered_anchor
from renderers.labels import Labels
from renderers.math import MathError, parse_tex
from renderers.math.linear import tex_line
from renderers.math.marks import equation_mark
from renderers.math.svg import formula_drawing, formula_png
from renderers.writers.common import caption_lead
from renderers.writers.pptx.model import BODY_SIZE, Picture, Run

#: Point size a displayed formula is drawn at (a little above body text, as on paper).
EQUATION_SIZE = BODY_SIZE * 1.2


def math_runs(node: Math) -> tuple[Run, ...]:
    """A formula in a line of text as one italic run of its linear form (its source as code
    when the TeX is not math); a displayed one among words keeps its number or tag after it,
    where a numbered one's anchor lives."""
    line = tex_line(node.tex, node.display)
    shown = Run(node.tex, code=True) if line is None else Run(line, italic=True)
    mark = equation_mark(node)
    return (shown, Run(f" {mark}", defines=node.anchor)) if mark else (shown,)


def equation_picture(children: tuple[Inline, ...]) -> tuple[Picture, str, float, float] | None:
    """For a paragraph that is a displayed formula on its own: its picture, alt text and
    natural width and height in points; else None."""
    only = children[0] if len(children) == 1 else None
    if not isinstance(only, Math) or not only.display:
        return None
    try:
        formula = parse_tex(only.tex, True)
    except MathError:
        return None
    drawn = formula_drawing(formula)
    data, width, height = formula_png(formula)
    picture = Picture(data=data, mime="image/png", width=width, height=height)
    return picture, formula.tex, drawn.width * EQUATION_SIZE, drawn.height * EQUATION_SIZE


def equation_mark_run(children: tuple[Inline, ...]) -> Run | None:
    """The "(1)" (or tag) beside the picture of a paragraph that is a displayed formula on
    its own, defining a numbered equation's anchor; None when it has no mark."""
    only = children[0] if len(children) == 1 else None
    mark = equation_mark(only) if isinstance(only, Math) else ""
    if not mark or not isinstance(only, Math):
        return None
    return Run(mark, defines=only.anchor)


def caption_runs(label: str, number: int, words: Labels) -> tuple[Run, ...]:
    """"Figure 1: " leading a numbered caption; it holds the anchor references jump to."""
    lead = caption_lead(label, number, words)
    if not lead:
        return ()
    return (Run(lead, bold=True,
                defines=numbered_anchor(label, number)), Run(" "))


def crossref_run(node: CrossRef, words: Labels) -> Run:
    """"Figure 1" (or "1"), jumping to the slide with that figure's caption."""
    return Run(node.shown(words), target=node.anchor)
