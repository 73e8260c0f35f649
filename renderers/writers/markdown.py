"""The Markdown writer: normalized CommonMark + GFM with citations as ``[^N]`` footnotes.

Every citation number becomes a footnote reference (``[^1][^3]``, a run too: ``[^1][^2][^3]``,
since a definition no reference names drops out of the rendered footnotes) and the Sources
section is a heading followed by one
``[^N]: [Title](url) — label · date`` definition per entry. Author notes are labelled with
their letters (``[^a]``, :func:`renderers.writers.common.note_marker`), the same letters every
other format shows, which can never clash with the numeric citation labels.
Text is escaped so that reading the output back gives the same document; code is verbatim inside
a fence longer than any backtick run it contains.
"""

from __future__ import annotations

import dataclasses
import html
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import quote

from citations.links import safe_link
from renderers.document import (
    CROSSREF_LABEL,
    UNLISTED,
    Anchor,
    Block,
    BlockQuote,
    BulletList,
    Cite,
    Code,
    CodeBlock,
    CrossRef,
    Emph,
    Figure,
    FootnoteDef,
    FootnoteRef,
    Heading,
    Image,
    Inline,
    LineBreak,
    Link,
    ListItem,
    Math,
    OrderedList,
    Paragraph,
    RawBlock,
    RawInline,
    SoftBreak,
    Strike,
    Strong,
    Styled,
    Table,
    TableCell,
    Text,
    ThematicBreak,
    crossref_may_follow,
    iter_blocks,
    iter_inlines,
    label_kind,
    numbered_anchor,
    plain_text,
    reading_blocks,
    walk_inlines,
)
from renderers.errors import UnsupportedNodeError
from renderers.labels import Labels
from renderers.language import language_for
from renderers.metadata import metadata_block
from renderers.options import RenderOptions
from renderers.readers.heading_attrs import escape_attribute_block
from renderers.readers.sanitize import safe_image_src
from renderers.resolve import ResolvedDocument, SourceEntry, entry_anchor, entry_number
from renderers.sandbox import load_image
from renderers.text import BIDI_CONTROLS, RESERVED_ANCHOR, link_target
from renderers.writers import Artifact, WriteSource
from renderers.writers.common import (
    CITATION_NOTES_ID,
    CONTENTS_ID,
    NOTES_ID,
    AuthorNote,
    AuthorNotes,
    ImageBytes,
    document_authors,
    document_title,
    document_words,
    entry_parts,
    image_fallback,
    shows_nothing,
    title_block,
    unresolved_note_text,
)
from renderers.writers.markdown_ids import AutoIds, IdText, PandocIds

_ESCAPE_ALWAYS = re.compile(r"[\\`*_\[\]<|~]")
_ENTITY = re.compile(r"&(?=#[0-9]{1,7};|#[xX][0-9a-fA-F]{1,6};|[A-Za-z][A-Za-z0-9]{1,31};)")
#: A ``$`` that could close a formula (after a non-space, not before a digit) and an ``@``
#: that would start a cross-reference: escaped so that text never reads back as math or
#: a reference ("$5 and $10" needs nothing).
_MATH_DOLLAR = re.compile(r"(?:(?<=\S)|^)\$(?!\d)")
_CROSSREF_AT = re.compile(rf"@(?={CROSSREF_LABEL})")
_LINE_START_MARK = re.compile(r"[#>+\-=:]")
_LINE_START_ORDERED = re.compile(r"^(\d{1,9})([.)])")
_FULLWIDTH = {"\uff3b": "&#xFF3B;", "\uff3d": "&#xFF3D;"}


def markdown_text(rdoc: ResolvedDocument, options: RenderOptions) -> str:
    """The whole document as Markdown, ending with its Sources section and a newline; a
    declared language leads as pandoc's metadata block (``lang:``, ``dir: rtl``), and so does
    the title block (:func:`title_block`) with its title: a title no heading shows is then
    declared there rather than written as a first heading, since pandoc shows a subtitle,
    authors, date and abstract only under a declared title.

    Written again while a heading's id clashes with another id of the output
    (:class:`HeadingPlan`): the headings it names are then written as HTML; and once more
    when a note a link leads to is referenced more than once (:attr:`LinkPlaces.shared`)."""
    words = document_words(rdoc, options)
    places = LinkPlaces.of(rdoc)
    images = ImageDefinitions(options)  # shared by the passes: each image is loaded once
    plan = HeadingPlan()
    while True:  # each writing again writes one more heading as HTML at least, or the
        written = places.unwritten()  # shared notes' anchors at their references
        text = _markdown_pass(rdoc, options, words, written, images, plan)
        following, shared = plan.next_plan(written.placed), written.shared_places()
        if following is None and shared == places.shared:
            return text
        places = dataclasses.replace(places, shared=shared)
        plan = following or plan.again()


