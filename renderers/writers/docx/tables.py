"""A DOCX table's column widths, from what its cells hold.

Word and LibreOffice take the widths the document gives (the writer fixes the layout), so the
writer decides them as the slides do, by the one shared rule
(:func:`~renderers.writers.common.column_widths`): this module only measures each column's
needs, in twips. Equal columns broke "PagedAttention" and URLs in a narrow notes column.
"""

from __future__ import annotations

from collections.abc import Sequence

from renderers.fonts import FontFace, default_fonts, font_face
from renderers.writers.common import ColumnNeed, column_widths, distribute

#: The body text's size in twips (11 pt, the default template's and most reference DOCX's).
TEXT_SIZE = 220
#: Measured widths are grown by a fifth: the text is measured in the installed sans face
#: (Liberation Sans, Arial's metrics), while the reader sets it in its own: Calibri is
#: narrower, but LibreOffice without Calibri or Carlito drew a table in Noto Serif, 1.07 to
#: 1.10 times as wide ("continuous" and "PagedAttention" then broke in columns measured with
#: 3 % to spare), and DejaVu Serif is 1.15 to 1.17 times.
WIDTH_SLACK = 1.2

#: A cell's text as the table shows it, and whether it is bold (a header cell).
CellText = tuple[str, bool]


def table_widths(rows: Sequence[Sequence[CellText]], ncols: int, total: int,
                 margin: int) -> list[int]:
    """Whole-twip widths of ``ncols`` columns summing to ``total``, each cell having
    ``margin`` twips each side of its text."""
    regular, bold = _faces()
    natural = [0.0] * ncols
    word = [0.0] * ncols
    for row in rows:
        for c, (text, strong) in enumerate(row[:ncols]):
            face = bold if strong else regular
            natural[c] = max(natural[c], _width(face, text) + 2 * margin)
            widest = max((_width(face, w) for w in text.split()), default=0.0)
            word[c] = max(word[c], widest + 2 * margin)
    needs = [ColumnNeed(n, w) for n, w in zip(natural, word, strict=True)]
    shares = column_widths(needs, total, 2 * margin + TEXT_SIZE)
    return list(distribute(total, shares))


def _faces() -> tuple[FontFace, FontFace]:
    files = default_fonts().sans_files
    return font_face(files.get("regular")), font_face(files.get("bold"))


def _width(face: FontFace, text: str) -> float:
    """Width of ``text`` on one line in twips; a character the face lacks counts an em."""
    em = sum(face.width(ch) if face.covers(ch) else 1.0 for ch in text)
    return em * TEXT_SIZE * WIDTH_SLACK
