"""``citerender render … --broker URL``: a batch rendered by Celery workers.

Each input × format becomes one job with the body ``POST /render`` would take (the input's
text, its pool's rows, the options), submitted with the same idempotency rule as the service
(:func:`renderers.workers.submit.submit`). Finished artifacts are fetched from the store and
written into ``--out`` under the names a local batch uses, with their provenance merged into
the local ``sources_used.json``; progress and the summary are the local batch's
(:class:`renderers.cli.Reporter`). Workers see only the request: images referenced by a
relative path, ``--reference-docx`` and ``--reference-pptx`` are not sent.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citations.store import ArtifactRecord, SourcesUsedStore
from renderers.cli_batch import Job, Outcome, Reporter
from renderers.cli_errors import (
    EXIT_BAD_INPUT,
    EXIT_PROBLEMS,
    describe,
    fail,
    is_input_error,
    one_line,
)
from renderers.diagnostics import Code, Diagnostic
from renderers.options import PARAMS, coerce
from renderers.workers.errors import (
    BrokerUnavailable,
    StoreUnavailable,
    WorkerSetupError,
    no_store_advertised,
)
from renderers.workers.jobstate import JobState

if TYPE_CHECKING:
    from rich.console import Console

    from renderers.service.requests import RenderRequest
    from renderers.workers.celery_app import CeleryQueue
    from renderers.workers.jobstate import RedisBoard
    from renderers.workers.stores import ArtifactStore

POLL_S = 0.05
#: A batch gives up on jobs that have not finished after this long.
BATCH_DEADLINE_S = 3600.0
#: After this long without any job moving, say that the workers may be missing (once).
QUIET_NOTE_S = 60.0


@dataclass
class _Pending:
    """One submitted input × format, with its request (sent again when its job stalls)."""

    job: Job
    fmt: str
    request: RenderRequest
    state: JobState

    @property
    def job_id(self) -> str:
        return self.state.id


@dataclass
class _Progress:
    """Per input: the formats finished so far (written in the order asked for at the end)."""

    outcome: Outcome
    finished: dict[str, list[str]] = field(default_factory=dict)
    left: int = 0
    #: The options none of the input's formats uses, said once all are done, as a local
    #: render of them all says them (each job, of one format, would judge by its own).
    unused: tuple[Diagnostic, ...] = ()


def run_remote_batch(
    jobs: Sequence[Job], broker: str, store_url: str | None, console: Console
) -> list[Outcome]:
    """Render ``jobs`` on the workers behind ``broker``; the outcomes in input order."""
    for job in jobs:
        for option in _local_only(job.kwargs):
            flag = "--" + option.replace("_", "-")
            raise fail(flag, f"{flag} is not sent to remote workers; render locally")
    try:
        board, queue, store = _connect(broker, store_url)
    except (WorkerSetupError, BrokerUnavailable, StoreUnavailable) as exc:
        raise fail("--broker", str(exc)) from None
    progress = {job.input: _Progress(Outcome(job.input), left=len(job.formats)) for job in jobs}
    with Reporter(console, jobs) as reporter:
        pending = _submit_all(jobs, board, queue, store, progress, reporter)
        _wait(pending, board, queue, store, progress, reporter)
    queue.close()
    board.close()
    outcomes = []
    for job in jobs:
        entry = progress[job.input]
        outcome = entry.outcome
        if not outcome.error:
            for fmt in job.formats:
                outcome.formats.append(fmt)
                outcome.paths.append(entry.finished[fmt])
        outcomes.append(outcome)
    return outcomes


def _connect(broker: str, store_url: str | None) -> tuple[RedisBoard, CeleryQueue, ArtifactStore]:
    from renderers.workers.celery_app import CeleryQueue, check_broker_url
    from renderers.workers.jobstate import RedisBoard
    from renderers.workers.stores import open_store

    check_broker_url(broker)
    queue = CeleryQueue(broker)
    board = RedisBoard(broker)
    board.ping()
    url = store_url or board.advertised_store()
    if url is None:
        raise no_store_advertised("pass --store URL")
    return board, queue, open_store(url)


def _local_only(kwargs: dict[str, Any]) -> list[str]:
    """The options given that a request cannot carry (limits only when not the defaults)."""
    found = []
    for name, value in kwargs.items():
        if PARAMS[name].offered_on("service"):
            continue
        if name == "limits" and isinstance(value, dict):
            defaults = PARAMS["limits"].default
            found += [key for key, given in value.items() if getattr(defaults, key) != given]
        else:
            found.append(name)
    return found


def request_body(job: Job) -> dict[str, Any]:
    """The ``POST /render`` body of one input, without its format (user errors propagate)."""
    from citations.pool import SourcePool
    from renderers.api import content_format_for, decode_content

    path = Path(job.input)
    body: dict[str, Any] = {
        "content": decode_content(path.read_bytes(), job.input),
        "sources_pool": SourcePool.load(job.pool).rows(),
        **{name: _json_value(coerce(PARAMS[name], value)) for name, value in job.kwargs.items()
           if PARAMS[name].offered_on("service")},
    }
    content_format = job.content_format or content_format_for(path)
    if content_format is not None:
        body["content_format"] = content_format
    return body


def _used_by(body: dict[str, Any], fmt: str) -> dict[str, Any]:
    """``body`` without the options ``fmt`` does not use: the batch says those once for the
    input (:attr:`_Progress.unused`), where a job of one format would say each."""
    return {key: value for key, value in body.items()
            if key not in PARAMS or PARAMS[key].used_by(fmt)}


def _json_value(value: Any) -> Any:
    """A checked option value as JSON carries it (sets sorted, tuples as lists, enums as text)."""
    if isinstance(value, set | frozenset):
        return sorted(_json_value(item) for item in value)
    if isinstance(value, tuple | list):
        return [_json_value(item) for item in value]
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    return str(value)


def _submit_all(
    jobs: Sequence[Job], board: RedisBoard, queue: CeleryQueue, store: ArtifactStore,
    progress: dict[str, _Progress], reporter: Reporter,
) -> list[_Pending]:
    from renderers.service.requests import RequestProblem, parse_render_request

    pending: list[_Pending] = []
    for job in jobs:
        reporter.event(("start", job.input, "", ()))
        try:
            body = request_body(job)
            progress[job.input].unused = job.unused_notes()
            for fmt in job.formats:
                # A local batch writes every page unless --pages says otherwise.
                pages = {"pages": "all"} if fmt == "png" and "pages" not in body else {}
                request = parse_render_request({**_used_by(body, fmt), "format": fmt, **pages})
                pending.append(_Pending(job, fmt, request,
                                        _submit(request, board, queue, store)))
        except RequestProblem as problem:
            _failed(progress[job.input], reporter, problem.message, EXIT_BAD_INPUT)
        except Exception as exc:
            if not is_input_error(exc) or isinstance(exc, BrokerUnavailable | StoreUnavailable):
                raise
            _failed(progress[job.input], reporter, describe(exc), EXIT_BAD_INPUT)
    return pending


def _submit(
    request: RenderRequest, board: RedisBoard, queue: CeleryQueue, store: ArtifactStore,
) -> JobState:
    """The job of ``request``, queued unless it is already done, queued or running (the
    service's rule, :func:`renderers.workers.submit.submit`)."""
    from renderers.workers.submit import submit

    return submit(request, board=board, store=store,
                  enqueue=lambda s, p: queue.enqueue(s, p, store.url)).state


def _wait(
    pending: list[_Pending], board: RedisBoard, queue: CeleryQueue, store: ArtifactStore,
    progress: dict[str, _Progress], reporter: Reporter,
) -> None:
    """Poll the board until every job ended (bounded by :data:`BATCH_DEADLINE_S`). A job
    whose holder no longer answers for it (:meth:`~renderers.workers.jobstate.JobState.lapsed`:
    stalled, its end refused by the board or its worker gone; or queued past its publisher's
    lease, its message perhaps lost) is submitted again, as a client of the service would: it
    would otherwise hold the batch until the deadline."""
    deadline = time.monotonic() + BATCH_DEADLINE_S
    moved = time.monotonic()
    noted = False
    while pending:
        still: list[_Pending] = []
        for item in pending:
            state = item.state if item.state.status == "done" else None
            state = state or board.get(item.job_id)
            entry = progress[item.job.input]
            if entry.outcome.error:
                continue  # another format of this input failed
            if state is not None and state.lapsed():
                state = item.state = _submit(item.request, board, queue, store)
            if state is not None and state.status == "done":
                _fetch(item, state, store, entry, reporter)
            elif state is not None and state.status == "failed":
                error = state.error or {}
                code = EXIT_PROBLEMS if error.get("code") == "strict_failed" else EXIT_BAD_INPUT
                _failed(entry, reporter, f"{item.fmt}: {error.get('message', 'failed')}", code)
            else:
                still.append(item)
                continue
            moved = time.monotonic()
        pending = still
        now = time.monotonic()
        if pending and now > deadline:
            for item in pending:
                _failed(progress[item.job.input], reporter,
                        f"{item.fmt}: no worker finished it within {BATCH_DEADLINE_S:g} s",
                        EXIT_BAD_INPUT)
            return
        if pending and not noted and now - moved > QUIET_NOTE_S:
            queues = sorted({_queue_name(item.fmt) for item in pending})
            print(f"citerender: note: no job moved for {QUIET_NOTE_S:g} s; is a worker "
                  f"consuming {', '.join(queues)}?", file=sys.stderr)
            noted = True
        if pending:
            time.sleep(POLL_S)


def _queue_name(fmt: str) -> str:
    from renderers.workers import queue_for

    return queue_for(fmt)


def _fetch(item: _Pending, state: JobState, store: ArtifactStore, entry: _Progress,
           reporter: Reporter) -> None:
    """Copy a finished job's artifacts into the output directory and record them there."""
    from renderers.api import EXTENSIONS, page_paths
    from renderers.errors import OutputPathError
    from renderers.outputs import output_path, relative_name, write_files

    job, result = item.job, state.result or {}
    stem = job.name or Path(job.input).stem
    keys: list[str] = list(result.get("artifacts") or [])
    target = output_path(job.out, stem + EXTENSIONS[item.fmt])
    paths = page_paths(target, len(keys)) if item.fmt == "png" else [target]
    records = {rec["filename"]: rec for rec in result.get("provenance", [])}
    local: list[ArtifactRecord] = []
    blobs: list[bytes] = []
    try:
        for key, path in zip(keys, paths, strict=True):
            data = store.get(key)
            if data is None:
                raise StoreUnavailable(f"{store.url}{key}: the artifact is missing from the store")
            blobs.append(data)
            record = ArtifactRecord.from_dict(records[key])
            local.append(dataclasses.replace(record, artifact_name=Path(stem).name,
                                             filename=relative_name(job.out, path)))
        sources_used = SourcesUsedStore(job.out)
        recovered = sources_used.record_many(local, write=lambda: write_files(paths, blobs))
    except (OSError, OutputPathError, StoreUnavailable, KeyError, ValueError) as exc:
        _failed(entry, reporter, f"{item.fmt}: {describe(exc)}", EXIT_BAD_INPUT)
        return
    outcome = entry.outcome
    if not outcome.sources_used:
        outcome.sources_used = list(result.get("sources_used", []))
        stats = result.get("stats", {})
        outcome.sources_cited = int(stats.get("sources", len(outcome.sources_used)))
    outcome.add_diagnostics([
        *(Diagnostic(**found) for found in result.get("diagnostics", [])),
        *(Diagnostic(Code.STORE_RECOVERED, note, file=str(sources_used.path))
          for note in recovered),
    ])
    entry.finished[item.fmt] = [str(p) for p in paths]
    entry.left -= 1
    reporter.event(("done", job.input, item.fmt, tuple(str(p) for p in paths)))
    if entry.left == 0:
        outcome.add_diagnostics(entry.unused)
        reporter.finished(outcome)


def _failed(entry: _Progress, reporter: Reporter, message: str, code: int) -> None:
    outcome = entry.outcome
    if outcome.error:
        return
    outcome.error = one_line(outcome.input, message)
    outcome.code = code
    reporter.event(("failed", outcome.input, "", ()))
    reporter.finished(outcome)

