"""Inline nodes → styled runs, and the run-level edits the layout needs.

A citation becomes superscript runs (one linked run per displayed number), an author-note
reference its letter; links become runs carrying a vetted URL or an internal target. Runs are
merged and trimmed before measuring, and split (at sentence boundaries), truncated or restyled
here so that every such edit keeps links, anchors and the paragraph's direction intact.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from citations.chars import UNSAFE_CHARS
from citations.links import safe_link
from citations.numbering import EN_DASH, display_segments
from renderers.document import (
    Anchor,
    Cite,
    Code,
    CrossRef,
    Emph,
    FootnoteRef,
    Image,
    Inline,
    LineBreak,
    Link,
    Math,
    RawInline,
    SoftBreak,
    Strike,
    Strong,
    Styled,
    Text,
    plain_text,
)
from renderers.errors import UnsupportedNodeError
from renderers.labels import Labels
from renderers.resolve import SourceEntry, entry_number
from renderers.text import (
    MARKS,
    POP_FORMATTING,
    Direction,
    enclosing_marks,
    is_rtl,
    link_target,
    text_direction,
)
from renderers.writers.common import (
    BACKLINK_JOIN,
    BACKLINK_MARK,
    AuthorNotes,
    cite_direction,
    cite_space,
    entry_parts,
    image_fallback,
    joined_runs,
    unresolved_note_text,
)
from renderers.writers.pptx.math import crossref_run, math_runs
from renderers.writers.pptx.metrics import Segment, TextMetrics
from renderers.writers.pptx.model import SOURCES_SIZE, Para, Run

_SPACES = re.compile(r"[\t\r\n]+")
#: RIGHT-TO-LEFT EMBEDDING, which :data:`~renderers.text.POP_FORMATTING` ends.
_RTL_EMBEDDING = "\u202b"


def clean(text: str) -> str:
    """Text safe for XML: control characters removed, tabs and newlines as spaces."""
    return UNSAFE_CHARS.sub("", _SPACES.sub(" ", text))


@dataclass(frozen=True)
class _Ctx:
    bold: bool = False
    italic: bool = False
    strike: bool = False
    url: str = ""
    target: str = ""


_PLAIN = _Ctx()


class InlineRuns:
    """Inline nodes → runs for one document: a citation becomes superscript runs (one linked
    run per number), a reference to an author note its letter (:class:`AuthorNotes` numbers
    the notes once for the whole deck)."""

    def __init__(self, words: Labels, notes: AuthorNotes | None = None,
                 preceding: Mapping[str, Direction] | None = None) -> None:
        self.words = words  # the document's (renderers.labels)
        self.notes = notes
        #: citation runs after text reading against their line
        #: (:func:`~renderers.writers.common.preceding_directions`)
        self.preceding = preceding or {}
        self._referenced: set[str] = set()  # notes whose first reference is made
        #: The direction of the paragraph being written, which its citations read against
        self.line: Direction = "ltr"

    def para(self, inlines: tuple[Inline, ...], *, italic: bool = False) -> tuple[Run, ...]:
        """The runs of a paragraph: merged, trimmed, italic when it sits in a quote."""
        outer, self.line = self.line, "rtl" if is_rtl(plain_text(inlines)) else "ltr"
        try:
            return italicized(normalize_runs(self.runs(inlines)), italic)
        finally:
            self.line = outer

    def runs(self, inlines: tuple[Inline, ...], ctx: _Ctx = _PLAIN) -> list[Run]:
        """Runs for ``inlines`` as they are (not merged)."""
        runs: list[Run] = []
        for run in joined_runs(inlines):
            if len(run) > 1:  # a citation and the superscripts joined to it
                runs += self.cite(*(node for node in run if isinstance(node, Cite)))
                continue
            match node := run[0]:
                case Text(text):
                    runs.append(_run(clean(text), ctx))
                case SoftBreak():
                    runs.append(_run(" ", ctx))
                case LineBreak():
                    runs.append(Run("\n"))
                case Code(text):
                    runs.append(dataclasses.replace(_run(clean(text), ctx), code=True))
                case RawInline(text):
                    runs.append(_run(clean(text), ctx))
                case Anchor(ident):  # the place a link jumps to: its slide (_merge_runs)
                    runs.append(Run("", defines=ident))
                case Emph(children):
                    runs += self.runs(children, dataclasses.replace(ctx, italic=True))
                case Strong(children):
                    runs += self.runs(children, dataclasses.replace(ctx, bold=True))
                case Strike(children):
                    runs += self.runs(children, dataclasses.replace(ctx, strike=True))
                case Styled(style, children):
                    runs += self.styled(style, children, ctx)
                case Link(url, children):
                    runs += self.runs(children, _link_ctx(ctx, url))
                case Image():
                    runs.append(_run(clean(image_fallback(node, self.words)), ctx))
                case FootnoteRef(label):
                    runs.append(self.note_ref(label))
                case Cite():
                    runs += self.cite(node)
                case Math():
                    runs += math_runs(node)
                case CrossRef(linked=False):  # inside the author's link: its words alone
                    runs.append(_run(clean(node.lead(self.words) + node.shown(self.words)), ctx))
                case CrossRef():
                    if lead := node.lead(self.words):  # a group's words between its links
                        runs.append(_run(clean(lead), ctx))
                    runs.append(crossref_run(node, self.words))
                case _:
                    raise UnsupportedNodeError(f"pptx: inline node {type(node).__name__}")
        return runs

    def cite(self, *cites: Cite) -> list[Run]:
        """A citation's runs, or those of one and the superscripts joined to it
        (:func:`~renderers.writers.common.joined_runs`): a style's words, else its numbers
        raised (a note style's notes show as the cited sources' numbers). Held apart from a
        line reading the other way as one unit
        (:func:`~renderers.writers.common.cite_direction`): between direction marks, the space
        before it outside them."""
        shown = [dataclasses.replace(c, note=0, children=()) if c.note else c for c in cites]
        before = self.preceding.get(cites[0].anchor)
        direction = cite_direction(shown, self.line, before)
        space, runs = "", []
        for index, cite in enumerate(shown):
            if index == 0 and direction:
                space, children = cite_space(cite.children)
            else:
                children = cite.children
            if children:
                runs += self.styled_cite(children, cite.anchor)
            else:
                runs += cite_runs(cite.numbers, cite.anchor, joined=cite.joined)
        if direction is None:
            return runs
        opening, closing = enclosing_marks(direction, self.line, before)
        return [Run(space), Run(opening), *runs, Run(closing)]

    def styled_cite(self, children: tuple[Inline, ...], anchor: str) -> list[Run]:
        """A citation in a CSL style or citation format ("(IEA, 2025)", "[1, 3]"): its words,
        each link to a Sources entry jumping to that entry like a citation number; the first
        run holds the citation's anchor."""
        runs: list[Run] = []
        for child in children:
            number = entry_number(child.url) if isinstance(child, Link) else None
            if number is None or not isinstance(child, Link):
                runs += self.runs((child,))
            else:
                runs += [dataclasses.replace(r, cite=number, url="", target="")
                         for r in self.runs(child.children)]
        if runs:
            runs[0] = dataclasses.replace(runs[0], defines=anchor)
        return runs

    def styled(self, style: str, children: tuple[Inline, ...], ctx: _Ctx) -> list[Run]:
        """Runs for the safe HTML subset: ``sup`` is superscript, ``kbd`` code; the other styles
        keep their words unformatted (the slide model has no subscript, highlight or small
        print)."""
        runs = self.runs(children, ctx)
        if style == "sup":
            return [dataclasses.replace(r, superscript=True) for r in runs]
        if style == "kbd":
            return [dataclasses.replace(r, code=True) for r in runs]
        return runs

    def note_ref(self, label: str) -> Run:
        """A reference to an author note: its letter, raised, jumping to the note; the first
        reference holds the anchor the note's back-link returns to."""
        note = self.notes.get(label) if self.notes is not None else None
        if note is None:
            return Run(clean(unresolved_note_text(label)))
        first = label not in self._referenced
        self._referenced.add(label)
        return Run(note.marker, superscript=True, target=note.anchor,
                   defines=note.reference_anchor if first else "")


