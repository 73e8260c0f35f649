"""Where in a source its citations point: every cited page kept, merged, from each provider."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from citations.adapters import (
    AnswerError,
    from_anthropic,
    from_gemini,
    from_langchain,
    from_llamaindex,
)
from citations.locations import MOST_ITEMS, PageSet, cited_pages

LOCATIONS = Path(__file__).resolve().parent.parent / "fixtures" / "answers" / "locations"


def load(name: str) -> Any:
    return json.loads((LOCATIONS / name).read_text("utf-8"))


@pytest.mark.parametrize(("added", "shown"), [
    ([(3, 3)], "page 3"),
    ([(3, 4)], "pages 3–4"),
    ([(7, 7), (3, 4)], "pages 7, 3–4"),  # the order first cited
    ([(3, 4), (7, 7), (4, 4)], "pages 3–4, 7"),  # inside a range: nothing new
    ([(3, 4), (7, 7), (5, 6)], "pages 3–7"),  # 5–6 touches 3–4 and 7: one range
    ([(3, 4), (7, 7), (5, 5)], "pages 3–5, 7"),  # 6 is not cited
    ([(9, 9), (3, 4), (5, 6)], "pages 9, 3–6"),
])
def test_pages_merge_where_they_touch_in_the_order_first_cited(
    added: list[tuple[int, int]], shown: str
) -> None:
    pages = PageSet()
    for first, last in added:
        pages.add(first, last)
    assert pages.describe() == shown
    assert cited_pages(shown) == shown.split(" ", 1)[1]


def test_a_source_keeps_at_most_the_most_items_and_says_more_were_cited() -> None:
    """Each page added is compared with those kept: thousands of scattered pages stay a short,
    linear list ending in an ellipsis, and pages touching a kept range still join it."""
    pages = PageSet()
    for page in range(1, 40_001, 2):
        pages.add(page, page)
    pages.add(2, 2)
    pages.add_page("iv")
    shown = pages.describe()
    assert shown.startswith("pages 1–3, 5, 7, ") and shown.endswith(", \u2026")
    assert len(pages.items) == MOST_ITEMS
    other = PageSet()
    other.merge(pages)
    assert other.describe() == shown


def test_page_labels_are_kept_as_written() -> None:
    pages = PageSet()
    for value in ("iv", 2, "3", "iv", True, 0, "", "x" * 41):
        pages.add_page(value)
    assert pages.describe() == "pages iv, 2–3"
    assert cited_pages("characters 0–9") == "" and cited_pages("chapter 2") == ""


def test_anthropic_document_cited_at_several_pages_keeps_them_all() -> None:
    adapted = from_anthropic(load("anthropic-pdf-pages.json"))
    report, minutes = adapted.sources
    assert report.title == "Annual report 2024"
    assert report.extra["location"] == "pages 3–4, 7"  # cited at 3–4, 7, 4 and 3
    assert report.text == "Capacity rose 12 %."  # the first cited text stays the row's text
    assert "location" not in minutes.extra  # characters: the row's text is the cited text
    assert adapted.content.endswith(
        "12 %[[S:1]], outages fell[[S:1]] and prices held.[[S:1,2]] Storage doubled.[[S:1]]"
    )


def test_anthropic_page_range_is_validated() -> None:
    answer = load("anthropic-pdf-pages.json")
    answer["content"][2]["citations"][0]["start_page_number"] = 0
    with pytest.raises(AnswerError) as caught:
        from_anthropic(answer)
    assert caught.value.path == "content[2].citations[0].start_page_number"
    assert "below 1" in str(caught.value)


def _rag(uri: str, first: int, last: int) -> dict[str, Any]:
    return {"retrievedContext": {"uri": uri, "title": "Werksbericht", "text": "…",
                                 "ragChunk": {"text": "…", "pageSpan": {"firstPage": first,
                                                                        "lastPage": last}}}}


def test_gemini_rag_chunks_of_one_file_merge_their_page_spans() -> None:
    answer = {"candidates": [{"content": {"parts": [{"text": "A. B. C."}]}, "groundingMetadata": {
        "groundingChunks": [_rag("gs://d/werk.pdf", 12, 12), _rag("gs://d/werk.pdf", 3, 4),
                            _rag("gs://d/other.pdf", 5, 5),
                            {"web": {"uri": "https://ree.es/a", "title": "ree.es"}}],
        "groundingSupports": [{"segment": {"startIndex": 0, "endIndex": 8},
                               "groundingChunkIndices": [0, 1, 2, 3]}]}}]}
    rows = {s.artifact_path or s.url: s for s in from_gemini(answer).sources}
    assert rows["gs://d/werk.pdf"].extra["location"] == "pages 12, 3–4"
    assert rows["gs://d/other.pdf"].extra["location"] == "page 5"
    assert "location" not in rows["https://ree.es/a"].extra
    bad = json.loads(json.dumps(answer))
    bad["candidates"][0]["groundingMetadata"]["groundingChunks"][1]["retrievedContext"][
        "ragChunk"]["pageSpan"]["lastPage"] = 2
    with pytest.raises(AnswerError) as caught:
        from_gemini(bad)
    assert caught.value.path.endswith("groundingChunks[1].retrievedContext.ragChunk.pageSpan"
                                      ".lastPage")


def test_llamaindex_page_label_is_the_location() -> None:
    answer = {"response": "Claim [1] and [2].", "source_nodes": [
        {"node": {"text": "Source 1:\nA.", "metadata": {"file_name": "a.pdf", "page_label": "iv"},
                  "start_char_idx": 10, "end_char_idx": 40}, "score": 0.9},
        {"node": {"text": "Source 2:\nB.", "metadata": {"file_name": "b.pdf", "page_label": "12"}},
         "score": 0.8},
    ]}
    first, second = from_llamaindex(answer).sources
    assert first.extra["location"] == "page iv" and "page" not in first.extra
    assert second.extra["location"] == "page 12"


def test_langchain_page_counts_from_zero_and_page_label_wins() -> None:
    def doc(meta: dict[str, Any]) -> dict[str, Any]:
        return {"type": "Document", "page_content": "x", "metadata": meta}

    answer = {"answer": "Claim.", "context": [
        doc({"source": "r.pdf", "page": 0}),
        doc({"source": "s.pdf", "page": 2, "page_label": "ii"}),
        doc({"source": "t.pdf"}),
    ]}
    rows = from_langchain(answer).sources
    assert [r.extra.get("location") for r in rows] == ["page 1", "page ii", None]
