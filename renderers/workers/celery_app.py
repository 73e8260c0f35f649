"""The Celery 5 application: the render task, its queues and the settings for long CPU jobs.

Settings, and why:

- **late acknowledgement** (``task_acks_late``) with ``task_reject_on_worker_lost``: a message
  is removed from Redis only after its render finished. A worker process that dies mid-render
  (SIGKILL, the out-of-memory killer) has its message put back at once by the worker's main
  process; a whole worker (or machine) that dies leaves the message unacknowledged, and Redis
  hands it to another worker after ``visibility_timeout`` (which is therefore longer than the
  hard time limit, or a slow render would be handed out twice).
- **prefetch 1** (``worker_prefetch_multiplier=1``, ``worker_disable_prefetch``): a worker
  takes a message only when it has a free process, so a long render never holds up jobs that
  another worker could start now.
- **soft and hard time limits**: the soft limit raises inside the render, which fails the job
  with ``time_limit``; the hard limit kills the process (:meth:`RenderTask.on_failure` then
  fails the job from the worker's main process).
- **max tasks and memory per child**: WeasyPrint's caches grow with every document; a process
  is replaced after that many renders or once it holds that much memory.
- **a memory cap per process** (``memory_cap_mib``, set in each new process): Celery's memory
  limit is checked only after a task, so one render could still take the machine's memory;
  the kernel refuses it past the cap instead (:mod:`renderers.process_memory`). A render that
  raises :class:`MemoryError` fails with ``limit_exceeded``; one that aborts (Typst) counts as
  a lost process, tried again up to the attempt limit.
- **the store advertisement** (``citerender:store`` in Redis, :func:`advertise_store`): a
  service or batch given no ``--store`` uses the store the workers advertise. Every worker sets
  it at start, at every task it takes and every ``advertise_interval_s`` seconds (a timer in
  its main process), each time for three intervals, so it comes back within one interval after
  Redis restarts or is flushed, and disappears once no worker serves the store.
- **the webhook as a task of its own** (``citerender.webhook``, on the job's queue, sent
  once the job's state is recorded): the render task ends before the webhook goes out, so a
  slow receiver uses up neither the render's time limit nor its process, and a webhook that
  runs past its own time limit (above every attempt's timeout) fails only itself, never the
  finished job. It is acknowledged on receipt, so a receiver is called at most once per job.
- **queues per format family** (:data:`renderers.workers.QUEUES`): ``render.pdf`` (PDF and
  PNG, WeasyPrint) and ``render.office`` (DOCX, PPTX, HTML, Markdown), so heavy layouts and
  light writers can get their own workers and limits.

Job state is not kept in a Celery result backend but on the :class:`RedisBoard` (the states
the API answers, including ``queued`` and attempts), so results are ignored.
"""

from __future__ import annotations

import logging
import os
import uuid
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from citations.errors import ErrorCode
from renderers.process_memory import cap_process_memory, memory_exceeded
from renderers.service.codes import ServiceCode
from renderers.workers import ADVERTISE_INTERVAL_S, QUEUES, queue_for
from renderers.workers.errors import BrokerUnavailable, WorkerSetupError, redact_url
from renderers.workers.execute import (
    Finished,
    StoreJob,
    begin,
    failure,
    record,
    render_to_store,
    store_for,
)
from renderers.workers.jobstate import (
    JobBoard,
    JobState,
    RedisBoard,
    finished_state,
    look_up,
)
from renderers.workers.stores import ArtifactStore
from renderers.workers.webhooks import WebhookPolicy, send_webhook, webhook_budget_s

if TYPE_CHECKING:
    from celery import Celery, Task

log = logging.getLogger("citerender.worker")

TASK_NAME = "citerender.render"
WEBHOOK_TASK_NAME = "citerender.webhook"
#: The webhook task's soft and hard time limits: room above :func:`webhook_budget_s` (a
#: receiver that sends its answer a byte at a time can outlast every socket timeout).
WEBHOOK_SOFT_TIME_LIMIT_S = webhook_budget_s() + 5
WEBHOOK_TIME_LIMIT_S = WEBHOOK_SOFT_TIME_LIMIT_S + 5


