"""Syntax highlighting of code blocks, decided once for every writer (Pygments).

A fenced code block with a language becomes lines of coloured spans here; the writers only lay
the spans out (HTML classes and a stylesheet, DOCX and PPTX coloured runs). The rules:

* a lexer is chosen by name only (:func:`pygments.lexers.get_lexer_by_name`: the fence's
  language or one of its aliases), never guessed from the text; an unknown language, and a
  block with no language, stays plain — never an error;
* the colours, weights and slants come from a Pygments style (``highlight_style``); every token
  without a colour of its own takes the style's text colour, and the block is shaded with the
  style's background, so dark styles stay readable;
* cost is bounded: a block longer than :data:`MAX_CODE_CHARS` characters, or with a line longer
  than :data:`MAX_LINE_CHARS`, stays plain, and a document highlights at most
  :data:`MAX_DOCUMENT_CODE_CHARS` characters (:class:`Highlighter`; later blocks stay plain).
  Pygments lexers are regular expressions, most of them linear (Python: about 0.3 MB per CPU
  second); the few that a crafted input drives into quadratic time across lines
  (:data:`SLOW_LEXERS`, found by ``bench/highlight_bench.py --fuzz``) are refused; the line
  cap bounds those quadratic within a line (Make: under a second for the largest block) and
  the document budget the sum. ``limits.max_seconds`` stays the last guard of the render.

The result depends only on the text, the language and the style: identical in every process.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # Pygments itself is imported by the first block that has a language
    from pygments.lexer import Lexer
    from pygments.token import _TokenType

#: A code block longer than this (characters) is shown plain.
MAX_CODE_CHARS = 20_000
#: A code block holding a line longer than this (characters) is shown plain.
MAX_LINE_CHARS = 1_000
#: The most code characters one document highlights (in document order).
MAX_DOCUMENT_CODE_CHARS = 500_000
#: A language name longer than this is no lexer's name.
MAX_LANGUAGE_CHARS = 64
#: Lexers (by their first alias) whose time grows with the square of a crafted input (1,000
#: characters of blank lines: 0.2–0.8 s, 16 times the time of 250): their languages stay plain.
SLOW_LEXERS = frozenset({"autohotkey", "autoit"})
#: The ``highlight_style`` value that turns highlighting off.
NO_HIGHLIGHT = "none"


@dataclass(frozen=True)
class TokenLook:
    """How one kind of token is drawn: ``color`` is ``RRGGBB`` (never empty: a token without
    a colour of its own takes the style's text colour, black when the style has none)."""

    color: str
    bold: bool = False
    italic: bool = False
    underline: bool = False


@dataclass(frozen=True)
class CodeSpan:
    """A run of code of one token kind. ``kind`` is Pygments' short class name (``k`` for a
    keyword, ``s2`` for a double-quoted string, ``""`` for plain text); ``text`` never holds a
    newline."""

    text: str
    kind: str
    look: TokenLook


@dataclass(frozen=True)
class HighlightedCode:
    """A code block as coloured spans, one tuple per line (the block's text split at ``\\n``).

    ``background`` is the style's background (``RRGGBB``) and ``foreground`` its text colour.
    """

    lines: tuple[tuple[CodeSpan, ...], ...]
    background: str
    foreground: str

    @property
    def text(self) -> str:
        """The code as written (the spans' text joined)."""
        return "\n".join("".join(span.text for span in line) for line in self.lines)

    def runs(self) -> tuple[tuple[tuple[str, TokenLook], ...], ...]:
        """Each line as ``(text, look)`` runs, neighbours of the same look joined (what an
        office document needs: one coloured run per change of colour or weight)."""
        out = []
        for line in self.lines:
            runs: list[tuple[str, TokenLook]] = []
            for span in line:
                if runs and runs[-1][1] == span.look:
                    runs[-1] = (runs[-1][0] + span.text, span.look)
                else:
                    runs.append((span.text, span.look))
            out.append(tuple(runs))
        return tuple(out)

    def looks(self) -> dict[str, TokenLook]:
        """Every token kind the block uses with its look (for a stylesheet)."""
        return {span.kind: span.look for line in self.lines for span in line}


@lru_cache(maxsize=128)  # the formats of one render colour the same blocks: lexed once
def highlight_code(text: str, language: str, style: str) -> HighlightedCode | None:
    """``text`` highlighted as ``language`` in Pygments style ``style``, or None when it stays
    plain: highlighting off (``style == "none"``), no language or an unknown one, a block
    over the size bounds, or one holding a carriage return (lexers turn it into a newline;
    readers never leave one)."""
    if style == NO_HIGHLIGHT or not text or len(text) > MAX_CODE_CHARS or "\r" in text:
        return None
    lexer = _lexer(lexer_name(language))
    if lexer is None or _longest_line(text) > MAX_LINE_CHARS:
        return None
    from pygments.token import STANDARD_TYPES, Token

    palette = _palette(style)
    lines: list[list[CodeSpan]] = [[]]
    for ttype, value in _tokens(lexer, text):
        kind = Token if value.isspace() else _standard_type(ttype)  # blanks have no colour
        look = palette.look(kind)
        name = STANDARD_TYPES[kind]
        for index, piece in enumerate(value.split("\n")):
            if index:
                lines.append([])
            if piece:
                _append(lines[-1], CodeSpan(piece, name, look))
    return HighlightedCode(
        tuple(tuple(line) for line in lines), palette.background, palette.foreground
    )


class Highlighter:
    """The highlighting of one document in one style: :func:`highlight_code` within the
    document's budget (:data:`MAX_DOCUMENT_CODE_CHARS`). Each writer makes one and asks in
    document order, so every format colours the same blocks."""

    def __init__(self, style: str) -> None:
        self.style = style
        self.left = MAX_DOCUMENT_CODE_CHARS

    def __call__(self, text: str, language: str) -> HighlightedCode | None:
        """``text`` highlighted, or None when it stays plain (see :func:`highlight_code`; also
        when it would pass what is left of the budget)."""
        if len(text) > self.left:
            return None
        highlighted = highlight_code(text, language, self.style)
        if highlighted is not None:
            self.left -= len(text)
        return highlighted


def lexer_name(language: str) -> str:
    """The lexer name a fence's language asks for: ``python`` from ``Python``, ``{.python}`` or
    ``python {.numberLines}`` (pandoc's attribute syntax); "" when there is none."""
    words = language.strip().split()
    name = words[0] if words else ""
    name = name.strip("{}").removeprefix(".").lower()
    return name if len(name) <= MAX_LANGUAGE_CHARS else ""


def _longest_line(text: str) -> int:
    return max(len(line) for line in text.split("\n"))


def _append(line: list[CodeSpan], span: CodeSpan) -> None:
    """Add ``span`` to ``line``, merged with the previous span of the same kind."""
    if line and line[-1].kind == span.kind:
        line[-1] = CodeSpan(line[-1].text + span.text, span.kind, span.look)
    else:
        line.append(span)


def _tokens(lexer: Lexer, text: str) -> list[tuple[_TokenType, str]]:
    """The lexer's tokens for ``text`` exactly (the newline ``ensurenl`` adds taken off again:
    line-based rules need it, the output must not show it)."""
    tokens = [(ttype, value) for ttype, value in lexer.get_tokens(text) if value]
    if not text.endswith("\n") and tokens and tokens[-1][1].endswith("\n"):
        ttype, value = tokens[-1]
        tokens[-1] = (ttype, value[:-1])
    return tokens


@lru_cache(maxsize=64)
def _lexer(name: str) -> Lexer | None:
    """The lexer registered under ``name`` (no guessing), or None. Text is kept as written:
    no stripping, no tab expansion."""
    if not name:
        return None
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        lexer: Lexer = get_lexer_by_name(name, stripnl=False, stripall=False, ensurenl=True,
                                         tabsize=0)
    except ClassNotFound:
        return None
    return None if lexer.aliases[0] in SLOW_LEXERS else lexer


@lru_cache(maxsize=1024)  # called for every token; a lexer has a few dozen token types
def _standard_type(ttype: _TokenType) -> _TokenType:
    """The nearest token type with a standard short name (lexers add their own subtypes)."""
    from pygments.token import STANDARD_TYPES

    while ttype not in STANDARD_TYPES:
        ttype = ttype.parent
    return ttype


@dataclass(frozen=True)
class _Palette:
    """A Pygments style read once: its background, text colour and each token kind's look."""

    style: Any
    background: str
    foreground: str

    def look(self, ttype: _TokenType) -> TokenLook:
        return _look(self.style, self.foreground, ttype)


@lru_cache(maxsize=32)
def _palette(name: str) -> _Palette:
    from pygments.styles import get_style_by_name
    from pygments.token import Token

    style = get_style_by_name(name)
    text = style.style_for_token(Token.Text)["color"] or style.style_for_token(Token)["color"]
    return _Palette(style, hex_color(style.background_color) or "FFFFFF", hex_color(text) or
                    "000000")


@lru_cache(maxsize=4096)
def _look(style: Any, foreground: str, ttype: _TokenType) -> TokenLook:
    found = style.style_for_token(ttype)
    return TokenLook(
        color=hex_color(found["color"]) or foreground,
        bold=bool(found["bold"]),
        italic=bool(found["italic"]),
        underline=bool(found["underline"]),
    )


def hex_color(value: str | None) -> str:
    """``RRGGBB`` (upper case) from a Pygments colour (``#f8f8f8``, ``f00``), or "" when it is
    not a hexadecimal colour."""
    digits = (value or "").strip().removeprefix("#")
    if len(digits) == 3:
        digits = "".join(ch * 2 for ch in digits)
    if len(digits) != 6 or any(ch not in "0123456789abcdefABCDEF" for ch in digits):
        return ""
    return digits.upper()
