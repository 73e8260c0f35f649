"""Anchors and the ids links lead to, shared by the markdown and HTML readers.

Kept apart from the HTML reader (which imports ``html.parser`` and, through the sanitizer, nh3)
so that markdown without HTML blocks reads without loading them, yet finds the ids its HTML
blocks' links name before any block is read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from citations.codemap import HtmlTag, html_tags
from renderers.document import (
    Anchor,
    Block,
    BlockQuote,
    BulletList,
    Figure,
    Heading,
    OrderedList,
    Paragraph,
    Table,
    TableCell,
    only_anchors,
)
from renderers.readers.context import TAG_ATTRIBUTES, link_target, tag_attributes

__all__ = ["anchors_on_text", "with_anchor", "written_link_targets", "written_tags"]


def written_tags(
    html: str, names: frozenset[str], until: int | None = None
) -> Iterator[tuple[HtmlTag, dict[str, str]]]:
    """Each start tag of ``names`` in ``html`` with its attributes as written (names
    lower-cased, entities decoded), among the tags the audit's scanner sees
    (:func:`citations.codemap.html_tags`: none inside comments, scripts, styles, textareas or
    titles): the input as written, as the sanitizer drops ``<meta>`` and ``<html>`` and a
    refused image's source. Each tag is read to its ">" outside quotes.

    A tag without its ">" runs to the end of the input (HTML reads the rest as its
    attributes), so the scan stops there: linear, however many unclosed tags follow. It stops
    too past ``until``, an offset after which no tag of ``names`` starts.
    """
    after = 0
    for tag in html_tags(html):
        if until is not None and tag.start > until:
            return
        if tag.name not in names or tag.kind == "end" or tag.start < after:
            continue
        written = TAG_ATTRIBUTES.match(html, tag.start + 1 + len(tag.name))
        if written is None:
            return
        yield tag, tag_attributes(written.group(1))
        after = written.end()


def written_link_targets(html: str) -> Iterator[str]:
    """The ids the ``<a href>`` tags written in ``html`` lead to (a markdown HTML block's, read
    before the document is, so that a link may come before the block it leads to)."""
    for _, attributes in written_tags(html, frozenset({"a"})):
        if target := link_target(attributes.get("href", "").strip()):
            yield target


def with_anchor(blocks: list[Block], anchor: Anchor) -> list[Block]:
    """``blocks`` with ``anchor`` at the start of the first block that holds a line of text
    (a paragraph, a heading, a list's first item, a table's first cell, a figure's caption);
    ``blocks`` itself when none does (a code block, a rule)."""
    for index, block in enumerate(blocks):
        placed = _anchor_block(block, anchor)
        if placed is not None:
            return [*blocks[:index], placed, *blocks[index + 1 :]]
    return blocks


def anchors_on_text(blocks: list[Block]) -> list[Block]:
    """``blocks`` without the paragraphs that hold only anchors (``<a id="x"></a>`` on a line
    of its own, an empty ``<div id>``): their anchors start the next block's first line, as a
    browser shows nothing there, so that no writer sets an empty line. When that block has no
    line of text (a code block, a rule) or none follows, the paragraph stays."""
    out: list[Block] = []
    pending: list[Anchor] = []
    for block in blocks:
        if isinstance(block, Paragraph) and only_anchors(block.children):
            pending.extend(node for node in block.children if isinstance(node, Anchor))
            continue
        held: Block | None = block
        for anchor in reversed(pending):
            held = _anchor_block(held, anchor) if held is not None else None
        if held is None:
            out.append(Paragraph(tuple(pending)))
        else:
            block = held
        pending = []
        out.append(block)
    if pending:
        out.append(Paragraph(tuple(pending)))
    return out


def _anchor_block(block: Block, anchor: Anchor) -> Block | None:
    if isinstance(block, Paragraph | Heading):
        return replace(block, children=(anchor, *block.children))
    if isinstance(block, Figure):
        return replace(block, caption=(anchor, *block.caption))
    if isinstance(block, BulletList | OrderedList) and block.items:
        first = block.items[0]
        placed = with_anchor(list(first.blocks), anchor)
        if placed == list(first.blocks):
            return None
        return replace(block, items=(replace(first, blocks=tuple(placed)), *block.items[1:]))
    if isinstance(block, BlockQuote):
        inner = with_anchor(list(block.blocks), anchor)
        return None if inner == list(block.blocks) else BlockQuote(tuple(inner))
    if isinstance(block, Table):
        if block.header:
            head = block.header
            return replace(block, header=(TableCell((anchor, *head[0].children)), *head[1:]))
        if block.rows and block.rows[0]:
            row = block.rows[0]
            first_row = (TableCell((anchor, *row[0].children)), *row[1:])
            return replace(block, rows=(first_row, *block.rows[1:]))
    return None