def _markdown_pass(rdoc: ResolvedDocument, options: RenderOptions, words: Labels,
                   places: LinkPlaces, images: ImageDefinitions, plan: HeadingPlan) -> str:
    """One writing of :func:`markdown_text`, its headings as ``plan`` says."""
    writer = _BlockWriter(_note_labels(reading_blocks(rdoc.document)), images, words, places,
                          plan, own_page=rdoc.document.own_page)
    # the abstract as markdown, written first (its citations are the first footnotes)
    abstract = writer.blocks(rdoc.document.abstract) if rdoc.document.abstract else ""
    blocks: list[Block] = list(rdoc.document.blocks)
    title = document_title(rdoc.document, options)
    if title.added and not title_block(rdoc.document, options, words):
        blocks.insert(0, Heading(1, (Text(title.text),)))
    chunks = [writer.blocks(tuple(blocks))] if blocks else []
    chunks.append(writer.images.definitions())
    if rdoc.entries:
        heading: tuple[Inline, ...] = (Text(rdoc.sources_heading),)
        if SOURCES_ID in places.named or _names_sources(rdoc.sources_heading):
            # #sources leads to the list: its heading's own id when both readers give it
            # that one (the anchor is then left out), else the anchor
            heading = (Anchor(SOURCES_ID), *heading)
        chunks.append(writer.block(Heading(2, heading)))
        chunks.append("\n".join(sources_definition(entry, writer.images, words, places)
                                 for entry in rdoc.entries))
    text = "\n\n".join(chunk for chunk in chunks if chunk)
    document = rdoc.document
    metadata = metadata_block(
        language_for(rdoc, options),
        title=_title_to_declare(title.text, blocks),
        authors=document_authors(document, options),
        date=document.date,
        keywords=document.keywords,
        description=document.description,
        subtitle=document.subtitle,
        abstract=abstract,
    )
    return "\n".join(part for part in (metadata, text + "\n" if text else "") if part)


SOURCES_ID = "sources"
#: The ``#`` ending a heading's text and the backslashes before it: pandoc's ``markdown``
#: reads a heading's trailing ``#``s as closing marks even without a space before them (``## C#``
#: is "C"), CommonMark only after one; escaping the last one keeps them text for both.
_CLOSING_HASH = re.compile(r"(\\*)#$")
#: Places the other writers make that the Markdown output has none of (no Notes, Citation
#: notes or Contents section).
_NO_PLACE = re.compile(rf"^(?:{NOTES_ID}|{CITATION_NOTES_ID}|{CONTENTS_ID})$")


@dataclass
class LinkPlaces:
    """Where the document's in-document links lead in the Markdown output.

    ``named``: the writers' own places (:data:`renderers.text.RESERVED_ANCHOR`: a Sources
    entry, a citation or a note style's note of it, an author note or its reference, the
    Sources heading) that a link of the document leads to: each gets an ``<a id>`` where it
    is written, the one way Markdown names a place (pandoc's HTML keeps it), and only then,
    so documents without such links keep their bytes (numbered captions always carry
    theirs). ``dead``: the ids a link to is written as its text,
    :attr:`ResolvedDocument.dead_links` and the places Markdown has none of
    (:data:`_NO_PLACE`). Each anchor is written once: at a note's first reference.
    ``placed``: every id the output names (its anchors, its HTML headings' ids), for the
    headings' own ids to keep clear of (:class:`HeadingPlan`). ``shared``: the places of
    notes (a Sources entry, an author note) referenced more than once, found by a writing
    (``references``): pandoc's readers copy a note into each reference, so an anchor in its
    definition would be there as often; it stands at the note's first reference instead, as
    Word's footnotes have it.
    """

    named: frozenset[str] = frozenset()
    dead: frozenset[str] = frozenset()
    written: set[str] = field(default_factory=set)
    placed: set[str] = field(default_factory=set)
    shared: frozenset[str] = frozenset()
    references: Counter[str] = field(default_factory=Counter)

    @classmethod
    def of(cls, rdoc: ResolvedDocument) -> LinkPlaces:
        blocks = reading_blocks(rdoc.document)
        targets = {link_target(node.url) for node in iter_inlines(blocks)
                   if isinstance(node, Link)} - {""} - rdoc.dead_links
        # a section Markdown lacks, unless the author's own heading or anchor has its id
        owned = {block.id for block in iter_blocks(blocks) if isinstance(block, Heading)}
        owned |= {node.id for node in iter_inlines(blocks) if isinstance(node, Anchor)}
        unplaced = {target for target in targets
                    if _NO_PLACE.match(target) and target not in owned}
        return cls(frozenset(targets - unplaced), rdoc.dead_links | unplaced)

    def unwritten(self) -> LinkPlaces:
        """These places with nothing written yet (for another writing of the document)."""
        return dataclasses.replace(self, written=set(), placed=set(), references=Counter())

    def note_place(self, ident: str) -> str:
        """The anchor of a note's place ``ident`` in its definition ("" when it is shared)."""
        return "" if ident in self.shared else self.anchor(ident)

    def reference(self, ident: str) -> str:
        """A reference to the note whose place is ``ident``, counted: the place's anchor
        when the note is shared and this is its first reference, else ""."""
        self.references[ident] += 1
        return self.anchor(ident) if ident in self.shared else ""

    def shared_places(self) -> frozenset[str]:
        """The places a link leads to of notes this writing referenced more than once."""
        return frozenset(ident for ident, count in self.references.items()
                         if count > 1 and ident in self.named)

    def anchor(self, ident: str) -> str:
        """``<a id="…"></a>`` when a link leads to ``ident`` and it is not written yet, else ""."""
        if ident not in self.named or ident in self.written:
            return ""
        self.written.add(ident)
        return self.tag(ident)

    def tag(self, ident: str) -> str:
        """``<a id="ident"></a>``, the one way to name a place in Markdown (pandoc's HTML
        keeps it), counted as an id of the output."""
        self.placed.add(ident)
        return f'<a id="{html.escape(ident, quote=True)}"></a>'


