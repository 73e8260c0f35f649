"""The HTML writer: a standalone HTML5 report (inline CSS, images as ``data:`` URIs).

The same markup feeds the PDF writer (WeasyPrint) and, through it, the PNG writer; the two differ
only in how an image shown more than once is embedded once (:mod:`.images`). What it shows
for the title, author notes, Sources entries, missing images and task boxes is decided in
:mod:`renderers.writers.common`; the direction of each block by :mod:`renderers.text`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from html import unescape
from urllib.parse import unquote

from markupsafe import Markup, escape

from citations.links import safe_link
from citations.numbering import display_segments
from renderers.document import (
    UNLISTED,
    Alignment,
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
    plain_text,
    reading_blocks,
    walk_inlines,
)
from renderers.errors import UnsupportedNodeError
from renderers.labels import Labels, labels_for
from renderers.language import language_for
from renderers.math.marks import equation_mark
from renderers.metadata import GENERATOR, USAGE_META
from renderers.options import RenderOptions
from renderers.resolve import ResolvedDocument
from renderers.sandbox import LoadedImage
from renderers.text import (
    Direction,
    HeadingIds,
    blocks_direction,
    has_long_word,
    link_target,
    paragraph_dir,
    text_direction,
)
from renderers.writers import Artifact, WriteSource
from renderers.writers.common import (
    BACKLINK_JOIN,
    BACKLINK_MARK,
    CITATION_NOTES_ID,
    CONTENTS_ID,
    NOTES_ID,
    AuthorNote,
    AuthorNotes,
    DocumentTitle,
    MarkPiece,
    TitleBlock,
    block_alignment,
    caption_direction,
    carried_anchors,
    citation_note_direction,
    citation_notes_heading,
    cite_direction,
    cite_space,
    cite_wraps,
    document_authors,
    document_preceding,
    document_title,
    document_words,
    entry_parts,
    has_citation_notes,
    joined_runs,
    mark_pieces,
    shows_nothing,
    source_preview,
    task_box,
    title_block,
    title_block_position,
    unbroken_parts,
    unresolved_note_text,
)
from renderers.writers.contents import (
    back_matter,
    body_outline,
    contents_entries,
    contents_headings,
    contents_position,
    heading_text,
)
from renderers.writers.html.bidi import HeldRun, held_line_runs
from renderers.writers.html.breaks import breakable, wrappable
from renderers.writers.html.code import CodeBlocks
from renderers.writers.html.contents import contents_markup
from renderers.writers.html.images import EmbeddedImages, ImageTarget
from renderers.writers.html.list_numbers import ol_start_style
from renderers.writers.html.math import (
    EQUATION_CSS,
    MATH_CSS,
    caption_label,
    crossref_markup,
    math_markup,
    numbered_id,
)
from renderers.writers.html.templating import (
    PREVIEW_SCRIPT_ID,
    code_arabic_css,
    environment,
    page_footer,
    report_css,
    stylesheet,
)

#: Inlines whose HTML text is not what the contents shows for them (citation numbers, note
#: letters, a formula's drawing or markup, an image): WeasyPrint would take them into a heading's
#: PDF outline entry, so such a heading names its entry (``data-outline``, ``report.css``).
_OFF_OUTLINE = (Cite, FootnoteRef, Math, Image)


def shows_url(text: str) -> bool:
    """Whether a link's visible text is itself a web or mail address: such a link is marked
    ``dir="ltr"``, so inside a right-to-left line "https://" is not reordered into "//:https"
    where the address wraps. The attribute, not CSS: browsers isolate an element with ``dir``,
    and WeasyPrint honours the attribute but ignores ``unicode-bidi`` (it warns)."""
    shown = text.strip()
    return (shown.lower().startswith(("http://", "https://", "mailto:"))
            and not any(c.isspace() for c in shown) and bool(safe_link(shown)))


def needs_outline_label(children: tuple[Inline, ...]) -> bool:
    """Whether a heading of ``children`` must name its PDF outline entry: the text WeasyPrint
    reads from it would not be the contents entry's."""
    return any(isinstance(node, _OFF_OUTLINE) for node in walk_inlines(children))


