"""Work stopped when its client leaves (:mod:`renderers.service.disconnect`), without a server."""

from __future__ import annotations

import asyncio

import pytest
from starlette.types import Message, Receive

from renderers.service.disconnect import ClientGone, unless_client_leaves


def _channel(*messages: Message) -> tuple[asyncio.Event, Receive]:
    """An ASGI receive giving ``messages``, then ``http.disconnect`` once the event is set."""
    left = asyncio.Event()
    queue = list(messages)

    async def receive() -> Message:
        if queue:
            return queue.pop(0)
        await left.wait()
        return {"type": "http.disconnect"}

    return left, receive


def test_work_is_cancelled_when_the_client_leaves() -> None:
    async def scenario() -> bool:
        left, receive = _channel({"type": "http.request", "body": b"", "more_body": False})
        cancelled = asyncio.Event()

        async def render() -> str:
            try:
                await asyncio.sleep(600)
            except asyncio.CancelledError:
                cancelled.set()
                raise
            return "never"

        asyncio.get_running_loop().call_later(0.01, left.set)
        with pytest.raises(ClientGone):
            await unless_client_leaves(receive, render(), grace_s=0)
        return cancelled.is_set()

    assert asyncio.run(scenario()), "the work went on after the client left"


def test_a_client_that_stays_gets_the_result_or_the_failure() -> None:
    async def scenario() -> None:
        _, receive = _channel()

        async def fails() -> str:
            raise ValueError("the render's own failure")

        assert await unless_client_leaves(receive, asyncio.sleep(0, "answer")) == "answer"
        with pytest.raises(ValueError, match="own failure"):
            await unless_client_leaves(receive, fails())

    asyncio.run(scenario())


def test_work_about_to_finish_is_not_cancelled_when_the_client_leaves() -> None:
    """Cancelled, a render's worker is killed and a fresh one started: a client that sends a
    quick render and leaves at once made the service replace a worker for every request."""

    async def scenario() -> bool:
        left, receive = _channel()
        finish = asyncio.Event()
        cancelled = asyncio.Event()

        async def render() -> str:
            try:
                await finish.wait()
            except asyncio.CancelledError:
                cancelled.set()
                raise
            return "answer nobody reads"

        async def leave_then_finish() -> None:
            left.set()
            await asyncio.sleep(0)  # the watcher sees the client gone
            await asyncio.sleep(0)
            finish.set()

        asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(leave_then_finish()))
        with pytest.raises(ClientGone):
            await unless_client_leaves(receive, render(), grace_s=60)
        return cancelled.is_set()

    assert not asyncio.run(scenario()), "the work was cancelled though it was finishing"


def test_work_not_yet_on_a_worker_is_cancelled_at_once_when_the_client_leaves() -> None:
    """The grace is for a render running on a worker: one still waiting for a warm worker
    costs nothing to stop, and let through the grace it could start and then be killed."""

    async def scenario() -> bool:
        left, receive = _channel()
        started = asyncio.Event()
        cancelled = asyncio.Event()

        async def render() -> str:
            try:
                await asyncio.sleep(600)  # waiting for a worker
            except asyncio.CancelledError:
                cancelled.set()
                raise
            return "never"

        asyncio.get_running_loop().call_later(0.01, left.set)
        with pytest.raises(ClientGone, match="stopped"):
            await asyncio.wait_for(
                unless_client_leaves(receive, render(), grace_s=600, started=started), 60)
        return cancelled.is_set()

    assert asyncio.run(scenario()), "work not yet started was given the grace"


def test_work_on_a_worker_has_the_grace_when_the_client_leaves() -> None:
    async def scenario() -> str:
        left, receive = _channel()
        started = asyncio.Event()
        finish = asyncio.Event()

        async def render() -> str:
            started.set()
            await finish.wait()
            return "answer nobody reads"

        async def leave_then_finish() -> None:
            await started.wait()
            left.set()
            await asyncio.sleep(0.05)
            finish.set()

        helper = asyncio.ensure_future(leave_then_finish())
        try:
            await unless_client_leaves(receive, render(), grace_s=60, started=started)
        except ClientGone as exc:
            return str(exc)
        finally:
            await helper
        return "answered"

    assert "ended, unread" in asyncio.run(scenario())
