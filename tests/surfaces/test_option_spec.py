"""The option spec reaches every surface: each field is offered by the CLI, the agent tools,
MCP, the HTTP service and the API — and arrives there with the value given — or is excluded on
that surface with a written reason and really absent from it."""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from renderers import cli, cli_options
from renderers.api import RenderResult, render
from renderers.errors import OptionError
from renderers.formats import FORMATS
from renderers.options import (
    LIMIT_PARAMETERS,
    PARAMETERS,
    PARAMS,
    SURFACES,
    Limits,
    Param,
    ReadingOptions,
    RenderOptions,
    accepted_options,
    build_options,
    read_options,
)
from renderers.service.app import REQUEST_SCHEMA, JobOutcome, RenderJob, create_app
from renderers.tools import TOOL_FORMATS, TOOL_SCHEMAS, call_tool, tool_schemas

ROOT = Path(__file__).resolve().parents[2]
POOL = [{"sid": 1, "title": "One", "url": "https://example.org/"}]
IDS = [p.name for p in PARAMETERS]


def sample(param: Param, tmp_path: Path) -> Any:
    """A valid value of ``param`` that is not its default."""
    match param.kind:
        case "text":
            return param.info.example or "Spec value"
        case "flag":
            return not param.default
        case "integer":
            low = param.info.minimum if param.info.minimum is not None else 0
            return low if low != param.default else low + 1
        case "choice":
            return next(c for c in param.choices if c != param.default)
        case "choices":
            return frozenset(param.choices[:1])
        case "pages":
            return (2,)
        case "path":
            target = tmp_path / f"{param.name}.bin"
            target.write_bytes(b"x")
            return target.resolve() if param.info.must_exist else tmp_path.resolve()
        case _:
            return Limits(max_pages=7)


def as_json(value: Any) -> Any:
    return (
        sorted(value)
        if isinstance(value, frozenset)
        else list(value)
        if isinstance(value, tuple)
        else value
    )


def arrived(param: Param, kwargs: dict[str, Any]) -> Any:
    """What the API makes of ``kwargs`` for ``param`` (coerced through the spec)."""
    if param.owner is ReadingOptions:
        reading = {k: v for k, v in kwargs.items() if k in ("content_format", "dialects")}
        return getattr(read_options(**reading), param.name)
    names = {f.name for f in dataclasses.fields(RenderOptions)}
    return getattr(build_options(**{k: v for k, v in kwargs.items() if k in names}), param.name)


def cli_args(param: Param, value: Any) -> list[str]:
    flag = cli_options.flags(param)[0]
    match param.kind:
        case "flag":
            return [flag if value else f"--no-{flag.removeprefix('--')}"]
        case "choices":
            return [flag, ",".join(sorted(value))]
        case "pages":
            return [flag, ",".join(str(p) for p in value)]
        case "limits":
            return ["--max-pages", str(value.max_pages)]
        case _:
            return [flag, str(value)]


# ---------------------------------------------------------------- the spec itself


def test_every_field_is_declared_with_help_formats_and_reasons() -> None:
    declared = {p.name for p in PARAMETERS}
    assert {f.name for f in dataclasses.fields(RenderOptions)} <= declared
    for param in (*PARAMETERS, *LIMIT_PARAMETERS):
        assert len(param.help) > 8, param.name
        assert param.info.formats and set(param.info.formats) <= set(FORMATS), param.name
        for surface, reason in param.info.excluded.items():
            assert surface in SURFACES and len(reason) > 20, (param.name, surface)
        assert param.offered_on("api"), f"{param.name}: the API is the reference surface"


# ---------------------------------------------------------------- CLI


