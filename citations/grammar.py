"""The citation token grammar as regular expressions, built from pieces (ARCHITECTURE §3.1).

Every form (bracket, USAGE, bare, ``<sup class="cite">``, the dialects) is a list of pieces;
the scanning regex and the "could this still become a token?" prefix regex the streaming
rewriter uses are both derived from the same pieces, so they can never disagree. Split from
:mod:`citations.tokens`, which reads tokens with these patterns and re-exports the limits.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

#: Optional dialects accepted by :func:`scan` / :func:`match_at`.
DIALECTS: frozenset[str] = frozenset({"s_dialect", "numeric"})
#: Widest range a token may name (``[[S:1-1000]]`` is fine, ``[[S:1-1001]]`` is invalid).
MAX_RANGE = 1000
#: Most sids one token may expand to.
MAX_SIDS_PER_TOKEN = 10_000
#: Largest accepted sid.
MAX_SID = 2**31 - 1
#: The sids a citation token can name, in words: a pool row with another sid could never be
#: cited, so the pool refuses it (:func:`citations.pool.parse_sid`) with these words.
SID_RANGE = f"an integer from 1 to {MAX_SID}"


def sid_in_range(sid: int) -> bool:
    """Whether a token can name ``sid`` (1 … :data:`MAX_SID`): the one rule the token grammar
    and the sources pool share."""
    return 0 < sid <= MAX_SID
#: Longest sid list inside one bracket token, in characters.
MAX_SPEC_CHARS = 1024
#: Longest inner content of a ``<sup class="cite">`` element, in characters.
MAX_SUP_INNER = 2048
#: Upper bound on the length of a bracket, bare or dialect token. A ``<sup class="cite">`` tag's
#: attributes are not bounded: the readers read a tag of any length (see the ``sup`` form).
MAX_TOKEN_CHARS = 4096
#: Most significant digits any number read from text may have: Python's own default limit, past
#: which ``int()`` raises a ``ValueError`` (and below which its cost, quadratic in the length,
#: stays small).
MAX_NUMBER_DIGITS = 4300

ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\uff0d"
_NORMALIZE = str.maketrans(
    {
        **{ord(c): None for c in ZERO_WIDTH},
        **{ord(c): "-" for c in _DASHES},
        **{0xFF10 + i: str(i) for i in range(10)},
        0xFF3B: "[",
        0xFF3D: "]",
        0xFF1A: ":",
        0xFF0C: ",",
        0xFF1B: ";",
        0xFF33: "S",
        0xFF53: "s",
        0x00A0: " ",
        0x3000: " ",
    }
)


# --------------------------------------------------------------------------------------------
# The grammar, built from pieces so that the scanning regex and the "could this still become a
# token?" prefix regex used by the streaming rewriter can never disagree.


class _Piece(NamedTuple):
    main: str  # regex used when scanning (may hold a named group or a lookaround)
    partial: str  # regex matching every prefix of what ``main`` matches (empty included)
    full: str  # ``main`` without group names or lookarounds (for the prefix regex)


def read_digits(digits: str, max_digits: int = MAX_NUMBER_DIGITS) -> int | None:
    """The integer a run of decimal digits names, or None when it has more than ``max_digits``
    significant digits.

    The significant digits are counted before ``int()`` sees them: ``int()`` refuses a run of
    more than 4,300 digits with a ``ValueError`` and costs time quadratic in its length. Leading
    zeros are not counted (``007`` is 7).
    """
    significant = digits.lstrip("0")
    if len(significant) > max_digits:
        return None
    return int(significant or "0")


def _closure(pattern: str, name: str | None = None) -> _Piece:
    """A piece that matches a (possibly empty) repetition: its prefixes are itself."""
    main = f"(?P<{name}>{pattern})" if name else pattern
    return _Piece(main, pattern.rstrip("+") if pattern.endswith("}+") else pattern, pattern)


def _char(cls: str) -> _Piece:
    """A piece that matches exactly one character of class ``cls``."""
    return _Piece(cls, f"(?:{cls})?", cls)


def _words(*words: str, name: str | None = None, ignore_case: bool = False) -> _Piece:
    """A piece matching one of ``words`` (each char may be a class like ``[Ss]``)."""
    flag = "?i:" if ignore_case else "?:"
    full = f"({flag}{'|'.join(words)})"
    nested = []
    for word in words:
        chars = re.findall(r"\[[^\]]*\]|.", word)
        inner = ""
        for char in reversed(chars):
            inner = f"(?:{char}{inner})?"
        nested.append(inner)
    partial = f"({flag}{'|'.join(nested)})"
    return _Piece(f"(?P<{name}>{full})" if name else full, partial, full)


def _look(pattern: str) -> _Piece:
    """A lookaround: used when scanning, ignored by the prefix regex (which stays conservative)."""
    return _Piece(pattern, "", "")


_Z = f"[{ZERO_WIDTH}]{{0,16}}"
#: Most white space (spaces, tabs, no-break and ideographic spaces, zero-width characters) a
#: bracket token holds in one run before its colon. A longer run around its tag still makes a
#: token, an invalid one (:data:`_WZ_TAG`), so the reader and the audit both say why it cites
#: nothing: ``[[S`` and 65 no-break spaces then ``:1]]`` was no token, and silently text.
MAX_TOKEN_SPACE = 64
_WZ = f"[ \\t\\u00a0\\u3000{ZERO_WIDTH}]{{0,{MAX_TOKEN_SPACE}}}"
_WZ_TAG = f"[ \\t\\u00a0\\u3000{ZERO_WIDTH}]{{0,{MAX_SPEC_CHARS}}}+"
#: A run of :data:`_WZ`'s characters.
TOKEN_SPACE_RUN = re.compile(f"[ \\t\\u00a0\\u3000{ZERO_WIDTH}]+")
_LB = "[\\[\\uff3b]"
_RB = "[\\]\\uff3d]"
_COLON = "[:\\uff1a]"
_DIGIT = "[0-9\\uff10-\\uff19]"
_SEPS = f",;\\uff0c\\uff1b\\-{_DASHES}"
_NUM_BODY = f"[0-9\\uff10-\\uff19 \\t\\u00a0\\u3000{_SEPS}{ZERO_WIDTH}]{{1,{MAX_SPEC_CHARS}}}+"
_ANY_BODY = f"[^\\[\\]\\uff3b\\uff3d\\n]{{0,{MAX_SPEC_CHARS}}}+"
_S_ITEM = f"[Ss\\uff33\\uff53]{_DIGIT}{{1,10}}"
_S_BODY = (
    f"{_S_ITEM}(?:[ \\t]*[{_SEPS}][ \\t]*[Ss\\uff33\\uff53]?{_DIGIT}{{1,10}}){{0,200}}"
)
_N_BODY = f"[0-9]{{1,6}}(?:[ \\t]*[,\\-{_DASHES}][ \\t]*[0-9]{{1,6}}){{0,200}}"
#: A ``class`` attribute naming ``cite``, read inside the tag only: a quoted value running past
#: the ``>`` that ends the tag made the token depend on the text after it (``<sup class="cite>``
#: then a ``"`` later was a token to the scanner and none alone: an AssertionError). A quoted
#: value is first checked to close: looking for its closing quote after each "cite" in it took
#: 1.8 s for 100 KB of ``cite `` (quadratic).
_CLASS_CITE = (
    r"""(?=[^<>]*?\b(?i:class)\s*=\s*(?:"(?=[^"<>]*+")[^"<>]*?(?<![\w-])cite(?![\w-])|"""
    r"""'(?=[^'<>]*+')[^'<>]*?(?<![\w-])cite(?![\w-])|cite(?![\w\-"'])))"""
)

_FORMS: dict[str, list[_Piece]] = {
    "bracket": [
        _char(_LB),
        _closure(_WZ),
        _char(_LB),
        _closure(_WZ_TAG),
        _words("[Ss\\uff33\\uff53]", "USAGE", name="tag", ignore_case=True),
        _closure(_WZ_TAG),
        _char(_COLON),
        _closure(_ANY_BODY, name="spec"),
        _char(_RB),
        _closure(_Z),
        _char(_RB),
    ],
    "bare": [
        _char(_LB),
        _closure(_Z),
        _char("[Ss\\uff33\\uff53]"),
        _closure(_WZ),
        _char(_COLON),
        _closure(_NUM_BODY, name="bspec"),
        _char(_RB),
        _look("(?!\\()"),
    ],
    "sup": [
        _char("<"),
        _words("sup", ignore_case=True),
        _look("(?=[\\s/>])"),
        _look(_CLASS_CITE),
        # Unbounded, as the readers read a tag: bounded at 1,024 characters, a longer tag (a
        # 5,000-digit data-sids) was no token, and the audit passed what the render warned
        # about. Still linear: a tag holds no "<", so each scan stops at the next one.
        _closure("[^<>]*+", name="attrs"),
        _char(">"),
        _Piece(
            f"(?P<inner>(?s:.{{0,{MAX_SUP_INNER}}}?))",
            f"(?s:.{{0,{MAX_SUP_INNER}}})",
            f"(?s:.{{0,{MAX_SUP_INNER}}}?)",
        ),
        _char("<"),
        _char("/"),
        _words("sup", ignore_case=True),
        _closure("\\s{0,16}"),
        _char(">"),
    ],
    "s_dialect": [
        _char(_LB),
        _closure(_Z),
        _Piece(f"(?P<sspec>{_S_BODY})", f"[Ss\\uff33\\uff53 \\t{_SEPS}{_DIGIT[1:-1]}]*", _S_BODY),
        _char(_RB),
        _look("(?![\\(\\[:])"),
    ],
    "numeric": [
        _char("\\["),
        _look("(?<![\\w\\[\\]\\)\\\\!^].)"),
        _Piece(f"(?P<nspec>{_N_BODY})", f"[0-9 \\t,\\-{_DASHES}]*", _N_BODY),
        _char("\\]"),
        _look("(?![\\(\\[\\]:])"),
    ],
}
_BASE_FORMS = ("bracket", "bare", "sup")
_ORDERED_DIALECTS = ("s_dialect", "numeric")


def _forms_for(dialects: frozenset[str]) -> tuple[str, ...]:
    unknown = dialects - DIALECTS
    if unknown:
        raise ValueError(
            f"unknown citation dialect(s) {sorted(unknown)}: accepted are {sorted(DIALECTS)}"
        )
    return _BASE_FORMS + tuple(d for d in _ORDERED_DIALECTS if d in dialects)


def _prefix_regex(pieces: list[_Piece]) -> str:
    """A regex whose full matches are exactly the prefixes (complete ones too) of a form."""
    nested = ""
    for piece in reversed(pieces):
        if not piece.full and not piece.partial:
            continue
        nested = f"(?:{piece.full}{nested}|{piece.partial})"
    return nested


@lru_cache(maxsize=16)
def _token_regex(dialects: frozenset[str]) -> re.Pattern[str]:
    """The exact token regex for ``dialects``: ``lastgroup`` names the form of a match and the
    named groups (``spec``, ``tag``, ``attrs``, ...) hold its parts."""
    forms = _forms_for(dialects)
    return re.compile("|".join(f"(?P<{f}>{''.join(p.main for p in _FORMS[f])})" for f in forms))


#: The plain ``[[S:1,3]]`` spelling after its first ``[``: tried first when scanning because
#: most tokens are written this way; it matches exactly what the bracket form would match.
_PLAIN_TAIL = "\\[S:[0-9,]{1,64}+\\]\\]"
_GROUP_NAME_RE = re.compile(r"\(\?P<\w+>")
_SUP_HINT_RE = re.compile("<[Ss][Uu][Pp]")


def _tail(form: str) -> str:
    """The regex of ``form`` without its first character and without named groups."""
    return _GROUP_NAME_RE.sub("(?:", "".join(p.main for p in _FORMS[form][1:]))


@lru_cache(maxsize=32)
def _scan_pattern(dialects: frozenset[str], wide: bool, sup: bool) -> re.Pattern[str]:
    """The scanning regex: the forms of :func:`_token_regex` split by their first character.

    Every form starts with ``[``, ``［`` or ``<``, so each branch begins with a literal and the
    regex engine skips ahead with a fast search instead of trying every form at every
    position. ``wide`` adds the ``［`` forms and ``sup`` the ``<sup>`` form (only needed when
    the text holds those characters). Only ``sup`` is a named group (``lastgroup == "sup"``).
    """
    forms = _forms_for(dialects)
    square = [_PLAIN_TAIL, *(_tail(f) for f in forms if f != "sup")]
    branches = ["\\[(?:" + "|".join(square) + ")"]
    if wide:
        wide_tails = (_tail(f) for f in forms if _FORMS[f][0].main == _LB)
        branches.append("\\uff3b(?:" + "|".join(wide_tails) + ")")
    if sup:
        branches.append(f"<(?P<sup>{_tail('sup')})")
    return re.compile("|".join(branches))


@lru_cache(maxsize=32)
def _findall_twin(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """``pattern`` without capturing groups (``findall`` then returns whole matches)."""
    twin = re.compile(_GROUP_NAME_RE.sub("(?:", pattern.pattern), pattern.flags)
    assert twin.groups == 0
    return twin


def _scan_regex(text: str, dialects: frozenset[str]) -> re.Pattern[str]:
    """The fastest scanning regex that is exact for ``text``."""
    wide = "\uff3b" in text
    sup = "<" in text and _SUP_HINT_RE.search(text) is not None
    return _scan_pattern(frozenset(dialects), wide, sup)


@lru_cache(maxsize=8)
def token_prefix_regex(dialects: frozenset[str]) -> re.Pattern[str]:
    """A regex whose ``fullmatch(text, pos)`` says ``text[pos:]`` may still grow into a token."""
    return re.compile("|".join(_prefix_regex(_FORMS[f]) for f in _forms_for(dialects)))


#: First characters any token can start with.
TOKEN_START_CHARS = "[\uff3b<"


