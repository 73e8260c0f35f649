"""Where a TeX group ends: the one bracket matcher of the package-command readers (mhchem,
siunitx, ``\\intertext``), which read their arguments before latex2mathml sees the formula."""

from __future__ import annotations


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
