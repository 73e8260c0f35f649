"""Markdown → :class:`~renderers.document.Document` (markdown-it-py + the citation inline rule).

CommonMark plus GFM tables, strikethrough, task lists and footnotes, and pandoc's speaker
notes (``::: notes`` fenced divs → :class:`~renderers.document.SpeakerNotes`). Every construct
maps to a node. Raw HTML blocks are read by the HTML reader (sanitized, mapped to the model), the
markdown between an HTML block that opens wrappers and the one that closes them in its place
(GitHub's ``<details>`` … ``</details>``); raw inline HTML
becomes formatting for the safe subset (``<sub>`` … ``<u>``, ``<del>``, ``<br>``, ``<code>``
kept verbatim) and is otherwise dropped with its text kept, so no tag shows or runs. A refused
link keeps only its text; an unreferenced footnote is kept.
``[[USAGE:..]]`` tags never render; their sids go to ``Document.usage_sids``.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Literal
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.common.utils import unescapeAll
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from mdit_py_plugins.container import container_plugin
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.tasklists import tasklists_plugin

from citations.chars import clean_text
from citations.codemap import BlockHtml, block_html, raw_code_elements
from citations.mdit_cite import ON_CITATION, cite_plugin
from citations.tokens import scan, scan_html_block
from renderers.crossref import defined_labels
from renderers.document import (
    INLINE_STYLES,
    Alignment,
    Anchor,
    Block,
    BlockQuote,
    BulletList,
    Cite,
    Code,
    CodeBlock,
    CrossRef,
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
    OrderedList,
    Paragraph,
    SoftBreak,
    SpeakerNotes,
    Strike,
    Strong,
    Styled,
    Table,
    TableCell,
    ThematicBreak,
    label_key,
    plain_text,
)
from renderers.metadata import read_metadata, with_metadata
from renderers.options import Limits
from renderers.readers.anchors import anchors_on_text, written_link_targets
from renderers.readers.context import (
    InlineBuilder,
    ReadContext,
    is_cite_sup,
    link_target,
    tag_attributes,
)
from renderers.readers.crossref_rules import (
    attach_listing_captions,
    attach_table_captions,
    crossref_plugin,
    equation_labels,
    fence_attributes,
    figure_label,
)
from renderers.readers.heading_attrs import HeadingAttributes, heading_attributes_plugin
from renderers.readers.inline_html import inline_html_plugin
from renderers.readers.link_normal import normalize_link
from renderers.readers.math_cells import keep_pipes_in_formulas
from renderers.readers.math_lines import hold_paragraphs_open
from renderers.readers.math_rules import (
    BLOCK_MATH,
    INLINE_MATH,
    display_math,
    inline_math,
    math_plugin,
)
from renderers.readers.sanitize import read_link, safe_image_src
from renderers.speaker_notes import has_speaker_notes, without_speaker_notes
from renderers.text import slugify

_SUP_OPEN = re.compile(r"^<sup(?=[\s>/])([^>]*)>$", re.IGNORECASE)
_SUP_CLOSE = re.compile(r"^</sup\s*>$", re.IGNORECASE)
_CODE_CLOSE = re.compile(r"^</code\s*>$", re.IGNORECASE)
_BR = re.compile(r"^<br\s*/?>$", re.IGNORECASE)
_TAG = re.compile(r"^<(/?)([A-Za-z][A-Za-z0-9-]*)\b([^>]*)>$")
#: Raw inline HTML shown as formatting (issue "raw inline HTML"): tag → the IR it becomes.
#: Every other tag is dropped (its text stays); nothing shows as tag soup or runs.
_STRIKE_TAGS = frozenset({"del", "s", "strike"})
_STYLE_TAGS = frozenset(INLINE_STYLES)
_ALIGN = re.compile(r"text-align\s*:\s*(left|center|right)", re.IGNORECASE)
_TASK_BOX = "task-list-item-checkbox"


# ---------------------------------------------------------------- the parser


def _block_levels(max_nesting: int) -> int:
    """markdown-it's ``maxNesting`` for a model depth: a list level costs two token levels."""
    return 2 * max_nesting + 6


def _keep_unreferenced_footnotes(state: StateCore) -> None:
    """Register footnote definitions nobody references so ``footnote_tail`` keeps them."""
    data = state.env.get("footnotes")
    if not data:
        return
    refs: dict[str, int] = data.setdefault("refs", {})
    notes: dict[int, dict[str, Any]] = data.setdefault("list", {})
    for key, number in list(refs.items()):
        if number < 0:
            new_id = len(notes)
            notes[new_id] = {"label": key[1:], "count": 0}
            refs[key] = new_id


#: How a parser reads footnotes: ``"notes"`` the body's (definitions, references, inline
#: notes); ``"references"`` a front matter abstract's: only references to the body's notes
#: (notes of its own would have no place to be shown, and stay text).
FootnoteSyntax = Literal["notes", "references"]


