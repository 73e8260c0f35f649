"""The style pass: a resolved document → the same document in a citation style and format.

It runs after the citation pass (numbers and anchors are set) and before any writer, like
pandoc's citeproc filter: every ``Cite`` gets the inlines it shows (``Cite.children``) or its
note (``Cite.note``), every Sources entry its styled inlines and marker, and the entries take
the style's bibliography order. Writers then show IR they already know; none formats a
citation itself.

Which form a citation takes:

* a note style (``chicago-note``): note number K, its text the style's note;
* ``citation_format="inline-links"``: the cited sources' titles, each linked to the source
  (to its entry when it has no URL);
* an author-date style: the style's citation, "(IEA, 2025; Smith and Doe, 2023)", each source
  linked to its entry;
* ``citation_format="brackets"``: "[1–3, 5]", each number linked to its entry;
* otherwise the linked superscript numbers (``children`` stays empty).
"""

from __future__ import annotations

import dataclasses

from citations.numbering import display_segments
from renderers.document import (
    Cite,
    Inline,
    Link,
    Text,
    iter_inlines,
    map_document,
    reading_blocks,
)
from renderers.language import language_for
from renderers.options import RenderOptions
from renderers.resolve import ResolvedDocument, SourceEntry, entry_target
from renderers.styles.catalog import CslStyle, load_style
from renderers.styles.locales import csl_locale
from renderers.styles.processor import StyledDocument, format_document

#: After these characters an inline citation needs no space before it.
_NO_SPACE_AFTER = frozenset(" \t\n\u00a0([{\u201c\u2018\"'/")


def apply_style(rdoc: ResolvedDocument, options: RenderOptions) -> ResolvedDocument:
    """``rdoc`` in ``options.csl`` and ``options.citation_format``; unchanged for the default.
    The style speaks the document's declared language (:func:`csl_locale`)."""
    if not options.csl and options.citation_format == "superscript":
        return rdoc
    style = load_style(options.csl, options) if options.csl else None
    cites = [n for n in iter_inlines(reading_blocks(rdoc.document))
             if isinstance(n, Cite) and n.numbers]
    styled = None
    if style is not None:
        locale = csl_locale(language_for(rdoc, options), style.default_locale)
        styled = format_document(style, rdoc.entries, cites, locale)
    entries = {entry.number: entry for entry in rdoc.entries}
    notes = {c.anchor: k for k, c in enumerate(cites, start=1)} if style and style.is_note else {}

    def restyle(node: Inline) -> Inline:
        if not isinstance(node, Cite) or not node.numbers:
            return node
        if node.anchor in notes and styled is not None:
            return dataclasses.replace(
                node, children=styled.citations[node.anchor], note=notes[node.anchor]
            )
        return dataclasses.replace(
            node, children=_inline_form(node, style, styled, options, entries)
        )

    document = map_document(rdoc.document, restyle, tidy=_spaced_run)
    return dataclasses.replace(
        rdoc,
        document=document,
        entries=_entries(rdoc.entries, styled),
        style=style.name if style is not None else "",
    )


def _inline_form(
    cite: Cite,
    style: CslStyle | None,
    styled: StyledDocument | None,
    options: RenderOptions,
    entries: dict[int, SourceEntry],
) -> tuple[Inline, ...]:
    if options.citation_format == "inline-links":
        return inline_links(cite.numbers, entries)
    if style is not None and style.is_author_date and styled is not None:
        return styled.citations[cite.anchor]
    if options.citation_format == "brackets":
        return brackets(cite.numbers)
    return ()


def brackets(numbers: tuple[int, ...]) -> tuple[Inline, ...]:
    """``[1–3, 5]``: the compressed numbers in brackets, each linked to its entry."""
    inner: list[Inline] = [
        Text(text) if number is None else Link(entry_target(number), (Text(text),))
        for text, number in display_segments(numbers)
    ]
    return (Text("["), *inner, Text("]"))


def inline_links(numbers: tuple[int, ...], entries: dict[int, SourceEntry]) -> tuple[Inline, ...]:
    """``(Title A; Title B)``: each cited source's title, linked to the source itself (to its
    entry when it has no URL)."""
    parts: list[Inline] = [Text("(")]
    for index, number in enumerate(numbers):
        entry = entries[number]
        if index:
            parts.append(Text("; "))
        parts.append(Link(entry.url or entry_target(number), (Text(entry.title),)))
    parts.append(Text(")"))
    return tuple(parts)


def _spaced_run(run: list[Inline]) -> tuple[Inline, ...]:
    """A run of inlines whose in-line citations are set off from the word before them by one
    space."""
    out: list[Inline] = []
    for node in run:
        if isinstance(node, Cite) and node.children and not node.note and out:
            previous = out[-1]
            if not (isinstance(previous, Text)
                    and (not previous.text or previous.text[-1] in _NO_SPACE_AFTER)):
                node = dataclasses.replace(node, children=(Text(" "), *node.children))
        out.append(node)
    return tuple(out)


def _entries(
    entries: tuple[SourceEntry, ...], styled: StyledDocument | None
) -> tuple[SourceEntry, ...]:
    """The entries in the style's order, each with its styled inlines and marker."""
    if styled is None:
        return entries
    by_number = {entry.number: entry for entry in entries}
    return tuple(
        dataclasses.replace(
            by_number[number],
            formatted=styled.entries[number].inlines,
            marker=styled.entries[number].marker,
        )
        for number in styled.order
    )
