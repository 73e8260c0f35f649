"""A bounded pool of worker processes for CPU-bound jobs, driven from asyncio.

Each worker is one process with its own pipe, so a job that overruns its time limit or a
worker that dies costs that one job only: the worker is killed (if needed) and replaced,
every other job carries on. Callers beyond ``size`` running plus ``queue_limit`` waiting
are refused at once with :class:`PoolFull` instead of piling up.

Workers come from the ``forkserver`` start method: the fork server imports ``preload``
once, so a replacement worker starts in milliseconds with the rendering libraries loaded,
and no worker is ever forked from the (threaded) event-loop process.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import signal
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

_JOIN_TIMEOUT_S = 5.0


class PoolError(Exception):
    """Base class of the pool's own failures (never raised for a job's ordinary result)."""


class PoolFull(PoolError):
    """Every worker is busy and the wait queue is full."""


class JobTimeout(PoolError):
    """The job ran past its time limit; its worker was killed and replaced."""


class WorkerDied(PoolError):
    """The worker process died while running the job; it was replaced."""


class JobRaised(PoolError):
    """The job raised inside the worker; the message holds the exception's type and text."""


class PoolClosed(PoolError):
    """The pool is shut down (or not started)."""


@dataclass
class PoolStats:
    """A snapshot for health checks and benchmarks."""

    size: int
    alive: int
    busy: int
    waiting: int
    queue_limit: int
    completed: int
    replaced: int

    def to_dict(self) -> dict[str, int]:
        """The snapshot as a JSON-ready dict."""
        return dict(self.__dict__)


def _worker_main(conn: Connection, initializer: Callable[[], None] | None) -> None:
    """Worker process loop: run ``(fn, arg)`` messages until ``None`` or the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent owns Ctrl-C and shutdown
    if initializer is not None:
        initializer()
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        fn, arg = message
        try:
            reply: tuple[str, Any] = ("ok", fn(arg))
        except Exception as exc:
            reply = ("error", f"{type(exc).__name__}: {exc}")
        try:
            conn.send(reply)
        except (EOFError, OSError):
            return
        except Exception as exc:  # an unpicklable result
            conn.send(("error", f"result could not be sent: {type(exc).__name__}: {exc}"))


class _Worker:
    """One worker process and the parent's end of its pipe."""

    def __init__(self, ctx: Any, initializer: Callable[[], None] | None) -> None:
        parent_end, child_end = multiprocessing.Pipe(duplex=True)
        self.conn: Connection = parent_end
        self.process: BaseProcess = ctx.Process(
            target=_worker_main, args=(child_end, initializer), daemon=True,
            name="citerender-worker",
        )
        self.process.start()
        child_end.close()  # so the parent sees EOF when the worker dies

    def exchange(self, message: tuple[Callable[[Any], Any], Any]) -> tuple[str, Any]:
        """Send one job and block until its reply (runs in a helper thread)."""
        self.conn.send(message)
        reply: tuple[str, Any] = self.conn.recv()
        return reply

    def kill(self) -> None:
        """Kill the process if it is still alive and reap it (the pipe stays open)."""
        if self.process.is_alive():
            self.process.kill()
        self.process.join(_JOIN_TIMEOUT_S)

    def stop(self) -> None:
        """Ask the worker to exit, kill it if it does not, release the pipe."""
        with contextlib.suppress(OSError):
            self.conn.send(None)
        self.process.join(_JOIN_TIMEOUT_S)
        self.kill()
        self.conn.close()