@lru_cache(maxsize=16)
def markdown_parser(
    dialects: frozenset[str], max_nesting: int, *, footnotes: FootnoteSyntax = "notes"
) -> MarkdownIt:
    """The configured markdown-it parser (cached; parsing keeps no state on it), reading
    ``footnotes`` as :data:`FootnoteSyntax` says.

    Block nesting may go as deep as ``max_nesting``; inline content is parsed by a twin parser
    with markdown-it's CommonMark default (20), because markdown-it's link-label scan costs
    time proportional to that depth for every unclosed ``[``.
    """
    inline_md = _configured(MarkdownIt("commonmark"), dialects, footnotes)
    md = _configured(MarkdownIt("commonmark", {"maxNesting": _block_levels(max_nesting)}),
                     dialects, footnotes)

    def inline_rule(state: StateCore) -> None:
        for token in state.tokens:
            if token.type == "inline":
                token.children = token.children or []
                inline_md.inline.parse(token.content, inline_md, state.env, token.children)

    md.core.ruler.at("inline", inline_rule)
    return md


def _configured(
    md: MarkdownIt, dialects: frozenset[str], footnotes: FootnoteSyntax = "notes"
) -> MarkdownIt:
    # Every link and image is parsed as one: the reader decides with read_link /
    # safe_image_src and keeps only the text of a refused link. markdown-it's own refusal
    # would leave the whole "[text](javascript:…)" syntax on the page.
    md.validateLink = _accept_every_link  # type: ignore[method-assign]
    md.normalizeLink = normalize_link  # type: ignore[method-assign]  # linear in the length
    md.enable(["table", "strikethrough"])
    md.use(inline_html_plugin)
    if footnotes == "notes":
        md.use(footnote_plugin)
    else:
        md.use(footnote_plugin, inline=False, move_to_end=False)
        md.block.ruler.disable("footnote_def")
    md.use(tasklists_plugin)
    md.use(cite_plugin, dialects=dialects)
    md.use(math_plugin)
    md.use(crossref_plugin)
    md.use(heading_attributes_plugin)
    md.use(container_plugin, name="notes", validate=_is_notes_fence)
    rules = md.block.ruler.__rules__
    notes_rule = next(rule for rule in rules if rule.name == "container_notes")
    md.block.ruler.at("container_notes", _closed_only(notes_rule.fn), {"alt": notes_rule.alt})
    keep_pipes_in_formulas(md)
    hold_paragraphs_open(md)  # after every plugin: it wraps each rule that may end a paragraph
    if footnotes == "notes":
        md.core.ruler.before("footnote_tail", "keep_footnotes", _keep_unreferenced_footnotes)
    return md


#: How a speaker-notes div opens (pandoc): ``::: notes``, ``::: .notes``, ``::: {.notes}``.
_NOTES_FENCES = frozenset({"notes", ".notes", "{.notes}"})


def _title(token: Token) -> str:
    """A link's or image's title, its character references decoded (``&#x0C;`` too: replaced
    as the input's own controls are, :func:`citations.chars.clean_text`)."""
    return clean_text(str(token.attrs.get("title", "") or ""))


def _is_notes_fence(params: str, markup: str) -> bool:
    return params.strip() in _NOTES_FENCES


#: A line that may close a fenced div: three or more colons alone, after any container marks.
_CLOSING_FENCE = re.compile(r"[ \t>]*:{3,}[ \t]*")


def _closed_only(rule: Any) -> Any:
    """The container rule, for divs with a closing fence only: pandoc reads an unclosed
    ``::: notes`` as text, where markdown-it's plugin closes it at the end of the document
    (or list item, quote), so every format but the deck silently lost the rest of the text.

    The lines that may close a div are found once per document (``state.env``), so an opening
    fence without one costs a bisection: many unclosed ones stay linear."""

    def closed_notes(state: Any, start_line: int, end_line: int, silent: bool) -> bool:
        closing = state.env.get("_closing_fences")
        if closing is None:
            closing = state.env["_closing_fences"] = [
                n for n, line in enumerate(state.src.split("\n")) if _CLOSING_FENCE.fullmatch(line)
            ]
        after = bisect_left(closing, start_line + 1)
        if after == len(closing) or closing[after] >= end_line:
            return False
        if silent:
            return bool(rule(state, start_line, end_line, silent))
        count = len(state.tokens)
        found = rule(state, start_line, end_line, silent)
        if found and state.line == state.tokens[count].map[1]:  # closed by a list item's end
            del state.tokens[count:]
            state.line = start_line
            return False
        return bool(found)

    return closed_notes


def _accept_every_link(url: str) -> bool:
    return True


