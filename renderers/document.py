"""The intermediate document every reader produces and every writer consumes (pandoc-style).

All nodes are frozen dataclasses. Writers dispatch with ``match`` and must raise
:class:`renderers.errors.UnsupportedNodeError` for a node they do not handle.
A citation is the inline node :class:`Cite`; the citation pass
(:mod:`renderers.resolve`) fills its ``numbers`` and ``anchor``.

Every node class has a docstring: without one, ``dataclass`` writes one from the class's
signature through ``inspect`` at import (nine classes: 0.7 ms of every CLI run, measured).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal, TypeAlias, get_args

from renderers.diagnostics import Diagnostic
from renderers.labels import ENGLISH, Labels

# ---------------------------------------------------------------- inlines


@dataclass(frozen=True)
class Text:
    """Plain text (no markup)."""

    text: str


@dataclass(frozen=True)
class Emph:
    """Emphasis (italic)."""

    children: tuple[Inline, ...]


@dataclass(frozen=True)
class Strong:
    """Strong emphasis (bold)."""

    children: tuple[Inline, ...]


@dataclass(frozen=True)
class Strike:
    """Struck-through text."""

    children: tuple[Inline, ...]


#: Inline formatting raw HTML may ask for: the sanitized subset every writer can show.
InlineStyle = Literal["sub", "sup", "kbd", "mark", "small", "abbr", "ins", "u"]
INLINE_STYLES: tuple[InlineStyle, ...] = get_args(InlineStyle)


@dataclass(frozen=True)
class Styled:
    """``<sub>``, ``<sup>``, ``<kbd>``, ``<mark>``, ``<small>``, ``<abbr>``, ``<ins>`` or ``<u>``
    around inlines; ``title`` is an ``<abbr>``'s expansion."""

    style: InlineStyle
    children: tuple[Inline, ...]
    title: str = ""


@dataclass(frozen=True)
class Code:
    """Inline code; ``text`` is verbatim (tokens inside it are not citations)."""

    text: str


@dataclass(frozen=True)
class Link:
    """A hyperlink. ``url`` is already vetted by the reader (http, https, mailto or ``#frag``)."""

    url: str
    children: tuple[Inline, ...]
    title: str = ""


@dataclass(frozen=True)
class Image:
    """An inline image; ``src`` is resolved through the sandboxed fetcher by writers."""

    src: str
    alt: str = ""
    title: str = ""


@dataclass(frozen=True)
class LineBreak:
    """A hard line break."""


@dataclass(frozen=True)
class SoftBreak:
    """A soft line break (rendered as a space by most writers)."""


@dataclass(frozen=True)
class RawInline:
    """Inline markup a reader could not map (kept as text, never as live markup)."""

    text: str
    format: str = "html"


@dataclass(frozen=True)
class Anchor:
    """A place the document's own links lead to (``#id``): an id the author's HTML gave an
    element that is not a heading (``<li id="fn1">``, ``<section id="costs">``). It shows
    nothing; every writer names the place: HTML ``<span id>``, Markdown ``<a id>``, Typst a
    label, DOCX a bookmark, PPTX its slide (the one a link jumps to)."""

    id: str


@dataclass(frozen=True)
class FootnoteRef:
    """A reference to an author footnote (markdown ``[^label]``)."""

    label: str


@dataclass(frozen=True)
class Cite:
    """One citation: the sids as written, in order.

    After the citation pass, ``numbers`` holds the sorted, de-duplicated display numbers of the
    known sids and ``anchor`` a unique id (``cite-1``, ``cite-2`` … in document order).
    A citation whose sids are all unknown has ``numbers == ()`` and writers render nothing.

    The style pass (:mod:`renderers.styles`) may fill ``children``: the citation as the chosen
    CSL style and citation format write it ("(IEA, 2025)", "[1, 3]"), written in the line of
    text, where a ``Link`` to ``#src-N`` leads to Sources entry N. Empty ``children`` means the
    linked superscript numbers. ``note`` > 0 makes the citation note number ``note`` of a note
    style, whose text is ``children``. ``joined`` (set by the citation pass): the superscript
    (numbers, or a note's number) stands right after another citation's and opens with a
    separator (:func:`citations.numbering.joined_lead`).
    """

    sids: tuple[int, ...]
    numbers: tuple[int, ...] = ()
    anchor: str = ""
    children: tuple[Inline, ...] = ()
    note: int = 0
    joined: bool = False


