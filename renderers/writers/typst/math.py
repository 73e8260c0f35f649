"""Formulas, cross-references and numbered captions in the Typst markup.

A formula is the SVG picture :mod:`renderers.math.svg` draws for every PDF (the WeasyPrint PDF
shows the same one), handed to Typst as a file in the compile root and sized in ``em`` of the
surrounding text, its alt text the TeX; TeX that cannot be read shows its source as code, as in
the HTML report. A displayed formula's number or tag stands at the right margin (the template's
``math-display``), and a numbered one carries the label references link to (``eq-1``). A
cross-reference is "Figure 1" linked to the figure's anchor (``fig-1``), and a numbered caption
starts "Figure 1: ".
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

from renderers.document import (
    CrossRef,
    Inline,
    Math,
    SoftBreak,
    Text,
    numbered_anchor,
)
from renderers.labels import Labels
from renderers.writers.common import caption_lead
from renderers.writers.typst.escape import string_literal, text_markup
from renderers.writers.typst.parts import RootFiles, call, code_span, labelled

#: What a displayed formula meets above or below it in its paragraph, which sets its margin
#: there (``math-display`` in the template): the paragraph's edge (CSS collapses the formula's
#: 0.5 em margin into the paragraph's 0.7 em), another displayed formula (their 0.5 em margins
#: collapse into one), or a line of text (0.5 em from that line's box).
DisplaySide = Literal["paragraph", "formula", "line"]


@dataclass(frozen=True)
class Displayed:
    """A displayed formula of a paragraph and what it meets above and below."""

    node: Math
    above: DisplaySide
    below: DisplaySide


def displayed_runs(children: tuple[Inline, ...]) -> Iterator[Displayed | tuple[Inline, ...]]:
    """A paragraph's inlines split at its displayed formulas: each formula with its sides, and
    the runs of inlines between them. The white space next to a formula goes, as CSS drops
    white space at a line's ends and a line of nothing but white space between two blocks
    (Typst set a space between two formulas as an empty line of its own)."""
    runs: list[list[Inline]] = [[]]
    formulas: list[Math] = []
    for child in children:
        if isinstance(child, Math) and child.display:
            formulas.append(child)
            runs.append([])
        else:
            runs[-1].append(child)
    last = len(formulas)
    trimmed = [_trimmed(run, start=n > 0, end=n < last) for n, run in enumerate(runs)]

    def side(run: int) -> DisplaySide:
        if trimmed[run]:
            return "line"
        return "paragraph" if run in (0, last) else "formula"

    for n, formula in enumerate(formulas):
        if trimmed[n]:
            yield trimmed[n]
        yield Displayed(formula, side(n), side(n + 1))
    if trimmed[last]:
        yield trimmed[last]


def _trimmed(run: list[Inline], *, start: bool, end: bool) -> tuple[Inline, ...]:
    """``run`` without the white space at its start (``start``: a formula comes before it) and
    at its end (``end``: one comes after it)."""
    nodes = list(run)
    while start and nodes and isinstance(nodes[0], SoftBreak | Text):
        first = nodes[0]
        text = first.text.lstrip(_WHITE) if isinstance(first, Text) else ""
        if text:
            nodes[0] = Text(text)
            break
        del nodes[0]
    while end and nodes and isinstance(nodes[-1], SoftBreak | Text):
        final = nodes[-1]
        text = final.text.rstrip(_WHITE) if isinstance(final, Text) else ""
        if text:
            nodes[-1] = Text(text)
            break
        del nodes[-1]
    return tuple(nodes)


#: The white space CSS collapses (``white-space: normal``).
_WHITE = " \t\n\r\f"


def math_markup(
    node: Math, root: RootFiles, *, bidi: bool,
    sides: tuple[DisplaySide, DisplaySide] = ("line", "line"),
) -> str:
    """A formula as its picture (a block of its own when displayed), or its TeX as code
    (``bidi``: see :func:`~.parts.code_span`); ``sides``: what a displayed formula meets
    above and below it (:func:`displayed_runs`)."""
    from renderers.math import MathError, parse_tex  # imported by a document's first formula

    try:
        formula = parse_tex(node.tex, node.display)
    except MathError:
        return code_span(node.tex, bidi=bidi)
    from renderers.math.svg import formula_drawing  # its MathML step imports xml.sax, urllib

    drawn = formula_drawing(formula)
    name, _ = root.name_of(drawn.svg.encode("utf-8"), "math", "svg")
    sizes = (f"{round(value, 4)}" for value in (drawn.width, drawn.height, drawn.depth))
    function = "math-display" if node.display else "math-inline"
    flags = [f"{name}: {string_literal(side)}" for name, side in zip(("above", "below"), sides,
             strict=True) if side != "line" and node.display]
    from renderers.math.marks import equation_mark

    if mark := equation_mark(node):  # "(1)" or a tag, at the right margin (the template's)
        flags.append(f"mark: {string_literal(mark)}")
    markup = call(function, string_literal(name), *sizes, string_literal(formula.tex), *flags)
    return labelled(markup, node.anchor)


def crossref_markup(
    node: CrossRef, labels: set[str], to_label: Callable[[str], str], words: Labels
) -> str:
    """"Figure 1", linked to the figure or table it names (plain text when it has no anchor or
    stands inside the author's link, :attr:`CrossRef.linked`), after a group's unlinked words
    (" and Tables "); ``to_label`` gives the destination of a link to a label."""
    name = text_markup(node.shown(words))
    lead = text_markup(node.lead(words)) if node.lead(words) else ""
    if not node.linked or node.anchor not in labels:
        return lead + name
    return f"{lead}#link({to_label(node.anchor)})[{name}];"


def numbered_anchor_of(label: str, number: int) -> str:
    """The anchor of a numbered figure or table, or "" when it is not numbered."""
    return numbered_anchor(label, number) if label and number else ""


def caption_lead_markup(label: str, number: int, words: Labels) -> str:
    """The markup of "Figure 1: " before a numbered caption ("" for an unnumbered one)."""
    lead = caption_lead(label, number, words)
    return text_markup(f"{lead} ") if lead else ""
