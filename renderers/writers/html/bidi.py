"""Runs that read against their line and span several inline boxes: held in a span.

WeasyPrint sets the inline boxes of a right-to-left line from the right, one after the other,
and leaves the bidi algorithm to Pango inside each box's text. A left-to-right run that spans
several boxes was therefore set box by box from the right: the superscript after "中文摘要"
stood at the left of the words, where the bidi algorithm (and Chromium, and Typst) puts it at
their right end, its digits taking the direction of the letters before them (UAX #9, rule W7);
in "English¹ 2024" the year stood left of the mark and the mark left of "English"; the mark
after ``**English**`` or a link's text stood left of it. In a span with ``dir="ltr"``
WeasyPrint sets the boxes left to right. A browser isolates such a span, which changes nothing
when the span holds the whole run: from its first letter after the line's last right-to-left
character before it to its last letter or digit (a mark's digits count, inside emphasis as
outside) before the next right-to-left character or the line's end. A pair of brackets takes a
side first, as the bidi algorithm's rule N0 has it (:func:`_sides`): around left-to-right
text after right-to-left text, the line's, so ``نص (English)¹`` is no run of several boxes
(held, "English)¹" had set the mark inside the pair and each bracket the wrong way); after
left-to-right text, the run's. The same holds the other way round (:data:`_AGAINST`): in a
left-to-right line WeasyPrint sets the boxes from the left, so a right-to-left run over
several (``English عربي *3.5%*``) is held in a span with ``dir="rtl"``; a left-to-right line
without right-to-left text is left alone.

A citation held apart from its line (:func:`~renderers.writers.common.cite_direction`: "[1]",
"(IEA, 2024)", "1, 2", a "1" after Arabic words in an English line) is an isolate in the
browser and a box in Typst: a neutral object, which
joins no run and ends none; so is any element of the author's with a ``dir``, and a picture (an
image, an inline formula, a form control: U+FFFC to the algorithm in Chromium and Typst). A
citation not held apart from its line, and a cross-reference, read as the text they show
("1", an Arabic author's "(مؤلف, 2024)" in a right-to-left line, whose letters end an English
run before it; "Figure 1"). A line break, raw markup, a display formula or a block ends a
run; inside an element read as text it is one neutral. A run that
starts or ends inside an element is held where the element can be cut: emphasis, strong or
struck text (and the author's ``<span>``) is cut in two (``**نص English**[[S:1]]`` as
``<strong>نص </strong><span dir="ltr"><strong>English</strong>``…), which looks the same. A
link (it would be two links) or code (two boxes) is not: the span holds it whole when what it
shows outside the run is neutral (``["Title"](u)[[S:1]]``, ``[[S:1]] [see here.](u)``), its
quotation marks or full stop then set on the run's side, where the bidi algorithm alone sets
them across the run and draws the link in two pieces (the run then stands about 4 pt right
of Typst's, the opening quotation mark on its other side); a run entering one past
right-to-left text or digits is left as it was: only two pieces of the link could place its
mark, and two ``<a>`` for one link of the author's would be two links to a screen reader.

Pango reads each box's text alone, too, so a European number in a box of its own lost the
Arabic letters before it: by the bidi algorithm those make it an Arabic number (rule W2), and
then a percent sign or a plus between its digits no longer joins it (W4–W6) but takes the
line's side: ``نص **عريض** 3.5% نص`` reads "%3.5" from the left in Chromium and Typst, "3.5%"
in WeasyPrint. Such a box gets an ARABIC LETTER MARK (invisible, strongly Arabic) before its
first digit (:class:`NumberContext`): only where the line reads Arabic letters last and the
box no strong character yet, which changes nothing for the bidi algorithm over the whole line.

The rules (:func:`held_runs`, :class:`NumberContext`) read a line as boxes through two
readers: the report's inlines (:func:`held_line_runs`, for the report writer) and the
author's own markup, a sanitized HTML tree (:func:`hold_line_runs`, for HTML input printed in
its author's look).
"""

from __future__ import annotations

import copy
import functools
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import accumulate, pairwise
from typing import Generic, Literal, TypeAlias, TypeVar

import lxml.html
from lxml.html import HtmlElement

from renderers.document import (
    Anchor,
    Cite,
    Code,
    CrossRef,
    Emph,
    FootnoteRef,
    Image,
    Inline,
    Link,
    Math,
    SoftBreak,
    Strike,
    Strong,
    Styled,
    Text,
    plain_text,
)
from renderers.text import Direction, has_right_to_left
from renderers.writers.common import cite_direction, cite_shown, joined_runs
from renderers.writers.html.contents import is_citation

#: A character as a run sees it: right to left (R), Arabic (AL: the European digits after it
#: read as Arabic ones, W2), an Arabic digit, a left-to-right letter, a European digit (left to
#: right after a letter: W7), a European terminator beside one (a percent or degree sign: W5,
#: unless the digits read as Arabic ones), or neutral.
CharClass = Literal["rtl", "arabic", "arabic-digit", "letter", "digit", "terminator", "neutral"]


@dataclass(frozen=True)
class Bracket:
    """A paired bracket (UAX #9, BD14–BD16): neutral to the W rules, then the side of what it
    encloses (rule N0, :func:`_sides`). It pairs with one of the other kind by the same
    opening bracket."""

    opening: str
    closes: bool


