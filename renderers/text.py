"""Text helpers over the IR: the visible text of a document and unique heading ids."""

from __future__ import annotations

import re
import unicodedata

from renderers.document import (
    Block,
    BlockQuote,
    BulletList,
    CodeBlock,
    Document,
    Figure,
    FootnoteDef,
    Heading,
    OrderedList,
    Paragraph,
    RawBlock,
    Table,
    ThematicBreak,
    plain_text,
)

_NOT_SLUG = re.compile(r"[^\w\- ]+")
_DASHES = re.compile(r"[\s\-]+")
#: Anchors that writers generate themselves; a heading never takes one of them.
_RESERVED = re.compile(r"^(?:sources|(?:cite|src|fn|fnref)-\d+)$")


def document_text(document: Document) -> str:
    """The visible text of ``document``, one line per block (citations omitted).

    Code and raw blocks contribute their verbatim text, images their alt text, tables every cell.
    """
    lines: list[str] = []
    _collect(document.blocks, lines)
    return "\n".join(lines)


def _collect(blocks: tuple[Block, ...], lines: list[str]) -> None:
    for block in blocks:
        match block:
            case Heading(children=children) | Paragraph(children):
                lines.append(plain_text(children))
            case BulletList(items) | OrderedList(items):
                for item in items:
                    _collect(item.blocks, lines)
            case Table(header, rows, _, caption):
                for row in (header, *rows):
                    lines.append(" ".join(plain_text(cell.children) for cell in row))
                lines.append(plain_text(caption))
            case CodeBlock(text) | RawBlock(text):
                lines.append(text)
            case BlockQuote(inner) | FootnoteDef(_, inner):
                _collect(inner, lines)
            case Figure(image, caption):
                lines.append(image.alt)
                lines.append(plain_text(caption))
            case ThematicBreak():
                pass


def slugify(text: str) -> str:
    """A GitHub-style anchor: lower case, words joined by ``-`` (``section`` when empty)."""
    normalized = unicodedata.normalize("NFKC", text).strip().lower()
    slug = _DASHES.sub("-", _NOT_SLUG.sub("", normalized)).strip("-")
    return slug or "section"


class HeadingIds:
    """Hands out unique heading ids (``intro``, ``intro-1`` …), never a writer's own anchors."""

    def __init__(self) -> None:
        self._used: set[str] = set()

    def assign(self, text: str) -> str:
        """A fresh id for a heading whose visible text is ``text``."""
        base = slugify(text)
        candidate = base
        counter = 0
        while candidate in self._used or _RESERVED.match(candidate):
            counter += 1
            candidate = f"{base}-{counter}"
        self._used.add(candidate)
        return candidate
