"""The PPTX writer: draws the measured slide model (:mod:`renderers.writers.pptx.layout`).

python-pptx holds the package (template or default deck, layouts, relationships, images); each
slide part is written as finished XML by :mod:`renderers.writers.pptx.oxml`, and the package is
zipped once by :func:`renderers.writers.ooxml.write_package`. Citations are superscript runs whose
numbers jump to the Sources slide holding their entry; each content slide carries a footer naming
the sources it cites. Output is byte-identical for the same input (fixed core properties and zip
metadata, no stale thumbnail).
"""

from __future__ import annotations

import hashlib
import io
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pptx import Presentation
from pptx.opc.constants import CONTENT_TYPE as CT
from pptx.opc.constants import RELATIONSHIP_TYPE as RT
from pptx.opc.package import Part
from pptx.opc.packuri import PackURI
from pptx.oxml.ns import qn
from pptx.presentation import Presentation as PresentationObj
from pptx.slide import SlideLayout
from pptx.util import Emu

from renderers.diagnostics import Code, Diagnostic
from renderers.document import Alignment
from renderers.options import RenderOptions
from renderers.resolve import ResolvedDocument
from renderers.sandbox import load_image
from renderers.writers import Artifact, WriteSource
from renderers.writers.common import ImageBytes, document_author
from renderers.writers.ooxml import (
    PackageCollector,
    apply_core_properties,
    open_reference,
    relationships_xml,
    write_package,
)
from renderers.writers.pptx import oxml as px
from renderers.writers.pptx.layout import build_deck
from renderers.writers.pptx.model import (
    CODE_SIZE,
    FOOTER_SIZE,
    INSET_X,
    INSET_Y,
    LINE_FACTOR,
    SUBTITLE_SIZE,
    Box,
    CodeItem,
    Deck,
    Geometry,
    ImageLoader,
    Para,
    Picture,
    PictureItem,
    Run,
    Slide,
    TableItem,
    TextItem,
)
from renderers.writers.pptx.notes import (
    NotesLayout,
    add_notes_page,
    ensure_notes_master_listed,
    notes_page_xml,
)
from renderers.writers.pptx.runs import runs_rtl

FOOTER_COLOR = "595959"
CODE_FILL = "F3F4F6"
CODE_LINE = "D0D7DE"
SLIDE_16_9 = (12192000, 6858000)
SLIDE_4_3 = (9144000, 6858000)
_TITLE_TYPES = ("center_title", "title")


def pptx_bytes(rdoc: ResolvedDocument, options: RenderOptions) -> bytes:
    """Render ``rdoc`` as a PPTX deck and return its bytes (deterministic)."""
    return _write_deck(rdoc, options)[0]


def pptx_artifact(source: WriteSource) -> Artifact:
    """The PPTX writer: the deck, its slide count, and what the slide model had to shorten.

    The deck shows the speaker notes, so it cites what they cite too (its own plan)."""
    data, deck = _write_deck(source.rdoc, source.options)
    shown = source.rdoc.with_speaker_notes
    return Artifact(
        (data,),
        stats={"slides": len(deck.slides)},
        diagnostics=tuple(Diagnostic(Code.CONTENT_SHORTENED, note) for note in deck.warnings),
        sources=shown.plan if shown is not source.rdoc else None,
    )


def _write_deck(rdoc: ResolvedDocument, options: RenderOptions) -> tuple[bytes, Deck]:
    """The deck's bytes and the slide model they were drawn from (speaker notes included)."""
    rdoc = rdoc.with_speaker_notes
    options = options.validate()
    prs = _open(options)
    layouts = Layouts.pick(prs)
    geometry = geometry_for(prs, layouts, options)
    deck = build_deck(rdoc, options, geometry, load_image=_image_loader(options))
    DeckWriter(prs, layouts, deck).write()
    apply_core_properties(prs.core_properties, title=deck.title,
                          author=document_author(rdoc.document, options),
                          keywords=rdoc.document.keywords,
                          subject=rdoc.document.description)
    return _package_bytes(prs), deck