@dataclass(frozen=True)
class Math:
    """TeX math (``$…$``, ``\\(…\\)``; ``display`` for ``$$…$$``, ``\\[…\\]``), kept as written.

    Readers make one only for TeX that :mod:`renderers.math` can read; writers convert it there.
    A paragraph holding only a displayed formula is an equation on its own line. ``label``
    (``eq:energy`` from ``$$…$$ {#eq:energy}``) makes a displayed formula a numbered equation,
    ``number`` filled by the cross-reference pass; writers show "(1)" at the right margin, or
    the formula's own ``\\tag`` there (:func:`renderers.math.marks.equation_mark`).
    """

    tex: str
    display: bool = False
    label: str = ""
    number: int = 0

    @property
    def anchor(self) -> str:
        """Where references to a numbered equation lead (``eq-1``), "" for an unnumbered one."""
        return numbered_anchor(self.label, self.number) if self.label and self.number else ""


#: What a cross-reference may point at: a figure, a table, a displayed equation or a code
#: listing (pandoc-crossref's prefixes).
CrossRefKind = Literal["fig", "tbl", "eq", "lst"]
#: Combining marks a label's letters carry (``\w`` holds none): Latin, Greek and Cyrillic
#: accents written decomposed (``e`` + U+0301), Hebrew and Arabic points, the vowel signs of
#: the Indic, Thai, Lao, Myanmar and Khmer blocks (taken whole, less their full stops), and
#: kana voicing marks.
_LABEL_MARKS = (
    "\u0300-\u036f\u0483-\u0489\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7"
    "\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e4\u06e7\u06e8\u06ea-\u06ed"
    "\u0900-\u0963\u0966-\u0dff\u0e00-\u0e4e\u0e50-\u0eff\u1000-\u1049\u1050-\u109f"
    "\u1780-\u17d3\u17dd-\u17ff\u3099\u309a"
)
#: A label as references and definitions write it: ``fig:solar``, ``tbl-costs``, ``fig:a.b``,
#: ``fig:图表``, ``fig:चित्र``, a heading's ``sec:intro``, a listing's ``lst:code``: letters,
#: digits and marks of any script, as pandoc's citation keys and identifiers. A reference may
#: capitalise its prefix (pandoc-crossref's ``@Fig:a``): it names the same label
#: (:func:`label_key`).
CROSSREF_LABEL = (
    rf"(?:[Ff]ig|[Tt]bl|[Ss]ec|[Ee]q|[Ll]st)[:-][\w{_LABEL_MARKS}]+(?:[-:.][\w{_LABEL_MARKS}]+)*"
)
#: Characters after which an ``@`` is part of an e-mail address (``a.b@…``, ``x+y@…``).
_EMAIL_BEFORE = frozenset("._-+@")


# Letters of scripts in which a word meets a reference without a space: CJK (Han, kana,
# Bopomofo, Hangul) and Thai, Lao, Myanmar and Khmer write no spaces between words (``见@fig:a``);
# in Hebrew, Arabic and the other right-to-left scripts up to U+08FF one-letter prefixes ("in",
# "and", "as") join the next word (``ב@fig:a``, ``و@fig:a``). E-mail addresses are in practice
# written in Latin letters, and a domain never holds the ``:`` of ``@fig:a``.
@functools.cache
def _unspaced_letter() -> re.Pattern[str]:
    """Compiled on first use: its ranges take 4–5 ms to compile, and only an ``@`` after a
    letter asks (measured)."""
    return re.compile(
        "[\u0590-\u08ff\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff"
        "\u2e80-\u2fdf\u3040-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f"
        "\uac00-\ud7ff\uf900-\ufaff\ufb1d-\ufdff\ufe70-\ufefc\uff66-\uffdc"
        "\U00020000-\U0003ffff]"
    )