#: What a box shows as a reader sees it, one code a character (:data:`_CODES`): its class, or
#: the bracket itself (a mirrored opening or closing punctuation mark, :func:`_bracket`) for
#: the line to pair; in a line, ``|`` for an object that ends a run. A string, so that a line
#: is read by searching it rather than character by character.
Codes: TypeAlias = str
#: The closing brackets whose opening one is not the nearest before them (BidiBrackets.txt).
_CROSSED = {"\u298e": "\u298f", "\u2990": "\u298d"}
#: How deep brackets nest before the rest of a line is left unpaired (BD16).
_BRACKET_DEPTH = 63
#: Each class's code; ``|`` an object that ends a run.
_CODES: dict[CharClass | None, str] = {
    "rtl": "R", "arabic": "A", "arabic-digit": "N", "letter": "L", "digit": "E",
    "terminator": "T", "neutral": "n", None: "|",
}  # fmt: skip
#: The codes of the bidi classes a character keeps (the others neutral, or a bracket).
_BIDI_CODES = {"R": "R", "AL": "A", "AN": "N", "L": "L", "EN": "E"}
#: The codes of neither a bracket nor an object (``M``, ``X``: a text's marks and
#: terminators, before :func:`_text_classes` settles them).
_CLASS_CODES = frozenset("RANLETnMX")
#: What the W rules read (:func:`_sides`): numbers (a run of digits and terminators at a
#: time), brackets and objects.
_UNSETTLED = re.compile("[ET]+|[^RANLn]")
#: A number's digits and terminators after Arabic letters (W2: its terminators neutral).
_ARABIC_CODES = str.maketrans({"E": "N", "T": "n"})
#: A text's combining marks (``M``) and European terminators (``X``), run by run.
_PENDING = re.compile("M+|X+")
#: The codes a combining mark takes from the character before it (W1).
_MARK_TAKES = frozenset("RANLEn")
#: A number's or a strong character's code, the first of which decides whether a box's number
#: reads after Arabic letters (:class:`NumberContext`).
_NUMBER_OR_STRONG = re.compile("[ETRAL]")

#: ARABIC LETTER MARK: invisible, strongly Arabic (AL).
ALM = "\u061c"

#: A place in a line's boxes: the box's index and a character offset in what it shows.
Place = tuple[int, int]

#: A box of a line: a run of the report's inlines, or a text or element of the author's.
B = TypeVar("B")


@dataclass(frozen=True)
class HeldRun(Generic[B]):
    """Boxes held in one span of their ``direction``: a run of the line that reads the other
    way (boxes cut at its ends)."""

    runs: tuple[B, ...]
    direction: Direction


@dataclass(frozen=True)
class _Against:
    """A run that reads against a line: the classes that start it (the other direction's
    strong characters), that it holds to (its last such character or number), and that end
    it (the line's own)."""

    starts: frozenset[CharClass]
    holds: frozenset[CharClass]
    ends: frozenset[CharClass]


#: By the line's direction, the runs that read against it.
_AGAINST: dict[Direction, _Against] = {
    "rtl": _Against(starts=frozenset({"letter"}), holds=frozenset({"letter", "digit"}),
                    ends=frozenset({"rtl", "arabic", "arabic-digit"})),
    "ltr": _Against(starts=frozenset({"rtl", "arabic"}),
                    holds=frozenset({"rtl", "arabic", "arabic-digit", "digit"}),
                    ends=frozenset({"letter"})),
}


#: How the line's bidi algorithm sees each character a box shows; None for an object that
#: ends a run.
Reader = Callable[[B], Codes | None]
#: A box cut in two that many characters in, neither half empty; None where it cannot be. It
#: leaves the box as it was.
Cutter = Callable[[B, int], tuple[B, B] | None]


def held_runs(boxes: Sequence[B], read: Reader[B], cut: Cutter[B],
              line: Direction) -> list[B | HeldRun[B]]:
    """``boxes`` (a ``line``) with each run that reads against it and spans several of them
    as one :class:`HeldRun`: a box at either end is cut where the run starts or ends (from the
    line's end, so that each place stays where it was), or held whole when it cannot be cut
    and shows only neutrals outside the run (:meth:`_Line.neutral_outside`). A line of one box
    (Pango orders it) is not read."""
    boxes = list(boxes)
    if len(boxes) < 2:
        return list(boxes)
    read_boxes = [read(box) for box in boxes]
    resolved = _Line.resolved(read_boxes, line)
    places: set[Place] = set()
    for start, end in resolved.runs():
        if start[0] == end[0]:
            continue
        ends = ((start, True), (end, False))
        cuts = [p for p, _ in ends
                if not resolved.at_edge(p) and cut(boxes[p[0]], p[1]) is not None]
        if all(p in cuts or resolved.neutral_outside(p, first) for p, first in ends):
            places.update(cuts)
    for index, offset in sorted(places, reverse=True):
        halves = cut(boxes[index], offset)
        if halves is not None:  # only the halves are read again
            boxes[index:index + 1] = halves
            read_boxes[index:index + 1] = [read(half) for half in halves]
    if places:
        resolved = resolved.cut(read_boxes)
    out: list[B | HeldRun[B]] = []
    done = 0
    other: Direction = "ltr" if line == "rtl" else "rtl"
    for start, end in resolved.runs():
        if start[0] == end[0] or not (resolved.neutral_outside(start, True)
                                      and resolved.neutral_outside(end, False)):
            continue  # one box (Pango orders it), or a box the run enters or leaves inside
        out += boxes[done:start[0]]
        out.append(HeldRun(tuple(boxes[start[0]:end[0] + 1]), other))
        done = end[0] + 1
    out += boxes[done:]
    return out


