"""A key given twice in one JSON object is refused on every surface, naming its path.

``{"format": "pdf", "format": "docx"}`` was read last-wins: the client's bug went unseen and
a file it did not mean was rendered. Request bodies, tool arguments, pool files and answer
files are all read through :mod:`citations.json_keys`; so is YAML (front matter, pool files,
sidecar answers), which read a repeated key last-wins.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner, Result

from renderers import cli
from renderers.tools import call_tool
from tests.surfaces.service_process import Service, running_service
from tests.surfaces.test_cli import assert_one_line_error

POOL = [{"sid": 1, "title": "Lazard LCOE+", "url": "https://www.lazard.com/"}]


# ---------------------------------------------------------------- agent tools


def test_tool_arguments_as_json_text_naming_a_key_twice_are_refused(tmp_path: Path) -> None:
    arguments = '{"content": "Kept?[[S:1]]", "path": "a.md",\n "path": "b.md"}'
    envelope = call_tool("write_markdown", arguments, out_dir=tmp_path)
    assert envelope["ok"] is False
    assert envelope["error"] == {
        "code": "invalid_argument",
        "message": "arguments.path: the key 'path' appears twice in one object (line 2, "
                   "column 2); accepted: each key once per object",
        "where": "arguments.path",
    }
    assert list(tmp_path.iterdir()) == []


def test_an_answer_as_json_text_naming_a_key_twice_is_refused(tmp_path: Path) -> None:
    answer = '{"answer": "x", "_citations": [{"path": "/answer", "sids": [1], "sids": [2]}]}'
    envelope = call_tool("write_markdown", {"answer": answer}, out_dir=tmp_path)
    assert envelope["ok"] is False and envelope["error"]["where"] == "answer"
    assert "_citations.0.sids: the key 'sids' appears twice" in envelope["error"]["message"]


def test_content_that_is_json_naming_a_key_twice_is_refused_not_shown_as_prose(
    tmp_path: Path,
) -> None:
    """JSON text that does not parse is read as markdown (it may merely start with a bracket);
    JSON naming a key twice is JSON, and rendering it as a paragraph would hide the bug."""
    content = '{"summary": "a", "summary": "b", "_citations": [{"path": "/summary", "sids": [1]}]}'
    envelope = call_tool("write_markdown", {"content": content, "sources_pool": POOL},
                         out_dir=tmp_path)
    assert envelope["ok"] is False, envelope
    assert "summary: the key 'summary' appears twice" in envelope["error"]["message"]
    assert list(tmp_path.iterdir()) == []


def test_front_matter_naming_a_key_twice_is_refused_as_invalid_input(tmp_path: Path) -> None:
    content = "---\ntitle: Solar\ntitle: Wind\n---\n\nSolar is cheap.[[S:1]]\n"
    envelope = call_tool("write_markdown", {"content": content, "sources_pool": POOL},
                         out_dir=tmp_path)
    assert envelope["ok"] is False, envelope
    assert envelope["error"]["code"] == "invalid_input"
    assert envelope["error"]["message"].endswith(
        "front matter: title: the key 'title' appears twice in one object (line 3, column 1); "
        "accepted: each key once per object"
    )
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- command line


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "pool.json").write_text(json.dumps(POOL), encoding="utf-8")
    (tmp_path / "note.md").write_text("Solar is cheap.[[S:1]]\n", encoding="utf-8")
    return tmp_path


def render_note(workspace: Path, pool: Path) -> Result:
    """``citerender render`` of the workspace's note with ``pool``, to Markdown."""
    return CliRunner().invoke(cli.app, [
        "render", str(workspace / "note.md"), "--pool", str(pool), "--to", "md",
        "--out", str(workspace / "out"),
    ])  # fmt: skip


def test_a_pool_file_naming_a_key_twice_exits_2_naming_file_key_and_line(
    workspace: Path,
) -> None:
    pool = workspace / "dup.json"
    pool.write_text('[{"sid": 1,\n  "url": "https://a.example/",\n  "url": "https://b.example/"}]',
                    encoding="utf-8")
    result = render_note(workspace, pool)
    assert result.exit_code == 2
    assert_one_line_error(
        result.stderr, str(pool), "0.url: the key 'url' appears twice", "(line 3, column 3)"
    )
    assert not (workspace / "out").exists()


def test_a_pool_file_repeating_a_lone_surrogate_key_exits_2_with_its_message(
    workspace: Path,
) -> None:
    """A key written ``"\\ud800"`` is a lone surrogate no stream encodes: the CLI printed the
    encoder's complaint instead of the refusal."""
    pool = workspace / "dup.json"
    pool.write_text('[{"sid": 1, "url": "https://a.example/", "\\ud800": 1, "\\ud800": 2}]',
                    encoding="utf-8")
    result = render_note(workspace, pool)
    assert result.exit_code == 2
    assert_one_line_error(
        result.stderr, str(pool), "0.\ufffd: the key '\\ud800' appears twice", "(line 1, column"
    )


