"""The ``citerender`` command (typer + rich): render, audit, serve, mcp and demo.

Exit codes: 0 success; 1 audit problems or a ``--strict`` failure; 2 bad usage or bad input,
reported as one line naming the file and the problem — never a traceback (usage errors too:
typer's boxed panel is replaced by one line). The render options are generated from the option
spec (:mod:`renderers.cli_options`); batches run in :mod:`renderers.cli_batch`; failures are
phrased by :mod:`renderers.cli_errors`.

Start-up time counts (one render is one process): everything a command or a format does not
always need — writers, process pools, rich's progress bar, the server — is imported where used.
"""

from __future__ import annotations

import atexit
import copy
import gc
import inspect
import json
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any


@contextmanager
def _collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while the CLI's modules load: everything an import makes
    lives until exit, so the 30-odd collections it would trigger free nothing; afterwards what
    was loaded goes straight to the oldest generation rather than through one collection that
    rescans it all (the collector's CPU in a one-paragraph render: 13–19 → 8–11 ms, measured).
    The collector is left enabled or not as it was, and nothing stays frozen."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if not gc.get_freeze_count():  # nothing of the host's frozen: ours to use
            gc.freeze()  # the survivors go to the oldest generation, and the count of new
            gc.unfreeze()  # allocations starts again: no collection rescans the imports now
        if enabled:
            gc.enable()


with _collector_paused():
    import typer
    from typer.core import TyperGroup
    from typer.main import get_command_name, get_group
    from typer.models import CommandInfo

    from renderers import cli_options
    from renderers.cli_batch import (
        Job,
        Outcome,
        as_text,
        batch_gc,
        describe_paths,
        make_console,
        report_outcomes,
        run_batch,
        run_job,
    )
    from renderers.cli_errors import (
        EXIT_BAD_INPUT,
        EXIT_OK,
        EXIT_PROBLEMS,
        BadInput,
        describe,
        fail,
        one_line,
        reading,
        reraise_when_debugging,
    )
    from renderers.errors import OptionError
    from renderers.options import PARAMS
    from renderers.workers.command import MaxWorkerMemory

if TYPE_CHECKING:
    from citations.adapters import Detection
    from citations.audit import AuditReport
    from citations.pool import SourcePool

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_OK",
    "EXIT_PROBLEMS",
    "Job",
    "Outcome",
    "app",
    "main",
    "run_batch",
    "run_job",
    "sample_inputs",
]

POOL_SUFFIXES = (".pool.json", ".pool.yaml", ".pool.yml")
INPUT_SUFFIXES = (".md", ".markdown", ".html", ".htm")