@dataclass(frozen=True)
class _Search:
    """The searches of :meth:`_Line.runs` for a line's direction (:data:`_AGAINST`, as codes):
    a run's first character, what ends it, and the characters it holds to."""

    starts: re.Pattern[str]
    stops: re.Pattern[str]
    ends: re.Pattern[str]
    holds: str

    @classmethod
    def against(cls, line: Direction) -> _Search:
        against = _AGAINST[line]

        def codes(kinds: frozenset[CharClass]) -> str:
            return "".join(sorted(_CODES[kind] for kind in kinds))

        return cls(starts=re.compile(f"[{codes(against.starts)}]"),
                   stops=re.compile(f"[{codes(against.ends)}|]"),
                   ends=re.compile(f"[{codes(against.ends)}]"),
                   holds=codes(against.holds))


_SEARCHES: dict[Direction, _Search] = {line: _Search.against(line) for line in _AGAINST}


def _flat(classes: Sequence[Codes | None]) -> tuple[Codes, list[int]]:
    """The codes of boxes that show ``classes`` one after the other (an object that ends a
    run: ``|``), and where each box's start."""
    codes = ["|" if kinds is None else kinds for kinds in classes]
    return "".join(codes), list(accumulate(map(len, codes), initial=0))[:-1]


@dataclass(frozen=True)
class _Line:
    """A line's characters as its runs read them (:func:`_sides`), one after the other, each
    box's from its place in :attr:`firsts`."""

    #: Each character's class as :data:`_CODES`.
    codes: str
    #: Where each box's characters start (an object that ends a run is one place).
    firsts: list[int]
    line: Direction
    #: The codes of what the boxes show, before the W rules.
    flat: Codes

    @classmethod
    def resolved(cls, classes: Sequence[Codes | None], line: Direction) -> _Line:
        """The line of boxes that show ``classes``: each European number as its neighbours
        make it, and each pair of brackets on the side of what it encloses (rule N0)."""
        flat, firsts = _flat(classes)
        return cls(_sides(flat, line), firsts, line, flat)

    def cut(self, classes: Sequence[Codes | None]) -> _Line:
        """The line of boxes that show ``classes``: this one with some of its boxes cut,
        which leaves its characters as they were unless a cut changed how a piece reads."""
        flat, firsts = _flat(classes)
        if flat != self.flat:
            return _Line(_sides(flat, self.line), firsts, self.line, flat)
        return replace(self, firsts=firsts)

    def runs(self) -> Iterator[tuple[Place, Place]]:
        """Where each run that reads against the line starts (its first strong character of
        the other direction after the line's own, or the line's start) and ends (after its
        last such character or number), as places; the end's offset is in the box that holds
        that character. An object ends a run, but only the line's own direction lets the next
        one start."""
        search, codes = _SEARCHES[self.line], self.codes
        at, own_before = 0, True  # the line starts in its own direction
        while True:
            if not own_before:
                found = search.ends.search(codes, at)
                if found is None:
                    return
                at, own_before = found.end(), True
            started = search.starts.search(codes, at)
            if started is None:
                return
            start = started.start()
            stopped = search.stops.search(codes, start)
            stop = len(codes) if stopped is None else stopped.start()
            end = max([codes.rfind(code, start, stop) for code in search.holds]) + 1
            yield self.place(start), self.place(end - 1, after=True)
            if stopped is None:
                return
            at, own_before = stop + 1, codes[stop] != "|"

    def place(self, at: int, after: bool = False) -> Place:
        """The box and offset of the character at ``at`` (``after``: the place after it)."""
        index = bisect_right(self.firsts, at) - 1
        return index, at - self.firsts[index] + after

    def box(self, index: int) -> str:
        """The codes of what box ``index`` shows (nothing for an object that ends a run)."""
        last = self.firsts[index + 1] if index + 1 < len(self.firsts) else len(self.codes)
        codes = self.codes[self.firsts[index]:last]
        return "" if codes == "|" else codes

    def at_edge(self, place: Place) -> bool:
        """Whether ``place`` is at its box's start or end (a span may start or end there)."""
        index, offset = place
        return offset in (0, len(self.box(index)))

    def neutral_outside(self, place: Place, start: bool) -> bool:
        """Whether what the box of a run's ``start`` (or end) shows before (after) ``place``
        is all neutral: nothing, at its edge; or the quotation mark of a link's ``“Title”``,
        the full stop of ``[see here.]``: a box that cannot be cut is then held whole, the
        span setting those characters on the run's side (the bidi algorithm would set them
        across the run, and a browser draws the link in two pieces). Right-to-left text or
        digits there would move past the run: such a box is not held."""
        index, offset = place
        codes = self.box(index)
        return not (codes[:offset] if start else codes[offset:]).strip("n")


