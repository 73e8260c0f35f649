"""Text into Typst, safely: every piece of the author's text becomes a Typst *string literal*.

Typst markup gives meaning to almost every ASCII punctuation mark (``#`` starts code, ``$`` math,
``@`` a reference, ``<x>`` a label, ``*``/``_`` emphasis, ``//`` a comment, ``=`` at a line start
a heading …). Escaping each of them inside markup is easy to get wrong, so no author text is ever
written as markup: it is written as ``#"…";`` — an embedded string expression that Typst shows
as plain text. Inside a string literal only the backslash and the double quote are special; both
are escaped here, and every control character is written as a ``\\u{…}`` escape, so a string
can neither end early nor span lines. The trailing ``;`` ends the embedded expression, so
whatever the writer puts after it can never continue it (``.field``, ``(args)`` or ``[body]``).

Words too long for a line get break opportunities the way CSS ``overflow-wrap: anywhere``
gives them: the word is set as a row of boxes (Typst breaks between boxes), which adds no
character to the PDF's text. Emoji are set in the colour emoji font explicitly: Typst picks the
first listed font that has a glyph, and text fonts have monochrome ☀ and ⚡ that would win even
where the text asks for the emoji form (U+FE0F).
"""

from __future__ import annotations

import re

from renderers.text import LONG_WORD, split_long_words

#: Characters a Typst string literal cannot hold as they are.
_SPECIAL = re.compile(r'[\\"\x00-\x1f\x7f\ud800-\udfff]')
_NAMED = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: HTML's white-space collapsing: runs of ASCII white space show as one space.
_WHITE_SPACE = re.compile(r"[ \t\n\r\f]+")
#: Scripts whose long runs have no break opportunity of their own (CJK, Thai … already do).
_UNBREAKABLE = re.compile(r"[\x21-\u02ff\u0370-\u052f]+")
#: A boxed run is left to right (:data:`_UNBREAKABLE` holds left-to-right scripts only), but
#: in a right-to-left line the bidi algorithm sees each box as a neutral object and ordered
#: the boxes of ``https://example.co.il/reports`` right to left ("reports/il.co.example//:https").
#: In a document with right-to-left text the row is isolated left to right (LRI … PDI) and each
#: box is laid out left to right inside. Typst writes the two marks into the PDF's text, so a
#: document without right-to-left text, where no line can reorder the boxes, goes without.
_LEFT_TO_RIGHT_ISOLATE = r'#"\u{2066}";'
_POP_ISOLATE = r'#"\u{2069}";'
#: Where a long word may break: after these (a soft hyphen too), or every ``_PIECE`` characters.
_BREAK_AFTER = re.compile(r"(?<=[/.\-_?&=,;:#@+~|\\\u00ad])")
#: A soft hyphen: Typst writes it into the PDF's text (as it does the hyphen it draws at a
#: break, with ``-?`` as well), so a search for the word fails; WeasyPrint's text has none. It
#: is left out; in a long word its place is still a break opportunity (without a hyphen).
SOFT_HYPHEN = "\u00ad"
_PIECE = 12
#: Characters drawn as emoji on their own (Emoji_Presentation=Yes in the BMP; the pictograph
#: planes) — the rest only when U+FE0F asks for it.
_EMOJI_BASE = (
    "\U0001F000-\U0001FAFF\u231a\u231b\u23e9-\u23ec\u23f0\u23f3\u25fd\u25fe\u2614\u2615"
    "\u2648-\u2653\u267f\u2693\u26a1\u26aa\u26ab\u26bd\u26be\u26c4\u26c5\u26ce\u26d4"
    "\u26ea\u26f2\u26f3\u26f5\u26fa\u26fd\u2705\u270a\u270b\u2728\u274c\u274e"
    "\u2753-\u2755\u2757\u2795-\u2797\u27b0\u27bf\u2b1b\u2b1c\u2b50\u2b55"
)
#: A flag is a pair of regional indicators; taken one by one, each shows as a boxed letter.
_FLAG = "[\U0001F1E6-\U0001F1FF]{2}"
_EMOJI_ONE = rf"(?:{_FLAG}|[{_EMOJI_BASE}]\ufe0f?|[^\s\ufe0f]\ufe0f\u20e3?)"
#: One emoji as the reader sees it: skin tones, tags and ZWJ sequences included.
_EMOJI = re.compile(
    rf"{_EMOJI_ONE}(?:[\U0001F3FB-\U0001F3FF\U000E0020-\U000E007F]|\u200d{_EMOJI_ONE})*"
)