def unspaced_letter(char: str) -> bool:
    """Whether ``char`` is a letter of a script whose words meet without a space."""
    return _unspaced_letter().match(char) is not None


def crossref_may_follow(before: str) -> bool:
    """Whether an ``@`` right after the character ``before`` may start a cross-reference
    (``@fig:a``): not inside an e-mail address, so not after a letter or digit of a script
    that spaces its words (Latin, Greek, Cyrillic …) nor after ``.``/``_``/``-``/``+``/``@``;
    but after punctuation, a space, or a letter of a script whose words meet it unspaced.
    The markdown reader's rule and the Markdown writer's escaping both ask this."""
    if before in _EMAIL_BEFORE:
        return False
    return not before.isalnum() or unspaced_letter(before)


def label_key(label: str) -> str:
    """The label a reference names, whatever the case of its prefix: ``@Fig:a`` (pandoc-
    crossref's capitalised form) and ``@fig:a`` both name ``fig:a``."""
    return label[:3].lower() + label[3:]


def label_kind(label: str) -> CrossRefKind:
    """The kind a label names by its prefix (``fig:…``/``fig-…``, ``tbl:…``, ``eq:…``,
    ``lst:…``)."""
    key = label_key(label)
    for kind in _KINDS:
        if key.startswith(kind):
            return kind
    return "fig"


_KINDS: tuple[CrossRefKind, ...] = ("tbl", "eq", "lst")


def section_label(label: str) -> bool:
    """Whether a label names a heading (``sec:intro``, ``Sec-intro``) rather than a figure or
    a table: such a reference becomes a link showing the heading's title."""
    return label_key(label).startswith("sec")


def numbered_name(label: str, number: int, words: Labels) -> str:
    """What a reference to a numbered figure or table shows ("Figure 1", "Abbildung 1"), in
    the document's ``words`` (:func:`renderers.labels.labels_for`)."""
    return words.numbered(label_kind(label), number)


def numbered_anchor(label: str, number: int) -> str:
    """The anchor of a numbered figure, table or equation in every format (``fig-1``,
    ``tbl-2``, ``eq-3``)."""
    return f"{label_kind(label)}-{number}"


#: What a reference to a figure or table shows: its name and number, "Figure 3" (``@fig:a``,
#: ``[@fig:a]``), or the number alone, "3" (pandoc-crossref's ``[-@fig:a]``); ``names`` is the
#: first of a group's references to one kind, "Figures 1" (the name, in the plural, unlinked).
CrossRefForm = Literal["name", "number", "names"]
#: What stands before a reference of a group (``[@fig:a; @fig:b]``), unlinked: nothing (the
#: first), the list's separator (", "), its conjunction (" and ", before the last) or the dash
#: of a range ("–"). The reader marks every reference after a group's first with ``list``;
#: the cross-reference pass decides the rest (:mod:`renderers.crossref`).
CrossRefJoiner = Literal["", "list", "last", "range"]