@functools.lru_cache(maxsize=4096)
def _text_classes(text: str) -> Codes:
    """Each character's code (:data:`Codes`); a combining mark takes the class before it
    (UAX #9, rule W1; after a bracket or a terminator, neutral), so that a run never ends
    between a letter and its accent, and a percent or degree sign (a European terminator)
    next to a European digit is one (W5): "English 50%" is one run. Kept for the texts read
    last: a line reads each of its texts twice (:class:`NumberContext`, then
    :func:`held_runs`), and each element inside it once more for its own line."""
    codes = text.translate(_CHAR_CODES)
    if _ISOLATE_START.search(text) is not None:
        codes = _isolates_neutral(text, codes)
    if "M" not in codes and "X" not in codes:
        return codes

    def settled(found: re.Match[str]) -> str:
        start, end = found.span()
        before = codes[start - 1] if start else "n"
        if found.group()[0] == "M":  # W1
            return (before if before in _MARK_TAKES else "n") * (end - start)
        beside_digit = "E" in (before, codes[end:end + 1])  # W5, by the characters as they are
        return ("T" if beside_digit else "n") * (end - start)

    return _PENDING.sub(settled, codes)


#: An isolate initiator (LRI, RLI, FSI), which a PDI closes.
_ISOLATE_START = re.compile("[\u2066-\u2068]")


def _isolates_neutral(text: str, codes: Codes) -> Codes:
    """``codes`` with what each isolate of ``text`` holds, its marks included, neutral: one
    neutral object to the line, as the bidi algorithm reads it (a CSL entry's Arabic name in
    English, :mod:`renderers.styles.bidi`); an isolate left open holds the rest of the text."""
    out = list(codes)
    depth = 0
    for index, char in enumerate(text):
        if "\u2066" <= char <= "\u2068":
            depth += 1
        if depth:
            out[index] = "n"
        if char == "\u2069" and depth:
            depth -= 1
    return "".join(out)


class _CharCodes(dict[int, str]):
    """Each character's code as :func:`_text_classes` translates a text (``M`` a combining
    mark, ``X`` a European terminator, settled there), kept as it is read, up to
    :data:`_CODES_KEPT` characters."""

    def __missing__(self, point: int) -> str:
        if len(self) >= _CODES_KEPT:
            self.clear()
        code = self[point] = _char_code(chr(point))
        return code


#: How many characters' codes :data:`_CHAR_CODES` keeps: a text of every script on its page.
_CODES_KEPT = 16_384
_CHAR_CODES = _CharCodes()


def _char_code(char: str) -> str:
    """``char``'s code alone (:func:`_text_classes`): ``M`` for a combining mark, which
    takes the class before it, ``X`` for a European terminator, which reads by the digits
    beside it, the character itself for a bracket."""
    kind = unicodedata.bidirectional(char)
    if kind == "NSM":
        return "M"
    if kind == "ET":
        return "X"
    if kind == "ON":
        return char if isinstance(_bracket(char), Bracket) else "n"
    return _BIDI_CODES.get(kind, "n")


@functools.cache
def _bracket(char: str) -> Bracket | CharClass:
    """``char`` (a neutral) as a paired bracket, or ``"neutral"``. Unicode pairs an opening
    punctuation mark that is mirrored with the nearest mirrored closing one after it (but
    :data:`_CROSSED`), a bracket with its canonical equivalent (U+2329 is U+3008):
    BidiBrackets.txt, which Python's unicodedata does not hold."""
    category = unicodedata.category(char)
    if category not in ("Ps", "Pe") or not unicodedata.mirrored(char):
        return "neutral"
    opening = char
    if category == "Pe":
        opening = _CROSSED.get(char, "")
        point = ord(char)
        while not opening and point > 0:
            point -= 1
            candidate = chr(point)
            if unicodedata.category(candidate) == "Ps" and unicodedata.mirrored(candidate):
                opening = candidate
    if not opening:
        return "neutral"
    return Bracket(unicodedata.normalize("NFC", opening), closes=category == "Pe")


def _sides(flat: Codes, line: Direction) -> Codes:
    """Each character of a line (``|``: an object that ends the bidi paragraph, which
    starts again after it) as a run reads it. A European
    number is a letter's after a left-to-right letter or the start of a left-to-right line
    (W7), an Arabic one after Arabic letters (W2), its percent sign then neutral (W5 joins it
    to European digits only). A pair of brackets (BD16) then takes a side, in order (rule N0):
    the line's when it holds the line's direction (a number counting as right to left); when
    it holds the other only, the side of the strong character before it (or the line's); else
    it stays neutral. So in ``نص (English)¹`` the brackets end the run and the "¹" (a
    letter's: W7 reads brackets as neutral) starts one of its own. Only numbers, brackets and
    objects are read one by one, found by searching the line's codes."""
    sos = "L" if line == "ltr" else "R"
    codes = flat
    settled: list[str] = []  # the codes as the W rules leave them, piece by piece
    done = 0  # where the codes not yet in settled start
    last = sos
    after = 0  # where the strong characters not yet read start
    marks: list[int] = []  # the places of the brackets and the objects
    for found in _UNSETTLED.finditer(codes):
        at, end, code = found.start(), found.end(), found.group()
        settled.append(codes[done:at])
        done = end
        if code[0] not in "ET":  # an object or a bracket
            marks.append(at)
            if code == "|":
                last, after = sos, end
                settled.append("|")
            else:
                settled.append("n")
            continue
        before = max(codes.rfind("R", after, at), codes.rfind("A", after, at),
                     codes.rfind("L", after, at))
        if before >= 0:  # the strong character last before the number
            last = codes[before]
        after = at
        if last == "L":  # W7
            settled.append("L" * (end - at))
        elif last == "A":  # W2
            settled.append(code.translate(_ARABIC_CODES))
        else:  # W5 for a terminator
            settled.append("E" * (end - at))
    settled.append(codes[done:])
    sided = "".join(settled)
    if len(marks) > codes.count("|"):  # most lines show no bracket
        pairs = _bracket_pairs(flat, marks)
        if pairs:
            sided = _pairs_sided(sided, pairs, sos)
    return sided


