"""Display numbers for citations and their compressed display (``1–3, 5``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from citations.model import Source

if TYPE_CHECKING:
    from citations.pool import SourcePool

NumberingMode = Literal["appearance", "sid"]
EN_DASH = "\u2013"
NUMBER_SEPARATOR = ", "  # between the numbers (and runs) one citation shows


@dataclass(frozen=True)
class CitationPlan:
    """The outcome of numbering a document's citations against a pool.

    - ``numbers``: sid → display number, for every known cited sid (two sids of one deduped
      source share a number);
    - ``order``: the known cited sids in order of first appearance, each once;
    - ``entries``: ``(number, source)`` for the Sources section, in number order; the source is
      the first-cited row of its dedupe group;
    - ``unknown_sids``: cited sids missing from the pool, in order of first appearance.
    """

    numbers: dict[int, int]
    order: tuple[int, ...]
    entries: tuple[tuple[int, Source], ...]
    unknown_sids: tuple[int, ...]

    def numbers_for(self, sids: Iterable[int]) -> tuple[int, ...]:
        """Sorted, de-duplicated display numbers of the known ``sids``."""
        return tuple(sorted({self.numbers[s] for s in sids if s in self.numbers}))

    def linked_sids(self, sids: Iterable[int]) -> tuple[int, ...]:
        """The known ``sids`` in their written order, each once: what a written citation
        records (HTML ``data-sids``) so that reading it back numbers it alike, by appearance
        (the order is kept) and by sid (a deduplicated source keeps the sid that was cited)."""
        return tuple(dict.fromkeys(s for s in sids if s in self.numbers))


def plan_citations(
    groups: Iterable[Sequence[int]],
    pool: SourcePool,
    numbering: NumberingMode = "appearance",
) -> CitationPlan:
    """Number the citations ``groups`` (each the sids of one citation, in document order)."""
    if numbering not in ("appearance", "sid"):
        raise ValueError(f"numbering={numbering!r}: accepted values are 'appearance', 'sid'")
    numbers: dict[int, int] = {}
    group_number: dict[int, int] = {}  # canonical sid -> number
    first_source: dict[int, Source] = {}  # number -> source
    order: list[int] = []
    unknown: list[int] = []
    seen_unknown: set[int] = set()
    for group in groups:
        for sid in group:
            if sid in numbers:
                continue
            source = pool.get(sid)
            if source is None:
                if sid not in seen_unknown:
                    seen_unknown.add(sid)
                    unknown.append(sid)
                continue
            canonical = pool.canonical_sid(sid)
            number = group_number.get(canonical)
            if number is None:
                number = canonical if numbering == "sid" else len(group_number) + 1
                group_number[canonical] = number
                first_source[number] = source
            numbers[sid] = number
            order.append(sid)
    entries = tuple(sorted(first_source.items()))
    return CitationPlan(numbers, tuple(order), entries, tuple(unknown))


def number_runs(numbers: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted, de-duplicated ``numbers`` as inclusive runs: ``[1,2,3,5]`` → ``[(1,3),(5,5)]``."""
    runs: list[tuple[int, int]] = []
    for n in sorted(set(numbers)):
        if runs and n == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return runs


def display_segments(
    numbers: Iterable[int], *, joined: bool = False
) -> list[tuple[str, int | None]]:
    """The display of ``numbers`` as ``(text, number)`` pieces; separators carry ``None``.

    Runs of three or more collapse to ``first–last``; a run of two shows both (``1, 2``).
    ``joined``: the numbers stand right after another citation's, so they open with the
    separator (``²,³``; side by side ``²³`` would read as source 23).
    Writers link every piece whose number is not None.
    """
    pieces: list[tuple[str, int | None]] = []
    for first, last in number_runs(numbers):
        if pieces:
            pieces.append((NUMBER_SEPARATOR, None))
        if last - first >= 2:
            pieces += [(str(first), first), (EN_DASH, None), (str(last), last)]
        elif last == first + 1:
            pieces += [(str(first), first), (NUMBER_SEPARATOR, None), (str(last), last)]
        else:
            pieces.append((str(first), first))
    return joined_lead(joined) + pieces if pieces else pieces


def note_segments(note: int, *, joined: bool = False) -> list[tuple[str, int | None]]:
    """The display of note number ``note`` of a note style, as :func:`display_segments`
    pieces: the number, led by the separator when ``joined``."""
    return [*joined_lead(joined), (str(note), note)]


def joined_lead(joined: bool) -> list[tuple[str, int | None]]:
    """What opens the mark of a citation (numbers or a note's number) that stands right after
    another citation's: the separator, so the pair reads ``²,³`` (side by side ``²³`` would
    read as 23); nothing otherwise. A Word footnote reference shows its own number, so the
    DOCX writer writes this lead before it."""
    return [(NUMBER_SEPARATOR, None)] if joined else []


def format_numbers(numbers: Iterable[int]) -> str:
    """Compressed display of ``numbers``: ``[5, 1, 2, 3]`` → ``"1–3, 5"``."""
    return "".join(text for text, _ in display_segments(numbers))
