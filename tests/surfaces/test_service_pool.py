"""The worker pool keeps its strength whatever happens to a job, with real worker processes.

Every failure to pass a job or its reply between processes costs that job only: the worker
comes back (nothing reached it) or is replaced; a worker that died while idle is replaced
before it is given a job; a pool that cannot start workers says so; closing is bounded.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from renderers.service.pool import (
    HandOffFailed,
    MemoryExceeded,
    NoWorker,
    PoolClosed,
    WorkerDied,
    WorkerPool,
    _Worker,
)

#: A generous bound for anything that should take a second: a hang fails the test instead.
BOUND_S = 60


def double(value: int) -> int:
    return value * 2


def worker_pid(_: object) -> int:
    return os.getpid()


def sleep_for(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def hold_mib(mib: int) -> int:
    """Touch ``mib`` MiB at once (every page written), as a render's heap grows."""
    block = bytearray(mib * 1024 * 1024)
    block[::4096] = b"\x01" * len(block[::4096])
    return len(block) // (1024 * 1024)


def data_limit(_: object) -> int:
    import resource

    return resource.getrlimit(resource.RLIMIT_DATA)[0]


def warm_slowly() -> None:
    """Initializer: a warm-up of 3 s."""
    time.sleep(3)


def memory_envelope(_: object) -> dict[str, Any]:
    """The tool envelope of a MemoryError raised in this process."""
    from renderers.tools import error_envelope

    return error_envelope(MemoryError())


def abort(_: object) -> None:
    os.abort()  # what Rust (Typst) and GLib do when an allocation is refused


def _refuse_to_load() -> None:
    raise ValueError("this reply cannot be read back")


class UnreadableReply:
    """Pickles fine in the worker; unpickling it in the parent raises."""

    def __reduce__(self) -> tuple[Callable[[], None], tuple[()]]:
        return _refuse_to_load, ()


def unreadable_reply(_: object) -> UnreadableReply:
    return UnreadableReply()


class Unpicklable:
    """An argument that cannot be serialized (as a job nested 900 deep once could not be)."""

    def __reduce__(self) -> Any:
        raise RecursionError("maximum recursion depth exceeded while pickling an object")


def with_pool(size: int, test: Callable[[WorkerPool], Awaitable[None]], **options: Any) -> None:
    """Run ``test`` against a started pool, then close it; every step bounded in time."""

    async def main() -> None:
        pool = WorkerPool(size, queue_limit=options.pop("queue_limit", 2), **options)
        await asyncio.wait_for(pool.start(), BOUND_S)
        try:
            await asyncio.wait_for(test(pool), BOUND_S * 2)
        finally:
            await asyncio.wait_for(pool.close(), BOUND_S)

    asyncio.run(main())


def test_a_job_that_cannot_be_serialized_keeps_its_worker() -> None:
    async def test(pool: WorkerPool) -> None:
        pid = await pool.run(worker_pid, None, timeout=BOUND_S)
        for _ in range(2):
            with pytest.raises(HandOffFailed, match=r"could not be serialized.*RecursionError"):
                await pool.run(double, Unpicklable(), timeout=BOUND_S)
        stats = pool.stats()
        assert (stats.alive, stats.busy, stats.replaced) == (1, 0, 0)
        assert pool.health().status == "ok"
        assert await pool.run(worker_pid, None, timeout=BOUND_S) == pid  # the same worker
        assert await pool.run(double, 21, timeout=BOUND_S) == 42

    with_pool(1, test)


def test_an_unreadable_reply_replaces_the_worker() -> None:
    async def test(pool: WorkerPool) -> None:
        pid = await pool.run(worker_pid, None, timeout=BOUND_S)
        with pytest.raises(HandOffFailed, match="ValueError: this reply cannot be read back"):
            await pool.run(unreadable_reply, None, timeout=BOUND_S)
        assert pool.stats().replaced == 1 and pool.stats().alive == 1
        assert await pool.run(worker_pid, None, timeout=BOUND_S) != pid

    with_pool(1, test)