RENDER_EXAMPLES = """[bold]Examples[/bold]

  [cyan]citerender render report.md --pool pool.json[/cyan]             → out/report.pdf
  [cyan]citerender render report.md --pool pool.json --to pdf,docx,md --out build[/cyan]
  [cyan]citerender render docs/*.md --pool pool.json --to all -j 2[/cyan]   a batch, two processes
  [cyan]citerender render briefing.html --pool pool.yaml --to png --dpi 150[/cyan]
  [cyan]citerender render report.md -p pool.json -t png --pages 1,3[/cyan]  → report-1.png, -2.png
  [cyan]citerender render notes.md --pool pool.json --numbering sid --strict[/cyan]
  [cyan]citerender render deck.md -p pool.json -t pptx --slide-ratio 4:3 --no-source-footer[/cyan]

Without --pool, [i]STEM.pool.json[/i] (or .pool.yaml) next to each input is used.
PNG pages are written as STEM.png (one page) or STEM-1.png, STEM-2.png …
"""
AUDIT_EXAMPLES = """[bold]Examples[/bold]

  [cyan]citerender audit report.md --pool pool.json[/cyan]
  [cyan]citerender audit answer.html --pool pool.yaml --json | jq .unknown_sids[/cyan]

Exit code 0: every citation resolves and is rendered as one; 1: unknown sids, invalid tokens,
or tokens render does not cite (in code, in raw HTML, in a link's URL, a formula, an unused
link reference definition or a heading's attribute block: [i]in_code_sids[/i],
[i]in_raw_html_sids[/i], [i]not_rendered_sids[/i]); 2: the input or the pool cannot be read.
"""
SERVE_EXAMPLES = """[bold]Examples[/bold]

  [cyan]citerender serve[/cyan]                            http://127.0.0.1:8000/ (export page)
  [cyan]curl -X POST localhost:8000/render -H 'content-type: application/json' \\
       -d '{"content": "Hi [[S:1]]", "sources_pool": [{"sid": 1, "url": "https://iea.org"}],
            "format": "pdf"}' -o report.pdf[/cyan]
  [cyan]citerender serve --port 9000 --workers 2[/cyan]
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


class OneLineErrors(TyperGroup):
    """The command group: usage errors and bugs are one line on stderr, never a panel or a
    traceback; usage errors exit with 2, as click's own do."""

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        try:
            code = super().main(
                args=args,
                prog_name=prog_name,
                complete_var=complete_var,
                standalone_mode=False,
                windows_expand_args=windows_expand_args,
                **extra,
            )
        except typer.TyperException as exc:  # click's usage errors (typer vendors click)
            if type(exc).__name__ != "NoArgsIsHelpError":  # else typer printed the help
                print(usage_line(exc), file=sys.stderr)
            code = exc.exit_code
        except typer.Abort:
            print("citerender: interrupted", file=sys.stderr)
            code = 130
        except Exception as exc:  # a bug: still one line
            reraise_when_debugging(exc)
            print(one_line("", describe(exc)), file=sys.stderr)
            code = EXIT_BAD_INPUT
        code = code if isinstance(code, int) else EXIT_OK
        if standalone_mode:
            sys.exit(code)
        return code


def usage_line(exc: typer.TyperException) -> str:
    """``citerender: error: No such option: --bogus (see 'citerender render --help')``."""
    ctx = getattr(exc, "ctx", None)
    path = ctx.command_path if ctx is not None else "citerender"
    return one_line("", f"{exc.format_message()} (see '{path} --help')")


