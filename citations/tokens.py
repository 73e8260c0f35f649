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
the HTML elements shown as code (:data:`~citations.codemap.CODE_ELEMENTS`) come back with
``in_code=True``; tokens inside markdown's raw HTML markup (tags and their attributes,
comments, declarations, CDATA, script-like elements, in HTML blocks and inline; the reader
drops them), inside elements the sanitizer removes with their content (``<svg>``,
``<button>`` …, HTML input too) and in YAML front matter (metadata, not prose:
:mod:`citations.front_matter`; but its ``abstract``, which is markdown) with
``in_raw_html=True``; tokens inside a heading's attribute block (``## Costs {title="[[S:2]]"}``,
:mod:`citations.attribute_block`: the reader takes the block off the heading) with
``in_heading_attributes=True``. The text of an HTML block is read as
HTML: its tokens are citations, its white space collapsed as the reader collapses it. None of
those three is a citation (:attr:`Token.inert`).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Literal, NamedTuple

from citations.codemap import (
    ATTRIBUTE_RE,
    SCANNED_DROPPED,
    MarkdownSpans,
    _markdown_code_spans,
    _Spans,
    blanked,
    dropped_elements,
    html_block_dropped,
    html_code_spans,
    kept_markup,
    line_breaks,
    sanitized_token_text,
)
from citations.front_matter import FrontMatter, metadata_spans
from citations.grammar import (
    _NORMALIZE,
    _findall_twin,
    _scan_regex,
    _token_regex,
    read_digits,
    sid_in_range,
)
from citations.grammar import DIALECTS as DIALECTS
from citations.grammar import MAX_RANGE as MAX_RANGE
from citations.grammar import MAX_SID as MAX_SID
from citations.grammar import MAX_SIDS_PER_TOKEN as MAX_SIDS_PER_TOKEN
from citations.grammar import MAX_SPEC_CHARS as MAX_SPEC_CHARS
from citations.grammar import MAX_SUP_INNER as MAX_SUP_INNER
from citations.grammar import MAX_TOKEN_CHARS as MAX_TOKEN_CHARS
from citations.grammar import MAX_TOKEN_SPACE as MAX_TOKEN_SPACE
from citations.grammar import TOKEN_SPACE_RUN as TOKEN_SPACE_RUN
from citations.grammar import TOKEN_START_CHARS as TOKEN_START_CHARS
from citations.grammar import ZERO_WIDTH as ZERO_WIDTH
from citations.grammar import token_prefix_regex as token_prefix_regex

if TYPE_CHECKING:
    from citations.pool import SourcePool

Syntax = Literal["markdown", "html", "text"]
TokenKind = Literal["cite", "usage"]

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
    in_raw_html: bool = False
    in_heading_attributes: bool = False

    @property
    def valid(self) -> bool:
        """True when the token parsed (``error is None``)."""
        return self.error is None

    @property
    def inert(self) -> bool:
        """True when the reader does not read a citation here (in code, in markdown's raw
        HTML or in a heading's attribute block): the token is left as written and cites
        nothing."""
        return self.in_code or self.in_raw_html or self.in_heading_attributes


def normalize_token_text(text: str) -> str:
    """``text`` with full-width brackets/colons/digits as ASCII and zero-width chars removed."""
    return text.translate(_NORMALIZE)


# --------------------------------------------------------------------------------------------
# Parsing sid lists

_ITEM_RE = re.compile(r"(?:[Ss]:?)?(\d+)(?:\s*(-)\s*(?:[Ss]:?)?(\d+))?")
_NEGATIVE_RE = re.compile(r"-\s*\d+")


#: Digits of :data:`MAX_SID`: a run with more significant digits is too large, whatever they are.
_MAX_SID_DIGITS = len(str(MAX_SID))
#: Longest digit run an error message shows whole; a longer one is shown by its head and length.
_SHOWN_DIGITS = 40


