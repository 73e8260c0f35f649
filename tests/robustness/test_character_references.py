"""Character references that decode to characters no output can carry.

The input's own control characters become U+FFFD where it is decoded
(:func:`citations.chars.clean_text`); a reference such as ``&#1;`` or ``&#xFFFF;`` is decoded
later, by nh3 (HTML and markdown's raw HTML) or markdown-it (``&#x0C;`` in text and link
titles), and reached the XML writers as the character itself: lxml refused it with a
``ValueError`` (an internal error at the CLI) in the DOCX and the author's-look PDF.
"""

from __future__ import annotations

from pathlib import Path

import docx
import pytest

from renderers import render
from tests.helpers import pdf_text

FORMATS = ("pdf", "docx", "pptx", "html", "md")


@pytest.mark.parametrize("text", [
    "<html><body><p>Grid&#1;storage &#xFFFF;grew&#x0B;.</p></body></html>",
    "Grid&#x0C;storage [grew](https://a.example/ \"t&#x0C;\").\n",
    "Grid<span>&#1;</span>storage grew.\n",  # markdown's inline HTML
])
def test_references_to_unsafe_characters_become_replacement_characters(
    text: str, tmp_path: Path
) -> None:
    results = render(text, tmp_path, name="r", formats=FORMATS, sources_pool=[])
    assert [r.format for r in results] == list(FORMATS)
    body = "\n".join(p.text for p in docx.Document(str(tmp_path / "r.docx")).paragraphs)
    assert "Grid\ufffdstorage" in body
    assert "Grid" in pdf_text(tmp_path / "r.pdf")
    for name in ("r.html", "r.md"):
        shown = (tmp_path / name).read_text("utf-8")
        assert not any(c in shown for c in "\x01\x0b\x0c\uffff")
