"""A removed ``[[USAGE:…]]`` tag leaves no stray space, exactly like a dropped unknown sid."""

from __future__ import annotations

import pytest

from renderers.document import Paragraph, Text
from renderers.readers.html import read_html
from renderers.readers.markdown import read_markdown


def _text(blocks: tuple[object, ...]) -> str:
    first = blocks[0]
    assert isinstance(first, Paragraph)
    return "".join(n.text for n in first.children if isinstance(n, Text))


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("Sources consulted [[USAGE:1,2]].", "Sources consulted."),
        ("Sources consulted [[USAGE:1]], then more.", "Sources consulted, then more."),
        ("Seen [[USAGE:1]] and used.", "Seen and used."),
        ("Fin [[USAGE:3]]…", "Fin…"),
        ("「引用 [[USAGE:1]]」。", "「引用」。"),
    ],
)
def test_markdown_usage_before_punctuation_leaves_no_space(source: str, expected: str) -> None:
    assert _text(read_markdown(source).blocks) == expected


def test_html_usage_before_punctuation_leaves_no_space() -> None:
    doc = read_html("<p>Sources consulted [[USAGE:1]].</p>")
    assert _text(doc.blocks) == "Sources consulted."
