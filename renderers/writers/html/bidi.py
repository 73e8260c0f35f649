"""Left-to-right runs of a right-to-left line that span several inline boxes: held in a span.

WeasyPrint sets the inline boxes of a right-to-left line from the right, one after the other,
and leaves the bidi algorithm to Pango inside each box's text. A left-to-right run that spans
several boxes was therefore set box by box from the right: the superscript after "中文摘要"
stood at the left of the words, where the bidi algorithm (and Chromium, and Typst) puts it at
their right end, its digits taking the direction of the letters before them (UAX #9, rule W7);
in "English¹ 2024" the year stood left of the mark and the mark left of "English"; the mark
after ``**English**`` or a link's text stood left of it. In a span with ``dir="ltr"``
WeasyPrint sets the boxes left to right. A browser isolates such a span, which changes nothing
when the span holds the whole run: from its first letter after the line's last right-to-left
character before it to its last letter or digit (a mark's digits count) before the next
right-to-left character or the line's end.

A citation that :func:`~renderers.writers.common.cite_direction` holds apart ("[1]", "(IEA,
2024)", "1, 2") is an isolate in the browser and a box in Typst: a neutral object, which joins
no run and ends none. Objects whose text the line's algorithm does not see as letters (images,
formulas, cross-references, raw markup, line breaks) end a run. A run that starts or ends
inside an element is held only where the element can be cut: emphasis, strong or struck text
is cut in two (``**نص English**[[S:1]]`` as ``<strong>نص </strong><span dir="ltr"><strong>
English</strong>``…), which looks the same; a link (it would be two links) or code (two boxes)
is not, and such a run is left as it was.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from renderers.document import (
    Anchor,
    Cite,
    Code,
    Emph,
    FootnoteRef,
    Inline,
    Link,
    SoftBreak,
    Strike,
    Strong,
    Styled,
    Text,
    plain_text,
)
from renderers.writers.common import cite_direction

#: A character as a run sees it: right to left (R, AL and Arabic digits, which end a run too),
#: a left-to-right letter, a European digit (left to right after a letter: W7), or neutral.
CharClass = Literal["rtl", "letter", "digit", "neutral"]
_CLASSES: dict[str, CharClass] = {"R": "rtl", "AL": "rtl", "AN": "rtl", "L": "letter",
                                  "EN": "digit"}
#: Inlines whose text the line reads as text: a text, and elements written around their text
#: (boxes a run may hold whole).
_READ = (Text, SoftBreak, Anchor, Emph, Strong, Strike, Styled, Code, Link)

#: Elements written the same cut in two: a span may start or end inside one.
_CUTTABLE = (Emph, Strong, Strike)

#: A place in a line's runs: the run's index and a character offset in its text.
Place = tuple[int, int]


@dataclass(frozen=True)
class HeldRun:
    """Runs held left to right in one ``dir="ltr"`` span: a left-to-right run of the line
    (texts cut at its ends)."""

    runs: tuple[tuple[Inline, ...], ...]


def held_ltr_runs(
    runs: Sequence[tuple[Inline, ...]],
) -> list[tuple[Inline, ...] | HeldRun]:
    """``runs`` (:func:`~renderers.writers.common.joined_runs` of a right-to-left line) with
    each left-to-right run that spans several of them as one :class:`HeldRun`, a text or an
    emphasis at either end cut where the run starts or ends."""
    runs = _cut_elements(list(runs))
    out: list[tuple[Inline, ...] | HeldRun] = []
    done: Place = (0, 0)
    for start, end in _ltr_runs(runs):
        if start[0] == end[0] or not (_cuttable(runs, start) and _cuttable(runs, end)):
            continue  # one box (Pango orders it), or a box the run enters or leaves inside
        out += _pieces(runs, done, start)
        out.append(HeldRun(tuple(_pieces(runs, start, end))))
        done = end
    out += _pieces(runs, done, (len(runs), 0))
    return out


def _ltr_runs(runs: Sequence[tuple[Inline, ...]]) -> Iterator[tuple[Place, Place]]:
    """Where each left-to-right run of the line starts (its first letter after right-to-left
    text or the line's start) and ends (after its last letter or digit), as places; the end's
    offset is in the run that holds that character."""
    rtl_before = True  # the line starts right to left
    start: Place | None = None
    end: Place = (0, 0)
    for index, run in enumerate(runs):
        classes = _classes(run)
        if classes is None:  # an object that ends a run
            if start is not None:
                yield start, end
            start = None
            continue
        for offset, kind in enumerate(classes):
            if kind == "rtl":
                if start is not None:
                    yield start, end
                start, rtl_before = None, True
            elif kind == "letter" and start is None and rtl_before:
                start, rtl_before = (index, offset), False
            if start is not None and kind in ("letter", "digit"):
                end = (index, offset + 1)
    if start is not None:
        yield start, end


def _classes(run: tuple[Inline, ...]) -> list[CharClass] | None:
    """How the line's bidi algorithm sees each character ``run`` shows; None for an object
    that ends a run. A mark of digits is one digit, a citation held apart one neutral."""
    if all(isinstance(node, Cite | FootnoteRef) for node in run):
        cites = [node for node in run if isinstance(node, Cite)]
        return ["neutral" if cites and cite_direction(cites, "rtl") else "digit"]
    if isinstance(run[0], _READ):
        return [_CLASSES.get(unicodedata.bidirectional(char), "neutral")
                for char in plain_text(run)]
    return None


def _cuttable(runs: Sequence[tuple[Inline, ...]], place: Place) -> bool:
    """Whether a span may start or end at ``place``: in a text, or at an element's edge."""
    index, offset = place
    if index >= len(runs) or offset == 0:
        return True
    run = runs[index]
    return isinstance(run[0], Text) or offset == len(_classes(run) or ())


def _pieces(runs: Sequence[tuple[Inline, ...]], start: Place,
            end: Place) -> Iterator[tuple[Inline, ...]]:
    """The runs from ``start`` to ``end``, a text cut where either falls inside it."""
    for index in range(start[0], min(end[0] + 1, len(runs))):
        run = runs[index]
        first = start[1] if index == start[0] else 0
        last = end[1] if index == end[0] else None
        if len(run) == 1 and isinstance(run[0], Text):
            text = run[0].text[first:last]
            if text:
                yield (Text(text),) if text != run[0].text else run
        elif first == 0 and last != 0:
            yield run


def _cut_elements(runs: list[tuple[Inline, ...]]) -> list[tuple[Inline, ...]]:
    """``runs`` with each emphasis that a left-to-right run of several boxes starts or ends
    inside cut in two there (from the line's end, so that each place stays where it was)."""
    places: set[Place] = set()
    for start, end in _ltr_runs(runs):
        ends = (start, end)
        if start[0] != end[0] and all(_cuttable(runs, p) or _cut(runs[p[0]], p[1]) for p in ends):
            places.update(p for p in ends if not _cuttable(runs, p))
    for index, offset in sorted(places, reverse=True):
        runs[index:index + 1] = [(half,) for half in _cut(runs[index], offset) or ()]
    return runs


def _cut(run: tuple[Inline, ...], offset: int) -> tuple[Inline, Inline] | None:
    """``run``, an emphasis, cut in two ``offset`` characters into its text; None when it is
    not one or the place is at its edge or inside something that cannot be cut."""
    node = run[0]
    if len(run) != 1 or not isinstance(node, _CUTTABLE):
        return None
    if not 0 < offset < len(plain_text(run)):
        return None
    return _cut_node(node, offset)


def _cut_node(node: Inline, offset: int) -> tuple[Inline, Inline] | None:
    """``node`` (a text or an element of :data:`_CUTTABLE`) cut ``offset`` characters in."""
    if isinstance(node, Text):
        return Text(node.text[:offset]), Text(node.text[offset:])
    if not isinstance(node, _CUTTABLE):
        return None
    children = node.children
    for index, child in enumerate(children):
        size = len(plain_text((child,)))
        if offset == 0 and size:  # what shows nothing (an anchor, a mark) stays before the cut
            return (replace(node, children=children[:index]),
                    replace(node, children=children[index:]))
        if offset < size:
            halves = _cut_node(child, offset)
            if halves is None:
                return None
            return (replace(node, children=(*children[:index], halves[0])),
                    replace(node, children=(halves[1], *children[index + 1:])))
        offset -= size
    return None
