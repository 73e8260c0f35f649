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
character to the PDF's text. In a document with right-to-left text the pieces are text with a
zero-width space between them instead (:data:`_PIECE_BREAK`): the bidi algorithm sees a box as
a neutral object, a zero-width space not at all, so there the word reads as its letters do, as
in WeasyPrint and browsers. A URL is left to Typst, which breaks it itself (``linebreak_link``
in typst-layout: after ``://``, between punctuation marks, anywhere in a run of 16 or more):
one text item, so a link showing its own address gets one PDF annotation per line, where a row
of boxes gave one per box (Typst annotates each item of a link's text). Emoji are set in the
colour emoji font explicitly: Typst picks the first listed font that has a glyph, and text
fonts have monochrome ☀ and ⚡ that would win even where the text asks for the emoji form
(U+FE0F).
"""

from __future__ import annotations

import re

from renderers.text import (
    ISOLATES,
    LONG_WORD,
    MOST_MARKS,
    POP_ISOLATE,
    Direction,
    cut_long_mark_runs,
    extends_cluster,
    has_long_word,
    split_long_words,
)

#: Characters a Typst string literal cannot hold as they are.
_SPECIAL = re.compile(r'[\\"\x00-\x1f\x7f\ud800-\udfff]')
_NAMED = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: HTML's white-space collapsing: runs of ASCII white space show as one space.
_WHITE_SPACE = re.compile(r"[ \t\n\r\f]+")
#: Scripts whose long runs have no break opportunity of their own (CJK, Thai … already do).
_UNBREAKABLE = re.compile(r"[\x21-\u02ff\u0370-\u052f]+")
#: Isolate marks (LRI or RLI … PDI) around a part of a line that must read in its own
#: direction and may wrap (:func:`isolated`): a Sources entry's part or a citation too long for
#: a box.
#:
#: Each mark is a text of its own style (a fill, which a mark without a glyph never shows), so
#: that Typst shapes it alone. Shaped with its neighbour at the line's level (the space before
#: an entry's back-link, the words around an address), the mark's glyph was dropped into that
#: neighbour's cluster, whose text Typst then wrote as the space's ActualText ("\u2069 "):
#: poppler copied the mark, pdfium (which reads the font's ToUnicode) did not. Shaped alone, it
#: leaves no glyph and no text; the page is the same to the pixel.
_MARK_MARKUP = '#text(fill: black, "\\u{{{:04x}}}");'
_ISOLATE_MARKUP: dict[Direction, str] = {
    direction: _MARK_MARKUP.format(ord(mark)) for direction, mark in ISOLATES.items()
}
_POP_ISOLATE = _MARK_MARKUP.format(ord(POP_ISOLATE))
#: Where a long word may break: after these (a soft hyphen too), or every ``_PIECE`` characters.
_BREAK_AFTER = re.compile(r"(?<=[/.\-_?&=,;:#@+~|\\\u00ad])")
#: A soft hyphen (U+00AD): a break opportunity where the line shows a hyphen, as in CSS.
#: Shaped with the letters around it, Typst wrote it into the PDF's text, so a search for the
#: word failed (WeasyPrint's text has none). In a text item of its own style (a size that
#: changes nothing) it is shaped alone, a default-ignorable character with no glyph and no
#: text; at a break Typst still sees the line end in it and draws a hyphen (its text U+00AD,
#: the PDF's own mark of a hyphen added at a line's end).
SOFT_HYPHEN = "\u00ad"
_SOFT_HYPHEN_MARKUP = '#text(size: 1em, "\\u{ad}");'
#: After a box of a long word, a word joiner keeps the break at the soft hyphen's end, where
#: the hyphen is drawn (a box allows a break on either side).
_BOXED_SOFT_HYPHEN = "#sym.wj;" + _SOFT_HYPHEN_MARKUP
#: Between the pieces of a long word in a document with right-to-left text: a zero-width space,
#: a break opportunity (UAX #14, ZW) that the bidi algorithm does not see (a boundary neutral,
#: UAX #9 X9), so the word, its final full stop and a mark after it stand where they stand in
#: WeasyPrint and browsers. A row of boxes was a row of neutral objects: the boxes of
#: ``https://example.co.il/reports`` were set right to left, and held left to right between
#: isolate marks the row was one neutral object, which put a mark after the word at its left
#: and a full stop at its right. Shaped alone, as a soft hyphen is (:data:`SOFT_HYPHEN`), it
#: leaves no glyph and no text: the word is found whole in the PDF's text. A document without
#: right-to-left text, where no line reorders boxes, keeps them (its PDF stays as it was).
_PIECE_BREAK = '#text(size: 1em, "\\u{200b}");'
_PIECE = 12
#: A URL whose address Typst breaks itself: a scheme, ``://``, then what Typst's ``link_prefix``
#: takes (ASCII letters, digits and URL punctuation, brackets balanced), without the trailing
#: marks it leaves to the text. Only when an ASCII letter follows ``://``: Unicode's line
#: breaking then allows a break there, which is where Typst looks for the ``://`` (before a
#: digit it allows none, UAX #14 rule LB25).
_URL_HEAD = re.compile(r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{0,15}://(?=[A-Za-z])")
_URL_CHAR = re.compile(r"[0-9A-Za-z!#$%&*+,\-./:;=?@_~'\[\]()]")
_URL_TRAILING = "!,.:;?'"
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
    if text.isprintable() and '"' not in text and "\\" not in text:
        return '"' + text + '"'  # nothing to escape (the common case, checked in C)
    return '"' + _SPECIAL.sub(_escape_char, text) + '"'


def text_expr(text: str) -> str:
    """``text`` as an embedded string expression in markup: ``#"…";``."""
    return "#" + string_literal(text) + ";"


def collapse_white_space(text: str) -> str:
    """Runs of spaces, tabs and line ends as one space (how HTML shows normal text)."""
    if "  " not in text and text.isprintable():  # no run to fold: a sixth of the regex's time
        return text
    return _WHITE_SPACE.sub(" ", text)


def _word_parts(word: str) -> list[str]:
    """``word`` cut after URL punctuation and soft hyphens (which the parts keep), and every
    ``_PIECE`` characters in between."""
    out: list[str] = []
    for part in _BREAK_AFTER.split(word):
        out.extend(part[i : i + _PIECE] for i in range(0, len(part), _PIECE))
    return out


def word_pieces(word: str) -> list[str]:
    """``word`` cut after URL punctuation, and every ``_PIECE`` characters in between; soft
    hyphens left out."""
    return [shown for piece in _word_parts(word) if (shown := piece.replace(SOFT_HYPHEN, ""))]


def typst_url(text: str) -> tuple[int, int] | None:
    """Where the first URL in ``text`` that Typst breaks by itself starts and ends, if any."""
    head = _URL_HEAD.search(text)
    if head is None:
        return None
    end = head.end()
    brackets: list[str] = []
    while end < len(text) and _URL_CHAR.match(text, end):
        char = text[end]
        if char in "([":
            brackets.append(char)
        elif char in ")]" and (not brackets or brackets.pop() != "(["[")]".index(char)]):
            break
        end += 1
    while end > head.end() and text[end - 1] in _URL_TRAILING:
        end -= 1
    return head.start(), _last_url_break(text, head.start(), end)


def _url_class(char: str) -> int:
    """Typst's class of a URL character: 0 letter, 1 digit, 2 opening bracket, 3 other."""
    return 0 if char.isalpha() else 1 if char.isnumeric() else 2 if char in "([" else 3


def _last_url_break(text: str, start: int, end: int) -> int:
    """``end``, or where the URL's last piece starts when that piece is a long word: Typst
    breaks a piece of 16 characters or more anywhere only when another piece follows, so a
    long last piece (``…/xxxxxxxx…``) is left to the boxes."""
    last, previous = start, 3
    for index in range(start, end):
        kind = _url_class(text[index])
        if index > start and previous != 2 and (previous == 3 if kind == 3 else kind != previous):
            last = index
        previous = kind
    return last if end - last >= LONG_WORD else end


def isolated(markup: str, direction: Direction) -> str:
    """``markup`` held between isolate marks (LRI or RLI … PDI): it reads in ``direction``
    apart from its neighbours and may wrap, as an HTML element's ``dir`` isolates it. Typst
    honours the marks (its bidi algorithm is Unicode's, isolates included); each is shaped
    alone (:data:`_MARK_MARKUP`), so none reaches the PDF's text. Where a part fits on a
    line, a box set in its direction isolates it without them."""
    return _ISOLATE_MARKUP[direction] + markup + _POP_ISOLATE


def _breakable_run(segment: str, bidi: bool) -> str:
    """A run of :data:`_UNBREAKABLE` characters: as it is when short, else cut into pieces
    (:func:`_word_parts`) Typst may break between: boxes, or in a document with right-to-left
    text (``bidi``) text with a zero-width space between pieces (:data:`_PIECE_BREAK`)."""
    if len(segment) < LONG_WORD:
        return _plain(segment)
    pieces = _word_parts(segment)
    if bidi:  # a soft hyphen at a piece's end is a break opportunity already
        return "".join(_plain(piece) + ("" if piece.endswith(SOFT_HYPHEN) else _PIECE_BREAK)
                       for piece in pieces[:-1]) + _plain(pieces[-1])
    out = []
    for piece in pieces:
        shown = piece.replace(SOFT_HYPHEN, "")
        if shown:
            out.append(f"#box[{text_expr(shown)}];")
        if piece.endswith(SOFT_HYPHEN):
            out.append(_BOXED_SOFT_HYPHEN)
    return "".join(out)


def _breakable_word(word: str, bidi: bool) -> str:
    """A long word with break opportunities (:func:`_breakable_run`; CJK and other runs stay
    as they are, URLs are left to Typst: :func:`typst_url`)."""
    out: list[str] = []
    last = 0
    for run in _UNBREAKABLE.finditer(word):
        if run.start() > last:
            out.append(_plain(word[last : run.start()]))
        segment = run.group(0)
        while (url := typst_url(segment)) is not None:
            out.append(_breakable_run(segment[: url[0]], bidi))
            out.append(text_expr(segment[url[0] : url[1]]))
            segment = segment[url[1] :]
        out.append(_breakable_run(segment, bidi))
        last = run.end()
    if last < len(word):
        out.append(_plain(word[last:]))
    return "".join(out)


def text_markup(text: str, *, collapse: bool = True, bidi: bool = False) -> str:
    """Markup showing ``text`` as plain text; long words may break anywhere, emoji are emoji.

    ``collapse`` folds white space as HTML does (code keeps it: pass False); ``bidi``: the
    text is in a document with right-to-left text (:data:`_PIECE_BREAK`).
    """
    if collapse:
        text = collapse_white_space(text)
    if text.isascii():  # most text: no emoji (each has a character beyond ASCII)
        return _words(text, bidi)
    if len(marked := cut_long_mark_runs(text)) > 1:
        return _marks_cut(marked, bidi)
    out: list[str] = []
    last = 0
    for emoji in _EMOJI.finditer(text):
        out.append(_words(text[last : emoji.start()], bidi))
        out.append(f"#emoji-text({string_literal(emoji.group(0))});")
        last = emoji.end()
    out.append(_words(text[last:], bidi))
    return "".join(out)


def _marks_cut(pieces: list[str], bidi: bool) -> str:
    """Text whose runs of marks :func:`~renderers.text.cut_long_mark_runs` cut: the marks that
    open each piece after the first in a box of their own, so that Typst shapes them apart from
    the marks before them (a box, not a text of its own style: thousands of those in a
    paragraph are laid out in quadratic time, as many boxes are not)."""
    out = [text_markup(pieces[0], collapse=False, bidi=bidi)]
    for piece in pieces[1:]:
        marks = next((i for i, char in enumerate(piece[:MOST_MARKS]) if not extends_cluster(char)),
                     min(len(piece), MOST_MARKS))
        out.append(f"#box[{text_expr(piece[:marks])}];")
        out.append(text_markup(piece[marks:], collapse=False, bidi=bidi))
    return "".join(out)


def _words(text: str, bidi: bool) -> str:
    """Markup for text without emoji: long words breakable (:func:`_breakable_word`)."""
    if not has_long_word(text):
        return _plain(text)
    return "".join(_breakable_word(piece, bidi) if long else _plain(piece)
                   for piece, long in split_long_words(text))


#: The characters a text shows each in a text of its own: a soft hyphen (:data:`SOFT_HYPHEN`)
#: and the isolate marks a text may hold (a CSL entry's name in another script,
#: :mod:`renderers.styles.bidi`), each shaped alone as :data:`_MARK_MARKUP` says.
_ALONE = re.compile("[\u00ad\u2066-\u2069]")
_ALONE_MARKUP = {SOFT_HYPHEN: _SOFT_HYPHEN_MARKUP,
                 **{chr(c): _MARK_MARKUP.format(c) for c in range(0x2066, 0x206A)}}


def _plain(text: str) -> str:
    """``text`` as an embedded string expression, each soft hyphen and isolate mark a text of
    its own (:data:`_ALONE`); nothing for no text."""
    if _ALONE.search(text) is None:
        return text_expr(text) if text else ""
    out: list[str] = []
    last = 0
    for found in _ALONE.finditer(text):
        out.append(text_expr(text[last:found.start()]) if found.start() > last else "")
        out.append(_ALONE_MARKUP[found.group()])
        last = found.end()
    out.append(text_expr(text[last:]) if last < len(text) else "")
    return "".join(out)