app = typer.Typer(
    name="citerender",
    cls=OneLineErrors,
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

    with reading(str(path)):
        SourcePool.load(path)


def check_out_dir(path: Path) -> None:
    with reading(str(path)):  # a name the system refuses (too long) is the directory's problem
        if path.exists() and not path.is_dir():
            raise BadInput(str(path), "exists and is not a directory (given to --out)")


def sniff_answer(path: Path, forced: str | None) -> Detection | None:
    """The provider answer ``path`` holds (announced in one info line), or None."""
    from renderers.readers.answers import sniff_file

    with reading(str(path)):
        found = sniff_file(path, forced)
    if found is not None:
        print(f"citerender: info: {path}: read as {found.shape}", file=sys.stderr)
    return found


def check_input(path: Path) -> None:
    if not path.exists():
        raise BadInput(str(path), "no such file")
    if not path.is_file():
        raise BadInput(str(path), "not a file; give a markdown or HTML file")


def check_options(kwargs: dict[str, Any], formats: tuple[str, ...] | None = None) -> None:
    """Validate the render options once, before any job: BadInput naming the flag at fault,
    in the spec's words (click checks only that a number is a number). A choice is replaced
    by the value it names (``--page-size letter`` → ``Letter``, ``--from md`` → ``markdown``).
    ``formats``: those the render writes (a reference file none of them reads need not exist)."""
    from renderers.options import PARAMS, build_options, coerce, read_options

    reading_names = {"content_format", "dialects"}
    try:
        read_options(**{k: v for k, v in kwargs.items() if k in reading_names})
        build_options(formats=formats,
                      **{k: v for k, v in kwargs.items() if k not in reading_names})
    except OptionError as exc:
        flag = cli_options.flag_for(exc.field, kwargs.get(exc.field))
        raise BadInput(flag or exc.field, str(exc)) from None
    for key, value in kwargs.items():
        if key in PARAMS and PARAMS[key].kind == "choice" and value is not None:
            kwargs[key] = coerce(PARAMS[key], value)


# ---------------------------------------------------------------- render


_K = inspect.Parameter.KEYWORD_ONLY
#: The render command's own parameters; the options follow from the spec.
_RENDER_PARAMETERS = [
    # which options the command line gave (cli_options.given_options), not their defaults
    inspect.Parameter("context", _K, annotation=typer.Context),
    inspect.Parameter("inputs", _K, annotation=Annotated[
        list[Path],
        typer.Argument(metavar="INPUT", help="Markdown or HTML files.", show_default=False),
    ]),
    inspect.Parameter("pool", _K, default=None, annotation=Annotated[
        Path | None,
        typer.Option("--pool", "-p", metavar="POOL",
                     help='Sources pool (JSON list, {"sources_pool": [...]} or YAML).'),
    ]),
    inspect.Parameter("to", _K, default=["pdf"], annotation=Annotated[
        list[str],
        typer.Option("--to", "-t", metavar="FORMATS",
                     help="Comma-separated: pdf, png, docx, pptx, html, md — or all. "
                          "Repeatable: -t pdf -t md is -t pdf,md."),
    ]),
    inspect.Parameter("out", _K, default=Path("out"), annotation=Annotated[
        Path, typer.Option("--out", "-o", metavar="DIR", help="Output directory."),
    ]),
    inspect.Parameter("name", _K, default=None, annotation=Annotated[
        str | None,
        typer.Option("--name", metavar="STEM", help="Output file stem (one INPUT only)."),
    ]),
    inspect.Parameter("jobs", _K, default=1, annotation=Annotated[
        int, typer.Option("--jobs", "-j", min=1, max=64, help="Parallel processes for a batch."),
    ]),
    inspect.Parameter("broker", _K, default=None, annotation=Annotated[
        str | None, typer.Option("--broker", metavar="URL", help="Render on Celery workers."),
    ]),
    inspect.Parameter("store", _K, default=None, annotation=Annotated[
        str | None, typer.Option("--store", metavar="URL", help="The workers' artifact store."),
    ]),
]  # fmt: skip


def render(**values: Any) -> None:
    """Render INPUT files to PDF, PNG, DOCX, PPTX, HTML and/or Markdown in DIR."""
    # From the checks on: what they import (the pool's modules, rich) is not rescanned by
    # young collections either (a dozen fewer, 3–5 ms of CPU, measured)
    with batch_gc():
        _render(values)


def _render(values: dict[str, Any]) -> None:
    from renderers.formats import normalize_formats

    inputs: list[Path] = values.pop("inputs")
    pool: Path | None = values.pop("pool")
    out: Path = values.pop("out")
    name: str | None = values.pop("name")
    workers: int = values.pop("jobs")
    # every --to counts (a repeated option used to keep only its last value)
    to: str = ",".join(values.pop("to"))
    broker: str | None = values.pop("broker")
    store: str | None = values.pop("store")
    context: typer.Context = values.pop("context")
    kwargs = cli_options.api_kwargs(values, cli_options.given_options(context))
    try:
        with reading("--to"):
            formats = normalize_formats(to)
        _check_store(store, broker)
        if name is not None and len(inputs) > 1:
            raise BadInput(
                "--name",
                "--name works with a single INPUT; outputs are named after each input otherwise",
            )
        check_options(kwargs, formats)
        jobs = _render_jobs(inputs, pool, out, name, formats, kwargs)
    except BadInput as exc:
        raise fail(exc.where, exc.message, exc.code) from None
    console = make_console()
    if broker is not None:
        from renderers.workers.batch import run_remote_batch

        outcomes = run_remote_batch(jobs, broker, store, console)
    else:
        outcomes = run_batch(jobs, workers, console)
    raise typer.Exit(report_outcomes(outcomes, console, strict=bool(kwargs.get("strict"))))


render.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [*_RENDER_PARAMETERS, *cli_options.parameters()], return_annotation=None
)
app.command(epilog=RENDER_EXAMPLES)(render)