def _names_sources(text: str) -> bool:
    """Whether a first heading of ``text`` is ``sources`` in both readers (``Sources``)."""
    ids = IdText()
    ids.text(text)
    first = PandocIds().next(ids)
    return first.markdown == first.gfm == SOURCES_ID


def _title_to_declare(title: str, blocks: list[Block]) -> str:
    """The title the front matter must name: "" when the first level-1 heading written gives
    it back (the title a reader takes from it), as it does when the title is added as one."""
    first = next((b for b in blocks if isinstance(b, Heading) and b.level == 1), None)
    if first is not None and " ".join(plain_text(first.children).split()) == title:
        return ""
    return title


def markdown_artifact(source: WriteSource) -> Artifact:
    """The Markdown writer's artifact (for the writer registry)."""
    return Artifact.of_text(markdown_text(source.rdoc, source.options))


def sources_definition(entry: SourceEntry, images: ImageDefinitions, words: Labels,
                       places: LinkPlaces | None = None) -> str:
    """``[^N]: [Title](url) — label · date``: the entry's parts, its title linked when it has
    a URL (or the entry as its CSL style formats it), after the entry's anchor when a link
    leads there (:class:`LinkPlaces`). No back-link: Markdown renderers add their own to
    every footnote."""
    parts = entry_parts(entry)
    lead = places.note_place(entry.anchor) if places is not None else ""
    if parts.formatted:  # a CSL style's entry; the footnote label already numbers it
        writer = _InlineWriter({}, images=images, words=words, single_line=True,
                               line_start=False)
        writer.inlines(parts.formatted)
        return f"[^{parts.number}]: {lead}{writer.text().strip()}"
    title = escape_text(parts.title, line_start=False)
    if parts.url:
        title = f"[{title}]({_destination(parts.url)})"
    details = "".join(
        d.plain_separator + escape_text(d.text, line_start=False) for d in parts.details
    )
    return f"[^{parts.number}]: {lead}{title}{details}"


# ---------------------------------------------------------------- escaping


def _escape_crossref_at(match: re.Match[str]) -> str:
    """``\\@`` for an ``@`` the reader would take as a cross-reference (at the start of the
    text, whatever ends the text before, it may be one), else the ``@`` itself."""
    at = match.start()
    return "\\@" if at == 0 or crossref_may_follow(match.string[at - 1]) else "@"


def escape_text(text: str, *, line_start: bool) -> str:
    """Escape ``text`` (one line, no newline) so Markdown reads it back as the same text.

    Inline syntax (emphasis, code, links, HTML, entities, tables, strikethrough) is escaped
    everywhere; block syntax (headings, quotes, list markers, setext underlines) only at the
    start of a line, where leading white space is also dropped (it is not significant there).
    """
    out = _ESCAPE_ALWAYS.sub(lambda m: "\\" + m.group(0), text)
    out = _ENTITY.sub("\\\\&", out)
    if "$" in out:
        out = _MATH_DOLLAR.sub("\\\\$", out)
    if "@" in out:
        out = _CROSSREF_AT.sub(_escape_crossref_at, out)
    for char, entity in _FULLWIDTH.items():
        out = out.replace(char, entity)
    # Bidi controls as character references, which read back as the same text: the Markdown
    # file then shows them in an editor or a diff rather than reordering its lines there (a
    # source's title holding U+202E reversed its Sources line in the raw file).
    if BIDI_CONTROLS.search(out):
        out = BIDI_CONTROLS.sub(lambda m: f"&#x{ord(m.group(0)):X};", out)
    return escape_line_start(out) if line_start else out


def escape_line_start(text: str) -> str:
    """Escaped text (:func:`escape_text`) made safe at the start of a line: leading white
    space dropped, and a mark that would start a heading, a quote, a list or a setext
    underline there escaped."""
    out = text.lstrip(" \t")
    if _LINE_START_MARK.match(out):
        return "\\" + out
    return _LINE_START_ORDERED.sub(r"\1\\\2", out, count=1)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _fence(text: str, char: str = "`", minimum: int = 1) -> str:
    """A run of ``char`` longer than any run of it inside ``text`` (at least ``minimum``)."""
    runs = [len(m.group(0)) for m in re.finditer(re.escape(char) + "+", text)]
    return char * max(minimum, max(runs, default=0) + 1)


def code_span(text: str, *, table: bool = False) -> str:
    """An inline code span holding ``text`` verbatim (newlines become spaces, as in CommonMark).

    In a GFM table cell, pipes are escaped even inside code (the row is split first).
    """
    body = text.replace("\r\n", " ").replace("\n", " ")
    if table:
        body = body.replace("|", "\\|")
    fence = _fence(body)
    if body and (
        body[0] == "`"
        or body[-1] == "`"
        or (body[0] == " " and body[-1] == " " and body.strip(" "))
    ):
        body = f" {body} "
    return f"{fence}{body}{fence}"


_PRINTABLE_ASCII = "".join(chr(c) for c in range(33, 127))


def _destination(url: str) -> str:
    """A link destination that a CommonMark reader decodes to exactly ``url``: spaces and
    non-ASCII percent-encoded; brackets, backslashes and ``&`` escaped (an unescaped ``&#x6A;``
    would decode to ``j`` and turn a checked relative path into ``javascript:``)."""
    cleaned = quote(url, safe=_PRINTABLE_ASCII)
    return re.sub(r"([\\()<>&])", r"\\\1", cleaned)


