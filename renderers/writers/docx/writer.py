"""The DOCX writer: the document model → a Word document a reader can click through.

python-docx opens the base document (its default template or ``options.reference_docx``) and
owns the package, styles, images and core properties; the body is built with lxml through
:mod:`renderers.writers.docx.oxml`, which keeps large reports fast. Citations become superscript
numbers linked to bookmarked Sources entries, or real Word footnotes with
``docx_citations="footnotes"``. Author notes are superscript letters linked to a Notes list
before the Sources, as in HTML and PDF (:mod:`renderers.writers.common`), so they never look
like citations. Right-to-left paragraphs, list items, table cells and tables are marked as such
(``w:bidi``, ``w:rtl``, ``w:bidiVisual``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import docx
from docx.shared import Twips
from lxml import etree

from citations.links import safe_link
from citations.numbering import display_segments, joined_lead
from renderers.document import (
    Alignment,
    Anchor,
    Block,
    BlockQuote,
    BulletList,
    Cite,
    Code,
    CodeBlock,
    CrossRef,
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
    Math,
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
    iter_inlines,
    plain_text,
    reading_blocks,
)
from renderers.errors import UnsupportedNodeError
from renderers.language import language_for
from renderers.math.marks import equation_mark
from renderers.options import RenderOptions
from renderers.sandbox import load_image
from renderers.text import (
    blocks_direction,
    enclosing_marks,
    is_rtl,
    link_target,
    needs_cjk,
    text_direction,
)
from renderers.writers import Artifact, WriteSource
from renderers.writers.common import (
    ADDED_SECTION_LEVEL,
    BACKLINK_JOIN,
    BACKLINK_MARK,
    AuthorNote,
    AuthorNotes,
    EntryParts,
    ImageBytes,
    TitleLine,
    block_alignment,
    caption_direction,
    carried_anchors,
    citation_note_direction,
    cite_direction,
    cite_space,
    document_author,
    document_preceding,
    document_title,
    document_words,
    entry_parts,
    image_fallback,
    joined_runs,
    page_dimensions,
    title_block,
    title_block_position,
    unresolved_note_text,
)
from renderers.writers.contents import (
    back_matter,
    body_outline,
    contents_entries,
    contents_headings,
    contents_position,
)
from renderers.writers.docx.code import CODE_SHADE, MONO_FONT, add_code_block
from renderers.writers.docx.contents import add_contents
from renderers.writers.docx.footnotes import (
    Footnotes,
    add_footnote_reference,
    insert_footnote_mark,
)
from renderers.writers.docx.images import Pictures
from renderers.writers.docx.links import Bookmarks, Relations, add_hyperlink
from renderers.writers.docx.math import (
    add_caption_label,
    add_crossref,
    add_lines,
    add_marked_equation,
    add_math,
    bookmark_name,
    equation,
    formula_lines,
)
from renderers.writers.docx.numbering import (
    INDENT_STEP,
    LIST_HANGING,
    ListKind,
    Numbering,
    item_kind,
    list_indent,
)
from renderers.writers.docx.oxml import (
    CELL_MARGIN,
    Element,
    ParaProps,
    RunProps,
    add_break,
    add_cell,
    add_directed_runs,
    add_drawing,
    add_paragraph,
    add_row,
    add_run,
    add_table,
    added_after,
    clear_body,
    drop_thumbnail,
    indents_tables_at_edge,
    last_child,
    line_direction,
    part_joined_frames,
    set_space_after,
    w,
)
from renderers.writers.docx.styles import (
    StyleBook,
    name_east_asian_font,
    set_default_language,
    untrack_title,
)
from renderers.writers.docx.tables import table_widths
from renderers.writers.highlight import Highlighter
from renderers.writers.ooxml import (
    PackageCollector,
    apply_core_properties,
    open_reference,
    write_package,
)

if TYPE_CHECKING:
    from renderers.resolve import ResolvedDocument, SourceEntry

HEADER_SHADE = "E7E6E6"
CITE_COLOR = "0563C1"
PLAIN = RunProps()
MARGIN = 1440  # twips (1 inch)
EMU_PER_TWIP = 635
_JC = {"left": "left", "center": "center", "right": "right"}
#: Word and LibreOffice read ``w:jc`` left/right of a right-to-left paragraph as its start/end;
#: a column the author aligned left stays physically left.
_MIRRORED = {"left": "right", "right": "left"}



#: The paragraph style of each line of the title block (pandoc's names).
_TITLE_LINE_STYLES: dict[TitleLine, str] = {
    "subtitle": "Subtitle", "author": "Author", "date": "Date"}
#: The space below the title block (twips): 1.6 em of the 10.5 pt text, as in report.css.
_TITLE_BLOCK_AFTER = 336

@dataclass(frozen=True)
class _Scope:
    """Where blocks are being written: list level, indentation, quote."""

    indent: int = 0  # twips, of body text in this scope
    origin: int = 0  # twips, where a list in this scope starts (moved right by block quotes)
    list_level: int = -1
    quote: bool = False
    style: str = ""  # the style id of body text in this scope ("": Normal); the abstract's


def docx_bytes(rdoc: ResolvedDocument, options: RenderOptions) -> bytes:
    """Render ``rdoc`` as DOCX bytes, identical for identical input."""
    document = _open_base(options)
    language = language_for(rdoc, options)
    set_default_language(document.styles.element, language,
                         keep_base=options.reference_docx is not None)
    writer = _DocxWriter(document, rdoc, options)
    writer.write()
    text = _all_text(document.element.body)
    if writer.footnotes.written:
        text += _all_text(writer.footnotes.part.element)
    untrack_title(document.styles.element, writer.title.text)
    if needs_cjk(text):
        name_east_asian_font(document.styles.element, f"Noto Sans CJK {language.cjk_face(text)}")
    apply_core_properties(
        document.core_properties, title=writer.title.text,
        author=document_author(rdoc.document, options), keywords=rdoc.document.keywords,
        subject=rdoc.document.description,
    )
    drop_thumbnail(document.part.package)
    return _package_bytes(document.part.package)


def _all_text(part: Element) -> str:
    """Every text node of ``part``, serialized by lxml: ``itertext`` asked python-docx's
    ``text`` of every paragraph and run (an XPath each), 0.1 ms a code line."""
    return etree.tostring(part, method="text", encoding="unicode")


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
    page = page_dimensions(options.page_size)
    if not keep_template or section.page_width is None or section.page_height is None:
        section.page_width = Twips(page.width_twips)
        section.page_height = Twips(page.height_twips)
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
        self.words = document_words(rdoc, options)
        self.footnote_mode = options.docx_citations == "footnotes"
        self.title = document_title(rdoc.document, options)
        #: which headings the contents and Word's outline (navigation pane, a PDF's
        #: bookmarks) list: one left out has the outline level of body text
        self.outline = body_outline(rdoc.document.blocks, self.title.heading)
        self.notes = AuthorNotes(reading_blocks(rdoc.document))
        #: citation runs after text reading against their line (:func:`cite_direction`)
        self.preceding = document_preceding(rdoc.document)
        self.styles = StyleBook(document.styles.element)
        self.numbering = Numbering(document.part.numbering_part.element)
        self.footnotes = Footnotes(document.part)
        self.relations = Relations(document.part)
        self.bookmarks = Bookmarks()
        self.entries: dict[int, SourceEntry] = {e.number: e for e in rdoc.entries}
        # Reserved before heading ids so that these names are exact.
        self.src_marks = {n: self.bookmarks.name_for(f"src_{n}") for n in self.entries}
        self.entry_tips = {e.anchor: e.title for e in rdoc.entries}  # links to entries
        #: what this writer draws: the title block's abstract, then the body (its tables,
        #: notes and captions), so that a link anywhere finds the place it names
        self.drawn = (*title_block(rdoc.document, options, self.words).abstract,
                      *rdoc.document.blocks)
        linked = _linked_ids(self.drawn)
        if self.footnote_mode:  # no Sources list: a source is shown at its first citation
            linked |= {e.backlink for e in rdoc.entries if e.anchor in linked and e.backlink}
        # The citations the Sources entries link back to, and those a link of the text names
        # ("#cite-2"), as in HTML and PDF, where every citation has its id.
        self.linked_cites = frozenset(node.anchor for node in iter_inlines(self.drawn)
                                      if isinstance(node, Cite) and node.anchor in linked)
        marked = dict.fromkeys(e.backlink for e in rdoc.entries if e.backlink)
        marked.update(dict.fromkeys(sorted(self.linked_cites)))
        self.cite_marks = {a: self.bookmarks.name_for(a.replace("-", "_")) for a in marked}
        self.entry_marks = (
            {e.anchor: self.cite_marks[e.backlink] for e in rdoc.entries
             if e.backlink in self.linked_cites}
            if self.footnote_mode else
            {e.anchor: self.src_marks[e.number] for e in rdoc.entries})
        self._placed_cites: set[str] = set()
        marks = self.bookmarks.name_for
        self.note_marks = {n.label: marks(f"fn_{n.number}") for n in self.notes}
        self.note_ref_marks = {
            n.label: marks(f"fnref_{n.number}") for n in self.notes if n.referenced
        }
        self._placed_note_refs: set[str] = set()
        self.heading_marks: dict[str, str] = {}
        self.anchor_marks: dict[str, str] = {}  # an Anchor's id → its bookmark
        self.numbered_marks: dict[str, str] = {}  # "fig_1" → bookmark name
        self._placed_marks: set[str] = set()
        self.pictures = Pictures(document.part)
        self.image_bytes = ImageBytes(options.limits.max_image_bytes)
        section = document.sections[-1]
        self.text_width = int(section.page_width - section.left_margin - section.right_margin)
        self.tables_at_edge = indents_tables_at_edge(document.settings.element)
        #: the sections this writer adds whose headings a link may lead to (the author's
        #: anchor of the same id is no place, as in HTML and PDF)
        made = {"notes": bool(self.notes),
                "sources": not self.footnote_mode and bool(rdoc.entries)}
        # the abstract as drawn too: its anchors (its headings' ids: common.title_block)
        self._collect(self.drawn, frozenset(k for k, shown in made.items() if shown))
        #: bookmarks of the Notes and Sources headings, which the contents and links lead to
        self.back_marks = ({k: marks(k) for k in made} if options.toc else
                           {k: marks(k) for k, shown in made.items() if shown and k in linked})
        self.code = RunProps(mono=MONO_FONT, shade=CODE_SHADE)
        self.highlight = Highlighter(options.highlight_style)
        self.sup = RunProps(superscript=True)
        self.sup_link = RunProps(superscript=True, color=CITE_COLOR)

    # ------------------------------------------------------------ document

    def write(self) -> None:
        """Replace the base document's body with the rendered document."""
        body = self.document.element.body
        sect_pr = clear_body(body)
        if self.title.added:
            title = ParaProps(style=self.styles.get("Title"), bidi=is_rtl(self.title.text))
            add_run(add_paragraph(body, title), self.title.text, self._direction(self.title.text))
        blocks = self.rdoc.document.blocks
        contents_at = contents_position(blocks, self.title.heading)
        block_at = title_block_position(blocks, self.title)
        for index, (block, ids) in enumerate(zip(blocks, carried_anchors(blocks), strict=True)):
            if index == block_at:
                self._title_block(body)
            if index == contents_at:
                self._contents(body)
            if block is self.title.heading:
                self._heading(body, block, self.styles.get("Title"))
            elif ids is not None:
                self._carrying(body, block, _Scope(), ids)
        if block_at == len(blocks):
            self._title_block(body)
        if contents_at == len(blocks):
            self._contents(body)
        if self.notes:
            self._notes(body)
        if not self.footnote_mode and self.rdoc.entries:
            self._sources(body)
        body.append(sect_pr)

    def _title_block(self, body: Element) -> None:
        """The title block under the title, in pandoc's styles (a reference DOCX may restyle
        them): Subtitle, Author, Date, then Abstract Title over the Abstract paragraphs."""
        shown = title_block(self.rdoc.document, self.options, self.words)
        lines = [(_TITLE_LINE_STYLES[kind], text) for kind, text in shown.lines]
        if shown.abstract:
            lines.append(("Abstract Title", shown.abstract_heading))
        for n, (style, text) in enumerate(lines, start=1):
            # The block's 1.6 em (report.css) below its last line, whatever its style.
            after = _TITLE_BLOCK_AFTER if n == len(lines) and not shown.abstract else None
            props = ParaProps(style=self.styles.get(style), bidi=is_rtl(text), space_after=after)
            add_run(add_paragraph(body, props), text, self._direction(text))
        if shown.abstract:  # the body's blocks, their paragraphs in the Abstract style
            mark = last_child(body)
            self.blocks(body, shown.abstract, _Scope(style=self.styles.get("Abstract")))
            last = next((p for added in reversed(list(added_after(body, mark)))
                         for p in reversed(list(added.iter(w("p"))))), None)
            if last is not None:
                set_space_after(last, _TITLE_BLOCK_AFTER)

    def _collect(self, blocks: tuple[Block, ...], own: frozenset[str]) -> None:
        """Reserve heading and anchor bookmarks first (links may point ahead); none for an
        anchor named as a section this writer adds (``own``)."""
        for block in iter_blocks(blocks):
            if isinstance(block, Heading) and block.id and block.id not in self.heading_marks:
                self.heading_marks[block.id] = self.bookmarks.name_for(block.id)
            if isinstance(block, Figure | Table | CodeBlock) and block.number:
                name = bookmark_name(block.label, block.number)
                self.numbered_marks.setdefault(name, self.bookmarks.name_for(name))
        for node in iter_inlines(blocks):
            if isinstance(node, Math) and node.anchor:  # a numbered equation
                name = bookmark_name(node.label, node.number)
                self.numbered_marks.setdefault(name, self.bookmarks.name_for(name))
            if isinstance(node, Anchor) and node.id not in self.heading_marks \
                    and node.id not in own:
                self.anchor_marks.setdefault(node.id, self.bookmarks.name_for(node.id))

    def _contents(self, body: Element) -> None:
        """The table of contents (``toc``): a filled Word TOC field."""
        if not self.options.toc:
            return
        listed = not self.footnote_mode and self.rdoc.entries
        back = back_matter(  # a note style's notes are Word footnotes: no section
            self.words,
            notes=self.back_marks["notes"] if self.notes else "",
            sources=self.back_marks["sources"] if listed else "",
            sources_heading=self.rdoc.sources_heading,
        )
        headings = contents_headings(self.outline, lambda h: self.heading_marks.get(h.id, ""),
                                     self.words)
        add_contents(body, contents_entries(headings, back), self.styles, self.words)

    def _back_matter(self, body: Element, heading: str, longest: int, mark: str = "") -> ParaProps:
        """The heading of the Notes or Sources list (bookmarked as ``mark`` for the contents)
        and the hanging indent of its entries, wide enough for ``longest`` marker characters."""
        # the level of the top sections under the Title, as HTML's <h2>: in Word's navigation
        # pane Sources is their peer, not the only Heading 1 above them all
        level = ADDED_SECTION_LEVEL
        p = add_paragraph(body, ParaProps(style=self.styles.get(f"Heading {level}"),
                                          bidi=is_rtl(heading)))
        bid = self.bookmarks.start(p, mark) if mark else None
        add_run(p, heading)
        if bid is not None:
            self.bookmarks.end(p, bid)
        width = longest * 120 + 360
        return ParaProps(indent=width, hanging=width, space_after=80)

    def _marked(self, body: Element, props: ParaProps, mark: str, text: str) -> Element:
        """A list entry: a paragraph starting with ``text`` and a tab, bookmarked as ``mark``."""
        p = add_paragraph(body, props)
        bid = self.bookmarks.start(p, mark)
        if text:  # a CSL style with an unnumbered bibliography has no marker
            add_run(p, f"{text}\t")
        self.bookmarks.end(p, bid)
        return p

    def _backlink(self, p: Element, anchor: str, tooltip: str) -> None:
        """The back-link, joined to the word before it (:data:`~renderers.writers.common.
        BACKLINK_JOIN`): at a plain space LibreOffice started a line with the arrow alone."""
        link = add_hyperlink(p, anchor=anchor, tooltip=tooltip)
        add_run(link, BACKLINK_JOIN + BACKLINK_MARK, RunProps(color=CITE_COLOR))

    def _notes(self, body: Element) -> None:
        """The Notes list (a, b, c …), each note back-linked to its first reference."""
        notes = list(self.notes)
        props = self._back_matter(body, self.words.notes, len(notes[-1].marker) + 1,
                                  self.back_marks.get("notes", ""))
        for note in notes:
            first, rest = _split_first(note.blocks)
            rtl = blocks_direction(note.blocks) == "rtl"
            p = self._marked(body, replace(props, bidi=rtl), self.note_marks[note.label],
                             f"{note.marker}.")
            scope = _Scope(indent=props.indent, origin=props.indent)
            if first is not None:
                self.inlines(p, first.children, PLAIN, scope)
            if note.label in self._placed_note_refs:
                self._backlink(p, self.note_ref_marks[note.label],
                               self.words.note_backlink)
            self.blocks(body, rest, scope)

    def _sources(self, body: Element) -> None:
        styled = [len(e.marker) for e in self.rdoc.entries if e.marker is not None]
        longest = max(styled) if styled else len(str(max(self.entries)))
        props = self._back_matter(body, self.rdoc.sources_heading, longest,
                                  self.back_marks.get("sources", ""))
        for entry in self.rdoc.entries:
            parts = entry_parts(entry)
            p = self._marked(body, replace(props, bidi=parts.rtl), self.src_marks[entry.number],
                             parts.marker)
            self._entry_text(p, parts, self.relations)
            if entry.backlink in self.cite_marks:
                self._backlink(p, self.cite_marks[entry.backlink], self.words.backlink)

    def _entry_text(self, p: Element, parts: EntryParts, relations: Relations) -> None:
        """The entry's title (linked when it has a safe URL), then its details; or the entry
        as its CSL style formats it."""
        if parts.formatted:
            opening, closing = parts.formatted_marks  # its own direction, if not the list's
            if opening:
                add_run(p, opening, PLAIN)
            outer, self.relations = self.relations, relations  # links of this part
            try:
                self.inlines(p, parts.formatted, PLAIN, _Scope())
            finally:
                self.relations = outer
            if closing:
                add_run(p, closing, PLAIN)
            return
        if parts.url:
            link = add_hyperlink(p, rid=relations.link(parts.url))
            style = RunProps(style=self.styles.get("Hyperlink"))
            add_directed_runs(link, parts.title, style, parts.direction)
        else:
            add_directed_runs(p, parts.title, PLAIN, parts.direction)
        if details := parts.details_run():
            add_directed_runs(p, details, PLAIN, parts.direction, dates=True)

    def _direction(self, text: str, props: RunProps = PLAIN) -> RunProps:
        """``props`` marked right-to-left when ``text`` starts right-to-left."""
        return replace(props, rtl=True) if is_rtl(text) else props

    # ------------------------------------------------------------ blocks

    def blocks(self, parent: Element, blocks: tuple[Block, ...], scope: _Scope) -> None:
        for block, ids in zip(blocks, carried_anchors(blocks), strict=True):
            if ids is not None:
                self._carrying(parent, block, scope, ids)

    def _carrying(self, parent: Element, block: Block, scope: _Scope, ids: tuple[str, ...]) -> None:
        """Write ``block`` with the bookmarks of ``ids`` (a paragraph of anchors only before it,
        :func:`carried_anchors`) at the start of its first paragraph: no empty paragraph."""
        mark = last_child(parent)
        self.block(parent, block, scope)
        if not ids:
            return
        first = next((p for added in added_after(parent, mark) for p in added.iter(w("p"))), None)
        if first is None:  # nothing written: the bookmarks stand in a paragraph of their own
            first = add_paragraph(parent, self._para(scope))
        at = 1 if len(first) and first[0].tag == w("pPr") else 0
        for ident in ids:
            before = len(first)
            self._anchor(first, ident)
            for placed in list(first)[before:]:
                first.insert(at, placed)  # lxml moves the element
                at += 1

    def block(self, parent: Element, block: Block, scope: _Scope) -> None:
        """Write one block node into ``parent``."""
        match block:
            case Heading():
                self._heading(parent, block, self.styles.get(f"Heading {min(block.level, 6)}"))
            case Paragraph(children) if (formula := equation(children)) is not None:
                p = add_paragraph(parent, self._para(scope))
                self._equation(p, formula, scope)
            case Paragraph(children):
                props = self._para(scope, children)
                props = replace(props, align=_jc(block_alignment(block), props.bidi))
                p = add_paragraph(parent, props)
                self.inlines(p, children, RunProps(), scope)
            case BulletList(items, tight):
                self._list(parent, items, "bullet", 1, tight, scope)
            case OrderedList(items, start, tight):
                self._list(parent, items, "decimal", start, tight, scope)
            case Table():
                self._table(parent, block, scope)
            case CodeBlock(text, language, caption, label, number):
                if caption or number:  # a listing's caption, above its code and kept with it
                    rtl = caption_direction(label, number, caption, self.words) == "rtl"
                    cap = add_paragraph(parent, replace(
                        self._para(scope), style=self.styles.get("Caption"), keep_next=True,
                        bidi=rtl,
                    ))
                    self._caption(cap, label, number, caption, scope)
                add_code_block(parent, self._para(scope), text, language, self.highlight,
                               width=self.text_width // EMU_PER_TWIP - scope.indent,
                               indent_at_edge=self.tables_at_edge)
            case BlockQuote(blocks):
                inset = scope.indent + INDENT_STEP
                quoted = replace(scope, indent=inset, origin=inset, quote=True)
                mark = last_child(parent)
                self.blocks(parent, blocks, quoted)
                part_joined_frames(parent, mark, self._para(quoted))
            case Figure(image, caption, label, number):
                side = block_alignment(block)
                placed = replace(self._para(scope), align=_jc(side, False) or "center")
                p = add_paragraph(parent, replace(placed, keep_next=bool(caption or number)))
                self._image(p, image, scope)
                if caption or number:
                    style = self.styles.get("Caption")
                    rtl = caption_direction(label, number, caption, self.words) == "rtl"
                    cap = add_paragraph(parent, replace(self._para(scope), style=style,
                                                        align=_jc(side, rtl) or "center",
                                                        bidi=rtl))
                    self._caption(cap, label, number, caption, scope)
            case ThematicBreak():
                rule = replace(self._para(scope), border_bottom=True, space_after=240)
                add_paragraph(parent, rule)
            case RawBlock(text):
                p = add_paragraph(parent, self._para(scope))
                add_run(p, text.rstrip("\n"))
            case FootnoteDef():
                pass  # written in the Notes list
            case _:
                raise UnsupportedNodeError(f"DOCX writer: unsupported block {type(block).__name__}")

    def _para(self, scope: _Scope, inlines: tuple[Inline, ...] = ()) -> ParaProps:
        """Paragraph properties for body text in ``scope``, right-to-left when ``inlines``
        start right-to-left."""
        return ParaProps(style=scope.style, indent=scope.indent, border_left=scope.quote,
                         bidi=is_rtl(plain_text(inlines)) if inlines else False)

    def _heading(self, parent: Element, heading: Heading, style: str) -> None:
        rtl = is_rtl(plain_text(heading.children))
        p = add_paragraph(parent, ParaProps(style=style, keep_next=True, bidi=rtl,
                                            align=_jc(block_alignment(heading), rtl),
                                            unlisted=not self.outline.lists(heading)))
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
        indent = scope.origin + list_indent(level)
        inner = replace(scope, list_level=level, indent=indent)
        style = self.styles.get("List Paragraph")
        props = ParaProps(style=style, border_left=scope.quote,
                          space_after=None if tight else 120,
                          indent=indent if scope.origin else 0, hanging=LIST_HANGING)
        listed = blocks_direction(tuple(block for item in items for block in item.blocks))
        # A task item's box replaces its bullet or number: it is numbered by a list of boxes.
        # The numbers of the other items go on counting it (HTML's <li> does), so a numbered
        # item after a task starts a numbered list of its own at its number.
        nums: dict[ListKind, int] = {}
        previous: ListKind | None = None
        for index, item in enumerate(items):
            marks = item_kind(item.checked, kind)
            if marks not in nums or (marks == "decimal" and previous != "decimal"):
                nums[marks] = self.numbering.new_list(marks, level, start + index)
            previous = marks
            first, rest = _split_first(item.blocks)
            direction = blocks_direction(item.blocks) or listed  # no strong text: the list's
            p = add_paragraph(parent, replace(props, num=(nums[marks], level),
                                              bidi=direction == "rtl"))
            if first is not None:
                self.inlines(p, first.children, RunProps(), inner)
            self.blocks(parent, rest, inner)

    def _table(self, parent: Element, table: Table, scope: _Scope) -> None:
        columns = max([len(table.header), *(len(r) for r in table.rows)], default=0)
        if columns == 0:
            return
        if table.caption or table.number:
            reads = caption_direction(table.label, table.number, table.caption, self.words)
            caption = replace(self._para(scope), style=self.styles.get("Caption"),
                              keep_next=True, bidi=reads == "rtl")
            cap = add_paragraph(parent, caption)
            self._caption(cap, table.label, table.number, table.caption, scope)
        rows: list[tuple[tuple[TableCell, ...], bool]] = []
        if table.header:
            rows.append((table.header, True))
        rows.extend((row, False) for row in table.rows)
        available = self.text_width // EMU_PER_TWIP - scope.indent
        texts = [[(plain_text(cell.children), header) for cell in cells]
                 for cells, header in rows]
        widths = table_widths(texts, columns, available, CELL_MARGIN)
        rtl = blocks_direction((table,)) == "rtl"
        tbl = add_table(parent, widths, indent=scope.indent, rtl=rtl)
        default: list[Alignment] = ["default"] * columns
        aligns = [*table.aligns, *default]
        cell_scope = _Scope()
        for cells, header in rows:
            tr = add_row(tbl, header=header)
            base = RunProps(bold=header)
            for i in range(columns):
                tc = add_cell(tr, widths[i], shade=HEADER_SHADE if header else "")
                inlines = cells[i].children if i < len(cells) else ()
                direction = text_direction(plain_text(inlines)) or ("rtl" if rtl else "ltr")
                bidi = direction == "rtl"
                cell_props = replace(self._para(cell_scope), bidi=bidi,
                                     align=_jc(aligns[i], bidi))
                p = add_paragraph(tc, replace(cell_props, space_after=0))
                if i < len(cells):
                    self.inlines(p, cells[i].children, base, cell_scope)
        add_paragraph(parent, ParaProps(space_after=0))  # keeps adjacent tables apart

    # ------------------------------------------------------------ inlines

    def inlines(
        self, p: Element, nodes: tuple[Inline, ...], props: RunProps, scope: _Scope,
        *, in_link: bool = False,
    ) -> None:
        """Write inline nodes as runs of paragraph (or hyperlink) ``p``."""
        for run in joined_runs(nodes):
            if len(run) > 1:  # a citation and the superscripts joined to it
                self._cites(p, [node for node in run if isinstance(node, Cite)], in_link)
                continue
            match node := run[0]:
                case Text(text) | RawInline(text):
                    add_run(p, text, self._direction(text, props))
                case Anchor(ident):
                    self._anchor(p, ident)
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
                    self._cites(p, [node], in_link)
                case FootnoteRef(label):
                    self._note_reference(p, label, in_link)
                case Math():
                    add_math(p, node, self.code)
                    if mark := equation_mark(node):  # a displayed formula among words
                        self._equation_mark(p, node, mark)
                case CrossRef(label, number):
                    hyperlink = replace(props, style=self.styles.get("Hyperlink"))
                    mark = "" if in_link or not node.linked else self.numbered_marks.get(
                        bookmark_name(label, number), "")
                    if lead := node.lead(self.words):  # a group's words between its links
                        add_run(p, lead, props)
                    add_crossref(p, node.shown(self.words), mark, props, hyperlink)
                case _:
                    name = type(node).__name__
                    raise UnsupportedNodeError(f"DOCX writer: unsupported inline {name}")

    def _equation(self, p: Element, formula: Math, scope: _Scope) -> None:
        """A displayed formula filling paragraph ``p``: centred by Word (``m:oMathPara``), or
        with its number or tag at the right margin, inside the bookmark references jump to;
        a ``multline``'s lines each where TeX sets it."""
        mark = equation_mark(formula)
        end = self.text_width // EMU_PER_TWIP
        if lines := formula_lines(formula):
            with self._equation_bookmark(p, formula):
                add_lines(p, lines, mark, start=scope.indent, end=end)
        elif not mark:
            add_math(p, formula, self.code, whole_paragraph=True)
        else:
            with self._equation_bookmark(p, formula):
                add_marked_equation(p, formula, mark, self.code, start=scope.indent, end=end)

    def _equation_mark(self, p: Element, formula: Math, mark: str) -> None:
        """The number or tag after a displayed formula that shares its paragraph with words
        (no tab stops there), inside the bookmark references to a numbered one jump to."""
        with self._equation_bookmark(p, formula):
            add_run(p, f"\u2003{mark}")

    @contextmanager
    def _equation_bookmark(self, p: Element, formula: Math) -> Iterator[None]:
        """What is written inside, in the bookmark of a numbered equation (none for another)."""
        name = bookmark_name(formula.label, formula.number) if formula.anchor else ""
        bookmark = self.numbered_marks.get(name, "")
        bid = self.bookmarks.start(p, bookmark) if bookmark else None
        yield
        if bid is not None:
            self.bookmarks.end(p, bid)

    def _anchor(self, p: Element, ident: str) -> None:
        """An empty bookmark where an :class:`Anchor` stands (its first place only)."""
        mark = self.anchor_marks.get(ident, "")
        if mark and ident not in self._placed_marks:
            self._placed_marks.add(ident)
            self.bookmarks.end(p, self.bookmarks.start(p, mark))

    def _link(self, p: Element, link: Link, props: RunProps, scope: _Scope, in_link: bool) -> None:
        url = safe_link(link.url, allow_fragment=True)
        target: Element | None = None
        if in_link or not url:
            target = None
        elif url.startswith("#"):
            ident = link_target(url)  # percent escapes decoded: #%C3%A9t%C3%A9 is été
            mark = (self.heading_marks.get(ident, "") or self.anchor_marks.get(ident, "")
                    or self.entry_marks.get(ident, "") or self.cite_marks.get(ident, "")
                    or self.back_marks.get(ident, ""))
            if mark:
                tip = link.title or self.entry_tips.get(ident, "")
                target = add_hyperlink(p, anchor=mark, tooltip=tip)
        else:
            target = add_hyperlink(p, rid=self.relations.link(url), tooltip=link.title)
        if target is None:
            self.inlines(p, link.children, props, scope, in_link=in_link)
            return
        style = replace(props, style=self.styles.get("Hyperlink"))
        self.inlines(target, link.children, style, scope, in_link=True)

    def _caption(self, p: Element, label: str, number: int, caption: tuple[Inline, ...],
                 scope: _Scope) -> None:
        """A caption's text, led by "Figure 1: " when it is numbered."""
        if number:
            add_caption_label(p, label, number, self.bookmarks, self.numbered_marks,
                              self.words)
        self.inlines(p, caption, RunProps(), scope)

    def _cites(self, p: Element, cites: Sequence[Cite], in_link: bool) -> None:
        """A citation, or one and the superscripts joined to it (:func:`joined_runs`), held
        apart as one unit from a line that reads the other way (:func:`cite_direction`):
        between :func:`~renderers.text.enclosing_marks`, the space before it outside. A Word
        footnote reference shows one number whatever the citation cites (``notes``)."""
        cites = [cite for cite in cites if cite.numbers]
        if not cites:
            return
        line = line_direction(p)
        footnotes = self.footnote_mode or cites[0].note > 0
        before = self.preceding.get(cites[0].anchor)
        direction = cite_direction(cites, line, before, notes=footnotes)
        opening, closing = (enclosing_marks(direction, line, before) if direction
                            else ("", ""))
        for index, cite in enumerate(cites):
            if footnotes:
                if index == 0 and opening:
                    add_run(p, opening, PLAIN)
                self._cite_footnote(p, cite)
            else:
                self._cite(p, cite, in_link, opening if index == 0 else "")
        if closing:
            add_run(p, closing, PLAIN)

    def _cite(self, p: Element, cite: Cite, in_link: bool, opening: str) -> None:
        """One citation's runs in its bookmark, led by ``opening`` (the marks that hold it
        apart from its line, the space before it outside them)."""
        children = cite.children
        if opening:
            space, children = cite_space(cite.children)
            if space:
                add_run(p, space, PLAIN)
        bid = self._cite_mark(p, cite)
        if opening:
            add_run(p, opening, PLAIN)
        if children:  # a CSL style's or citation format's own words
            self.inlines(p, children, PLAIN, _Scope(), in_link=in_link)
        for text, number in display_segments(
            () if cite.children else cite.numbers, joined=cite.joined
        ):
            if number is None or in_link:
                add_run(p, text, self.sup)
            else:
                tip = self.entries[number].title
                link = add_hyperlink(p, anchor=self.src_marks[number], tooltip=tip)
                add_run(link, text, self.sup_link)
        if bid is not None:
            self.bookmarks.end(p, bid)

    def _cite_mark(self, p: Element, cite: Cite) -> int | None:
        """The start of the bookmark of ``cite`` (its first place only), or None when nothing
        links to it."""
        mark = "" if cite.anchor in self._placed_cites else self.cite_marks.get(cite.anchor, "")
        self._placed_cites.add(cite.anchor)
        return self.bookmarks.start(p, mark) if mark else None

    def _cite_footnote(self, p: Element, cite: Cite) -> None:
        """One footnote per citation holding the Sources entry of each cited source, or a note
        style's note."""
        fid, note = self.footnotes.add()
        assert self.footnotes.relations is not None
        # Only where a link leads: a footnote has no Sources entry linking back to it.
        bid = self._cite_mark(p, cite) if cite.anchor in self.linked_cites else None
        for lead, _ in joined_lead(cite.joined):  # Word shows the reference's own number
            add_run(p, lead, self.sup)
        add_footnote_reference(p, fid, self.styles.get("Footnote Reference"))
        if bid is not None:
            self.bookmarks.end(p, bid)
        if cite.note:
            rtl = citation_note_direction(cite.children) == "rtl"
            fp = add_paragraph(note, ParaProps(style=self.styles.get("Footnote Text"), bidi=rtl))
            insert_footnote_mark(fp, self.styles.get("Footnote Reference"))
            self._entry_text(fp, replace(entry_parts(self.entries[cite.numbers[0]]),
                                         formatted=cite.children), self.footnotes.relations)
            return
        for i, number in enumerate(cite.numbers):
            parts = entry_parts(self.entries[number])
            text_style = ParaProps(style=self.styles.get("Footnote Text"), bidi=parts.rtl)
            fp = add_paragraph(note, text_style)
            if i == 0:
                insert_footnote_mark(fp, self.styles.get("Footnote Reference"))
            self._entry_text(fp, parts, self.footnotes.relations)

    def _note_reference(self, p: Element, label: str, in_link: bool) -> None:
        """The superscript letter of an author note, linked to it in the Notes list."""
        note = self.notes.get(label)
        if note is None:
            add_run(p, unresolved_note_text(label))
            return
        first = label not in self._placed_note_refs
        self._placed_note_refs.add(label)
        if first and label not in self.note_ref_marks:  # referenced only inside unlisted notes
            self.note_ref_marks[label] = self.bookmarks.name_for(f"fnref_{note.number}")
        bid = self.bookmarks.start(p, self.note_ref_marks[label]) if first else None
        if in_link:
            add_run(p, note.marker, self.sup)
        else:
            link = add_hyperlink(p, anchor=self.note_marks[label], tooltip=_note_tip(note))
            add_run(link, note.marker, self.sup)
        if bid is not None:
            self.bookmarks.end(p, bid)

    def _image(self, p: Element, image: Image, scope: _Scope) -> None:
        loaded = load_image(image.src, self.options)
        if loaded is not None:  # python-docx stores one part per distinct image
            self.image_bytes.add(len(loaded.data), key=hashlib.sha256(loaded.data).digest())
        max_width = self.text_width - scope.indent * EMU_PER_TWIP
        inline = self.pictures.inline(loaded, image, max_width) if loaded is not None else None
        if inline is None:
            add_run(p, image_fallback(image, self.words), RunProps(italic=True))
            return
        add_drawing(p, inline)


