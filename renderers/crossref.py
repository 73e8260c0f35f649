"""The cross-reference pass: number labelled figures, tables, displayed equations and code
listings, resolve ``@fig:…``/``@tbl:…``/``@eq:…``/``@lst:…`` and ``@sec:…``, and word a group of
references as one (``[@fig:a; @fig:b; @fig:c]``).

Runs once, at resolve time, after the citation pass (:func:`renderers.resolve.resolve` calls
it), so writers only show what it decided: a labelled :class:`Figure`, :class:`Table`,
:class:`CodeBlock` or displayed :class:`Math` gets its number (each kind counted apart, in
document order; a formula with its own ``\\tag`` takes none, as in amsmath: its tag is its
mark, and a reference to its label stays text with an ``unknown-label`` note saying so),
every :class:`CrossRef` to a known label the same number, and a reference nothing defines
stays the text the author wrote, with an ``unknown-label`` diagnostic. A label defined twice
(``duplicate-label``) keeps its first definition; the second is numbered as any figure, but
references go to the first. A capitalised prefix (``@Fig:a``) names the same label
(:func:`~renderers.document.label_key`).

Headings are not numbered, so a reference to one (``@sec:intro`` for ``# Intro {#sec:intro}``)
becomes a link to it showing its title: a "Section 2" would name a number the reader sees
nowhere. A group keeps the author's order of kinds and words each run of one kind and form
once, its numbers sorted and joined in the document's words ("Figures 1, 3 and 5"; three or
more consecutive ones as a range, "Figures 1–3", as pandoc-crossref writes them); the joiners
and plural names are the writers' to spell (:meth:`CrossRef.lead`). An author's own prefix
(``[Chart @fig:a; Chart @fig:b]``, :attr:`CrossRef.prefix`) stands for the name, and only
references with the same prefix share one, as pandoc-crossref groups them. An unknown label in a
group stays as written after the numbered ones, joined as they are ("Figures 1 and 2 and
@fig:zz"; pandoc-crossref shows a bold "¿fig:zz?" in its place, but a lone unknown reference
here keeps its text, and so does one of a group), with its ``unknown-label`` note; a group of
unknown labels only is each as written, joined so. A group holding a heading's reference falls
back to each reference on its own, joined by commas.

A reference inside the author's link (``[see @fig:a](https://…)``) is not linked: a link cannot
hold another (HTML's nested ``<a>`` is invalid, Markdown's inner link wins on re-reading), so the
author's link wins and the reference shows its words inside it, a heading's title as plain text
(:attr:`CrossRef.linked`, which every writer honours).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import cast

from renderers.diagnostics import Code, Diagnostic
from renderers.document import (
    Block,
    CodeBlock,
    CrossRef,
    CrossRefJoiner,
    CrossRefKind,
    Figure,
    Heading,
    Inline,
    Link,
    Math,
    Paragraph,
    Table,
    Text,
    iter_blocks,
    iter_inlines,
    label_key,
    label_kind,
    map_blocks,
    plain_text,
    section_label,
    walk_inlines,
)

#: The blocks a label numbers (a displayed equation is an inline: :class:`Math`).
_Numbered = (Figure, Table, CodeBlock)


def number_crossrefs(blocks: tuple[Block, ...]) -> tuple[tuple[Block, ...], list[Diagnostic]]:
    """``blocks`` with figures, tables, equations and references numbered, and the diagnostics
    this gave (``duplicate-label``, ``unknown-label``)."""
    numbers: dict[str, int] = {}
    counters: dict[CrossRefKind, int] = {"fig": 0, "tbl": 0, "eq": 0, "lst": 0}
    notes: list[Diagnostic] = []
    tagged: set[str] = set()
    for label in _numbered_labels(blocks, tagged):
        kind = label_kind(label)
        counters[kind] += 1
        if label_key(label) in numbers:
            notes.append(Diagnostic(
                Code.DUPLICATE_LABEL,
                f"label {label!r} is defined twice; references go to the first",
            ))
        else:
            numbers[label_key(label)] = counters[kind]
    if not numbers and not _has_refs(blocks):
        return blocks, notes
    sections = _sections(blocks)
    blocks = _unlink_in_links(blocks)
    counted: dict[CrossRefKind, int] = {"fig": 0, "tbl": 0, "eq": 0, "lst": 0}
    unknown: dict[str, None] = {}

    def number_block(block: Block) -> Block:
        if isinstance(block, _Numbered) and block.label:
            kind = label_kind(block.label)
            counted[kind] += 1
            return dataclasses.replace(block, number=counted[kind])
        return block

    def number_ref(node: Inline) -> Inline:
        if isinstance(node, CrossRef) and not section_label(node.label):
            return dataclasses.replace(node, number=numbers.get(label_key(node.label), 0))
        if isinstance(node, Math) and _equation_label(node) and label_key(
            node.label
        ) not in tagged:
            counted["eq"] += 1
            return dataclasses.replace(node, number=counted["eq"])
        return node

    def tidy(nodes: list[Inline]) -> tuple[Inline, ...]:
        out: list[Inline] = []
        for group in _groups(nodes):
            if isinstance(group, list):
                out += _resolve_group(group, sections, unknown)
            else:
                out.append(group)
        return _merge_text(out)

    mapped = map_blocks(blocks, number_ref, block_fn=number_block, tidy=tidy)
    notes += [Diagnostic(Code.UNKNOWN_LABEL, _unknown(label, tagged)) for label in unknown]
    return mapped, notes


def _unknown(label: str, tagged: set[str]) -> str:
    """Why a reference to ``label`` stays text: nothing defines it, or it names a formula whose
    own ``\\tag`` stands where a number would (``tagged``, by :func:`label_key`)."""
    if label_key(label) in tagged:
        return (f"cross-reference to {label!r} kept as text: that formula has its own \\tag, "
                "which stands in place of a number (write the tag in the text instead)")
    return f"cross-reference to unknown label {label!r} kept as text"


def _equation_label(node: Inline) -> str:
    """The label of a labelled displayed formula ("" for any other inline)."""
    return node.label if isinstance(node, Math) and node.display and node.label else ""


def _numbered_labels(blocks: tuple[Block, ...], tagged: set[str]) -> list[str]:
    """The labels that number something, in document order: figures', tables' and listings',
    then equations' (each kind is counted apart, so only the order within a kind matters). A
    tagged formula's label numbers nothing: it goes in ``tagged`` (by :func:`label_key`)."""
    labels = [
        block.label for block in iter_blocks(blocks) if isinstance(block, _Numbered)
        and block.label
    ]
    for node in iter_inlines(blocks):
        if isinstance(node, Math) and (label := _equation_label(node)):
            if _has_tag(node.tex):
                tagged.add(label_key(label))
            else:
                labels.append(label)
    return labels


