"""The CLI never prints a traceback: odd inputs and usage errors are one line and exit code 2."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from renderers import cli

ROOT = Path(__file__).resolve().parents[2]
POOL = [{"sid": 1, "title": "Grid study", "url": "https://example.org/grid"}]


def run(args: list[str | bytes], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """``citerender ARGS`` in a real process (bytes arguments reach argv unchanged)."""
    env = {**os.environ, "COLUMNS": "100"}
    command: list[str | bytes] = [sys.executable, "-m", "renderers.cli", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, env=env, timeout=300, check=False)


def one_error_line(stderr: bytes | str, *needles: str) -> str:
    text = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else stderr
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    assert lines[0].startswith("citerender: error: "), text
    assert "Traceback" not in text
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def write_workspace(directory: Path) -> Path:
    (directory / "in.md").write_text("# Note\n\nGrid costs fell.[[S:1]]\n", encoding="utf-8")
    (directory / "pool.json").write_text(json.dumps(POOL), encoding="utf-8")
    return directory


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return write_workspace(tmp_path)


@pytest.fixture(scope="module")
def good_packages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The workspace's ``in.md`` as DOCX and PPTX from one real process: the packages the
    template tests damage (one process, not one per test)."""
    directory = write_workspace(tmp_path_factory.mktemp("good"))
    made = run(["render", "in.md", "--pool", "pool.json", "--to", "docx,pptx", "--out", "base"],
               directory)
    assert made.returncode == 0, made.stderr
    return {fmt: (directory / "base" / f"in.{fmt}").read_bytes() for fmt in ("docx", "pptx")}


DEEP = "[" * 100_000 + "]" * 100_000
BAD_POOLS = {
    "5,000-digit sid": '[{"sid": ' + "7" * 5000 + ', "title": "x"}]',
    "nested 100,000 deep": DEEP,
    "row field nested 100,000 deep": '[{"sid": 1, "title": "x", "extra": ' + DEEP + "}]",
}


@pytest.mark.parametrize("text", BAD_POOLS.values(), ids=list(BAD_POOLS))
def test_hostile_pools(workspace: Path, text: str) -> None:
    (workspace / "bad.json").write_text(text, encoding="utf-8")
    proc = run(["render", "in.md", "--pool", "bad.json", "--to", "md"], workspace)
    assert proc.returncode == 2
    one_error_line(proc.stderr, "bad.json")
    assert not (workspace / "out").exists()


def test_input_file_name_that_is_not_utf8(workspace: Path) -> None:
    name = b"r\xe9sum\xe9.md"
    (workspace / os.fsdecode(name)).write_text("Hi.[[S:1]]\n", encoding="utf-8")
    proc = run(["render", name, "--pool", "pool.json", "--to", "md"], workspace)
    assert proc.returncode == 2
    one_error_line(proc.stderr, "not valid UTF-8", "--name")
    named = run(
        ["render", name, "--pool", "pool.json", "--to", "md", "--name", "resume"], workspace
    )
    assert named.returncode == 0, named.stderr
    assert (workspace / "out" / "resume.md").is_file()


def broken_package(source: bytes, part: str, data: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(source)) as original, zipfile.ZipFile(buffer, "w") as out:
        for info in original.infolist():
            out.writestr(info.filename, data if info.filename == part else original.read(info))
    return buffer.getvalue()


@pytest.mark.parametrize("fmt", ["docx", "pptx"])
@pytest.mark.parametrize("damage", ["content types", "not a zip", "empty"])
def test_broken_reference_templates(
    workspace: Path, good_packages: dict[str, bytes], fmt: str, damage: str
) -> None:
    good = good_packages[fmt]
    template = workspace / f"template.{fmt}"
    template.write_bytes(
        {
            "content types": broken_package(good, "[Content_Types].xml", b"<Types><oops"),
            "not a zip": b"PK\x03\x04 this is not a package",
            "empty": b"",
        }[damage]
    )
    proc = run(
        [
            "render",
            "in.md",
            "--pool",
            "pool.json",
            "--to",
            fmt,
            f"--reference-{fmt}",
            template.name,
        ],
        workspace,
    )
    assert proc.returncode == 2
    one_error_line(proc.stderr, template.name)


def test_reference_docx_with_an_entity_bomb_is_harmless(
    workspace: Path, good_packages: dict[str, bytes]
) -> None:
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa">'
        + b"".join(
            b'<!ENTITY %s "%s">' % (chr(98 + i).encode(), (b"&" + chr(97 + i).encode() + b";") * 10)
            for i in range(8)
        )
        + b']><w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/'
        b'main">&i;</w:styles>'
    )
    (workspace / "bomb.docx").write_bytes(
        broken_package(good_packages["docx"], "word/styles.xml", bomb)
    )
    proc = run(
        ["render", "in.md", "--pool", "pool.json", "--to", "docx", "--reference-docx", "bomb.docx"],
        workspace,
    )
    assert proc.returncode in (0, 2)
    assert b"Traceback" not in proc.stderr
    if proc.returncode == 2:
        one_error_line(proc.stderr, "bomb.docx")