def read_markdown(
    text: str, *, dialects: frozenset[str] = frozenset(), limits: Limits | None = None
) -> Document:
    """Read markdown into a :class:`Document`.

    Citations become :class:`Cite` nodes (a numeric-dialect ``[2]`` keeps the pool index 2 in
    ``sids``; the API layer maps it to a sid). Invalid tokens stay literal text and are reported
    in ``Document.notes`` (with their line). A leading YAML front matter block gives the
    title, authors, date, keywords and ``Document.lang`` (:mod:`renderers.metadata`), and its
    abstract is read as markdown into ``Document.abstract`` (its notes name the line each
    place was typed on, as the audit does, whatever the YAML scalar's form). Raises
    :class:`LimitError` when a limit is exceeded.
    """
    limits = limits or Limits()
    context = ReadContext("markdown input", limits)
    context.check_size(text)
    metadata, text = read_metadata(text, context)
    md = markdown_parser(frozenset(dialects), limits.max_nesting)
    _check_table_shapes(text, context)
    env: dict[str, Any] = {ON_CITATION: context.count_citation}
    tokens = _parsed(md, text, env, context)
    # The abstract is read as the body is, its references to the body's notes too (parsed
    # after the body, which defines them), and first: its citations come before the body's.
    abstract_md = markdown_parser(frozenset(dialects), limits.max_nesting,
                                  footnotes="references")
    abstract_source = "\n" * (metadata.abstract_line - 1) + metadata.abstract
    _check_table_shapes(abstract_source, context)
    abstract_tokens = _parsed(abstract_md, abstract_source, _notes_env(env), context)
    targets = _link_targets(tokens) | _link_targets(abstract_tokens)
    dialects = frozenset(dialects)
    labels = _footnote_labels(env)
    with context.reading(metadata.abstract_lines, metadata.abstract_line):  # typed lines
        abstract, _ = _MarkdownReader(context, labels, dialects, targets).blocks(
            abstract_tokens, 0, depth=0)
    if has_speaker_notes(tuple(abstract)):  # no format shows the title block's on a slide
        context.warn(metadata.abstract_line, "speaker notes in the front matter abstract "
                     "are left out: only the body's go with their slides")
        abstract = list(without_speaker_notes(tuple(abstract)))
    reader = _MarkdownReader(context, labels, dialects, targets)
    blocks, _ = reader.blocks(tokens, 0, depth=0)
    reader.warn_refused_refs(tuple(blocks))
    return with_metadata(context.document(blocks), metadata, tuple(abstract))


def _notes_env(env: dict[str, Any]) -> dict[str, Any]:
    """A parse environment knowing the notes the body's ``env`` defines (copies: a reference
    counts on its note's entry)."""
    notes = env.get("footnotes", {})
    return {"footnotes": {
        "refs": dict(notes.get("refs", {})),
        "list": {i: {**note, "count": note.get("count", 0)} for i, note in
                 notes.get("list", {}).items()},
    }}


def _parsed(md: MarkdownIt, text: str, env: dict[str, Any], context: ReadContext) -> list[Token]:
    """markdown-it's tokens of ``text``, refused (LimitError) past ``limits.max_nesting``."""
    if not text:
        return []
    env.setdefault(ON_CITATION, context.count_citation)
    limits = context.limits
    try:
        tokens = md.parse(text, env)
    except RecursionError:
        context.check_depth(limits.max_nesting + 1)
        raise
    ceiling = _block_levels(limits.max_nesting) - 1
    if any(token.level >= ceiling for token in tokens):
        context.check_depth(limits.max_nesting + 1)
    return tokens


def _link_targets(tokens: Sequence[Token]) -> frozenset[str]:
    """The ids the document's links lead to, gathered before any block is read: an id in an
    HTML block is a place for every link of the document, one before the block or in another
    HTML block too (HTML input's rule, :func:`renderers.readers.context.link_target`)."""
    targets: set[str] = set()
    for token in tokens:
        if token.type == "html_block":
            targets.update(written_link_targets(token.content))
        for child in token.children or ():
            if child.type == "link_open":
                targets.add(link_target(str(child.attrs.get("href", ""))))
    targets.discard("")
    return frozenset(targets)


#: A GFM table's delimiter row (``| --- | :-: |``): it fixes the table's column count, and
#: markdown-it pads every body row to it while parsing. Possessive: each run is followed by a
#: character it cannot match, and backtracking between adjacent blank runs was quadratic per
#: line (32,000 spaces then "-" took 14 s; 3,000 nested list items, minutes).
_DELIMITER_ROW = re.compile(
    r"^[ \t>]*+\|?[ \t]*+:?-++:?[ \t]*+(?:\|[ \t]*+:?-++:?[ \t]*+)++\|?[ \t]*+$", re.MULTILINE
)
_BLANK_LINE = re.compile(r"\n[ \t>]*(?:\n|$)")


def _check_table_shapes(text: str, context: ReadContext) -> None:
    """Refuse, before parsing, a table whose columns × lines would exceed
    ``limits.max_table_cells``: markdown-it builds every padded cell of a wide table before the
    reader sees one. The lines up to the next blank line bound the table's rows."""
    # Delimiter rows of one paragraph share its end: finding it and counting its lines again
    # for each row rescanned the paragraph (quadratic: 10,000 rows of 200 characters, 11 s).
    end = newlines = at = -1
    for match in _DELIMITER_ROW.finditer(text):
        columns = match.group().strip(" \t>|").count("|") + 1
        if end < match.end():
            blank = _BLANK_LINE.search(text, match.end())
            end = blank.start() if blank else len(text)
            newlines = text.count("\n", match.end(), end)
        else:
            newlines -= text.count("\n", at, match.end())
        at = match.end()
        context.check_cells(newlines + 1, columns)


def _footnote_labels(env: dict[str, Any]) -> dict[int, str]:
    """Footnote id → label; inline footnotes (``^[…]``) get ``inline-N``."""
    notes: dict[int, dict[str, Any]] = env.get("footnotes", {}).get("list", {})
    labels = {i: str(note["label"]) for i, note in notes.items() if note.get("label") is not None}
    used = set(labels.values())
    for i in sorted(notes):
        if i not in labels:
            label = f"inline-{i + 1}"
            while label in used:
                label += "-"
            labels[i] = label
            used.add(label)
    return labels


# ---------------------------------------------------------------- tokens → model

