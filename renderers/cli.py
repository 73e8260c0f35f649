"""The ``citerender`` command (typer + rich): render, audit, serve, mcp and demo.

Exit codes: 0 success; 1 audit problems or a ``--strict`` failure; 2 bad usage or bad input,
reported as one line naming the file and the problem — never a traceback for user error.

Start-up time counts (one render is one process): everything a command or a format does not
always need — writers, process pools, rich's progress bar, the server — is imported where used.
"""

from __future__ import annotations

import gc
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from citations.errors import CitationError
from renderers.errors import RenderError, StrictError

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID
    from rich.table import Table

EXIT_OK, EXIT_PROBLEMS, EXIT_BAD_INPUT = 0, 1, 2
POOL_SUFFIXES = (".pool.json", ".pool.yaml", ".pool.yml")
INPUT_SUFFIXES = (".md", ".markdown", ".html", ".htm")
#: Errors that are the user's input, not a bug: reported in one line, exit code 2 (and
#: ``yaml.YAMLError`` once a YAML pool has loaded yaml, see :func:`is_user_error`).
USER_ERRORS: tuple[type[BaseException], ...] = (
    CitationError,
    RenderError,
    OSError,
    UnicodeDecodeError,
    json.JSONDecodeError,
)

RENDER_EXAMPLES = """[bold]Examples[/bold]

  [cyan]citerender render report.md --pool pool.json[/cyan]             → out/report.pdf
  [cyan]citerender render report.md --pool pool.json --to pdf,docx,md --out build[/cyan]
  [cyan]citerender render docs/*.md --pool pool.json --to all -j 2[/cyan]   a batch, two processes
  [cyan]citerender render briefing.html --pool pool.yaml --to png --dpi 150[/cyan]
  [cyan]citerender render notes.md --pool pool.json --numbering sid --strict[/cyan]

Without --pool, [i]STEM.pool.json[/i] (or .pool.yaml) next to each input is used.
PNG pages are written as STEM.png (one page) or STEM-1.png, STEM-2.png …
"""
AUDIT_EXAMPLES = """[bold]Examples[/bold]

  [cyan]citerender audit report.md --pool pool.json[/cyan]
  [cyan]citerender audit answer.html --pool pool.yaml --json | jq .unknown_sids[/cyan]

Exit code 0: every citation resolves; 1: unknown sids, invalid tokens or citations in code;
2: the input or the pool cannot be read.
"""
SERVE_EXAMPLES = """[bold]Examples[/bold]

  [cyan]citerender serve[/cyan]                            http://127.0.0.1:8000/ (export page)
  [cyan]citerender serve --port 9000 --workers 2[/cyan]
  [cyan]curl -X POST localhost:8000/render -H 'content-type: application/json' \\
       -d '{"content": "Hi [[S:1]]", "sources_pool": [{"sid": 1, "url": "https://iea.org"}], \\
            "format": "pdf"}' -o report.pdf[/cyan]
"""
MCP_EXAMPLES = """[bold]Examples[/bold]

  [cyan]citerender mcp --out ~/reports[/cyan]     an MCP stdio server; register it with your agent:
  {"mcpServers": {"citerender":
      {"command": ".venv/bin/citerender", "args": ["mcp", "--out", "out"]}}}
"""
DEMO_EXAMPLES = """[bold]Examples[/bold]

  [cyan]citerender demo[/cyan]                  every sample in samples/ to every format, into out/
  [cyan]citerender demo --out /tmp/demo[/cyan]
"""