def _run(text: str, ctx: _Ctx) -> Run:
    return Run(text, ctx.bold, ctx.italic, ctx.strike, url=ctx.url, target=ctx.target)


def _link_ctx(ctx: _Ctx, url: str) -> _Ctx:
    if target := link_target(url):  # percent escapes decoded: #%C3%A9t%C3%A9 is été
        return dataclasses.replace(ctx, target=target, url="")
    return dataclasses.replace(ctx, url=safe_link(url), target="")


def cite_runs(numbers: tuple[int, ...], anchor: str = "", *, joined: bool = False) -> list[Run]:
    """Superscript runs for a citation's numbers (``1–3, 5``); each number links to its entry."""
    runs: list[Run] = []
    shown = display_segments(numbers, joined=joined)
    for index, (text, number) in enumerate(shown):
        defines = anchor if (number is not None and not any(r.cite for r in runs)) else ""
        spans: tuple[int, ...] = ()
        if text == EN_DASH:  # always between the first and last number of a range
            spans = tuple(range((shown[index - 1][1] or 0) + 1, shown[index + 1][1] or 0))
        runs.append(Run(text, superscript=True, cite=number or 0, defines=defines, spans=spans))
    return runs


def _merge_runs(runs: list[Run]) -> list[Run]:
    """Drop empty runs and merge adjacent runs of equal style (fewer XML runs). An empty
    run's anchor (an :class:`Anchor`'s) goes to the next run that defines none, else the last."""
    merged: list[Run] = []
    texts: list[list[str]] = []  # the texts each merged run joins
    pending = ""
    for run in runs:
        if not run.text:
            pending = pending or run.defines
            continue
        if pending and not run.defines:
            run, pending = dataclasses.replace(run, defines=pending), ""
        last = merged[-1] if merged else None
        if (
            last is not None
            and run.text != "\n"
            and last.text != "\n"
            and not run.cite
            and not last.cite
            and not run.defines
            and _style_key(last) == _style_key(run)
        ):
            texts[-1].append(run.text)
        else:
            merged.append(run)
            texts.append([run.text])
    if pending and merged and not merged[-1].defines:
        merged[-1] = dataclasses.replace(merged[-1], defines=pending)
    return [run.with_text("".join(parts)) for run, parts in zip(merged, texts, strict=True)]


