"""The citation pass: number every ``Cite`` once and build the Sources entries for all writers
(then the cross-reference pass, :mod:`renderers.crossref`, numbers figures and tables)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from citations.links import safe_link, source_domain
from citations.locations import source_location, worded_pages
from citations.model import Source
from citations.numbering import CitationPlan, NumberingMode, plan_citations
from citations.pool import SourcePool
from citations.tokens import CLOSING_PUNCTUATION
from renderers.crossref import number_crossrefs
from renderers.diagnostics import MAX_PER_CODE, Code, Diagnostic, messages, summary
from renderers.document import (
    Anchor,
    Block,
    Cite,
    CodeBlock,
    Document,
    Emph,
    Figure,
    Inline,
    Link,
    Math,
    Strike,
    Strong,
    Styled,
    Table,
    Text,
    iter_blocks,
    iter_inlines,
    map_document,
    numbered_anchor,
    reading_blocks,
)
from renderers.errors import StrictError
from renderers.labels import Labels, labels_for
from renderers.language import DEFAULT_LANGUAGE, Language, document_language
from renderers.speaker_notes import has_speaker_notes, planning_order, without_speaker_notes
from renderers.text import RESERVED_ANCHOR, Direction, blocks_direction

_PATH_SEPARATORS = re.compile(r"[/\\]")


@dataclass(frozen=True)
class SourceEntry:
    """One line of the Sources section, identical for every writer."""

    number: int
    sid: int
    source: Source
    title: str
    url: str  # the original URL when it is http/https/mailto, else ""
    label: str  # the domain, or the artifact path for files and attachments
    date: str
    anchor: str  # "src-N"
    backlink: str  # anchor of the first citation of this source ("cite-K")
    #: Where in the source it is cited, in the document's words ("Seiten 3–4, 7"), or "".
    location: str = ""
    formatted: tuple[Inline, ...] = ()  # the entry in a CSL style (renderers.styles), else ()
    marker: str | None = None  # the style's marker ("[1]", "1.", "" unnumbered); None: "N."
    #: The Sources list's direction, the document's (:func:`document_direction`): an Arabic
    #: title in an English report stays in a left-to-right entry, number first.
    direction: Direction = "ltr"


@dataclass(frozen=True)
class ResolvedDocument:
    """A document whose citations carry display numbers, plus everything a writer needs.

    ``document`` never holds speaker notes; when the input has some, ``speaker_view`` is the
    document with them, numbered and planned for the formats that show them (PPTX).
    """

    document: Document
    plan: CitationPlan
    entries: tuple[SourceEntry, ...]
    #: The reader's notes (``document.notes``), then the citation pass's (``unknown-sid``) and
    #: the cross-reference pass's (``unknown-label``, ``duplicate-label``).
    notes: tuple[Diagnostic, ...]
    sources_heading: str = "Sources"
    style: str = ""  # the CSL style applied (bundled name or file name); "" for the default look
    speaker_view: ResolvedDocument | None = None
    #: The document's language (:func:`renderers.language.document_language`): the ``lang``
    #: option, the input's own, or the one its text's dominant script tells.
    language: Language = DEFAULT_LANGUAGE
    #: The ids the document's links lead to that no writer makes (each has its dead-link note,
    #: :func:`check_links`): every writer shows such a link's text only (an id as
    #: :func:`renderers.text.link_target` reads it from the link's URL).
    dead_links: frozenset[str] = frozenset()

    @property
    def warnings(self) -> tuple[str, ...]:
        """The messages of :attr:`notes`."""
        return messages(self.notes)

    @property
    def with_speaker_notes(self) -> ResolvedDocument:
        """The view that keeps the speaker notes (this one when there are none)."""
        return self.speaker_view or self

    @property
    def title(self) -> str:
        return self.document.title

    @property
    def usage_sids(self) -> tuple[int, ...]:
        return self.document.usage_sids


_ENTRY_TARGET = re.compile(r"#src-([1-9][0-9]{0,8})")


def entry_anchor(number: int) -> str:
    """The anchor of Sources entry ``number``: ``src-N``."""
    return f"src-{number}"


def entry_target(number: int) -> str:
    """The in-document link to Sources entry ``number`` (:func:`entry_anchor`)."""
    return f"#{entry_anchor(number)}"


def entry_number(url: str) -> int | None:
    """N of a link to Sources entry N (:func:`entry_target`), else None."""
    match = _ENTRY_TARGET.fullmatch(url)
    return int(match.group(1)) if match else None


def source_label(source: Source) -> str:
    """Domain for web sources (the row's own ``domain`` when it names one: see
    :func:`citations.links.source_domain`); for files and attachments the artifact path, else
    the file's name. A ``physical_path`` is where the file sits on the rendering machine
    (``/srv/data/tenant42/…``): it never reaches an output, only its last component does."""
    if safe_link(source.url):
        return source_domain(source) or source.url
    return source.artifact_path.strip() or file_name(source.physical_path)


def file_name(path: str) -> str:
    """The last component of a POSIX or Windows path (``C:\\x\\memo.pdf`` → ``memo.pdf``)."""
    return _PATH_SEPARATORS.split(path.strip().rstrip("/\\"))[-1]


def entry_date(source: Source) -> str:
    """The date a default Sources entry shows: the publication date, else the day the source
    was fetched, said as such ("accessed 2024-09-30") so it is not read as a publication
    date."""
    if source.published_at:
        return day_of(source.published_at)
    return f"accessed {day_of(source.fetched_at)}" if source.fetched_at else ""


#: An ISO 8601 date with a time of day (``2024-09-30T10:00:00Z``, ``2024-09-30 10:00``).
_DATE_TIME = re.compile(
    r"(\d{4}-\d{2}-\d{2})[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?",
    re.IGNORECASE,
)


def day_of(value: str) -> str:
    """The day of an ISO 8601 date-time (a reader wants the date, not the crawler's clock);
    any other text (``2024-09-30``, ``March 2024``) as it is."""
    value = value.strip()
    match = _DATE_TIME.fullmatch(value)
    return match.group(1) if match else value


def document_direction(document: Document) -> Direction:
    """The document's direction by its first strong character, as ``dir="auto"`` on the page
    decides; left to right when it has none."""
    return blocks_direction(document.blocks) or "ltr"


def entry_location(source: Source, words: Labels) -> str:
    """Where in ``source`` it is cited, as its entry shows it: the pages an adapter recorded,
    worded in the document's language ("Seiten 3–4, 7"), or a pool's own words as written."""
    return worded_pages(source_location(source), words.cited_page, words.cited_pages)


def source_title(source: Source, words: Labels) -> str:
    """The title to show: the row's title, else its label, else ``Source <sid>`` in the
    document's ``words``."""
    return source.title.strip() or source_label(source) or words.source.format(sid=source.sid)


def resolve(
    document: Document,
    pool: SourcePool,
    *,
    numbering: NumberingMode = "appearance",
    strict: bool = False,
    sources_heading: str = "",
    lang: str = "",
    links: bool = True,
) -> ResolvedDocument:
    """Number ``document``'s citations against ``pool``.

    Unknown sids are dropped with a warning (or raise :class:`StrictError` when ``strict``),
    in speaker notes too. Speaker notes are taken out of the result's document and kept in
    its ``speaker_view`` (:mod:`renderers.speaker_notes`). The result's ``language`` is
    ``lang`` (a canonical BCP 47 tag) when given, else the document's own or detected one
    (:func:`renderers.language.document_language`, over the whole document, notes included).
    The Sources heading is ``sources_heading``, else the language's word
    (:func:`renderers.labels.labels_for`: "Sources", "Quellen"). With ``links``, the links to
    the writers' own ids are checked (:func:`check_links`); a caller that restyles the result
    first (which may give citations notes) passes False and checks after.
    """
    language = document_language(document, lang)
    words = labels_for(language)
    heading = sources_heading or words.sources
    if not has_speaker_notes(document.blocks):
        rdoc = _resolve(document, pool, numbering, strict, heading, words)
        rdoc = dataclasses.replace(rdoc, language=language)
    else:
        full = _resolve(document, pool, numbering, strict, heading, words)
        full = dataclasses.replace(full, language=language)
        body = dataclasses.replace(document, blocks=without_speaker_notes(document.blocks))
        shown = _resolve(body, pool, numbering, strict, heading, words)
        rdoc = dataclasses.replace(shown, notes=full.notes, speaker_view=full, language=language)
    return check_links(rdoc, strict=strict) if links else rdoc


def check_links(rdoc: ResolvedDocument, *, strict: bool = False) -> ResolvedDocument:
    """``rdoc`` with a note for each link to an id of the writers' own form that they make for
    none of its views (:func:`generated_anchors`: ``#cite-99``, ``#fig-12``, ``#cnote-1`` when
    no citation is a note), and with :attr:`ResolvedDocument.dead_links` set: those ids and the
    ones the reader found no element for. Run after any citation style, which decides which
    citations are notes; ``strict`` raises :class:`StrictError` on such a link. An anchor of
    that form the input names itself (the Markdown writer's ``<a id="src-2">``, read back) is
    a place only where the writers make none: else it is left out, the writers' place wins."""
    document = rdoc.document
    dead: list[Diagnostic] = []
    targets = set(document.dead_links)
    own = {node.id for node in iter_inlines(reading_blocks(document))
           if isinstance(node, Anchor) and RESERVED_ANCHOR.match(node.id)}
    if document.anchor_notes or own:
        made = generated_anchors(reading_blocks(document), rdoc.entries)
        if rdoc.speaker_view is not None:
            made |= generated_anchors(reading_blocks(rdoc.speaker_view.document), rdoc.entries)
        if own & made:
            rdoc = _without_anchors(rdoc, own & made)
        for target, note in document.anchor_notes:
            if target not in made:
                dead.append(note)
                targets.add(target)
    if strict and dead:
        raise StrictError(summary(dead))
    return dataclasses.replace(rdoc, notes=(*rdoc.notes, *dead), dead_links=frozenset(targets))


def _without_anchors(rdoc: ResolvedDocument, ids: set[str]) -> ResolvedDocument:
    """``rdoc`` (and its speaker view) without the :class:`Anchor` nodes of ``ids``."""

    def tidy(run: list[Inline]) -> tuple[Inline, ...]:
        return tuple(n for n in run if not (isinstance(n, Anchor) and n.id in ids))

    view = rdoc.speaker_view
    if view is not None:
        view = dataclasses.replace(view, document=map_document(view.document, _keep, tidy=tidy))
    return dataclasses.replace(rdoc, document=map_document(rdoc.document, _keep, tidy=tidy),
                               speaker_view=view)


def _resolve(
    document: Document,
    pool: SourcePool,
    numbering: NumberingMode,
    strict: bool,
    sources_heading: str,
    words: Labels,
) -> ResolvedDocument:
    document = map_document(document, _keep, tidy=_cites_after_links)
    cites = planning_order(reading_blocks(document))
    plan = plan_citations((c.sids for c in cites), pool, numbering)
    notes = list(document.notes)
    if plan.unknown_sids:
        unknown = plan.unknown_sids  # all of them are in sources_used.json; the note names a few
        listed = ", ".join(str(s) for s in unknown[:MAX_PER_CODE])
        if len(unknown) > MAX_PER_CODE:
            listed += f" and {len(unknown) - MAX_PER_CODE:,} more"
        message = f"unknown sids not in the sources pool: {listed}"
        if strict:
            raise StrictError(message)
        notes.append(Diagnostic(Code.UNKNOWN_SID, message))
    if strict and document.notes:
        raise StrictError(summary(document.notes))

    counter = iter(range(1, len(cites) + 1))
    first_anchor: dict[int, str] = {}

    def number(cite: Cite) -> Cite:
        anchor = f"cite-{next(counter)}"
        numbers = plan.numbers_for(cite.sids)
        for n in numbers:
            first_anchor.setdefault(n, anchor)
        return dataclasses.replace(cite, numbers=numbers, anchor=anchor)

    def number_leaf(node: Inline) -> Inline:
        return number(node) if isinstance(node, Cite) else node

    numbered = map_document(
        document, number_leaf, tidy=lambda run: _mark_joined(_drop_unresolved(run))
    )
    # the abstract's figures and references are numbered in reading order too
    every, crossref_notes = number_crossrefs(reading_blocks(numbered))
    cut = len(numbered.abstract)
    if strict and crossref_notes:
        raise StrictError(summary(crossref_notes))
    notes += crossref_notes
    direction = document_direction(document)
    entries = tuple(
        SourceEntry(
            number=n,
            sid=source.sid,
            source=source,
            title=source_title(source, words),
            url=safe_link(source.url),
            label=source_label(source),
            date=entry_date(source),
            anchor=entry_anchor(n),
            backlink=first_anchor.get(n, ""),
            location=entry_location(source, words),
            direction=direction,
        )
        for n, source in plan.entries
    )
    return ResolvedDocument(
        document=dataclasses.replace(numbered, abstract=every[:cut], blocks=every[cut:]),
        plan=plan,
        entries=entries,
        notes=tuple(notes),
        sources_heading=sources_heading,
    )


def generated_anchors(blocks: tuple[Block, ...], entries: Sequence[SourceEntry]) -> set[str]:
    """The anchors of the writers' own form (:data:`renderers.text.RESERVED_ANCHOR`) that the
    writers make for a resolved document, so that a link to another one gets its note: each
    citation's (``cite-K``, and ``cnote-K`` for the note a citation style gave it), the Sources
    list and its entries, each author note (``fn-N``; ``fnref-N`` when referenced) and each
    numbered figure, table, listing or equation."""
    from renderers.writers.common import AuthorNotes  # the writers' numbering (imports this)

    made = {"sources"} if entries else set()
    cites = [n for n in iter_inlines(blocks) if isinstance(n, Cite) and n.numbers]
    made.update(cite.anchor for cite in cites)
    made.update(f"cnote-{cite.note}" for cite in cites if cite.note)
    made.update(entry.anchor for entry in entries)
    for note in AuthorNotes(blocks):
        made.add(note.anchor)
        if note.referenced:
            made.add(note.reference_anchor)
    made.update(
        numbered_anchor(block.label, block.number) for block in iter_blocks(blocks)
        if isinstance(block, Figure | Table | CodeBlock) and block.label and block.number
    )
    made.update(
        node.anchor for node in iter_inlines(blocks) if isinstance(node, Math) and node.anchor
    )
    return made


def _mark_joined(inlines: tuple[Inline, ...]) -> tuple[Inline, ...]:
    """Mark each citation that stands right after another one (``[[S:2]][[S:3]]``): its
    superscript opens with a separator, so the pair reads ``²,³`` and never ``²³``."""
    out: list[Inline] = []
    previous: Inline | None = None
    for node in inlines:
        if isinstance(node, Cite) and isinstance(previous, Cite):
            node = dataclasses.replace(node, joined=True)
        out.append(node)
        if not (isinstance(node, Text) and not node.text):
            previous = node
    return tuple(out)


def _keep(node: Inline) -> Inline:
    return node


def _cites_after_links(inlines: list[Inline]) -> tuple[Inline, ...]:
    """Each link's citations taken out of its text and set right after it as one citation.

    A link cannot hold a citation's own link, so every format shows them after the link; side
    by side there, citations written apart (``[solar [[S:1]] and wind [[S:2]]](…)``) read as
    "12". As one citation their numbers read "1, 2" (a range when they run on, "1–3"), and a
    citation written right after the link is joined to it like any other (:func:`_mark_joined`).
    The link's text loses the space each citation leaves (:func:`_drop_cites`); a link left
    showing nothing is not kept.
    """
    if not any(isinstance(node, Link) for node in inlines):
        return tuple(inlines)
    out: list[Inline] = []
    for node in inlines:
        cites = _cites_within(node) if isinstance(node, Link) else []
        if not isinstance(node, Link) or not cites:
            out.append(node)
            continue
        text = _without_cites(node.children)
        if all(isinstance(child, Text) and not child.text.strip() for child in text):
            out.extend(text)
        else:
            out.append(dataclasses.replace(node, children=text))
        out.append(Cite(tuple(dict.fromkeys(sid for cite in cites for sid in cite.sids))))
    return tuple(out)


def _cites_within(node: Inline) -> list[Cite]:
    """The citations inside ``node`` (a link and the emphasis or styles in it), in order."""
    found: list[Cite] = []
    pending: list[Inline] = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, Cite):
            found.append(current)
        elif isinstance(current, Emph | Strong | Strike | Styled | Link):
            pending.extend(reversed(current.children))
    return found


