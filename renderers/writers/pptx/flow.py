"""The slide flow: the open slide, and how paragraphs and items fill it.

:class:`SlideFlow` keeps the slide being filled (title, items, pending paragraphs), measures
every paragraph in the client that wraps it to more lines, moves a paragraph that does not fit
whole to a "(cont.)" slide, and splits only one taller than a slide (at a sentence boundary).
The deck builder (:mod:`.layout`) decides what each block becomes and calls in here.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import accumulate

from renderers.labels import Labels
from renderers.options import RenderOptions
from renderers.text import closing_marks, enclosing_marks, text_direction
from renderers.writers.pptx.metrics import WIDTH_SLACK, TextMetrics
from renderers.writers.pptx.model import (
    COVER_SIZES,
    FOOTER_SIZE,
    INSET_X,
    INSET_Y,
    ITEM_GAP,
    SUBTITLE_SIZE,
    TITLE_SIZES,
    Box,
    CodeItem,
    Geometry,
    Item,
    Para,
    PictureItem,
    Run,
    Slide,
    SlideKind,
    TableItem,
    TextItem,
    pt_to_emu,
)
from renderers.writers.pptx.runs import (
    cap,
    clean,
    continued_mark,
    continued_title,
    runs_rtl,
    segments,
    sentence_starts,
    split_para,
    truncate_runs,
)

#: Between a number and its label in a right-to-left slide's source footer: FIGURE SPACE, a
#: no-break space (Unicode line breaking class GL) as wide as a digit. LibreOffice broke a
#: line at a NO-BREAK SPACE (and at U+202F, with or without word joiners) next to the number,
#: which it lays out as a link field; at this space it did not, but with longer labels it
#: still broke after the number: the footer's lines are broken by the writer
#: (:meth:`SlideFlow.footer`).
_NUMBER_TO_LABEL = "\u2007"
#: Between a number and its label in a left-to-right footer: a NO-BREAK SPACE inside the
#: number's link, which then holds the label too. LibreOffice broke the line after the link
#: (a field to it) whenever the label did not fit the line's end, whatever joined them
#: (no-break or figure space), and left "[9]" alone at the line's end.
_LTR_NUMBER_TO_LABEL = "\u00a0"
#: Where a paragraph splits: the head, its height (points), and the offset (into the joined
#: text of the paragraph split) where the rest begins.
Split = tuple[Para, float, int]
#: Lines a window of a tall paragraph's remainder holds beyond what fits an empty slide: the
#: remainder measured alone wraps a line or two otherwise than inside the whole paragraph
#: (it starts with "(cont.)"), so a margin keeps every split the window decides the one the
#: whole remainder would get.
_WINDOW_MARGIN = 4


class SlideFlow:
    """The slides made so far and the open one, measured against the content box."""

    def __init__(
        self,
        options: RenderOptions,
        geometry: Geometry,
        metrics: TextMetrics,
        labels: Mapping[int, str],
        words: Labels,
    ) -> None:
        self.options = options
        self.geo = geometry
        self.metrics = metrics
        self.labels = labels  # source number → label, for the footer
        self.words = words  # the document's (renderers.labels)
        self.cont_mark = continued_mark(words)
        self.slides: list[Slide] = []
        self.warnings: list[str] = []
        self.content_h = geometry.content.height_pt
        self.content_w = geometry.content.width_pt
        # the open slide
        self.title: tuple[Run, ...] = ()
        self.title_base: tuple[Run, ...] = ()
        self.items: list[Item] = []
        self.paras: list[Para] = []
        self.heights: list[float] = []  # each pending paragraph's height (points)
        self.para_h = 0.0  # height of pending paragraphs (points, insets excluded)
        self.y = 0.0  # points used by finished items, gaps included
        self.anchors: list[str] = []
        self.open = False
        self.speaker_notes: list[Para] = []  # for the next slide made

    # ------------------------------------------------------------ slide bookkeeping

    def start(self, title: tuple[Run, ...], *, cont: bool = False) -> None:
        """Open a content slide (closing any open one)."""
        self.close()
        self.title_base = title if not cont else self.title_base
        self.title = continued_title(self.title_base, self.words) if cont else title
        self.items, self.paras, self.heights, self.para_h, self.y = [], [], [], 0.0, 0.0
        self.open = True

    def continue_slide(self) -> None:
        """Open a "(cont.)" slide; the trailing sub-heading and the paragraph introducing what
        follows ("…as follows:") move along with it, when something else stays behind."""
        keep = len(self.paras)
        while keep and self.paras[keep - 1].keep_with_next:
            keep -= 1
        carry: list[tuple[Para, float]] = []
        if keep < len(self.paras) and (keep or self.items):
            carry = list(zip(self.paras[keep:], self.heights[keep:], strict=True))
            del self.paras[keep:], self.heights[keep:]
            self.para_h -= sum(height for _, height in carry)
        self.start(self.title_base, cont=True)
        for para, height in carry:
            self.add_para(para, height)

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
        subtitle: tuple[str, ...] = (),
    ) -> None:
        box = {"title": self.geo.cover_title, "section": self.geo.section_title}.get(
            kind, self.geo.title
        )
        sizes = COVER_SIZES if kind in ("title", "section") else TITLE_SIZES
        title, size = self.fit_title(title, box, sizes)
        runs = [*title, *(r for it in items for r in _item_runs(it))]
        rtl = runs_rtl(runs)  # the slide's direction, by its first strong character
        footer = (self.footer(runs, rtl=rtl) if self.options.source_footer and kind == "content"
                  else ())
        notes, self.speaker_notes = tuple(self.speaker_notes), []
        anchors = [*self.anchors, *(r.defines for r in [*runs, *_note_runs(notes)] if r.defines)]
        self.anchors = []
        self.slides.append(Slide(kind, title, size, items, subtitle, footer, tuple(anchors),
                                 notes, footer_rtl=rtl and bool(footer)))

    def add_speaker_notes(self, paras: Sequence[Para]) -> None:
        """Put ``paras`` on the notes page of the slide showing what came just before them:
        the open slide, else the last one made (a cover or section slide); before any slide,
        on the first one made."""
        if self.open or not self.slides:
            self.speaker_notes += paras
            return
        last = self.slides[-1]
        defines = tuple(r.defines for r in _note_runs(paras) if r.defines)
        self.slides[-1] = dataclasses.replace(last, notes=(*last.notes, *paras),
                                              anchors=(*last.anchors, *defines))

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

    def fits_cover_subtitle(self, lines: Sequence[str]) -> bool:
        """Whether the cover's subtitle ``lines`` fit its box, where nothing flows on: a longer
        subtitle goes to a slide of its own after the cover."""
        box = self.geo.cover_subtitle
        width = box.width_pt - 2 * INSET_X
        count = sum(self.metrics.line_count(segments((Run(line),)), width, SUBTITLE_SIZE)
                    for line in lines)
        return count * self.metrics.line_height(SUBTITLE_SIZE) + 2 * INSET_Y <= box.height_pt

    def footer(self, runs: Sequence[Run], *, rtl: bool = False) -> tuple[Run, ...]:
        """``[1] iea.org · [3] irena.org`` for the sources cited in ``runs``, fitted to 2 lines.

        On a right-to-left slide (``rtl``) the footer reads right to left part by part, as a
        right-to-left Sources entry does: each label, and the ``+N more`` that ends a full
        footer, ends with direction marks (:func:`~renderers.text.closing_marks`), where the
        bidi algorithm ran ``iea.org · [3] irena.org`` together left to right beside ``[1]``;
        and its lines are broken here, between entries (:meth:`footer_lines`): LibreOffice
        ended a line with a bare ``[12]`` or ``[9]``, the number a link laid out left to right,
        whatever space joined it to its label. A left-to-right footer links each number
        together with its label (:data:`_LTR_NUMBER_TO_LABEL`)."""
        numbers = sorted({n for r in runs for n in (r.cite, *r.spans) if n})
        if not numbers:
            return ()
        width = self.geo.footer.width_pt - 2 * INSET_X
        max_h = self.geo.footer.height_pt - 2 * INSET_Y + 0.01

        def footer_of(shown: int) -> list[Run]:
            entries: list[list[Run]] = []
            for n in numbers[:shown]:
                label = cap(clean(self.labels.get(n, "")), 60)
                if label and not rtl:
                    entries.append([Run(f"[{n}]{_LTR_NUMBER_TO_LABEL}{label}", cite=n)])
                    continue
                entries.append([Run(f"[{n}]", cite=n)])
                if label:
                    entries[-1].append(Run(f"{_NUMBER_TO_LABEL}{label}{closing_marks(label)}"))
            if shown < len(numbers):
                more = self.words.more.format(count=len(numbers) - shown)
                # held left to right in a right-to-left footer when its words are ("+3 more"),
                # not when they read right to left themselves (Arabic's)
                held = rtl and text_direction(more) != "rtl"
                opening, closing = enclosing_marks("ltr", "rtl") if held else ("", "")
                entries.append([Run(f"{opening}{more}{closing}")])
            if rtl:
                return self.footer_lines(entries, width)
            out = list(entries[0])
            for entry in entries[1:]:  # the separator joins a following run that is no link
                head = entry[0]
                out += ([Run(" · "), head] if head.cite else [Run(f" · {head.text}")])
                out += entry[1:]
            return out

        def fits(shown: int) -> bool:
            lines = self.metrics.line_count(segments(footer_of(shown)), width, FOOTER_SIZE)
            return lines * self.metrics.line_height(FOOTER_SIZE) <= max_h

        if fits(len(numbers)):
            return tuple(footer_of(len(numbers)))
        # The most sources that fit beside "+N more", by bisection: a slide citing a thousand
        # sources would otherwise measure a thousand footers of up to a thousand entries each.
        low, high = 0, len(numbers) - 1  # fits(low) holds (or low is 0); fits(high + 1) fails
        while low < high:
            middle = (low + high + 1) // 2
            if fits(middle):
                low = middle
            else:
                high = middle - 1
        return tuple(footer_of(low)) if low else ()

    def footer_lines(self, entries: Sequence[Sequence[Run]], width: float) -> list[Run]:
        """``entries`` apart by `` · ``, as many on a line as fit ``width`` (the share of it
        the wrapper fills), each line but the last ending in `` ·`` and a line break: no line
        break falls inside an entry."""
        limit = width * WIDTH_SLACK

        def measure(runs: Iterable[Run]) -> float:
            return sum(self.metrics.text_width(r.text, r.style, FOOTER_SIZE) for r in runs)

        between, ending = measure([Run(" · ")]), measure([Run(" ·")])
        out: list[Run] = []
        x = 0.0
        for i, entry in enumerate(entries):
            w = measure(entry)
            tail = ending if i < len(entries) - 1 else 0.0
            if i and x + between + w + tail > limit:
                out += [Run(" ·"), Run("\n")]
                x = 0.0
            elif i:
                out.append(Run(" · "))
                x += between
            out += entry
            x += w
        return out

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

    def add_para(self, para: Para, height: float | None = None) -> None:
        """Place a paragraph (of ``height``, when already measured) whole, on a new slide when
        it does not fit this one.

        Only a paragraph taller than a whole slide is split (:meth:`add_tall_para`).
        """
        self.ensure_open()
        if not para.runs:
            return
        if height is None:
            height = self.para_height(para)
        if height > self.content_h - 2 * INSET_Y + 0.01:
            self.add_tall_para(para)
            return
        while height > self.room() + 0.01:
            self.continue_slide()
        self.paras.append(para)
        self.heights.append(height)
        self.para_h += height

    def add_tall_para(self, para: Para) -> None:
        """Place a paragraph taller than a whole slide: at the last sentence boundary that fits
        (at a line boundary when one sentence alone is taller than a slide), its remainder
        continuing on the next slide marked "(cont.)".

        The paragraph is measured once (:class:`_Remainder`); each decision then measures only
        the window of its remainder that one slide could hold, so the work grows with the
        paragraph's length, not with its square (a 1 MB paragraph was re-measured whole for each
        of its hundreds of slides).
        """
        whole = self.content_h - 2 * INSET_Y  # the room on an empty slide
        rest = _Remainder(para, self.metrics, self.text_width - para.margin_left,
                          int(whole // self.metrics.line_height(para.size)) + _WINDOW_MARGIN,
                          self.cont_mark)
        while True:
            window, complete = rest.window()
            if complete:
                height = self.para_height(window)
                if height <= whole + 0.01:  # what is left fits a slide: placed whole
                    self.add_para(window, height)
                    return
            parts = self.split_to_fit(window, self.room())
            if parts is None and self.split_to_fit(window, whole) is None:
                # its first sentence alone is taller than a slide: lines are all that's left
                two_lines = window.space_before + 2 * self.metrics.line_height(window.size)
                if self.is_empty() or self.room() >= two_lines:
                    parts = self.split_at_lines(window, self.room())
            if parts is None:
                self.continue_slide()
                continue
            head, head_h, offset = parts
            self.paras.append(head)
            self.heights.append(head_h)
            self.para_h += head_h
            self.continue_slide()
            rest.advance(offset)

    def split_to_fit(self, para: Para, room: float) -> Split | None:
        """``para`` split at its last sentence boundary whose head fits ``room``, or None."""
        fitting: Split | None = None
        candidates = sentence_starts(para.runs, self.cont_mark)
        low, high = 0, len(candidates) - 1
        while low <= high:  # a longer head is never shorter: binary search
            middle = (low + high) // 2
            head = split_para(para, candidates[middle], marker=self.cont_mark)[0]
            head_h = self.para_height(head)
            if head_h <= room + 0.01:
                fitting, low = (head, head_h, candidates[middle]), middle + 1
            else:
                high = middle - 1
        return fitting

    def split_at_lines(self, para: Para, room: float) -> Split:
        """``para`` split at the last line boundary that fits ``room`` (at least one line)."""
        width = self.text_width - para.margin_left
        starts = self.metrics.line_starts(segments(para.runs), width, para.size)
        line_h = self.metrics.line_height(para.size)
        fit = min(max(int((room - para.space_before + 0.01) // line_h), 1), len(starts) - 1)
        while True:
            head = split_para(para, starts[fit], marker=self.cont_mark)[0]
            head_h = self.para_height(head)
            if fit == 1 or head_h <= room + 0.01:
                return head, head_h, starts[fit]
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
        self.paras, self.heights, self.para_h = [], [], 0.0

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



class _Remainder:
    """A paragraph taller than a slide, and what is left of it to place.

    It is measured once (PowerPoint's line starts of the whole paragraph); :meth:`window` then
    hands out what :func:`~.runs.split_para` would leave of it from the current position (the
    "(cont.)" marker first), cut ``span`` lines further on. What lies past the window cannot
    change a decision: a remainder longer than the window is taller than a slide, and a head
    reaching past it does not fit one (a marker or a later start only pushes words onto later
    lines), so each decision measures a slide's worth of text instead of the whole rest.
    """

    def __init__(
        self, para: Para, metrics: TextMetrics, width: float, span: int, marker: str
    ) -> None:
        self.para = para
        self.marker = marker  # what starts each window after the first (continued_mark)
        self.rtl = runs_rtl(para.runs) if para.rtl is None else para.rtl
        self.text = "".join(run.text for run in para.runs)
        #: where each run starts in the joined text, then where the text ends
        self.offsets = list(accumulate((len(run.text) for run in para.runs), initial=0))
        self.lines = metrics.line_starts(segments(para.runs), width, para.size)
        self.span = span
        self.pos = 0  # where the remainder starts in the paragraph's text
        self.base = 0  # where the window's text (after its marker) starts in the paragraph's
        self.marked = 0  # characters of the window's marker

    def window(self) -> tuple[Para, bool]:
        """The remainder as a paragraph, cut ``span`` lines on; whether it is all of it."""
        line = bisect_right(self.lines, self.pos) - 1
        ahead = line + self.span
        end = self.lines[ahead] if ahead < len(self.lines) else len(self.text)
        first = bisect_right(self.offsets, self.pos) - 1
        last = bisect_left(self.offsets, end)  # the runs starting before ``end``
        runs = list(self.para.runs[first:last])
        runs[-1] = runs[-1].with_text(runs[-1].text[:end - self.offsets[last - 1]])
        piece = dataclasses.replace(self.para, runs=tuple(runs), rtl=self.rtl)
        complete = end == len(self.text)
        if self.pos == 0:
            self.base, self.marked = 0, 0
            return piece, complete
        window = split_para(piece, self.pos - self.offsets[first], marker=self.marker)[1]
        self.marked = len(window.runs[0].text) if window.runs else 0
        shown = "".join(run.text for run in window.runs)[self.marked:]
        # split_para drops the line breaks and spaces the remainder would start with
        self.base = self.pos + max(self.text.find(shown, self.pos, end), 0) - self.pos
        return window, complete

    def advance(self, offset: int) -> None:
        """The last window was placed up to ``offset`` (into its text)."""
        self.pos = self.base + offset - self.marked


def _note_runs(paras: Iterable[Para]) -> Iterator[Run]:
    for para in paras:
        yield from para.runs


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
