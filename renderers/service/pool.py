"""A bounded pool of worker processes for CPU-bound jobs, driven from asyncio.

Each worker is one process with its own pipe, so a job that overruns its time limit or a
worker that dies costs that one job only: the worker is killed (if needed) and replaced,
every other job carries on. Callers beyond ``size`` running plus ``queue_limit`` waiting
are refused at once with :class:`PoolFull` instead of piling up.

Background jobs (``run(..., background=True)``: the service's queued ``/jobs``) wait apart:
they take no waiting slot and get a worker only when it is idle and no foreground caller (a
synchronous ``/render``) is waiting for one, so queued jobs never make a request answer 503.
Their number is bounded by whoever queues them.

Every leased worker comes back: after a reply it returns to the idle queue; when the job
could not even be serialized nothing reached it, so it returns too; after anything else
(timeout, death, a broken pipe, an unreadable reply, the caller going away) its state is
unknown, so it is killed and a fresh one takes its place. A replacement that cannot be
started is retried on the next job and on every health check, and :meth:`WorkerPool.health`
reports the pool as degraded or unavailable meanwhile.

A new worker is leased only once it says it is warm (its initializer, the service's warm-up,
has run): leased at once, as before, a job waited in the pipe of a worker still warming, and a
client that left meanwhile had its render stopped (:mod:`renderers.service.disconnect`) and
the worker replaced although the render had barely begun (9 renders at one start-up). Callers
wait for a warm worker instead, and can leave while they wait at no cost.

Workers come from the ``forkserver`` start method: the fork server imports ``preload``
once, so a replacement worker starts in milliseconds with the rendering libraries loaded,
and no worker is ever forked from the (threaded) event-loop process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import signal
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from multiprocessing.reduction import ForkingPickler
from typing import Any, Literal

from renderers.process_memory import cap_process_memory, memory_exceeded

_JOIN_TIMEOUT_S = 5.0
#: How long a worker asked to exit at shutdown may take before it is killed.
_STOP_GRACE_S = 3.0
#: A helper thread waits this much longer than the job's own limit before giving up on a
#: reply, so no thread outlives a job by more than that (the event loop gives up first).
_REPLY_GRACE_S = 5.0

_log = logging.getLogger("citerender.service")


class PoolError(Exception):
    """Base class of the pool's own failures (never raised for a job's ordinary result)."""


class PoolFull(PoolError):
    """Every worker is busy and the wait queue is full (or no worker came free in time)."""


class JobTimeout(PoolError):
    """The job ran past its time limit; its worker was killed and replaced."""


class WorkerDied(PoolError):
    """The worker process died while running the job; it was replaced. ``exitcode`` is the
    process's (``-N``: stopped by signal N), ``memory_mib`` the pool's memory cap, if any."""

    def __init__(self, message: str, exitcode: int | None = None,
                 memory_mib: int | None = None) -> None:
        super().__init__(message)
        self.exitcode = exitcode
        self.memory_mib = memory_mib

    @property
    def aborted_by_cap(self) -> bool:
        """Whether the death looks like an allocation refused by the memory cap: code in Rust
        or C that cannot get memory stops the process instead of raising (Rust aborts with
        SIGABRT; GLib's ``g_error``, e.g. Pango failing to start a thread, with SIGTRAP)."""
        return self.memory_mib is not None and self.exitcode in _ABORT_EXITS


#: Exit codes of a process stopped by SIGABRT or SIGTRAP.
_ABORT_EXITS = frozenset({-signal.SIGABRT, -signal.SIGTRAP})


class MemoryExceeded(PoolError):
    """The job raised :class:`MemoryError` under the pool's memory cap (``memory_mib``); the
    worker reported it and exited, and was replaced."""

    def __init__(self, memory_mib: int) -> None:
        super().__init__(f"the job needed more than the {memory_mib} MiB cap")
        self.memory_mib = memory_mib


def memory_refusal(exc: PoolError, setting: str) -> str | None:
    """The message for a job stopped by the pool's memory cap (``setting`` names the option
    that sets it): one that raised :class:`MemoryError`, or one whose worker aborted under the
    cap; None for any other failure."""
    if isinstance(exc, MemoryExceeded):
        return memory_exceeded(exc.memory_mib, setting)
    if isinstance(exc, WorkerDied) and exc.aborted_by_cap and exc.memory_mib is not None:
        return (f"{memory_exceeded(exc.memory_mib, setting)} (the render process aborted when "
                "an allocation was refused)")
    return None


class JobRaised(PoolError):
    """The job raised inside the worker; the message holds the exception's type and text."""


class HandOffFailed(PoolError):
    """The job or its reply could not pass between the processes (serialization, the pipe).

    The worker was returned to the pool when nothing reached it, replaced otherwise.
    """


class PoolClosed(PoolError):
    """The pool is shut down (or not started)."""


class NoWorker(PoolError):
    """No worker process could be started (the system refused to start one)."""


@dataclass
class PoolStats:
    """A snapshot for health checks and benchmarks."""

    size: int
    alive: int
    busy: int
    waiting: int
    queue_limit: int
    background: int
    completed: int
    replaced: int
    #: Started and not yet warm (not leased until they are).
    warming: int = 0

    def to_dict(self) -> dict[str, int]:
        """The snapshot as a JSON-ready dict."""
        return dict(self.__dict__)


PoolStatus = Literal["ok", "degraded", "unavailable"]


@dataclass(frozen=True)
class PoolHealth:
    """Whether the pool can take work: ``ok`` at full strength, ``degraded`` when some
    workers are missing, ``unavailable`` when none can take a job; ``reason`` says why."""

    status: PoolStatus
    reason: str = ""


class _NotSent(Exception):
    """The job could not be serialized, so nothing was written to the worker's pipe."""


class _NoReply(Exception):
    """The worker sent nothing back within the job's limit plus a grace period."""


def _worker_main(
    conn: Connection, initializer: Callable[[], None] | None, memory_mib: int | None
) -> None:
    """Worker process loop: say ``("ready", None)`` once warm, then run ``(fn, arg)``
    messages until ``None`` or the pipe closes.

    Under a memory cap (set after the initializer, so the warm-up's own peak is not at
    stake), a job that raises :class:`MemoryError` is answered ``("memory", None)`` and the
    process exits: what the job left behind (a fragmented heap, half-built caches) is not
    worth keeping.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent owns Ctrl-C and shutdown
    if initializer is not None:
        initializer()
    if memory_mib is not None:
        cap_process_memory(memory_mib)
    try:
        conn.send(("ready", None))
    except (EOFError, OSError):
        return
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
        except MemoryError:  # answered once the job's frames are gone, then the worker ends
            reply = ("memory", None)
        except Exception as exc:
            reply = ("error", f"{type(exc).__name__}: {exc}")
        try:
            conn.send(reply)
        except (EOFError, OSError):
            return
        except Exception as exc:  # an unpicklable result
            conn.send(("error", f"result could not be sent: {type(exc).__name__}: {exc}"))
        if reply[0] == "memory":
            return


class _Worker:
    """One worker process and the parent's end of its pipe."""

    def __init__(
        self, ctx: Any, initializer: Callable[[], None] | None, memory_mib: int | None
    ) -> None:
        parent_end, child_end = multiprocessing.Pipe(duplex=True)
        self.conn: Connection = parent_end
        self.process: BaseProcess = ctx.Process(
            target=_worker_main, args=(child_end, initializer, memory_mib), daemon=True,
            name="citerender-worker",
        )
        self.process.start()
        child_end.close()  # so the parent sees EOF when the worker dies
        self.busy = False

    def exchange(self, message: tuple[Callable[[Any], Any], Any], timeout: float) -> Any:
        """Send one job and wait for its reply (runs in a helper thread).

        Serializing first and writing second tells the two failures apart: :class:`_NotSent`
        means the pipe was never touched and the worker can take the next job.
        """
        try:
            data = ForkingPickler.dumps(message)
        except Exception as exc:
            raise _NotSent(f"{type(exc).__name__}: {exc}") from exc
        self.conn.send_bytes(data)
        if not self.conn.poll(timeout + _REPLY_GRACE_S):
            raise _NoReply(f"no reply within {timeout + _REPLY_GRACE_S:g} s")
        return self.conn.recv()

    def kill(self) -> None:
        """Kill the process if it is still alive and reap it (the pipe stays open)."""
        if self.process.is_alive():
            self.process.kill()
        self.process.join(_JOIN_TIMEOUT_S)

    def close_pipe(self) -> None:
        """Release the parent's end of the pipe."""
        with contextlib.suppress(OSError):
            self.conn.close()


def _stop_all(workers: Sequence[_Worker]) -> None:
    """Ask idle workers to exit, kill busy ones, and kill whatever is left after a grace."""
    for worker in workers:
        if worker.busy:
            worker.kill()
        else:
            with contextlib.suppress(OSError, ValueError):
                worker.conn.send(None)
    deadline = time.monotonic() + _STOP_GRACE_S
    running = [w for w in workers if w.process.is_alive()]
    while running and time.monotonic() < deadline:
        wait([w.process.sentinel for w in running], timeout=deadline - time.monotonic())
        running = [w for w in running if w.process.is_alive()]
    for worker in workers:
        worker.kill()
        worker.close_pipe()


class WorkerPool:
    """``size`` worker processes; ``await pool.run(fn, arg, timeout=…)`` runs one job.

    ``fn`` must be a module-level function (it is pickled by reference) and ``arg`` and its
    return value must be picklable. ``initializer`` runs once in each new worker (warm-up);
    ``memory_mib`` then caps each worker's memory (:mod:`renderers.process_memory`).
    """

    def __init__(
        self,
        size: int,
        *,
        queue_limit: int,
        initializer: Callable[[], None] | None = None,
        preload: Sequence[str] = (),
        memory_mib: int | None = None,
    ) -> None:
        if size < 1:
            raise ValueError(f"size={size}: a pool needs at least one worker")
        if queue_limit < 0:
            raise ValueError(f"queue_limit={queue_limit}: must be 0 or more")
        self.size = size
        self.queue_limit = queue_limit
        self._initializer = initializer
        self.memory_mib = memory_mib
        self._ctx = multiprocessing.get_context("forkserver")
        if preload:
            self._ctx.set_forkserver_preload(list(preload))
        # One thread per busy worker for its exchange; starting and killing workers use their
        # own threads so a pool of busy workers can still replace one.
        self._exchanges = ThreadPoolExecutor(max_workers=size + 2, thread_name_prefix="workpool")
        self._control = ThreadPoolExecutor(max_workers=2, thread_name_prefix="workpool-control")
        self._idle: asyncio.Queue[_Worker | None] | None = None  # None: the pool closed
        self._workers: set[_Worker] = set()
        #: Started workers not yet warm, each watched by the event loop for its ``ready``.
        self._warming: set[_Worker] = set()
        self._spawning = 0
        self._spawn_error = ""
        self._waiting = 0
        self._background = 0
        #: Set whenever a worker may have become available to a background job.
        self._freed = asyncio.Event()
        self._busy = 0
        self._completed = 0
        self._replaced = 0
        self._closed = False

    async def start(self) -> None:
        """Start every worker (in parallel; each runs its initializer in the background)."""
        self._idle = asyncio.Queue()
        await self._top_up()
        if not self._workers:
            raise NoWorker(f"no worker process could be started: {self._spawn_error}")

    def _spawn(self) -> _Worker:
        return _Worker(self._ctx, self._initializer, self.memory_mib)

    async def _add_worker(self) -> None:
        """Start one worker, idle once it is warm (:meth:`_warmed`); a failure is remembered
        for :meth:`health`."""
        loop = asyncio.get_running_loop()
        self._spawning += 1
        try:
            worker = await loop.run_in_executor(self._control, self._spawn)
        except Exception as exc:
            self._spawn_error = f"{type(exc).__name__}: {exc}"
            _log.error("citerender worker could not be started: %s", self._spawn_error)
            return
        finally:
            self._spawning -= 1
        if self._closed or self._idle is None:
            await asyncio.to_thread(_stop_all, [worker])
            return
        self._spawn_error = ""
        self._workers.add(worker)
        self._warming.add(worker)
        loop.add_reader(worker.conn.fileno(), self._warmed, worker)

    def _warmed(self, worker: _Worker) -> None:
        """``worker`` said it is warm (or died warming: leasing it then replaces it, as for
        any worker found dead while idle): it becomes idle."""
        asyncio.get_running_loop().remove_reader(worker.conn.fileno())
        self._warming.discard(worker)
        with contextlib.suppress(EOFError, OSError):
            worker.conn.recv()  # ("ready", None), written whole by a live worker
        if not self._closed:
            self._release(worker)

    async def _top_up(self) -> None:
        """Start as many workers as the pool is short of (after failed replacements)."""
        missing = self.size - len(self._workers) - self._spawning
        if missing > 0 and not self._closed:
            await asyncio.gather(*(self._add_worker() for _ in range(missing)))

    async def _retire(self, worker: _Worker, exchange: asyncio.Future[Any] | None = None) -> None:
        """Kill ``worker`` and let its pending exchange end (the thread sees EOF)."""
        self._workers.discard(worker)
        self._replaced += 1
        if self._closed:
            return  # close() stops every worker; the helper threads are gone
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._control, worker.kill)
        if exchange is not None:
            await asyncio.wait([exchange], timeout=_JOIN_TIMEOUT_S)
            if exchange.done() and not exchange.cancelled():
                exchange.exception()  # retrieved: the EOF is expected here
        worker.close_pipe()

    async def _replace(self, worker: _Worker, exchange: asyncio.Future[Any] | None = None) -> None:
        """Kill ``worker`` and start a fresh worker in its place."""
        await self._retire(worker, exchange)
        await self._top_up()

    async def heal(self) -> None:
        """Replace idle workers that died (killed, out of memory) and any missing ones."""
        if self._closed or self._idle is None:
            return
        queued: list[_Worker | None] = []
        while not self._idle.empty():
            queued.append(self._idle.get_nowait())
        dead = [w for w in queued if w is not None and not w.process.is_alive()]
        for item in queued:
            if item is None or item not in dead:
                self._idle.put_nowait(item)
        for worker in dead:
            await self._retire(worker)
        await self._top_up()

    async def _lease(self, timeout: float) -> _Worker:
        """An idle, live worker, waiting at most ``timeout`` seconds for one."""
        assert self._idle is not None
        deadline = time.monotonic() + timeout
        while True:
            self._waiting += 1
            try:
                worker = await asyncio.wait_for(
                    self._idle.get(), max(0.0, deadline - time.monotonic())
                )
            except TimeoutError:
                raise PoolFull(f"no worker became free within {timeout:g} s") from None
            finally:
                self._waiting -= 1
                self._freed.set()  # with no foreground waiter left, a background job may go
            if worker is None:
                self._idle.put_nowait(None)  # wake the next waiter too
                raise PoolClosed("the worker pool is shut down")
            if worker.process.is_alive():
                return worker
            await self._replace(worker)  # it died while idle; nothing of a job is lost
            if not self._workers and not self._spawning:
                raise NoWorker(f"no worker process could be started: {self._spawn_error}")

    def _release(self, worker: _Worker) -> None:
        """Make ``worker`` idle again: the next foreground waiter takes it, else a background
        job may."""
        assert self._idle is not None
        self._idle.put_nowait(worker)
        self._freed.set()

    async def _lease_background(self, wait: float) -> _Worker:
        """An idle, live worker that no foreground caller is waiting for, waiting at most
        ``wait`` seconds; takes no waiting slot (see the module doc)."""
        assert self._idle is not None
        deadline = time.monotonic() + wait
        self._background += 1
        try:
            while True:
                if self._closed:
                    raise PoolClosed("the worker pool is shut down")
                if self._waiting == 0 and not self._idle.empty():
                    worker = self._idle.get_nowait()
                    if worker is None:
                        self._idle.put_nowait(None)
                        raise PoolClosed("the worker pool is shut down")
                    if worker.process.is_alive():
                        return worker
                    await self._replace(worker)  # it died while idle
                    if not self._workers and not self._spawning:
                        raise NoWorker(f"no worker process could be started: {self._spawn_error}")
                    continue
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise PoolFull(f"no worker was free for a background job within {wait:g} s")
                self._freed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._freed.wait(), remaining)
        finally:
            self._background -= 1

    async def run(
        self,
        fn: Callable[[Any], Any],
        arg: Any,
        *,
        timeout: float,
        background: bool = False,
        wait: float | None = None,
        on_start: Callable[[int], None] | None = None,
    ) -> Any:
        """Run ``fn(arg)`` in a worker; raise a :class:`PoolError` subclass when it cannot.

        ``timeout`` bounds the job from when a warm worker takes it, and the wait for a
        worker (a new one's warm-up included) unless ``wait`` is given.
        ``background`` jobs wait apart and give way to foreground callers (module doc).
        ``on_start(pid)`` runs once a warm worker (process ``pid``) is leased, before the job
        is sent, so it marks when the job starts; if it raises, the worker goes back unused
        and the exception propagates.
        """
        if self._closed or self._idle is None:
            raise PoolClosed("the worker pool is not running")
        if (not background and self._idle.empty()
                and self._waiting >= self.queue_limit + len(self._warming)):
            raise PoolFull(
                f"all {self.size} workers are busy and {self._waiting} requests are waiting"
            )
        await self._top_up()
        if not self._workers and not self._spawning:
            raise NoWorker(f"no worker process could be started: {self._spawn_error}")
        patience = timeout if wait is None else wait
        worker = await (self._lease_background(patience) if background
                        else self._lease(patience))
        if on_start is not None:
            try:
                on_start(worker.process.pid or 0)
            except BaseException:
                self._release(worker)
                raise
        worker.busy = True
        self._busy += 1
        try:
            status, payload = await self._exchange(worker, (fn, arg), timeout)
        finally:
            worker.busy = False
            self._busy -= 1
        self._completed += 1
        if status == "error":
            raise JobRaised(str(payload))
        return payload

    async def _exchange(
        self, worker: _Worker, message: tuple[Callable[[Any], Any], Any], timeout: float
    ) -> tuple[str, Any]:
        """Hand ``message`` to the leased ``worker``; the worker is returned or replaced."""
        assert self._idle is not None
        loop = asyncio.get_running_loop()
        try:
            exchange = loop.run_in_executor(self._exchanges, worker.exchange, message, timeout)
        except RuntimeError:  # the helper threads are gone: close() ran meanwhile
            raise PoolClosed("the worker pool is shut down") from None
        try:
            done, _ = await asyncio.wait([exchange], timeout=timeout)
        except asyncio.CancelledError:
            # The caller went away mid-job: the worker's state is unknown, so replace it.
            await asyncio.shield(self._replace(worker, exchange))
            raise
        if not done:
            await self._replace(worker, exchange)
            raise JobTimeout(f"the job ran longer than {timeout:g} s")
        if exchange.cancelled():  # close() dropped the exchange before it started
            raise PoolClosed("the worker pool is shut down")
        try:
            reply: tuple[str, Any] = exchange.result()
        except _NotSent as exc:
            self._release(worker)
            raise HandOffFailed(f"the job could not be serialized for a worker: {exc}") from None
        except (EOFError, BrokenPipeError, ConnectionResetError):
            await self._replace(worker, exchange)
            code = worker.process.exitcode
            raise WorkerDied(f"the worker process died (exit code {code})", code,
                             self.memory_mib) from None
        except Exception as exc:  # a failed write, an unreadable reply: the pipe's state is unknown
            await self._replace(worker, exchange)
            raise HandOffFailed(
                f"the exchange with the worker failed ({type(exc).__name__}: {exc}); "
                "the worker was replaced"
            ) from None
        if reply[0] == "memory":  # the worker answered and exits: replace it
            await self._replace(worker)
            raise MemoryExceeded(self.memory_mib or 0)
        self._release(worker)
        return reply

    def stats(self) -> PoolStats:
        """Current size, live workers, busy and waiting counts."""
        return PoolStats(
            size=self.size,
            alive=sum(1 for worker in self._workers if worker.process.is_alive()),
            busy=self._busy,
            waiting=self._waiting,
            queue_limit=self.queue_limit,
            background=self._background,
            completed=self._completed,
            replaced=self._replaced,
            warming=len(self._warming),
        )

    def health(self) -> PoolHealth:
        """Whether the pool can take work, and why not (see :class:`PoolHealth`)."""
        if self._idle is None:
            return PoolHealth("unavailable", "the worker pool is starting")
        if self._closed:
            return PoolHealth("unavailable", "the worker pool is shut down")
        ready = sum(1 for worker in self._workers if worker.process.is_alive()) + self._spawning
        if ready >= self.size:
            return PoolHealth("ok")
        reason = f"{ready} of {self.size} workers can take work"
        if self._spawn_error:
            reason += f"; starting a worker failed: {self._spawn_error}"
        return PoolHealth("unavailable" if ready == 0 else "degraded", reason)

    async def close(self) -> None:
        """Stop every worker (idle ones may exit, busy ones are killed) within a few seconds."""
        if self._closed:
            return
        self._closed = True
        if self._idle is not None:
            self._idle.put_nowait(None)  # wakes every waiter in turn with PoolClosed
        self._freed.set()  # and every background waiter
        loop = asyncio.get_running_loop()
        for worker in self._warming:
            loop.remove_reader(worker.conn.fileno())
        self._warming.clear()
        workers = list(self._workers)
        self._workers.clear()
        await asyncio.to_thread(_stop_all, workers)
        self._exchanges.shutdown(wait=False, cancel_futures=True)
        self._control.shutdown(wait=False, cancel_futures=True)
