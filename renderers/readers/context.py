"""What both readers share: the reading context (notes, USAGE sids, heading ids, title,
limits) and an inline collector that merges text and tidies the space a USAGE tag leaves."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Protocol

from citations.chars import clean_text
from citations.codemap import ATTRIBUTE_RE
from citations.codemap import HTML_SPACE as HTML_SPACE  # the readers take it from here
from citations.tokens import CLOSING_PUNCTUATION, parse_sid_spec
from renderers.diagnostics import Code, Diagnostic
from renderers.document import (
    Block,
    Cite,
    Document,
    Heading,
    Inline,
    LineBreak,
    SoftBreak,
    Text,
    plain_text,
)
from renderers.errors import LimitError
from renderers.options import Limits
from renderers.readers.sanitize import refused_image_message
from renderers.sandbox import shown_reference
from renderers.text import GIVEN_ID_RULE, RESERVED_ANCHOR, HeadingIds, link_target
from renderers.writers.common import CITATION_NOTES_ID, CONTENTS_ID, NOTES_ID

#: A start tag's attribute text after its name, up to the first ">" outside quotes (possessive:
#: a tag without its end fails without backtracking).
TAG_ATTRIBUTES = re.compile(r"""((?:[^>"']++|"[^"]*+"|'[^']*+')*+)>""")


def tag_attributes(attributes: str) -> dict[str, str]:
    """The attributes of a start tag's attribute text (names lower-cased, entities decoded).
    A character no writer can carry that an entity gives (``&#12;``) is replaced as the
    sanitizer's are (:func:`citations.chars.clean_text`): ``<a id="a&#12;b">`` in markdown is
    the id of ``<p id="a&#12;b">`` in HTML."""
    found: dict[str, str] = {}
    for match in ATTRIBUTE_RE.finditer(attributes):
        name = match.group(1).lower()
        value = next((g for g in match.group(2, 3, 4) if g is not None), "")
        found.setdefault(name, clean_text(html.unescape(value)))
    return found


#: The ids of the sections a writer adds (present or not, as the options and notes decide).
_WRITERS_SECTIONS = frozenset({NOTES_ID, CITATION_NOTES_ID, CONTENTS_ID})


def is_cite_sup(attributes: dict[str, str]) -> bool:
    """Whether a ``<sup>`` with these attributes is a citation (``class="cite" data-sids``)."""
    return "cite" in attributes.get("class", "").split() and "data-sids" in attributes


class LineMap(Protocol):
    """How the lines of a text read in place of the input are named in the input: the front
    matter abstract is read decoded, and its lines are not the ones typed."""

    def typed_line(self, index: int, column: int = 0) -> int:
        """The input line of ``column`` in the read text's 0-based line ``index``."""

    def text_line(self, index: int) -> str:
        """The read text's 0-based line ``index``."""


@dataclass
class ReadContext:
    """What a reader gathers besides blocks: notes, USAGE sids, ids, title; enforces limits."""

    input_name: str
    limits: Limits
    notes: list[Diagnostic] = field(default_factory=list)  # reading problems (strict fails)
    usage: dict[int, None] = field(default_factory=dict)
    citations: int = 0
    formulas: int = 0
    cited_sids: int = 0
    title: str = ""
    ids: HeadingIds = field(default_factory=HeadingIds)
    refused_images: dict[str, Diagnostic] = field(default_factory=dict)  # by source
    #: Each id the document's links lead to → where its first link is (a line, or how to
    #: find it: only a link that leads nowhere is looked for).
    links: dict[str, int | Callable[[], int]] = field(default_factory=dict)
    #: Ids of the writers' own form that a markdown ``<a id>`` names (the Markdown writer's
    #: anchors, read back): places unless the writers make the same (``resolve.check_links``).
    own_places: set[str] = field(default_factory=set)
    #: While a text other than the input is read (:meth:`reading`): its line map, and the
    #: line that text's first line is numbered (its lines are numbered from there as read).
    line_map: tuple[LineMap, int] | None = None

    def check_size(self, content: str) -> None:
        """Fail fast when ``content`` exceeds ``limits.max_content_bytes``."""
        limit = self.limits.max_content_bytes
        if len(content) > limit or len(content.encode("utf-8", "surrogatepass")) > limit:
            raise LimitError(
                f"{self.input_name}: content is larger than {limit} bytes "
                "(limits.max_content_bytes)"
            )

    def check_depth(self, depth: int) -> None:
        """Fail fast when nesting (lists, quotes, emphasis …) exceeds ``limits.max_nesting``."""
        if depth > self.limits.max_nesting:
            raise LimitError(
                f"{self.input_name}: nesting deeper than {self.limits.max_nesting} levels "
                "(limits.max_nesting); flatten the lists, quotes or emphasis"
            )

    def check_rows(self, rows: int) -> None:
        """Fail fast when a table has more rows than ``limits.max_table_rows``."""
        if rows > self.limits.max_table_rows:
            raise LimitError(
                f"{self.input_name}: a table has more than {self.limits.max_table_rows} rows "
                "(limits.max_table_rows)"
            )

    def count_citation(self, sid_count: int) -> None:
        """Count one citation naming ``sid_count`` sids against ``limits.max_citations`` and
        ``limits.max_cited_sids``: called as each token is read, so a flood of tokens (or of
        wide ranges) stops at the limit instead of after the whole input was expanded."""
        self.citations += 1
        self.cited_sids += sid_count
        if self.citations > self.limits.max_citations:
            raise LimitError(
                f"{self.input_name}: more than {self.limits.max_citations} citations "
                "(limits.max_citations)"
            )
        if self.cited_sids > self.limits.max_cited_sids:
            raise LimitError(
                f"{self.input_name}: the citations name more than {self.limits.max_cited_sids} "
                "sids together, ranges expanded (limits.max_cited_sids)"
            )

    def count_formula(self) -> None:
        """Count one formula against ``limits.max_formulas``: drawing each costs
        milliseconds (an SVG for print, a picture for slides), so their number is bounded."""
        self.formulas += 1
        if self.formulas > self.limits.max_formulas:
            raise LimitError(
                f"{self.input_name}: more than {self.limits.max_formulas} math formulas "
                "(limits.max_formulas)"
            )

    def check_cells(self, rows: int, columns: int) -> None:
        """Fail fast when a table of ``rows`` × ``columns`` (short rows are padded to the
        widest) exceeds ``limits.max_table_cells``: one wide header row must not multiply
        every later row."""
        if rows * columns > self.limits.max_table_cells:
            raise LimitError(
                f"{self.input_name}: a table of {rows} rows × {columns} columns has more than "
                f"{self.limits.max_table_cells} cells (limits.max_table_cells)"
            )

    def cite(self, sids: Sequence[int], *, counted: bool = False) -> Cite:
        """A new :class:`Cite`, counted by :meth:`count_citation` unless already ``counted``
        (the markdown parser counts tokens while it parses)."""
        if not counted:
            self.count_citation(len(sids))
        return Cite(sids=tuple(sids))

    def add_usage(self, sids: Sequence[int]) -> None:
        """Record the sids of a ``[[USAGE:..]]`` tag (first appearance order, each once)."""
        for sid in sids:
            self.usage.setdefault(sid, None)

    @contextmanager
    def reading(self, lines: LineMap | None, first: int) -> Iterator[None]:
        """Name the lines of what is read in this block by ``lines`` (None: the input's own),
        its line ``first`` being the read text's first: notes name the input's line."""
        self.line_map = (lines, first) if lines is not None else None
        try:
            yield
        finally:
            self.line_map = None

    def input_line(self, line: int, column: int = 0) -> int:
        """The input's line for ``line`` (and ``column`` there) of the text being read."""
        return line if self.line_map is None else _typed_line(self.line_map, line, column)

    def text_line(self, line: int) -> str:
        """Line ``line`` of the text being read when it is not the input ("" when it is)."""
        return self.line_map[0].text_line(line - self.line_map[1]) if self.line_map else ""

    def warn(self, line: int, message: str, *, column: int = 0) -> None:
        """Add a reading problem (a ``reader-note`` diagnostic whose message names the place);
        ``line`` is the 1-based line of the text read (0 when unknown), ``column`` the place's
        in it when known: the input's line is :meth:`input_line`."""
        self.notes.append(self._note(self.input_line(line, column), message))

    def _note(self, line: int, message: str) -> Diagnostic:
        return Diagnostic(Code.READER_NOTE, f"{self._where(line)}: {message}",
                          line=line if line > 0 else None)

    def refuse_image(self, line: int, src: str, alt: str) -> None:
        """Report an image whose source was refused, once per source: writers get an empty
        source and show the alt text, so only the reader can still say which image it was."""
        if src in self.refused_images:
            return
        line = self.input_line(line)
        self.refused_images[src] = Diagnostic(
            Code.IMAGE_REFUSED,
            f"{self._where(line)}: {refused_image_message(src, alt)}",
            file=shown_reference(src.strip()) or None,
            line=line or None,
        )

    def _where(self, line: int) -> str:
        return f"{self.input_name}, line {line}" if line > 0 else self.input_name

    def sid_spec(
        self, spec: str, line: int | Callable[[], int], text: str
    ) -> tuple[int, ...] | None:
        """The sids of a ``data-sids`` value, or None (with a warning) when it is invalid.
        ``line`` may be how to find the line, asked only for a warning (HTML input finds it
        with a scan, see :mod:`renderers.readers.html_lines`)."""
        sids, error, notes = parse_sid_spec(spec)
        if not notes and error is None and sids:
            return tuple(sids)
        where = line() if callable(line) else line
        shown = shown_reference(text)  # a USAGE meta's whole content may run to kilobytes
        for note in notes:
            self.warn(where, f"{shown!r}: {note}")
        if error is not None or not sids:
            self.warn(where, f"invalid citation {shown!r}: {error or 'no sids'}; kept as text")
            return None
        return tuple(sids)

    def heading(
        self, level: int, children: tuple[Inline, ...], given_id: str = "", *,
        listed: bool = True, line: int | Callable[[], int] = 0,
    ) -> Heading:
        """A heading with a unique id: ``given_id`` (the author's, which the document's links
        use) when it is free, else one made from its text; the first h1 becomes the document
        title. A given id no heading may keep (:data:`GIVEN_ID_RULE`) is noted at ``line``
        (or how to find it, asked only then: HTML input scans for it).
        ``listed``: see :class:`Heading`."""
        text = plain_text(children).strip()
        if level == 1 and not self.title:
            self.title = text
        ident = self.ids.take(given_id, text)
        if given_id and not HeadingIds.can_keep(given_id):
            self.warn(line() if callable(line) else line,
                      f"the heading's id {shown_reference(given_id)!r} is not kept: "
                      f"{GIVEN_ID_RULE}; the heading's id is {shown_reference(ident)!r}")
        return Heading(level=level, children=children, id=ident, listed=listed,
                       given=ident == given_id)

    def link(self, url: str, where: int | Callable[[], int]) -> None:
        """Record a link of the document (``where``: its line) for :meth:`document`; the
        input's line is found only for a link that leads nowhere."""
        if (target := link_target(url)) and target not in self.links:
            if self.line_map is not None:
                where = partial(_typed_line, self.line_map, where)
            self.links[target] = where

    def own_place(self, ident: str) -> bool:
        """Whether ``<a id="ident">`` in markdown is a place of the writers' own form
        (``src-2``: how the Markdown writer names the places it makes) met for the first time:
        an anchor there, which resolution leaves out when the writers make that place."""
        if not RESERVED_ANCHOR.match(ident) or ident in self.own_places:
            return False
        self.own_places.add(ident)
        return True

    def _note_dead_links(self) -> tuple[list[tuple[str, Diagnostic]], frozenset[str]]:
        """A note for each id the document's links lead to that no heading or element has
        (nor a writer's section: ``notes`` …): every writer drops such a link's target. The
        notes on ids of the writers' own form (``cite-1``, ``fig-2``) are returned with their
        id, for resolution to keep when the writers make no such anchor; the other ids noted
        are returned too (the document's ``dead_links``)."""
        generated: list[tuple[str, Diagnostic]] = []
        dead: list[str] = []
        for target, where in self.links.items():
            if target in self.ids or target in _WRITERS_SECTIONS or target in self.own_places:
                continue
            if RESERVED_ANCHOR.match(target):
                why = "the document has no such citation, source, note, figure or table"
            elif HeadingIds.can_keep(target):
                why = "no heading or element has the id"
            else:
                why = GIVEN_ID_RULE
            note = self._note(where if isinstance(where, int) else where(),
                              f"the link to {'#' + shown_reference(target)!r} leads nowhere: "
                              f"{why}; its text is kept")
            if RESERVED_ANCHOR.match(target):
                generated.append((target, note))
            else:
                self.notes.append(note)
                dead.append(target)
        return generated, frozenset(dead)

    def document(self, blocks: Sequence[Block]) -> Document:
        """The finished document, the notes of links that lead nowhere added. Each heading
        keeps its author's own ``.unlisted``: which further headings a kept-out section takes
        with it depends on the title, which the writers decide
        (:func:`renderers.writers.contents.body_outline`)."""
        generated, dead = self._note_dead_links()
        return Document(
            blocks=tuple(blocks),
            title=self.title,
            usage_sids=tuple(self.usage),
            notes=tuple(self.notes),
            diagnostics=tuple(self.refused_images.values()),
            anchor_notes=tuple(generated),
            dead_links=dead,
        )


def _typed_line(
    line_map: tuple[LineMap, int], where: int | Callable[[], int], column: int = 0
) -> int:
    """The input line of a place (its line, 0 when unknown, or how to find it) of a text read
    in place of the input."""
    lines, first = line_map
    line = where() if callable(where) else where
    return lines.typed_line(line - first, column) if line > 0 else line


class InlineBuilder:
    """Collects inlines: merges adjacent text, drops the doubled space a USAGE tag leaves."""

    def __init__(self) -> None:
        self.nodes: list[Inline] = []
        self._after_usage = False

    def text(self, text: str) -> None:
        """Append text (merged with a preceding :class:`Text`). A character reference the
        markdown parser decoded (``&#x0C;``) may give a character no writer can carry: it is
        replaced as the input's own are (:func:`citations.chars.clean_text`)."""
        if not text:
            return
        text = clean_text(text)
        last = self.nodes[-1] if self.nodes else None
        if isinstance(last, Text):
            if self._after_usage and last.text[-1:].isspace():
                if text[:1] in CLOSING_PUNCTUATION:
                    last = Text(last.text.rstrip(" \t"))
                text = text.lstrip(" \t")
            self.nodes[-1] = Text(last.text + text)
        else:
            self.nodes.append(Text(text))
        self._after_usage = False

    def add(self, node: Inline) -> None:
        """Append any inline node."""
        if isinstance(node, Text):
            self.text(node.text)
            return
        self.nodes.append(node)
        self._after_usage = False

    def extend(self, nodes: Sequence[Inline]) -> None:
        """Append several nodes."""
        for node in nodes:
            self.add(node)

    def usage_removed(self) -> None:
        """Note that a USAGE tag was removed here (the next space is then redundant)."""
        self._after_usage = True

    def result(self, *, trim: bool = True) -> tuple[Inline, ...]:
        """The collected nodes; with ``trim``, white space at both ends is removed."""
        nodes = list(self.nodes)
        if trim:
            while nodes and isinstance(nodes[-1], SoftBreak | LineBreak):
                nodes.pop()
            while nodes and isinstance(nodes[0], SoftBreak | LineBreak):
                nodes.pop(0)
            last = nodes[-1] if nodes else None
            if isinstance(last, Text) and last.text[-1:].isspace():
                nodes[-1] = Text(last.text.rstrip())
            first = nodes[0] if nodes else None
            if isinstance(first, Text) and first.text[:1].isspace():
                nodes[0] = Text(first.text.lstrip())
            nodes = [n for n in nodes if not (isinstance(n, Text) and not n.text)]
        return tuple(nodes)