def cite_markup(
    anchor: str, numbers: Iterable[int], sids: Iterable[int], *, joined: bool = False,
    direction: Direction | None = None, wraps: bool = False,
) -> Markup:
    """``<sup class="cite" id="cite-K" data-sids="…">`` with one ``<a href="#src-N">`` per
    displayed number; ``sids``: the ones the numbers stand for
    (:meth:`~citations.numbering.CitationPlan.linked_sids`); ``direction``: its ``dir``, held
    apart from its line (:func:`cite_direction`); ``wraps``: it is in a run that may wrap
    after its separators (:func:`cite_wraps`)."""
    return _cite_sup(anchor, display_segments(numbers, joined=joined), "src-", sids, direction,
                     joined=joined, wraps=wraps)


def _cite_sup(
    anchor: str, pieces: list[MarkPiece], target: str, sids: Iterable[int],
    direction: Direction | None = None, *, joined: bool = False, wraps: bool = False,
) -> Markup:
    """``<sup class="cite">`` showing ``pieces`` (:func:`display_segments`), each number linked
    to ``#{target}N`` (a Sources entry, or a note style's note). A ``joined`` mark is
    ``cite-joined``: no gap before its separator (report.typ's ``gap: false``). The mark is
    ``nowrap``; one in a run that wraps (:func:`cite_wraps`) is ``cite-wraps`` instead, each
    of its ranges a ``nowrap`` ``span.cite-range`` (a line breaks after a separator's space,
    never after a range's dash): :func:`unbroken_parts`."""
    if not pieces:
        return Markup("")
    inner = "".join(
        f'<span class="cite-range">{_pieces_markup(part, target)}</span>'
        if wraps and len(part) > 1 else _pieces_markup(part, target)
        for part in unbroken_parts(pieces, wraps=wraps)
    )
    kind = "cite" + (" cite-joined" if joined else "") + (" cite-wraps" if wraps else "")
    return Markup(f'<sup class="{kind}" id="{escape(anchor)}"{_sids(sids)}{_dir(direction)}>'
                  f"{inner}</sup>")


def _pieces_markup(pieces: list[MarkPiece], target: str) -> str:
    """``pieces`` of a mark, each number linked to ``#{target}N``."""
    return "".join(
        str(escape(text)) if number is None else f'<a href="#{target}{number}">{escape(text)}</a>'
        for text, number in pieces
    )


def _sids(sids: Iterable[int]) -> str:
    """The ``data-sids`` attribute of a written citation: the page read back as input cites
    the same sources (ARCHITECTURE §3.1's input markup)."""
    return f' data-sids="{",".join(str(int(sid)) for sid in sids)}"'


def _dir(direction: Direction | None) -> str:
    """The ``dir`` attribute of a citation held apart from its line (none when it is not)."""
    return f' dir="{direction}"' if direction else ""


def list_start_attributes(start: int) -> str:
    """``start`` of an ordered list, also as the counter reset WeasyPrint needs (list_numbers)."""
    if start == 1:
        return ""
    return f' start="{int(start)}" style="{ol_start_style(start)}"'


def render_html(rdoc: ResolvedDocument, options: RenderOptions) -> str:
    """The standalone HTML5 report of ``rdoc``."""
    return write_report(rdoc, options, "standalone").html


@dataclass(frozen=True)
class WrittenReport:
    """A report's HTML, and for a print report the images its fetcher must serve
    (``citerender-image:N`` → image: each image shown more than once, see :mod:`.images`) and
    the stylesheets the page is laid out with, which its HTML leaves out (:class:`Page`)."""

    html: str
    images: Mapping[str, LoadedImage]
    stylesheets: tuple[str, ...] = ()


@dataclass(frozen=True)
class Page:
    """A filled page: its HTML and, when the rules were asked for apart
    (:func:`render_page`), the pieces of the report's look it is to be laid out with, in
    cascade order. Each piece is the same text on every page of the same look, so the PDF
    writer parses it once per process; only the ``@font-face`` rules the page's own text
    needs stay in its ``<style>``."""

    html: str
    stylesheets: tuple[str, ...] = ()


def print_report(rdoc: ResolvedDocument, options: RenderOptions) -> WrittenReport:
    """The report of ``rdoc`` as the PDF writer lays it out."""
    return write_report(rdoc, options, "print")


