"""Which provider an answer comes from, and the one entry point that adapts any of them.

Each provider module recognizes its own shapes by their distinctive keys; they are asked in an
order that keeps look-alikes apart (a Perplexity completion is an OpenAI-compatible chat
completion plus ``citations``/``search_results``; an OpenAI Responses ``message`` item holds
``output_text`` parts where an Anthropic message holds ``text`` blocks). A JSON document with a
``_citations`` list is a structured answer with a sidecar (:mod:`citations.sidecar`), not a
provider's answer.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from citations import json_keys
from citations.adapters import (
    anthropic,
    gemini,
    langchain,
    llamaindex,
    openai,
    perplexity,
    streams,
)
from citations.adapters.base import PROVIDERS, AdaptedAnswer, Provider, plain, within
from citations.errors import AnswerError

AnswerKind = Literal[
    "openai", "anthropic", "perplexity", "gemini", "langchain", "llamaindex", "sidecar"
]
SIDECAR = "JSON answer with a _citations sidecar"
#: What a sidecar answer is, in the words of an error about input that should have been one.
SIDECAR_ACCEPTED = (
    'a JSON object citing through a "_citations" member, a list of '
    '{"path": "/json/pointer", "sids": [1, 3]} entries'
)

#: The shapes of a whole stream's events, collected in a list.
STREAMED: dict[Provider, str] = {
    "openai": "OpenAI Responses stream events",
    "anthropic": "Anthropic Messages stream events",
}

#: Recognizers in the order they are asked.
_RECOGNIZERS: tuple[tuple[Provider, Callable[[object], str | None]], ...] = (
    ("perplexity", perplexity.recognize),
    ("llamaindex", llamaindex.recognize),
    ("langchain", langchain.recognize),
    ("gemini", gemini.recognize),
    ("openai", openai.recognize),
    ("anthropic", anthropic.recognize),
)

ADAPTERS: dict[Provider, Callable[..., AdaptedAnswer]] = {
    "openai": openai.from_openai,
    "anthropic": anthropic.from_anthropic,
    "perplexity": perplexity.from_perplexity,
    "gemini": gemini.from_gemini,
    "langchain": langchain.from_langchain,
    "llamaindex": llamaindex.from_llamaindex,
}

ACCEPTED = (
    "an OpenAI Responses or Chat Completions object, an Anthropic Message, a Perplexity "
    "completion, a Gemini response, a LangChain AIMessage or retrieval output, a LlamaIndex "
    "Response, the list of an OpenAI Responses or Anthropic Messages stream's events or of a "
    "chat completion's chunks, or a conversation whose last assistant message is one of these"
)


@dataclass(frozen=True)
class Detection:
    """What an answer is: its ``kind`` (a provider, or ``"sidecar"``) and its shape in words."""

    kind: AnswerKind
    shape: str

    def __str__(self) -> str:
        return self.shape


def detect(answer: object) -> Detection | None:
    """The provider and shape of ``answer`` (parsed JSON or an SDK object), or None."""
    try:
        data = plain(answer)
    except AnswerError:
        return None
    if isinstance(data, Mapping) and isinstance(data.get("_citations"), list):
        return Detection("sidecar", SIDECAR)
    streamed = streams.is_event_list(data)
    if streamed is not None:
        return Detection(streamed, STREAMED[streamed])
    try:
        completion = streams.assembled_chunks(data)
    except AnswerError:
        return None
    if completion is not None:
        found = detect(completion)
        return None if found is None else Detection(found.kind, f"{found.shape}, streamed "
                                                                "(chat.completion.chunk list)")
    reply = last_reply(data)
    if reply is not None:
        found = detect(data[reply])
        if found is None or found.kind == "sidecar":
            return None
        return Detection(found.kind, f"{found.shape}, the last assistant message [{reply}] of "
                                     "a conversation")
    for provider, recognize in _RECOGNIZERS:
        shape = recognize(data)
        if shape is not None:
            return Detection(provider, shape)
    return None


def last_reply(data: object) -> int | None:
    """The index of the last assistant message when ``data`` is a conversation (a list of
    ``{"role": …}`` messages, as sent back to a chat API), else None."""
    if not isinstance(data, list) or not data or not all(
        isinstance(m, Mapping) and isinstance(m.get("role"), str) for m in data
    ):
        return None
    replies = [i for i, m in enumerate(data) if m["role"] == "assistant"]
    return replies[-1] if replies else None


def parse_answer(text: str | bytes, origin: str = "answer", *, accepted: str = ACCEPTED) -> Any:
    """JSON text of an answer as data; :class:`AnswerError` naming ``origin`` and what is
    ``accepted`` (by default every provider's answer) when it is not."""
    try:
        return json_keys.loads(text)
    except RecursionError as exc:  # "[[[[…": nested past the parser's depth, not an answer
        raise AnswerError("", f"{origin} nests too deeply to be an answer") from exc
    except json_keys.DuplicateKeyError as exc:
        raise AnswerError("", f"{origin}: {exc}") from exc
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, a 5,000-digit number
        where = (
            f" (line {exc.lineno}, column {exc.colno}: {exc.msg})"
            if isinstance(exc, json.JSONDecodeError) else ""
        )
        raise AnswerError("", f"{origin} is not valid JSON{where}; accepted: {accepted}") from exc


def adapt(
    answer: object, pool: object = None, *, provider: str | None = None
) -> AdaptedAnswer:
    """Any supported answer (an object, an SDK object or its JSON text) as citerender input.

    ``provider`` forces one adapter (``"openai"`` …); by default the shape is detected.
    Raises :class:`AnswerError` when the answer is not one of the accepted shapes or is
    malformed (naming the field).
    """
    data: Any = parse_answer(answer) if isinstance(answer, str | bytes) else plain(answer)
    data = streams.assembled_chunks(data) or data
    if provider is None:
        found = detect(data)
        if found is None or found.kind == "sidecar":
            what = "a structured answer with a _citations sidecar" if found else "not an answer"
            raise AnswerError("", f"{what}; accepted: {ACCEPTED}")
        provider = found.kind
    if provider not in ADAPTERS:
        raise AnswerError(
            "", f"provider {provider!r} is not known; accepted: {', '.join(PROVIDERS)}"
        )
    if streams.is_event_list(data) == provider:
        return streams.from_events(data, pool)
    reply = last_reply(data)
    if reply is None:
        return ADAPTERS[provider](data, pool)  # type: ignore[index]
    try:
        adapted = ADAPTERS[provider](data[reply], pool)  # type: ignore[index]
    except AnswerError as exc:
        raise within(f"[{reply}]", exc) from exc
    earlier = sum(1 for m in data[:reply] if m["role"] == "assistant")
    if not earlier:
        return adapted
    return dataclasses.replace(adapted, warnings=(
        f"[{reply}]: the conversation's last assistant message is the document; {earlier} "
        f"earlier assistant message{'s' * (earlier != 1)} left out",
        *adapted.warnings,
    ))
