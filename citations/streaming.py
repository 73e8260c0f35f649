"""Chunk-safe rewriting of citation tokens in streamed LLM output.

:class:`StreamRewriter` replaces tokens while the text streams in: ``feed(chunk)`` returns the
text that is final so far and ``flush()`` the rest. For every way of splitting an input into
chunks the concatenated output is exactly :func:`rewrite_text` of the whole input — the batch
rule, code included::

    rw = StreamRewriter("html")
    out = rw.feed("Solar grew [[S:1") + rw.feed(",3]] fast.\n\nNext") + rw.flush()

Why whole sections: whether a token is code (a code span, an indented or fenced block) can
depend on text after it (a closing backtick run, a closing fence). The batch scanner already
cuts markdown into *sections* — a non-indented line after a blank line — that parse alone
(:func:`citations.tokens._sections`); the stream releases a section as soon as the next cut
has arrived and the section does not leave a fence or raw-HTML block open. So text is held
back for at most one block (a paragraph, a list, a fenced block), never for the whole stream,
and the output cannot differ from the batch rewrite. ``[[USAGE:..]]`` tags are removed;
invalid tokens and tokens in code or raw HTML pass through verbatim; invalid tokens are recorded.

Providers' streamed events are accepted too: ``feed_event(event)`` takes OpenAI Responses
(``response.output_text.delta`` / ``response.output_text.annotation.added``) or Anthropic
Messages (``text_delta`` / ``citations_delta``) events, places their citations as
:mod:`citations.adapters.streams` does and rewrites the result; after ``flush()``, ``answer``
holds the adapted answer (its sources pool). The output equals rewriting the non-streamed
answer's ``content``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Literal

from citations.codemap import _CUT_RE, _section_code_spans
from citations.tokens import Token, _rebuild, removal_span, scan

if TYPE_CHECKING:
    from citations.adapters.base import AdaptedAnswer
    from citations.adapters.streams import EventStream

Renderer = Callable[[Token], str]

#: Parsing a stream may cost this many characters per character received (looks for a
#: releasable section), plus :data:`_FREE_LOOK` up front.
_LOOK_FACTOR = 8
_FREE_LOOK = 1 << 16

def render_markdown(token: Token) -> str:
    """Pandoc-style markdown superscript of the sids: ``^1,3^``."""
    return "^" + ",".join(str(sid) for sid in token.sids) + "^"


def render_html(token: Token) -> str:
    """The canonical HTML citation: ``<sup class="cite" data-sids="1,3">[S:1,3]</sup>``."""
    sids = ",".join(str(sid) for sid in token.sids)
    return f'<sup class="cite" data-sids="{sids}">[S:{sids}]</sup>'


_BUILTIN: dict[str, Renderer] = {"markdown": render_markdown, "html": render_html}


def rewrite_text(
    text: str,
    render: Renderer | Literal["markdown", "html"] = "markdown",
    *,
    dialects: frozenset[str] = frozenset(),
) -> tuple[str, list[Token]]:
    """The batch rule: ``text`` with every citation outside code and raw HTML rendered, USAGE
    tags removed (with the space they leave), invalid tokens and tokens in code or raw HTML
    kept verbatim.

    Returns the text and every token found (in code or not), offsets relative to ``text``.
    """
    renderer = _renderer(render)
    tokens = scan(text, syntax="markdown", dialects=dialects)
    edits: list[tuple[int, int, str]] = []
    for token in tokens:
        if token.inert or token.error is not None:
            continue
        if token.kind == "usage":
            edits.append((*removal_span(text, token.start, token.end), ""))
        else:
            edits.append((token.start, token.end, renderer(token)))
    return _rebuild(text, edits), tokens


def _renderer(render: Renderer | Literal["markdown", "html"]) -> Renderer:
    if isinstance(render, str):
        if render not in _BUILTIN:
            raise ValueError(f"render={render!r}: accepted are 'markdown', 'html' or a callable")
        return _BUILTIN[render]
    return render


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
        self._render: Renderer = _renderer(render)
        self._dialects = frozenset(dialects)
        self.cited_sids: list[int] = []
        self.usage_sids: list[int] = []
        self.invalid_tokens: list[Token] = []
        self.sources_pool = sources_pool
        self.events: EventStream | None = None
        self.answer: AdaptedAnswer | None = None
        self._reset()

    def _reset(self) -> None:
        self._buf = ""  # source text not yet released
        self._offset = 0  # stream offset of _buf[0]
        self._line = 1  # line number of _buf[0]
        self._looked = 0  # the last cut of _buf found unreleasable (an open fence spans it)
        self._budget = _FREE_LOOK  # characters of _buf that looks may still parse
        self._whole = False  # a CR arrived: the batch reads everything as one section

    def feed(self, chunk: str) -> str:
        """Add ``chunk``; return the rewritten text that is final so far."""
        self._buf += chunk
        self._budget += _LOOK_FACTOR * len(chunk)
        if "\r" in chunk:
            self._whole = True
        return "" if self._whole else self._release()

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
        out = head + (self._emit(len(self._buf)) if self._buf else "")
        self._reset()
        return out

    def _release(self) -> str:
        """Rewrite and return the longest run of whole sections that can no longer change.

        A look parses the held text up to a cut; it happens only for a cut not looked at
        before, and within a budget that grows with the text received, so a long fenced
        block with many blank lines costs linear time, not quadratic.
        """
        buf = self._buf
        cuts = [m.end() for m in _CUT_RE.finditer(buf, self._looked)]
        if not cuts:
            return ""
        for cut in dict.fromkeys((cuts[-1], cuts[0])):
            if cut > self._budget:
                return ""  # looked at again once more text has paid for it
            self._budget -= cut
            if _section_code_spans(buf, 0, cut).closed:
                return self._emit(cut)
        self._looked = max(cuts[-1] - 1, 0)
        return ""

    def _emit(self, end: int) -> str:
        piece = self._buf[:end]
        text, tokens = rewrite_text(piece, self._render, dialects=self._dialects)
        for token in tokens:
            if token.inert:
                continue
            if token.error is not None:
                self.invalid_tokens.append(self._shifted(token))
            elif token.kind == "usage":
                self.usage_sids += [s for s in token.sids if s not in self.usage_sids]
            else:
                self.cited_sids += [s for s in token.sids if s not in self.cited_sids]
        self._offset += end
        self._line += piece.count("\n")
        self._buf = self._buf[end:]
        self._looked = 0
        return text

    def _shifted(self, token: Token) -> Token:
        """``token`` with offsets and line relative to the whole stream."""
        return replace(
            token, start=token.start + self._offset, end=token.end + self._offset,
            line=token.line + self._line - 1,
        )


def rewrite_stream(
    chunks: list[str] | tuple[str, ...],
    render: Renderer | Literal["markdown", "html"] = "markdown",
    *,
    dialects: frozenset[str] = frozenset(),
) -> str:
    """Rewrite a whole sequence of chunks at once (a convenience over :class:`StreamRewriter`)."""
    rewriter = StreamRewriter(render, dialects=dialects)
    return "".join(rewriter.feed(chunk) for chunk in chunks) + rewriter.flush()