def _link_title(title: str) -> str:
    return ' "' + re.sub(r'([\\"])', r"\\\1", _one_line(title)) + '"' if title.strip() else ""


def _autolink(url: str) -> str:
    """``<url>`` with anything an autolink cannot hold percent-encoded."""
    return "<" + quote(url, safe=_PRINTABLE_ASCII.replace("<", "").replace(">", "")) + ">"


# ---------------------------------------------------------------- inlines


class _InlineWriter:
    """Renders inlines into one string, tracking line starts and footnote-reference adjacency.

    ``single_line`` (table cells, headings) turns breaks into spaces; in ``table`` mode pipes
    inside code spans are escaped too. Footnote references met inside a link are collected in
    ``deferred`` and emitted right after the link, so they never nest inside link text. A link
    to one of ``places.dead`` (:attr:`ResolvedDocument.dead_links`, :class:`LinkPlaces`) is
    written as its text, as every writer shows it. A heading's writer gathers the text its
    id is made from in ``ids`` (:class:`IdText`).
    """

    def __init__(
        self,
        labels: dict[str, AuthorNote],
        *,
        single_line: bool = False,
        table: bool = False,
        line_start: bool = True,
        deferred: list[str] | None = None,
        images: ImageDefinitions,
        words: Labels,
        places: LinkPlaces | None = None,
        ids: IdText | None = None,
    ):
        self.labels = labels
        self.ids = ids
        self.images = images
        self.places = places if places is not None else LinkPlaces()
        self.words = words  # the document's (renderers.labels)
        self.single_line = single_line or table
        self.table = table
        self.deferred = deferred
        self.parts: list[str] = []
        self._line_start = line_start
        self._after_ref = False

    def text(self) -> str:
        parts = list(self.parts)
        while parts and parts[-1] in ("\\\n", "\n"):
            parts.pop()
        return re.sub(r"[ \t]+\n", "\n", "".join(parts))

    def emit(self, chunk: str, *, ref: bool = False) -> None:
        if not chunk:
            return
        self.parts.append(chunk)
        self._line_start = chunk.endswith("\n")
        self._after_ref = ref

    def inlines(self, nodes: Iterable[Inline]) -> None:
        for node in nodes:
            self.inline(node)

    def inline(self, node: Inline) -> None:
        match node:
            case Text(text) | RawInline(text):
                self._text(text)
            case Anchor(ident):
                self.emit(self.places.tag(ident))
            case Emph(children):
                self._wrap("*", children)
            case Strong(children):
                self._wrap("**", children)
            case Strike(children):
                self._wrap("~~", children)
            case Styled(style, children, title):
                # CommonMark carries these as inline HTML: the closed set of safe tags.
                attrs = f' title="{html.escape(title, quote=True)}"' if title else ""
                self._wrap(f"<{style}{attrs}>", children, f"</{style}>")
            case Code(text):
                if self.ids is not None:
                    self.ids.text(text, smart=False)
                self.emit(code_span(text, table=self.table))
            case Link(url, children, title):
                self._link(url, children, title)
            case Image():
                if self.ids is not None:
                    shown = self.images.label(node) is not None
                    self.ids.text(_one_line(node.alt) if shown
                                  else image_fallback(node, self.words))
                self.emit(self.image(node))
            case LineBreak():
                self._break("\\\n")
            case SoftBreak():
                self._break("\n")
            case FootnoteRef(label):
                if label in self.labels:
                    note = self.labels[label]
                    self._ref(note.marker, self.places.anchor(note.reference_anchor),
                              place=note.anchor)
                else:
                    self._text(unresolved_note_text(label))
            case Cite(children=children, note=0, anchor=anchor) if children:
                self.emit(self.places.anchor(anchor))
                self._styled_cite(children)
            case Cite(numbers=numbers, anchor=anchor, note=note):
                # a note style's note (cnote-K) is this citation's references here
                self.emit(self.places.anchor(anchor) + self.places.anchor(f"cnote-{note}"))
                # Every number its own reference, a run included: a footnote definition no
                # reference names is left out of the rendered list, so [^1]–[^3] would drop
                # source 2 from the Sources (the numbers are bounded by limits.max_cited_sids).
                for number in numbers:
                    self._ref(str(number), place=entry_anchor(number))
            case Math(tex, display, label):
                if self.ids is not None:
                    self.ids.text(tex, smart=False)
                # a numbered equation keeps its label, pandoc-crossref's, which numbers it
                # again when read back (the references are links to its eq-N)
                label_shown = f" {{#{label}}}" if display and label else ""
                self.emit(math_source(tex, display) + label_shown)
            case CrossRef(linked=False):  # inside the author's link: its words alone
                self._text(node.lead(self.words) + node.shown(self.words))
            case CrossRef():
                if lead := node.lead(self.words):  # a group's words between its links
                    self._text(lead)
                self._link(f"#{node.anchor}", (Text(node.shown(self.words)),), "")
            case _:
                raise UnsupportedNodeError(f"markdown writer: unsupported inline node {node!r}")

    def _styled_cite(self, children: tuple[Inline, ...]) -> None:
        """A citation in a CSL style or citation format ("(IEA, 2025)", "[1, 3]"): its words,
        each link to a Sources entry (``#src-N``) followed by that entry's footnote reference,
        Markdown's only link to an entry."""
        for child in children:
            number = entry_number(child.url) if isinstance(child, Link) else None
            if number is None or not isinstance(child, Link):
                self.inline(child)
                continue
            if plain_text(child.children) != str(number):  # "[1]": the reference is the number
                self.inlines(child.children)
            self._ref(str(number), place=entry_anchor(number))

    def _break(self, chunk: str) -> None:
        if self.single_line:
            if self.ids is not None:
                self.ids.text(" ")
            self.emit(" ")
        elif self.parts and not self._line_start:
            self.emit(chunk)

    def _ref(self, label: str, lead: str = "", *, place: str = "") -> None:
        """A footnote reference (after ``lead``, its anchor, and the anchor of the note's
        ``place`` when it goes here: :meth:`LinkPlaces.reference`), deferred inside a link."""
        chunk = f"{lead}{self.places.reference(place) if place else ''}[^{label}]"
        if self.ids is not None:
            self.ids.label(label)
        if self.deferred is not None:
            self.deferred.append(chunk)
        else:
            self.emit(chunk, ref=True)

    def _text(self, text: str) -> None:
        lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        for index, line in enumerate(lines):
            if index:
                self._break("\n")
            if self.ids is not None:
                self.ids.text(line)
            escaped = escape_text(line, line_start=self._line_start and not self.single_line)
            if self._after_ref and escaped[:1] in (":", "("):
                escaped = "\\" + escaped
            self.emit(escaped)

    def _child(self, deferred: list[str] | None = None) -> _InlineWriter:
        return _InlineWriter(
            self.labels,
            single_line=self.single_line,
            table=self.table,
            line_start=False,
            deferred=self.deferred if deferred is None else deferred,
            images=self.images,
            words=self.words,
            places=self.places,
            ids=self.ids,
        )

    def _wrap(self, delimiter: str, children: tuple[Inline, ...], closing: str = "") -> None:
        inner = self._child()
        inner.inlines(children)
        body = inner.text()
        core = body.strip(" \t\n")
        lead = body[: len(body) - len(body.lstrip(" \t\n"))]
        trail = body[len(body.rstrip(" \t\n")) :]
        if lead and not self._line_start:
            self.emit(lead)
        if core:
            self.emit(f"{delimiter}{core}{closing or delimiter}")
        if trail:
            self.emit(trail)

    def _link(self, url: str, children: tuple[Inline, ...], title: str) -> None:
        target = safe_link(url, allow_fragment=True)
        if not target or link_target(url) in self.places.dead:
            self.inlines(children)
            return
        refs: list[str] = []
        inner = self._child(deferred=refs)
        inner.inlines(children)
        simple = len(children) == 1 and isinstance(children[0], Text)
        is_url = re.match(r"^(https?|mailto):", target) is not None
        # note references inside the link follow it (its citations already do:
        # renderers.resolve): the space before them stays out of its text
        text = inner.text().rstrip(" ") if refs else inner.text()
        if simple and plain_text(children) == target and not title and is_url:
            self.emit(_autolink(target))
        elif not shows_nothing(children):
            self.emit(f"[{text}]({_destination(target)}{_link_title(title)})")
        for ref in refs:
            if self.deferred is not None:
                self.deferred.append(ref)
            else:
                self.emit(ref, ref=True)

    def image(self, image: Image) -> str:
        """``![alt][image-N]`` with the image embedded, or the fallback text when it is not
        loaded (remote, refused, broken), as every other format shows it."""
        label = self.images.label(image)
        if label is None:
            return escape_text(image_fallback(image, self.words), line_start=False)
        return f"![{escape_text(_one_line(image.alt), line_start=False)}][{label}]"


