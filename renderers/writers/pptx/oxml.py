"""Slide XML as text: the PPTX writer builds each slide's shape tree here and hands python-pptx
the finished part (parsing and re-serializing thousands of small fragments through python-pptx's
element classes was most of the writer's time).

The markup is what python-pptx writes for the same shapes (``add_textbox``, ``add_table``,
``add_picture``, placeholder clones), plus what it lacks: paragraphs with explicit indents,
bullets and exact line pitch; runs with superscript baseline, strike-through, a fixed typeface
and run-level hyperlinks (external URLs and slide jumps); fixed text-frame insets.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any
from xml.sax.saxutils import escape

from pptx.opc.constants import RELATIONSHIP_TYPE as RT
from pptx.opc.package import Part
from pptx.oxml.ns import nsdecls
from pptx.oxml.shapes.autoshape import CT_Shape

from renderers.writers.ooxml import attribute_text as _attr
from renderers.writers.pptx.model import EMU_PER_PT

#: Raised baseline of superscripts (1/1000 %). Adjacent superscript runs alternate with
#: ALT_BASELINE: LibreOffice drops the raise of a linked run followed by an identical run.
SUPERSCRIPT_BASELINE = 30000
ALT_BASELINE = 31000
SLIDE_JUMP = "ppaction://hlinksldjump"
TABLE_STYLE = "{5C22544A-7EE6-4342-B048-85BDC9FD1C3A}"  # python-pptx's default table style
_ALIGN = {"left": "l", "center": "ctr", "right": "r", "default": "l"}
RTL = ' rtl="1"'
_SLIDE_OPEN = (
    "<?xml version='1.0' encoding='UTF-8' standalone='yes'?>\n"
    f'<p:sld {nsdecls("a", "p", "r")}>'
    '<p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/>'
    "</p:nvGrpSpPr><p:grpSpPr/>"
)
_SLIDE_CLOSE = "</p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sld>"

Rect = tuple[int, int, int, int]  # left, top, width, height (EMU)


def _hundredths(points: float) -> str:
    return str(round(points * 100))


@cache


def _xfrm(box: Rect, tag: str = "a:xfrm") -> str:
    left, top, width, height = box
    return f'<{tag}><a:off x="{left}" y="{top}"/><a:ext cx="{width}" cy="{height}"/></{tag}>'


def slide_xml(shapes: Sequence[str]) -> bytes:
    """A whole slide part (``p:sld``) holding ``shapes`` in its shape tree."""
    return (_SLIDE_OPEN + "".join(shapes) + _SLIDE_CLOSE).encode("utf-8")


def text_body_xml(
    paragraphs: Sequence[str], *, inset_x: float, inset_y: float, anchor: str = "t",
    tag: str = "p:txBody", shrink: bool = False,
) -> str:
    """A text frame: fixed insets (points), ``anchor``, square wrap.

    The layout sizes every frame to its measured text, so nothing needs autofit; ``shrink``
    writes ``normAutofit`` all the same, a second guard: a client that wraps to more lines
    than measured (LibreOffice) shrinks the text into the frame instead of past the slide.
    """
    ins_x, ins_y = round(inset_x * EMU_PER_PT), round(inset_y * EMU_PER_PT)
    fit = "<a:normAutofit/>" if shrink else "<a:noAutofit/>"
    return (
        f'<{tag}><a:bodyPr wrap="square" lIns="{ins_x}" rIns="{ins_x}" tIns="{ins_y}" '
        f'bIns="{ins_y}" anchor="{anchor}" rtlCol="0">{fit}</a:bodyPr><a:lstStyle/>'
        f'{"".join(paragraphs)}</{tag}>'
    )


@cache
def placeholder_attrs(ph_type: Any, orient: Any, sz: Any, idx: int) -> str:
    """The attributes of a cloned layout placeholder's ``p:ph`` (as python-pptx writes them)."""
    sp: Any = CT_Shape.new_placeholder_sp(2, "placeholder", ph_type, orient, sz, idx)
    ph = sp.nvSpPr.nvPr.ph
    return "".join(f' {name}="{_attr(str(value))}"' for name, value in ph.attrib.items())


