"""Where an HTML input's reader notes point: the input's line of the token or tag concerned.

The HTML reader maps the sanitizer's output, whose lines are not the input's (a comment, a
script or a tag spread over lines leaves no line behind, so ``html.parser``'s ``getpos()``
there drifts by as many lines). The audit's token scanner, run over the input
(:func:`citations.tokens.scan`), already places each token and ``<sup class="cite">`` the way
the audit reports them; a note finds its token among those, so render and audit name the same
line. The scan runs once, and only for a document that has a note to place.
"""

from __future__ import annotations

import bisect
import re
from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass
from typing import TypeAlias

from citations.codemap import html_tags, line_starts
from citations.tokens import Token, scan, split_tokens
from renderers.readers.anchors import written_tags
from renderers.readers.context import HTML_SPACE, TAG_ATTRIBUTES, link_target, tag_attributes
from renderers.readers.sanitize import HEADINGS

#: A start tag: its name, then its attribute text (possessive: linear).
_START_TAG = re.compile(r"<[A-Za-z][^\s/>]*" + TAG_ATTRIBUTES.pattern)


class InputLines:
    """The lines of one HTML input; :meth:`token` and :meth:`cite_sup`
    give each occurrence once, in the input's order, as the reader meets them."""

    def __init__(self, html: str, dialects: frozenset[str]) -> None:
        self._html = html
        self._dialects = dialects
        self._starts: list[int] | None = None
        self._pending: dict[Hashable, deque[int]] | None = None  # key → offsets not yet given
        self._links: dict[str, int] | None = None  # each link's target → its first <a>
        self._headings: dict[str, deque[int]] | None = None  # each heading id → its headings

    #: The line of a note whose place the input does not show: none.
    unplaced = 0

    def at(self, offset: int) -> int:
        """The 1-based line of ``offset`` (line breaks as markdown counts them: CR LF, CR, LF)."""
        if self._starts is None:
            self._starts = line_starts(self._html)
        return bisect.bisect_right(self._starts, offset)

    def token(self, text: str) -> int:
        """The line of the next token written ``text`` (white space collapsed) outside code,
        or 0 when the input shows none there (a token written with character references)."""
        return self._next(("text", HTML_SPACE.sub(" ", text)))

    def cite_sup(self, spec: str) -> int:
        """The line of the next ``<sup class="cite">`` whose ``data-sids`` is ``spec``, or 0."""
        return self._next(("sup", spec))

    def link(self, url: str) -> int:
        """The line of the first ``<a>`` whose ``href`` leads where ``url`` does, or 0."""
        if self._links is None:  # one pass, for the first link that leads nowhere
            self._links = {}
            for tag in html_tags(self._html):
                if tag.name != "a" or tag.kind == "end":
                    continue
                written = TAG_ATTRIBUTES.match(self._html, tag.start + 2)
                href = tag_attributes(written.group(1)).get("href", "") if written else ""
                self._links.setdefault(link_target(href.strip()), tag.start)
        offset = self._links.get(link_target(url))
        return 0 if offset is None else self.at(offset)

    def heading(self, ident: str) -> int:
        """The line of the next ``<h1>``–``<h6>`` whose id is ``ident`` (as the sanitizer
        gives it: :func:`~renderers.readers.context.tag_attributes` reads it so), or 0. Asked only
        for a refused id, which every heading holding it has: each is met once, in order."""
        if self._headings is None:  # one pass, for the first refused id
            self._headings = {}
            for tag, attributes in written_tags(self._html, HEADINGS):
                self._headings.setdefault(attributes.get("id", ""), deque()).append(tag.start)
        offsets = self._headings.get(ident)
        return self.at(offsets.popleft()) if offsets else 0

    def split_tokens(self) -> list[tuple[int, Token]]:
        """Each token markup splits (:func:`citations.tokens.split_tokens`), with its line."""
        return [(self.at(token.start), token)
                for token in split_tokens(self._html, dialects=self._dialects)]

    def _next(self, key: Hashable) -> int:
        if self._pending is None:
            self._pending = self._index()
        offsets = self._pending.get(key)
        return self.at(offsets.popleft()) if offsets else 0

    def _index(self) -> dict[Hashable, deque[int]]:
        """Each token the reader reads, by what it is: not those in code nor in what the
        sanitizer drops (:attr:`~citations.tokens.Token.inert`)."""
        found: dict[Hashable, deque[int]] = {}
        for token in scan(self._html, syntax="html", dialects=self._dialects):
            if token.inert:
                continue
            if token.form == "sup":
                opening = _START_TAG.match(token.text)
                attributes = tag_attributes(opening.group(1)) if opening else {}
                key: Hashable = ("sup", attributes.get("data-sids"))
            else:
                key = ("text", HTML_SPACE.sub(" ", token.text))
            found.setdefault(key, deque()).append(token.start)
        return found


@dataclass(frozen=True)
class OneLine:
    """Every note of a stretch of HTML at one line: markdown's HTML blocks, read from their
    rewritten markup (:func:`citations.codemap.block_html`) with the markdown between them
    taken out, which keeps none of the input's lines; the stretch's first line is named."""

    line: int
    html: str = ""  # the stretch's HTML, for :meth:`split_tokens`
    dialects: frozenset[str] = frozenset()

    @property
    def unplaced(self) -> int:
        return self.line

    def split_tokens(self) -> list[tuple[int, Token]]:
        return [(self.line, token) for token in split_tokens(self.html, dialects=self.dialects)]

    def at(self, offset: int) -> int:
        return self.line

    def token(self, text: str) -> int:
        return self.line

    def cite_sup(self, spec: str) -> int:
        return self.line

    def link(self, url: str) -> int:
        return self.line

    def heading(self, ident: str) -> int:
        return self.line


#: Where an HTML reader's notes point.
NoteLines: TypeAlias = InputLines | OneLine
