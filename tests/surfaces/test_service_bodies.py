"""Request bodies the service refuses with 400/422 naming the field, never a 500 (issue 13).

Numbers Python or JSON cannot carry, nesting that would make a parser recurse, lone
surrogates, and pool sizes beyond the renderer's limit are refused while parsing, in the
parser thread, with bounded work and memory.
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from renderers.options import Limits
from renderers.service.app import checked_job, checked_request, create_app
from renderers.service.body import MAX_DEPTH
from renderers.service.requests import REQUEST_SCHEMA, RequestProblem
from tests.helpers import pool_rows_validated

JSON = {"Content-Type": "application/json"}
POOL = [{"sid": 1, "title": "Lazard LCOE+", "url": "https://www.lazard.com/"}]


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app(workers=1, warmup=False)) as test_client:
        yield test_client


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def body(**fields: str) -> bytes:
    """A body whose fields are given as raw JSON text (so any literal can be written)."""
    base = {"content": '"Claim.[[S:1]]"', "format": '"md"', **fields}
    return ("{" + ", ".join(f'"{k}": {v}' for k, v in base.items()) + "}").encode("utf-8")


BIG = "9" * 5000


@pytest.mark.parametrize(
    ("raw", "field", "words"),
    [
        (body(format='"png"', dpi=BIG), "dpi", "5000 digits"),
        (body(sources_pool=f'[{{"sid": {BIG}, "title": "t"}}]'), "sources_pool.0.sid",
         "5000 digits"),
        (body(sources_pool=f'[{{"sid": 1, "rank": -{BIG}}}]'), "sources_pool.0.rank",
         "5000 digits"),
        (body(content=nested(5000)), "content", f"deeper than {MAX_DEPTH}"),
        (body(sources_pool=nested(5000)), "sources_pool", f"deeper than {MAX_DEPTH}"),
        (body(sources_pool=f'[{{"sid": 1, "extra": {nested(900)}}}]'), "sources_pool.0.extra",
         f"deeper than {MAX_DEPTH}"),
        (b"{" * 5000, "body", f"deeper than {MAX_DEPTH}"),
        (body(title='"\\ud800"'), "title", "lone surrogate (U+D800)"),
        (body(author='"a\\udfffb"'), "author", "lone surrogate (U+DFFF)"),
        (body(sources_heading='"\\ud83d"'), "sources_heading", "lone surrogate (U+D83D)"),
        (body(content='"x\\ud800[[S:1]]"'), "content", "lone surrogate"),
        (body(sources_pool='[{"sid": 1, "title": "\\udc00"}]'), "sources_pool.0.title",
         "lone surrogate"),
        (body(sources_pool='[{"sid": 1, "k\\ud800": 1}]'), "sources_pool.0.k\\ud800",
         "its name holds a lone surrogate"),
        (body(format='"png"', dpi="NaN"), "dpi", "NaN is not a JSON number"),
        (body(format='"png"', dpi="-Infinity"), "dpi", "-Infinity is not a JSON number"),
        (body(format='"png"', dpi="1e400"), "dpi", "overflows"),
        (b'{"content": "caf\xe9", "format": "md"}', "body", "not UTF-8 at byte 16"),
    ],
    ids=["int-option", "int-sid", "int-unknown-field", "deep-content", "deep-pool",
         "deep-unknown-field", "deep-body", "surrogate-title", "surrogate-author",
         "surrogate-heading", "surrogate-content", "surrogate-pool-title", "surrogate-key",
         "nan", "minus-infinity", "overflow", "not-utf8"],
)
@pytest.mark.parametrize("route", ["/render", "/jobs"])
def test_bodies_a_parser_cannot_carry_answer_400_naming_the_field(
    client: TestClient, raw: bytes, field: str, words: str, route: str
) -> None:
    response = client.post(route, content=raw, headers=JSON)
    assert response.status_code == 400, response.text
    assert response.json()["field"] == field
    assert words in response.json()["error"]
    assert response.json()["error"].startswith(f"{field}: ")


@pytest.mark.slow
def test_paired_surrogates_and_brackets_inside_strings_are_fine(client: TestClient) -> None:
    content = "[" * 10_000 + " \\ud83d\\ude00 Claim.[[S:1]]"
    raw = body(content=f'"{content}"', title='"\\ud83d\\ude00 report"',
               sources_pool=json.dumps(POOL))
    response = client.post("/render", content=raw, headers=JSON)
    assert response.status_code == 200, response.text
    assert "\U0001f600" in response.text and "Lazard" in response.text


def test_nesting_within_the_body_limit_reaches_the_pool_rules(client: TestClient) -> None:
    row = {"sid": 1, "title": "t", "extra": json.loads(nested(MAX_DEPTH - 4))}
    response = client.post("/render", json={"content": "x[[S:1]]", "format": "md",
                                            "sources_pool": [row]})
    assert response.status_code == 422, response.text
    assert response.json()["field"] == "sources_pool.0.extra"  # the row's field, by the loader
    assert "nests deeper than 32" in response.json()["error"]


@pytest.mark.parametrize("route", ["/render", "/jobs"])
def test_too_many_pool_rows_are_refused_before_validation_naming_sources_pool(
    client: TestClient, route: str
) -> None:
    limit = Limits().max_pool_rows
    rows = ",".join('{"sid":1}' for _ in range(limit + 1))
    response = client.post(route, content=body(sources_pool=f"[{rows}]"), headers=JSON)
    assert response.status_code == 422
    assert response.json()["code"] == "limit_exceeded"
    assert response.json()["field"] == "sources_pool"
    assert f"{limit + 1} rows" in response.json()["error"]
    assert "limits.max_pool_rows" in response.json()["error"]


@pytest.mark.parametrize(
    ("pool", "field"),
    [
        ([*POOL, {"sid": 2}, {"sid": "three"}], "sources_pool.2.sid"),
        ({"sources": [*POOL, {"sid": 2, "title": [5]}]}, "sources_pool.sources.1.title"),
        ({"sources_pool": [{"sid": 0}]}, "sources_pool.sources_pool.0.sid"),
    ],
)
def test_a_bad_pool_row_is_named_by_position(
    client: TestClient, pool: Any, field: str
) -> None:
    response = client.post("/render", json={"content": "x", "format": "md", "sources_pool": pool})
    assert response.status_code == 422, response.text  # refused by the pool loader itself
    assert response.json()["code"] == "invalid_sources_pool"
    assert response.json()["field"] == field


@pytest.mark.slow
def test_validating_many_bad_rows_stops_at_the_first() -> None:
    """A schema validator collects an error per bad row (1.4 GB for 200,000); here the memory
    for 100,000 bad rows stays near that of the parsed body itself."""
    raw = json.dumps({"content": "x", "format": "md",
                      "sources_pool": [{"sid": "x", "title": 1}] * 100_000}).encode()
    tracemalloc.start()
    try:
        with pytest.raises(RequestProblem) as refused:
            checked_request(raw)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert refused.value.field in ("sources_pool.0.sid", "sources_pool.0.title")
    assert peak < 100 * 1024 * 1024, f"{peak / 2**20:.0f} MiB to refuse one bad row"


def test_an_unterminated_string_of_escaped_quotes_is_plain_invalid_json() -> None:
    """Scanning for nesting never restarts inside a string (on this body that was quadratic)."""
    raw = b'{"content": "' + b'\\"' * 1_000_000 + b"[" * 100
    with pytest.raises(RequestProblem, match="not valid JSON: Unterminated string") as refused:
        checked_request(raw)
    assert refused.value.status == 400 and refused.value.field == "body"


def test_an_oversized_body_closes_the_connection(client: TestClient) -> None:
    small = create_app(workers=1, max_body_bytes=1_000, warmup=False)
    with TestClient(small) as test_client:
        response = test_client.post("/render", content=b"{" + b" " * 5_000 + b"}", headers=JSON)
    assert response.status_code == 413
    assert response.headers["connection"] == "close"


@pytest.mark.slow
def test_a_hundred_thousand_open_brackets_are_content_not_a_crash(client: TestClient) -> None:
    response = client.post("/render", json={"content": "[" * 100_000, "format": "md"})
    assert response.status_code == 200, response.text
    assert response.text.count("\\[") == 100_000


def test_a_job_body_keeps_its_webhook_field_and_is_checked_like_a_render() -> None:
    request, webhook = checked_job(body(webhook='"https://hooks.example/x"'))
    assert webhook == "https://hooks.example/x" and request.format == "md"
    with pytest.raises(RequestProblem, match="webhooks"):
        checked_job(body(webhooks='"https://hooks.example/x"'))  # not a field of either


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [("GET", "/nope", 404), ("PUT", "/render", 405), ("DELETE", "/jobs", 405)],
)
def test_unknown_routes_and_methods_answer_json(
    client: TestClient, method: str, path: str, status: int
) -> None:
    response = client.request(method, path)
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"].startswith(f"{method} {path}: ")
    if status == 405:
        assert "POST" in response.headers["allow"]


GEMINI = {"candidates": [{"content": {"parts": [{"text": "Solar is cheap."}]},
                          "groundingMetadata": {
                              "groundingChunks": [{"web": {"uri": "https://a.example/x",
                                                           "title": "A"}}],
                              "groundingSupports": [{
                                  "segment": {"startIndex": 0, "endIndex": 5000},
                                  "groundingChunkIndices": [0]}]}}]}


@pytest.mark.parametrize(
    ("fields", "field", "says"),
    [
        ({"format": "png", "pages": "x"}, "pages",
         "'x' is not valid; accepted: a list of integers of 1 or more (1 to 10,000 items, "
         'no repeats), or "all"'),
        ({"sources_pool": "pool.json"}, "sources_pool",
         "'pool.json' is not valid; accepted: a list of objects, or an object holding "
         "'sources_pool' or 'sources'"),
        ({"title": "t" * 100_000}, "title",
         "a string of 100,000 characters; accepted: a string of at most 500 characters"),
        ({"dpi": 5000}, "dpi", "accepted: an integer from 10 to 600"),
        ({"numbering": "alpha"}, "numbering", 'accepted: one of "appearance", "sid"'),
        ({"strict": "yes"}, "strict", "'yes' is a string; accepted: true or false"),
    ],
)
def test_a_refused_field_says_what_is_accepted(
    client: TestClient, fields: dict[str, Any], field: str, says: str
) -> None:
    answer = client.post("/render", json={"content": "x", "format": "md", **fields})
    assert answer.status_code == 400, answer.text
    assert answer.json()["field"] == field
    assert answer.json()["error"].startswith(f"{field}: ")
    assert answer.json()["error"].endswith(says)


@pytest.mark.parametrize("name", sorted(REQUEST_SCHEMA["properties"]))
def test_every_field_refused_by_the_schema_says_what_is_accepted(
    client: TestClient, name: str
) -> None:
    payload = {"content": "x", "format": "md", name: [[[]]]}
    answer = client.post("/render", json=payload)
    assert answer.status_code == (422 if name == "sources_pool" else 400), answer.text
    refusal = answer.json()
    assert refusal["field"].split(".")[0] == name
    assert "; accepted: " in refusal["error"], refusal["error"]
    assert "given schemas" not in refusal["error"] and "rule of the schema" not in refusal["error"]


def test_a_malformed_native_answer_names_the_content_field_once(client: TestClient) -> None:
    answer = client.post("/render", json={"content": json.dumps(GEMINI), "format": "md",
                                          "content_format": "gemini"})
    assert answer.status_code == 400, answer.text
    refusal = answer.json()
    assert refusal["field"] == "content"
    path = "candidates[0].groundingMetadata.groundingSupports[0].segment.endIndex"
    assert refusal["error"].startswith(f"content: {path}: 5000 is beyond the text")
    assert refusal["error"].count(path) == 1 and "answer" not in refusal["error"]


@pytest.mark.parametrize(
    "row",
    [
        {"sid": "3", "title": "T"}, {"sid": " 3 "}, {"sid": 3.0}, {"sid": "+3"},
        {"sid": 3, "title": 12}, {"sid": 3, "link": "https://example.org/"},
        {"sid": 3, "size_bytes": "120", "relevance": "0.5"},
        {"sid": "three"}, {"sid": 0}, {"sid": "0"}, {"sid": 3.5}, {"sid": True}, {"sid": None},
        {"title": "no sid"}, {"sid": 3, "title": [1]}, {"sid": 3, "relevance": "high"},
        {"sid": "9" * 5000},
    ],
)
def test_the_service_accepts_exactly_the_rows_the_pool_loader_reads(
    client: TestClient, row: dict[str, Any]
) -> None:
    from citations.errors import PoolError
    from citations.pool import SourcePool

    try:
        SourcePool.coerce([row])
        loads = True
    except PoolError:
        loads = False
    answer = client.post("/render", json={"content": "Claim.[[S:3]]", "format": "md",
                                          "sources_pool": [row]})
    assert (answer.status_code == 200) == loads, answer.text
    if not loads:
        assert answer.status_code == 422 and answer.json()["field"].startswith("sources_pool.0")
        assert answer.json()["code"] == "invalid_sources_pool"
        assert "accepted: " in answer.json()["error"]


@pytest.mark.parametrize("route", ["/render", "/jobs"])
def test_a_string_sid_is_read_as_its_number(client: TestClient, route: str) -> None:
    """The README: "3" is read as 3 — over HTTP too, as by the CLI and the API."""
    payload = {"content": "Claim.[[S:3]]", "format": "md", "filename": f"sid{route[1:]}",
               "sources_pool": [{"sid": "3", "title": "Lazard", "url": "https://lazard.com/"}]}
    answer = client.post(route, json=payload)
    assert answer.status_code in (200, 202), answer.text
    if route == "/render":
        assert answer.headers["x-sources-used"] == "3" and "Lazard" in answer.text
    else:
        from tests.processes import wait_job

        state = wait_job(client, answer.json()["id"])
        assert state["status"] == "done" and state["result"]["sources_used"] == [3], state


def test_pool_rows_are_checked_once_not_again_by_the_schema_validator(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The bounded check reads every row with the pool loader; the request built after it
    ran the whole body through the schema validator again, every row included: 5 of the
    6.4 s a parser thread spent on a 10 MiB body of 190,000 rows."""
    seen = pool_rows_validated(monkeypatch)
    rows = [{"sid": i, "title": f"Study {i}", "url": f"https://example.org/{i}"}
            for i in range(1, 101)]
    request = checked_request(json.dumps({"content": "Claim.[[S:7]]", "format": "md",
                                          "sources_pool": rows}).encode())
    assert request.kwargs["sources_pool"] == rows
    assert seen and max(seen) == 0, f"the schema validator saw {max(seen)} rows"
