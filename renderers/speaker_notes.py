"""Speaker notes in the document model: the two views of a document that holds them.

:class:`~renderers.document.SpeakerNotes` blocks are for the presenter. PPTX shows them on the
notes pages of their slides; every other format leaves them out, and so do their citations: a
source cited only in speaker notes is in the deck's Sources slide and in the deck's
``sources_used`` record, nowhere else. So that a source keeps the same number in every format,
the citations in speaker notes are numbered after all those of the body
(:func:`planning_order`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from renderers.document import (
    Block,
    BlockQuote,
    BulletList,
    Cite,
    FootnoteDef,
    ListItem,
    OrderedList,
    SpeakerNotes,
    iter_blocks,
    iter_inlines,
)


def has_speaker_notes(blocks: tuple[Block, ...]) -> bool:
    """Whether any block, nested ones included, is speaker notes."""
    return any(isinstance(block, SpeakerNotes) for block in iter_blocks(blocks))


def without_speaker_notes(blocks: tuple[Block, ...]) -> tuple[Block, ...]:
    """``blocks`` with every speaker-notes block removed, in lists and quotes too."""
    out: list[Block] = []
    for block in blocks:
        match block:
            case SpeakerNotes():
                continue
            case BulletList(items) | OrderedList(items):
                block = dataclasses.replace(block, items=tuple(
                    ListItem(without_speaker_notes(item.blocks), item.checked) for item in items
                ))
            case BlockQuote(inner) | FootnoteDef(_, inner):
                block = dataclasses.replace(block, blocks=without_speaker_notes(inner))
        out.append(block)
    return tuple(out)


def planning_order(blocks: tuple[Block, ...]) -> list[Cite]:
    """The citations of ``blocks`` in the order they are numbered: the body's in document
    order, then those inside speaker notes in document order."""
    if not has_speaker_notes(blocks):
        return [n for n in iter_inlines(blocks) if isinstance(n, Cite)]
    body = [n for n in iter_inlines(without_speaker_notes(blocks)) if isinstance(n, Cite)]
    notes = [n for n in iter_inlines(tuple(_outermost_notes(blocks))) if isinstance(n, Cite)]
    return body + notes


def _outermost_notes(blocks: tuple[Block, ...]) -> Iterator[SpeakerNotes]:
    """Every speaker-notes block not inside another one, in document order."""
    for block in blocks:
        match block:
            case SpeakerNotes():
                yield block
            case BulletList(items) | OrderedList(items):
                for item in items:
                    yield from _outermost_notes(item.blocks)
            case BlockQuote(inner) | FootnoteDef(_, inner):
                yield from _outermost_notes(inner)