def _read_sid(digits: str) -> int | str:
    """The sid a run of digits names, or the error saying why it names none.

    The digits are read with :func:`~citations.grammar.read_digits` (``int()`` on a run of more
    than 4,300 digits raised a ``ValueError`` that escaped every reader and the audit): a run
    longer than :data:`MAX_SID`'s digits is too large whatever it holds. Leading zeros are not
    counted (``007`` is sid 7).
    """
    value = read_digits(digits, _MAX_SID_DIGITS)
    if value is None:
        significant = digits.lstrip("0")
        shown = significant
        if len(significant) > _SHOWN_DIGITS:
            shown = f"{significant[:_SHOWN_DIGITS]}… ({len(significant)} digits)"
        return f"sid {shown} is too large (at most {MAX_SID})"
    if value == 0:
        return "sid 0 is not valid: sids are positive integers"
    if not sid_in_range(value):
        return f"sid {value} is too large (at most {MAX_SID})"
    return value


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
        first = _read_sid(match.group(1))
        if isinstance(first, str):
            return (), first, ()
        last = first if match.group(3) is None else _read_sid(match.group(3))
        if isinstance(last, str):
            return (), last, ()
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

_TAG_RE = re.compile(r"<[^>]*>")


def _sup_attrs(attrs: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for m in ATTRIBUTE_RE.finditer(attrs):
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
    if form == "bracket":
        runs = TOKEN_SPACE_RUN.findall(m.string, m.start(), m.start("spec"))
        widest = max(map(len, runs), default=0)
        if widest > MAX_TOKEN_SPACE:
            return (kind, (), f"{widest} white space characters in a row before its colon "
                              f"(at most {MAX_TOKEN_SPACE})", ())
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
        "in_raw_html": False,
        "in_heading_attributes": False,
    }


@lru_cache(maxsize=8192)
def _cited_sids_of(token_text: str) -> tuple[int, ...] | None:
    """The sids of a valid ``cite`` token text, None for usage and invalid tokens (cached)."""
    _, kind, sids, error, _ = _read_token_text(token_text)
    return sids if kind == "cite" and error is None else None


def _token_from_match(
    m: re.Match[str], line: int, in_code: bool, in_raw: bool = False, in_block: bool = False
) -> Token:
    # Scanning builds thousands of tokens: fill the frozen dataclass's __dict__ from a cached
    # per-text template instead of ten frozen __setattr__ calls (same object, much faster).
    token: Token = _new(Token)
    fields = token.__dict__
    fields.update(_token_fields(m.group()))
    fields["start"], fields["end"] = m.span()
    fields["line"] = line
    if in_code:
        fields["in_code"] = True
    if in_raw:
        fields["in_raw_html"] = True
    if in_block:
        fields["in_heading_attributes"] = True
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
    return _token_from_match(m, line_breaks(text, 0, pos) + 1 if line is None else line, False)


# --------------------------------------------------------------------------------------------
# Scanning


_NO_SPANS = _Spans(())


def _check_syntax(syntax: str) -> None:
    if syntax not in ("markdown", "html", "text"):
        raise ValueError(f"syntax={syntax!r}: accepted values are 'markdown', 'html', 'text'")


class _Placement(NamedTuple):
    """Where tokens of a text are not citations: ``code`` (tokens are ``in_code``),
    ``skipped`` (HTML tags, comments, scripts: tokens are not read), ``raw`` (markdown's raw
    HTML, what the sanitizer drops with its content: tokens are ``in_raw_html``) and
    ``tag_starts`` (where inline raw HTML starts: a ``<sup class="cite">`` there is read by the
    citation rule first, so it is a citation); ``collapsing``: where the reader reads HTML
    text, collapsing its white space (see :func:`_reader_view`); ``blocks``: headings'
    attribute blocks (tokens are ``in_heading_attributes``, whatever else they stand in: the
    reader takes the block off before it reads the heading's text)."""

    code: _Spans
    skipped: _Spans
    raw: _Spans
    tag_starts: frozenset[int]
    collapsing: tuple[tuple[int, int], ...] = ()
    blocks: _Spans = _NO_SPANS

    def __bool__(self) -> bool:
        return bool(self.code or self.skipped or self.raw or self.blocks)


_NOWHERE = _Placement(_NO_SPANS, _NO_SPANS, _NO_SPANS, frozenset())
#: White space the HTML reader collapses, the space aside: each made a space where it does.
_COLLAPSED = "\t\n\r\f"


