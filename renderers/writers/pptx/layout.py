"""The deck builder: lays a resolved document onto slides (pandoc's split, document → slides).

:func:`build_deck` turns a :class:`~renderers.resolve.ResolvedDocument` into a
:class:`~.model.Deck` of frozen slides. Overflow is measured, never left to PowerPoint's
autofit: every paragraph's wrapped line count comes from real font metrics (:mod:`.metrics`),
and text, tables and code that would not fit the content box continue on a "Title (cont.)"
slide. Nothing here imports python-pptx: :mod:`.output` only draws what this decided.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence

from citations.chars import UNSAFE_CHARS
from renderers.document import (
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
    Strong,
    Table,
    Text,
    ThematicBreak,
    plain_text,
    task_marker,
)
from renderers.errors import LimitError, UnsupportedNodeError
from renderers.options import RenderOptions
from renderers.resolve import ResolvedDocument, SourceEntry
from renderers.writers.pptx.metrics import TextMetrics
from renderers.writers.pptx.model import (
    BODY_SIZE,
    BULLETS,
    CAPTION_SIZE,
    CODE_SIZE,
    CONT,
    CONT_MARK,
    COVER_SIZES,
    EMU_PER_PT,
    FOOTER_SIZE,
    INSET_X,
    INSET_Y,
    ITEM_GAP,
    SOURCES_SIZE,
    SUBHEAD_SIZE,
    TITLE_SIZES,
    Box,
    CodeItem,
    Deck,
    Geometry,
    ImageLoader,
    Item,
    Para,
    PictureItem,
    Run,
    Slide,
    SlideKind,
    Style,
    TableItem,
    TextItem,
    pt_to_emu,
)
from renderers.writers.pptx.runs import (
    cap,
    clean,
    entry_runs,
    inline_runs,
    italicized,
    normalize_runs,
    segments,
    sentence_starts,
    split_para,
    truncate_runs,
)
from renderers.writers.pptx.tables import distribute, measure_table

TAGLINE_MAX_CHARS = 160  # a longer line under the title stays on a body slide



class _DeckBuilder:
    """Lays blocks onto slides, measuring every piece against the content box."""

    def __init__(
        self,
        rdoc: ResolvedDocument,
        options: RenderOptions,
        geometry: Geometry,
        metrics: TextMetrics,
        load_image: ImageLoader,
    ) -> None:
        self.rdoc = rdoc
        self.options = options
        self.geo = geometry
        self.metrics = metrics
        self.load_image = load_image
        self.slides: list[Slide] = []
        self.warnings: list[str] = []
        self.labels = {e.number: e.label for e in rdoc.entries}
        self.content_h = geometry.content.height_pt
        self.content_w = geometry.content.width_pt
        # the open slide
        self.title: tuple[Run, ...] = ()
        self.title_base: tuple[Run, ...] = ()
        self.items: list[Item] = []
        self.paras: list[Para] = []
        self.para_h = 0.0  # height of pending paragraphs (points, insets excluded)
        self.y = 0.0  # points used by finished items, gaps included
        self.anchors: list[str] = []
        self.open = False

    # ------------------------------------------------------------ slide bookkeeping

    def start(self, title: tuple[Run, ...], *, cont: bool = False) -> None:
        """Open a content slide (closing any open one)."""
        self.close()
        self.title_base = title if not cont else self.title_base
        self.title = (*self.title_base, Run(CONT)) if cont else title
        self.items, self.paras, self.para_h, self.y = [], [], 0.0, 0.0
        self.open = True

    def continue_slide(self) -> None:
        """Open a "(cont.)" slide; a trailing sub-heading moves along with its content."""
        carry: Para | None = None
        if self.paras and self.paras[-1].keep_with_next and (len(self.paras) > 1 or self.items):
            carry = self.paras.pop()
            self.para_h -= self.para_height(carry)
        self.start(self.title_base, cont=True)
        if carry is not None:
            self.add_para(carry)

    def ensure_open(self) -> None:
        if not self.open:
            self.start(self.title_base)

    def close(self) -> None:
        if not self.open:
            return
        self.flush_text()
        if self.items or self.anchors or self.title:
            self.add_slide("content", self.title, tuple(self.items))
        self.open = False

    def add_slide(
        self, kind: SlideKind, title: tuple[Run, ...], items: tuple[Item, ...] = (),
        subtitle: str = "",
    ) -> None:
        box = {"title": self.geo.cover_title, "section": self.geo.section_title}.get(
            kind, self.geo.title
        )
        sizes = COVER_SIZES if kind in ("title", "section") else TITLE_SIZES
        title, size = self.fit_title(title, box, sizes)
        runs = [*title, *(r for it in items for r in _item_runs(it))]
        footer = self.footer(runs) if self.options.source_footer and kind == "content" else ()
        anchors = [*self.anchors, *(r.defines for r in runs if r.defines)]
        self.anchors = []
        self.slides.append(Slide(kind, title, size, items, subtitle, footer, tuple(anchors)))

    def fit_title(
        self, title: tuple[Run, ...], box: Box, sizes: Sequence[float]
    ) -> tuple[tuple[Run, ...], float]:
        """The largest size at which the title fits its box; else truncated at the smallest."""
        width = box.width_pt - 2 * INSET_X
        bold = tuple(dataclasses.replace(r, bold=True) for r in title)
        for size in sizes:
            lines = self.metrics.line_count(segments(bold), width, size)
            if lines * self.metrics.line_height(size) + 2 * INSET_Y <= box.height_pt + 0.01:
                return bold, size
        size = sizes[-1]
        max_lines = max(1, int((box.height_pt - 2 * INSET_Y) // self.metrics.line_height(size)))
        return truncate_runs(bold, self.metrics, width, size, max_lines), size

    def footer(self, runs: Sequence[Run]) -> tuple[Run, ...]:
        """``[1] iea.org · [3] irena.org`` for the sources cited in ``runs``, fitted to 2 lines."""
        numbers = sorted({n for r in runs for n in (r.cite, *r.spans) if n})
        if not numbers:
            return ()
        width = self.geo.footer.width_pt - 2 * INSET_X
        max_h = self.geo.footer.height_pt - 2 * INSET_Y + 0.01
        for shown in range(len(numbers), 0, -1):
            out: list[Run] = []
            for i, n in enumerate(numbers[:shown]):
                if i:
                    out.append(Run(" · "))
                out += [Run(f"[{n}]", cite=n), Run(f" {cap(clean(self.labels.get(n, '')), 60)}")]
            if shown < len(numbers):
                out.append(Run(f" · +{len(numbers) - shown} more"))
            lines = self.metrics.line_count(segments(out), width, FOOTER_SIZE)
            if lines * self.metrics.line_height(FOOTER_SIZE) <= max_h:
                return tuple(out)
        return ()

    # ------------------------------------------------------------ text

    @property
    def text_width(self) -> float:
        return self.content_w - 2 * INSET_X

    def para_height(self, para: Para) -> float:
        """Height (points) of ``para``, in whichever client wraps it to more lines."""
        width = self.text_width - para.margin_left
        lines = self.metrics.line_count(segments(para.runs), width, para.size)
        return para.space_before + lines * self.metrics.line_height(para.size)

    def room(self) -> float:
        """Points left for more paragraphs in the pending text box."""
        top = self.y + (ITEM_GAP if self.items else 0.0)
        return self.content_h - top - 2 * INSET_Y - self.para_h

    def next_top(self) -> float:
        """Top (points) of the next non-text item, as if the pending text box were finished."""
        y = self.y
        if self.paras:
            y += (ITEM_GAP if self.items else 0.0) + self.para_h + 2 * INSET_Y
        return y + (ITEM_GAP if (self.items or self.paras) else 0.0)

    def add_para(self, para: Para) -> None:
        """Place a paragraph whole, on a new slide when it does not fit this one.

        Only a paragraph taller than a whole slide is split: at the last sentence boundary that
        fits (at a line boundary when one sentence alone is taller than a slide), its remainder
        continuing on the next slide marked "(cont.)".
        """
        self.ensure_open()
        if not para.runs:
            return
        while True:
            height = self.para_height(para)
            if height <= self.room() + 0.01:
                self.paras.append(para)
                self.para_h += height
                return
            whole = self.content_h - 2 * INSET_Y  # the room on an empty slide
            parts = None
            if height > whole + 0.01:
                parts = self.split_to_fit(para, self.room())
                if parts is None and self.split_to_fit(para, whole) is None:
                    # its first sentence alone is taller than a slide: lines are all that's left
                    two_lines = para.space_before + 2 * self.metrics.line_height(para.size)
                    if self.is_empty() or self.room() >= two_lines:
                        parts = self.split_at_lines(para, self.room())
            if parts is None:
                self.continue_slide()
                continue
            head, para = parts
            self.paras.append(head)
            self.para_h += self.para_height(head)
            self.continue_slide()

    def split_to_fit(self, para: Para, room: float) -> tuple[Para, Para] | None:
        """``para`` split at its last sentence boundary whose head fits ``room``, or None."""
        fitting: tuple[Para, Para] | None = None
        candidates = sentence_starts(para.runs)
        low, high = 0, len(candidates) - 1
        while low <= high:  # a longer head is never shorter: binary search
            middle = (low + high) // 2
            parts = split_para(para, candidates[middle], marker=CONT_MARK)
            if self.para_height(parts[0]) <= room + 0.01:
                fitting, low = parts, middle + 1
            else:
                high = middle - 1
        return fitting

    def split_at_lines(self, para: Para, room: float) -> tuple[Para, Para]:
        """``para`` split at the last line boundary that fits ``room`` (at least one line)."""
        width = self.text_width - para.margin_left
        starts = self.metrics.line_starts(segments(para.runs), width, para.size)
        line_h = self.metrics.line_height(para.size)
        fit = min(max(int((room - para.space_before + 0.01) // line_h), 1), len(starts) - 1)
        while True:
            parts = split_para(para, starts[fit], marker=CONT_MARK)
            if fit == 1 or self.para_height(parts[0]) <= room + 0.01:
                return parts
            fit -= 1

    def is_empty(self) -> bool:
        return not self.items and not self.paras

    def flush_text(self) -> None:
        if not self.paras:
            return
        gap = ITEM_GAP if self.items else 0.0
        top = self.y + gap
        height = self.para_h + 2 * INSET_Y
        self.items.append(TextItem(tuple(self.paras), pt_to_emu(top), pt_to_emu(height)))
        self.y = top + height
        self.paras, self.para_h = [], 0.0

    def place(self, height: float) -> float | None:
        """Top offset (points) for a non-text item of ``height``, or None when it does not fit.

        The pending text box is finished only when the item fits, so a trailing sub-heading can
        still move to the continuation slide with it.
        """
        top = self.next_top()
        if top + height <= self.content_h + 0.01 or self.is_empty():
            self.flush_text()
            return top
        return None

    # ------------------------------------------------------------ blocks

    def blocks(self, blocks: Sequence[Block], level: int = 0, italic: bool = False) -> None:
        for block in blocks:
            self.block(block, level, italic)

    def block(self, block: Block, level: int, italic: bool) -> None:
        match block:
            case Heading(lvl, children, hid):
                self.heading(lvl, children, hid)
            case Paragraph(children):
                self.paragraph(children, level, italic)
            case BulletList(items, tight):
                self.list_items(items, level, None, tight, italic)
            case OrderedList(items, start, tight):
                self.list_items(items, level, start, tight, italic)
            case Table():
                self.table(block)
            case CodeBlock(text, language):
                self.code(text, language)
            case BlockQuote(inner):
                self.blocks(inner, level + 1, True)
            case Figure(image, caption):
                self.figure(image, caption)
            case ThematicBreak():
                if self.open and not self.is_empty():
                    self.continue_slide()
            case RawBlock(text):
                self.code(text, "")
            case FootnoteDef(label, inner):
                self.footnote(label, inner)
            case _:
                raise UnsupportedNodeError(f"pptx: block node {type(block).__name__}")

    def heading(self, level: int, children: tuple[Inline, ...], hid: str) -> None:
        runs = normalize_runs(inline_runs(children))
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
            self.add_para(Para(bold, size=size, space_before=10.0, keep_with_next=True))

    def paragraph(self, children: tuple[Inline, ...], level: int, italic: bool) -> None:
        if len(children) == 1 and isinstance(children[0], Image) and level == 0:
            self.figure(children[0], ())
            return
        runs = italicized(normalize_runs(inline_runs(children)), italic)
        self.add_para(Para(runs, level=level))

    def list_items(
        self, items: tuple[ListItem, ...], level: int, start: int | None, tight: bool,
        italic: bool,
    ) -> None:
        depth = level + 1
        for index, item in enumerate(items):
            first = True
            bullet = "" if start is not None else BULLETS[(depth - 1) % len(BULLETS)]
            number = start + index if start is not None else 0
            box = task_marker(item.checked)
            for sub in item.blocks or (Paragraph(()),):
                if isinstance(sub, Paragraph) and first:
                    runs = italicized(normalize_runs(inline_runs(sub.children)), italic)
                    if box:
                        runs = (Run(box), *runs)
                    space = 3.0 if tight else 6.0
                    self.add_para(Para(runs or (Run(" "),), level=depth, bullet=bullet,
                                       number=number, space_before=space))
                elif isinstance(sub, Paragraph):
                    self.paragraph(sub.children, depth, italic)
                else:
                    if first:
                        self.add_para(Para((Run(box or " "),), level=depth, bullet=bullet,
                                           number=number, space_before=3.0))
                    self.block(sub, depth, italic)
                first = False

    def footnote(self, label: str, inner: tuple[Block, ...]) -> None:
        for index, sub in enumerate(inner):
            if isinstance(sub, Paragraph):
                runs = normalize_runs(inline_runs(sub.children))
                if index == 0:
                    runs = (Run(clean(f"[{label}] "), superscript=True), *runs)
                self.add_para(Para(runs, size=CAPTION_SIZE))
            else:
                self.block(sub, 0, False)

    # ------------------------------------------------------------ code

    def code(self, text: str, language: str) -> None:
        self.ensure_open()
        lines = [UNSAFE_CHARS.sub("", ln.replace("\t", "    ").rstrip("\r"))
                 for ln in text.rstrip("\n").split("\n")]
        width = self.text_width
        line_h = self.metrics.line_height(CODE_SIZE)
        counts = [
            self.metrics.line_count([(ln, (False, False, True), False)], width, CODE_SIZE)
            for ln in lines
        ]
        i = 0
        while i < len(lines):
            top = self.next_top()
            room = self.content_h - top - 2 * INSET_Y
            j, used = i, 0.0
            while j < len(lines) and used + counts[j] * line_h <= room + 0.01:
                used += counts[j] * line_h
                j += 1
            if j == i:
                if not self.is_empty():
                    self.continue_slide()
                    continue
                j = i + 1  # a single line taller than a whole slide
                lines[i], used = self.clip_code_line(lines[i], room)
            self.flush_text()
            height = used + 2 * INSET_Y
            self.items.append(CodeItem(tuple(lines[i:j]), language, pt_to_emu(top),
                                       pt_to_emu(height)))
            self.y = top + height
            i = j
            if i < len(lines):
                self.continue_slide()

    def clip_code_line(self, line: str, room: float) -> tuple[str, float]:
        line_h = self.metrics.line_height(CODE_SIZE)
        max_lines = max(1, int(room // line_h))
        style: Style = (False, False, True)
        starts = self.metrics.line_starts([(line, style, False)], self.text_width, CODE_SIZE)
        if len(starts) > max_lines:
            self.warnings.append("pptx: a code line too long for one slide was shortened")
            line = line[: max(starts[max_lines] - 1, 0)] + "…"
            starts = self.metrics.line_starts([(line, style, False)], self.text_width, CODE_SIZE)
        return line, len(starts) * line_h

    # ------------------------------------------------------------ tables

    def table(self, table: Table) -> None:
        self.ensure_open()
        measured = measure_table(table, self.metrics, self.content_w, self.content_h)
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
                                        row_emu, measured.size, pt_to_emu(top), sum(row_emu)))
            self.y = top + sum(row_emu) / EMU_PER_PT
            i = j
            if i >= len(rows):
                break
            self.continue_slide()
        if table.caption:
            runs = italicized(normalize_runs(inline_runs(table.caption)), True)
            self.add_para(Para(runs, size=CAPTION_SIZE))

    # ------------------------------------------------------------ images

    def figure(self, image: Image, caption: tuple[Inline, ...]) -> None:
        self.ensure_open()
        picture = self.load_image(image.src)
        cap_runs = italicized(normalize_runs(inline_runs(caption)), True) if caption else ()
        if picture is None or picture.width <= 0 or picture.height <= 0:
            alt = clean(image.alt or image.title or "image")
            self.add_para(Para((Run(f"[Image: {alt}]", italic=True),), size=CAPTION_SIZE))
            if cap_runs:
                self.add_para(Para(cap_runs, size=CAPTION_SIZE))
            return
        cap_h = 0.0
        if cap_runs:
            cap = Para(cap_runs, size=CAPTION_SIZE)
            cap_h = self.para_height(cap) + 2 * INSET_Y + ITEM_GAP
        natural_w = picture.width * 0.75  # 96 dpi
        natural_h = picture.height * 0.75
        for attempt in range(2):
            top = self.next_top()
            room_h = self.content_h - top - cap_h
            scale = min(1.0, self.content_w / natural_w, max(room_h, 1.0) / natural_h)
            full = min(1.0, self.content_w / natural_w,
                       max(self.content_h - cap_h, 1.0) / natural_h)
            if attempt == 0 and not self.is_empty() and scale < 0.6 * full:
                self.continue_slide()
                continue
            self.flush_text()
            w, h = natural_w * scale, natural_h * scale
            left = (self.content_w - w) / 2
            self.items.append(PictureItem(picture, clean(image.alt), pt_to_emu(left),
                                          pt_to_emu(top), pt_to_emu(w), pt_to_emu(h)))
            self.y = top + h
            break
        if cap_runs:
            self.add_para(Para(cap_runs, size=CAPTION_SIZE, align="center"))

    # ------------------------------------------------------------ sources

    def sources(self, entries: Sequence[SourceEntry]) -> None:
        """Sources slides, paginated so none overflows; anchors ``src-N`` on each slide."""
        if not entries:
            return
        heading = (Run(clean(self.rdoc.sources_heading or "Sources")),)
        first = True
        pending: list[Para] = []
        numbers: list[int] = []
        used = 2 * INSET_Y
        for entry in entries:
            para = Para(entry_runs(entry), size=SOURCES_SIZE, space_before=4.0)
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
        title = heading if first else (*heading, Run(CONT))
        self.anchors = [f"src-{n}" for n in numbers]
        item = TextItem(tuple(paras), 0, pt_to_emu(min(used, self.content_h)))
        self.add_slide("sources", title, (item,))

    # ------------------------------------------------------------ the whole deck

    def build(self) -> Deck:
        blocks = list(self.rdoc.document.blocks)
        title = clean(self.options.title or self.rdoc.title)
        tagline = ""
        if blocks and isinstance(blocks[0], Heading) and blocks[0].level == 1:
            first = clean(plain_text(blocks[0].children)).strip()
            if not title or first == title.strip():
                title = title or first
                if blocks[0].id:
                    self.anchors.append(blocks[0].id)
                blocks.pop(0)
                tagline = _tagline(blocks)
                if tagline:
                    blocks.pop(0)
        if not title:
            title = next((clean(plain_text(b.children)) for b in blocks
                          if isinstance(b, Heading) and b.level == 1), "")
        if title:
            subtitle = " · ".join(x for x in (tagline, clean(self.options.author)) if x)
            self.add_slide("title", (Run(title.strip()),), subtitle=subtitle)
        self.blocks(blocks)
        self.close()
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
                    tuple(self.warnings))



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


def _item_runs(item: Item) -> Iterator[Run]:
    match item:
        case TextItem(paras):
            for para in paras:
                yield from para.runs
        case TableItem(header, rows):
            for cell in header:
                yield from cell
            for row in rows:
                for cell in row:
                    yield from cell
        case CodeItem() | PictureItem():
            return


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
