"""One link annotation per link and line in Typst's PDF.

Typst writes a link annotation for every item of a link's text (``FrameModifiers`` in
typst-layout: each shaped run, box or inline frame gets its own), and a run ends wherever the
script or the font changes: a title of Chinese, Latin and an emoji gets three or four
annotations on one line, a citation "(*Beta*, n.d.)" two. A reader then sees several links
(a screen reader announces each; a pointer moving along the line leaves and enters the link).
WeasyPrint writes one annotation per line box, which is what this module makes of Typst's.

Annotations that follow each other in a page's ``/Annots``, lead to the same place (the same
dictionary after ``/Rect``) and sit side by side on one line become one, whose rectangle
covers them all; the others are dropped from ``/Annots`` (their objects stay, unreferenced). A
tagged PDF's annotations each have their structure element (``/StructParent``): those are left
as Typst wrote them. A PDF not shaped as expected is returned as it is: the merge only tidies.
"""

from __future__ import annotations

import re

from renderers.writers.typst.pdf_file import (
    Patch,
    UnexpectedPdfError,
    XrefTable,
    page_objects,
    pdf_number,
)

#: A link annotation object as Typst writes it: its number, rectangle and the rest.
_ANNOTATION = re.compile(
    rb"\n(\d+) 0 obj\n<</Type/Annot/Subtype/Link/Rect\[([-\d.]+) ([-\d.]+) ([-\d.]+) ([-\d.]+)\]"
    rb"(/[^\n]*)>>\nendobj"
)
#: A page's annotations, written inline in the page object.
_ANNOTS = re.compile(rb"/Annots\[([\d\sR]*)\]")
#: How far apart two pieces of one link may be (Typst lays them edge to edge) and how much of
#: the lower one's height two rectangles must share to be on one line.
_TOUCHING_PT = 0.05
_SAME_LINE = 0.5

_Rect = tuple[float, float, float, float]


def _same_line(a: _Rect, b: _Rect) -> bool:
    """Whether ``b`` continues ``a`` on its line: side by side (either order, for right-to-left
    text) and sharing most of their height."""
    overlap = min(a[3], b[3]) - max(a[1], b[1])
    height = min(a[3] - a[1], b[3] - b[1])
    side_by_side = abs(b[0] - a[2]) <= _TOUCHING_PT or abs(a[0] - b[2]) <= _TOUCHING_PT
    return side_by_side and height > 0 and overlap >= _SAME_LINE * height


def merge_link_annotations(pdf: bytes) -> bytes:
    """``pdf`` with the pieces of each link on one line as one annotation (module text)."""
    try:
        return _merged(pdf)
    except UnexpectedPdfError:
        return pdf


def _merged(pdf: bytes) -> bytes:
    annotations: dict[bytes, tuple[int, int, _Rect, bytes]] = {}
    for found in _ANNOTATION.finditer(pdf):
        x1, y1, x2, y2 = (float(found.group(i)) for i in range(2, 6))
        rect = (min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2))
        annotations[found.group(1)] = (found.start(2) - 1, found.end(5) + 1, rect,
                                       found.group(6))
    if not annotations:
        return pdf
    xref = XrefTable.read(pdf)
    patches: list[Patch] = []
    for page in page_objects(pdf):
        start = xref.offset_of(int(page))
        listed = _ANNOTS.search(pdf, start, pdf.find(b"endobj", start))
        if listed is None:
            continue
        refs = re.findall(rb"(\d+) 0 R", listed.group(1))
        kept: list[bytes] = []
        merged: dict[bytes, _Rect] = {}  # first annotation of a group → the group's rectangle
        for ref in refs:
            this = annotations.get(ref)
            last = annotations.get(kept[-1]) if kept else None
            if (this is not None and last is not None and b"/StructParent" not in this[3]
                    and this[3] == last[3] and _same_line(merged.get(kept[-1], last[2]), this[2])):
                a, b = merged.get(kept[-1], last[2]), this[2]
                merged[kept[-1]] = (min(a[0], b[0]), min(a[1], b[1]),
                                    max(a[2], b[2]), max(a[3], b[3]))
            else:
                kept.append(ref)
        if len(kept) == len(refs):
            continue
        patches.append((listed.start(1), listed.end(1),
                        b" ".join(b"%s 0 R" % ref for ref in kept)))
        for ref, rect in merged.items():
            begin, end, _, _ = annotations[ref]
            patches.append((begin, end, b"[" + b" ".join(pdf_number(v) for v in rect) + b"]"))
    return xref.rewrite(pdf, patches)