def _spaced(text: str) -> str:
    """``text`` with each of :data:`_COLLAPSED` a space (``str.replace`` for each: on 144 KB
    of HTML holding non-ASCII text, 0.03 ms where ``str.translate`` took 6.7 ms)."""
    for char in _COLLAPSED:
        if char in text:
            text = text.replace(char, " ")
    return text


def _probe(text: str, syntax: Syntax) -> str:
    """``text`` with all white space the reader may collapse made spaces: a token of the
    text as the reader reads it (:func:`_reader_view`) starts where one of this starts."""
    if syntax == "html" or (syntax == "markdown" and "<" in text):
        return _spaced(text)
    return text


def _code_map(
    text: str, syntax: Syntax, pattern: re.Pattern[str], probe: str,
    found: FrontMatter | None = None,
) -> _Placement:
    """Where the tokens of ``text`` are not citations (see :class:`_Placement`); ``probe``
    is :func:`_probe` of it, ``found`` its front matter when already read (see :func:`scan`)."""
    if syntax == "markdown":

        def has_token(start: int, end: int) -> bool:
            m = pattern.search(probe, start)
            return m is not None and m.start() < end

        # front matter is metadata, not prose: its tokens are markup's (the abstract's cite)
        metadata = metadata_spans(text, found)
        spans = _markdown_spans(text, metadata, has_token)
        raw = _Spans([*spans.raw_inline, *spans.raw_blocks, *metadata])
        after = metadata[-1][1] if metadata else 0
        # markup inside an element the sanitizer drops is merged into it: no tag starts there
        starts = frozenset(start for start in raw.starts if start >= after)
        return _Placement(
            _Spans(spans.code), _NO_SPANS, raw, starts, tuple(spans.html_blocks),
            _Spans(spans.heading_attributes),
        )
    if syntax == "html":
        code, skipped = html_code_spans(text)
        dropped = _Spans(dropped_elements(text, SCANNED_DROPPED))
        return _Placement(_Spans(code), _Spans(skipped), dropped, frozenset(), ((0, len(text)),))
    return _NOWHERE


def _markdown_spans(
    text: str, metadata: list[tuple[int, int]], has_token: Callable[[int, int], bool]
) -> MarkdownSpans:
    """The code and raw HTML of markdown ``text`` as the reader meets them: its front matter
    (``metadata``: :func:`metadata_spans`) is no markdown, so a fence or an HTML block in a
    value never runs on into the body; the abstract between them is markdown read on its own
    (a fence left open there ends with it)."""
    if not metadata:
        return _markdown_code_spans(text, has_token)
    body = _markdown_code_spans(blanked(text, [(0, metadata[-1][1])]), has_token)
    if len(metadata) == 1:
        return body
    start, end = metadata[0][1], metadata[1][0]
    own = _markdown_code_spans(text[start:end], lambda a, b: has_token(a + start, b + start))
    return MarkdownSpans(*(
        [(a + start, b + start) for a, b in found] + rest
        for found, rest in zip(own, body, strict=True)
    ))


def _reader_view(text: str, where: _Placement) -> str:
    """``text`` as the HTML reader reads tokens in it: the reader collapses white space in
    HTML text (HTML input, markdown's HTML blocks; not in code) before it reads tokens, so
    ``[[S:1,`` and ``3]]`` on two lines are one citation, as a browser shows it on one line.
    Each tab and line break there is made a space; offsets are kept. ``text`` itself when
    there is nothing to change."""
    pieces: list[str] = []
    done = 0
    code = where.code
    for start, end in where.collapsing:
        i = bisect.bisect_right(code.ends, start)  # the first code span ending after start
        while start < end:
            stop = min(code.starts[i], end) if i < len(code.starts) else end
            if start < stop:
                pieces += (text[done:start], _spaced(text[start:stop]))
                done = stop
            if i >= len(code.starts) or code.starts[i] >= end:
                break
            start = max(start, code.ends[i])
            i += 1
    if not pieces:
        return text
    pieces.append(text[done:])
    view = "".join(pieces)
    return text if view == text else view


