"""Run one job: render a request and put its artifacts, provenance and result in a store.

The same code runs in a Celery worker (:mod:`renderers.workers.celery_app`) and in the
service's own worker processes when there is no broker (:mod:`renderers.service.jobs`):

1. :func:`begin` marks the job running (one more attempt; a job whose renders killed their
   worker :data:`MAX_ATTEMPTS` times is failed instead of being tried forever);
2. :func:`render_to_store` renders with :func:`renderers.service.app.render_job` — the very
   function behind ``POST /render`` — into a private temporary directory, then writes each
   artifact to the store (atomically), then one provenance record per artifact;
3. :func:`record` writes the finished state to the store (last, so a ``done`` job always
   has its artifacts and records), then to the board. The webhook is sent after that and
   outside the render's time limit (a Celery task of its own, or a thread of the service), so
   a slow receiver can neither use up the render's time nor fail a finished job.

Every write is idempotent: a task redelivered after its worker died renders the same bytes
under the same keys, so running a job twice is harmless.
"""

from __future__ import annotations

import dataclasses
import logging
import tempfile
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from citations.errors import ErrorCode
from citations.store import SourcesUsedStore
from renderers.service.codes import ServiceCode
from renderers.workers.errors import StoreUnavailable
from renderers.workers.jobstate import JobBoard, JobState, next_run, save_result
from renderers.workers.provenance import write_records
from renderers.workers.stores import ArtifactStore, open_store

if TYPE_CHECKING:
    from renderers.service.requests import RenderRequest

log = logging.getLogger("citerender.jobs")

#: Renders that stop their worker process (killed, out of memory) before a job is failed.
MAX_ATTEMPTS = 3


@dataclass(frozen=True)
class StoreJob:
    """One job as sent to a worker process: its id, the request body and the store's URL.

    ``checked``: the body was checked by this very process before it was spooled (the
    service's own jobs), so it is only built. Otherwise it came through the broker and is
    built only when this version's key for it is the job's id (:func:`job_request`).
    """

    job_id: str
    payload: dict[str, Any]
    store_url: str
    checked: bool


@dataclass(frozen=True)
class Finished:
    """How a render ended: ``done`` with the result, or ``failed`` with the error."""

    status: Literal["done", "failed"]
    result: dict[str, Any] | None = None
    error: dict[str, str] | None = None


def failure(code: str, message: str, field: str = "") -> Finished:
    """A failed ending with the error the client sees."""
    return Finished("failed", error={"code": str(code), "message": message, "field": field})


@cache
def store_for(url: str) -> ArtifactStore:
    """One store object per URL and process (an S3 store keeps its connections)."""
    return open_store(url)


def render_to_store(job: StoreJob) -> Finished:
    """Render ``job`` and write its artifacts and provenance records to its store."""
    from renderers.formats import EXTENSIONS
    from renderers.service.app import CONTENT_TYPES, RenderJob, download_names, render_job
    from renderers.service.requests import RequestProblem

    try:
        request = job_request(job)
    except RequestProblem as problem:
        return failure(str(problem.code or ErrorCode.INVALID_ARGUMENT), problem.message,
                       problem.field)
    store = store_for(job.store_url)
    with tempfile.TemporaryDirectory(prefix="citerender-job-") as tmp:
        outcome = render_job(RenderJob(request.content, tmp, request.format, request.kwargs))
        if not outcome.ok:
            return failure(str(outcome.code), outcome.error, outcome.where or "content")
        local = {record.filename: record for record in SourcesUsedStore(tmp).read()}
        keys: list[str] = []
        records = []
        for path in map(Path, outcome.paths):
            key = f"artifacts/{job.job_id}/{path.name}"
            store.put(key, path.read_bytes())
            records.append(dataclasses.replace(local[path.name], filename=key))
            keys.append(key)
    write_records(store, records)
    kind, ext = ("zip", ".zip") if len(keys) > 1 else (request.format, EXTENSIONS[request.format])
    return Finished("done", result={
        "ok": True,
        "format": request.format,
        "content_type": CONTENT_TYPES[kind],
        "filename": download_names(request.stem, ext)[0],
        "sources_used": outcome.sources_used,
        "warnings": outcome.warnings,
        "diagnostics": outcome.diagnostics,
        "stats": outcome.stats,
        "artifacts": keys,
        "provenance": [record.to_dict() for record in records],
    })


def job_request(job: StoreJob) -> RenderRequest:
    """The request of ``job``, checked once: a body checked by a producer of this version is
    only built, anything else is checked first (:class:`RequestProblem` with the words a
    service of this version answers).

    A job's id is its request's key, which holds the version of the producer that made it
    (:meth:`RenderRequest.job_key`): a body this version keys to the job's id was checked by a
    producer of this version (0.2 s of hashing for 190,000 pool rows, where checking them
    again took the schema validator 4 s). A message from another version (a rolling
    upgrade), or one whose body is not the one its id was made from, is checked here.
    """
    from renderers.service.requests import checked_render_request, parse_render_request

    if job.checked:
        return checked_render_request(job.payload)
    try:
        built = checked_render_request(job.payload)
    except Exception:  # a body this version cannot build: the check says what is wrong
        built = None
    if built is not None and built.job_key() == job.job_id:
        return built
    return parse_render_request(job.payload)


def begin(
    board: JobBoard, state: JobState, *, worker: str, pid: int, lease_s: int | None = None,
) -> JobState | Finished:
    """Mark ``state`` running for one more attempt, or the failure when attempts ran out.

    ``lease_s``: how long the worker answers for the running job (:attr:`JobState.lease_s`,
    counted by the board's clock); None for the service's own pool, which records every end
    itself.
    """
    attempts = state.attempts + 1
    if attempts > MAX_ATTEMPTS:
        return failure(
            ServiceCode.WORKER_LOST,
            f"the render stopped its worker process {state.attempts} times (killed or out of "
            "memory); it is not tried again",
        )
    now = time.time()
    # A job begun again after it ended (a message redelivered once its artifacts were removed)
    # is a new run, so the old run's result no longer answers for it (jobstate's module doc).
    run = state.run if state.status in ("queued", "running") else next_run(state)
    running = state.with_status("running", attempts=attempts, worker=worker, pid=pid,
                                started_at=now, error=None,
                                lease_until=None if lease_s is None else now + lease_s,
                                lease_s=lease_s, run=run)
    board.put(running)
    return running


def record(board: JobBoard, store: ArtifactStore, state: JobState, finished: Finished) -> JobState:
    """Record how the job ended: store first, then board. Its webhook is the caller's.

    A store that refuses the result (full, unreachable) fails the job ``unavailable``: left
    ``running`` on the board, it would stay so for good, and answer every repeat of the
    request, which a failed job renders again.
    """
    final = state.with_status(finished.status, finished_at=time.time(),
                              result=finished.result, error=finished.error)
    if final.status == "done":
        try:
            save_result(store, final)
        except StoreUnavailable as exc:
            log.warning("job %s: its result could not be stored: %s", final.id, exc)
            final = state.with_status("failed", finished_at=final.finished_at, error=failure(
                ServiceCode.UNAVAILABLE, f"the job's result could not be stored: {exc}").error)
    if board.put(final):
        log.info("job %s %s (attempt %d)", final.id, final.status, final.attempts)
    else:
        log.info("job %s %s (attempt %d), after a newer run of it was queued, which stands",
                 final.id, final.status, final.attempts)
    return final

