"""The MCP server driven by the official SDK's own stdio client."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from renderers.tools import tool_schemas
from tests.helpers import pdf_text

ROOT = Path(__file__).resolve().parents[2]


async def _session_run(out_dir: Path, pool: list[dict[str, Any]]) -> dict[str, Any]:
    # imported here: the SDK's client takes about a second to import, which every xdist
    # worker paid at collection though only this slow test uses it
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "renderers.mcp_server", "--out", str(out_dir)],
        cwd=str(ROOT),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        written = await session.call_tool("write_pdf", {
            "content": "# MCP report\n\nCited through MCP.[[S:2]] And again.[[S:1,2]]\n",
            "sources_pool": pool, "path": "reports/mcp.pdf",
        })
        escaped = await session.call_tool("write_pdf", {"content": "x", "path": "../esc.pdf"})
        return {"tools": listed.tools, "written": written, "escaped": escaped}


@pytest.mark.slow
def test_stdio_round_trip(tmp_path: Path, sample_pool: list[dict[str, Any]]) -> None:
    out_dir = tmp_path / "out"
    result = anyio.run(_session_run, out_dir, sample_pool)

    by_name = {tool.name: tool for tool in result["tools"]}
    assert set(by_name) == {schema["name"] for schema in tool_schemas("mcp")}
    for schema in tool_schemas("mcp"):
        assert by_name[schema["name"]].input_schema == schema["parameters"]

    written = result["written"]
    assert written.is_error is False
    envelope = json.loads(written.content[0].text)
    assert envelope == written.structured_content
    assert envelope["ok"] is True and envelope["sources_used"] == [2, 1]
    path = Path(envelope["path"])
    assert path.resolve() == (out_dir / "reports" / "mcp.pdf").resolve()
    text = pdf_text(path)
    assert "Cited through MCP" in text and "Renewable Capacity Statistics" in text

    escaped = result["escaped"]
    assert escaped.is_error is True
    assert escaped.structured_content["error"]["code"] == "invalid_path"
    assert not (tmp_path / "esc.pdf").exists()