@dataclass(frozen=True)
class CrossRef:
    """A reference to a labelled figure or table (``@fig:solar``, ``[@tbl:costs]``,
    ``[-@fig:solar]``).

    ``label`` is the label as written (``fig:solar``); the cross-reference pass
    (:mod:`renderers.crossref`) fills ``number``; a label nothing defines reaches a writer only
    in a group, unnumbered and not ``linked``, showing :attr:`written` after its joiner.
    ``form`` says whether the reference shows the name with the number or the number alone.
    ``linked`` is False for a reference inside the author's link (set by the pass): a link
    cannot hold another, so every writer shows its words as plain text there and the outer
    link wins (and for an unknown one of a group, which leads nowhere). ``prefix`` is the
    author's own word for the kind (pandoc-crossref's ``[Chart @fig:a]``, "Chart 3"), shown
    in place of the document's name in either form; ``dash`` says the author wrote a ``-``
    after a prefix (``[Chart -@fig:a]``, which the prefix overrides; without one, the
    ``number`` form says it), kept so that an unnumbered one shows what was written.
    """

    label: str
    number: int = 0
    form: CrossRefForm = "name"
    joiner: CrossRefJoiner = ""
    linked: bool = True
    prefix: str = ""
    dash: bool = False

    @property
    def written(self) -> str:
        """The reference as its author wrote it, less brackets (``@fig:a``, ``-@fig:a``,
        ``Chart -@fig:a``): what an unnumbered one shows."""
        ref = f"-@{self.label}" if self.dash or self.form == "number" else f"@{self.label}"
        return f"{self.prefix} {ref}" if self.prefix else ref

    def shown(self, words: Labels) -> str:
        """The linked words every writer shows for this reference: "Figure 3" in the
        document's ``words`` (the author's "Chart 3" for a prefixed one), "3" for the number
        alone (a group's numbers too), or :attr:`written` before numbering."""
        if not self.number:
            return self.written
        if self.form == "name":
            if self.prefix:
                return f"{self.prefix} {self.number}"
            return numbered_name(self.label, self.number, words)
        return str(self.number)

    def lead(self, words: Labels) -> str:
        """The unlinked words every writer shows before :meth:`shown`: a group's joiner and
        plural name (" and Tables ", or the author's prefix: ", Chart "), or "" for a
        reference on its own."""
        if self.form != "names":
            return words.joiner(self.joiner)
        name = f"{self.prefix} " if self.prefix else words.names_lead(label_kind(self.label))
        return words.joiner(self.joiner) + name

    @property
    def anchor(self) -> str:
        """Where the reference leads: the numbered figure's or table's anchor (``fig-3``)."""
        return numbered_anchor(self.label, self.number)


Inline: TypeAlias = (
    Text
    | Emph
    | Strong
    | Strike
    | Styled
    | Code
    | Link
    | Image
    | LineBreak
    | SoftBreak
    | RawInline
    | Anchor
    | FootnoteRef
    | Cite
    | Math
    | CrossRef
)

# ---------------------------------------------------------------- blocks

#: A table column's or a block's horizontal alignment, physical as HTML's ``align`` is (left
#: stays left in right-to-left text); "default" is the writer's own (a line's start, a figure
#: centred). Justified text is not kept: no writer justifies, and ragged text reads the same.
Alignment = Literal["left", "center", "right", "default"]


#: pandoc's class of a heading kept out of the contents (``## Aside {.unlisted}``): the readers
#: read it into :attr:`Heading.listed`, and the HTML writer writes it on every heading its outline
#: leaves out (:meth:`renderers.writers.contents.Outline.lists`).
UNLISTED = "unlisted"


@dataclass(frozen=True)
class Heading:
    """A heading; ``id`` is the one its input gave it ("" to make one from its text),
    ``listed`` False when its author kept it out of the contents and the PDF outline (pandoc's
    ``.unlisted``, HTML's ``class="unlisted"``): the input's own attribute, on this heading
    only; the writers keep its section out with it
    (:func:`renderers.writers.contents.body_outline`). ``given``: ``id`` is the
    author's own (``{#results}``, HTML's ``id=``), kept as written, not one the reader made
    from the text: a writer that would drop ids nothing links to keeps it, since links from
    outside the document may use it."""

    level: int  # 1..6
    children: tuple[Inline, ...]
    id: str = ""
    align: Alignment = "default"
    listed: bool = True
    given: bool = False


@dataclass(frozen=True)
class Paragraph:
    """A paragraph; ``align`` is what HTML input asked (``<p align="center">``, ``<center>``)."""

    children: tuple[Inline, ...]
    align: Alignment = "default"


@dataclass(frozen=True)
class ListItem:
    """A list item; ``checked`` is None for a plain item, True/False for a task item."""

    blocks: tuple[Block, ...]
    checked: bool | None = None


@dataclass(frozen=True)
class BulletList:
    """An unordered list; ``tight`` lists have no space between their items."""

    items: tuple[ListItem, ...]
    tight: bool = True


@dataclass(frozen=True)
class OrderedList:
    """A numbered list counting from ``start``; ``tight`` as for :class:`BulletList`."""

    items: tuple[ListItem, ...]
    start: int = 1
    tight: bool = True


@dataclass(frozen=True)
class TableCell:
    """One cell of a table row."""

    children: tuple[Inline, ...]


