"""The raw DrawingML python-pptx lacks, in one place: paragraphs with explicit indents, bullets
and exact line pitch; runs with superscript baseline, strike-through, a fixed typeface and
run-level hyperlinks (external URLs and slide jumps); text-frame body properties.

Everything else in the PPTX writer goes through python-pptx's public API.
"""

from __future__ import annotations

from functools import cache
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from lxml import etree
from pptx.opc.constants import RELATIONSHIP_TYPE as RT
from pptx.oxml import parse_xml
from pptx.oxml.ns import nsdecls, qn
from pptx.parts.slide import SlidePart

EMU_PER_PT = 12700
#: Raised baseline of superscripts (1/1000 %). Adjacent superscript runs alternate with
#: ALT_BASELINE: LibreOffice drops the raise of a linked run followed by an identical run.
SUPERSCRIPT_BASELINE = 30000
ALT_BASELINE = 31000
SLIDE_JUMP = "ppaction://hlinksldjump"
_NSDECLS = nsdecls("a", "r")
_ALIGN = {"left": "l", "center": "ctr", "right": "r", "default": "l"}

Element = Any  # an lxml element of python-pptx's oxml tree


@cache
def _clark(tag: str) -> str:
    """``a:p`` → ``{namespace}p`` (python-pptx's ``qn`` is slow; these few names are cached)."""
    return str(qn(tag))


def _sub(parent: Element, tag: str, **attrs: str) -> Element:
    return etree.SubElement(parent, _clark(tag), attrs)


def _hundredths(points: float) -> str:
    return str(round(points * 100))


def set_body(
    txBody: Element, *, inset_x: float, inset_y: float, anchor: str = "t", wrap: bool = True
) -> None:
    """Body properties of a text frame: fixed insets (points), top anchor, wrap, no autofit."""
    body_pr = txBody.find(_clark("a:bodyPr"))
    for child in list(body_pr):
        body_pr.remove(child)
    ins_x, ins_y = str(round(inset_x * EMU_PER_PT)), str(round(inset_y * EMU_PER_PT))
    body_pr.set("wrap", "square" if wrap else "none")
    body_pr.set("lIns", ins_x)
    body_pr.set("rIns", ins_x)
    body_pr.set("tIns", ins_y)
    body_pr.set("bIns", ins_y)
    body_pr.set("anchor", anchor)
    body_pr.set("rtlCol", "0")
    _sub(body_pr, "a:noAutofit")


def set_cell_margins(tc: Element, *, inset_x: float, inset_y: float) -> None:
    """Fixed table-cell margins (points) on ``a:tcPr``."""
    tc_pr = tc.get_or_add_tcPr()
    ins_x, ins_y = str(round(inset_x * EMU_PER_PT)), str(round(inset_y * EMU_PER_PT))
    tc_pr.set("marL", ins_x)
    tc_pr.set("marR", ins_x)
    tc_pr.set("marT", ins_y)
    tc_pr.set("marB", ins_y)


def clear_paragraphs(txBody: Element) -> None:
    """Remove every ``a:p`` of a text body (a body needs at least one before saving)."""
    for p in txBody.findall(_clark("a:p")):
        txBody.remove(p)


