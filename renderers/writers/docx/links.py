"""Hyperlinks (external ``r:id`` and internal ``w:anchor``), bookmarks and the hyperlink
relationships of a part."""

from __future__ import annotations

import re

from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.part import Part
from lxml import etree

from renderers.writers.docx.oxml import R_ID, Element, sub, w

_BOOKMARK_BAD = re.compile(r"[^A-Za-z0-9_]+")
BOOKMARK_MAX = 40


def add_hyperlink(
    parent: Element, *, rid: str = "", anchor: str = "", tooltip: str = ""
) -> Element:
    """Append a ``w:hyperlink``: external through relationship ``rid`` or internal to ``anchor``."""
    link = etree.SubElement(parent, w("hyperlink"))
    if rid:
        link.set(R_ID, rid)
    if anchor:
        link.set(w("anchor"), anchor)
    if tooltip:
        link.set(w("tooltip"), tooltip[:255])
    link.set(w("history"), "1")
    return link


class Bookmarks:
    """Unique bookmark ids and valid names: a letter, then letters, digits, ``_``; ≤ 40 chars;
    no two alike but for case."""

    def __init__(self) -> None:
        self._next_id = 0
        #: the names taken, in lower case: Word matches bookmark names ignoring case, so
        #: ``Intro`` and ``intro`` would be one bookmark there
        self._names: set[str] = set()
        #: per base, the last suffix number tried: every name below it is taken (names are
        #: never freed), so 4,000 headings of one base (Arabic ids, all ``bm``) cost no
        #: quadratic search (it was half of such a document's DOCX time)
        self._counters: dict[str, int] = {}

    def name_for(self, wanted: str) -> str:
        """A valid bookmark name derived from ``wanted``, unique in this document; reserves it."""
        base = _BOOKMARK_BAD.sub("_", wanted).strip("_") or "bm"
        if not base[0].isalpha():
            base = f"b_{base}"
        base = base[:BOOKMARK_MAX]
        n = self._counters.get(base, 1)
        name = base if n == 1 else _numbered(base, n)
        while name.lower() in self._names:
            n += 1
            name = _numbered(base, n)
        self._counters[base] = n
        self._names.add(name.lower())
        return name

    def start(self, parent: Element, name: str) -> int:
        """Append ``w:bookmarkStart`` for ``name``; return its id for :meth:`end`."""
        bid = self._next_id
        self._next_id += 1
        sub(parent, "bookmarkStart", {"id": str(bid), "name": name})
        return bid

    @staticmethod
    def end(parent: Element, bid: int) -> None:
        """Append the ``w:bookmarkEnd`` of bookmark ``bid``."""
        sub(parent, "bookmarkEnd", {"id": str(bid)})


def _numbered(base: str, n: int) -> str:
    """``base_n``, ``base`` cut so that the name stays within :data:`BOOKMARK_MAX`."""
    suffix = f"_{n}"
    return base[: BOOKMARK_MAX - len(suffix)] + suffix


class Relations:
    """External hyperlink relationships of one part, one ``rId`` per distinct URL."""

    def __init__(self, part: Part) -> None:
        self.part = part
        self._ids: dict[str, str] = {}
        self._next = 1

    def link(self, url: str) -> str:
        """The ``rId`` of an external hyperlink relationship to ``url``.

        Added directly (python-docx's ``relate_to`` scans every relationship on each call).
        """
        rid = self._ids.get(url)
        if rid is None:
            rels = self.part.rels
            while f"rId{self._next}" in rels:
                self._next += 1
            rid = f"rId{self._next}"
            rels.add_relationship(RT.HYPERLINK, url, rid, is_external=True)
            self._ids[url] = rid
        return rid
