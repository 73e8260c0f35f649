"""The DOCX writer: the document model → a Word document a reader can click through.

python-docx opens the base document (its default template or ``options.reference_docx``) and
owns the package, styles, images and core properties; the body is built with lxml through
:mod:`renderers.writers.docx.oxml`, which keeps large reports fast. Citations become superscript
numbers linked to bookmarked Sources entries, or real Word footnotes with
``docx_citations="footnotes"``.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import docx
from docx.image.exceptions import UnrecognizedImageError
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.oxml.shape import CT_Inline
from docx.shared import Emu, Twips

from citations.links import safe_link
from citations.numbering import display_segments
from renderers.document import (
    Block,
    BlockQuote,
    BulletList,
    Cite,
    Code,
    CodeBlock,
    Emph,
    Figure,
    FootnoteDef,
    FootnoteRef,
    Heading,
    Image,
    Inline,
    InlineStyle,
    LineBreak,
    Link,
    ListItem,
    OrderedList,
    Paragraph,
    RawBlock,
    RawInline,
    SoftBreak,
    Strike,
    Strong,
    Styled,
    Table,
    TableCell,
    Text,
    ThematicBreak,
    iter_blocks,
    plain_text,
    task_marker,
)
from renderers.errors import UnsupportedNodeError
from renderers.options import RenderOptions
from renderers.sandbox import LoadedImage, load_image
from renderers.writers import Artifact, WriteSource
from renderers.writers.docx.oxml import (
    INDENT_STEP,
    LIST_HANGING,
    Bookmarks,
    Element,
    Footnotes,
    ListKind,
    Numbering,
    ParaProps,
    Relations,
    RunProps,
    StyleBook,
    add_break,
    add_cell,
    add_drawing,
    add_footnote_reference,
    add_hyperlink,
    add_paragraph,
    add_row,
    add_run,
    add_table,
    clear_body,
    drop_thumbnail,
    insert_footnote_mark,
    list_indent,
    w,
)
from renderers.writers.ooxml import (
    PackageCollector,
    apply_core_properties,
    open_reference,
    write_package,
)

if TYPE_CHECKING:
    from renderers.resolve import ResolvedDocument, SourceEntry

MONO_FONT = "Consolas"  # fontconfig maps it to DejaVu Sans Mono where Consolas is absent
CODE_SHADE = "F2F2F2"
HEADER_SHADE = "E7E6E6"
CITE_COLOR = "0563C1"
PAGE_SIZES: dict[str, tuple[int, int]] = {"A4": (11906, 16838), "Letter": (12240, 15840)}
MARGIN = 1440  # twips (1 inch)
EMU_PER_PX = 9525  # at 96 dpi
EMU_PER_TWIP = 635
_JC = {"left": "left", "center": "center", "right": "right"}


@dataclass(frozen=True)
class _Scope:
    """Where blocks are being written: list level, indentation, quote, footnote."""

    indent: int = 0  # twips, of body text in this scope
    origin: int = 0  # twips, where a list in this scope starts (moved right by block quotes)
    list_level: int = -1
    quote: bool = False
    footnote: bool = False


def docx_bytes(rdoc: ResolvedDocument, options: RenderOptions) -> bytes:
    """Render ``rdoc`` as DOCX bytes, identical for identical input."""
    document = _open_base(options)
    writer = _DocxWriter(document, rdoc, options)
    writer.write()
    apply_core_properties(document.core_properties, title=writer.title, author=options.author)
    drop_thumbnail(document.part.package)
    return _package_bytes(document.part.package)


def docx_artifact(source: WriteSource) -> Artifact:
    """The DOCX writer's artifact (for the writer registry)."""
    return Artifact((docx_bytes(source.rdoc, source.options),))


