"""Where code is, in markdown and HTML: the spans whose citation-looking text is not a citation.

A markdown heading's attribute block (``## Costs {title="[[S:2]]"}``) is such a span too: the
reader takes it off the heading (:mod:`citations.attribute_block` finds it for both).

Markdown code comes from markdown-it-py's block map (fenced and indented code, raw HTML blocks)
and a CommonMark backtick scanner (code spans; raw ``<code>…</code>`` elements count too).
Only the *sections* of a document that could hold code near a token are parsed — a section
starts at a non-indented line after a blank line, and no block state crosses such a cut except
an open fence or a raw-HTML block of kinds 1-5. The streaming rewriter releases text a section
at a time for the same reason. Split from :mod:`citations.tokens`, which re-exports the public
names.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Literal, NamedTuple

from citations.attribute_block import attribute_block_start

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token as MdToken

# --------------------------------------------------------------------------------------------
# Code awareness

_LINE_BREAK_RE = re.compile(r"\r\n?|\n")
#: HTML's white space, each run of which the HTML reader reads as one space.
HTML_SPACE = re.compile(r"[ \t\n\r\f]+")
#: A cut between markdown sections (see :func:`_sections`): a blank line, then a line that
#: does not start with a space or a tab.
_CUT_RE = re.compile(r"\n[ \t]*\n(?=[^ \t\n])")
#: A line whose leading container marks and blanks hold four spaces or a tab: the only lines
#: that can be indented code (at the top level, in a list item or in a block quote).
_INDENT_RE = re.compile(r"\n[ \t>*+.)0-9-]*?(?: {4}|\t)")
_INDENT_START_RE = re.compile(r"[ \t>*+.)0-9-]*?(?: {4}|\t)")
#: A line that may be a heading ending in an attribute block: an ATX heading's line (after any
#: container marks) or a line before a setext underline, ending in ``}`` (spaces after it aside).
_HEADING_BLOCK_RE = re.compile(
    r"^[ \t>*+\-0-9.)]*#{1,6}[ \t][^\r\n]*\}[^\S\r\n]*$"
    r"|\}[^\S\r\n]*\n[ \t>]*(?:=+|-+)[ \t]*$",
    re.MULTILINE,
)
#: Starts of raw-HTML blocks that may run past a blank line (CommonMark kinds 1-5).
_HTML_OPENER_RE = re.compile(r"<(?:[!?]|(?i:pre|script|style|textarea))")
#: Starts of raw HTML that ends with its line or paragraph (tags; CommonMark kinds 6-7).
_HTML_TAG_HINT_RE = re.compile(r"</?[A-Za-z]")
_BACKTICK_STOP_RE = re.compile(r"[\\`<]")
_CODE_OPEN_RE = re.compile(r"<code(?:\s[^>]*)?>", re.IGNORECASE)
_CODE_CLOSE_RE = re.compile(r"</code\s*>", re.IGNORECASE)
#: A comment's shortest forms (markdown-it's ``<!---?>``), and its closing ``-->`` right at
#: the body's start or after a character other than ``-`` (see :class:`InlineHtml`).
_COMMENT_SHORT_RE = re.compile(r"<!---?>")
_COMMENT_CLOSE_AT_BODY_RE = re.compile(r"(?:---)*-->")
_COMMENT_CLOSE_RE = re.compile(r"(?<!-)(?:---)*-->")
_AUTOLINK_RE = re.compile(
    r"<(?:[A-Za-z][A-Za-z0-9.+\-]{1,31}:[^<>\x00-\x20]*|"
    r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~\-]+@[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?)*)>"
)
#: Comments end as HTML5 ends them (CommonMark agrees): ``<!-->`` and ``<!--->`` are empty
#: comments, and ``--!>`` closes one as ``-->`` does.
_HTML_SKIP_RE = re.compile(
    r"<!--(?:-?>|.*?(?:--!?>|\Z))"
    r"|<(script|style|textarea|title)\b[^>]*>.*?(?:(?P<raw_end></\1\s*>)|\Z)"
    r"|<!\[CDATA\[.*?(?:\]\]>|\Z)|<[?!][^>]*>|</?[A-Za-z][^>]*>",
    re.DOTALL | re.IGNORECASE,
)
#: What :data:`_HTML_SKIP_RE` can still match after the last ``>``: tags need a ``>``, so only
#: unclosed comments and CDATA sections (which run to the end) remain.
_HTML_SKIP_TAIL_RE = re.compile(r"<!(?:--|\[CDATA\[)", re.IGNORECASE)
#: Elements whose text the HTML reader shows verbatim, as code (:mod:`renderers.readers.html`):
#: a token in them is ``in_code``, for HTML input and markdown's HTML blocks alike.
CODE_ELEMENTS: frozenset[str] = frozenset({"pre", "code", "samp", "tt"})
_HTML_CODE_OPEN_RE = re.compile(
    rf"<({'|'.join(sorted(CODE_ELEMENTS))})\b[^>]*>", re.IGNORECASE
)
#: End tags before which HTML ends a ``<samp>`` left open: it is no formatting element, so it
#: ends with the block holding it (``<code>`` and ``<tt>`` are carried on into the next one).
_SAMP_ENDS = (
    "p|div|li|dd|dt|td|th|tr|table|h[1-6]|blockquote|section|article|aside|header|footer|"
    "main|nav|figure|figcaption|details|summary|ul|ol|dl|body|html|address|caption|center"
)


@lru_cache(maxsize=8)
def _code_close_re(name: str) -> re.Pattern[str]:
    """Where a code element ``name`` ends: its end tag, or (zero-width) the end tag that ends
    a ``<samp>`` left open."""
    if name == "samp":
        return re.compile(rf"</samp\s*>|(?=</(?:{_SAMP_ENDS})\s*>)", re.IGNORECASE)
    return re.compile(rf"</{name}\s*>", re.IGNORECASE)


#: Elements the HTML sanitizer removes with everything inside them
#: (:func:`renderers.readers.sanitize.sanitize_html`).
DROPPED_WITH_CONTENT: frozenset[str] = frozenset(
    {"script", "iframe", "object", "embed", "applet", "frame", "frameset", "noembed",
     "noframes", "template", "select", "textarea", "button", "datalist", "svg", "math"}
)  # fmt: skip
#: Elements the HTML sanitizer keeps (:func:`renderers.readers.sanitize.sanitize_html`): any
#: other tag goes and its text stays, so a token it stood inside is one token again.
SANITIZER_KEPT: frozenset[str] = frozenset(
    {
        "a", "abbr", "article", "aside", "b", "bdi", "bdo", "blockquote", "br", "caption",
        "center", "cite", "code", "col", "colgroup", "dd", "del", "details", "dfn", "div", "dl",
        "dt", "em", "figcaption", "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6",
        "header", "hgroup", "hr", "i", "img", "ins", "kbd", "li", "main", "mark", "nav", "ol",
        "p", "pre", "q", "rp", "rt", "ruby", "s", "samp", "section", "small", "span", "strike",
        "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead",
        "time", "title", "tr", "tt", "u", "ul", "var", "wbr",
    }
)  # fmt: skip
#: Those of them that take no content where they stand in a body (void ``<embed>`` and
#: ``<frame>``; a ``<frameset>`` tag there is ignored): the text after them is kept.
_CONTENTLESS = frozenset({"embed", "frame", "frameset"})
#: The elements a scan over HTML looks for among those the sanitizer drops: scripts and
#: textareas (and styles) are skipped as markup already.
SCANNED_DROPPED: frozenset[str] = DROPPED_WITH_CONTENT - _CONTENTLESS - {"script", "textarea"}


@lru_cache(maxsize=8)
def _opener_re(names: frozenset[str]) -> re.Pattern[str]:
    """Where an element of ``names`` may start: without a match, none needs looking for."""
    return re.compile(rf"<(?:{'|'.join(sorted(names))})\b", re.IGNORECASE)
#: A tag's name as Python's ``html.parser`` reads it (up to white space, ``/``, ``>`` or NUL).
_TAG_NAME_RE = re.compile(r"<(/?)([A-Za-z][^\t\n\r\f />\x00]*)")
#: A ``/>`` that ends an unquoted attribute value (``<a href=x/>``): the tag is not empty.
_UNQUOTED_SLASH_RE = re.compile(r"=\s*+[^\s\"'=>]*?/>\Z")

TagKind = Literal["start", "end", "empty"]


class HtmlTag(NamedTuple):
    """A tag of HTML text: its lower-cased name, the offset of its ``<`` and its kind
    (``"empty"`` is ``<x/>``, a start and an end at once)."""

    name: str
    start: int
    kind: TagKind


class _Spans:
    """Sorted, non-overlapping ``[start, end)`` spans with a fast membership test. Spans that
    only touch stay apart: where each starts still counts (a ``<sup class="cite">`` tag right
    after ``<p>`` starts a span of its own, and is read as a citation)."""

    def __init__(self, spans: Iterable[tuple[int, int]]) -> None:
        merged: list[tuple[int, int]] = []
        for start, end in sorted(spans):
            if merged and start < merged[-1][1]:
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


class InlineSpans(NamedTuple):
    """What one inline region of markdown holds besides text: code (code spans and raw
    ``<code>…</code>`` elements) and raw HTML (markdown-it's ``html_inline`` tokens: tags,
    comments, processing instructions, declarations, CDATA), as offset spans."""

    code: list[tuple[int, int]]
    raw_html: list[tuple[int, int]]


def code_spans_inline(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """CommonMark code spans in ``text[start:end]`` (one inline region) as offset spans.

    A backtick run opens a span closed by the next run of the same length; a backslash escapes
    one backtick outside spans; autolinks and raw HTML tags starting first win over spans.
    A raw ``<code>…</code>`` element is code too (its whole extent, tags included).
    """
    return inline_spans(text, start, end).code


def inline_spans(text: str, start: int = 0, end: int | None = None) -> InlineSpans:
    """The code and raw-HTML spans of ``text[start:end]`` (one inline region), read left to
    right as markdown-it's inline rules read it (see :func:`code_spans_inline`)."""
    stop = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    raw: list[tuple[int, int]] = []
    html_at = InlineHtml(text, start, stop)
    code_close = _NextMatch(_CODE_CLOSE_RE, text, stop)
    pos = start
    while True:
        m = _BACKTICK_STOP_RE.search(text, pos, stop)
        if m is None:
            return InlineSpans(spans, raw)
        i = m.start()
        char = text[i]
        if char == "\\":
            pos = i + 2
            continue
        if char == "<":
            link = _AUTOLINK_RE.match(text, i, stop)
            html_end = -1 if link else html_at.end(i)
            pos = link.end() if link else max(html_end, i + 1)
            if html_end < 0:
                continue
            raw.append((i, html_end))
            if _CODE_OPEN_RE.fullmatch(text, i, html_end):
                closing = code_close.search(pos)
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


