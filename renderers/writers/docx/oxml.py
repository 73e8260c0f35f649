"""Raw WordprocessingML that python-docx lacks: the namespace helpers, runs, paragraphs, tables.

Elements are built with lxml directly inside their final parent, which keeps the namespace
prefixes of the host part and avoids python-docx's per-call lookups on large documents. The
other raw-XML helpers live beside this module: :mod:`.links` (hyperlinks, bookmarks, link
relationships), :mod:`.numbering` (list definitions), :mod:`.styles` (style fallbacks) and
:mod:`.footnotes` (the footnotes part and its reference marks).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import cache
from typing import Any, Literal, TypeAlias

from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.oxml.ns import nsmap
from lxml import etree

from renderers.text import LRM, Direction, has_right_to_left
from renderers.writers.common import narrow_cell_margin
from renderers.writers.docx.bidi import direction_pieces

W_NS = nsmap["w"]
R_NS = nsmap["r"]
XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
Element: TypeAlias = etree._Element


@cache
def w(tag: str) -> str:
    """Clark name of a ``w:`` element or attribute (``w("p")`` → ``{…/main}p``)."""
    return f"{{{W_NS}}}{tag}"


R_ID = f"{{{R_NS}}}id"


def sub(parent: Element, tag: str, attrs: dict[str, str] | None = None) -> Element:
    """Append a ``w:tag`` child to ``parent``; attribute names are ``w:`` names without prefix."""
    if attrs:
        return etree.SubElement(parent, w(tag), {w(k): v for k, v in attrs.items()})
    return etree.SubElement(parent, w(tag))


# ---------------------------------------------------------------- runs


@dataclass(frozen=True)
class RunProps:
    """Character formatting of one run (direct formatting plus an optional character style)."""

    style: str = ""
    bold: bool = False
    italic: bool = False
    strike: bool = False
    mono: str = ""  # a monospace font family, "" for the document font
    color: str = ""
    underline: bool = False
    superscript: bool = False
    subscript: bool = False
    shade: str = ""
    highlight: str = ""  # a ST_HighlightColor name ("yellow"), "" for none
    size: int = 0  # half-points, 0 for the style's size
    rtl: bool = False  # right-to-left text: ``w:rtl``, and bold/italic for complex scripts too


def run_props(run: Element, props: RunProps) -> None:
    """Give ``run`` its ``w:rPr`` (copied from a cached prototype: runs repeat few formats)."""
    proto = _rpr_prototype(props)
    if proto is not None:
        run.append(copy.copy(proto))  # lxml copies the whole subtree


@cache
def _rpr_prototype(props: RunProps) -> Element | None:
    """``w:rPr`` for ``props`` in schema order (rStyle, rFonts, b, bCs, i, iCs, strike, color,
    sz, highlight, u, shd, vertAlign, rtl), or None for plain text. Word formats right-to-left
    runs with the complex-script properties, so bold and italic are given as ``bCs``/``iCs``
    there too."""
    if props == RunProps():
        return None
    rpr = etree.Element(w("rPr"), nsmap={"w": W_NS})
    if props.style:
        sub(rpr, "rStyle", {"val": props.style})
    if props.mono:
        sub(rpr, "rFonts", {"ascii": props.mono, "hAnsi": props.mono, "cs": props.mono})
    if props.bold:
        sub(rpr, "b")
        if props.rtl:
            sub(rpr, "bCs")
    if props.italic:
        sub(rpr, "i")
        if props.rtl:
            sub(rpr, "iCs")
    if props.strike:
        sub(rpr, "strike")
    if props.color:
        sub(rpr, "color", {"val": props.color})
    if props.size:
        sub(rpr, "sz", {"val": str(props.size)})
    if props.highlight:
        sub(rpr, "highlight", {"val": props.highlight})
    if props.underline:
        sub(rpr, "u", {"val": "single"})
    if props.shade:
        sub(rpr, "shd", {"val": "clear", "color": "auto", "fill": props.shade})
    if props.superscript or props.subscript:
        sub(rpr, "vertAlign", {"val": "superscript" if props.superscript else "subscript"})
    if props.rtl:
        sub(rpr, "rtl")
    return rpr


_PLAIN = RunProps()
_BREAKS = re.compile(r"(\n|\t)")


def add_run(parent: Element, text: str, props: RunProps = _PLAIN) -> Element:
    """Append a run holding ``text``; newlines become ``w:br`` and tabs ``w:tab``."""
    run = etree.SubElement(parent, w("r"))
    run_props(run, props)
    if "\n" in text or "\t" in text:
        for piece in _BREAKS.split(text):
            if piece == "\n":
                sub(run, "br")
            elif piece == "\t":
                sub(run, "tab")
            elif piece:
                _text(run, piece)
    elif text:
        _text(run, text)
    return run


#: An ISO date (``2022-04-04``, ``2022-04``): its hyphens may not end a line.
_ISO_DATE = re.compile(r"(?<![\w-])\d{4}-\d{2}(?:-\d{2})?(?![\w-])")
#: After each hyphen of a date in a right-to-left line: no line break there (UAX #14 WJ).
_WORD_JOINER = "\u2060"


def add_directed_runs(
    parent: Element, text: str, props: RunProps, line: Direction, *, dates: bool = False
) -> None:
    """Append ``text`` in a line reading ``line`` as one run per stretch of one direction
    (:func:`~renderers.writers.docx.bidi.direction_pieces`), each marked ``w:rtl`` only when it
    reads right to left; with ``dates``, each ISO date in it kept on one line
    (:func:`_dated_text`). A date read where the bidi algorithm is at work (a right-to-left
    line, or right-to-left text beside it) follows a LEFT-TO-RIGHT MARK: its digits, and so
    the hyphens between them, read left to right (UAX #9 W7, N1), in a run of its own."""
    if dates and (line == "rtl" or has_right_to_left(text)):
        text = _ISO_DATE.sub(lambda date: LRM + date.group(), text)
    for piece, direction in direction_pieces(text, line):
        run = etree.SubElement(parent, w("r"))
        run_props(run, replace(props, rtl=direction == "rtl"))
        if dates:
            _dated_text(run, piece, joined=line == "rtl")
        else:
            _text(run, piece)


def _dated_text(run: Element, text: str, *, joined: bool) -> None:
    """``text`` in ``run``, the hyphens of each ISO date in it kept from ending a line.

    In a left-to-right line they are Word's own no-break hyphens (``w:noBreakHyphen``):
    LibreOffice broke "2022-04-/04" at a plain one; it shows a no-break hyphen as "-" and copies
    it as U+2011, python-docx reads it as "-". In a right-to-left line (``joined``) each is a
    hyphen-minus and a WORD JOINER: LibreOffice lays a no-break hyphen out as a piece of its
    own, and inside the left-to-right date of a right-to-left line it then cut the date where
    the line was full ("2024-03-1" / "6", 19 cut in 110 Arabic entries) or drew the rest of
    the entry over it ("2024‑- ·1 e6n ↑ergy…"), whatever joiner or mark went with it; with the
    joiners, none. UAX #14 allows no break beside a joiner, nor before a hyphen; Word is
    assumed to follow it there (not tried)."""
    at = 0
    for date in _ISO_DATE.finditer(text):
        if date.start() > at:
            _text(run, text[at:date.start()])
        if joined:
            _text(run, date.group().replace("-", "-" + _WORD_JOINER))
        else:
            for index, part in enumerate(date.group().split("-")):
                if index:
                    sub(run, "noBreakHyphen")
                _text(run, part)
        at = date.end()
    if at < len(text):
        _text(run, text[at:])


def _text(run: Element, text: str) -> None:
    t = etree.SubElement(run, w("t"))
    t.text = text
    if text[0].isspace() or text[-1].isspace() or "  " in text:
        t.set(XML_SPACE, "preserve")


def add_break(parent: Element) -> Element:
    """Append a run holding a line break."""
    run = etree.SubElement(parent, w("r"))
    sub(run, "br")
    return run



# ---------------------------------------------------------------- paragraphs


@dataclass(frozen=True)
class ParaProps:
    """Paragraph formatting: style, list numbering, indentation, borders, shading, alignment."""

    style: str = ""
    keep_next: bool = False
    num: tuple[int, int] | None = None  # (numId, ilvl)
    border_left: bool = False
    border_box: bool = False
    border_bottom: bool = False
    shade: str = ""
    tabs: tuple[int, ...] = ()  # left tab stops (twips from the text's left margin)
    space_before: int | None = None
    space_after: int | None = None
    line_exact: int | None = None  # the line's exact height (twips)
    indent: int = 0
    hanging: int = 0
    align: str = ""  # "left" | "center" | "right" | "both"
    bidi: bool = False  # a right-to-left paragraph (``ind`` ``left`` is then its leading edge)
    #: body text's outline level (9) on a heading kept out of the contents: no entry in Word's
    #: navigation pane, its PDF's bookmarks or a contents field updated by LibreOffice
    unlisted: bool = False


def add_paragraph(parent: Element, props: ParaProps | None = None) -> Element:
    """Append a ``w:p`` with its ``w:pPr`` (copied from a cached prototype)."""
    p = etree.SubElement(parent, w("p"))
    proto = _ppr_prototype(props) if props is not None else None
    if proto is not None:
        p.append(copy.copy(proto))
    return p


def line_direction(parent: Element) -> Direction:
    """The direction of the paragraph holding ``parent`` (the paragraph, or a hyperlink in
    it): ``"rtl"`` when it is set right to left (``w:bidi``), as its runs are laid out."""
    p: Element | None = parent
    while p is not None and p.tag != w("p"):
        p = p.getparent()
    return "rtl" if p is not None and p.find(f"{w('pPr')}/{w('bidi')}") is not None else "ltr"


#: The paragraph that parts two framed blocks: one point high, no space around it.
_PARTING = ParaProps(space_before=0, space_after=0, line_exact=20)


def last_child(parent: Element) -> Element | None:
    """``parent``'s last child (None when it has none): the mark after which a block about to
    be appended starts (:func:`added_after`). lxml counts children by walking them all, so a
    mark taken with ``len(parent)`` before every block made a long document quadratic."""
    return next(parent.iterchildren(reversed=True), None)


def added_after(parent: Element, mark: Element | None) -> Iterator[Element]:
    """The children of ``parent`` after ``mark`` (:func:`last_child` before they were added)."""
    return parent.iterchildren() if mark is None else mark.itersiblings()


def part_joined_frames(parent: Element, mark: Element | None, props: ParaProps) -> None:
    """Keep the block written after ``mark`` (:func:`last_child` before it) apart from the
    block before it when both are framed alike (two quotes' bars): Word and
    LibreOffice draw adjacent paragraphs with the same borders and indent as one frame. An
    empty one-point paragraph (``props``' indent and direction) parts them; a border of
    another colour would too, but by a difference the reader is not meant to see."""
    first = next(added_after(parent, mark), None)
    if mark is None or first is None:
        return
    if mark.tag != w("p") or first.tag != w("p") or _frame(mark) is None:
        return
    if _frame(mark) == _frame(first):
        mark.addnext(add_paragraph(parent, parting(props)))  # lxml moves the element


def parting(props: ParaProps) -> ParaProps:
    """The paragraph that parts two framed blocks, at ``props``' indent and direction."""
    return replace(_PARTING, indent=props.indent, bidi=props.bidi)


def _frame(p: Element) -> tuple[bytes, bytes] | None:
    """The borders and indent of paragraph ``p`` as XML, or None when it has no border."""
    ppr = p.find(w("pPr"))
    borders = ppr.find(w("pBdr")) if ppr is not None else None
    if ppr is None or borders is None:
        return None
    indent = ppr.find(w("ind"))
    return etree.tostring(borders), etree.tostring(indent) if indent is not None else b""


#: The colour of every frame's lines: quotes' bars, rules, code boxes, tables' grids.
BORDER_COLOR = "A6A6A6"


#: An edge of a frame (a paragraph's or a table's), or a table's lines between its cells.
Side: TypeAlias = Literal["top", "left", "bottom", "right", "insideH", "insideV"]


@dataclass(frozen=True)
class Edge:
    """One edge of a frame: its line's width in eighths of a point and the space between it
    and the text in points (a paragraph's ``w:pBdr`` child; a table's border with that
    space as its cells' margin)."""

    side: Side
    size: int
    space: int

    @property
    def padding(self) -> int:
        """The space in twips: a table's cells' margin at this edge."""
        return self.space * 20


def frame_edges(props: ParaProps) -> tuple[Edge, ...]:
    """The edges ``props`` draws: a box, a quote's wide bar at the left (on a box too: a code
    block in a quote), a rule below."""
    sides: tuple[Side, ...] = ()
    if props.border_box:
        sides = ("top", "left", "bottom", "right")
    elif props.border_left:
        sides = ("left",)
    if props.border_bottom and "bottom" not in sides:
        sides += ("bottom",)
    return tuple(Edge(side, 18, 6) if props.border_left and side == "left" else Edge(side, 6, 4)
                 for side in sides)


@cache
def _ppr_prototype(props: ParaProps) -> Element | None:
    """``w:pPr`` for ``props`` in schema order, or None when it would be empty."""
    ppr = etree.Element(w("pPr"), nsmap={"w": W_NS})
    if props.style:
        sub(ppr, "pStyle", {"val": props.style})
    if props.keep_next:
        sub(ppr, "keepNext")
    if props.num is not None:
        num_pr = sub(ppr, "numPr")
        sub(num_pr, "ilvl", {"val": str(props.num[1])})
        sub(num_pr, "numId", {"val": str(props.num[0])})
    if edges := frame_edges(props):
        bdr = sub(ppr, "pBdr")
        for edge in edges:
            sub(bdr, edge.side, {"val": "single", "sz": str(edge.size), "space": str(edge.space),
                                 "color": BORDER_COLOR})
    if props.shade:
        sub(ppr, "shd", {"val": "clear", "color": "auto", "fill": props.shade})
    if props.tabs:
        stops = sub(ppr, "tabs")
        for pos in props.tabs:
            sub(stops, "tab", {"val": "left", "pos": str(pos)})
    if props.bidi:
        sub(ppr, "bidi")
    if props.space_before is not None or props.space_after is not None or props.line_exact:
        spacing: dict[str, str] = {}
        if props.space_before is not None:
            spacing["before"] = str(props.space_before)
        if props.space_after is not None:
            spacing["after"] = str(props.space_after)
        if props.line_exact:
            spacing.update(line=str(props.line_exact), lineRule="exact")
        sub(ppr, "spacing", spacing)
    if props.indent:
        ind = {"left": str(props.indent)}
        if props.hanging:
            ind["hanging"] = str(props.hanging)
        sub(ppr, "ind", ind)
    if props.align:
        sub(ppr, "jc", {"val": props.align})
    if props.unlisted:
        sub(ppr, "outlineLvl", {"val": "9"})
    return ppr if len(ppr) else None


#: The ``w:pPr`` children that come after ``w:spacing`` in the schema's order.
_AFTER_SPACING = frozenset(w(tag) for tag in (
    "ind", "contextualSpacing", "mirrorIndents", "suppressOverlap", "jc", "textDirection",
    "textAlignment", "textboxTightWrap", "outlineLvl", "divId", "cnfStyle", "rPr", "sectPr",
    "pPrChange"))


def child(parent: Element, tag: str, *, first: bool = False) -> Element:
    """``parent``'s ``w:tag`` child, made (as its first or last child) when it has none."""
    found = parent.find(w(tag))
    if found is None:
        found = parent.makeelement(w(tag), {})
        if first:
            parent.insert(0, found)
        else:
            parent.append(found)
    return found


def set_space_after(p: Element, twips: int) -> None:
    """Set the space below the written paragraph ``p`` (its ``w:spacing`` ``after``), the
    rest of its properties kept."""
    ppr = child(p, "pPr", first=True)
    spacing = ppr.find(w("spacing"))
    if spacing is None:
        spacing = etree.Element(w("spacing"))
        later = next((child for child in ppr if child.tag in _AFTER_SPACING), None)
        if later is not None:
            later.addprevious(spacing)
        else:
            ppr.append(spacing)
    spacing.set(w("after"), str(twips))


# ---------------------------------------------------------------- tables


#: A data table's lines: its edges and those between its cells, thin; the text's space from
#: them is the cells' side margin (:func:`cell_margin`).
GRID = tuple(Edge(side, 4, 0)
             for side in ("top", "left", "bottom", "right", "insideH", "insideV"))


def add_table(
    parent: Element, widths: list[int], *, indent: int = 0, rtl: bool = False,
    edges: tuple[Edge, ...] = GRID, indent_at_edge: bool = False,
) -> Element:
    """Append a ``w:tbl`` with column ``widths`` (twips), laid out fixed (Word would
    otherwise fit columns to their text, LibreOffice not), drawn with ``edges``; rows via
    :func:`add_row`, each cell as wide as its grid column (:func:`add_cell`).

    Edges with a space (a frame's, :func:`frame_edges`) keep the cells' text that far from
    each of them, as a paragraph's border does. The first cell's text starts at ``indent``,
    as a paragraph's at that indent, its edge a cell margin further left: ``w:tblInd``, which
    Word measures to that text, or to the edge in a base document of compatibility mode 15
    and later (``indent_at_edge``, :func:`indents_tables_at_edge`). A right-to-left table
    (``w:bidiVisual``) lays its columns out from the right."""
    tbl = etree.SubElement(parent, w("tbl"))
    tbl_pr = sub(tbl, "tblPr")
    if rtl:
        sub(tbl_pr, "bidiVisual")
    sub(tbl_pr, "tblW", {"w": str(sum(widths)), "type": "dxa"})
    padding = {edge.side: edge.padding for edge in edges if edge.space}
    if not padding:
        padding = dict.fromkeys(("left", "right"), cell_margin(widths))
    if indent_at_edge:
        indent -= padding.get("left", 0)
    if indent:
        sub(tbl_pr, "tblInd", {"w": str(indent), "type": "dxa"})
    borders = sub(tbl_pr, "tblBorders")
    for edge in edges:
        sub(borders, edge.side, {"val": "single", "sz": str(edge.size), "space": "0",
                                 "color": BORDER_COLOR})
    sub(tbl_pr, "tblLayout", {"type": "fixed"})  # the widths given, in Word and LibreOffice
    margins = sub(tbl_pr, "tblCellMar")
    for side in ("top", "left", "bottom", "right"):  # the schema's order
        if side in padding:
            sub(margins, side, {"w": str(padding[side]), "type": "dxa"})
    sub(tbl_pr, "tblLook", {"val": "04A0", "firstRow": "1", "lastRow": "0", "firstColumn": "0",
                            "lastColumn": "0", "noHBand": "0", "noVBand": "1"})
    grid = sub(tbl, "tblGrid")
    for width in widths:
        sub(grid, "gridCol", {"w": str(width)})
    return tbl


def indents_tables_at_edge(settings: Element) -> bool:
    """Whether the base document's ``settings`` (``word/settings.xml``) ask for Word 2013's
    layout or later (compatibility mode 15), where ``w:tblInd`` places a table's left edge,
    not its first cell's text (as in python-docx's template, mode 14; LibreOffice follows
    either). Documents that Word saves now are of mode 15: a reference DOCX often is."""
    mode = settings.find(f"{w('compat')}/{w('compatSetting')}[@{w('name')}='compatibilityMode']")
    return mode is not None and int(mode.get(w("val"), "0")) >= 15


#: Space between a cell's border and its text, each side, in twips (4 pt)...
CELL_MARGIN = 80


def cell_margin(widths: list[int]) -> int:
    """... or less in narrow columns (:func:`~renderers.writers.common.narrow_cell_margin` of
    the narrowest column)."""
    return int(narrow_cell_margin(min(widths, default=CELL_MARGIN), CELL_MARGIN))


def add_row(tbl: Element, *, header: bool = False, whole: bool = False) -> Element:
    """Append a ``w:tr``; a header row repeats on every page and, as a ``whole`` one, may
    not split across pages."""
    tr = etree.SubElement(tbl, w("tr"))
    if header or whole:
        tr.append(copy.copy(_trpr_prototype(header)))
    return tr


@cache
def _trpr_prototype(header: bool) -> Element:
    """``w:trPr`` of a row that may not split, repeated on every page as a ``header``."""
    tr_pr = etree.Element(w("trPr"), nsmap={"w": W_NS})
    sub(tr_pr, "cantSplit")
    if header:
        sub(tr_pr, "tblHeader")
    return tr_pr


def add_cell(
    tr: Element, width: int, *, shade: str = "", margins: tuple[Side, ...] = ()
) -> Element:
    """Append a ``w:tc`` of ``width`` twips, without the table's cell margins at the sides
    ``margins`` names; the caller adds at least one paragraph. Its ``w:tcPr`` is copied from
    a cached prototype: a code block's rows repeat three."""
    tc = etree.SubElement(tr, w("tc"))
    tc.append(copy.copy(_tcpr_prototype(width, shade, margins)))
    return tc


@cache
def _tcpr_prototype(width: int, shade: str, margins: tuple[Side, ...]) -> Element:
    tc_pr = etree.Element(w("tcPr"), nsmap={"w": W_NS})
    sub(tc_pr, "tcW", {"w": str(width), "type": "dxa"})
    if shade:
        sub(tc_pr, "shd", {"val": "clear", "color": "auto", "fill": shade})
    if margins:
        mar = sub(tc_pr, "tcMar")
        for side in margins:
            sub(mar, side, {"w": "0", "type": "dxa"})
    return tc_pr


def add_drawing(p: Element, inline: Element) -> None:
    """Append a run holding a ``w:drawing`` with the picture ``inline``."""
    run = etree.SubElement(p, w("r"))
    sub(run, "drawing").append(inline)


# ---------------------------------------------------------------- package hygiene


def drop_thumbnail(package: Any) -> None:
    """Remove the template's thumbnail image (a python-docx leftover showing a blank page)."""
    for rid, rel in list(package.rels.items()):
        if rel.reltype == RT.THUMBNAIL:
            package.rels.pop(rid)


def clear_body(body: Element) -> Element:
    """Remove every block of ``body`` except its final ``w:sectPr``, which is detached and returned.

    The caller appends content and re-appends the section properties last.
    """
    sect_pr = body.find(w("sectPr"))
    for child in list(body):
        body.remove(child)
    if sect_pr is None:
        sect_pr = etree.Element(w("sectPr"))
    return sect_pr
