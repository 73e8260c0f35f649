"""Where a heading line's trailing pandoc attribute block starts (``## Results {#results}``).

The one home of the grammar: the markdown reader takes the block off the heading
(:mod:`renderers.readers.heading_attrs`, which reads what it says) and the scanner marks the
tokens inside it as no citation (:attr:`citations.codemap.MarkdownSpans.heading_attributes`),
so both audits say the same of ``## Costs {title="[[S:2]]"}``. It lives here because ``citations``
imports nothing of ``renderers``.

The grammar is pandoc 2.17's: ``{`` then, apart by optional spaces or tabs, ``#id``,
``.class``, ``key=value`` (a value ``"quoted"``, ``'quoted'`` or bare up to a space or ``}``)
and ``-``, then ``}`` and the end of the line. An identifier starts with a letter and goes on
with letters, numbers and ``-_:.``. Each piece is read possessively, as pandoc's parser reads it
(never backtracking), and a quoted value that does not close is read as a bare one. The block
is the one starting at the first unescaped ``{`` from which one runs to the end.

Why a walk, not one regex tried from each ``{``: a try reads up to where it fails, and tries
from the ``{``s inside one long value (``{k={k={k=…`` then `` x}``) each read that value again;
20,000 of them took 33 s. Here every try stops where an earlier one failed or succeeded from
the same place, and a bare value's end is found once for every start inside it: linear in the
line, for the first block start (the reader's) and for all of them (:func:`block_starts`, the
braces the Markdown writer escapes).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

__all__ = ["ATTRIBUTE", "BARE", "IDENT", "QUOTED", "attribute_block_start", "block_starts"]

#: An identifier (an id, a class, a key): a letter, then letters, numbers and ``-_:.``. ``re``
#: cannot say "a letter": ``[^\W\d_]`` also takes a number that is no digit (``²``, ``Ⅻ``),
#: which pandoc's ``letter`` refuses, so the walk checks the first with ``str.isalpha``
#: (:func:`_identifier_end`); a block it found holds no other.
IDENT = r"[^\W\d_](?:[^\W_]|[-_:.])*+"
#: A quoted value (no space right after its opening quote; backslash escapes), or ``""``.
QUOTED = r"""(?:"(?!\s)(?:\\.|[^"\\])++"|'(?!\s)(?:\\.|[^'\\])++'|""|'')"""
#: A bare value: up to white space or ``}`` (backslash escapes).
BARE = r"""(?:\\.|[^\s}])*+"""
#: One attribute: ``#id``, ``.class``, ``-`` or ``key=value``.
ATTRIBUTE = rf"(?:[#.]{IDENT}|-|{IDENT}=(?:{QUOTED}|{BARE}))"

_IDENT_RE = re.compile(IDENT)
_QUOTED_RE = re.compile(QUOTED)
_BARE_RE = re.compile(BARE)
_SPACES_RE = re.compile(r"[ \t]*+")


def attribute_block_start(line: str) -> int | None:
    """The offset in ``line`` (a heading's last line, up to its end, no line break) of the
    ``{`` of the attribute block that ends it, or None when it ends in none. Spaces and tabs
    after the block are allowed; anything else after it is no block."""
    return next(_starts(line), None)


def block_starts(line: str) -> list[int]:
    """Every unescaped ``{`` of ``line`` from which an attribute block runs to its end, the
    first being :func:`attribute_block_start`'s: the braces to escape so that ``line`` ends in
    no block (a try reads only rightwards, so escaping one changes no other's outcome)."""
    return list(_starts(line))


def _starts(line: str) -> Iterator[int]:
    end = len(line.rstrip(" \t"))
    if not end or line[end - 1] != "}":
        return
    walk = _Walk(line, end)
    start = line.find("{")
    while 0 <= start < end:
        if not _escaped(line, start) and walk.runs_to_end(start + 1):
            yield start
        start = line.find("{", start + 1)


def _identifier_end(line: str, pos: int, end: int) -> int | None:
    """Where the identifier at ``pos`` ends (:data:`IDENT`, its first character a letter as
    pandoc's ``letter`` and ``str.isalpha`` have it), or None when none starts there."""
    name = _IDENT_RE.match(line, pos, end)
    return name.end() if name is not None and line[pos].isalpha() else None


def _escaped(text: str, at: int) -> bool:
    """Whether ``text[at]`` follows an odd run of backslashes (``\\{`` is a brace as text)."""
    before = at
    while before > 0 and text[before - 1] == "\\":
        before -= 1
    return (at - before) % 2 == 1


class _Walk:
    """The block grammar read from each candidate ``{`` of one line, sharing what earlier
    tries learnt: the places between attributes from which the rest failed or ran to the end
    (the grammar is deterministic, so any later try reaching one does the same) and the ends
    of bare values."""

    def __init__(self, line: str, end: int) -> None:
        self.line = line
        self.end = end  # where the line's trailing spaces start: the block's ``}`` is before
        self.failed: set[int] = set()
        self.ran: set[int] = set()
        self.bare_starts: list[int] = []  # sorted; bare value [start, end) spans read so far
        self.bare_ends: list[int] = []

    def runs_to_end(self, pos: int) -> bool:
        """Whether attributes then ``}`` run from ``pos`` (right after a ``{``) to the end."""
        line, end, failed, ran = self.line, self.end, self.failed, self.ran
        path: list[int] = []
        ok = False
        while pos not in failed:
            if pos in ran:
                ok = True
                break
            path.append(pos)
            pos = _SPACES_RE.match(line, pos, end).end()  # type: ignore[union-attr]
            if pos in failed or pos in ran:
                ok = pos in ran
                break
            path.append(pos)
            if pos < end and line[pos] == "}":
                ok = pos == end - 1
                break
            after = self._attribute(pos) if pos < end else None
            if after is None:
                break
            pos = after
        (ran if ok else failed).update(path)
        return ok

    def _attribute(self, pos: int) -> int | None:
        """Where the attribute at ``pos`` ends (its first reading, as the regex alternation
        ``#id | .class | - | key=value`` takes it), or None when none starts there."""
        line, end = self.line, self.end
        char = line[pos]
        if char in "#.":
            return _identifier_end(line, pos + 1, end)
        if char == "-":
            return pos + 1
        key = _identifier_end(line, pos, end)
        if key is None or key >= end or line[key] != "=":
            return None
        value = key + 1
        quoted = _QUOTED_RE.match(line, value, end)
        return quoted.end() if quoted else self._bare_end(value)

    def _bare_end(self, pos: int) -> int:
        """Where a bare value starting at ``pos`` (right after ``=``) ends. A start inside a
        value read before ends where it ends: a character after ``=`` never follows an
        escaping backslash, so both readings split the rest into the same pieces."""
        index = bisect.bisect_right(self.bare_starts, pos) - 1
        if index >= 0 and pos < self.bare_ends[index]:
            return self.bare_ends[index]
        stop = _BARE_RE.match(self.line, pos, self.end).end()  # type: ignore[union-attr]
        if stop > pos:
            self.bare_starts.insert(index + 1, pos)
            self.bare_ends.insert(index + 1, stop)
        return stop