def _classify(
    matches: Iterator[re.Match[str]], where: _Placement
) -> Iterator[tuple[re.Match[str], bool, bool, bool]]:
    """``(match, in_code, in_raw_html, in_heading_attributes)`` for the ``matches`` not
    starting in a ``skipped`` span (at most one flag set). A ``<sup class="cite">`` starting a
    skipped span or an inline raw-HTML tag is a citation: it is read before the tag is."""
    code, skipped, raw, tag_starts, _, blocks = where
    for m in matches:
        begin = m.start()
        if skipped and begin in skipped and not (
            m.lastgroup == "sup" and _starts_span(skipped, begin)
        ):
            continue
        if blocks and begin in blocks:
            yield m, False, False, True
            continue
        in_raw = bool(raw) and begin in raw and not (
            m.lastgroup == "sup" and begin in tag_starts
        )
        yield m, bool(code) and begin in code, in_raw, False


def scan(
    text: str,
    *,
    syntax: Syntax = "markdown",
    dialects: frozenset[str] = frozenset(),
    found: FrontMatter | None = None,
) -> list[Token]:
    """Every token of ``text`` in order: valid, invalid (``error`` set), in code (``in_code``)
    and in markdown's raw HTML (``in_raw_html``).

    ``syntax="markdown"`` marks tokens in fenced/indented code and code spans, and tokens in
    HTML blocks and inline tags, comments, declarations (as markdown-it reads raw HTML; a
    ``<sup class="cite">`` stays a citation); ``"html"`` marks
    tokens inside ``<pre>``/``<code>``/``<samp>``/``<tt>`` and inside what the sanitizer drops
    with its content, and ignores text inside tags, comments, ``<script>`` and ``<style>``;
    ``"text"`` reads every token. HTML text (``"html"``, markdown's HTML blocks) is read as
    the reader reads it, white space collapsed: a token's ``text`` there has its line breaks
    as spaces (:func:`_reader_view`). ``found``: the markdown text's
    :func:`~citations.front_matter.front_matter`, when the caller has read it (the audit asks
    more of it): its YAML is then not parsed again.
    """
    _check_syntax(syntax)
    pattern = _scan_regex(text, frozenset(dialects))
    probe = _probe(text, syntax)
    if pattern.search(probe) is None:
        return []
    where = _code_map(text, syntax, pattern, probe, found)
    view = _reader_view(text, where)
    if where or where.collapsing or view is not text:  # HTML text without a tag too: its
        return _placed_tokens(text, pattern, where, view)  # references are read decoded
    tokens: list[Token] = []
    append = tokens.append
    line = 1
    last = 0
    # The common case (no code anywhere near a token): _token_from_match inlined.
    new, fields_of = _new, _token_fields
    for m in pattern.finditer(text):
        begin, end = m.span()
        line += line_breaks(text, last, begin)
        last = begin
        token = new(Token)
        fields = token.__dict__
        fields.update(fields_of(m.group()))
        fields["start"] = begin
        fields["end"] = end
        fields["line"] = line
        append(token)
    return tokens


def _placed_tokens(
    text: str, pattern: re.Pattern[str], where: _Placement, view: str
) -> list[Token]:
    """The tokens of ``text`` marked by where they stand (see :func:`_classify`), read in its
    :func:`_reader_view` ``view``."""
    tokens: list[Token] = []
    line = 1
    last = 0
    html_text = [start for start, _ in where.collapsing], [end for _, end in where.collapsing]
    for m, in_code, in_raw, in_block in _classify(pattern.finditer(view), where):
        begin = m.start()
        line += line_breaks(text, last, begin)
        last = begin
        token = _token_from_match(m, line, in_code, in_raw, in_block)
        if token.error and not token.inert and _in_spans(html_text, begin):
            token = _sanitized(token, pattern)
        tokens.append(token)
    return tokens


def _in_spans(spans: tuple[list[int], list[int]], pos: int) -> bool:
    """Whether ``pos`` lies in one of the sorted ``(starts, ends)`` spans."""
    index = bisect.bisect_right(spans[0], pos) - 1
    return index >= 0 and pos < spans[1][index]


