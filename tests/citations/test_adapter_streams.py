"""Streamed provider events give exactly the document of the non-streamed answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tests.hypothesis_profiles  # noqa: F401  (registers the Hypothesis profiles)
from citations.adapters import AnswerError, from_anthropic, from_openai
from citations.adapters.streams import AnthropicEvents, OpenAIEvents, open_event_stream
from citations.streaming import StreamRewriter, rewrite_stream
from tests.fixtures.answers.events import anthropic_events, openai_events
from tests.fixtures.answers.events import words as words_cuts

ANSWERS = Path(__file__).resolve().parent.parent / "fixtures" / "answers"
POOL = [{"sid": 1, "title": "Known IEA page", "url": "https://www.iea.org/reports/renewables-2024"}]


def load(name: str) -> Any:
    return json.loads((ANSWERS / name).read_text("utf-8"))


def stream_file(name: str) -> list[dict[str, Any]]:
    lines = (ANSWERS / name).read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def run(stream: OpenAIEvents | AnthropicEvents, events: list[dict[str, Any]]) -> str:
    return "".join(stream.feed(event) for event in events) + stream.close()


def test_documented_openai_sequence_equals_the_response() -> None:
    events = stream_file("openai-responses.stream.jsonl")
    assert {e["type"] for e in events} >= {
        "response.output_text.delta", "response.output_text.annotation.added",
        "response.output_text.done", "response.completed",
    }
    batch = from_openai(load("openai-responses.json"), POOL)
    stream = OpenAIEvents(POOL)
    assert run(stream, events) == batch.content
    assert stream.answer is not None
    assert stream.answer.pool == batch.pool and stream.answer.sid_map == batch.sid_map


def test_documented_anthropic_sequence_equals_the_message() -> None:
    events = stream_file("anthropic-web-search.stream.jsonl")
    assert any(e.get("delta", {}).get("type") == "citations_delta" for e in events)
    batch = from_anthropic(load("anthropic-web-search.json"))
    stream = AnthropicEvents()
    assert run(stream, events) == batch.content
    assert stream.answer is not None and stream.answer.pool == batch.pool


@pytest.mark.parametrize(
    ("events", "answer", "adapter"),
    [
        ("openai-responses.stream.jsonl", "openai-responses.json", from_openai),
        ("anthropic-web-search.stream.jsonl", "anthropic-web-search.json", from_anthropic),
    ],
)
def test_stream_rewriter_accepts_provider_events(events: str, answer: str, adapter: Any) -> None:
    rewriter = StreamRewriter("html", sources_pool=POOL)
    out = "".join(rewriter.feed_event(event) for event in stream_file(events)) + rewriter.flush()
    batch = adapter(load(answer), POOL)
    assert out == rewrite_stream([batch.content], "html")
    assert rewriter.answer is not None and rewriter.answer.pool == batch.pool
    assert rewriter.cited_sids == list(dict.fromkeys(
        sid for sids in _token_sids(batch.content) for sid in sids))
    assert '<sup class="cite"' in out and "[[S:" not in out


def _token_sids(content: str) -> list[list[int]]:
    from citations.tokens import citation_groups

    return [list(group) for group in citation_groups(content)]


def _cuts(draw: st.DrawFn, text: str) -> list[int]:
    if len(text) < 2:
        return []
    return draw(st.lists(st.integers(1, len(text) - 1), max_size=12))


@st.composite
def _openai_case(draw: st.DrawFn) -> list[dict[str, Any]]:
    response = load("openai-responses.json")
    if draw(st.booleans()):  # a second message item, to cross a paragraph break
        extra = json.loads(json.dumps(response["output"][1]))
        extra["id"] = "msg_second"
        response["output"].append(extra)
    cut_lists: dict[str, list[int]] = {}

    def cuts(text: str) -> list[int]:
        if text not in cut_lists:
            cut_lists[text] = _cuts(draw, text)
        return cut_lists[text]

    return openai_events(response, cuts)


@pytest.mark.slow
@given(_openai_case(), st.booleans())
def test_any_openai_chunking_gives_the_response(events: list[dict[str, Any]], keep: bool) -> None:
    response = events[-1]["response"]
    batch = from_openai(response, POOL, keep_inline_links=keep)
    stream = OpenAIEvents(POOL, keep_inline_links=keep)
    assert run(stream, events) == batch.content
    assert stream.answer is not None and stream.answer.pool == batch.pool


@st.composite
def _anthropic_case(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]]]:
    name = draw(st.sampled_from(["anthropic-web-search.json", "anthropic-documents.json"]))
    message = load(name)
    return name, anthropic_events(
        message,
        lambda text: _cuts(draw, text),
        lambda deltas: draw(st.integers(0, deltas)),
    )


@given(_anthropic_case())
def test_any_anthropic_chunking_gives_the_message(case: tuple[str, list[dict[str, Any]]]) -> None:
    name, events = case
    batch = from_anthropic(load(name))
    stream = AnthropicEvents()
    assert run(stream, events) == batch.content
    assert stream.answer is not None and stream.answer.pool == batch.pool


def test_events_of_unknown_providers_and_errors_are_refused() -> None:
    with pytest.raises(AnswerError, match="not a streamed answer event"):
        open_event_stream({"type": "chunk"})
    stream = AnthropicEvents()
    with pytest.raises(AnswerError, match="overloaded"):
        stream.feed({"type": "error", "error": {"type": "overloaded_error",
                                                 "message": "overloaded"}})
    openai = OpenAIEvents()
    openai.feed({"type": "response.output_text.delta", "output_index": 0, "content_index": 0,
                 "delta": "Hello"})
    with pytest.raises(AnswerError, match="do not add up"):
        openai.feed({"type": "response.output_text.done", "output_index": 0, "content_index": 0,
                     "text": "Hello world"})


def test_streamed_inline_link_with_parentheses_in_its_url_is_replaced_at_every_cut() -> None:
    # A destination with balanced parentheses (CommonMark) is held while it may still be a
    # cited link, wherever the deltas are cut, and replaced as in the non-streamed answer.
    url = "https://en.wikipedia.org/wiki/Solar_(disambiguation)?utm_source=openai"
    text = f"Solar means several things ([wikipedia.org]({url})). Next sentence."
    response = {"id": "r", "object": "response", "status": "completed", "output": [
        {"id": "msg_1", "type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": text, "annotations": [
                {"type": "url_citation", "start_index": 27, "end_index": 116, "url": url,
                 "title": "Solar - Wikipedia"}]}]}]}
    expected = "Solar means several things[[S:1]]. Next sentence."
    assert from_openai(response).content == expected
    for cut in range(1, len(text)):
        assert run(OpenAIEvents(), openai_events(response, lambda _t, c=cut: [c])) == expected


def test_streamed_anthropic_block_ending_in_a_code_fence_equals_the_message() -> None:
    message = {"type": "message", "role": "assistant", "content": [
        {"type": "text", "text": "Run this:\n\n```sh\npip install foo\n```\n", "citations": [
            {"type": "web_search_result_location", "url": "https://pypi.org/project/foo/",
             "title": "foo", "cited_text": "pip install foo", "encrypted_index": "x"}]},
        {"type": "text", "text": "Then import it."},
    ]}
    events = anthropic_events(message, lambda text: [3, 20], lambda deltas: 0)
    batch = from_anthropic(message).content
    assert batch == "Run this:\n\n```sh\npip install foo\n```\n[[S:1]]\nThen import it."
    assert run(AnthropicEvents(), events) == batch


def test_streamed_file_search_marker_is_replaced_at_every_cut() -> None:
    # A 【4:0†source】 marker is held while its annotation may still replace it.
    text = "The term ends in March 2025【4:0†contract.pdf】. Next."
    response = {"id": "r", "object": "response", "status": "completed", "output": [
        {"id": "msg_1", "type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": text, "annotations": [
                {"type": "file_citation", "file_id": "file-1", "filename": "contract.pdf",
                 "index": text.index("【")}]}]}]}
    expected = "The term ends in March 2025[[S:1]]. Next."
    assert from_openai(response).content == expected
    for cut in range(1, len(text)):
        assert run(OpenAIEvents(), openai_events(response, lambda _t, c=cut: [c])) == expected


@pytest.mark.parametrize(("events", "answer", "adapter"), [
    ("openai-responses.stream.jsonl", "openai-responses.json", from_openai),
    ("anthropic-web-search.stream.jsonl", "anthropic-web-search.json", from_anthropic),
])
def test_a_collected_stream_is_an_answer(events: str, answer: str, adapter: Any) -> None:
    # An agent that kept the events it streamed hands over their list: it is read as the
    # answer it streamed (it was "not an answer", and the CLI asked for a pool).
    from citations.adapters import adapt, detect

    collected = stream_file(events)
    found = detect(collected)
    assert found is not None and found.shape.endswith("stream events")
    adapted = adapt(json.dumps(collected), POOL)
    batch = adapter(load(answer), POOL)
    assert (adapted.content, adapted.pool, adapted.sid_map) == (
        batch.content, batch.pool, batch.sid_map
    )
    assert adapt(collected, POOL, provider=found.kind).content == batch.content


def test_a_collected_stream_error_names_the_event() -> None:
    from citations.adapters import adapt

    collected = stream_file("anthropic-web-search.stream.jsonl")
    collected[3] = {"type": "content_block_start", "index": 1, "content_block": "text"}
    with pytest.raises(AnswerError) as caught:
        adapt(collected)
    assert str(caught.value) == "[3].content[1].content_block: expected an object"


def test_collected_chat_completion_chunks_are_the_completion() -> None:
    # Perplexity (and OpenAI's search models) stream chat.completion.chunk objects; their list
    # is the completion they streamed: text joined, annotations and citations kept.
    from citations.adapters import adapt, detect, from_perplexity

    completion = load("perplexity-sonar.json")
    text = completion["choices"][0]["message"]["content"]
    top = {k: v for k, v in completion.items() if k not in ("object", "choices")}
    chunks = [{**top, "object": "chat.completion.chunk", "choices": [
        {"index": 0, "delta": {"role": "assistant", "content": text[i : i + 9]}}]}
        for i in range(0, len(text), 9)]
    chunks.append({"id": top.get("id"), "object": "chat.completion.chunk", "choices": [],
                   "usage": {"total_tokens": 9}})
    found = detect(chunks)
    assert found is not None and found.kind == "perplexity"
    assert adapt(chunks).content == from_perplexity(completion).content

    said = "Paris hosted the 2024 Olympics."
    openai_chunks = [
        {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": said}}]},
        {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"annotations": [
            {"type": "url_citation", "url_citation": {"start_index": 0, "end_index": len(said),
             "url": "https://olympics.com", "title": "Olympics"}}]}, "finish_reason": "stop"}]},
    ]
    assert adapt(openai_chunks).content == "Paris hosted the 2024 Olympics.[[S:1]]"
    openai_chunks[1]["choices"][0]["delta"] = "x"
    with pytest.raises(AnswerError) as caught:
        adapt(openai_chunks)
    assert str(caught.value) == "[1].choices[0].delta: expected an object"


def test_streamed_table_row_citations_equal_the_batch_at_every_cut() -> None:
    from tests.citations.test_adapters import TABLE_MESSAGE

    batch = from_anthropic(TABLE_MESSAGE).content
    assert "23 %[[S:1]] |" in batch
    for cut in range(1, 16):
        events = anthropic_events(TABLE_MESSAGE, lambda _t, c=cut: [c], lambda deltas: 0)
        assert run(AnthropicEvents(), events) == batch
    text = "| Year | GW |\n|---|---|\n| 2024 | 450 |\n\nNext."
    response = {"id": "r", "object": "response", "status": "completed", "output": [
        {"id": "msg_1", "type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": text, "annotations": [
                {"type": "url_citation", "start_index": 24, "end_index": 38,
                 "url": "https://a.org", "title": "A"}]}]}]}
    expected = text.replace("| 2024 | 450 |", "| 2024 | 450[[S:1]] |")
    assert from_openai(response).content == expected
    for cut in range(1, len(text)):
        assert run(OpenAIEvents(), openai_events(response, lambda _t, c=cut: [c])) == expected


def test_citation_of_a_setext_heading_stays_on_its_text_batch_and_streamed() -> None:
    # After the underline a token unmade the heading ("\\======" showed as text).
    message = {"type": "message", "role": "assistant", "content": [
        {"type": "text", "text": "Wind in 2024\n============", "citations": [
            {"type": "web_search_result_location", "url": "https://a.org", "title": "A",
             "cited_text": "x", "encrypted_index": "a"}]},
        {"type": "text", "text": "\n\nIt grew."},
    ]}
    batch = from_anthropic(message).content
    assert batch == "Wind in 2024[[S:1]]\n============\n\nIt grew."
    for cut in range(1, 25):
        events = anthropic_events(message, lambda _t, c=cut: [c], lambda deltas: 0)
        assert run(AnthropicEvents(), events) == batch


def _code_response(text: str, cited: list[tuple[str, str]]) -> dict[str, Any]:
    """A Responses object whose url_citations end right after each ``(after, url)`` text."""
    annotations = []
    for after, url in cited:
        end = text.index(after) + len(after)
        annotations.append({"type": "url_citation", "start_index": 0, "end_index": end,
                            "url": url, "title": url})
    return {"object": "response", "output": [{
        "type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": annotations}]}]}


CODE_ANSWERS = [
    ("Install it with `pip install foo` today, then run it.",
     [("pip install", "https://a.org"), ("today", "https://b.org")]),
    ("Try this:\n\n```python\nimport foo\nfoo.run()\n```\nIt prints ok.\n\nDone here.",
     [("import foo", "https://a.org"), ("foo.run()", "https://b.org"),
      ("prints ok.", "https://c.org")]),
    ("Steps:\n\n    make build\n    make test\n\nthen ship `it` now.",
     [("make build", "https://a.org"), ("`it", "https://b.org")]),
    ("A `b c` d `e` f.", [("A `b", "https://a.org"), ("d `e`", "https://b.org")]),
    ("Unclosed `tick here and more text", [("tick", "https://a.org")]),
    ("Open fence:\n\n```\ncode line\nmore", [("code line", "https://a.org")]),
    ("- item\n\n  ```\n  x = 1\n  ```\n- next `y`\n\nEnd.",
     [("x = 1\n  ```", "https://a.org"), ("next `y", "https://b.org")]),
    ("Use <code>a b</code> and then `c` too.\n\nMore.",
     [("<code>a", "https://a.org"), ("then", "https://b.org"), ("`c", "https://c.org")]),
    ("Before[x] a tick ` after", [("Before", "https://a.org"), ("tick", "https://b.org")]),
]


@pytest.mark.parametrize(("text", "cited"), CODE_ANSWERS)
@pytest.mark.parametrize("chunking", ["words", "chars"])
def test_a_streamed_citation_inside_code_moves_out_as_in_the_response(
    text: str, cited: list[tuple[str, str]], chunking: str
) -> None:
    response = _code_response(text, cited)
    batch = from_openai(response)
    cuts = (lambda t: list(range(1, len(t)))) if chunking == "chars" else words_cuts
    stream = OpenAIEvents()
    assert run(stream, openai_events(response, cuts)) == batch.content
    assert stream.answer is not None and stream.answer.pool == batch.pool


@given(st.sampled_from(CODE_ANSWERS), st.data())
def test_any_chunking_of_code_moves_citations_as_the_response(
    case: tuple[str, list[tuple[str, str]]], data: st.DataObject
) -> None:
    text, cited = case
    response = _code_response(text, cited)
    stream = OpenAIEvents()
    events = openai_events(response, lambda t: _cuts(data.draw, t))
    assert run(stream, events) == from_openai(response).content


def test_a_citation_in_code_of_a_paragraph_past_the_window_stays_with_a_warning() -> None:
    from citations.adapters.base import CODE_WINDOW_CHARS

    text = "word " * (CODE_WINDOW_CHARS // 5 + 10) + "then `pip install foo` now."
    response = _code_response(text, [("pip install", "https://a.org")])
    stream = OpenAIEvents()
    content = run(stream, openai_events(response, words_cuts))
    assert "`pip install[[S:1]] foo`" in content  # where annotated, as before this rule
    assert from_openai(response).content.endswith("`pip install foo`[[S:1]] now.")
    assert stream.answer is not None and any("8,192 characters" in w
                                             for w in stream.answer.warnings)
