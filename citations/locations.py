"""Where in a source its citations point, as a reader can look it up: the pages.

An answer built from a 200-page PDF names, per citation, the pages that back it (Anthropic's
``page_location``, a Vertex RAG chunk's ``pageSpan``, a LangChain or LlamaIndex document's page
metadata). A source cited several times keeps every page it was cited at, in the order first
cited, ranges merged where they touch or overlap, and shows them as one text — the row's
``location``, ``"pages 3–4, 7"`` — which the Sources entry prints as a detail and a CSL style
as its ``page``. Character and content-block offsets are not locations a reader can use (they
count into the API's copy of the text, and the row's ``text`` is the cited text already), so
they never become one.

A source the caller's pool already holds gets the answer's pages too (:func:`with_pages`):
joined to the pages its row names, or as its location when it has none; a location in the
pool's own words (``"chapter 2"``) is no list of pages and stays as the pool wrote it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from citations.model import Source

#: Between two ranges of pages, and inside one.
RANGE_JOIN = ", "
RANGE_DASH = "\u2013"
#: The words :meth:`PageSet.describe` leads one page and several with; :data:`_LOCATION` reads
#: them back.
ONE_PAGE = "page"
SEVERAL_PAGES = "pages"
_LOCATION = re.compile(rf"({ONE_PAGE}|{SEVERAL_PAGES}) (\S.*)")
#: A range of numbered pages as a pool may write it: ``3–4``, ``3-4``.
_RANGE = re.compile(r"([0-9]+)\s*[-\u2013]\s*([0-9]+)")
#: Longest page label kept (a label longer than this is no page label).
MAX_LABEL_CHARS = 40
#: Most ranges and labels one source keeps: a reader looks pages up, not a list of thousands,
#: and each page added is compared with those kept (20,000 scattered pages took 14 s).
MOST_ITEMS = 50
#: What ends the pages of a source cited at more than :data:`MOST_ITEMS` places.
MORE = "\u2026"


@dataclass
class PageSet:
    """The pages one source is cited at: numbered ranges (first, last; inclusive, from 1) and
    labels that are no number (``"iv"``, ``"A-3"``), in the order first cited."""

    items: list[list[int] | str] = field(default_factory=list)
    #: Whether pages were left out past :data:`MOST_ITEMS`.
    more: bool = False

    def __bool__(self) -> bool:
        return bool(self.items)

    def add(self, first: int, last: int) -> None:
        """Add pages ``first``–``last``: every range it touches or overlaps joins it, at the
        place of the earliest of them."""
        low, high = min(first, last), max(first, last)
        kept: list[list[int] | str] = []
        joined: list[int] | None = None
        for item in self.items:
            if isinstance(item, list) and item[0] <= high + 1 and low <= item[1] + 1:
                low, high = min(low, item[0]), max(high, item[1])
                if joined is None:
                    joined = item
                    kept.append(item)
                continue
            kept.append(item)
        if joined is None:
            if len(kept) >= MOST_ITEMS:
                self.more = True
                return
            kept.append([low, high])
        else:
            joined[:] = [low, high]
        self.items = kept

    def add_label(self, label: str) -> None:
        """Add a page named by a label that is no number (kept once)."""
        if label in self.items:
            return
        if len(self.items) >= MOST_ITEMS:
            self.more = True
        else:
            self.items.append(label)

    def add_page(self, value: object) -> None:
        """Add one page as metadata names it: a number or a label (``5``, ``"5"``, ``"iv"``);
        anything else is left out."""
        if isinstance(value, bool):
            return
        if isinstance(value, int):
            if value > 0:
                self.add(value, value)
            return
        if isinstance(value, str):
            label = " ".join(value.split())
            if label.isdigit() and label.isascii():
                if int(label) > 0:
                    self.add(int(label), int(label))
            elif 0 < len(label) <= MAX_LABEL_CHARS:
                self.add_label(label)

    def merge(self, other: PageSet) -> None:
        """Add every page of ``other``, in its order."""
        self.more = self.more or other.more
        for item in other.items:
            if isinstance(item, list):
                self.add(item[0], item[1])
            else:
                self.add_label(item)

    @classmethod
    def parse(cls, location: str) -> PageSet | None:
        """The pages a location names as :meth:`describe` writes them (``"pages 3–4, 7"``,
        ``"page iv"``; ``3-4`` is a range too), else None (``"chapter 2"``, ``""``)."""
        found = _LOCATION.fullmatch(" ".join(location.split()))
        if found is None:
            return None
        pages = cls()
        for part in found.group(2).split(RANGE_JOIN.strip()):
            part = part.strip()
            numbered = _RANGE.fullmatch(part)
            if part == MORE:
                pages.more = True
            elif numbered is not None and 0 < int(numbered.group(1)) <= int(numbered.group(2)):
                pages.add(int(numbered.group(1)), int(numbered.group(2)))
            elif part and len(part) <= MAX_LABEL_CHARS:
                pages.add_page(part)  # a number, or a label ("iv", "A-3", "12-3")
            else:
                return None
        return pages if pages else None

    def describe(self) -> str:
        """``"page 3"``, ``"pages 3–4, 7"``, ``"pages iv, 2"``; ``""`` for none."""
        parts = [
            item if isinstance(item, str)
            else str(item[0]) if item[0] == item[1] else f"{item[0]}{RANGE_DASH}{item[1]}"
            for item in self.items
        ]
        if not parts:
            return ""
        one = len(parts) == 1 and not (isinstance(self.items[0], list)
                                       and self.items[0][0] != self.items[0][1])
        if self.more:
            parts.append(MORE)
        lead = ONE_PAGE if one and not self.more else SEVERAL_PAGES
        return f"{lead} {RANGE_JOIN.join(parts)}"


def with_pages(location: object, pages: PageSet) -> str | None:
    """The location of a pool row whose own is ``location`` once an answer cites it at
    ``pages``: the pages it names followed by ``pages`` (merged where they touch), ``pages``
    alone when it has none; None when it is no list of pages (the pool's own words, kept)."""
    if location is None or location == "":
        return pages.describe()
    if not isinstance(location, str):
        return None
    held = PageSet.parse(location)
    if held is None:
        return None
    held.merge(pages)
    return held.describe()


def cited_pages(location: str) -> str:
    """The pages of a row's ``location`` when it names pages (``"pages 3–4, 7"`` → ``"3–4,
    7"``), else ``""``: what a CSL style's ``page`` gets."""
    found = _LOCATION.fullmatch(location.strip())
    return found.group(2) if found else ""


def worded_pages(location: str, one: str, several: str) -> str:
    """``location`` in a document's words when it names pages: ``one`` or ``several`` (each a
    template with ``{pages}``: "Seite {pages}", "Seiten {pages}") as it names one page or more;
    else ``location`` as written (a pool's own words, ``"chapter 2"``)."""
    found = _LOCATION.fullmatch(location.strip())
    if found is None:
        return location
    return (one if found.group(1) == ONE_PAGE else several).format(pages=found.group(2))


def source_location(source: Source) -> str:
    """Where in ``source`` it is cited, as its row says (``location``: an adapter's pages, or a
    pool's own words, ``"chapter 2"``), else ``""``."""
    value = source.extra.get("location")
    return value if isinstance(value, str) else ""