def _pairs_sided(codes: str, pairs: Sequence[tuple[int, int]], own: str) -> str:
    """``codes`` (:data:`_CODES`) with each pair of brackets (in the order of their opening
    ones) on its side (rule N0, :func:`_sides`): ``own``, the line's, or the other.
    Pairs nest or stand apart, so the brackets inside a pair are still neutral when it takes
    its side: what it holds is read from counts of each side's strong characters in the
    line as the W rules left it, taken once between each bracket and the next. Reading each
    pair's contents instead cost the line's length once per level of 62 nested pairs."""
    places = sorted(place for pair in pairs for place in pair)
    sides = codes.translate(_SIDE_CODES)  # "l": the letters' side, "r": the other
    letters, rtl = {places[0]: 0}, {places[0]: 0}  # counts from the first bracket
    for before, place in pairwise(places):
        letters[place] = letters[before] + sides.count("l", before, place)
        rtl[place] = rtl[before] + sides.count("r", before, place)
    own_counts, other_counts = (letters, rtl) if own == "L" else (rtl, letters)
    sided = list(codes)
    for opening, closing in pairs:
        if own_counts[closing] > own_counts[opening]:
            sided[opening] = sided[closing] = own
        elif other_counts[closing] > other_counts[opening]:
            sided[opening] = sided[closing] = _side_before(sided, opening, own)
    return "".join(sided)


#: The classes that take a bracket pair to each side (N0), as codes: a number's to the
#: right-to-left one (an object ends the search for one: ``|``).
_SIDES = {"L": "L", "R": "R", "A": "R", "N": "R", "E": "R", "|": "|"}
_SIDE_CODES = str.maketrans({"L": "l", "R": "r", "A": "r", "N": "r", "E": "r"})
def _side_before(codes: Sequence[str], at: int, own: str) -> str:
    """The side (``L`` or ``R``) of the last strong character before ``at`` in ``codes``
    (a bracket resolved before it counts), or the line's (``own``) at its start or after an
    object that ends it."""
    for index in range(at - 1, -1, -1):
        side = _SIDES.get(codes[index])
        if side is not None:
            return own if side == "|" else side
    return own


def _bracket_pairs(flat: Codes, places: Iterable[int] | None = None) -> list[tuple[int, int]]:
    """The places of each pair of brackets (BD16), in the order of their opening ones: a
    closing bracket pairs with the nearest open one of its kind, closing those opened after
    it; none pairs across an object that ends the bidi paragraph, nor past
    :data:`_BRACKET_DEPTH`. Only ``places`` are read (in order): those of the brackets and
    objects, which the W rules found (when None, found here)."""
    pairs: list[tuple[int, int]] = []
    stack: list[tuple[str, int]] = []
    full = False
    if places is None:
        places = [at for at, code in enumerate(flat) if code not in _CLASS_CODES]
    for at in places:
        kind = _bracket(flat[at]) if flat[at] != "|" else None
        if kind is None:
            stack, full = [], False
        elif isinstance(kind, Bracket) and not full:
            if not kind.closes:
                full = len(stack) == _BRACKET_DEPTH
                if full:
                    stack.clear()
                else:
                    stack.append((kind.opening, at))
                continue
            for depth in range(len(stack) - 1, -1, -1):
                if stack[depth][0] == kind.opening:
                    pairs.append((stack[depth][1], at))
                    del stack[depth:]
                    break
    return sorted(pairs)


@dataclass
class NumberContext:
    """A walk over a line's texts and boxes (either direction), in order, that gives a
    European number the Arabic letters its box lost (the module's docstring): what the line
    read last of its strong characters, and whether the box being read (one text of
    WeasyPrint's, which Pango reads alone) holds one yet."""

    #: The code of the strong class last read (``R``, ``A``, ``L``): None at the line's start
    #: or after an object that ends the bidi paragraph (a line break), which the digits after
    #: it read against (sos).
    last: str | None = None
    #: Whether the text box being read holds a strong character yet.
    box_strong: bool = False

    def text(self, text: str) -> str:
        """``text``, read next in the current box, with an ALM before its first European
        digit when the line reads Arabic letters last there and the box no strong character."""
        codes = _text_classes(text)
        if self.last == "A" and not self.box_strong:
            first = _NUMBER_OR_STRONG.search(codes)
            if first is not None and first.group() in "ET":
                text = text[:first.start()] + ALM + text[first.start():]
                self.box_strong = True
        self.read(codes)
        return text

    def read(self, codes: Codes) -> None:
        """Read characters that take no mark (a text's, once marked, or an object's): the
        last strong one is what counts."""
        last = max(codes.rfind("R"), codes.rfind("A"), codes.rfind("L"))
        if last >= 0:
            self.last = codes[last]
            self.box_strong = True

    def boundary(self) -> None:
        """An element starts or ends: the next text is a box of its own."""
        self.box_strong = False

    def object(self, classes: Codes | None) -> None:
        """An object of the line, a box of its own: what it shows read (a citation's digits, a
        cross-reference's name), or None for one that ends the bidi paragraph."""
        self.boundary()
        if classes is None:
            self.last = None
        else:
            self.read(classes)
        self.boundary()