class _NextMatch:
    """``pattern.search(text, pos, stop)`` for rising ``pos``, reusing the last answer while it
    lies ahead: a run of openers that never close searches to the end once, not once each."""

    def __init__(self, pattern: re.Pattern[str], text: str, stop: int) -> None:
        self._pattern, self._text, self._stop = pattern, text, stop
        self._searched = stop + 1
        self._found: re.Match[str] | None = None

    def search(self, pos: int) -> re.Match[str] | None:
        """The first match starting at or after ``pos``."""
        found = self._found
        if self._searched > pos or (found is not None and found.start() < pos):
            found = self._found = self._pattern.search(self._text, pos, self._stop)
            self._searched = pos
        return found


class InlineHtml:
    """markdown-it's ``html_inline`` rule over one inline region, in linear time.

    markdown-it matches ``HTML_TAG_RE`` at each ``<`` after checking that the construct's
    terminator occurs later in the region at all. That check alone leaves comments quadratic
    (its comment pattern runs past a ``-->`` that follows ``---``, so 40 KB of
    ``<!-- a --->`` take 2 s in markdown-it), so a comment's end is found here first:
    the pattern's units are forced, every character other than ``-`` ends one, and the
    comment ends at the first ``-->`` whose run of dashes, counted from a unit boundary, has
    ``3k + 2`` of them. The regex then confirms the construct inside that bound.
    """

    def __init__(self, text: str, start: int, stop: int) -> None:
        self._text, self._start, self._stop = text, start, stop
        self._last: dict[str, int] = {}
        self._closer = _NextMatch(_COMMENT_CLOSE_RE, text, stop)

    @property
    def text(self) -> str:
        """The text this scanner reads."""
        return self._text

    def _last_of(self, terminator: str) -> int:
        """The last offset of ``terminator`` in the region (markdown-it's guard), or -1."""
        if terminator not in self._last:
            self._last[terminator] = self._text.rfind(terminator, self._start, self._stop)
        return self._last[terminator]

    def end(self, pos: int) -> int:
        """The end of the raw HTML starting at ``text[pos] == "<"``, or -1 if none does."""
        text, stop = self._text, self._stop
        if pos + 2 >= stop:
            return -1
        bound = stop
        if text.startswith("<!--", pos):
            bound = self._comment_end(pos)
        elif text.startswith("<![CDATA[", pos):
            bound = stop if self._last_of("]]>") >= pos + 9 else -1
        elif text[pos + 1] == "?":
            bound = stop if self._last_of("?>") >= pos + 2 else -1
        elif self._last_of(">") < pos + 2:
            bound = -1
        if bound < 0:
            return -1
        from markdown_it.common.html_re import HTML_TAG_RE

        found = HTML_TAG_RE.match(text, pos, bound)
        return found.end() if found is not None else -1

    def _comment_end(self, pos: int) -> int:
        """The end of the comment opening at ``pos`` (``<!--``), or -1 if it never closes."""
        text, stop = self._text, self._stop
        short = _COMMENT_SHORT_RE.match(text, pos, stop)
        if short is not None:
            return short.end()
        body = pos + 4
        at_body = _COMMENT_CLOSE_AT_BODY_RE.match(text, body, stop)
        if at_body is not None:
            return at_body.end()
        closer = self._closer.search(body + 1)
        return closer.end() if closer is not None else -1


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


