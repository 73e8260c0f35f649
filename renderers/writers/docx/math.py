"""Formulas and numbered captions in DOCX: Office Math (:mod:`renderers.math.omml`) inside the
paragraph, and the "Figure 1: " that starts a numbered caption, bookmarked for the references
that link to it.

A displayed formula with a mark (its number "(1)" or its own ``\\tag``:
:func:`renderers.math.marks.equation_mark`) is laid out as Word lays out numbered equations
by hand: a tab to a centre tab stop, the formula, a tab to a right tab stop at the margin, the
mark. Word and LibreOffice both show it so (a ``m:oMathPara`` would take the whole line).
The lines of a ``multline`` are laid out the same way (:func:`add_lines`), each its own
formula after a line break: the first at a left tab stop, the middle ones at the centre one,
the last at a right one, before the mark."""

from __future__ import annotations

from lxml import etree

from renderers.document import Inline, Math, numbered_anchor
from renderers.labels import Labels
from renderers.math import MathError, parse_tex
from renderers.math.omml import omml_lines, omml_math, omml_paragraph
from renderers.math.svg import draw_formula
from renderers.writers.common import caption_lead
from renderers.writers.docx.links import Bookmarks, add_hyperlink
from renderers.writers.docx.oxml import Element, RunProps, add_run, w


def add_math(p: Element, node: Math, code: RunProps, *, whole_paragraph: bool = False) -> None:
    """An ``m:oMath`` in paragraph ``p``, or with ``whole_paragraph`` a displayed formula
    filling it (``m:oMathPara``, centred by Word); TeX that is not math: its source in ``code``
    runs."""
    try:
        formula = parse_tex(node.tex, node.display)
    except MathError:
        add_run(p, node.tex, code)
        return
    p.append(omml_paragraph(formula) if whole_paragraph else omml_math(formula))


def add_marked_equation(p: Element, node: Math, mark: str, code: RunProps, *, start: int,
                        end: int) -> None:
    """A displayed formula centred between ``start`` and ``end`` (twips from the margin, as
    Word measures tab stops) and its ``mark`` ("(1)") at ``end``, in paragraph ``p``; below the
    formula, at ``end``, when the two do not fit on one line (:func:`_fits_beside`)."""
    _set_tabs(p, (("center", (start + end) // 2), ("right", end)))
    add_run(p, "\t")
    add_math(p, node, code)
    # on a line of its own the mark passes the centre stop to reach the right one
    add_run(p, "\t" + mark if _fits_beside(node, mark, end - start) else "\n\t\t" + mark)


def formula_lines(node: Math) -> list[Element]:
    """The lines of a displayed ``multline``, each an ``m:oMath`` (none for another formula,
    or TeX that is not math)."""
    try:
        return omml_lines(parse_tex(node.tex, node.display))
    except MathError:
        return []


#: amsmath's ``\multlinegap``: the first line of a ``multline`` stands this far (twips, 10 pt)
#: from the left margin, and its last this far from the right one when it has no mark.
MULTLINE_GAP = 200


def add_lines(p: Element, lines: list[Element], mark: str, *, start: int, end: int) -> None:
    """The ``lines`` of a ``multline`` in paragraph ``p`` between ``start`` and ``end`` (twips
    from the margin) as TeX sets them: the first at the left, the last at the right, before
    ``mark`` ("(1)", or "" for none) at ``end``, the others centred."""
    room = min(_mark_room(mark) if mark else MULTLINE_GAP,
               (end - start) // 3)  # a long tag: the stops stay in order
    _set_tabs(p, (("left", start + MULTLINE_GAP), ("center", (start + end) // 2),
                  ("right", end - room), ("right", end)))
    for index, line in enumerate(lines):
        stop = 3 if index == len(lines) - 1 else 1 if index == 0 else 2
        add_run(p, ("\n" if index else "") + "\t" * stop)
        p.append(line)
    if mark:
        add_run(p, "\t" + mark)


#: Body text's size in the default template (points), by which a formula's drawing, measured
#: in em, is scaled to tell whether its mark fits beside it. Word and LibreOffice cannot say
#: so themselves: a mark wrapped after a tab lands at the centre tab stop.
_BODY_PT = 11.0


def _mark_room(mark: str) -> int:
    """The twips ``mark`` takes at the right margin: an em before it, half an em a character."""
    return round((1 + len(mark) / 2) * _BODY_PT * 20)


def _fits_beside(node: Math, mark: str, width: int) -> bool:
    """Whether the formula and its mark fit on one line ``width`` twips wide (its drawing
    spaces operators as Word does)."""
    try:
        drawn = draw_formula(parse_tex(node.tex, node.display))
    except MathError:
        return True
    return drawn.width * _BODY_PT * 20 + _mark_room(mark) <= width


#: What comes before ``w:tabs`` in a ``w:pPr`` (its schema's order).
_BEFORE_TABS = frozenset(w(tag) for tag in (
    "pStyle", "keepNext", "keepLines", "pageBreakBefore", "framePr", "widowControl", "numPr",
    "suppressLineNumbers", "pBdr", "shd",
))


def _set_tabs(p: Element, stops: tuple[tuple[str, int], ...]) -> None:
    """Give paragraph ``p`` the tab stops ``stops`` (kind, position in twips)."""
    ppr = p.find(w("pPr"))
    if ppr is None:
        ppr = etree.Element(w("pPr"))
        p.insert(0, ppr)
    tabs = etree.Element(w("tabs"))
    for kind, position in stops:
        etree.SubElement(tabs, w("tab"), {w("val"): kind, w("pos"): str(position)})
    at = sum(1 for child in ppr if child.tag in _BEFORE_TABS)
    ppr.insert(at, tabs)


def equation(children: tuple[Inline, ...]) -> Math | None:
    """The formula of a paragraph that is a displayed formula on its own, else None."""
    only = children[0] if len(children) == 1 else None
    return only if isinstance(only, Math) and only.display else None


def bookmark_name(label: str, number: int) -> str:
    """The bookmark a numbered figure or table carries (``fig_1``, ``tbl_2``)."""
    return numbered_anchor(label, number).replace("-", "_")


def add_caption_label(p: Element, label: str, number: int, bookmarks: Bookmarks,
                      marks: dict[str, str], words: Labels) -> None:
    """"Figure 1: " at the start of a caption, inside the bookmark references jump to."""
    mark = marks.get(bookmark_name(label, number), "")
    bid = bookmarks.start(p, mark) if mark else None
    add_run(p, caption_lead(label, number, words), RunProps(bold=True))
    if bid is not None:
        bookmarks.end(p, bid)
    add_run(p, " ")


def add_crossref(p: Element, text: str, mark: str, props: RunProps, linked: RunProps) -> None:
    """"Figure 1", linked to bookmark ``mark`` (plain text inside another link, or when the
    figure has no bookmark)."""
    if not mark:
        add_run(p, text, props)
        return
    add_run(add_hyperlink(p, anchor=mark), text, linked)
