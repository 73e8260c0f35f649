"""The ids pandoc gives the headings of the Markdown output, so that the writer keeps every id
of it unique.

CommonMark has no way to name a heading: a reader makes its id from its text, and the two
readers the output is written for differ. pandoc's ``markdown`` (``auto_identifiers``) joins
the words of the text by hyphens, keeps letters, digits and ``_-.``, starts at the first letter
("section" when nothing is left), reads ``--`` in text as a dash and keeps the labels of
footnote references; a second heading of one id gets the first free ``-1``, ``-2`` ….
``gfm`` (``gfm_auto_identifiers``) reads its input composed (NFC), turns each space into a
hyphen, keeps letters, digits, marks and ``_-``, drops footnote references, gives an empty id
none, and counts the headings of one id without looking at the ids others took (``a``,
``a 1``, ``a`` are ``a``, ``a-1``, ``a-1``).
Raw HTML (an ``<a id>`` anchor, an HTML heading) is no part of either: its ids are not counted.
citerender's own markdown reader, reading the output back, makes its ids as
:class:`renderers.text.HeadingIds` does (:func:`renderers.text.slugify`, NFKC, ``-`` runs
joined and trimmed; never a writer's own anchor such as ``sources``): an id all three give a
heading needs no more than ``## text``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import NamedTuple

from renderers.text import RESERVED_ANCHOR, slugify

#: What pandoc's ``smart`` extension makes a dash or an ellipsis in text (not in code).
_SMART = re.compile(r"-{2,3}|\.\.\.")
_SPACES = re.compile(r"\s+")


@dataclass
class IdText:
    """The text each reader makes a heading's id from, gathered as the heading is written."""

    markdown: list[str] = field(default_factory=list)
    gfm: list[str] = field(default_factory=list)

    def text(self, text: str, *, smart: bool = True) -> None:
        """Text shown in the heading (``smart``: text, where ``markdown`` reads ``--`` as a
        dash; else code or a formula's TeX, kept as it is)."""
        dashes = smart and ("--" in text or "..." in text)
        self.markdown.append(_SMART.sub("\u2013", text) if dashes else text)
        self.gfm.append(text)

    def label(self, label: str) -> None:
        """A footnote reference's label: only ``markdown`` keeps it (``Note[^1]``: ``note1``)."""
        self.markdown.append(label)


def markdown_id(text: str) -> str:
    """The id pandoc's ``markdown`` gives a first heading of ``text``."""
    ident = "-".join(_NOT_MARKDOWN_ID.sub("", text.lower()).split())
    start = next((i for i, c in enumerate(ident) if c.isalpha()), len(ident))
    return ident[start:] or "section"


def gfm_id(text: str) -> str:
    """The id pandoc's ``gfm`` gives a first heading of ``text`` ("" for none)."""
    # gfm composes its input (NFC) first: "e" and a combining acute is "é" to it
    composed = unicodedata.normalize("NFC", text)
    kept = _NOT_GFM_ID.sub(_gfm_mark, _SPACES.sub(" ", composed.strip()).lower())
    return kept.replace(" ", "-")


#: Letters, digits and ``_`` (``\w``), white space and ``.-`` stay in a ``markdown`` id.
_NOT_MARKDOWN_ID = re.compile(r"[^\w\s.\-]")
#: ``gfm`` keeps ``\w``, white space and ``-``, and marks and connectors (:func:`_gfm_mark`).
_NOT_GFM_ID = re.compile(r"[^\w\s\-]")


def _gfm_mark(match: re.Match[str]) -> str:
    """A combining mark or a connector (``‿``) stays in a ``gfm`` id; other punctuation not."""
    char = match.group(0)
    return char if unicodedata.category(char) in ("Mn", "Mc", "Me", "Pc") else ""


class AutoIds(NamedTuple):
    """A heading's ids in both of pandoc's readers (``gfm`` "" for none) and citerender's
    (``ours``); ``gfm_taken``: ``gfm``'s count gives it an id an earlier heading has."""

    markdown: str
    gfm: str
    gfm_taken: bool
    markdown_base: str
    gfm_base: str
    suffix: int  # of the markdown id (0: none)
    ours: str
    ours_base: str
    ours_suffix: int

    def ids(self) -> tuple[str, ...]:
        """The ids the heading has in either reader."""
        return tuple(ident for ident in (self.markdown, self.gfm) if ident)

    def is_only(self, ident: str) -> bool:
        """Whether ``ident`` is the heading's id in both of pandoc's readers."""
        return self.markdown == ident == self.gfm

    def read_back(self, ident: str) -> bool:
        """Whether ``ident`` is the heading's id in every reader: pandoc's two and
        citerender's own, so that ``## text`` keeps an id the output must keep."""
        return self.is_only(ident) and self.ours == ident


class _Count:
    """The ids one reader gave the headings so far: a base already taken gets the first free
    ``-1``, ``-2`` … (never one ``skip`` matches)."""

    def __init__(self, skip: re.Pattern[str] | None = None) -> None:
        self._taken: set[str] = set()
        self._skip = skip
        #: per base, the least suffix that may be free: every lower one is taken (ids are
        #: never freed), so 20,000 headings of one text cost no quadratic search
        self._free: dict[str, int] = {}

    def next(self, base: str) -> tuple[str, int]:
        """The id and suffix (0: none) a next heading of ``base`` gets."""
        if not self._unusable(base):
            return base, 0
        suffix = self._free.get(base, 1)
        while self._unusable(f"{base}-{suffix}"):
            suffix += 1
        return f"{base}-{suffix}", suffix

    def add(self, ident: str, base: str, suffix: int) -> None:
        self._taken.add(ident)
        if suffix:
            self._free[base] = suffix + 1

    def _unusable(self, ident: str) -> bool:
        return ident in self._taken or (self._skip is not None and bool(self._skip.match(ident)))


class PandocIds:
    """The headings' ids in document order, as the readers count them: :meth:`next` is the
    ids of a heading written next, :meth:`add` counts it (a heading written as HTML is not)."""

    def __init__(self) -> None:
        self._markdown = _Count()
        self._ours = _Count(RESERVED_ANCHOR)
        self._gfm: set[str] = set()
        self._gfm_counts: dict[str, int] = {}

    def next(self, text: IdText) -> AutoIds:
        base = markdown_id("".join(text.markdown))
        ident, suffix = self._markdown.next(base)
        gfm_text = "".join(text.gfm)
        gfm_base = gfm_id(gfm_text)
        count = self._gfm_counts.get(gfm_base)
        gfm = gfm_base if count is None else f"{gfm_base}-{count + 1}"
        ours_base = slugify(gfm_text)  # citerender reads the text gfm shows
        ours, ours_suffix = self._ours.next(ours_base)
        return AutoIds(ident, gfm, gfm in self._gfm, base, gfm_base, suffix, ours, ours_base,
                       ours_suffix)

    def add(self, ids: AutoIds) -> None:
        self._markdown.add(ids.markdown, ids.markdown_base, ids.suffix)
        self._ours.add(ids.ours, ids.ours_base, ids.ours_suffix)
        count = self._gfm_counts.get(ids.gfm_base)
        self._gfm_counts[ids.gfm_base] = 0 if count is None else count + 1
        if ids.gfm:
            self._gfm.add(ids.gfm)
