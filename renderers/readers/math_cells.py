"""A ``|`` inside a formula in a pipe-table cell belongs to the formula, as in pandoc.

markdown-it splits a table row at every ``|`` before any inline rule runs, so ``$|x|$`` in a
cell became three cells (the row lost its last ones) and ``$\\|v\\|$`` lost its backslashes (an
escaped pipe is unescaped by the split): the norm ‖v‖ read as the absolute value |v|. Pandoc
reads a cell's inlines up to the next ``|``, so a formula takes its pipes with it. Here, while
the table rule reads a table, each ``|`` inside a formula is a placeholder of one character
(positions unchanged; the held copy of the document made once), given back in the cells' text.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock

BlockRule = Callable[[StateBlock, int, int, bool], bool]

#: Stands for a formula's ``|`` while the row is split (a noncharacter: never text).
PLACEHOLDER = "\uffff"
#: A formula in a table row as the inline math rules read one: ``$$…$$``, ``\\(…\\)`` and
#: ``$…$`` with no space inside either dollar and no digit after the closing one (prices stay
#: text, :mod:`renderers.readers.math_rules`), each on one line (a row is one). Linear: no
#: formula's text holds its own opening delimiter, so each attempt ends at the next one
#: (possessive, no backtracking).
_FORMULA = re.compile(
    r"\$\$[^$\n]++\$\$"
    r"|\\\((?:(?!\\[()])[^\n])++\\\)"
    r"|(?<![\\\d$])\$(?![\s$])[^$\n]*+(?<![\s\\])\$(?!\d)"
)


def keep_pipes_in_formulas(md: MarkdownIt) -> None:
    """Wrap ``md``'s table rule (after the math rules are registered)."""
    for rule in md.block.ruler.__rules__:
        if rule.name == "table":
            rule.fn = _pipes_kept(rule.fn)
    md.block.ruler.__cache__ = None  # type: ignore[attr-defined]  # rules changed: recompile


def _pipes_kept(rule: BlockRule) -> BlockRule:
    def fixed(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        source = state.src
        held = _held_source(state)
        if held is source:
            return rule(state, start, end, silent)
        state.src = held
        first_token = len(state.tokens)
        try:
            found = rule(state, start, end, silent)
        finally:
            state.src = source
        for token in state.tokens[first_token:]:
            if PLACEHOLDER in token.content:
                token.content = token.content.replace(PLACEHOLDER, "|")
        return found

    return fixed


def _held_source(state: StateBlock) -> str:
    """The document with each formula's ``|`` a placeholder, made once per document (the
    table rule is tried at every line of a paragraph); the document itself when nothing is
    held."""
    cached = state.env.get("_pipes_held")
    if cached is not None and cached[0] is state.src:
        return cached[1]
    source = state.src
    held = source
    if "|" in source and ("$" in source or "\\(" in source) and PLACEHOLDER not in source:
        held = _FORMULA.sub(_held, source)
        held = source if held == source else held
    state.env["_pipes_held"] = (source, held)
    return held


def _held(formula: re.Match[str]) -> str:
    return formula.group().replace("|", PLACEHOLDER)
