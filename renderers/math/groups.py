"""Where a TeX group ends: the one bracket matcher of the package-command readers (mhchem,
siunitx, ``\\intertext``), which read their arguments before latex2mathml sees the formula;
and the one walk of a table's body at its own level (:func:`table_marks`)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from renderers.math.errors import MathError

#: ``\begin{name}`` or ``\end{name}`` (the name its second group).
BEGIN_OR_END = re.compile(r"\\(begin|end)\s*\{([^{}]*)\}")


def table_marks(body: str) -> Iterator[tuple[int, int]]:
    """The index of each backslash and ``&`` in a table's ``body``, with its depth: 0 at the
    table's own level, more inside braces or a nested environment (its ``\\begin``/``\\end``
    read whole, never yielded). A backslash's next character is skipped with it (``\\{``,
    ``\\&``, the second of ``\\\\``). Linear: what rewrites a table's cells (normalise) and
    reads its rules (:mod:`renderers.math.rules`) share this walk."""
    index = depth = 0
    while index < len(body):
        char = body[index]
        if char == "\\":
            environment = BEGIN_OR_END.match(body, index)
            if environment is not None:
                depth += 1 if environment.group(1) == "begin" else -1
                index = environment.end()
                continue
            yield index, depth
            index += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "&":
            yield index, depth
        index += 1


def closing_bracket(text: str, index: int, opening: str = "{", closing: str = "}") -> int | None:
    """The index of the bracket closing the one at ``index`` (a backslash escapes the character
    after it, so ``\\{`` counts for nothing), or None when it never closes. Linear in the text."""
    depth = 0
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return None


def braced_argument(text: str, index: int, *, missing: str, unclosed: str) -> tuple[str, int]:
    """The text of the ``{…}`` argument at ``index`` (white space before it skipped) and the
    index past it; a :class:`MathError` saying ``missing`` when no brace opens there, or
    ``unclosed`` when it never closes (each reader names its own command)."""
    while index < len(text) and text[index].isspace():
        index += 1
    end = closing_bracket(text, index) if text.startswith("{", index) else None
    if end is None:
        raise MathError(unclosed if text.startswith("{", index) else missing)
    return text[index + 1 : end], end + 1
