"""Streamed provider events → canonical text with ``[[S:n]]`` tokens, chunk by chunk.

``stream.feed(event)`` returns the text that is final so far, ``stream.close()`` the rest;
``stream.answer`` then holds the :class:`~citations.adapters.base.AdaptedAnswer` (its pool).
The concatenated output is exactly the ``content`` the non-streamed adapter gives for the
finished response, because both place citations with the same marks and source collector:

- **OpenAI Responses** (platform.openai.com/docs/api-reference/responses-streaming):
  ``response.output_text.delta`` carries text; ``response.output_text.annotation.added``
  carries one annotation of the part (``output_index``, ``content_index``,
  ``annotation_index``) after the delta holding the text it cites. Text is released up to the
  end of the previous delta — never its trailing white space (a citation may still settle
  there) nor a possible inline link (its annotation may still replace it) — so every citation
  is placed before its text leaves. ``response.output_text.done`` releases the rest. A
  citation annotated *inside* code moves after the code as the non-streamed answer moves it
  (:func:`~citations.adapters.base.out_of_code_so_far`): it waits, and the text from the
  code's end with it, until the code is known to have ended; one after a backtick in its
  paragraph waits, and the text from it, until the paragraph ends (the backtick may yet open a
  code span around it). The code is read from the last section start no code runs across
  (:class:`~citations.adapters.base.CodeWindow`), and only when citations are there to place;
  past :data:`~citations.adapters.base.CODE_WINDOW_CHARS` of such text (one paragraph that
  long) a citation in code stays where it is annotated, with a warning, as reading the text
  again for each citation would cost the square of its length.
- **Anthropic Messages** (platform.claude.com/docs/en/build-with-claude/streaming,
  /citations#streaming-support): ``content_block_start`` opens a block (a
  ``web_search_tool_result`` arrives whole), ``content_block_delta`` brings ``text_delta`` or
  ``citations_delta`` (one citation added to the current text block), ``content_block_stop``
  ends it: the block's citation goes after its last word, so only trailing white space waits.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from citations.adapters import anthropic, openai
from citations.adapters.base import (
    CODE_WINDOW_CHARS,
    AdaptedAnswer,
    CodeWindow,
    Draft,
    Mark,
    MarkSet,
    Piece,
    Provider,
    TextOffsets,
    as_list,
    as_text,
    child,
    cited_at_end,
    finish,
    new_draft,
    place,
    plain,
    settle,
    within,
)
from citations.errors import AnswerError

_ANTHROPIC_EVENTS = frozenset({
    "message_start", "content_block_start", "content_block_delta", "content_block_stop",
    "message_delta", "message_stop", "ping", "error",
})


class EventStream(Protocol):
    """A provider's event stream being turned into canonical text."""

    answer: AdaptedAnswer | None

    def feed(self, event: object) -> str: ...

    def close(self) -> str: ...


def open_event_stream(first_event: object, pool: object = None) -> EventStream:
    """The stream adapter for the provider whose event ``first_event`` is."""
    kind = _event(first_event).get("type")
    if isinstance(kind, str) and kind.startswith("response."):
        return OpenAIEvents(pool)
    if kind in _ANTHROPIC_EVENTS:
        return AnthropicEvents(pool)
    raise AnswerError(
        "type", f"event type {kind!r} is not a streamed answer event; accepted: OpenAI "
                "Responses events (response.*) and Anthropic Messages events",
    )


def is_event_list(answer: object) -> Provider | None:
    """The provider whose streamed events ``answer`` lists (a whole stream, collected), or
    None."""
    if not isinstance(answer, list) or not answer or not isinstance(answer[0], Mapping):
        return None
    kind = answer[0].get("type")
    if isinstance(kind, str) and kind.startswith("response."):
        return "openai"
    return "anthropic" if kind in _ANTHROPIC_EVENTS else None


def assembled_chunks(answer: object) -> dict[str, Any] | None:
    """The chat completion a collected list of ``chat.completion.chunk`` objects streamed (the
    first choice's ``delta`` texts and annotations joined; top-level fields such as
    Perplexity's ``citations`` from the last chunk holding them), else None."""
    if not isinstance(answer, list) or not answer or not all(
        isinstance(c, Mapping) and c.get("object") == "chat.completion.chunk" for c in answer
    ):
        return None
    completion: dict[str, Any] = {"object": "chat.completion"}
    content: list[str] = []
    annotations: list[Any] = []
    for i, chunk in enumerate(answer):
        completion.update({k: v for k, v in chunk.items() if k not in ("object", "choices")})
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices:
            continue  # the closing usage chunk has no choice
        delta = choices[0].get("delta") if isinstance(choices[0], Mapping) else None
        if not isinstance(delta, Mapping):
            raise AnswerError(f"[{i}].choices[0].delta", "expected an object")
        if delta.get("content") is not None:
            content.append(as_text(delta["content"], f"[{i}].choices[0].delta.content"))
        where = f"[{i}].choices[0].delta"
        annotations += as_list(delta.get("annotations") or [], f"{where}.annotations")
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content)}
    if annotations:
        message["annotations"] = annotations
    completion["choices"] = [{"index": 0, "message": message}]
    return completion


