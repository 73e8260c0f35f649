"""``citerender worker``: a Celery worker that renders jobs into an artifact store.

Registered on the ``citerender`` app by :mod:`renderers.cli`; importing this module costs only
typer (Celery loads when the command runs).
"""

from __future__ import annotations

import importlib
import logging
import os
from typing import Annotated

import typer

from renderers.process_memory import DEFAULT_WORKER_MEMORY_MIB, MIN_WORKER_MEMORY_MIB
from renderers.workers import ADVERTISE_INTERVAL_S, QUEUES

WORKER_EXAMPLES = """[bold]Examples[/bold]

  [cyan]citerender worker --broker redis://127.0.0.1:6379/0 --store file:///srv/citerender[/cyan]
  [cyan]citerender worker --broker redis://redis:6379/0 --store s3://reports/citerender \\
       --queues render.pdf --concurrency 4[/cyan]      PDF/PNG only, four processes

Services started with [i]citerender serve --broker URL[/i] queue jobs; [i]citerender render
--broker URL[/i] sends a batch. The worker advertises its store to them in Redis, again
at each job and every [i]--advertise-interval[/i] seconds (so it is back after a Redis restart).
"""

#: ``--max-worker-memory``, shared by ``citerender worker`` and ``citerender serve``.
MaxWorkerMemory = Annotated[
    int | None,
    typer.Option(
        "--max-worker-memory", metavar="MIB", min=MIN_WORKER_MEMORY_MIB,
        help=f"Memory cap of each render process in MiB; a render past it fails with "
        f"limit_exceeded (default: {DEFAULT_WORKER_MEMORY_MIB}, lowered so all render "
        f"processes together stay within 80% of the machine's or container's memory).",
    ),
]


def worker(
    broker: Annotated[
        str, typer.Option("--broker", metavar="URL", help="Redis broker: redis://HOST:PORT/DB.")
    ],
    store: Annotated[
        str,
        typer.Option("--store", metavar="URL",
                     help="Artifact store: file:///shared/dir or s3://bucket/prefix."),
    ],
    queues: Annotated[
        str, typer.Option("--queues", "-Q", metavar="NAMES",
                          help=f"Comma-separated queues to consume: {', '.join(QUEUES)}.")
    ] = ",".join(QUEUES),
    concurrency: Annotated[
        int | None, typer.Option("--concurrency", "-c", min=1, max=64,
                                 help="Render processes (default: CPU cores).")
    ] = None,
    name: Annotated[
        str, typer.Option("--name", "-n", help="Worker name (%h is the host name).")
    ] = "citerender@%h",
    soft_time_limit: Annotated[
        int, typer.Option("--soft-time-limit", min=1, help="Seconds before a render is failed.")
    ] = 60,
    time_limit: Annotated[
        int, typer.Option("--time-limit", min=2, help="Seconds before its process is killed.")
    ] = 90,
    max_tasks_per_child: Annotated[
        int, typer.Option("--max-tasks-per-child", min=1, help="Renders before a process is "
                          "replaced (WeasyPrint's memory grows).")
    ] = 200,
    max_memory_per_child: Annotated[
        int, typer.Option("--max-memory-per-child", min=64, metavar="MIB",
                          help="Resident memory in MiB after which a process is replaced.")
    ] = 1536,
    max_worker_memory: MaxWorkerMemory = None,
    visibility_timeout: Annotated[
        int, typer.Option("--visibility-timeout", min=0, metavar="SECONDS",
                          help="Seconds before a job of a dead worker goes to another "
                               "(0: the time limit + 60).")
    ] = 0,
    restore_interval: Annotated[
        int, typer.Option("--restore-interval", min=1, metavar="SECONDS",
                          help="How often to look for jobs of dead workers.")
    ] = 10,
    advertise_interval: Annotated[
        int, typer.Option("--advertise-interval", min=1, metavar="SECONDS",
                          help="How often to advertise --store in Redis to services and "
                               "batches given none (it expires after 3 intervals without).")
    ] = ADVERTISE_INTERVAL_S,
    webhook_host: Annotated[
        list[str] | None, typer.Option("--webhook-host", metavar="HOST",
                                       help="A host webhooks may reach (repeat; none by default).")
    ] = None,
    loglevel: Annotated[str, typer.Option("--loglevel", help="Log level.")] = "INFO",
) -> None:
    """Run a render worker: take jobs from the broker, write artifacts to the store."""
    from renderers.cli_errors import BadInput, fail, reading
    from renderers.process_memory import default_worker_memory_mib
    from renderers.workers.celery_app import WorkerSettings, advertise_store, make_celery
    from renderers.workers.jobstate import RedisBoard
    from renderers.workers.stores import open_store

    chosen = [q.strip() for q in queues.split(",") if q.strip()]
    processes = concurrency or os.cpu_count() or 1
    try:
        unknown = [q for q in chosen if q not in QUEUES]
        if unknown or not chosen:
            raise BadInput("--queues", f"unknown queue {unknown[:1] or chosen!r}; accepted: "
                                       f"{', '.join(QUEUES)}")
        with reading("--store"):
            target = open_store(store)
            target.check()
        with reading("--broker"):
            settings = WorkerSettings(
                broker=broker, store=target.url, soft_time_limit_s=soft_time_limit,
                time_limit_s=time_limit, max_tasks_per_child=max_tasks_per_child,
                max_memory_per_child_mb=max_memory_per_child,
                memory_cap_mib=max_worker_memory or default_worker_memory_mib(processes),
                visibility_timeout_s=visibility_timeout, restore_interval_s=restore_interval,
                webhook_hosts=tuple(webhook_host or ()), advertise_interval_s=advertise_interval,
            )
            celery_app = make_celery(settings)
            board = RedisBoard(broker)
            board.ping()  # reachable, and runs the scripts kombu needs
            advertise_store(settings, board)  # again at each task and each interval
            board.close()
    except BadInput as exc:
        raise fail(exc.where, exc.message) from None
    logging.getLogger("weasyprint").setLevel(logging.WARNING)  # per-page INFO lines are noise
    warm_main_process()
    celery_app.worker_main([
        "worker", f"--hostname={name}", f"--queues={','.join(chosen)}",
        f"--concurrency={processes}", f"--loglevel={loglevel}",
        "--pool=prefork", "--without-gossip", "--without-mingle", "--without-heartbeat",
    ])


def warm_main_process() -> None:
    """Load the writers and render once with WeasyPrint before the pool forks, so every
    process starts warm.

    The prefork pool forks its processes (and their replacements) from this one: modules,
    fonts and layout caches loaded here are shared, not loaded again per process. Typst is
    warmed in each render process after the fork instead (``celery_app``): its compile runs
    threads that a fork does not copy, and every child's first Typst compile waited forever
    on a lock one of them held in this process.
    """
    from renderers.service.app import PRELOAD_MODULES, warm_worker

    for module in PRELOAD_MODULES:
        importlib.import_module(module)
    warm_worker(("weasyprint",))
