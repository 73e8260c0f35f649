"""The rendering rules every writer shares, each decided once.

Writers differ in how they lay things out, never in what they decide. This module decides:

* **the words a writer writes itself** — :func:`document_words` (:mod:`renderers.labels`);
* **page sizes** — :data:`PAGE_SIZES` (CSS keyword for HTML/PDF, twips for DOCX);
* **the level of the sections a writer adds** (contents, Notes, Citation notes, Sources) —
  :data:`ADDED_SECTION_LEVEL`;
* **the document title** — :func:`document_title`: which text is the title, which heading
  already shows it and whether the writer must add it;
* **author notes** — :class:`AuthorNotes`: one series per document, lettered ``a, b, c …``
  (:func:`note_marker`) so that a note can never be taken for a citation (citations are
  numbers); the text shown for a reference to a note that does not exist; the titles of the
  Notes and of a note style's Citation notes, and a citation note's direction;
* **a citation in its line of text** — :func:`cite_direction`: whether a citation, with the
  superscripts joined to it (:func:`joined_runs`), is held apart as one unit from a line that
  reads the other way or after text that does (:func:`preceding_directions`), and in which
  direction; :func:`cite_wraps` and :func:`unbroken_parts`:
  where a line may break inside it (after a separator of a long run, nowhere in a short one);
* **a Sources entry** — :func:`entry_parts`: number, title, link, the details (label, date) with
  their separators (each kept on the line of the part before it), the back-link, its glyph and
  what joins it to the word before it, the entry's direction;
* **an image that cannot be shown** — :func:`image_fallback`;
* **a numbered caption's lead and direction** — :func:`caption_lead`, :func:`caption_direction`;
* **a link that would show nothing** but its citations — :func:`shows_nothing`;
* **a table cell's side margins** when columns are narrow — :func:`narrow_cell_margin`;
* **a table's column widths** from what its cells hold — :func:`column_widths` (the writer
  measures each column's :class:`ColumnNeed`), and :func:`distribute` in whole units;
* **a PDF link's URI** — :func:`pdf_uri`: a URL with non-ASCII characters percent-encoded;
* **where a wrapped code line continues** — :func:`code_hang`;
* **task-list boxes** — :func:`task_box`, and :func:`item_marker`: a task item's box takes
  the place of its bullet or number.

Text direction (the first-strong-character rule) lives in :mod:`renderers.text`, next to the
other plain-text rules, because readers may use it too.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote

from citations.numbering import EN_DASH, display_segments, note_segments
from renderers.document import (
    Alignment,
    Anchor,
    Block,
    Cite,
    Code,
    Document,
    Emph,
    Figure,
    FootnoteDef,
    FootnoteRef,
    Heading,
    Image,
    Inline,
    LineBreak,
    Link,
    Paragraph,
    Strike,
    Strong,
    Styled,
    Text,
    inline_runs,
    iter_blocks,
    iter_inlines,
    label_kind,
    map_blocks,
    only_anchors,
    plain_text,
    reading_blocks,
)
from renderers.errors import LimitError
from renderers.labels import Labels, labels_for
from renderers.language import language_for
from renderers.options import Limits, PageSize, RenderOptions
from renderers.resolve import ResolvedDocument, SourceEntry
from renderers.text import (
    Direction,
    balanced_bidi,
    closing_marks,
    enclosing_marks,
    text_direction,
)

# ---------------------------------------------------------------- the words


def document_words(rdoc: ResolvedDocument, options: RenderOptions) -> Labels:
    """The words a writer writes itself (headings, captions, footers) in the document's
    language, the one it declares (:func:`~renderers.language.language_for`)."""
    return labels_for(language_for(rdoc, options))


# ---------------------------------------------------------------- page sizes


@dataclass(frozen=True)
class PageDimensions:
    """One page size: its CSS ``@page`` keyword and its exact size in twips (1/1440 inch)."""

    css: str
    width_twips: int
    height_twips: int


#: Every :data:`renderers.options.PageSize`: A4 is 210 × 297 mm, Letter 8.5 × 11 in.
PAGE_SIZES: dict[str, PageDimensions] = {
    "A4": PageDimensions("A4", 11906, 16838),
    "Letter": PageDimensions("letter", 12240, 15840),
}


def page_dimensions(page_size: PageSize | str) -> PageDimensions:
    """The dimensions of ``page_size``; a clear error for anything else."""
    found = PAGE_SIZES.get(page_size)
    if found is None:
        accepted = ", ".join(repr(name) for name in PAGE_SIZES)
        raise ValueError(f"page_size={page_size!r}: accepted values are {accepted}")
    return found


#: The characters a URI may hold as they are (RFC 3986's reserved and unreserved ones) and
#: ``%``, which already encodes: WeasyPrint's ``iri_to_uri`` (``weasyprint.urls``) keeps these.
_URI_SAFE = "/:?#[]@!$&'()*+,;=~%"


def pdf_uri(url: str) -> str:
    """The URI a PDF link annotation holds for ``url`` (an IRI): every character a URI cannot
    hold (non-ASCII ones as their UTF-8 bytes, spaces, quotes, braces …) percent-encoded, the
    host included (``https://例え.jp/ü`` → ``https://%E4%BE%8B%E3%81%88.jp/%C3%BC``).

    A PDF's URI action is 7-bit ASCII. This is WeasyPrint's rule (``iri_to_uri``, which it
    applies to every ``href``), so both PDF engines write the same URI for the same link: the
    Typst writer encodes its link targets with it, and the WeasyPrint writer finds its link
    annotations by it.
    """
    return quote(url.encode("utf-8"), safe=_URI_SAFE)


def shows_nothing(inlines: Iterable[Inline]) -> bool:
    """Whether ``inlines`` (a link's text without its citations) would show nothing: such a
    link is not written, only its citations, since an empty link can be neither seen nor
    clicked."""
    return all(isinstance(node, Text) and not node.text.strip() for node in inlines)


def narrow_cell_margin(column: float, most: float) -> float:
    """The margin each side of a table cell's text in a column ``column`` wide: the writer's
    usual ``most``, or a quarter of the column when that is less. With 60 columns two full
    margins were wider than a column: Word and LibreOffice drew DOCX cells with no text, and
    LibreOffice pushed a PPTX table off its slide."""
    return min(most, column / 4)


@dataclass(frozen=True)
class ColumnNeed:
    """What one table column's cells ask for, in the writer's unit, margins included:
    ``natural`` its longest cell on one line, ``word`` its widest word unbroken."""

    natural: float
    word: float


#: The most of a table's width a column's preference counts for when columns wrap: one long
#: column leaves the others more than their longest word.
COLUMN_CAP = 0.6


def column_widths(needs: Sequence[ColumnNeed], total: float, floor: float) -> list[float]:
    """Column widths summing to ``total``, every column at least ``floor`` (its margins and an
    em of text). When every cell fits on one line, shares follow the lines' lengths. Else each
    column keeps its widest word (at most an equal share, so that a short column next to a
    long one keeps its words whole: equal columns broke "PagedAttention" in a narrow notes
    column) and the rest goes to the columns that wrap, by their length capped at
    :data:`COLUMN_CAP`; when even the words do not fit, equal shares."""
    ncols = len(needs)
    natural = [max(floor, n.natural) for n in needs]
    if sum(natural) <= total:
        scale = total / sum(natural)
        return [w * scale for w in natural]
    minimum = [max(floor, min(n.word, total / ncols)) for n in needs]
    rest = total - sum(minimum)
    if rest <= 0:
        return [total / ncols] * ncols
    capped = [min(n, total * COLUMN_CAP) for n in natural]
    extra = [max(c - m, 0.0) for c, m in zip(capped, minimum, strict=True)]
    share = sum(extra) or 1.0
    return [m + rest * e / share for m, e in zip(minimum, extra, strict=True)]


def distribute(total: int, widths: Sequence[float]) -> tuple[int, ...]:
    """Whole-unit widths (EMU, twips) proportional to ``widths`` summing exactly to ``total``."""
    scale = sum(widths) or 1.0
    out = [int(total * w / scale) for w in widths]
    out[-1] += total - sum(out)
    return tuple(out)


def check_page_size(number: int, width: float, height: float, limits: Limits) -> None:
    """Refuse page ``number`` (1-based) when a side, in inches, exceeds
    ``limits.max_page_inches``: author CSS (``@page { size: 200in }``) chooses the page size,
    and every rasterized pixel and laid-out line grows with it. (Here, not in the PDF writer:
    the PNG writer checks the pages of either engine's PDF without importing WeasyPrint.)"""
    longest = max(width, height)
    if longest > limits.max_page_inches:
        raise LimitError(
            f"page {number} is {width:.4g} × {height:.4g} inches; the limit is "
            f"{limits.max_page_inches} inches a side (limits.max_page_inches)"
        )


# ---------------------------------------------------------------- added sections

#: The heading level of the sections a writer adds around the body: the contents, Notes,
#: Citation notes and Sources. Level 2, the level of a document's top sections under its title
#: (``# Title``, ``## Section``), so that they are peers of those sections in every outline:
#: HTML ``<h2>`` (and the PDF's bookmarks), DOCX Heading 2 under the Title style (Word's
#: navigation pane), the contents' entries.
ADDED_SECTION_LEVEL = 2


# ---------------------------------------------------------------- the title

@dataclass(frozen=True)
class DocumentTitle:
    """The title of a document and where it shows.

    ``text`` is the title ("" when there is none). ``heading`` is the level-1 heading that
    already shows it: writers render that heading as the title (DOCX's Title style, the PPTX
    cover slide) and do not repeat the title. When no heading shows it, :attr:`added` is true and
    the writer puts the title above the body itself.
    """

    text: str
    heading: Heading | None

    @property
    def added(self) -> bool:
        """Whether the writer must show the title itself (no heading of the body shows it)."""
        return bool(self.text) and self.heading is None

    def page_title(self, words: Labels) -> str:
        """The title for metadata that may not be empty (HTML ``<title>``, the PDF's title):
        without one, the word for a report in the document's ``words``."""
        return self.text or words.untitled


def document_title(document: Document, options: RenderOptions) -> DocumentTitle:
    """The title rule: ``options.title``, else the document's own title (HTML ``<title>``, the
    reader's first level-1 heading), else the text of its first level-1 heading.

    The first level-1 heading whose text is the title shows it; an explicit title that no
    heading shows is added above the body, in every format.
    """
    headings = [b for b in document.blocks if isinstance(b, Heading) and b.level == 1]
    text = _one_line(options.title) or _one_line(document.title)
    if not text and headings:
        text = _one_line(plain_text(headings[0].children))
    showing = next((h for h in headings if _one_line(plain_text(h.children)) == text), None)
    return DocumentTitle(text, showing if text else None)


def document_authors(document: Document, options: RenderOptions) -> tuple[str, ...]:
    """The author rule: ``options.author``, else the input's own authors
    (:attr:`Document.authors`: a markdown front matter's, an HTML head's)."""
    author = _one_line(options.author)
    return (author,) if author else document.authors


def document_author(document: Document, options: RenderOptions) -> str:
    """The authors as one metadata value (the PDF's ``/Author``, OOXML's creator)."""
    return joined_authors(document_authors(document, options))


def joined_authors(authors: Sequence[str]) -> str:
    """Authors as one value: joined with "; ", as pandoc joins them (WeasyPrint's ", " would
    split "Ruiz, Ana" in two)."""
    return "; ".join(authors)


@dataclass(frozen=True)
class TitleBlock:
    """What a writer shows under the title, as pandoc's title block does: the subtitle, the
    authors on one line (:func:`joined_authors`), the date as the input writes it, and the
    abstract's blocks (markdown, cited: each writer draws them as body blocks) under
    ``abstract_heading`` (the document's word for it). False when
    there is none of them: then a writer draws nothing and its output is what it was without
    the block."""

    subtitle: str = ""
    authors: str = ""
    date: str = ""
    abstract: tuple[Block, ...] = ()
    abstract_heading: str = ""

    def __bool__(self) -> bool:
        return bool(self.subtitle or self.authors or self.date or self.abstract)

    @property
    def lines(self) -> tuple[tuple[TitleLine, str], ...]:
        """The one-line parts, in their order, each with its kind (the writers' class or
        style name): the subtitle, the authors, the date."""
        parts: tuple[tuple[TitleLine, str], ...] = (
            ("subtitle", self.subtitle), ("author", self.authors), ("date", self.date))
        return tuple((kind, text) for kind, text in parts if text)


#: The one-line parts of a :class:`TitleBlock`.
TitleLine = Literal["subtitle", "author", "date"]


def title_block(document: Document, options: RenderOptions, words: Labels) -> TitleBlock:
    """The title block rule: what a markdown input's front matter says (subtitle, authors,
    date, abstract; :attr:`Document.shows_metadata`), and ``options.author`` for any input (as
    pandoc shows ``-M author``, and as ``options.title`` is shown), which replaces the front
    matter's authors. An HTML head's ``<meta>`` tags stay the file's metadata. Writers show it
    right after the title (:func:`title_block_position`)."""
    shown = document.shows_metadata
    authors = document_authors(document, options) if shown or _one_line(options.author) else ()
    return TitleBlock(
        subtitle=_one_line(document.subtitle) if shown else "",
        authors=joined_authors(authors),
        date=_one_line(document.date) if shown else "",
        abstract=map_blocks(document.abstract, _same, block_fn=_abstract_heading) if shown
        else (),
        abstract_heading=words.abstract,
    )


def _same(node: Inline) -> Inline:
    return node


def _abstract_heading(block: Block) -> Block:
    """A heading of the abstract as a bold line keeping its id: it is no section of the
    document, so it enters no PDF outline, contents, Word navigation or slide title (pandoc's
    LaTeX shows it unnumbered, out of the contents), yet looks like the abstract's own title."""
    if not isinstance(block, Heading):
        return block
    lead: tuple[Inline, ...] = (Anchor(block.id),) if block.id else ()
    return Paragraph((*lead, Strong(block.children)), align=block.align)


def carried_anchors(blocks: Sequence[Block]) -> list[tuple[str, ...] | None]:
    """Per block of ``blocks``, the anchor ids it carries at its top: those of the paragraphs
    of anchors only right before it (which :func:`renderers.readers.anchors.anchors_on_text`
    leaves before a code block or a rule), so that a writer marks the block itself and sets no
    empty line; None for such a paragraph, written by the block after it. A paragraph of
    anchors only with no block after it carries its own anchors (it stays a paragraph)."""
    out: list[tuple[str, ...] | None] = []
    held: list[str] = []
    for block in blocks:
        if isinstance(block, Paragraph) and only_anchors(block.children):
            held.extend(node.id for node in block.children if isinstance(node, Anchor))
            out.append(None)
            continue
        out.append(tuple(held))
        held = []
    if held:  # the trailing paragraphs of anchors only write themselves
        for index in range(len(out) - 1, -1, -1):
            if out[index] is not None:
                break
            out[index] = ()
    return out


def title_block_position(blocks: Sequence[Block], title: DocumentTitle) -> int:
    """Where the title block goes among ``blocks`` (an index to insert at): right after the
    heading that shows the title; at the start when the writer adds the title above the body
    or there is none."""
    return next((i + 1 for i, block in enumerate(blocks) if block is title.heading), 0)


def _one_line(text: str) -> str:
    return " ".join(text.split())


# ---------------------------------------------------------------- author notes


#: The id (HTML) and anchor of the contents list (``toc``, :mod:`renderers.writers.contents`):
#: no heading may take it.
CONTENTS_ID = "contents"
#: The id (HTML) and label (Typst) of the Notes section (its heading: ``Labels.notes``; HTML,
#: PDF, DOCX put it before the Sources).
NOTES_ID = "notes"
#: The id (HTML) and label (Typst) of the Citation notes section: a note style's notes
#: (numbered ``1.`` …; HTML and PDF list them after the author's Notes). DOCX has Word
#: footnotes, PPTX and Markdown cite numbers.
CITATION_NOTES_ID = "citation-notes"


def citation_notes_heading(words: Labels, *, author_notes: bool) -> str:
    """The title of a note style's notes: "Notes", as such documents call them, unless the
    author's own Notes are there too; then "Citation notes", so that the two sections, their
    contents entries and outline items cannot be taken for one (in the document's ``words``)."""
    return words.citation_notes if author_notes else words.notes


def note_marker(number: int) -> str:
    """The marker of the ``number``-th author note: ``a`` … ``z``, ``aa``, ``ab`` … (the CSS
    ``lower-alpha`` series). Citations are numbers, so the two never look alike."""
    if number < 1:
        raise ValueError(f"note number {number}: author notes are numbered from 1")
    letters: list[str] = []
    while number:
        number, rest = divmod(number - 1, 26)
        letters.append(chr(ord("a") + rest))
    return "".join(reversed(letters))


def unresolved_note_text(label: str) -> str:
    """What a reference to a note that is never defined shows: its source text, ``[^label]``."""
    return f"[^{label}]"


@dataclass(frozen=True)
class AuthorNote:
    """One author note (markdown ``[^label]: …``) with its place in the document's series."""

    label: str
    number: int
    blocks: tuple[Block, ...]
    referenced: bool

    @property
    def marker(self) -> str:
        """What the reader sees at the reference and before the note: ``a``, ``b`` …"""
        return note_marker(self.number)

    @property
    def anchor(self) -> str:
        """The note's own anchor (``fn-N``; heading ids never take it)."""
        return f"fn-{self.number}"

    @property
    def reference_anchor(self) -> str:
        """The anchor of the note's first reference (``fnref-N``), its back-link's target."""
        return f"fnref-{self.number}"


class AuthorNotes:
    """Every author note of a document, in one series.

    Notes are numbered by their first reference: references in the text first, then references
    made inside notes, then the notes nobody references, in the order they are defined. The
    first definition of a label wins.
    """

    def __init__(self, blocks: tuple[Block, ...]) -> None:
        definitions: dict[str, FootnoteDef] = {}
        for block in iter_blocks(blocks):
            if isinstance(block, FootnoteDef):
                definitions.setdefault(block.label, block)
        order: list[str] = []
        body = tuple(b for b in blocks if not isinstance(b, FootnoteDef))
        if definitions:  # no note, no reference to look for (a walk of the whole document)
            order.extend(_new_references(body, definitions, order))
        index = 0
        while index < len(order):  # references inside notes, breadth first
            inner = definitions[order[index]].blocks
            order.extend(_new_references(inner, definitions, order))
            index += 1
        referenced = len(order)
        order.extend(label for label in definitions if label not in order)
        self._notes: dict[str, AuthorNote] = {
            label: AuthorNote(label, n, definitions[label].blocks, n <= referenced)
            for n, label in enumerate(order, start=1)
        }

    def __bool__(self) -> bool:
        return bool(self._notes)

    def __iter__(self) -> Iterator[AuthorNote]:
        """The notes in series order (a, b, c …)."""
        return iter(self._notes.values())

    def get(self, label: str) -> AuthorNote | None:
        """The note defined as ``label``, or None (then show :func:`unresolved_note_text`)."""
        return self._notes.get(label)


def has_citation_notes(blocks: tuple[Block, ...]) -> bool:
    """Whether a note style made notes of ``blocks``' citations (a Citation notes section),
    known before writing so that no heading takes the section's id."""
    return any(isinstance(node, Cite) and node.note for node in iter_inlines(blocks))


def citation_note_direction(note: tuple[Inline, ...]) -> Direction | None:
    """The direction of a note style's note (its text ``note``): by its first strong
    character, the rule list items and Sources entries follow."""
    return text_direction(plain_text(note))


def _new_references(
    blocks: tuple[Block, ...], definitions: dict[str, FootnoteDef], seen: list[str]
) -> list[str]:
    """Labels of defined notes first referenced in ``blocks`` (not in ``seen``), in order."""
    found: list[str] = []
    for node in iter_inlines(blocks):
        if (
            isinstance(node, FootnoteRef)
            and node.label in definitions
            and node.label not in seen
            and node.label not in found
        ):
            found.append(node.label)
    return found


# ---------------------------------------------------------------- citations in a line


def joined_runs(nodes: Iterable[Inline]) -> Iterator[tuple[Inline, ...]]:
    """``nodes`` one by one, except that a citation comes with the superscripts joined to it
    (``Cite.joined``: ``[[S:1]][[S:3-5]]`` shows "1, 3–5"): one tuple, which
    :func:`cite_direction` holds apart as one unit. A style's own words ("[3]", "(IEA, 2025)")
    open with no separator and are a unit of their own; empty text between two joined
    citations (what a dropped citation leaves) is left out."""
    run: list[Inline] = []
    for node in nodes:
        if isinstance(node, Cite) and run and _opens_with_separator(node):
            run.append(node)
        elif isinstance(node, Text) and not node.text and run:
            continue
        else:
            if run:
                yield tuple(run)
            run = [node] if isinstance(node, Cite) else []
            if not run:
                yield (node,)
    if run:
        yield tuple(run)


def _opens_with_separator(cite: Cite) -> bool:
    """Whether ``cite`` is joined to the citation before it and shows that by a leading
    separator (superscript numbers, a note's number)."""
    return cite.joined and (bool(cite.note) or not cite.children)


def cite_direction(run: Sequence[Cite], line: Direction, before: Direction | None = None,
                   *, notes: bool = False) -> Direction | None:
    """The direction the citation ``run`` (a citation and the superscripts joined to it:
    :func:`joined_runs`) is held in as one unit, apart from its line of text reading ``line``:
    None when it reads as the line does and so does the text ``before`` it.

    A citation reads as one unit in its own direction: by the first strong character of what
    it shows, left to right when it has none (the numbers, brackets and Latin punctuation of
    "[1, 2]", "1–3"). In a line reading the other way the bidi algorithm split it up: in an
    Arabic sentence "(International Energy Agency, 2024)" had its parentheses at the wrong
    ends and "(A, 2024; B, 2020)" its parts swapped, "[1–3]" read "[3–1]", and "1" with "3–5"
    joined to it "5–3 ,1". Each writer holds the run apart its own way (HTML ``dir``, Typst a
    box or isolate marks, DOCX and PPTX :func:`~renderers.text.enclosing_marks`), in its place
    in the line, each number still its own link. Digits alone read the same either way; a
    joined superscript is held only with the citation it follows, because its leading
    separator must stand between the two.

    ``before``: the direction of the last strong character before the run in its line
    (:func:`preceding_directions`). After right-to-left letters in a left-to-right line,
    digits are Arabic numbers (rule W2) that join the letters' run, and the separators
    between them take its side: "said ارتفعت المبيعات¹" showed the "1" left of the phrase,
    as if it cited "said", and "1, 2" read "2 ,1". Held apart there too, in its own
    direction, the run is a neutral between the phrase and what follows, and sits after the
    phrase in the line's order. After Latin letters in a right-to-left line, digits are
    Latin (W7) and read in order at the end of those words ("English¹"), as Chromium sets
    them; they stay so.

    ``notes``: each citation is set as a note reference (a Word footnote), which shows one
    number, its note's, whatever it cites: held after right-to-left letters in a
    left-to-right line like a "1", and in a right-to-left line only when joined ("1, 2")."""
    if not run or not run[0].numbers or _opens_with_separator(run[0]):
        return None
    shown = "".join(_note_shown(cite) if notes else cite_shown(cite) for cite in run).strip()
    own = text_direction(shown) or "ltr"
    if before == "rtl" and line == "ltr":
        return own
    if shown.isdigit():
        return None
    return None if own == line else own


def preceding_directions(blocks: tuple[Block, ...], *,
                         across_breaks: bool = False) -> dict[str, Direction]:
    """The anchor of each citation run (:func:`joined_runs`) in ``blocks`` whose line's text
    before it reads, by its last strong character, against the line (by its first), and that
    direction: what :func:`cite_direction` takes as ``before``. Citations count as neutrals
    (one held apart is one), as do pictures, formulas and note references.

    A hard line break starts the reading again: Chromium, WeasyPrint, Typst and LibreOffice
    Writer run the bidi algorithm afresh after it (a new paragraph to it), so "1, 2" opening
    the line after an Arabic line end reads in order there, held or not. ``across_breaks``
    for a writer whose reader does not: LibreOffice Impress reads on across a slide
    paragraph's breaks, and there that "1, 2" (as text) read "2 ,1" unless held."""
    found: dict[str, Direction] = {}
    for nodes in inline_runs(blocks):
        line = text_direction(plain_text(nodes))
        if line is not None:
            _read_preceding(nodes, line, None, found, across_breaks)
    return found


#: id(document) → its :func:`preceding_directions`, while the document lives
#: (:func:`document_preceding`).
_PRECEDING: dict[int, dict[str, Direction]] = {}


def document_preceding(document: Document) -> Mapping[str, Direction]:
    """:func:`preceding_directions` of ``document`` (:func:`reading_blocks`), read once for
    all the formats of a render: the HTML report, its PDF, DOCX and Typst read the same lines
    (about 3 ms each for the 50-page bench report)."""
    key = id(document)
    found = _PRECEDING.get(key)
    if found is None:
        found = _PRECEDING[key] = preceding_directions(reading_blocks(document))
        weakref.finalize(document, _PRECEDING.pop, key, None)
    return found


def _read_preceding(nodes: Iterable[Inline], line: Direction, last: Direction | None,
                    found: dict[str, Direction], across_breaks: bool) -> Direction | None:
    """``found`` with the citation runs of ``nodes`` whose text before reads against ``line``;
    the direction of the last strong character read (``last`` before ``nodes``)."""
    for run in joined_runs(nodes):
        node = run[0]
        if isinstance(node, Cite):
            if last is not None and last != line:
                found[node.anchor] = last
        elif isinstance(node, Text | Code):
            last = text_direction(node.text[::-1]) or last
        elif isinstance(node, LineBreak) and not across_breaks:
            last = None
        elif isinstance(node, Emph | Strong | Strike | Styled | Link):
            last = _read_preceding(node.children, line, last, found, across_breaks)
    return last


def cite_shown(cite: Cite) -> str:
    """The text ``cite`` shows in its line (its joined separator included): what the line's
    bidi algorithm reads of a citation not held apart (html/bidi.py)."""
    if cite.children and not cite.note:
        return plain_text(cite.children)
    return "".join(text for text, _ in mark_pieces(cite))


def _note_shown(cite: Cite) -> str:
    """The text ``cite`` shows as a note reference: a number (which one does not bear on its
    direction), led by the separator when it is joined."""
    return "".join(text for text, _ in note_segments(cite.note or 1, joined=cite.joined))


#: One piece of a raised mark (:func:`~citations.numbering.display_segments`): its text and
#: the number it links to (None for a separator or a range's dash).
MarkPiece = tuple[str, int | None]


def mark_pieces(cite: Cite) -> list[MarkPiece]:
    """The pieces of ``cite``'s raised mark: a note style's note number, else its numbers
    ("1–3, 5"), led by the separator when it is joined to the mark before it."""
    if cite.note:
        return note_segments(cite.note, joined=cite.joined)
    return display_segments(cite.numbers, joined=cite.joined)


#: The most characters (separators included) a run of raised marks shows and still holds
#: together on one line as a word does: "1, 2", "3–5, 8", "12, 14, 17, 20, 23, 31". Up to
#: about a long word's width at the marks' 0.68 em; past it a reader sees a list of numbers
#: ("1, 2, 3, … 40") and expects it to wrap as that list would in text.
WHOLE_CITE_RUN = 24


def cite_wraps(run: Sequence[Cite]) -> bool:
    """Whether a line may break inside the raised marks ``run`` (a citation and those joined
    to it: :func:`joined_runs`), after any of their separators.

    A short run stays whole, like a word: "claim.¹,²" never leaves "²" to open the next line.
    A long one wraps after a separator ", ", where text "1, 2, 3" wraps, so that it stays inside
    the text's width (unbroken, [[S:1]][[S:2]]… ran off the page) and lays out in linear time
    (WeasyPrint's line breaking grew quadratically on one unbreakable run of thousands of
    marks). Never before a separator nor inside a range "1–3", and the first mark never leaves
    the word it follows (:func:`unbroken_parts`). Both PDF engines break at these places only."""
    shown = sum(len(text) for cite in run if cite.note or not cite.children
                for text, _ in mark_pieces(cite))
    return shown > WHOLE_CITE_RUN


def wrapping_cites(blocks: tuple[Block, ...]) -> frozenset[str]:
    """The anchors of ``blocks``' citations in runs that wrap (:func:`cite_wraps`), for a
    writer that writes each citation on its own (the HTML author's look)."""
    found: set[str] = set()

    def visit(nodes: tuple[Inline, ...]) -> None:
        for run in joined_runs(nodes):
            cites = [node for node in run if isinstance(node, Cite)]
            if cites and cite_wraps(cites):
                found.update(cite.anchor for cite in cites)
            for node in run:
                if isinstance(node, Emph | Strong | Strike | Styled | Link):
                    visit(node.children)

    for run in inline_runs(blocks):
        visit(run)
    return frozenset(found)


def unbroken_parts(pieces: Sequence[MarkPiece], *, wraps: bool) -> list[list[MarkPiece]]:
    """A mark's ``pieces`` in the parts no line may break inside, in order: the whole mark,
    or, in a run that wraps (:func:`cite_wraps`), each separator on its own (a line may break
    after it) and each number or range "1–3" between them. A writer holds a part of more
    than one piece together (its number and dash, or its separator and number)."""
    if not wraps:
        return [list(pieces)] if pieces else []
    parts: list[list[MarkPiece]] = []
    for piece in pieces:
        if parts and EN_DASH in (piece[0], parts[-1][-1][0]):  # a range's dash and last number
            parts[-1].append(piece)
        else:
            parts.append([piece])
    return parts


def cite_space(children: tuple[Inline, ...]) -> tuple[str, tuple[Inline, ...]]:
    """The space that sets a styled citation off from the word before it (the style pass
    adds it), and the citation's own inlines after it: a citation held apart from its line
    (:func:`cite_direction`) leaves the space outside, between it and that word."""
    if children and isinstance(first := children[0], Text) and first.text[:1].isspace():
        text = first.text.lstrip()
        rest = (Text(text), *children[1:]) if text else children[1:]
        return first.text[: len(first.text) - len(text)], rest
    return "", children


# ---------------------------------------------------------------- Sources entries

#: Between an entry's title and its details (``Title — iea.org · 2024-10-16``). Each separator
#: follows the part before it after a no-break space, which every format keeps (WeasyPrint,
#: Typst, Word, LibreOffice, a browser showing the Markdown): at a plain space a line could
#: start with "—" or "·", which reads as a stray mark rather than as the end of a part.
DETAILS_LEAD = "\u00a0\u2014 "
#: Between two details.
DETAILS_JOIN = "\u00a0\u00b7 "
#: The back-link from an entry to its first citation (and from a note to its reference).
#: U+2191: the office fonts (Arial, Liberation Sans, Calibri) all have it and it has no emoji
#: form, unlike U+21A9 (↩).
BACKLINK_MARK = "\u2191"
#: Between the back-link and the word before it: a no-break space, so that the arrow never
#: starts a line alone. (LibreOffice breaks before a slide's link whatever precedes it: the PPTX
#: writer puts that word in the link, :func:`~renderers.writers.pptx.runs.with_backlink`.)
BACKLINK_JOIN = "\u00a0"

#: What a detail says: the domain or file name, where in the source it is cited (its row's
#: ``location``, ``"pages 3–4, 7"``), the date.
DetailKind = Literal["label", "location", "date"]


@dataclass(frozen=True)
class EntryDetail:
    """One detail of an entry and the separator that goes before it."""

    kind: DetailKind
    text: str
    separator: str

    @property
    def plain_separator(self) -> str:
        """The separator with a plain space for its no-break one: Markdown's, which programs
        read as text (``Title — iea.org · 2024-10-16``) and whose renderers lay out their own
        footnotes."""
        return self.separator.replace("\u00a0", " ")


@dataclass(frozen=True)
class EntryParts:
    """A Sources entry as data every writer lays out the same way:
    ``{marker} {title}{details} {backlink}`` — the title linked when ``url`` is set, each
    detail after its separator, the back-link (:data:`BACKLINK_MARK`) to ``backlink``. With a
    CSL style, ``formatted`` (IR inlines: italics, links) replaces title and details."""

    number: int
    anchor: str
    title: str
    url: str
    details: tuple[EntryDetail, ...]
    backlink: str
    direction: Direction
    formatted: tuple[Inline, ...] = ()
    style_marker: str | None = None

    @property
    def marker(self) -> str:
        """The entry's marker as lists show it: ``1.``, or the CSL style's own (``[1]``; ``""``
        for a style whose bibliography is not numbered)."""
        return f"{self.number}." if self.style_marker is None else self.style_marker

    @property
    def rtl(self) -> bool:
        """Whether the entry reads right to left (the document does)."""
        return self.direction == "rtl"

    @property
    def formatted_direction(self) -> Direction | None:
        """The direction a CSL style's entry reads in, in a right-to-left list, when it is not
        the list's: ``"ltr"`` for a Latin entry in an Arabic report, by the first strong
        character of its text; else None. Each writer isolates the whole styled text in it
        (HTML ``dir``, Typst isolate marks, DOCX and PPTX :meth:`formatted_marks`), its marker
        staying on the list's side: set as text of the list's direction, a Latin entry ran
        right to left run by run, and its opening quotation mark or final full stop stood at
        its other end. A left-to-right list is left as it is, as a default entry's parts are:
        there an entry starting with an Arabic title goes on in the style's Latin wording
        ("Retrieved", "n.d."), which reads best left to right."""
        if not self.formatted or not self.rtl:
            return None
        own = text_direction(plain_text(self.formatted))
        return own if own is not None and own != self.direction else None

    @property
    def formatted_marks(self) -> tuple[str, str]:
        """The marks before and after a CSL style's entry (:func:`~renderers.text.
        enclosing_marks`) in the formats without isolates (DOCX, PPTX): ("", "") unless
        :attr:`formatted_direction` says it reads otherwise than its list."""
        own = self.formatted_direction
        return ("", "") if own is None else enclosing_marks(own, self.direction)

    def part_direction(self, text: str) -> Direction:
        """The direction one part of the entry (its title, a detail, the back-link) reads in,
        isolated from the others in a right-to-left entry: its own, by its first strong
        character, else the entry's (a date, the arrow)."""
        return text_direction(text) or self.direction

    def details_run(self, shown: Callable[[str], str] = str) -> str:
        """The details as the one run that follows the title in a word processor or on a
        slide (DOCX, PPTX), each detail's text through ``shown`` ("" for none). In a
        right-to-left entry the title and each detail end with :func:`~renderers.text.
        closing_marks`, as neither format isolates a part: the parts then read right to left
        as the PDF sets them (the HTML isolates them, ``html.templating.part_dir``), where
        LibreOffice ran a Latin title, its domain and date together left to right, moved a
        Latin title's final "?" to its start and put the back-link (a field, in a slide)
        between the domain and the date. The marks are invisible; the run may be there with
        no detail, to end the title."""
        if not self.rtl:
            return "".join(d.separator + shown(d.text) for d in self.details)
        return closing_marks(self.title) + "".join(
            d.separator + shown(d.text) + closing_marks(d.text) for d in self.details
        )


def source_field(text: str) -> str:
    """A pool field as a Sources entry or a preview shows it: on one line, its bidi controls
    balanced (:func:`~renderers.text.balanced_bidi`), so that an override in one source's
    title reverses nothing after the title, in any format."""
    return balanced_bidi(_one_line(text))


def entry_parts(entry: SourceEntry) -> EntryParts:
    """The parts of ``entry``: the label only when it says more than the title, the pages it
    is cited at, then the date."""
    title = source_field(entry.title)
    candidates: list[tuple[DetailKind, str]] = [
        ("label", source_field(entry.label)),
        ("location", source_field(entry.location)),
        ("date", source_field(entry.date)),
    ]
    kept = [(kind, text) for kind, text in candidates if text and text != title]
    details = tuple(
        EntryDetail(kind, text, DETAILS_LEAD if index == 0 else DETAILS_JOIN)
        for index, (kind, text) in enumerate(kept)
    )
    return EntryParts(
        number=entry.number,
        anchor=entry.anchor,
        title=title,
        url=entry.url,
        details=details,
        backlink=entry.backlink,
        direction=entry.direction,
        formatted=entry.formatted,
        style_marker=entry.marker,
    )


#: Longest snippet (the source's ``text``) a citation preview shows, in characters.
PREVIEW_SNIPPET_CHARS = 280


@dataclass(frozen=True)
class SourcePreview:
    """What the HTML citation preview (the popover on a citation) shows of a source."""

    title: str
    label: str  # domain, or artifact path for files and attachments
    date: str
    snippet: str


def source_preview(entry: SourceEntry) -> SourcePreview:
    """The preview of ``entry``: its title, label and date on one line each, and the start of
    the source's text (cut at :data:`PREVIEW_SNIPPET_CHARS` with an ellipsis)."""
    snippet = _one_line(entry.source.text)
    if len(snippet) > PREVIEW_SNIPPET_CHARS:
        snippet = snippet[: PREVIEW_SNIPPET_CHARS - 1].rstrip() + "\u2026"
    return SourcePreview(source_field(entry.title), source_field(entry.label),
                         source_field(entry.date), balanced_bidi(snippet))


# ---------------------------------------------------------------- images and tasks


def block_alignment(block: Paragraph | Heading | Figure) -> Alignment:
    """The alignment a writer sets on ``block`` beyond its own layout ("default": none), as
    its HTML asked (physical: left stays left in right-to-left text). A figure is centred
    already, so only left or right moves it. The Markdown writer keeps ``align`` as written:
    Markdown viewers centre nothing."""
    if isinstance(block, Figure) and block.align == "center":
        return "default"
    return block.align


def caption_lead(label: str, number: int, words: Labels) -> str:
    """"Figure 1:" before the caption of a numbered figure or table, in the document's
    ``words``; "" for an unnumbered one."""
    return words.caption_lead(label_kind(label), number) if label and number else ""


def caption_direction(
    label: str, number: int, caption: tuple[Inline, ...], words: Labels
) -> Direction | None:
    """The direction a caption reads in: its first strong character's, counting its lead
    (:func:`caption_lead`), as readers see it: "شكل 1: …" reads right to left whatever its
    text, "Figure 1: …" left to right."""
    return text_direction(f"{caption_lead(label, number, words)} {plain_text(caption)}")


def image_fallback(image: Image, words: Labels) -> str:
    """What an image that cannot be shown (remote, refused, broken) becomes, in every format:
    ``[Image: alt]`` (the title when there is no alt text), else ``[Image]``, in the
    document's ``words``. Never its source, which may be a path on the machine that rendered
    it."""
    return words.image_text(_one_line(image.alt) or _one_line(image.title))


#: The box before a task item: ☒ done, ☐ open. ☒ rather than ☑: the default fonts of office
#: suites (LibreOffice's Liberation, Carlito) have no ☑, which then comes out blank.
TASK_BOXES: dict[bool, str] = {True: "\u2612", False: "\u2610"}


def task_box(checked: bool | None) -> str:
    """The box of a task item (``""`` for a plain item)."""
    return "" if checked is None else TASK_BOXES[checked]


def item_marker(checked: bool | None, marker: str) -> str:
    """What marks a list item whose list would mark it ``marker`` (a bullet, a number): a
    task's box instead, else ``marker``. An item shows one marker in every format — HTML's task
    item has no list marker, only its box; Typst numbers the item by its box; DOCX gives it a
    numbering level drawing the box, PPTX a bullet of it — never a bullet and then a box."""
    return task_box(checked) or marker


class ImageBytes:
    """``limits.max_image_bytes``: the image bytes one artifact embeds, counted as it embeds.

    Every writer embeds one copy of an image however often it is shown (DOCX and PPTX parts,
    Markdown reference definitions, the HTML report's shared SVG image or print URL), and says
    which image it is with a ``key`` (its content digest, or its reference), so one image used
    many times costs its bytes once. Without a key every call counts. A render over the limit
    fails before the output grows further.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.total = 0
        self._seen: set[object] = set()

    def add(self, size: int, key: object | None = None) -> None:
        """Count ``size`` bytes (once per ``key``); raise :class:`LimitError` over the limit."""
        if key is not None:
            if key in self._seen:
                return
            self._seen.add(key)
        self.total += size
        if self.total > self.limit:
            raise LimitError(
                f"the images embedded in this output add up to more than {self.limit:,} bytes "
                "(limits.max_image_bytes); use fewer or smaller images",
                field="limits.max_image_bytes",
            )


#: Tab stops in code blocks (HTML ``<pre>``'s default).
CODE_TAB_SIZE = 8
#: How far past its own indentation the wrapped part of a code line hangs in, in characters.
CODE_CONTINUATION = 4


def code_hang(line: str) -> int:
    """How many characters the wrapped part of the code line ``line`` hangs in: the line's own
    indentation (tabs expanded) plus :data:`CODE_CONTINUATION`, so that the part does not read
    as a line of its own starting at the left edge (or at a shallower indentation, which in
    Python means another block)."""
    expanded = line.expandtabs(CODE_TAB_SIZE)
    return len(expanded) - len(expanded.lstrip(" ")) + CODE_CONTINUATION