app = typer.Typer(
    name="citerender",
    help=(
        "Render markdown or HTML that cites a sources pool into PDF, PNG, DOCX, PPTX, HTML and "
        "Markdown with linked citations, a Sources section and [i]sources_used.json[/i]."
    ),
    rich_markup_mode="rich",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class Numbering(StrEnum):
    appearance = "appearance"
    sid = "sid"


class InputFormat(StrEnum):
    markdown = "markdown"
    html = "html"


class PageSize(StrEnum):
    A4 = "A4"
    Letter = "Letter"


# ---------------------------------------------------------------- errors at the boundary


class BadInput(Exception):
    """A user error already phrased for one line of output."""

    def __init__(self, where: str, message: str, code: int = EXIT_BAD_INPUT) -> None:
        super().__init__(message)
        self.where = where
        self.message = message
        self.code = code


def one_line(where: str, message: str) -> str:
    """``citerender: error: FILE: problem`` on a single line."""
    text = " ".join(str(message).split()) or "failed"
    if where and where not in text:
        text = f"{where}: {text}"
    return f"citerender: error: {text}"


def describe(exc: BaseException) -> str:
    """A readable one-line description of a user error."""
    if isinstance(exc, UnicodeDecodeError):
        return f"not valid UTF-8 (byte {exc.start}); save the file as UTF-8"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def is_user_error(exc: BaseException) -> bool:
    """Whether ``exc`` is the user's input (yaml is imported only when a YAML pool is read)."""
    if isinstance(exc, USER_ERRORS):
        return True
    yaml = sys.modules.get("yaml")
    return yaml is not None and isinstance(exc, yaml.YAMLError)


def exit_code_for(exc: BaseException) -> int:
    return EXIT_PROBLEMS if isinstance(exc, StrictError) else EXIT_BAD_INPUT


@contextmanager
def user_errors(where: str) -> Iterator[None]:
    """Turn user errors raised inside the block into :class:`BadInput` about ``where``."""
    try:
        yield
    except BadInput:
        raise
    except Exception as exc:
        if not is_user_error(exc):
            raise
        raise BadInput(where, describe(exc), exit_code_for(exc)) from exc


def fail(where: str, message: str, code: int = EXIT_BAD_INPUT) -> typer.Exit:
    print(one_line(where, message), file=sys.stderr)
    return typer.Exit(code)


# ---------------------------------------------------------------- inputs and pools


def find_pool(input_path: Path) -> Path | None:
    """``STEM.pool.json`` / ``.pool.yaml`` / ``.pool.yml`` next to ``input_path``, if any."""
    for suffix in POOL_SUFFIXES:
        candidate = input_path.with_name(input_path.stem + suffix)
        if candidate.is_file():
            return candidate
    return None


def check_pool(path: Path) -> None:
    """Load ``path`` once so a bad pool fails before any rendering (BadInput naming it)."""
    from citations.pool import SourcePool

    with user_errors(str(path)):
        SourcePool.load(path)


def check_out_dir(path: Path) -> None:
    if path.exists() and not path.is_dir():
        raise BadInput(str(path), "exists and is not a directory (given to --out)")


def check_input(path: Path) -> None:
    if not path.exists():
        raise BadInput(str(path), "no such file")
    if not path.is_file():
        raise BadInput(str(path), "not a file; give a markdown or HTML file")


# ---------------------------------------------------------------- batch rendering


@dataclass(frozen=True)
class Job:
    """One input file to render (picklable, for worker processes)."""

    input: str
    pool: str
    out: str
    name: str | None
    formats: tuple[str, ...]
    content_format: str | None
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass
class Outcome:
    """What became of one job: its artifacts, sources and warnings, or its one-line error."""

    input: str
    formats: list[str] = field(default_factory=list)
    paths: list[list[str]] = field(default_factory=list)  # per format (PNG: every page)
    sources_used: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: str = ""
    code: int = EXIT_OK


#: Progress events from workers: ("start", input, "") and ("done", input, fmt + paths).
Event = tuple[str, str, str, tuple[str, ...]]
_EVENTS: Any = None


def _init_worker(events: Any) -> None:
    global _EVENTS
    _EVENTS = events


def _post(event: Event) -> None:
    if _EVENTS is not None:
        _EVENTS.put(event)


def run_job(job: Job, notify: Callable[[Event], None] | None = None) -> Outcome:
    """Render one input to all its formats (parse once); user errors become the outcome."""
    from renderers.api import RenderResult, render_file

    send = notify or _post
    outcome = Outcome(job.input)
    send(("start", job.input, "", ()))

    def on_result(result: RenderResult) -> None:
        outcome.formats.append(result.format)
        outcome.paths.append([str(p) for p in result.paths])
        send(("done", job.input, result.format, tuple(str(p) for p in result.paths)))

    try:
        results = render_file(
            job.input,
            job.out,
            name=job.name,
            formats=job.formats,
            sources_pool=Path(job.pool),
            content_format=job.content_format,
            on_result=on_result,
            **job.kwargs,
        )
    except Exception as exc:
        if not is_user_error(exc):
            raise
        outcome.error = one_line(job.input, describe(exc))
        outcome.code = exit_code_for(exc)
        send(("failed", job.input, "", ()))
        return outcome
    if results:
        outcome.sources_used = list(results[0].sources_used)
        outcome.warnings = list(dict.fromkeys(w for r in results for w in r.warnings))
    return outcome


class Reporter:
    """Progress on a terminal (rich bar, per file and format) or plain lines otherwise."""

    def __init__(self, console: Console, jobs: Sequence[Job]) -> None:
        self.console = console
        self.total = sum(len(j.formats) for j in jobs)
        self.formats = {j.input: len(j.formats) for j in jobs}
        self.progress: Progress | None = None
        self.overall: TaskID | None = None
        self.files: dict[str, TaskID] = {}
        self.done: dict[str, int] = {}

    def __enter__(self) -> Reporter:
        if self.console.is_terminal:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            self.progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self.console,
                transient=False,
            )
            self.progress.start()
            self.overall = self.progress.add_task("[bold]all files", total=self.total)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()

    def event(self, event: Event) -> None:
        kind, name, fmt, paths = event
        if self.progress is None or self.overall is None:
            if kind == "done":
                self.console.print(f"{name} → {describe_paths(paths)}", soft_wrap=True)
            return
        if kind == "start":
            self.files[name] = self.progress.add_task(name, total=self.formats.get(name, 1))
        elif kind == "done":
            self.done[name] = self.done.get(name, 0) + 1
            self.progress.advance(self.overall)
            task = self.files.get(name)
            if task is not None:
                self.progress.update(task, advance=1, description=f"{name} [dim]{fmt}[/dim]")
        elif kind == "failed":
            task = self.files.pop(name, None)
            if task is not None:
                self.progress.remove_task(task)
            remaining = self.formats.get(name, 0) - self.done.get(name, 0)
            self.progress.advance(self.overall, max(remaining, 0))

    def finished(self, outcome: Outcome) -> None:
        task = self.files.pop(outcome.input, None)
        if self.progress is not None and task is not None:
            self.progress.remove_task(task)