# ---------------------------------------------------------------- helpers

def _jc(align: Alignment, bidi: bool) -> str:
    """``w:jc`` of a paragraph aligned ``align`` (physical, as HTML's): "" for its default.
    Word and LibreOffice read left/right of a right-to-left paragraph as its start/end, so
    those are swapped there."""
    jc = _JC.get(align, "")
    return _MIRRORED.get(jc, jc) if bidi else jc


def _note_tip(note: AuthorNote) -> str:
    """The tooltip of a note reference: the beginning of the note."""
    first, _ = _split_first(note.blocks)
    return " ".join(plain_text(first.children).split())[:120] if first is not None else ""


def _split_first(blocks: tuple[Block, ...]) -> tuple[Paragraph | None, tuple[Block, ...]]:
    """A list item's (or note's) leading paragraph, which carries the bullet (or the note's
    letter), and the blocks after it."""
    if blocks and isinstance(blocks[0], Paragraph):
        return blocks[0], blocks[1:]
    return None, blocks


def _linked_ids(blocks: tuple[Block, ...]) -> frozenset[str]:
    """The ids the in-document links of ``blocks`` lead to (``#cite-2`` → ``cite-2``)."""
    return frozenset(link_target(node.url) for node in iter_inlines(blocks)
                     if isinstance(node, Link)) - {""}