def _render_jobs(
    inputs: Sequence[Path],
    pool: Path | None,
    out: Path,
    name: str | None,
    formats: tuple[str, ...],
    kwargs: dict[str, Any],
) -> list[Job]:
    """Check inputs, pools and output names up front; one :class:`Job` per input."""
    from renderers.outputs import validate_name

    check_out_dir(out)
    options = dict(kwargs)
    content_format = options.pop("content_format", None)
    checked_pools: set[Path] = set()
    stems: dict[str, Path] = {}
    jobs: list[Job] = []
    for path in inputs:
        check_input(path)
        pool_path = pool if pool is not None else find_pool(path)
        native = sniff_answer(path, content_format)
        if pool_path is None and native is None:
            raise BadInput(
                str(path),
                f"no sources pool; pass --pool POOL (or put {path.stem}.pool.json next to it)",
            )
        if pool_path is not None and pool_path not in checked_pools:
            check_pool(pool_path)
            checked_pools.add(pool_path)
        stem = path.stem if name is None else name  # --name '' is refused, not ignored
        try:
            with reading(str(path) if name is None else "--name"):
                validate_name(stem)
        except BadInput as exc:
            hint = "; pass --name STEM to name the outputs" if name is None else ""
            raise BadInput(exc.where, exc.message + hint) from None
        if stem in stems:
            raise BadInput(
                str(path),
                f"has the same output name {stem!r} as {stems[stem]}; "
                "render them into different --out directories",
            )
        stems[stem] = path
        jobs.append(Job(
            input=str(path), pool=str(pool_path or ""), out=str(out), name=name,
            formats=formats, content_format=native.kind if native else content_format,
            kwargs=options,
        ))  # fmt: skip
    return jobs


def _check_store(store: str | None, broker: str | None) -> None:
    """``--store`` names where Celery workers write: without ``--broker`` nothing would use it,
    so it is refused rather than silently ignored."""
    if store is not None and broker is None:
        raise BadInput(
            "--store",
            "is the Celery workers' artifact store and needs --broker URL; without --broker "
            "renders run locally and use no store (leave --store out)",
        )


# ---------------------------------------------------------------- audit, serve, mcp


@app.command(epilog=AUDIT_EXAMPLES)
def audit(
    input: Annotated[
        Path, typer.Argument(metavar="INPUT", help="Markdown, HTML, or a JSON/YAML answer.")
    ],
    pool: Annotated[
        Path | None, typer.Option("--pool", "-p", metavar="POOL", help="Sources pool file.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable JSON report.")] = False,
    from_: Annotated[
        str | None, cli_options.typer_option(PARAMS["content_format"], panel="Options")
    ] = None,
    dialects: Annotated[
        str | None, cli_options.typer_option(PARAMS["dialects"], panel="Options")
    ] = None,
) -> None:
    """Check INPUT's citations against POOL: unknown, invalid, not rendered (in code, raw HTML,
    a link's URL, a formula) and orphaned sources."""
    from citations.json_keys import loads as unique_keys_loads
    from citations.pool import SourcePool
    from renderers.audit import audit as run_audit
    from renderers.options import read_options

    try:
        check_input(input)
        check_options({"content_format": from_, "dialects": dialects})
        read = read_options(from_, dialects)
        pool_path = pool if pool is not None else find_pool(input)
        native = sniff_answer(input, read.content_format)
        if pool_path is None and native is None:
            raise BadInput(str(input), "no sources pool; pass --pool POOL")
        with reading(str(pool_path)):
            sources = SourcePool.load(pool_path) if pool_path else SourcePool()
        with reading(str(input)):
            if native is not None:  # adapted first: its sources are merged into the pool
                report = run_audit(unique_keys_loads(input.read_bytes()), sources,
                                   content_format=native.kind)
            else:
                report = _audit_text(input, sources, read.content_format, read.dialects)
    except BadInput as exc:
        raise fail(exc.where, exc.message) from None
    if as_json:
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(report.format_text())
    raise typer.Exit(EXIT_OK if report.ok else EXIT_PROBLEMS)


