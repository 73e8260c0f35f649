"""Names and titles that read the other way than their entry or citation: each in an isolate.

A style joins an item's names, title, container and publisher with its own punctuation,
digits and words. Where one of them reads against the text around it, the bidi algorithm
joined it to those neutrals: in an English document APA's "Al-Khwarizmi, M., & محمد, أحمد
(2022)." read "Al-Khwarizmi, M., & (2022) .محمد, أحمد" and its citation "(Al-Khwarizmi &
2022 ,محمد)"; the same, mirrored, for a Latin name in an Arabic report. Held between isolate
marks (LRI or RLI … PDI), each reads in its own direction as one neutral to its line, in every
format: a browser, both PDF engines and LibreOffice honour the marks, and a text's direction
(:func:`~renderers.text.text_direction`, Unicode's rule P2) skips what they hold.

It is done where the variables become the style's text, once for every writer:

* :func:`mark_units` wraps each name (its parts, one number a name) and each variable of words
  of an item in unit spans (:func:`~renderers.styles.markup.unit`) — only for an item with
  words reading against the document, so that every other entry is formatted as it was;
* :func:`isolate_units` turns the spans of the style's output into isolate marks for the units
  that read against ``base`` and drops the others' spans. ``base`` is what the text around them
  reads: a citation's (:func:`cite_base`; one whose own words read otherwise than its line is
  held apart by its writer, ``cite_direction``), a note's (:func:`own_base`), an entry's
  (:func:`entry_base`).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from citations.model import NAME_FIELDS
from renderers.styles.markup import closing, opening, strip_marks, unit
from renderers.text import ISOLATES, POP_ISOLATE, Direction, text_direction

#: The variables written in words that a style prints as they are given (numbers, dates,
#: identifiers and URLs read the same either way, or are held by the writers).
WORD_VARIABLES = ("title", "container-title", "collection-title", "publisher",
                  "publisher-place", "archive_location")
#: A unit span: its number, then its text (units never nest).
_UNIT = re.compile(f"{opening('unit')}(.)(.*?){closing('unit')}", re.DOTALL)
#: The bidi classes of each direction's strong characters.
_STRONG: dict[Direction, frozenset[str]] = {"ltr": frozenset({"L"}),
                                            "rtl": frozenset({"R", "AL"})}
#: The marks of a citation item's span: the parts of two items' names are never one name.
_ITEMS = frozenset((opening("item"), closing("item")))


def mark_units(item: dict[str, Any], direction: Direction) -> dict[str, Any]:
    """``item`` (CSL-JSON) with its names and :data:`WORD_VARIABLES` in unit spans when any of
    them reads against ``direction`` (the document's) by its first strong character; else
    ``item`` itself. Each name's parts share a number, distinct from every other unit's."""
    names = {role: item[role] for role in NAME_FIELDS if item.get(role)}
    words = {key: item[key] for key in WORD_VARIABLES if isinstance(item.get(key), str)}
    texts = [*words.values(), *(str(part) for role in names.values() for name in role
                                for part in name.values())]
    if not any(_against(text, direction) for text in texts):
        return item
    marked = dict(item)
    number = 0
    for role, people in names.items():
        marked[role] = []
        for name in people:
            marked[role].append({key: unit(str(part), number) for key, part in name.items()})
            number += 1
    for key, value in words.items():
        marked[key] = unit(value, number)
        number += 1
    return marked


def _against(text: str, direction: Direction) -> bool:
    found = text_direction(text)
    return found is not None and found != direction


def entry_base(text: str, direction: Direction) -> Direction:
    """The direction a styled entry (the style's output ``text``) reads in, in a Sources list
    reading ``direction``: the list's when it reads left to right, else the entry's own by its
    first strong character (``EntryParts.formatted_direction``, which isolates a Latin entry
    of an Arabic list)."""
    return "ltr" if direction == "ltr" else own_base(text, direction)


def own_base(text: str, direction: Direction) -> Direction:
    """The direction the style's output ``text`` reads in by its first strong character (else
    ``direction``): a note style's note, which is a paragraph of its own
    (``citation_note_direction``), and an entry of a right-to-left list."""
    return text_direction(strip_marks(text)) or direction


def cite_base(text: str, direction: Direction) -> Direction:
    """The direction a styled citation (the style's output ``text``) reads in, in a document
    reading ``direction``: the document's when the citation holds a letter of it ("(Smith &
    محمد, 2022)" in English, "(سميث & Smith, 2022)" in Arabic), else its own, as it read
    before (an Arabic author's "(مؤلف, 2024)" in English, "(IEA, 2024)" in Arabic: held apart
    whole by ``cite_direction``)."""
    kinds = _STRONG[direction]
    if any(unicodedata.bidirectional(char) in kinds for char in strip_marks(text)):
        return direction
    return "rtl" if direction == "ltr" else "ltr"


def isolate_units(text: str, base: Direction) -> str:
    """``text`` (the style's output) with each unit that reads against ``base`` between
    isolate marks of its own direction and the other units' spans dropped. The parts of one
    name (its number) with nothing strong between them — "محمد" ", " "أحمد" — are one unit."""
    if opening("unit") not in text:
        return text
    out: list[str] = []
    position = 0
    spans = list(_UNIT.finditer(text))
    index = 0
    while index < len(spans):
        first = last = spans[index]
        index += 1
        while (index < len(spans) and spans[index].group(1) == first.group(1)
               and _joins(text[last.end():spans[index].start()])):
            last = spans[index]
            index += 1
        out.append(text[position:first.start()])
        whole = _UNIT.sub(r"\2", text[first.start():last.end()])
        own = text_direction(strip_marks(whole))
        out.append(whole if own is None or own == base
                   else ISOLATES[own] + whole + POP_ISOLATE)
        position = last.end()
    out.append(text[position:])
    return "".join(out)


def _joins(between: str) -> bool:
    """Whether two parts of a name with ``between`` them are one name: nothing strong between
    them, and no end of a citation item."""
    return text_direction(strip_marks(between)) is None and _ITEMS.isdisjoint(between)