def describe_paths(paths: Sequence[str]) -> str:
    """One path as is; PNG pages as ``out/x-1.png … x-12.png (12 pages)``."""
    if len(paths) <= 1:
        return "".join(paths)
    return f"{paths[0]} … {Path(paths[-1]).name} ({len(paths)} pages)"


def run_batch(jobs: Sequence[Job], workers: int, console: Console) -> list[Outcome]:
    """Render ``jobs`` (in ``workers`` processes when > 1), reporting progress as they finish."""
    outcomes: dict[str, Outcome] = {}
    with Reporter(console, jobs) as reporter:
        if workers <= 1 or len(jobs) <= 1:
            for job in jobs:
                outcome = run_job(job, reporter.event)
                reporter.finished(outcome)
                outcomes[job.input] = outcome
        else:
            import multiprocessing
            from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

            context = multiprocessing.get_context("spawn")
            events: Any = context.Queue()
            with ProcessPoolExecutor(
                max_workers=min(workers, len(jobs)),
                mp_context=context,
                initializer=_init_worker,
                initargs=(events,),
            ) as executor:
                pending: dict[Future[Outcome], Job] = {
                    executor.submit(run_job, job): job for job in jobs
                }
                while pending:
                    done, _ = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
                    _drain(events, reporter)
                    for future in done:
                        job = pending.pop(future)
                        outcome = future.result()
                        _drain(events, reporter)
                        reporter.finished(outcome)
                        outcomes[job.input] = outcome
                _drain(events, reporter)
    return [outcomes[job.input] for job in jobs]


def _drain(events: Any, reporter: Reporter) -> None:
    import queue

    while True:
        try:
            reporter.event(events.get_nowait())
        except queue.Empty:
            return


def summary_table(outcomes: Sequence[Outcome]) -> Table:
    from rich.table import Table

    table = Table(title="citerender", title_justify="left", show_lines=False)
    table.add_column("File", overflow="fold")
    table.add_column("Formats")
    table.add_column("Sources cited", justify="right")
    table.add_column("Warnings", justify="right")
    for outcome in outcomes:
        formats = ", ".join(outcome.formats) if not outcome.error else "[red]failed[/red]"
        table.add_row(
            outcome.input,
            formats,
            str(len(outcome.sources_used)),
            str(len(outcome.warnings)),
        )
    return table