class WorkerPool:
    """``size`` worker processes; ``await pool.run(fn, arg, timeout=…)`` runs one job.

    ``fn`` must be a module-level function (it is pickled by reference) and ``arg`` and its
    return value must be picklable. ``initializer`` runs once in each new worker (warm-up).
    """

    def __init__(
        self,
        size: int,
        *,
        queue_limit: int,
        initializer: Callable[[], None] | None = None,
        preload: Sequence[str] = (),
    ) -> None:
        if size < 1:
            raise ValueError(f"size={size}: a pool needs at least one worker")
        if queue_limit < 0:
            raise ValueError(f"queue_limit={queue_limit}: must be 0 or more")
        self.size = size
        self.queue_limit = queue_limit
        self._initializer = initializer
        self._ctx = multiprocessing.get_context("forkserver")
        if preload:
            self._ctx.set_forkserver_preload(list(preload))
        self._threads = ThreadPoolExecutor(max_workers=size + 1, thread_name_prefix="workpool")
        self._idle: asyncio.Queue[_Worker] | None = None
        self._workers: set[_Worker] = set()
        self._waiting = 0
        self._busy = 0
        self._completed = 0
        self._replaced = 0
        self._closed = False

    async def start(self) -> None:
        """Start every worker (in parallel; each runs its initializer in the background)."""
        loop = asyncio.get_running_loop()
        self._idle = asyncio.Queue()
        started = await asyncio.gather(
            *(loop.run_in_executor(self._threads, self._spawn) for _ in range(self.size))
        )
        for worker in started:
            self._idle.put_nowait(worker)

    def _spawn(self) -> _Worker:
        worker = _Worker(self._ctx, self._initializer)
        self._workers.add(worker)
        return worker

    async def _replace(self, worker: _Worker, exchange: asyncio.Future[Any]) -> None:
        """Kill ``worker``, let its pending exchange end, start a fresh worker in its place."""
        loop = asyncio.get_running_loop()
        self._workers.discard(worker)
        await loop.run_in_executor(self._threads, worker.kill)
        await asyncio.wait([exchange])  # the helper thread sees EOF once the process is gone
        if not exchange.cancelled():
            exchange.exception()  # retrieved: the EOF is expected here
        worker.conn.close()
        self._replaced += 1
        if self._closed or self._idle is None:
            return
        fresh = await loop.run_in_executor(self._threads, self._spawn)
        self._idle.put_nowait(fresh)

    async def run(self, fn: Callable[[Any], Any], arg: Any, *, timeout: float) -> Any:
        """Run ``fn(arg)`` in a worker; raise a :class:`PoolError` subclass when it cannot."""
        if self._closed or self._idle is None:
            raise PoolClosed("the worker pool is not running")
        if self._idle.empty() and self._waiting >= self.queue_limit:
            raise PoolFull(
                f"all {self.size} workers are busy and {self._waiting} requests are waiting"
            )
        self._waiting += 1
        try:
            worker = await self._idle.get()
        finally:
            self._waiting -= 1
        loop = asyncio.get_running_loop()
        self._busy += 1
        try:
            exchange = loop.run_in_executor(self._threads, worker.exchange, (fn, arg))
            try:
                done, _ = await asyncio.wait([exchange], timeout=timeout)
            except asyncio.CancelledError:
                # The caller went away mid-job: the worker's state is unknown, so replace it.
                await asyncio.shield(self._replace(worker, exchange))
                raise
            if not done:
                await self._replace(worker, exchange)
                raise JobTimeout(f"the job ran longer than {timeout:g} s")
            try:
                status, payload = exchange.result()
            except (EOFError, OSError):
                await self._replace(worker, exchange)
                code = worker.process.exitcode
                raise WorkerDied(f"the worker process died (exit code {code})") from None
        finally:
            self._busy -= 1
        self._idle.put_nowait(worker)
        self._completed += 1
        if status == "error":
            raise JobRaised(str(payload))
        return payload

    def stats(self) -> PoolStats:
        """Current size, live workers, busy and waiting counts."""
        return PoolStats(
            size=self.size,
            alive=sum(1 for worker in self._workers if worker.process.is_alive()),
            busy=self._busy,
            waiting=self._waiting,
            queue_limit=self.queue_limit,
            completed=self._completed,
            replaced=self._replaced,
        )

    async def close(self) -> None:
        """Stop every worker and the helper threads."""
        self._closed = True
        loop = asyncio.get_running_loop()
        workers = list(self._workers)
        self._workers.clear()
        await asyncio.gather(*(loop.run_in_executor(self._threads, w.stop) for w in workers))
        self._threads.shutdown(wait=False, cancel_futures=True)