def from_events(events: list[Any], pool: object = None) -> AdaptedAnswer:
    """A whole collected stream (its events in order) as the answer it streamed; an error
    names the event (``[7].delta``)."""
    stream: EventStream | None = None
    for i, event in enumerate(events):
        try:
            if stream is None:
                stream = open_event_stream(event, pool)
            stream.feed(event)
        except AnswerError as exc:
            raise within(f"[{i}]", exc) from exc
    if stream is None:
        raise AnswerError("", "no event in the stream")
    stream.close()
    assert stream.answer is not None
    return stream.answer


def _event(event: object) -> Mapping[str, Any]:
    data = json.loads(event) if isinstance(event, str | bytes) else plain(event)
    if not isinstance(data, Mapping):
        raise AnswerError("", f"an event is an object, not {type(data).__name__}")
    return data


class _Stream:
    """What both providers' streams share: the draft, the output pieces, the final answer."""

    provider: Provider
    shape: str

    def __init__(self, pool: object) -> None:
        self.draft: Draft = new_draft(pool)
        self.answer: AdaptedAnswer | None = None

    def emit(self, pieces: list[Piece]) -> str:
        return self.draft.render(self.draft.extend(pieces))

    def finished(self, tail: str) -> str:
        self.answer = finish(self.draft, self.provider, self.shape)
        return tail


@dataclass
class _Part:
    """One ``output_text`` part being streamed.

    Only the end of its text is kept (``tail``, from index ``base``): text before the last word
    that was released can no longer take a citation, so every delta costs its own length, not
    the answer's. ``chunks`` hold the whole text for the final check.
    """

    path: str
    tail: str = ""
    base: int = 0
    length: int = 0
    chunks: list[str] = field(default_factory=list)
    marks: MarkSet = field(default_factory=MarkSet)
    #: Marks taken from ``marks`` and not yet written: moved past code not yet released, or
    #: waiting until it is known whether code holds them.
    pending: list[Mark] = field(default_factory=list)
    #: The text its code is read from, for citations annotated in or near code.
    code: CodeWindow = field(default_factory=CodeWindow)
    released: int = 0
    done: bool = False
    warned: bool = False  # that citations in its code are left there

    def append(self, delta: str) -> None:
        self.tail += delta
        self.chunks.append(delta)
        self.length += len(delta)
        self.code.append(delta)

    def offsets(self) -> TextOffsets:
        return TextOffsets(self.tail, base=self.base, length=self.length)

    def forget_before(self, position: int) -> None:
        """Drop the kept text before ``position``, keeping the white space that ends the last
        word before it (a citation may still settle after that word)."""
        keep = position - self.base
        while keep > 0 and self.tail[keep - 1].isspace():
            keep -= 1
        keep = max(keep - 1, 0)
        self.tail, self.base = self.tail[keep:], self.base + keep


class OpenAIEvents(_Stream):
    """OpenAI Responses streaming events → canonical text (see the module docstring)."""

    provider: Provider = "openai"
    shape = openai.RESPONSES

    def __init__(self, pool: object = None, *, keep_inline_links: bool = False) -> None:
        super().__init__(pool)
        self.keep_inline_links = keep_inline_links
        self.parts: dict[tuple[int, int], _Part] = {}
        self.items: list[int] = []  # output items that hold output_text, in order

    def feed(self, event: object) -> str:
        data = _event(event)
        kind = data.get("type")
        if kind == "response.content_part.added":
            part = data.get("part")
            if isinstance(part, Mapping) and part.get("type") == "output_text":
                return self._open(data)[0]
        elif kind == "response.output_text.delta":
            out, part = self._open(data)
            out += self._release(part, part.length, final=False)
            part.append(str(data.get("delta", "")))
            return out
        elif kind == "response.output_text.annotation.added":
            part = self._open(data)[1]
            index = data.get("annotation_index", 0)
            path = child(child(part.path, "annotations"), index if isinstance(index, int) else 0)
            position = openai.add_annotation(self.draft, part.marks, part.offsets(),
                                             data.get("annotation"), path, self.keep_inline_links)
            if position is not None and position < part.released:
                self.draft.warnings.append(
                    f"{path}: arrived after the text it cites was released; placed late"
                )
        elif kind in ("response.output_text.done", "response.content_part.done"):
            key = (data.get("output_index"), data.get("content_index"))
            part = self.parts.get(key)  # type: ignore[arg-type]
            if part is not None and not part.done:
                final = data.get("text") if kind == "response.output_text.done" else None
                if isinstance(final, str) and final != "".join(part.chunks):
                    raise AnswerError(child(part.path, "text"), "the streamed deltas do not "
                                      "add up to the text of response.output_text.done")
                part.done = True
                return self._release(part, part.length, final=True)
        return ""

    def _open(self, data: Mapping[str, Any]) -> tuple[str, _Part]:
        """The part an event is about (opened on first sight) and the separator it needs."""
        item, index = data.get("output_index", 0), data.get("content_index", 0)
        if not isinstance(item, int) or not isinstance(index, int):
            raise AnswerError("output_index", "output_index and content_index are integers")
        part = self.parts.get((item, index))
        if part is not None:
            return "", part
        part = self.parts[(item, index)] = _Part(f"output[{item}].content[{index}]")
        if item not in self.items:
            self.items.append(item)
            self.draft.paragraph_break()
        return "", part

    def _release(self, part: _Part, upto: int, *, final: bool) -> str:
        """Emit ``part`` up to ``upto`` minus what a later annotation may still change."""
        tail, base = part.tail, part.base
        if not final:
            upto = settle(tail, part.released, upto, base)
            if not self.keep_inline_links:
                upto = base + openai.link_hold(tail, upto - base)
            upto = base + openai.marker_hold(tail, upto - base)
        if upto < part.released or (upto == part.released and not final):
            return ""
        taken = part.pending + part.marks.take(upto if final else upto - 1)
        sorted_marks = part.code.sort(taken, final=final)
        if sorted_marks.unread and not part.warned:
            part.warned = True
            self.draft.warnings.append(
                f"{part.path}: a paragraph or code block longer than {CODE_WINDOW_CHARS:,} "
                "characters: a citation annotated inside code in it stays there"
            )
        if sorted_marks.hold is not None:
            upto = max(min(upto, sorted_marks.hold), part.released)
        last = upto if final else upto - 1
        marks = [m for m in sorted_marks.ready if m.position <= last]
        part.pending = [m for m in sorted_marks.ready if m.position > last]
        part.pending += sorted_marks.waiting
        if upto == part.released and not final:
            part.pending[:0] = marks  # nothing released: they wait with the rest
            return ""
        pieces = place(tail, marks, part.released, upto, base)
        part.released = upto
        part.forget_before(upto)
        if not part.pending:
            part.code.forget_before(upto)
        return self.emit(pieces)

    def close(self) -> str:
        tail = "".join(
            self._release(part, part.length, final=True)
            for part in self.parts.values() if not part.done
        )
        if not self.parts:
            raise AnswerError("output", "no message with output_text in the response")
        return self.finished(tail)