# ------------------------------------------------------------------ the report's inlines

#: Inlines whose text the line reads as text: a text, and elements written around their text
#: (boxes a run may hold whole).
_READ = (Text, SoftBreak, Anchor, Emph, Strong, Strike, Styled, Code, Link)
#: Elements written the same cut in two: a span may start or end inside one.
_CUTTABLE = (Emph, Strong, Strike)
#: Elements written around their children: read piece by piece (a citation inside counts).
_WRAPPERS = (Emph, Strong, Strike, Styled, Link)
#: Objects read as the markup the writer writes for them, by the author's reading
#: (:func:`_tree_classes`): a picture is one neutral, a cross-reference the name it shows.
_OBJECTS = (Image, Math, CrossRef)

Run: TypeAlias = tuple[Inline, ...]
#: The markup the writer writes for an object of :data:`_OBJECTS` (what it shows: a picture,
#: an image's fallback text, "Figure 1" in the document's words, a formula's source).
Written = Callable[[Inline], str]


def held_line_runs(runs: Sequence[Run], written: Written, line: Direction,
                   preceding: Mapping[str, Direction] | None = None,
                   ) -> list[Run | HeldRun[Run]]:
    """``runs`` (:func:`~renderers.writers.common.joined_runs` of a ``line``) with each run
    that reads against the line and spans several of them as one :class:`HeldRun`, each
    European number after Arabic letters in another box marked (:class:`NumberContext`); a
    left-to-right line without right-to-left text as it is. ``preceding``: the citation runs
    after text reading against their line
    (:func:`~renderers.writers.common.preceding_directions`)."""
    if line == "ltr" and not has_right_to_left(plain_text(_joined(runs))):
        return list(runs)
    reading = _ReportLine(written, line, preceding or {})
    return held_runs(reading.numbered(runs, NumberContext()), reading.classes, reading.cut,
                     line)