def report_outcomes(outcomes: Sequence[Outcome], console: Console, *, strict: bool) -> int:
    """Print warnings (once per file), errors and the summary; return the exit code."""
    code = EXIT_OK
    for outcome in outcomes:
        for warning in outcome.warnings:
            print(
                f"citerender: warning: {outcome.input}: {' '.join(warning.split())}",
                file=sys.stderr,
            )
        if outcome.error:
            print(outcome.error, file=sys.stderr)
            code = max(code, outcome.code)
        elif strict and outcome.warnings:
            code = max(code, EXIT_PROBLEMS)
    console.print(summary_table(outcomes))
    return code


@contextmanager
def batch_gc() -> Iterator[None]:
    """Tune the cyclic garbage collector while a batch renders (not for serve or mcp).

    A render allocates hundreds of thousands of small objects that live until it ends; with
    CPython's default thresholds the collector runs thousands of times and rescans them (about
    a tenth of a cold render). Inside the block, objects alive at its start (imported modules)
    are left out of scans and young collections run less often; garbage cycles are still
    collected, and the previous settings come back afterwards (for in-process callers).
    """
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(50_000, 50, 100)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def make_console() -> Console:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False)


# ---------------------------------------------------------------- commands


@app.command(epilog=RENDER_EXAMPLES)
def render(
    inputs: Annotated[
        list[Path],
        typer.Argument(metavar="INPUT", help="Markdown or HTML files.", show_default=False),
    ],
    pool: Annotated[
        Path | None,
        typer.Option(
            "--pool",
            "-p",
            metavar="POOL",
            help='Sources pool (JSON list, {"sources_pool": [...]} or YAML).',
        ),
    ] = None,
    to: Annotated[
        str,
        typer.Option(
            "--to",
            "-t",
            metavar="FORMATS",
            help="Comma-separated: pdf, png, docx, pptx, html, md — or all.",
        ),
    ] = "pdf",
    out: Annotated[
        Path, typer.Option("--out", "-o", metavar="DIR", help="Output directory.")
    ] = Path("out"),
    name: Annotated[
        str | None,
        typer.Option("--name", metavar="STEM", help="Output file stem (one INPUT only)."),
    ] = None,
    title: Annotated[str | None, typer.Option("--title", help="Document title.")] = None,
    numbering: Annotated[
        Numbering, typer.Option("--numbering", case_sensitive=False, help="Citation numbers.")
    ] = Numbering.appearance,
    strict: Annotated[
        bool, typer.Option("--strict", help="Unknown sids or invalid tokens fail (exit 1).")
    ] = False,
    from_: Annotated[
        InputFormat | None,
        typer.Option("--from", "-f", case_sensitive=False, help="Input format (default: detect)."),
    ] = None,
    jobs: Annotated[
        int, typer.Option("--jobs", "-j", min=1, max=64, help="Parallel processes for a batch.")
    ] = 1,
    page_size: Annotated[
        PageSize, typer.Option("--page-size", case_sensitive=False, help="PDF/PNG page size.")
    ] = PageSize.A4,
    reference_docx: Annotated[
        Path | None, typer.Option("--reference-docx", metavar="FILE", help="DOCX style template.")
    ] = None,
    reference_pptx: Annotated[
        Path | None, typer.Option("--reference-pptx", metavar="FILE", help="PPTX template.")
    ] = None,
    slide_level: Annotated[
        int, typer.Option("--slide-level", min=1, max=6, help="Heading level that starts a slide.")
    ] = 2,
    dpi: Annotated[int, typer.Option("--dpi", min=10, max=600, help="PNG resolution.")] = 110,
    broker: Annotated[
        str | None, typer.Option("--broker", metavar="URL", help="Render on Celery workers.")
    ] = None,
    store: Annotated[
        str | None, typer.Option("--store", metavar="URL", help="The workers' artifact store.")
    ] = None,
) -> None:
    """Render INPUT files to PDF, PNG, DOCX, PPTX, HTML and/or Markdown in DIR."""
    from renderers.api import normalize_formats

    try:
        with user_errors("--to"):
            formats = normalize_formats(to)
        if name is not None and len(inputs) > 1:
            raise BadInput(
                "--name",
                "--name works with a single INPUT; outputs are named after each input otherwise",
            )
        for template, flag in (
            (reference_docx, "--reference-docx"),
            (reference_pptx, "--reference-pptx"),
        ):
            if template is not None and not template.is_file():
                raise BadInput(str(template), f"no such file (given to {flag})")
        jobs_list = _render_jobs(
            inputs, pool, out, name, formats, from_,
            {
                "title": title, "numbering": numbering.value, "strict": strict,
                "page_size": page_size.value, "slide_level": slide_level, "dpi": dpi,
                "reference_docx": reference_docx, "reference_pptx": reference_pptx,
            },
        )  # fmt: skip
    except BadInput as exc:
        raise fail(exc.where, exc.message, exc.code) from None
    console = make_console()
    if broker is not None:
        from renderers.workers.batch import run_remote_batch

        outcomes = run_remote_batch(jobs_list, broker, store, console)
    else:
        with batch_gc():
            outcomes = run_batch(jobs_list, jobs, console)
    raise typer.Exit(report_outcomes(outcomes, console, strict=strict))