def line_breaks(text: str, start: int = 0, end: int | None = None) -> int:
    """How many line breaks (:func:`line_starts`'s: CR LF, CR, LF) ``text[start:end]`` holds,
    a bare CR one as the readers count it. ``start`` and ``end`` never split a CR LF (a
    token's start is neither)."""
    breaks = text.count("\n", start, end)
    if returns := text.count("\r", start, end):
        breaks += returns - text.count("\r\n", start, end)
    return breaks


def blanked(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with each ``[start, end)`` span's characters but line breaks made spaces
    (sorted spans): what is read elsewhere keeps its offset and line, and a blank span is
    blank lines to markdown (a fence in front matter opens nothing)."""
    parts: list[str] = []
    position = 0
    for start, end in spans:
        parts += (text[position:start], re.sub(r"[^\r\n]", " ", text[start:end]))
        position = end
    parts.append(text[position:])
    return "".join(parts)


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
    return _markdown_code_spans(text, None).code


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
    """``(code, openers)``: sections that may hold code, raw HTML or a heading's attribute
    block, and those that may open a block running past their end (fences, raw-HTML blocks of
    kinds 1-5)."""
    if "\r" in text:  # one section; line breaks other than LF: parse it whenever it has tokens
        return {0}, {0}
    ends = [*cuts[1:], len(text)]
    ticks = _hit_sections(cuts, lambda pos: text.find("`", pos))
    tildes = _hit_sections(cuts, lambda pos: text.find("~", pos))
    openers = {k for k in ticks if text.find("```", cuts[k], ends[k]) >= 0}
    openers |= {k for k in tildes if text.find("~~~", cuts[k], ends[k]) >= 0}
    code = ticks | openers | _hit_sections(cuts, _finder(_INDENT_RE, text, 1))
    code |= _hit_sections(cuts, _finder(_HEADING_BLOCK_RE, text))
    if _INDENT_START_RE.match(text):
        code.add(0)
    if "<" in text:
        openers |= _hit_sections(cuts, _finder(_HTML_OPENER_RE, text))
        code |= openers | _hit_sections(cuts, _finder(_HTML_TAG_HINT_RE, text))
    return code, openers


class MarkdownSpans(NamedTuple):
    """Where markdown text is not prose, as offset spans: ``code`` (fenced and indented
    blocks, code spans, ``<pre>``/``<code>``), ``raw_inline`` (inline raw HTML: tags,
    comments, …; the reader drops them) and ``raw_blocks`` (the markup of HTML blocks: tags,
    comments, declarations, script-like elements, and elements the sanitizer drops with
    their content; the reader keeps only their text, see :func:`block_html`)."""

    code: list[tuple[int, int]]
    raw_inline: list[tuple[int, int]]
    raw_blocks: list[tuple[int, int]]
    #: Each HTML block's whole extent: the reader collapses its white space (a token written
    #: over a line break there is one citation), as a browser does.
    html_blocks: list[tuple[int, int]]
    #: Each heading's attribute block (``## Results {#results title="x"}``,
    #: :mod:`citations.attribute_block`): the reader takes it off the heading, so a token in
    #: it is no citation, and the heading's inline code and HTML end where it starts.
    heading_attributes: list[tuple[int, int]]


def _markdown_code_spans(
    text: str, has_token: Callable[[int, int], bool] | None
) -> MarkdownSpans:
    """:func:`markdown_code_spans` with the raw HTML too, parsing only the sections that may
    hold code or raw HTML and, when ``has_token(start, end)`` is given, hold a token (sections
    that may open a block running past their end are always checked)."""
    cuts = _sections(text)
    code, openers = _risky_sections(text, cuts)
    ends = [*cuts[1:], len(text)]
    found = MarkdownSpans([], [], [], [], [])
    for k in sorted(code):
        start, end = cuts[k], ends[k]
        if has_token is not None:
            if not has_token(start, len(text)):
                break
            if k not in openers and not has_token(start, end):
                continue
        section = _section_code_spans(text, start, end)
        runs_on = not section.closed  # an open fence or HTML block: parse the rest as one
        if runs_on:
            section = _section_code_spans(text, start, len(text))
        for into, spans in zip(found, section[:5], strict=True):
            into += spans
        if runs_on:
            break
    return found


class _SectionSpans(NamedTuple):
    """:class:`MarkdownSpans` of one section, and whether no top-level fence or raw-HTML block
    runs to its end (``closed``)."""

    code: list[tuple[int, int]]
    raw_inline: list[tuple[int, int]]
    raw_blocks: list[tuple[int, int]]
    html_blocks: list[tuple[int, int]]
    heading_attributes: list[tuple[int, int]]
    closed: bool


def _section_code_spans(text: str, start: int, end: int) -> _SectionSpans:
    """The spans of ``text[start:end]`` parsed alone."""
    part = text[start:end]
    starts = line_starts(part)
    lines = len(starts) - (1 if part.endswith(("\n", "\r")) else 0)
    starts.append(len(part))
    last_line = len(starts) - 1

    def offset(line: int) -> int:
        return start + starts[min(line, last_line)]

    found = _SectionSpans([], [], [], [], [], True)
    closed = True
    block_at = -1  # where the attribute block of the heading just opened starts, if it has one
    for tok in markdown_blocks(part):
        if tok.map is None:
            continue
        begin, finish = offset(tok.map[0]), offset(tok.map[1])
        if tok.type == "inline" and block_at >= 0:  # the heading's text ends at its block
            finish, block_at = block_at, -1
        if tok.type == "heading_open":
            last = tok.map[0] if tok.markup.startswith("#") else tok.map[1] - 2
            block = _attribute_block(text, offset(last), offset(last + 1), tok.markup[:1] != "#")
            if block is not None:
                found.heading_attributes.append(block)
                block_at = block[0]
        elif tok.type in ("fence", "code_block"):
            found.code.append((begin, finish))
        elif tok.type == "inline" and (
            text.find("`", begin, finish) >= 0 or text.find("<", begin, finish) >= 0
        ):
            inline = inline_spans(text, begin, finish)
            found.code.extend(inline.code)
            found.raw_inline.extend(inline.raw_html)
        elif tok.type == "html_block":
            code, markup = html_code_spans(text, begin, finish)
            found.code.extend(code)
            found.raw_blocks.extend(markup)
            found.raw_blocks.extend(html_block_dropped(text, begin, finish))
            found.html_blocks.append((begin, finish))
        if tok.level == 0 and tok.map[1] >= lines and tok.type in ("fence", "html_block"):
            closed = False
    return found._replace(closed=closed)


def _attribute_block(text: str, start: int, end: int, setext: bool) -> tuple[int, int] | None:
    """The span of the attribute block ending a heading's last line ``text[start:end]``, as
    the reader finds it: on an ATX heading's line as written, on a setext heading's last line
    with its trailing white space gone (markdown-it strips the heading's text)."""
    line = text[start:end].rstrip("\r\n")
    if setext:
        line = line.rstrip()
    at = attribute_block_start(line)
    return None if at is None else (start + at, start + len(line.rstrip(" \t")))


def html_code_spans(
    text: str, start: int = 0, end: int | None = None
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """``(code, skipped)`` spans of HTML: ``<pre>``/``<code>`` elements, and tags, comments,
    script/style/textarea/title contents (where tokens are not read at all)."""
    stop = len(text) if end is None else end
    code: list[tuple[int, int]] = []
    skipped: list[tuple[int, int]] = []
    pos = start
    tags_end = text.rfind(">", start, stop) + 1
    while (m := _next_markup(text, pos, stop, tags_end)) is not None:
        skipped.append((m.start(), m.end()))
        pos = m.end()
        opener = _HTML_CODE_OPEN_RE.fullmatch(m.group())
        if opener is not None:
            close = _code_close_re(opener.group(1).lower()).search(text, pos, stop)
            code_end = close.end() if close else stop
            code.append((m.start(), code_end))
            pos = code_end
    return code, skipped


def _next_markup(text: str, pos: int, stop: int, tags_end: int) -> re.Match[str] | None:
    """The first markup of ``text[pos:stop]`` (a tag, comment, declaration or script-like
    element), or None; ``tags_end`` is just past the last ``>`` before ``stop``.

    Tag branches are searched only up to the last ">": past it, each "<!" or "<a" rescanned
    to the end (80,000 chars of "<!" took 3.7 s); the match found is redone up to ``stop``.
    """
    if pos >= stop:
        return None
    m = _HTML_SKIP_RE.search(text, pos, tags_end) if pos < tags_end else None
    if m is None:
        m = _HTML_SKIP_TAIL_RE.search(text, max(pos, tags_end), stop)
        if m is None:
            return None
    return _HTML_SKIP_RE.match(text, m.start(), stop)


def html_tags(text: str) -> Iterator[HtmlTag]:
    """The start and end tags of HTML ``text`` in order, as :func:`html_code_spans` sees
    markup: nothing inside comments, declarations or script, style, textarea and title
    elements (whose own tags are included) is a tag.

    Linear where Python's ``html.parser`` is not: it rescans every unclosed tag to the end of
    the text (80 KB of ``<a `` took 90 s; the audit's coverage used it). lxml's parsers would
    be linear too but give an element no character offset, only its line.
    """
    pos, stop = 0, len(text)
    tags_end = text.rfind(">") + 1
    while (m := _next_markup(text, pos, stop, tags_end)) is not None:
        pos = m.end()
        name = _TAG_NAME_RE.match(text, m.start(), m.end())
        if name is None:  # a comment, declaration or CDATA section
            continue
        if name.group(1):
            yield HtmlTag(name.group(2).lower(), m.start(), "end")
            continue
        yield HtmlTag(name.group(2).lower(), m.start(), _start_kind(text, m.start()))
        if m.group("raw_end") is not None:  # a script-like element's end tag
            yield HtmlTag(m.group(1).lower(), m.start("raw_end"), "end")


def sanitized_token_text(text: str) -> str:
    """``text`` (a token found in HTML text, markup inside it) as the HTML reader reads it
    after the sanitizer: without comments, declarations and the tags of elements it unwraps
    (``[[S:<font>1</font>]]`` is ``[[S:1]]``), character references decoded, each run of HTML
    white space one space. A tag it keeps (``<span>``) still splits the token's text, and an
    element it drops takes its content."""
    from html import unescape

    pieces: list[str] = []
    pos = done = 0
    tags_end = text.rfind(">") + 1
    while (m := _next_markup(text, pos, len(text), tags_end)) is not None:
        pos = m.end()
        name = _TAG_NAME_RE.match(text, m.start(), m.end())
        if name is not None and m.group("raw_end") is not None:
            continue  # a script-like element: dropped with its content, or kept
        if name is None or name.group(2).lower() not in SANITIZER_KEPT | DROPPED_WITH_CONTENT:
            pieces.append(text[done:m.start()])
            done = m.end()
    pieces.append(text[done:])
    return HTML_SPACE.sub(" ", unescape("".join(pieces)))


def kept_markup(text: str) -> str:
    """The first tag inside ``text`` (a token found in HTML text) of an element the sanitizer
    keeps (``<span>``), "" when there is none: the reader reads the text on either side of
    such a tag apart, so a token it stands in is no token (:func:`sanitized_token_text`)."""
    pos = 0
    tags_end = text.rfind(">") + 1
    while (m := _next_markup(text, pos, len(text), tags_end)) is not None:
        pos = m.end()
        name = _TAG_NAME_RE.match(text, m.start(), m.end())
        if name is not None and name.group(2).lower() in SANITIZER_KEPT:
            return f"<{name.group(2).lower()}>"
    return ""


def _start_kind(text: str, start: int) -> TagKind:
    """``"empty"`` for a start tag ending in ``/>`` (not the end of an unquoted attribute
    value, which ``html.parser`` reads as part of the value), else ``"start"``."""
    end = text.find(">", start) + 1
    if text.startswith("/>", end - 2) and not _UNQUOTED_SLASH_RE.search(text, start, end):
        return "empty"
    return "start"


def dropped_elements(
    html: str, names: frozenset[str] = DROPPED_WITH_CONTENT | {"style"}
) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each outermost element of ``names`` in ``html`` (by default those the
    sanitizer removes with their content: scripts, ``<svg>``, ``<math>``, ``<style>`` when
    styles go …), in order: where nothing the reader reads can be. An element left open runs
    to the end of ``html``; one that takes no content there (``<embed>``) drops nothing."""
    names = names - _CONTENTLESS
    if _opener_re(names).search(html) is None:
        return
    tags = list(html_tags(html))
    index = 0
    while index < len(tags):
        tag = tags[index]
        index += 1
        if tag.name not in names or tag.kind != "start":
            continue
        points = _INTEGRATION_POINTS.get(tag.name)
        depth, end, inside_point = 1, len(html), 0
        while index < len(tags) and depth:  # to its end tag (nested ones of its name too)
            other = tags[index]
            if points is not None and not inside_point and _breaks_out(html, other):
                end, depth = other.start, 0  # HTML closes the foreign element before it
                break
            index += 1
            if points is not None and other.name in points and other.kind != "empty":
                inside_point = max(inside_point + (1 if other.kind == "start" else -1), 0)
            if other.name == tag.name and other.kind == "start" and tag.name in _UNNESTED:
                # HTML ends the element here: a <button> before the new one starts (which
                # the next round reads), a <select> with this tag as its end tag
                index -= tag.name == "button"
                end = other.start if tag.name == "button" else html.find(">", other.start) + 1
                depth = 0
                break
            if other.name == tag.name and other.kind != "empty":
                depth += 1 if other.kind == "start" else -1
                end = html.find(">", other.start) + 1
        yield tag.start, len(html) if depth else end


#: Elements that never nest: one's start tag inside another ends that one.
_UNNESTED = frozenset({"button", "select"})
#: The foreign elements (SVG, MathML) and, for each, the elements inside it whose content is
#: HTML again (HTML's integration points).
_INTEGRATION_POINTS = {
    "svg": frozenset({"foreignobject", "desc", "title"}),
    "math": frozenset({"mi", "mo", "mn", "ms", "mtext", "annotation-xml"}),
}
#: Start tags that end foreign content where they stand (HTML's "breakout" tags): ``<svg><p>``
#: is an empty ``<svg>``, then a paragraph the sanitizer keeps.
_BREAKOUT_TAGS = frozenset(
    {"b", "big", "blockquote", "body", "br", "center", "code", "dd", "div", "dl", "dt", "em",
     "embed", "h1", "h2", "h3", "h4", "h5", "h6", "head", "hr", "i", "img", "li", "listing",
     "menu", "meta", "nobr", "ol", "p", "pre", "ruby", "s", "small", "span", "strong",
     "strike", "sub", "sup", "table", "tt", "u", "ul", "var"}
)  # fmt: skip
_FONT_BREAKOUT_RE = re.compile(r"[\s/](?:color|face|size)\s*+(?:=|[\s/>])", re.IGNORECASE)


def _breaks_out(html: str, tag: HtmlTag) -> bool:
    """Whether ``tag`` ends the foreign content it stands in (outside an integration point)."""
    if tag.kind == "end":
        return tag.name in ("br", "p")
    if tag.name == "font":
        return _FONT_BREAKOUT_RE.search(html, tag.start, html.find(">", tag.start) + 1) is not None
    return tag.name in _BREAKOUT_TAGS


def html_block_dropped(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The elements of the HTML block ``text[start:end]`` the sanitizer removes with their
    content, as :func:`block_html` leaves them: each ends with the block at the latest
    (:data:`_CONFINED_TAGS`); the raw-text ones lose their tags there and keep their text."""
    names = SCANNED_DROPPED - _RAW_TEXT_TAGS
    if _opener_re(names).search(text, start, end) is None:
        return []
    return [(start + a, start + b) for a, b in dropped_elements(text[start:end], names)]


# --------------------------------------------------------------------------------------------
# Markdown's HTML blocks as the reader reads them

#: An attribute of a start tag: its name, then its value double-quoted, single-quoted or bare.
ATTRIBUTE_RE = re.compile(r"""([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?""")
#: Elements an HTML parser reads as raw text (``<plaintext>`` to the end of the input): their
#: tags are left out, so what they hold is read as the scanner reads it, as HTML.
_RAW_TEXT_TAGS = frozenset({"iframe", "noembed", "noframes", "noscript", "plaintext", "xmp"})
#: Elements that never hold markdown: left open, they end with the HTML block that opens them
#: (the sanitizer drops most of them with their content; a citation sup cites its sids only).
_CONFINED_TAGS = frozenset(
    {"applet", "button", "datalist", "math", "object", "select", "sub", "sup", "svg",
     "template", "frameset"}
)  # fmt: skip
#: Elements whose end tag may be left out (HTML ends them itself) and void elements: neither
#: leaves a wrapper open for the markdown that follows.
_SELF_ENDING_TAGS = frozenset(
    {"area", "base", "br", "caption", "col", "colgroup", "dd", "dt", "embed", "frame", "hr",
     "img", "input", "li", "link", "meta", "optgroup", "option", "p", "param", "rb", "rp",
     "rt", "rtc", "source", "tbody", "td", "tfoot", "th", "thead", "tr", "track", "wbr",
     "body", "head", "html"}
)  # fmt: skip


class BlockHtml(NamedTuple):
    """One HTML block of markdown as the reader parses it (see :func:`block_html`):
    ``html`` and the wrapper tags it opens or closes for the markdown after it,
    ``(name, "start" | "end")`` in order."""

    html: str
    wrappers: tuple[tuple[str, TagKind], ...]


def block_html(text: str) -> BlockHtml:
    """An HTML block of markdown (``text``, its content) rewritten so that an HTML parser
    finds in it exactly the markup :func:`html_code_spans` finds, whatever comes after it:
    the rule for which of its tokens are citations then has this one home.

    Every other ``<`` is escaped; each tag is written again from its name and attributes (an
    open quote cannot run on); comments, declarations, CDATA and script, style, textarea and
    title elements are left out; a ``<pre>``/``<code>`` element ends where that function
    ends it (at the end of ``text`` when never closed), as do the elements that never hold
    markdown (:data:`_CONFINED_TAGS`). Any other element left open wraps what follows.
    """
    out: list[str] = []
    wrappers: list[tuple[str, TagKind]] = []
    confined: list[str] = []
    pos = _rewrite_markup(text, 0, len(text), out, wrappers, confined)
    out.append(text[pos:].replace("<", "&lt;"))
    out.extend(f"</{name}>" for name in reversed(confined))
    return BlockHtml("".join(out), tuple(wrappers))


def _rewrite_markup(
    text: str,
    pos: int,
    stop: int,
    out: list[str],
    wrappers: list[tuple[str, TagKind]] | None,
    confined: list[str],
    code: str = "",
) -> int:
    """Rewrite ``text[pos:stop]`` into ``out`` up to its last markup; returns where the text
    after it starts. ``wrappers`` is None inside a code element (``code``: its name)."""
    tags_end = text.rfind(">", pos, stop) + 1
    while (m := _next_markup(text, pos, stop, tags_end)) is not None:
        out.append(text[pos : m.start()].replace("<", "&lt;"))
        pos = m.end()
        name_match = _TAG_NAME_RE.match(text, m.start(), m.end())
        if name_match is None or m.group(1):  # comment, declaration, script-like element
            continue
        name = name_match.group(2).lower()
        kind: TagKind = "end" if name_match.group(1) else _start_kind(text, m.start())
        if name in _RAW_TEXT_TAGS or (code and (name == "pre" or code == name == "code")):
            continue
        out.append(_written_tag(text, name_match, m.end(), kind))
        if code:
            continue
        opener = _HTML_CODE_OPEN_RE.fullmatch(m.group())
        if opener is not None and kind == "start":
            closer = _code_close_re(opener.group(1).lower()).search(text, pos, stop)
            inner_end = closer.start() if closer else stop
            rest = _rewrite_markup(text, pos, inner_end, out, None, confined, name)
            # "</code>" too: a code element left open in a <pre> (a formatting element)
            # would be opened again after it
            out.append(text[rest:inner_end].replace("<", "&lt;") + "</code>" + (
                "" if name == "code" else f"</{name}>"
            ))
            pos = closer.end() if closer else stop
        elif name in _CONFINED_TAGS:
            if kind == "start":
                confined.append(name)
            elif kind == "end" and name in confined:
                del confined[len(confined) - 1 - confined[::-1].index(name) :]
        elif wrappers is not None and not confined and kind != "empty" and (
            name not in _SELF_ENDING_TAGS
        ):
            wrappers.append((name, kind))
    return pos


def _written_tag(text: str, name: re.Match[str], end: int, kind: TagKind) -> str:
    """The tag ``text[name.start():end]`` written again: its name and each attribute with a
    double-quoted value (entities left for the parser to decode)."""
    if kind == "end":
        return f"</{name.group(2)}>"
    parts = [f"<{name.group(2)}"]
    for m in ATTRIBUTE_RE.finditer(text, name.end(), end - 1):
        value = next((v for v in m.group(2, 3, 4) if v is not None), None)
        parts.append(f" {m.group(1)}" if value is None else
                     f' {m.group(1)}="{value.replace(chr(34), "&quot;")}"')
    parts.append("/>" if kind == "empty" else ">")
    return "".join(parts)
