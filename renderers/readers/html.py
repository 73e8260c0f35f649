"""HTML → :class:`~renderers.document.Document`: sanitize first, then map elements to the model.

``<sup class="cite" data-sids="…">`` is one :class:`Cite` (its inner text ignored);
``[[S:..]]`` and bare ``[S:..]`` in text are citations too; text inside ``<pre>``/``<code>`` is
verbatim. Unknown elements contribute their children, so no text is ever lost.

A page citerender wrote (its ``generator`` meta: :func:`renderers.metadata.is_own_page`) is
read back as the report it shows: the parts its writer made from the pool and the options
(Sources, citation notes, contents, back-links, the title above the body) are not content,
author notes come back as notes, formulas as formulas, task boxes as task items. Only such a
page keeps its classes through the sanitizer: another page's ``section.sources`` is its own.
Another page's figures, tables, listings and formulas that pandoc-crossref numbered are read
labelled by their ids, and links to them whose words end in a number as references
(:func:`_labelled`, :func:`_reference`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from html.parser import HTMLParser
from typing import get_args
from urllib.parse import unquote

from citations.codemap import CODE_ELEMENTS, html_tags
from citations.tokens import scan, token_prefix_regex
from renderers.document import (
    INLINE_STYLES,
    UNLISTED,
    Alignment,
    Anchor,
    Block,
    BlockQuote,
    BulletList,
    Code,
    CodeBlock,
    CrossRef,
    CrossRefKind,
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
    ListItem,
    Math,
    OrderedList,
    Paragraph,
    Strike,
    Strong,
    Styled,
    Table,
    TableCell,
    ThematicBreak,
    inline_runs,
    iter_blocks,
)
from renderers.language import normalize_tag
from renderers.metadata import USAGE_META, html_metadata, is_own_page, with_metadata
from renderers.options import Limits
from renderers.readers.anchors import anchors_on_text, with_anchor, written_tags
from renderers.readers.context import (
    HTML_SPACE,
    TAG_ATTRIBUTES,
    InlineBuilder,
    ReadContext,
    is_cite_sup,
    link_target,
    tag_attributes,
)
from renderers.readers.crossref_rules import (
    displayed_formula,
    element_label,
    link_reference,
    without_caption_lead,
    without_text_lead,
)
from renderers.readers.html_lines import InputLines, NoteLines, OneLine
from renderers.readers.sanitize import (
    HEADINGS,
    dropped_at,
    dropped_text,
    read_link,
    safe_image_src,
    sanitize_html,
    visible_length,
)
from renderers.writers.common import TitleLine

#: Text the sanitizer may drop without a warning (scripts' fallbacks, a few stray characters).
_DROP_TOLERANCE = 40
_VOID = frozenset({"br", "img", "hr", "wbr", "col", "input", "meta", "link", "base", "source"})
_BLOCK = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "caption", "center", "dd",
        "details", "div", "dl", "dt", "figcaption", "figure", "footer", "h1", "h2", "h3", "h4",
        "h5", "h6", "header", "hgroup", "hr", "html", "li", "main", "nav", "ol", "p", "pre",
        "section", "summary", "table", "tbody", "td", "tfoot", "th", "thead", "title", "tr",
        "ul",
    }
)  # fmt: skip
#: Elements whose alignment (``align``, a kept ``text-align``) the blocks inside them take.
ALIGNED_TAGS = HEADINGS | {"p", "div", "center", "figure"}
_STYLES = frozenset(INLINE_STYLES)
_WRAPPERS: dict[str, type[Emph] | type[Strong] | type[Strike]] = {
    "em": Emph,
    "i": Emph,
    "strong": Strong,
    "b": Strong,
    "s": Strike,
    "del": Strike,
    "strike": Strike,
}
_ALIGN = re.compile(r"text-align\s*:\s*([a-z-]+)", re.IGNORECASE)
_LANGUAGE = re.compile(r"^(?:language|lang)-(\S+)$")
#: The alignment classes of the report writer (``report.css``'s ``al-*``), on its own page.
_ALIGN_CLASS = re.compile(r"^al-(left|center|right)$")
#: The classes of the parts of a page citerender wrote that its writer makes again from the
#: pool, the options and the metadata: the Sources list, a note style's notes, the contents,
#: the title block (read back as metadata: :func:`_shown_title_block`).
REBUILT_PARTS = frozenset({"sources", "citation-notes", "toc", "title-block"})
#: What the report writer adds to a line that is not the author's: the back-link arrows, a
#: note's letter before its text, a task item's box (the item says it is a task), a numbered
#: caption's "Figure 1:" (the figure is numbered again).
#: An equation's number at the margin, "(1)", is left out too (it is numbered again).
_WRITTEN_MARKS = frozenset({"backlink", "note-mark", "task-box", "caption-label", "eqno"})
#: The report writer's link to a numbered figure, table, equation or listing
#: (``numbered_anchor``: ``fig-1``).
_NUMBERED_TARGET = re.compile(r"#(fig|tbl|eq|lst)-([1-9][0-9]{0,8})")
#: An equation's number as the report writer shows it at the margin (a tag shows other text).
_EQUATION_NUMBER = re.compile(r"\(([1-9][0-9]{0,8})\)")
#: Where a ``<meta>`` tag may start (the text's, before the scanner says which are tags).
_META_START = re.compile(r"<meta", re.IGNORECASE)


@dataclass
class _Element:
    """A node of the sanitized HTML tree; ``blocky`` when it or a descendant is block-level."""

    tag: str
    attrs: dict[str, str]
    children: list[_Element | str] = field(default_factory=list)
    blocky: bool = False


#: The element standing for a run of markdown blocks between HTML blocks (see
#: :func:`read_html_blocks`); its ``run`` attribute is the run's index.
_MARKDOWN = "#markdown"


class _TreeBuilder(HTMLParser):
    """Builds an :class:`_Element` tree from (already sanitized, well-formed) HTML; text that
    ``marker`` matches becomes a :data:`_MARKDOWN` element."""

    def __init__(self, marker: re.Pattern[str] | None = None) -> None:
        super().__init__(convert_charrefs=True)
        self.root = _Element("#root", {})
        self._stack = [self.root]
        self._open: Counter[str] = Counter()
        self._marker = marker

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = _Element(tag, {name: value or "" for name, value in attrs})
        element.blocky = tag in _BLOCK
        parent = self._stack[-1]
        parent.children.append(element)
        parent.blocky = parent.blocky or element.blocky
        if tag not in _VOID:
            self._stack.append(element)
            self._open[tag] += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self._close_top()

    def handle_endtag(self, tag: str) -> None:
        if not self._open[tag]:
            return
        while self._stack[-1].tag != tag:
            self._close_top()
        self._close_top()

    def handle_data(self, data: str) -> None:
        parent = self._stack[-1]
        if self._marker is None:
            parent.children.append(data)
            return
        for index, piece in enumerate(self._marker.split(data)):
            if index % 2:
                parent.children.append(_Element(_MARKDOWN, {"run": piece}, blocky=True))
                parent.blocky = True
            elif piece:
                parent.children.append(piece)

    def _close_top(self) -> None:
        element = self._stack.pop()
        self._open[element.tag] -= 1
        self._stack[-1].blocky = self._stack[-1].blocky or element.blocky

    def finish(self) -> _Element:
        self.close()
        while len(self._stack) > 1:
            self._close_top()
        return self.root


def read_html(
    html: str, *, dialects: frozenset[str] = frozenset(), limits: Limits | None = None
) -> Document:
    """Read (untrusted) HTML into a :class:`Document`; raises ``LimitError`` past a limit."""
    context = ReadContext("HTML input", limits or Limits())
    context.check_size(html)
    lines = InputLines(html, frozenset(dialects))
    metas = list(_written_metas(html))
    own = is_own_page(metas)
    root = _sanitized_tree(html, context, _TreeBuilder(), lines, keep_classes=own)
    targets, labels = _places(root)
    reader = _HtmlReader(context, frozenset(dialects), targets, lines, own=own, labels=labels)
    blocks = reader.blocks(root.children, depth=0)
    reader.note_split_tokens(lines)
    if reader.sourceless:
        _report_refused_images(html, reader.sourceless[0], context, lines)
    if own:
        _read_usage(metas, context)
    metadata = html_metadata(metas, declared_language(html), context, own=own)
    document = with_metadata(context.document(blocks), metadata)
    if not own:
        return document
    shown = reader.title_block
    if shown is None:
        return replace(document, own_page=True)
    return replace(document, own_page=True, shows_metadata=True, subtitle=shown.subtitle,
                   date=shown.date or document.date, abstract=shown.abstract)


def read_html_blocks(
    pieces: Sequence[str],
    runs: Sequence[Sequence[Block]],
    context: ReadContext,
    *,
    dialects: frozenset[str],
    depth: int,
    line: int,
    targets: frozenset[str] = frozenset(),
) -> list[Block]:
    """Blocks of the HTML blocks of markdown, read as HTML input is read (sanitized, then
    mapped), with the markdown between them in its places: ``runs[n]`` (already read) stands
    between ``pieces[n]`` and ``pieces[n + 1]`` of the HTML. ``line``: where the HTML starts,
    for warnings. ``targets``: the ids the whole markdown's links lead to (those of its other
    HTML blocks too), so an id here is a place for a link anywhere in the document.

    Each run is marked in the HTML by its number between two characters found nowhere in the
    pieces (private-use ones: the author's text cannot forge a marker). A run whose marker the
    parser moved out of sight follows the others: markdown is never lost.
    """
    used = set().union(*map(set, pieces))
    fence = next((chr(c) for c in range(0xE000, 0xF900) if chr(c) not in used), "\uf8ff")
    marked = "".join(
        piece + (f"{fence}{n}{fence}" if n < len(runs) else "") for n, piece in enumerate(pieces)
    )
    marker = re.compile(f"{fence}(\\d+){fence}") if runs else None
    lines = OneLine(line, marked, dialects)
    root = _sanitized_tree(marked, context, _TreeBuilder(marker), lines)
    found, labels = _places(root)
    reader = _HtmlReader(context, dialects, found | targets, lines, runs, labels=labels)
    blocks = reader.blocks(root.children, depth=depth)
    reader.note_split_tokens(lines)
    for index, run in enumerate(runs):
        if index not in reader.placed:
            blocks.extend(run)
    if reader.sourceless:
        _report_refused_images(marked, reader.sourceless[0], context, lines)
    return blocks


def _sanitized_tree(
    html: str, context: ReadContext, builder: _TreeBuilder, lines: NoteLines,
    *, keep_classes: bool = False,
) -> _Element:
    """``html`` sanitized and parsed into a tree, after the nesting check; warns, at the line
    of the first element that took text with it, when the sanitizer removed much of the text.
    ``keep_classes``: for a page citerender wrote (see :func:`sanitize_html`)."""
    _check_raw_nesting(html, context)
    clean = sanitize_html(html, keep_classes=keep_classes)
    # the MathML of citerender's formulas goes (each is read back from its picture's alt text)
    lost = dropped_text(_without_mathml(html) if keep_classes else html, clean)
    if lost > max(_DROP_TOLERANCE, visible_length(html) // 20):
        where = dropped_at(html)
        context.warn(
            lines.at(where) if where >= 0 else 0,
            f"the HTML sanitizer removed {lost} characters of text (markup that swallows what "
            "follows it, such as an unclosed <style> inside <math> or <svg>); the rendered "
            "document is missing that text",
        )
    builder.feed(clean)
    return builder.finish()


@dataclass(frozen=True)
class _ShownTitleBlock:
    """What the title block of a page citerender wrote shows, read back as the document's
    metadata (its authors are the page's ``<meta name="author">`` tags)."""

    subtitle: str
    date: str
    abstract: tuple[Block, ...]


def _line_after(children: tuple[Inline, ...]) -> tuple[tuple[Inline, ...], bool]:
    """``children`` of a wrapper without the line break a block inside it ended with, and
    whether there was one: it goes after the wrapper, which is not to end in a break."""
    if children and isinstance(children[-1], LineBreak):
        return children[:-1], True
    return children, False


def _classes(node: _Element) -> list[str]:
    """The classes of ``node`` (a page citerender wrote keeps them: see the module's doc)."""
    return node.attrs.get("class", "").split()


def _shown_text(node: _Element) -> str:
    """The text of ``node`` as a browser shows it on one line (white space collapsed)."""
    return HTML_SPACE.sub(" ", _text_of(node)).strip()


def _shown_title_block(
    header: _Element, read: Callable[[Sequence[_Element | str]], list[Block]]
) -> _ShownTitleBlock:
    """The parts of a ``<header class="title-block">`` (the HTML writer's ``title_block``):
    its subtitle and date lines and the abstract's blocks (not its heading word), which
    ``read`` reads as the body is read (their citations are citations again)."""

    def line(kind: str) -> str:
        return next((_shown_text(child) for child in header.children
                     if isinstance(child, _Element) and child.tag == "p"
                     and kind in _classes(child)), "")

    shown = [
        node
        for block in header.children
        if isinstance(block, _Element) and "abstract" in _classes(block)
        for node in block.children
        if not (isinstance(node, _Element) and "abstract-title" in _classes(node))
    ]
    return _ShownTitleBlock(
        subtitle=line("subtitle"),
        date=line("date"),
        abstract=tuple(read(shown)) if shown else (),
    )


def is_rebuilt_part(tag: str, classes: Iterable[str]) -> bool:
    """Whether an element of a page citerender wrote is a part its writer makes again (left
    out by the reader, and so by the audit's coverage): a ``<section>`` or ``<nav>`` of
    :data:`REBUILT_PARTS`, the ``<header class="title-block">``."""
    named = REBUILT_PARTS.intersection(classes)
    return bool(named) if tag in ("section", "nav") else tag == "header" and "title-block" in named


def rebuilt_parts(html: str) -> list[tuple[int, int]]:
    """Where a page citerender wrote has the parts its writer makes again
    (:data:`REBUILT_PARTS`), as ``[start, end)`` offsets of their markup as written: the audit
    leaves them out of its coverage, as the reader leaves them out of the document. The
    title block's abstract is read back (:func:`_shown_title_block`): its blocks are the
    author's, its heading word is the writer's."""
    spans: list[tuple[int, int]] = []
    opened, name, depth = -1, "", 0
    for tag in html_tags(html):
        if opened < 0 and tag.kind == "start" and tag.name in ("section", "nav", "header"):
            if is_rebuilt_part(tag.name, _tag_classes(html, tag.start, tag.name)):
                opened, name, depth = tag.start, tag.name, 1
        elif opened >= 0 and tag.name == name and tag.kind != "empty":
            depth += 1 if tag.kind == "start" else -1
            if not depth:
                end = html.find(">", tag.start)
                span = (opened, end + 1 if end >= 0 else len(html))
                spans += _not_read_back(html, span) if name == "header" else [span]
                opened = -1
    return spans


def _tag_classes(html: str, start: int, name: str) -> list[str]:
    """The classes of the start tag ``<name …>`` at ``start``."""
    written = TAG_ATTRIBUTES.match(html, start + 1 + len(name))
    return tag_attributes(written.group(1)).get("class", "").split() if written else []


def _not_read_back(html: str, span: tuple[int, int]) -> list[tuple[int, int]]:
    """The parts of the title block at ``span`` the reader does not read back: all but the
    content of its (first) ``.abstract`` element, whose ``.abstract-title`` lines are left out
    too. Elements are matched by name and depth, as the writer writes them."""
    start, end = span
    part = html[start:end]
    opened: dict[str, list[tuple[int, list[str]]]] = {}
    found: list[tuple[int, int, int, list[str]]] = []  # start, after its start tag, end tag
    for tag in html_tags(part):
        if tag.kind == "start":
            opened.setdefault(tag.name, []).append((tag.start, _tag_classes(part, tag.start,
                                                                            tag.name)))
        elif tag.kind == "end" and opened.get(tag.name):
            at, classes = opened[tag.name].pop()
            if {"abstract", "abstract-title"}.intersection(classes):
                found.append((at, part.find(">", at) + 1, tag.start, classes))
    abstract = min((f for f in found if "abstract" in f[3]), default=None)
    if abstract is None:
        return [span]
    _, inside, closing, _ = abstract
    titles = [(at, part.find(">", close) + 1) for at, _, close, classes in sorted(found)
              if "abstract-title" in classes and inside <= at < closing]
    return [(start + a, start + b) for a, b in [(0, inside), *titles, (closing, len(part))]]


def _read_usage(metas: Sequence[tuple[str, str]], context: ReadContext) -> None:
    """The USAGE sids a page citerender wrote records in its head (:data:`USAGE_META`)."""
    for name, content in metas:
        if name.strip().lower() == USAGE_META and content.strip():
            sids = context.sid_spec(content, 0, content)
            context.add_usage(sids or ())


def _without_mathml(html: str) -> str:
    """``html`` without its ``<math>…</math>`` elements as the report writer writes them
    (lower case, never nested); linear, an unclosed one ends the search."""
    parts: list[str] = []
    position = 0
    while (start := html.find("<math", position)) >= 0:
        end = html.find("</math>", start)
        if end < 0:
            break
        parts.append(html[position:start])
        position = end + len("</math>")
    parts.append(html[position:])
    return "".join(parts)


def declared_language(html: str) -> str:
    """The language the input's ``<html lang>`` declares, as a canonical BCP 47 tag, or "" when
    it declares none or one that is not a well-formed tag (the first ``<html>`` tag decides,
    as the HTML parser keeps only its attributes)."""
    first = next(written_tags(html, frozenset({"html"})), None)
    declared = first[1].get("lang", "").strip() if first is not None else ""
    try:
        return normalize_tag(declared) if declared else ""
    except ValueError:
        return ""


def _written_metas(html: str) -> Iterator[tuple[str, str]]:
    """``(name, content)`` of each ``<meta>`` tag of ``html`` as written. The scan ends at the
    last ``<meta`` of the text: metadata sits in the head, and a long body after it is not
    scanned (2 MB took 0.16 s)."""
    last = max((m.start() for m in _META_START.finditer(html)), default=-1)
    for _, attributes in written_tags(html, frozenset({"meta"}), until=last):
        yield attributes.get("name", ""), attributes.get("content", "")


def _report_refused_images(
    html: str, first: Image, context: ReadContext, lines: NoteLines
) -> None:
    """Name each image the sanitizer left without a source, at its line. nh3 drops a src of a
    refused scheme before any Python filter sees it, so the names come from the input; if its
    markup hides them from that scan, the first such image is still reported, by its alt text."""
    for src, alt, start in _written_images(html):
        if not safe_image_src(src):
            context.refuse_image(lines.at(start), src, alt)
    if not context.refused_images:
        context.refuse_image(lines.unplaced, "", first.alt)


def _written_images(html: str) -> Iterator[tuple[str, str, int]]:
    """``(src, alt, offset of its "<")`` of every ``<img>`` tag of ``html``."""
    for tag, attributes in written_tags(html, frozenset({"img"})):
        yield attributes.get("src", ""), attributes.get("alt", ""), tag.start




#: Containers that nest when left open (the HTML parser never closes them implicitly).
_NESTING_TAG = re.compile(
    r"<(/?)(ul|ol|blockquote|div|section|article|aside|details|figure)\b[^>]*>", re.IGNORECASE
)
#: Raw nesting allowed before sanitizing, as a multiple of ``limits.max_nesting``: generous, yet
#: it stops 10,000-deep input before the sanitizer spends seconds on it.
RAW_NESTING_FACTOR = 8


def _check_raw_nesting(html: str, context: ReadContext) -> None:
    """Fail fast on absurdly deep containers, before the (superlinear) sanitizer sees them."""
    ceiling = RAW_NESTING_FACTOR * context.limits.max_nesting
    depth = 0
    # No tag ends after the last ">": without the bound, each unclosed "<div " would scan to
    # the end of the text (200 KB of them took 5.2 s).
    for match in _NESTING_TAG.finditer(html, 0, html.rfind(">") + 1):
        depth = max(depth - 1, 0) if match.group(1) else depth + 1
        if depth > ceiling:
            context.check_depth(context.limits.max_nesting + 1)


def _places(root: _Element) -> tuple[frozenset[str], dict[str, str]]:
    """The ids the document's own links lead to (``href="#fn1"`` → ``fn1``), and the elements
    their ids label (id → label: :func:`_labelled`), iteratively. A link read as a reference
    to one (:func:`_reference`) leads to no id: the element is numbered and the reference
    leads to its number's anchor."""
    links: list[_Element] = []
    labels: dict[str, str] = {}
    pending: list[_Element | str] = [root]
    while pending:
        current = pending.pop()
        if isinstance(current, str):
            continue
        if current.tag == "a":
            links.append(current)
        elif current.tag in _LABELLED_TAGS and (found := _labelled(current)) is not None:
            labels.setdefault(*found)
        pending.extend(current.children)
    targets = {
        target for link in links if (target := link_target(link.attrs.get("href", "")))
        and _reference(link, labels) is None
    }
    return frozenset(targets), labels


def _reference(link: _Element, labels: Mapping[str, str]) -> CrossRef | None:
    """The reference an ``<a>`` to a labelled element is (:func:`link_reference`: its words
    end in a number), else None."""
    label = labels.get(link_target(link.attrs.get("href", ""))) if labels else None
    return link_reference(label, _shown_text(link)) if label else None


#: The elements an id may label (:func:`_labelled`).
_LABELLED_TAGS = frozenset({"div", "figure", "table", "span"})


def _labelled(element: _Element) -> tuple[str, str] | None:
    """The id and label of an element pandoc-crossref numbered, as its id (else its content's:
    pandoc 2 put a figure's on its image) names it: a listing (:func:`_listing_parts`), a
    figure (:func:`_figure_parts`), a table (``<table id="tbl:a">``, or pandoc 3's ``<div
    id="tbl:a">`` around it), a displayed formula (``<span id="eq:a">`` around its TeX:
    :func:`_formula_of`); None for any other element, and for one whose id is no label of its
    kind."""
    ident = element.attrs.get("id", "")
    tag = element.tag
    if tag in ("div", "figure") and (listing := _listing_parts(element)) is not None:
        return _with_label(ident, "lst") or _with_label(listing[1].attrs.get("id", ""), "lst")
    if tag in ("div", "figure") and (figure := _figure_parts(element)) is not None:
        return _with_label(ident, "fig") or _with_label(figure[1].attrs.get("id", ""), "fig")
    if tag == "table" or (tag == "div" and _wrapped_table(element) is not None):
        return _with_label(ident, "tbl")
    if tag == "span" and element_label(ident, "eq") and _formula_of(element) is not None:
        return _with_label(ident, "eq")
    return None


def _with_label(ident: str, kind: CrossRefKind) -> tuple[str, str] | None:
    """``ident`` and the label it gives an element of ``kind``, or None."""
    label = element_label(ident, kind)
    return (ident, label) if label else None


def _listing_parts(element: _Element) -> tuple[_Element | None, _Element] | None:
    """The caption (None: none) and the ``<pre>`` of a code listing, as pandoc and
    pandoc-crossref write one (:func:`_captioned`; a ``<div>`` is pandoc-crossref's
    ``div.listing``). The code is a ``<pre>`` or a ``<div>`` holding one alone (pandoc's
    ``div.sourceCode``)."""
    return _captioned(element, _code_of, "lst")


def _figure_parts(element: _Element) -> tuple[_Element | None, _Element] | None:
    """The caption (None: none) and the ``<img>`` of a figure of one image
    (:func:`_captioned`; a ``<div>`` is pandoc 2's ``div.figure``, its caption a
    ``p.caption``)."""
    return _captioned(element, _image_of, "fig")


def _captioned(
    element: _Element, content: Callable[[_Element], _Element | None], kind: CrossRefKind
) -> tuple[_Element | None, _Element] | None:
    """The caption (None: none) and content of a captioned element, or None for any other:
    a ``<figure>`` of the content and ``<figcaption>`` (the first captions it), or a ``<div>``
    labelled ``kind`` by its id or its content's of the content and at most one ``<p>``,
    before or after it. ``content``: the content an element is (None: no such content)."""
    parts = [c for c in element.children if isinstance(c, _Element)]
    if element.tag == "div" and not any(
        element_label(node.attrs.get("id", ""), kind) for node in (element, *parts)
    ):  # the usual division, its children not looked at further
        return None
    if _holds_text(element):
        return None
    caption_tag = "figcaption" if element.tag == "figure" else "p"
    captions = [c for c in parts if c.tag == caption_tag]
    shown = [c for c in parts if c.tag != caption_tag]
    found = content(shown[0]) if len(shown) == 1 else None
    if found is None:
        return None
    if element.tag == "div" and (len(captions) > 1 or not (
        element_label(element.attrs.get("id", ""), kind)
        or element_label(found.attrs.get("id", ""), kind)
    )):
        return None
    return (captions[0] if captions else None), found


def _image_of(element: _Element) -> _Element | None:
    """``element`` when it is an ``<img>``, else None."""
    return element if element.tag == "img" else None


def _wrapped_table(element: _Element) -> _Element | None:
    """The ``<table>`` a ``<div>`` holds alone (pandoc 3's wrapper of a labelled table)."""
    inner = [c for c in element.children if isinstance(c, _Element)]
    if len(inner) == 1 and inner[0].tag == "table" and not _holds_text(element):
        return inner[0]
    return None


def _formula_of(element: _Element) -> str | None:
    """The TeX of the displayed formula an element holds, as pandoc writes one for MathJax
    (:func:`displayed_formula`), else None."""
    return displayed_formula(_text_of(element))


def _code_of(element: _Element) -> _Element | None:
    """``element`` when it is a ``<pre>``, the ``<pre>`` a ``<div>`` holds alone, else None."""
    if element.tag == "pre":
        return element
    inner = [c for c in element.children if isinstance(c, _Element)]
    if element.tag == "div" and len(inner) == 1 and inner[0].tag == "pre" \
            and not _holds_text(element):
        return inner[0]
    return None


def _holds_text(element: _Element) -> bool:
    """Whether text stands directly in ``element`` (white space aside)."""
    return any(isinstance(c, str) and c.strip() for c in element.children)


def _aligned(blocks: list[Block], align: Alignment) -> list[Block]:
    """``blocks`` inside an element aligned ``align``: the paragraphs, headings and figures
    that ask for no alignment of their own take it, in block quotes too, as they inherit
    ``text-align`` in a browser. Lists and tables keep theirs (the model aligns table columns,
    not list items)."""
    out: list[Block] = []
    for block in blocks:
        if isinstance(block, Paragraph | Heading | Figure) and block.align == "default":
            block = replace(block, align=align)
        elif isinstance(block, BlockQuote):
            block = BlockQuote(tuple(_aligned(list(block.blocks), align)))
        out.append(block)
    return out


#: What the report writer puts directly in the title block: its lines (by class) and the
#: abstract; in the other parts it makes again, their heading and lists.
_TITLE_BLOCK_CHILDREN = {"p": frozenset(get_args(TitleLine)), "div": frozenset({"abstract"})}
_PART_CHILDREN = frozenset({*HEADINGS, "ol", "ul"})


def _holds_other_text(element: _Element) -> bool:
    """Whether a part the report writer makes again holds what the writer never puts there
    (text, a paragraph): the author's, which ran into the part (left unclosed, say)."""
    for child in element.children:
        if isinstance(child, str):
            if child.strip():
                return True
        elif element.tag == "header":
            classes = _TITLE_BLOCK_CHILDREN.get(child.tag, frozenset())
            if not classes.intersection(_classes(child)):
                return True
        elif child.tag not in _PART_CHILDREN:
            return True
    return False


def _text_of(node: _Element | str) -> str:
    """All text below ``node``, verbatim (iterative: no recursion on deep trees)."""
    parts: list[str] = []
    pending: list[_Element | str] = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, str):
            parts.append(current)
        else:
            if current.tag == "br":
                parts.append("\n")
            pending.extend(reversed(current.children))
    return "".join(parts)


class _HtmlReader:
    """Maps the sanitized element tree to model blocks and inlines."""

    def __init__(
        self,
        context: ReadContext,
        dialects: frozenset[str],
        targets: frozenset[str],
        lines: NoteLines,
        runs: Sequence[Sequence[Block]] = (),
        *,
        own: bool = False,
        labels: Mapping[str, str] | None = None,
    ) -> None:
        self.context = context
        self.labels = labels or {}  # the ids that label elements, and their labels (_places)
        self.own = own  # a page citerender wrote, its classes kept (see the module's doc)
        self.numbered: dict[CrossRefKind, int] = {"fig": 0, "tbl": 0, "lst": 0}  # on such a page
        self.title_block: _ShownTitleBlock | None = None  # on such a page
        self.dialects = dialects
        self.targets = targets  # ids the document's links lead to
        self.lines = lines  # where notes point
        self.runs = runs  # markdown read between HTML blocks (see read_html_blocks)
        self.placed: set[int] = set()  # the runs placed
        self._after_space = True  # HTML white space collapsing across elements of one block
        self.sourceless: list[Image] = []  # images the sanitizer left without a source
        #: Whether some text ended where a token may begin: markup may split one there
        #: (``[[S:<span>2</span>]]``), which :meth:`note_split_tokens` then looks for.
        self.maybe_split = False

    # ------------------------------------------------ blocks

    def blocks(self, nodes: Sequence[_Element | str], *, depth: int) -> list[Block]:
        """Blocks from mixed content: runs of inline content become paragraphs."""
        self.context.check_depth(depth)
        out: list[Block] = []
        run = InlineBuilder()
        self._after_space = True
        for node in nodes:
            if isinstance(node, _Element) and (node.blocky or node.tag == "title"):
                self._flush(run, out)
                run = InlineBuilder()
                out.extend(self.block(node, depth=depth))
                self._after_space = True
            else:
                self.inline(node, run, depth=depth)
        self._flush(run, out)
        return anchors_on_text(out)

    def _flush(self, run: InlineBuilder, out: list[Block]) -> None:
        children = run.result()
        if not children:
            return
        if len(children) == 1 and isinstance(children[0], Image):
            out.append(Figure(children[0]))
        else:
            out.append(Paragraph(children))

    def anchor(self, element: _Element) -> Anchor | None:
        """An :class:`Anchor` for ``element``'s id when the document links to it, the element
        is not a heading (a heading keeps its id itself) and nothing has the id yet."""
        ident = element.attrs.get("id", "")
        if (
            ident in self.targets
            and element.tag not in HEADINGS
            and self.context.ids.claim(ident)
        ):
            return Anchor(ident)
        return None

    def block(self, element: _Element, *, depth: int) -> list[Block]:
        """The blocks of one block-level element, led by its anchor when it has one (not a
        part citerender's writer makes again: its id is the writer's)."""
        if self.own and (written := self.written_part(element, depth=depth)) is not None:
            return written
        anchor = self.anchor(element)
        blocks = self._block(element, depth=depth)
        align = "center" if element.tag == "center" else self.alignment(element.attrs)
        if align != "default" and element.tag in ALIGNED_TAGS:
            blocks = _aligned(blocks, align)
        if anchor is None:
            return blocks
        placed = with_anchor(blocks, anchor)  # else a place of its own (anchors_on_text)
        return [Paragraph((anchor,)), *blocks] if placed is blocks else placed

    def alignment(self, attrs: Mapping[str, str]) -> Alignment:
        """:func:`html_alignment`, else on a page citerender wrote the report's ``al-*``
        class."""
        found = html_alignment(attrs)
        if found != "default" or not self.own:
            return found
        for name in attrs.get("class", "").split():
            if match := _ALIGN_CLASS.match(name):
                return match.group(1)  # type: ignore[return-value]
        return "default"

    def written_part(self, element: _Element, *, depth: int) -> list[Block] | None:
        """On a page citerender wrote, the blocks of a part its writer made (None for the
        author's content): the title above the body is the title; the Sources list, a note
        style's notes and the contents are made again from the pool and the options; the
        author notes are notes again."""
        classes = set(_classes(element))
        if element.tag == "title":  # the untitled page's word too: the added h1 tells
            return []
        if element.tag == "h1" and "doc-title" in classes:
            self.context.title = _shown_text(element)
            return []
        if element.tag == "header" and "title-block" in classes:
            self.title_block = _shown_title_block(
                element, lambda nodes: self.blocks(nodes, depth=depth + 2))
        if is_rebuilt_part(element.tag, classes):
            if _holds_other_text(element):
                named = " ".join(sorted(classes & REBUILT_PARTS))
                self.context.warn(0, f'<{element.tag} class="{named}"> holds text citerender '
                                  "never writes there, left out with the part, which it makes "
                                  "again: is the part closed before that text?")
            return []
        if element.tag == "section" and "notes" in classes:
            return self.author_notes(element, depth=depth)
        return None

    def author_notes(self, section: _Element, *, depth: int) -> list[Block]:
        """The notes of the report's Notes section, in their series order: note N is the one
        ``href="#fn-N"`` references (the writer's ``AuthorNote.anchor``; the sanitizer drops
        the items' own ids, which are the writer's)."""
        items = [
            item
            for listed in section.children if isinstance(listed, _Element) and listed.tag == "ol"
            for item in listed.children if isinstance(item, _Element) and item.tag == "li"
        ]
        return [
            FootnoteDef(f"fn-{number}", tuple(self.blocks(item.children, depth=depth + 1)))
            for number, item in enumerate(items, start=1)
        ]

    def written_inline(self, node: _Element, out: InlineBuilder) -> bool:
        """On a page citerender wrote, an inline its writer made: a mark it added (left
        out), a note's reference or a formula (read back as one). False for any other."""
        classes = set(_classes(node))
        if classes & _WRITTEN_MARKS:
            return True
        if node.tag == "sup" and "fnref" in classes:
            links = [c for c in node.children if isinstance(c, _Element) and c.tag == "a"]
            target = links[0].attrs.get("href", "") if links else ""
            if not target.startswith("#"):
                return False
            out.add(FootnoteRef(unquote(target[1:])))
            self._after_space = False
            return True
        if node.tag == "a" and "xref" in classes:
            numbered = _NUMBERED_TARGET.fullmatch(node.attrs.get("href", ""))
            if numbered is None:
                return False
            out.add(CrossRef(f"{numbered.group(1)}:{numbered.group(2)}"))
            self._after_space = False
            return True
        if node.tag == "span" and "equation" in classes:  # a formula and its number
            spans = [c for c in node.children if isinstance(c, _Element) and c.tag == "span"]
            shown = [c for c in spans if "math" in _classes(c)]
            marks = [_shown_text(c) for c in spans if "eqno" in _classes(c)]
            number = _EQUATION_NUMBER.fullmatch(marks[0]) if marks else None
            return bool(shown) and self.formula(
                shown[0], out, f"eq:{number.group(1)}" if number else "")
        if node.tag == "span" and "math" in classes:
            return self.formula(node, out)
        return False

    def formula(self, node: _Element, out: InlineBuilder, label: str = "") -> bool:
        """A formula the writer wrote (its TeX is its picture's alt text), ``label`` the
        numbered equation's (``eq:1``, matching the references read back); False when it has
        no TeX."""
        pictures = [c for c in node.children if isinstance(c, _Element) and c.tag == "img"]
        tex = pictures[0].attrs.get("alt", "") if pictures else ""
        if not tex:
            return False
        self.context.count_formula()
        out.add(Math(tex, display="display" in _classes(node), label=label))
        self._after_space = False
        return True

    def _block(self, element: _Element, *, depth: int) -> list[Block]:
        tag = element.tag
        if tag == _MARKDOWN:
            return list(self._run(element))
        if tag == "title":
            if not self.context.title:
                self.context.title = _shown_text(element)
            return []
        if tag in HEADINGS:
            unlisted = UNLISTED in element.attrs.get("class", "").split()
            return [self.context.heading(int(tag[1]), self.inlines(element, depth=depth),
                                         given_id=element.attrs.get("id", ""),
                                         listed=not unlisted,
                                         line=lambda: self.lines.heading(element.attrs["id"]))]
        if tag == "p":
            run = InlineBuilder()
            self._after_space = True
            self.inline_children(element, run, depth=depth)
            out: list[Block] = []
            self._flush(run, out)
            return out
        if tag in ("ul", "ol"):
            return self.list_(element, depth=depth)
        if tag == "blockquote":
            return [BlockQuote(tuple(self.blocks(element.children, depth=depth + 1)))]
        if tag == "pre":
            return [self.code_block(element)]
        if tag == "hr":
            return [ThematicBreak()]
        if tag == "table":
            return [self.table(element, depth=depth)]
        if tag in ("figure", "div") and (listing := _listing_parts(element)) is not None:
            return [self.listing(element, *listing, depth=depth)]
        if tag in ("figure", "div") and (figure := _figure_parts(element)) is not None:
            return [self.figure(element, *figure, depth=depth)]
        if tag == "div" and (table := _wrapped_table(element)) is not None and (
            label := self.given_label(element)
        ):
            return [self.table(table, depth=depth, label=label)]
        return self.blocks(element.children, depth=depth + 1)

    def list_(self, element: _Element, *, depth: int) -> list[Block]:
        """The list; an ordered list whose item sets its number (``<li value="5">``) goes on
        as a new list from that number, the model's way to say it (the PDF of the author's
        HTML numbers that item 5 too).

        Text standing in the list outside any ``<li>`` (``<ul>Intro [[S:3]]<li>…``) is read as
        text, its citations cited, where a browser shows it without a marker: before the first
        item it is a paragraph before the list, after an item it goes on that item."""
        items: list[ListItem] = []
        restarts: dict[int, int] = {}  # item index → its number
        tight = True
        leading: list[Block] = []
        stray: list[_Element | str] = []

        def place_stray() -> None:
            if not any(isinstance(node, _Element) or node.strip() for node in stray):
                stray.clear()
                return
            blocks = self.blocks(stray, depth=depth + 1)
            stray.clear()
            if items:
                items[-1] = replace(items[-1], blocks=(*items[-1].blocks, *blocks))
            else:
                leading.extend(blocks)

        for child in element.children:
            if isinstance(child, str) or not (child.blocky or child.tag == "title"):
                stray.append(child)
                continue
            place_stray()
            content = child.children if child.tag == "li" else [child]
            anchor = self.anchor(child) if child.tag == "li" else None
            blocks = self.blocks(content, depth=depth + 1)
            if anchor is not None:
                blocks = with_anchor(blocks, anchor) if blocks else [Paragraph((anchor,))]
            tight = tight and not any(isinstance(c, _Element) and c.tag == "p" for c in content)
            value = child.attrs.get("value", "").strip() if child.tag == "li" else ""
            if re.fullmatch(r"-?\d{1,9}", value):
                restarts[len(items)] = int(value)
            items.append(ListItem(tuple(blocks), self.task_state(child)))
        place_stray()
        if element.tag != "ol":
            return [*leading, BulletList(tuple(items), tight=tight)]
        start = element.attrs.get("start", "1").strip()
        restarts.setdefault(0, int(start) if re.fullmatch(r"-?\d{1,9}", start) else 1)
        firsts = sorted(restarts)
        return [*leading, *[
            OrderedList(tuple(items[first:end]), start=restarts[first], tight=tight)
            for first, end in zip(firsts, [*firsts[1:], len(items)], strict=True)
            if items[first:end] or first == 0
        ]]

    def numbered_label(self, kind: CrossRefKind, caption: _Element | None) -> str:
        """On a page citerender wrote, the label of a figure, table or listing whose caption
        the writer numbered ("Figure 1:"): ``fig:N`` for the Nth, the number the
        cross-reference pass gives it again and the one the writer's references to it name
        (see :meth:`written_inline`); "" for any other."""
        if not self.own or caption is None or not any(
            isinstance(c, _Element) and "caption-label" in _classes(c)
            for c in caption.children
        ):
            return ""
        self.numbered[kind] += 1
        return f"{kind}:{self.numbered[kind]}"

    def task_state(self, item: _Element) -> bool | None:
        """A task item's state on a page citerender wrote (``li.task.checked``), else None."""
        classes = _classes(item) if self.own and item.tag == "li" else []
        return "checked" in classes if "task" in classes else None

    def code_block(self, element: _Element) -> CodeBlock:
        """A ``<pre>``'s code, its language named by a ``language-x`` (``lang-x``) class of
        it or its ``<code>``, or as pandoc names a highlighted one: ``sourceCode x``."""
        language = ""
        candidates = [element] + [c for c in element.children if isinstance(c, _Element)]
        for candidate in candidates:
            classes = _classes(candidate)
            for name in classes:
                match = _LANGUAGE.match(name)
                if match and not language:
                    language = match.group(1)
            if "sourceCode" in classes and not language:
                language = next((name for name in classes if name != "sourceCode"), "")
        text = _text_of(element)
        text = text[1:] if text.startswith("\n") else text
        return CodeBlock(text[:-1] if text.endswith("\n") else text, language)

    def table(self, element: _Element, *, depth: int, label: str = "") -> Table:
        """A table; ``label``: the one its wrapper's id gives it (pandoc 3's ``<div
        id="tbl:a">``), else its own id's (:meth:`captioned`)."""
        rows: list[tuple[list[TableCell], list[Alignment], bool]] = []
        caption: tuple[Inline, ...] = ()
        given = label or self.given_label(element)
        label = given
        width = 0
        spans: dict[int, int] = {}  # column → rows below that a cell above still covers
        columns = _widest_row(element)
        pending: list[_Element | str] = list(element.children)
        while pending:
            node = pending.pop(0)
            if not isinstance(node, _Element):
                continue
            if node.tag == "caption":
                caption, label = self.captioned(node, "tbl", given, depth=depth)
            elif node.tag in ("thead", "tbody", "tfoot"):
                pending[:0] = node.children
            elif node.tag == "tr":
                rows.append(self.row(node, spans, columns, depth=depth))
                self.context.check_rows(len(rows))
                width = max(width, len(rows[-1][0]))
                self.context.check_cells(len(rows), width)
        padded = [cells + [TableCell(())] * (width - len(cells)) for cells, _, _ in rows]
        has_header = bool(rows) and rows[0][2]
        aligns = rows[0][1] + ["default"] * (width - len(rows[0][1])) if rows else []
        header = tuple(padded[0]) if has_header else ()
        body = padded[1:] if has_header else padded
        return Table(header, tuple(tuple(r) for r in body), tuple(aligns), caption, label)

    def row(
        self, element: _Element, spans: dict[int, int], columns: int, *, depth: int
    ) -> tuple[list[TableCell], list[Alignment], bool]:
        """Cells, alignments and whether every cell is a header cell. A cell spanning columns
        or rows (``colspan``, ``rowspan``) is followed by, or stands above, empty cells in the
        columns it covers, so every later cell stays in its own column (the model has no
        spans; the PDF of the author's HTML draws them). ``spans`` carries the rows a cell
        still covers below from one row to the next. A span reaches no further than the
        ``columns`` of the table's widest row (``colspan="100"`` meaning "the whole width")."""
        cells: list[TableCell] = []
        aligns: list[Alignment] = []
        below: dict[int, int] = {}
        all_th = True

        def pad() -> None:
            cells.append(TableCell(()))
            aligns.append("default")

        def covered() -> None:  # the columns that cells of the rows above reach into
            while len(cells) in spans:
                if spans[len(cells)] > 1:
                    below[len(cells)] = spans[len(cells)] - 1
                pad()

        for cell in element.children:
            if not isinstance(cell, _Element) or cell.tag not in ("td", "th"):
                continue
            covered()
            all_th = all_th and cell.tag == "th"
            start = len(cells)
            anchor = self.anchor(cell)
            children = self.inlines(cell, depth=depth)
            cells.append(TableCell((anchor, *children) if anchor is not None else children))
            aligns.append(self.alignment(cell.attrs))
            across = min(_span(cell.attrs.get("colspan", ""), _MAX_COLSPAN),
                         max(columns - start, 1))
            for _ in range(across - 1):
                pad()
            down = _span(cell.attrs.get("rowspan", ""), _MAX_ROWSPAN)
            if down > 1:
                below.update(dict.fromkeys(range(start, start + across), down - 1))
        real = bool(cells)
        last = max(spans, default=-1)
        while len(cells) <= last:
            covered()
            if len(cells) <= last and len(cells) not in spans:
                pad()
        spans.clear()
        spans.update(below)
        return cells, aligns, all_th and real

    def figure(
        self, element: _Element, caption: _Element | None, picture: _Element, *, depth: int
    ) -> Figure:
        """A figure of one image (:func:`_figure_parts`) with its caption; labelled as
        :meth:`captioned` says, the image's alt text without the number pandoc-crossref led it
        with too (pandoc 2 wrote the caption there)."""
        shown, label = self.captioned(caption, "fig", self.given_label(element), depth=depth)
        image = self.image(picture)
        if (anchor := self.anchor(picture)) is not None:  # pandoc 2 put the id on the image
            shown = (anchor, *shown)
        if label and not self.own:
            image = replace(image, alt=without_text_lead(image.alt, "fig"))
        return Figure(image, shown, label)

    def listing(
        self, element: _Element, caption: _Element | None, code: _Element, *, depth: int
    ) -> CodeBlock:
        """A code listing (:func:`_listing_parts`) with its caption, labelled as
        :meth:`captioned` says."""
        shown, label = self.captioned(caption, "lst", self.given_label(element), depth=depth)
        return replace(self.code_block(code), caption=shown, label=label)

    def captioned(
        self, caption: _Element | None, kind: CrossRefKind, given: str, *, depth: int
    ) -> tuple[tuple[Inline, ...], str]:
        """The caption and label of a figure, table or listing: on a page citerender wrote,
        numbered as its caption is (:meth:`numbered_label`); else the label its id gives it
        (``given``: :func:`_labelled`), its caption without the number its writer led it with
        ("Figure 1: …"), which the pass gives again."""
        label = self.numbered_label(kind, caption)
        shown = self.inlines(caption, depth=depth) if caption is not None else ()
        if label or not given:
            return shown, label
        return without_caption_lead(shown, kind), given

    def given_label(self, element: _Element) -> str:
        """The label ``element``'s id gives it (:func:`_labelled`), "" when none does."""
        found = _labelled(element)
        return found[1] if found else ""

    # ------------------------------------------------ inlines

    def inlines(self, element: _Element, *, depth: int) -> tuple[Inline, ...]:
        """The children of ``element`` as inlines (block children flattened onto lines)."""
        run = InlineBuilder()
        self._after_space = True
        self.inline_children(element, run, depth=depth)
        return run.result()

    def inline_children(self, element: _Element, out: InlineBuilder, *, depth: int) -> None:
        for child in element.children:
            self.inline(child, out, depth=depth + 1)

    def inline(self, node: _Element | str, out: InlineBuilder, *, depth: int) -> None:
        """Append ``node`` to ``out`` as inlines."""
        if isinstance(node, str):
            self.text(node, out)
            return
        self.context.check_depth(depth)
        tag = node.tag
        anchor = self.anchor(node)
        if anchor is not None:
            out.add(anchor)
        if self.own and self.written_inline(node, out):
            return
        if tag == "br":
            out.add(LineBreak())
            self._after_space = True
        elif tag == _MARKDOWN:  # markdown in a table cell, a summary …: one line per block
            for line in _lines(self._run(node)):
                if out.nodes and not isinstance(out.nodes[-1], LineBreak):
                    out.add(LineBreak())
                out.extend(line)
            self._after_space = True
        elif tag == "img":
            out.add(self.image(node))
            self._after_space = False
        elif tag == "span" and (label := self.given_label(node)):  # pandoc-crossref's formula
            self.context.count_formula()
            out.add(Math(_formula_of(node) or "", display=True, label=label))
            self._after_space = False
        elif tag in CODE_ELEMENTS:
            out.add(Code(_text_of(node)))
            self._after_space = False
        elif (tag == "sup" or (self.own and tag == "span")) and is_cite_sup(node.attrs):
            # a span: a citation in a style's words, which the style writes again
            spec = node.attrs["data-sids"]
            sids = self.context.sid_spec(spec, lambda: self.lines.cite_sup(spec), _text_of(node))
            if sids is None:  # not a citation (reported): a superscript, as the PDF shows it
                inner = InlineBuilder()
                self.inline_children(node, inner, depth=depth)
                if children := inner.result(trim=False):
                    out.add(Styled("sup", children))
            else:
                out.add(self.context.cite(sids))
                self._after_space = False
        elif tag in _WRAPPERS or tag in _STYLES:
            inner = InlineBuilder()
            self.inline_children(node, inner, depth=depth)
            children, broken = _line_after(inner.result(trim=False))
            if children and tag in _WRAPPERS:
                out.add(_WRAPPERS[tag](children))
            elif children:
                title = node.attrs.get("title", "") if tag == "abbr" else ""
                out.add(Styled(tag, children, title))  # type: ignore[arg-type]
            if broken:
                out.add(LineBreak())
        elif tag == "q":  # the quotation marks a browser (and the PDF) puts around it
            out.text("\u201c")
            self.inline_children(node, out, depth=depth)
            out.text("\u201d")
            self._after_space = False
        elif tag == "a" and (reference := _reference(node, self.labels)):
            out.add(reference)  # numbered by the pass, as the element it leads to is
            self._after_space = False
        elif tag == "a":
            inner = InlineBuilder()
            self.inline_children(node, inner, depth=depth)
            url = read_link(node.attrs.get("href", ""))
            children, broken = _line_after(inner.result(trim=False))
            if url and children:
                out.add(Link(url, children, node.attrs.get("title", "")))
                self.context.link(url, lambda: self.lines.link(url))
            else:
                out.extend(children)
            if broken:
                out.add(LineBreak())
        elif tag in _BLOCK:  # a block inside inline content (a table cell, a heading …)
            # on lines of its own, as a browser shows it: text after it (``<li>a</li>b``, the
            # rest of a list's item) starts the next line, not more of its last word
            if out.nodes and not isinstance(out.nodes[-1], LineBreak):
                out.add(LineBreak())
            self._after_space = True
            self.inline_children(node, out, depth=depth)
            if out.nodes and not isinstance(out.nodes[-1], LineBreak):
                out.add(LineBreak())
            self._after_space = True
        else:
            self.inline_children(node, out, depth=depth)

    def _run(self, element: _Element) -> Sequence[Block]:
        """The markdown run a :data:`_MARKDOWN` element stands for (placed once)."""
        index = int(element.attrs["run"])
        if index >= len(self.runs) or index in self.placed:
            return ()
        self.placed.add(index)
        return self.runs[index]

    def image(self, element: _Element) -> Image:
        attrs = element.attrs
        image = Image(
            safe_image_src(attrs.get("src", "")), attrs.get("alt", ""), attrs.get("title", "")
        )
        if not image.src:
            self.sourceless.append(image)
        return image

    def text(self, text: str, out: InlineBuilder) -> None:
        """Text with collapsed white space; citation tokens become Cite nodes."""
        text = HTML_SPACE.sub(" ", text)
        if text.startswith(" ") and self._after_space:
            text = text[1:]
        if not text:
            return
        position = 0
        for token in scan(text, syntax="text", dialects=self.dialects):
            out.text(text[position : token.start])
            position = token.end
            line = self.lines.token(token.text) if token.warnings or token.error else 0
            for note in token.warnings:
                self.context.warn(line, f"{token.text!r}: {note}")
            if token.error:
                self.context.warn(
                    line, f"invalid citation token {token.text!r}: {token.error}; kept as text"
                )
                out.text(token.text)
            elif token.kind == "usage":
                self.context.add_usage(token.sids)
                out.usage_removed()
            else:
                out.add(self.context.cite(token.sids))
        out.text(text[position:])
        self._after_space = text.endswith(" ")
        if not self.maybe_split:
            self.maybe_split = _ends_in_token_start(text[position:], self.dialects)

    def note_split_tokens(self, lines: NoteLines) -> None:
        """A reader note for each token that markup splits, found as the audit finds it
        (:func:`citations.tokens.split_tokens`): the reader meets only its pieces, so it was
        kept as text without a word, and ``--strict`` passed a token the audit calls invalid."""
        if not self.maybe_split:
            return
        for line, token in lines.split_tokens():
            self.context.warn(
                line, f"invalid citation token {token.text!r}: {token.error}; kept as text"
            )


def _ends_in_token_start(text: str, dialects: frozenset[str]) -> bool:
    """Whether ``text`` ends with the start of a citation token (``A [[S:1``): the token may go
    on past an element that ends the text."""
    cut = max(text.rfind("["), text.rfind("\uff3b"))
    while cut > 0 and text[cut - 1] in "[\uff3b":  # a run of brackets: "[[S:" from its first
        cut -= 1
    prefix = token_prefix_regex(dialects)
    while 0 <= cut < len(text) and text[cut] in "[\uff3b":
        if prefix.fullmatch(text, cut):
            return True
        cut += 1
    return False


def _lines(blocks: Sequence[Block]) -> Iterator[tuple[Inline, ...]]:
    """The inlines of ``blocks`` set in inline content, one line per paragraph, heading, code
    block, table cell or caption (as the reader sets block elements there)."""
    for block in iter_blocks(tuple(blocks)):
        if isinstance(block, CodeBlock):
            yield (Code(block.text),)
        elif isinstance(block, Paragraph | Heading | Table | Figure):
            yield from inline_runs((block,))


def _widest_row(table: _Element) -> int:
    """The most cells one row of ``table`` has (its rows, and those of its row groups)."""
    widest = 0
    for node in table.children:
        if not isinstance(node, _Element):
            continue
        rows = [node] if node.tag == "tr" else (
            [r for r in node.children if isinstance(r, _Element) and r.tag == "tr"]
            if node.tag in ("thead", "tbody", "tfoot") else []
        )
        for row in rows:
            widest = max(widest, sum(
                1 for c in row.children if isinstance(c, _Element) and c.tag in ("td", "th")
            ))
    return widest


#: The most columns and rows one cell may span, as browsers cap them (HTML).
_MAX_COLSPAN = 1000
_MAX_ROWSPAN = 65534


def _span(value: str, most: int) -> int:
    """A cell's ``colspan``/``rowspan``: a whole number from 1 to ``most`` (else 1)."""
    value = value.strip()
    if not re.fullmatch(r"\d{1,6}", value):
        return 1
    return min(max(int(value), 1), most)


def html_alignment(attrs: Mapping[str, str]) -> Alignment:
    """A cell's or block's alignment: its style's last ``text-align`` (CSS's winner), else
    its ``align`` attribute; "default" for any other value (``justify``, ``start``). The
    author's-look PDF asks it too (WeasyPrint ignores ``align``)."""
    found = _ALIGN.findall(attrs.get("style", ""))
    value = (found[-1] if found else attrs.get("align", "")).strip().lower()
    if value == "left":
        return "left"
    if value == "center":
        return "center"
    return "right" if value == "right" else "default"
