"""markdown-it plugin: the ``html_inline`` rule with the construct's end found in linear time.

markdown-it-py's rule runs its tag regex at each ``<`` once the construct's terminator occurs
somewhere later. Its comment pattern runs past a ``-->`` that follows ``---``, so every
``<!--`` of ``<!-- a --->`` repeated scans to the end of the text: 88 KB took 8.4 s to read
(measured; quadratic, one C call per ``<`` that ``max_seconds`` cannot stop). The audit already
finds where markdown-it's regex ends each construct in linear time
(:class:`citations.codemap.InlineHtml`); reading uses the same answer, so the two also agree
on what is raw HTML.
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

from markdown_it import MarkdownIt
from markdown_it.common.utils import isLinkClose, isLinkOpen
from markdown_it.rules_inline import StateInline

from citations.codemap import InlineHtml

#: One scanner per inline state (its caches make a run of openers linear, not each call).
_SCANNERS: WeakKeyDictionary[StateInline, InlineHtml] = WeakKeyDictionary()


def inline_html_plugin(md: MarkdownIt) -> None:
    """Replace markdown-it's ``html_inline`` rule by :func:`html_inline`."""
    md.inline.ruler.at("html_inline", html_inline)


def html_inline(state: StateInline, silent: bool) -> bool:
    """Raw inline HTML at ``state.pos``, exactly as markdown-it's rule reads it."""
    src, pos = state.src, state.pos
    if not state.md.options.get("html", None) or src[pos] != "<":
        return False
    scanner = _SCANNERS.get(state)
    if scanner is None or scanner.text is not src:
        scanner = _SCANNERS[state] = InlineHtml(src, 0, len(src))  # as markdown-it: all of src
    end = scanner.end(pos)
    if end < 0:
        return False
    if not silent:
        token = state.push("html_inline", "", 0)
        token.content = src[pos:end]
        if isLinkOpen(token.content):
            state.linkLevel += 1
        if isLinkClose(token.content):
            state.linkLevel -= 1
    state.pos = end
    return True