def paragraph_xml(
    runs: str,
    *,
    size: float,
    align: str = "left",
    margin_left: float = 0.0,
    indent: float = 0.0,
    space_before: float = 0.0,
    line_factor: float = 1.2,
    bullet: str = "",
    number: int = 0,
    bullet_font: str = "Arial",
) -> str:
    """An ``a:p`` holding ``runs`` (XML from :func:`run_xml`), with explicit indents (points),
    exact line pitch and its bullet.

    ``number`` > 0 writes an auto-number whose ``startAt`` is that number, so every item shows
    its own number even when a list continues on another slide; ``bullet`` writes ``buChar``;
    neither writes ``buNone``. The paragraph ends with ``a:endParaRPr`` so an empty one keeps
    its line height.
    """
    if number > 0:
        bu = (f'<a:buFont typeface="{_attr(bullet_font)}"/>'
              f'<a:buAutoNum type="arabicPeriod" startAt="{number}"/>')
    elif bullet:
        bu = f'<a:buFont typeface="{_attr(bullet_font)}"/><a:buChar char="{_attr(bullet)}"/>'
    else:
        bu = "<a:buNone/>"
    return (
        f'<a:p><a:pPr marL="{round(margin_left * EMU_PER_PT)}" '
        f'indent="{round(indent * EMU_PER_PT)}" algn="{_ALIGN.get(align, "l")}">'
        f'<a:lnSpc><a:spcPts val="{_hundredths(size * line_factor)}"/></a:lnSpc>'
        f'<a:spcBef><a:spcPts val="{_hundredths(space_before)}"/></a:spcBef>'
        f'<a:spcAft><a:spcPts val="0"/></a:spcAft>{bu}</a:pPr>{runs}'
        f'<a:endParaRPr lang="en-US" sz="{_hundredths(size)}" dirty="0"/></a:p>'
    )


def run_xml(
    text: str,
    *,
    size: float,
    typeface: str,
    bold: bool = False,
    italic: bool = False,
    strike: bool = False,
    baseline: int = 0,
    color: str = "",
    link_rid: str = "",
    slide_jump: bool = False,
) -> str:
    """An ``a:r``: fixed size and typeface, optional raised ``baseline`` and link.

    ``link_rid`` is a relationship id of the slide part: to an external URL, or (with
    ``slide_jump``) to another slide part.
    """
    attrs = (f'lang="en-US" sz="{_hundredths(size)}" b="{int(bold)}" i="{int(italic)}"'
             ' dirty="0"')
    if strike:
        attrs += ' strike="sngStrike"'
    if baseline:
        attrs += f' baseline="{baseline}"'
    fill = f'<a:solidFill><a:srgbClr val="{_attr(color)}"/></a:solidFill>' if color else ""
    face = _attr(typeface)
    link = ""
    if link_rid:
        action = f' action="{SLIDE_JUMP}"' if slide_jump else ""
        link = f'<a:hlinkClick r:id="{_attr(link_rid)}"{action}/>'
    return (f'<a:r><a:rPr {attrs}>{fill}<a:latin typeface="{face}"/><a:cs typeface="{face}"/>'
            f"{link}</a:rPr><a:t>{escape(text)}</a:t></a:r>")


def line_break_xml(size: float) -> str:
    """A hard line break (``a:br``) of the paragraph's size."""
    return f'<a:br><a:rPr lang="en-US" sz="{_hundredths(size)}"/></a:br>'


def append_paragraphs(txBody: Element, paragraphs: list[str]) -> None:
    """Parse ``paragraphs`` (from :func:`paragraph_xml`) once and append them to ``txBody``."""
    wrapper = parse_xml(f"<a:txBody {_NSDECLS}>{''.join(paragraphs)}</a:txBody>")
    txBody.extend(list(wrapper))


def _attr(value: str) -> str:
    return quoteattr(value)[1:-1]


def relate_slide(source: SlidePart, target: SlidePart) -> str:
    """The rId (in ``source``) of a slide relationship to ``target``, for slide-jump links."""
    return source.relate_to(target, RT.SLIDE)


def relate_url(source: SlidePart, url: str) -> str:
    """The rId (in ``source``) of an external hyperlink relationship to ``url``."""
    return source.relate_to(url, RT.HYPERLINK, is_external=True)


def set_alt_text(shape_element: Element, text: str) -> None:
    """Alternative text of a shape (``p:cNvPr/@descr``) for screen readers."""
    for c_nv_pr in shape_element.iter(_clark("p:cNvPr")):
        c_nv_pr.set("descr", text)
        return