def placeholder_xml(shape_id: int, name: str, ph_attrs: str, box: Rect, body: str) -> str:
    """A placeholder shape inheriting from its layout, placed at ``box`` with text ``body``."""
    return (
        f'<p:sp><p:nvSpPr><p:cNvPr id="{shape_id}" name="{_attr(name)}"/><p:cNvSpPr>'
        f'<a:spLocks noGrp="1"/></p:cNvSpPr><p:nvPr><p:ph{ph_attrs}/></p:nvPr></p:nvSpPr>'
        f"<p:spPr>{_xfrm(box)}</p:spPr>{body}</p:sp>"
    )


def textbox_xml(
    shape_id: int, name: str, box: Rect, body: str, *, fill: str = "", line: str = ""
) -> str:
    """A text box at ``box``: no fill unless ``fill`` (RGB hex), outlined when ``line``."""
    fill_xml = f'<a:solidFill><a:srgbClr val="{fill}"/></a:solidFill>' if fill else "<a:noFill/>"
    line_xml = f'<a:ln><a:solidFill><a:srgbClr val="{line}"/></a:solidFill></a:ln>' if line else ""
    return (
        f'<p:sp><p:nvSpPr><p:cNvPr id="{shape_id}" name="{_attr(name)}"/>'
        f'<p:cNvSpPr txBox="1"/><p:nvPr/></p:nvSpPr><p:spPr>{_xfrm(box)}'
        f'<a:prstGeom prst="rect"><a:avLst/></a:prstGeom>{fill_xml}{line_xml}</p:spPr>'
        f"{body}</p:sp>"
    )


def table_xml(
    shape_id: int,
    name: str,
    box: Rect,
    col_widths: Sequence[int],
    rows: Sequence[tuple[int, Sequence[str]]],
    *,
    first_row: bool,
    inset_x: float,
    inset_y: float,
    rtl: bool = False,
) -> str:
    """A table frame; ``rows`` are (height EMU, one paragraph's XML per cell), banded rows;
    ``rtl`` puts the first column at the right."""
    ins_x, ins_y = round(inset_x * EMU_PER_PT), round(inset_y * EMU_PER_PT)
    tc_pr = f'<a:tcPr marL="{ins_x}" marR="{ins_x}" marT="{ins_y}" marB="{ins_y}"/>'
    grid = "".join(f'<a:gridCol w="{w}"/>' for w in col_widths)
    body = "".join(
        f'<a:tr h="{height}">'
        + "".join(f"<a:tc><a:txBody><a:bodyPr/><a:lstStyle/>{cell}</a:txBody>{tc_pr}</a:tc>"
                  for cell in cells)
        + "</a:tr>"
        for height, cells in rows
    )
    first = (' firstRow="1"' if first_row else "") + (RTL if rtl else "")
    return (
        f'<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="{shape_id}" name="{_attr(name)}"/>'
        '<p:cNvGraphicFramePr><a:graphicFrameLocks noGrp="1"/></p:cNvGraphicFramePr><p:nvPr/>'
        f'</p:nvGraphicFramePr>{_xfrm(box, "p:xfrm")}<a:graphic>'
        '<a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/table">'
        f'<a:tbl><a:tblPr{first} bandRow="1"><a:tableStyleId>{TABLE_STYLE}</a:tableStyleId>'
        f"</a:tblPr><a:tblGrid>{grid}</a:tblGrid>{body}</a:tbl></a:graphicData></a:graphic>"
        "</p:graphicFrame>"
    )