def test_a_failed_write_replaces_the_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    async def test(pool: WorkerPool) -> None:
        original = _Worker.exchange
        calls = []

        def failing_once(self: _Worker, message: Any, timeout: float) -> Any:
            calls.append(message)
            if len(calls) == 1:
                raise OSError(5, "Input/output error")  # as a write to a broken pipe might
            return original(self, message, timeout)

        monkeypatch.setattr(_Worker, "exchange", failing_once)
        with pytest.raises(HandOffFailed, match="Input/output error"):
            await pool.run(double, 1, timeout=BOUND_S)
        assert pool.stats().replaced == 1 and pool.stats().alive == 2
        assert await asyncio.gather(*(pool.run(double, n, timeout=BOUND_S) for n in (1, 2))) == [
            2, 4]

    with_pool(2, test)


def test_a_worker_that_died_idle_is_replaced_before_it_gets_a_job() -> None:
    async def test(pool: WorkerPool) -> None:
        pid = await pool.run(worker_pid, None, timeout=BOUND_S)
        os.kill(pid, signal.SIGKILL)
        for _ in range(100):
            if pool.stats().alive == 0:
                break
            await asyncio.sleep(0.05)
        assert await pool.run(double, 4, timeout=BOUND_S) == 8  # no WorkerDied for this job
        assert pool.stats().replaced == 1

    with_pool(1, test)


def test_health_reports_a_pool_that_cannot_start_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    async def test(pool: WorkerPool) -> None:
        pid = await pool.run(worker_pid, None, timeout=BOUND_S)

        def no_fork() -> _Worker:
            raise OSError(11, "Resource temporarily unavailable")

        monkeypatch.setattr(pool, "_spawn", no_fork)
        os.kill(pid, signal.SIGKILL)
        for _ in range(100):
            if pool.stats().alive == 0:
                break
            await asyncio.sleep(0.05)
        await pool.heal()
        health = pool.health()
        assert health.status == "unavailable"
        assert "0 of 1 workers" in health.reason and "Resource temporarily" in health.reason
        with pytest.raises(NoWorker, match="Resource temporarily unavailable"):
            await pool.run(double, 1, timeout=BOUND_S)
        monkeypatch.undo()
        await pool.heal()
        assert pool.health().status == "ok"
        assert await pool.run(double, 5, timeout=BOUND_S) == 10

    with_pool(1, test)


def test_close_is_bounded_with_a_busy_worker_and_a_waiter() -> None:
    async def main() -> None:
        pool = WorkerPool(1, queue_limit=2)
        await asyncio.wait_for(pool.start(), BOUND_S)
        running = asyncio.ensure_future(pool.run(sleep_for, 600, timeout=900))
        while pool.stats().busy < 1:
            await asyncio.sleep(0.02)
        waiting = asyncio.ensure_future(pool.run(double, 1, timeout=900))
        while pool.stats().waiting < 1:
            await asyncio.sleep(0.02)
        await asyncio.wait_for(pool.close(), BOUND_S)
        results = await asyncio.wait_for(
            asyncio.gather(running, waiting, return_exceptions=True), BOUND_S
        )
        assert isinstance(results[1], PoolClosed)
        assert isinstance(results[0], Exception) and pool.stats().alive == 0

    asyncio.run(main())


def test_healthz_answers_503_while_no_worker_can_take_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from starlette.testclient import TestClient

    from renderers.service.app import create_app

    app = create_app(workers=1, warmup=False)
    with TestClient(app) as client:
        pool: WorkerPool = app.state.service.pool
        assert client.get("/healthz").json()["status"] == "ok"

        def no_fork() -> _Worker:
            raise OSError(11, "Resource temporarily unavailable")

        monkeypatch.setattr(pool, "_spawn", no_fork)
        for worker in list(pool._workers):
            worker.kill()
        down = client.get("/healthz")
        assert down.status_code == 503 and down.json()["status"] == "unavailable"
        assert "0 of 1 workers can take work" in down.json()["reason"]
        refused = client.post("/render", json={"content": "x", "format": "md"})
        assert refused.status_code == 503 and "Resource temporarily" in refused.json()["error"]
        monkeypatch.undo()
        up = client.get("/healthz")  # the probe itself starts the missing worker
        assert up.status_code == 200 and up.json()["status"] == "ok"
        assert client.post("/render", json={"content": "Back.", "format": "md"}).status_code == 200


