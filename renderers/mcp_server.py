"""citerender as an MCP server over stdio (official ``mcp`` SDK, low-level server).

Exposes the agent tools (write_pdf, write_docx, write_pptx, write_png, write_html,
write_markdown, audit_citations) with the schemas :func:`renderers.tools.tool_schemas` generates
for the ``mcp`` surface. Every file is written inside the output directory given at start; tool
results carry the envelope of :func:`renderers.tools.call_tool` both as JSON text and as
structured content. Tool arguments may also come as the JSON text of an object, as agents often
send them (:func:`arguments_as_object`), the way :func:`renderers.tools.call_tool` takes them.

Every request is answered. The SDK's stdio transport drops a line it cannot parse (not JSON,
not JSON-RPC, nested deeper than its parser's 255 levels, a lone surrogate): the client then
waits forever. :class:`Wire` checks each line first and answers such a line itself with a
JSON-RPC error (parse error, or invalid request with the request's id when it can be read);
a line that is not UTF-8 is a parse error too, never read with replacement characters;
a line past :data:`MAX_LINE_BYTES` is skipped unread into memory and answered too. A line
naming a key twice in one object, which the SDK would read last-wins, is answered there too
(invalid params inside ``params``, :func:`_duplicate_key`).

Tool calls render in a worker process of their own under a memory cap
(:mod:`renderers.tool_process`): a document too large for it answers a ``limit_exceeded``
envelope, and the server carries on.

Run: ``python -m renderers.mcp_server --out DIR`` (or ``citerender mcp --out DIR``).
"""

from __future__ import annotations

import argparse
import io
import json
import os
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, BinaryIO

import anyio
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from citations import json_keys
from renderers.errors import OptionError
from renderers.process_memory import DEFAULT_WORKER_MEMORY_MIB, MIN_WORKER_MEMORY_MIB
from renderers.tool_process import ToolProcess
from renderers.tools import call_tool, tool_arguments, tool_schemas, unknown_tool_message

SERVER_NAME = "citerender"
INSTRUCTIONS = (
    "Render cited markdown or HTML into PDF, DOCX, PPTX, PNG, HTML or Markdown. Cite with "
    "[[S:1]], [[S:1,3]] or [[S:2-4]] and pass the sources as sources_pool rows "
    "({sid, title, url, published_at}) — or pass your model's raw cited response (OpenAI, "
    "Anthropic, Perplexity, Gemini, LangChain, LlamaIndex) as 'answer' instead of content. "
    "Files are written inside the server's output directory; give 'path' as a name relative "
    "to it."
)
#: The option that sets the render process's memory cap, as a refusal names it.
MEMORY_SETTING = "mcp --max-worker-memory"
#: Deepest JSON nesting the SDK's parser (pydantic-core) accepts.
MAX_DEPTH = 255
#: Longest line (one JSON-RPC message) read. Parsed, a line takes about five times its size;
#: this admits the largest content a tool takes (``limits.max_content_bytes``, 20 MiB) even
#: with every character escaped as ``\uXXXX``, and a large pool beside it.
MAX_LINE_BYTES = 128 * 1024 * 1024
_SKIP_CHUNK = 1 << 20


def _tools() -> list[types.Tool]:
    return [
        types.Tool(name=s["name"], description=s["description"], input_schema=s["parameters"])
        for s in tool_schemas("mcp")
    ]


async def arguments_as_object(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext
) -> HandlerResult:
    """``tools/call`` arguments sent as JSON text become the object they spell; a call
    naming no tool is a -32602 naming ``name`` (or ``params``) and listing the tools.

    Agents often send the arguments stringified; the SDK validates ``arguments`` as an object
    before any handler runs and refuses text with a bare -32602 that names nothing. This SDK
    middleware runs before that validation: the text of an object goes on as the object (the
    rule is :func:`renderers.tools.tool_arguments`, as on every surface); anything else is
    the same -32602, saying that ``arguments`` must be an object and why it is not one.
    """
    params = ctx.params
    if ctx.method != "tools/call":
        return await call_next(ctx)
    if params is None or not isinstance(params.get("name"), str):
        where = "params" if params is None else "name"
        message = f"invalid params: {where}: {unknown_tool_message((params or {}).get('name'))}"
        raise MCPError(types.INVALID_PARAMS, message, {"where": where})
    if _is_object(params.get("arguments")):
        return await call_next(ctx)
    try:
        arguments = tool_arguments(params["arguments"])
    except OptionError as exc:
        message = f"invalid params: {exc}"
        raise MCPError(types.INVALID_PARAMS, message, {"where": exc.field}) from None
    return await call_next(replace(ctx, params={**params, "arguments": arguments}))


def _is_object(arguments: object) -> bool:
    """Whether the SDK takes ``arguments`` as they are (an object, or none at all)."""
    return arguments is None or isinstance(arguments, dict)


