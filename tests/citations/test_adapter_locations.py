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
from citations.pool import SourcePool

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


def test_langchain_documents_of_one_file_are_one_source_with_all_cited_pages() -> None:
    """PyPDFLoader gives a Document per page: the pages of one file are one Sources entry
    (numbered where first retrieved), chunks of one URL another; a file of the same name in
    another folder stays apart, and a page no citation names is not among the pages."""
    adapted = from_langchain(load("langchain-pdf-chunks.json"))
    report, balance, draft = adapted.sources
    assert (report.title, report.artifact_path) == ("Annual report 2024", "annual-2024.pdf")
    assert report.extra["location"] == "pages 2, 5"  # page 10 (context[3]) is not cited
    assert report.content == "Installed capacity rose 12 % over the year."
    assert balance.url.endswith("/balance-2024") and "location" not in balance.extra
    assert balance.content == "The average wholesale price was 63 €/MWh."  # the first chunk's
    assert (draft.artifact_path, draft.extra["location"]) == ("annual-2024.pdf", "page 1")
    assert adapted.sid_map == {1: 1, 2: 2, 3: 1, 4: 1, 5: 2, 6: 3}
    assert adapted.content.endswith("63 €/MWh.[[S:1-3]]")
    assert "/srv/" not in json.dumps(adapted.pool.rows())


def test_langchain_source_text_is_its_first_cited_document() -> None:
    answer = load("langchain-pdf-chunks.json")
    answer["citations"] = [{"source_id": 2, "quote": "Outages fell"}, 5, 0]
    report, balance, _ = from_langchain(answer).sources
    assert report.content == "Outages fell by a third."  # cited before context[0]
    assert report.extra["location"] == "pages 5, 2"  # in the order first cited
    assert "location" not in balance.extra  # retrieved, never cited: in the pool, no pages


def test_llamaindex_nodes_of_one_file_are_one_source_with_all_cited_pages() -> None:
    adapted = from_llamaindex(load("llamaindex-pdf-chunks.json"))
    assert adapted.content == (
        "Capacity rose 12 %[[S:1]] and outages fell[[S:1]]. Prices averaged 63 €/MWh[[S:2]]."
    )
    report, balance = adapted.sources
    assert report.extra["location"] == "pages 3–4, 7"  # cited at 3, 7, 4; 12 never cited
    assert report.text == "Installed capacity rose 12 % over the year."  # [2] is cited first
    assert report.extra["node_id"] == "c-2" and report.relevance == 0.85
    assert "location" not in balance.extra
    assert adapted.sid_map == {1: 1, 2: 1, 3: 1, 4: 2, 5: 1}


def test_llamaindex_file_identity_is_path_and_name() -> None:
    """Nodes naming another file — by path or by name — are another source."""
    answer = load("llamaindex-pdf-chunks.json")
    answer["source_nodes"][2]["node"]["metadata"]["file_path"] = "/srv/other/annual-2024.pdf"
    answer["source_nodes"][0]["node"]["metadata"]["file_name"] = "annual-2024-v2.pdf"
    adapted = from_llamaindex(answer)
    assert [(s.artifact_path, s.extra.get("location")) for s in adapted.sources] == [
        ("annual-2024-v2.pdf", "page 7"), ("annual-2024.pdf", "page 3"),
        ("annual-2024.pdf", "page 4"), ("", None),
    ]


def test_gemini_rag_chunks_of_one_file_with_other_texts_are_one_source() -> None:
    def rag(text: str, page: int) -> dict[str, Any]:
        return {"retrievedContext": {"uri": "gs://d/werk.pdf", "title": "Werksbericht",
                                     "text": text, "ragChunk": {"text": text, "pageSpan": {
                                         "firstPage": page, "lastPage": page}}}}

    answer = {"candidates": [{"content": {"parts": [{"text": "A. B."}]}, "groundingMetadata": {
        "groundingChunks": [rag("Erster Teil.", 4), rag("Zweiter Teil.", 9)],
        "groundingSupports": [{"segment": {"startIndex": 0, "endIndex": 2},
                               "groundingChunkIndices": [0, 1]}]}}]}
    adapted = from_gemini(answer)
    (werk,) = adapted.sources
    assert werk.extra["location"] == "pages 4, 9" and werk.text == "Erster Teil."
    assert adapted.content == "A.[[S:1]] B."


def _pdf_doc(page: int) -> dict[str, Any]:
    return {"type": "Document", "page_content": f"Text of page {page + 1}.",
            "metadata": {"source": "https://example.org/handbook.pdf", "page": page}}


HANDBOOK = {"answer": "Claim.", "context": [_pdf_doc(4), _pdf_doc(8)]}


@pytest.mark.parametrize(("held", "shown"), [
    ({}, "pages 5, 9"),  # no location yet: the answer's pages
    ({"location": "pages 1–2"}, "pages 1–2, 5, 9"),  # pages: the answer's are added
    ({"location": "page 4"}, "pages 4–5, 9"),  # touching pages join one range
    ({"location": "pages 9, 5"}, "pages 9, 5"),  # nothing new
])
def test_a_pool_row_with_pages_gets_the_answers_pages(held: dict[str, Any], shown: str) -> None:
    pool = [{"sid": 1, "title": "Note", "url": "https://example.org/note"},
            {"sid": 7, "title": "Handbook", "url": "https://example.org/handbook.pdf", **held}]
    adapted = from_langchain(HANDBOOK, pool=pool)
    handbook = adapted.pool.get(7)
    assert handbook is not None and handbook.title == "Handbook"  # the pool's row, kept
    assert handbook.extra["location"] == shown and adapted.sid_map == {1: 7, 2: 7}
    assert adapted.pool.get(1) == SourcePool.from_rows(pool).get(1)
    assert adapted.warnings == ()


def test_a_pool_location_in_its_own_words_stays_as_written() -> None:
    """"chapter 2" is no list of pages: joining pages to it would make a location no style
    can read as pages, so it stays, and a warning says which pages the answer cited."""
    pool = [{"sid": 3, "title": "Handbook", "url": "https://example.org/handbook.pdf",
             "location": "chapter 2"}]
    adapted = from_langchain(HANDBOOK, pool=pool)
    assert adapted.pool.get(3).extra["location"] == "chapter 2"  # type: ignore[union-attr]
    assert adapted.warnings == (
        "sources_pool: sid 3 keeps its location 'chapter 2' as the pool wrote it; the answer "
        "cites it at pages 5, 9",
    )


def test_a_second_answer_adds_its_pages_to_the_first_answers_row() -> None:
    """A conversation's answers merged one after another: the file cited by both keeps one
    sid, its location gathering the pages of both."""
    first = from_langchain({"answer": "A.", "context": [_pdf_doc(4)]})
    second = from_langchain({"answer": "B.", "context": [_pdf_doc(1)]}, pool=first.pool)
    (handbook,) = second.pool
    assert handbook.extra["location"] == "pages 5, 2" and second.sid_map == {1: 1}
    assert first.pool.get(1).extra["location"] == "page 5"  # type: ignore[union-attr]


@pytest.mark.parametrize(("location", "pages"), [
    ("pages 3–4, 7", "pages 3–4, 7"),
    ("page iv", "page iv"),
    ("pages 3-4,  7, \u2026", "pages 3–4, 7, \u2026"),
    ("pages 12-3", "page 12-3"),  # no range backwards: a label
    ("chapter 2", None), ("", None), ("page 0", None), ("pp. 5", None),
])
def test_a_location_is_read_back_as_pages(location: str, pages: str | None) -> None:
    found = PageSet.parse(location)
    assert (found.describe() if found is not None else None) == pages