def _has_tag(tex: str) -> bool:
    """Whether a displayed formula has its own margin tag (the TeX parser is loaded only by a
    labelled formula holding ``\\tag``)."""
    if "\\tag" not in tex:
        return False
    from renderers.math.marks import formula_tag

    return bool(formula_tag(tex))


def defined_labels(blocks: tuple[Block, ...]) -> frozenset[str]:
    """The labels a figure, table, listing, equation or heading of ``blocks`` defines (what a
    reference may name, by :func:`~renderers.document.label_key`)."""
    return frozenset(
        label_key(label) for label in _numbered_labels(blocks, set())
    ) | frozenset(_sections(blocks))


def _sections(blocks: tuple[Block, ...]) -> dict[str, Heading]:
    """The headings a ``@sec:`` reference may name: those whose author gave a ``sec`` id
    (``{#sec:intro}``; an id made from the text, as "sec-intro" from "Sec intro", is none)."""
    found: dict[str, Heading] = {}
    for block in iter_blocks(blocks):
        if isinstance(block, Heading) and block.given and section_label(block.id):
            found.setdefault(label_key(block.id), block)
    return found


def _groups(nodes: Sequence[Inline]) -> list[Inline | list[CrossRef]]:
    """``nodes`` with each group of references (one, or a bracket's several: every one after
    the first marked ``list`` by the reader) gathered in a list."""
    out: list[Inline | list[CrossRef]] = []
    for node in nodes:
        if not isinstance(node, CrossRef):
            out.append(node)
            continue
        last = out[-1] if out else None
        if node.joiner and isinstance(last, list):
            last.append(node)
        else:
            out.append([node])
    return out


def _resolve_group(
    group: list[CrossRef], sections: dict[str, Heading], unknown: dict[str, None]
) -> list[Inline]:
    """What a group of references shows: its numbered references worded as one, then each
    unknown one as written (a reference alone: :func:`_as_written`); a group holding a
    heading's reference falls back to each reference on its own."""
    if any(section_label(ref.label) for ref in group):
        return _each_alone(group, sections, unknown)
    first: dict[str, CrossRef] = {}  # each unknown label once, as a number is shown once
    for ref in group:
        if not ref.number:
            first.setdefault(label_key(ref.label), ref)
            unknown.setdefault(ref.label, None)
    unresolved = list(first.values())
    if len(group) == 1 and unresolved:
        return [Text(_as_written(group[0], alone=True))]
    return list(_word_group([ref for ref in group if ref.number], unresolved))


def _each_alone(
    group: list[CrossRef], sections: dict[str, Heading], unknown: dict[str, None]
) -> list[Inline]:
    """A group holding a heading's reference, each reference on its own, joined by commas: a
    heading's a link to it showing its title, a numbered one its words, an unknown one its
    text as written."""
    out: list[Inline] = []
    for index, ref in enumerate(group):
        if index:
            out.append(Text(", "))
        heading = sections.get(label_key(ref.label)) if section_label(ref.label) else None
        if heading is not None:
            title = Text(plain_text(heading.children))
            out.append(Link(f"#{heading.id}", (title,)) if ref.linked else title)
        elif ref.number:
            out.append(dataclasses.replace(ref, joiner=""))
        else:
            unknown.setdefault(ref.label, None)
            out.append(Text(_as_written(ref, alone=len(group) == 1)))
    return out