def picture_xml(shape_id: int, name: str, descr: str, rid: str, box: Rect) -> str:
    """A picture of the image part related as ``rid``, stretched to ``box``."""
    return (
        f'<p:pic><p:nvPicPr><p:cNvPr id="{shape_id}" name="{_attr(name)}" '
        f'descr="{_attr(descr)}"/><p:cNvPicPr><a:picLocks noChangeAspect="1"/></p:cNvPicPr>'
        f'<p:nvPr/></p:nvPicPr><p:blipFill><a:blip r:embed="{_attr(rid)}"/><a:stretch>'
        f'<a:fillRect/></a:stretch></p:blipFill><p:spPr>{_xfrm(box)}<a:prstGeom prst="rect">'
        "<a:avLst/></a:prstGeom></p:spPr></p:pic>"
    )


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
    rtl: bool = False,
    level: int = 0,
    lang: str,
) -> str:
    """An ``a:p`` holding ``runs`` (XML from :func:`run_xml`), with explicit indents (points),
    exact line pitch and its bullet; ``rtl`` sets the paragraph right to left (``rtl="1"``:
    the bidi base direction, so that a citation number lands after the words it follows).

    ``number`` > 0 writes an auto-number whose ``startAt`` is that number, so every item shows
    its own number even when a list continues on another slide; ``bullet`` writes ``buChar``;
    neither writes ``buNone``. The paragraph ends with ``a:endParaRPr`` so an empty one keeps
    its line height.

    ``level`` (the list or quote depth, ``lvl``, at most 8) tells a viewer which paragraphs
    are one list: without it every item is at level 0, and LibreOffice counted a nested list
    on from its parent's items ("5. deep one" under "4. four"), as a ``startAt`` of 1 is the
    default it continues from.
    """
    if number > 0:
        bu = (f'<a:buFont typeface="{_attr(bullet_font)}"/>'
              f'<a:buAutoNum type="arabicPeriod" startAt="{number}"/>')
    elif bullet:
        bu = f'<a:buFont typeface="{_attr(bullet_font)}"/><a:buChar char="{_attr(bullet)}"/>'
    else:
        bu = "<a:buNone/>"
    lvl = f'lvl="{min(level, 8)}" ' if level > 0 else ""
    return (
        f'<a:p><a:pPr marL="{round(margin_left * EMU_PER_PT)}" '
        f"{lvl}"
        f'indent="{round(indent * EMU_PER_PT)}" algn="{_ALIGN.get(align, "l")}"'
        f'{RTL if rtl else ""}>'
        f'<a:lnSpc><a:spcPts val="{_hundredths(size * line_factor)}"/></a:lnSpc>'
        f'<a:spcBef><a:spcPts val="{_hundredths(space_before)}"/></a:spcBef>'
        f'<a:spcAft><a:spcPts val="0"/></a:spcAft>{bu}</a:pPr>{runs}'
        f'<a:endParaRPr lang="{_attr(lang)}" sz="{_hundredths(size)}" dirty="0"/></a:p>'
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
    lang: str,
) -> str:
    """An ``a:r``: fixed size and typeface, optional raised ``baseline`` and link, in language
    ``lang`` (a BCP 47 tag: the document's, :func:`renderers.language.language_for`).

    ``link_rid`` is a relationship id of the slide part: to an external URL, or (with
    ``slide_jump``) to another slide part.
    """
    link = ""
    if link_rid:
        action = f' action="{SLIDE_JUMP}"' if slide_jump else ""
        link = f'<a:hlinkClick r:id="{_attr(link_rid)}"{action}/>'
    head = _run_head(size, typeface, bold, italic, strike, baseline, color, lang)
    return f"{head}{link}</a:rPr><a:t>{escape(text)}</a:t></a:r>"


@cache
def _run_head(
    size: float, typeface: str, bold: bool, italic: bool, strike: bool, baseline: int, color: str,
    lang: str,
) -> str:
    """``<a:r><a:rPr …>`` up to the link (a deck uses only a handful of run styles)."""
    attrs = (f'lang="{_attr(lang)}" sz="{_hundredths(size)}" b="{int(bold)}" i="{int(italic)}"'
             ' dirty="0"')
    if strike:
        attrs += ' strike="sngStrike"'
    if baseline:
        attrs += f' baseline="{baseline}"'
    fill = f'<a:solidFill><a:srgbClr val="{_attr(color)}"/></a:solidFill>' if color else ""
    face = _attr(typeface)
    return f'<a:r><a:rPr {attrs}>{fill}<a:latin typeface="{face}"/><a:cs typeface="{face}"/>'


def line_break_xml(size: float, lang: str) -> str:
    """A hard line break (``a:br``) of the paragraph's size."""
    return f'<a:br><a:rPr lang="{_attr(lang)}" sz="{_hundredths(size)}"/></a:br>'


def relate_slide(source: Part, target: Part) -> str:
    """The rId of a new slide relationship from ``source`` to ``target`` (slide-jump links).

    Always a new relationship, in constant time (python-pptx's ``relate_to`` first scans every
    relationship of the part): callers ask once per target, as the PPTX writer caches rIds.
    """
    return str(source.rels._add_relationship(RT.SLIDE, target))


def relate_url(source: Part, url: str) -> str:
    """The rId of a new external hyperlink relationship from ``source`` to ``url`` (once per
    URL, like :func:`relate_slide`)."""
    return str(source.rels._add_relationship(RT.HYPERLINK, url, is_external=True))
