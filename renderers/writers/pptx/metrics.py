"""Text measurement: how many lines styled text wraps to in a box, from real font metrics.

Widths come from the installed files :mod:`.fonts` matches to the typefaces the deck names
(Pillow, cached per character and per word); wrapping is PowerPoint's greedy word wrap at the
exact line pitch the writer sets, so the layout knows every text box's height before drawing.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any, Literal

from renderers.fonts import (
    FALLBACK_FILES,
    FontChoice,
    FontFace,
    default_fonts,
    find_font,
    font_face,
)
from renderers.writers.pptx.model import LINE_FACTOR, Style

#: Share of a box's inner width the wrapper may fill (renderers differ by a few per cent).
WIDTH_SLACK = 0.97

_CJK = "\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
#: One token per match: a line break, a run of spaces, a CJK character (breaks anywhere) or a
#: word, each followed by the spaces that hang after it.
_TOKENS = re.compile(f"(\n)|( +)|([{_CJK}])( *)|([^ \n{_CJK}]+)( *)")
_HAS_CJK = re.compile(f"[{_CJK}]")
_BREAK, _GAP, _WORD = 0, 1, 2


#: A wrap unit: [kind, offset of its first character, end of its word, word width (em),
#: width of the spaces hanging after it, whether a word continues into the next segment,
#: whether it holds a LibreOffice field].
_Token = list[Any]
#: Text to measure: a run's text, its style, and whether it is a link (a field in LibreOffice).
Segment = tuple[str, Style, bool]
#: Which client's line breaking to model.
Client = Literal["powerpoint", "libreoffice"]



class TextMetrics:
    """Wrapped line counts of styled text, from real font metrics (cached per character)."""

    def __init__(self, fonts: FontChoice | None = None) -> None:
        self.fonts = fonts or default_fonts()
        self._widths: dict[Style, dict[str, float]] = {}
        self._runs: dict[Style, dict[str, float]] = {}  # width of whole words and space runs
        self._fallbacks = [p for p in (find_font((n,)) for n in FALLBACK_FILES) if p]

    def _style_face(self, style: Style) -> FontFace:
        bold, italic, mono = style
        files = self.fonts.mono_files if mono else self.fonts.sans_files
        name = ("bold" if bold else "") + ("italic" if italic else "") or "regular"
        return font_face(files.get(name))

    def char_width(self, char: str, style: Style) -> float:
        """Advance width of ``char`` in em."""
        table = self._widths.setdefault(style, {})
        width = table.get(char)
        if width is None:
            width = self._measure(char, style)
            table[char] = width
        return width

    def _em_widths(self, text: str, style: Style) -> list[float]:
        table = self._widths.setdefault(style, {})
        try:
            return [table[ch] for ch in text]
        except KeyError:
            return [self.char_width(ch, style) for ch in text]

    def _measure(self, char: str, style: Style) -> float:
        if unicodedata.category(char) in ("Mn", "Me", "Cf"):
            return 0.0
        face = self._style_face(style)
        if face.covers(char):
            return face.width(char)
        for path in self._fallbacks:
            fallback = font_face(path)
            if fallback.covers(char):
                return fallback.width(char) * (1.08 if style[0] else 1.0)
        return 1.0

    def line_height(self, size: float) -> float:
        """The exact line pitch (points) written for text of ``size`` points."""
        return size * LINE_FACTOR

    def _run_width(self, text: str, style: Style) -> float:
        """Width in em of a word or a run of spaces (cached: words repeat)."""
        table = self._runs.setdefault(style, {})
        width = table.get(text)
        if width is None:
            width = table[text] = sum(self._em_widths(text, style))
        return width

    def _tokens(
        self, segments: Iterable[Segment], fields: bool
    ) -> tuple[list[_Token], list[tuple[int, str, Style]]]:
        """Wrap units of the joined text (a word split across segments is one unit).

        With ``fields``, a link segment is one unit, glued to the text it touches: LibreOffice
        draws a hyperlink as a text field, which it never breaks at a space.
        """
        tokens: list[_Token] = []
        pieces: list[tuple[int, str, Style]] = []
        pos = 0
        for text, style, link in segments:
            if not text:
                continue
            pieces.append((pos, text, style))
            known = self._runs.setdefault(style, {})
            if fields and link:
                width = known.get(text)
                if width is None:
                    width = self._run_width(text, style)
                end = pos + len(text)
                if tokens and tokens[-1][5]:
                    last = tokens[-1]
                    last[2:] = [end, last[3] + width, 0.0, True, True]
                else:
                    tokens.append([_WORD, pos, end, width, 0.0, True, True])
                pos = end
                continue
            first = True
            for newline, spaces, cjk, cjk_tail, word, tail in _TOKENS.findall(text):
                if newline:
                    tokens.append([_BREAK, pos, pos + 1, 0.0, 0.0, False, False])
                    pos += 1
                elif spaces:
                    width = known.get(spaces)
                    if width is None:
                        width = self._run_width(spaces, style)
                    tokens.append([_GAP, pos, pos, width, 0.0, False, False])
                    pos += len(spaces)
                else:
                    body, trail = (word, tail) if word else (cjk, cjk_tail)
                    width = known.get(body)
                    if width is None:
                        width = self._run_width(body, style)
                    trailing = 0.0
                    if trail:
                        trailing = known.get(trail) or self._run_width(trail, style)
                    end = pos + len(body)
                    if first and word and tokens and tokens[-1][5]:
                        last = tokens[-1]
                        last[2:6] = [end, last[3] + width, trailing, not trail]
                    else:
                        tokens.append([_WORD, pos, end, width, trailing, bool(word) and not trail,
                                       False])
                    pos = end + len(trail)
                first = False
            if tokens and tokens[-1][5] and tokens[-1][2] != pos:
                tokens[-1][5] = False
        return tokens, pieces

    def _span_widths(self, pieces: list[tuple[int, str, Style]], start: int,
                     end: int) -> list[float]:
        """Per-character widths (em) of joined-text offsets ``start``..``end``."""
        widths: list[float] = []
        for offset, text, style in pieces:
            lo, hi = max(start, offset), min(end, offset + len(text))
            if lo < hi:
                widths += self._em_widths(text[lo - offset:hi - offset], style)
        return widths

    def line_starts(
        self, segments: Iterable[Segment], width: float, size: float,
        client: Client = "powerpoint",
    ) -> list[int]:
        """Offsets (into the joined text) where each wrapped line starts; ``\\n`` breaks a line.

        Greedy word wrap as PowerPoint does it: spaces hang at a line end, a word wider than
        the line breaks between characters, CJK characters break anywhere. As ``libreoffice``
        does it, a link is a field: one unit that moves whole to the next line, and when it is
        wider than a line it fills whole lines, the text after it starting on a new one.
        """
        tokens, pieces = self._tokens(segments, client == "libreoffice")
        limit = max(width * WIDTH_SLACK, size) / size  # in em from here on
        starts = [0]
        x = 0.0
        content = False
        fresh_line = False  # LibreOffice: the text after a wrapped field starts a new line
        for kind, start, end, w, trailing, _, field in tokens:
            if kind == _BREAK:
                starts.append(end)
                x, content, fresh_line = 0.0, False, False
                continue
            if kind == _GAP:
                x += w
                continue
            if content and (fresh_line or x + w > limit):
                starts.append(start)
                x, content, fresh_line = 0.0, False, False
            if w <= limit:
                x += w + trailing
                content = True
                continue
            for k, char_w in enumerate(self._span_widths(pieces, start, end), start):
                if content and x + char_w > limit:
                    starts.append(k)
                    x = 0.0
                x += char_w
                content = True
            x += trailing
            fresh_line = field
        return starts

    def line_count(self, segments: Iterable[Segment], width: float, size: float) -> int:
        """Lines ``segments`` take in a line ``width`` points wide: in PowerPoint or in
        LibreOffice, whichever wraps to more (the layout must fit both)."""
        pieces = list(segments)
        count = len(self.line_starts(pieces, width, size))
        if any(link and self._field_wraps_apart(text, style, width, size)
               for text, style, link in pieces):
            count = max(count, len(self.line_starts(pieces, width, size, "libreoffice")))
        return count

    def _field_wraps_apart(self, text: str, style: Style, width: float, size: float) -> bool:
        """Whether LibreOffice may wrap link ``text`` otherwise than PowerPoint: it holds a
        break opportunity (a space, a CJK character) or is wider than a line."""
        return (" " in text or _HAS_CJK.search(text) is not None
                or self._run_width(text, style) * size > width * WIDTH_SLACK)

    def text_width(self, text: str, style: Style, size: float) -> float:
        """Unwrapped width of ``text`` in points."""
        return sum(self._em_widths(text, style)) * size

    def widest_word(self, segments: Iterable[Segment], size: float) -> float:
        """Width (points) of the widest word of ``segments``, a word running across segments
        counted whole, as :meth:`line_starts` wraps them in PowerPoint."""
        tokens, _ = self._tokens(segments, False)
        return max((t[3] for t in tokens if t[0] == _WORD), default=0.0) * size


def unbroken_width(text_width: float) -> float:
    """The line width (points) that holds text ``text_width`` points wide on one line: the
    wrapper fills only :data:`WIDTH_SLACK` of a line (plus a hundredth of a point, so that
    rounding never breaks the word the width was made for)."""
    return text_width / WIDTH_SLACK + 0.01
