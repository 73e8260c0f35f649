"""Math and numbered captions in the HTML report (and so in the PDF and PNG).

A formula is written twice: as MathML, which browsers lay out, and as an SVG picture
(:mod:`renderers.math.svg`), because WeasyPrint shows MathML as a run of plain characters. The
CSS added to a report with math shows the MathML on screen and the picture in print, the media
WeasyPrint lays out. TeX that cannot be converted shows its source as code.

A displayed formula with a mark (its number "(1)", or its own ``\\tag``:
:func:`renderers.math.marks.equation_mark`) is a flex line of three: an empty spacer, the
formula, the mark, the two outer ones sharing the room left equally, so the formula stays
centred and the mark sits at the right margin, centred on the formula's height (the formula's
1 em side margins, alike on both sides, keep it off the mark). A formula too wide for that
moves left until it meets the mark (the mark keeps its own width); when formula and mark do
not fit on one line the mark wraps below, at the right (TeX's rule for ``\\eqno``). The line is
left-to-right in every document, so the mark is at the right margin as in every other format.
"""

from __future__ import annotations

from markupsafe import Markup, escape

from renderers.document import CrossRef, CrossRefForm, Math, numbered_anchor
from renderers.labels import Labels
from renderers.math import MathError, parse_tex
from renderers.math.marks import equation_mark
from renderers.math.mathml import mathml_markup
from renderers.math.svg import formula_drawing
from renderers.writers.common import caption_lead

#: Only in reports with math: MathML on screen, its SVG drawing in print (WeasyPrint). Then the
#: alignment of table cells for browsers of MathML Core (Chromium), which dropped
#: ``columnalign`` and ``columnspacing``: without it every cell is centred, and the ``=`` of an
#: ``aligned`` derivation's rows stood apart. In the align family (``columnspacing`` starting
#: "0em": pairs of a right and a left column) a pair touches and pairs stand 2 em apart, as the
#: attributes say and Firefox draws.
MATH_CSS = (
    ".math-svg{display:none}"
    "@media print{.math>math{display:none}.math-svg{display:inline}}"
    ".math.display{display:block;text-align:center;margin:.5em 0}"
    ".math.display .math-svg{display:none}"
    "@media print{.math.display .math-svg{display:inline-block}}"
    # The rest on screen only, where the MathML shows: print draws the pictures, and WeasyPrint
    # warned of each -webkit- value. A font with a MATH table, which a browser needs to stretch
    # braces and arrows: the one of each system (Windows, macOS, TeX installs, Debian's
    # fonts-dejavu-extra, Noto) before the browser's own choice, which on Linux is often a text
    # face that stretches nothing ...
    "@media screen{math{font-family:'Cambria Math','STIX Two Math','Latin Modern Math',"
    "'DejaVu Math TeX Gyre','Noto Sans Math',math}"
    # ... but not for an arrow under or over text: Chromium stretches DejaVu Math's arrow into
    # a line without its head, shorter than the text; Noto Sans Math's stays a whole arrow.
    ":is(mover,munder,munderover)>mo:first-child{font-family:'Cambria Math','STIX Two Math',"
    "'Latin Modern Math','Noto Sans Math',math}"
    # Chromium centres a cell's math by -webkit-center: plain left/right do not move it.
    "mtd[columnalign=left]{text-align:left;text-align:-webkit-left}"
    "mtd[columnalign=right]{text-align:right;text-align:-webkit-right}"
    "mtable[columnspacing^='0em']>mtr>mtd[columnalign=right]{padding-right:0}"
    "mtable[columnspacing^='0em']>mtr>mtd[columnalign=left]{padding-left:0}"
    "mtable[columnspacing^='0em']>mtr>mtd[columnalign=left]+mtd[columnalign=right]"
    "{padding-left:2em}}"
)
#: Only in reports with a numbered or tagged formula (:func:`math_markup`'s ``.equation``).
EQUATION_CSS = (
    ".equation{display:flex;flex-wrap:wrap;align-items:center;margin:.5em 0;direction:ltr}"
    ".equation::before{content:'';flex:1 1 0}"
    ".equation>.math.display{flex:0 0 auto;margin:0 1em}"
    ".eqno{flex:1 1 0;text-align:right;white-space:nowrap}"
)
#: A reference's class: ``xref`` (read back as a reference to the figure) or, for the number
#: alone or the author's prefix ("Chart 1"), ``xref-number`` (read back as a link showing the
#: words it shows).
_XREF_CLASS: dict[CrossRefForm, str] = {
    "name": "xref", "number": "xref-number", "names": "xref-number"}


def math_markup(node: Math) -> Markup:
    """A formula as MathML plus its print picture (or its source as code)."""
    try:
        formula = parse_tex(node.tex, node.display)
    except MathError:
        return Markup(f'<code class="math-error">{escape(node.tex)}</code>')
    drawn = formula_drawing(formula)
    picture = (
        f'<img class="math-svg" src="{drawn.data_uri()}" alt="{escape(formula.tex)}" '
        f'style="width:{drawn.width:.3f}em;height:{drawn.height:.3f}em;'
        f'vertical-align:{-drawn.depth:.3f}em">'
    )
    kind = "math display" if node.display else "math"
    shown = Markup(f'<span class="{kind}">{mathml_markup(formula)}{picture}</span>')
    mark = equation_mark(node)
    if not mark:
        return shown
    ident = f' id="{escape(node.anchor)}"' if node.anchor else ""
    return Markup(
        f'<span class="equation"{ident}>{shown}<span class="eqno">{escape(mark)}</span></span>'
    )


def crossref_markup(node: CrossRef, words: Labels) -> Markup:
    """A reference to a numbered figure or table: "Figure 1" (or "1"), linked to it; one of a
    group after its unlinked words (" and Tables 2"), the two in one ``<span>`` so that the
    markup stays one element (as the line's bidi reading parses it); inside the author's link
    (:attr:`CrossRef.linked`) the words alone, in a ``<span>``."""
    if not node.linked:
        return Markup(f"<span>{escape(node.lead(words) + node.shown(words))}</span>")
    kind = _XREF_CLASS["number" if node.prefix else node.form]  # the author's words as shown
    link = (
        f'<a class="{kind}" href="#{escape(node.anchor)}">'
        f"{escape(node.shown(words))}</a>"
    )
    lead = node.lead(words)
    return Markup(f"<span>{escape(lead)}{link}</span>" if lead else link)


def caption_label(label: str, number: int, words: Labels) -> Markup:
    """The "Figure 1:" that starts a numbered caption (nothing for an unnumbered one)."""
    lead = caption_lead(label, number, words)
    if not lead:
        return Markup("")
    return Markup(f'<span class="caption-label">{escape(lead)}</span> ')


def numbered_id(label: str, number: int) -> Markup:
    """The ``id`` attribute of a numbered figure or table."""
    if not label or not number:
        return Markup("")
    return Markup(f' id="{escape(numbered_anchor(label, number))}"')
