"""The Markdown writer writes URLs that a CommonMark reader decodes to exactly what was checked."""

from __future__ import annotations

from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from renderers import write_markdown


def _targets(markdown: str) -> list[str]:
    """Every href and src a CommonMark reader sees in ``markdown`` (a reader that trusts every
    scheme, as many do: markdown-it's own ``validateLink`` guard is switched off)."""
    found: list[str] = []
    reader = MarkdownIt("commonmark")
    reader.validateLink = lambda url: True  # type: ignore[method-assign]
    tokens = reader.parse(markdown)
    for block in tokens:
        for child in block.children or []:
            for attr in ("href", "src"):
                value = child.attrGet(attr)
                if value is not None:
                    found.append(str(value))
    return found


@pytest.mark.parametrize(
    "source",
    [
        "![x](\\&#x6A;avascript:alert(1))",
        "[x](\\&#106;avascript:alert(1))",
        "![x](a&#x2F;&#x2F;evil.example/x.png)",
        "[x](https://e.org/?a=1\\&amp;b=2)",
    ],
)
def test_no_written_url_decodes_to_something_else(tmp_path: Path, source: str) -> None:
    first = _targets(source)
    result = write_markdown(source, tmp_path / "out.md")
    written = result.path.read_text("utf-8").split("\n\n")[0]
    again = _targets(written)
    assert again == first or not again  # the same URL, or (refused) no link at all


def test_query_strings_with_ampersands_survive(tmp_path: Path) -> None:
    result = write_markdown("[q](https://e.org/s?a=1&b=2)", tmp_path / "q.md")
    assert _targets(result.path.read_text("utf-8")) == ["https://e.org/s?a=1&b=2"]