def _render_jobs(
    inputs: Sequence[Path],
    pool: Path | None,
    out: Path,
    name: str | None,
    formats: tuple[str, ...],
    from_: InputFormat | None,
    kwargs: dict[str, Any],
) -> list[Job]:
    """Check inputs, pools and output names up front; one :class:`Job` per input."""
    from renderers.outputs import validate_name

    check_out_dir(out)
    checked_pools: set[Path] = set()
    stems: dict[str, Path] = {}
    jobs: list[Job] = []
    for path in inputs:
        check_input(path)
        pool_path = pool if pool is not None else find_pool(path)
        if pool_path is None:
            raise BadInput(
                str(path),
                f"no sources pool; pass --pool POOL (or put {path.stem}.pool.json next to it)",
            )
        if pool_path not in checked_pools:
            check_pool(pool_path)
            checked_pools.add(pool_path)
        stem = name or path.stem
        with user_errors("--name" if name else str(path)):
            validate_name(stem)
        if stem in stems:
            raise BadInput(
                str(path),
                f"has the same output name {stem!r} as {stems[stem]}; "
                "render them into different --out directories",
            )
        stems[stem] = path
        jobs.append(Job(
            input=str(path), pool=str(pool_path), out=str(out), name=name, formats=formats,
            content_format=from_.value if from_ else None, kwargs=kwargs,
        ))  # fmt: skip
    return jobs


@app.command(epilog=AUDIT_EXAMPLES)
def audit(
    input: Annotated[Path, typer.Argument(metavar="INPUT", help="Markdown or HTML file.")],
    pool: Annotated[
        Path | None, typer.Option("--pool", "-p", metavar="POOL", help="Sources pool file.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable JSON report.")] = False,
    from_: Annotated[
        InputFormat | None,
        typer.Option("--from", "-f", case_sensitive=False, help="Input format (default: detect)."),
    ] = None,
) -> None:
    """Check INPUT's citations against POOL: unknown, invalid, in-code and orphaned sources."""
    from citations.audit import audit as run_audit
    from citations.pool import SourcePool
    from renderers.api import content_format_for, decode_content

    try:
        check_input(input)
        pool_path = pool if pool is not None else find_pool(input)
        if pool_path is None:
            raise BadInput(str(input), "no sources pool; pass --pool POOL")
        with user_errors(str(pool_path)):
            sources = SourcePool.load(pool_path)
        with user_errors(str(input)):
            text = decode_content(input.read_bytes(), str(input))
            fmt = from_.value if from_ else content_format_for(input)
            if fmt is None:
                from renderers.readers.detect import detect_format

                fmt = detect_format(text)
            report = run_audit(text, sources, content_format=fmt)
    except BadInput as exc:
        raise fail(exc.where, exc.message) from None
    if as_json:
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(report.format_text())
    raise typer.Exit(EXIT_OK if report.ok else EXIT_PROBLEMS)


