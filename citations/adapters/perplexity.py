"""Perplexity answers: Sonar chat completions with ``[1][2]`` markers and a list of sources.

Shape read (docs.perplexity.ai, Chat Completions API reference): an OpenAI-compatible chat
completion, ``{"choices": [{"message": {"content": "…[1][2]…"}}], "citations": [urls],
"search_results": [{"title", "url", "date", "last_updated", "snippet"}]}`` (first choice).

Offsets: there are none. The citations are the numbered markers the model writes into its text,
``[n]`` naming the n-th entry (1-based) of ``citations`` — or of ``search_results`` when
``citations`` is absent; titles, dates and snippets come from the ``search_results`` entry with
the same URL. Markers are found in the text itself (outside code), so multi-byte text needs no
conversion; a marker linked to its own source's URL, ``[1](https://…)``, is one too. A
reasoning model's leading ``<think>…</think>`` block is not part of the answer and is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from citations.adapters.base import (
    AdaptedAnswer,
    as_list,
    as_object,
    as_text,
    child,
    cited_at_end,
    finish,
    new_draft,
)
from citations.adapters.markers import replace_markers
from citations.errors import AnswerError
from citations.links import domain_of
from citations.urls import normalize_url

SONAR = "Perplexity Sonar answer with [n] markers and citations/search_results"
_THINK = re.compile(r"\A\s*<think>.*?</think>\s*", re.DOTALL)


def recognize(answer: object) -> str | None:
    """The shape ``answer`` has among Perplexity's, or None."""
    if not isinstance(answer, Mapping) or not isinstance(answer.get("choices"), list):
        return None
    if isinstance(answer.get("citations"), list) or isinstance(answer.get("search_results"), list):
        return SONAR
    return None


def from_perplexity(answer: Any, pool: object = None) -> AdaptedAnswer:
    """A Perplexity Sonar completion as markdown with ``[[S:n]]`` tokens.

    ``sid_map`` maps each marker number to its sid. Raises
    :class:`~citations.errors.AnswerError` naming the malformed field.
    """
    answer = as_object(answer, "")
    if recognize(answer) is None:
        raise AnswerError(
            "", "not a Perplexity answer; accepted: a chat completion with 'choices' and a "
                "'citations' or 'search_results' list",
        )
    choices = as_list(answer["choices"], "choices")
    if not choices:
        raise AnswerError("choices", "no choice in the completion")
    message = as_object(as_object(choices[0], "choices[0]").get("message"), "choices[0].message")
    text = _THINK.sub("", as_text(message.get("content"), "choices[0].message.content"), count=1)
    draft = new_draft(pool)
    results = _search_results(answer)
    if isinstance(answer.get("citations"), list):
        for i, url in enumerate(answer["citations"]):
            where = child("citations", i)
            url = as_text(url, where)
            found = results.get(normalize_url(url), {})
            draft.collector.add(_row(url, found), where, ref=i + 1)
    else:
        for i, result in enumerate(as_list(answer["search_results"], "search_results")):
            where = child("search_results", i)
            result = as_object(result, where)
            url = as_text(result.get("url"), child(where, "url"))
            draft.collector.add(_row(url, result), where, ref=i + 1)
    where = "choices[0].message.content"
    pieces = replace_markers(draft, text, draft.collector.refs, where)
    numbers = list(dict.fromkeys(draft.collector.refs.values()))
    if numbers and text.strip() and all(isinstance(p, str) for p in pieces):
        pieces = cited_at_end(text, numbers)
        count = len(numbers)
        draft.warnings.append(
            f"{where}: no [n] marker names the {count} listed source{'s' * (count != 1)}; "
            "cited at the end of the answer"
        )
    draft.extend(pieces)
    return finish(draft, "perplexity", SONAR)


def _search_results(answer: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The well-formed search results by normalized URL (the first of each URL wins)."""
    found: dict[str, Mapping[str, Any]] = {}
    results = answer.get("search_results")
    for result in results if isinstance(results, list) else []:
        if isinstance(result, Mapping) and isinstance(result.get("url"), str):
            found.setdefault(normalize_url(result["url"]), result)
    return found


def _row(url: str, result: Mapping[str, Any]) -> dict[str, Any]:
    def text(name: str) -> str:
        value = result.get(name)
        return value if isinstance(value, str) else ""

    return {
        "url": url,
        "title": text("title") or domain_of(url) or url,
        "published_at": text("date") or text("last_updated"),
        "text": text("snippet"),
        "source_type": "web",
    }