def write_report(
    rdoc: ResolvedDocument, options: RenderOptions, target: ImageTarget
) -> WrittenReport:
    """The report of ``rdoc`` for ``target`` (they differ only in images shown more than
    once), with the images a print report's fetcher serves."""
    words = document_words(rdoc, options)
    writer = ReportWriter(options, rdoc, words, target)
    title = writer.title
    blocks = rdoc.document.blocks
    shown = title_block(rdoc.document, options, words)
    # written first: the abstract's citations come before the body's (citation notes)
    header = writer.title_block(shown) if shown else None
    parts = writer.block_parts(blocks)
    notes = writer.notes()
    toc = Markup("")
    if options.toc:
        back = back_matter(
            words,
            notes=NOTES_ID if notes else "",
            citation_notes=CITATION_NOTES_ID if writer.cite_notes else "",
            sources="sources" if rdoc.entries else "",
            sources_heading=rdoc.sources_heading,
        )
        headings = contents_headings(writer.outline, writer.heading_id, words)
        toc = contents_markup(contents_entries(headings, back), words)
        parts.insert(contents_position(blocks, title.heading), toc)
        toc = Markup("")
    if header is not None:  # before the contents, which go after the title heading's paragraphs
        parts.insert(title_block_position(blocks, title), header)
    definitions = writer.images.definitions()
    if definitions:
        parts.insert(0, definitions)
    page = render_page(
        body=Markup("\n").join(parts),
        title=title,
        options=options,
        notes=notes,
        rdoc=rdoc,
        cite_notes=writer.cite_notes,
        toc=toc,
        extra_css=writer.images.css() + writer.code.css()
        + (EQUATION_CSS if writer.has_equation else ""),
        math=writer.has_math,
        rules_apart=target == "print",
    )
    html = unlink_missing_fragments(page.html) if target == "standalone" else page.html
    return WrittenReport(html, writer.images.resources, page.stylesheets)


#: An ``id`` attribute and a link's ``href`` to a fragment, as this writer and lxml (the
#: author's look) write them: double-quoted, ``>`` in a value escaped, or single-quoted when
#: the value holds a ``"`` (lxml's ``id='x"y'``).
_ID_ATTRIBUTE = re.compile(r"""\sid=(?:"([^"]*)"|'([^']*)')""")
_FRAGMENT_LINK = re.compile(r"""(<a\b[^>]*?)\shref=(?:"#([^"]*)"|'#([^']*)')""")


def unlink_missing_fragments(html: str) -> str:
    """``html`` with every link to a fragment that no element of the page has (an author's
    ``[x](#nowhere)``, a pasted page's ``#fn-1`` whose note the sanitizer took the id of) left
    without its ``href``: a browser would follow it nowhere, and WeasyPrint logs "No anchor"
    for it and draws no link."""
    ids = {unescape(double or single) for double, single in _ID_ATTRIBUTE.findall(html)}

    def keep(match: re.Match[str]) -> str:
        target = unescape(match.group(2) if match.group(2) is not None else match.group(3))
        return match.group(0) if target in ids or unquote(target) in ids else match.group(1)

    return _FRAGMENT_LINK.sub(keep, html)


def styled_cite_markup(
    cite: Cite, sids: Iterable[int], inlines: Callable[[tuple[Inline, ...]], Markup],
    direction: Direction | None = None, *, wraps: bool = False,
) -> Markup:
    """A citation the style pass filled (:mod:`renderers.styles`): its inlines in a
    ``<span class="cite">`` (links to ``#src-N`` lead to the entries), or for a note style the
    note's number linked to the note (``cnote-K``); ``data-sids`` as :func:`cite_markup`.
    ``direction``: the element's ``dir``, held apart from its line (:func:`cite_direction`),
    the space before it left outside; ``wraps`` as :func:`cite_markup`'s, for a note's number."""
    if cite.note:
        return _cite_sup(cite.anchor, mark_pieces(cite), "cnote-", sids, direction,
                         joined=cite.joined, wraps=wraps)
    space, children = cite_space(cite.children) if direction else ("", cite.children)
    return Markup(f'{space}<span class="cite" id="{escape(cite.anchor)}"{_sids(sids)}'
                  f"{_dir(direction)}>{inlines(children)}</span>")


def _shown_text(
    body: str, toc: str, *note_lists: list[dict[str, object]] | None
) -> str:
    """The body, the contents and every note's body: the page's own text, which decides the
    stylesheet's optional parts (the notes hold code too)."""
    notes = "".join(str(note["body"]) for notes in note_lists for note in notes or ())
    return body + toc + notes


def html_artifact(source: WriteSource) -> Artifact:
    """The HTML writer's artifact (for the writer registry; the PDF writer lays it out too)."""
    return Artifact.of_text(render_html(source.rdoc, source.options))