@dataclass(frozen=True)
class Table:
    """A table: ``header`` is one row (may be empty), ``aligns`` one entry per column."""

    header: tuple[TableCell, ...]
    rows: tuple[tuple[TableCell, ...], ...]
    aligns: tuple[Alignment, ...] = ()
    caption: tuple[Inline, ...] = ()
    label: str = ""  # "tbl:costs" from a caption ending "{#tbl:costs}"
    number: int = 0  # filled by the cross-reference pass for a labelled table


@dataclass(frozen=True)
class CodeBlock:
    """A code block; ``text`` is verbatim (tokens inside it are not citations).

    ``caption`` (pandoc-crossref's ``Listing: …`` paragraph or ``caption="…"`` attribute) is
    shown above the code; ``label`` (``lst:code``) makes it a numbered listing, "Listing 1:"
    before its caption (``number`` filled by the cross-reference pass).
    """

    text: str
    language: str = ""
    caption: tuple[Inline, ...] = ()
    label: str = ""
    number: int = 0


@dataclass(frozen=True)
class BlockQuote:
    """A block quote."""

    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class Figure:
    """A block image with an optional caption; ``label`` (``fig:solar`` from
    ``![…](…){#fig:solar}``) makes it a numbered figure (``number`` filled by the
    cross-reference pass)."""

    image: Image
    caption: tuple[Inline, ...] = ()
    label: str = ""
    number: int = 0
    align: Alignment = "default"


@dataclass(frozen=True)
class ThematicBreak:
    """A thematic break (a horizontal rule)."""


@dataclass(frozen=True)
class RawBlock:
    """Block markup a reader could not map; writers show ``text`` as plain text, never live."""

    text: str
    format: str = "html"


@dataclass(frozen=True)
class FootnoteDef:
    """An author footnote's body (markdown ``[^label]: …``)."""

    label: str
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class SpeakerNotes:
    """Speaker notes (markdown ``::: notes`` … ``:::``, pandoc's fenced div): PPTX puts them on
    the notes page of the slide they belong to; the citation pass takes them out of the
    document every other format sees (:attr:`renderers.resolve.ResolvedDocument.speaker_view`)."""

    blocks: tuple[Block, ...]


Block: TypeAlias = (
    Heading
    | Paragraph
    | BulletList
    | OrderedList
    | Table
    | CodeBlock
    | BlockQuote
    | Figure
    | ThematicBreak
    | RawBlock
    | FootnoteDef
    | SpeakerNotes
)


@dataclass(frozen=True)
class Document:
    """A whole document: its blocks, an optional title and the USAGE sids met while reading.

    ``notes`` are reading problems (``strict`` fails on them): ``reader-note`` diagnostics with
    the 1-based line of the input where the reader knows it; ``warnings`` are their messages.
    ``diagnostics`` are what the reader noticed about content it kept, which ``strict`` lets
    pass like a writer's notes (an image whose source it refused). ``lang`` is the language the
    input itself declares (an HTML input's ``<html lang>``, a markdown input's front matter
    ``lang:``; a canonical BCP 47 tag), or "". ``authors``, ``date``, ``keywords`` and
    ``description`` come from a markdown input's front matter or an HTML input's ``<meta>``
    tags (:mod:`renderers.metadata`), plain text; ``subtitle`` from front matter, or the title
    block of a page citerender wrote; ``abstract`` from the same, blocks read as the body is
    (pandoc's MetaBlocks): its citations come before the body's (:func:`reading_blocks`).
    ``shows_metadata``: whether writers show them as a title block
    (:func:`renderers.writers.common.title_block`): front matter is pandoc's title block; an
    HTML head's ``<meta>`` tags are not text its page shows. ``own_page``: the input is an HTML
    page citerender wrote (:func:`renderers.metadata.is_own_page`), read back as the report it
    shows, which the writers lay out as a report, not in the page's own look.
    """

    blocks: tuple[Block, ...]
    title: str = ""
    usage_sids: tuple[int, ...] = ()
    notes: tuple[Diagnostic, ...] = field(default=())
    diagnostics: tuple[Diagnostic, ...] = field(default=())
    #: Notes on links to an id of the writers' own form (``cite-3``, ``fn-2``, ``fig-1`` …),
    #: each with that id: only resolution knows which of them the writers make
    #: (:func:`renderers.resolve.generated_anchors`), so it keeps a note when none does.
    anchor_notes: tuple[tuple[str, Diagnostic], ...] = ()
    #: The ids the document's links lead to that no heading or element has (each has its note
    #: in :attr:`notes`); resolution adds the writers' own ids none makes
    #: (:attr:`renderers.resolve.ResolvedDocument.dead_links`).
    dead_links: frozenset[str] = frozenset()
    lang: str = ""
    authors: tuple[str, ...] = ()
    date: str = ""
    keywords: tuple[str, ...] = ()
    description: str = ""
    subtitle: str = ""
    abstract: tuple[Block, ...] = ()
    shows_metadata: bool = False
    own_page: bool = False

    @property
    def warnings(self) -> tuple[str, ...]:
        """The messages of :attr:`notes` (``markdown input, line 3: invalid citation …``)."""
        return tuple(note.message for note in self.notes)