def _package_bytes(package: Any) -> bytes:
    """The package's members (what ``Document.save`` writes), zipped once by write_package."""
    from docx.opc.pkgwriter import PackageWriter

    for part in package.parts:
        part.before_marshal()
    parts = list(package.parts)
    collector: Any = PackageCollector()
    PackageWriter._write_content_types_stream(collector, parts)
    PackageWriter._write_pkg_rels(collector, package.rels)
    PackageWriter._write_parts(collector, parts)
    return write_package(collector.members)


def _open_base(options: RenderOptions) -> Any:
    """The base document: the reference DOCX (styles, page setup, headers) or the default.

    Page size and margins come from the options wherever the base does not set them (always
    for the default document; for a template only where its page setup is missing).
    """
    if options.reference_docx is None:
        base = docx.Document()
        keep_template = False
    else:
        base = open_reference(
            Path(options.reference_docx), "reference_docx", "Word document (.docx)",
            docx.Document,
        )
        base.element.body.get_or_add_sectPr()
        keep_template = True
    section = base.sections[-1]
    width, height = PAGE_SIZES[options.page_size]
    if not keep_template or section.page_width is None or section.page_height is None:
        section.page_width, section.page_height = Twips(width), Twips(height)
    for side in ("left_margin", "right_margin", "top_margin", "bottom_margin"):
        if not keep_template or getattr(section, side) is None:
            setattr(section, side, Twips(MARGIN))
    return base


#: Run formatting for each inline style of the safe HTML subset (``abbr`` keeps the text plain:
#: Word has no tooltip for a run).
_STYLED_RUNS: dict[InlineStyle, Callable[[RunProps], RunProps]] = {
    "sub": lambda p: replace(p, subscript=True),
    "sup": lambda p: replace(p, superscript=True),
    "kbd": lambda p: replace(p, mono=MONO_FONT, shade=CODE_SHADE),
    "mark": lambda p: replace(p, highlight="yellow"),
    "small": lambda p: replace(p, size=18),
    "abbr": lambda p: p,
    "ins": lambda p: replace(p, underline=True),
    "u": lambda p: replace(p, underline=True),
}