USAGE_ERRORS: list[tuple[list[str], str]] = [
    (["render", "in.md", "--bogus"], "--bogus"),
    (["render", "in.md", "--dpi", "high"], "--dpi"),
    (["render"], "INPUT"),
    (["audit"], "INPUT"),
    (["rendr", "in.md"], "rendr"),
    (["render", "in.md", "--pool"], "--pool"),
]


@pytest.mark.parametrize(
    ("args", "needle"), USAGE_ERRORS, ids=[" ".join(a) for a, _ in USAGE_ERRORS]
)
def test_usage_errors_are_one_line(workspace: Path, args: list[str], needle: str) -> None:
    result = CliRunner().invoke(cli.app, args)
    assert result.exit_code == 2
    line = one_error_line(result.stderr, needle)
    assert "╭" not in line and "--help" in line


def test_usage_error_in_a_real_process(workspace: Path) -> None:
    proc = run(["render", "in.md", "--slide-ratio", "21:9"], workspace)
    assert proc.returncode == 2
    assert proc.stdout == b""
    one_error_line(proc.stderr, "--slide-ratio")


SPEC_REFUSALS: list[tuple[list[str], str]] = [
    (["--pages", "3-1"], "--pages: pages='3-1': expected 1-based page numbers"),
    (["--numbering", "random"], "--numbering: numbering='random': accepted values are"),
    (["--dpi", "5"], "--dpi: dpi=5: accepted range is 10..600"),
    (["--page-size", "A3"], "--page-size: page_size='A3': accepted values are 'A4', 'Letter'"),
]


@pytest.mark.parametrize(
    ("args", "needle"), SPEC_REFUSALS, ids=[" ".join(a) for a, _ in SPEC_REFUSALS]
)
def test_option_values_refused_by_the_spec_name_the_flag(
    workspace: Path, args: list[str], needle: str
) -> None:
    result = CliRunner().invoke(
        cli.app,
        ["render", str(workspace / "in.md"), "--pool", str(workspace / "pool.json"), *args],
    )
    assert result.exit_code == 2
    one_error_line(result.stderr, needle)


def test_a_bug_is_one_line_too(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr(cli, "check_options", broken)
    result = CliRunner().invoke(
        cli.app, ["render", str(workspace / "in.md"), "--pool", str(workspace / "pool.json")]
    )
    assert result.exit_code == 2
    one_error_line(result.stderr, "internal error", "KeyError")


def test_help_is_not_an_error() -> None:
    result = CliRunner().invoke(cli.app, ["render", "--help"])
    assert result.exit_code == 0 and "--reference-pptx" in result.stdout


@pytest.mark.parametrize(
    ("make", "args", "needle"),
    [
        (lambda ws: (ws / "mark").mkdir(), ["render", "mark"], "error: mark: not a file"),
        (lambda ws: (ws / "a").mkdir(), ["render", "a"], "error: a: not a file"),
        (lambda ws: (ws / "new\nline.md").mkdir(), ["render", "new\nline.md"],
         "error: new\\nline.md: not a file"),
        (lambda ws: None, ["render", "in.md", "--out", "x" * 300], "x" * 300 + ": "),
        (lambda ws: None, ["pool", "add", "reg.json", ""], "error: '': "),
    ],
    ids=["name-inside-the-message", "one-letter-name", "line-break-in-name", "long-out",
         "empty-tool-output"],
)
def test_every_error_names_its_file_on_one_line(
    workspace: Path, make: Any, args: list[str], needle: str
) -> None:
    """The file at fault leads the line, even when its name also occurs in the message or
    holds a line break, and when the system's own error does not name it."""
    make(workspace)
    proc = run([*args, "--pool", "pool.json"] if args[0] == "render" else args, workspace)
    assert proc.returncode == 2
    one_error_line(proc.stderr, needle)


@pytest.mark.slow
def test_a_refused_stylesheet_resource_is_reported_once(workspace: Path) -> None:
    """The PDF writer's refusal reaches stderr as the one warning line, not also as a bare
    log record (Python's last-resort handler printed one before it)."""
    (workspace / "st.html").write_text(
        "<html><head><style>body{background:url(/etc/hostname)}</style></head>"
        "<body><p>x</p></body></html>", encoding="utf-8")
    proc = run(["render", "st.html", "--pool", "pool.json", "--to", "pdf"], workspace)
    assert proc.returncode == 0
    lines = [line for line in proc.stderr.decode().splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("citerender: warning: st.html: pdf: resource not loaded: ")