def build_server(out_dir: str | Path, *, renders: ToolProcess | None = None) -> Server[Any]:
    """The MCP server writing into ``out_dir`` (created if missing). ``renders``: the process
    tool calls run in (:class:`~renderers.tool_process.ToolProcess`, as the stdio server
    does); None: in this process."""
    root = Path(out_dir).resolve()
    root.mkdir(parents=True, exist_ok=True)
    lock = anyio.Lock()  # one render at a time: the writers are not meant to share a process

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=_tools())

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        async with lock:  # call_tool never raises: every failure is an envelope
            if renders is not None:
                envelope = await renders.call(params.name, params.arguments or {}, root)
            else:
                envelope = await anyio.to_thread.run_sync(
                    lambda: call_tool(params.name, params.arguments or {}, out_dir=root)
                )
        return types.CallToolResult(
            content=[types.TextContent(text=json.dumps(envelope, ensure_ascii=False))],
            structured_content=envelope,
            is_error=not envelope.get("ok", False),
        )

    server: Server[Any] = Server(
        SERVER_NAME,
        version="0.1.0",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=on_call_tool,
    )
    server.middleware.append(arguments_as_object)  # inside the SDK's tracing middleware
    return server


# ---------------------------------------------------------------- the stdio wire


def refusal(line: str) -> str | None:
    """The JSON-RPC error answering ``line``, or None when the SDK can read it."""
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except Exception:  # pydantic's ValidationError, whatever the reason
        pass
    else:
        if isinstance(message, types.JSONRPCNotification) and _has_id(line):
            return _error(None, types.INVALID_REQUEST, "invalid request: an id must be a "
                          "string or an integer")
        return _duplicate_key(line)
    request_id: str | int | None = None
    try:
        message = json.loads(line)
    except RecursionError:
        code, text = types.INVALID_REQUEST, f"the request nests deeper than {MAX_DEPTH} levels"
    except ValueError as exc:
        code, text = types.PARSE_ERROR, f"parse error: not valid JSON ({exc})"
    else:
        request_id = _request_id(message)
        code, text = types.INVALID_REQUEST, _why_invalid(message)
    return _error(request_id, code, text)


def _not_utf8(raw: bytes, exc: UnicodeDecodeError) -> str:
    """The parse error answering a line that is not UTF-8 (read with replacement characters,
    a Latin-1 ``café`` rendered as ``caf\ufffd``), with the request's id if it can be read."""
    try:
        request_id = _request_id(json.loads(raw.decode("utf-8", errors="replace")))
    except (ValueError, RecursionError):
        request_id = None
    return _error(request_id, types.PARSE_ERROR, f"parse error: not UTF-8 at byte {exc.start}; "
                  "accepted: JSON-RPC messages in UTF-8, one per line")


def _duplicate_key(line: str) -> str | None:
    """The error answering a message that names one key twice in an object, or None.

    The SDK's parser keeps the last value, so ``{"format": "pdf", "format": "docx"}`` in a
    tool's arguments would render whichever came last: a client's bug, answered here as
    invalid params (inside ``params``) or an invalid request (the envelope), naming the path.
    """
    try:
        json_keys.loads(line)
    except json_keys.DuplicateKeyError as exc:
        request_id = None if exc.path == ("id",) else _request_id(json.loads(line))
        if exc.path[0] == "params" and len(exc.path) > 1:  # named from params, as the SDK does
            where = ".".join(exc.shown_path[1:])
            return _error(request_id, types.INVALID_PARAMS,
                          f"invalid params: {where}: {exc.reason}", {"where": where})
        return _error(request_id, types.INVALID_REQUEST, f"invalid request: {exc}")
    return None


def _error(
    request_id: str | int | None, code: int, text: str, data: dict[str, str] | None = None
) -> str:
    body: dict[str, Any] = {"code": code, "message": text}
    if data is not None:
        body["data"] = data
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": body}, ensure_ascii=True)


def _has_id(line: str) -> bool:
    """Whether a notification carries an ``id`` member (one the SDK could not read as an id)."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(message, dict) and "id" in message


def _request_id(message: object) -> str | int | None:
    """The request's id when it is usable in an answer (a string without surrogates, an int)."""
    if not isinstance(message, dict):
        return None
    value = message.get("id")
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**53:
        return value
    if isinstance(value, str) and _clean(value):
        return value
    return None