@pytest.fixture(scope="module")
def render_help() -> str:
    env = {**os.environ, "COLUMNS": "220"}
    command = [sys.executable, "-m", "renderers.cli", "render", "--help"]
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("param", PARAMETERS, ids=IDS)
def test_cli(
    param: Param, render_help: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flag = cli_options.flags(param)[0]
    if not param.offered_on("cli"):
        assert f" {flag} " not in render_help
        return
    if param.kind == "limits":
        for limit in LIMIT_PARAMETERS:
            assert f" {cli_options.flags(limit)[0]} " in render_help, limit.name
    else:
        assert f" {flag} " in render_help
    jobs: list[cli.Job] = []
    monkeypatch.setattr(cli, "run_batch", lambda batch, *_: jobs.extend(batch) or [])
    (tmp_path / "in.md").write_text("Hi.[[S:1]]\n", encoding="utf-8")
    (tmp_path / "pool.json").write_text(json.dumps(POOL), encoding="utf-8")
    value = sample(param, tmp_path)
    fmt = next(f for f in FORMATS if param.used_by(f))
    result = CliRunner().invoke(cli.app, [
        "render", str(tmp_path / "in.md"), "--pool", str(tmp_path / "pool.json"),
        "--to", fmt, "--out", str(tmp_path / "out"), *cli_args(param, value),
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    (job,) = jobs
    kwargs = {**job.kwargs, "content_format": job.content_format}
    assert arrived(param, kwargs) == value


BOUNDED = [
    p for p in (*PARAMETERS, *LIMIT_PARAMETERS)
    if p.offered_on("cli") and (p.kind == "choice" or (p.kind == "integer" and p.info.maximum))
]  # fmt: skip


@pytest.mark.parametrize("param", BOUNDED, ids=[p.name for p in BOUNDED])
def test_a_bad_cli_value_is_refused_in_the_specs_words(
    param: Param, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Out-of-range numbers and unknown choices get the same message every surface gives
    (``--dpi: dpi=5: accepted range is 10..600``), not click's wording."""
    (tmp_path / "in.md").write_text("Hi.[[S:1]]\n", encoding="utf-8")
    (tmp_path / "pool.json").write_text(json.dumps(POOL), encoding="utf-8")
    bad = "no-such-value" if param.kind == "choice" else str((param.info.maximum or 0) + 1)
    flag = cli_options.flags(param)[0]
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["render", str(tmp_path / "in.md"), "--pool", str(tmp_path / "pool.json"),
                  "--to", "md", "--out", str(tmp_path / "out"), flag, bad])
    assert exit_info.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    name = param.name if param.owner is not Limits else f"limits.{param.name}"
    accepted = "accepted values are" if param.kind == "choice" else "accepted range is"
    shown = repr(bad) if param.kind == "choice" else bad
    assert line.startswith(f"citerender: error: {flag}: {name}={shown}: {accepted}"), line
    assert not (tmp_path / "out").exists()


def test_cli_choices_are_read_as_the_spec_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Case and aliases as the spec folds them; the job carries the value named."""
    jobs: list[cli.Job] = []
    monkeypatch.setattr(cli, "run_batch", lambda batch, *_: jobs.extend(batch) or [])
    (tmp_path / "in.md").write_text("Hi.[[S:1]]\n", encoding="utf-8")
    (tmp_path / "pool.json").write_text(json.dumps(POOL), encoding="utf-8")
    result = CliRunner().invoke(cli.app, [
        "render", str(tmp_path / "in.md"), "--pool", str(tmp_path / "pool.json"), "--to", "html",
        "--out", str(tmp_path / "out"), "--page-size", "letter", "--from", "MD",
        "--highlight-style", "Pygments",
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    (job,) = jobs
    assert job.content_format == "markdown"
    assert job.kwargs["page_size"] == "Letter" and job.kwargs["highlight_style"] == "default"


# ---------------------------------------------------------------- agent tools and MCP


@pytest.mark.parametrize("param", PARAMETERS, ids=IDS)
def test_tools_and_mcp(param: Param, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from renderers import mcp_server  # the MCP SDK: a second to import, only here and in MCP tests

    listed = {tool.name: tool.input_schema for tool in mcp_server._tools()}
    assert listed == {s["name"]: s["parameters"] for s in tool_schemas("mcp")}
    for surface, schemas in (
        ("tool", {s["name"]: s["parameters"] for s in TOOL_SCHEMAS}),
        ("mcp", listed),
    ):
        for tool, fmt in TOOL_FORMATS.items():
            offered = param.name in schemas[tool]["properties"]
            assert offered == (param.offered_on(surface) and param.used_by(fmt)), (surface, tool)
    if not param.offered_on("tool"):
        return
    captured: dict[str, Any] = {}

    def fake_render(content: str, out_dir: Path, **kwargs: Any) -> list[RenderResult]:
        captured.update(kwargs)
        return [RenderResult(out_dir / "x", "md", [], [], {})]

    monkeypatch.setattr("renderers.api.render", fake_render)
    value = sample(param, tmp_path)
    tool = next(t for t, fmt in TOOL_FORMATS.items() if param.used_by(fmt))
    envelope = call_tool(tool, {"content": "x", param.name: as_json(value)}, out_dir=tmp_path)
    assert envelope["ok"] is True, envelope
    assert arrived(param, captured) == value


# ---------------------------------------------------------------- HTTP service


def echo_job(job: RenderJob) -> JobOutcome:
    """Worker job answering the render keyword arguments it was given, as a JSON file."""
    path = Path(job.out_dir) / "document.md"
    path.write_text(json.dumps(job.kwargs, default=sorted), encoding="utf-8")
    return JobOutcome(ok=True, paths=[str(path)])


@pytest.fixture(scope="module")
def echo_client() -> Iterator[TestClient]:
    with TestClient(create_app(workers=1, warmup=False, job=echo_job)) as client:
        yield client


@pytest.mark.parametrize("param", PARAMETERS, ids=IDS)
def test_service(param: Param, tmp_path: Path, echo_client: TestClient) -> None:
    properties = REQUEST_SCHEMA["properties"]
    if not param.offered_on("service"):
        assert param.name not in properties
        return
    assert param.name in properties
    value = sample(param, tmp_path)
    fmt = next(f for f in FORMATS if param.used_by(f))
    response = echo_client.post("/render", json={
        "content": "x", "format": fmt, param.name: as_json(value),
    })  # fmt: skip
    assert response.status_code == 200, response.text
    assert arrived(param, response.json()) == value


# ---------------------------------------------------------------- API


@pytest.mark.parametrize("param", PARAMETERS, ids=IDS)
def test_api(param: Param, tmp_path: Path) -> None:
    keywords = set(inspect.signature(render).parameters) | set(accepted_options())
    assert param.name in keywords
    value = sample(param, tmp_path)
    assert arrived(param, {param.name: value}) == value


def test_the_readme_lists_every_cli_option() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for param in (*PARAMETERS, *LIMIT_PARAMETERS):
        if param.offered_on("cli") and param.kind != "limits":
            assert f"`{cli_options.flags(param)[0]}" in readme, param.name
            assert f"`{param.name}`" in readme or param.owner is Limits, param.name


def test_the_readmes_option_table_gives_each_options_formats_and_surfaces() -> None:
    """A row's "formats" and "not offered on" columns say what the spec says."""
    rows = {}
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        if found := re.fullmatch(r"\| `(\w+)` \| .* \| ([^|]+) \| ([^|]+) \|", line.strip()):
            rows[found[1]] = (found[2].strip(), found[3].strip())
    for param in PARAMETERS:
        formats, not_offered = rows[param.name]
        spec = "all" if set(param.info.formats) == set(FORMATS) else ", ".join(param.info.formats)
        assert formats == spec, param.name
        remote = [s for s in SURFACES if s != "cli" and not param.offered_on(s)]
        assert (not_offered == "—") == (not remote), param.name


@pytest.mark.parametrize("blank", ["", "   ", "\t\n"])
def test_a_blank_sources_heading_is_the_languages_word_on_every_surface(
    blank: str, tmp_path: Path, echo_client: TestClient
) -> None:
    """Markdown fell back to "## Sources" while HTML and PDF wrote an empty heading. Blank
    text is now the option left out, as for ``title`` and ``lang``: one rule for every
    surface and format, the heading in the document's language (renderers.resolve)."""
    assert build_options(sources_heading=blank).sources_heading == ""
    german = render("x [[S:1]]", tmp_path / "api", sources_pool=POOL, formats=["md", "html"],
                    sources_heading=blank, lang="de")
    md, html = (result.path.read_text("utf-8") for result in german)
    assert "\n## Quellen\n" in md and ">Quellen</h2>" in html and "Sources" not in md + html
    envelope = call_tool("write_markdown", {"content": "x [[S:1]]", "sources_pool": POOL,
                                            "sources_heading": blank}, out_dir=tmp_path / "tool")
    assert envelope["ok"] is True, envelope
    assert "\n## Sources\n" in Path(envelope["path"]).read_text("utf-8")
    answer = echo_client.post("/render", json={"content": "x", "format": "md",
                                               "sources_heading": blank})
    assert answer.status_code == 200, answer.text
    assert arrived(PARAMS["sources_heading"], answer.json()) == ""
    (tmp_path / "x.md").write_text("x [[S:1]]\n", encoding="utf-8")
    (tmp_path / "pool.json").write_text(json.dumps(POOL), encoding="utf-8")
    done = CliRunner().invoke(cli.app, [
        "render", str(tmp_path / "x.md"), "--pool", str(tmp_path / "pool.json"), "--to", "md",
        "--out", str(tmp_path / "cli"), "--sources-heading", blank, "--lang", "es"])
    assert done.exit_code == 0, done.output
    assert "\n## Fuentes\n\n[^1]:" in (tmp_path / "cli" / "x.md").read_text("utf-8")
    assert build_options(sources_heading="  Quellen ").sources_heading == "Quellen"


def test_a_malformed_language_tag_is_refused_on_every_surface(tmp_path: Path) -> None:
    """``lang`` is checked by the spec's own rule (a BCP 47 tag), so every surface refuses
    ``english`` naming the option and what is accepted, and accepts ``zh-hant`` as
    ``zh-Hant``."""
    accepted = "accepted: a BCP 47 language tag such as en, ar, ja, zh-Hant, pt-BR"
    with pytest.raises(OptionError, match=f"lang='english': not a language tag; {accepted}"):
        render("x [[S:1]]", tmp_path, sources_pool=POOL, formats=["html"], lang="english")
    envelope = call_tool("write_html", {"content": "x", "lang": "english"}, out_dir=tmp_path)
    assert envelope["ok"] is False and envelope["error"]["where"] == "lang"
    assert accepted in envelope["error"]["message"]
    with TestClient(create_app(workers=1, warmup=False)) as client:  # the API checks it
        answer = client.post("/render", json={"content": "x", "format": "html",
                                              "lang": "english"})
    assert answer.status_code == 400 and answer.json()["field"] == "lang"
    assert accepted in answer.json()["error"]
    done = CliRunner().invoke(cli.app, ["render", "x.md", "--lang", "english"])
    assert done.exit_code == 2 and "--lang" in done.stderr and accepted in done.stderr
    assert not list(tmp_path.iterdir())
    assert build_options(lang=" zh-hant ").lang == "zh-Hant"


def test_an_error_names_a_flag_on_by_default_as_it_was_typed() -> None:
    """``--no-source-footer`` given, an error named ``--source-footer``: a flag nobody typed."""
    assert cli_options.flag_for("source_footer", False) == "--no-source-footer"
    assert cli_options.flag_for("source_footer", True) == "--source-footer"
    assert cli_options.flag_for("limits.max_pages", 3) == "--max-pages"
    assert cli_options.flag_for("no_such_option") is None
