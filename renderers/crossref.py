"""The cross-reference pass: number labelled figures and tables, resolve ``@fig:…``/``@tbl:…``.

Runs once, at resolve time, after the citation pass (:func:`renderers.resolve.resolve` calls
it), so writers only show what it decided: a labelled :class:`Figure` or :class:`Table` gets
its number (figures and tables counted apart, in document order), every :class:`CrossRef` to a
known label the same number, and a reference nothing defines stays the text the author wrote,
with an ``unknown-label`` diagnostic. A label defined twice (``duplicate-label``) keeps its
first definition; the second is numbered as any figure, but references go to the first.
"""

from __future__ import annotations

import dataclasses

from renderers.diagnostics import Code, Diagnostic
from renderers.document import (
    Block,
    CrossRef,
    CrossRefKind,
    Figure,
    Inline,
    Table,
    Text,
    iter_blocks,
    iter_inlines,
    label_kind,
    map_blocks,
)


def number_crossrefs(blocks: tuple[Block, ...]) -> tuple[tuple[Block, ...], list[Diagnostic]]:
    """``blocks`` with figures, tables and references numbered, and the diagnostics this gave
    (``duplicate-label``, ``unknown-label``)."""
    numbers: dict[str, int] = {}
    counters: dict[CrossRefKind, int] = {"fig": 0, "tbl": 0}
    notes: list[Diagnostic] = []
    for block in iter_blocks(blocks):
        if isinstance(block, Figure | Table) and block.label:
            kind = label_kind(block.label)
            counters[kind] += 1
            if block.label in numbers:
                notes.append(Diagnostic(
                    Code.DUPLICATE_LABEL,
                    f"label {block.label!r} is defined twice; references go to the first",
                ))
            else:
                numbers[block.label] = counters[kind]
    if not numbers and not _has_refs(blocks):
        return blocks, notes
    counted: dict[CrossRefKind, int] = {"fig": 0, "tbl": 0}
    unknown: dict[str, None] = {}

    def number_block(block: Block) -> Block:
        if isinstance(block, Figure | Table) and block.label:
            kind = label_kind(block.label)
            counted[kind] += 1
            return dataclasses.replace(block, number=counted[kind])
        return block

    def number_ref(node: Inline) -> Inline:
        if not isinstance(node, CrossRef):
            return node
        number = numbers.get(node.label)
        if number is None:
            unknown.setdefault(node.label, None)
            return Text(node.written)
        return dataclasses.replace(node, number=number)

    mapped = map_blocks(blocks, number_ref, block_fn=number_block, tidy=_merge_text)
    notes += [
        Diagnostic(Code.UNKNOWN_LABEL, f"cross-reference to unknown label {label!r} kept as text")
        for label in unknown
    ]
    return mapped, notes


def defined_labels(blocks: tuple[Block, ...]) -> frozenset[str]:
    """The labels a figure or table of ``blocks`` defines (what a reference may name)."""
    return frozenset(
        block.label for block in iter_blocks(blocks)
        if isinstance(block, Figure | Table) and block.label
    )


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