def _package_bytes(prs: PresentationObj) -> bytes:
    """The members ``Presentation.save`` writes, zipped once by write_package."""
    from pptx.opc.serialized import PackageWriter

    package = prs.part.package
    parts = tuple(package.iter_parts())
    collector = PackageCollector()
    writer: Any = PackageWriter(io.BytesIO(), package._rels, parts)
    writer._write_content_types_stream(collector)
    writer._write_pkg_rels(collector)
    refs: dict[tuple[str, str], str] = {}  # (base URI, part name) → relative reference

    def target_ref(base: str, rel: Any) -> str:
        if rel.is_external:
            return str(rel.target_ref)
        name = rel.target_part.partname
        ref = refs.get((base, name))
        if ref is None:
            ref = refs[base, name] = name.relative_ref(base)
        return ref

    for part in parts:
        collector.members[part.partname.membername] = part.blob
        if part._rels:
            base = part.partname.baseURI
            collector.members[part.partname.rels_uri.membername] = relationships_xml(
                (rel.rId, rel.reltype, target_ref(base, rel), rel.is_external)
                for rel in part.rels.values()
            )
    return write_package(collector.members)


# ================================================================ presentation and layouts


def _open(options: RenderOptions) -> PresentationObj:
    """A fresh presentation, or the reference deck emptied of its slides."""
    if options.reference_pptx is None:
        prs = Presentation()
        prs.slide_width, prs.slide_height = (
            Emu(n) for n in (SLIDE_16_9 if options.slide_ratio == "16:9" else SLIDE_4_3)
        )
    else:
        prs = open_reference(
            Path(options.reference_pptx), "reference_pptx", "PowerPoint deck (.pptx/.potx)",
            Presentation,
        )
        _remove_slides(prs)
    _drop_thumbnail(prs)
    return prs


def _remove_slides(prs: PresentationObj) -> None:
    """Drop every slide of a template properly: its ``sldId`` and the relationship to its part."""
    root = prs.part._element
    sld_id_lst = root.find(qn("p:sldIdLst"))
    if sld_id_lst is not None:
        for sld_id in list(sld_id_lst):
            rid = sld_id.get(qn("r:id"))
            sld_id_lst.remove(sld_id)
            if rid:
                prs.part.drop_rel(rid)
    # custom shows and slide sections name the removed slides: drop them too
    for tag in ("p:custShowLst",):
        for node in root.findall(qn(tag)):
            root.remove(node)
    for node in root.iter("{http://schemas.microsoft.com/office/powerpoint/2010/main}sectionLst"):
        ext = node.getparent()
        ext.getparent().remove(ext)


def _drop_thumbnail(prs: PresentationObj) -> None:
    """Remove the package thumbnail: it would show the template, not this deck."""
    package = prs.part.package
    for rid, rel in list(package._rels.items()):
        if rel.reltype == RT.THUMBNAIL:
            package.drop_rel(rid)


def _kind(shape: object) -> str:
    """A placeholder's type as a lower-case name: ``title``, ``center_title``, ``body`` …"""
    return str(shape.element.ph_type.name).lower()  # type: ignore[attr-defined]


def _placeholders(layout: SlideLayout) -> list[Any]:
    holder: Any = layout
    return list(holder.placeholders)


def _placeholder_types(layout: SlideLayout) -> list[str]:
    return [_kind(ph) for ph in _placeholders(layout)]


