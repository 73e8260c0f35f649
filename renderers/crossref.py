"""The cross-reference pass: number labelled figures and tables, resolve ``@fig:…``/``@tbl:…``.

Runs once, at resolve time, after the citation pass (:func:`renderers.resolve.resolve` calls
it), so writers only show what it decided: a labelled :class:`Figure` or :class:`Table` gets
its number (figures and tables counted apart, in document order), every :class:`CrossRef` to a
known label the same number, and a reference nothing defines stays the text the author wrote,
with a warning. A label defined twice keeps its first definition; the second is numbered as
any figure, but references go to the first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from renderers.document import (
    Block,
    BlockQuote,
    BulletList,
    CrossRef,
    CrossRefKind,
    Emph,
    Figure,
    FootnoteDef,
    Heading,
    Inline,
    Link,
    ListItem,
    OrderedList,
    Paragraph,
    Strike,
    Strong,
    Styled,
    Table,
    TableCell,
    Text,
    iter_blocks,
    label_kind,
)

InlineFn = Callable[[Inline], Inline]


def number_crossrefs(blocks: tuple[Block, ...]) -> tuple[tuple[Block, ...], list[str]]:
    """``blocks`` with figures, tables and references numbered, and the warnings this gave."""
    numbers: dict[str, int] = {}
    counters: dict[CrossRefKind, int] = {"fig": 0, "tbl": 0}
    warnings: list[str] = []
    for block in iter_blocks(blocks):
        if isinstance(block, Figure | Table) and block.label:
            kind = label_kind(block.label)
            counters[kind] += 1
            if block.label in numbers:
                warnings.append(f"label {block.label!r} is defined twice; references go to the "
                                "first")
            else:
                numbers[block.label] = counters[kind]
    if not numbers and not _has_refs(blocks):
        return blocks, warnings
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
            return Text(f"@{node.label}")
        return dataclasses.replace(node, number=number)

    mapped = map_blocks(blocks, number_ref, number_block)
    warnings += [f"cross-reference to unknown label {label!r} kept as text" for label in unknown]
    return mapped, warnings


def _has_refs(blocks: tuple[Block, ...]) -> bool:
    from renderers.document import iter_inlines

    return any(isinstance(node, CrossRef) for node in iter_inlines(blocks))


def map_blocks(
    blocks: tuple[Block, ...], inline: InlineFn, block_fn: Callable[[Block], Block]
) -> tuple[Block, ...]:
    """``blocks`` with ``inline`` applied to every leaf inline and ``block_fn`` to every block
    (after its contents were mapped), in document order."""
    out: list[Block] = []
    for block in blocks:
        match block:
            case Heading(children=children) | Paragraph(children=children):
                block = dataclasses.replace(block, children=_map_inlines(children, inline))
            case BulletList(items) | OrderedList(items):
                block = dataclasses.replace(block, items=tuple(
                    ListItem(map_blocks(i.blocks, inline, block_fn), i.checked) for i in items
                ))
            case Table(header, rows, _, caption):
                block = dataclasses.replace(
                    block,
                    header=_map_cells(header, inline),
                    rows=tuple(_map_cells(row, inline) for row in rows),
                    caption=_map_inlines(caption, inline),
                )
            case BlockQuote(blocks=inner) | FootnoteDef(blocks=inner):
                block = dataclasses.replace(block, blocks=map_blocks(inner, inline, block_fn))
            case Figure(caption=caption):
                block = dataclasses.replace(block, caption=_map_inlines(caption, inline))
        out.append(block_fn(block))
    return tuple(out)


def _map_cells(cells: tuple[TableCell, ...], inline: InlineFn) -> tuple[TableCell, ...]:
    return tuple(TableCell(_map_inlines(cell.children, inline)) for cell in cells)


def _map_inlines(nodes: tuple[Inline, ...], inline: InlineFn) -> tuple[Inline, ...]:
    out: list[Inline] = []
    for node in nodes:
        match node:
            case Emph(children) | Strong(children) | Strike(children) | Styled(_, children) | Link(
                _, children
            ):
                out.append(dataclasses.replace(node, children=_map_inlines(children, inline)))
            case _:
                mapped = inline(node)
                last = out[-1] if out else None
                if isinstance(mapped, Text) and isinstance(last, Text):
                    out[-1] = Text(last.text + mapped.text)  # an unknown label's text
                else:
                    out.append(mapped)
    return tuple(out)