@app.command(epilog=SERVE_EXAMPLES)
def serve(
    host: Annotated[str, typer.Option("--host", help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="TCP port.")] = 8000,
    workers: Annotated[
        int | None,
        typer.Option("--workers", min=1, max=64, help="Render processes (default: CPU cores)."),
    ] = None,
    broker: Annotated[
        str | None, typer.Option("--broker", metavar="URL", help="Send /jobs to Celery workers.")
    ] = None,
    store: Annotated[
        str | None, typer.Option("--store", metavar="URL", help="Artifact store of /jobs.")
    ] = None,
    webhook_host: Annotated[
        list[str] | None, typer.Option("--webhook-host", metavar="HOST", help="Webhook host.")
    ] = None,
) -> None:
    """Run the HTTP export service (POST /render, POST /jobs, GET / export page, GET /healthz)."""
    from renderers.service.app import serve as run_service

    try:
        with user_errors(f"{host}:{port}"):
            run_service(host, port, workers, broker=broker, store=store,
                        webhook_hosts=webhook_host or ())
    except BadInput as exc:
        raise fail(exc.where, exc.message) from None


@app.command(epilog=MCP_EXAMPLES)
def mcp(
    out: Annotated[
        Path, typer.Option("--out", "-o", metavar="DIR", help="Where the tools write files.")
    ] = Path("out"),
) -> None:
    """Run the MCP server on stdio (tools write_pdf … write_markdown, audit_citations)."""
    from renderers.mcp_server import run_stdio

    try:
        with user_errors(str(out)):
            out.mkdir(parents=True, exist_ok=True)
            run_stdio(out)
    except BadInput as exc:
        raise fail(exc.where, exc.message) from None


def samples_dir() -> Path | None:
    """``samples/`` of the source checkout (or of the current directory)."""
    for candidate in (Path(__file__).resolve().parent.parent / "samples", Path.cwd() / "samples"):
        if candidate.is_dir():
            return candidate
    return None


def sample_inputs(directory: Path) -> list[tuple[Path, Path]]:
    """Every ``NAME.md``/``NAME.html`` in ``directory`` that has a ``NAME.pool.*`` beside it."""
    found: list[tuple[Path, Path]] = []
    for path in sorted(directory.iterdir()):
        if path.is_file() and path.suffix.lower() in INPUT_SUFFIXES:
            pool = find_pool(path)
            if pool is not None:
                found.append((path, pool))
    return found


@app.command(epilog=DEMO_EXAMPLES)
def demo(
    out: Annotated[
        Path, typer.Option("--out", "-o", metavar="DIR", help="Output directory.")
    ] = Path("out"),
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, max=64, help="Processes.")] = min(
        2, os.cpu_count() or 1
    ),
) -> None:
    """Render every sample in samples/ to every available format and show where each file is."""
    from renderers.api import available_formats

    directory = samples_dir()
    if directory is None:
        raise fail("samples/", "the samples directory was not found (run from a source checkout)")
    samples = sample_inputs(directory)
    if not samples:
        raise fail(str(directory), "no samples with a NAME.pool.json beside them")
    formats = available_formats()
    try:
        check_out_dir(out)
        for _, pool_path in samples:
            check_pool(pool_path)
    except BadInput as exc:
        raise fail(exc.where, exc.message) from None
    console = make_console()
    console.print(
        f"Rendering {len(samples)} samples from {directory} to {', '.join(formats)} → {out}/"
    )
    job_list = [
        Job(input=str(path), pool=str(pool), out=str(out), name=None, formats=formats,
            content_format=None)
        for path, pool in samples
    ]  # fmt: skip
    with batch_gc():
        outcomes = run_batch(job_list, jobs, console)
    code = report_outcomes(outcomes, console, strict=False)
    if console.is_terminal:  # plain output already named every file, line by line
        from rich.table import Table

        listing = Table(title="Files written", title_justify="left")
        listing.add_column("Sample")
        listing.add_column("Format")
        listing.add_column("File", overflow="fold")
        for outcome in outcomes:
            for fmt, paths in zip(outcome.formats, outcome.paths, strict=True):
                listing.add_row(Path(outcome.input).name, fmt, describe_paths(paths))
        console.print(listing)
    console.print(f"Provenance of every file: {out / 'sources_used.json'}", soft_wrap=True)
    raise typer.Exit(code)


from renderers.workers.command import WORKER_EXAMPLES, worker  # noqa: E402

app.command(epilog=WORKER_EXAMPLES)(worker)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point (``citerender``)."""
    try:
        app(args=list(argv) if argv is not None else None, prog_name="citerender")
    except KeyboardInterrupt:
        print("citerender: interrupted", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    main()
