"""The deck builder: lays a resolved document onto slides (pandoc's split, document → slides).

:func:`build_deck` turns a :class:`~renderers.resolve.ResolvedDocument` into a
:class:`~.model.Deck` of frozen slides: a cover, section slides, a slide per heading of
``slide_level``, Sources slides. Overflow is measured, never left to autofit: every paragraph's
wrapped line count comes from real font metrics (:mod:`.metrics`), and :mod:`.flow` moves what
does not fit to a "Title (cont.)" slide. Nothing here imports python-pptx: :mod:`.output` only
draws what this decided.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from renderers.document import (
    Alignment,
    Block,
    BlockQuote,
    BulletList,
    CodeBlock,
    Emph,
    Figure,
    FootnoteDef,
    Heading,
    Image,
    Inline,
    ListItem,
    OrderedList,
    Paragraph,
    RawBlock,
    SoftBreak,
    SpeakerNotes,
    Strong,
    Table,
    Text,
    ThematicBreak,
    plain_text,
    reading_blocks,
)
from renderers.errors import LimitError, UnsupportedNodeError
from renderers.language import language_for
from renderers.options import RenderOptions
from renderers.resolve import ResolvedDocument, SourceEntry
from renderers.text import blocks_direction
from renderers.writers.common import (
    AuthorNotes,
    block_alignment,
    document_title,
    document_words,
    image_fallback,
    item_marker,
    preceding_directions,
    title_block,
)
from renderers.writers.contents import (
    Outline,
    back_matter,
    body_outline,
    contents_entries,
    contents_headings,
)
from renderers.writers.highlight import Highlighter
from renderers.writers.pptx.code import CodeLines, code_lines, hang_width, line_starts
from renderers.writers.pptx.flow import SlideFlow
from renderers.writers.pptx.math import caption_runs, equation_mark_run, equation_picture
from renderers.writers.pptx.metrics import TextMetrics
from renderers.writers.pptx.model import (
    BODY_SIZE,
    BULLETS,
    CAPTION_SIZE,
    CODE_MIN_LINES,
    CODE_SIZE,
    EMU_PER_PT,
    INSET_X,
    INSET_Y,
    ITEM_GAP,
    SOURCES_SIZE,
    SUBHEAD_SIZE,
    CodeItem,
    Deck,
    Geometry,
    ImageLoader,
    Para,
    Picture,
    PictureItem,
    Run,
    TableItem,
    TextItem,
    pt_to_emu,
)
from renderers.writers.pptx.notes import notes_paras
from renderers.writers.pptx.runs import (
    InlineRuns,
    clean,
    continued_title,
    entry_para,
    runs_rtl,
    with_backlink,
)
from renderers.writers.pptx.tables import distribute, measure_table

TAGLINE_MAX_CHARS = 160  # a longer line under the title stays on a body slide


class _DeckBuilder(SlideFlow):
    """Lays blocks onto slides: which block becomes what (the flow measures and paginates)."""

    def __init__(
        self,
        rdoc: ResolvedDocument,
        options: RenderOptions,
        geometry: Geometry,
        metrics: TextMetrics,
        load_image: ImageLoader,
    ) -> None:
        # the footer names a source by its domain (or file), else by its title
        labels = {e.number: e.label or e.title for e in rdoc.entries}
        super().__init__(options, geometry, metrics, labels, document_words(rdoc, options))
        self.rdoc = rdoc
        self.load_image = load_image
        self.notes = AuthorNotes(reading_blocks(rdoc.document))
        self.inlines = InlineRuns(self.words, self.notes,
                                  preceding_directions(reading_blocks(rdoc.document),
                                                       across_breaks=True))
        self.highlight = Highlighter(options.highlight_style)

    # ------------------------------------------------------------ blocks

    def blocks(self, blocks: Sequence[Block], level: int = 0, italic: bool = False) -> None:
        for block in blocks:
            self.block(block, level, italic)

    def block(self, block: Block, level: int, italic: bool) -> None:
        match block:
            case Heading(lvl, children, hid):
                self.heading(lvl, children, hid, block_alignment(block))
            case Paragraph(children):
                self.paragraph(children, level, italic, block_alignment(block))
            case BulletList(items, tight):
                self.list_items(items, level, None, tight, italic)
            case OrderedList(items, start, tight):
                self.list_items(items, level, start, tight, italic)
            case Table():
                self.table(block)
            case CodeBlock(text, language, caption, label, number):
                cap_runs = (*caption_runs(label, number, self.words), *self.caption(caption))
                if cap_runs:  # a listing's caption, above its code and kept with it
                    self.ensure_open()
                    self.add_para(Para(cap_runs, size=CAPTION_SIZE, keep_with_next=True))
                self.code(text, language, self.highlight)
            case BlockQuote(inner):
                self.blocks(inner, level + 1, True)
            case Figure(image, caption, label, number):
                self.figure(image, (*caption_runs(label, number, self.words),
                                    *self.caption(caption)), block_alignment(block))
            case ThematicBreak():
                if self.open and not self.is_empty():
                    self.continue_slide()
            case RawBlock(text):
                self.code(text, "")
            case FootnoteDef():
                pass  # author notes have their own slides, after the body
            case SpeakerNotes(inner):
                self.add_speaker_notes(notes_paras(inner, self.inlines))
            case _:
                raise UnsupportedNodeError(f"pptx: block node {type(block).__name__}")

    def heading(
        self, level: int, children: tuple[Inline, ...], hid: str, align: Alignment = "default"
    ) -> None:
        """A slide title (where the layout places it), or a bold line ``align``ed on the slide."""
        runs = self.inlines.para(children)
        slide_level = self.options.slide_level
        if level < slide_level:
            self.close()
            if hid:
                self.anchors.append(hid)
            self.add_slide("section", runs)
            self.title_base = runs
            self.open = False
        elif level == slide_level:
            self.start(runs)
            if hid:
                self.anchors.append(hid)
        else:
            self.ensure_open()
            if hid:
                self.anchors.append(hid)
            size = SUBHEAD_SIZE if level == slide_level + 1 else BODY_SIZE
            bold = tuple(dataclasses.replace(r, bold=True) for r in runs)
            self.add_para(Para(bold, size=size, space_before=10.0, keep_with_next=True,
                               align=align))

    def paragraph(
        self, children: tuple[Inline, ...], level: int, italic: bool,
        align: Alignment = "default",
    ) -> None:
        if len(children) == 1 and isinstance(children[0], Image) and level == 0:
            self.figure(children[0], (), align)
            return
        if (equation := equation_picture(children)) is not None:
            picture, alt, width, height = equation
            self.picture(picture, alt, (width, height), (), mark=equation_mark_run(children))
            return
        runs = self.inlines.para(children, italic=italic)
        introduces = "".join(run.text for run in runs).rstrip().endswith(":")
        self.add_para(Para(runs, level=level, keep_with_next=introduces, align=align))

    def list_items(
        self, items: tuple[ListItem, ...], level: int, start: int | None, tight: bool,
        italic: bool,
    ) -> None:
        depth = level + 1
        digits = len(str(start + len(items) - 1)) if start is not None else 1
        for index, item in enumerate(items):
            first = True
            # a task's box takes the place of the item's bullet or number
            listed = "" if start is not None else BULLETS[(depth - 1) % len(BULLETS)]
            bullet = item_marker(item.checked, listed)
            number = start + index if start is not None and not bullet else 0
            # an auto-number counts from 1 (startAt) and a bullet is one character: the 0 of a
            # list from 0 opens the item's text
            lead = (Run(f"{number}. "),) if start is not None and not bullet and number < 1 else ()
            for sub in item.blocks or (Paragraph(()),):
                if isinstance(sub, Paragraph) and first:
                    runs = (*lead, *self.inlines.para(sub.children, italic=italic))
                    space = 3.0 if tight else 6.0
                    self.add_para(Para(runs or (Run(" "),), level=depth, bullet=bullet,
                                       number=number, digits=digits, space_before=space))
                elif isinstance(sub, Paragraph):
                    self.paragraph(sub.children, depth, italic)
                else:
                    if first:
                        self.add_para(Para(lead or (Run(" "),), level=depth, bullet=bullet,
                                           number=number, digits=digits, space_before=3.0))
                    self.block(sub, depth, italic)
                first = False

    def author_notes(self) -> None:
        """The Notes slides, before the Sources: every author note in series order, as
        ``a. The note. ↑`` (the back-link returns to its first reference)."""
        if not self.notes:
            return
        self.start((Run(self.words.notes),))
        for note in self.notes:
            mark = Run(f"{note.marker}. ", bold=True, defines=note.anchor)
            blocks = list(note.blocks)
            runs: tuple[Run, ...] = (mark,)
            first = blocks[0] if blocks else None
            if isinstance(first, Paragraph):
                runs = (mark, *self.inlines.para(first.children))
                blocks.pop(0)
            if note.referenced:
                runs = with_backlink(runs, note.reference_anchor, rtl=runs_rtl(runs))
            self.add_para(Para(runs, size=SOURCES_SIZE, space_before=4.0))
            self.blocks(blocks, 1)
        self.close()

    def agenda(self, outline: Outline) -> None:
        """The contents as an agenda slide (more when long): the headings of ``outline`` that
        start sections and slides, each linked to its slide, then the Notes and Sources
        slides."""
        back = back_matter(  # a note style's citations show numbers: no notes of their own
            self.words,
            notes=next(iter(self.notes)).anchor if self.notes else "",
            sources=self.rdoc.entries[0].anchor if self.rdoc.entries else "",
            sources_heading=self.rdoc.sources_heading,
        )
        headings = contents_headings(outline, lambda h: h.id, self.words,
                                     deepest=self.options.slide_level)
        entries = contents_entries(headings, back)
        if not entries:
            return
        base = self.title_base
        self.start((Run(self.words.contents),))
        for entry in entries:
            run = Run(clean(entry.text), target=entry.anchor)
            self.add_para(Para((run,), level=entry.depth - 1, space_before=4.0))
        self.close()
        self.title_base = base  # what follows before the first heading: the document's title

    # ------------------------------------------------------------ code

    def code(self, text: str, language: str, highlight: Highlighter | None = None) -> None:
        self.ensure_open()
        code = code_lines(text, language, highlight)
        lines = code.lines
        width = self.text_width
        line_h = self.metrics.line_height(CODE_SIZE)
        counts = [len(line_starts(ln, self.metrics, width, CODE_SIZE)) for ln in lines]
        whole = sum(counts) * line_h <= self.content_h - 2 * INSET_Y + 0.01
        i, moved = 0, False
        while i < len(lines):
            top = self.next_top()
            room = self.content_h - top - 2 * INSET_Y
            j, used = i, 0.0
            while j < len(lines) and used + counts[j] * line_h <= room + 0.01:
                used += counts[j] * line_h
                j += 1
            if j < len(lines):
                # A block one slide can hold moves whole (once: what the move carries may
                # take the room); a longer one leaves at least CODE_MIN_LINES on each side.
                if not self.is_empty() and ((whole and not moved) or j - i < CODE_MIN_LINES):
                    moved = True
                    self.continue_slide()
                    continue
                if len(lines) - j < CODE_MIN_LINES and j - CODE_MIN_LINES > i:
                    j = max(len(lines) - CODE_MIN_LINES, i + CODE_MIN_LINES)
                    used = sum(counts[i:j]) * line_h
            if j == i:
                j = i + 1  # a single line taller than a whole slide
                used = self.clip_code_line(code, i, room)
            self.flush_text()
            height = used + 2 * INSET_Y
            hangs = tuple(hang_width(ln, self.metrics, width, CODE_SIZE) for ln in lines[i:j])
            self.items.append(CodeItem(tuple(lines[i:j]), language, pt_to_emu(top),
                                       pt_to_emu(height), colors=tuple(code.colors[i:j]),
                                       fill=code.fill, hangs=hangs))
            self.y = top + height
            i = j
            if i < len(lines):
                self.continue_slide()

    def clip_code_line(self, code: CodeLines, index: int, room: float) -> float:
        """Shorten line ``index`` of ``code`` to what fits ``room``; return its height."""
        line_h = self.metrics.line_height(CODE_SIZE)
        max_lines = max(1, int(room // line_h))
        starts = line_starts(code.lines[index], self.metrics, self.text_width, CODE_SIZE)
        if len(starts) > max_lines:
            self.warnings.append("pptx: a code line too long for one slide was shortened")
            code.clip(index, max(starts[max_lines] - 1, 0), "…")
            starts = line_starts(code.lines[index], self.metrics, self.text_width, CODE_SIZE)
        return len(starts) * line_h

    # ------------------------------------------------------------ tables

    def table(self, table: Table) -> None:
        self.ensure_open()
        measured = measure_table(table, self.inlines, self.metrics, self.content_w,
                                 self.content_h)
        if measured is None:
            return
        self.warnings += ["pptx: a table row too tall for one slide was shortened"] * (
            measured.clipped
        )
        header, rows, heights = measured.header, measured.rows, measured.heights
        header_h = measured.header_height
        col_emu = distribute(self.geo.content.width, measured.widths)
        i = 0
        while True:
            top = self.place(header_h + (heights[i] if i < len(rows) else 0.0))
            if top is None:
                self.continue_slide()
                continue
            j, used = i, header_h
            while j < len(rows) and top + used + heights[j] <= self.content_h + 0.01:
                used += heights[j]
                j += 1
            if j == i and i < len(rows):
                j = i + 1
            row_h = ((header_h,) if header else ()) + tuple(heights[i:j])
            row_emu = tuple(pt_to_emu(h) for h in row_h)
            self.items.append(TableItem(header, tuple(rows[i:j]), measured.aligns, col_emu,
                                        row_emu, measured.size, measured.inset, pt_to_emu(top),
                                        sum(row_emu), rtl=blocks_direction((table,)) == "rtl"))
            self.y = top + sum(row_emu) / EMU_PER_PT
            i = j
            if i >= len(rows):
                break
            self.continue_slide()
        if table.caption or table.number:
            runs = (*caption_runs(table.label, table.number, self.words),
                    *self.caption(table.caption))
            self.add_para(Para(runs, size=CAPTION_SIZE))

    # ------------------------------------------------------------ images

    def caption(self, caption: tuple[Inline, ...]) -> tuple[Run, ...]:
        return self.inlines.para(caption, italic=True) if caption else ()

    def figure(
        self, image: Image, cap_runs: tuple[Run, ...], align: Alignment = "default"
    ) -> None:
        """``align``: "default" centres the picture (and its caption), else left or right."""
        self.ensure_open()
        picture = self.load_image(image.src)
        if picture is None or picture.width <= 0 or picture.height <= 0:
            fallback = Run(clean(image_fallback(image, self.words)), italic=True)
            self.add_para(Para((fallback,), size=CAPTION_SIZE, align=align))
            if cap_runs:
                self.add_para(Para(cap_runs, size=CAPTION_SIZE, align=align))
            return
        natural = (picture.width * 0.75, picture.height * 0.75)  # 96 dpi
        self.picture(picture, clean(image.alt), natural, cap_runs, align)

    def picture(self, picture: Picture, alt: str, natural: tuple[float, float],
                cap_runs: tuple[Run, ...], align: Alignment = "default", *,
                mark: Run | None = None) -> None:
        """A picture of ``natural`` size (points), shrunk to fit, with its caption below;
        centred unless ``align`` is left or right. ``mark``: an equation's "(1)", set at the
        right edge beside the picture, centred on its height (the picture shrinks to leave it
        room on both sides, so that it stays centred)."""
        self.ensure_open()
        mark_w = 0.0
        if mark is not None:
            mark_w = self.metrics.text_width(mark.text, mark.style, BODY_SIZE) + 2 * INSET_X
        cap_h = 0.0
        if cap_runs:
            cap = Para(cap_runs, size=CAPTION_SIZE)
            cap_h = self.para_height(cap) + 2 * INSET_Y + ITEM_GAP
        natural_w, natural_h = natural
        for attempt in range(2):
            top = self.next_top()
            room_h = self.content_h - top - cap_h
            room_w = self.content_w - 2 * mark_w
            scale = min(1.0, room_w / natural_w, max(room_h, 1.0) / natural_h)
            full = min(1.0, room_w / natural_w,
                       max(self.content_h - cap_h, 1.0) / natural_h)
            if attempt == 0 and not self.is_empty() and scale < 0.6 * full:
                self.continue_slide()
                continue
            self.flush_text()
            w, h = natural_w * scale, natural_h * scale
            left = {"left": 0.0, "right": self.content_w - w}.get(align,
                                                                  (self.content_w - w) / 2)
            self.items.append(PictureItem(picture, alt, pt_to_emu(left),
                                          pt_to_emu(top), pt_to_emu(w), pt_to_emu(h)))
            if mark is not None:
                line_h = self.metrics.line_height(BODY_SIZE)
                box_h = line_h + 2 * INSET_Y
                self.items.append(TextItem(
                    (Para((mark,), space_before=0.0, align="right"),),
                    pt_to_emu(top + (h - box_h) / 2), pt_to_emu(box_h)))
            self.y = top + h
            break
        if cap_runs:
            self.add_para(Para(cap_runs, size=CAPTION_SIZE,
                               align="center" if align == "default" else align))

    # ------------------------------------------------------------ sources

    def sources(self, entries: Sequence[SourceEntry]) -> None:
        """Sources slides, paginated so none overflows; anchors ``src-N`` on each slide."""
        if not entries:
            return
        heading = (Run(clean(self.rdoc.sources_heading)),)
        first = True
        pending: list[Para] = []
        numbers: list[int] = []
        used = 2 * INSET_Y
        for entry in entries:
            para = entry_para(entry, self.inlines)
            h = self.para_height(para)
            if pending and used + h > self.content_h + 0.01:
                self.sources_slide(heading, first, pending, numbers, used)
                first, pending, numbers, used = False, [], [], 2 * INSET_Y
            pending.append(para)
            numbers.append(entry.number)
            used += h
        self.sources_slide(heading, first, pending, numbers, used)

    def sources_slide(
        self, heading: tuple[Run, ...], first: bool, paras: list[Para], numbers: list[int],
        used: float,
    ) -> None:
        title = heading if first else continued_title(heading, self.words)
        self.anchors = [f"src-{n}" for n in numbers]
        item = TextItem(tuple(paras), 0, pt_to_emu(min(used, self.content_h)))
        self.add_slide("sources", title, (item,))

    # ------------------------------------------------------------ the whole deck

    def build(self) -> Deck:
        blocks = list(self.rdoc.document.blocks)
        shown = document_title(self.rdoc.document, self.options)
        title = clean(shown.text)
        cover: tuple[Run, ...] = (Run(title.strip()),)
        tagline = ""
        if blocks and blocks[0] is shown.heading:
            cover = self.inlines.para(shown.heading.children)  # its citations included
            # the cover slide shows the opening heading; one further down stays where it is
            # (a section slide), since the cover comes first and the text keeps its order
            if shown.heading.id:
                self.anchors.append(shown.heading.id)
            blocks.pop(0)
            tagline = _tagline(blocks)
            if tagline:
                blocks.pop(0)
        block = title_block(self.rdoc.document, self.options, self.words)
        if title:
            # The cover's subtitle: the front matter's on a line of its own, then the line
            # under the title heading, the authors and the date.
            byline = " · ".join(clean(x) for x in (tagline, block.authors, block.date) if x)
            lines = [x for x in (clean(block.subtitle), byline) if x]
            # What the cover's box cannot hold (a long subtitle, a byline of 200 authors) goes
            # to a slide of its own after it, in order; the byline has the first claim.
            kept: set[int] = set()
            for index in reversed(range(len(lines))):
                if self.fits_cover_subtitle([lines[i] for i in {index, *kept}]):
                    kept.add(index)
            subtitle = tuple(line for i, line in enumerate(lines) if i in kept)
            moved = [line for i, line in enumerate(lines) if i not in kept]
            self.add_slide("title", cover, subtitle=subtitle)
            # What comes before the first heading (a lede, a whole answer without headings)
            # is shown under the document's title, as a careful deck-maker names every slide:
            # an untitled slide reads as broken and is unnamed in the outline and slide sorter.
            # (A short byline alone under the title is the cover's subtitle instead.) Plain
            # text: the cover heading's citations are shown, and defined, on the cover.
            self.title_base = (Run(title.strip()),)
            if moved:
                self.start(self.title_base)
                for line in moved:
                    self.paragraph((Text(line),), 0, False)
                self.close()
        if block.abstract:  # a slide of its own after the cover, as a paper's first page
            base = self.title_base
            self.start((Run(clean(block.abstract_heading)),))
            self.blocks(block.abstract)  # flowed as the body is, onto more slides if need be
            self.close()
            self.title_base = base
        if self.options.toc:
            self.agenda(body_outline(self.rdoc.document.blocks, shown.heading))
        self.blocks(blocks)
        self.close()
        self.author_notes()
        self.sources(self.rdoc.entries)
        if len(self.slides) > self.options.limits.max_pages:
            raise LimitError(
                f"pptx: the deck needs {len(self.slides)} slides; the limit is "
                f"{self.options.limits.max_pages} (limits.max_pages)"
            )
        anchors: dict[str, int] = {}
        for index, slide in enumerate(self.slides):
            for anchor in slide.anchors:
                anchors.setdefault(anchor, index)
        return Deck(self.geo, self.metrics.fonts, tuple(self.slides), anchors, title,
                    tuple(self.warnings), language_for(self.rdoc, self.options).tag)



def _tagline(blocks: list[Block]) -> str:
    """The text of a short plain paragraph standing alone under the title heading, else "".

    Such a line (``Strategy offsite · Energy team · January 2025``) belongs on the title slide as
    its subtitle rather than on a slide of its own. Paragraphs with citations, links or images
    stay in the body, so nothing they carry is lost.
    """
    if not blocks or not isinstance(blocks[0], Paragraph):
        return ""
    if len(blocks) > 1 and not isinstance(blocks[1], Heading):
        return ""
    if any(not isinstance(node, Text | Emph | Strong | SoftBreak) for node in blocks[0].children):
        return ""
    text = " ".join(clean(plain_text(blocks[0].children)).split())
    return text if 0 < len(text) <= TAGLINE_MAX_CHARS else ""


def build_deck(
    rdoc: ResolvedDocument,
    options: RenderOptions,
    geometry: Geometry | None = None,
    *,
    metrics: TextMetrics | None = None,
    load_image: ImageLoader | None = None,
) -> Deck:
    """The measured slide model of ``rdoc`` (``geometry`` defaults to the built-in layout)."""
    geo = geometry or Geometry.default(options.slide_ratio, footer=options.source_footer)
    builder = _DeckBuilder(
        rdoc, options, geo, metrics or TextMetrics(), load_image or (lambda _src: None)
    )
    return builder.build()
