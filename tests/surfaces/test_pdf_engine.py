"""``pdf_engine`` on every surface: the CLI flag, the agent tools, the service's request and
worker job and its export page; each PDF and PNG record names the engine that typeset it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pypdf import PdfReader
from typer.testing import CliRunner

from renderers import cli
from renderers.service.app import RenderJob, render_job
from renderers.service.requests import RequestProblem, parse_render_request
from renderers.tools import call_tool

POOL = [{"sid": 1, "title": "A source", "url": "https://example.org/a"}]
CONTENT = "# Note\n\nClaim [[S:1]].\n"


def records(out: Path) -> dict[str, dict[str, object]]:
    data = json.loads((out / "sources_used.json").read_text("utf-8"))
    return {record["filename"]: record for record in data}


def creator(pdf: Path) -> str:
    meta = PdfReader(pdf).metadata
    assert meta is not None
    return str(meta.creator)


def test_the_cli_takes_pdf_engine(tmp_path: Path) -> None:
    source = tmp_path / "note.md"
    source.write_text(CONTENT, "utf-8")
    (tmp_path / "note.pool.json").write_text(json.dumps(POOL), "utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli.app, ["render", str(source), "--out", str(out), "--to",
                                          "pdf,png", "--pdf-engine", "typst"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert records(out)["note.pdf"]["engine"] == "typst"
    assert records(out)["note.png"]["engine"] == "typst"
    assert creator(out / "note.pdf").startswith("Typst")
    bad = CliRunner().invoke(cli.app, ["render", str(source), "--pdf-engine", "latex"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output
    assert "weasyprint" in bad.output and "typst" in bad.output


@pytest.mark.parametrize("tool", ["write_pdf", "write_png"])
def test_agent_tools_take_pdf_engine(tmp_path: Path, tool: str) -> None:
    name = "q.pdf" if tool == "write_pdf" else "q.png"
    envelope = call_tool(tool, {"content": CONTENT, "path": name, "sources_pool": POOL,
                                "pdf_engine": "typst"}, out_dir=tmp_path)  # fmt: skip
    assert envelope["ok"] is True, envelope
    assert records(tmp_path)[name]["engine"] == "typst"
    refused = call_tool(tool, {"content": "x", "path": name, "pdf_engine": "latex"},
                        out_dir=tmp_path)  # fmt: skip
    assert refused["ok"] is False and refused["error"]["where"] == "pdf_engine"


def test_the_service_request_and_worker_take_pdf_engine(tmp_path: Path) -> None:
    request = parse_render_request({"content": CONTENT, "format": "pdf", "sources_pool": POOL,
                                    "pdf_engine": "typst"})  # fmt: skip
    assert request.kwargs["pdf_engine"] == "typst"
    outcome = render_job(RenderJob(request.content, str(tmp_path), request.format,
                                   request.kwargs))  # fmt: skip
    assert outcome.ok, outcome
    (path,) = (Path(p) for p in outcome.paths)
    assert creator(path).startswith("Typst")
    with pytest.raises(RequestProblem, match="pdf_engine"):
        parse_render_request({"content": CONTENT, "format": "pdf", "pdf_engine": "latex"})


def test_the_export_page_offers_the_engine() -> None:
    templates = Path(__file__).resolve().parents[2] / "templates" / "service"
    page = (templates / "index.html").read_text("utf-8")
    assert '<select id="pdf-engine"' in page
    assert '<option value="weasyprint">' in page and '<option value="typst">' in page
    script = (templates / "app.js").read_text("utf-8")
    assert 'body.pdf_engine = $("pdf-engine").value' in script
