"""Formulas and numbered captions in DOCX: Office Math (:mod:`renderers.math.omml`) inside the
paragraph, and the "Figure 1: " that starts a numbered caption, bookmarked for the references
that link to it."""

from __future__ import annotations

from renderers.document import Inline, Math, numbered_anchor
from renderers.labels import Labels
from renderers.math import MathError, parse_tex
from renderers.math.omml import omml_math, omml_paragraph
from renderers.writers.common import caption_lead
from renderers.writers.docx.links import Bookmarks, add_hyperlink
from renderers.writers.docx.oxml import Element, RunProps, add_run


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