@dataclass(frozen=True)
class WorkerSettings:
    """A worker's limits and where it reads jobs and writes artifacts."""

    broker: str
    store: str
    soft_time_limit_s: int = 60
    time_limit_s: int = 90
    max_tasks_per_child: int = 200
    max_memory_per_child_mb: int = 1536
    #: The kernel's cap on each render process (:mod:`renderers.process_memory`), in MiB;
    #: None: no cap (the producer side, which renders nothing).
    memory_cap_mib: int | None = None
    #: Seconds before an unacknowledged message goes to another worker (default: the hard
    #: time limit plus a minute).
    visibility_timeout_s: int = 0
    #: Seconds between a worker's sweeps for messages whose worker died.
    restore_interval_s: int = 10
    webhook_hosts: tuple[str, ...] = field(default_factory=tuple)
    #: Seconds between a worker's advertisements of its store (:func:`advertise_store`).
    advertise_interval_s: int = ADVERTISE_INTERVAL_S

    def __post_init__(self) -> None:
        if not 0 < self.soft_time_limit_s < self.time_limit_s:
            raise WorkerSetupError(
                f"soft time limit {self.soft_time_limit_s} s must be above 0 and below the hard "
                f"limit {self.time_limit_s} s"
            )
        if self.visibility_timeout_s and self.visibility_timeout_s <= self.time_limit_s:
            raise WorkerSetupError(
                f"visibility timeout {self.visibility_timeout_s} s must exceed the hard time "
                f"limit {self.time_limit_s} s, or a long render would be handed out twice"
            )

    @property
    def visibility(self) -> int:
        return self.visibility_timeout_s or self.time_limit_s + 60

    @property
    def running_lease_s(self) -> int:
        """How long a worker answers for a job it started (:attr:`JobState.lease_s`): until
        its message, were the worker to die, is handed out again (the visibility timeout and a
        sweep), whose next attempt renews it. A render ends within the hard time limit, below
        that, so only a job whose end the board refused (Redis down or out of memory at that
        moment) outlives its lease: its request, sent again, renders it again."""
        return self.visibility + self.restore_interval_s

    @property
    def advertise_ttl_s(self) -> int:
        """How long one advertisement lasts: three intervals, so a late beat or two (a busy
        machine, a short broker outage) never lets it lapse while the worker runs."""
        return 3 * self.advertise_interval_s


def check_broker_url(url: str) -> str:
    """``url`` if it is a Redis URL, else :class:`WorkerSetupError`."""
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise WorkerSetupError(
            f"broker {redact_url(url)!r}: accepted: redis://HOST:PORT/DB (or rediss://, unix://)",
            field="broker",
        )
    return url


def _celery_class() -> type[Celery]:
    try:
        from celery import Celery
    except ImportError as exc:
        raise WorkerSetupError(
            "the broker needs Celery and redis: pip install 'citerender[workers]'", field="broker"
        ) from exc
    return Celery


