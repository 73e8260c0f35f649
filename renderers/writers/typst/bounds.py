"""What the Typst engine refuses before it starts: a paragraph of too many inline pieces, and
a document of too many pieces in all.

A compile is one call that ``limits.max_seconds`` cannot interrupt (the deadline is checked
before it starts and when it returns), so what Typst is handed must be bounded beforehand.
Typst lays out a paragraph in time that grows with the square of its inline pieces (text runs,
citation marks, links …): measured, one paragraph of 2,500 citations (5,000 pieces) took 0.8 s,
10,000 citations 4.5 s, 40,000 citations 38 s and 800 MB. Paragraphs people write hold tens of
pieces; the bound leaves them untouched and keeps the worst paragraph under a second.

The whole document grows linearly, but with a large factor in memory: a 1,999 × 50 table of
cited cells (1.0 MB of markdown, within every input limit) took 49 s and 4.3 GB. Measured with
``bench/typst_bounds_bench.py`` (one compile in a fresh process; peak = the process's VmHWM,
which is about 110 MiB before compiling; CPU seconds of the compile; 2-core machine):

=============================================  =======  =======  =====  ========
document                                       weighed  pieces   CPU    peak
=============================================  =======  =======  =====  ========
``samples/long-report.md`` (58 pages)          4,041    2,241    0.6 s  146 MiB
the same ten times (580 pages, the bench's)    31,770   22,410   4.0 s  842 MiB
2,000 × 10 table of ``x``                      40,020   20,010   1.7 s  345 MiB
500 × 50 table of ``x``                        50,100   25,050   2.7 s  387 MiB
266 × 50 table of ``x [[S:1]]`` (at the bound) 40,008   26,650   3.9 s  570 MiB
500 × 50 table of ``x [[S:1]]``                75,108   50,050   5.7 s  986 MiB
50,000 paragraphs ``x``                        50,000   50,000   2.6 s  490 MiB
20,000 paragraphs with a citation              60,008   60,000   3.6 s  622 MiB
4,000 paragraphs citing 4,000 sources          40,000   8,000    3.3 s  460 MiB
20,000 paragraphs citing 20,000 sources        200,000  40,000   15 s   2,079 MiB
a code block of 10,000 lines                   40,000   0        1.4 s  132 MiB
a code block of 40,000 lines                   160,000  0        16 s   312 MiB
=============================================  =======  =======  =====  ========

So a piece costs Typst about 0.1 ms and 8–12 KiB, a table cell about as much again besides
its contents, an entry of the Sources section about eight pieces (its title, link and
back-links: 70–80 KiB), and a code line about four pieces of time (a long code block grows
faster than linearly). :data:`MAX_DOCUMENT_PIECES` weighs them so; what it admits costs Typst
at most about 6 s of CPU and 1 GiB (a cited table near the bound, from the rows above; the
default ``max_seconds`` is 300), and a report of about 1,400 pages like the sample still fits:
the 580-page one the benchmark renders uses two fifths of it. Its 842 MiB are long text
runs, which cost by their characters (``max_content_bytes`` and ``max_pages`` bound those),
not by their number.
"""

from __future__ import annotations

from itertools import islice

from renderers.document import Block, CodeBlock, Table, inline_runs, iter_blocks, walk_inlines
from renderers.errors import LimitError

#: Inline pieces (nested ones counted) of one paragraph, heading, table cell or caption.
MAX_PARAGRAPH_PIECES = 5_000
#: Weighed pieces of one document (:func:`document_pieces`; figures in the module's text).
MAX_DOCUMENT_PIECES = 80_000
#: What a table cell weighs besides its inline pieces (an empty cell is laid out too).
CELL_PIECES = 1
#: What one entry of the Sources section weighs.
ENTRY_PIECES = 8
#: What one line of a code block weighs.
CODE_LINE_PIECES = 4


def check_paragraph_pieces(blocks: tuple[Block, ...]) -> None:
    """Raise :class:`LimitError` for the first run of inlines with more pieces than the bound."""
    for run in inline_runs(blocks):
        pieces = sum(1 for _ in islice(walk_inlines(run), MAX_PARAGRAPH_PIECES + 1))
        if pieces > MAX_PARAGRAPH_PIECES:
            raise LimitError(
                f"typst: a paragraph has more than {MAX_PARAGRAPH_PIECES:,} inline pieces "
                "(text runs, citations, links); Typst's layout of it grows with their square "
                "and cannot be interrupted; accepted: shorter paragraphs, or pdf_engine "
                "'weasyprint'"
            )



def document_pieces(blocks: tuple[Block, ...], entries: int = 0) -> int:
    """The weighed pieces of a document of ``blocks`` with ``entries`` Sources entries: every
    inline piece (nested ones and those of notes, lists, quotes, cells and captions counted),
    :data:`CELL_PIECES` per table cell, :data:`ENTRY_PIECES` per entry and
    :data:`CODE_LINE_PIECES` per code line. Counting stops just past :data:`MAX_DOCUMENT_PIECES`."""
    total = entries * ENTRY_PIECES
    for block in iter_blocks(blocks):
        match block:
            case Table(header, rows):
                total += CELL_PIECES * (len(header) + sum(len(row) for row in rows))
            case CodeBlock(text):
                total += CODE_LINE_PIECES * (text.count("\n") + (not text.endswith("\n")))
        if total > MAX_DOCUMENT_PIECES:
            return total
    for run in inline_runs(blocks):
        total += sum(1 for _ in walk_inlines(run))
        if total > MAX_DOCUMENT_PIECES:
            break
    return total


def check_document_pieces(blocks: tuple[Block, ...], entries: int = 0) -> None:
    """Raise :class:`LimitError` when the document weighs more than :data:`MAX_DOCUMENT_PIECES`
    pieces: Typst's compile of it would run past ``limits.max_seconds`` and hold gigabytes
    without a way to stop it."""
    if document_pieces(blocks, entries) > MAX_DOCUMENT_PIECES:
        raise LimitError(
            f"typst: the document has more than {MAX_DOCUMENT_PIECES:,} pieces (inline pieces, "
            f"and table cells, Sources entries and code lines weighed as {CELL_PIECES}, "
            f"{ENTRY_PIECES} and {CODE_LINE_PIECES}); Typst's compile of it cannot be "
            "interrupted and its time and memory grow with them; accepted: a shorter "
            "document (or several), or pdf_engine 'weasyprint'"
        )
