"""Math delimiters for the markdown parser: ``$…$``, ``$$…$$`` (mdit-py-plugins' dollarmath) and
``\\(…\\)``, ``\\[…\\]`` (the rules below).

Prices are not math: dollarmath runs with ``allow_space=False`` (no space inside the dollars)
and ``allow_digits=False`` (no digit right before the opening or after the closing dollar), so
"$5 and $10" stays text. Two of its slips are fixed here: at the very start of a paragraph it
reads "the character before" as the paragraph's last character, and its block rule read a line
such as ``$$a$$ $$b$$`` as one displayed formula ``a$$ $$b`` (pandoc reads two).

The ``\\(``/``\\[`` rules are written here rather than taken from the texmath plugin, whose
``\\(.+?\\)`` pattern rescans the rest of the paragraph for every ``\\(``: 20,000 of them took
5 s. Here a failed search for the closing delimiter is remembered, so every position is scanned
at most once per delimiter.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin

from renderers.document import Block, Code, CodeBlock, Inline, Math, Paragraph
from renderers.readers.context import ReadContext
from renderers.readers.math_lines import DOUBLE_DOLLAR, line_index

#: Token types of math, inline and block, that the reader turns into ``Math`` nodes.
INLINE_MATH = {"math_inline": False, "math_inline_double": True, "math_paren": False}
BLOCK_MATH = frozenset({"math_block", "math_bracket_block"})

InlineRule = Callable[[StateInline, bool], bool]
BlockRule = Callable[[StateBlock, int, int, bool], bool]


def math_plugin(md: MarkdownIt) -> None:
    """Register the math rules (dollars, ``\\(…\\)`` and ``\\[…\\]``) on ``md``."""
    md.use(dollarmath_plugin, allow_space=False, allow_digits=False, double_inline=True,
           allow_labels=False, allow_blank_lines=False)
    for rule in md.inline.ruler.__rules__:
        if rule.name == "math_inline":
            rule.fn = _first_position_fixed(rule.fn)
    for block_rule in md.block.ruler.__rules__:
        if block_rule.name == "math_block":
            block_rule.fn = _one_formula_per_line(block_rule.fn)
    md.inline.ruler.before("escape", "math_paren", _paren_inline)
    md.block.ruler.before("fence", "math_bracket_block", _bracket_block,
                          {"alt": ["paragraph", "reference", "blockquote", "list"]})
    md.inline.ruler.__cache__ = None  # type: ignore[attr-defined]  # rules changed: recompile
    md.block.ruler.__cache__ = None  # type: ignore[attr-defined]


def _first_position_fixed(rule: InlineRule) -> InlineRule:
    """dollarmath looks at ``src[pos - 1]`` for the character before an opening ``$``; at
    ``pos == 0`` that is the paragraph's last character ("$x$ costs $5" was not math)."""

    def fixed(state: StateInline, silent: bool) -> bool:
        if state.pos != 0 or not state.src[-1:].isdigit():
            return rule(state, silent)
        src = state.src
        state.src = src + " "
        try:
            return rule(state, silent)
        finally:
            state.src = src

    return fixed


