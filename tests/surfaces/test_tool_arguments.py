"""``call_tool`` takes arguments as LLM APIs deliver them (JSON text) and never raises: every
hostile argument answers an envelope."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from renderers.tools import call_tool

POOL = [{"sid": 1, "title": "Grid study", "url": "https://example.org/grid"}]


def test_arguments_as_json_text(tmp_path: Path) -> None:
    arguments = json.dumps(
        {
            "content": "# Note\n\nGrid costs fell.[[S:1]]\n",
            "sources_pool": POOL,
            "path": "note.html",
        }
    )
    for given in (arguments, arguments.encode("utf-8")):
        envelope = call_tool("write_html", given, out_dir=tmp_path)
        assert envelope["ok"] is True, envelope
        assert envelope["sources_used"] == [1]
        assert "Grid costs fell." in (tmp_path / "note.html").read_text(encoding="utf-8")


DEEP = "[" * 100_000 + "]" * 100_000
HOSTILE: list[tuple[str, Any, str, str]] = [
    ("list", [1, 2], "invalid_argument", "arguments"),
    ("number", 42, "invalid_argument", "arguments"),
    ("float", 1.5, "invalid_argument", "arguments"),
    ("true", True, "invalid_argument", "arguments"),
    ("object", object(), "invalid_argument", "arguments"),
    ("JSON list", "[1, 2]", "invalid_argument", "arguments"),
    ("JSON number", "42", "invalid_argument", "arguments"),
    ("JSON null", "null", "invalid_argument", "arguments"),
    ("bad JSON", '{"content": ', "invalid_argument", "arguments"),
    ("empty text", "", "invalid_argument", "arguments"),
    ("bad UTF-8", b'{"content": "\xff\xfe"}', "invalid_argument", "arguments"),
    ("deep JSON", '{"content": "x", "title": ' + DEEP + "}", "invalid_argument", "arguments"),
    (
        "5,000 digits",
        '{"content": "x", "dpi": ' + "9" * 5000 + "}",
        "invalid_argument",
        "arguments",
    ),
    ("surrogate in path", {"content": "x", "path": "a\ud800.html"}, "invalid_path", "path"),
    ("surrogate in JSON path", '{"content": "x", "path": "a\\ud800.html"}', "invalid_path", "path"),
    ("surrogate key", {"content": "x", "\ud800": 1}, "invalid_argument", "\ufffd"),
    (
        "deep dict",
        {"content": "x", "sources_pool": json.loads("[" * 900 + "]" * 900)},
        "invalid_sources_pool",  # a list is not a row, as the HTTP service says
        "sources_pool.0",
    ),
    ("huge int", {"content": "x", "dpi": 10**5000}, "invalid_argument", "dpi"),
    ("content list", {"content": ["x"]}, "invalid_argument", "content"),
    ("NUL content", {"content": "a\x00b"}, "invalid_argument", "content"),
    ("path type", {"content": "x", "path": 5}, "invalid_argument", "path"),
    ("non-string key", {1: "x"}, "invalid_argument", "1"),  # the stray key is named
]


@pytest.mark.parametrize(
    ("label", "arguments", "code", "where"), HOSTILE, ids=[case[0] for case in HOSTILE]
)
def test_hostile_arguments_answer_an_envelope(
    tmp_path: Path, label: str, arguments: Any, code: str, where: str
) -> None:
    envelope = call_tool("write_html", arguments, out_dir=tmp_path)
    assert envelope["ok"] is False, envelope
    assert envelope["error"]["code"] == code
    assert envelope["error"]["where"] == where
    json.dumps(envelope, ensure_ascii=False).encode("utf-8")  # every envelope is sendable
    assert not (tmp_path / "report.html").exists()


@pytest.mark.parametrize("name", [None, 5, ["write_html"], "write_\ud800", "", "write_jpg"])
def test_unknown_tool_names_answer_an_envelope(tmp_path: Path, name: Any) -> None:
    envelope = call_tool(name, {"content": "x"}, out_dir=tmp_path)
    assert envelope["ok"] is False and envelope["error"]["code"] == "unknown_tool"
    json.dumps(envelope, ensure_ascii=False).encode("utf-8")


def test_a_lone_surrogate_in_text_options_is_replaced_not_fatal(tmp_path: Path) -> None:
    envelope = call_tool("write_html", {
        "content": "Hi.[[S:1]]", "sources_pool": POOL, "title": "Q\ud800",
        "author": "A\udfff", "sources_heading": "S\ud800",
    }, out_dir=tmp_path)  # fmt: skip
    assert envelope["ok"] is True, envelope
    html = Path(envelope["path"]).read_text(encoding="utf-8")
    assert "Q\ufffd" in html and "S\ufffd" in html


def test_an_unwritable_output_directory_is_an_envelope(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory", encoding="utf-8")
    envelope = call_tool("write_markdown", {"content": "x"}, out_dir=blocker / "out")
    assert envelope["ok"] is False
    assert (envelope["error"]["code"], envelope["error"]["where"]) == ("write_failed", "path")


def test_null_for_an_optional_argument_means_it_was_left_out(tmp_path: Path) -> None:
    """LLMs send ``null`` for optional fields they do not use; that was refused ("None is
    null") instead of meaning the default."""
    from renderers.tools import TOOL_SCHEMAS

    assert all("required" not in s["parameters"] for s in TOOL_SCHEMAS)  # every one optional
    arguments = {
        "content": "# Note\n\nGrid costs fell.[[S:1]]\n", "sources_pool": POOL, "path": None,
        "answer": None, "title": None, "dpi": None, "pages": None, "page_size": None,
        "pdf_variant": None, "pdf_engine": None, "content_format": None, "dialects": None,
    }
    envelope = call_tool("write_png", json.dumps(arguments), out_dir=tmp_path)
    assert envelope["ok"] is True, envelope
    assert Path(envelope["path"]).name == "report.png"
    audit = call_tool("audit_citations", {"content": "x[[S:1]]", "sources_pool": POOL,
                                          "answer": None, "dialects": None}, out_dir=tmp_path)
    assert audit["ok"] is True and audit["sources_used"] == [1], audit
    neither = call_tool("write_pdf", {"content": None, "answer": None}, out_dir=tmp_path)
    assert neither["ok"] is False and neither["error"]["code"] == "invalid_argument"
    assert "exactly one of 'content'" in neither["error"]["message"]


def test_the_pages_argument_describes_the_list_it_takes() -> None:
    from renderers.tools import TOOL_SCHEMAS

    (png,) = [s for s in TOOL_SCHEMAS if s["name"] == "write_png"]
    pages = png["parameters"]["properties"]["pages"]
    assert pages["type"] == "array" and pages["items"]["type"] == "integer"
    assert "[1, 3, 4, 5]" in pages["description"] and "1,3-5" not in pages["description"]
