"""Batch rendering for ``citerender render`` and ``demo``: jobs, worker processes, progress,
warnings and the summary table.

A job's failure never escapes as a traceback: :func:`run_job` turns every error into the job's
one-line outcome (naming the input, or the pool when the error's ``field`` is the pool), with
the exit code :func:`renderers.cli_errors.exit_code_for` gives it.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citations.errors import CodedError
from renderers.cli_errors import (
    EXIT_OK,
    EXIT_PROBLEMS,
    describe,
    exit_code_for,
    one_line,
    reraise_when_debugging,
    shown,
)
from renderers.cli_options import flag_typed
from renderers.diagnostics import Diagnostic, capped, count, messages, unique
from renderers.options import unused_option_notes

if TYPE_CHECKING:
    from concurrent.futures import Future

    from rich.console import Console
    from rich.progress import Progress, TaskID
    from rich.table import Table


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

    def unused_notes(self) -> tuple[Diagnostic, ...]:
        """The ``option-unused`` notes of this job's options, for a broker batch, whose workers
        never see the options their format does not use: the API's own builder
        (:func:`unused_option_notes`) with the command line's naming (:func:`flag_typed`), as
        a local batch's render gets them."""
        return unused_option_notes(self.kwargs, self.formats, flag_typed)


@dataclass
class Outcome:
    """What became of one job: its artifacts, sources and warnings, or its one-line error."""

    input: str
    formats: list[str] = field(default_factory=list)
    paths: list[list[str]] = field(default_factory=list)  # per format (PNG: every page)
    sources_used: list[int] = field(default_factory=list)
    sources_cited: int = 0  # Sources entries (sids that dedupe to one source count once)
    #: Every format's diagnostics, each once and capped again (formats share the reader's).
    diagnostics: list[Diagnostic] = field(default_factory=list)
    error: str = ""
    code: int = EXIT_OK

    @property
    def warnings(self) -> tuple[str, ...]:
        """The messages printed for the file."""
        return messages(self.diagnostics)

    @property
    def warning_count(self) -> int:
        """How many warnings the file had, those a summary stands for included."""
        return count(self.diagnostics)

    def add_diagnostics(self, found: Iterable[Diagnostic]) -> None:
        """Merge one artifact's diagnostics into the file's."""
        self.diagnostics = list(capped(unique([*self.diagnostics, *found])))


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
            sources_pool=Path(job.pool) if job.pool else None,  # an answer brings its own
            content_format=job.content_format,
            on_result=on_result,
            option_naming=flag_typed,
            **job.kwargs,
        )
    except Exception as exc:
        reraise_when_debugging(exc)
        at_pool = isinstance(exc, CodedError) and exc.field == "sources_pool"
        outcome.error = one_line(job.pool if at_pool else job.input, describe(exc))
        outcome.code = exit_code_for(exc)
        send(("failed", job.input, "", ()))
        return outcome
    if results:  # a deck's speaker notes may cite more than the other formats
        widest = max(results, key=lambda r: len(r.sources_used))
        outcome.sources_used = list(widest.sources_used)
        outcome.sources_cited = int(widest.stats.get("sources", len(outcome.sources_used)))
        outcome.add_diagnostics(d for r in results for d in r.diagnostics)
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
                self.console.print(
                    f"{as_text(name)} → {as_text(describe_paths(paths))}", soft_wrap=True
                )
            return
        if kind == "start":
            self.files[name] = self.progress.add_task(
                as_text(name), total=self.formats.get(name, 1)
            )
        elif kind == "done":
            self.done[name] = self.done.get(name, 0) + 1
            self.progress.advance(self.overall)
            task = self.files.get(name)
            if task is not None:
                self.progress.update(
                    task, advance=1, description=f"{as_text(name)} [dim]{fmt}[/dim]"
                )
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
            from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

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
                        outcome = _result(future, job)
                        _drain(events, reporter)
                        reporter.finished(outcome)
                        outcomes[job.input] = outcome
            # The workers have exited, so their queue feeders have flushed: nothing is lost.
            _drain(events, reporter, wait=0.2)
    return [outcomes[job.input] for job in jobs]


def _result(future: Future[Outcome], job: Job) -> Outcome:
    """The outcome of a worker's job; a worker that died is that job's one-line error."""
    try:
        return future.result()
    except Exception as exc:  # BrokenProcessPool, an unpicklable error: never a traceback
        reraise_when_debugging(exc)
        return Outcome(job.input, error=one_line(job.input, describe(exc)),
                       code=exit_code_for(exc))


def _drain(events: Any, reporter: Reporter, *, wait: float = 0.0) -> None:
    """Report every queued event; with ``wait``, also those still arriving that long."""
    import queue

    while True:
        try:
            reporter.event(events.get(timeout=wait) if wait else events.get_nowait())
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
            as_text(outcome.input),
            formats,
            str(outcome.sources_cited),
            str(outcome.warning_count),
        )
    return table


def report_outcomes(outcomes: Sequence[Outcome], console: Console, *, strict: bool) -> int:
    """Print warnings (once per file), errors and the summary; return the exit code.

    When nothing was rendered at all (every input failed before writing a file), the error
    lines are the whole answer: a table of failed rows would only repeat them."""
    code = EXIT_OK
    for outcome in outcomes:
        for warning in outcome.warnings:
            print(
                f"citerender: warning: {shown(outcome.input)}: {' '.join(warning.split())}",
                file=sys.stderr,
            )
        if outcome.error:
            print(outcome.error, file=sys.stderr)
            code = max(code, outcome.code)
        elif strict and outcome.warnings:
            code = max(code, EXIT_PROBLEMS)
    if any(not outcome.error or outcome.formats for outcome in outcomes):
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
    """The console of the CLI's own output: no highlighting, and no ``:emoji:`` codes (a file
    named ``a:smile:.md`` is shown as named)."""
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False, emoji=False)


def as_text(text: str) -> str:
    """A file name or path for the console: printable (:func:`shown`) and shown as written,
    never read as console markup (``a[red]b.md`` keeps its brackets)."""
    from rich.markup import escape

    return escape(shown(text))