def _one_formula_per_line(rule: BlockRule) -> BlockRule:
    """dollarmath's block rule takes a line that starts and ends with ``$$`` as one formula,
    even when a ``$$`` (not ``\\$``) closes it earlier: ``$$a$$ $$b$$`` or ``$$a$$ text $$b$$``.
    Such a line is left to the inline rules, which read each ``$$…$$`` on its own.

    Its search for the line closing a ``$$`` opened on a line of its own read every line up to
    a blank one, from every such line: 20,000 list items ``- $$ a`` without a blank line took
    minutes. The rule now runs only when :func:`_closing_line` finds the line it would stop at.
    """

    def fixed(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        text = state.src[state.bMarks[start] + state.tShift[start] : state.eMarks[start]]
        line = text.strip()
        if line.startswith("$$") and line.endswith("$$") and DOUBLE_DOLLAR.search(line[2:-2]):
            return False
        if _searches_on(text) and _closing_line(state, start, end) is None:
            return False
        return rule(state, start, end, silent)

    return fixed


def _searches_on(text: str) -> bool:
    """Whether dollarmath's block rule looks past the line ``text`` for a closing ``$$``: the
    line opens with ``$$`` and neither ends with ``$$`` nor holds another (a line of three
    characters or fewer, such as ``$$`` or ``$$x``, always looks on)."""
    if not text.startswith("$$"):
        return False
    return len(text.strip()) <= 3 or not (text.strip().endswith("$$") or "$$" in text[2:])


def _closing_line(state: StateBlock, start: int, end: int) -> int | None:
    """The line closing a ``$$`` opened on line ``start``, as dollarmath finds it (the first line
    ending with ``$$`` before a blank line and before ``end``), or ``None``.

    The lines ending with ``$$`` come from the document's line index; the lines between are
    read for a blank one as the block sees them (a ``>`` alone is blank inside a quote). A blank
    line found is remembered, so the block's other openings before it fail without reading."""
    closing = line_index(state).closing_after(start)
    if closing is None or closing >= end:
        return None
    blank = state.env.get("_math_blank_line", -1)
    if start < blank < closing and _blank(state, blank):
        return None
    for line in range(start + 1, closing):
        if _blank(state, line):
            state.env["_math_blank_line"] = line
            return None
    return closing


def _blank(state: StateBlock, line: int) -> bool:
    """Whether ``line`` is blank as dollarmath's search reads it (``str.strip``'s white space)."""
    return not state.src[state.bMarks[line] + state.tShift[line] : state.eMarks[line]].strip()


def _failed_from(env: MutableMapping[str, Any], key: tuple[str, str, int]) -> int:
    """The smallest position from which a search for this closing delimiter already failed."""
    failures: dict[tuple[str, str, int], int] = env.setdefault("_math_failed", {})
    return failures.get(key, -1)


def _paren_inline(state: StateInline, silent: bool) -> bool:
    r"""``\(…\)`` inside a paragraph. (``\[…\]`` is display math only on lines of its own:
    inside prose ``\[1\]`` is an escaped bracket, as LLM output often writes one.)"""
    src, pos = state.src, state.pos
    if not src.startswith("\\(", pos) or pos + 1 >= state.posMax:
        return False
    if pos > 0 and src[pos - 1] == "\\":
        return False
    key = ("\\)", src, state.posMax)
    failed = _failed_from(state.env, key)
    if failed != -1 and pos + 2 >= failed:
        return False
    end = src.find("\\)", pos + 2, state.posMax)
    if end == -1:
        state.env["_math_failed"][key] = pos + 2 if failed == -1 else min(failed, pos + 2)
        return False
    content = src[pos + 2 : end]
    if not content.strip():
        return False
    if not silent:
        token = state.push("math_paren", "math", 0)
        token.content = content
        token.markup = "\\("
    state.pos = end + 2
    return True


def _bracket_block(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    r"""A line holding only ``\[``, the formula, a line holding only ``\]`` (no blank line
    between): a displayed formula. A line such as ``\[1\] and \[2\]`` is escaped brackets,
    as markdown writers put them, so a one-line ``\[…\]`` is not math (``$$…$$`` is)."""
    begin = state.bMarks[start] + state.tShift[start]
    if state.sCount[start] - state.blkIndent >= 4 or not state.src.startswith("\\[", begin):
        return False
    if state.src[begin + 2 : state.eMarks[start]].strip():
        return False
    key = ("\\]", "block", end)
    failed = _failed_from(state.env, key)
    if failed != -1 and start >= failed:
        return False
    line = start + 1
    while line < end:
        line_start = state.bMarks[line] + state.tShift[line]
        line_end = state.eMarks[line]
        if line_start >= line_end:  # a blank line: no closing
            break
        if state.src[line_start:line_end].rstrip() == "\\]":
            if silent:
                return True
            token = state.push("math_bracket_block", "math", 0)
            token.block = True
            token.content = state.src[state.eMarks[start] : state.bMarks[line]]
            token.map = [start, line + 1]
            token.markup = "\\["
            state.line = line + 1
            return True
        line += 1
    state.env["_math_failed"][key] = line
    return False


def display_math(token: Token, context: ReadContext) -> Block:
    """A displayed formula on its own (``$$…$$``, ``\\[…\\]`` lines), or its source as a code
    block with a warning when it is not TeX math."""
    context.count_formula()
    tex = token.content.strip()
    error = _tex_error(tex, True)
    if error is None:
        return Paragraph((Math(tex, display=True),))
    line = (token.map[0] if token.map else 0) + 1
    context.warn(line, f"math {_shown(tex)} not rendered: {error}; shown as code")
    return CodeBlock(tex)


def inline_math(token: Token, context: ReadContext, line: int) -> Inline:
    """An inline formula, or its source (delimiters included) as code with a warning."""
    context.count_formula()
    display = INLINE_MATH[token.type]
    tex = token.content.strip()
    error = _tex_error(tex, display)
    if error is None:
        return Math(tex, display=display)
    context.warn(line, f"math {_shown(tex)} not rendered: {error}; shown as code")
    markup = token.markup or "$"
    closing = "\\)" if markup == "\\(" else markup
    return Code(f"{markup}{token.content}{closing}")


def _tex_error(tex: str, display: bool) -> str | None:
    """Why ``tex`` is not TeX math the writers can draw, or None (the TeX parser is imported
    by the first formula a document has, not by every reader)."""
    from renderers.math import tex_error

    return tex_error(tex, display)


def _shown(tex: str) -> str:
    """A formula's source as a warning quotes it (:func:`renderers.math.shown_tex`, imported
    here as :func:`_tex_error` imports its module: only for a document with math)."""
    from renderers.math import shown_tex

    return shown_tex(tex)