@dataclass
class _Block:
    """One Anthropic text block being streamed."""

    path: str
    text: str = ""
    citations: int = 0
    numbers: list[int] = field(default_factory=list)
    released: int = 0


class AnthropicEvents(_Stream):
    """Anthropic Messages streaming events → canonical text (see the module docstring)."""

    provider: Provider = "anthropic"
    shape = anthropic.MESSAGE

    def __init__(self, pool: object = None) -> None:
        super().__init__(pool)
        self.blocks: dict[int, _Block] = {}
        self.texts = 0

    def feed(self, event: object) -> str:
        data = _event(event)
        kind = data.get("type")
        index = data.get("index", 0)
        path = child("content", index if isinstance(index, int) else 0)
        if kind == "error":
            error = data.get("error")
            message = error.get("message") if isinstance(error, Mapping) else error
            raise AnswerError("error", f"the stream ended with an error: {message}")
        if kind == "content_block_start":
            block = data.get("content_block")
            if not isinstance(block, Mapping):
                raise AnswerError(child(path, "content_block"), "expected an object")
            if block.get("type") != "text":
                self.draft.paragraph_break()
            if block.get("type") == "web_search_tool_result":
                anthropic.add_search_results(self.draft, block, path)
            elif block.get("type") == "text":
                state = self.blocks[index] = _Block(path)
                self.texts += 1
                for citation in block.get("citations") or []:
                    self._cite(state, citation)
                return self._text(state, str(block.get("text") or ""))
        elif kind == "content_block_delta":
            current = self.blocks.get(index)
            delta = data.get("delta")
            if current is None or not isinstance(delta, Mapping):
                return ""
            if delta.get("type") == "text_delta":
                return self._text(current, str(delta.get("text", "")))
            if delta.get("type") == "citations_delta":
                self._cite(current, delta.get("citation"))
        elif kind == "content_block_stop":
            ended = self.blocks.pop(index) if index in self.blocks else None
            if ended is not None:
                return self._stop(ended)
        return ""

    def _cite(self, state: _Block, citation: object) -> None:
        path = child(child(state.path, "citations"), state.citations)
        state.citations += 1
        number = anthropic.add_citation(self.draft, citation, path)
        if number is not None and number not in state.numbers:
            state.numbers.append(number)

    def _text(self, state: _Block, text: str) -> str:
        state.text += text
        upto = settle(state.text, state.released, len(state.text))
        if upto <= state.released:
            return ""
        piece = state.text[state.released : upto]
        state.released = upto
        return self.emit([piece])

    def _stop(self, state: _Block) -> str:
        position = settle(state.text, 0, len(state.text))
        assert position >= state.released or not state.text[: state.released].strip()
        return self.emit(cited_at_end(state.text, state.numbers, state.released))

    def close(self) -> str:
        tail = "".join(self._stop(state) for state in self.blocks.values())
        self.blocks.clear()
        if not self.texts:
            raise AnswerError("content", "no text block in the stream")
        return self.finished(tail)