def _audit_text(
    input: Path, sources: SourcePool, content_format: str | None, dialects: frozenset[str]
) -> AuditReport:
    """The audit of a markdown, HTML or JSON/YAML input file."""
    from citations.audit import structured_format
    from renderers.api import content_format_for, decode_content
    from renderers.audit import audit as run_audit

    text = decode_content(input.read_bytes(), str(input))
    fmt: str | None = content_format or (
        structured_format(input.name, text) or content_format_for(input)
    )
    if fmt is None:
        from renderers.readers.detect import detect_format

        fmt = detect_format(text)
    try:
        return run_audit(text, sources, content_format=fmt, dialects=dialects, name=str(input))
    except ValueError as exc:
        raise BadInput(str(input), str(exc)) from None


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
    max_worker_memory: MaxWorkerMemory = None,
) -> None:
    """Run the HTTP export service (POST /render, POST /jobs, GET / export page, GET /healthz)."""
    from renderers.service.app import serve as run_service

    try:
        _check_store(store, broker)
        with reading(f"[{host}]:{port}" if ":" in host else f"{host}:{port}"):
            run_service(host, port, workers, broker=broker, store=store,
                        webhook_hosts=webhook_host or (), worker_memory_mib=max_worker_memory)
    except BadInput as exc:
        raise fail(exc.where, exc.message) from None


@app.command(epilog=MCP_EXAMPLES)
def mcp(
    out: Annotated[
        Path, typer.Option("--out", "-o", metavar="DIR", help="Where the tools write files.")
    ] = Path("out"),
    max_worker_memory: MaxWorkerMemory = None,
) -> None:
    """Run the MCP server on stdio (tools write_pdf … write_markdown, audit_citations)."""
    from renderers.mcp_server import run_stdio

    try:
        with reading(str(out)):
            out.mkdir(parents=True, exist_ok=True)
            run_stdio(out, max_worker_memory)
    except BadInput as exc:
        raise fail(exc.where, exc.message) from None


# ---------------------------------------------------------------- demo


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
    from renderers.formats import available_formats

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
        f"Rendering {len(samples)} samples from {as_text(str(directory))} to "
        f"{', '.join(formats)} → {as_text(str(out))}/"
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
                listing.add_row(as_text(Path(outcome.input).name), fmt,
                                as_text(describe_paths(paths)))
        console.print(listing)
    console.print(f"Provenance of every file: {as_text(str(out / 'sources_used.json'))}",
                  soft_wrap=True)
    raise typer.Exit(code)


from renderers.cli_pool import pool_app  # noqa: E402  (its commands use the helpers above)
from renderers.workers.command import WORKER_EXAMPLES, worker  # noqa: E402

app.add_typer(pool_app, name="pool")
app.command(epilog=WORKER_EXAMPLES)(worker)


def _skip_exit_collection() -> None:
    """At exit, freeze what is still alive: the interpreter would otherwise run the cycle
    collector over every object on its way out, which the operating system frees anyway
    (30–50 ms of CPU after a 50-page render, measured; registered with :mod:`atexit`, whose
    handlers run before that collection)."""
    gc.freeze()


atexit.register(_skip_exit_collection)


def command_only(args: Sequence[str]) -> typer.Typer | None:
    """``app`` with only the command ``args`` starts with (``render``, ``pool`` …), or None when
    they start with anything else (an option, a typo, nothing).

    Before parsing, typer makes a click command of every registered function — resolving its
    type hints, building its parameters —, about 8 ms of CPU for commands that will not run.
    A command's parsing, help, usage errors and exit codes are its own and its group's, which
    keeps every setting of ``app`` (typer's ``get_group``: a group even of one)."""
    name = args[0] if args else None
    commands = [info for info in app.registered_commands if _command_name(info) == name]
    groups = [info for info in app.registered_groups if info.name == name]
    if not commands and not groups:
        return None
    only = copy.copy(app)  # a shallow copy: the lists below are its own, app's stay whole
    only.registered_commands, only.registered_groups = commands, groups
    return only


def _command_name(info: CommandInfo) -> str | None:
    """The name typer gives a registered command (its function's name, dashed)."""
    if info.name or info.callback is None:
        return info.name
    return get_command_name(info.callback.__name__)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point (``citerender``)."""
    args = list(argv) if argv is not None else None  # None: click reads sys.argv itself
    only = command_only(sys.argv[1:] if args is None else args)
    try:
        if only is None:
            app(args=args, prog_name="citerender")
        else:
            get_group(only)(args=args, prog_name="citerender")
    except KeyboardInterrupt:
        print("citerender: interrupted", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    main()
