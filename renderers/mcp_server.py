"""citerender as an MCP server over stdio (official ``mcp`` SDK, low-level server).

Exposes :data:`renderers.tools.TOOL_SCHEMAS` (write_pdf, write_docx, write_pptx, write_png,
write_html, write_markdown, audit_citations) with exactly those schemas. Every file is written
inside the output directory given at start; tool results carry the envelope of
:func:`renderers.tools.call_tool` both as JSON text and as structured content.

Run: ``python -m renderers.mcp_server --out DIR`` (or ``citerender mcp --out DIR``).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from renderers.tools import TOOL_SCHEMAS, call_tool

SERVER_NAME = "citerender"
INSTRUCTIONS = (
    "Render cited markdown or HTML into PDF, DOCX, PPTX, PNG, HTML or Markdown. Cite with "
    "[[S:1]], [[S:1,3]] or [[S:2-4]] and pass the sources as sources_pool rows "
    "({sid, title, url, published_at}) — or pass your model's raw cited response (OpenAI, "
    "Anthropic, Perplexity, Gemini, LangChain, LlamaIndex) as 'answer' instead of content. "
    "Files are written inside the server's output directory; give 'path' as a name relative "
    "to it."
)


def _tools() -> list[types.Tool]:
    return [
        types.Tool(name=s["name"], description=s["description"], input_schema=s["parameters"])
        for s in TOOL_SCHEMAS
    ]


def build_server(out_dir: str | Path) -> Server[Any]:
    """The MCP server writing into ``out_dir`` (created if missing)."""
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
        async with lock:
            try:
                envelope = await anyio.to_thread.run_sync(
                    lambda: call_tool(params.name, params.arguments or {}, out_dir=root)
                )
            except Exception as exc:  # a bug, but the agent still gets a readable answer
                envelope = {"ok": False, "error": {
                    "code": "internal_error", "message": f"{type(exc).__name__}: {exc}",
                    "where": "",
                }}
        return types.CallToolResult(
            content=[types.TextContent(text=json.dumps(envelope, ensure_ascii=False))],
            structured_content=envelope,
            is_error=not envelope.get("ok", False),
        )

    return Server(
        SERVER_NAME,
        version="0.1.0",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=on_call_tool,
    )


async def serve_stdio(out_dir: str | Path) -> None:
    """Serve one MCP session over this process's stdin/stdout."""
    server = build_server(out_dir)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run_stdio(out_dir: str | Path) -> None:
    """Blocking entry point used by ``citerender mcp --out DIR``."""
    anyio.run(serve_stdio, out_dir)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m renderers.mcp_server --out DIR``."""
    parser = argparse.ArgumentParser(
        prog="python -m renderers.mcp_server",
        description="citerender MCP server (stdio); files are written inside --out only.",
    )
    parser.add_argument("--out", required=True, help="output directory for rendered files")
    args = parser.parse_args(argv)
    run_stdio(args.out)


if __name__ == "__main__":
    main()
