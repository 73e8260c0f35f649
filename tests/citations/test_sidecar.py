"""The JSON/YAML ``_citations`` sidecar and RFC 6901 JSON Pointers."""

from __future__ import annotations

import json

import pytest

from citations.errors import SidecarError
from citations.pool import SourcePool
from citations.sidecar import (
    extract_citation_sids_any,
    read_sidecar,
    resolve_pointer,
    validate_sidecar,
)

POOL = SourcePool.from_rows(
    [{"sid": i, "title": f"Source {i}", "url": f"https://s{i}.org/"} for i in (1, 2, 3)]
)
DOC = {
    "summary": "Solar grew.",
    "sections": [{"title": "Costs", "body": "PV is cheap."}],
    "a/b": {"m~n": "escaped keys"},
    "_citations": [
        {"path": "/summary", "sids": [1, 3]},
        {"path": "/sections/0/body", "sids": [2]},
        {"path": "/a~1b/m~0n", "sids": [3]},
    ],
}


def test_rfc6901_pointers() -> None:
    doc = {"foo": ["bar", "baz"], "": 0, "a/b": 1, "m~n": 8, " ": 7}
    assert resolve_pointer(doc, "") == doc
    assert resolve_pointer(doc, "/foo") == ["bar", "baz"]
    assert resolve_pointer(doc, "/foo/0") == "bar"
    assert resolve_pointer(doc, "/") == 0
    assert resolve_pointer(doc, "/a~1b") == 1
    assert resolve_pointer(doc, "/m~0n") == 8
    assert resolve_pointer(doc, "/ ") == 7


@pytest.mark.parametrize(
    ("pointer", "message"),
    [
        ("/foo/-", "past the end"),
        ("/foo/01", "not an array index"),
        ("/foo/2", "out of range"),
        ("/nope", "no member"),
        ("foo", "start with '/'"),
        ("/m~2n", "~0 is '~'"),
        ("/foo/0/x", "goes into a str"),
    ],
)
def test_bad_pointers(pointer: str, message: str) -> None:
    with pytest.raises(SidecarError, match=message):
        resolve_pointer({"foo": ["bar", "baz"]}, pointer)


def test_valid_sidecar() -> None:
    report = validate_sidecar(DOC, POOL)
    assert report.ok, report.errors
    assert report.sids == [1, 3, 2]
    assert [c.path for c in report.citations] == ["/summary", "/sections/0/body", "/a~1b/m~0n"]


def test_sidecar_problems_are_all_reported() -> None:
    doc = {
        "summary": "Solar [[S:2]] grew.",
        "list": ["x"],
        "_citations": [
            {"path": "/missing", "sids": [1]},
            {"path": "/list", "sids": [2]},
            {"path": "/summary", "sids": [99]},
        ],
    }
    report = validate_sidecar(doc, POOL)
    assert not report.ok
    joined = "\n".join(report.errors)
    assert "no member 'missing'" in joined
    assert "names a list" in joined
    assert "inline citation token in the string at '/summary'" in joined
    assert "sid 99 is not in the sources pool" in joined
    assert report.unknown_sids == (99,)


def test_inline_tokens_when_allowed() -> None:
    doc = {
        "summary": "Solar [[S:2]] grew [[S:0]].",
        "_citations": [{"path": "/summary", "sids": [1]}],
    }
    report = validate_sidecar(doc, POOL, allow_inline_tokens=True)
    assert report.sids == [1, 2]
    assert report.errors == ("invalid token '[[S:0]]' in the string at '/summary': "
                             "sid 0 is not valid: sids are positive integers",)


def test_configurable_pointer() -> None:
    doc = {"meta": {"refs": [{"path": "/text", "sids": [2]}]}, "text": "x"}
    report = validate_sidecar(doc, POOL, pointer="/meta/refs")
    assert report.ok and report.sids == [2]
    assert validate_sidecar(doc, POOL).citations == ()  # no sidecar at the default pointer


@pytest.mark.parametrize(
    ("sidecar", "message"),
    [
        ({"path": "/x"}, "sids"),
        ([{"path": "/x", "sids": []}], "non-empty"),
        ([{"path": "/x", "sids": [0]}], "positive"),
        ([{"path": "/x", "sids": [True]}], "positive"),
        ([{"path": 3, "sids": [1]}], "JSON Pointer string"),
        (["x"], "expected an object"),
        ([{"path": "x", "sids": [1]}], "start with '/'"),
    ],
)
def test_malformed_sidecar(sidecar: object, message: str) -> None:
    with pytest.raises(SidecarError, match=message):
        read_sidecar({"x": "y", "_citations": sidecar})
    assert message in validate_sidecar({"x": "y", "_citations": sidecar}, POOL).errors[0]


def test_extract_any_format() -> None:
    md = "A [[S:3]] `[[S:9]]` B [[S:1,3]] [[USAGE:2]]"
    assert extract_citation_sids_any(md, "markdown") == [3, 1]
    html = '<p>A <sup class="cite" data-sids="2">2</sup></p><pre>[[S:9]]</pre> [S:1]'
    assert extract_citation_sids_any(html, "html") == [2, 1]
    assert extract_citation_sids_any(json.dumps(DOC), "json") == [1, 3, 2]
    yaml_text = "summary: Solar [[S:2]]\n_citations:\n  - path: /summary\n    sids: [3]\n"
    assert extract_citation_sids_any(yaml_text, "yaml") == [3, 2]
    with pytest.raises(SidecarError, match="not valid JSON"):
        extract_citation_sids_any("{", "json")
    with pytest.raises(SidecarError, match="accepted"):
        extract_citation_sids_any("x", "toml")  # type: ignore[arg-type]
