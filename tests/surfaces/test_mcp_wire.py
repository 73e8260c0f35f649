"""The MCP server answers every line a client sends — malformed JSON-RPC, lone surrogates,
nesting deeper than the SDK's parser takes — with a JSON-RPC error, and keeps serving. Tool
arguments sent as JSON text (as agents often do) are the object they spell."""

from __future__ import annotations

import io
import json
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

ROOT = Path(__file__).resolve().parents[2]
PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


class Client:
    """Raw newline-delimited JSON-RPC over a real server process's stdio."""

    def __init__(self, out_dir: Path, *options: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "renderers.mcp_server", "--out", str(out_dir), *options],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def answer(self, timeout: float = 60) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, "the server did not answer"
        line = self.proc.stdout.readline()
        assert line, "the server closed its output"
        message: dict[str, Any] = json.loads(line)
        return message

    def close(self) -> str:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        return self.proc.stderr.read().decode("utf-8", "replace")


def started(session: Client) -> Client:
    """``session`` past the MCP handshake."""
    session.send(json.dumps({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "wire-test", "version": "1"}},
    }).encode())  # fmt: skip
    assert session.answer()["id"] == 0
    session.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    return session


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    session = started(Client(tmp_path_factory.mktemp("mcp-out")))
    yield session
    session.close()


def call(request_id: int, arguments: str) -> bytes:
    return (
        f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", '
        f'"params": {{"name": "write_markdown", "arguments": {arguments}}}}}'
    ).encode()


HOSTILE: list[tuple[str, bytes, int | None, int]] = [
    ("not JSON", b'{"jsonrpc": "2.0", "id": 1, "method": ', None, PARSE_ERROR),
    ("binary garbage", b"\xff\xfe\x00garbage", None, PARSE_ERROR),
    ("a JSON array", b"[1, 2, 3]", None, INVALID_REQUEST),
    ("a JSON string", b'"hello"', None, INVALID_REQUEST),
    ("no method", b'{"jsonrpc": "2.0", "id": 2}', 2, INVALID_REQUEST),
    ("wrong version", b'{"jsonrpc": "1.0", "id": 3, "method": "tools/list"}', 3, INVALID_REQUEST),
    (
        "id of the wrong type",
        b'{"jsonrpc": "2.0", "id": [4], "method": "tools/list"}',
        None,
        INVALID_REQUEST,
    ),
    (
        "nested 300 deep",
        call(5, '{"content": "x", "title": ' + "[" * 300 + "]" * 300 + "}"),
        5,
        INVALID_REQUEST,
    ),
    (
        "nested 100,000 deep",
        call(6, '{"content": ' + "[" * 100_000 + "]" * 100_000 + "}"),
        None,
        INVALID_REQUEST,
    ),
    (
        "lone surrogate in a path",
        call(7, '{"content": "x", "path": "a\\ud800.md"}'),
        7,
        INVALID_REQUEST,
    ),
    ("lone surrogate in content", call(8, '{"content": "x\\udfff"}'), 8, INVALID_REQUEST),
    (
        "lone surrogate as the id",
        b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "tools/list"}',
        None,
        INVALID_REQUEST,
    ),
    (  # rendered as "caf\ufffd" before: a silent change of the client's text
        "Latin-1 text in content",
        call(9, '{"content": "cafX"}').replace(b"X", b"\xe9"),
        9,
        PARSE_ERROR,
    ),
    (
        "5,000-digit id",
        b'{"jsonrpc": "2.0", "id": ' + b"9" * 5000 + b', "method": "x"}',
        None,
        PARSE_ERROR,
    ),
]


@pytest.mark.parametrize(
    ("label", "line", "request_id", "code"), HOSTILE, ids=[case[0] for case in HOSTILE]
)
def test_every_request_is_answered(
    client: Client, label: str, line: bytes, request_id: int | None, code: int
) -> None:
    client.send(line)
    answer = client.answer()
    assert answer["jsonrpc"] == "2.0" and answer["id"] == request_id
    assert answer["error"]["code"] == code and answer["error"]["message"]
    if label == "Latin-1 text in content":
        assert "not UTF-8 at byte" in answer["error"]["message"]
    client.send(b'{"jsonrpc": "2.0", "id": 99, "method": "tools/list"}')
    still = client.answer()
    assert still["id"] == 99 and len(still["result"]["tools"]) == 7


