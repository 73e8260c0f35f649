"""Break opportunities in very long unbroken runs, so that PDF layout time stays linear.

WeasyPrint lays out a run of text that may wrap anywhere (code blocks, Sources entries) by
handing Pango the whole rest of the run for every line it cuts: a 25,000-character word took
8.6 s, 100,000 characters 92 s. A ``<wbr>`` every :data:`RUN_CHUNK` characters of a run longer
than :data:`LONGEST_RUN` cuts the run into short text boxes (measured: linear, about 0.1 s per
10,000 characters) and lets over-long words in paragraphs wrap instead of running off the page.
Browsers treat ``<wbr>`` as an invisible break opportunity: copied text is unchanged.

A cut never separates a character from its combining marks, unless they are more than
:data:`~renderers.text.MOST_MARKS` (Pango lays one cluster out in one native call, in time
growing faster than its length: a letter under 20,000 acute accents took 1.1 s a call).

A word of :data:`~renderers.text.LONG_WORD` characters or more in running text (a URL, an
identifier) sits in a ``<span class="long-word">`` that may wrap anywhere, but only where the
word does not fit on a line of its own: the same words that the Typst writer makes breakable.
A table cell holding one shrinks with it instead of pushing the table off the page.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from lxml.html import HtmlElement
from markupsafe import Markup, escape

from renderers.text import MOST_MARKS, extends_cluster, split_long_words

#: Runs of non-space characters up to this length are left alone (long URLs, code lines).
LONGEST_RUN = 200
#: Characters between two inserted break opportunities in a longer run.
RUN_CHUNK = 64

_LONG_RUN = re.compile(rf"\S{{{LONGEST_RUN + 1},}}")


def _cut_points(run: str) -> Iterator[int]:
    """Offsets in ``run`` where a break may go: every RUN_CHUNK characters, moved forward past
    combining marks, joiners and variation selectors so no character is split from its mark
    (past :data:`MOST_MARKS` of them at most)."""
    cut = RUN_CHUNK
    while cut < len(run):
        furthest = min(cut + MOST_MARKS, len(run))
        while cut < furthest and extends_cluster(run[cut]):
            cut += 1
        if cut < len(run):
            yield cut
        cut += RUN_CHUNK


def split_long_runs(text: str) -> list[str]:
    """``text`` in pieces: cut inside every run longer than LONGEST_RUN (one piece otherwise)."""
    if len(text) <= LONGEST_RUN:
        return [text]
    pieces: list[str] = []
    start = 0
    for match in _LONG_RUN.finditer(text):
        for cut in _cut_points(match.group(0)):
            pieces.append(text[start:match.start() + cut])
            start = match.start() + cut
    pieces.append(text[start:])
    return pieces


def breakable(text: str) -> Markup:
    """``text`` escaped for HTML, with ``<wbr>`` inside runs longer than LONGEST_RUN."""
    return Markup("<wbr>").join(escape(piece) for piece in split_long_runs(text))


def wrappable(text: str) -> Markup:
    """``text`` as :func:`breakable` makes it, each long word in a span that may wrap."""
    return Markup("").join(
        Markup('<span class="long-word">%s</span>') % breakable(piece) if long
        else breakable(piece)
        for piece, long in split_long_words(text)
    )


def break_long_runs(root: HtmlElement) -> None:
    """Insert ``<wbr>`` elements into the long runs of every text node under ``root`` (author
    HTML on its way to WeasyPrint); ``<style>`` and ``<script>`` text is left alone."""
    for element in list(root.iter()):
        if not isinstance(element.tag, str) or element.tag in ("style", "script"):
            continue
        pieces = split_long_runs(element.text or "")
        if len(pieces) > 1:
            element.text = pieces[0]
            for offset, piece in enumerate(pieces[1:]):
                wbr = element.makeelement("wbr", {})
                wbr.tail = piece
                element.insert(offset, wbr)
        parent = element.getparent()
        pieces = split_long_runs(element.tail or "")
        if parent is not None and len(pieces) > 1:
            element.tail = pieces[0]
            index = parent.index(element)
            for offset, piece in enumerate(pieces[1:], start=1):
                wbr = parent.makeelement("wbr", {})
                wbr.tail = piece
                parent.insert(index + offset, wbr)
