"""The ``citerender`` command: render (single and batch), audit, demo, exit codes, errors."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from renderers import cli
from renderers.api import available_formats
from tests.helpers import pdf_text
from tests.support.cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
CITERENDER = ROOT / ".venv" / "bin" / "citerender"
POOL = [
    {
        "sid": 1,
        "title": "Global EV Outlook 2024",
        "url": "https://www.iea.org/reports/global-ev-outlook-2024",
    },
    {
        "sid": 2,
        "title": "Battery price survey",
        "url": "https://about.bnef.com/blog/battery-prices/",
    },
    {"sid": 3, "title": "Pilot results", "artifact_path": "attachments/pilot.xlsx"},
]
REPORT = "# Storage note\n\nPrices fell.[[S:2]] EV sales rose.[[S:1,3]]\n\n`[[S:9]]` is code.\n"


def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "pool.json").write_text(json.dumps(POOL), encoding="utf-8")
    (tmp_path / "note.md").write_text(REPORT, encoding="utf-8")
    (tmp_path / "other.md").write_text("# Other\n\nOnly one source.[[S:1]]\n", encoding="utf-8")
    return tmp_path


def assert_one_line_error(stderr: str, *needles: str) -> None:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("citerender: error: ")
    for needle in needles:
        assert needle in lines[0]
    assert "Traceback" not in stderr


# ---------------------------------------------------------------- render


def test_render_several_formats(workspace: Path) -> None:
    out = workspace / "out"
    result = runner().invoke(
        cli.app,
        [
            "render",
            str(workspace / "note.md"),
            "--pool",
            str(workspace / "pool.json"),
            "--to",
            "md,html",
            "--out",
            str(out),
            "--title",
            "Storage",
        ],
    )
    assert result.exit_code == 0, result.output
    md = (out / "note.md").read_text(encoding="utf-8")
    assert "Prices fell.[^1] EV sales rose.[^2][^3]" in md and "`[[S:9]]`" in md
    assert 'href="#src-1"' in (out / "note.html").read_text(encoding="utf-8")
    # plain lines (not a tty) name each file written, then the summary table
    assert f"{workspace / 'note.md'} → {(out / 'note.md').resolve()}" in result.stdout
    assert "Sources cited" in result.stdout
    records = {r["filename"]: r for r in json.loads((out / "sources_used.json").read_text())}
    assert set(records) == {"note.md", "note.html"}
    assert records["note.md"]["sids"] == [2, 1, 3]
    assert (
        records["note.md"]["sha256"] == hashlib.sha256((out / "note.md").read_bytes()).hexdigest()
    )



def test_repeated_to_options_add_up(workspace: Path) -> None:
    """``-t md -t html,md`` writes both formats (a repeated option once kept only its last)."""
    out = workspace / "out"
    result = runner().invoke(cli.app, ["render", str(workspace / "note.md"), "--pool",
                                       str(workspace / "pool.json"), "-t", "md", "-t", "html,md",
                                       "--out", str(out)])
    assert result.exit_code == 0, result.output
    records = json.loads((out / "sources_used.json").read_text())
    assert sorted(r["filename"] for r in records) == ["note.html", "note.md"]
    assert not (out / "note.pdf").exists()

def test_file_names_are_shown_as_written(workspace: Path) -> None:
    """Brackets and colons in a file name are not console markup or emoji codes."""
    name = "draft [red]v2 :smile:.md"
    (workspace / name).write_text(REPORT, encoding="utf-8")
    out = workspace / "out [bold]"
    result = runner().invoke(cli.app, ["render", str(workspace / name), "--pool",
                                       str(workspace / "pool.json"), "--to", "md", "--name",
                                       "draft", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "draft.md").is_file()
    assert f"{workspace / name} → {(out / 'draft.md').resolve()}" in result.stdout
    table = result.stdout[result.stdout.index("Sources cited"):]
    assert "[red]v2" in table and ":smile:" in table and "😄" not in result.stdout


def test_render_pdf_and_png_with_options(workspace: Path) -> None:
    if "png" not in available_formats():
        pytest.skip("PNG writer not installed")
    out = workspace / "out"
    result = runner().invoke(
        cli.app,
        [
            "render",
            str(workspace / "note.md"),
            "-p",
            str(workspace / "pool.json"),
            "-t",
            "pdf,png",
            "-o",
            str(out),
            "--name",
            "brief",
            "--page-size",
            "Letter",
            "--dpi",
            "40",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Prices fell." in pdf_text(out / "brief.pdf")
    assert (out / "brief.png").read_bytes().startswith(b"\x89PNG")


def test_pool_found_next_to_the_input(workspace: Path) -> None:
    (workspace / "note.pool.json").write_text(json.dumps(POOL), encoding="utf-8")
    result = runner().invoke(
        cli.app,
        ["render", str(workspace / "note.md"), "--to", "md", "--out", str(workspace / "out")],
    )
    assert result.exit_code == 0, result.output
    assert (workspace / "out" / "note.md").is_file()


@pytest.mark.slow
def test_batch_in_parallel_processes_with_plain_progress(workspace: Path) -> None:
    proc = run_cli(
        "render",
        "note.md",
        "other.md",
        "--pool",
        "pool.json",
        "--to",
        "md",
        "-j",
        "2",
        "--out",
        "build",
        cwd=workspace,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    for stem in ("note", "other"):
        written = (workspace / "build" / f"{stem}.md").resolve()
        assert written.is_file()
        assert f"{stem}.md → {written}" in lines
    assert "\x1b[" not in proc.stdout  # no terminal control codes when not a tty
    summary = proc.stdout[proc.stdout.index("Sources cited") :]
    assert "note.md" in summary and "other.md" in summary
    records = json.loads((workspace / "build" / "sources_used.json").read_text())
    assert sorted(r["filename"] for r in records) == ["note.md", "other.md"]


def test_warnings_are_printed_once_per_file_and_strict_fails(workspace: Path) -> None:
    (workspace / "bad.md").write_text("One[[S:42]] two[[S:42]] three[[S:0]]\n", encoding="utf-8")
    args = [
        "render",
        str(workspace / "bad.md"),
        "--pool",
        str(workspace / "pool.json"),
        "--to",
        "md",
        "--out",
        str(workspace / "out"),
    ]
    result = runner().invoke(cli.app, args)
    assert result.exit_code == 0, result.output
    warnings = [
        line for line in result.stderr.splitlines() if line.startswith("citerender: warning")
    ]
    assert len(warnings) == len(set(warnings)) == 2
    assert any("42" in w for w in warnings) and any("[[S:0]]" in w for w in warnings)

    strict = runner().invoke(cli.app, [*args, "--strict"])
    assert strict.exit_code == 1
    assert "42" in strict.stderr and "Traceback" not in strict.output


RENDER_TIME_ERRORS: list[tuple[str, list[str], int, str]] = [
    ("overwrite", ["--to", "md", "--out", "{dir}"], 2, "would replace the input file"),
    ("bad csl", ["--to", "md", "--csl", "nope"], 2, "csl='nope'"),
    ("sidecar not JSON", ["--to", "md", "--from", "sidecar"], 2, "is not valid JSON"),
    ("strict", ["--to", "md", "--strict"], 1, "unknown sids"),
]


@pytest.mark.parametrize(
    ("case", "extra", "code", "needle"), RENDER_TIME_ERRORS, ids=[c[0] for c in RENDER_TIME_ERRORS]
)
def test_an_input_that_failed_at_render_time_is_one_line_without_a_table(
    workspace: Path, case: str, extra: list[str], code: int, needle: str
) -> None:
    """Errors found while rendering printed the error line plus a summary table marking the
    file failed; with nothing rendered the documented one line is the whole output."""
    (workspace / "bad.md").write_text("Cited.[[S:1]] Unknown.[[S:42]]\n", encoding="utf-8")
    extra = [arg.replace("{dir}", str(workspace)) for arg in extra]
    if "--out" not in extra:
        extra += ["--out", str(workspace / "out")]
    result = runner().invoke(cli.app, [
        "render", str(workspace / "bad.md"), "--pool", str(workspace / "pool.json"), *extra,
    ])  # fmt: skip
    assert result.exit_code == code, result.output
    assert result.stdout == ""
    assert_one_line_error(result.stderr, needle)


def test_a_batch_with_a_rendered_file_keeps_its_table(workspace: Path) -> None:
    (workspace / "bad.md").write_text("Unknown.[[S:42]]\n", encoding="utf-8")
    result = runner().invoke(cli.app, [
        "render", str(workspace / "note.md"), str(workspace / "bad.md"), "--pool",
        str(workspace / "pool.json"), "--to", "md", "--out", str(workspace / "out"), "--strict",
    ])  # fmt: skip
    assert result.exit_code == 1
    assert "Formats" in result.stdout and "failed" in result.stdout


def test_a_huge_sid_in_html_is_a_warning_not_an_error(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "sup.html").write_text(
        f'<p>Hi <sup class="cite" data-sids="{"9" * 5000}">x</sup></p>', encoding="utf-8"
    )
    args = ["render", str(workspace / "sup.html"), "--pool", str(workspace / "pool.json")]
    with pytest.raises(SystemExit) as exit_info:
        cli.main([*args, "--to", "md", "--out", str(workspace / "out")])
    assert exit_info.value.code == 0
    stderr = capsys.readouterr().err
    assert "is too large (at most 2147483647); kept as text" in stderr
    assert "integer string conversion" not in stderr
    # kept as the superscript the PDF shows, not as a citation
    assert (workspace / "out" / "sup.md").read_text(encoding="utf-8").startswith("Hi <sup>x</sup>")


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("pool_text", "needle"),
    [
        (None, "not found"),
        ("{not json", "not valid JSON"),
        ('[{"title": "no sid here"}]', "sid"),
    ],
)
def test_bad_pool_exits_2_with_one_line(
    workspace: Path, pool_text: str | None, needle: str
) -> None:
    pool = workspace / "broken.json"
    if pool_text is not None:
        pool.write_text(pool_text, encoding="utf-8")
    result = runner().invoke(
        cli.app,
        [
            "render",
            str(workspace / "note.md"),
            "--pool",
            str(pool),
            "--to",
            "md",
            "--out",
            str(workspace / "out"),
        ],
    )
    assert result.exit_code == 2
    assert_one_line_error(result.stderr, str(pool), needle)
    assert not (workspace / "out").exists()


def test_bad_pool_in_a_real_process(workspace: Path) -> None:
    (workspace / "broken.json").write_text("{not json", encoding="utf-8")
    proc = run_cli("render", "note.md", "--pool", "broken.json", "--to", "md", cwd=workspace)
    assert proc.returncode == 2
    assert_one_line_error(proc.stderr, "broken.json", "not valid JSON")
    assert proc.stdout == ""


@pytest.mark.parametrize(
    ("setup", "args", "needles"),
    [
        (None, ["missing.md", "--to", "md"], ["missing.md", "no such file"]),
        ("bytes", ["latin1.md", "--to", "md"], ["latin1.md", "UTF-8"]),
        (None, ["note.md", "--to", "gif"], ["--to", "'gif'"]),
        (None, ["note.md", "other.md", "--name", "x", "--to", "md"], ["--name"]),
        (None, ["note.md", "--to", "md", "--name", "../escape"], ["'..' is refused"]),
        (None, ["note.md", "--to", "md", "--name", ""], ["--name", "output name is empty"]),
        (None, ["note.md", "--to", "md", "--name", "  "], ["--name", "output name is empty"]),
        (None, ["note.md", "--to", "md", "--store", "s3://x"], ["--store", "--broker"]),
        (None, ["note.md", "--to", "md", "--out", "pool.json"], ["pool.json", "not a directory"]),
        (None, ["note.md", "--to", "docx", "--reference-docx", "nope.docx"], ["nope.docx"]),
    ],
)
def test_bad_input_exits_2_with_one_line(
    workspace: Path,
    setup: str | None,
    args: list[str],
    needles: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if setup == "bytes":
        (workspace / "latin1.md").write_bytes(b"caf\xe9 [[S:1]]\n")
    monkeypatch.chdir(workspace)
    result = runner().invoke(cli.app, ["render", "--pool", "pool.json", "--out", "out", *args])
    assert result.exit_code == 2, result.output
    assert_one_line_error(result.stderr, *needles)
    assert not (workspace / "out").exists() or not any((workspace / "out").iterdir())


# ---------------------------------------------------------------- audit


def test_audit_json_keys_and_exit_codes(workspace: Path) -> None:
    (workspace / "clean.md").write_text("All good.[[S:1]] And this.[[S:2, 3]]\n", encoding="utf-8")
    ok = runner().invoke(
        cli.app,
        ["audit", str(workspace / "clean.md"), "--pool", str(workspace / "pool.json"), "--json"],
    )
    assert ok.exit_code == 0, ok.output
    report = json.loads(ok.stdout)
    assert set(report) == {
        "cited_sids",
        "unknown_sids",
        "usage_sids",
        "in_code_sids",
        "in_raw_html_sids",
        "not_rendered_sids",
        "orphaned_sids",
        "invalid_tokens",
        "numbers",
        "coverage",
        "contiguous",
        "ok",
    }
    assert report["ok"] is True and report["cited_sids"] == [1, 2, 3]

    problems = runner().invoke(
        cli.app,
        ["audit", str(workspace / "note.md"), "--pool", str(workspace / "pool.json"), "--json"],
    )
    assert problems.exit_code == 1
    assert json.loads(problems.stdout)["in_code_sids"] == [9]

    human = runner().invoke(
        cli.app, ["audit", str(workspace / "note.md"), "--pool", str(workspace / "pool.json")]
    )
    assert human.exit_code == 1 and "{" not in human.stdout.splitlines()[0]


def test_audit_bad_input_exits_2(workspace: Path) -> None:
    (workspace / "nosid.json").write_text('[{"title": "x"}]', encoding="utf-8")
    result = runner().invoke(
        cli.app, ["audit", str(workspace / "note.md"), "--pool", str(workspace / "nosid.json")]
    )
    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "nosid.json")
    missing = runner().invoke(
        cli.app, ["audit", str(workspace / "gone.md"), "--pool", str(workspace / "pool.json")]
    )
    assert missing.exit_code == 2
    assert_one_line_error(missing.stderr, "gone.md", "no such file")


# ---------------------------------------------------------------- demo and help


def test_samples_are_complete() -> None:
    samples = cli.sample_inputs(SAMPLES)
    names = {path.name for path, _ in samples}
    assert names >= {
        "research-report.md",
        "briefing.html",
        "multilingual.md",
        "long-report.md",
        "slides.md",
        "agent-answer.md",
    }
    pools = {pool.name for _, pool in samples}
    assert "multilingual.pool.yaml" in pools
    assert "sources_pool" in json.loads((SAMPLES / "briefing.pool.json").read_text())
    assert (SAMPLES / "assets" / "chart.png").read_bytes().startswith(b"\x89PNG")
    sidecar = json.loads((SAMPLES / "agent-answer.sidecar.json").read_text())
    assert sidecar["_citations"]


def test_long_report_is_reproducible(tmp_path: Path) -> None:
    script = (SAMPLES / "make_long_report.py").read_text(encoding="utf-8")
    copy = tmp_path / "make_long_report.py"
    copy.write_text(script, encoding="utf-8")
    subprocess.run([sys.executable, str(copy)], check=True, capture_output=True, timeout=120)
    for name in ("long-report.md", "long-report.pool.json"):
        assert (tmp_path / name).read_bytes() == (SAMPLES / name).read_bytes(), name
    text = (SAMPLES / "long-report.md").read_text(encoding="utf-8")
    assert len(text.split()) > 24_000 and text.count("[[S:") >= 500


def test_demo_renders_every_sample(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("renderers.formats.available_formats", lambda: ("md", "html"))
    out = tmp_path / "demo"
    result = runner().invoke(cli.app, ["demo", "--out", str(out), "--jobs", "1"])
    assert result.exit_code == 0, result.output
    records = {r["filename"] for r in json.loads((out / "sources_used.json").read_text())}
    for sample, _ in cli.sample_inputs(SAMPLES):
        for ext in ("md", "html"):
            written = out / f"{sample.stem}.{ext}"
            assert written.is_file() and written.name in records
            assert written.name in result.stdout  # the listing says where each file is
    assert "[^1]" in (out / "research-report.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_demo_every_format_in_a_real_process(tmp_path: Path) -> None:
    proc = run_cli("demo", "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for sample, _ in cli.sample_inputs(SAMPLES):
        for fmt in available_formats():
            pattern = f"{sample.stem}*.{fmt}"
            assert list((tmp_path / "out").glob(pattern)), pattern


def test_help_shows_examples() -> None:
    for command in ("render", "audit", "serve", "mcp", "demo"):
        result = runner().invoke(cli.app, [command, "--help"])
        assert result.exit_code == 0
        assert "Examples" in result.stdout and "citerender " + command in result.stdout


def test_audit_help_names_every_finding_that_exits_1(workspace: Path) -> None:
    """The help said exit 1 meant unknown sids, invalid tokens or citations in code; raw HTML
    and tokens render does not cite (not_rendered_sids) fail the audit too."""
    import re

    text = " ".join(runner().invoke(cli.app, ["audit", "--help"]).stdout.split())
    text = re.sub(r"[│╭╮╰╯─]", "", text)
    for needle in ("unknown sids", "invalid tokens", "in code", "raw HTML", "link's URL",
                   "formula", "not_rendered_sids"):
        assert needle in text, needle
    (workspace / "raw.md").write_text("Cited.[[S:1]] <span title=\"[[S:2]]\">x</span>\n",
                                      encoding="utf-8")
    result = runner().invoke(cli.app, ["audit", str(workspace / "raw.md"), "--pool",
                                       str(workspace / "pool.json"), "--json"])
    assert result.exit_code == 1 and json.loads(result.stdout)["in_raw_html_sids"] == [2]


def test_progress_bar_on_a_terminal(workspace: Path) -> None:
    stream = io.StringIO()
    console = Console(file=stream, force_terminal=True, width=100)
    job = cli.Job(
        input=str(workspace / "note.md"),
        pool=str(workspace / "pool.json"),
        out=str(workspace / "out"),
        name=None,
        formats=("md", "html"),
        content_format=None,
    )
    [outcome] = cli.run_batch([job], 1, console)
    assert outcome.formats == ["md", "html"] and not outcome.error
    shown = stream.getvalue()
    assert "all files" in shown and "2/2" in shown
    assert "→" not in shown  # no plain lines when a progress bar is shown


def test_serve_and_mcp_reach_their_entry_points(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[object, ...]] = []
    monkeypatch.setattr("renderers.service.app.serve",
                        lambda *args, **kwargs: calls.append(("serve", *args, kwargs)))
    monkeypatch.setattr("renderers.mcp_server.run_stdio",
                        lambda out, memory=None: calls.append(("mcp", out, memory)))
    served = runner().invoke(cli.app, ["serve", "--port", "9123", "--workers", "2"])
    assert served.exit_code == 0, served.output
    capped = runner().invoke(cli.app, ["serve", "--max-worker-memory", "1024"])
    assert capped.exit_code == 0, capped.output
    too_small = runner().invoke(cli.app, ["serve", "--max-worker-memory", "100"])
    assert too_small.exit_code == 2 and "--max-worker-memory" in too_small.output
    mcp = runner().invoke(cli.app, ["mcp", "--out", str(tmp_path / "tools")])
    assert mcp.exit_code == 0, mcp.output
    capped_mcp = runner().invoke(cli.app, ["mcp", "--out", str(tmp_path / "tools"),
                                           "--max-worker-memory", "2048"])
    assert capped_mcp.exit_code == 0, capped_mcp.output
    defaults = {"broker": None, "store": None, "webhook_hosts": (), "worker_memory_mib": None}
    assert calls == [("serve", "127.0.0.1", 9123, 2, defaults),
                     ("serve", "127.0.0.1", 8000, None, {**defaults, "worker_memory_mib": 1024}),
                     ("mcp", tmp_path / "tools", None), ("mcp", tmp_path / "tools", 2048)]
    assert (tmp_path / "tools").is_dir()


@pytest.mark.parametrize("case", ["port in use", "unknown host", "store without broker"])
def test_serve_refuses_in_one_line_before_any_worker_starts(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A port in use or a host that does not resolve is exit 2 with one line naming host:port
    (it was uvicorn's logged [Errno 98] and exit 3, after the workers had started); a --store
    without --broker would be used by no worker, so it is refused too."""
    import socket

    started: list[object] = []
    monkeypatch.setattr("renderers.service.server.run", lambda *a, **k: started.append(a))
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    args, needles = {
        "port in use": (["--port", str(port)],
                        [f"127.0.0.1:{port}: cannot listen", "in use", "--port"]),
        "unknown host": (["--host", "999.1.1.1"], ["999.1.1.1:8000: cannot listen", "--host"]),
        "store without broker": (["--store", "s3://x"], ["--store", "--broker"]),
    }[case]
    try:
        result = runner().invoke(cli.app, ["serve", "--workers", "1", *args])
    finally:
        holder.close()
    assert result.exit_code == 2, result.output
    assert_one_line_error(result.stderr, *needles)
    assert started == []  # never reached uvicorn, so no worker process was started