# ---------------------------------------------------------------- helpers


#: How :func:`plain_text` writes a formula: its TeX source (ids, matching) or its linear
#: Unicode form (``x²``, ``α``: text a reader sees, such as contents and outline entries).
FormulaText = Literal["tex", "linear"]


def plain_text(
    inlines: tuple[Inline, ...], formulas: FormulaText = "tex", words: Labels = ENGLISH
) -> str:
    """The visible text of inlines (citations omitted), for titles, alt text and ids; a
    reference to a figure or table named in ``words`` (contents entries: the document's)."""
    parts: list[str] = []
    for node in inlines:
        match node:
            case Text(text) | Code(text) | RawInline(text):
                parts.append(text)
            case Emph(children) | Strong(children) | Strike(children) | Styled(_, children) | Link(
                _, children
            ):
                parts.append(plain_text(children, formulas, words))
            case Image(alt=alt):
                parts.append(alt)
            case Math(tex, display):
                parts.append(tex if formulas == "tex" else _linear(tex, display))
            case CrossRef():
                parts.append(node.lead(words) + node.shown(words))
            case LineBreak() | SoftBreak():
                parts.append(" ")
            case FootnoteRef() | Cite() | Anchor():
                pass
    return "".join(parts)


def only_anchors(children: tuple[Inline, ...]) -> bool:
    """Whether a paragraph's ``children`` show nothing but hold an :class:`Anchor`
    (``<a id="x"></a>`` on a line of its own)."""
    return any(isinstance(node, Anchor) for node in children) and all(
        isinstance(node, Anchor | SoftBreak | LineBreak)
        or (isinstance(node, Text) and not node.text.strip())
        for node in children
    )


def _linear(tex: str, display: bool) -> str:
    """A formula as a line of text, its source when it is not math."""
    from renderers.math.linear import tex_line  # parses TeX: loaded by a first formula

    line = tex_line(tex, display)
    return tex if line is None else line


def iter_blocks(blocks: tuple[Block, ...]) -> Iterator[Block]:
    """Every block, nested ones (list items, quotes, footnotes) included, in document order."""
    for block in blocks:
        yield block
        match block:
            case BulletList(items) | OrderedList(items):
                for item in items:
                    yield from iter_blocks(item.blocks)
            case BlockQuote(inner) | FootnoteDef(_, inner) | SpeakerNotes(inner):
                yield from iter_blocks(inner)


def reading_blocks(document: Document) -> tuple[Block, ...]:
    """The front matter abstract's blocks, then the body's: the order a reader meets them in,
    which numbers the citations (the title block stands above the body)."""
    return document.abstract + document.blocks if document.abstract else document.blocks


def map_document(
    document: Document,
    leaf: Callable[[Inline], Inline],
    *,
    tidy: Callable[[list[Inline]], tuple[Inline, ...]] = tuple,
) -> Document:
    """``document`` with :func:`map_blocks` applied to its abstract, then to its body (in
    :func:`reading_blocks` order: a ``leaf`` that counts sees the abstract's nodes first)."""
    abstract = map_blocks(document.abstract, leaf, tidy=tidy)
    return dataclasses.replace(
        document, abstract=abstract, blocks=map_blocks(document.blocks, leaf, tidy=tidy)
    )