_CONTAINER_CLOSE = {
    "blockquote_open": "blockquote_close",
    "bullet_list_open": "bullet_list_close",
    "ordered_list_open": "ordered_list_close",
    "list_item_open": "list_item_close",
    "footnote_open": "footnote_close",
    "footnote_block_open": "footnote_block_close",
}
_INLINE_WRAPPERS = {"em_open": "em_close", "strong_open": "strong_close", "s_open": "s_close"}


@dataclass
class _Frame:
    """An open inline container while reading a token stream."""

    kind: str
    token: Token | None
    builder: InlineBuilder = field(default_factory=InlineBuilder)
    attrs: str = ""  # a raw HTML tag's attribute text
    line: int = 0  # the source line of the block it is in (for warnings)


class _MarkdownReader:
    """Turns markdown-it's flat token stream into model blocks (one pass, bounded depth)."""

    def __init__(
        self,
        context: ReadContext,
        footnote_labels: dict[int, str],
        dialects: frozenset[str],
        targets: frozenset[str] = frozenset(),
    ) -> None:
        self.context = context
        self.footnote_labels = footnote_labels
        self.dialects = dialects
        self.targets = targets  # the ids the document's links lead to (see _link_targets)
        self._code_cursor: dict[int, int] = {}  # per inline token: raw <code> elements read
        self._alt_inlines: dict[int, tuple[Inline, ...]] = {}  # per image token: its alt, read
        #: per inline token: its children and the ``</sup>`` that closes each ``<sup>`` there
        self._sup_closers: dict[int, tuple[Sequence[Token], dict[int, int]]] = {}
        self._refused_refs: list[tuple[str, str, int]] = []  # (word, label, line): "a@fig:x"
        self._block_html: dict[int, BlockHtml] = {}  # per HTML block token: its HTML, read

    def warn_refused_refs(self, blocks: tuple[Block, ...]) -> None:
        """Warn of each ``@label`` left as text for the letter before it (an e-mail address's
        ``@``) whose label a figure or table defines: its author surely meant a reference."""
        labels = defined_labels(blocks)
        for word, label, line in self._refused_refs:
            if label_key(label) not in labels:
                continue
            if word.endswith("[-"):  # pandoc-crossref's number-only form, not an address
                why = (f"the number-only form is a bracket holding only references, as "
                       f"[-@{label}]")
            elif word.endswith("-"):  # the number-only form without its brackets
                why = (f"an @ right after '-' is part of an e-mail address; write [-@{label}] "
                       f"for the number alone or [@{label}]")
            else:
                why = (f"an @ right after {word[-1]!r} is part of an e-mail address; put a "
                       f"space before the @ or write [@{label}]")
            self.context.warn(line, f"'{word}@{label}' is not read as a cross-reference: {why}")

    # ------------------------------------------------ blocks

    def blocks(
        self, tokens: Sequence[Token], i: int, *, depth: int, until: str = ""
    ) -> tuple[list[Block], int]:
        """Blocks from ``tokens[i]`` up to the token of type ``until``; returns the index after."""
        self.context.check_depth(depth)
        out: list[Block] = []
        while i < len(tokens):
            token = tokens[i]
            kind = token.type
            if kind == until:
                return anchors_on_text(_captioned(out)), i + 1
            if kind == "heading_open":
                out.append(self._heading(token, tokens[i + 1]))
                i = _skip_to(tokens, i, "heading_close")
            elif kind == "paragraph_open":
                paragraph = self.paragraph(tokens[i + 1])
                if paragraph is not None:
                    out.append(paragraph)
                i = _skip_to(tokens, i, "paragraph_close")
            elif kind in ("bullet_list_open", "ordered_list_open"):
                lst, i = self.list_(tokens, i, depth=depth)
                out.append(lst)
            elif kind == "blockquote_open":
                inner, i = self.blocks(tokens, i + 1, depth=depth + 1, until="blockquote_close")
                out.append(BlockQuote(tuple(inner)))
            elif kind == "table_open":
                table, i = self.table(tokens, i)
                out.append(table)
            elif kind == "container_notes_open":
                inner, i = self.blocks(tokens, i + 1, depth=depth + 1,
                                       until="container_notes_close")
                out.append(SpeakerNotes(tuple(inner)))
            elif kind == "fence":
                language, label, caption = fence_attributes(unescapeAll(token.info).strip())
                out.append(CodeBlock(_drop_final_newline(token.content), language, caption,
                                     label))
                i += 1
            elif kind == "code_block":
                out.append(CodeBlock(_drop_final_newline(token.content)))
                i += 1
            elif kind in BLOCK_MATH:
                out.append(display_math(token, self.context))
                i += 1
            elif kind == "hr":
                out.append(ThematicBreak())
                i += 1
            elif kind == "html_block":
                last = self._html_group_end(tokens, i)
                out.extend(self.html_blocks(tokens, i, last, depth=depth))
                i = last + 1
            elif kind == "footnote_block_open":
                notes, i = self.blocks(tokens, i + 1, depth=depth, until="footnote_block_close")
                out.extend(notes)
            elif kind == "footnote_open":
                label = self.footnote_labels.get(token.meta["id"], str(token.meta["id"] + 1))
                inner, i = self.blocks(tokens, i + 1, depth=depth + 1, until="footnote_close")
                out.append(FootnoteDef(label, tuple(inner)))
            elif kind == "footnote_anchor":
                i += 1
            elif kind == "inline":  # a stray inline outside a paragraph: keep its content
                out.append(Paragraph(self.inlines(token)))
                i += 1
            else:
                i += 1 if token.nesting != 1 else 0
                if token.nesting == 1:
                    close = _CONTAINER_CLOSE.get(kind, kind.replace("_open", "_close"))
                    inner, i = self.blocks(tokens, i + 1, depth=depth + 1, until=close)
                    out.extend(inner)
        return anchors_on_text(_captioned(out)), i

    def _block_html_of(self, token: Token) -> BlockHtml:
        """An HTML block as the HTML reader reads it (read once)."""
        found = self._block_html.get(id(token))
        if found is None:
            found = self._block_html[id(token)] = block_html(token.content)
            self._warn_markup_citations(token)
        return found

    def _html_group_end(self, tokens: Sequence[Token], i: int) -> int:
        """The index of the last HTML block read with the one at ``tokens[i]``: the first
        sibling HTML block after which every wrapper it opened (``<details>``, ``<div>``,
        ``<table>`` …) is closed again, else the last sibling HTML block (a wrapper never
        closed ends with the last HTML block of its container; markdown after that is never
        swallowed). A closing tag nothing opened is dropped, as a browser drops it."""
        level = tokens[i].level
        open_: list[str] = []
        last = i
        for j in range(i, len(tokens)):
            token = tokens[j]
            if token.level < level:
                break
            if token.level != level or token.type != "html_block":
                continue
            last = j
            for name, kind in self._block_html_of(token).wrappers:
                if kind == "start":
                    open_.append(name)
                elif name in open_:
                    del open_[len(open_) - 1 - open_[::-1].index(name) :]
            if not open_:
                break
        return last

    def html_blocks(
        self, tokens: Sequence[Token], i: int, last: int, *, depth: int
    ) -> list[Block]:
        """The HTML blocks ``tokens[i]`` … ``tokens[last]`` and the markdown between them,
        read by the HTML reader as one piece of HTML (sanitized as HTML input is)."""
        level = tokens[i].level
        pieces: list[str] = []
        runs: list[list[Block]] = []
        j = i
        while j <= last:
            if tokens[j].type == "html_block" and tokens[j].level == level:
                if len(pieces) > len(runs):
                    runs.append([])
                pieces.append(self._block_html_of(tokens[j]).html)
                j += 1
                continue
            k = j
            while not (tokens[k].type == "html_block" and tokens[k].level == level):
                k += 1
            run, _ = self.blocks(tokens[j:k], 0, depth=depth)
            runs.append(run)
            j = k
        first = tokens[i].map
        line = first[0] + 1 if first else 0
        from renderers.readers.html import read_html_blocks  # a document with HTML blocks

        return read_html_blocks(pieces, runs, self.context, dialects=self.dialects,
                                depth=depth, line=line, targets=self.targets)

    def _warn_markup_citations(self, token: Token) -> None:
        """Citations in an HTML block's markup (a tag's attribute, a comment) or in an
        element the sanitizer removes with its content (``<svg>``, ``<button>`` …) are dropped
        with it: say so (its text is read as HTML, where tokens are citations)."""
        for found in scan_html_block(token.content, dialects=self.dialects):
            if found.in_raw_html and found.kind == "cite":
                line = (token.map[0] if token.map else 0) + found.line
                self.context.warn(
                    line, f"citation {found.text!r} inside an HTML tag, a comment or an element "
                    "the sanitizer removes is dropped, not cited",
                )

    def paragraph(self, inline: Token) -> Paragraph | Figure | None:
        """A paragraph, a figure (a paragraph holding only an image) or None if it is empty."""
        children = equation_labels(self.inlines(inline))
        if not children:
            return None
        # The caption is the image's alt as read; the citations in it also follow the image
        # (so that a paragraph that is not a figure keeps them), and are not counted here.
        image_token = next((t for t in inline.children or () if t.type == "image"), None)
        caption = self._alt_inlines.get(id(image_token), ()) if image_token else ()
        from_alt = sum(isinstance(node, Cite) for node in caption)
        bare = children[:1] + children[1 + from_alt :]
        image, label = figure_label(bare) or (bare[0], "")
        if isinstance(image, Image) and (label or len(bare) == 1):
            return Figure(image, caption, label)
        return Paragraph(children)

    def list_(self, tokens: Sequence[Token], i: int, *, depth: int) -> tuple[Block, int]:
        """A bullet or ordered list starting at ``tokens[i]``."""
        opening = tokens[i]
        close = _CONTAINER_CLOSE[opening.type]
        items: list[ListItem] = []
        tight = True
        i += 1
        while i < len(tokens) and tokens[i].type != close:
            if tokens[i].type != "list_item_open":
                i += 1
                continue
            checked = _task_state(tokens, i)
            item_level = tokens[i].level
            for j in range(i + 1, len(tokens)):  # a slice copied the rest: quadratic
                token = tokens[j]
                if token.type == "list_item_close" and token.level == item_level:
                    break
                if token.type == "paragraph_open" and token.level == item_level + 1:
                    tight = tight and token.hidden
            inner, i = self.blocks(tokens, i + 1, depth=depth + 1, until="list_item_close")
            items.append(ListItem(tuple(inner), checked))
        i += 1
        if opening.type == "ordered_list_open":
            start = int(str(opening.attrs.get("start", 1)))
            return OrderedList(tuple(items), start=start, tight=tight), i
        return BulletList(tuple(items), tight=tight), i

    def table(self, tokens: Sequence[Token], i: int) -> tuple[Table, int]:
        """A GFM table starting at ``tokens[i]``."""
        header: tuple[TableCell, ...] = ()
        rows: list[tuple[TableCell, ...]] = []
        aligns: list[Alignment] = []
        row: list[TableCell] = []
        in_head = False
        i += 1
        while tokens[i].type != "table_close":
            token = tokens[i]
            if token.type == "thead_open":
                in_head = True
            elif token.type == "thead_close":
                in_head = False
            elif token.type == "tr_open":
                row = []
            elif token.type == "tr_close":
                if in_head:
                    header = tuple(row)
                else:
                    rows.append(tuple(row))
                    self.context.check_rows(len(rows))
                    self.context.check_cells(len(rows), len(row))
            elif token.type in ("th_open", "td_open"):
                if token.type == "th_open":
                    aligns.append(_alignment(str(token.attrs.get("style", ""))))
                inline = tokens[i + 1]
                cell = self.inlines(inline) if inline.type == "inline" else ()
                row.append(TableCell(cell))
            i += 1
        return Table(header, tuple(rows), tuple(aligns)), i + 1

    def _heading(self, opening: Token, inline: Token) -> Heading:
        """A heading, with the id and classes its attribute block gives (``## Results
        {#results}``, :mod:`renderers.readers.heading_attrs`). One whose text makes an id of the
        writers' own form that a link names (``## Sources`` and ``#sources``, as the Markdown
        writer writes them and pandoc names them) leads with that place
        (:meth:`ReadContext.own_place`), its own id another."""
        children = self.inlines(inline)
        attributes: HeadingAttributes = opening.meta.get("attributes", HeadingAttributes())
        if attributes.source:
            self._warn_attribute_citations(attributes.source, _line_of(inline, 0))
        heading = self.context.heading(int(opening.tag[1:]), children, attributes.id,
                                       listed=not attributes.unlisted, line=_line_of(inline, 0))
        own = slugify(plain_text(children))
        if own in self.targets and own != heading.id and self.context.own_place(own):
            return replace(heading, children=(Anchor(own), *children))
        return heading

    def _warn_attribute_citations(self, block: str, line: int) -> None:
        """A citation token inside a heading's attribute block (``{#x title="[[S:1]]"}``) is
        no text of the heading, so it is not cited: say so (the audit lists it as not
        rendered)."""
        for found in scan(block, syntax="text", dialects=self.dialects):
            if found.kind == "cite":
                self.context.warn(line, f"citation {found.text!r} inside the heading's "
                                  f"attribute block {block!r} is dropped, not cited")

    # ------------------------------------------------ inlines

    def inlines(self, inline: Token) -> tuple[Inline, ...]:
        """The inlines of one ``inline`` token."""
        return self.inlines_of(inline.children or [], inline)

    def inlines_of(self, children: Sequence[Token], parent: Token) -> tuple[Inline, ...]:
        """Inlines from a token list (an explicit stack: deep emphasis cannot recurse)."""
        stack = [_Frame("root", None)]
        context = self.context
        k = 0
        while k < len(children):
            token = children[k]
            kind = token.type
            top = stack[-1].builder
            k += 1
            if kind in ("text", "text_special"):
                top.text(token.content)
            elif kind == "softbreak":
                top.add(SoftBreak())
            elif kind == "hardbreak":
                top.add(LineBreak())
            elif kind == "code_inline":
                top.add(Code(token.content))
            elif kind in _INLINE_WRAPPERS or kind == "link_open":
                stack.append(_Frame(kind, token, line=_line_of(parent, 0)))
                context.check_depth(len(stack) - 1)
            elif kind.endswith("_close") and len(stack) > 1:
                self._close_to(stack, kind[: -len("_close")] + "_open")
            elif kind == "image":
                self._image(token, top, parent)
            elif kind == "cite":
                self._cite(token, top, parent)
            elif kind in INLINE_MATH:
                top.add(inline_math(token, self.context, _line_of(parent, 0)))
            elif kind == "crossref":
                for n, (label, form, prefix, dash) in enumerate(token.meta["refs"]):  # a group
                    top.add(CrossRef(label, form=form, joiner="list" if n else "",
                                     prefix=prefix, dash=dash))
            elif kind == "crossref_refused":
                top.text(token.content)
                meta = token.meta
                line = _line_of(parent, meta["pos"])
                self._refused_refs.append((meta["before"], meta["label"], line))
            elif kind == "footnote_ref":
                label = self.footnote_labels.get(token.meta["id"], str(token.meta["id"] + 1))
                top.add(FootnoteRef(label))
            elif kind == "html_inline":
                k = self._html(children, k - 1, stack, parent)
            else:  # a token type this reader does not know: keep whatever text it carries
                top.text(token.content)
        while len(stack) > 1:  # unbalanced (never from markdown-it): keep the content
            frame = stack.pop()
            stack[-1].builder.extend(frame.builder.result(trim=False))
        return stack[0].builder.result()

    def _close_to(self, stack: list[_Frame], kind: str) -> bool:
        """Close the innermost open frame of ``kind``; frames opened inside it and never closed
        give up their wrapper and keep their content. False when none is open."""
        depth = next((d for d in range(len(stack) - 1, 0, -1) if stack[d].kind == kind), None)
        if depth is None:
            return False
        while len(stack) > depth + 1:
            frame = stack.pop()
            stack[-1].builder.extend(frame.builder.result(trim=False))
        self._close(stack.pop(), stack[-1].builder)
        return True

    def _close(self, frame: _Frame, parent: InlineBuilder) -> None:
        children = frame.builder.result(trim=False)
        tag = frame.kind.removeprefix("html:")
        if tag in _STRIKE_TAGS:
            parent.add(Strike(children))
        elif tag in _STYLE_TAGS:
            title = tag_attributes(frame.attrs).get("title", "") if tag == "abbr" else ""
            parent.add(Styled(tag, children, title))  # type: ignore[arg-type]
        elif frame.kind == "em_open":
            parent.add(Emph(children))
        elif frame.kind == "strong_open":
            parent.add(Strong(children))
        elif frame.kind == "s_open":
            parent.add(Strike(children))
        else:
            assert frame.token is not None
            href = str(frame.token.attrs.get("href", ""))
            url = read_link(href)
            if url:
                parent.add(Link(url, children, _title(frame.token)))
                self.context.link(url, frame.line)
            else:
                parent.extend(children)
                self._cite_link_target(unquote(href), frame.line, parent)

    def _cite_link_target(self, target: str, line: int, out: InlineBuilder) -> None:
        """A refused link target holding citation tokens (``[the IEA report]([[S:2]])``, as
        models write a link to a source) is what its writer meant: a citation, placed after
        the link's text, where the audit counts it too."""
        for found in scan(target, dialects=self.dialects):
            if found.inert or found.kind != "cite":
                continue
            if found.error is not None:
                self.context.warn(line, f"invalid citation token {found.text!r} in the link "
                                  f"target {target!r}: {found.error}; the link's text is kept")
                continue
            for note in found.warnings:
                self.context.warn(line, f"{found.text!r}: {note}")
            out.add(self.context.cite(found.sids))

    def _image(self, token: Token, out: InlineBuilder, parent: Token) -> None:
        alt_nodes = self.inlines_of(token.children or [], parent)
        self._alt_inlines[id(token)] = alt_nodes
        written = str(token.attrs.get("src", ""))
        image = Image(
            src=safe_image_src(written),
            alt=" ".join(plain_text(alt_nodes).split()),
            title=_title(token),
        )
        if not image.src:
            self.context.refuse_image(_line_of(parent, 0), written, image.alt)
        out.add(image)
        out.extend([node for node in alt_nodes if isinstance(node, Cite)])

    def _cite(self, token: Token, out: InlineBuilder, parent: Token) -> None:
        meta = token.meta
        pos = int(meta.get("pos", 0))
        line = _line_of(parent, pos)

        def warn(message: str) -> None:
            column = _column_of(parent, pos, self.context.text_line(line))
            self.context.warn(line, message, column=column)

        for note in meta.get("warnings", ()):
            warn(f"{meta['text']!r}: {note}")
        if meta.get("error"):
            warn(f"invalid citation token {meta['text']!r}: {meta['error']}; kept as text")
            out.text(meta["text"])
        elif meta["kind"] == "usage":
            self.context.add_usage(meta["sids"])
            out.usage_removed()
        else:
            out.add(self.context.cite(meta["sids"], counted=True))

    def _html(
        self, children: Sequence[Token], k: int, stack: list[_Frame], parent: Token
    ) -> int:
        """Inline HTML at ``children[k]``; returns the index of the next token to read.

        The safe subset becomes formatting (``<sub>`` … ``<u>``, ``<del>``/``<s>``, ``<br>``,
        ``<code>`` whose content stays verbatim, like a code span); a citation ``<sup>`` is a
        citation; every other tag is dropped and its text kept.
        """
        raw = children[k].content
        out = stack[-1].builder
        if _TASK_BOX in raw and k == 0:  # a task-list checkbox already read by _task_state
            return k + 1
        if _BR.match(raw):
            out.add(LineBreak())
            return k + 1
        tag = _TAG.match(raw)
        name = tag.group(2).lower() if tag else ""
        if name == "code" and not tag.group(1):  # type: ignore[union-attr]
            return self._raw_code(children, k, out, parent)
        opening = _SUP_OPEN.match(raw)
        if opening and is_cite_sup(attributes := tag_attributes(opening.group(1))):
            line = _line_of(parent, 0)
            sids = self.context.sid_spec(attributes["data-sids"], line, raw)
            if sids is not None:
                out.add(self.context.cite(sids))
                end = self._closing_sup(parent, children).get(k)
                if end is not None:
                    return end + 1
                self.context.warn(line, f"{raw!r} has no closing </sup>; its text is kept")
                return k + 1
        if name == "a" and not tag.group(1):  # type: ignore[union-attr]
            # ``<a id="x"></a>``: the place ``[…](#x)`` leads to (the Markdown writer names
            # places so), an anchor when nothing has the id yet (one of the writers' own form
            # too: ReadContext.own_place); the tags themselves drop out. The id is kept as
            # written, white space too, as the HTML reader keeps it (text.GIVEN_ID_RULE)
            ident = tag_attributes(tag.group(3)).get("id", "")  # type: ignore[union-attr]
            if ident and (self.context.ids.claim(ident) or self.context.own_place(ident)):
                out.add(Anchor(ident))
            return k + 1
        if tag is not None and (name in _STYLE_TAGS or name in _STRIKE_TAGS):
            if not tag.group(1):
                stack.append(_Frame(f"html:{name}", None, attrs=tag.group(3)))
                self.context.check_depth(len(stack) - 1)
            else:
                self._close_to(stack, f"html:{name}")  # a stray closing tag is dropped
        return k + 1

    def _closing_sup(self, parent: Token, children: Sequence[Token]) -> dict[int, int]:
        """Index of the ``</sup>`` closing each ``<sup>`` of ``children``, matched once per
        inline token: scanning ahead from each unclosed sup was quadratic (20,000 of them in
        one paragraph took 40 s)."""
        found = self._sup_closers.get(id(parent))
        if found is None or found[0] is not children:
            found = self._sup_closers[id(parent)] = (children, _matching_sups(children))
        return found[1]

    def _raw_code(
        self, children: Sequence[Token], k: int, out: InlineBuilder, parent: Token
    ) -> int:
        """``<code>…</code>`` in markdown: its source text verbatim (tokens inside are not
        citations, as the scanner and the audit say); unclosed, the tag is dropped."""
        elements = raw_code_elements(parent.content)
        index = self._code_cursor.get(id(parent), 0)
        close = next(
            (j for j in range(k + 1, len(children))
             if children[j].type == "html_inline" and _CODE_CLOSE.match(children[j].content)),
            None,
        )
        if close is None or index >= len(elements):
            return k + 1
        self._code_cursor[id(parent)] = index + 1
        _, _, inner_start, inner_end = elements[index]
        out.add(Code(" ".join(parent.content[inner_start:inner_end].split("\n"))))
        return close + 1


