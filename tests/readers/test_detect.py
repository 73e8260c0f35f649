"""Content format detection."""

from __future__ import annotations

import pytest

from renderers.readers.detect import detect_format


@pytest.mark.parametrize(
    "content",
    [
        "<!DOCTYPE html><html><body><p>x</p></body></html>",
        "\ufeff\n  <html><p>x</p></html>",
        "<!-- generated --><!doctype html><p>x</p>",
        '<?xml version="1.0"?>\n<html xmlns="http://www.w3.org/1999/xhtml"></html>',
        '<h1>Title</h1>\n<p>Claim <sup class="cite" data-sids="1">[S:1]</sup></p>\n'
        "<ul><li>a</li></ul>",
        "<div>\n<p>one</p>\n<p>two</p>\n</div>",
    ],
)
def test_html(content: str) -> None:
    assert detect_format(content) == "html"


@pytest.mark.parametrize(
    "content",
    [
        "",
        "# Title\n\nText [[S:1]].",
        "Plain text only.",
        "Text with <b>inline</b> html and <p>a tag</p>.",
        '<div align="center"><img src="logo.png"></div>\n\n# Title\n\n- a\n- b\n\n> quote\n',
        '<sup class="cite" data-sids="1">[S:1]</sup> starts the paragraph.',
        "<!-- note -->\n# Title\n\n- item\n- item\n",
    ],
)
def test_markdown(content: str) -> None:
    assert detect_format(content) == "markdown"


def test_html_inside_a_code_fence_is_not_evidence() -> None:
    content = "<br>\n```html\n<div><p>a</p><p>b</p><table></table></div>\n```\n"
    assert detect_format(content) == "markdown"