def _without_cites(inlines: tuple[Inline, ...]) -> tuple[Inline, ...]:
    """``inlines`` without their citations, at every depth, and the space each leaves (an
    emphasis that held only a citation goes with it)."""
    kept: list[Inline] = []
    for node in inlines:
        if isinstance(node, Emph | Strong | Strike | Styled | Link):
            children = _without_cites(node.children)
            node = dataclasses.replace(node, children=children) if children else Cite(())
        kept.append(node)
    return _drop_cites(kept, lambda cite: True)


def _drop_unresolved(inlines: list[Inline]) -> tuple[Inline, ...]:
    """Remove citations left without numbers (all sids unknown) and the space they leave."""
    return _drop_cites(inlines, lambda cite: not cite.numbers)


def _drop_cites(inlines: list[Inline], dropped: Callable[[Cite], bool]) -> tuple[Inline, ...]:
    """Remove the citations ``dropped`` picks and the space they leave.

    ``claim [[S:99]].`` reads ``claim.``, not ``claim .``: when the dropped citation is followed by
    closing punctuation, white space or the end of the run, the preceding text loses its trailing
    white space.
    """
    if not any(isinstance(n, Cite) and dropped(n) for n in inlines):
        return tuple(inlines)
    out: list[Inline] = []
    for index, node in enumerate(inlines):
        if not (isinstance(node, Cite) and dropped(node)):
            out.append(node)
            continue
        following = inlines[index + 1] if index + 1 < len(inlines) else None
        closes = following is None or (
            isinstance(following, Text)
            and following.text[:1] in CLOSING_PUNCTUATION | {" ", "\n", ""}
        )
        if closes and out and isinstance(out[-1], Text):
            out[-1] = Text(out[-1].text.rstrip(" "))
    return tuple(out)
