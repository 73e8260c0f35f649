"""Provider adapters: exact token placement, offsets in each API's unit, pools, field errors."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pydantic
import pytest

import citations.adapters as adapters
from citations.adapters import (
    AnswerError,
    adapt,
    detect,
    from_anthropic,
    from_gemini,
    from_langchain,
    from_llamaindex,
    from_openai,
    from_perplexity,
)
from citations.pool import SourcePool
from tests.helpers import at_sizes

ANSWERS = Path(__file__).resolve().parent.parent / "fixtures" / "answers"
EXPECTED: dict[str, dict[str, Any]] = json.loads((ANSWERS / "expected.json").read_text("utf-8"))
ADAPTERS = {
    "openai": from_openai, "anthropic": from_anthropic, "perplexity": from_perplexity,
    "gemini": from_gemini, "langchain": from_langchain, "llamaindex": from_llamaindex,
}


def load(name: str) -> Any:
    return json.loads((ANSWERS / name).read_text("utf-8"))


def test_public_names() -> None:
    assert set(adapters.__all__) >= {
        "adapt", "detect", "AdaptedAnswer", "from_openai", "from_anthropic", "from_perplexity",
        "from_gemini", "from_langchain", "from_llamaindex",
    }
    for name in adapters.__all__:
        assert hasattr(adapters, name)


def test_every_provider_has_two_fixtures() -> None:
    providers = [expected["provider"] for expected in EXPECTED.values()]
    assert {p: providers.count(p) for p in ADAPTERS} == dict.fromkeys(ADAPTERS, 2)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_gives_exact_content_and_pool(name: str) -> None:
    expected = EXPECTED[name]
    found = detect(load(name))
    assert found is not None and found.kind == expected["provider"]
    adapted = ADAPTERS[expected["provider"]](load(name))
    assert adapted.content == expected["content"]
    assert [s.title for s in adapted.pool] == expected["pool_titles"]
    assert {str(k): v for k, v in adapted.sid_map.items()} == expected["sid_map"]
    assert len(adapted.warnings) == expected["warnings"]
    assert adapt(load(name)).content == expected["content"]  # detection picks the same adapter


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_json_text_and_bytes_are_answers_too(name: str) -> None:
    text = (ANSWERS / name).read_text("utf-8")
    assert adapt(text).content == adapt(text.encode()).content == EXPECTED[name]["content"]


def test_merge_into_an_existing_pool_keeps_known_sids() -> None:
    pool = SourcePool.from_rows([
        {"sid": 1, "title": "Old note", "url": "https://example.org/note"},
        {"sid": 5, "title": "IEA (known)", "url": "https://WWW.iea.org/reports/renewables-2024/"},
    ])
    adapted = from_openai(load("openai-responses.json"), pool)
    assert adapted.pool.get(5).title == "IEA (known)"  # type: ignore[union-attr]
    assert [s.sid for s in adapted.pool] == [1, 5, 6, 7, 8]
    assert adapted.sid_map == {1: 5, 2: 6, 3: 7, 4: 8}
    assert "450 GW[[S:5]]" in adapted.content and "€0.10/W[[S:6,7]]." in adapted.content
    assert adapted.content.endswith("same curve.[[S:8]]")
    assert [s.sid for s in adapted.sources] == [5, 6, 7, 8]


def test_openai_offsets_are_code_points_not_utf16() -> None:
    text = "🌍🌍 Earth is warming. Next."
    good = {"type": "message", "content": [{"type": "output_text", "text": text, "annotations": [
        {"type": "url_citation", "start_index": 3, "end_index": 20, "url": "https://a.org",
         "title": "A"}]}]}
    assert from_openai(good).content == "🌍🌍 Earth is warming.[[S:1]] Next."
    utf16 = copy.deepcopy(good)  # the same span counted in UTF-16 units lands two further
    utf16["content"][0]["annotations"][0].update(start_index=5, end_index=22)
    assert from_openai(utf16).content != "🌍🌍 Earth is warming.[[S:1]] Next."


def test_openai_inline_link_is_replaced_unless_kept() -> None:
    answer = load("openai-responses.json")
    kept = from_openai(answer, keep_inline_links=True).content
    assert "450 GW ([iea.org](https://www.iea.org/reports/renewables-2024?utm_source=openai))" \
           "[[S:1]], while" in kept
    assert "450 GW[[S:1]], while" in from_openai(answer).content


PAREN_URL = "https://en.wikipedia.org/wiki/Solar_(disambiguation)?utm_source=openai"
PAREN_TEXT = f"Solar means several things ([wikipedia.org]({PAREN_URL})). Next sentence."
PAREN_ANSWER = {"type": "message", "content": [{"type": "output_text", "text": PAREN_TEXT,
    "annotations": [{"type": "url_citation", "start_index": 27, "end_index": 116,
                     "url": PAREN_URL, "title": "Solar - Wikipedia"}]}]}


def test_openai_inline_link_with_parentheses_in_its_url_is_replaced() -> None:
    # CommonMark lets a destination hold balanced parentheses; the link is replaced like any.
    assert PAREN_TEXT[27:116] == f"([wikipedia.org]({PAREN_URL}))"
    assert from_openai(PAREN_ANSWER).content == "Solar means several things[[S:1]]. Next sentence."
    bare = copy.deepcopy(PAREN_ANSWER)  # the link without the surrounding parentheses
    bare["content"][0]["text"] = PAREN_TEXT.replace(f"([wikipedia.org]({PAREN_URL}))",
                                                    f"[wikipedia.org]({PAREN_URL})")
    bare["content"][0]["annotations"][0]["end_index"] = 114
    assert from_openai(bare).content == "Solar means several things[[S:1]]. Next sentence."
    kept = from_openai(PAREN_ANSWER, keep_inline_links=True).content
    assert f"[wikipedia.org]({PAREN_URL}))[[S:1]]." in kept


def test_openai_file_citation_is_placed_at_its_index() -> None:
    text = "The deck shows margins of 12 %. Next."
    answer = {"type": "message", "content": [{"type": "output_text", "text": text, "annotations": [
        {"type": "file_citation", "file_id": "file-8x", "filename": "q3-deck.pdf", "index": 31},
        {"type": "file_path", "file_id": "file-9y", "index": 3},
    ]}]}
    adapted = from_openai(answer)
    assert adapted.content == "The deck shows margins of 12 %.[[S:1]] Next."
    source = adapted.pool.get(1)
    assert source is not None and source.artifact_path == "q3-deck.pdf" and source.is_file


def test_gemini_offsets_are_utf8_bytes() -> None:
    answer = load("gemini-google-search.json")
    support = answer["candidates"][0]["groundingMetadata"]["groundingSupports"][2]["segment"]
    text = answer["candidates"][0]["content"]["parts"][0]["text"]
    assert support["endIndex"] == len(text.encode()) > len(text)  # bytes, not characters
    shifted = copy.deepcopy(answer)
    shifted_segment = shifted["candidates"][0]["groundingMetadata"]["groundingSupports"][1]
    shifted_segment["segment"]["endIndex"] -= 1  # now inside the 4-byte 🌊
    with pytest.raises(AnswerError) as caught:
        from_gemini(shifted)
    assert caught.value.path == "candidates[0].groundingMetadata.groundingSupports[1].segment" \
                                 ".endIndex"
    assert "inside the character '🌊'" in str(caught.value)


def test_gemini_segment_text_rescues_offsets_counted_as_characters() -> None:
    answer = load("gemini-google-search.json")
    text = answer["candidates"][0]["content"]["parts"][0]["text"]
    for support in answer["candidates"][0]["groundingMetadata"]["groundingSupports"]:
        segment = support["segment"]
        start = text.index(segment["text"])
        segment["startIndex"], segment["endIndex"] = start, start + len(segment["text"])
    adapted = from_gemini(answer)
    assert adapted.content == EXPECTED["gemini-google-search.json"]["content"]
    assert any("read as codepoints" in w for w in adapted.warnings)


def test_gemini_rows_name_the_site_behind_the_grounding_redirect() -> None:
    redirect = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/"
    chunks = [{"web": {"uri": redirect + "A", "title": "Wind report", "domain": "ree.es"}},
              {"web": {"uri": redirect + "B", "title": "News.JP"}},
              {"web": {"uri": redirect + "C", "title": "Solar - Wikipedia", "domain": None}}]
    answer = {"candidates": [{"content": {"parts": [{"text": "A. B. C."}]}, "groundingMetadata": {
        "groundingChunks": chunks,
        "groundingSupports": [{"segment": {"startIndex": 0, "endIndex": 8},
                               "groundingChunkIndices": [0, 1, 2]}]}}]}
    rows = {s.sid: s for s in from_gemini(answer).pool}
    assert rows[1].extra["domain"] == "ree.es"  # web.domain
    assert rows[2].extra["domain"] == "news.jp"  # the title, when it is a host name
    assert "domain" not in rows[3].extra


def test_anthropic_document_locations_are_kept_and_validated() -> None:
    adapted = from_anthropic(load("anthropic-documents.json"))
    rows = {s.sid: s for s in adapted.pool}
    assert "location" not in rows[1].extra  # characters count into the API's copy: not kept
    assert rows[2].extra["location"] == "page 3"  # one page: "page", not "pages 3"
    assert "location" not in rows[3].extra  # nor do content blocks
    assert rows[4].url.startswith("https://www.statnett.no/")
    bad = load("anthropic-documents.json")
    bad["content"][3]["citations"][0]["end_page_number"] = 3
    with pytest.raises(AnswerError) as caught:
        from_anthropic(bad)
    assert caught.value.path == "content[3].citations[0].end_page_number"


def test_anthropic_web_results_give_dates_and_snippets() -> None:
    adapted = from_anthropic(load("anthropic-web-search.json"))
    ehpa = adapted.pool.get(1)
    assert ehpa is not None
    assert ehpa.published_at == "February 20, 2025"
    assert ehpa.text == "Sales fell by 21 % across 14 countries."


def test_markers_in_code_stay_and_unknown_markers_are_reported() -> None:
    adapted = from_perplexity(load("perplexity-reasoning.json"))
    assert "`h2[1]`" in adapted.content and "<think>" not in adapted.content
    assert adapted.warnings == (
        "choices[0].message.content: marker [9] names no listed source (3 listed); left as text",
    )


def test_langchain_documents_never_show_a_full_path() -> None:
    adapted = from_langchain(load("langchain-retrieval.json"))
    omie = adapted.pool.get(2)
    assert omie is not None and omie.artifact_path == "omie-2024.pdf" and not omie.physical_path
    assert omie.extra["location"] == "page 5" and "page" not in omie.extra  # page 4 from 0


def test_llamaindex_source_numbers_come_from_the_prefix() -> None:
    answer = load("llamaindex-citation.json")
    answer["source_nodes"].reverse()  # numbering follows "Source N:", not the list order
    adapted = from_llamaindex(answer)
    assert adapted.content == (  # sids follow the list order: Source 3 → 1, 2 and 1 → 2
        "Before college the author wrote short stories 📚[[S:2]] and programmed on an IBM "
        "1401[[S:2]]. He also built a computer from a kit[[S:2]]. Später lernte er Lisp[[S:1]]"
    )
    essay = adapted.pool.get(adapted.sid_map[1])  # Sources 1 and 2 are chunks of one file
    assert adapted.sid_map[2] == adapted.sid_map[1] and adapted.sid_map[3] == 1
    assert essay is not None and essay.text.startswith("I wrote what")  # first in the list
    assert "/srv/" not in json.dumps(adapted.pool.rows())


def test_sdk_objects_are_accepted() -> None:
    class Annotation(pydantic.BaseModel):
        type: str
        start_index: int
        end_index: int
        url: str
        title: str

    class Part(pydantic.BaseModel):
        type: str
        text: str
        annotations: list[Annotation]

    class Message(pydantic.BaseModel):
        type: str
        content: list[Part]

    message = Message(type="message", content=[Part(type="output_text", text="Hi there.",
                      annotations=[Annotation(type="url_citation", start_index=0, end_index=8,
                                              url="https://a.org", title="A")])])
    assert adapt(message).content == "Hi there[[S:1]]."

    @dataclasses.dataclass
    class Response:  # llama_index.core.base.response.schema.Response is a dataclass
        response: str
        source_nodes: list[dict[str, Any]]

    node = {"node": {"text": "x", "metadata": {"url": "https://b.org"}}, "score": 0.5}
    assert adapt(Response("Yes [1]", [node])).content == "Yes[[S:1]]"


@pytest.mark.parametrize(
    ("name", "mutate", "field"),
    [
        ("openai-responses.json",
         lambda a: a["output"][1]["content"][0]["annotations"][2].update(end_index=10_000),
         "output[1].content[0].annotations[2].end_index"),
        ("openai-responses.json",
         lambda a: a["output"][1]["content"][0]["annotations"][0].update(start_index="7"),
         "output[1].content[0].annotations[0].start_index"),
        ("openai-chat.json",
         lambda a: a["choices"][0]["message"]["annotations"][1]["url_citation"].pop("url"),
         "choices[0].message.annotations[1].url_citation.url"),
        ("anthropic-web-search.json",
         lambda a: a["content"][4]["citations"][1].pop("url"), "content[4].citations[1].url"),
        ("perplexity-sonar.json", lambda a: a["citations"].__setitem__(2, 7), "citations[2]"),
        ("gemini-google-search.json",
         lambda a: a["candidates"][0]["groundingMetadata"]["groundingSupports"][0][
             "groundingChunkIndices"].append(9),
         "candidates[0].groundingMetadata.groundingSupports[0].groundingChunkIndices[2]"),
        ("langchain-retrieval.json", lambda a: a["citations"].append(3), "citations[3]"),
        ("langchain-message.json",
         lambda a: a["content"][1]["annotations"][3].update(end_index=-1),
         "content[1].annotations[3].end_index"),
        ("llamaindex-citation.json",
         lambda a: a["source_nodes"][1]["node"].update(metadata="x"),
         "source_nodes[1].node.metadata"),
    ],
)
def test_malformed_answers_name_the_field(name: str, mutate: Any, field: str) -> None:
    answer = load(name)
    mutate(answer)
    with pytest.raises(AnswerError) as caught:
        adapt(answer)
    assert caught.value.path == field
    assert str(caught.value).startswith(field + ": ")


def test_forced_provider_that_does_not_fit_and_unknown_shapes() -> None:
    with pytest.raises(AnswerError, match="not an OpenAI answer"):
        adapt(load("anthropic-web-search.json"), provider="openai")
    with pytest.raises(AnswerError, match="not an answer; accepted: an OpenAI"):
        adapt({"hello": "world"})
    with pytest.raises(AnswerError, match="_citations sidecar"):
        adapt({"summary": "x", "_citations": []})
    with pytest.raises(AnswerError, match="not valid JSON"):
        adapt("{nope")
    assert detect({"summary": "x", "_citations": []}).kind == "sidecar"  # type: ignore[union-attr]
    assert detect("plain text") is None and detect([1, 2]) is None


def test_a_cycle_is_refused_not_followed() -> None:
    loop: dict[str, Any] = {"type": "message"}
    loop["content"] = [loop]
    assert detect(loop) is None
    with pytest.raises(AnswerError, match="nests deeper"):
        adapt(loop)


@at_sizes(2_000, 20_000)
def test_large_answers_are_read_in_one_pass(size: int) -> None:
    """Thousands of citations (annotations, markers, streamed deltas): nothing is quadratic."""
    from citations.adapters.streams import OpenAIEvents
    from tests.fixtures.answers.events import openai_events

    sentences = [f"Claim {i} holds ([s{i % 97}.org](https://s{i % 97}.org/{i})). " for i in
                 range(size)]
    text = "".join(sentences)
    annotations, position = [], 0
    for i, sentence in enumerate(sentences):
        start = position + sentence.index("(")
        annotations.append({"type": "url_citation", "start_index": start,
                            "end_index": position + len(sentence) - 2,
                            "url": f"https://s{i % 97}.org/{i}", "title": f"S{i}"})
        position += len(sentence)
    response = {"object": "response", "output": [{"type": "message", "id": "m", "content": [
        {"type": "output_text", "text": text, "annotations": annotations}]}]}
    adapted = from_openai(response)
    assert adapted.citations == size and adapted.content.count("[[S:") == size
    stream = OpenAIEvents()
    events = openai_events(response, lambda t: [m + 1 for m in range(0, len(t), 37)])
    assert "".join(stream.feed(e) for e in events) + stream.close() == adapted.content
    markers = " ".join(f"Point {i} [{i % 50 + 1}][{(i + 7) % 50 + 1}]." for i in range(size))
    sonar = {"choices": [{"message": {"content": markers}}],
             "citations": [f"https://p{n}.org" for n in range(50)]}
    assert from_perplexity(sonar).citations == size


@pytest.mark.parametrize(
    ("unit", "offsets", "inside"),
    [
        ("codepoints", [0, 1, 2, 3, 4, 5], []),
        ("utf16", [0, 1, 3, 4, 5, 6], [2]),          # 😀 is a surrogate pair: two units
        ("utf8", [0, 1, 5, 6, 8, 11], [2, 3, 4, 7, 9, 10]),  # 😀 is 4 bytes, é 2
    ],
)
def test_text_offsets_in_each_unit(unit: Any, offsets: list[int], inside: list[int]) -> None:
    from citations.adapters.base import TextOffsets

    text = "a😀bé\ud800"  # a lone surrogate counts as one code point, one unit, three bytes
    table = TextOffsets(text)
    assert [table.index(o, unit, "x") for o in offsets] == [0, 1, 2, 3, 4, 5]
    for offset in inside:
        with pytest.raises(AnswerError, match="falls inside the character"):
            table.index(offset, unit, "x")
    with pytest.raises(AnswerError, match="beyond the text"):
        table.index(table.size(unit) + 1, unit, "x")


def test_lone_surrogates_keep_positions() -> None:
    text = "Broken \ud83c text here. Next."
    answer = {"type": "message", "content": [{"type": "output_text", "text": text, "annotations": [
        {"type": "url_citation", "start_index": 0, "end_index": text.index(" Next"),
         "url": "https://a.org", "title": "A"}]}]}
    assert from_openai(answer).content == "Broken \ud83c text here.[[S:1]] Next."


def _openai_cited(text: str, cited: str, url: str = "https://docs.python.org/3/") -> Any:
    start = text.index(cited)
    return {"type": "message", "content": [{"type": "output_text", "text": text, "annotations": [
        {"type": "url_citation", "start_index": start, "end_index": start + len(cited),
         "url": url, "title": "Docs"}]}]}


@pytest.mark.parametrize(("text", "cited", "content"), [
    # a span inside a fenced block: the token gets its own line after the block, which keeps
    # the blank line that ends it
    ("Set it:\n\n```python\nx = 1  # on\n```\n\nNext.", "x = 1",
     "Set it:\n\n```python\nx = 1  # on\n```\n[[S:1]]\n\nNext."),
    # the whole block, fence to fence, ending the text (no line break after the fence)
    ("Set it:\n\n```sh\npip install x\n```", "```sh\npip install x\n```",
     "Set it:\n\n```sh\npip install x\n```\n[[S:1]]"),
    # a block ending the text with its line break: the token's line ends as the block did
    ("Set it:\n\n```sh\npip install x\n```\n", "pip install x",
     "Set it:\n\n```sh\npip install x\n```\n[[S:1]]\n"),
    # inside a list item: the token's line keeps the item's indent
    ("- Set it:\n\n  ```sh\n  pip install x\n  ```\n- Next", "pip install x",
     "- Set it:\n\n  ```sh\n  pip install x\n  ```\n  [[S:1]]\n- Next"),
    # an indented block: its container's indent only (none here)
    ("Set it:\n\n    pip install x\n\nNext.", "pip install x",
     "Set it:\n\n    pip install x\n[[S:1]]\n\nNext."),
    # an indented block of one line in a list item: the item's indent
    ("- Set it:\n\n      pip install x\n\n  Next.", "pip install x",
     "- Set it:\n\n      pip install x\n  [[S:1]]\n\n  Next."),
    # a code span: right after its closing backtick
    ("Call `open(path)` to read it.", "open(path)", "Call `open(path)`[[S:1]] to read it."),
    # a span ending right after code is not moved
    ("Call `open(path)` to read it.", "Call `open(path)`", "Call `open(path)`[[S:1]] to read it."),
])
def test_openai_citation_in_code_goes_after_the_code(text: str, cited: str, content: str) -> None:
    # A token inside code is code: it showed as "[[S:1]]" and its source went uncited.
    adapted = from_openai(_openai_cited(text, cited))
    assert adapted.content == content
    from citations.tokens import citation_groups
    assert [list(group) for group in citation_groups(adapted.content)] == [[1]]


def test_citations_moved_out_of_one_code_block_become_one_token() -> None:
    text = "```\na = 1\nb = 2\n```\n\nNext."
    answer = _openai_cited(text, "a = 1")
    answer["content"][0]["annotations"].append(
        {"type": "url_citation", "start_index": text.index("b = 2"),
         "end_index": text.index("b = 2") + 5, "url": "https://b.org", "title": "B"})
    assert from_openai(answer).content == "```\na = 1\nb = 2\n```\n[[S:1,2]]\n\nNext."


def test_anthropic_block_ending_in_a_code_fence_cites_after_the_fence() -> None:
    # The token after the closing fence on its line kept the fence open: the code block ran to
    # the end of the document and its source went uncited.
    message = {"type": "message", "role": "assistant", "content": [
        {"type": "text", "text": "Run this:\n\n```sh\npip install foo\n```", "citations": [
            {"type": "web_search_result_location", "url": "https://pypi.org/project/foo/",
             "title": "foo", "cited_text": "pip install foo", "encrypted_index": "x"}]},
        {"type": "text", "text": "\n\nThen import it."},
    ]}
    assert from_anthropic(message).content == (
        "Run this:\n\n```sh\npip install foo\n```\n[[S:1]]\n\nThen import it."
    )


FILE_SEARCH_TEXT = (
    "The term ends in March 2025【4:0†contract.pdf】. Late fees apply【4:1†terms.pdf】."
)


def _file_search_answer(*indices: int) -> Any:
    files = ["contract.pdf", "terms.pdf"]
    return {"type": "message", "content": [{"type": "output_text", "text": FILE_SEARCH_TEXT,
        "annotations": [{"type": "file_citation", "file_id": f"file-{k}", "filename": files[k],
                         "index": index} for k, index in enumerate(indices)]}]}


@pytest.mark.parametrize("at", ["start", "end"])
def test_openai_file_search_markers_are_replaced_by_their_citation(at: str) -> None:
    # The model's own 【4:0†source】 marker at a file_citation's index is its rendering of that
    # citation: the token replaces it (the index may point at the marker's start or its end).
    markers = ["【4:0†contract.pdf】", "【4:1†terms.pdf】"]
    indices = [FILE_SEARCH_TEXT.index(m) + (len(m) if at == "end" else 0) for m in markers]
    adapted = from_openai(_file_search_answer(*indices))
    assert adapted.content == "The term ends in March 2025[[S:1]]. Late fees apply[[S:2]]."
    assert adapted.warnings == ()


def test_openai_file_search_marker_without_annotation_is_reported() -> None:
    adapted = from_openai(_file_search_answer(FILE_SEARCH_TEXT.index("【4:0")))
    assert adapted.content == (
        "The term ends in March 2025[[S:1]]. Late fees apply【4:1†terms.pdf】."
    )
    assert adapted.warnings == (
        "content[0].text: 【4:1†terms.pdf】 is a file-search citation marker that no "
        "file_citation annotation places; left as text",
    )


def _sonar(content: str) -> Any:
    return {"id": "p", "model": "sonar-pro", "object": "chat.completion", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": content}}],
        "citations": ["https://www.eia.gov/storage", "https://www.ercot.com/gridinfo"]}


@pytest.mark.parametrize(("content", "expected"), [
    # a marker the model linked to its own source is that citation (shown once, not as "1")
    ("Texas leads [1](https://www.eia.gov/storage?utm_source=perplexity).",
     "Texas leads[[S:1]]."),
    ("Texas leads[1](https://www.eia.gov/storage)[2](https://www.ercot.com/gridinfo).",
     "Texas leads[[S:1,2]]."),
    # a link elsewhere is the model's own link: kept
    ("See [1](https://example.org/other) for more [2].",
     "See [1](https://example.org/other) for more[[S:2]]."),
])
def test_perplexity_linked_markers_cite_their_source(content: str, expected: str) -> None:
    assert from_perplexity(_sonar(content)).content == expected


@pytest.mark.parametrize(("answer", "message"), [
    ({"candidates": [{"finishReason": "SAFETY", "safetyRatings": []}]},
     "candidates[0].content: the candidate has no content (finishReason SAFETY)"),
    ({"candidates": [{"content": {"parts": [], "role": "model"}, "finishReason": "MAX_TOKENS"}]},
     "candidates[0].content.parts: no text part in the candidate (finishReason MAX_TOKENS)"),
    ({"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {}},
     "promptFeedback: the response has no candidate: the prompt was blocked (SAFETY)"),
])
def test_gemini_answer_without_text_says_why(answer: Any, message: str) -> None:
    # A blocked answer was "not an answer" (or, in the CLI, a missing pool): now it is read as
    # Gemini's and the error names the field and the reason the API gave.
    with pytest.raises(AnswerError) as caught:
        adapt(answer)
    assert str(caught.value) == message


@pytest.mark.parametrize(("answer", "message"), [
    ({"object": "response", "output": [{"type": "message", "role": "assistant", "content": [
        {"type": "refusal", "refusal": "I can't help with that."}]}]},
     "output[0].content[0]: the model refused: \"I can't help with that.\""),
    ({"object": "chat.completion", "choices": [{"index": 0, "message": {
        "role": "assistant", "content": None, "refusal": "I can't help with that."}}]},
     "choices[0].message.refusal: the model refused: \"I can't help with that.\""),
    ({"object": "chat.completion", "choices": [{"index": 0, "message": {
        "role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}}]},
     "choices[0].message.content: no text: the message calls tools (answer them and render "
     "the final assistant message)"),
])
def test_openai_answer_without_text_says_why(answer: Any, message: str) -> None:
    with pytest.raises(AnswerError) as caught:
        from_openai(answer)
    assert str(caught.value) == message


def test_an_empty_answer_is_said_not_rendered_silently() -> None:
    empty = {"object": "response", "output": [{"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": "\n", "annotations": []}]}]}
    sonar = {"choices": [{"message": {"role": "assistant", "content": ""}}], "citations": []}
    for adapted in (from_openai(empty), from_perplexity(sonar)):
        assert adapted.warnings == ("the answer holds no text: the document is empty",)


def test_a_conversation_is_read_as_its_last_assistant_message() -> None:
    # The messages list an agent sends back to the API (multi-turn): its last assistant
    # message is the answer; earlier turns are named in a warning, errors name the message.
    reply = load("anthropic-web-search.json")
    conversation = [
        {"role": "user", "content": "Heat pumps?"},
        {"role": "assistant", "content": [{"type": "text", "text": "An earlier answer."}]},
        {"role": "user", "content": "And in 2024?"},
        {"role": "assistant", "content": reply["content"]},
    ]
    found = detect(conversation)
    assert found is not None and found.kind == "anthropic"
    assert found.shape.endswith("the last assistant message [3] of a conversation")
    adapted = adapt(conversation)
    assert adapted.content == from_anthropic(reply).content
    assert adapted.warnings[0] == (
        "[3]: the conversation's last assistant message is the document; 1 earlier assistant "
        "message left out"
    )
    chat = [{"role": "user", "content": "Paris?"}, {"role": "assistant", "content": "Paris.",
             "annotations": [{"type": "url_citation", "url_citation": {
                 "start_index": 0, "end_index": 99, "url": "https://a.org", "title": "A"}}]}]
    with pytest.raises(AnswerError) as caught:
        adapt(chat, provider="openai")
    assert str(caught.value).startswith("[1].annotations[0].url_citation.end_index: 99 is beyond")


def test_langchain_gemini_message_reads_its_grounding_metadata() -> None:
    # ChatGoogleGenerativeAI leaves Gemini's grounding (snake_case, UTF-8 byte offsets) in
    # response_metadata: the message read 0 citations and 0 sources, without a word.
    text = "Wind gave 23 % of España's power in 2024 🌬️. Solar grew too."
    cited = "Wind gave 23 % of España's power in 2024 🌬️."
    message = {"type": "ai", "content": text, "response_metadata": {
        "finish_reason": "STOP", "model_name": "gemini-2.5-flash", "grounding_metadata": {
            "web_search_queries": ["spain wind 2024"],
            "grounding_chunks": [{"web": {"uri": "https://vertexaisearch.cloud.google.com/"
                                          "grounding-api-redirect/AAA", "title": "ree.es"}}],
            "grounding_supports": [{"segment": {"end_index": len(cited.encode()), "text": cited},
                                    "grounding_chunk_indices": [0]}]}}}
    adapted = adapt(message)
    assert adapted.provider == "langchain" and adapted.warnings == ()
    assert adapted.content == f"{cited}[[S:1]] Solar grew too."
    source = adapted.pool.get(1)
    assert source is not None and source.extra["domain"] == "ree.es"


def test_gemini_code_execution_parts_are_code_blocks_and_other_parts_are_named() -> None:
    # The code the model ran and its output were dropped without a word (the text around them
    # says "Let me compute it:"); an image part is left out with a warning.
    cited = "The sum is 10, as the prime list confirms."
    answer = {"candidates": [{"content": {"role": "model", "parts": [
        {"text": "Planning the sum.", "thought": True},
        {"text": "Let me compute it:"},
        {"executableCode": {"language": "PYTHON", "code": "print(sum([2, 3, 5]))\n"}},
        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "10\n"}},
        {"text": cited},
        {"inlineData": {"mimeType": "image/png", "data": "iVBOR"}}]},
        "finishReason": "STOP", "groundingMetadata": {
            "groundingChunks": [{"web": {"uri": "https://en.wikipedia.org/wiki/Prime_number",
                                         "title": "wikipedia.org"}}],
            "groundingSupports": [{"segment": {"partIndex": 4, "endIndex": len(cited),
                                               "text": cited}, "groundingChunkIndices": [0]}]}}]}
    adapted = from_gemini(answer)
    assert adapted.content == (
        "Let me compute it:\n\n```python\nprint(sum([2, 3, 5]))\n```\n\n```text\n10\n```\n\n"
        f"{cited}[[S:1]]"
    )
    assert adapted.warnings == (
        "candidates[0].content.parts[5]: inlineData is not answer text; left out",
    )


TABLE_MESSAGE = {"type": "message", "role": "assistant", "content": [
    {"type": "text", "text": "| Country | Wind share |\n|---|---|\n"},
    {"type": "text", "text": "| Spain | 23 % |", "citations": [
        {"type": "web_search_result_location", "url": "https://www.ree.es/en", "title": "REE",
         "cited_text": "23 %", "encrypted_index": "a"}]},
    {"type": "text", "text": "\n| Denmark | 58 % |  ", "citations": [
        {"type": "web_search_result_location", "url": "https://ens.dk/en", "title": "DEA",
         "cited_text": "58 %", "encrypted_index": "b"}]},
    {"type": "text", "text": "\n\nBoth grew."},
]}


def test_a_citation_ending_a_table_row_goes_inside_its_last_cell() -> None:
    # After the row's closing pipe a token is an extra cell, which the table drops: the
    # citation vanished from every format (0 sources cited) without a warning.
    assert from_anthropic(TABLE_MESSAGE).content == (
        "| Country | Wind share |\n|---|---|\n| Spain | 23 %[[S:1]] |\n"
        "| Denmark | 58 %[[S:2]] |  \n\nBoth grew."
    )
    text = "| Year | GW |\n|:--|--:|\n| 2024 | 450 |\n\nNext."
    row = "| 2024 | 450 |"
    answer = _openai_cited(text, row)
    assert from_openai(answer).content == text.replace(row, "| 2024 | 450[[S:1]] |")
    delimiter = _openai_cited(text, "|:--|--:|")  # never inside a delimiter row
    assert from_openai(delimiter).content == text.replace("--:|\n", "--:|[[S:1]]\n")
    escaped = _openai_cited("The pipe \\| ends here.", "The pipe \\|")  # an escaped pipe is text
    assert from_openai(escaped).content == "The pipe \\|[[S:1]] ends here."


def test_sources_no_marker_or_support_places_are_cited_at_the_end_with_a_warning() -> None:
    # Grounding chunks without supports, or Sonar citations without [n] markers, were listed
    # nowhere: the answer rendered uncited and its sources vanished without a word.
    sonar = _sonar("Texas leads US battery storage, California follows.")
    adapted = from_perplexity(sonar)
    assert adapted.content == "Texas leads US battery storage, California follows.[[S:1,2]]"
    assert adapted.warnings == ("choices[0].message.content: no [n] marker names the 2 listed "
                                "sources; cited at the end of the answer",)
    gemini = {"candidates": [{"content": {"role": "model", "parts": [{"text": "Wind grew.\n"}]},
              "finishReason": "STOP", "groundingMetadata": {"groundingChunks": [
                  {"web": {"uri": "https://a.org/x", "title": "a.org"}}]}}]}
    adapted = from_gemini(gemini)
    assert adapted.content == "Wind grew.[[S:1]]\n"
    assert adapted.warnings == ("candidates[0].groundingMetadata: no groundingSupports place the "
                                "1 grounding chunk; cited at the end of the answer",)


def test_a_marker_after_a_table_row_goes_inside_its_last_cell() -> None:
    # After the row's closing pipe the token is an extra cell, which the table drops.
    content = "| State | GW |\n|---|---|\n| Texas | 4.3 | [1]\n| California | 5.1 |[2]\n\nDone."
    assert from_perplexity(_sonar(content)).content == (
        "| State | GW |\n|---|---|\n| Texas | 4.3[[S:1]] |\n| California | 5.1[[S:2]] |\n\nDone."
    )


def test_settle_steps_over_one_underline_only() -> None:
    """A heading has one underline: a run of underline-like lines is not walked up (20,000
    of them, once per citation ending there, would be quadratic)."""
    from citations.adapters.base import settle

    assert settle("Title\n=====\n", 0, 12) == len("Title")
    text = "Title\n" + "-\n" * 20_000  # the first "-" underlines, the rest are empty items
    assert settle(text, 0, len(text)) == len(text) - len("\n-\n")


@at_sizes(5_000, 50_000)
def test_a_long_run_of_linked_markers_is_read_in_one_pass(size: int) -> None:
    # With a lookahead after the run, each failure was retried from every marker: 50,000
    # linked markers before a "[" took minutes.
    content = "Claim" + "[1](https://www.eia.gov/storage)" * size + "[x"
    adapted = from_perplexity(_sonar(content))
    assert adapted.content == "Claim[[S:1]][x"
