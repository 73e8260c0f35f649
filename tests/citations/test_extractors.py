"""Tool outputs → canonical rows, the registry, and sub-agent pool aggregation."""

from __future__ import annotations

import json

import pytest

from citations.errors import ExtractorError
from citations.extractors import (
    aggregate_pools,
    extract_sources,
    find_extractor,
    register_extractor,
)
from citations.pool import SourcePool


def test_web_search_results() -> None:
    output = {"results": [
        {"title": "IEA <b>WEO</b>", "link": "https://www.iea.org/weo",
         "snippet": "Solar &amp; wind"},
        {"title": "No link", "snippet": "dropped"},
        {"title": "Lazard", "url": "https://lazard.com/lcoe", "description": "LCOE", "score": 0.7},
    ]}
    rows = extract_sources("web_search", output)
    assert rows == [
        {"sid": 1, "title": "IEA WEO", "url": "https://www.iea.org/weo", "text": "Solar & wind",
         "source_type": "web", "tool": "web_search"},
        {"sid": 2, "title": "Lazard", "url": "https://lazard.com/lcoe", "text": "LCOE",
         "relevance": 0.7, "source_type": "web", "tool": "web_search"},
    ]
    assert SourcePool.from_rows(rows).get(1).url == "https://www.iea.org/weo"  # type: ignore[union-attr]


def test_search_output_as_json_text_and_brave_shape() -> None:
    result = {"title": "T", "url": "https://t.org", "page_age": "2024"}
    text = json.dumps({"web": {"results": [result]}})
    (row,) = extract_sources("brave_web_search", text)
    assert (row["url"], row["published_at"]) == ("https://t.org", "2024")


def test_web_fetch_dict_and_bare_text() -> None:
    (row,) = extract_sources("web_fetch", {"url": "https://a.org/p", "markdown": "# Head\nBody"})
    assert row["content"] == "# Head\nBody" and "text" not in row and row["url"] == "https://a.org/p"
    page = "<html><head><title>My Page</title></head><body>x</body></html>"
    (bare,) = extract_sources("scrape_page", page, {"url": "https://b.org"})
    assert (bare["url"], bare["title"], bare["content"]) == ("https://b.org", "My Page", "x")
    assert extract_sources("fetch_url", "no url known") == []


def test_rag_results() -> None:
    output = {"matches": [
        {"text": "chunk one", "metadata": {"source": "docs/report.pdf", "page": 3}, "score": 0.9},
        {"page_content": "lines", "file_path": "src/app.py", "lines": [10, 24]},
        {"text": "orphan chunk"},
    ]}
    first, second = extract_sources("rag_query", output)
    assert first["physical_path"] == "docs/report.pdf" and first["title"] == "report.pdf, p. 3"
    assert (first["page"], first["mime"], first["relevance"]) == (3, "application/pdf", 0.9)
    assert (second["line_start"], second["line_end"], second["text"]) == (10, 24, "lines")
    assert second["source_type"] == "file" and second["artifact_path"] == "src/app.py"
    pool = SourcePool.from_rows([first, second])
    assert pool.get(1).extra["page"] == 3  # type: ignore[union-attr]


def test_wikipedia_search_builds_urls() -> None:
    output = {"query": {"search": [
        {"title": "Solar power", "snippet": 'The <span class="searchmatch">sun</span>',
         "timestamp": "2024-05-01T00:00:00Z"},
    ]}}
    (row,) = extract_sources("wikipedia_search", output, {"lang": "de"})
    assert row["url"] == "https://de.wikipedia.org/wiki/Solar_power"
    assert row["text"] == "The sun" and row["published_at"] == "2024-05-01T00:00:00Z"


def test_http_response() -> None:
    ok = {"url": "https://api.x.org/v1", "status": 200, "body": {"a": 1},
          "headers": {"Content-Type": "application/json; charset=utf-8"}}
    (row,) = extract_sources("http_get", ok)
    assert (row["mime"], row["content"], row["status"]) == ("application/json", '{"a": 1}', 200)
    assert extract_sources("http_get", {**ok, "status": 404}) == []


def test_generic_mcp_result() -> None:
    result = {
        "content": [
            {"type": "text", "text": "Here is what I found."},
            {"type": "resource_link", "uri": "https://docs.org/a", "name": "Doc A",
             "mimeType": "text/html", "description": "about A"},
            {"type": "resource", "resource": {"uri": "file:///data/r.png", "mimeType": "image/png",
                                              "blob": "iVBORw0KGgo="}},
            {"type": "text", "text": json.dumps([{"title": "J", "url": "https://j.org"}])},
        ],
        "structuredContent": {"items": [{"name": "S", "link": "https://s.org"}]},
        "isError": False,
    }
    rows = extract_sources("mcp__docs__lookup", result)
    assert [r.get("url") or r.get("physical_path") for r in rows] == [
        "https://docs.org/a", "file:///data/r.png", "https://j.org", "https://s.org"]
    assert rows[0]["text"] == "about A" and rows[1]["size_bytes"] == 8
    assert rows[1]["artifact_path"] == "/data/r.png"


def test_mcp_wrapped_search_uses_specific_extractor() -> None:
    payload = {"results": [{"title": "T", "url": "https://t.org", "snippet": "s"}]}
    wrapped = {"content": [{"type": "text", "text": json.dumps(payload)}]}
    (row,) = extract_sources("mcp__brave__web_search", wrapped)
    assert (row["source_type"], row["text"]) == ("web", "s")


