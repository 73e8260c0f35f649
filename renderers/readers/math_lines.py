"""A ``$$ … $$`` spanning lines inside a paragraph keeps its lines in that paragraph.

dollarmath's block rule takes a displayed formula only when its closing ``$$`` ends a line, so
``$$ … $$ {#eq:a}`` (pandoc-crossref's label) and ``$$ … $$.`` are read as a paragraph whose
inline rule finds the formula. Until now a line inside such a formula that looks like the start
of a block (``+ b``, ``# b``, ``> b``, ``---``) ended the paragraph there, cutting the formula
into a paragraph, a list or a heading; pandoc reads the formula whole. Here the rules that may
end a paragraph (and a setext heading's underline) do not, at a line inside a ``$$`` of that
paragraph which closes within :data:`MAX_SEARCH_CHARS`.

Bounded: each paragraph start first asks an index of the document's lines (built once) whether
a ``$$`` lies ahead before a blank line; only then are its lines read, up to the line where a
rule ends it while no formula is open, and an open formula is searched for its closing ``$$``
over at most :data:`MAX_SEARCH_CHARS`. The same index tells dollarmath's block rule
(:mod:`renderers.readers.math_rules`) which line may close a ``$$`` opened on a line of its own.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock

BlockRule = Callable[[StateBlock, int, int, bool], bool]

#: A ``$$`` not escaped by a backslash.
DOUBLE_DOLLAR = re.compile(r"(?<!\\)(?:\\\\)*\$\$")
#: How far an open ``$$`` is searched for its closing one: no formula is longer
#: (:data:`renderers.math.tex.MAX_TEX_CHARS`), so each formula costs at most this.
MAX_SEARCH_CHARS = 4096
_LINE_WITH_DOLLARS = re.compile(r"^.*\$\$.*$", re.MULTILINE)
_BLANK_LINE = re.compile(r"^[ \t]*$", re.MULTILINE)
#: A line ending with ``$$`` before white space (``str.strip``'s), as dollarmath's block rule
#: looks for the line closing a formula.
_CLOSING_LINE = re.compile(r"\$\$[^\S\n]*$", re.MULTILINE)


@dataclass(frozen=True)
class LineIndex:
    """The raw lines of a document holding ``$$``, those ending with it and the blank ones, by
    line number."""

    source: str
    dollars: list[int]
    closing: list[int]
    blanks: list[int]

    @classmethod
    def of(cls, source: str) -> LineIndex:
        if "$$" not in source:  # most documents: nothing to index (2 ms for 170 KB otherwise)
            return cls(source, [], [], [])
        starts = [0, *(m.end() for m in re.finditer("\n", source))]

        def lines(pattern: re.Pattern[str]) -> list[int]:
            return sorted({bisect.bisect_right(starts, m.start()) - 1
                           for m in pattern.finditer(source)})

        return cls(source, lines(_LINE_WITH_DOLLARS), lines(_CLOSING_LINE), lines(_BLANK_LINE))

    def closing_after(self, line: int) -> int | None:
        """The first line after ``line`` ending with ``$$``, if any."""
        at = bisect.bisect_right(self.closing, line)
        return self.closing[at] if at < len(self.closing) else None

    def dollars_ahead(self, line: int) -> bool:
        """Whether a line from ``line`` on, before the next blank one, holds ``$$``."""
        at = bisect.bisect_left(self.dollars, line)
        if at == len(self.dollars):
            return False
        blank = bisect.bisect_left(self.blanks, line)
        return blank == len(self.blanks) or self.dollars[at] < self.blanks[blank]


def line_index(state: StateBlock) -> LineIndex:
    """The index of the lines of the document ``state`` reads, built once per document."""
    index = state.env.get("_math_index")
    if index is None or index.source is not state.src:
        index = state.env["_math_index"] = LineIndex.of(state.src)
    return index


def hold_paragraphs_open(md: MarkdownIt) -> None:
    """Wrap ``md``'s paragraph and setext-heading rules and every rule that may end a
    paragraph (after the other plugins have added theirs)."""
    for rule in md.block.ruler.__rules__:
        if rule.name in ("paragraph", "lheading"):
            rule.fn = _lines_found(rule.fn, heading=rule.name == "lheading")
        elif "paragraph" in rule.alt:
            rule.fn = _kept_out_of_math(rule.fn, ends_items=rule.name == "list")
    md.block.ruler.__cache__ = None  # type: ignore[attr-defined]  # rules changed: recompile


def _lines_found(rule: BlockRule, *, heading: bool) -> BlockRule:
    """Before a paragraph is read from line ``start``, the lines of it inside a ``$$`` are
    noted for :func:`_kept_out_of_math`; a setext heading is not looked for across them."""

    def fixed(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        inside = _lines_inside_math(state, start)
        if inside and heading:
            return False
        state.env["_math_lines"] = inside
        try:
            return rule(state, start, end, silent)
        finally:
            state.env["_math_lines"] = frozenset()

    return fixed


def _kept_out_of_math(rule: BlockRule, *, ends_items: bool) -> BlockRule:
    """A rule that may end a paragraph (a list, a heading, a quote …) does not at a line
    inside one of its displayed formulas, except the list rule at a line left of the list
    item's text (:func:`_outdented`)."""

    def fixed(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        if (
            state.parentType == "paragraph"
            and start in state.env.get("_math_lines", ())
            and not (ends_items and _outdented(state, start))
        ):
            return False
        return rule(state, start, end, silent)

    return fixed


def _outdented(state: StateBlock, line: int) -> bool:
    """Whether ``line`` starts left of the list item being read: a list marker there begins
    the next item even inside a ``$$`` (``- $$ a`` ``- b`` ``- $$ c`` are three items to
    pandoc; as one, a list of many such items was one formula). A lazy line (negative) is not."""
    return 0 <= state.sCount[line] < state.blkIndent


def _lines_inside_math(state: StateBlock, start: int) -> frozenset[int]:
    """The lines of the paragraph from ``start`` that begin inside a ``$$ … $$`` of it that
    closes (an unclosed ``$$`` holds none)."""
    if not line_index(state).dollars_ahead(start):
        return frozenset()
    terminators = state.md.block.ruler.getRules("paragraph")
    item_ends = [rule.fn for rule in state.md.block.ruler.__rules__ if rule.name == "list"]
    parent, state.parentType = state.parentType, "paragraph"
    state.env["_math_lines"] = frozenset()
    inside: set[int] = set()
    pending: list[int] = []
    is_open, budget, line = False, 0, start
    try:
        while line < state.lineMax and not state.isEmpty(line):
            ends = terminators if not is_open else item_ends if _outdented(state, line) else ()
            if line > start and any(rule(state, line, state.lineMax, True) for rule in ends):
                break  # the paragraph ends here
            text = state.src[state.bMarks[line] + state.tShift[line] : state.eMarks[line]]
            if is_open:
                pending.append(line)
                budget -= len(text) + 1
                if budget < 0:
                    break  # no formula is this long: its lines are the paragraph's
            if len(DOUBLE_DOLLAR.findall(text)) % 2:
                is_open, budget = not is_open, MAX_SEARCH_CHARS
                if not is_open:
                    inside.update(pending)
                    pending.clear()
            line += 1
    finally:
        state.parentType = parent
    return frozenset(inside)