def render_page(
    *,
    body: Markup,
    title: DocumentTitle,
    options: RenderOptions,
    rdoc: ResolvedDocument,
    notes: list[dict[str, object]] | None = None,
    cite_notes: list[dict[str, object]] | None = None,
    toc: str = "",
    extra_css: str = "",
    math: bool = False,
    rules_apart: bool = False,
) -> Page:
    """Fill ``report.html.j2`` (page shell, CSS, title, contents, notes, Sources) around
    ``body``; ``cite_notes`` are the notes of a note style (number, body, back-reference),
    ``math`` adds the CSS formulas need, the title block's stylesheet comes with a title block,
    the contents' stylesheet follows when ``options.toc`` asks for contents, and ``extra_css``
    (the code colours) comes last. All of it is inline, unless ``rules_apart``: then the
    page's ``<style>`` holds only its ``@font-face`` rules and the rest comes back as
    :attr:`Page.stylesheets`."""
    contents_css = stylesheet("contents.css") if options.toc else ""
    shown = _shown_text(body, toc, notes, cite_notes)
    language = language_for(rdoc, options)
    words = labels_for(language)
    block_css = stylesheet("title-block.css") if title_block(rdoc.document, options, words) else ""
    fonts = code_arabic_css(shown)
    rules = tuple(piece for piece in (
        report_css(options.page_size, language.cjk_face(title.page_title(words) + shown),
                   page_footer(words)),
        block_css, MATH_CSS if math else "", contents_css, extra_css,
    ) if piece)
    css = fonts if rules_apart else fonts + "".join(rules)
    entry_writer = ReportWriter(options, rdoc, words)
    bodies = {e.anchor: entry_writer.inlines(e.formatted) for e in rdoc.entries if e.formatted}
    html = environment().get_template("report.html.j2").render(
        generator=GENERATOR,
        usage_meta=USAGE_META,
        usage=",".join(str(sid) for sid in rdoc.usage_sids),
        lang=language.tag,
        title=title.page_title(words),
        authors=document_authors(rdoc.document, options),
        date=rdoc.document.date,
        keywords=rdoc.document.keywords,
        description=rdoc.document.description,
        css=Markup(css.replace("</", "<\\/")),
        show_title=title.added,
        toc=Markup(toc),
        body=body,
        notes=notes or [],
        notes_heading=words.notes,
        cite_notes_heading=citation_notes_heading(words, author_notes=bool(notes)),
        cite_notes_id=CITATION_NOTES_ID,
        entries=[entry_parts(entry) for entry in rdoc.entries],
        bodies=bodies,
        previews={e.anchor: source_preview(e) for e in rdoc.entries},
        styled=bool(bodies),
        cite_notes=cite_notes or [],
        sources_heading=rdoc.sources_heading,
        backlink_mark=BACKLINK_MARK,
        backlink_join=BACKLINK_JOIN,
        backlink_title=words.backlink,
        note_backlink_title=words.note_backlink,
    )
    return Page(html, rules if rules_apart else ())


