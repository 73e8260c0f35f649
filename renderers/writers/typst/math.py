"""Formulas, cross-references and numbered captions in the Typst markup.

A formula is the SVG picture :mod:`renderers.math.svg` draws for every PDF (the WeasyPrint PDF
shows the same one), handed to Typst as a file in the compile root and sized in ``em`` of the
surrounding text, its alt text the TeX; TeX that cannot be read shows its source as code, as in
the HTML report. A cross-reference is "Figure 1" linked to the figure's anchor (``fig-1``),
and a numbered caption starts "Figure 1: ".
"""

from __future__ import annotations

from collections.abc import Callable

from renderers.document import CrossRef, Math, numbered_anchor, numbered_name
from renderers.labels import Labels
from renderers.writers.common import caption_lead
from renderers.writers.typst.escape import string_literal, text_markup
from renderers.writers.typst.parts import RootFiles, call, code_span


def math_markup(node: Math, root: RootFiles, *, isolate: bool, alone: bool = False) -> str:
    """A formula as its picture (a block of its own when displayed), or its TeX as code
    (``isolate``: see :func:`~.parts.code_span`); ``alone``: a displayed formula that is a
    paragraph of its own, spaced as one (``math-display`` in the template)."""
    from renderers.math import MathError, parse_tex  # imported by a document's first formula

    try:
        formula = parse_tex(node.tex, node.display)
    except MathError:
        return code_span(node.tex, isolate=isolate)
    from renderers.math.svg import draw_formula  # its MathML step imports xml.sax and urllib

    drawn = draw_formula(formula)
    name, _ = root.name_of(drawn.svg.encode("utf-8"), "math", "svg")
    sizes = (f"{round(value, 4)}" for value in (drawn.width, drawn.height, drawn.depth))
    function = "math-display" if node.display else "math-inline"
    flags = ["alone: true"] if alone and node.display else []
    return call(function, string_literal(name), *sizes, string_literal(formula.tex), *flags)


def crossref_markup(
    node: CrossRef, labels: set[str], to_label: Callable[[str], str], words: Labels
) -> str:
    """"Figure 1", linked to the figure or table it names (plain text when it has no anchor);
    ``to_label`` gives the destination of a link to a label."""
    name = text_markup(numbered_name(node.label, node.number, words))
    anchor = numbered_anchor(node.label, node.number)
    if anchor not in labels:
        return name
    return f"#link({to_label(anchor)})[{name}];"


def numbered_anchor_of(label: str, number: int) -> str:
    """The anchor of a numbered figure or table, or "" when it is not numbered."""
    return numbered_anchor(label, number) if label and number else ""


def caption_lead_markup(label: str, number: int, words: Labels) -> str:
    """The markup of "Figure 1: " before a numbered caption ("" for an unnumbered one)."""
    lead = caption_lead(label, number, words)
    return text_markup(f"{lead} ") if lead else ""