def test_pydantic_call_tool_result() -> None:
    from mcp.types import CallToolResult, ResourceLink

    result = CallToolResult(content=[ResourceLink(type="resource_link", uri="https://p.org/x",
                                                  name="P")])
    (row,) = extract_sources("some_mcp_tool", result)
    assert row["url"] == "https://p.org/x" and row["title"] == "P"


def test_unknown_tool_and_errors() -> None:
    assert find_extractor("calculator") is None
    assert extract_sources("calculator", {"value": 3}) == []
    with pytest.raises(ExtractorError, match=r"web_search.*looks like JSON"):
        extract_sources("web_search", "[{broken")


def test_register_extractor_overrides() -> None:
    @register_extractor("acme_search_*")
    def acme(data: object, args: object) -> list[dict[str, object]]:
        return [{"title": "acme", "url": f"https://acme.org/{data}"}]

    assert find_extractor("ACME_search_v2") is acme
    assert extract_sources("acme_search_v2", "q")[0]["url"] == "https://acme.org/q"
    with pytest.raises(ValueError, match="pattern"):
        register_extractor()


def test_aggregate_subagent_pools(sample_pool: list[dict[str, object]]) -> None:
    child_a = [{"sid": 1, "title": "dup", "url": "https://www.iea.org/reports/weo-2024?utm_source=a"},
               {"sid": 2, "title": "fresh", "url": "https://fresh.org"}]
    child_b = [{"sid": 1, "title": "fresh again", "url": "https://FRESH.org/"},
               {"sid": 7, "title": "other", "url": "https://other.org"}]
    pool, maps = aggregate_pools(sample_pool, [child_a, child_b])
    assert maps == [{1: 1, 2: 6}, {1: 6, 7: 7}]
    assert pool.sids == (1, 2, 3, 4, 5, 6, 7)
    assert pool.get(7).title == "other"  # type: ignore[union-attr]


# ---------------------------------------------------------------- shapes found by a new user


def test_mcp_resources_survive_a_tool_name_that_a_specific_extractor_claims() -> None:
    result = {
        "content": [
            {"type": "text", "text": "Fetched 2 documents."},
            {"type": "resource", "resource": {"uri": "https://docs.example.org/guide",
                                              "mimeType": "text/markdown", "text": "# Guide"}},
            {"type": "resource_link", "uri": "file:///repo/src/app.py", "name": "app.py",
             "mimeType": "text/x-python"},
        ]
    }
    for tool in ("mcp__fetch__fetch", "mcp__github__search_code", "mcp__web__scrape"):
        rows = extract_sources(tool, result)
        assert [r.get("url") or r.get("artifact_path") for r in rows] == [
            "https://docs.example.org/guide", "/repo/src/app.py"
        ], tool


def test_firecrawl_scrape_results_become_rows() -> None:
    output = {
        "success": True,
        "data": {
            "markdown": "# Solar\nCapacity grew.",
            "metadata": {"title": "Solar outlook", "sourceURL": "https://example.org/solar",
                         "statusCode": 200},
        },
    }
    (row,) = extract_sources("firecrawl_scrape", output)
    assert row["url"] == "https://example.org/solar"
    assert row["title"] == "Solar outlook"
    assert row["content"] == "# Solar\nCapacity grew."


def test_rag_chunks_with_a_nested_document_become_file_rows() -> None:
    output = {"chunks": [
        {"text": "Battery costs fell.", "score": 0.8,
         "document": {"title": "Storage memo", "path": "/kb/memos/storage.pdf"}},
    ]}
    (row,) = extract_sources("rag_query", output)
    assert row["physical_path"] == "/kb/memos/storage.pdf"
    assert row["title"] == "Storage memo"
    assert row["text"] == "Battery costs fell."


def test_a_rag_chunk_page_that_is_not_text_or_a_number_is_left_out() -> None:
    # A row's page is a bibliographic field the pool checks: the extractor passes on only a
    # page it may hold, so the rows always load.
    output = {"chunks": [{"text": "A.", "path": "/kb/a.pdf", "page": 4},
                         {"text": "B.", "path": "/kb/b.pdf", "page": {"from": 2, "to": 3}}]}
    first, second = extract_sources("rag_query", output)
    assert (first["page"], first["title"]) == (4, "a.pdf, p. 4")
    assert "page" not in second and second["title"] == "b.pdf"
    assert len(SourcePool.from_rows([first, second])) == 2


def test_a_fetched_html_page_stores_its_text_not_its_tags() -> None:
    page = (
        "<!DOCTYPE html><html><head><title>Report</title><style>p{color:red}</style>"
        "<script>track()</script></head><body><h1>Findings</h1><p>Solar &amp; wind grew."
        "</p><div>Second <b>line</b></div></body></html>"
    )
    (row,) = extract_sources("web_fetch", {"url": "https://e.org/r", "html": page})
    assert row["content"] == "Findings\nSolar & wind grew.\nSecond line"
    assert row["title"] == "Report"
    (http,) = extract_sources("http_request", {"url": "https://e.org/r", "status": 200,
                                               "body": page, "content_type": "text/html"})
    assert "<" not in http["content"] and "track()" not in http["content"]
