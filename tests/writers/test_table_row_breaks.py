"""Where WeasyPrint breaks a table across pages, read back from the PDF's pages: never one body
row alone on either side (long-report.pdf had "China" alone under the repeated header at the top
of page 3)."""

from __future__ import annotations

import pypdfium2 as pdfium

from tests.support.render import render_markdown

ROWS = 6
TABLE = "| Region | 2024 |\n|---|---:|\n" + "".join(f"| Row{n}x | {n} |\n" for n in range(ROWS))


def rows_per_page(pdf: bytes) -> list[int]:
    """How many of the table's body rows each page holding some of them shows."""
    counts = []
    for page in pdfium.PdfDocument(pdf):
        text = page.get_textpage().get_text_range()
        shown = sum(f"Row{n}x" in text for n in range(ROWS))
        if shown:
            counts.append(shown)
    return counts


def test_no_body_row_is_left_alone_at_a_page_break() -> None:
    """The table is pushed down the first page a paragraph at a time, so that the page break
    falls after each of its rows in turn."""
    splits = []
    for filler in range(54, 61):
        paragraphs = "".join(f"Paragraph {n} of the filler.\n\n" for n in range(filler))
        counts = rows_per_page(render_markdown("pdf", f"# T\n\n{paragraphs}{TABLE}", []))
        assert sum(counts) == ROWS
        if len(counts) > 1:
            splits.append(counts)
            assert min(counts) >= 2, f"{filler} paragraphs: rows per page {counts}"
    assert {(2, 4), (3, 3), (4, 2)} <= {tuple(c) for c in splits}, splits