class ReportWriter:
    """Walks the IR once; every node kind has a branch, anything else is an error."""

    def __init__(
        self,
        options: RenderOptions,
        rdoc: ResolvedDocument,
        words: Labels,
        target: ImageTarget = "standalone",
    ) -> None:
        document = rdoc.document
        self.options = options
        self.plan = rdoc.plan  # the sids each citation records (:meth:`cite`)
        self.words = words  # the document's own (renderers.labels)
        self.ids = HeadingIds()
        self.direction: Direction = "ltr"  # inherited by the block being written
        self.notes_series = AuthorNotes(reading_blocks(document))
        #: citation runs after text reading against their line (:func:`cite_direction`)
        self.preceding = document_preceding(document)
        self.images = EmbeddedImages(reading_blocks(document), options, target, self.ids, words)
        self.note_refs: dict[str, list[str]] = {}  # label → anchors of its references
        self.cite_notes: list[dict[str, object]] = []  # a note style's notes, in order
        self.code = CodeBlocks(options.highlight_style)
        self.heading_ids: dict[int, str] = {}  # id(heading) → the id it was written with
        self.title = document_title(document, options)
        #: which headings the contents and the PDF outline list (a heading it leaves out is
        #: written with the ``unlisted`` class, which report.css drops from the outline)
        self.outline = body_outline(document.blocks, self.title.heading)
        self.has_math = False
        self.has_equation = False  # a formula with a number or tag at the margin
        self.in_link = False  # inside a link, the link wraps its long words, not a span
        self.dead_links = rdoc.dead_links  # ids no element has: a link to one is its text
        #: the ids of the elements this writer adds: no heading or author's anchor takes one
        #: (links to a section lead to it, as in Typst); the preview script is on every page
        self.own_ids = frozenset(
            ident for ident, made in ((NOTES_ID, bool(self.notes_series)),
                                      (CITATION_NOTES_ID, has_citation_notes(document.blocks)),
                                      (CONTENTS_ID, options.toc),
                                      (PREVIEW_SCRIPT_ID, True)) if made
        )
        for ident in self.own_ids:
            self.ids.reserve(ident)

    # ------------------------------------------------------------------ blocks

    def blocks(self, blocks: Iterable[Block], *, tight: bool = False) -> Markup:
        return Markup("\n").join(part for part in self.block_parts(blocks, tight=tight) if part)

    def block_parts(self, blocks: Iterable[Block], *, tight: bool = False) -> list[Markup]:
        """One part per block; a paragraph of anchors only before a code block or a rule is
        empty, its ids on a ``<div>`` around that block (:func:`carried_anchors`), so no empty
        line is drawn and a link to them lands on the block, whichever page it starts."""
        listed = list(blocks)
        parts: list[Markup] = []
        for block, ids in zip(listed, carried_anchors(listed), strict=True):
            if ids is None:
                parts.append(Markup(""))
                continue
            part = self.block(block, tight=tight)
            for ident in reversed([i for i in ids if i not in self.own_ids]):
                part = Markup(f'<div id="{escape(ident)}">{part}</div>')
            parts.append(part)
        return parts

    def block(self, block: Block, *, tight: bool = False) -> Markup:
        match block:
            case Heading(level, children, given_id):
                level = min(max(level, 1), 6)
                ident = self.ids.take(given_id, plain_text(children))
                self.heading_ids[id(block)] = ident
                direction = self.paragraph_dir(children)
                outline = (  # the PDF outline entry, when WeasyPrint's own would differ
                    f' data-outline="{escape(heading_text(block, self.words))}"'
                    if needs_outline_label(children) else ""
                )
                return Markup(
                    f'<h{level} id="{escape(ident)}"'
                    f'{_heading_class(block, self.outline.lists(block))} dir="{direction}"'
                    f"{outline}>{self.line(children)}</h{level}>"
                )
            case Paragraph(children):
                if tight:  # the text of its list item, in the item's direction
                    return self.inlines(children)
                return Markup(
                    f'<p{_align_class(block)} dir="{self.paragraph_dir(children)}">'
                    f"{self.line(children)}</p>"
                )
            case BulletList(items, list_tight):
                with self.directed(blocks_direction((block,))) as attr:
                    return Markup(f"<ul{attr}>\n{self.items(items, list_tight)}\n</ul>")
            case OrderedList(items, start, list_tight):
                start_attr = list_start_attributes(start)
                with self.directed(blocks_direction((block,))) as attr:
                    inner = self.items(items, list_tight)
                    return Markup(f"<ol{start_attr}{attr}>\n{inner}\n</ol>")
            case Table():
                return self.table(block)
            case CodeBlock(text, language, caption, label, number):
                code = self.code.block(text, language)
                lead = caption_label(label, number, self.words)
                if not caption and not lead:
                    return code
                reads = caption_direction(label, number, caption, self.words)
                with self.directed(reads) as attr:
                    cap = Markup(f"<figcaption{attr}>{lead}{self.inlines(caption)}</figcaption>")
                return self.code.listing(code, cap, numbered_id(label, number))
            case BlockQuote(inner):
                return Markup(f'<blockquote dir="auto">\n{self.blocks(inner)}\n</blockquote>')
            case Figure(image, caption, label, number):
                lead = caption_label(label, number, self.words)
                cap = Markup("")
                if caption or lead:
                    reads = caption_direction(label, number, caption, self.words)
                    with self.directed(reads) as attr:
                        cap = Markup(f"<figcaption{attr}>{lead}{self.inlines(caption)}"
                                     "</figcaption>")
                return Markup(f"<figure{numbered_id(label, number)}{_align_class(block)}>"
                              f"{self.image(image)}{cap}</figure>")
            case ThematicBreak():
                return Markup("<hr>")
            case RawBlock(text, _):
                return Markup(f'<pre class="raw" dir="ltr">{breakable(text)}</pre>')
            case FootnoteDef():
                return Markup("")  # rendered in the Notes list
            case _:
                raise UnsupportedNodeError(f"HTML writer: unsupported block {type(block).__name__}")

    def items(self, items: tuple[ListItem, ...], tight: bool) -> Markup:
        out: list[str] = []
        for item in items:
            with self.directed(blocks_direction(item.blocks)) as attr:
                content = self.blocks(item.blocks, tight=tight)
            if item.checked is None:
                out.append(f"<li{attr}>{content}</li>")
            else:
                state = "checked" if item.checked else "unchecked"
                out.append(
                    f'<li class="task {state}"{attr}><span class="task-box" aria-hidden="true">'
                    f"{task_box(item.checked)}</span>{content}</li>"
                )
        return Markup("\n".join(out))

    def table(self, table: Table) -> Markup:
        def row(cells: tuple[TableCell, ...], tag: str) -> str:
            parts = []
            for index, cell in enumerate(cells):
                cls = _align_attribute(table.aligns[index] if index < len(table.aligns)
                                       else "default")
                with self.directed(text_direction(plain_text(cell.children))) as attr:
                    parts.append(f"<{tag}{cls}{attr}>{self.inlines(cell.children)}</{tag}>")
            return "<tr>" + "".join(parts) + "</tr>"

        with self.directed(blocks_direction((table,))) as attr:
            parts = [f"<table{numbered_id(table.label, table.number)}{attr}>"]
            lead = caption_label(table.label, table.number, self.words)
            if table.caption or lead:
                direction = caption_direction(table.label, table.number, table.caption,
                                              self.words)
                with self.directed(direction) as cap_attr:
                    parts.append(f"<caption{cap_attr}>{lead}{self.inlines(table.caption)}"
                                 "</caption>")
            if table.header:
                parts.append(f"<thead>{row(table.header, 'th')}</thead>")
            parts.append("<tbody>")
            parts.extend(row(r, "td") for r in table.rows)
            parts.append("</tbody></table>")
        return Markup("\n".join(parts))

    # ------------------------------------------------------------------ contents

    def heading_id(self, heading: Heading) -> str:
        """The id ``heading`` was written with."""
        return self.heading_ids[id(heading)]

    # ------------------------------------------------------------------ direction

    @contextmanager
    def directed(self, direction: Direction | None) -> Iterator[str]:
        """Write a container (list, item, table, cell) whose text starts in ``direction``:
        yields its ``dir`` attribute (only when it differs from the inherited direction) and
        makes the direction inherited inside it."""
        outer = self.direction
        if direction is None or direction == outer:
            yield ""
            return
        self.direction = direction
        try:
            yield f' dir="{direction}"'
        finally:
            self.direction = outer

    def title_block(self, block: TitleBlock) -> Markup:
        """The title block under the title: a ``<header class="title-block">`` with a line
        each for the subtitle, authors and date, then the abstract's blocks under its word
        (a paragraph, not a heading: the contents and the PDF's outline list the document's own
        sections)."""
        lines = [self.classed_paragraph(kind, text) for kind, text in block.lines]
        if block.abstract:
            paragraphs = [self.classed_paragraph("abstract-title", block.abstract_heading)]
            paragraphs += [part for part in self.block_parts(block.abstract) if part]
            lines.append(Markup('<div class="abstract">\n') + Markup("\n").join(paragraphs)
                         + Markup("\n</div>"))
        return Markup('<header class="title-block">\n') + Markup("\n").join(lines) + Markup(
            "\n</header>")

    def classed_paragraph(self, kind: str, text: str) -> Markup:
        """A paragraph of plain ``text`` with the class ``kind``, in the direction it reads."""
        children = (Text(text),)
        return Markup(f'<p class="{kind}" dir="{self.paragraph_dir(children)}">'
                      f"{self.line(children)}</p>")

    def paragraph_dir(self, children: tuple[Inline, ...]) -> str:
        return paragraph_dir(text_direction(plain_text(children)), self.direction)

    def line(self, children: tuple[Inline, ...]) -> Markup:
        """The inlines of a paragraph or heading, written in the direction its text reads in
        (its container's when it has no strong character), which its citations read against
        (:func:`cite_direction`)."""
        with self.directed(text_direction(plain_text(children))):
            return self.inlines(children)

    # ------------------------------------------------------------------ inlines

    def inlines(self, nodes: Iterable[Inline]) -> Markup:
        runs = list(joined_runs(nodes))
        # runs that read against the line, numbers after Arabic letters: html/bidi.py
        shown = held_line_runs(runs, self.inline, self.direction, self.preceding)
        return Markup("").join(self.run(run) for run in shown)

    def run(self, run: tuple[Inline, ...] | HeldRun) -> Markup:
        """One inline, a citation with those joined to it, or a run of several boxes that
        reads against its line, held in a span of its direction (html/bidi.py)."""
        if isinstance(run, HeldRun):
            with self.directed(run.direction):
                held = Markup("").join(map(self.run, run.runs))
            return Markup(f'<span dir="{run.direction}">{held}</span>')
        return self.inline(run[0]) if len(run) == 1 else self.cite_run(run)

    def cite_run(self, run: tuple[Inline, ...]) -> Markup:
        """A citation and the superscripts joined to it, each its own ``sup.cite``; held
        apart from a line that reads the other way (:func:`cite_direction`) by a
        ``span.cite-run`` with its ``dir`` around them all. A long run wraps after its
        separators (:func:`cite_wraps`)."""
        cites = [node for node in run if isinstance(node, Cite)]
        wraps = cite_wraps(cites)
        marks = Markup("").join(self.cite(node, None, wraps=wraps) for node in cites)
        direction = self.cite_direction(cites)
        if direction is None:
            return marks
        return Markup(f'<span class="cite-run" dir="{direction}">{marks}</span>')

    def inline(self, node: Inline) -> Markup:
        match node:
            case Text(text):
                return self.running_text(text)
            case Emph(children):
                return Markup(f"<em>{self.inlines(children)}</em>")
            case Strong(children):
                return Markup(f"<strong>{self.inlines(children)}</strong>")
            case Strike(children):
                return Markup(f"<del>{self.inlines(children)}</del>")
            case Styled(style, children, title):
                attrs = f' title="{escape(title)}"' if title else ""
                return Markup(f"<{style}{attrs}>{self.inlines(children)}</{style}>")
            case Code(text):
                return Markup(f"<code>{self.running_text(text)}</code>")
            case Link(url, children, title):
                return self.link(url, children, title)
            case Image():
                return self.image(node)
            case LineBreak():
                return Markup("<br>\n")
            case SoftBreak():
                return Markup("\n")
            case RawInline(text, _):
                return Markup(f'<span class="raw">{breakable(text)}</span>')
            case Anchor(ident):
                if ident in self.own_ids:
                    return Markup("")
                return Markup(f'<span id="{escape(ident)}"></span>')
            case FootnoteRef(label):
                note = self.notes_series.get(label)
                if note is None:
                    return escape(unresolved_note_text(label))
                return self.note_reference(note)
            case Cite():
                return self.cite(node, self.cite_direction((node,)),
                                 wraps=cite_wraps((node,)))
            case Math():
                self.has_math = True
                self.has_equation = self.has_equation or bool(equation_mark(node))
                return math_markup(node)
            case CrossRef():
                return crossref_markup(node, self.words)
            case _:
                raise UnsupportedNodeError(f"HTML writer: unsupported inline {type(node).__name__}")

    def cite_direction(self, cites: Sequence[Cite]) -> Direction | None:
        """:func:`cite_direction` of ``cites`` in the line being written."""
        return cite_direction(cites, self.direction, self.preceding.get(cites[0].anchor))

    def cite(self, cite: Cite, direction: Direction | None, *, wraps: bool = False) -> Markup:
        """One citation, its ``dir`` ``direction`` (:func:`cite_direction`), in a run that
        ``wraps`` or not (:func:`cite_wraps`); a note style's note is listed."""
        if cite.note:
            self.cite_notes.append(self.cite_note(cite.note, cite.children, cite.anchor))
        sids = self.plan.linked_sids(cite.sids)
        if cite.note or cite.children:
            return styled_cite_markup(cite, sids, self.inlines, direction, wraps=wraps)
        return cite_markup(cite.anchor, cite.numbers, sids, joined=cite.joined,
                           direction=direction, wraps=wraps)

    def cite_note(self, note: int, children: tuple[Inline, ...], anchor: str) -> dict[str, object]:
        """A note style's note for the Citation notes list: its number, text, the citation it
        links back to, and whether it reads right to left."""
        direction = citation_note_direction(children)
        with self.directed(direction):
            body = self.inlines(children)
        return {"id": f"cnote-{note}", "number": note, "body": body, "backref": anchor,
                "rtl": direction == "rtl"}

    def running_text(self, text: str) -> Markup:
        """Running text, its long words wrappable (by the link itself inside a link)."""
        return breakable(text) if self.in_link else wrappable(text)

    def link(self, url: str, children: tuple[Inline, ...], title: str) -> Markup:
        """A link (its citations already follow it: :func:`renderers.resolve.resolve`); one to
        an id nothing has (noted by the reader) is its text, not text in the link colour that
        leads nowhere."""
        text = children
        href = safe_link(url, allow_fragment=True)
        if not href or shows_nothing(text) or link_target(url) in self.dead_links:
            return self.inlines(text)
        title_attr = f' title="{escape(title)}"' if title else ""
        # WeasyPrint links every box inside a link: a span there would double its annotations,
        # so what the link's text needs is said by attributes of the link itself.
        shown = plain_text(tuple(text))
        class_attr = ' class="long-word"' if has_long_word(shown) else ""
        if shows_url(shown):
            class_attr += ' dir="ltr"'
        outer, self.in_link = self.in_link, True
        try:
            inner = self.inlines(text)
        finally:
            self.in_link = outer
        return Markup(f'<a href="{escape(href)}"{class_attr}{title_attr}>{inner}</a>')

    def image(self, image: Image) -> Markup:
        return self.images.markup(image)

    # ------------------------------------------------------------------ author notes

    def note_reference(self, note: AuthorNote) -> Markup:
        """The superscript letter of a note; each reference gets its own anchor."""
        anchors = self.note_refs.setdefault(note.label, [])
        anchor = note.reference_anchor + (f"-{len(anchors) + 1}" if anchors else "")
        anchors.append(anchor)
        return Markup(
            f'<sup class="fnref" id="{anchor}"><a href="#{note.anchor}">{note.marker}</a></sup>'
        )

    def notes(self) -> list[dict[str, object]]:
        """The Notes list in series order (a, b, c …), each note led by its marker."""
        notes: list[dict[str, object]] = []
        for note in self.notes_series:
            mark = Markup(f'<span class="note-mark">{note.marker}.</span> ')
            first = note.blocks[0] if note.blocks else None
            if isinstance(first, Paragraph) and len(note.blocks) == 1:
                body = mark + self.line(first.children)
            else:
                with self.directed(blocks_direction(note.blocks)):
                    body = self.note_body(mark, note.blocks)
            refs = self.note_refs.get(note.label, [])
            notes.append(
                {
                    "id": note.anchor,
                    "body": body,
                    "backref": refs[0] if refs else "",
                    "rtl": blocks_direction(note.blocks) == "rtl",
                }
            )
        return notes

    def note_body(self, mark: Markup, blocks: tuple[Block, ...]) -> Markup:
        """A note of several blocks (or none): its marker starts the first paragraph, or stands
        alone before the blocks."""
        if not blocks or not isinstance(blocks[0], Paragraph):
            return mark + self.blocks(blocks)
        first = blocks[0]
        lead = mark + self.line(first.children)
        head = Markup(f'<p dir="{self.paragraph_dir(first.children)}">{lead}</p>\n')
        return head + self.blocks(blocks[1:])


def _align_attribute(align: Alignment, *more: str) -> str:
    """The ``class`` of an element aligned ``align`` (report.css's ``al-*``) that has the
    classes ``more`` too, or ""."""
    classes = [f"al-{align}", *more] if align != "default" else list(more)
    return f' class="{" ".join(classes)}"' if classes else ""


def _heading_class(heading: Heading, listed: bool) -> str:
    """A heading's ``class``: its alignment's, and ``unlisted`` (pandoc's) unless ``listed``
    in the contents and the PDF outline (:meth:`~renderers.writers.contents.Outline.lists`;
    report.css drops its bookmark)."""
    return _align_attribute(block_alignment(heading), *(() if listed else (UNLISTED,)))


def _align_class(block: Paragraph | Heading | Figure) -> str:
    """The ``class`` a paragraph, heading or figure carries for its alignment, or ""."""
    return _align_attribute(block_alignment(block))