def _sanitized(token: Token, pattern: re.Pattern[str]) -> Token:
    """An invalid ``token`` of HTML text read as the reader reads it: the markup the
    sanitizer removes taken out, references decoded, white space collapsed
    (:func:`sanitized_token_text`), so ``[[S:<font>1</font>]]`` cites 1 as it does in the
    render; ``token`` when that is no token either. Its offsets and line stay the written
    ones."""
    read = sanitized_token_text(token.text)
    if read == token.text or pattern.fullmatch(read) is None:
        split = kept_markup(token.text) if token.form != "sup" else ""  # a <sup> is markup
        return replace(token, error=f"{SPLIT_BY_MARKUP} ({split})") if split else token
    whole: Token = _new(Token)  # as _token_from_match fills one
    whole.__dict__.update(_token_fields(read), start=token.start, end=token.end,
                          line=token.line)
    return whole


#: The start of the ``error`` of a token of HTML text that an element the sanitizer keeps
#: stands in (``[[S:<span>2</span>]]``): the reader reads the text on either side apart.
SPLIT_BY_MARKUP = "split by markup"


def split_tokens(html: str, *, dialects: frozenset[str] = frozenset()) -> list[Token]:
    """The tokens of HTML text ``html`` that markup the sanitizer keeps splits: the audit names
    them invalid, and the HTML reader, which meets only their pieces, notes them from here."""
    return [
        token for token in scan(html, syntax="html", dialects=dialects)
        if token.error is not None and token.error.startswith(SPLIT_BY_MARKUP)
    ]


def scan_html_block(text: str, *, dialects: frozenset[str] = frozenset()) -> list[Token]:
    """The tokens of one HTML block of markdown (its content, as markdown-it gives it), marked
    as :func:`scan` marks them in the whole document: in its markup ``in_raw_html``, in its
    ``<pre>``/``<code>`` ``in_code``, in its text citations (a ``<sup class="cite">`` too)."""
    pattern = _scan_regex(text, frozenset(dialects))
    if pattern.search(_probe(text, "html")) is None:
        return []
    code, markup = html_code_spans(text)
    raw = _Spans([*markup, *html_block_dropped(text, 0, len(text))])
    where = _Placement(_Spans(code), _NO_SPANS, raw, frozenset(raw.starts), ((0, len(text)),))
    return _placed_tokens(text, pattern, where, _reader_view(text, where))


def citation_groups(
    text: str,
    *,
    syntax: Syntax = "markdown",
    dialects: frozenset[str] = frozenset(),
) -> list[tuple[int, ...]]:
    """The sids of every valid ``cite`` token outside code and raw HTML, one tuple per token,
    in order.

    The lean path for numbering (:func:`citations.numbering.plan_citations`): no Token objects.
    Numeric-dialect tokens carry pool indices — use :func:`scan` and
    :func:`resolve_token_sids` when that dialect is on.
    """
    _check_syntax(syntax)
    pattern = _scan_regex(text, frozenset(dialects))
    probe = _probe(text, syntax)
    if pattern.search(probe) is None:
        return []
    where = _code_map(text, syntax, pattern, probe)
    view = _reader_view(text, where)
    if where or view is not text:
        located = _classify(pattern.finditer(view), where)
        texts = [m.group() for m, *inert in located if not any(inert)]
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
        if tok.kind == "cite" and tok.error is None and not tok.inert:
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
    """``text`` without any citation token (valid or invalid, cite or usage) outside code and
    markdown's raw HTML."""
    spans = [
        (tok.start, tok.end)
        for tok in scan(text, syntax=syntax, dialects=dialects)
        if not tok.inert
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
    """Rewrite the sids of every valid token outside code and raw HTML through ``sid_map``
    (form kept).

    Unmapped sids are dropped and returned (first-appearance order, each once); a token left
    without sids is removed with its surrounding space. Numeric-dialect tokens (pool indices)
    and invalid tokens are left alone.
    """
    pattern = _token_regex(frozenset(dialects))
    dropped: dict[int, None] = {}
    edits: list[tuple[int, int, str]] = []
    removed: list[tuple[int, int]] = []
    for tok in scan(text, syntax=syntax, dialects=dialects):
        if tok.inert or tok.error is not None or tok.form == "numeric":
            continue
        m = pattern.match(tok.text)  # as read: in HTML text, its line breaks made spaces
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
