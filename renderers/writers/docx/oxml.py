"""Raw WordprocessingML that python-docx lacks, confined to one module.

Hyperlinks (external ``r:id`` and internal ``w:anchor``), bookmarks, footnotes (the
``footnotes.xml`` part and reference runs), list numbering definitions, paragraph and run
properties (shading, borders, superscript), fast table construction and style fallbacks.
Elements are built with lxml directly inside their final parent, which keeps the namespace
prefixes of the host part and avoids python-docx's per-call lookups on large documents.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, TypeAlias

from docx.opc.constants import CONTENT_TYPE as CT
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.packuri import PackURI
from docx.opc.part import Part, PartFactory, XmlPart
from docx.oxml.ns import nsmap
from docx.oxml.parser import parse_xml
from lxml import etree

# A footnotes part found in a reference document must be editable XML, not an opaque blob.
PartFactory.part_type_for.setdefault(CT.WML_FOOTNOTES, XmlPart)

W_NS = nsmap["w"]
R_NS = nsmap["r"]
XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
Element: TypeAlias = etree._Element
ListKind = Literal["bullet", "decimal"]

#: Twips per level of list and block-quote indentation.
INDENT_STEP = 720
LIST_HANGING = 360
_BULLETS = ("\u2022", "\u25e6", "\u25aa")
_DECIMAL_FORMATS = ("decimal", "lowerLetter", "lowerRoman")
_BOOKMARK_BAD = re.compile(r"[^A-Za-z0-9_]+")
BOOKMARK_MAX = 40


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


def _run_props(run: Element, props: RunProps) -> None:
    """Give ``run`` its ``w:rPr`` (copied from a cached prototype: runs repeat few formats)."""
    proto = _rpr_prototype(props)
    if proto is not None:
        run.append(copy.copy(proto))  # lxml copies the whole subtree


@cache
def _rpr_prototype(props: RunProps) -> Element | None:
    """``w:rPr`` for ``props`` in schema order (rStyle, rFonts, b, i, strike, color, sz,
    highlight, u, shd, vertAlign), or None for plain text."""
    if props == RunProps():
        return None
    rpr = etree.Element(w("rPr"), nsmap={"w": W_NS})
    if props.style:
        sub(rpr, "rStyle", {"val": props.style})
    if props.mono:
        sub(rpr, "rFonts", {"ascii": props.mono, "hAnsi": props.mono, "cs": props.mono})
    if props.bold:
        sub(rpr, "b")
    if props.italic:
        sub(rpr, "i")
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
    return rpr


_PLAIN = RunProps()
_BREAKS = re.compile(r"(\n|\t)")


def add_run(parent: Element, text: str, props: RunProps = _PLAIN) -> Element:
    """Append a run holding ``text``; newlines become ``w:br`` and tabs ``w:tab``."""
    run = etree.SubElement(parent, w("r"))
    _run_props(run, props)
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


# ---------------------------------------------------------------- links and bookmarks


def add_hyperlink(
    parent: Element, *, rid: str = "", anchor: str = "", tooltip: str = ""
) -> Element:
    """Append a ``w:hyperlink``: external through relationship ``rid`` or internal to ``anchor``."""
    link = etree.SubElement(parent, w("hyperlink"))
    if rid:
        link.set(R_ID, rid)
    if anchor:
        link.set(w("anchor"), anchor)
    if tooltip:
        link.set(w("tooltip"), tooltip[:255])
    link.set(w("history"), "1")
    return link


class Bookmarks:
    """Unique bookmark ids and valid names: a letter, then letters, digits, ``_``; ≤ 40 chars."""

    def __init__(self) -> None:
        self._next_id = 0
        self._names: set[str] = set()

    def name_for(self, wanted: str) -> str:
        """A valid bookmark name derived from ``wanted``, unique in this document; reserves it."""
        base = _BOOKMARK_BAD.sub("_", wanted).strip("_") or "bm"
        if not base[0].isalpha():
            base = f"b_{base}"
        base = base[:BOOKMARK_MAX]
        name, n = base, 1
        while name in self._names:
            n += 1
            suffix = f"_{n}"
            name = base[: BOOKMARK_MAX - len(suffix)] + suffix
        self._names.add(name)
        return name

    def start(self, parent: Element, name: str) -> int:
        """Append ``w:bookmarkStart`` for ``name``; return its id for :meth:`end`."""
        bid = self._next_id
        self._next_id += 1
        sub(parent, "bookmarkStart", {"id": str(bid), "name": name})
        return bid

    @staticmethod
    def end(parent: Element, bid: int) -> None:
        """Append the ``w:bookmarkEnd`` of bookmark ``bid``."""
        sub(parent, "bookmarkEnd", {"id": str(bid)})


class Relations:
    """External hyperlink relationships of one part, one ``rId`` per distinct URL."""

    def __init__(self, part: Part) -> None:
        self.part = part
        self._ids: dict[str, str] = {}
        self._next = 1

    def link(self, url: str) -> str:
        """The ``rId`` of an external hyperlink relationship to ``url``.

        Added directly (python-docx's ``relate_to`` scans every relationship on each call).
        """
        rid = self._ids.get(url)
        if rid is None:
            rels = self.part.rels
            while f"rId{self._next}" in rels:
                self._next += 1
            rid = f"rId{self._next}"
            rels.add_relationship(RT.HYPERLINK, url, rid, is_external=True)
            self._ids[url] = rid
        return rid


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
    space_before: int | None = None
    space_after: int | None = None
    indent: int = 0
    hanging: int = 0
    align: str = ""  # "left" | "center" | "right" | "both"


def add_paragraph(parent: Element, props: ParaProps | None = None) -> Element:
    """Append a ``w:p`` with its ``w:pPr`` (copied from a cached prototype)."""
    p = etree.SubElement(parent, w("p"))
    proto = _ppr_prototype(props) if props is not None else None
    if proto is not None:
        p.append(copy.copy(proto))
    return p


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
    if props.border_left or props.border_box or props.border_bottom:
        bdr = sub(ppr, "pBdr")
        edges: tuple[str, ...] = ()
        if props.border_box:
            edges = ("top", "left", "bottom", "right")
        elif props.border_left:
            edges = ("left",)
        if props.border_bottom and "bottom" not in edges:
            edges += ("bottom",)
        for edge in edges:
            wide = props.border_left and edge == "left"
            sub(bdr, edge, {"val": "single", "sz": "18" if wide else "6",
                            "space": "6" if wide else "4", "color": "A6A6A6"})
    if props.shade:
        sub(ppr, "shd", {"val": "clear", "color": "auto", "fill": props.shade})
    if props.space_before is not None or props.space_after is not None:
        spacing: dict[str, str] = {}
        if props.space_before is not None:
            spacing["before"] = str(props.space_before)
        if props.space_after is not None:
            spacing["after"] = str(props.space_after)
        sub(ppr, "spacing", spacing)
    if props.indent:
        ind = {"left": str(props.indent)}
        if props.hanging:
            ind["hanging"] = str(props.hanging)
        sub(ppr, "ind", ind)
    if props.align:
        sub(ppr, "jc", {"val": props.align})
    return ppr if len(ppr) else None


# ---------------------------------------------------------------- tables


def add_table(parent: Element, widths: list[int], *, indent: int = 0) -> Element:
    """Append a bordered ``w:tbl`` with column ``widths`` (twips); rows via :func:`add_row`."""
    tbl = etree.SubElement(parent, w("tbl"))
    tbl_pr = sub(tbl, "tblPr")
    sub(tbl_pr, "tblW", {"w": str(sum(widths)), "type": "dxa"})
    if indent:
        sub(tbl_pr, "tblInd", {"w": str(indent), "type": "dxa"})
    borders = sub(tbl_pr, "tblBorders")
    for edge in ("top", "left", "bottom", "right", "insideH", "insideV"):
        sub(borders, edge, {"val": "single", "sz": "4", "space": "0", "color": "A6A6A6"})
    margins = sub(tbl_pr, "tblCellMar")
    sub(margins, "left", {"w": "80", "type": "dxa"})
    sub(margins, "right", {"w": "80", "type": "dxa"})
    sub(tbl_pr, "tblLook", {"val": "04A0", "firstRow": "1", "lastRow": "0", "firstColumn": "0",
                            "lastColumn": "0", "noHBand": "0", "noVBand": "1"})
    grid = sub(tbl, "tblGrid")
    for width in widths:
        sub(grid, "gridCol", {"w": str(width)})
    return tbl


def add_row(tbl: Element, *, header: bool = False) -> Element:
    """Append a ``w:tr``; a header row repeats on every page and may not split."""
    tr = etree.SubElement(tbl, w("tr"))
    if header:
        tr_pr = sub(tr, "trPr")
        sub(tr_pr, "cantSplit")
        sub(tr_pr, "tblHeader")
    return tr


def add_cell(tr: Element, width: int, *, shade: str = "") -> Element:
    """Append a ``w:tc`` of ``width`` twips; the caller adds at least one paragraph."""
    tc = etree.SubElement(tr, w("tc"))
    tc_pr = sub(tc, "tcPr")
    sub(tc_pr, "tcW", {"w": str(width), "type": "dxa"})
    if shade:
        sub(tc_pr, "shd", {"val": "clear", "color": "auto", "fill": shade})
    return tc


# ---------------------------------------------------------------- numbering


class Numbering:
    """List definitions in ``numbering.xml``: one abstract definition per kind, one num per list.

    Every list gets its own ``w:num`` with a ``w:startOverride`` so that numbering restarts for
    each list (Word continues numbers across nums of one abstract definition without it).
    """

    def __init__(self, numbering: Element) -> None:
        self._root = numbering
        self._abstract: dict[ListKind, int] = {}
        abstract_ids = [
            int(e.get(w("abstractNumId"), "0")) for e in numbering.iter(w("abstractNum"))
        ]
        num_ids = [int(e.get(w("numId"), "0")) for e in numbering.iter(w("num"))]
        self._next_abstract = max(abstract_ids, default=-1) + 1
        self._next_num = max(num_ids, default=0) + 1

    def new_list(self, kind: ListKind, level: int, start: int = 1) -> int:
        """A fresh ``numId`` for a list of ``kind`` at ``level`` (0–8) starting at ``start``."""
        abstract_id = self._abstract.get(kind)
        if abstract_id is None:
            abstract_id = self._add_abstract(kind)
        num_id = self._next_num
        self._next_num += 1
        num = sub(self._root, "num", {"numId": str(num_id)})
        sub(num, "abstractNumId", {"val": str(abstract_id)})
        override = sub(num, "lvlOverride", {"ilvl": str(level)})
        sub(override, "startOverride", {"val": str(max(start, 0))})
        return num_id

    def _add_abstract(self, kind: ListKind) -> int:
        abstract_id = self._next_abstract
        self._next_abstract += 1
        self._abstract[kind] = abstract_id
        node = etree.Element(w("abstractNum"))
        node.set(w("abstractNumId"), str(abstract_id))
        sub(node, "multiLevelType", {"val": "multilevel"})
        for level in range(9):
            lvl = sub(node, "lvl", {"ilvl": str(level)})
            sub(lvl, "start", {"val": "1"})
            if kind == "bullet":
                sub(lvl, "numFmt", {"val": "bullet"})
                sub(lvl, "lvlText", {"val": _BULLETS[level % len(_BULLETS)]})
            else:
                sub(lvl, "numFmt", {"val": _DECIMAL_FORMATS[level % len(_DECIMAL_FORMATS)]})
                sub(lvl, "lvlText", {"val": f"%{level + 1}."})
            sub(lvl, "lvlJc", {"val": "left"})
            ppr = sub(lvl, "pPr")
            sub(ppr, "ind", {"left": str(list_indent(level)), "hanging": str(LIST_HANGING)})
        existing = list(self._root.iter(w("abstractNum")))
        if existing:
            existing[-1].addnext(node)
        else:
            first_num = self._root.find(w("num"))
            if first_num is not None:
                first_num.addprevious(node)
            else:
                self._root.append(node)
        return abstract_id


def list_indent(level: int) -> int:
    """Left indent (twips) of list text at ``level``."""
    return INDENT_STEP * (level + 1)


# ---------------------------------------------------------------- styles


@dataclass(frozen=True)
class StyleDef:
    """A fallback style definition added when the base document lacks the style."""

    kind: Literal["paragraph", "character"]
    style_id: str
    name: str
    ppr: str = ""
    rpr: str = ""
    based_on: str = ""


def _heading(level: int, size: int) -> StyleDef:
    return StyleDef(
        "paragraph", f"Heading{level}", f"heading {level}",
        ppr='<w:keepNext/><w:spacing w:before="240" w:after="80"/>'
        f'<w:outlineLvl w:val="{level - 1}"/>',
        rpr=f'<w:b/><w:sz w:val="{size}"/>', based_on="Normal",
    )


FALLBACK_STYLES: dict[str, StyleDef] = {
    d.name.lower(): d
    for d in (
        StyleDef("paragraph", "Title", "Title", ppr='<w:spacing w:after="240"/>',
                 rpr='<w:sz w:val="48"/>', based_on="Normal"),
        *(_heading(n, size) for n, size in enumerate((32, 28, 26, 24, 22, 22), start=1)),
        StyleDef("paragraph", "ListParagraph", "List Paragraph", ppr='<w:contextualSpacing/>',
                 based_on="Normal"),
        StyleDef("paragraph", "Caption", "caption", ppr='<w:spacing w:after="200"/>',
                 rpr='<w:i/><w:sz w:val="18"/>', based_on="Normal"),
        StyleDef("paragraph", "FootnoteText", "footnote text", ppr='<w:spacing w:after="0"/>',
                 rpr='<w:sz w:val="18"/>', based_on="Normal"),
        StyleDef("character", "FootnoteReference", "footnote reference",
                 rpr='<w:vertAlign w:val="superscript"/>'),
        StyleDef("character", "Hyperlink", "Hyperlink",
                 rpr='<w:color w:val="0563C1"/><w:u w:val="single"/>'),
    )
}


class StyleBook:
    """Resolve style names to ids in ``styles.xml``, adding a fallback definition when missing."""

    def __init__(self, styles: Element) -> None:
        self._root = styles
        self._ids: dict[tuple[str, str], str] = {}
        self._all_ids: set[str] = set()
        for style in styles.iter(w("style")):
            style_id = style.get(w("styleId"), "")
            name = style.find(w("name"))
            self._all_ids.add(style_id)
            if name is not None:
                key = (style.get(w("type"), "paragraph"), name.get(w("val"), "").lower())
                self._ids.setdefault(key, style_id)

    def get(self, name: str) -> str:
        """The styleId of the style called ``name`` (case-insensitive), created if missing."""
        fallback = FALLBACK_STYLES.get(name.lower())
        kind = fallback.kind if fallback else "paragraph"
        key = (kind, name.lower())
        found = self._ids.get(key)
        if found is not None:
            return found
        if fallback is None:
            return ""
        self._ids[key] = self._add(fallback)
        return self._ids[key]

    def _add(self, spec: StyleDef) -> str:
        style_id, n = spec.style_id, 1
        while style_id in self._all_ids:
            n += 1
            style_id = f"{spec.style_id}{n}"
        self._all_ids.add(style_id)
        based = f'<w:basedOn w:val="{spec.based_on}"/>' if spec.based_on in self._all_ids else ""
        xml = (
            f'<w:style xmlns:w="{W_NS}" w:type="{spec.kind}" w:styleId="{style_id}">'
            f'<w:name w:val="{spec.name}"/>{based}<w:qFormat/>'
            + (f"<w:pPr>{spec.ppr}</w:pPr>" if spec.ppr else "")
            + (f"<w:rPr>{spec.rpr}</w:rPr>" if spec.rpr else "")
            + "</w:style>"
        )
        self._root.append(parse_xml(xml))
        return style_id


# ---------------------------------------------------------------- footnotes

_FOOTNOTES_XML = (
    f'<w:footnotes xmlns:w="{W_NS}" xmlns:r="{R_NS}">'
    '<w:footnote w:type="separator" w:id="-1"><w:p><w:pPr><w:spacing w:after="0" w:line="240" '
    'w:lineRule="auto"/></w:pPr><w:r><w:separator/></w:r></w:p></w:footnote>'
    '<w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:pPr><w:spacing w:after="0" '
    'w:line="240" w:lineRule="auto"/></w:pPr><w:r><w:continuationSeparator/></w:r></w:p>'
    "</w:footnote></w:footnotes>"
)


class Footnotes:
    """The document's ``footnotes.xml`` part, created on first use.

    A footnotes part inherited from a reference document keeps its separators; its other
    footnotes belonged to the discarded body and are removed.
    """

    def __init__(self, document_part: Any) -> None:
        self._document_part = document_part
        self._part: XmlPart | None = None
        self._next_id = 1
        self.relations: Relations | None = None

    @property
    def part(self) -> XmlPart:
        """The footnotes part (created and related to the document part when missing)."""
        if self._part is None:
            self._part = self._find_or_create()
            self.relations = Relations(self._part)
        return self._part

    def _find_or_create(self) -> XmlPart:
        for rel in self._document_part.rels.values():
            if rel.reltype == RT.FOOTNOTES and not rel.is_external:
                part = rel.target_part
                if isinstance(part, XmlPart):
                    root = part.element
                    for note in list(root.iter(w("footnote"))):
                        if note.get(w("type"), "normal") == "normal":
                            root.remove(note)
                    ids = [int(n.get(w("id"), "0")) for n in root.iter(w("footnote"))]
                    self._next_id = max([0, *ids]) + 1
                    return part
        element = parse_xml(_FOOTNOTES_XML)
        package = self._document_part.package
        part = XmlPart(PackURI("/word/footnotes.xml"), CT.WML_FOOTNOTES, element, package)
        self._document_part.relate_to(part, RT.FOOTNOTES)
        return part

    def add(self) -> tuple[int, Element]:
        """A new, empty ``w:footnote``; returns ``(id, element)``."""
        root = self.part.element
        fid = self._next_id
        self._next_id += 1
        note = sub(root, "footnote", {"id": str(fid)})
        return fid, note


def add_footnote_reference(parent: Element, fid: int, style: str) -> Element:
    """Append the superscript reference run of footnote ``fid`` in the body."""
    run = etree.SubElement(parent, w("r"))
    _run_props(run, RunProps(style=style, superscript=True))
    sub(run, "footnoteReference", {"id": str(fid)})
    return run


def insert_footnote_mark(p: Element, style: str) -> None:
    """Start paragraph ``p`` with the footnote's own number mark (``w:footnoteRef``) and a space."""
    holder = etree.Element(w("p"))
    run = etree.SubElement(holder, w("r"))
    _run_props(run, RunProps(style=style, superscript=True))
    sub(run, "footnoteRef")
    add_run(holder, " ")
    position = 1 if len(p) and p[0].tag == w("pPr") else 0
    for offset, child in enumerate(list(holder)):
        p.insert(position + offset, child)


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
