"""Guess whether content is markdown or HTML."""

from __future__ import annotations

import re
from typing import Literal

ContentFormat = Literal["markdown", "html"]

#: At most one comment group: ``.*?`` may already span several comments, so ``(?:…)*`` here
#: only multiplied the ways to split them (exponential: 25 ``<!---->`` took 4 s, 30 took 386 s).
_DOCUMENT_START = re.compile(
    r"^(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)?<(?:!doctype\b|html\b)", re.I | re.S
)
_BLOCK_TAG = re.compile(
    r"<(?:p|div|h[1-6]|ul|ol|li|table|thead|tbody|tr|td|th|section|article|header|footer|main|"
    r"nav|aside|blockquote|pre|figure|body|head|title|style|dl|dt|dd|hr|br)\b[^>]*>",
    re.IGNORECASE,
)
_MARKDOWN_LINE = re.compile(
    r"^\s{0,3}(?:#{1,6}\s|[-*+]\s|\d{1,9}[.)]\s|>\s?|```|~~~|\|.*\||[-*_](?:\s*[-*_]){2,}\s*$)"
)
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def detect_format(content: str) -> ContentFormat:
    """``"html"`` for a full HTML document or content made mostly of block-level HTML tags.

    A document that starts with ``<!doctype`` or ``<html`` (after a BOM, white space, an XML
    declaration or comments) is HTML. Otherwise it is HTML when its first non-blank character
    is ``<``, it has block-level tags (``<p>``, ``<div>``, ``<h1>`` … ``<table>``), and lines
    that look like markdown (headings, list items, quotes, fences, table rows) are fewer than a
    quarter of the block tags. Everything else is markdown — markdown may embed some HTML.
    """
    text = content.lstrip("\ufeff \t\r\n")
    if _DOCUMENT_START.match(text):
        return "html"
    if not text.startswith("<"):
        return "markdown"
    outside_code = _outside_fences(text)
    # No tag ends after the last ">"; searching there rescanned to the end from every "<p"
    # (quadratic: "<p " * 100_000 took 77 s).
    tags = len(_BLOCK_TAG.findall(outside_code, 0, outside_code.rfind(">") + 1))
    markdown_lines = sum(1 for line in outside_code.splitlines() if _MARKDOWN_LINE.match(line))
    if tags and markdown_lines * 4 < tags:
        return "html"
    return "markdown"


def _outside_fences(text: str) -> str:
    """``text`` without markdown fenced code blocks (their content proves nothing)."""
    kept: list[str] = []
    fence = ""
    for line in text.splitlines():
        match = _FENCE.match(line)
        if fence:
            if match and match.group(1) == fence:
                fence = ""
            continue
        if match:
            fence = match.group(1)
            kept.append(line)  # the opening fence itself is markdown evidence
            continue
        kept.append(line)
    return "\n".join(kept)
