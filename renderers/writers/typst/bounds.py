"""What the Typst engine refuses before it starts: a paragraph of too many inline pieces.

Typst lays out a paragraph in time that grows with the square of its inline pieces (text runs,
citation marks, links …), and a compile is one call that ``limits.max_seconds`` cannot
interrupt: measured, one paragraph of 2,500 citations (5,000 pieces) took 0.8 s, 10,000
citations 4.5 s, 40,000 citations 38 s and 800 MB. Paragraphs people write hold tens of
pieces; the bound leaves them untouched and keeps the worst paragraph under a second.
"""

from __future__ import annotations

from itertools import islice

from renderers.document import Block, inline_runs, walk_inlines
from renderers.errors import LimitError

#: Inline pieces (nested ones counted) of one paragraph, heading, table cell or caption.
MAX_PARAGRAPH_PIECES = 5_000


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