class _DocxWriter:
    """Writes one resolved document into a python-docx ``Document``'s body."""

    def __init__(self, document: Any, rdoc: ResolvedDocument, options: RenderOptions) -> None:
        self.document = document
        self.rdoc = rdoc
        self.options = options
        self.footnote_mode = options.docx_citations == "footnotes"
        self.title = options.title.strip() or rdoc.title.strip()
        self.styles = StyleBook(document.styles.element)
        self.numbering = Numbering(document.part.numbering_part.element)
        self.footnotes = Footnotes(document.part)
        self.relations = Relations(document.part)
        self.bookmarks = Bookmarks()
        self.entries: dict[int, SourceEntry] = {e.number: e for e in rdoc.entries}
        # Reserved before heading ids so that these names are exact.
        self.src_marks = {n: self.bookmarks.name_for(f"src_{n}") for n in self.entries}
        backlinks = dict.fromkeys(e.backlink for e in rdoc.entries if e.backlink)
        self.cite_marks = {a: self.bookmarks.name_for(a.replace("-", "_")) for a in backlinks}
        self._placed_cites: set[str] = set()
        self.footnote_defs: dict[str, FootnoteDef] = {}
        self._open_footnotes: set[str] = set()
        self.heading_marks: dict[str, str] = {}
        self._placed_marks: set[str] = set()
        self._shape_id = 0
        section = document.sections[-1]
        self.text_width = int(section.page_width - section.left_margin - section.right_margin)
        self._collect(rdoc.document.blocks)
        self.mono = RunProps(mono=MONO_FONT)
        self.sup = RunProps(superscript=True)
        self.sup_link = RunProps(superscript=True, color=CITE_COLOR)

    # ------------------------------------------------------------ document

    def write(self) -> None:
        """Replace the base document's body with the rendered document."""
        body = self.document.element.body
        sect_pr = clear_body(body)
        blocks = list(self.rdoc.document.blocks)
        title_heading = self._title_heading(blocks)
        if self.title and title_heading is None:
            p = add_paragraph(body, ParaProps(style=self.styles.get("Title")))
            add_run(p, self.title)
        for block in blocks:
            if block is title_heading:
                self._heading(body, block, self.styles.get("Title"))
            else:
                self.block(body, block, _Scope())
        if not self.footnote_mode and self.rdoc.entries:
            self._sources(body)
        body.append(sect_pr)

    def _title_heading(self, blocks: list[Block]) -> Heading | None:
        """The first h1 when the title came from it (rendered as Title rather than twice)."""
        first = next((b for b in blocks if isinstance(b, Heading) and b.level == 1), None)
        if first is not None and self.title and plain_text(first.children).strip() == self.title:
            return first
        return None

    def _collect(self, blocks: tuple[Block, ...]) -> None:
        """Gather footnote definitions and heading bookmarks first (links may point ahead)."""
        for block in iter_blocks(blocks):
            if isinstance(block, FootnoteDef):
                self.footnote_defs.setdefault(block.label, block)
            elif isinstance(block, Heading) and block.id and block.id not in self.heading_marks:
                self.heading_marks[block.id] = self.bookmarks.name_for(block.id)

    def _sources(self, body: Element) -> None:
        heading = add_paragraph(body, ParaProps(style=self.styles.get("Heading 1")))
        add_run(heading, self.rdoc.sources_heading)
        width = len(str(max(self.entries))) * 120 + 360
        for entry in self.rdoc.entries:
            p = add_paragraph(body, ParaProps(indent=width, hanging=width, space_after=80))
            bid = self.bookmarks.start(p, self.src_marks[entry.number])
            add_run(p, f"{entry.number}.\t")
            self.bookmarks.end(p, bid)
            self._entry_text(p, entry, self.relations)
            if entry.backlink in self.cite_marks:
                mark = self.cite_marks[entry.backlink]
                link = add_hyperlink(p, anchor=mark, tooltip="Back to text")
                add_run(link, " \u2191", RunProps(color=CITE_COLOR))

    def _entry_text(self, p: Element, entry: SourceEntry, relations: Relations) -> None:
        """Title (linked when it has a safe URL), then label and date."""
        if entry.url:
            link = add_hyperlink(p, rid=relations.link(entry.url))
            add_run(link, entry.title, RunProps(style=self.styles.get("Hyperlink")))
        else:
            add_run(p, entry.title)
        details = [d for d in (entry.label, entry.date) if d and d != entry.title]
        if details:
            add_run(p, " \u2014 " + ", ".join(details))

    # ------------------------------------------------------------ blocks

    def blocks(self, parent: Element, blocks: tuple[Block, ...], scope: _Scope) -> None:
        for block in blocks:
            self.block(parent, block, scope)

    def block(self, parent: Element, block: Block, scope: _Scope) -> None:
        """Write one block node into ``parent``."""
        match block:
            case Heading():
                self._heading(parent, block, self.styles.get(f"Heading {min(block.level, 6)}"))
            case Paragraph(children):
                p = add_paragraph(parent, self._para(scope))
                self.inlines(p, children, RunProps(), scope)
            case BulletList(items, tight):
                self._list(parent, items, "bullet", 1, tight, scope)
            case OrderedList(items, start, tight):
                self._list(parent, items, "decimal", start, tight, scope)
            case Table():
                self._table(parent, block, scope)
            case CodeBlock(text):
                code = replace(self._para(scope), shade=CODE_SHADE, border_box=True)
                p = add_paragraph(parent, code)
                add_run(p, text.rstrip("\n"), self.mono)
            case BlockQuote(blocks):
                inset = scope.indent + INDENT_STEP
                quoted = replace(scope, indent=inset, origin=inset, quote=True)
                self.blocks(parent, blocks, quoted)
            case Figure(image, caption):
                centered = replace(self._para(scope), align="center")
                p = add_paragraph(parent, replace(centered, keep_next=bool(caption)))
                self._image(p, image, scope)
                if caption:
                    cap = add_paragraph(parent, replace(centered, style=self._caption(scope)))
                    self.inlines(cap, caption, RunProps(), scope)
            case ThematicBreak():
                rule = replace(self._para(scope), border_bottom=True, space_after=240)
                add_paragraph(parent, rule)
            case RawBlock(text):
                p = add_paragraph(parent, self._para(scope))
                add_run(p, text.rstrip("\n"))
            case FootnoteDef():
                pass  # written where it is referenced
            case _:
                raise UnsupportedNodeError(f"DOCX writer: unsupported block {type(block).__name__}")

    def _para(self, scope: _Scope) -> ParaProps:
        """Paragraph properties for body text in ``scope``."""
        style = self.styles.get("Footnote Text") if scope.footnote else ""
        return ParaProps(style=style, indent=scope.indent, border_left=scope.quote)

    def _caption(self, scope: _Scope) -> str:
        return self.styles.get("Footnote Text" if scope.footnote else "Caption")

    def _heading(self, parent: Element, heading: Heading, style: str) -> None:
        p = add_paragraph(parent, ParaProps(style=style, keep_next=True))
        mark = self.heading_marks.get(heading.id, "")
        if heading.id in self._placed_marks:
            mark = ""  # a repeated id bookmarks only its first heading
        self._placed_marks.add(heading.id)
        bid = self.bookmarks.start(p, mark) if mark else None
        self.inlines(p, heading.children, RunProps(), _Scope())
        if bid is not None:
            self.bookmarks.end(p, bid)

    def _list(
        self, parent: Element, items: tuple[ListItem, ...], kind: ListKind, start: int,
        tight: bool, scope: _Scope,
    ) -> None:
        """One Word list (its own num, so numbering restarts); nested lists go one level down."""
        level = min(scope.list_level + 1, 8)
        num_id = self.numbering.new_list(kind, level, start)
        indent = scope.origin + list_indent(level)
        inner = replace(scope, list_level=level, indent=indent)
        style = self.styles.get("Footnote Text" if scope.footnote else "List Paragraph")
        props = ParaProps(style=style, num=(num_id, level), border_left=scope.quote,
                          space_after=None if tight else 120,
                          indent=indent if scope.origin else 0, hanging=LIST_HANGING)
        for item in items:
            first, rest = _split_first(item.blocks)
            p = add_paragraph(parent, props)
            if item.checked is not None:
                add_run(p, task_marker(item.checked))
            if first is not None:
                self.inlines(p, first.children, RunProps(), inner)
            self.blocks(parent, rest, inner)

    def _table(self, parent: Element, table: Table, scope: _Scope) -> None:
        columns = max([len(table.header), *(len(r) for r in table.rows)], default=0)
        if columns == 0:
            return
        if table.caption:
            caption = replace(self._para(scope), style=self._caption(scope), keep_next=True)
            cap = add_paragraph(parent, caption)
            self.inlines(cap, table.caption, RunProps(), scope)
        available = self.text_width // EMU_PER_TWIP - scope.indent
        widths = [available // columns] * columns
        tbl = add_table(parent, widths, indent=scope.indent)
        aligns = [_JC.get(a, "") for a in table.aligns] + [""] * columns
        cell_scope = _Scope(footnote=scope.footnote)
        rows: list[tuple[tuple[TableCell, ...], bool]] = []
        if table.header:
            rows.append((table.header, True))
        rows.extend((row, False) for row in table.rows)
        for cells, header in rows:
            tr = add_row(tbl, header=header)
            base = RunProps(bold=header)
            for i in range(columns):
                tc = add_cell(tr, widths[i], shade=HEADER_SHADE if header else "")
                p = add_paragraph(tc, ParaProps(align=aligns[i], space_after=0,
                                                style=self._para(cell_scope).style))
                if i < len(cells):
                    self.inlines(p, cells[i].children, base, cell_scope)
        add_paragraph(parent, ParaProps(space_after=0))  # keeps adjacent tables apart

    # ------------------------------------------------------------ inlines

    def inlines(
        self, p: Element, nodes: tuple[Inline, ...], props: RunProps, scope: _Scope,
        *, in_link: bool = False,
    ) -> None:
        """Write inline nodes as runs of paragraph (or hyperlink) ``p``."""
        for node in nodes:
            match node:
                case Text(text) | RawInline(text):
                    add_run(p, text, props)
                case SoftBreak():
                    add_run(p, " ", props)
                case LineBreak():
                    add_break(p)
                case Emph(children):
                    self.inlines(p, children, replace(props, italic=True), scope, in_link=in_link)
                case Strong(children):
                    self.inlines(p, children, replace(props, bold=True), scope, in_link=in_link)
                case Strike(children):
                    self.inlines(p, children, replace(props, strike=True), scope, in_link=in_link)
                case Styled(style, children):
                    styled = _STYLED_RUNS[style](props)
                    self.inlines(p, children, styled, scope, in_link=in_link)
                case Code(text):
                    add_run(p, text, replace(props, mono=MONO_FONT, shade=CODE_SHADE))
                case Link():
                    self._link(p, node, props, scope, in_link)
                case Image():
                    self._image(p, node, scope)
                case Cite():
                    self._cite(p, node, in_link)
                case FootnoteRef(label):
                    self._author_footnote(p, label)
                case _:
                    name = type(node).__name__
                    raise UnsupportedNodeError(f"DOCX writer: unsupported inline {name}")

    def _link(self, p: Element, link: Link, props: RunProps, scope: _Scope, in_link: bool) -> None:
        url = safe_link(link.url, allow_fragment=True)
        target: Element | None = None
        if in_link or not url:
            target = None
        elif url.startswith("#"):
            mark = self.heading_marks.get(url[1:], "")
            if mark:
                target = add_hyperlink(p, anchor=mark, tooltip=link.title)
        else:
            relations = self._relations(scope)
            target = add_hyperlink(p, rid=relations.link(url), tooltip=link.title)
        if target is None:
            self.inlines(p, link.children, props, scope, in_link=in_link)
            return
        style = replace(props, style=self.styles.get("Hyperlink"))
        self.inlines(target, link.children, style, scope, in_link=True)

    def _relations(self, scope: _Scope) -> Relations:
        if scope.footnote:
            self.footnotes.part  # noqa: B018  (creates the part and its relations)
            assert self.footnotes.relations is not None
            return self.footnotes.relations
        return self.relations

    def _cite(self, p: Element, cite: Cite, in_link: bool) -> None:
        if not cite.numbers:
            return
        if self.footnote_mode:
            self._cite_footnote(p, cite)
            return
        mark = "" if cite.anchor in self._placed_cites else self.cite_marks.get(cite.anchor, "")
        self._placed_cites.add(cite.anchor)
        bid = self.bookmarks.start(p, mark) if mark else None
        for text, number in display_segments(cite.numbers):
            if number is None or in_link:
                add_run(p, text, self.sup)
            else:
                tip = self.entries[number].title
                link = add_hyperlink(p, anchor=self.src_marks[number], tooltip=tip)
                add_run(link, text, self.sup_link)
        if bid is not None:
            self.bookmarks.end(p, bid)

    def _cite_footnote(self, p: Element, cite: Cite) -> None:
        """One footnote per citation holding "Title — label — url" for each cited source."""
        fid, note = self.footnotes.add()
        assert self.footnotes.relations is not None
        add_footnote_reference(p, fid, self.styles.get("Footnote Reference"))
        text_style = ParaProps(style=self.styles.get("Footnote Text"))
        for i, number in enumerate(cite.numbers):
            entry = self.entries[number]
            fp = add_paragraph(note, text_style)
            if i == 0:
                insert_footnote_mark(fp, self.styles.get("Footnote Reference"))
            add_run(fp, entry.title)
            if entry.label and entry.label != entry.title:
                add_run(fp, f" \u2014 {entry.label}")
            if entry.date:
                add_run(fp, f", {entry.date}")
            if entry.url:
                add_run(fp, " \u2014 ")
                link = add_hyperlink(fp, rid=self.footnotes.relations.link(entry.url))
                add_run(link, entry.url, RunProps(style=self.styles.get("Hyperlink")))

    def _author_footnote(self, p: Element, label: str) -> None:
        definition = self.footnote_defs.get(label)
        if definition is None or label in self._open_footnotes:
            add_run(p, f"[^{label}]")
            return
        self._open_footnotes.add(label)
        fid, note = self.footnotes.add()
        add_footnote_reference(p, fid, self.styles.get("Footnote Reference"))
        start = len(note)
        self.blocks(note, definition.blocks, _Scope(footnote=True))
        if len(note) == start:
            add_paragraph(note, self._para(_Scope(footnote=True)))
        first = note[start]
        if first.tag != w("p"):  # a table or list first: the mark needs a paragraph of its own
            first = add_paragraph(note, self._para(_Scope(footnote=True)))
            note.insert(start, first)
        insert_footnote_mark(first, self.styles.get("Footnote Reference"))
        self._open_footnotes.discard(label)

    def _image(self, p: Element, image: Image, scope: _Scope) -> None:
        loaded = load_image(image.src, self.options)
        inline = self._picture(loaded, image, scope) if loaded is not None else None
        if inline is None:
            add_run(p, image.alt or image.title or image.src, RunProps(italic=True))
            return
        add_drawing(p, inline)

    def _picture(self, loaded: LoadedImage, image: Image, scope: _Scope) -> Element | None:
        data = _embeddable(loaded)
        if data is None:
            return None
        try:
            image_part = self.document.part.package.get_or_add_image_part(io.BytesIO(data))
        except UnrecognizedImageError:
            return None
        part = self.footnotes.part if scope.footnote else self.document.part
        rid = part.relate_to(image_part, RT.IMAGE)
        max_width = self.text_width - scope.indent * EMU_PER_TWIP
        cx = loaded.width * EMU_PER_PX
        cy = loaded.height * EMU_PER_PX
        if cx > max_width:
            cx, cy = max_width, int(cy * max_width / cx)
        self._shape_id += 1
        name = image_part.filename
        inline = CT_Inline.new_pic_inline(self._shape_id, rid, name, Emu(cx), Emu(cy))
        doc_pr = inline.docPr
        doc_pr.set("descr", image.alt or image.title)
        if image.title:
            doc_pr.set("title", image.title)
        return inline


# ---------------------------------------------------------------- helpers

_DOCX_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/bmp", "image/tiff"})


def _embeddable(loaded: LoadedImage) -> bytes | None:
    """Image bytes Word can embed: PNG/JPEG/GIF/BMP/TIFF as they are, others re-encoded as PNG."""
    if loaded.mime in _DOCX_IMAGE_TYPES:
        return loaded.data
    from PIL import Image as PILImage

    try:
        with PILImage.open(io.BytesIO(loaded.data)) as picture:
            out = io.BytesIO()
            picture.save(out, format="PNG")
    except (OSError, ValueError):
        return None
    return out.getvalue()


def _split_first(blocks: tuple[Block, ...]) -> tuple[Paragraph | None, tuple[Block, ...]]:
    """A list item's leading paragraph (which carries the bullet) and the blocks after it."""
    if blocks and isinstance(blocks[0], Paragraph):
        return blocks[0], blocks[1:]
    return None, blocks

