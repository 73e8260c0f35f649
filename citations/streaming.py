"""Chunk-safe rewriting of citation tokens in streamed LLM output.

:class:`StreamRewriter` replaces tokens while the text streams in: ``feed(chunk)`` returns the
text that is final so far and ``flush()`` the rest. For every way of splitting an input into
chunks the concatenated output is exactly the output of feeding it whole::

    rw = StreamRewriter("html")
    out = rw.feed("Solar grew [[S:1") + rw.feed(",3]] fast.") + rw.flush()
    # 'Solar grew <sup class="cite" data-sids="1,3">[S:1,3]</sup> fast.'

Only a suffix that may still become a token is held back (at most
:data:`citations.tokens.MAX_TOKEN_CHARS` characters, plus one trailing space so that a removed
``[[USAGE:..]]`` never leaves a double space). ``[[USAGE:..]]`` tags are removed; invalid tokens
pass through verbatim and are recorded. Fenced code blocks (lines opening with `````/``~~~``)
pass through untouched; inline code spans are not detected while streaming.

Providers' streamed events are accepted too: ``feed_event(event)`` takes OpenAI Responses
(``response.output_text.delta`` / ``response.output_text.annotation.added``) or Anthropic
Messages (``text_delta`` / ``citations_delta``) events, places their citations as
:mod:`citations.adapters.streams` does and rewrites the result; after ``flush()``, ``answer``
holds the adapted answer (its sources pool). The output equals rewriting the non-streamed
answer's ``content``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from citations.tokens import (
    MAX_TOKEN_CHARS,
    Token,
    _read_token_text,
    _scan_regex,
    removal_span,
    token_prefix_regex,
)

if TYPE_CHECKING:
    from citations.adapters.base import AdaptedAnswer
    from citations.adapters.streams import EventStream

Renderer = Callable[[Token], str]

#: Longest fence line prefix examined (an info string longer than this is not checked).
MAX_FENCE_LINE = 4096
_OPEN_RE = re.compile(r" {0,12}(`{3,}|~{3,})")
_OPEN_PREFIX_RE = re.compile(r" {0,12}(?:`{0,2}|~{0,2})")
_START_RE = re.compile("[\\[\uff3b<]")


def render_markdown(token: Token) -> str:
    """Pandoc-style markdown superscript of the sids: ``^1,3^``."""
    return "^" + ",".join(str(sid) for sid in token.sids) + "^"


def render_html(token: Token) -> str:
    """The canonical HTML citation: ``<sup class="cite" data-sids="1,3">[S:1,3]</sup>``."""
    sids = ",".join(str(sid) for sid in token.sids)
    return f'<sup class="cite" data-sids="{sids}">[S:{sids}]</sup>'


_BUILTIN: dict[str, Renderer] = {"markdown": render_markdown, "html": render_html}


class StreamRewriter:
    """Rewrite citation tokens in a stream of text chunks.

    ``render`` is ``"markdown"`` (``^1,3^``), ``"html"`` (``<sup class="cite" …>``) or any
    callable ``Token -> str``. After feeding, ``cited_sids`` and ``usage_sids`` hold the sids
    seen (first appearance, each once) and ``invalid_tokens`` the invalid tokens, with offsets
    and lines relative to the whole stream.
    """

    def __init__(
        self,
        render: Renderer | Literal["markdown", "html"] = "markdown",
        *,
        dialects: frozenset[str] = frozenset(),
        sources_pool: object = None,
    ) -> None:
        if isinstance(render, str):
            if render not in _BUILTIN:
                raise ValueError(
                    f"render={render!r}: accepted are 'markdown', 'html' or a callable"
                )
            render = _BUILTIN[render]
        self._render: Renderer = render
        self._dialects = frozenset(dialects)
        self._prefix = token_prefix_regex(self._dialects)
        self.cited_sids: list[int] = []
        self.usage_sids: list[int] = []
        self.invalid_tokens: list[Token] = []
        self.sources_pool = sources_pool
        self.events: EventStream | None = None
        self.answer: AdaptedAnswer | None = None
        self._reset()

    def _reset(self) -> None:
        self._buf = ""  # source text not yet rewritten
        self._prev = "\n"  # the source character just before _buf
        self._offset = 0  # stream offset of _buf[0]
        self._line = 1  # line number of _buf[0]
        self._line_start = True  # _buf[0] begins a line
        self._fence: tuple[str, int] | None = None  # (char, width) inside a fenced block
        self._fence_line: str | None = ""  # current fence line while it may close the block

    def feed(self, chunk: str) -> str:
        """Add ``chunk``; return the rewritten text that is final so far."""
        self._buf += chunk
        return self._drain(final=False)

    def feed_event(self, event: object) -> str:
        """Add one streamed provider event (OpenAI Responses or Anthropic Messages; a dict, an
        SDK object or its JSON); return the rewritten text that is final so far."""
        if self.events is None:
            from citations.adapters.streams import open_event_stream

            self.events = open_event_stream(event, self.sources_pool)
        return self.feed(self.events.feed(event))

    def flush(self) -> str:
        """End of stream: return everything still held back, rewritten; then start afresh."""
        head = ""
        if self.events is not None:
            head = self.feed(self.events.close())
            self.answer, self.events = self.events.answer, None
        out = head + self._drain(final=True)
        self._reset()
        return out

    # ----------------------------------------------------------------------------------------

    def _consume(self, count: int) -> None:
        done = self._buf[:count]
        self._prev = done[-1] if done else self._prev
        self._offset += count
        self._line += done.count("\n")
        self._buf = self._buf[count:]

    def _drain(self, final: bool) -> str:
        out: list[str] = []
        while self._buf:
            if self._fence is not None:
                out.append(self._fenced())
            elif self._line_start:
                opener = self._opener(final)
                if opener is None:
                    break
                if opener:
                    out.append(self._buf[:opener])
                    self._consume(opener)
                else:
                    self._line_start = False
            else:
                text, done = self._inline(final)
                out.append(text)
                if not done:
                    break
        return "".join(out)

    def _fenced(self) -> str:
        """Pass fenced code through verbatim; leave the block at a closing fence line."""
        assert self._fence is not None
        newline = self._buf.find("\n")
        piece = self._buf if newline < 0 else self._buf[: newline + 1]
        if self._fence_line is not None:
            line = self._fence_line + piece.rstrip("\n")
            self._fence_line = line if len(line) <= MAX_FENCE_LINE else None
        if newline >= 0:
            char, width = self._fence
            closing = self._fence_line
            if closing is not None and re.fullmatch(
                rf"[ \t]*{re.escape(char)}{{{width},}}[ \t\r]*", closing
            ):
                self._fence = None
            self._fence_line = ""
            self._line_start = True
        self._consume(len(piece))
        return piece

    def _opener(self, final: bool) -> int | None:
        """At a line start outside code: the length of a fence opener line to pass through,
        0 when the line opens no fence, None when more text is needed to decide."""
        buf = self._buf
        m = _OPEN_RE.match(buf)
        if m is None:
            head = buf[:16]
            if not final and "\n" not in head and _OPEN_PREFIX_RE.fullmatch(head):
                return None
            return 0
        newline = buf.find("\n", 0, MAX_FENCE_LINE)
        info = buf[m.end() : newline if newline >= 0 else MAX_FENCE_LINE]
        fence = m.group(1)
        if fence[0] == "`" and "`" in info:
            return 0
        if newline < 0 and not final and len(buf) < MAX_FENCE_LINE:
            return None
        self._fence = (fence[0], len(fence))
        if newline >= 0:
            self._fence_line = ""
            return newline + 1
        self._fence_line = None  # the rest of an over-long opener line passes through
        return min(len(buf), MAX_FENCE_LINE)

    def _pending(self, work: str, pos: int) -> int:
        """The first position >= ``pos`` where ``work``'s tail may still grow into a token."""
        for m in _START_RE.finditer(work, max(pos, len(work) - MAX_TOKEN_CHARS)):
            if self._prefix.fullmatch(work, m.start()):
                return m.start()
        return len(work)

    def _inline(self, final: bool) -> tuple[str, bool]:
        """Rewrite the current line (or its final part). Returns (text, line finished)."""
        newline = self._buf.find("\n")
        complete = final or newline >= 0
        segment = self._buf if newline < 0 else self._buf[: newline + 1]
        work = self._prev + segment
        pattern = _scan_regex(work, self._dialects)
        hold = len(work) if complete else self._pending(work, 1)
        out: list[str] = []
        pos = 1
        while True:
            m = pattern.search(work, pos)
            if m is None or m.start() >= hold:
                break
            start, end = m.start(), m.end()
            form, kind, sids, error, warnings = _read_token_text(m.group())
            if error is not None or kind == "usage":
                cut_start, cut_end = (start, end) if error else removal_span(work, start, end)
            else:
                cut_start, cut_end = start, end
            out.append(work[pos : max(pos, cut_start)])
            token = Token(
                kind, sids, self._offset + start - 1, self._offset + end - 1, m.group(),
                self._line + work.count("\n", 1, start), form, False, error, warnings,
            )
            self._record(token, out)
            pos = max(pos, cut_end)
            if not complete and pos > hold:
                hold = self._pending(work, pos)
        stop = max(hold, pos)
        if not complete and stop > pos and work[stop - 1] in " \t":
            stop -= 1  # keep one trailing space: a USAGE tag right after it may remove it
        out.append(work[pos:stop])
        self._consume(stop - 1)
        if complete:
            self._line_start = True
        return "".join(out), complete

    def _record(self, token: Token, out: list[str]) -> None:
        if token.error is not None:
            self.invalid_tokens.append(token)
            out.append(token.text)
        elif token.kind == "usage":
            self.usage_sids += [s for s in token.sids if s not in self.usage_sids]
        else:
            self.cited_sids += [s for s in token.sids if s not in self.cited_sids]
            out.append(self._render(token))


def rewrite_stream(
    chunks: list[str] | tuple[str, ...],
    render: Renderer | Literal["markdown", "html"] = "markdown",
    *,
    dialects: frozenset[str] = frozenset(),
) -> str:
    """Rewrite a whole sequence of chunks at once (a convenience over :class:`StreamRewriter`)."""
    rewriter = StreamRewriter(render, dialects=dialects)
    return "".join(rewriter.feed(chunk) for chunk in chunks) + rewriter.flush()