def _style_key(run: Run) -> tuple[object, ...]:
    return (run.bold, run.italic, run.strike, run.code, run.superscript, run.url, run.target,
            run.cite, run.defines, run.spans)


def normalize_runs(runs: Iterable[Run]) -> tuple[Run, ...]:
    """Runs merged and trimmed (leading/trailing spaces of the paragraph removed)."""
    merged = _merge_runs(list(runs))
    if merged and not merged[0].superscript:
        merged[0] = merged[0].with_text(merged[0].text.lstrip(" "))
    if merged and not merged[-1].superscript:
        merged[-1] = merged[-1].with_text(merged[-1].text.rstrip(" "))
    return tuple(r for r in merged if r.text)


def segments(runs: Iterable[Run]) -> list[Segment]:
    """The pieces the metrics measure: text, style, and whether the run is a link."""
    return [(r.text, r.style, bool(r.url or r.target or r.cite)) for r in runs]



def italicized(runs: tuple[Run, ...], italic: bool) -> tuple[Run, ...]:
    """``runs`` in italics (citation numbers stay upright) when ``italic``."""
    if not italic:
        return runs
    return tuple(r if r.superscript else dataclasses.replace(r, italic=True) for r in runs)


def runs_rtl(runs: Iterable[Run]) -> bool:
    """Whether text made of ``runs`` reads right to left (by its first strong character, as
    ``dir="auto"`` decides); citation numbers are never strong."""
    return is_rtl("".join(r.text for r in runs))


def continued_mark(words: Labels) -> str:
    """What starts the rest of a paragraph or cell split across slides: ``(cont.) ``."""
    return words.continued + words.space


