"""Stopping work whose client has gone away.

Starlette runs a route to its end whether or not its client is still there, and uvicorn
only marks the request as disconnected: a ``POST /render`` whose client closed the
connection (the export page's Cancel button aborts its fetch) kept its worker rendering for
nobody, as long as the render would have taken. Measured with a 2,000-paragraph PDF on one
worker: the worker went on spending CPU for the 25 s watched after the client left (9.8 s of
CPU on a busy machine, of the 16 s the whole render takes), and a request queued behind it
waited as long. Stopped, it costs 0.3 s of CPU after the client left, plus the fresh worker's
warm-up (about 1 s) where the service warms its workers.

:func:`unless_client_leaves` runs the work beside a watcher of the connection and cancels the
work when the client leaves and it has not ended :data:`LEAVE_GRACE_S` later; for a render,
:meth:`renderers.service.pool.WorkerPool.run` then kills the worker and starts a fresh one in
its place. Without that grace, a client sending tiny renders and closing each connection at
once cost a worker replacement per request: 30 such clients on a 2-worker service replaced
29 workers in 5.5 s, and a request after 50 of them waited 16 s for a warm worker (0.2 s
before). With it, a render killed has held its worker past the grace, so replacements are
bounded by the pool's size over the grace, and a quick render's worker is kept.

The grace is for a render running on a worker. Work told when it starts (``started``: the pool
leases only warm workers and says when it hands one the job) that has not started when its
client leaves is cancelled at once: it is still waiting for a worker, and stopping it costs
nothing. Counted from the lease instead, the grace ran while the job waited in the pipe of a
worker still warming up, and 9 renders whose clients left during a start-up replaced their
workers although the render had barely begun.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import TypeVar

from starlette.types import Receive

_T = TypeVar("_T")

#: How long work whose client left may still run before it is cancelled: about what a fresh
#: worker's warm-up costs, so stopping the work never costs more than letting it end.
LEAVE_GRACE_S = 1.0


class ClientGone(Exception):
    """The client closed its connection before the answer was ready; the work was stopped,
    or ended within the grace and its answer dropped."""


async def unless_client_leaves(receive: Receive, work: Awaitable[_T], *,
                               grace_s: float = LEAVE_GRACE_S,
                               started: asyncio.Event | None = None) -> _T:
    """``work``'s result, or :class:`ClientGone` once the request's connection is closed, the
    work then given ``grace_s`` to end (its result dropped), else cancelled and awaited.
    With ``started`` (set when the work begins on a worker), work not yet started when the
    client leaves is cancelled at once.

    ``receive`` is the request's ASGI channel, its body already read whole: the next message
    it gives is ``http.disconnect``, which arrives when the client leaves (or, from a test
    client, only once the answer is sent).
    """
    task = asyncio.ensure_future(work)
    gone = asyncio.ensure_future(_disconnected(receive))
    try:
        await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
        if not task.done() and (started is None or started.is_set()):
            await asyncio.wait({task}, timeout=grace_s)  # the client left: nobody reads it
    finally:  # also when this request is cancelled itself (shutdown)
        gone.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task  # its own failure, if it had one, is raised below
    if gone.done() and not gone.cancelled():
        if task.cancelled():
            raise ClientGone("the client closed the connection; the work was stopped")
        task.exception()  # retrieved: nobody reads the work's outcome now
        raise ClientGone("the client closed the connection; the work ended, unread")
    return task.result()


async def _disconnected(receive: Receive) -> None:
    """Return when ``receive`` says the client is gone (any rest of a body is dropped)."""
    while (await receive())["type"] != "http.disconnect":
        pass