@pytest.mark.slow  # warms a worker first (about 2 s)
def test_a_tool_error_is_an_envelope_not_a_protocol_error(client: Client) -> None:
    client.send(call(10, '{"content": "x", "path": "../escape.md"}'))
    answer = client.answer()
    assert answer["id"] == 10
    result = answer["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["code"] == "invalid_path"


def test_arguments_sent_as_json_text_are_the_object_they_spell(client: Client) -> None:
    arguments = json.dumps({"content": "# Note\n\nSent as text.\n", "path": "as-text.md"})
    client.send(call(20, json.dumps(arguments)))
    answer = client.answer()
    assert answer["id"] == 20 and "error" not in answer, answer
    result = answer["result"]
    assert result["isError"] is False and result["structuredContent"]["ok"] is True
    written = Path(result["structuredContent"]["path"])
    assert written.name == "as-text.md"
    assert "Sent as text." in written.read_text(encoding="utf-8")


def test_a_bad_pool_row_is_named_as_the_http_service_names_it(client: Client) -> None:
    client.send(call(30, json.dumps({"content": "Claim.[[S:1]]",
                                     "sources_pool": [{"sid": 1}, {"sid": "three"}]})))
    answer = client.answer()
    assert answer["id"] == 30 and answer["result"]["isError"] is True
    assert answer["result"]["structuredContent"]["error"] == {
        "code": "invalid_sources_pool",
        "message": "sources_pool.1: sid 'three' is not valid; accepted: an integer from 1 to "
                   "2147483647",
        "where": "sources_pool.1.sid",
    }


DUPLICATED: list[tuple[str, bytes, int, str | None]] = [
    ("a tool argument", call(40, '{"content": "x", "path": "a.md", "path": "b.md"}'),
     INVALID_PARAMS, "arguments.path"),
    ("a pool row's field", call(40, '{"content": "x[[S:1]]", "sources_pool": '
                                    '[{"sid": 1, "title": "A", "title": "B"}]}'),
     INVALID_PARAMS, "arguments.sources_pool.0.title"),
    ("the arguments as JSON text", call(40, json.dumps('{"content": "x", "content": "y"}')),
     INVALID_PARAMS, "arguments.content"),
    ("the tool's name", b'{"jsonrpc": "2.0", "id": 40, "method": "tools/call", "params": '
                        b'{"name": "write_pdf", "name": "write_markdown", "arguments": {}}}',
     INVALID_PARAMS, "name"),
    ("the method", b'{"jsonrpc": "2.0", "id": 40, "method": "tools/call", "method": '
                   b'"tools/list"}', INVALID_REQUEST, None),
]


@pytest.mark.parametrize(
    ("label", "line", "code", "where"), DUPLICATED, ids=[case[0] for case in DUPLICATED]
)
def test_a_key_given_twice_is_refused_naming_it(
    client: Client, label: str, line: bytes, code: int, where: str | None
) -> None:
    """The SDK read such a line last-wins: ``b.md`` was written, the ``a.md`` a buggy client
    also sent was silently dropped. Nothing is rendered for it."""
    client.send(line)
    answer = client.answer()
    assert answer["id"] == 40 and "result" not in answer, answer
    error = answer["error"]
    assert error["code"] == code
    assert "appears twice in one object" in error["message"]
    if where is not None:
        assert error["data"] == {"where": where}
        assert f"invalid params: {where}: the key" in error["message"]
    else:
        assert error["message"].startswith("invalid request: method: the key 'method'")
    client.send(call(41, json.dumps({"content": "x", "path": "after-duplicate.md"})))
    assert client.answer()["result"]["structuredContent"]["ok"] is True


def test_an_argument_of_another_format_is_named_with_its_format(client: Client) -> None:
    """``pages`` to write_pdf said "unknown field 'pages'", as for a misspelt name."""
    client.send(b'{"jsonrpc": "2.0", "id": 42, "method": "tools/call", "params": {"name": '
                b'"write_pdf", "arguments": {"content": "x", "pages": [2]}}}')
    answer = client.answer()
    assert answer["id"] == 42 and answer["result"]["isError"] is True, answer
    assert answer["result"]["structuredContent"]["error"] == {
        "code": "invalid_argument",
        "message": "pages applies to png output only, and this render writes pdf; leave it out "
                   "or ask for png",
        "where": "pages",
    }


NOT_AN_OBJECT: list[tuple[str, str, str]] = [
    ("JSON text of a list", json.dumps("[1, 2]"), "not list"),
    ("text that is not JSON", json.dumps("content: x"), "not valid JSON"),
    ("JSON text nested 100,000 deep", json.dumps("[" * 100_000 + "]" * 100_000), "too deep"),
    ("a list", "[1, 2]", "not list"),
    ("a number", "42", "not int"),
]


@pytest.mark.parametrize(
    ("label", "arguments", "why"), NOT_AN_OBJECT, ids=[case[0] for case in NOT_AN_OBJECT]
)
def test_arguments_that_are_no_object_are_named(
    client: Client, label: str, arguments: str, why: str
) -> None:
    client.send(call(21, arguments))
    answer = client.answer()
    assert answer["id"] == 21 and "result" not in answer, answer
    error = answer["error"]
    assert error["code"] == INVALID_PARAMS and error["data"] == {"where": "arguments"}
    assert "arguments" in error["message"] and "object" in error["message"]
    assert why in error["message"]
    client.send(call(22, json.dumps({"content": "x", "path": "after.md"})))
    assert client.answer()["result"]["structuredContent"]["ok"] is True


NO_TOOL_NAMED: list[tuple[str, dict[str, Any], str]] = [
    ("no params", {}, "params"),
    ("null params", {"params": None}, "params"),
    ("no name", {"params": {"arguments": {"content": "x"}}}, "name"),
    ("null name", {"params": {"name": None}}, "name"),
    ("numeric name", {"params": {"name": 5, "arguments": {}}}, "name"),
    ("name as a list", {"params": {"name": ["write_pdf"], "arguments": "{}"}}, "name"),
]


@pytest.mark.parametrize(
    ("label", "members", "where"), NO_TOOL_NAMED, ids=[case[0] for case in NO_TOOL_NAMED]
)
def test_a_call_naming_no_tool_is_named(
    client: Client, label: str, members: dict[str, Any], where: str
) -> None:
    """The SDK refused these with a bare -32602 ("Invalid request parameters", data "")."""
    request = {"jsonrpc": "2.0", "id": 23, "method": "tools/call", **members}
    client.send(json.dumps(request).encode())
    answer = client.answer()
    assert answer["id"] == 23 and "result" not in answer, answer
    error = answer["error"]
    assert error["code"] == INVALID_PARAMS and error["data"] == {"where": where}
    assert f"{where}: no tool" in error["message"] and "write_pdf, write_png" in error["message"]
    client.send(call(24, json.dumps({"content": "x", "path": "after.md"})))
    assert client.answer()["result"]["structuredContent"]["ok"] is True


@pytest.mark.slow
def test_a_render_past_the_memory_cap_is_an_envelope_and_the_server_carries_on(
    tmp_path: Path,
) -> None:
    """Tool calls render in a capped worker process: ten times the sample report with Typst
    (about 840 MiB) under a 400 MiB cap answers limit_exceeded; the next call renders."""
    samples = ROOT / "samples"
    report = (samples / "long-report.md").read_text(encoding="utf-8")
    pool = json.loads((samples / "long-report.pool.json").read_text(encoding="utf-8"))
    session = started(Client(tmp_path, "--max-worker-memory", "400"))
    try:
        big = {"content": "\n\n".join([report] * 10), "sources_pool": pool,
               "pdf_engine": "typst", "path": "big.pdf"}
        session.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                 "params": {"name": "write_pdf", "arguments": big}}).encode())
        refused = session.answer(180)["result"]
        assert refused["isError"] is True
        error = refused["structuredContent"]["error"]
        assert error["code"] == "limit_exceeded" and "400 MiB" in error["message"]
        assert "mcp --max-worker-memory" in error["message"]
        assert not (tmp_path / "big.pdf").exists()
        session.send(call(2, '{"content": "Still here.[[S:1]]", "path": "after.md", '
                             '"sources_pool": [{"sid": 1, "url": "https://e.org"}]}'))
        after = session.answer(120)["result"]
        assert after["isError"] is False, after
        assert "Still here." in (tmp_path / "after.md").read_text(encoding="utf-8")
    finally:
        session.close()


