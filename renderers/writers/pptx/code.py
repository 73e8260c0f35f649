"""Code blocks on slides: the lines a code box shows, coloured when the block is highlighted
(:mod:`renderers.writers.highlight`).

Slides cannot hold tabs or control characters, so each line is cleaned the same way whether it
is plain or coloured: the coloured runs of a line always join to exactly its text, which is
what the layout measures (bold and italic monospace glyphs have the same advance, so colours
and weights never change a line's width).

The part of a line the box wraps hangs in by the line's own indentation plus four characters
(:func:`~renderers.writers.common.code_hang`, the rule of the HTML and both PDFs), written as
the paragraph's ``marL`` with a negative ``indent`` of the same width: the layout measures the
first line at the box's width and the rest at the width less the hang (:func:`line_starts`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from citations.chars import UNSAFE_CHARS
from renderers.writers.common import code_hang
from renderers.writers.highlight import Highlighter, TokenLook

if TYPE_CHECKING:  # the metrics import the model, which imports this module
    from renderers.writers.pptx.metrics import TextMetrics

#: The measuring style of code: regular monospace (bold and italic glyphs are as wide).
MONO_STYLE: tuple[bool, bool, bool] = (False, False, True)

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


def hang_width(line: str, metrics: TextMetrics, width: float, size: float) -> float:
    """How far (points) the wrapped part of code ``line`` (cleaned: tabs as spaces) hangs in
    a box ``width`` points wide at ``size`` points: :func:`~renderers.writers.common.code_hang`
    characters, at most half the width, so that a deeply indented line still has room."""
    return min(code_hang(line) * metrics.char_width(" ", MONO_STYLE) * size, width / 2)


def line_starts(line: str, metrics: TextMetrics, width: float, size: float) -> list[int]:
    """Offsets in ``line`` where each of its wrapped lines starts in a box ``width`` points
    wide: the first line has the whole width, the others the width less the hang. The
    wrapper is greedy, so the part after the first break wraps as a text of its own."""
    starts = metrics.line_starts([(line, MONO_STYLE, False)], width, size)
    if len(starts) < 2:
        return starts
    rest = starts[1]
    narrower = width - hang_width(line, metrics, width, size)
    tail = metrics.line_starts([(line[rest:], MONO_STYLE, False)], narrower, size)
    return [0, *(rest + start for start in tail)]
