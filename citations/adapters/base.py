"""What every provider adapter shares: field paths, offsets, citation marks and the sources.

An adapter reads one native answer into a :class:`Draft` — text pieces and citations of
*local* source numbers — while a :class:`SourceCollector` gathers the sources the answer names.
:func:`finish` merges those sources into the caller's pool (append-only, deduplicated by
normalized URL through :meth:`citations.pool.SourcePool.merge`) and writes each citation as a
canonical ``[[S:n]]`` token. The streaming adapters use the same collector and marks, so a
streamed answer gives exactly the document of the non-streamed one.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from citations.codemap import markdown_code_spans
from citations.errors import AnswerError, PoolError
from citations.locations import PageSet, with_pages
from citations.model import Source
from citations.pool import SourcePool, dedupe_key, source_from_row
from citations.tokens import format_token

Provider = Literal["openai", "anthropic", "perplexity", "gemini", "langchain", "llamaindex"]
PROVIDERS: tuple[Provider, ...] = (
    "openai", "anthropic", "perplexity", "gemini", "langchain", "llamaindex",
)
#: How an API counts positions in its text: Unicode code points (Python ``str`` indices),
#: UTF-8 bytes, or UTF-16 code units (JavaScript string indices).
OffsetUnit = Literal["codepoints", "utf8", "utf16"]

#: Deepest nesting :func:`plain` follows in an SDK object (answers are a few levels deep).
MAX_DEPTH = 64


@dataclass(frozen=True)
class AdaptedAnswer:
    """A native answer as citerender input.

    ``content`` is markdown whose citations are canonical ``[[S:n]]`` tokens, each right after
    the span the provider says it supports; ``pool`` is the caller's pool with the answer's
    sources appended (existing sids never change, a known URL keeps its sid); ``sid_map`` maps
    the answer's own source numbers (its ``[1]`` markers, chunk or node positions, or the order
    in which it first names each source) to sids in ``pool``.
    """

    content: str
    pool: SourcePool
    sid_map: dict[int, int]
    provider: Provider
    shape: str
    citations: int
    warnings: tuple[str, ...] = ()

    @property
    def sources(self) -> list[Source]:
        """The answer's sources as rows of ``pool``, in the order it names them, each once."""
        sids = dict.fromkeys(self.sid_map.values())
        return [s for s in (self.pool.get(sid) for sid in sids) if s is not None]

    def describe(self) -> str:
        """``"OpenAI Responses … (3 citations, 2 sources)"`` — one line for a CLI or a log."""
        count = len(set(self.sid_map.values()))
        return (
            f"{self.shape} ({self.citations} citation{'s' * (self.citations != 1)}, "
            f"{count} source{'s' * (count != 1)})"
        )


# -- field paths and readers ---------------------------------------------------------------