def _as_written(ref: CrossRef, *, alone: bool) -> str:
    """The text an unknown reference stays: as the author wrote it, a prefixed one alone in
    its bracket with the bracket (``[Chart -@fig:zz]``: without it the words would read as
    prose about a "Chart"), any other without (``@fig:zz``; one of a group shows
    :attr:`CrossRef.written` after the group's joiner)."""
    return f"[{ref.written}]" if alone and ref.prefix else ref.written


def _unlink_in_links(blocks: tuple[Block, ...]) -> tuple[Block, ...]:
    """``blocks`` with every reference inside a link marked not to be linked (``blocks`` as
    they are when no link holds one)."""
    if not any(
        isinstance(node, Link) and any(isinstance(n, CrossRef) for n in walk_inlines(node.children))
        for node in iter_inlines(blocks)
    ):
        return blocks

    def tidy(nodes: list[Inline]) -> tuple[Inline, ...]:
        return tuple(
            dataclasses.replace(node, children=_unlinked(node.children))
            if isinstance(node, Link) else node
            for node in nodes
        )

    return map_blocks(blocks, _same, tidy=tidy)


def _unlinked(nodes: tuple[Inline, ...]) -> tuple[Inline, ...]:
    """``nodes`` with every reference in them, at any depth, marked not to be linked."""
    (paragraph,) = map_blocks((Paragraph(nodes),), _unlink)
    return cast(Paragraph, paragraph).children  # map_blocks keeps a block's kind


def _unlink(node: Inline) -> Inline:
    return dataclasses.replace(node, linked=False) if isinstance(node, CrossRef) else node


def _same(node: Inline) -> Inline:
    return node


def _word_group(group: list[CrossRef], unresolved: Sequence[CrossRef] = ()) -> list[CrossRef]:
    """A group of numbered references worded as one: each run of one kind and form named once,
    its numbers sorted, each shown once, three or more consecutive ones as a range; then each
    of the group's ``unresolved`` references (unknown labels) as its author wrote it, unlinked,
    after the group's joiner (", ", " and ": the writers spell it, as they do the rest)."""
    runs: list[list[CrossRef]] = []
    for ref in group:
        key = _run_key(ref)
        if runs and _run_key(runs[-1][0]) == key:
            runs[-1].append(ref)
        else:
            runs.append([ref])
    out: list[CrossRef] = []
    count = len(runs) + len(unresolved)
    for index, run in enumerate(runs):
        joiner = _joiner(index, count)
        by_number = {ref.number: ref for ref in reversed(run)}  # the first of each number
        ordered = [by_number[n] for n in sorted(by_number)]
        named = run[0].form == "name"
        form = "names" if named and len(ordered) > 1 else run[0].form
        items = _items(ordered)
        for place, item in enumerate(items):
            first = dataclasses.replace(
                item[0], form=form if not place else "number",
                joiner=joiner if not place else _joiner(place, len(items)),
            )
            out.append(first)
            if len(item) > 1:
                out.append(dataclasses.replace(item[-1], form="number", joiner="range"))
    return out + [  # number 0: every writer shows its text as written (CrossRef.shown)
        dataclasses.replace(ref, joiner=_joiner(len(runs) + index, count), linked=False)
        for index, ref in enumerate(unresolved)
    ]


def _run_key(ref: CrossRef) -> tuple[CrossRefKind, str, str]:
    """What the references of one run share: kind, form and the author's prefix."""
    return label_kind(ref.label), ref.form, ref.prefix


def _items(refs: list[CrossRef]) -> list[list[CrossRef]]:
    """Sorted references cut into items: a range (its first and last) for three or more
    consecutive numbers, one reference each otherwise."""
    chains: list[list[CrossRef]] = []
    for ref in refs:
        if chains and chains[-1][-1].number + 1 == ref.number:
            chains[-1].append(ref)
        else:
            chains.append([ref])
    items: list[list[CrossRef]] = []
    for chain in chains:
        if len(chain) >= 3:
            items.append([chain[0], chain[-1]])
        else:
            items += [[ref] for ref in chain]
    return items


def _joiner(place: int, count: int) -> CrossRefJoiner:
    """What comes before the item at ``place`` of ``count``: nothing, ", " or " and "."""
    if not place:
        return ""
    return "last" if place == count - 1 else "list"


def _has_refs(blocks: tuple[Block, ...]) -> bool:
    return any(isinstance(node, CrossRef) for node in iter_inlines(blocks))


def _merge_text(nodes: list[Inline]) -> tuple[Inline, ...]:
    """Adjacent text joined (an unknown label's text next to the prose around it)."""
    out: list[Inline] = []
    for node in nodes:
        last = out[-1] if out else None
        if isinstance(node, Text) and isinstance(last, Text):
            out[-1] = Text(last.text + node.text)
        else:
            out.append(node)
    return tuple(out)
