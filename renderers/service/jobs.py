"""Asynchronous render jobs: ``POST /jobs``, ``GET /jobs/{id}``, ``GET /jobs/{id}/artifact``.

``POST /jobs`` takes the body of ``POST /render`` (plus an optional ``webhook``) and answers
202 ``{id, status, status_url}`` at once; ``GET /jobs/{id}`` answers the state (``queued``,
``running``, ``stalled`` past its worker's lease, ``done`` with the envelope, ``failed`` with
the error) and
``GET /jobs/{id}/artifact`` streams the file (a zip for several PNG pages). A request that
repeats a finished one answers 200 with the finished job, rendering nothing.

A job id is the capability to read that job: no route lists job ids or anything holding them
(artifact keys are ``artifacts/<job id>/…``). A finished job's own provenance records are in
its state (``result.provenance``); the merged ``sources_used.json`` of the whole store is for
the operator, read from the store itself (:func:`renderers.workers.provenance.sources_used_text`,
or :func:`~renderers.workers.provenance.compact` to write it at the store's root).

Two backends, chosen by configuration:

- **with a broker** (``--broker redis://…``): jobs go to Celery workers; job states live on the
  :class:`~renderers.workers.jobstate.RedisBoard` and artifacts in the store (``--store``, or
  the store the workers advertise). The service keeps nothing of its own, so any replica
  answers for any job. Redis down → 503 for job routes only; ``/render`` keeps working.
- **without**: jobs run on the service's own worker pool (the one behind ``/render``), states
  in memory, artifacts in ``--store`` or the service's temporary directory. At most
  ``JobsConfig.backlog`` jobs are queued or running at once (beyond, ``POST /jobs`` answers
  503 ``busy``); a queued job waits apart from ``/render`` requests and takes a worker only
  when no request is waiting for one (:class:`~renderers.service.pool.WorkerPool`'s
  background jobs), so jobs never make ``/render`` answer 503. A job stays ``queued`` until a
  worker takes it. A queued job's body waits on disk (:class:`SpooledJob`), not in the
  service's memory: parsed, a 10 MiB body of pool rows is about 60 MiB of objects, and a full
  backlog of them would take the service, which has no memory cap, past 15 GiB. Finished
  jobs are kept within :data:`KEEP_LOCAL_JOBS` and :data:`KEEP_LOCAL_BYTES`, the oldest
  forgotten first, so neither the board nor the temporary root grows for as long as the
  service runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
import re
import tempfile
import threading
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from citations.errors import ErrorCode
from renderers.service.app import (
    MEMORY_SETTING,
    checked_job,
    content_disposition,
    handle_chunks,
    problem,
    warning_count,
    write_zip_pages,
)
from renderers.service.codes import ServiceCode, error_response
from renderers.service.pool import (
    JobRaised,
    JobTimeout,
    MemoryExceeded,
    PoolError,
    PoolFull,
    WorkerDied,
    memory_refusal,
)
from renderers.service.requests import RequestProblem
from renderers.workers.errors import (
    BrokerUnavailable,
    StoreUnavailable,
    WorkerSetupError,
    no_store_advertised,
)
from renderers.workers.execute import (
    Finished,
    StoreJob,
    begin,
    failure,
    record,
    render_to_store,
)
from renderers.workers.jobstate import (
    PUBLIC_STATUSES,
    JobBoard,
    JobState,
    MemoryBoard,
    current_state,
    result_key,
)
from renderers.workers.provenance import record_key
from renderers.workers.stores import ArtifactStore, open_store
from renderers.workers.submit import submit
from renderers.workers.webhooks import MAX_URL as _MAX_WEBHOOK_URL
from renderers.workers.webhooks import WebhookPolicy, WebhookRefused, send_webhook

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from renderers.service.app import ExportService
    from renderers.workers.celery_app import CeleryQueue
    from renderers.workers.jobstate import RedisBoard

_JOB_ID = re.compile(r"[0-9a-f]{64}")
_log = logging.getLogger("citerender.jobs")
_RETRY = {"Retry-After": "5"}
#: Local jobs (no broker) queued or running at once, beyond which ``POST /jobs`` answers 503.
MAX_LOCAL_JOBS = 256
#: How long a local job waits for a free worker before it fails as ``busy``.
LOCAL_QUEUE_WAIT_S = 600.0
#: Finished local jobs (done or failed) the service keeps, and the bytes of their artifacts;
#: past either, the job that finished first is forgotten, artifacts and all (its routes answer
#: 404, and its request, sent again, renders it again). The newest job is always kept.
KEEP_LOCAL_JOBS = 1024
KEEP_LOCAL_BYTES = 2 * 1024**3
#: Threads sending local jobs' webhooks; more calls wait their turn.
WEBHOOK_THREADS = 4
Lifespan = Callable[["Starlette"], contextlib.AbstractAsyncContextManager[None]]


@dataclass(frozen=True)
class JobsConfig:
    """Where jobs run and land: a broker URL (or None: the local pool) and a store URL."""

    broker: str | None = None
    store: str | None = None
    webhook_hosts: tuple[str, ...] = ()
    #: Local jobs queued or running at once (without a broker); beyond, 503 ``busy``.
    backlog: int = MAX_LOCAL_JOBS


class JobsAPI:
    """The job routes of one app and the backend behind them."""

    def __init__(self, service: ExportService, config: JobsConfig) -> None:
        self.service = service
        self.config = config
        self.webhooks = WebhookPolicy.of(config.webhook_hosts)
        if config.store is not None:
            open_store(config.store)  # a malformed URL fails at start-up, not per request
        if config.store is not None and config.broker is None:
            raise WorkerSetupError(
                f"store {config.store!r} without a broker: the store is where Celery workers "
                "write their artifacts; without a broker jobs run on the service's own workers "
                "and keep their files in its temporary directory (give the broker too, or no "
                "store)"
            )
        if config.broker is not None:
            from renderers.workers.celery_app import check_broker_url

            check_broker_url(config.broker)
        self._board: JobBoard | None = None
        self._queue: CeleryQueue | None = None
        self._store: ArtifactStore | None = None
        self._local: set[asyncio.Task[None]] = set()
        #: Local jobs admitted and not finished (counted on the event loop, before submission).
        self._backlog = 0
        #: Finished local jobs kept, oldest first: id → (artifact bytes, artifact keys).
        self._kept: OrderedDict[str, tuple[int, list[str]]] = OrderedDict()
        self._kept_bytes = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        #: Webhooks of local jobs are sent here, not on the threads the job routes use: a
        #: receiver that does not answer holds a thread for every attempt's time limit, and
        #: on the shared threads ten such calls kept GET /jobs/{id} waiting 31 s.
        self._webhook_threads = ThreadPoolExecutor(WEBHOOK_THREADS,
                                                   thread_name_prefix="citerender-webhook")
        #: Set at shutdown: a webhook being sent makes no further attempt (:func:`send_webhook`).
        self._stopping = threading.Event()

    # -- set-up -----------------------------------------------------------------------------

    def routes(self) -> list[Route]:
        return [
            Route("/jobs", self.create, methods=["POST"]),
            Route("/jobs/{job_id}", self.status, methods=["GET"]),
            Route("/jobs/{job_id}/artifact", self.artifact, methods=["GET"]),
        ]

    def lifespan(self, inner: Lifespan) -> Lifespan:
        """``inner`` (the service's lifespan) with the job backend started inside it."""

        @contextlib.asynccontextmanager
        async def wrapped(app: Starlette) -> AsyncIterator[None]:
            async with inner(app):
                self._loop = asyncio.get_running_loop()
                if self.config.broker is not None:
                    from renderers.workers.celery_app import CeleryQueue
                    from renderers.workers.jobstate import RedisBoard

                    self._board = RedisBoard(self.config.broker)
                    self._queue = CeleryQueue(self.config.broker)
                else:
                    self._board = MemoryBoard()
                try:
                    yield
                finally:
                    await self._stop()

        return wrapped

    async def _stop(self) -> None:
        for task in list(self._local):
            task.cancel()
        await asyncio.gather(*self._local, return_exceptions=True)
        self._stopping.set()
        self._webhook_threads.shutdown(wait=False, cancel_futures=True)
        if self._queue is not None:
            self._queue.close()
        if self.config.broker is not None and self._board is not None:
            self._board_redis().close()

    def _board_redis(self) -> RedisBoard:
        from renderers.workers.jobstate import RedisBoard

        assert isinstance(self._board, RedisBoard)
        return self._board

    @property
    def board(self) -> JobBoard:
        if self._board is None:
            raise BrokerUnavailable("the job routes are not running yet")
        return self._board

    def store(self) -> ArtifactStore:
        """The artifact store, resolved on first use: ``--store``, else the one the workers
        advertise in Redis. Only a store found is kept: while none is advertised (no worker
        yet, or Redis restarted and no worker has advertised again) every request asks Redis
        again, so the job routes answer as soon as a worker's next advertisement lands."""
        if self._store is None:
            url = self.config.store
            if url is None and self.config.broker is not None:
                url = self._board_redis().advertised_store()
                if url is None:
                    raise no_store_advertised("start the service with --store URL")
            if url is None:
                assert self.service.temp_root is not None
                url = (self.service.temp_root / "jobs").as_uri()
            self._store = open_store(url)
        return self._store

    # -- routes -----------------------------------------------------------------------------

    async def create(self, request: Request) -> Response:
        """``POST /jobs``: 202 for a queued (or running) job, 200 for a finished one."""
        try:  # the same bounds and checks as POST /render, off the event loop
            parsed, webhook = await self.service.read_checked(request, checked_job)
            if webhook is not None:
                webhook = self.webhooks.check(webhook)
        except RequestProblem as refused:
            return problem(refused)
        except WebhookRefused as refused:
            return error_response(400, str(refused), "webhook", ErrorCode.INVALID_ARGUMENT)
        local = self.config.broker is None
        if local:
            if self._backlog >= self.config.backlog:
                return self.service.busy(
                    f"busy: {self._backlog} jobs are queued or running, the most this service "
                    f"takes (job backlog {self.config.backlog}); retry later", self._backlog)
            self._backlog += 1  # reserved now, so concurrent requests cannot overshoot
        queued_now = False
        try:
            submission = await asyncio.to_thread(
                lambda: submit(parsed, board=self.board, store=self.store(),
                               enqueue=self._enqueue, webhook=webhook or ""))
            queued_now = submission.queued_now
        except (BrokerUnavailable, StoreUnavailable) as exc:
            return _unavailable(exc)
        finally:
            if local and not queued_now:
                self._backlog -= 1  # a finished, queued or running job: nothing new to run
        state = submission.state
        return JSONResponse(state.public(), status_code=200 if state.status == "done" else 202,
                            headers={"Location": f"/jobs/{state.id}"})

    async def status(self, request: Request) -> Response:
        """``GET /jobs/{id}``: the job's state."""
        found = await self._find(request.path_params["job_id"])
        if isinstance(found, Response):
            return found
        return JSONResponse(found.public(), headers={"Cache-Control": "no-store"})

    async def artifact(self, request: Request) -> Response:
        """``GET /jobs/{id}/artifact``: the finished job's file, streamed from the store."""
        found = await self._find(request.path_params["job_id"])
        if isinstance(found, Response):
            return found
        if found.status != "done" or found.result is None:
            return error_response(409, f"job {found.id} is {found.status}; the artifact exists "
                                  "once it is done", "job_id", ServiceCode.NOT_READY)
        result = found.result
        keys: list[str] = list(result.get("artifacts") or [])
        ext = os.path.splitext(result["filename"])[1]
        headers = {
            "Content-Disposition": content_disposition(found.stem, ext),
            "X-Sources-Used": ",".join(str(sid) for sid in result.get("sources_used", [])),
            "X-Warnings-Count": str(warning_count(result.get("stats", {}),
                                                  result.get("warnings", []))),
            "Cache-Control": "no-store",
        }
        try:
            if len(keys) == 1:
                chunks = await asyncio.to_thread(self.store().stream, keys[0])
                # A store failing mid-stream aborts the connection: never a short file with 200.
                return StreamingResponse(chunks, media_type=result["content_type"],
                                         headers=headers)
            archive = await asyncio.to_thread(self._zip, keys, found.stem)
        except KeyError as missing:
            return error_response(410, f"job {found.id}: the artifact {missing} is no longer in "
                                  "the store; submit the request again", "job_id",
                                  ServiceCode.GONE)
        except (BrokerUnavailable, StoreUnavailable) as exc:
            return _unavailable(exc)
        headers["Content-Length"] = str(os.fstat(archive.fileno()).st_size)
        return StreamingResponse(handle_chunks(archive), media_type=result["content_type"],
                                 headers=headers)

    # -- helpers ----------------------------------------------------------------------------

    async def _find(self, job_id: str) -> JobState | Response:
        if not _JOB_ID.fullmatch(job_id):
            return error_response(404, f"no job {job_id[:80]!r}; job ids are 64 hex digits",
                                  "job_id", ServiceCode.NOT_FOUND)
        try:
            state = await asyncio.to_thread(self._lookup, job_id)
        except (BrokerUnavailable, StoreUnavailable) as exc:
            return _unavailable(exc)
        if state is None:
            return error_response(404, f"no job {job_id}", "job_id", ServiceCode.NOT_FOUND)
        return state

    def _lookup(self, job_id: str) -> JobState | None:
        return current_state(self.board, self.store, job_id)

    def _zip(self, keys: list[str], stem: str) -> BinaryIO:
        """The zip of a job's pages in an unnamed temporary file, read from its start; one
        page is in memory at a time (in memory, a 245 MB zip took the service to 1.2 GB)."""
        store = self.store()

        def read(key: str) -> bytes:
            data = store.get(key)
            if data is None:
                raise KeyError(key)
            return data

        # Closed by the answer that streams it (handle_chunks), or here on failure.
        archive = tempfile.TemporaryFile(dir=self.service.scratch(_ZIP_DIR))  # noqa: SIM115
        try:
            write_zip_pages(
                archive, [(key.rsplit("/", 1)[-1], functools.partial(read, key)) for key in keys],
                stem)
        except BaseException:
            archive.close()
            raise
        archive.seek(0)
        return archive

    def _enqueue(self, state: JobState, payload: dict[str, Any]) -> None:
        """Publish to Celery, or spool the body and start the job on the local pool (called
        from a thread)."""
        if self._queue is not None:
            self._queue.enqueue(state, payload, self.store().url)
            return
        assert self._loop is not None
        spooled = spool(self.service.scratch(_SPOOL_DIR), state.id, payload, self.store().url)
        self._loop.call_soon_threadsafe(self._start_local, state, spooled)

    def _start_local(self, state: JobState, spooled: SpooledJob) -> None:
        self._unkeep(state.id)  # a failed job again, or one whose artifacts went: running now
        task = asyncio.get_running_loop().create_task(self._run_local(state, spooled))
        self._local.add(task)
        task.add_done_callback(self._local.discard)

    async def _run_local(self, queued: JobState, spooled: SpooledJob) -> None:
        """One job on the service's pool: the steps of :mod:`renderers.workers.execute`.

        The job stays ``queued`` while it waits: it is marked ``running`` (:func:`begin`) only
        when a worker has been leased for it. Its spooled body is removed however it ends.
        """
        try:
            await self._render_local(queued, spooled)
        finally:
            self._backlog -= 1
            Path(spooled.body_path).unlink(missing_ok=True)

    async def _render_local(self, queued: JobState, spooled: SpooledJob) -> None:
        board, store, pool = self.board, self.store(), self.service.pool
        current = board.get(queued.id) or queued
        started: JobState | None = None

        def take_worker(pid: int) -> None:
            nonlocal started
            begun = begin(board, current, worker="service", pid=pid)
            if isinstance(begun, Finished):
                raise _NotStarted(begun)
            started = begun

        finished: Finished
        try:
            if pool is None:
                raise PoolError("the worker pool is not running")
            finished = await pool.run(
                render_spooled, spooled,
                timeout=self.service.render_timeout_s, background=True,
                wait=LOCAL_QUEUE_WAIT_S, on_start=take_worker)
        except _NotStarted as ended:
            finished = ended.finished
        except PoolFull:
            finished = failure(ServiceCode.BUSY,
                               f"no worker was free for {LOCAL_QUEUE_WAIT_S:g} s")
        except JobTimeout as exc:
            finished = failure(ServiceCode.TIME_LIMIT, f"render timed out: {exc}")
        except (MemoryExceeded, WorkerDied) as exc:
            refusal = memory_refusal(exc, MEMORY_SETTING)
            finished = (failure(str(ErrorCode.LIMIT_EXCEEDED), refusal, "content") if refusal
                        else failure(str(ErrorCode.INTERNAL), f"render failed: {exc}"))
        except JobRaised as exc:
            finished = failure(str(ErrorCode.INTERNAL), f"render failed: {exc}")
        except PoolError as exc:
            finished = failure(ServiceCode.UNAVAILABLE, f"unavailable: {exc}")
        final = await asyncio.to_thread(record, board, store, started or current, finished)
        if forgotten := self._keep(final):
            await asyncio.to_thread(self._forget, forgotten)
        if final.webhook:
            self._webhook_threads.submit(send_webhook, final.webhook, final.public(),
                                         self.webhooks, self._stopping)

    def _keep(self, final: JobState) -> list[tuple[str, list[str]]]:
        """Count ``final`` among the finished local jobs kept; the jobs that must go now
        (:data:`KEEP_LOCAL_JOBS`, :data:`KEEP_LOCAL_BYTES`), dropped from the board already,
        so no route answers them while their files are being removed."""
        result = final.result or {}
        keys = list(result.get("artifacts") or [])
        size = int(result.get("stats", {}).get("bytes", 0))
        self._unkeep(final.id)
        self._kept[final.id] = (size, keys)
        self._kept_bytes += size
        forgotten = []
        while len(self._kept) > 1 and (len(self._kept) > KEEP_LOCAL_JOBS
                                       or self._kept_bytes > KEEP_LOCAL_BYTES):
            job_id, (old_size, old_keys) = self._kept.popitem(last=False)
            self._kept_bytes -= old_size
            self.board.drop(job_id)
            forgotten.append((job_id, old_keys))
        return forgotten

    def _unkeep(self, job_id: str) -> None:
        if (kept := self._kept.pop(job_id, None)) is not None:
            self._kept_bytes -= kept[0]

    def _forget(self, forgotten: list[tuple[str, list[str]]]) -> None:
        """Remove forgotten jobs from the store: the result first (so a repeat renders again),
        then each artifact and its provenance record."""
        store = self.store()
        for job_id, keys in forgotten:
            try:
                store.delete(result_key(job_id))
                for key in keys:
                    store.delete(key)
                    store.delete(record_key(key))
            except StoreUnavailable as exc:
                _log.warning("job %s: its files could not all be removed: %s", job_id, exc)


#: Where queued local jobs' bodies wait, under the service's temporary root.
_SPOOL_DIR = "queued"
#: Where the zips of several pages are built (unnamed files), under the same root.
_ZIP_DIR = "zips"


@dataclass(frozen=True)
class SpooledJob:
    """A local job as its worker gets it: the body is in a file, read only by the worker."""

    job_id: str
    body_path: str
    store_url: str


def spool(directory: Path, job_id: str, payload: dict[str, Any], store_url: str) -> SpooledJob:
    """Write ``payload`` (a checked request body) as JSON into ``directory``; the job that
    reads it back. A file of its own per call, so no two jobs share one."""
    path = directory / f"{uuid.uuid4().hex}.json"
    path.write_bytes(json.dumps(payload, ensure_ascii=False).encode("utf-8"))
    return SpooledJob(job_id, str(path), store_url)


def render_spooled(job: SpooledJob) -> Finished:
    """In a worker: :func:`~renderers.workers.execute.render_to_store` with the spooled body
    (JSON values round-trip exactly, so the job renders the body its id was made from). The
    body was checked before it was spooled, by this service, and is not checked again."""
    payload = json.loads(Path(job.body_path).read_bytes())
    return render_to_store(StoreJob(job.job_id, payload, job.store_url, checked=True))


class _NotStarted(Exception):
    """A local job that may not run (its attempts ran out): how it ended instead."""

    def __init__(self, finished: Finished) -> None:
        super().__init__("the job was not started")
        self.finished = finished


def _unavailable(exc: Exception) -> Response:
    """503 ``unavailable``: the broker or the store cannot be used now (retry later)."""
    return error_response(503, f"unavailable: {exc}", "", ServiceCode.UNAVAILABLE,
                          headers=_RETRY)


def job_openapi_paths(
    error: dict[str, Any], request_schema: dict[str, Any]
) -> dict[str, Any]:
    """The OpenAPI description of the job routes (merged into the service's document);
    ``error`` is the content of every refusal (``{"error", "field", "code"}``) and
    ``request_schema`` the body of ``POST /render``, which ``POST /jobs`` takes too."""
    job_id = [{"name": "job_id", "in": "path", "required": True,
               "schema": {"type": "string", "pattern": "^[0-9a-f]{64}$"}}]
    state = {"content": {"application/json": {"schema": {"type": "object", "properties": {
        "id": {"type": "string"}, "status": {"enum": list(PUBLIC_STATUSES)},
        "stalled": {"type": "object", "description": "A stalled job (running past its worker's "
                    "lease): since when (epoch seconds) and what to do"},
        "status_url": {"type": "string"}, "artifact_url": {"type": "string"},
        "result": {"type": "object"}, "error": {"type": "object"},
    }}}}}
    body = {**request_schema, "properties": {
        **request_schema["properties"],
        "webhook": {"type": "string", "maxLength": _MAX_WEBHOOK_URL,
                    "description": "An http(s) URL POSTed the job's state when it finishes "
                                   "(only to hosts the operator allows with --webhook-host; "
                                   "400 otherwise)."},
    }}
    unavailable = {"description": "The broker or store cannot be used now (unavailable); "
                                  "Retry-After", **error}
    return {
        "/jobs": {"post": {
            "summary": "Queue a render (the body of /render plus an optional webhook URL)",
            "description": "The job id is the capability to read the job and its file; no "
                           "route lists job ids.",
            "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
            "responses": {"202": {"description": "Queued (a job is running only once a worker "
                                                 "has taken it)", **state},
                          "200": {"description": "Already done: the finished job", **state},
                          "400": {"description": "Invalid JSON or field, or a refused webhook",
                                  **error},
                          "408": {"description": "The body did not arrive in time (time_limit)",
                                  **error},
                          "413": {"description": "Body too large (too_large)", **error},
                          "415": {"description": "Not JSON (unsupported_media_type)", **error},
                          "422": {"description": "Refused content or pool", **error},
                          "503": {"description": "The job backlog is full (busy), or the broker "
                                                 "or store is unavailable (unavailable); "
                                                 "Retry-After", **error}},
        }},
        "/jobs/{job_id}": {"get": {
            "summary": "A job's state", "parameters": job_id,
            "responses": {"200": {"description": "The state", **state},
                          "404": {"description": "No such job (not_found)", **error},
                          "503": unavailable},
        }},
        "/jobs/{job_id}/artifact": {"get": {
            "summary": "The finished job's file", "parameters": job_id,
            "responses": {"200": {"description": "The file (a zip for several PNG pages)"},
                          "404": {"description": "No such job (not_found)", **error},
                          "409": {"description": "Not done yet (not_ready)", **error},
                          "410": {"description": "Removed from the store (gone)", **error},
                          "503": unavailable},
        }},
    }
