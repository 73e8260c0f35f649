"""Links to the document's own labels, resolved after layout and written into Typst's PDF.

Why: Typst resolves ``link(label(...))`` during layout, so every paragraph holding such a link
is laid out twice (once before the label's place is known, once after). The 50-page benchmark
report has 500 linked citations: its compile costs 0.75 s of CPU with label links and 0.42 s
with links to fixed positions (measured in one run, Typst 0.15); the Sources entries' 120
back-links cost another 0.05 s. So the markup links each citation, note reference, in-text
anchor link and back-link to a *placeholder* position: page 1 at a
negative x (``-1pt`` for the first target, ``-2pt`` for the second …), which no laid-out
element can have. The same compile reports where each label landed (a ``context`` block at the
end of the document, the only part that is laid out again); :func:`resolve_late_links` then
rewrites each placeholder destination of the PDF into the label's page and point, exactly as
Typst computes a label link's destination (10 pt above the target, clamped to the page top).

Typst deduplicates equal destinations, so the PDF holds one placeholder array per target,
however many links lead there. Only those arrays change; the cross-reference table is
rewritten for their new lengths. Done by hand rather than with a PDF library: pypdf (a test
dependency only) takes 0.25 s of CPU to read and rewrite the 58-page report, most of the 0.33 s
the layout saves; this patch of 120 small objects takes 4 ms.

In a tagged PDF (PDF/UA-1) Typst gives each link annotation the alt text "page N" of its
destination, page 1 for a placeholder: the number becomes the target's page, as Typst writes it
for a label link. Links to headings stay Typst's own (``_Markup.to_label`` in the markup writer):
their alt text is Typst's wording ("Section, page 3"). A PDF not shaped as expected (another
Typst release) raises :class:`LateLinkError`, and the writer compiles again with label links.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from renderers.writers.typst.escape import string_literal
from renderers.writers.typst.pdf_file import (
    Patch,
    UnexpectedPdfError,
    XrefTable,
    page_objects,
    pdf_number,
)


class LateLinkError(UnexpectedPdfError):
    """Typst's PDF is not shaped as this module expects (a Typst release that writes it
    differently): the writer compiles again with Typst's own label links instead."""


#: The label of the metadata that reports where each target landed.
POSITIONS_LABEL = "citerender-late-link-positions"
#: Typst places a link's destination this far above its target (``pos_to_xyz`` in typst-pdf).
_ABOVE_TARGET_PT = 10.0

#: A placeholder destination: an object of its own (as Typst writes every destination array),
#: so the bytes of a compressed stream are not taken for one (they would have to spell a whole
#: object).
_PLACEHOLDER = re.compile(rb"\n(\d+) 0 obj\n(\[(\d+) 0 R/XYZ -(\d+) [\d.]+ 0\])\nendobj")
#: A link annotation and what follows its destination up to the end of its dictionary.
_LINK_ANNOTATION = re.compile(
    rb"/Subtype/Link/Rect\[[^\]]*\]/Border\[[^\]]*\]/Dest (\d+) 0 R([^>]*)>>"
)
#: A tagged PDF's alt text of a link to a position: Typst's word for "page", then the page.
_PAGE_ALT = re.compile(rb"/Contents\(([^()\\]*) (\d+)\)")


@dataclass(frozen=True)
class Placement:
    """Where a target landed: its page (from 1) and its point, in pt from the page's top left."""

    page: int
    x: float
    y: float


def prelude(targets: Sequence[str], *, late: bool) -> str:
    """The definitions the template's ``to-label`` reads: whether links are late, and the
    placeholder position of each target (in ``targets`` order)."""
    if not late:
        return "#let late-links = false\n#let late-dests = (:)\n"
    entries = ", ".join(
        f"{string_literal(target)}: (page: 1, x: {-(index + 1)}pt, y: 0pt)"
        for index, target in enumerate(targets)
    )
    return f"#let late-links = true\n#let late-dests = ({entries or ':'}{',' if entries else ''})\n"


def positions_query() -> str:
    """Markup for the end of the document: the page and point of every target, as metadata."""
    return (
        "\n#context [#metadata(late-dests.keys().map(target => {"
        " let p = locate(label(target)).position(); (p.page, p.x.pt(), p.y.pt()) }))"
        f"#label({string_literal(POSITIONS_LABEL)})]\n"
    )


def parse_positions(reported: str) -> list[Placement]:
    """The query's JSON answer as placements (in ``targets`` order)."""
    try:
        return [Placement(int(page), float(x), float(y)) for page, x, y in json.loads(reported)]
    except (TypeError, ValueError) as exc:
        raise LateLinkError(f"the Typst engine reported unreadable link targets: {exc}") from exc


def resolve_late_links(pdf: bytes, placements: Sequence[Placement]) -> bytes:
    """``pdf`` with each placeholder destination replaced by its target's place, and in a
    tagged PDF each such link's alt text naming the target's page. Raises
    :class:`LateLinkError` when the PDF is not shaped as expected."""
    pages = page_objects(pdf)
    xref = XrefTable.read(pdf)
    first_page = pages[0] if pages else b""
    patches: list[Patch] = []
    tops: dict[bytes, float] = {}  # page object → the top of its media box
    page_of: dict[bytes, int] = {}  # placeholder object number → the target's page
    for found in _PLACEHOLDER.finditer(pdf):
        if found.group(3) != first_page:
            continue
        index = int(found.group(4)) - 1
        if not 0 <= index < len(placements):
            continue  # not one of ours (no target has this number)
        place = placements[index]
        if not 1 <= place.page <= len(pages):
            raise LateLinkError(f"the Typst engine placed a link target on page {place.page}")
        page_ref = pages[place.page - 1]
        if page_ref not in tops:
            tops[page_ref] = xref.page_top(pdf, int(page_ref))
        y = tops[page_ref] - max(place.y - _ABOVE_TARGET_PT, 0.0)
        array = b"[%s 0 R/XYZ %s %s 0]" % (page_ref, pdf_number(place.x), pdf_number(y))
        patches.append((found.start(2), found.end(2), array))
        page_of[found.group(1)] = place.page
    if placements and not patches:
        raise LateLinkError("the Typst engine's PDF holds none of the placeholder destinations")
    patches += _alt_text_patches(pdf, page_of)
    return xref.rewrite(pdf, patches)


def _alt_text_patches(pdf: bytes, page_of: dict[bytes, int]) -> list[Patch]:
    """In a tagged PDF, Typst gives a link annotation the alt text "page N" of its
    destination: for a placeholder, page 1. Each becomes the target's page."""
    patches: list[Patch] = []
    for link in _LINK_ANNOTATION.finditer(pdf):
        page = page_of.get(link.group(1))
        if page is None or b"/Contents" not in link.group(2):
            continue
        alt = _PAGE_ALT.search(link.group(2))
        if alt is None or alt.group(2) != b"1":
            raise LateLinkError("the Typst engine gave a link alt text not shaped as expected")
        start = link.start(2) + alt.start(2)
        patches.append((start, start + 1, str(page).encode("ascii")))
    return patches