def make_celery(settings: WorkerSettings) -> Celery:
    """The Celery app for ``settings`` with the render task registered."""
    celery_class = _celery_class()
    from celery import Task
    from kombu import Exchange, Queue

    app = celery_class("citerender", broker=check_broker_url(settings.broker),
                       set_as_current=False)
    app.conf.update(
        task_serializer="json",
        accept_content=["json"],
        task_ignore_result=True,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_acks_on_failure_or_timeout=True,
        worker_prefetch_multiplier=1,
        worker_disable_prefetch=True,
        task_soft_time_limit=settings.soft_time_limit_s,
        task_time_limit=settings.time_limit_s,
        worker_max_tasks_per_child=settings.max_tasks_per_child,
        worker_max_memory_per_child=settings.max_memory_per_child_mb * 1024,
        task_queues=[Queue(name, Exchange(name, type="direct"), routing_key=name)
                     for name in QUEUES],
        task_default_queue="render.pdf",
        broker_connection_retry_on_startup=True,
        broker_connection_timeout=3,
        broker_transport_options={
            "visibility_timeout": settings.visibility,
            "unacked_restore_interval": settings.restore_interval_s,
            "unacked_restore_throttle": 1,
            "socket_connect_timeout": 3,
            "socket_timeout": 30,
        },
        task_publish_retry_policy={
            "max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5,
        },
        worker_send_task_events=False,
        worker_hijack_root_logger=False,
    )

    class RenderTask(Task):  # type: ignore[misc]
        """The render task; a hard time limit fails the job from the main process."""

        def on_failure(self, exc: BaseException, task_id: str, args: Any, kwargs: Any,
                       einfo: Any) -> None:
            from billiard.exceptions import TimeLimitExceeded

            if isinstance(exc, TimeLimitExceeded) and isinstance(kwargs, dict):
                board = board_for(settings.broker)
                store = store_for(settings.store)
                queued = JobState.from_dict(kwargs["state"])
                if finished_state(board, store, queued.id) is not None:
                    return  # stopped after its job was recorded done: the job stands
                current = board.get(queued.id) or queued
                finish(board, store, current, failure(
                    "time_limit", f"the render ran past the hard limit of "
                    f"{settings.time_limit_s} s; its process was stopped"), self.app)

    def render(task: Task, state: dict[str, Any], payload: dict[str, Any], store_url: str) -> None:
        run_render_task(settings, state, payload, store_url,
                        worker=str(task.request.hostname or ""), app=task.app)

    def webhook(url: str, body: dict[str, Any]) -> None:
        """POST the finished job's state; a failure is logged by :func:`send_webhook`."""
        send_webhook(url, body, WebhookPolicy.of(settings.webhook_hosts))

    app.task(bind=True, base=RenderTask, name=TASK_NAME)(render)
    app.task(name=WEBHOOK_TASK_NAME, acks_late=False, soft_time_limit=WEBHOOK_SOFT_TIME_LIMIT_S,
             time_limit=WEBHOOK_TIME_LIMIT_S)(webhook)
    from celery.signals import worker_process_init

    cap = settings.memory_cap_mib

    def start_render_process(**_: object) -> None:
        """A new render process: its memory cap, then a warm Typst (never warmed before the
        fork: see :func:`renderers.workers.command.warm_main_process`)."""
        if cap is not None:
            cap_process_memory(cap)
        from renderers.service.app import warm_worker

        warm_worker(("typst",))

    worker_process_init.connect(start_render_process, weak=False)
    if settings.store:  # a worker's app (the producer's has no store to advertise)
        app.steps["worker"].add(_advertiser_step(settings))
    return app


def advertise_store(settings: WorkerSettings, board: RedisBoard | None = None) -> None:
    """Advertise the worker's store on the board for :attr:`WorkerSettings.advertise_ttl_s`
    (the only writer of the advertisement; :class:`BrokerUnavailable` when Redis is down)."""
    (board or board_for(settings.broker)).advertise_store(settings.store,
                                                          settings.advertise_ttl_s)


def refresh_advertisement(settings: WorkerSettings) -> None:
    """:func:`advertise_store`, logging instead of raising when Redis is down: the next task
    or beat tries again."""
    try:
        advertise_store(settings)
    except BrokerUnavailable as exc:
        log.warning("could not advertise the store: %s", exc)


def _advertiser_step(settings: WorkerSettings) -> type:
    """A worker bootstep that calls :func:`refresh_advertisement` every
    ``advertise_interval_s`` seconds on the worker's timer (in the main process's event loop:
    no thread, so nothing runs while the pool forks a render process)."""
    from celery import bootsteps

    class AdvertiseStore(bootsteps.StartStopStep):  # type: ignore[misc]
        requires = ("celery.worker.components:Timer",)

        def __init__(self, parent: Any, **kwargs: Any) -> None:
            super().__init__(parent, **kwargs)
            self.entry: Any = None

        def start(self, parent: Any) -> None:
            refresh_advertisement(settings)  # the one set at launch may lapse during warm-up
            self.entry = parent.timer.call_repeatedly(
                settings.advertise_interval_s, refresh_advertisement, (settings,))

        def stop(self, parent: Any) -> None:
            if self.entry is not None:
                self.entry.cancel()
                self.entry = None

    return AdvertiseStore


