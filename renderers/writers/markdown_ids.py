"""The ids pandoc gives the headings of the Markdown output, so that the writer keeps every id
of it unique.

CommonMark has no way to name a heading: a reader makes its id from its text, and the two
readers the output is written for differ. pandoc's ``markdown`` (``auto_identifiers``) joins
the words of the text by hyphens, keeps letters, digits and ``_-.``, starts at the first letter
("section" when nothing is left), reads ``--`` in text as a dash and keeps the labels of
footnote references; a second heading of one id gets the first free ``-1``, ``-2`` …. ``gfm``
(``gfm_auto_identifiers``) turns each space into a hyphen, keeps letters, digits, marks and
``_-``, drops footnote references, gives an empty id none, and counts the headings of one id
without looking at the ids others took (``a``, ``a 1``, ``a`` are ``a``, ``a-1``, ``a-1``).
Raw HTML (an ``<a id>`` anchor, an HTML heading) is no part of either: its ids are not counted.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

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
        self.markdown.append(_SMART.sub("\u2013", text) if smart else text)
        self.gfm.append(text)

    def label(self, label: str) -> None:
        """A footnote reference's label: only ``markdown`` keeps it (``Note[^1]``: ``note1``)."""
        self.markdown.append(label)


def markdown_id(text: str) -> str:
    """The id pandoc's ``markdown`` gives a first heading of ``text``."""
    kept = "".join(c for c in text.lower() if c.isspace() or c.isalnum() or c in "_-.")
    ident = "-".join(kept.split())
    start = next((i for i, c in enumerate(ident) if c.isalpha()), len(ident))
    return ident[start:] or "section"


def gfm_id(text: str) -> str:
    """The id pandoc's ``gfm`` gives a first heading of ``text`` ("" for none)."""
    return "".join(
        "-" if c.isspace() else c
        for c in _SPACES.sub(" ", text.strip()).lower()
        if c.isspace() or c.isalnum() or c in "_-"
        or unicodedata.category(c) in ("Mn", "Mc", "Me", "Pc")
    )


@dataclass(frozen=True)
class AutoIds:
    """A heading's ids in both readers (``gfm`` "" for none); ``gfm_taken``: ``gfm``'s count
    gives it an id an earlier heading has."""

    markdown: str
    gfm: str
    gfm_taken: bool
    _markdown_base: str
    _gfm_base: str
    _suffix: int

    def ids(self) -> frozenset[str]:
        """The ids the heading has in either reader."""
        return frozenset({self.markdown, self.gfm} - {""})


class PandocIds:
    """The headings' ids in document order, as both readers count them: :meth:`next` is the
    ids of a heading written next, :meth:`add` counts it (a heading written as HTML is not)."""

    def __init__(self) -> None:
        self._markdown: set[str] = set()
        #: per base, the least suffix that may be free: every lower one is taken (ids are
        #: never freed), so 20,000 headings of one text cost no quadratic search
        self._free: dict[str, int] = {}
        self._gfm: set[str] = set()
        self._gfm_counts: dict[str, int] = {}

    def next(self, text: IdText) -> AutoIds:
        base = markdown_id("".join(text.markdown))
        ident, suffix = base, 0
        if base in self._markdown:
            suffix = self._free.get(base, 1)
            while f"{base}-{suffix}" in self._markdown:
                suffix += 1
            ident = f"{base}-{suffix}"
        gfm_base = gfm_id("".join(text.gfm))
        count = self._gfm_counts.get(gfm_base)
        gfm = gfm_base if count is None else f"{gfm_base}-{count + 1}"
        return AutoIds(ident, gfm, gfm in self._gfm, base, gfm_base, suffix)

    def add(self, ids: AutoIds) -> None:
        self._markdown.add(ids.markdown)
        if ids._suffix:
            self._free[ids._markdown_base] = ids._suffix + 1
        count = self._gfm_counts.get(ids._gfm_base)
        self._gfm_counts[ids._gfm_base] = 0 if count is None else count + 1
        if ids.gfm:
            self._gfm.add(ids.gfm)