def child(path: str, key: str | int) -> str:
    """``output`` + 0 → ``output[0]``; ``output[0]`` + ``content`` → ``output[0].content``."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def within(path: str, error: AnswerError) -> AnswerError:
    """``error`` about a part of the answer at ``path`` (a stream's event ``[7]``, a
    conversation's message ``[3]``), its path made the answer's."""
    detail = str(error).removeprefix(f"{error.path}: ") if error.path else str(error)
    return AnswerError(child(path, error.path) if error.path else path, detail)


def plain(value: object, depth: int = 0) -> Any:
    """``value`` as JSON-like data: SDK objects (pydantic ``model_dump``, dataclasses,
    ``to_dict``) become dicts, tuples become lists; nesting deeper than :data:`MAX_DEPTH` is
    refused (an answer is never that deep; a cycle would be)."""
    if depth > MAX_DEPTH:
        raise AnswerError("", f"the answer nests deeper than {MAX_DEPTH} levels")
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(k): plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v, depth + 1) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return plain(dump(), depth + 1)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value)}
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return plain(to_dict(), depth + 1)
    raise AnswerError("", f"the answer holds a {type(value).__name__}; accepted: JSON-like data")


def kind_of(value: object) -> str:
    """A JSON type name for messages: ``object``, ``array``, ``string``, ``number``, ``null``."""
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "null" if value is None else type(value).__name__


def first(obj: Mapping[str, Any], *names: str) -> Any:
    """The value of the first of ``names`` present in ``obj`` (REST camelCase or SDK
    snake_case spellings of one field), else None."""
    for name in names:
        if name in obj and obj[name] is not None:
            return obj[name]
    return None


def as_object(value: object, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise AnswerError(path, f"expected an object, got {kind_of(value)}")
    return value


def as_list(value: object, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise AnswerError(path, f"expected an array, got {kind_of(value)}")
    return value


def as_text(value: object, path: str, *, optional: bool = False) -> str:
    """A string field; ``None`` is ``""`` when ``optional``."""
    if value is None and optional:
        return ""
    if not isinstance(value, str):
        raise AnswerError(path, f"expected a string, got {kind_of(value)}")
    return value


def as_index(value: object, path: str) -> int:
    """A non-negative integer field (``3.0`` is 3; booleans and fractions are refused)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise AnswerError(path, f"expected a non-negative integer, got {value!r}")
    return value


def field_of(obj: Mapping[str, Any], path: str, *names: str) -> tuple[Any, str]:
    """``(value, path of the field)`` for the first spelling present (the first if none)."""
    for name in names:
        if name in obj and obj[name] is not None:
            return obj[name], child(path, name)
    return None, child(path, names[0])


# -- offsets -------------------------------------------------------------------------------


class TextOffsets:
    """Converts a provider's offsets into ``str`` indices of one text, exactly.

    An offset that falls inside a character (inside its UTF-8 sequence or between the two
    halves of a surrogate pair) or beyond the text raises :class:`AnswerError` naming the field.

    A stream keeps only the end of its text: ``text`` then starts at index ``base`` of a text of
    ``length`` characters (code points only).
    """

    def __init__(self, text: str, *, base: int = 0, length: int | None = None) -> None:
        self.text = text
        self.base = base
        self.length = base + len(text) if length is None else length
        self._starts: dict[str, list[int]] = {}

    def size(self, unit: OffsetUnit) -> int:
        """The length of the text in ``unit``."""
        if unit == "codepoints":
            return self.length
        return self._boundaries(unit)[-1]

    def index(self, offset: int, unit: OffsetUnit, path: str) -> int:
        """The ``str`` index of ``offset`` (a boundary between two characters, or the end)."""
        size = self.size(unit)
        if offset > size:
            raise AnswerError(
                path, f"{offset} is beyond the text ({size} {_UNIT_NAMES[unit]})"
            )
        if unit == "codepoints":
            return offset
        starts = self._boundaries(unit)
        position = bisect.bisect_left(starts, offset)
        if starts[position] != offset:
            char = self.text[position - 1]
            raise AnswerError(
                path,
                f"{offset} falls inside the character {char!r} (U+{ord(char):04X}, "
                f"{starts[position] - starts[position - 1]} {_UNIT_NAMES[unit]}); offsets here "
                f"count {_UNIT_NAMES[unit]}",
            )
        return position

    def _boundaries(self, unit: OffsetUnit) -> list[int]:
        """``starts[i]`` = offset of character ``i`` in ``unit``; ``starts[-1]`` = the size."""
        found = self._starts.get(unit)
        assert self.base == 0, "byte and UTF-16 offsets need the whole text"
        if found is None:
            wide = 0x10000 if unit == "utf16" else 0x80
            if all(ord(c) < wide for c in self.text):
                found = list(range(len(self.text) + 1))
            else:
                found = [0] * (len(self.text) + 1)
                total = 0
                for i, char in enumerate(self.text):
                    total += _width(char, unit)
                    found[i + 1] = total
            self._starts[unit] = found
        return found


_UNIT_NAMES: dict[str, str] = {
    "codepoints": "characters",
    "utf8": "UTF-8 bytes",
    "utf16": "UTF-16 code units",
}


def _width(char: str, unit: OffsetUnit) -> int:
    code = ord(char)
    if unit == "utf16":
        return 2 if code > 0xFFFF else 1
    return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4


# -- citation marks ------------------------------------------------------------------------


@dataclass
class Mark:
    """A citation of local sources at ``position`` of a text (right after the cited span).

    ``cut_from`` (when set) is where text removed in favour of the token starts: the span was
    the provider's own rendering of the citation (an inline link to the cited URL). ``lead``
    and ``trail`` are text written around the token (its own line after a code block).
    """

    position: int
    sources: list[int]
    cut_from: int | None = None
    lead: str = ""
    trail: str = ""


#: A setext heading's underline (``Title`` over ``=====``): a token after it unmakes it.
_UNDERLINE = re.compile(r" {0,3}(?:=+|-+)")


def _before_space(text: str, low: int, position: int, base: int) -> int:
    """``position`` moved left past white space, not past ``low``."""
    while position > low and text[position - 1 - base].isspace():
        position -= 1
    return position


def settle(text: str, start: int, end: int, base: int = 0) -> int:
    """Where a citation of ``text[start:end]`` goes: after the span, but before white space
    that ends it (a citation hangs on the last word, never on a space or a line break), and
    inside a table cell the span ends with: before the cell's closing ``|`` (after a row's
    last pipe a token is an extra cell, which a table drops with its citation); on a setext
    heading's text line, not after its underline.

    ``text`` may be the end of a longer text, starting at its index ``base``.
    """
    low = max(start, base)
    position = _before_space(text, low, end, base)
    if position > low and text[position - 1 - base] in "=-":
        line = text.rfind("\n", 0, position - base) + 1 + base
        if line > low and _UNDERLINE.fullmatch(text, line - base, position - base):
            # a setext underline (one: a heading has one): the citation goes on its text line
            position = _before_space(text, low, line, base)
    if position > low + 1 and text[position - 1 - base] == "|" and (
        text[position - 2 - base] != "\\"
    ):
        inside = position - 1
        while inside > low and text[inside - 1 - base] in " \t":
            inside -= 1
        if inside == low:
            return low  # the cell's content is before the span (or not yet streamed)
        cell = inside
        while cell > low and text[cell - 1 - base] in " \t:-":
            cell -= 1
        delimiter = cell > low and text[cell - 1 - base] == "|" and cell < inside
        if text[inside - 1 - base] != "|" and not delimiter:
            position = inside
    return position


class MarkSet:
    """The citations of one text, merged: all citations at one position become one token.

    Marks are added in the provider's order. A replacement (``cut_from``) is kept only when no
    other citation lies inside the text it removes; a later citation inside a kept replacement
    joins it. Kept replacements never overlap, so both rules are binary searches.
    """

    def __init__(self) -> None:
        self.by_position: dict[int, Mark] = {}
        self._positions: list[int] = []  # sorted
        self._cut_starts: list[int] = []  # kept replacements, sorted (disjoint ranges)
        self._cut_ends: list[int] = []

    def add(self, position: int, source: int, cut_from: int | None = None) -> int:
        """Add a citation of ``source``; return the position it ends up at."""
        k = bisect.bisect_right(self._cut_starts, position) - 1
        if k >= 0 and position < self._cut_ends[k]:
            position, cut_from = self._cut_ends[k], None  # inside a replaced link: join it
        if cut_from is not None:
            j = bisect.bisect_left(self._positions, cut_from)
            if j < len(self._positions) and self._positions[j] < position:
                cut_from = None  # another citation sits in the text it would remove
        found = self.by_position.get(position)
        if found is None:
            found = self.by_position[position] = Mark(position, [source])
            bisect.insort(self._positions, position)
        elif source not in found.sources:
            found.sources.append(source)
        if cut_from is not None and (found.cut_from is None or cut_from < found.cut_from):
            if found.cut_from is not None:
                k = self._cut_starts.index(found.cut_from)
                del self._cut_starts[k], self._cut_ends[k]
            found.cut_from = cut_from
            k = bisect.bisect_left(self._cut_starts, cut_from)
            self._cut_starts.insert(k, cut_from)
            self._cut_ends.insert(k, position)
        return position

    def take(self, upto: int) -> list[Mark]:
        """The marks at positions ≤ ``upto`` in position order, removed from the set."""
        count = bisect.bisect_right(self._positions, upto)
        ready = self._positions[:count]
        del self._positions[:count]
        cuts = bisect.bisect_right(self._cut_ends, upto)
        del self._cut_starts[:cuts], self._cut_ends[:cuts]
        return [self.by_position.pop(p) for p in ready]


Piece = str | tuple[int, ...]  # text, or a citation of local source numbers


def place(
    text: str, marks: Iterable[Mark], start: int, stop: int, base: int = 0
) -> list[Piece]:
    """The pieces of ``text[start:stop]`` with ``marks`` (positions within it) as citations
    (``text`` may be the end of a longer text, starting at its index ``base``)."""
    pieces: list[Piece] = []
    cursor = start
    for mark in sorted(marks, key=lambda m: m.position):
        cut = mark.position if mark.cut_from is None else mark.cut_from
        if cut > cursor:
            pieces.append(text[cursor - base : cut - base])
        if mark.lead:
            pieces.append(mark.lead)
        pieces.append(tuple(mark.sources))
        if mark.trail:
            pieces.append(mark.trail)
        cursor = max(cursor, mark.position)
    if stop > cursor:
        pieces.append(text[cursor - base : stop - base])
    return pieces


def marked_text(text: str, marks: MarkSet) -> list[Piece]:
    """Every piece of ``text`` with all of ``marks`` placed (the non-streamed path)."""
    return place(text, out_of_code(text, marks.take(len(text))), 0, len(text))


def cited_at_end(text: str, numbers: list[int], start: int = 0) -> list[Piece]:
    """The pieces of ``text`` from ``start`` with one citation of ``numbers`` after its last
    word (after the code, when it ends in code) — how a whole text block, or an answer that
    cites without saying where, is cited."""
    if not numbers:
        return [text[start:]] if text[start:] else []
    marks = out_of_code(text, [Mark(settle(text, 0, len(text)), list(numbers))])
    return place(text, marks, start, len(text))


#: The container marks and indentation that start a line (list item indent, ``>`` quotes).
_LINE_PREFIX = re.compile(r"[ \t>]*")


def out_of_code(text: str, marks: list[Mark]) -> list[Mark]:
    """``marks`` with each citation that falls inside markdown code moved right after it.

    A token in code is code: it would show as ``[[S:n]]`` and its source would go uncited, and
    one after a closing fence on its line keeps the fence from closing. So a citation inside a
    code span goes after its closing backtick, and one inside (or at the end of) a code block
    goes on the line after the block, indented as that block's container is.
    """
    if not marks or not ("`" in text or "~~~" in text or "    " in text or "\t" in text
                         or "<" in text):
        return marks
    spans = sorted(markdown_code_spans(text))
    starts = [start for start, _ in spans]
    exits: dict[int, _CodeExit] = {}  # each span's exit, worked out once
    placed: dict[int, Mark] = {}
    for mark in marks:
        k = bisect.bisect_left(starts, mark.position) - 1
        if k >= 0 and mark.position <= spans[k][1]:
            if k not in exits:
                exits[k] = _code_exit(text, *spans[k])
            mark = exits[k].move(mark)
        found = placed.get(mark.position)
        if found is None:
            placed[mark.position] = mark
        else:
            found.sources += [s for s in mark.sources if s not in found.sources]
            found.lead, found.trail = found.lead or mark.lead, found.trail or mark.trail
            if found.cut_from is None or (
                mark.cut_from is not None and mark.cut_from < found.cut_from
            ):
                found.cut_from = mark.cut_from
    return list(placed.values())


#: A blank line: no code span runs across one, and after one followed by a line that starts
#: without a space (:data:`_SECTION_CUT`) no code block started before it runs on.
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_SECTION_CUT = re.compile(r"\n[ \t]*\n(?=[^ \t\n])")
#: What a markdown text without any of these cannot hold code by (as :func:`out_of_code`).
_CODE_HINTS = ("`", "~~~", "    ", "\t", "<")


@dataclass
class CodeSorted:
    """Marks of a growing text sorted by what its code makes of them: ``ready`` are placed as
    the whole text will place them (moved out of code, :func:`out_of_code`); ``waiting`` are
    not yet known to be in code or not; no text at or after ``hold`` may be released yet."""

    ready: list[Mark]
    waiting: list[Mark]
    hold: int | None
    #: The marks were left where they are, code or not: the text to read, which may hold
    #: code, was longer than :data:`CODE_WINDOW_CHARS`.
    unread: bool = False


def out_of_code_so_far(text: str, marks: list[Mark], *, final: bool) -> CodeSorted:
    """:func:`out_of_code` for a text still streaming (``text`` is all of it so far): each mark
    moves as it will in the finished text, or waits until that is known.

    A mark in a code span that closed is known, as is one in a code block with a section cut
    (a blank line, then an unindented line) after it; one in code still open waits, holding
    the text from the code's end so far. A mark outside code waits while a backtick or ``<``
    before it in its paragraph may yet open a span around it, holding the text from the mark.
    """
    if final or not marks or not any(hint in text for hint in _CODE_HINTS):
        return CodeSorted(out_of_code(text, marks), [], None)
    spans = sorted(markdown_code_spans(text))
    starts = [start for start, _ in spans]
    ready: list[Mark] = []
    waiting: list[Mark] = []
    hold: int | None = None
    for mark in marks:
        k = bisect.bisect_left(starts, mark.position) - 1
        if k >= 0 and mark.position <= spans[k][1]:
            start, end = spans[k]
            closed = (text.find("\n", start, end) < 0 and end < len(text)) or (
                _SECTION_CUT.search(text, end) is not None
            )
            wait_from = end
        else:
            # from the last empty line before it (a blank line of spaces may be passed over:
            # looking further back only makes it wait more)
            paragraph = text.rfind("\n\n", 0, mark.position) + 1
            opener = _open_code_before(text, paragraph, mark.position, spans, starts)
            closed = not opener or _BLANK_LINE.search(text, mark.position) is not None
            wait_from = mark.position
        if closed:
            ready.append(mark)
        else:
            waiting.append(mark)
            hold = wait_from if hold is None else min(hold, wait_from)
    return CodeSorted(out_of_code(text, ready), waiting, hold)


#: Raw-HTML blocks that may run past a blank line (CommonMark kinds 1-5): a window never
#: starts after one (its end is not looked for).
_HTML_RUNS_ON = re.compile(r"<(?:[!?]|(?i:pre|script|style|textarea))")


_CODE_OPENER = re.compile(r"`|<(?i:code|pre)\b")


def _open_code_before(
    text: str, start: int, end: int, spans: list[tuple[int, int]], starts: list[int]
) -> bool:
    """Whether ``text[start:end]`` holds a backtick, ``<code`` or ``<pre`` in no code span: a
    code span it opens may yet close after ``end``."""
    for found in _CODE_OPENER.finditer(text, start, end):
        k = bisect.bisect_right(starts, found.start()) - 1
        if k < 0 or found.start() >= spans[k][1]:
            return True
    return False


@dataclass
class CodeWindow:
    """The end of a streaming text, from a section start (a blank line, then an unindented
    line) that no code block runs across: read alone, it has the code it has in place, so
    :meth:`sort` costs the length of the window, not of the text. Section starts are looked
    for in the text released since the last look only, and the window is joined only to sort
    marks or to move its start."""

    start: int = 0
    #: The window's text: ``pieces`` looked at for section starts, then ``fresh`` ones.
    pieces: list[str] = field(default_factory=list)
    fresh: list[str] = field(default_factory=list)
    scanned: int = 0  # the length of ``pieces``
    length: int = 0
    cut: int = 0  # the last section start found (a window offset; 0: none)

    #: Whether a backtick or ``<`` has come (code spans and HTML code can hold citations).
    hinted: bool = False

    def append(self, delta: str) -> None:
        self.fresh.append(delta)
        self.length += len(delta)
        self.hinted = self.hinted or "`" in delta or "<" in delta

    def text(self) -> str:
        self.pieces = ["".join(self.pieces + self.fresh)] if self.length else []
        self.fresh, self.scanned = [], self.length
        return self.pieces[0] if self.pieces else ""

    def sort(self, marks: list[Mark], *, final: bool) -> CodeSorted:
        """:func:`out_of_code_so_far` of ``marks`` (positions in the whole text); in a window
        longer than :data:`CODE_WINDOW_CHARS` (a paragraph that long, or code with no section
        start after it) they stay where they are, as reading it again for every citation would
        cost the square of its length."""
        if not marks:
            return CodeSorted([], [], None)
        if self.length > CODE_WINDOW_CHARS and not final:
            return CodeSorted(marks, [], None, unread=self.hinted)
        shift = self.start
        moved = out_of_code_so_far(self.text(), [_shifted(m, -shift) for m in marks],
                                   final=final)
        return CodeSorted(
            [_shifted(m, shift) for m in moved.ready],
            [_shifted(m, shift) for m in moved.waiting],
            None if moved.hold is None else moved.hold + shift,
        )

    def forget_before(self, position: int) -> None:
        """Start the window at the last section start before ``position`` that no code (nor
        a raw-HTML block) runs across, when one has been found since the window last moved."""
        if self.fresh and position - self.start > self.scanned:
            fresh = "".join(self.fresh)
            context = self.pieces[-1][-_CUT_CONTEXT:] if self.pieces else ""
            base = self.scanned - len(context)
            for found in _SECTION_CUT.finditer(context + fresh):
                self.cut = max(self.cut, base + found.end())
            self.pieces.append(fresh)
            self.fresh, self.scanned = [], self.scanned + len(fresh)
        if self.cut and self.cut <= position - self.start:
            text = self.text()
            head = text[: self.cut]
            if not _HTML_RUNS_ON.search(head) and all(
                end < self.cut for _, end in markdown_code_spans(head)
            ):
                self.pieces = [text[self.cut :]]
                self.start += self.cut
                self.length -= self.cut
                self.scanned -= self.cut
            self.cut = 0


#: The longest window a streamed citation is moved out of code in.
CODE_WINDOW_CHARS = 8192
#: How far back from the text looked at last a section start is looked for again (a blank
#: line of more spaces than this that ends just there is missed: the window moves later).
_CUT_CONTEXT = 64


def _shifted(mark: Mark, by: int) -> Mark:
    cut = None if mark.cut_from is None else mark.cut_from + by
    return Mark(mark.position + by, mark.sources, cut, mark.lead, mark.trail)


@dataclass(frozen=True)
class _CodeExit:
    """Where citations inside one stretch of code go: ``end``, written with ``lead`` and
    ``trail`` around the token; ``block`` code (ending with its line) keeps a citation already
    at ``end``, a code span or an unterminated last line moves every one inside it."""

    end: int
    lead: str
    trail: str
    keeps_end: bool

    def move(self, mark: Mark) -> Mark:
        if mark.position == self.end and self.keeps_end:
            return mark  # right after the code already
        return Mark(self.end, mark.sources, lead=self.lead, trail=self.trail)


def _code_exit(text: str, start: int, end: int) -> _CodeExit:
    """How a citation leaves the code ``text[start:end]``: after a code span's closing
    backtick, or on the line after a block, indented as the block's container is."""
    if text.find("\n", start, end) < 0:
        return _CodeExit(end, "", "", keeps_end=True)  # a code span (or HTML code element)
    ends_line = text[end - 1] == "\n"
    line_start = text.rfind("\n", 0, end - 1) + 1
    last_line = text[line_start : end - 1 if ends_line else end]
    prefix = _LINE_PREFIX.match(last_line)
    indent = prefix.group() if prefix else ""
    fenced = last_line[len(indent):].startswith(("```", "~~~"))
    if not ends_line and not fenced:  # a multi-line code span: after its closing backtick
        return _CodeExit(end, "", "", keeps_end=True)
    if not fenced:
        # an indented block's last line: its container's indent only
        indent = indent[:-4] if indent.endswith("    ") else indent.rstrip(" \t")
    if ends_line:
        return _CodeExit(end, indent, "\n", keeps_end=True)
    return _CodeExit(end, "\n" + indent, "", keeps_end=False)


# -- sources -------------------------------------------------------------------------------


@dataclass
class _Local:
    number: int
    row: dict[str, Any]
    key: str
    sid: int
    pages: PageSet = field(default_factory=PageSet)


@dataclass
class SourceCollector:
    """The sources one answer names, numbered locally, with the sid each will have in the pool.

    The sid of a source is fixed when it is first named — the sid merging it into ``base``
    gives (:meth:`SourcePool.merge`: a known dedupe key keeps its sid, a new source gets the next
    free one) — so tokens can be written while an answer streams. A source named again fills
    fields it lacked when it is keyed by URL or path (a content-keyed source stays as first
    named, so its key, and therefore its sid, cannot change). The pages each naming cites are
    gathered, whatever the key (they are no part of it), and become the row's ``location``.
    """

    base: SourcePool
    refs: dict[int, int] = field(default_factory=dict)  # answer's own number → local number
    _locals: list[_Local] = field(default_factory=list)
    _by_identity: dict[str, int] = field(default_factory=dict)
    _known: dict[str, int] | None = None
    _next_sid: int = 0

    def add(
        self,
        row: Mapping[str, Any],
        path: str,
        *,
        identity: str | None = None,
        ref: int | None = None,
        pages: PageSet | None = None,
    ) -> int:
        """Name a source (``row`` without a sid); return its local number (1, 2, …).

        ``identity`` says when two rows are one source (default: the pool's dedupe key);
        ``ref`` is the answer's own number for it (default: its local number when new);
        ``pages`` the pages this naming cites it at.
        """
        clean = {k: v for k, v in row.items() if v not in (None, "", [], {})}
        try:
            source = source_from_row({**clean, "sid": len(self._locals) + 1}, path)
        except PoolError as exc:
            raise AnswerError(path, str(exc).removeprefix(f"{path}: ")) from exc
        key = dedupe_key(source)
        ident = identity or key
        number = self._by_identity.get(ident)
        if number is None:
            number = len(self._locals) + 1
            self._by_identity[ident] = number
            self._locals.append(_Local(number, clean, key, self._assign(key)))
        else:
            local = self._locals[number - 1]
            if local.key.startswith(("url:", "path:")):
                for name, value in clean.items():
                    local.row.setdefault(name, value)
        if pages:
            self.add_pages(number, pages)
        self.refs.setdefault(ref if ref is not None else number, number)
        return number

    def add_pages(self, number: int, pages: PageSet) -> None:
        """Add ``pages`` to where local source ``number`` is cited."""
        self._locals[number - 1].pages.merge(pages)

    def url_of(self, number: int) -> str | None:
        """The URL of local source ``number``, if it has one."""
        url = self._locals[number - 1].row.get("url")
        return url if isinstance(url, str) else None

    def sid(self, number: int) -> int:
        """The pool sid of local source ``number``."""
        return self._locals[number - 1].sid

    def _assign(self, key: str) -> int:
        if self._known is None:
            self._known = {}
            for sid in self.base.sids:
                self._known.setdefault(self.base.key_of(sid) or "", self.base.canonical_sid(sid))
            self._next_sid = (self.base.sids[-1] if len(self.base) else 0) + 1
        known = self._known.get(key)
        if known is not None:
            return known
        sid = self._known[key] = self._next_sid
        self._next_sid += 1
        return sid

    def finish(self) -> tuple[SourcePool, dict[int, int], list[str]]:
        """The merged pool, the sid map (the answer's own numbers → sids) and warnings.

        The pages of every naming that ends up under one sid are that sid's location; a row
        the pool already held gets them as :func:`citations.locations.with_pages` says (a
        warning names a pool location kept in its own words)."""
        pages_of: dict[int, PageSet] = {}
        for local in self._locals:
            if local.pages:
                pages_of.setdefault(local.sid, PageSet()).merge(local.pages)
        rows = [
            {**local.row, **({"location": pages_of[local.sid].describe()}
                             if local.sid in pages_of else {}),
             "sid": local.number}
            for local in self._locals
        ]
        merged, mapping = self.base.merge(SourcePool.from_rows(rows, origin="answer"))
        for local in self._locals:  # the sids written into tokens are the merge's sids
            assert mapping[local.number] == local.sid, (local.number, mapping, local.sid)
        warnings: list[str] = []
        updated: list[Source] = []
        for sid, pages in pages_of.items():
            held = self.base.get(sid)
            if held is None:
                continue
            location = with_pages(held.extra.get("location"), pages)
            if location is None:
                warnings.append(
                    f"{self.base.origin}: sid {sid} keeps its location "
                    f"{held.extra['location']!r} as the pool wrote it; the answer cites it at "
                    f"{pages.describe()}"
                )
            elif location != held.extra.get("location"):
                updated.append(dataclasses.replace(held, extra={**held.extra,
                                                                "location": location}))
        if updated:
            merged = merged.with_rows(updated)
        return merged, {ref: mapping[number] for ref, number in self.refs.items()}, warnings


@dataclass(frozen=True)
class Chunk:
    """One retrieved piece of a source (a LangChain ``Document``, a LlamaIndex node): ``ref``
    is the answer's own number for it, ``identity`` the source it is part of (a URL, a file),
    ``pages`` where in that source it is."""

    ref: int
    row: dict[str, Any]
    path: str
    identity: str
    pages: PageSet


def add_retrieved(
    collector: SourceCollector, chunks: Sequence[Chunk], cited: Sequence[int]
) -> None:
    """Name the sources of retrieved ``chunks``, one per identity, numbered in the order first
    retrieved, each chunk's ``ref`` naming its source (a ref given twice names the first chunk
    given it). ``cited`` is the refs the answer cites, in the order first cited: a source's row
    is its first cited chunk's (its first chunk's when none is cited), so the text shown backs
    a claim, and its pages are those of its cited chunks, in that order."""
    first_of: dict[int, int] = {}
    for k, chunk in enumerate(chunks):
        first_of.setdefault(chunk.ref, k)
    lead: dict[str, Chunk] = {}
    for chunk in [*(chunks[first_of[ref]] for ref in cited), *chunks]:
        lead.setdefault(chunk.identity, chunk)
    for chunk in chunks:
        first = lead[chunk.identity]
        collector.add(first.row, first.path, identity=chunk.identity, ref=chunk.ref)
    for ref in cited:
        collector.add_pages(collector.refs[ref], chunks[first_of[ref]].pages)


def renumbered(pieces: Iterable[Piece], refs: Mapping[int, int]) -> list[Piece]:
    """``pieces`` citing the answer's own numbers, citing the local numbers ``refs`` gives
    instead (two numbers of one source cite it once)."""
    return [p if isinstance(p, str) else tuple(dict.fromkeys(refs[n] for n in p))
            for p in pieces]


def token_for(collector: SourceCollector, numbers: Sequence[int]) -> str:
    """The canonical token citing local sources ``numbers`` (sids ascending, each once)."""
    sids = sorted({collector.sid(n) for n in numbers})
    return format_token(sids)


@dataclass
class Draft:
    """An answer being adapted: its pieces so far, the sources they cite, warnings."""

    collector: SourceCollector
    pieces: list[Piece] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    pending_break: bool = False

    def paragraph_break(self) -> None:
        """Start the next text on a new paragraph (answer text resumes after a tool call or in
        another output message); nothing happens before the first text."""
        if self.pieces:
            self.pending_break = True

    def text(self, text: str) -> list[Piece]:
        return self.extend([text])

    def extend(self, pieces: Iterable[Piece]) -> list[Piece]:
        """Append ``pieces`` (empty strings dropped); return what was appended."""
        added = [p for p in pieces if p != ""]
        if added and self.pending_break:
            added.insert(0, "\n\n")
            self.pending_break = False
        self.pieces.extend(added)
        return added

    def render(self, pieces: Iterable[Piece] | None = None) -> str:
        """``pieces`` (default: all) as markdown with canonical tokens."""
        return "".join(
            p if isinstance(p, str) else token_for(self.collector, p)
            for p in (self.pieces if pieces is None else pieces)
        )


def finish(draft: Draft, provider: Provider, shape: str) -> AdaptedAnswer:
    """The adapted answer: tokens with final sids, the merged pool and the sid map."""
    content = draft.render()
    if not content.strip():
        draft.warnings.append("the answer holds no text: the document is empty")
    pool, sid_map, pool_warnings = draft.collector.finish()
    draft.warnings.extend(pool_warnings)
    citations = sum(1 for p in draft.pieces if not isinstance(p, str))
    return AdaptedAnswer(
        content=content,
        pool=pool,
        sid_map=sid_map,
        provider=provider,
        shape=shape,
        citations=citations,
        warnings=tuple(dict.fromkeys(draft.warnings)),
    )


def new_draft(pool: object) -> Draft:
    """A draft whose sources will merge into ``pool`` (anything ``SourcePool.coerce`` takes)."""
    return Draft(SourceCollector(SourcePool.coerce(pool)))
