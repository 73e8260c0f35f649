"""Reading and patching the PDF Typst writes: its page tree, page boxes and cross-reference table.

Typst (through krilla) writes a plain PDF: one flat page tree, every object uncompressed at the
top level, one classic cross-reference table. :mod:`~renderers.writers.typst.late_links` edits a
few small objects in place; this module finds them and moves the table to match. Anything not
shaped so raises :class:`UnexpectedPdfError`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence

from renderers.errors import RenderError

#: The page tree: its page count and, when flat, its pages.
_PAGE_TREE = re.compile(rb"/Type\s*/Pages\s*/Count\s+(\d+)(?:\s*/Kids\s*\[([\d\sR]*)\])?")
_MEDIA_BOX = re.compile(rb"/MediaBox\[(-?[\d.]+) (-?[\d.]+) (-?[\d.]+) (-?[\d.]+)\]")
_START_XREF = re.compile(rb"startxref\s+(\d+)\s+%%EOF\s*$")
_XREF_SUBSECTION = re.compile(rb"(\d+) (\d+)\r?\n")
_XREF_ENTRY = re.compile(rb"(\d{10}) (\d{5}) ([nf])(?: \r| \n|\r\n)")

#: One edit: replace the bytes ``start:end`` by the new ones.
Patch = tuple[int, int, bytes]
#: A cross-reference entry: the object's offset, its generation, ``n`` (in use) or ``f``.
_Entry = tuple[int, bytes, bytes]


class UnexpectedPdfError(RenderError):
    """The PDF is not shaped as Typst writes it today."""


def _page_tree(pdf: bytes) -> re.Match[bytes]:
    found = _PAGE_TREE.search(pdf)
    if found is None:
        raise UnexpectedPdfError("the Typst engine wrote a PDF without a page tree")
    return found


def page_count(pdf: bytes) -> int:
    """The number of pages, read from the page tree (not by parsing the document)."""
    return int(_page_tree(pdf).group(1))


def page_objects(pdf: bytes) -> list[bytes]:
    """The object numbers of the pages, in order (Typst writes one flat page tree)."""
    found = _page_tree(pdf)
    pages = re.findall(rb"(\d+) 0 R", found.group(2) or b"")
    if len(pages) != int(found.group(1)):
        raise UnexpectedPdfError("the Typst engine wrote a nested page tree")
    return pages


def pdf_number(value: float) -> bytes:
    """A PDF number with at most four decimals and no trailing zeros."""
    text = f"{value:.4f}".rstrip("0").rstrip(".")
    return (text if text not in ("", "-0") else "0").encode("ascii")


class XrefTable:
    """The PDF's one cross-reference table: where each object starts, rewritten after edits."""

    def __init__(self, start: int, end: int, sections: list[tuple[int, list[_Entry]]]):
        self.start = start  # offset of the keyword ``xref``
        self.end = end  # offset just after the last entry
        self.sections = sections  # (first object number, its entries) per subsection
        self._by_number = {
            first + index: offset
            for first, entries in sections
            for index, (offset, _, kind) in enumerate(entries)
            if kind == b"n"
        }

    @classmethod
    def read(cls, pdf: bytes) -> XrefTable:
        found = _START_XREF.search(pdf[-64:])
        start = int(found.group(1)) if found else -1
        if start < 0 or not pdf.startswith(b"xref", start):
            raise UnexpectedPdfError("the Typst engine wrote a PDF without a cross-reference table")
        position = start + len(b"xref")
        while pdf[position : position + 1] in (b"\r", b"\n", b" "):
            position += 1
        sections: list[tuple[int, list[_Entry]]] = []
        while (header := _XREF_SUBSECTION.match(pdf, position)) is not None:
            first, count = int(header.group(1)), int(header.group(2))
            position = header.end()
            entries: list[_Entry] = []
            for _ in range(count):
                entry = _XREF_ENTRY.match(pdf, position)
                if entry is None:
                    raise UnexpectedPdfError("the Typst engine's PDF has an unreadable xref table")
                entries.append((int(entry.group(1)), entry.group(2), entry.group(3)))
                position = entry.end()
            sections.append((first, entries))
        return cls(start, position, sections)

    def offset_of(self, number: int) -> int:
        try:
            return self._by_number[number]
        except KeyError:
            raise UnexpectedPdfError(f"the Typst engine's PDF has no object {number}") from None

    def page_top(self, pdf: bytes, page: int) -> float:
        """The top edge of a page object's media box (where Typst's page origin maps to)."""
        start = self.offset_of(page)
        found = _MEDIA_BOX.search(pdf, start, pdf.find(b"endobj", start))
        if found is None:
            raise UnexpectedPdfError(f"the Typst engine's page object {page} has no media box")
        return float(found.group(4))

    def rewrite(self, pdf: bytes, patches: Sequence[Patch]) -> bytes:
        """``pdf`` with each patch applied (all before the table) and the table and
        ``startxref`` moved to match."""
        if not patches:
            return pdf
        pieces: list[bytes] = []
        boundaries: list[int] = [0]  # old offsets from which ``totals`` apply
        totals: list[int] = [0]
        last, shift = 0, 0
        for start, end, replacement in sorted(patches):
            if start < last or end > self.start:
                raise UnexpectedPdfError("overlapping edits of the Typst engine's PDF")
            pieces += [pdf[last:start], replacement]
            shift += len(replacement) - (end - start)
            boundaries.append(end)
            totals.append(shift)
            last = end
        pieces.append(pdf[last : self.start])

        def moved(offset: int) -> int:
            return offset + totals[bisect_right(boundaries, offset) - 1]

        table = [b"xref\n"]
        for first, entries in self.sections:
            table.append(b"%d %d\n" % (first, len(entries)))
            for offset, generation, kind in entries:
                new_offset = moved(offset) if kind == b"n" else offset
                table.append(b"%010d %s %s\r\n" % (new_offset, generation, kind))
        trailer = _START_XREF.sub(b"startxref\n%d\n%%%%EOF" % moved(self.start), pdf[self.end :])
        return b"".join(pieces) + b"".join(table) + trailer


_CATALOG = re.compile(rb"/Type\s*/Catalog\b")
_LANG_ENTRY = re.compile(rb"/Lang\s*\(([A-Za-z0-9-]*)\)")


def declare_language(pdf: bytes, tag: str) -> bytes:
    """``pdf`` with its catalog's ``/Lang`` the whole BCP 47 ``tag``. Typst writes only the
    language and region it typesets with (``zh`` of ``zh-Hant``); the tag ASCII, as every
    canonical tag is. A catalog without ``/Lang`` is left as it is."""
    catalog = _CATALOG.search(pdf)
    if catalog is None:
        raise UnexpectedPdfError("the Typst engine wrote a PDF without a catalog")
    end = pdf.find(b"endobj", catalog.end())
    found = _LANG_ENTRY.search(pdf, catalog.end(), end if end >= 0 else len(pdf))
    wanted = tag.encode("ascii")
    if found is None or found.group(1) == wanted:
        return pdf
    return XrefTable.read(pdf).rewrite(pdf, [(found.start(1), found.end(1), wanted)])