@dataclass(frozen=True)
class _ReportLine:
    """The report's reading of a line: its inlines as boxes, its objects as written."""

    written: Written
    #: The line's direction, which a citation is held apart from or read in
    #: (:meth:`cite_classes`).
    line: Direction
    #: A citation run's anchor → the direction of the text before it, where that reads
    #: against its line (:func:`~renderers.writers.common.preceding_directions`).
    preceding: Mapping[str, Direction]
    #: id(object) → its classes: an object is written and read once a line (an image's
    #: markup holds its bytes).
    objects: dict[int, Codes | None] = field(default_factory=dict)
    #: The ids of a citation run's inlines → its classes: read once a line, not once for
    #: its numbers (:meth:`numbered`) and again for its runs.
    cites: dict[tuple[int, ...], Codes] = field(default_factory=dict)

    def classes(self, run: Run) -> Codes | None:
        """How the line's bidi algorithm sees each character ``run`` shows; None for an
        object that ends a run. A citation reads as :meth:`cite_classes` says, inside emphasis
        too (as the author's reading counts one inside ``<b>``)."""
        node = run[0]
        if isinstance(node, Text) and len(run) == 1:  # most boxes: what plain_text reads
            return _text_classes(node.text)
        if all(isinstance(node, Cite | FootnoteRef) for node in run):
            key = tuple(map(id, run))  # the document's inlines: alive while the line is
            if key not in self.cites:
                self.cites[key] = self.cite_classes(run)
            return self.cites[key]
        if isinstance(node, _OBJECTS):
            if id(node) not in self.objects:
                markup = lxml.html.fragment_fromstring(self.written(node))
                self.objects[id(node)] = _tree_classes(markup)
            return self.objects[id(node)]
        if not isinstance(node, _READ):
            return None
        if isinstance(node, _WRAPPERS):
            return "".join(self.wrapped_classes(node, []))
        return _text_classes(plain_text(run))

    def cite_classes(self, run: Run) -> Codes:
        """A citation run as the line reads it: one neutral when it is held apart from this
        line (:func:`~renderers.writers.common.cite_direction`: an isolate), else what it
        shows, as the author's reading reads its markup (:func:`_tree_object`); a note's
        number is one digit. Read as a digit (or as one neutral by its apartness from a
        right-to-left line, whatever the line), "(مؤلف, 2024)" after "English words" joined
        the English run of a right-to-left line, which its Arabic letters end."""
        cites = [node for node in run if isinstance(node, Cite)]
        if cites and cite_direction(cites, self.line, self.preceding.get(cites[0].anchor)):
            return "n"
        return "".join(_text_classes(cite_shown(node)) if isinstance(node, Cite) else "E"
                       for node in run)

    def wrapped_classes(self, node: Inline, out: list[Codes]) -> list[Codes]:
        """``out`` with what the element ``node`` shows, piece by piece (:meth:`inner_classes`),
        an element inside it read into the same list: nested emphasis read level by level
        copied every level's classes once more (about 4x as long as the rest of the line)."""
        for piece in _pieces(node):
            if len(piece) == 1 and isinstance(piece[0], _WRAPPERS):
                self.wrapped_classes(piece[0], out)
            else:
                out.append(self.inner_classes(piece))
        return out

    def inner_classes(self, run: Run) -> Codes:
        """What ``run``, inside an element read as text, shows: an object that would end a
        run (a line break, raw markup, a display formula) is one neutral there, as in the
        author's reading (:func:`_inner_classes`)."""
        classes = self.classes(run)
        return "n" if classes is None else classes

    def numbered(self, runs: Sequence[Run], context: NumberContext) -> list[Run]:
        """``runs`` with each text read through ``context`` (written in the HTML text of the
        text before it, a code's and an element's children each in boxes of their own)."""
        out: list[Run] = []
        for run in runs:
            node = run[0]
            if len(run) == 1 and isinstance(node, Text):
                text = context.text(node.text)
                out.append(run if text == node.text else (Text(text),))
            elif len(run) == 1 and isinstance(node, SoftBreak):
                context.read(_text_classes(plain_text(run)))
                out.append(run)
            elif len(run) == 1 and isinstance(node, (Code, *_WRAPPERS)):
                context.boundary()
                if isinstance(node, Code):
                    text = context.text(node.text)
                    node = node if text == node.text else replace(node, text=text)
                else:
                    pieces = _pieces(node)
                    children = self.numbered(pieces, context)
                    if children != pieces:
                        node = replace(node, children=_joined(children))
                context.boundary()
                out.append((node,))
            else:
                context.object(self.classes(run))
                out.append(run)
        return out

    def cut(self, run: Run, offset: int) -> tuple[Run, Run] | None:
        """``run``, a text or an emphasis, cut in two ``offset`` characters into what it
        shows (:meth:`classes`); None when it is neither or the place is at its edge or
        inside something that cannot be cut."""
        node = run[0]
        if len(run) != 1 or not isinstance(node, (Text, *_CUTTABLE)):
            return None
        if not 0 < offset < len(self.classes(run) or ()):
            return None
        halves = self.cut_node(node, offset)
        return None if halves is None else ((halves[0],), (halves[1],))

    def cut_node(self, node: Inline, offset: int) -> tuple[Inline, Inline] | None:
        """``node`` (a text or an element of :data:`_CUTTABLE`) cut ``offset`` characters
        in."""
        if isinstance(node, Text):
            return Text(node.text[:offset]), Text(node.text[offset:])
        if not isinstance(node, _CUTTABLE):
            return None
        pieces = _pieces(node)
        for index, piece in enumerate(pieces):
            size = len(self.inner_classes(piece))
            if offset == 0 and size:  # what shows nothing (an anchor) stays before the cut
                return (replace(node, children=_joined(pieces[:index])),
                        replace(node, children=_joined(pieces[index:])))
            if offset < size:  # a piece of two characters or more: one inline
                halves = self.cut_node(piece[0], offset)
                if halves is None:
                    return None
                return (replace(node, children=(*_joined(pieces[:index]), halves[0])),
                        replace(node, children=(halves[1], *_joined(pieces[index + 1:]))))
            offset -= size
        return None


def _pieces(node: Inline) -> list[Run]:
    """The runs inside an element written around its children, as the writer holds them
    (:func:`~renderers.writers.common.joined_runs`: a citation with those joined to it)."""
    return list(joined_runs(node.children)) if isinstance(node, _WRAPPERS) else [(node,)]


def _joined(pieces: Sequence[Run]) -> Run:
    """The inlines of ``pieces`` one after the other."""
    return tuple(node for piece in pieces for node in piece)


# ------------------------------------------------------------------ the author's markup

#: Elements of the author's read as their text: boxes a run may hold whole. Any other element
#: but a picture (a block, a line break) is an object that ends a run.
_TREE_READ = frozenset({
    "a", "abbr", "b", "cite", "code", "del", "dfn", "em", "i", "ins", "kbd", "mark", "q", "rp",
    "rt", "ruby", "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "time", "tt",
    "u", "var",
})  # fmt: skip
#: Those of them written the same cut in two (the report's :data:`_CUTTABLE`, and a span): a
#: cut one keeps its attributes on both halves, its ``id`` on the first.
_TREE_CUTTABLE = frozenset({"b", "del", "em", "i", "s", "span", "strike", "strong"})
#: Isolates without a ``dir``: neutral objects, as an element with one is.
_TREE_ISOLATES = frozenset({"bdi", "bdo"})
#: Pictures and controls, each one box of the line: one neutral, as the bidi algorithm sees
#: an object (U+FFFC) in Chromium and Typst: it joins no run and ends none.
_TREE_PICTURES = frozenset({
    "audio", "button", "canvas", "embed", "iframe", "img", "input", "math", "meter", "object",
    "picture", "progress", "select", "svg", "textarea", "video",
})  # fmt: skip
#: Elements that show nothing: they neither join nor end a run.
_TREE_SILENT = frozenset({"style", "wbr"})

#: A box of the author's line: a text, or an element (its tail a box of its own).
TreeBox: TypeAlias = "str | HtmlElement"