def finish(
    board: JobBoard, store: ArtifactStore, state: JobState, finished: Finished, app: Celery,
) -> JobState:
    """Record how the job ended (:func:`renderers.workers.execute.record`), then queue its
    webhook as a task of its own on ``app``; a broker that does not take it is logged, the
    job stands.

    A board that refuses the end is logged, and ``state`` returned: a done job is answered
    from the store (written first), and a failed one stays ``running`` until its lease
    passes (:attr:`WorkerSettings.running_lease_s`), after which it reads ``stalled`` and its
    request, sent again, renders it again (:meth:`~renderers.workers.jobstate.JobState.stalled`).
    """
    from kombu.exceptions import KombuError

    try:
        final = record(board, store, state, finished)
    except BrokerUnavailable as exc:
        log.warning("job %s: the board did not take its end (%s): %s", state.id,
                    finished.status, exc)
        return state
    if final.webhook:
        try:
            app.tasks[WEBHOOK_TASK_NAME].apply_async(args=(final.webhook, final.public()),
                                        queue=queue_for(final.format))
        except (KombuError, OSError) as exc:
            log.warning("job %s: webhook not queued: %s", final.id, exc)
    return final


@cache
def board_for(broker: str) -> RedisBoard:
    """One board per broker URL and process."""
    return RedisBoard(broker)


def run_render_task(
    settings: WorkerSettings, state: dict[str, Any], payload: dict[str, Any], store_url: str,
    *, worker: str, app: Celery,
) -> None:
    """The body of the render task (see :mod:`renderers.workers.execute` for the steps; the
    body is checked only when no producer of this version did,
    :func:`~renderers.workers.execute.job_request`)."""
    from celery.exceptions import SoftTimeLimitExceeded

    board = board_for(settings.broker)
    store = store_for(settings.store)
    refresh_advertisement(settings)
    queued = JobState.from_dict(state)
    found = look_up(board, store, queued.id)
    if found.finished is not None:
        return  # redelivered after it finished: nothing to do
    # The job's newest state, whichever run published this message: a run the store says
    # ended is begun again as a new one (:func:`~renderers.workers.execute.begin`).
    current = found.state or queued
    if store_url != store.url:
        finish(board, store, current, failure(
            "store_mismatch", f"the job was submitted for the store {store_url} but this worker "
            f"writes to {store.url}; start services and workers with the same --store"), app)
        return
    started = begin(board, current, worker=worker, pid=os.getpid(),
                    lease_s=settings.running_lease_s)
    if isinstance(started, Finished):
        finish(board, store, current, started, app)
        return
    try:
        finished = render_to_store(StoreJob(queued.id, payload, store.url, checked=False))
    except SoftTimeLimitExceeded:
        finished = failure(ServiceCode.TIME_LIMIT, f"the render ran past the soft limit of "
                                                   f"{settings.soft_time_limit_s} s")
    except MemoryError:
        cap = settings.memory_cap_mib
        finished = (
            failure(str(ErrorCode.LIMIT_EXCEEDED),
                    memory_exceeded(cap, "worker --max-worker-memory"), "content")
            if cap is not None
            else failure(str(ErrorCode.INTERNAL), "the machine ran out of memory")
        )
    except Exception as exc:
        log.exception("job %s failed", queued.id)
        finished = failure(str(ErrorCode.INTERNAL), f"{type(exc).__name__}: {exc}")
    finish(board, store, started, finished, app)


class CeleryQueue:
    """The producer side: puts a job on its format's queue (used by the service and the CLI)."""

    def __init__(self, broker: str) -> None:
        self.broker = broker
        self.app = make_celery(WorkerSettings(broker=broker, store=""))

    def enqueue(self, state: JobState, payload: dict[str, Any], store_url: str) -> None:
        """Publish the job; :class:`BrokerUnavailable` when Redis does not take it."""
        from kombu.exceptions import KombuError

        try:
            self.app.send_task(
                TASK_NAME,
                kwargs={"state": state.to_dict(), "payload": payload, "store_url": store_url},
                queue=queue_for(state.format),
                task_id=uuid.uuid4().hex,
            )
        except (KombuError, OSError) as exc:
            raise BrokerUnavailable(
                f"the broker {redact_url(self.broker)} did not take the job ({exc})"
            ) from exc

    def close(self) -> None:
        self.app.close()
