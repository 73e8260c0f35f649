"""A markdown-it-py plugin that reads citation tokens (``[[S:1,3]]``, ``[[USAGE:2]]`` …).

The inline rule runs before ``link`` and asks :func:`citations.tokens.match_at` whether a token
starts at the current position. Code spans are parsed earlier by the ``backticks`` rule, so a
token inside backticks never reaches this rule and stays verbatim.

Every match becomes one markdown-it token of type ``"cite"`` with ``meta``::

    {"kind": "cite" | "usage", "sids": (1, 3), "error": None | "reason",
     "text": "[[S:1,3]]", "form": "bracket" | "sup" | "bare" | "s_dialect" | "numeric",
     "warnings": ("…",), "pos": <offset of the token in the inline source>}

A token with ``error`` set is invalid: readers keep its ``text`` literally and report it.
The HTML render rule prints a valid citation as ``<sup class="cite" data-sids="1,3">``, a
USAGE tag as nothing and an invalid token as its escaped text.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from markdown_it import MarkdownIt, helpers
from markdown_it.common.utils import escapeHtml
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

from citations.tokens import match_at

#: Full-width left square bracket: LLM output writes ``［［S：1］］``.
_FULLWIDTH_BRACKET = "\uff3b"
#: markdown-it's own stop characters for the ``text`` rule (used only on markdown-it-py < 4).
_DEFAULT_TERMINATORS = "\n!#$%&*+-:<=>@[\\]^_`{}~"


def cite_plugin(md: MarkdownIt, dialects: frozenset[str] = frozenset()) -> None:
    """Add the ``cite`` inline rule (before ``link``) and its HTML render rule to ``md``."""
    frozen = frozenset(dialects)

    def cite_rule(state: StateInline, silent: bool) -> bool:
        found = match_at(state.src, state.pos, dialects=frozen, line=0)  # line unused: O(1)
        if found is None or found.end <= state.pos or found.end > state.posMax:
            return False
        if not silent:
            token = state.push("cite", "", 0)
            token.content = found.text
            token.meta = {
                "kind": found.kind,
                "sids": tuple(found.sids),
                "error": found.error,
                "text": found.text,
                "form": found.form,
                "warnings": tuple(found.warnings),
                "pos": state.pos,
            }
        state.pos = found.end
        return True

    md.inline.ruler.before("link", "cite", cite_rule)
    _stop_text_at(md, _FULLWIDTH_BRACKET)
    md.add_render_rule("cite", _render_cite)
    _allow_citations_in_link_text(md, frozen)


def _allow_citations_in_link_text(md: MarkdownIt, dialects: frozenset[str]) -> None:
    """Let link text hold citations: ``[IEA outlook[[S:3]]](https://…)`` stays a link.

    markdown-it's label scan treats any token that starts with ``[`` as a nested link and gives
    up (links may not contain links). This instance gets the same scan (markdown-it's
    ``parseLinkLabel``, kept line for line) in which a citation token is just text; markdown-it
    offers no narrower hook. Other parsers keep the stock helpers.
    """

    def parse_link_label(state: StateInline, start: int, disable_nested: bool = False) -> int:
        old_pos = state.pos
        state.pos = start + 1
        level = 1
        found = False
        while state.pos < state.posMax:
            marker = state.src[state.pos]
            if marker == "]":
                level -= 1
                if level == 0:
                    found = True
                    break
            prev_pos = state.pos
            citation = marker == "[" and match_at(state.src, prev_pos, dialects=dialects)
            state.md.inline.skipToken(state)
            if marker == "[" and not citation:
                if prev_pos == state.pos - 1:
                    level += 1  # a "[" that is plain text
                elif disable_nested:
                    state.pos = old_pos
                    return -1
        label_end = state.pos if found else -1
        state.pos = old_pos
        return label_end

    md.helpers = SimpleNamespace(  # type: ignore[assignment]
        parseLinkDestination=helpers.parseLinkDestination,
        parseLinkTitle=helpers.parseLinkTitle,
        parseLinkLabel=parse_link_label,
    )


def _stop_text_at(md: MarkdownIt, char: str) -> None:
    """Make the ``text`` rule stop at ``char`` so the cite rule sees tokens starting there."""
    add = getattr(md.inline, "add_terminator_char", None)
    if add is not None:
        add(char)
        return
    stops = frozenset(_DEFAULT_TERMINATORS + char)

    def text_rule(state: StateInline, silent: bool) -> bool:
        pos = state.pos
        while pos < state.posMax and state.src[pos] not in stops:
            pos += 1
        if pos == state.pos:
            return False
        if not silent:
            state.pending += state.src[state.pos : pos]
        state.pos = pos
        return True

    md.inline.ruler.at("text", text_rule)


def _render_cite(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    """HTML for one ``cite`` token (used by ``MarkdownIt.render``)."""
    meta = tokens[idx].meta
    if meta.get("error"):
        return escapeHtml(meta["text"])
    if meta["kind"] == "usage":
        return ""
    sids = ",".join(str(sid) for sid in meta["sids"])
    return f'<sup class="cite" data-sids="{sids}">[S:{sids}]</sup>'