class ImageDefinitions:
    """The document's images, embedded as ``data:`` reference definitions, each written once.

    Like the standalone HTML, the Markdown stands alone: every image is loaded through the
    sandbox (:func:`renderers.sandbox.load_image`: inside the base directory, a real raster
    image, never remote) and embedded, so the file shows its images wherever it is written or
    moved; a path relative to the input would break as soon as the output is written elsewhere.
    An image used many times (a reference definition used 200 times) would otherwise be repeated
    in full at every use: ``![a][image-1]`` at each use and one ``[image-1]: <data:…>`` after
    the document keep the output as small as the input. The writer writes every link inline,
    so these are the output's only reference definitions.
    """

    def __init__(self, options: RenderOptions) -> None:
        self.options = options
        self._labels: dict[tuple[str, str], str] = {}
        self._loaded: dict[tuple[str, str], str | None] = {}  # (src, title) → its label
        self.image_bytes = ImageBytes(options.limits.max_image_bytes)

    def label(self, image: Image) -> str | None:
        """The label of ``image``'s bytes with its title (a new one on first use), or None when
        the image is not loaded (the sandbox has reported why). Each image is loaded once."""
        key = (image.src, image.title)
        if key not in self._loaded:
            loaded = load_image(safe_image_src(image.src), self.options)
            label = None
            if loaded is not None:
                src = loaded.data_uri()
                self.image_bytes.add(len(src), key=src)
                label = self._labels.setdefault((src, image.title),
                                                f"image-{len(self._labels) + 1}")
            self._loaded[key] = label
        return self._loaded[key]

    def definitions(self) -> str:
        """The reference definitions, one per line (empty when no image was embedded)."""
        return "\n".join(
            f"[{label}]: {_destination(src)}{_link_title(title)}"
            for (src, title), label in self._labels.items()
        )


