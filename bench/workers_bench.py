"""Benchmark rendering on Celery workers (bounded: every run stops by itself).

1. Throughput of 5-page PDFs through the broker with 1 and with 2 ``citerender worker``
   processes (one render process each), in jobs per second of wall time and CPU seconds per
   job (worker trees). Goal: 2 workers ≥ 1.8× one worker on 2 cores.
2. The broker's overhead for one job: the same small job (render + store writes) run by the
   service's in-process pool (``POST /jobs`` without a broker) and submitted through Redis to a
   worker (claim, publish, worker pick-up, state updates, polling). Each run's own render time
   (``stats.elapsed_ms``) is taken out, so a busy machine's slower renders do not count as
   overhead. Goal: ≤ 50 ms more.
3. Memory per worker (main process + render process, resident) after the runs.

A real redis-server runs on a free loopback port; the store is a temporary directory. Wall
times stretch on a shared machine while CPU seconds hardly do, so both are printed, with the
load average before and after.

    .venv/bin/python bench/workers_bench.py [--jobs 12] [--pages 5] [--overhead-runs 15]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from report import load_average  # noqa: E402
from service_bench import POOL, document, tree_cpu_seconds  # noqa: E402

from renderers.service.requests import parse_render_request  # noqa: E402
from renderers.workers.celery_app import CeleryQueue  # noqa: E402
from renderers.workers.jobstate import RedisBoard  # noqa: E402
from renderers.workers.stores import open_store  # noqa: E402
from renderers.workers.submit import submit  # noqa: E402
from tests.processes import Process, redis_server, start_worker, wait_ready  # noqa: E402

POLL_S = 0.001


def calibrated(pages: int) -> dict[str, Any]:
    """A request body whose PDF has exactly ``pages`` pages (rendered here to count)."""
    from renderers.api import render

    paragraphs = 12 * pages
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(8):
            body: dict[str, Any] = {"content": document(paragraphs), "format": "pdf",
                                    "sources_pool": POOL, "title": "Benchmark"}
            got = int(render(body["content"], tmp, formats=["pdf"], sources_pool=POOL,
                             title="Benchmark")[0].stats["pages"])
            if got == pages:
                return body
            paragraphs = max(1, round(paragraphs * pages / got) - (1 if got > pages else 0))
    raise RuntimeError(f"could not calibrate a {pages}-page document")


def unique(body: dict[str, Any]) -> dict[str, Any]:
    """The same document under a fresh title, so no job is answered from an earlier one."""
    return {**body, "title": f"Benchmark {uuid.uuid4().hex[:8]}"}


class Broker:
    """The producer side: board, queue and store, as the service uses them."""

    def __init__(self, url: str, store: str) -> None:
        self.board = RedisBoard(url)
        self.queue = CeleryQueue(url)
        self.store = open_store(store)

    def submit(self, body: dict[str, Any]) -> str:
        return submit(parse_render_request(body), board=self.board, store=self.store,
                      enqueue=lambda s, p: self.queue.enqueue(s, p, self.store.url)).state.id

    def wait(self, job_ids: list[str], timeout: float = 900) -> None:
        pending, deadline = set(job_ids), time.monotonic() + timeout
        while pending:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(pending)} jobs did not finish within {timeout} s")
            for job_id in list(pending):
                state = self.board.get(job_id)
                if state is not None and state.status in ("done", "failed"):
                    if state.status == "failed":
                        raise RuntimeError(f"job failed: {state.error}")
                    pending.discard(job_id)
            if pending:
                time.sleep(POLL_S)


def workers_cpu(workers: list[Process]) -> float:
    return sum(tree_cpu_seconds(worker.pid) for worker in workers)


def rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and its children, in MiB (Linux /proc)."""
    total = 0
    for entry in [str(pid), *_children(pid)]:
        try:
            for line in Path(f"/proc/{entry}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def _children(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []


def throughput(broker: Broker, workers: list[Process], body: dict[str, Any],
               jobs: int) -> tuple[float, float]:
    """(jobs per wall second, CPU seconds per job) for ``jobs`` distinct jobs."""
    broker.wait([broker.submit(unique(body)) for _ in workers * 2])  # warm every process
    cpu = workers_cpu(workers)
    started = time.perf_counter()
    broker.wait([broker.submit(unique(body)) for _ in range(jobs)])
    wall = time.perf_counter() - started
    return jobs / wall, (workers_cpu(workers) - cpu) / jobs


def broker_latency(broker: Broker, body: dict[str, Any], runs: int) -> tuple[list[float], float]:
    """Per run, submit-to-done seconds of one small job through Redis and a worker minus the
    render's own time (its ``stats.elapsed_ms``); and the median seconds from submission to
    the worker starting it (the queue's share)."""
    times, pickups = [], []
    for _ in range(runs):
        started = time.perf_counter()
        job_id = broker.submit(unique(body))
        broker.wait([job_id])
        total = time.perf_counter() - started
        state = broker.board.get(job_id)
        assert state is not None and state.result is not None and state.started_at is not None
        times.append(total - state.result["stats"]["elapsed_ms"] / 1000)
        pickups.append(state.started_at - state.created_at)
    return times, statistics.median(pickups)


def pool_latency(store: str, body: dict[str, Any], runs: int) -> list[float]:
    """Seconds of the same job on the service's in-process pool, with the bookkeeping of
    ``/jobs`` without a broker (states on a memory board, the result in the store), minus the
    render's own time."""
    from renderers.service.app import PRELOAD_MODULES, warm_worker
    from renderers.service.pool import WorkerPool
    from renderers.workers.execute import StoreJob, begin, record, render_to_store
    from renderers.workers.jobstate import JobState, MemoryBoard, new_state

    board, target = MemoryBoard(), open_store(store)

    async def run() -> list[float]:
        pool = WorkerPool(1, queue_limit=1, initializer=warm_worker, preload=PRELOAD_MODULES)
        await pool.start()
        times = []
        try:
            for index in range(runs + 1):
                request = parse_render_request(unique(body))
                started = time.perf_counter()
                state = begin(board, new_state(request.job_key(), "pdf", "report"),
                              worker="bench", pid=0)
                assert isinstance(state, JobState)
                job = StoreJob(state.id, request.payload, store, checked=True)
                finished = await pool.run(render_to_store, job, timeout=120)
                assert record(board, target, state, finished).status == "done"
                assert finished.result is not None
                if index:  # the first run waits for the warm-up
                    total = time.perf_counter() - started
                    times.append(total - finished.result["stats"]["elapsed_ms"] / 1000)
        finally:
            await pool.close()
        return times

    return asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=12, help="5-page PDFs per throughput run")
    parser.add_argument("--pages", type=int, default=5)
    parser.add_argument("--overhead-runs", type=int, default=15)
    args = parser.parse_args()
    load_before = load_average()
    body = calibrated(args.pages)
    small = {"content": "# Note\n\nOne cited line.[[S:1]]\n", "format": "pdf",
             "sources_pool": POOL}
    with tempfile.TemporaryDirectory(prefix="citerender-bench-") as tmp_name:
        tmp = Path(tmp_name)
        store = (tmp / "store").as_uri()
        with redis_server(tmp) as (url, _):
            results: dict[int, tuple[float, float]] = {}
            memory: list[float] = []
            latency: list[float] = []
            pickup = 0.0
            for count in (1, 2):
                broker_url = f"{url}/{count}"
                workers = [start_worker(broker_url, store, f"b{count}-{i}", tmp)
                           for i in range(count)]
                try:
                    wait_ready(*workers)
                    broker = Broker(broker_url, store)
                    results[count] = throughput(broker, workers, body, args.jobs)
                    if count == 1:
                        latency, pickup = broker_latency(broker, small, args.overhead_runs)
                    memory = [rss_mb(worker.pid) for worker in workers]
                finally:
                    for worker in workers:
                        worker.stop()
        in_process = pool_latency(store, small, args.overhead_runs)
    load_after = load_average()

    print(f"{args.pages}-page PDF, {args.jobs} jobs per run; {os.cpu_count()} cores; "
          f"load average {load_before} before, {load_after} after (1 / 5 / 15 min)")
    print(f"{'workers':>7} {'jobs/s':>8} {'CPU s/job':>10}")
    for count, (rate, cpu) in results.items():
        print(f"{count:>7} {rate:>8.2f} {cpu:>10.3f}")
    ratio = results[2][0] / results[1][0]
    print(f"2 workers / 1 worker throughput: {ratio:.2f}× (goal ≥ 1.8×: "
          f"{'met' if ratio >= 1.8 else 'NOT met'}; the machine is shared, see load average)")
    per_core = 3600 * results[1][0]
    print(f"capacity per core (one render process): {per_core:.0f} {args.pages}-page PDFs/hour "
          f"by wall time, {3600 / results[1][1]:.0f}/hour by CPU time")
    broker_ms = 1000 * statistics.median(latency)
    pool_ms = 1000 * statistics.median(in_process)
    overhead = broker_ms - pool_ms
    print(f"one small job, median of {args.overhead_runs}, time around the render (total minus "
          f"the render's own time): broker {broker_ms:.1f} ms, in-process pool {pool_ms:.1f} ms; "
          f"broker overhead {overhead:.1f} ms (goal ≤ 50 ms: "
          f"{'met' if overhead <= 50 else 'NOT met'}); submission to worker start "
          f"{1000 * pickup:.1f} ms")
    print(f"memory per worker (main + render process, resident): "
          f"{', '.join(f'{m:.0f} MiB' for m in memory)}")


if __name__ == "__main__":
    main()