# ---------------------------------------------------------------- small helpers


def _captioned(blocks: list[Block]) -> list[Block]:
    """``blocks`` with tables and code listings joined to their caption paragraphs."""
    return attach_listing_captions(attach_table_captions(blocks))


def _skip_to(tokens: Sequence[Token], i: int, kind: str) -> int:
    """The index after the first token of type ``kind`` at or after ``i``."""
    while tokens[i].type != kind:
        i += 1
    return i + 1


def _drop_final_newline(text: str) -> str:
    return text[:-1] if text.endswith("\n") else text


def _alignment(style: str) -> Alignment:
    match = _ALIGN.search(style)
    if match is None:
        return "default"
    value = match.group(1).lower()
    return "left" if value == "left" else "center" if value == "center" else "right"


def _task_state(tokens: Sequence[Token], i: int) -> bool | None:
    """True/False for a task item (``- [x]``/``- [ ]``) at ``tokens[i]``, else None.

    The task-list plugin puts a checkbox ``html_inline`` first in the item's first inline; it is
    read here and skipped by the inline reader, and the space after it is removed.
    """
    if "task-list-item" not in str(tokens[i].attrs.get("class", "")).split():
        return None
    inline = tokens[i + 2] if i + 2 < len(tokens) else None
    if inline is None or inline.type != "inline" or not inline.children:
        return None
    first = inline.children[0]
    if first.type != "html_inline" or _TASK_BOX not in first.content:
        return None
    if len(inline.children) > 1 and inline.children[1].type == "text":
        inline.children[1].content = inline.children[1].content.lstrip(" ")
    return 'checked="checked"' in first.content