def test_a_job_past_the_memory_cap_fails_alone_and_its_worker_is_replaced() -> None:
    async def test(pool: WorkerPool) -> None:
        assert await pool.run(data_limit, None, timeout=BOUND_S) == 300 * 1024 * 1024
        pid = await pool.run(worker_pid, None, timeout=BOUND_S)
        assert await pool.run(hold_mib, 100, timeout=BOUND_S) == 100  # under the cap: fine
        with pytest.raises(MemoryExceeded) as refused:
            await pool.run(hold_mib, 400, timeout=BOUND_S)
        assert refused.value.memory_mib == 300
        stats = pool.stats()
        assert (stats.alive, stats.busy, stats.replaced) == (1, 0, 1)
        assert await pool.run(worker_pid, None, timeout=BOUND_S) != pid  # a fresh worker
        assert await pool.run(hold_mib, 100, timeout=BOUND_S) == 100

    with_pool(1, test, memory_mib=300)


def test_a_worker_that_aborts_under_a_cap_is_told_apart_from_other_deaths() -> None:
    async def capped(pool: WorkerPool) -> None:
        with pytest.raises(WorkerDied) as died:
            await pool.run(abort, None, timeout=BOUND_S)
        assert died.value.exitcode == -signal.SIGABRT and died.value.aborted_by_cap
        assert await pool.run(double, 2, timeout=BOUND_S) == 4

    async def uncapped(pool: WorkerPool) -> None:
        with pytest.raises(WorkerDied) as died:
            await pool.run(abort, None, timeout=BOUND_S)
        assert not died.value.aborted_by_cap  # no cap: nothing says it was memory
        assert await pool.run(data_limit, None, timeout=BOUND_S) == -1  # RLIM_INFINITY

    with_pool(1, capped, memory_mib=300)
    with_pool(1, uncapped)


def test_a_tool_envelope_names_the_cap_its_process_ran_out_of() -> None:
    async def capped(pool: WorkerPool) -> None:
        error = (await pool.run(memory_envelope, None, timeout=BOUND_S))["error"]
        assert error["code"] == "limit_exceeded" and "300 MiB" in error["message"]
        assert "--max-worker-memory" in error["message"]

    async def uncapped(pool: WorkerPool) -> None:
        error = (await pool.run(memory_envelope, None, timeout=BOUND_S))["error"]
        assert error["code"] == "limit_exceeded" and "too large to process" in error["message"]

    with_pool(1, capped, memory_mib=300)
    with_pool(1, uncapped)


@pytest.mark.slow
def test_a_job_waits_for_a_warm_worker_and_a_caller_leaving_meanwhile_costs_none() -> None:
    """A job was handed to a worker still warming up and waited in its pipe: its time limit
    ran during the warm-up, and a caller that left meanwhile had the worker killed and
    replaced. A worker is now leased once warm, and its job's time counts from there."""

    async def test(pool: WorkerPool) -> None:
        assert pool.stats().warming == 1 and pool.health().status == "ok"
        leaving = asyncio.ensure_future(pool.run(double, 1, timeout=BOUND_S))
        await asyncio.sleep(0.2)
        assert pool.stats().waiting == 1 and pool.stats().busy == 0
        leaving.cancel()
        with pytest.raises(asyncio.CancelledError):
            await leaving
        # 1 s for a job that takes none, the 3 s warm-up not counted in it
        assert await pool.run(double, 21, timeout=1.0, wait=BOUND_S) == 42
        stats = pool.stats()
        assert (stats.warming, stats.waiting, stats.replaced, stats.completed) == (0, 0, 0, 1)

    with_pool(1, test, initializer=warm_slowly)