def _clean(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _why_invalid(message: object) -> str:
    """Why a JSON value is not a request the server can read (walked without recursion)."""
    stack: list[tuple[object, int]] = [(message, 1)]
    deepest, surrogate = 0, False
    while stack:
        value, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(value, dict):
            surrogate |= not all(_clean(str(k)) for k in value)
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
        elif isinstance(value, str):
            surrogate |= not _clean(value)
    if surrogate:
        return "invalid request: a string holds a lone surrogate (not valid Unicode)"
    if deepest > MAX_DEPTH:
        return f"invalid request: nested deeper than {MAX_DEPTH} levels"
    return "invalid request: not a JSON-RPC 2.0 request, notification or response"


class Wire:
    """The stdio transport's two ends: lines in (bad ones answered here), JSON-RPC lines out.

    Passed to the SDK's ``stdio_server`` as both ``stdin`` and ``stdout``; writes are whole
    lines under one lock, so an answer written here never interleaves with the SDK's. A line
    longer than ``max_line_bytes`` is skipped in chunks and answered with an invalid request
    (read whole, a 1 GB line took the server past 5 GB).
    """

    def __init__(
        self, reader: BinaryIO, writer: BinaryIO, *, max_line_bytes: int = MAX_LINE_BYTES
    ) -> None:
        self._in = reader
        self._out = anyio.wrap_file(io.TextIOWrapper(writer, encoding="utf-8", errors="replace"))
        self._lock = anyio.Lock()
        self.max_line_bytes = max_line_bytes

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        while raw := await self._readline(self.max_line_bytes + 1):
            if len(raw) > self.max_line_bytes and not raw.endswith(b"\n"):
                while (rest := await self._readline(_SKIP_CHUNK)) and not rest.endswith(b"\n"):
                    pass
                answer: str | None = _error(
                    None, types.INVALID_REQUEST, f"invalid request: a message longer than "
                    f"{self.max_line_bytes:,} bytes; accepted: one JSON-RPC message per line, "
                    "at most that long")
            else:
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    answer = _not_utf8(raw, exc)
                else:
                    if not line.strip():
                        continue
                    answer = refusal(line)
                    if answer is None:
                        yield line
                        continue
            await self.write(f"{answer}\n")
            await self.flush()

    async def _readline(self, limit: int) -> bytes:
        return await anyio.to_thread.run_sync(self._in.readline, limit)

    async def write(self, text: str) -> None:
        async with self._lock:
            await self._out.write(text)

    async def flush(self) -> None:
        async with self._lock:
            await self._out.flush()


@contextmanager
def claimed_stdio() -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """The wire as private copies of fds 0 and 1; while serving, fd 0 reads the null device
    and fd 1 writes to stderr, so stray output of a library never corrupts the protocol."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    # closefd=False: a reading thread may still block on the wire when serving ends.
    reader = os.fdopen(wire_in, "rb", closefd=False)
    writer = os.fdopen(wire_out, "wb", closefd=False)
    try:
        yield reader, writer
    finally:
        writer.flush()
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)


async def serve_stdio(out_dir: str | Path, memory_mib: int | None = None) -> None:
    """Serve one MCP session over this process's stdin/stdout; tool calls render in a worker
    process capped at ``memory_mib`` MiB (:class:`~renderers.tool_process.ToolProcess`), started
    once stdout is claimed, so nothing the worker prints reaches the wire."""
    renders = ToolProcess(memory_mib, setting=MEMORY_SETTING)
    server = build_server(out_dir, renders=renders)
    with claimed_stdio() as (reader, writer):
        wire = Wire(reader, writer)
        try:
            async with stdio_server(stdin=wire, stdout=wire) as (  # type: ignore[arg-type]
                read_stream,
                write_stream,
            ):
                await server.run(read_stream, write_stream,
                                 server.create_initialization_options())
        finally:
            await renders.close()


def run_stdio(out_dir: str | Path, memory_mib: int | None = None) -> None:
    """Blocking entry point used by ``citerender mcp --out DIR``."""
    anyio.run(serve_stdio, out_dir, memory_mib)


def _memory_mib(text: str) -> int:
    """``--max-worker-memory``: an integer of at least :data:`MIN_WORKER_MEMORY_MIB`."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of MiB") from None
    if value < MIN_WORKER_MEMORY_MIB:
        raise argparse.ArgumentTypeError(f"{value} MiB: at least {MIN_WORKER_MEMORY_MIB}")
    return value


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m renderers.mcp_server --out DIR``."""
    parser = argparse.ArgumentParser(
        prog="python -m renderers.mcp_server",
        description="citerender MCP server (stdio); files are written inside --out only.",
    )
    parser.add_argument("--out", required=True, help="output directory for rendered files")
    parser.add_argument("--max-worker-memory", type=_memory_mib, metavar="MIB", default=None,
                        help=f"memory cap of the render process in MiB (at least "
                             f"{MIN_WORKER_MEMORY_MIB}; default: {DEFAULT_WORKER_MEMORY_MIB}, "
                             "lowered to 80%% of the machine's or container's memory)")
    args = parser.parse_args(argv)
    run_stdio(args.out, args.max_worker_memory)


if __name__ == "__main__":
    main()
