"""Where a run of WordprocessingML text must be cut so that each run's ``w:rtl`` is right.

``w:rtl`` (ECMA-376 Part 1, §17.3.2.30) is more than a formatting flag: it makes the run's
neutral and weak characters (numbers aside) right to left, and it may not hold strong
left-to-right text, while a run without it should not hold strong right-to-left text. One run
per part was wrong both ways in Word: the spaces between the Latin words of an Arabic title,
marked ``w:rtl``, turned them round ("Energy Global"); the hyphens of a date in a run marked
``w:rtl`` after an Arabic label set it as "16-03-2024". LibreOffice ignores the flag (it runs
the bidi algorithm over the paragraph), so only Word, and this reading of the standard, tell
the difference: :func:`direction_pieces` gives each stretch of text the direction the bidi
algorithm would give it, and each stretch becomes a run of its own.
"""

from __future__ import annotations

import unicodedata

from renderers.text import Direction

#: The bidi classes of the strongly directional characters.
_STRONG: dict[str, Direction] = {"L": "ltr", "R": "rtl", "AL": "rtl"}


def direction_pieces(text: str, line: Direction) -> list[tuple[str, Direction]]:
    """``text`` in its stretches of one direction each, in order, for a line reading ``line``:
    letters by their script; a European digit by the letter before it (UAX #9 W2, W7: after
    Latin letters, or a LEFT-TO-RIGHT MARK, a left-to-right number; after Arabic letters part
    of the right-to-left text), an Arabic-Indic digit right to left, a combining mark as the
    character it follows; the neutrals between two stretches of one direction in it, the
    others (where the direction changes, at either end) in the line's (N1, N2). A text with
    no right-to-left character in a left-to-right line is one piece."""
    sides: list[Direction | None] = []
    last: Direction = line  # the direction of the last strong character (sos: the line's)
    for char in text:
        kind = unicodedata.bidirectional(char)
        if kind in _STRONG:
            last = _STRONG[kind]
            sides.append(last)
        elif kind == "EN":
            sides.append(last)
        elif kind == "AN":
            sides.append("rtl")
        elif kind == "NSM" and sides:
            sides.append(sides[-1])
        else:
            sides.append(None)
    resolved = _resolve_neutrals(sides, line)
    pieces: list[tuple[str, Direction]] = []
    start = 0
    for index in range(1, len(text) + 1):
        if index == len(text) or resolved[index] != resolved[start]:
            pieces.append((text[start:index], resolved[start]))
            start = index
    return pieces


def _resolve_neutrals(sides: list[Direction | None], line: Direction) -> list[Direction]:
    """Each neutral stretch in ``sides`` (None) the direction on both its sides when they are
    one, else the line's; the ends of the text count as the line's."""
    resolved: list[Direction] = []
    index = 0
    while index < len(sides):
        side = sides[index]
        if side is not None:
            resolved.append(side)
            index += 1
            continue
        end = index
        while end < len(sides) and sides[end] is None:
            end += 1
        before = resolved[-1] if resolved else line
        after = sides[end] if end < len(sides) else line
        resolved.extend([before if before == after else line] * (end - index))
        index = end
    return resolved