class Layouts:
    """The layouts used for cover, section and content slides (by name, then by placeholders)."""

    def __init__(self, cover: SlideLayout, section: SlideLayout, content: SlideLayout,
                 body: SlideLayout) -> None:
        self.cover = cover
        self.section = section
        self.content = content
        self.body = body  # where the content box is read from ("Title and Content")

    @classmethod
    def pick(cls, prs: PresentationObj) -> Layouts:
        layouts = list(prs.slide_layouts)

        def find(names: Sequence[str], test: Callable[[SlideLayout], bool]) -> SlideLayout:
            for name in names:
                for layout in layouts:
                    if layout.name.strip().lower() == name.lower() and test(layout):
                        return layout
            for layout in layouts:
                if test(layout):
                    return layout
            return layouts[0]

        def has_title(layout: SlideLayout) -> bool:
            return any(t in _placeholder_types(layout) for t in ("title", "center_title"))

        def is_title_only(layout: SlideLayout) -> bool:
            types = _placeholder_types(layout)
            return "title" in types and not any(
                t.startswith(("body", "object")) for t in types
            )

        def has_body(layout: SlideLayout) -> bool:
            types = _placeholder_types(layout)
            return "title" in types and any(t.startswith(("body", "object")) for t in types)

        cover = find(("Title Slide",), lambda lay: "center_title" in _placeholder_types(lay))
        content = find(("Title Only",), is_title_only)
        if not is_title_only(content):
            content = find(("Title and Content",), has_title)
        body = find(("Title and Content",), has_body)
        section = find(("Section Header",), has_title)
        return cls(cover, section, content, body)


def _placeholder_box(layout: SlideLayout, kinds: Sequence[str]) -> Box | None:
    for kind in kinds:
        for ph in _placeholders(layout):
            if _kind(ph) == kind:
                left, top, width, height = ph.left, ph.top, ph.width, ph.height
                if None in (left, top, width, height) or not width or not height:
                    continue
                return Box(int(left), int(top), int(width), int(height))
    return None