def cont_marker(marker: str, rtl: bool) -> str:
    """The "(cont.)" ``marker`` (:func:`continued_mark`, or the one :func:`continued_title`
    appends) for a paragraph that reads right to left when ``rtl``: when the marker's own
    direction is the other one ("(cont.)" in an Arabic paragraph, "(تابع)" in an English
    one), held between marks of its own direction, its spaces outside. Bare, its parentheses
    and full stop take the paragraph's direction and it reads "(.cont)" (LibreOffice,
    PowerPoint); the marks are invisible everywhere."""
    core = marker.strip()
    own = text_direction(core) or "ltr"
    if own == ("rtl" if rtl else "ltr"):
        return marker
    mark = MARKS[own]
    start = marker.index(core)
    return f"{marker[:start]}{mark}{core}{mark}{marker[start + len(core):]}"


def continued_title(title: tuple[Run, ...], words: Labels) -> tuple[Run, ...]:
    """The title of a continuation slide: ``title (cont.)``."""
    return (*title, Run(cont_marker(words.space + words.continued, runs_rtl(title))))


def entry_para(entry: SourceEntry, inlines: InlineRuns) -> Para:
    """A Sources entry (:func:`~renderers.writers.common.entry_parts`) as one paragraph:
    ``1. Title — label · date ↑``, the title linked to the entry's URL (when safe), the
    back-link kept with the word before it (:func:`with_backlink`)."""
    parts = entry_parts(entry)
    if parts.formatted:  # a CSL style's entry; numbered on slides, which cite by number
        marker = parts.marker or f"{parts.number}."
        opening, closing = parts.formatted_marks  # its own direction, if not the list's
        styled = cap_runs(inlines.runs(parts.formatted), 600)
        runs = [Run(f"{marker} ", bold=True), *(Run(mark) for mark in (opening,) if mark),
                *styled, *(Run(mark) for mark in (closing,) if mark)]
    else:
        runs = [Run(f"{parts.marker} ", bold=True),
                Run(cap(clean(parts.title), 300), url=parts.url)]
    details = parts.details_run(lambda text: cap(clean(text), 200))
    if details and not parts.formatted:
        runs.append(Run(details))
    if parts.backlink:
        runs = list(with_backlink(runs, parts.backlink, rtl=parts.rtl))
    return Para(tuple(runs), size=SOURCES_SIZE, space_before=4.0, rtl=parts.rtl)


def with_backlink(runs: Sequence[Run], target: str, *, rtl: bool) -> tuple[Run, ...]:
    """``runs`` and the back-link to ``target`` after them, the arrow on the line of the word
    before it. LibreOffice lays a link out as one piece (a field) and breaks before it when it
    does not fit, whatever precedes it (a no-break space, a word joiner): the arrow started a
    line alone. So the last word of a plain last run goes into the link's run, in that run's
    style, after :data:`~renderers.writers.common.BACKLINK_JOIN`: they move as one. After a
    link or a citation there is no word to take, and the arrow follows the join as PowerPoint
    keeps it. In right-to-left text (``rtl``) the link's text is embedded (:func:`_link_text`)."""
    link = Run(_link_text("", rtl), target=target)
    last = runs[-1] if runs else None
    if last is None or last.url or last.target or last.cite or last.defines or last.spans \
            or last.superscript or last.code:
        return (*runs, link)
    head, space, word = last.text.rpartition(" ")
    if not word or "\n" in word or word.isspace() or all(
            unicodedata.category(char) == "Cf" for char in word):
        return (*runs, link)  # no word: the marks closing a CSL entry's own direction
    kept = (last.with_text(head + space),) if head or space else ()
    taken = dataclasses.replace(last, text=_link_text(word, rtl), target=target)
    return (*runs[:-1], *kept, taken)


def _link_text(word: str, rtl: bool) -> str:
    """The back-link's text: ``word`` (the entry's last, or none), the join, the arrow; in a
    right-to-left paragraph (``rtl``) inside a RIGHT-TO-LEFT EMBEDDING. LibreOffice lays a
    link field out left to right in any paragraph: bare, the arrow stood right of its word, at
    the word's start in reading order (with the space alone in the link, on the arrow's far
    side; kept outside, the arrow stood alone on a line and the date before it broke at its
    hyphens). Embedded, the arrow ends the word, left of it, where the bidi algorithm over the
    whole paragraph (PowerPoint) sets it with or without the embedding. An embedding, not an
    isolate (:data:`~renderers.text.ISOLATES`, Unicode 6.3): not assumed of PowerPoint, as
    the marks around a DOCX or PPTX citation are not."""
    text = word + BACKLINK_JOIN + BACKLINK_MARK
    return f"{_RTL_EMBEDDING}{text}{POP_FORMATTING}" if rtl else text


