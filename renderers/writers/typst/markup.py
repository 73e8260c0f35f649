"""The document model → Typst markup (the body of the report; ``templates/report.typ`` styles it).

Every piece of the author's text goes through :mod:`renderers.writers.typst.escape` and reaches
Typst as a string literal; the markup written here is only calls of the template's functions
and of Typst's own elements, with arguments we choose (numbers, lengths, labels we generate).

What the report shows — the title, the lettered author notes, the Sources entries, the text of
an image that cannot be shown, task boxes — is decided in :mod:`renderers.writers.common`, as
for every other writer; which blocks read right to left by :mod:`renderers.text`.

Citations are ``cite-mark`` superscripts labelled ``cite-K``, linked to the Sources entries
``src-N``; the entries link back. Author notes are lettered superscripts linked to the Notes
section (``fn-N``), whose entries link back to their first reference (``fnref-N``), as in the
HTML report. Images are handed over as files in the compile root.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from citations.links import safe_link
from renderers.document import (
    Anchor,
    Block,
    BlockQuote,
    BulletList,
    Cite,
    Code,
    CodeBlock,
    CrossRef,
    Document,
    Emph,
    Figure,
    FootnoteDef,
    FootnoteRef,
    Heading,
    Image,
    Inline,
    LineBreak,
    Link,
    ListItem,
    Math,
    OrderedList,
    Paragraph,
    RawBlock,
    RawInline,
    SoftBreak,
    SpeakerNotes,
    Strike,
    Strong,
    Styled,
    Table,
    Text,
    ThematicBreak,
    iter_blocks,
    iter_inlines,
    only_anchors,
    plain_text,
    reading_blocks,
)
from renderers.errors import UnsupportedNodeError
from renderers.fonts import find_font, font_face
from renderers.language import DEFAULT_LANGUAGE, Language, language_for
from renderers.options import RenderOptions
from renderers.resolve import ResolvedDocument, SourceEntry
from renderers.sandbox import load_image
from renderers.text import (
    ISOLATES,
    POP_ISOLATE,
    Direction,
    HeadingIds,
    blocks_direction,
    blocks_text,
    has_right_to_left,
    link_target,
    needs_cjk,
    paragraph_dir,
    text_direction,
)
from renderers.writers.common import (
    CITATION_NOTES_ID,
    CONTENTS_ID,
    NOTES_ID,
    AuthorNote,
    AuthorNotes,
    ImageBytes,
    MarkPiece,
    TitleBlock,
    block_alignment,
    caption_direction,
    citation_note_direction,
    citation_notes_heading,
    cite_direction,
    cite_space,
    cite_wraps,
    document_author,
    document_preceding,
    document_title,
    document_words,
    entry_parts,
    has_citation_notes,
    image_fallback,
    joined_runs,
    mark_pieces,
    page_dimensions,
    pdf_uri,
    task_box,
    title_block,
    title_block_position,
    unbroken_parts,
    unresolved_note_text,
)
from renderers.writers.contents import (
    back_matter,
    body_outline,
    contents_entries,
    contents_headings,
    contents_position,
    heading_text,
)
from renderers.writers.typst.bounds import check_document_pieces, check_paragraph_pieces
from renderers.writers.typst.code import CodeBlocks, code_lines, contents_markup
from renderers.writers.typst.escape import string_literal, text_expr, text_markup
from renderers.writers.typst.fonts import cjk_symbols_in
from renderers.writers.typst.math import (
    Displayed,
    caption_lead_markup,
    crossref_markup,
    displayed_runs,
    math_markup,
    numbered_anchor_of,
)
from renderers.writers.typst.parts import (
    STYLE_FUNCTIONS,
    RootFiles,
    array,
    call,
    code_span,
    content,
    held,
    label_call,
    labelled,
    note_fields,
    optional,
    section_title,
    source_entry,
    typst_image,
)
from renderers.writers.typst.tables import TableMarkup

#: One CSS pixel in points: images keep the size WeasyPrint gives them.
_PT_PER_PX = 0.75
#: Twips (the unit of :data:`renderers.writers.common.PAGE_SIZES`) per point.
_TWIPS_PER_PT = 20
#: The bullets of each depth; the nested lists' ◦ and ▪ are among the symbols report.css's
#: stack draws from Noto Sans CJK (renderers.writers.typst.fonts.cjk_symbols_in).
_BULLETS = ("•", "◦", "▪")
SOURCES_ID = "sources"
#: The anchors of a note style's notes: ``cnote-1`` … (the HTML report's ids).
CITE_NOTE_PREFIX = "cnote-"
#: Nested lists, quotes and notes drawn as such; deeper ones keep their text but not their
#: frames (Typst stops at a fixed layout depth, well below the readers' nesting limit).
MAX_BLOCK_DEPTH = 16
#: The spacing (a length of report.typ) a list leaves after an item: a tight list's between
#: its items, a paragraph's otherwise.
ItemGap = Literal["leading", "paragraph-gap"]
#: Nested emphasis, strong, strike-through and links kept as such; deeper ones as plain text.
MAX_INLINE_DEPTH = 32
#: A block as report.typ's ``block-edges`` knows it, to space two blocks as CSS does: "text"
#: is a paragraph, "math" a paragraph of displayed formulas, "h1" to "h6" a heading.
BlockKind = Literal["text", "list", "quote", "table", "code", "listing", "rule", "math",
                    "figure", "figure-captioned", "h1", "h2", "h3", "h4", "h5", "h6"]
_HEADING_KINDS: tuple[BlockKind, ...] = ("h1", "h2", "h3", "h4", "h5", "h6")
#: The blocks whose ``above`` and ``below`` in report.typ are right only beside a paragraph.
_BOXED_KINDS: frozenset[BlockKind] = frozenset(
    {"code", "listing", "rule", "math", "figure", "figure-captioned", *_HEADING_KINDS})


class _Mark(NamedTuple):
    """One citation's superscript: its anchor, the pieces it shows (:func:`mark_pieces`), the
    label prefix its numbers link to, whether it is joined to the mark before it, and whether
    its run wraps after its separators (:func:`cite_wraps`)."""

    anchor: str
    pieces: list[MarkPiece]
    target: str
    joined: bool
    wraps: bool


@dataclass
class TypstSource:
    """The main file of a compile and the image files it refers to (name in the root → bytes)."""

    text: str
    images: dict[str, bytes] = field(default_factory=dict)
    #: Every label a link of the text leads to, in order of first use (the template's
    #: ``to-label`` finds each in ``late-dests``: :mod:`renderers.writers.typst.late_links`).
    link_targets: tuple[str, ...] = ()
    #: The document's language (:func:`renderers.language.language_for`): ``text(lang:,
    #: region:)`` and the regional CJK face.
    language: Language = DEFAULT_LANGUAGE


def typst_source(
    rdoc: ResolvedDocument, options: RenderOptions, *, dated: bool = False
) -> TypstSource:
    """The Typst main file's body for ``rdoc``: metadata, page setup, text, Notes, Sources.

    ``dated``: the PDF gets creation and modification dates (from the compile's timestamp);
    without it the PDF carries no date at all, so identical input gives identical bytes.
    """
    check_paragraph_pieces(rdoc.document.blocks)
    check_document_pieces(rdoc.document.blocks, len(rdoc.entries))
    page = page_dimensions(options.page_size)
    writer = _Markup(rdoc, options)
    title = writer.title
    parts = [
        _metadata(title.page_title(writer.words), rdoc.document, options, dated=dated),
        f"#show: report.with(width: {page.width_twips / _TWIPS_PER_PT}pt, "
        f"height: {page.height_twips / _TWIPS_PER_PT}pt);",
    ]
    if title.added:  # no heading of the body shows the title: the report adds it above
        words = (Text(title.text),)  # laid out in the direction they read, as a heading
        parts.append(writer.set_direction(writer.paragraph_direction(words), "#heading(level: 1)"
                                          f"[{writer.line(words)}];"))
        writer.previous_level = 1
    blocks = rdoc.document.blocks
    shown = title_block(rdoc.document, options, writer.words)
    if shown:  # the body on either side of it, spaced apart: the block spaces itself
        at = title_block_position(blocks, title)
        heading_next = (options.toc and contents_position(blocks, title.heading) == at) or (
            at < len(blocks) and isinstance(blocks[at], Heading))
        body = writer.spaced(blocks[:at], after="h1" if title.added else None)
        body += [writer.title_block(shown, heading_next=heading_next),
                 *writer.spaced(blocks[at:])]
    else:
        body = writer.spaced(blocks, after="h1" if title.added else None)
    if options.toc:
        at = contents_position(blocks, title.heading) + (1 if shown else 0)
        body.insert(at, writer.contents())
    parts += [
        "\n\n".join(b for b in body if b),
        writer.notes_section(),
        writer.cite_notes_section(),
        writer.sources_section(),
    ]
    text = "\n\n".join(p for p in parts if p) + "\n"
    return TypstSource(text, writer.root.files, tuple(writer.link_targets),
                       language_for(rdoc, options))


def _metadata(title: str, document: Document, options: RenderOptions, *, dated: bool) -> str:
    """``set document``: title, author (one value, as WeasyPrint writes it), keywords, the
    description (the PDF's /Subject, as WeasyPrint writes ``<meta name="description">``), and
    the compile's timestamp as date when ``dated``."""
    author = document_author(document, options)
    authors = f"({string_literal(author)},)" if author else "()"
    keywords = "".join(f"{string_literal(k)}," for k in document.keywords)
    keywords = f"keywords: ({keywords}), " if keywords else ""
    description = document.description
    described = f"description: {string_literal(description)}, " if description else ""
    date = "auto" if dated else "none"
    return (
        f"#set document(title: {string_literal(title)}, author: {authors}, {keywords}"
        f"{described}date: {date});"
    )


def opens_before_cjk(children: tuple[Inline, ...]) -> bool:
    """Whether a paragraph's first line, in WeasyPrint, opens with characters of no script that
    Noto Sans draws (digits, brackets, Latin quotes) and then CJK text ("2024年…"): Pango takes
    such a line's metrics differently (report.typ's ``opens-before-cjk``). Only a paragraph that
    starts with its own text: an element's text is laid out on its own."""
    if not children or not isinstance(children[0], Text):
        return False
    text = children[0].text.lstrip()
    letter = next((index for index, char in enumerate(text) if char.isalpha()), 0)
    return (letter > 0 and needs_cjk(text[letter])
            and font_face(find_font(["NotoSans-Regular.ttf"])).covers(text[0]))


def _aligned(block: Paragraph | Heading, markup: str) -> str:
    """``markup`` of ``block`` in report.typ's ``aligned`` when its input aligned it."""
    side = block_alignment(block)
    return markup if side == "default" or not markup else call("aligned", side, content(markup))


def _displayed_formulas(children: tuple[Inline, ...]) -> bool:
    """Whether a paragraph holds displayed formulas and nothing else (line ends aside)."""
    return any(isinstance(c, Math) for c in children) and all(
        (isinstance(c, Math) and c.display) or isinstance(c, SoftBreak) for c in children)


def _inline_targets(blocks: tuple[Block, ...]) -> tuple[set[str], set[str], set[str], set[str]]:
    """The labels ``blocks``' inlines define, by kind, in one walk: numbered equations'
    anchors, note-style citations' note labels, anchors' ids and citations' anchors."""
    equations: set[str] = set()
    cite_notes: set[str] = set()
    anchors: set[str] = set()
    cites: set[str] = set()
    for node in iter_inlines(blocks):
        if isinstance(node, Cite):
            if node.note:
                cite_notes.add(f"{CITE_NOTE_PREFIX}{node.note}")
            if node.anchor:
                cites.add(node.anchor)
        elif isinstance(node, Anchor):
            anchors.add(node.id)
        elif isinstance(node, Math) and node.anchor:
            equations.add(node.anchor)
    return equations, cite_notes, anchors, cites


class _Markup:
    """Walks the IR once; every node kind has a branch, anything else is an error."""

    def __init__(self, rdoc: ResolvedDocument, options: RenderOptions) -> None:
        self.rdoc = rdoc
        self.options = options
        self.words = document_words(rdoc, options)
        self.root = RootFiles()
        self.code = CodeBlocks(options.highlight_style)
        self.image_bytes = ImageBytes(options.limits.max_image_bytes)
        self.notes = AuthorNotes(reading_blocks(rdoc.document))
        self.heading_ids: dict[int, str] = {}
        self.title = document_title(rdoc.document, options)
        #: which headings the contents and the PDF outline (bookmarks) list
        self.outline = body_outline(rdoc.document.blocks, self.title.heading)
        self.labels: set[str] = set()
        #: The labels on headings: links to them stay Typst's own (``to_label``).
        self.heading_labels: set[str] = set()
        #: The ids of the document's anchors that label their place (none taken by another).
        self.anchor_labels: set[str] = set()
        self.placed_anchors: set[str] = set()  # a repeated anchor labels its first place only
        self._collect_labels()
        self.direction: Direction = "ltr"  # inherited by the block being written
        #: Whether the document has right-to-left text, its abstract's too (how long words
        #: break: typst.escape)
        self.bidi = has_right_to_left(blocks_text(reading_blocks(rdoc.document))) or any(
            has_right_to_left(plain_text(e.formatted) if e.formatted else e.title)
            for e in rdoc.entries)
        #: citation runs after text reading against their line (:func:`cite_direction`): none
        #: in a document without right-to-left text, which is then not walked (3 ms of the
        #: 50-page report, the Typst engine's benchmark)
        self.preceding = document_preceding(rdoc.document) if self.bidi else {}
        self.list_depth = 0
        self.block_depth = 0
        self.inline_depth = 0
        #: While a table header is written: the anchors of its citations and note references.
        #: A repeated header is laid out once per page, so its marks carry no labels; the
        #: anchors go just before the table instead.
        self.header_anchors: list[str] | None = None
        self.labelled_notes: set[str] = set()  # notes whose first reference has its anchor
        self.link_targets: dict[str, None] = {}  # labels links lead to, in order of first use
        #: A note style's citations, in order: (note number, its text, the citation's anchor).
        self.cite_notes: list[tuple[int, tuple[Inline, ...], str]] = []
        # PDF/UA-1 forbids skipped heading levels: the tagged structure is made continuous.
        self.continuous_levels = options.pdf_variant == "pdf/ua-1"
        self.previous_level = 0

    def _collect_labels(self) -> None:
        """Heading ids (as the HTML writer assigns them) and every anchor a link may target."""
        ids = HeadingIds()
        if self.options.toc:
            ids.assign(CONTENTS_ID)  # the contents list's own anchor
            self.labels.add(CONTENTS_ID)
        if self.notes:
            ids.assign(NOTES_ID)
            self.heading_labels.add(NOTES_ID)
            self.labels.update(note.anchor for note in self.notes)
            # a note's first reference is labelled (note_reference) when there is one
            self.labels.update(note.reference_anchor for note in self.notes if note.referenced)
        if has_citation_notes(self.rdoc.document.blocks):
            ids.assign(CITATION_NOTES_ID)
            self.heading_labels.add(CITATION_NOTES_ID)
        for block in iter_blocks(self.rdoc.document.blocks):
            if isinstance(block, Heading):
                ident = ids.take(block.id, plain_text(block.children))
                self.heading_ids[id(block)] = ident
                self.heading_labels.add(ident)
            elif isinstance(block, Figure | Table | CodeBlock) and block.label and block.number:
                self.labels.add(numbered_anchor_of(block.label, block.number))
        # One walk over the inlines (about 1 ms each for the 50-page report) gathers every kind
        # of target: the body's and, after it, the abstract's as drawn (its headings' ids:
        # writers.common.title_block), which has anchors and citations but no equations and
        # no note-style citations of its own to label.
        equations, cite_notes, anchors, cites = _inline_targets(self.rdoc.document.blocks)
        shown = title_block(self.rdoc.document, self.options, self.words).abstract
        _, _, abstract_anchors, abstract_cites = _inline_targets(shown)
        self.labels.update(equations)  # numbered equations (math_markup labels them)
        self.labels.update(cite_notes)
        if self.rdoc.entries:
            self.heading_labels.add(SOURCES_ID)
        for entry in self.rdoc.entries:
            self.labels.add(entry.anchor)
            if entry.backlink:
                self.labels.add(entry.backlink)
        self.labels |= self.heading_labels
        self.anchor_labels = (abstract_anchors | anchors) - self.labels
        self.labels |= self.anchor_labels
        # every citation is labelled (cite-mark), as every one has its id in HTML
        self.labels.update(abstract_cites, cites)

    # ------------------------------------------------------------------ direction

    @contextmanager
    def directed(self, direction: Direction | None) -> Iterator[str | None]:
        """Write a container whose text starts in ``direction``: yields the direction to set on
        it (None when it is the inherited one) and makes it the inherited one inside."""
        outer = self.direction
        if direction is None or direction == outer:
            yield None
            return
        self.direction = direction
        try:
            yield direction
        finally:
            self.direction = outer

    @staticmethod
    def set_direction(direction: str | None, markup: str) -> str:
        """``markup`` laid out in ``direction`` (as it is when None)."""
        if direction is None or not markup:
            return markup
        return call("directed", direction, content(markup))

    def paragraph_direction(self, children: tuple[Inline, ...]) -> str | None:
        """The direction a paragraph or heading must set (the HTML writer's ``dir`` rule)."""
        wanted = paragraph_dir(text_direction(plain_text(children)), self.direction)
        return None if wanted == "auto" or wanted == self.direction else wanted

    def line(self, children: tuple[Inline, ...]) -> str:
        """The inlines of a paragraph or heading, written in the direction its text reads in
        (its container's when it has no strong character), which its citations read against
        (:func:`cite_direction`)."""
        with self.directed(text_direction(plain_text(children))):
            if not any(isinstance(child, Math) and child.display for child in children):
                return self.inlines(children)
            return self.displayed(children)

    def displayed(self, children: tuple[Inline, ...]) -> str:
        """Inlines with displayed formulas among them, each spaced by what it meets."""
        return "".join(
            math_markup(part.node, self.root, bidi=self.bidi, sides=(part.above, part.below))
            if isinstance(part, Displayed) else self.inlines(part)
            for part in displayed_runs(children))

    # ------------------------------------------------------------------ blocks

    def blocks(
        self, blocks: Iterable[Block], *, tight: bool = False, item_gap: ItemGap | None = None
    ) -> str:
        """Blocks apart by paragraph spacing; in a tight list item, as the HTML report writes
        them (paragraphs without their own spacing: a nested list follows its line directly).
        ``item_gap``: they fill a list item, which the list's spacing of that name follows."""
        if not tight:
            return "\n\n".join(r for r in self.spaced(blocks, item_gap=item_gap) if r)
        listed = list(blocks)
        rendered = (
            self.block(b, tight=tight, item_gap=item_gap if n == len(listed) - 1 else None)
            for n, b in enumerate(listed)
        )
        return " ".join(r for r in rendered if r)

    def spaced(
        self, blocks: Iterable[Block], *, after: BlockKind | None = None,
        item_gap: ItemGap | None = None,
    ) -> list[str]:
        """Each block's markup (the last one ending a list item when ``item_gap``), with
        ``block-gap`` before it where it meets a heading, code block, rule, formula or figure
        and neither of the two is a paragraph: those blocks' own spacing in report.typ is CSS's
        beside a paragraph, and Typst's (the larger of the two blocks') is not CSS's collapsed
        margins. ``after``: the kind of the block before the first (the added title)."""
        listed = list(blocks)
        out: list[str] = []
        previous = after
        held = ""  # the labels of a paragraph of anchors only, set before the next block
        for n, block in enumerate(listed):
            if isinstance(block, Paragraph) and only_anchors(block.children):
                held += "".join(self.place(node.id, line=False) for node in block.children
                                if isinstance(node, Anchor))
                continue
            markup = self.block(block, item_gap=item_gap if n == len(listed) - 1 else None)
            if not markup:
                continue
            kind = self.block_kind(block)
            if (previous is not None and kind is not None and "text" not in (previous, kind)
                    and (previous in _BOXED_KINDS or kind in _BOXED_KINDS)):
                out.append(call("block-gap", string_literal(previous), string_literal(kind)))
            out.append(held + markup)
            held = ""
            previous = kind
        if held:
            out.append(held)
        return out

    def block_kind(self, block: Block) -> BlockKind | None:
        """How ``block-gap`` spaces ``block``, just written (a heading at the level it was
        written at); None for a block it leaves to Typst."""
        match block:
            case Heading():
                return _HEADING_KINDS[self.previous_level - 1]
            case Paragraph(children):
                return "math" if _displayed_formulas(children) else "text"
            case BulletList() | OrderedList():
                return "list" if self.block_depth < MAX_BLOCK_DEPTH else None
            case Table():
                return "table"
            case CodeBlock(caption=caption, number=number) if caption or number:
                return "listing"
            case CodeBlock() | RawBlock():
                return "code"
            case BlockQuote():
                return "quote" if self.block_depth < MAX_BLOCK_DEPTH else None
            case Figure(_, caption, label, number):
                lead = caption_lead_markup(label, number, self.words)
                return "figure-captioned" if caption or lead else "figure"
            case ThematicBreak():
                return "rule"
        return None

    def block(
        self, block: Block, *, tight: bool = False, item_gap: ItemGap | None = None
    ) -> str:
        match block:
            case Heading():
                return self.heading(block)
            case Paragraph(children) if _displayed_formulas(children):
                return self.displayed(children)
            case Paragraph(children):
                line = self.line(children)
                if opens_before_cjk(children):
                    line = call("opens-before-cjk", content(line))
                return _aligned(block, self.set_direction(self.paragraph_direction(children),
                                                          line))
            case BulletList(items, list_tight):
                return self.list_block(block, items, list_tight, start=None)
            case OrderedList(items, start, list_tight):
                return self.list_block(block, items, list_tight, start=start)
            case Table():
                with self.directed(blocks_direction((block,))) as direction:
                    return self.set_direction(direction, TableMarkup(self).table(block))
            case CodeBlock(text, language, caption, label, number):
                code = self.code.block(text, language, self.caption(label, number, caption))
                return labelled(code, numbered_anchor_of(label, number))
            case BlockQuote(inner):
                if self.block_depth >= MAX_BLOCK_DEPTH:
                    return self.blocks(inner)
                return call("quote-block", content(self.nested_blocks(inner)),
                            *(["tight: true"] if tight else []),
                            *([f"item-end: {item_gap}"] if item_gap else []))
            case Figure(image, caption, label, number):
                body = self.image(image, block=True)
                caption_markup = optional(self.caption(label, number, caption))
                side = block_alignment(block)
                figure = call("figure-block", content(body), caption_markup,
                              *([f"side: {side}"] if side != "default" else []))
                return labelled(figure, numbered_anchor_of(label, number))
            case ThematicBreak():
                return "#rule-block();"
            case RawBlock(text, _):
                return call("raw-block", content(code_lines(text.removesuffix("\n").split("\n"))))
            case FootnoteDef():
                return ""  # written in the Notes section
            case SpeakerNotes():
                return ""  # a deck's notes pages only (the citation pass takes them out)
            case _:
                raise UnsupportedNodeError(
                    f"Typst writer: unsupported block {type(block).__name__}"
                )

    def caption(self, label: str, number: int, caption: tuple[Inline, ...]) -> str:
        """A figure's, table's or listing's caption, led by "Figure 1: " when it is numbered, in the
        direction it reads in (:func:`~renderers.writers.common.caption_direction`)."""
        lead = caption_lead_markup(label, number, self.words)
        if not lead and not caption:
            return ""
        with self.directed(caption_direction(label, number, caption, self.words)) as direction:
            return self.set_direction(direction, lead + self.inlines(caption))

    def nested_blocks(
        self, blocks: Iterable[Block], *, tight: bool = False, item_gap: ItemGap | None = None
    ) -> str:
        """Blocks inside a list item, quote or note (one level deeper)."""
        self.block_depth += 1
        try:
            return self.blocks(blocks, tight=tight, item_gap=item_gap)
        finally:
            self.block_depth -= 1

    def heading(self, block: Heading) -> str:
        level = min(max(block.level, 1), 6)
        if self.continuous_levels:
            level = min(level, self.previous_level + 1)
        self.previous_level = level
        ident = self.heading_ids.get(id(block)) or HeadingIds().assign(plain_text(block.children))
        entry = heading_text(block, self.words)
        body = call("heading-body", string_literal(entry), content(self.line(block.children)))
        # A heading with no text for the outline (only a citation) gets no PDF bookmark, as
        # WeasyPrint leaves it out: Typst would write one with an empty title. Nor does one
        # the outline leaves out (its author's {.unlisted}, or inside a section so kept out).
        bookmarked = "" if entry and self.outline.lists(block) else ", bookmarked: false"
        markup = f"#heading(level: {level}{bookmarked})[{body}]{label_call(ident)};"
        return _aligned(block, self.set_direction(self.paragraph_direction(block.children),
                                                  markup))

    def list_block(
        self, block: Block, items: tuple[ListItem, ...], tight: bool, *, start: int | None
    ) -> str:
        first = 1 if start is None else int(start)
        if self.block_depth >= MAX_BLOCK_DEPTH:  # too deep to draw: the items as paragraphs
            return "\n\n".join(
                text_expr(f"{_BULLETS[0] if start is None else f'{first + n}.'} ")
                + self.blocks(item.blocks, tight=True)
                for n, item in enumerate(items)
            )
        with self.directed(blocks_direction((block,))) as direction:
            return self.set_direction(direction, self.list_markup(items, tight, start, first))

    def list_markup(
        self, items: tuple[ListItem, ...], tight: bool, start: int | None, first: int
    ) -> str:
        bullet = _BULLETS[self.list_depth % len(_BULLETS)]
        self.list_depth += 1
        try:
            bodies = [content(self.list_item(item, tight, last=n == len(items) - 1))
                      for n, item in enumerate(items)]
        finally:
            self.list_depth -= 1
        tight_arg = "true" if tight else "false"
        # cjk_symbols_in reads the fonts only for a bullet of the symbol blocks (◦, ▪): a
        # report whose lists are not nested skips it (16 ms of CPU)
        cjk = ["cjk: true"] if start is None and cjk_symbols_in(bullet) else []
        if any(item.checked is not None for item in items):
            markers = [
                string_literal(task_box(item.checked)) if item.checked is not None
                else "none" for item in items
            ]  # fmt: skip
            kind = string_literal(bullet) if start is None else "auto"
            return call("marked-list", str(first), tight_arg, kind, array(markers), *cjk,
                        *bodies)
        if start is None:  # the bullet of its depth among all lists, as HTML's `ol ul` is ◦
            marker = f"marker: bullet-marker({', '.join([content(text_expr(bullet)), *cjk])})"
            return call("list", marker, f"tight: {tight_arg}", *bodies)
        if first < 0:  # Typst counts from 0 at least: the numbers are shifted by hand
            return call("enum", "start: 0", f"numbering: n => number-marker(n - {-first})",
                        f"tight: {tight_arg}", *bodies)
        return call("enum", f"start: {first}", f"tight: {tight_arg}", *bodies)

    def list_item(self, item: ListItem, tight: bool, *, last: bool) -> str:
        """An item's blocks; the spacing after it is the tight list's leading between its items,
        else a paragraph's."""
        gap: ItemGap = "leading" if tight and not last else "paragraph-gap"
        with self.directed(blocks_direction(item.blocks)) as direction:
            body = self.nested_blocks(item.blocks, tight=tight, item_gap=gap)
            first = item.blocks[0] if item.blocks else None
            if (item.checked is not None and isinstance(first, Paragraph)
                    and self.block_kind(first) == "text"
                    and self.paragraph_direction(first.children) is None):
                body = "#task-strut;" + body  # the depth its box gives its first line
            return self.set_direction(direction, body)


    # ------------------------------------------------------------------ inlines

    def inlines(self, nodes: Iterable[Inline]) -> str:
        return "".join(
            self.inline(run[0]) if len(run) == 1
            else self.cite_marks([n for n in run if isinstance(n, Cite)], self.direction)
            for run in joined_runs(nodes)
        )

    def inline(self, node: Inline) -> str:
        match node:
            case Text(text) | RawInline(text):
                return text_markup(text, bidi=self.bidi)
            case Anchor(ident):
                return self.place(ident)
            case Emph(children):
                return self.styled("emph", children)
            case Strong(children):
                return self.styled("strong", children)
            case Strike(children):
                return self.styled("strike", children)
            case Styled(style, children, title):
                function = STYLE_FUNCTIONS[style]
                if style == "abbr" and not title:
                    function = ""  # only an abbreviation with an expansion is underlined
                return self.styled(function, children)
            case Code(text):
                return code_span(text, bidi=self.bidi)
            case Link(url, children, _):
                return self.link(url, children)
            case Image():
                return self.image(node, block=False)
            case LineBreak():
                return "#linebreak();"
            case SoftBreak():
                return text_expr(" ")
            case FootnoteRef(label):
                return self.note_reference(label)
            case Cite():
                return self.cite(node)
            case Math():
                return math_markup(node, self.root, bidi=self.bidi)
            case CrossRef():
                return crossref_markup(node, self.labels, self.to_label, self.words)
            case _:
                raise UnsupportedNodeError(
                    f"Typst writer: unsupported inline {type(node).__name__}"
                )

    def styled(self, function: str, children: tuple[Inline, ...]) -> str:
        """``#function[children];``, or the children alone (no function, or nested too deep)."""
        if not function or self.inline_depth >= MAX_INLINE_DEPTH:
            return self.inlines(children)
        self.inline_depth += 1
        try:
            return f"#{function}[{self.inlines(children)}];"
        finally:
            self.inline_depth -= 1

    def cite(self, cite: Cite) -> str:
        """A citation: linked superscript numbers (or, in a note style, the note's number
        linked to it: :meth:`cite_marks`); or as a CSL style wrote it (its ``children``, whose
        links lead to the entries), :func:`held` apart from a line that reads the other way
        (:func:`cite_direction`), the space before it left outside."""
        if cite.note or not cite.children:
            return self.cite_marks([cite], self.direction)
        mark = self.anchor(cite.anchor)
        # After the space the style put before the citation, at the top of its line.
        space, shown = cite_space(cite.children)
        placed = call("text-anchor", mark) if mark != "none" else ""
        lead = self.inlines((Text(space),)) if space else ""
        direction = cite_direction((cite,), self.direction, self.preceding.get(cite.anchor))
        if direction is None:
            return lead + placed + self.inlines(shown)
        return lead + placed + held(self.inlines(shown), plain_text(shown), direction)

    def cite_marks(self, cites: Sequence[Cite], line: Direction) -> str:
        """The ``cite-mark`` superscripts of a citation and those joined to it
        (:func:`joined_runs`), each number linked to the label ``src-N`` (a Sources entry) or
        ``cnote-N`` (a note style's note, listed here); a joined mark's separator follows the
        mark before it without a gap. Held apart from a ``line`` that reads the other way
        (:func:`cite_direction`) as one unit: ``cite-run``'s box in their direction, or, when
        the run wraps (:func:`cite_wraps`; a box does not), between isolate marks."""
        wraps = cite_wraps(cites)
        marks: list[_Mark] = []
        for cite in cites:
            if cite.note:
                self.cite_notes.append((cite.note, cite.children, cite.anchor))
            target = CITE_NOTE_PREFIX if cite.note else "src-"
            marks.append(_Mark(cite.anchor, mark_pieces(cite), target, cite.joined, wraps))
        direction = cite_direction(cites, line, self.preceding.get(cites[0].anchor))
        if direction is None:
            return "".join(self.cite_mark(mark) for mark in marks)
        if wraps:
            first = marks[0]  # then the last (the same one when alone)
            marks[0] = first._replace(pieces=[(ISOLATES[direction], None), *first.pieces])
            marks[-1] = marks[-1]._replace(pieces=[*marks[-1].pieces, (POP_ISOLATE, None)])
            return "".join(self.cite_mark(mark) for mark in marks)
        boxed = (content(self.cite_mark(mark._replace(joined=True))) for mark in marks)
        return call("cite-run", direction, *boxed)

    def cite_mark(self, mark: _Mark) -> str:
        """``cite-mark`` showing ``mark``'s pieces (:func:`mark_pieces`), each number linked to
        the label ``{target}N``, in the parts no line breaks inside (:func:`unbroken_parts`);
        a joined mark's separator comes first, without a gap."""
        if not mark.pieces:
            return ""
        flags = ["gap: false"] if mark.joined else []
        parts = [
            "(" + "".join(
                f"({'none' if number is None else self.target(f'{mark.target}{int(number)}')}, "
                f"{string_literal(text)}),"
                for text, number in part) + ")"
            for part in unbroken_parts(mark.pieces, wraps=mark.wraps)
        ]
        return call("cite-mark", self.anchor(mark.anchor), *flags, *parts)

    def anchor(self, name: str) -> str:
        """The label argument of a mark: ``name``, or none inside a table header (which takes
        the anchor before the table)."""
        if self.header_anchors is None:
            return string_literal(name)
        self.header_anchors.append(name)
        return "none"

    def place(self, ident: str, *, line: bool = True) -> str:
        """The label of an :class:`Anchor` at its first place: at the top of its line (where
        links to it land), joined to the text after it; with ``line`` false (a paragraph of
        anchors only, which would be an empty line), a label of no size before the next
        block, as a table header's anchors are."""
        if ident not in self.anchor_labels or ident in self.placed_anchors:
            return ""
        self.placed_anchors.add(ident)
        if not line:
            return f"#metadata(none){label_call(ident)};"
        mark = self.anchor(ident)
        return call("text-anchor", mark) if mark != "none" else ""

    def record_target(self, name: str) -> str:
        """``name``, the label a link leads to ("" for none), recorded as a link target (the
        template's ``to-label`` looks each up in ``late-dests``)."""
        if name:
            self.link_targets.setdefault(name)
        return name

    def target(self, name: str) -> str:
        """The string literal of a label a link leads to, recorded as a link target."""
        return string_literal(self.record_target(name))

    def to_label(self, name: str) -> str:
        """The destination of a link to the label ``name`` (``to-label`` in the template). A
        heading's stays Typst's own label: a tagged PDF's alt text of a link to a heading is
        Typst's wording ("Section, page 3"), which a late link could not reproduce."""
        if name in self.heading_labels:
            return f"label({string_literal(name)})"
        return f"to-label({self.target(name)})"

    def link(self, url: str, children: tuple[Inline, ...]) -> str:
        """A link (its citations already follow it: :func:`renderers.resolve.resolve`).
        A link to an anchor the document does not have is its text (the reader noted it), as
        the HTML writer shows it."""
        text = self.inlines(children)
        target = self.link_target(url)
        if self.inline_depth >= MAX_INLINE_DEPTH or target is None:
            return text
        return f"#link({target})[{text}];"

    def link_target(self, url: str) -> str | None:
        """A Typst link target: a URL string, a label we write, or None (shown as text)."""
        href = safe_link(url, allow_fragment=True)
        if not href:
            return None
        if href.startswith("#"):
            fragment = link_target(href)  # percent escapes decoded: #%C3%A9t%C3%A9 is été
            return self.to_label(fragment) if fragment in self.labels else None
        return string_literal(pdf_uri(href))

    def note_reference(self, label: str) -> str:
        """The superscript letter of a note, linked to it; the first reference is labelled
        (``fnref-N``) for the note's back-link."""
        note = self.notes.get(label)
        if note is None:
            return text_markup(unresolved_note_text(label))
        anchor = "none"
        if label not in self.labelled_notes:
            self.labelled_notes.add(label)
            anchor = self.anchor(note.reference_anchor)
        return call("note-ref", anchor, self.target(note.anchor), string_literal(note.marker))

    def image(self, image: Image, *, block: bool) -> str:
        loaded = load_image(image.src, self.options)
        if loaded is None:
            text = image_fallback(image, self.words)
            alt = call("image-alt", content(text_markup(text)))
            if not block:
                return alt
            with self.directed(text_direction(text)) as direction:  # "[صورة: …]" on its line
                return self.set_direction(direction, alt)
        data, extension = typst_image(loaded)
        name, new = self.root.name_of(data, "image", extension)
        if new:  # the PDF holds each distinct image once, however often it is shown
            self.image_bytes.add(len(data))
        width = round(loaded.width * _PT_PER_PX, 2)
        function = "sized-image" if block else "inline-image"
        alt = image.alt or image.title
        return call(function, string_literal(name), str(width), string_literal(alt))

    # ------------------------------------------------------------------ end sections

    def title_block(self, block: TitleBlock, *, heading_next: bool) -> str:
        """The title block under the title: report.typ's ``title-block``, each part a
        paragraph in the direction it reads (the abstract's blocks as the body's);
        ``heading_next``: a heading or the contents follow it (they space themselves from it)."""
        def part(text: str) -> str:
            return content(self.block(Paragraph((Text(text),))))

        named = [f"{kind}: {part(text)}" for kind, text in block.lines]
        if block.abstract:  # each of the abstract's blocks drawn as the body's are
            drawn = (content(markup) for b in block.abstract if (markup := self.block(b)))
            named += [f"abstract-title: {part(block.abstract_heading)}",
                      f"abstract: {array(drawn)}"]
        return call("title-block", *named, *(["heading-next: true"] if heading_next else []))

    def contents(self) -> str:
        """The table of contents: the body's headings but the one showing the title, then
        the Notes, Citation notes and Sources (:mod:`renderers.writers.contents` decides).
        Written after the body, which collects the citation notes."""
        back = back_matter(
            self.words,
            notes=NOTES_ID if self.notes else "",
            citation_notes=CITATION_NOTES_ID if self.cite_notes else "",
            sources=SOURCES_ID if self.rdoc.entries else "",
            sources_heading=self.rdoc.sources_heading,
        )
        headings = contents_headings(self.outline, lambda h: self.heading_ids[id(h)],
                                     self.words)
        return contents_markup(contents_entries(headings, back), self.words)

    def added_level(self) -> tuple[str, ...]:
        """The ``level:`` argument of a section the writer adds (Notes, Sources), when not the
        template's ``added-section-level``: PDF/UA-1 wants a document's first heading at level
        1, so in a body without headings those sections are top-level ones."""
        return ("level: 1",) if self.continuous_levels and self.previous_level == 0 else ()

    def notes_section(self) -> str:
        """Every author note in series order (a, b, c …), each linking back to its first
        reference, as the HTML report lists them."""
        if not self.notes:
            return ""
        notes = [self.note_entry(note) for note in self.notes]
        return call(
            "notes-section", section_title(self.words.notes), string_literal(NOTES_ID),
            array(notes), *self.added_level(),
        )  # fmt: skip

    def note_entry(self, note: AuthorNote) -> str:
        with self.directed(blocks_direction(note.blocks)) as direction:
            self.block_depth += 1
            try:
                first = note.blocks[0] if note.blocks else None
                if isinstance(first, Paragraph) and len(note.blocks) == 1:
                    body = self.inlines(first.children)
                else:
                    body = self.blocks(note.blocks)
            finally:
                self.block_depth -= 1
        labelled = note.label in self.labelled_notes
        backlink = self.record_target(note.reference_anchor if labelled else "")
        return note_fields(note.anchor, f"{note.marker}.", body, backlink, direction)

    def cite_notes_section(self) -> str:
        """A note style's notes (``1.`` …), each linking back to its citation, after the author
        notes as in the HTML report. Written after the body, which collects them."""
        if not self.cite_notes:
            return ""
        notes = [self.cite_note(*note) for note in self.cite_notes]
        return call(
            "notes-section",
            section_title(citation_notes_heading(self.words, author_notes=bool(self.notes))),
            string_literal(CITATION_NOTES_ID), array(notes), *self.added_level(),
        )  # fmt: skip

    def cite_note(self, number: int, children: tuple[Inline, ...], anchor: str) -> str:
        """One note of a note style, in the direction its text starts in."""
        with self.directed(citation_note_direction(children)) as direction:
            body = self.inlines(children)
        backlink = self.record_target(anchor)
        return note_fields(f"{CITE_NOTE_PREFIX}{number}", f"{number}.", body, backlink, direction)

    def sources_section(self) -> str:
        entries = self.rdoc.entries
        if not entries:
            return ""
        styled = any(entry.formatted for entry in entries)
        items = (self.source_entry(entry) for entry in entries)
        return call(
            "sources-section", section_title(self.rdoc.sources_heading),
            string_literal(SOURCES_ID), "true" if styled else "false", array(items),
            *self.added_level(),
        )  # fmt: skip

    def source_entry(self, entry: SourceEntry) -> str:
        """One Sources entry; the label its back-link leads to is recorded as a link target."""
        self.record_target(entry.backlink)
        return source_entry(entry_parts(entry), self.inlines(entry.formatted), bidi=self.bidi)