#: The inlines whose ``children`` are inlines of the line (a :class:`Cite`'s styled
#: ``children`` are its own text, not the line's): the ones the walks descend into.
_PARENT_INLINES = (Emph, Strong, Strike, Styled, Link)


def iter_inlines(blocks: tuple[Block, ...]) -> Iterator[Inline]:
    """Every inline node of ``blocks`` in document order (depth first, children after parent)."""
    # one walk over all the runs: a render walks the document a dozen times, and a generator
    # for each run cost a third of each walk (measured)
    return walk_inlines(itertools.chain.from_iterable(inline_runs(blocks)))


def inline_runs(blocks: tuple[Block, ...]) -> Iterator[tuple[Inline, ...]]:
    """The inlines of every block, nested blocks included, one run per place that sets them
    as one paragraph: a paragraph, a heading, a table cell, a caption (a figure's image leads
    its caption; a listing's caption, never its code)."""
    for block in iter_blocks(blocks):
        match block:
            case Heading(children=children) | Paragraph(children):
                yield children
            case Table(header, rows, _, caption):
                yield from (cell.children for cell in header)
                yield from (cell.children for row in rows for cell in row)
                yield caption
            case Figure(image, caption):
                yield (image, *caption)
            case CodeBlock(caption=caption) if caption:
                yield caption


def walk_inlines(inlines: Iterable[Inline]) -> Iterator[Inline]:
    """``inlines`` and every inline nested in them, depth first, children after parent."""
    for node in inlines:
        yield node
        if isinstance(node, _PARENT_INLINES):  # one check, where a match tried five patterns
            yield from walk_inlines(node.children)


def _keep_block(block: Block) -> Block:
    return block


def map_blocks(
    blocks: tuple[Block, ...],
    leaf: Callable[[Inline], Inline],
    *,
    block_fn: Callable[[Block], Block] = _keep_block,
    tidy: Callable[[list[Inline]], tuple[Inline, ...]] = tuple,
) -> tuple[Block, ...]:
    """``blocks`` rebuilt with ``leaf`` applied to every inline that has no children (the
    passes of :mod:`renderers.resolve` and :mod:`renderers.crossref`), ``tidy`` to every
    rebuilt run of inlines, and ``block_fn`` to every block once its contents are mapped."""

    def inlines(nodes: tuple[Inline, ...]) -> tuple[Inline, ...]:
        out: list[Inline] = []
        for node in nodes:
            match node:
                case Emph(children) | Strong(children) | Strike(children) | Styled(
                    _, children
                ) | Link(_, children):
                    out.append(dataclasses.replace(node, children=inlines(children)))
                case _:
                    out.append(leaf(node))
        return tidy(out)

    def cells(row: tuple[TableCell, ...]) -> tuple[TableCell, ...]:
        return tuple(TableCell(inlines(cell.children)) for cell in row)

    def walk(nodes: tuple[Block, ...]) -> tuple[Block, ...]:
        out: list[Block] = []
        for block in nodes:
            match block:
                case Heading(children=children) | Paragraph(children=children):
                    block = dataclasses.replace(block, children=inlines(children))
                case BulletList(items) | OrderedList(items):
                    block = dataclasses.replace(block, items=tuple(
                        ListItem(walk(item.blocks), item.checked) for item in items
                    ))
                case Table(header, rows, _, caption):
                    block = dataclasses.replace(
                        block, header=cells(header), rows=tuple(cells(row) for row in rows),
                        caption=inlines(caption),
                    )
                case BlockQuote(blocks=inner) | FootnoteDef(blocks=inner) | SpeakerNotes(
                    blocks=inner
                ):
                    block = dataclasses.replace(block, blocks=walk(inner))
                case Figure(caption=caption):
                    block = dataclasses.replace(block, caption=inlines(caption))
                case CodeBlock(caption=caption) if caption:
                    block = dataclasses.replace(block, caption=inlines(caption))
            out.append(block_fn(block))
        return tuple(out)

    return walk(blocks)