def test_importing_the_cli_leaves_the_collector_as_it_was() -> None:
    """The CLI tunes the collector only while a render runs (batch_gc): a program that
    imports it keeps its own thresholds, its collector on or off, and what it froze frozen
    (the import pauses collection and moves what it loaded to the oldest generation)."""
    for code in (
        "import gc; gc.set_threshold(700, 10, 10); import renderers.cli; "
        "assert gc.get_threshold() == (700, 10, 10), gc.get_threshold(); "
        "assert gc.isenabled() and gc.get_freeze_count() == 0",
        "import gc; gc.disable(); import renderers.cli; assert not gc.isenabled()",
        "import gc; gc.freeze(); import renderers.cli; assert gc.get_freeze_count() > 0",
    ):
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                       timeout=120, cwd=Path(__file__).resolve().parents[2])


def test_only_the_command_that_runs_is_built() -> None:
    """``main`` hands typer an app holding just the command its arguments name (typer builds a
    click command of every registered function before parsing); anything else gets the whole
    app, whose help and suggestions list every command. ``app`` itself is left whole."""
    names = [cli._command_name(info) for info in cli.app.registered_commands]
    for name in names:
        only = cli.command_only([name, "--help"])
        assert only is not None
        assert [cli._command_name(info) for info in only.registered_commands] == [name]
        assert only.registered_groups == []
    pool = cli.command_only(["pool", "add", "x.json"])
    assert pool is not None and pool.registered_commands == []
    assert [group.name for group in pool.registered_groups] == ["pool"]
    for args in ([], ["--help"], ["rendr"], ["--bogus", "render"]):
        assert cli.command_only(args) is None
    assert [cli._command_name(info) for info in cli.app.registered_commands] == names
    assert "render" in names and "audit" in names and len(names) >= 5