def test_a_line_past_the_limit_is_answered_and_the_next_one_read() -> None:
    """The wire reads at most ``max_line_bytes`` of a line; the rest is skipped unread into
    memory and the line answered with an invalid request. Lines end at ``\\n`` only."""
    from renderers.mcp_server import Wire

    ping = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    sent = b"".join([
        b'{"jsonrpc": "2.0", "id": 2, "method": "x", "params": {"a": "' + b"y" * 5000 + b'"}}\n',
        b"\n",
        ping.replace(b", ", b",\r", 1) + b"\r\n",  # a raw CR is white space between tokens
        b"z" * 100,  # the last line, unterminated and too long
    ])
    answers = io.BytesIO()
    wire = Wire(io.BytesIO(sent), answers, max_line_bytes=64)  # its writer closes `answers`

    async def read_all() -> list[str]:
        return [line async for line in wire]

    lines = anyio.run(read_all)
    assert [json.loads(line)["id"] for line in lines] == [1]
    refusals = [json.loads(line) for line in answers.getvalue().splitlines()]
    assert len(refusals) == 2
    for refused in refusals:
        assert refused["id"] is None and refused["error"]["code"] == INVALID_REQUEST
        assert "longer than 64 bytes" in refused["error"]["message"]


@pytest.mark.slow
def test_a_message_past_the_line_limit_is_answered_and_the_server_carries_on(
    client: Client,
) -> None:
    from renderers.mcp_server import MAX_LINE_BYTES

    content = "w " * (MAX_LINE_BYTES // 2)
    client.send(call(31, json.dumps({"content": content, "path": "huge.md"})))
    answer = client.answer(120)
    assert answer["id"] is None and answer["error"]["code"] == INVALID_REQUEST
    assert f"{MAX_LINE_BYTES:,} bytes" in answer["error"]["message"]
    client.send(call(32, json.dumps({"content": "x", "path": "after.md"})))
    assert client.answer()["result"]["structuredContent"]["ok"] is True


def test_a_tool_call_is_stopped_soon_after_the_longest_render_the_tools_take() -> None:
    """The tools take no ``limits``: every call renders within the default max_seconds, and
    one that does not stop by itself (stuck in C, where the deadline cannot interrupt it) is
    stopped soon after; it held the server, one call at a time, for a week."""
    from renderers import tool_process
    from renderers.options import Limits

    assert Limits().max_seconds < tool_process.hard_timeout_s() <= 2 * Limits().max_seconds


@pytest.mark.slow
def test_a_call_past_its_time_is_an_envelope_and_the_next_call_renders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from renderers import tool_process

    # 1 s for the long render only: the first call waits for the worker's warm-up, and the
    # last starts a fresh worker, either of which a loaded machine may take longer than that
    default = tool_process.hard_timeout_s
    timeouts = iter([default(), 1.0])
    monkeypatch.setattr(tool_process, "hard_timeout_s", lambda: next(timeouts, default()))
    long_report = "# Long\n\n" + "\n\n".join(
        f"Paragraph {i} " + "words " * 80 + "[[S:1]]" for i in range(2_500))
    pool = [{"sid": 1, "title": "Source", "url": "https://e.example/"}]

    async def calls() -> tuple[dict[str, Any], dict[str, Any]]:
        renders = tool_process.ToolProcess(setting="mcp --max-worker-memory")
        try:
            warm = await renders.call("write_markdown", {"content": "Warm.[[S:1]]",
                                                         "sources_pool": pool}, tmp_path)
            assert warm["ok"] is True, warm
            stopped = await renders.call("write_pdf", {"content": long_report,
                                                       "sources_pool": pool}, tmp_path)
            after = await renders.call("write_markdown", {"content": "Still here.[[S:1]]",
                                                          "sources_pool": pool}, tmp_path)
        finally:
            await renders.close()
        return stopped, after

    stopped, after = anyio.run(calls)
    assert stopped["ok"] is False, stopped
    assert stopped["error"]["code"] == "limit_exceeded"
    assert stopped["error"]["where"] == "limits.max_seconds"
    assert "did not stop within 1 s" in stopped["error"]["message"]
    assert after["ok"] is True and "Still here." in Path(after["path"]).read_text("utf-8")
