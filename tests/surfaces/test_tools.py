"""Agent tool schemas and ``call_tool``: round trips per format, path confinement, errors."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from PIL import Image
from starlette.testclient import TestClient

from renderers.service.app import create_app
from renderers.tools import TOOL_SCHEMAS, call_tool
from tests.helpers import pdf_text

CONTENT = (
    "# Grid report\n\nStorage prices fell sharply.[[S:3]] Capacity additions hit a record."
    "[[S:2]] Both trends continue.[[S:1-3]]\n"
)

TOOL_NAMES = {"write_pdf", "write_docx", "write_pptx", "write_png", "write_html",
              "write_markdown", "audit_citations"}


def files_under(path: Path) -> set[Path]:
    return {p for p in path.rglob("*") if p.is_file()}


def test_schemas_are_valid_function_calling_shapes() -> None:
    assert {schema["name"] for schema in TOOL_SCHEMAS} == TOOL_NAMES
    for schema in TOOL_SCHEMAS:
        assert set(schema) == {"name", "description", "parameters"}
        assert len(schema["description"]) > 40
        Draft202012Validator.check_schema(schema["parameters"])
        parameters = schema["parameters"]
        assert parameters["type"] == "object" and "required" not in parameters  # content or answer
        assert {"content", "answer", "content_format"} <= set(parameters["properties"])
        assert parameters["additionalProperties"] is False
        for name, prop in parameters["properties"].items():
            assert "description" in prop or name in ("slide_ratio",), name


@pytest.mark.parametrize(
    ("tool", "name", "fmt"),
    [("write_pdf", "grid.pdf", "pdf"), ("write_docx", "sub/grid.docx", "docx"),
     ("write_pptx", "grid.pptx", "pptx"), ("write_png", "grid", "png"),
     ("write_html", "grid.html", "html"), ("write_markdown", "grid.md", "md")],
)
def test_round_trip_each_writer(
    tmp_path: Path, sample_pool: list[dict[str, Any]], tool: str, name: str, fmt: str
) -> None:
    result = call_tool(tool, {"content": CONTENT, "sources_pool": sample_pool, "path": name,
                              "title": "Grid report"}, out_dir=tmp_path)
    assert result["ok"] is True, result
    assert result["format"] == fmt
    assert result["sources_used"] == [3, 2, 1]
    path = Path(result["path"])
    assert path.is_file() and path.resolve().is_relative_to(tmp_path.resolve())
    assert isinstance(result["warnings"], list) and isinstance(result["stats"], dict)
    data = path.read_bytes()
    if fmt == "pdf":
        assert "Storage prices fell" in pdf_text(path)
    elif fmt in ("docx", "pptx"):
        part = "word/document.xml" if fmt == "docx" else "ppt/slides/slide1.xml"
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            xml = "".join(archive.read(n).decode() for n in archive.namelist()
                          if n.endswith(".xml") and n.startswith(part.rsplit("/", 1)[0]))
        assert "Storage prices fell" in xml or "Grid report" in xml
        assert "Lazard LCOE+" in xml
    elif fmt == "png":
        assert path.suffix == ".png"
        assert Image.open(path).format == "PNG"
    elif fmt == "html":
        assert 'class="cite"' in data.decode()
    else:
        assert "[^1]" in data.decode()


def test_audit_tool(sample_pool: list[dict[str, Any]], tmp_path: Path) -> None:
    result = call_tool("audit_citations", {
        "content": "One.[[S:2]] Two.[[S:42]]\n\n`[[S:1]]`\n", "sources_pool": sample_pool,
    }, out_dir=tmp_path)
    assert result["ok"] is True and result["format"] == "audit"
    assert result["sources_used"] == [2]
    assert result["audit"]["unknown_sids"] == [42]
    assert result["stats"]["clean"] is False
    assert any("42" in w for w in result["warnings"])
    assert files_under(tmp_path) == set()


@pytest.mark.parametrize(
    "bad_name",
    ["../x.pdf", "/etc/x.pdf", "a\x00b.pdf", "sub/../../x.pdf", "a:b.pdf", "..", "C:/x.pdf"],
)
def test_names_outside_out_dir_are_refused(tmp_path: Path, bad_name: str) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    result = call_tool("write_pdf", {"content": "Hello.", "path": bad_name}, out_dir=out_dir)
    assert result["ok"] is False
    assert result["error"]["code"] == "invalid_path"
    assert result["error"]["where"] == "path"
    assert result["error"]["message"]
    assert files_under(tmp_path) == set()
    assert not Path("/etc/x.pdf").exists()


def test_symlink_escape_is_refused(tmp_path: Path) -> None:
    out_dir, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out_dir.mkdir()
    elsewhere.mkdir()
    (out_dir / "link").symlink_to(elsewhere, target_is_directory=True)
    result = call_tool("write_markdown", {"content": "Hi.", "path": "link/x.md"},
                       out_dir=out_dir)
    assert result["ok"] is False and result["error"]["code"] == "invalid_path"
    assert files_under(elsewhere) == set()


@pytest.mark.parametrize(
    ("tool", "arguments", "code", "where"),
    [
        ("write_gif", {"content": "x"}, "unknown_tool", "name"),
        ("write_pdf", {}, "invalid_argument", "content"),
        ("write_pdf", {"content": "x", "title": 5}, "invalid_argument", "title"),
        ("write_pdf", {"content": "x", "dpi": 90}, "invalid_argument", "dpi"),
        ("write_pdf", {"content": "x", "path": "x.docx"}, "invalid_path", "path"),
        ("write_png", {"content": "x", "pages": [0]}, "invalid_argument", "pages.0"),
        ("write_markdown", {"content": "x", "sources_pool": "pool.json"},
         "invalid_argument", "sources_pool"),
        ("write_markdown", {"content": "x[[S:7]]", "strict": True}, "strict_failed", "content"),
    ],
)
def test_errors_are_envelopes(
    tmp_path: Path, tool: str, arguments: dict[str, Any], code: str, where: str
) -> None:
    result = call_tool(tool, arguments, out_dir=tmp_path)
    assert result["ok"] is False, result
    assert result["error"]["code"] == code
    assert result["error"]["where"] == where
    assert files_under(tmp_path) <= {tmp_path / "sources_used.json"}


# ---------------------------------------------------------------- a bad pool row


@pytest.fixture(scope="module")
def service() -> Iterator[TestClient]:
    with TestClient(create_app(workers=1, warmup=False)) as client:
        yield client


GOOD_ROW = {"sid": 1, "title": "IEA", "url": "https://iea.org"}
#: Pools with one bad row, the field naming it, and the start of the message.
BAD_ROWS = [
    ([GOOD_ROW, {"sid": 2}, {"sid": "three"}], "sources_pool.2.sid",
     "sources_pool.2: sid 'three' is not valid; accepted: an integer from 1"),
    ({"sources": [GOOD_ROW, {"sid": 2, "title": [5]}]}, "sources_pool.sources.1.title",
     "sources_pool.sources.1: field 'title' is list; accepted: a string"),
    ({"sources_pool": [{"sid": 0}]}, "sources_pool.sources_pool.0.sid",
     "sources_pool.sources_pool.0: sid 0 is not valid"),
    ([{"title": "no sid"}], "sources_pool.0.sid", "sources_pool.0: the row has no 'sid'"),
    ([GOOD_ROW, 5], "sources_pool.1", "sources_pool.1: 5 is not a row; accepted: an object"),
    ([{"sid": True}], "sources_pool.0.sid", "sources_pool.0: sid True is not valid"),
]


@pytest.mark.parametrize(("pool", "where", "message"), BAD_ROWS)
@pytest.mark.parametrize("tool", ["write_markdown", "audit_citations"])
def test_a_bad_pool_row_is_invalid_sources_pool_named_by_position(
    tmp_path: Path, service: TestClient, tool: str, pool: Any, where: str, message: str
) -> None:
    """The tools answered ``invalid_argument`` (the schema's words) or ``invalid_sources_pool``
    without the row's position, where the HTTP service answers 422 ``invalid_sources_pool``
    naming the row and its field: now all three surfaces say the same."""
    arguments = {"content": "Claim.[[S:1]]", "sources_pool": pool}
    envelope = call_tool(tool, arguments, out_dir=tmp_path)
    assert envelope["ok"] is False, envelope
    assert envelope["error"]["code"] == "invalid_sources_pool"
    assert envelope["error"]["where"] == where
    assert envelope["error"]["message"].startswith(message)
    assert call_tool(tool, json.dumps(arguments), out_dir=tmp_path) == envelope  # as JSON text
    answer = service.post("/render", json={**arguments, "format": "md"})
    assert answer.status_code == 422
    assert answer.json() == {"error": envelope["error"]["message"], "field": where,
                             "code": "invalid_sources_pool"}
    assert files_under(tmp_path) == set()