def math_source(tex: str, display: bool) -> str:
    """A formula as markdown writes it: ``$…$`` (``$$…$$`` displayed), or ``\\(…\\)`` when
    the TeX holds a dollar sign of its own. A lone backslash ending the TeX would escape the
    closing ``$`` (for pandoc too), so it is written ``\\backslash``: the same formula, a
    backslash drawn."""
    if (len(tex) - len(tex.rstrip("\\"))) % 2:  # "\\\\" (a line break) escapes nothing
        tex = f"{tex}backslash"
    if display:
        return f"$${tex}$$"
    return f"\\({tex}\\)" if "$" in tex else f"${tex}$"


def _note_labels(blocks: tuple[Block, ...]) -> dict[str, AuthorNote]:
    """Every defined author note's label → the note (its letter is its label in the output)."""
    return {note.label: note for note in AuthorNotes(blocks)}


# ---------------------------------------------------------------- blocks


def _indent(text: str, first: str, rest: str) -> str:
    lines = text.split("\n")
    out = [first + lines[0] if lines[0] else first.rstrip()]
    out += [rest + line if line else "" for line in lines[1:]]
    return "\n".join(out)


def _interrupts_paragraph(block: Block) -> bool:
    """Whether ``block`` may follow a paragraph line directly (no blank line) in CommonMark."""
    match block:
        case Heading() | BlockQuote():
            return True
        case CodeBlock(caption=caption, number=number):
            return not caption and not number  # a listing starts with its caption's paragraph
        case BulletList(items):
            return bool(items and items[0].blocks)
        case OrderedList(items, start):
            return start == 1 and bool(items and items[0].blocks)
        case _:
            return False


def _joins_tightly(previous: Block, block: Block) -> bool:
    """Whether two blocks of a tight list item may be separated by a single newline."""
    if isinstance(previous, Heading | CodeBlock | ThematicBreak):
        return True
    if isinstance(previous, Paragraph | Figure):
        return _interrupts_paragraph(block)
    return False


@dataclass
class HeadingPlan:
    """Which headings a writing of the Markdown writes as HTML, and what it found.

    A Markdown heading's id is the one its reader makes from its text
    (:mod:`renderers.writers.markdown_ids`). It clashes when another id of the output is the
    same: an anchor (the Sources list's ``<a id="sources">`` after an author's own heading
    "Sources", ``<a id="fig-1">`` after a heading "Fig 1"), an HTML heading's id, or one gfm's
    count gives twice. Such a heading is written as HTML, ``<h2 id="its-id">`` around its text:
    neither reader makes an id from it, and the markdown reader reads it back as that heading
    with that id. A heading's leading anchor of the writers' own that is its id in both readers
    (the Sources heading read back) is left out (:func:`_named_by_heading`); one of the
    author's clashes. So is a heading written as HTML whose own id the output keeps (linked,
    or the author's) when a reader would make another of its text (:meth:`as_html`).

    ``html``: the headings (by their order) to write as HTML; ``forbidden``: the ids the last
    writing named, which a heading written now must not get (its own leading anchors aside);
    ``as_html_ids``: every id a heading written as HTML may name (its own id, its leading
    anchors), which a heading written now must not get but its own, once the writings go on
    (:meth:`next_plan`).
    """

    html: frozenset[int] = frozenset()
    forbidden: frozenset[str] = frozenset()
    as_html_ids: dict[str, int] = field(default_factory=dict)
    ids: PandocIds = field(default_factory=PandocIds)
    #: the headings written as Markdown (order, ids) and those found clashing as written
    markdown: list[tuple[int, AutoIds]] = field(default_factory=list)
    decided: set[int] = field(default_factory=set)
    #: what each heading written names when written as HTML (id → the heading's order)
    names: dict[str, int] = field(default_factory=dict)
    count: int = 0
    writing: int = 0  # how many writings came before

    def as_html(self, auto: AutoIds, leads: tuple[str, ...], own: str, kept: bool,
                listed: bool = True) -> bool:
        """Whether the next heading, of ``auto`` ids, leading anchors ``leads`` and own id
        ``own`` (:attr:`Heading.id`, ``kept``: the output must keep it,
        :meth:`_BlockWriter._keeps_id`), is written as HTML; if not, it is counted as the
        readers count it. A heading whose kept id is not the one every reader gives it
        (:meth:`AutoIds.read_back`) is written as HTML, with its id: ``# 1. Intro`` is
        ``intro`` to pandoc's ``markdown``, and ``#1-intro`` led nowhere; ``## Results
        {#res}`` is ``<h2 id="res">``, since gfm shows an attribute block as text. So is a
        heading kept out of the contents (not ``listed``): ``{.unlisted}`` is
        ``<h2 class="unlisted">``, which the markdown reader reads back unlisted."""
        index, self.count = self.count, self.count + 1
        for ident in (own, *leads):
            if ident:
                self.names.setdefault(ident, index)
        if index in self.html:
            return True
        if (kept and not auto.read_back(own)) or not listed \
                or self._clashes(auto, leads, index):
            self.decided.add(index)
            return True
        self.ids.add(auto)
        self.markdown.append((index, auto))
        return False

    def _clashes(self, auto: AutoIds, leads: tuple[str, ...], index: int) -> bool:
        """Whether a heading's ids clash as it is written: with one the last writing named
        (its own leading anchors aside) or another heading may name as HTML, or with a
        leading anchor it keeps (the id of one reader only), or in gfm's count."""
        for ident in auto.ids():
            if ident in leads:
                if not _named_by_heading(ident, auto):
                    return True
            elif ident in self.forbidden or self.as_html_ids.get(ident, index) != index:
                return True
        return auto.gfm_taken

    def again(self) -> HeadingPlan:
        """This plan for another writing, nothing counted yet."""
        return HeadingPlan(html=self.html, forbidden=self.forbidden,
                           as_html_ids=self.as_html_ids, writing=self.writing)

    def next_plan(self, placed: set[str]) -> HeadingPlan | None:
        """The plan for writing again when a Markdown heading's id is one of ``placed`` (the
        ids the writing named), else None: the writing stands.

        A heading written as HTML names its own id, which may be the id the readers give
        another heading written as Markdown: found only once written, that one clashed in the
        next writing, whose own id might clash with a third's, one writing each (300 such
        headings took 301 writings). So from the :data:`SETTLING_WRITING` on, a writing keeps
        every heading's ids clear of all that headings written as HTML may name
        (:attr:`as_html_ids`), and a clash is settled where it is met: more headings may be
        HTML than need be, so the first writings keep to the clashes found."""
        clashes = {index for index, auto in self.markdown
                   if any(ident in placed for ident in auto.ids())}
        if not clashes:
            return None
        writing = self.writing + 1
        return HeadingPlan(html=self.html | self.decided | clashes, forbidden=frozenset(placed),
                           as_html_ids=self.names if writing >= SETTLING_WRITING else {},
                           writing=writing)