def _matching_sups(children: Sequence[Token]) -> dict[int, int]:
    """``{index of a <sup>: index of the </sup> closing it}``, nested sups paired as a
    browser pairs them; a sup never closed has no entry."""
    matches: dict[int, int] = {}
    open_sups: list[int] = []
    for index, token in enumerate(children):
        if token.type != "html_inline":
            continue
        if _SUP_OPEN.match(token.content):
            open_sups.append(index)
        elif _SUP_CLOSE.match(token.content) and open_sups:
            matches[open_sups.pop()] = index
    return matches


@lru_cache(maxsize=8)
def _newline_offsets(content: str) -> tuple[int, ...]:
    """Offsets of the newlines in ``content`` (cached: a paragraph may hold 100,000 citations)."""
    return tuple(m.start() for m in re.finditer("\n", content))


def _line_of(parent: Token, pos: int) -> int:
    """1-based document line of offset ``pos`` in an inline token's content (0 if unknown)."""
    if not parent.map:
        return 0
    return parent.map[0] + 1 + bisect_left(_newline_offsets(parent.content), pos)


def _column_of(parent: Token, pos: int, line: str) -> int:
    """The column in its source ``line`` of offset ``pos`` in an inline token's content (0 if
    unknown, ``line`` being ""): the content's line is the source line's end, past the marks
    of the blocks holding it (a quote's ``>``, a list item's indent) and its own indentation,
    or else within it (a table cell's, a heading's before its closing ``#``)."""
    if not line:
        return 0
    content = parent.content
    start = content.rfind("\n", 0, pos) + 1
    end = content.find("\n", pos)
    shown = content[start : end if end >= 0 else len(content)].rstrip()
    whole = line.rstrip()
    at = len(whole) - len(shown) if whole.endswith(shown) else whole.find(shown)
    return at + pos - start if shown and at >= 0 else 0
