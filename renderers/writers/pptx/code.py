"""Code blocks on slides: the lines a code box shows, coloured when the block is highlighted
(:mod:`renderers.writers.highlight`).

Slides cannot hold tabs or control characters, so each line is cleaned the same way whether it
is plain or coloured: the coloured runs of a line always join to exactly its text, which is
what the layout measures (bold and italic monospace glyphs have the same advance, so colours
and weights never change a line's width).
"""

from __future__ import annotations

from dataclasses import dataclass

from citations.chars import UNSAFE_CHARS
from renderers.writers.highlight import Highlighter, TokenLook

#: One coloured piece of a code line.
CodeRun = tuple[str, TokenLook]


@dataclass
class CodeLines:
    """The lines of one code block; ``colors`` (one tuple of runs per line) and ``fill`` (the
    style's background, ``RRGGBB``) when it is highlighted, else empty."""

    lines: list[str]
    colors: list[tuple[CodeRun, ...]]
    fill: str = ""

    def clip(self, index: int, length: int, mark: str) -> None:
        """Shorten line ``index`` to ``length`` characters followed by ``mark``."""
        self.lines[index] = self.lines[index][:length] + mark
        if not self.colors:
            return
        runs: list[CodeRun] = []
        left = length
        for text, look in self.colors[index]:
            if left <= 0:
                break
            runs.append((text[:left], look))
            left -= len(text)
        last_look = runs[-1][1] if runs else self.colors[index][0][1]
        runs.append((mark, last_look))
        self.colors[index] = tuple(runs)


def code_lines(text: str, language: str, highlight: Highlighter | None) -> CodeLines:
    """The cleaned lines of ``text`` (tabs as four spaces, no control characters, no carriage
    return at a line's end), with their coloured runs when the document's ``highlight``
    colours it (None: plain)."""
    code = text.rstrip("\n")
    highlighted = highlight(code, language) if highlight is not None else None
    if highlighted is None:
        return CodeLines([_clean(line, last=True) for line in code.split("\n")], [])
    colors = []
    for line in highlighted.runs():
        pieces = [(_clean(piece, last=i == len(line) - 1), look) for i, (piece, look)
                  in enumerate(line)]
        colors.append(tuple((piece, look) for piece, look in pieces if piece))
    return CodeLines(["".join(piece for piece, _ in runs) for runs in colors], colors,
                     highlighted.background)


def _clean(text: str, *, last: bool) -> str:
    """Code text a slide can hold (``last``: the end of a line, where a CR is dropped)."""
    text = text.replace("\t", "    ")
    return UNSAFE_CHARS.sub("", text.rstrip("\r") if last else text)