def geometry_for(prs: PresentationObj, layouts: Layouts, options: RenderOptions) -> Geometry:
    """The built-in geometry, or the boxes of the reference deck's layouts."""
    if options.reference_pptx is None:
        return Geometry.default(options.slide_ratio, footer=options.source_footer)
    width, height = int(prs.slide_width or SLIDE_16_9[0]), int(prs.slide_height or SLIDE_16_9[1])
    ratio = "16:9" if width / height > 1.5 else "4:3"
    base = Geometry.default(ratio, footer=options.source_footer)
    sx, sy = width / base.width, height / base.height

    def scaled(box: Box) -> Box:
        return Box(round(box.left * sx), round(box.top * sy), round(box.width * sx),
                   round(box.height * sy))

    title = _placeholder_box(layouts.content, ("title",)) or scaled(base.title)
    body = _placeholder_box(layouts.body, ("object", "body"))
    if body is None:
        top = title.bottom + (title.height // 8)
        body = Box(title.left, top, title.width, height - top - height // 20)
    return Geometry.from_boxes(
        width=width,
        height=height,
        title=title,
        body=body,
        cover_title=_placeholder_box(layouts.cover, ("center_title", "title"))
        or scaled(base.cover_title),
        cover_subtitle=_placeholder_box(layouts.cover, ("subtitle",))
        or scaled(base.cover_subtitle),
        section_title=_placeholder_box(layouts.section, ("title",)) or scaled(base.section_title),
        footer=options.source_footer,
    )


def _image_loader(options: RenderOptions) -> ImageLoader:
    """Images through the sandbox, their bytes counted against ``limits.max_image_bytes``."""
    image_bytes = ImageBytes(options.limits.max_image_bytes)

    def load(src: str) -> Picture | None:
        loaded = load_image(src, options)
        if loaded is None:
            return None
        # one media part per distinct image
        image_bytes.add(len(loaded.data), key=hashlib.sha256(loaded.data).digest())
        return Picture(loaded.data, loaded.mime, loaded.width, loaded.height)

    return load


# ================================================================ drawing


class _Shapes:
    """The shape tree of one slide being written: XML fragments and the next shape id."""

    def __init__(self) -> None:
        self.xml: list[str] = []
        self.next_id = 2  # id 1 is the tree itself

    def take_id(self) -> int:
        shape_id = self.next_id
        self.next_id += 1
        return shape_id


class DeckWriter:
    """Adds the deck's slides to ``prs`` and draws every item.

    Each slide part is written as finished XML (:mod:`renderers.writers.pptx.oxml`); python-pptx
    keeps the package: layouts, relationships, image parts and the presentation's slide list.
    """

    def __init__(self, prs: PresentationObj, layouts: Layouts, deck: Deck) -> None:
        self.prs = prs
        self.layouts = layouts
        self.deck = deck
        self.sans = deck.fonts.sans
        self.mono = deck.fonts.mono
        self.parts: list[Part] = []
        self._count = 0
        self._specs: dict[int, dict[str, str]] = {}
        self._rids: dict[tuple[int, str | int], str] = {}

    def write(self) -> None:
        self.parts = [self.new_slide(s) for s in self.deck.slides]
        for index, slide in enumerate(self.deck.slides):
            self.parts[index].blob = self.draw(index, slide)
        self.write_notes()

    def write_notes(self) -> None:
        """A notes page for every slide with speaker notes (and the notes master they need)."""
        noted = [(index, slide) for index, slide in enumerate(self.deck.slides) if slide.notes]
        if not noted:
            return
        prs_part = self.prs.part
        geometry = self.deck.geometry
        layout = NotesLayout.of(prs_part, geometry.width, geometry.height)
        ensure_notes_master_listed(prs_part)
        master = prs_part.notes_master_part
        for number, (index, slide) in enumerate(noted, start=1):
            page = add_notes_page(number, self.parts[index], master)
            page.blob = notes_page_xml([self.paragraph(page, p) for p in slide.notes], layout)

    def layout_for(self, slide: Slide) -> SlideLayout:
        return {"title": self.layouts.cover, "section": self.layouts.section}.get(
            slide.kind, self.layouts.content
        )

    def specs(self, layout: SlideLayout) -> dict[str, str]:
        """The layout's title (and subtitle) placeholder, as the ``p:ph`` attributes to clone."""
        key = id(layout)
        if key not in self._specs:
            found: dict[str, str] = {}
            for ph in _placeholders(layout):
                kind = _kind(ph)
                role = "title" if kind in _TITLE_TYPES else kind
                if role in ("title", "subtitle") and role not in found:
                    sp = ph.element
                    found[role] = px.placeholder_attrs(sp.ph_type, sp.ph_orient, sp.ph_sz,
                                                       sp.ph_idx)
            self._specs[key] = found
        return self._specs[key]

    def new_slide(self, slide: Slide) -> Part:
        """Add an (empty) slide part in constant time, related to its layout.

        python-pptx's ``add_slide`` rescans every slide id and relationship (quadratic over a
        deck); here part names and slide ids come from counters.
        """
        prs_part = self.prs.part
        self._count += 1
        part = Part(PackURI(f"/ppt/slides/slide{self._count}.xml"), CT.PML_SLIDE,
                    prs_part.package, b"")
        part.relate_to(self.layout_for(slide).part, RT.SLIDE_LAYOUT)
        rid = prs_part._rels._add_relationship(RT.SLIDE, part)
        prs_part._element.get_or_add_sldIdLst()._add_sldId(id=255 + self._count, rId=rid)
        return part

    # ------------------------------------------------------------ one slide

    def draw(self, index: int, slide: Slide) -> bytes:
        """The XML of slide ``index``: title (and subtitle) placeholders, items, footer."""
        geo = self.deck.geometry
        part = self.parts[index]
        shapes = _Shapes()
        align: Alignment = "default"
        box, anchor = geo.title, "b"
        if slide.kind in ("title", "section"):
            box = geo.cover_title if slide.kind == "title" else geo.section_title
            align, anchor = "center", ("ctr" if slide.kind == "title" else "b")
        specs = self.specs(self.layout_for(slide))
        texts: dict[str, tuple[Box, str]] = {}
        if slide.title:
            para = Para(slide.title, size=slide.title_size, space_before=0.0, align=align)
            texts["title"] = (box, self.text_body(part, [para], anchor=anchor))
        if slide.kind == "title" and slide.subtitle and "subtitle" in specs:
            lines = [Para((Run(line),), size=SUBTITLE_SIZE, space_before=0.0, align="center")
                     for line in slide.subtitle]
            texts["subtitle"] = (geo.cover_subtitle, self.text_body(part, lines))
        for role, ph_attrs in specs.items():
            if role in texts:
                shape_id = shapes.take_id()
                role_box, body = texts[role]
                shapes.xml.append(px.placeholder_xml(shape_id, f"{role.title()} {shape_id - 1}",
                                                     ph_attrs, _emu(role_box), body))
        if "title" in texts and "title" not in specs:
            self.textbox(shapes, *texts["title"])
        content = geo.content
        for item in slide.items:
            match item:
                case TextItem(paras, top, height):
                    box = Box(content.left, content.top + top, content.width, height)
                    self.textbox(shapes, box, self.text_body(part, paras, shrink=True))
                case CodeItem():
                    self.code(shapes, item)
                case TableItem():
                    self.table(part, shapes, item)
                case PictureItem():
                    self.picture(part, shapes, item)
        if slide.footer:
            para = Para(slide.footer, size=FOOTER_SIZE, space_before=0.0, rtl=slide.footer_rtl)
            self.textbox(shapes, geo.footer, self.text_body(part, [para], color=FOOTER_COLOR),
                         name="Sources")
        return px.slide_xml(shapes.xml)

    def textbox(self, shapes: _Shapes, box: Box, body: str, name: str = "", fill: str = "",
                line: str = "") -> None:
        shape_id = shapes.take_id()
        shapes.xml.append(px.textbox_xml(shape_id, name or f"TextBox {shape_id - 1}", _emu(box),
                                         body, fill=fill, line=line))

    def text_body(self, part: Part, paras: Sequence[Para], anchor: str = "t",
                  color: str = "", *, shrink: bool = False) -> str:
        return px.text_body_xml([self.paragraph(part, para, color=color) for para in paras],
                                inset_x=INSET_X, inset_y=INSET_Y, anchor=anchor, shrink=shrink)

    def paragraph(self, part: Part, para: Para, *, color: str = "") -> str:
        """The XML of one paragraph (superscript runs alternate their baseline, see pptx_xml)."""
        runs: list[str] = []
        baseline = 0
        rtl = runs_rtl(para.runs) if para.rtl is None else para.rtl
        for run in para.runs:
            if run.superscript:
                baseline = (px.ALT_BASELINE if baseline == px.SUPERSCRIPT_BASELINE
                            else px.SUPERSCRIPT_BASELINE)
            else:
                baseline = 0
            runs.append(self.run(part, run, para.size, baseline, color=color, rtl=rtl))
        align = para.align
        if align == "default":  # a line's start: right-to-left text starts at the right
            align = "right" if rtl else "left"
        return px.paragraph_xml(
            "".join(runs), size=para.size, align=align, margin_left=para.margin_left,
            indent=para.indent, space_before=para.space_before, line_factor=LINE_FACTOR,
            bullet=para.bullet, number=para.number, bullet_font=self.sans, rtl=rtl,
            lang=self.deck.lang,
            level=para.level,
        )

    def run(self, part: Part, run: Run, size: float, baseline: int, *, color: str = "",
            rtl: bool = False) -> str:
        if run.text == "\n":
            return px.line_break_xml(size, self.deck.lang)
        rid, jump = "", False
        anchor = f"src-{run.cite}" if run.cite else run.target
        if run.url:  # vetted by safe_link when the slide model was built
            rid = self.rid(part, run.url)
        elif anchor and anchor in self.deck.anchors:
            rid = self.rid(part, self.deck.anchors[anchor])
            jump = True
        text = run.text
        if rid and rtl:
            text = close_arabic_link(text)
        return px.run_xml(
            text, size=size, typeface=self.mono if run.code else self.sans,
            bold=run.bold, italic=run.italic, strike=run.strike, baseline=baseline,
            color=color, link_rid=rid, slide_jump=jump, lang=self.deck.lang,
        )

    def rid(self, part: Part, target: str | int) -> str:
        """The relationship id from ``part`` to a URL or to slide number ``target`` (cached)."""
        key = (id(part), target)
        rid = self._rids.get(key)
        if rid is None:
            if isinstance(target, str):
                rid = px.relate_url(part, target)
            else:
                rid = px.relate_slide(part, self.parts[target])
            self._rids[key] = rid
        return rid

    # ------------------------------------------------------------ items

    def code(self, shapes: _Shapes, item: CodeItem) -> None:
        content = self.deck.geometry.content
        box = Box(content.left, content.top + item.top, content.width, item.height)
        if item.colors:
            lines = [
                "".join(px.run_xml(text, size=CODE_SIZE, typeface=self.mono, bold=look.bold,
                                   italic=look.italic, color=look.color, lang=self.deck.lang)
                        for text, look in runs)
                for runs in item.colors
            ]
        else:
            lines = [px.run_xml(line, size=CODE_SIZE, typeface=self.mono, lang=self.deck.lang)
                     if line else ""
                     for line in item.lines]
        hangs = item.hangs or (0.0,) * len(lines)
        body = px.text_body_xml([
            px.paragraph_xml(runs, size=CODE_SIZE, line_factor=LINE_FACTOR, lang=self.deck.lang,
                             margin_left=hang, indent=-hang)
            for runs, hang in zip(lines, hangs, strict=True)
        ], inset_x=INSET_X, inset_y=INSET_Y)
        self.textbox(shapes, box, body, name=f"Code {item.language}".strip(),
                     fill=item.fill or CODE_FILL, line=CODE_LINE)

    def table(self, part: Part, shapes: _Shapes, item: TableItem) -> None:
        content = self.deck.geometry.content
        rows = ([item.header] if item.header else []) + list(item.rows)
        xml_rows = [
            (item.row_heights[r], [
                self.paragraph(part, Para(runs, size=item.size, space_before=0.0,
                                          align=item.aligns[c]))
                for c, runs in enumerate(cells)
            ])
            for r, cells in enumerate(rows)
        ]
        shape_id = shapes.take_id()
        box = (content.left, content.top + item.top, content.width, item.height)
        shapes.xml.append(px.table_xml(
            shape_id, f"Table {shape_id - 1}", box, item.col_widths, xml_rows,
            first_row=bool(item.header), inset_x=item.inset, inset_y=INSET_Y, rtl=item.rtl,
        ))

    def picture(self, part: Part, shapes: _Shapes, item: PictureItem) -> None:
        content = self.deck.geometry.content
        image_part = part.package.get_or_add_image_part(io.BytesIO(item.picture.data))
        rid = part.relate_to(image_part, RT.IMAGE)
        box = (content.left + item.left, content.top + item.top, item.width, item.height)
        shapes.xml.append(px.picture_xml(shapes.take_id(), f"Picture {item.alt}"[:120].strip(),
                                         item.alt, rid, box))


#: ARABIC LETTER MARK: invisible, strongly Arabic (a zero-width character to the metrics).
ALM = "\u061c"


def close_arabic_link(text: str) -> str:
    """Link text that mixes Arabic letters with a trailing number (``تقرير … 2024``), ended by
    an Arabic letter mark.

    LibreOffice (7.4) draws a link as a text field; in a right-to-left paragraph it lays out
    such a field's Arabic and its number apart, partly past the slide's edge. Ending the field
    on a strong Arabic character keeps it whole; the mark changes nothing in PowerPoint. (A
    field that mixes Arabic with Latin letters it garbles whatever the text says.)
    """
    kinds = [unicodedata.bidirectional(ch) for ch in text]
    if "AL" in kinds and kinds[-1] != "AL":
        return text + ALM
    return text


def _emu(box: Box) -> px.Rect:
    return (box.left, box.top, box.width, box.height)