def cap(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis (a slide holds bounded text)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def cap_runs(runs: list[Run], limit: int) -> list[Run]:
    """``runs`` cut to ``limit`` characters in all, the last one ending with an ellipsis."""
    out: list[Run] = []
    left = limit
    for run in runs:
        if left <= 0:
            break
        text = cap(run.text, left)
        out.append(run.with_text(text))
        left -= len(text)
    return out


def split_para(para: Para, offset: int, *, marker: str = "") -> tuple[Para, Para]:
    """Split ``para`` at character ``offset`` of its joined text; the tail has no bullet and
    starts with ``marker`` (italic) when one is given."""
    head: list[Run] = []
    tail: list[Run] = []
    pos = 0
    for run in para.runs:
        end = pos + len(run.text)
        if end <= offset:
            head.append(run)
        elif pos >= offset:
            tail.append(run)
        else:
            cut = offset - pos
            head.append(run.with_text(run.text[:cut]))
            tail.append(dataclasses.replace(run, text=run.text[cut:], defines=""))
        pos = end
    while head and head[-1].text == "\n":
        head.pop()
    while tail and tail[0].text == "\n":
        tail.pop(0)
    tail_runs = normalize_runs(tail)
    rtl = runs_rtl(para.runs) if para.rtl is None else para.rtl  # the marker must not decide
    if marker and tail_runs:
        tail_runs = (Run(cont_marker(marker, rtl), italic=True), *tail_runs)
    return (
        dataclasses.replace(para, runs=normalize_runs(head), rtl=rtl),
        dataclasses.replace(para, runs=tail_runs, bullet="", number=0, space_before=0.0,
                            rtl=rtl),
    )


#: A sentence's end: terminal punctuation and the closing quotes or brackets after it.
_SENTENCE_END = re.compile(r"[.!?…。！？؟۔]+[\"'”’»)\]]*")
_CLOSE_UP = frozenset("。！？")  # CJK full stops: the next sentence follows without a space


def sentence_starts(runs: Sequence[Run], marker: str = "") -> list[int]:
    """Offsets (into the joined text of ``runs``) where a sentence after the first begins.

    A sentence ends at terminal punctuation followed by a space and a character that is not a
    lower-case letter ("e.g. the" does not end one), or at a line break. Citation superscripts
    right after the punctuation stay with the sentence they close. A leading split
    ``marker`` (:func:`continued_mark`) is not a sentence.
    """
    text = "".join(r.text for r in runs)
    raised = [r.superscript for r in runs for _ in r.text]
    forms = (marker, cont_marker(marker, True), cont_marker(marker, False)) if marker else ()
    marked = next((len(m) for m in forms if text.startswith(m)), 0)
    starts: list[int] = []
    for match in _SENTENCE_END.finditer(text):
        if raised[match.start()] or match.end() < marked:
            continue
        end = match.end()
        while end < len(text) and raised[end]:
            end += 1
        after = end
        while after < len(text) and text[after] == " ":
            after += 1
        if after >= len(text):
            continue
        if (after > end and not text[after].islower()) or (
            after == end and text[match.end() - 1] in _CLOSE_UP
        ):
            starts.append(after)
    starts += [i + 1 for i, ch in enumerate(text) if ch == "\n" and i + 1 < len(text)]
    return sorted(set(starts))


def truncate_runs(
    runs: tuple[Run, ...], metrics: TextMetrics, width: float, size: float, max_lines: int
) -> tuple[Run, ...]:
    """``runs`` cut to ``max_lines`` wrapped lines, ending with an ellipsis."""
    starts = metrics.line_starts(segments(runs), width, size)
    if len(starts) <= max_lines:
        return runs
    cut = starts[max_lines] - 1
    while cut > 0:
        head, _ = split_para(Para(runs, size=size), cut)
        candidate = (*head.runs, Run("…", bold=runs[0].bold if runs else False))
        if metrics.line_count(segments(candidate), width, size) <= max_lines:
            return candidate
        cut -= max(1, cut // 20)
    return (Run("…"),)