def _escape_char(match: re.Match[str]) -> str:
    char = match.group(0)
    named = _NAMED.get(char)
    if named is not None:
        return named
    if "\ud800" <= char <= "\udfff":
        return "\\u{fffd}"  # a lone surrogate cannot be encoded: show the replacement character
    return f"\\u{{{ord(char):x}}}"


def string_literal(text: str) -> str:
    """``text`` as a Typst string literal (with its quotes), safe in markup and code."""
    return '"' + _SPECIAL.sub(_escape_char, text) + '"'


def text_expr(text: str) -> str:
    """``text`` as an embedded string expression in markup: ``#"…";``."""
    return "#" + string_literal(text) + ";"


def collapse_white_space(text: str) -> str:
    """Runs of spaces, tabs and line ends as one space (how HTML shows normal text)."""
    return _WHITE_SPACE.sub(" ", text)


def _pieces(word: str) -> list[str]:
    """``word`` cut after URL punctuation, and every ``_PIECE`` characters in between."""
    out: list[str] = []
    for part in _BREAK_AFTER.split(word):
        out.extend(part[i : i + _PIECE] for i in range(0, len(part), _PIECE))
    return [shown for piece in out if (shown := piece.replace(SOFT_HYPHEN, ""))]


def _breakable_word(word: str, isolate: bool) -> str:
    """A long word as boxes Typst may break between (CJK and other runs stay as they are);
    ``isolate``: each row of boxes is a left-to-right isolate (:data:`_LEFT_TO_RIGHT_ISOLATE`).
    """
    out: list[str] = []
    last = 0
    for run in _UNBREAKABLE.finditer(word):
        if run.start() > last:
            out.append(_plain(word[last : run.start()]))
        segment = run.group(0)
        if len(segment) < LONG_WORD:
            out.append(_plain(segment))
        else:
            pieces = _pieces(segment)
            if isolate:
                out.append(_LEFT_TO_RIGHT_ISOLATE)
                out.extend(f"#box(text(dir: ltr, {string_literal(p)}));" for p in pieces)
                out.append(_POP_ISOLATE)
            else:
                out.extend(f"#box[{text_expr(p)}];" for p in pieces)
        last = run.end()
    if last < len(word):
        out.append(_plain(word[last:]))
    return "".join(out)


def text_markup(text: str, *, collapse: bool = True, isolate: bool = False) -> str:
    """Markup showing ``text`` as plain text; long words may break anywhere, emoji are emoji.

    ``collapse`` folds white space as HTML does (code keeps it: pass False); ``isolate``: the
    text is in a document with right-to-left text (:data:`_LEFT_TO_RIGHT_ISOLATE`).
    """
    if collapse:
        text = collapse_white_space(text)
    out: list[str] = []
    last = 0
    for emoji in _EMOJI.finditer(text):
        out.append(_words(text[last : emoji.start()], isolate))
        out.append(f"#emoji-text({string_literal(emoji.group(0))});")
        last = emoji.end()
    out.append(_words(text[last:], isolate))
    return "".join(out)


def _words(text: str, isolate: bool) -> str:
    """Markup for text without emoji: long words as breakable boxes."""
    return "".join(_breakable_word(piece, isolate) if long else _plain(piece)
                   for piece, long in split_long_words(text))


def _plain(text: str) -> str:
    """``text`` as an embedded string expression, without soft hyphens (:data:`SOFT_HYPHEN`);
    nothing when that leaves no text."""
    shown = text.replace(SOFT_HYPHEN, "")
    return text_expr(shown) if shown else ""