def test_an_answer_file_naming_a_key_twice_exits_2(workspace: Path) -> None:
    answer = workspace / "answer.json"
    answer.write_text(
        '{"summary": "Solar is cheap.", "summary": "Wind is cheap.",\n'
        ' "_citations": [{"path": "/summary", "sids": [1]}]}',
        encoding="utf-8",
    )
    for command in (["render", "--to", "md", "--out", str(workspace / "out")], ["audit"]):
        result = CliRunner().invoke(
            cli.app, [command[0], str(answer), "--pool", str(workspace / "pool.json"),
                      *command[1:]],
        )
        assert result.exit_code == 2, result.output
        assert_one_line_error(result.stderr, str(answer), "summary: the key 'summary'")
    assert not (workspace / "out").exists()


@pytest.mark.parametrize("command", ["render", "audit"])
def test_yaml_naming_a_key_twice_exits_2_on_render_and_audit(workspace: Path, command: str) -> None:
    """Front matter, a YAML pool and a YAML sidecar answer read a repeated key last-wins."""
    (workspace / "front.md").write_text("---\ntitle: Solar\ntitle: Wind\n---\n\nCheap.[[S:1]]\n",
                                        encoding="utf-8")
    (workspace / "pool.yaml").write_text(
        "- sid: 1\n  url: https://a.example/\n  url: https://b.example/\n", encoding="utf-8"
    )
    (workspace / "answer.yaml").write_text(
        "summary: Solar is cheap.\n_citations:\n  - path: /summary\n    sids: [1]\n"
        "    path: /summary\n", encoding="utf-8",
    )
    pool = str(workspace / "pool.json")
    out = ["--to", "md", "--out", str(workspace / "out")] if command == "render" else []
    cases = [
        ("front.md", pool, "front.md", "front matter: title: the key 'title' appears twice",
         "(line 3, column 1)"),
        ("note.md", str(workspace / "pool.yaml"), "pool.yaml", "0.url: the key 'url' appears",
         "(line 3, column 3)"),
        ("answer.yaml", pool, "answer.yaml", "_citations.0.path: the key 'path' appears",
         "(line 5, column 5)"),
    ]
    for name, pool_file, at_fault, *parts in cases:
        result = CliRunner().invoke(
            cli.app, [command, str(workspace / name), "--pool", pool_file, *out]
        )
        assert result.exit_code == 2, result.output
        assert_one_line_error(result.stderr, str(workspace / at_fault), *parts)
    assert not (workspace / "out").exists()


def test_pool_add_refuses_a_tool_output_naming_a_key_twice(workspace: Path) -> None:
    output = workspace / "search.json"
    output.write_text('{"results": [{"url": "https://a.example/", "url": "https://b.example/"}]}',
                      encoding="utf-8")
    result = CliRunner().invoke(
        cli.app, ["pool", "add", str(workspace / "registry.json"), str(output)]
    )
    assert result.exit_code == 2
    assert_one_line_error(result.stderr, str(output), "results.0.url: the key 'url'")
    assert not (workspace / "registry.json").exists()


# ---------------------------------------------------------------- HTTP service


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    with running_service(tmp_path_factory.mktemp("service"), workers=1) as running:
        yield running


@pytest.mark.slow
@pytest.mark.parametrize("route", ["/render", "/jobs"])
@pytest.mark.parametrize(
    ("raw", "where", "line"),
    [
        ('{"content": "x[[S:1]]", "format": "pdf", "format": "md"}', "format", 1),
        ('{"content": "x[[S:1]]", "format": "md",\n "sources_pool": [\n'
         '  {"sid": 1, "title": "A", "url": "https://a.example/", "title": "B"}]}',
         "sources_pool.0.title", 3),
    ],
)
def test_a_body_naming_a_key_twice_is_400_naming_it(
    service: Service, route: str, raw: str, where: str, line: int
) -> None:
    answer = httpx.post(f"{service.url}{route}", content=raw.encode(),
                        headers={"Content-Type": "application/json"}, timeout=60)
    assert answer.status_code == 400, answer.text
    error = answer.json()
    key = where.rsplit(".", 1)[-1]
    assert error["error"].startswith(f"{where}: the key {key!r} appears twice in one object "
                                     f"(line {line}, column ")
    assert error["field"] == where
    fine = httpx.post(f"{service.url}/render", timeout=60, json={
        "content": "x[[S:1]]", "format": "md", "sources_pool": POOL,
    })  # fmt: skip
    assert fine.status_code == 200
