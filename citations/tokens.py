"""The citation token grammar (ARCHITECTURE §3.1): scan, parse, strip and remap tokens.

Forms (``Token.form``):

- ``"bracket"``: ``[[S:1]]``, ``[[S:1,3]]``, ``[[S:2-4]]``, ``[[ s : 1, 3–5 ]]`` and
  ``[[USAGE:1,3]]`` (``kind="usage"``); full-width ``［［S：1］］`` and zero-width characters
  (U+200B/C/D, U+2060, U+FEFF) inside the token read as the plain token;
- ``"sup"``: ``<sup class="cite" data-sids="1,3">[S:1,3]</sup>`` — one citation, whatever the
  inner text (``data-sids`` wins; without it the inner ``[S:..]``/``[[S:..]]`` is read);
- ``"bare"``: ``[S:1,3]`` (not when directly followed by ``(``: that is a markdown link);
- ``"s_dialect"`` (opt-in): ``[S1]``, ``[S1, S3]``;
- ``"numeric"`` (opt-in): ``[1]``, ``[2, 3]`` — 1-based *indices into the pool*, not sids
  (see :func:`resolve_token_sids`).

An invalid token (empty item, zero or negative sid, range wider than :data:`MAX_RANGE`,
non-numeric item) is still a :class:`Token`, with ``error`` set and ``sids == ()``.
``scan`` is code-aware: tokens in markdown code (fences, indented code, code spans) or inside
HTML ``<pre>``/``<code>`` come back with ``in_code=True``.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Literal, NamedTuple

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token as MdToken

    from citations.pool import SourcePool

Syntax = Literal["markdown", "html", "text"]
TokenKind = Literal["cite", "usage"]

#: Optional dialects accepted by :func:`scan` / :func:`match_at`.
DIALECTS: frozenset[str] = frozenset({"s_dialect", "numeric"})
#: Widest range a token may name (``[[S:1-1000]]`` is fine, ``[[S:1-1001]]`` is invalid).
MAX_RANGE = 1000
#: Most sids one token may expand to.
MAX_SIDS_PER_TOKEN = 10_000
#: Largest accepted sid.
MAX_SID = 2**31 - 1
#: Longest sid list inside one bracket token, in characters.
MAX_SPEC_CHARS = 1024
#: Longest inner content of a ``<sup class="cite">`` element, in characters.
MAX_SUP_INNER = 2048
#: Upper bound on the length of any token (every part of the grammar is bounded).
MAX_TOKEN_CHARS = 4096

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


@dataclass(frozen=True)
class Token:
    """One citation token found in a text (offsets are into that text; ``line`` is 1-based)."""

    kind: TokenKind
    sids: tuple[int, ...]
    start: int
    end: int
    text: str
    line: int
    form: str
    in_code: bool = False
    error: str | None = None
    warnings: tuple[str, ...] = ()

    @property
    def valid(self) -> bool:
        """True when the token parsed (``error is None``)."""
        return self.error is None


def normalize_token_text(text: str) -> str:
    """``text`` with full-width brackets/colons/digits as ASCII and zero-width chars removed."""
    return text.translate(_NORMALIZE)


# --------------------------------------------------------------------------------------------
# The grammar, built from pieces so that the scanning regex and the "could this still become a
# token?" prefix regex used by the streaming rewriter can never disagree.


class _Piece(NamedTuple):
    main: str  # regex used when scanning (may hold a named group or a lookaround)
    partial: str  # regex matching every prefix of what ``main`` matches (empty included)
    full: str  # ``main`` without group names or lookarounds (for the prefix regex)


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
_WZ = f"[ \\t\\u00a0\\u3000{ZERO_WIDTH}]{{0,64}}"
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
_CLASS_CITE = (
    r"""(?=[^<>]*?\b(?i:class)\s*=\s*(?:"[^"]*?(?<![\w-])cite(?![\w-])[^"]*"|"""
    r"""'[^']*?(?<![\w-])cite(?![\w-])[^']*'|cite(?![\w\-"'])))"""
)

_FORMS: dict[str, list[_Piece]] = {
    "bracket": [
        _char(_LB),
        _closure(_WZ),
        _char(_LB),
        _closure(_WZ),
        _words("[Ss\\uff33\\uff53]", "USAGE", name="tag", ignore_case=True),
        _closure(_WZ),
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
        _closure(f"[^<>]{{0,{MAX_SPEC_CHARS}}}+", name="attrs"),  # a tag holds no "<"
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


# --------------------------------------------------------------------------------------------
# Parsing sid lists

_ITEM_RE = re.compile(r"(?:[Ss]:?)?(\d+)(?:\s*(-)\s*(?:[Ss]:?)?(\d+))?")
_NEGATIVE_RE = re.compile(r"-\s*\d+")


def parse_sid_spec(spec: str) -> tuple[tuple[int, ...], str | None, tuple[str, ...]]:
    """Parse a sid list such as ``"1, 3-5"`` into ``(sids, error, warnings)``.

    Sids keep their written order, each once. On error ``sids`` is ``()``. A reversed range
    reads ascending with a warning; zero/negative sids, empty items, non-numeric items, ranges
    wider than :data:`MAX_RANGE` sids are errors.
    """
    text = normalize_token_text(spec).strip()
    if not text:
        return (), "no sids (expected e.g. 1, 3-5)", ()
    sids: list[int] = []
    seen: set[int] = set()
    warnings: list[str] = []
    for raw in re.split(r"[,;]", text):
        item = raw.strip()
        if not item:
            return (), f"empty item in {text!r} (expected e.g. 1, 3-5)", ()
        match = _ITEM_RE.fullmatch(item)
        if match is None:
            if _NEGATIVE_RE.fullmatch(item):
                return (), f"negative sid {item!r}: sids are positive integers", ()
            return (), f"{item!r} is not a sid or a range (expected e.g. 1, 3-5)", ()
        first = int(match.group(1))
        last = int(match.group(3)) if match.group(3) is not None else first
        for value in (first, last):
            if value == 0:
                return (), "sid 0 is not valid: sids are positive integers", ()
            if value > MAX_SID:
                return (), f"sid {value} is too large (at most {MAX_SID})", ()
        if last < first:
            warnings.append(f"reversed range {item!r} read as {last}-{first}")
            first, last = last, first
        if last - first + 1 > MAX_RANGE:
            return (), (
                f"range {item!r} spans {last - first + 1} sids (at most {MAX_RANGE})"
            ), ()
        if len(sids) + (last - first + 1) > MAX_SIDS_PER_TOKEN:
            return (), f"token names more than {MAX_SIDS_PER_TOKEN} sids", ()
        for sid in range(first, last + 1):
            if sid in seen:
                warnings.append(f"sid {sid} repeated")
                continue
            seen.add(sid)
            sids.append(sid)
    return tuple(sids), None, tuple(warnings)


def format_token(sids: Iterable[int], *, kind: TokenKind = "cite") -> str:
    """The canonical token for ``sids``: ``[[S:1,3]]``, runs of three or more as ``4-6``."""
    tag = "USAGE" if kind == "usage" else "S"
    return f"[[{tag}:{_format_spec(list(sids))}]]"


def _format_spec(sids: list[int]) -> str:
    """``[1, 2, 3, 7]`` → ``"1-3,7"`` (written order kept, ascending runs of ≥3 joined)."""
    parts: list[str] = []
    i = 0
    while i < len(sids):
        j = i
        while j + 1 < len(sids) and sids[j + 1] == sids[j] + 1:
            j += 1
        if j - i >= 2:
            parts.append(f"{sids[i]}-{sids[j]}")
        else:
            parts.extend(str(s) for s in sids[i : j + 1])
        i = j + 1
    return ",".join(parts)


# --------------------------------------------------------------------------------------------
# Matching

_ATTR_RE = re.compile(
    r"""([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?"""
)
_TAG_RE = re.compile(r"<[^>]*>")


def _sup_attrs(attrs: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for m in _ATTR_RE.finditer(attrs):
        value = next((v for v in m.group(2, 3, 4) if v is not None), "")
        found.setdefault(m.group(1).lower(), value)
    return found


def _parse_sup(attrs: str, inner: str) -> tuple[tuple[int, ...], str | None, tuple[str, ...]]:
    """sids of a ``<sup class="cite">``: from ``data-sids``, else from an inner token."""
    data = _sup_attrs(attrs).get("data-sids")
    inner_text = _TAG_RE.sub("", inner).strip()
    inner_token = match_at(inner_text, 0) if inner_text else None
    if inner_token is not None and inner_token.end != len(inner_text):
        inner_token = None
    if data is None:
        if inner_token is None:
            return (), "sup.cite has no data-sids and no [S:..] inside", ()
        return inner_token.sids, inner_token.error, inner_token.warnings
    sids, error, warnings = parse_sid_spec(data)
    if error is not None:
        return (), f"data-sids {data!r}: {error}", warnings
    if inner_token is not None and inner_token.valid and set(inner_token.sids) != set(sids):
        warnings += (f"inner text {inner_text!r} differs from data-sids {data!r}",)
    return sids, None, warnings


_parse_cached = lru_cache(maxsize=4096)(parse_sid_spec)
_SPEC_GROUP = {"bracket": "spec", "bare": "bspec", "s_dialect": "sspec", "numeric": "nspec"}


def _spec_of(m: re.Match[str]) -> tuple[TokenKind, tuple[int, ...], str | None, tuple[str, ...]]:
    """``(kind, sids, error, warnings)`` of one scanning-regex match."""
    form = m.lastgroup
    if form == "sup":
        return ("cite", *_parse_sup(m.group("attrs"), m.group("inner")))
    kind: TokenKind = "usage" if form == "bracket" and len(m.group("tag")) > 1 else "cite"
    return (kind, *_parse_cached(m.group(_SPEC_GROUP[form or ""])))


@lru_cache(maxsize=8192)
def _read_token_text(
    token_text: str,
) -> tuple[str, TokenKind, tuple[int, ...], str | None, tuple[str, ...]]:
    """``(form, kind, sids, error, warnings)`` of a complete token text (cached: documents
    repeat the same tokens)."""
    m = _token_regex(DIALECTS).fullmatch(token_text)
    assert m is not None, token_text
    return (m.lastgroup or "", *_spec_of(m))


_new = object.__new__


@lru_cache(maxsize=8192)
def _token_fields(token_text: str) -> dict[str, object]:
    """The fields of a :class:`Token` for ``token_text`` except its position (cached)."""
    form, kind, sids, error, warnings = _read_token_text(token_text)
    return {
        "kind": kind,
        "sids": sids,
        "start": 0,
        "end": 0,
        "text": token_text,
        "line": 0,
        "form": form,
        "in_code": False,
        "error": error,
        "warnings": warnings,
    }


@lru_cache(maxsize=8192)
def _cited_sids_of(token_text: str) -> tuple[int, ...] | None:
    """The sids of a valid ``cite`` token text, None for usage and invalid tokens (cached)."""
    _, kind, sids, error, _ = _read_token_text(token_text)
    return sids if kind == "cite" and error is None else None


def _token_from_match(m: re.Match[str], line: int, in_code: bool) -> Token:
    # Scanning builds thousands of tokens: fill the frozen dataclass's __dict__ from a cached
    # per-text template instead of ten frozen __setattr__ calls (same object, much faster).
    token: Token = _new(Token)
    fields = token.__dict__
    fields.update(_token_fields(m.group()))
    fields["start"], fields["end"] = m.span()
    fields["line"] = line
    if in_code:
        fields["in_code"] = True
    return token


def match_at(
    text: str, pos: int, *, dialects: frozenset[str] = frozenset(), line: int | None = None
) -> Token | None:
    """The token starting exactly at ``text[pos]``, or None (offsets relative to ``text``).

    Every form is tried (bracket, USAGE, bare, ``<sup class="cite">``, enabled dialects).
    ``line`` is counted from the start of ``text`` unless given (callers scanning a long text
    token by token pass it, or 0 for unknown, so each call stays O(token));
    ``in_code`` is always False here.
    """
    if pos < 0 or pos >= len(text) or text[pos] not in TOKEN_START_CHARS:
        return None
    m = _token_regex(frozenset(dialects)).match(text, pos)
    if m is None:
        return None
    return _token_from_match(m, text.count("\n", 0, pos) + 1 if line is None else line, False)


# --------------------------------------------------------------------------------------------
# Code awareness

_LINE_BREAK_RE = re.compile(r"\r\n?|\n")
#: A cut between markdown sections (see :func:`_sections`): a blank line, then a line that
#: does not start with a space or a tab.
_CUT_RE = re.compile(r"\n[ \t]*\n(?=[^ \t\n])")
#: A line whose leading container marks and blanks hold four spaces or a tab: the only lines
#: that can be indented code (at the top level, in a list item or in a block quote).
_INDENT_RE = re.compile(r"\n[ \t>*+.)0-9-]*?(?: {4}|\t)")
_INDENT_START_RE = re.compile(r"[ \t>*+.)0-9-]*?(?: {4}|\t)")
#: Starts of raw-HTML blocks that may run past a blank line (CommonMark kinds 1-5).
_HTML_OPENER_RE = re.compile(r"<(?:[!?]|(?i:pre|script|style|textarea))")
_HTML_CODE_HINT_RE = re.compile(r"<(?:pre|code)\b", re.IGNORECASE)
_BACKTICK_STOP_RE = re.compile(r"[\\`<]")
_CODE_OPEN_RE = re.compile(r"<code(?:\s[^>]*)?>", re.IGNORECASE)
_CODE_CLOSE_RE = re.compile(r"</code\s*>", re.IGNORECASE)
_AUTOLINK_RE = re.compile(
    r"<(?:[A-Za-z][A-Za-z0-9.+\-]{1,31}:[^<>\x00-\x20]*|"
    r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~\-]+@[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?)*)>"
)
_HTML_SKIP_RE = re.compile(
    r"<!--.*?(?:-->|\Z)|<(script|style|textarea|title)\b[^>]*>.*?(?:</\1\s*>|\Z)"
    r"|<!\[CDATA\[.*?(?:\]\]>|\Z)|<[?!][^>]*>|</?[A-Za-z][^>]*>",
    re.DOTALL | re.IGNORECASE,
)
_HTML_CODE_OPEN_RE = re.compile(r"<(pre|code)\b[^>]*>", re.IGNORECASE)


class _Spans:
    """Sorted, non-overlapping ``[start, end)`` spans with a fast membership test."""

    def __init__(self, spans: Iterable[tuple[int, int]]) -> None:
        merged: list[tuple[int, int]] = []
        for start, end in sorted(spans):
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        self.starts = [s for s, _ in merged]
        self.ends = [e for _, e in merged]

    def __contains__(self, pos: object) -> bool:
        assert isinstance(pos, int)
        i = bisect.bisect_right(self.starts, pos) - 1
        return i >= 0 and pos < self.ends[i]

    def __bool__(self) -> bool:
        return bool(self.starts)


def code_spans_inline(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """CommonMark code spans in ``text[start:end]`` (one inline region) as offset spans.

    A backtick run opens a span closed by the next run of the same length; a backslash escapes
    one backtick outside spans; autolinks and raw HTML tags starting first win over spans.
    A raw ``<code>…</code>`` element is code too (its whole extent, tags included).
    """
    stop = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    pos = start
    while True:
        m = _BACKTICK_STOP_RE.search(text, pos, stop)
        if m is None:
            return spans
        i = m.start()
        char = text[i]
        if char == "\\":
            pos = i + 2
            continue
        if char == "<":
            html = _AUTOLINK_RE.match(text, i, stop) or _html_tag_match(text, i, stop)
            pos = html.end() if html else i + 1
            if html is not None and _CODE_OPEN_RE.fullmatch(html.group()):
                closing = _CODE_CLOSE_RE.search(text, pos, stop)
                if closing is not None:
                    spans.append((i, closing.end()))
                    pos = closing.end()
            continue
        run_end = i
        while run_end < stop and text[run_end] == "`":
            run_end += 1
        width = run_end - i
        close = _closing_run(text, run_end, stop, width)
        if close is None:
            pos = run_end
            continue
        spans.append((i, close + width))
        pos = close + width


def raw_code_elements(text: str) -> list[tuple[int, int, int, int]]:
    """``(start, end, inner_start, inner_end)`` of each raw ``<code>…</code>`` element in one
    inline region of markdown (outside backtick code spans), in order."""
    elements: list[tuple[int, int, int, int]] = []
    for start, end in code_spans_inline(text):
        opening = _html_tag_match(text, start, end) if text[start] == "<" else None
        if opening is not None and _CODE_OPEN_RE.fullmatch(opening.group()):
            close = _CODE_CLOSE_RE.search(text, opening.end(), end)
            assert close is not None
            elements.append((start, end, opening.end(), close.start()))
    return elements


def _closing_run(text: str, pos: int, stop: int, width: int) -> int | None:
    """Start of the next backtick run of exactly ``width`` at or after ``pos``."""
    while True:
        i = text.find("`", pos, stop)
        if i < 0:
            return None
        j = i
        while j < stop and text[j] == "`":
            j += 1
        if j - i == width:
            return i
        pos = j


def _html_tag_match(text: str, pos: int, stop: int) -> re.Match[str] | None:
    from markdown_it.common.html_re import HTML_TAG_RE

    return HTML_TAG_RE.match(text, pos, stop)


def line_starts(text: str) -> list[int]:
    """Offsets where each line starts (markdown-it's line breaks: CR LF, CR, LF)."""
    return [0, *(m.end() for m in _LINE_BREAK_RE.finditer(text))]


@lru_cache(maxsize=1)
def _block_parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")
    md.disable(["inline", "text_join"], ignoreInvalid=True)
    return md


def markdown_blocks(text: str) -> list[MdToken]:
    """markdown-it-py's block tokens of ``text`` (CommonMark; inline parsing skipped).

    Each block token's ``.map`` is its ``[first, last)`` line range; :func:`line_starts` turns
    lines into offsets.
    """
    return _block_parser().parse(text)


def markdown_code_spans(text: str) -> list[tuple[int, int]]:
    """Offset spans of markdown code: fenced and indented blocks, code spans, ``<pre>``/``<code>``.

    Block structure comes from markdown-it-py (``.map`` line ranges); code spans are found in
    the raw lines of every inline-bearing block with :func:`code_spans_inline`. Only the
    sections (see :func:`_sections`) that can hold code are parsed.
    """
    return _markdown_code_spans(text, None)


def _sections(text: str) -> list[int]:
    """Start offsets of the sections of ``text``: a section starts at a non-indented line
    after a blank line (the whole text is one section when it holds a CR).

    No block state crosses such a cut except an open fence or a raw-HTML block of kinds 1-5
    (``<pre``, ``<script``, ``<style``, ``<textarea``, ``<!--``, ``<?``, ``<!X``), so every
    other section parses alone exactly as it does in place.
    """
    if "\r" in text:
        return [0]
    return [0, *(m.end() for m in _CUT_RE.finditer(text))]


def _hit_sections(cuts: list[int], find: Callable[[int], int]) -> set[int]:
    """Indices of the sections holding a hit of ``find(pos)`` (an offset >= pos, or -1).

    One probe per hit section: after a hit the search resumes at the next section.
    """
    found: set[int] = set()
    pos = 0
    while (hit := find(pos)) >= 0:
        k = bisect.bisect_right(cuts, hit) - 1
        found.add(k)
        if k + 1 >= len(cuts):
            break
        pos = cuts[k + 1]
    return found


def _finder(pattern: re.Pattern[str], text: str, shift: int = 0) -> Callable[[int], int]:
    """A ``find(pos)`` for :func:`_hit_sections` from a regex (hit = match start + ``shift``)."""

    def find(pos: int) -> int:
        m = pattern.search(text, max(pos - shift, 0))
        return -1 if m is None else m.start() + shift

    return find


def _risky_sections(text: str, cuts: list[int]) -> tuple[set[int], set[int]]:
    """``(code, openers)``: sections that may hold code, and those that may open a block
    running past their end (fences, raw-HTML blocks of kinds 1-5)."""
    if "\r" in text:  # one section; line breaks other than LF: parse it whenever it has tokens
        return {0}, {0}
    ends = [*cuts[1:], len(text)]
    ticks = _hit_sections(cuts, lambda pos: text.find("`", pos))
    tildes = _hit_sections(cuts, lambda pos: text.find("~", pos))
    openers = {k for k in ticks if text.find("```", cuts[k], ends[k]) >= 0}
    openers |= {k for k in tildes if text.find("~~~", cuts[k], ends[k]) >= 0}
    code = ticks | openers | _hit_sections(cuts, _finder(_INDENT_RE, text, 1))
    if _INDENT_START_RE.match(text):
        code.add(0)
    if "<" in text:
        openers |= _hit_sections(cuts, _finder(_HTML_OPENER_RE, text))
        code |= openers | _hit_sections(cuts, _finder(_HTML_CODE_HINT_RE, text))
    return code, openers


def _markdown_code_spans(
    text: str, has_token: Callable[[int, int], bool] | None
) -> list[tuple[int, int]]:
    """:func:`markdown_code_spans`, parsing only the sections that may hold code and, when
    ``has_token(start, end)`` is given, hold a token (sections that may open a block running
    past their end are always checked)."""
    cuts = _sections(text)
    code, openers = _risky_sections(text, cuts)
    ends = [*cuts[1:], len(text)]
    spans: list[tuple[int, int]] = []
    for k in sorted(code):
        start, end = cuts[k], ends[k]
        if has_token is not None:
            if not has_token(start, len(text)):
                break
            if k not in openers and not has_token(start, end):
                continue
        found, closed = _section_code_spans(text, start, end)
        if not closed:  # an open fence or HTML block runs on: parse the rest as one piece
            spans += _section_code_spans(text, start, len(text))[0]
            break
        spans += found
    return spans


def _section_code_spans(text: str, start: int, end: int) -> tuple[list[tuple[int, int]], bool]:
    """``(spans, closed)`` for ``text[start:end]`` parsed alone; ``closed`` is False when a
    top-level fence or raw-HTML block runs to the end of the piece."""
    part = text[start:end]
    starts = line_starts(part)
    lines = len(starts) - (1 if part.endswith(("\n", "\r")) else 0)
    starts.append(len(part))
    last_line = len(starts) - 1

    def offset(line: int) -> int:
        return start + starts[min(line, last_line)]

    spans: list[tuple[int, int]] = []
    closed = True
    for tok in markdown_blocks(part):
        if tok.map is None:
            continue
        begin, finish = offset(tok.map[0]), offset(tok.map[1])
        if tok.type in ("fence", "code_block"):
            spans.append((begin, finish))
        elif tok.type == "inline" and (
            text.find("`", begin, finish) >= 0 or _HTML_CODE_HINT_RE.search(text, begin, finish)
        ):
            spans += code_spans_inline(text, begin, finish)
        elif tok.type == "html_block":
            spans += html_code_spans(text, begin, finish)[0]
        if tok.level == 0 and tok.map[1] >= lines and tok.type in ("fence", "html_block"):
            closed = False
    return spans, closed


def html_code_spans(
    text: str, start: int = 0, end: int | None = None
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """``(code, skipped)`` spans of HTML: ``<pre>``/``<code>`` elements, and tags, comments,
    script/style/textarea/title contents (where tokens are not read at all)."""
    stop = len(text) if end is None else end
    code: list[tuple[int, int]] = []
    skipped: list[tuple[int, int]] = []
    pos = start
    while pos < stop:
        m = _HTML_SKIP_RE.search(text, pos, stop)
        if m is None:
            break
        skipped.append((m.start(), m.end()))
        pos = m.end()
        opener = _HTML_CODE_OPEN_RE.fullmatch(m.group())
        if opener is not None:
            close = re.compile(rf"</{opener.group(1)}\s*>", re.IGNORECASE).search(text, pos, stop)
            code_end = close.end() if close else stop
            code.append((m.start(), code_end))
            pos = code_end
    return code, skipped


# --------------------------------------------------------------------------------------------
# Scanning


_NO_SPANS = _Spans(())


def _check_syntax(syntax: str) -> None:
    if syntax not in ("markdown", "html", "text"):
        raise ValueError(f"syntax={syntax!r}: accepted values are 'markdown', 'html', 'text'")


def _code_map(text: str, syntax: Syntax, pattern: re.Pattern[str]) -> tuple[_Spans, _Spans]:
    """``(code, skipped)`` spans of ``text``: tokens starting in ``code`` are ``in_code``,
    tokens starting in ``skipped`` (HTML tags, comments, scripts) are not read."""
    if syntax == "markdown":

        def has_token(start: int, end: int) -> bool:
            m = pattern.search(text, start)
            return m is not None and m.start() < end

        return _Spans(_markdown_code_spans(text, has_token)), _NO_SPANS
    if syntax == "html":
        code, skipped = html_code_spans(text)
        return _Spans(code), _Spans(skipped)
    return _NO_SPANS, _NO_SPANS


def _classify(
    matches: Iterator[re.Match[str]], code: _Spans, skipped: _Spans
) -> Iterator[tuple[re.Match[str], bool]]:
    """``(match, in_code)`` for the ``matches`` not starting in a ``skipped`` span."""
    for m in matches:
        begin = m.start()
        if skipped and begin in skipped and not (
            m.lastgroup == "sup" and _starts_span(skipped, begin)
        ):
            continue
        yield m, bool(code) and begin in code


def scan(
    text: str,
    *,
    syntax: Syntax = "markdown",
    dialects: frozenset[str] = frozenset(),
) -> list[Token]:
    """Every token of ``text`` in order: valid, invalid (``error`` set) and in code (``in_code``).

    ``syntax="markdown"`` marks tokens in fenced/indented code and code spans; ``"html"`` marks
    tokens inside ``<pre>``/``<code>`` and ignores text inside tags, comments, ``<script>`` and
    ``<style>``; ``"text"`` reads every token.
    """
    _check_syntax(syntax)
    pattern = _scan_regex(text, frozenset(dialects))
    if pattern.search(text) is None:
        return []
    code, skipped = _code_map(text, syntax, pattern)
    tokens: list[Token] = []
    append = tokens.append
    count = text.count
    line = 1
    last = 0
    if code or skipped:
        for m, in_code in _classify(pattern.finditer(text), code, skipped):
            begin = m.start()
            line += count("\n", last, begin)
            last = begin
            append(_token_from_match(m, line, in_code))
        return tokens
    # The common case (no code anywhere near a token): _token_from_match inlined.
    new, fields_of = _new, _token_fields
    for m in pattern.finditer(text):
        begin, end = m.span()
        line += count("\n", last, begin)
        last = begin
        token = new(Token)
        fields = token.__dict__
        fields.update(fields_of(m.group()))
        fields["start"] = begin
        fields["end"] = end
        fields["line"] = line
        append(token)
    return tokens


def citation_groups(
    text: str,
    *,
    syntax: Syntax = "markdown",
    dialects: frozenset[str] = frozenset(),
) -> list[tuple[int, ...]]:
    """The sids of every valid ``cite`` token outside code, one tuple per token, in order.

    The lean path for numbering (:func:`citations.numbering.plan_citations`): no Token objects.
    Numeric-dialect tokens carry pool indices — use :func:`scan` and
    :func:`resolve_token_sids` when that dialect is on.
    """
    _check_syntax(syntax)
    pattern = _scan_regex(text, frozenset(dialects))
    if pattern.search(text) is None:
        return []
    code, skipped = _code_map(text, syntax, pattern)
    if code or skipped:
        located = _classify(pattern.finditer(text), code, skipped)
        texts = [m.group() for m, in_code in located if not in_code]
    else:
        texts = _findall_twin(pattern).findall(text)
    return [sids for sids in map(_cited_sids_of, texts) if sids is not None]


def _starts_span(spans: _Spans, pos: int) -> bool:
    i = bisect.bisect_left(spans.starts, pos)
    return i < len(spans.starts) and spans.starts[i] == pos


def cited_sids(tokens: Iterable[Token]) -> list[int]:
    """Sids of the valid, non-code ``cite`` tokens, first appearance order, each once."""
    seen: dict[int, None] = {}
    for tok in tokens:
        if tok.kind == "cite" and tok.error is None and not tok.in_code:
            seen.update(dict.fromkeys(tok.sids))
    return list(seen)


def resolve_token_sids(
    token: Token, pool: SourcePool
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(sids, unresolved)``: a numeric-dialect token's indices mapped to pool sids.

    Other forms return their sids unchanged and no unresolved indices.
    """
    if token.form != "numeric":
        return token.sids, ()
    sids: list[int] = []
    missing: list[int] = []
    for index in token.sids:
        source = pool.by_index(index)
        if source is None:
            missing.append(index)
        elif source.sid not in sids:
            sids.append(source.sid)
    return tuple(sids), tuple(missing)


# --------------------------------------------------------------------------------------------
# Removing and rewriting tokens

#: Closing punctuation: a citation or tag removed right before one of these takes the white
#: space before it along ("claim [[USAGE:1]]." reads "claim."). One set for every removal.
CLOSING_PUNCTUATION = frozenset(".,;:!?)]}»”’…、。」』）］｝〉》，．！？：；")


def removal_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The span to delete when the token ``text[start:end]`` disappears, so that no double
    space, no space before punctuation and no empty line is left behind."""
    before = text[start - 1] if start > 0 else "\n"
    after = text[end] if end < len(text) else ""
    if before in " \t" and (after in ("", " ", "\t", "\n", "\r") or after in CLOSING_PUNCTUATION):
        return start - 1, end
    if before in "\n([{" and after in " \t":
        return start, end + 1
    if before == "\n" and after == "\n":
        return start, end + 1
    return start, end


def _rebuild(text: str, edits: list[tuple[int, int, str]]) -> str:
    """``text`` with the sorted, non-overlapping ``(start, end, replacement)`` edits applied."""
    parts: list[str] = []
    pos = 0
    for start, end, replacement in edits:
        if start < pos:
            start = pos
        parts.append(text[pos:start])
        parts.append(replacement)
        pos = max(pos, end)
    parts.append(text[pos:])
    return "".join(parts)


def _removal_edits(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """Deletion edits for the token ``spans`` (sorted); directly adjacent tokens are removed
    as one run so that the spacing rule of :func:`removal_span` sees the real neighbours."""
    runs: list[list[int]] = []
    for start, end in spans:
        if runs and start == runs[-1][1]:
            runs[-1][1] = end
        else:
            runs.append([start, end])
    return [(*removal_span(text, start, end), "") for start, end in runs]


def strip_tokens(
    text: str, syntax: Syntax = "markdown", dialects: frozenset[str] = frozenset()
) -> str:
    """``text`` without any citation token (valid or invalid, cite or usage) outside code."""
    spans = [
        (tok.start, tok.end)
        for tok in scan(text, syntax=syntax, dialects=dialects)
        if not tok.in_code
    ]
    return _rebuild(text, _removal_edits(text, spans))


_SPEC_SPLIT_RE = re.compile(r"([,;])")
_SPEC_ITEM_RE = re.compile(r"(\s*)((?:[Ss]:?)?)(\d+)(?:(\s*-\s*)((?:[Ss]:?)?)(\d+))?(\s*)")


def _remap_spec(spec: str, sid_map: Mapping[int, int], dropped: dict[int, None]) -> str:
    """Rewrite the sid list ``spec`` through ``sid_map``; unmapped sids go to ``dropped``.

    When every item keeps its shape the layout (spaces, separators, dashes) is kept; otherwise
    the list is rewritten canonically. Returns "" when no sid is left.
    """
    text = normalize_token_text(spec)
    pieces = _SPEC_SPLIT_RE.split(text)
    out: list[str] = []
    new_sids: list[int] = []
    in_place = True
    for index, piece in enumerate(pieces):
        if index % 2:
            out.append(piece)
            continue
        m = _SPEC_ITEM_RE.fullmatch(piece)
        if m is None:
            return spec
        lead, p1, a, dash, p2, b, trail = m.groups()
        first = int(a)
        last = int(b) if b is not None else first
        low, high = min(first, last), max(first, last)
        mapped = [sid_map[s] for s in range(low, high + 1) if s in sid_map]
        for s in range(low, high + 1):
            if s not in sid_map:
                dropped[s] = None
        new_sids += mapped
        if len(mapped) != high - low + 1:
            in_place = False
        elif b is None:
            out.append(f"{lead}{p1}{mapped[0]}{trail}")
        elif mapped == list(range(mapped[0], mapped[0] + len(mapped))):
            ma, mb = (mapped[0], mapped[-1]) if first <= last else (mapped[-1], mapped[0])
            out.append(f"{lead}{p1}{ma}{dash}{p2}{mb}{trail}")
        else:
            in_place = False
    if in_place:
        return "".join(out)
    unique = list(dict.fromkeys(new_sids))
    separator = ", " if re.search(r"[,;]\s", text) else ","
    return separator.join(str(s) for s in unique)


def remap_tokens(
    text: str,
    sid_map: Mapping[int, int],
    *,
    syntax: Syntax = "markdown",
    dialects: frozenset[str] = frozenset(),
) -> tuple[str, list[int]]:
    """Rewrite the sids of every valid token outside code through ``sid_map`` (form kept).

    Unmapped sids are dropped and returned (first-appearance order, each once); a token left
    without sids is removed with its surrounding space. Numeric-dialect tokens (pool indices)
    and invalid tokens are left alone.
    """
    pattern = _token_regex(frozenset(dialects))
    dropped: dict[int, None] = {}
    edits: list[tuple[int, int, str]] = []
    removed: list[tuple[int, int]] = []
    for tok in scan(text, syntax=syntax, dialects=dialects):
        if tok.in_code or tok.error is not None or tok.form == "numeric":
            continue
        m = pattern.match(text, tok.start)
        assert m is not None
        replacement = _remap_match(m, sid_map, dropped)
        if replacement is None:
            removed.append((tok.start, tok.end))
        elif replacement != tok.text:
            edits.append((tok.start, tok.end, replacement))
    edits = sorted(edits + _removal_edits(text, removed))
    return _rebuild(text, edits), list(dropped)


_DATA_SIDS_RE = re.compile(r"""(\bdata-sids\s*=\s*)(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))""", re.I)


def _remap_match(
    m: re.Match[str], sid_map: Mapping[int, int], dropped: dict[int, None]
) -> str | None:
    """The rewritten text of one token match, or None when no sid is left."""
    form = m.lastgroup or ""
    if form != "sup":
        group = _SPEC_GROUP[form]
        new_spec = _remap_spec(m.group(group), sid_map, dropped)
        if not new_spec:
            return None
        return _replace_group(m, group, new_spec)
    attrs, inner = m.group("attrs"), m.group("inner")
    data = _DATA_SIDS_RE.search(attrs)
    new_attrs = attrs
    if data is not None:
        value = next(v for v in data.group(2, 3, 4) if v is not None)
        new_value = _remap_spec(value, sid_map, dropped)
        if not new_value:
            return None
        quote = '"' if data.group(2) is not None else "'" if data.group(3) is not None else ""
        new_attrs = (
            attrs[: data.start()] + f"{data.group(1)}{quote}{new_value}{quote}" + attrs[data.end():]
        )
    new_inner, _ = remap_tokens(inner, sid_map, syntax="text")
    if data is None and not new_inner.strip():
        return None
    start = m.start()
    return (
        m.group()[: m.start("attrs") - start]
        + new_attrs
        + m.group()[m.end("attrs") - start : m.start("inner") - start]
        + new_inner
        + m.group()[m.end("inner") - start :]
    )


def _replace_group(m: re.Match[str], group: str, value: str) -> str:
    start = m.start()
    whole = m.group()
    return whole[: m.start(group) - start] + value + whole[m.end(group) - start :]
