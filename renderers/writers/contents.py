"""The table of contents (``toc``), decided once for every writer.

Which headings it lists, under what text and how deep: the headings of the body (not nested in
lists or quotes) except the one that shows the document's title and those their author kept
out (``{.unlisted}``) with their sections (:func:`body_outline`), three levels deep counted
from the shallowest of them, each under its visible text without citation numbers or note letters,
formulas in their linear form (``x²``, as a PPTX slide title shows them); then the Notes, a note
style's Citation notes and the Sources, at the top level (:func:`back_matter`). Both PDF engines
name a heading's outline entry with the same text. It goes right after the title and the
paragraphs directly under it, a byline or a lede (:func:`contents_position`). Writers say where
each entry points: HTML and PDF to the heading's id (PDF adds the page number), DOCX to the
heading's bookmark inside a Word TOC field, PPTX to the heading's slide on an agenda slide.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from renderers.document import Block, Heading, Paragraph, plain_text
from renderers.labels import Labels
from renderers.text import Direction, text_direction
from renderers.writers.common import ADDED_SECTION_LEVEL, citation_notes_heading

#: How many heading levels the contents list, from the shallowest listed.
CONTENTS_DEPTH = 3


@dataclass(frozen=True)
class ContentsEntry:
    """One line of the contents: its text, where it points, its nesting ``depth`` (1 = top
    level, never more than one deeper than the entry before) and the ``level`` of its heading
    (:data:`~renderers.writers.common.ADDED_SECTION_LEVEL` for the Notes and Sources)."""

    text: str
    anchor: str
    depth: int
    level: int

    @property
    def direction(self) -> Direction | None:
        return text_direction(self.text)


def contents_position(blocks: Sequence[Block], title: Heading | None) -> int:
    """Where the contents go among ``blocks`` (an index to insert at): after the heading that
    shows the title (or at the start, under the title a writer adds) and the paragraphs that
    follow it before any other block, which belong with the title, not after the contents."""
    start = next((i + 1 for i, block in enumerate(blocks) if block is title), 0)
    while start < len(blocks) and isinstance(blocks[start], Paragraph):
        start += 1
    return start


@dataclass(frozen=True)
class Outline:
    """A body's headings as the contents and both PDF engines' outlines see them.

    ``title`` is the heading that shows the document's title
    (:func:`~renderers.writers.common.document_title`), listed in no contents; ``sectioned``
    holds (by ``id()``) the body's headings inside a section their author kept out
    (:func:`body_outline`). Made by each writer, which knows the title; a heading outside the
    body's own blocks (in a list, a quote, the abstract) answers by its own attribute."""

    blocks: Sequence[Block]
    title: Heading | None
    sectioned: frozenset[int]

    def lists(self, heading: Heading) -> bool:
        """Whether the PDF outline lists ``heading`` (DOCX: not "body text"; HTML: no
        ``unlisted`` class), and the contents unless it shows the title: not when its author
        kept it out (pandoc's ``.unlisted``, :attr:`Heading.listed`) nor when it is inside a
        section so kept out. The one rule for every writer's contents and PDF outline."""
        return heading.listed and id(heading) not in self.sectioned


def body_outline(blocks: Sequence[Block], title: Heading | None) -> Outline:
    """The :class:`Outline` of a body's ``blocks`` whose title ``title`` shows (None: no
    heading of the body shows it, a writer adds it above).

    Pandoc leaves an ``.unlisted`` section out of the contents whole, its sub-headings with
    it; kept in, they hung under the section before it in one engine's outline and beside it
    in the other's. A section runs to the next heading of its level or above; a heading in a
    list or a quote starts none, and nor does ``title`` (listed in no contents: kept out, it
    keeps only itself out of the PDF outline). Decided here, where the title is known, not by
    the readers: which heading shows it depends on ``--title``."""
    headings = [block for block in blocks if isinstance(block, Heading)]
    inside = in_kept_out_sections(
        (heading.level, not heading.listed and heading is not title) for heading in headings)
    sectioned = frozenset(id(h) for h, hidden in zip(headings, inside, strict=True) if hidden)
    return Outline(blocks, title, sectioned)


def in_kept_out_sections(headings: Iterable[tuple[int, bool]]) -> list[bool]:
    """For each of a body's section headings, given in order as ``(level, kept_out)``
    (``kept_out``: its author kept it out and it does not show the title), whether it lies
    inside a kept-out section, which runs to the next heading of its level or above. The
    section rule of :func:`body_outline`, and of an HTML input's own look
    (:func:`renderers.writers.html.contents.keep_out_sections`)."""
    inside: list[bool] = []
    hidden: int | None = None  # the level of the kept-out section the headings are in
    for level, kept_out in headings:
        if hidden is not None and level <= hidden:
            hidden = None
        inside.append(hidden is not None)
        if hidden is None and kept_out:
            hidden = level
    return inside


def contents_headings(
    outline: Outline,
    anchor: Callable[[Heading], str],
    words: Labels,
    *,
    deepest: int = 6,
) -> list[tuple[int, str, str]]:
    """The headings the contents may list, as ``(level, text, anchor)``: the body's own that
    ``outline`` lists, except the one that shows the title, none deeper than ``deepest``
    (PPTX: the slide level); ``anchor`` names each in the writer's output."""
    return [
        (block.level, heading_text(block, words), anchor(block)) for block in outline.blocks
        if isinstance(block, Heading) and block is not outline.title and block.level <= deepest
        and outline.lists(block)
    ]


def heading_text(heading: Heading, words: Labels) -> str:
    """What the contents and the PDF outline show for ``heading``: its visible text on one
    line, formulas in their linear form (``x²``, ``α``, as on a PPTX slide title; TeX means
    nothing to a reader), citation numbers and note letters left out, a reference to a figure
    in the document's ``words``."""
    return " ".join(plain_text(heading.children, "linear", words).split())


def contents_entries(
    headings: Iterable[tuple[int, str, str]],
    back_matter: Iterable[tuple[str, str]] = (),
) -> tuple[ContentsEntry, ...]:
    """The entries for ``headings`` given as ``(level, text, anchor)`` in document order (the
    anchor each has in the writer's output), then ``back_matter`` as ``(text, anchor)`` pairs
    (Notes, Sources) at the top level."""
    listed = [(level, text, anchor) for level, text, anchor in headings if text]
    top = min((level for level, _, _ in listed), default=1)
    entries: list[ContentsEntry] = []
    depth = 0
    for level, text, anchor in listed:
        wanted = level - top + 1
        if wanted > CONTENTS_DEPTH:
            continue
        depth = min(wanted, depth + 1)
        entries.append(ContentsEntry(text, anchor, depth, level))
    entries.extend(ContentsEntry(text, target, 1, ADDED_SECTION_LEVEL)
                   for text, target in back_matter if text)
    return tuple(entries)


def back_matter(
    words: Labels,
    *,
    notes: str = "",
    citation_notes: str = "",
    sources: str = "",
    sources_heading: str = "",
) -> list[tuple[str, str]]:
    """The sections after the body as the contents lists them, ``(text, anchor)`` in the order
    writers put them: the author's Notes, a note style's Citation notes, the Sources. Each
    argument is the section's anchor in the writer's output ("" when it has none)."""
    sections = [
        (words.notes, notes),
        (citation_notes_heading(words, author_notes=bool(notes)), citation_notes),
        (sources_heading, sources),
    ]
    return [(text, anchor) for text, anchor in sections if anchor]