def hold_line_runs(element: HtmlElement, line: Direction) -> None:
    """Hold each run of ``element``'s own content (a ``line``; its child elements' content is
    theirs) that reads against the line and spans several boxes in a span of its direction,
    an element at either end cut there, and mark each European number after Arabic letters
    in another box (:class:`NumberContext`); a left-to-right line without right-to-left text
    is left alone. An element left whole is the same object after."""
    if line == "ltr" and not has_right_to_left(element.text_content()):
        return
    _tree_numbered(element, NumberContext())
    shown = held_runs(_items(element), _tree_classes, _tree_cut, line)
    if not any(isinstance(part, HeldRun) for part in shown):
        return
    element.text = None
    for child in list(element):
        child.tail = None
        element.remove(child)
    for part in shown:
        if isinstance(part, HeldRun):
            span = element.makeelement("span", {"dir": part.direction})
            _fill(span, part.runs)
            _fill(element, (span,))
        else:
            _fill(element, (part,))


def _items(element: HtmlElement) -> list[TreeBox]:
    """``element``'s content in order: its text, each child and the child's tail."""
    items: list[TreeBox] = [element.text] if element.text else []
    for child in element:
        items.append(child)
        if child.tail:
            items.append(child.tail)
    return items


def _fill(parent: HtmlElement, items: Sequence[TreeBox]) -> None:
    """Append ``items`` to ``parent``'s content (an element moves there without its tail)."""
    for item in items:
        if not isinstance(item, str):
            item.tail = None
            parent.append(item)
        elif len(parent):
            parent[-1].tail = (parent[-1].tail or "") + item
        else:
            parent.text = (parent.text or "") + item


def _tree_classes(box: TreeBox) -> Codes | None:
    """How the line's bidi algorithm sees each character ``box`` shows (a citation as its
    text, an isolate, a picture or an inline formula as one neutral); None for an
    object that ends a run (a line break, a block, a display formula), which inside an
    element read as text is one neutral there (:func:`_inner_classes`)."""
    if isinstance(box, str):
        return _text_classes(box)
    seen = _tree_object(box)
    if seen == _AS_TEXT:
        return "".join(map(_inner_classes, _items(box)))
    return seen


#: What :func:`_tree_object` says of an element read as its text: never codes (no code but
#: ``n`` is a lower-case letter).
_AS_TEXT = "text"


def _tree_object(element: HtmlElement) -> Codes | None:
    """How the line sees ``element``: :data:`_AS_TEXT` when it reads what the element shows,
    else as an object (as :func:`_tree_classes` says)."""
    tag = element.tag
    if not isinstance(tag, str) or tag in _TREE_SILENT:  # a comment, a style
        return ""
    if element.get("dir") is not None or tag in _TREE_ISOLATES:
        return "n"
    if is_citation(element):  # not held apart: what it shows (the report's cite_classes)
        return _text_classes(element.text_content())
    classes = (element.get("class") or "").split()
    if tag == "math" or (tag == "span" and "math" in classes):  # a formula (html/math.py)
        return None if "display" in classes or element.get("display") == "block" else "n"
    if tag in _TREE_PICTURES:
        return "n"
    return _AS_TEXT if tag in _TREE_READ else None


def _tree_numbered(element: HtmlElement, context: NumberContext) -> None:
    """Read ``element``'s content (its text, its children, their tails) through ``context``,
    which marks its texts in place; an element read as text is read inside."""
    if element.text:
        element.text = context.text(element.text)
    for child in element:
        seen = _tree_object(child)
        if seen == _AS_TEXT:
            context.boundary()
            _tree_numbered(child, context)
            context.boundary()
        else:
            context.object(seen)
        if child.tail:
            child.tail = context.text(child.tail)


def _inner_classes(item: TreeBox) -> Codes:
    """What ``item``, inside an element read as text, shows: an object is one neutral."""
    classes = _tree_classes(item)
    return "n" if classes is None else classes


def _tree_cut(box: TreeBox, offset: int) -> tuple[TreeBox, TreeBox] | None:
    """``box``, a text or an element of :data:`_TREE_CUTTABLE`, cut ``offset`` characters
    into what it shows; None when the place is inside something that cannot be cut. The
    halves are new: ``box`` stays as it was."""
    if isinstance(box, str):
        return box[:offset], box[offset:]
    if box.tag not in _TREE_CUTTABLE or box.get("dir") is not None or is_citation(box):
        return None
    items = _items(box)
    for index, item in enumerate(items):
        size = len(_inner_classes(item))
        if offset == 0 and size:  # what shows nothing (an anchor, a style) stays before
            return _halves(box, items[:index], items[index:])
        if offset < size:
            halves = _tree_cut(item, offset)
            if halves is None:
                return None
            return _halves(box, [*items[:index], halves[0]], [halves[1], *items[index + 1:]])
        offset -= size
    return None


def _halves(element: HtmlElement, first: list[TreeBox],
            second: list[TreeBox]) -> tuple[HtmlElement, HtmlElement]:
    """Two copies of ``element`` holding ``first`` and ``second``, its attributes on both but
    its ``id`` on the first only. An element still in the tree is copied, a half made by a
    cut inside it (which has no parent) moved."""
    made = []
    for items, attributes in ((first, dict(element.attrib)),
                              (second, {k: v for k, v in element.attrib.items() if k != "id"})):
        half = element.makeelement(element.tag, attributes)
        _fill(half, [item if isinstance(item, str) or item.getparent() is None
                     else copy.deepcopy(item) for item in items])
        made.append(half)
    return made[0], made[1]