#: The writing of the Markdown (the first is 0) from which a heading keeps clear of every id
#: a heading written as HTML may name (:meth:`HeadingPlan.next_plan`).
SETTLING_WRITING = 3


def _named_by_heading(ident: str, auto: AutoIds) -> bool:
    """Whether a heading's leading anchor ``ident`` is left out: a place of the writers' own
    (:data:`RESERVED_ANCHOR`, the Sources list's heading, written or read back) that the
    heading's id in both readers names already, as ``## Sources`` names ``#sources``. An id of
    the author's stays an anchor, since readers without heading ids (markdown-it,
    commonmark.js) need it: such a heading is written as HTML (:class:`HeadingPlan`)."""
    return auto.is_only(ident) and RESERVED_ANCHOR.match(ident) is not None


class _BlockWriter:
    def __init__(self, labels: dict[str, AuthorNote], images: ImageDefinitions, words: Labels,
                 places: LinkPlaces, headings: HeadingPlan, *, own_page: bool = False):
        self.labels = labels
        self.images = images
        self.words = words  # the document's (renderers.labels)
        self.places = places  # anchors to write, and ids a link to is written as its text
        self.headings = headings
        self.own_page = own_page  # Document.own_page: every heading there has an id

    def inline_text(
        self, nodes: tuple[Inline, ...], *, single_line: bool = False, table: bool = False,
        line_start: bool = True, ids: IdText | None = None,
    ) -> str:
        writer = _InlineWriter(
            self.labels, single_line=single_line, table=table, images=self.images,
            words=self.words, places=self.places, line_start=line_start, ids=ids,
        )
        writer.inlines(nodes)
        return writer.text().strip("\n")

    def blocks(self, blocks: tuple[Block, ...], *, tight: bool = False) -> str:
        rendered: list[str] = []
        previous: Block | None = None
        flip = False
        for block in blocks:
            if isinstance(block, BulletList | OrderedList):
                # Two adjacent lists of one kind must differ in marker, or they would merge.
                flip = (not flip) if type(previous) is type(block) else False
                text = self.block(block, alternate=flip)
            else:
                text = self.block(block)
            if not text:
                continue
            if previous is not None:
                rendered.append("\n" if tight and _joins_tightly(previous, block) else "\n\n")
            rendered.append(text)
            previous = block
        return "".join(rendered)

    def block(self, block: Block, *, alternate: bool = False) -> str:
        text = self._block(block, alternate=alternate)
        if isinstance(block, Paragraph | Heading | Figure) and block.align != "default" and text:
            # Markdown cannot align: the HTML wrapper GitHub READMEs use, which the markdown
            # reader reads back (the markdown between its two HTML blocks takes the alignment)
            return f'<div align="{block.align}">\n\n{text.strip(chr(10))}\n\n</div>'
        return text

    def _block(self, block: Block, *, alternate: bool = False) -> str:
        match block:
            case Heading():
                return self._heading(block)
            case Paragraph(children):
                return self.inline_text(children)
            case BulletList(items, tight):
                marker = "*" if alternate else "-"
                return self._list([f"{marker} " for _ in items], items, tight)
            case OrderedList(items, start, tight):
                delim = ")" if alternate else "."
                markers = [f"{start + i}{delim} " for i in range(len(items))]
                return self._list(markers, items, tight)
            case Table():
                return self._table(block)
            case CodeBlock(text, language, caption, label, number):
                code = self._code_block(text, language)
                lead = self._caption_lead(label, number)
                if not caption and not lead:
                    return code
                return lead + self.inline_text(caption) + "\n\n" + code  # above, as shown
            case BlockQuote(inner):
                body = self.blocks(inner)
                return "\n".join(f"> {line}" if line else ">" for line in body.split("\n"))
            case Figure(image, caption, label, number):
                return self._figure(image, caption, self._caption_lead(label, number))
            case ThematicBreak():
                return "---"
            case RawBlock(text, markup):
                # shown as text, as every writer shows it: a fence keeps its lines (an escaped
                # paragraph ran them together) and nothing in it is live
                return self._code_block(text, markup)
            case FootnoteDef(label, inner):
                note = self.labels[label]
                lead = self.places.note_place(note.anchor)
                body = self.blocks(inner)
                if lead and inner and not isinstance(inner[0], Paragraph):
                    body = f"{lead}\n\n{body}"  # its own paragraph before a list or code
                elif lead:
                    body = lead + body
                return _indent(body, f"[^{note.marker}]: ", "    ")
            case _:
                raise UnsupportedNodeError(f"markdown writer: unsupported block node {block!r}")

    def _heading(self, heading: Heading) -> str:
        """``## text``, or the heading as HTML when its id would clash or a kept id of it would
        be lost (:class:`HeadingPlan`)."""
        level = min(max(heading.level, 1), 6)
        count = 0
        while count < len(heading.children) and isinstance(heading.children[count], Anchor):
            count += 1
        leads = tuple(node.id for node in heading.children[:count] if isinstance(node, Anchor))
        ids = IdText()
        text = self.inline_text(heading.children[count:], single_line=True,
                                line_start=not leads, ids=ids).strip()
        auto = self.headings.ids.next(ids)
        if self.headings.as_html(auto, leads, heading.id, self._keeps_id(heading, auto),
                                 listed=heading.listed):
            # a paragraph between the tags: inline markup and footnote references stay live,
            # and its text starts a line ("-" is no list item)
            body = "".join(self.places.tag(ident) for ident in leads) + (
                text if leads else escape_line_start(text))
            if heading.id:
                self.places.placed.add(heading.id)
            tag = f"h{level}" + (f' id="{html.escape(heading.id, quote=True)}"'
                                 if heading.id else "")
            if not heading.listed:
                tag += f' class="{UNLISTED}"'  # pandoc's {.unlisted}, as gfm reads it too
            return f"<{tag}>\n\n{body}\n\n</h{level}>" if body else f"<{tag}></h{level}>"
        text = "".join(self.places.tag(ident) for ident in leads
                       if not _named_by_heading(ident, auto)) + text
        closing = _CLOSING_HASH.search(text)
        if closing and len(closing.group(1)) % 2 == 0:  # an unescaped "#" ends the text
            text = text[:-1] + "\\#"
        text = escape_attribute_block(text)  # "a {#x}" as text, not as an id
        return "#" * level + (" " + text if text else "")

    def _keeps_id(self, heading: Heading, auto: AutoIds) -> bool:
        """Whether the output must keep ``heading``'s own id: a link of the document leads
        there, or the author gave it (:attr:`Heading.given`: a link from outside may use
        it). Another id, made from the text, may be whatever the readers make of it. On
        citerender's own page read back every heading has an id: one that citerender makes
        of the text again (``1-intro`` for "1. Intro") is taken for one it made."""
        if heading.id in self.places.named:
            return True
        return heading.given and not (self.own_page and auto.ours == heading.id)

    def _list(self, markers: list[str], items: tuple[ListItem, ...], tight: bool) -> str:
        rendered: list[str] = []
        for marker, item in zip(markers, items, strict=True):
            body = self.blocks(item.blocks, tight=tight)
            if item.checked is not None:
                body = ("[x] " if item.checked else "[ ] ") + body
            rendered.append(_indent(body, marker, " " * len(marker)))
        return ("\n" if tight else "\n\n").join(rendered)

    def _table(self, table: Table) -> str:
        width = max([len(table.header), len(table.aligns), *(len(r) for r in table.rows)])
        if width == 0:
            return ""

        def row(cells: tuple[TableCell, ...]) -> str:
            texts = [self.inline_text(c.children, table=True).strip() for c in cells]
            texts += [""] * (width - len(texts))
            return "| " + " | ".join(texts) + " |"

        aligns = list(table.aligns) + ["default"] * (width - len(table.aligns))
        delimiter = {"left": ":---", "center": ":---:", "right": "---:", "default": "---"}
        lines = [row(table.header), "| " + " | ".join(delimiter[a] for a in aligns) + " |"]
        lines += [row(r) for r in table.rows]
        out = "\n".join(lines)
        lead = self._caption_lead(table.label, table.number)
        if table.caption or lead:
            out += "\n\n" + lead + self.inline_text(table.caption)
        return out

    def _code_block(self, text: str, language: str) -> str:
        body = text.replace("\r\n", "\n")
        if body and not body.endswith("\n"):
            body += "\n"
        fence = _fence(body, "`", 3)
        info = re.sub(r"[`\s]+", "", language.split()[0]) if language.strip() else ""
        return f"{fence}{info}\n{body}{fence}"

    def _figure(self, image: Image, caption: tuple[Inline, ...], lead: str = "") -> str:
        picture = _InlineWriter(self.labels, images=self.images, words=self.words,
                                places=self.places).image(image)
        cites = any(isinstance(node, Cite) for node in walk_inlines(caption))
        shown = self.images.label(image) is not None  # else its fallback, then the caption
        if shown and not lead and not cites and plain_text(caption).strip() == image.alt.strip():
            return picture  # the alt already says it (a citation in it needs the caption)
        return picture + "\n\n" + lead + self.inline_text(caption)

    def _caption_lead(self, label: str, number: int) -> str:
        """``<a id="fig-1"></a>**Figure 1:** `` before a numbered caption: the anchor the
        references link to (Markdown has no other way to name a place) and the number."""
        if not label or not number:
            return ""
        anchor = numbered_anchor(label, number)
        lead = escape_text(self.words.caption_lead(label_kind(label), number), line_start=False)
        return f"{self.places.tag(anchor)}**{lead}** "