def test_a_command_built_alone_parses_and_fails_as_in_the_whole_app(tmp_path: Path) -> None:
    """Usage errors keep the group's one-line form and exit code; help names the full path."""
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["render", str(tmp_path / "x.md"), "--bogus"])
    assert exit_info.value.code == 2
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["pool", "bogus"])
    assert exit_info.value.code == 2


@pytest.mark.slow
def test_a_typst_pdf_render_imports_no_other_engine_or_surface(tmp_path: Path) -> None:
    """A ``render --to pdf --pdf-engine typst`` process loads neither WeasyPrint nor the DOCX
    and PPTX libraries, the service, the MCP server, the workers nor filelock (flock is
    taken by :mod:`citations.locking`): each would cost the CLI's start-up time for nothing."""
    (tmp_path / "note.md").write_text("A note.[[S:1]]\n", encoding="utf-8")
    (tmp_path / "note.pool.json").write_text(json.dumps(POOL), encoding="utf-8")
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: print(*sorted(sys.modules), file=sys.stderr))\n"
        "from renderers.cli import main\n"
        "main()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, "render", "note.md", "--to", "pdf", "--pdf-engine",
         "typst", "--out", "out"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out" / "note.pdf").read_bytes().startswith(b"%PDF-")
    loaded = set(proc.stderr.split())
    assert "typst" in loaded and "renderers.writers.typst.writer" in loaded
    avoided = ("weasyprint", "docx", "pptx", "filelock", "starlette", "uvicorn", "mcp",
               "celery", "renderers.service", "renderers.mcp_server", "renderers.writers.pdf",
               "renderers.workers.execute")
    assert sorted(m for m in loaded if any(m == a or m.startswith(a + ".") for a in avoided)) == []
