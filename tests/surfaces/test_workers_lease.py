"""A broker job's lease on a real redis-server: decided on Redis's clock, so a worker whose
clock is off by minutes neither makes its running job read ``stalled`` early (and a repeat
publish it again while it runs) nor delays a real stall; nor does a producer whose clock is off
make a queued job's repeat publish it again at once, or keep a lost message waiting."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from renderers.service.requests import RenderRequest, parse_render_request
from renderers.workers import execute, jobstate
from renderers.workers.execute import Finished, begin, record
from renderers.workers.jobstate import JobState, RedisBoard, new_state
from renderers.workers.stores import ArtifactStore, open_store
from renderers.workers.submit import submit
from tests.processes import redis_server, wait_until

pytestmark = pytest.mark.slow

LEASE_PREFIX = "citerender:lease:"


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as (url, _):
        yield f"{url}/0"


@pytest.fixture
def board(broker: str) -> Iterator[RedisBoard]:
    found = RedisBoard(broker)
    found._redis.flushdb()
    try:
        yield found
    finally:
        found.close()


def _request(text: str) -> RenderRequest:
    return parse_render_request({"content": f"{text}[[S:1]]\n", "format": "md", "sources_pool": [
        {"sid": 1, "title": "Lazard LCOE+", "url": "https://www.lazard.com/"}]})


def _running_on_a_skewed_worker(board: RedisBoard, request: RenderRequest, skew_s: float,
                                lease_s: int, monkeypatch: pytest.MonkeyPatch) -> JobState:
    """The job of ``request`` begun by a worker whose clock is ``skew_s`` off this one's."""
    queued = new_state(request.job_key(), request.format, request.stem)
    assert board.claim(queued)
    with monkeypatch.context() as patch:
        patch.setattr(execute, "time", SimpleNamespace(time=lambda: time.time() + skew_s))
        running = begin(board, queued, worker="w@far", pid=1, lease_s=lease_s)
    assert isinstance(running, JobState)
    return running


def _repeat(board: RedisBoard, store: ArtifactStore, request: RenderRequest) -> list[str]:
    """Send ``request`` again; the ids it published."""
    sent: list[str] = []

    def enqueue(state: JobState, payload: dict[str, Any]) -> None:
        sent.append(state.id)

    submit(request, board=board, store=store, enqueue=enqueue)
    return sent


def test_a_worker_clock_behind_does_not_stall_its_running_job(
    board: RedisBoard, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The worker's clock 2 minutes behind: its lease of 60 s ended, by the reader's clock,
    a minute before it began. Read by that clock the job was ``stalled`` at once, and a
    repeat of the request published it again while it ran."""
    request = _request("Behind.")
    running = _running_on_a_skewed_worker(board, request, -120, 60, monkeypatch)
    assert running.lease_until is not None and running.lease_until < time.time() - 50
    read = board.get(running.id)
    assert read is not None and read.lease_held is True
    assert not read.stalled() and read.public()["status"] == "running"
    store = open_store((tmp_path / "store").as_uri())
    assert _repeat(board, store, request) == []
    again = board.get(running.id)
    assert again is not None and again.status == "running" and again.attempts == 1


def test_a_worker_clock_ahead_does_not_delay_a_stall(
    board: RedisBoard, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The worker's clock 10 minutes ahead: by the reader's clock its 1 s lease lasted 10
    minutes more. Redis expires it after 1 s; then the job stalls and a repeat publishes it
    again, once."""
    request = _request("Ahead.")
    running = _running_on_a_skewed_worker(board, request, 600, 1, monkeypatch)
    assert running.lease_until is not None and running.lease_until > time.time() + 500

    def stalled() -> bool:
        read = board.get(running.id)
        return read is not None and read.stalled()

    wait_until(stalled, 10, "Redis to expire the 1 s lease")
    read = board.get(running.id)
    assert read is not None and read.public()["stalled"]["since"] == running.lease_until
    store = open_store((tmp_path / "store").as_uri())
    assert _repeat(board, store, request) == [running.id]
    assert _repeat(board, store, request) == []  # queued again: the repeat finds it
    queued = board.get(running.id)
    assert queued is not None and queued.status == "queued" and queued.lease_held is True


def test_the_lease_key_lives_and_goes_with_the_running_state(
    board: RedisBoard, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    request = _request("Ends.")
    running = _running_on_a_skewed_worker(board, request, 0, 300, monkeypatch)
    client = board._redis
    assert 299_000 < client.pttl(LEASE_PREFIX + running.id) <= 300_000
    store = open_store((tmp_path / "store").as_uri())
    final = record(board, store, running, Finished("failed", error={
        "code": "internal", "message": "boom", "field": ""}))
    assert final.status == "failed" and client.exists(LEASE_PREFIX + running.id) == 0
    again = begin(board, final, worker="w@near", pid=2, lease_s=300)
    assert isinstance(again, JobState) and client.exists(LEASE_PREFIX + running.id) == 1
    board.drop(running.id)
    assert client.exists(LEASE_PREFIX + running.id) == 0 and board.get(running.id) is None


def test_a_state_from_a_worker_without_lease_keys_is_decided_by_its_lease_until(
    board: RedisBoard,
) -> None:
    """A worker of the previous version (a rolling upgrade) stamps ``lease_until`` and sets
    no key: its job is judged as before, not as stalled at once."""
    state = new_state("old-worker-job", "md", "doc").with_status(
        "running", attempts=1, lease_until=time.time() + 300)
    board.put(state)
    read = board.get(state.id)
    assert read is not None and read.lease_held is None and not read.stalled()
    board.put(state.with_status("running", lease_until=time.time() - 1))
    read = board.get(state.id)
    assert read is not None and read.stalled()
    assert "lease_held" not in read.to_dict()


def _submitted_on_a_skewed_producer(board: RedisBoard, store: ArtifactStore,
                                    request: RenderRequest, skew_s: float,
                                    monkeypatch: pytest.MonkeyPatch) -> JobState:
    """The job of ``request`` queued by a producer whose clock is ``skew_s`` off this one's
    (its message then lost: nothing consumes it)."""
    with monkeypatch.context() as patch:
        patch.setattr(jobstate, "time", SimpleNamespace(time=lambda: time.time() + skew_s))
        sent = _repeat(board, store, request)
    assert sent == [request.job_key()]
    read = board.get(request.job_key())
    assert read is not None and read.status == "queued"
    return read


def test_a_producer_clock_behind_does_not_publish_its_queued_job_again(
    board: RedisBoard, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The producer's clock 20 minutes behind: by the reader's clock its job was queued 20
    minutes ago, past the 15 allowed, and every repeat of the request published it again."""
    request = _request("Queued behind.")
    store = open_store((tmp_path / "store").as_uri())
    queued = _submitted_on_a_skewed_producer(board, store, request, -1200, monkeypatch)
    assert queued.updated_at < time.time() - 1100
    assert dataclasses.replace(queued, lease_held=None).lapsed()  # the clocks compared
    assert queued.lease_held is True and not queued.lapsed()
    assert 899_000 < board._redis.pttl(LEASE_PREFIX + queued.id) <= 900_000
    assert _repeat(board, store, request) == []
    assert _repeat(board, store, request) == []


def test_a_producer_clock_ahead_does_not_keep_a_lost_message_waiting(
    board: RedisBoard, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The producer's clock 20 minutes ahead: by the reader's clock a lost message waited 20
    minutes more before a repeat published it again. Redis expires the publisher's lease (1 s
    here) on its own clock; then a repeat publishes it again, once, with a new lease."""
    request = _request("Queued ahead.")
    store = open_store((tmp_path / "store").as_uri())
    monkeypatch.setattr(jobstate, "STALE_QUEUED_S", 1)
    queued = _submitted_on_a_skewed_producer(board, store, request, 1200, monkeypatch)
    assert queued.updated_at > time.time() + 1100 and not queued.lapsed()

    def lapsed() -> bool:
        read = board.get(queued.id)
        return read is not None and read.lapsed()

    wait_until(lapsed, 10, "Redis to expire the 1 s queued lease")
    expired = board.get(queued.id)
    assert expired is not None and not dataclasses.replace(expired, lease_held=None).lapsed()
    monkeypatch.setattr(jobstate, "STALE_QUEUED_S", 900)
    assert _repeat(board, store, request) == [queued.id]
    assert _repeat(board, store, request) == []
    again = board.get(queued.id)
    assert again is not None and again.status == "queued" and again.lease_held is True
    assert again.created_at == queued.created_at


def test_a_claim_sets_the_queued_lease_and_one_that_loses_leaves_the_holders(
    board: RedisBoard, monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = board._redis
    queued = new_state("claimed-job", "md", "doc")
    assert queued.queued_lease_s == 900 and board.claim(queued)
    assert 899_000 < client.pttl(LEASE_PREFIX + queued.id) <= 900_000
    running = begin(board, queued, worker="w@near", pid=1, lease_s=60)
    assert isinstance(running, JobState) and running.queued_lease_s is None
    assert 59_000 < client.pttl(LEASE_PREFIX + queued.id) <= 60_000
    assert not board.claim(new_state(queued.id, "md", "doc"))
    assert 58_000 < client.pttl(LEASE_PREFIX + queued.id) <= 60_000  # the worker's, untouched
    read = board.get(queued.id)
    assert read is not None and read.status == "running" and read.lease_held is True


@pytest.mark.parametrize("copied_lease_s", [None, 160], ids=["no-lease", "running-lease-copied"])
def test_a_queued_state_from_an_older_producer_is_judged_by_its_stamp(
    board: RedisBoard, tmp_path: Path, copied_lease_s: int | None,
) -> None:
    """A producer of an older version (a rolling upgrade) sets no queued lease; one of the
    previous version publishes a stalled job again with the running state's ``lease_s``
    copied into it. Neither makes a repeat publish the job again at once: the queued job is
    judged by its ``updated_at``, as before, and republished once that is 15 minutes old."""
    request = _request(f"Old producer {copied_lease_s}.")
    store = open_store((tmp_path / "store").as_uri())
    old = {k: v for k, v in new_state(request.job_key(), "md", "doc").to_dict().items()
           if k != "queued_lease_s"}
    client = board._redis
    client.set("citerender:job:" + old["id"], json.dumps({**old, "lease_s": copied_lease_s}))
    read = board.get(old["id"])
    assert read is not None and read.lease_held is None and not read.lapsed()
    assert _repeat(board, store, request) == []
    stamped = time.time() - 901
    client.set("citerender:job:" + old["id"], json.dumps(
        {**old, "lease_s": copied_lease_s, "updated_at": stamped, "created_at": stamped}))
    assert _repeat(board, store, request) == [old["id"]]
    assert _repeat(board, store, request) == []


def test_a_broker_batch_publishes_a_lost_queued_message_again(
    board: RedisBoard, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A batch whose job's message was lost (its publisher crashed after the claim) polled
    it ``queued`` for its whole hour; past the publisher's lease (1 s here, on Redis's clock)
    it now publishes the job again, as a repeat of the request would."""
    from renderers.cli_batch import Job, Outcome
    from renderers.workers import batch

    monkeypatch.setattr(jobstate, "STALE_QUEUED_S", 1)
    request = _request("Lost message.")
    store = open_store((tmp_path / "store").as_uri())
    lost = submit(request, board=board, store=store, enqueue=lambda state, payload: None).state
    sent: list[str] = []

    class Worker:
        """Publishing takes the job up at once and fails it, as a strict render would."""

        def enqueue(self, state: JobState, payload: dict[str, Any], store_url: str) -> None:
            sent.append(state.id)
            board.put(state.with_status("failed", error={
                "code": "strict_failed", "message": "rendered at last", "field": ""}))

    class Quiet:
        def event(self, _: object) -> None:
            pass

        def finished(self, _: object) -> None:
            pass

    job = Job(input="lost.md", pool="", out="never-written", name="lost", formats=("md",),
              content_format=None)
    entry = batch._Progress(Outcome(job.input), left=1)
    item = batch._Pending(job, "md", request, lost)
    batch._wait([item], board, Worker(), store, {job.input: entry},  # type: ignore[arg-type]
                Quiet())  # type: ignore[arg-type]
    assert sent == [lost.id] and "rendered at last" in entry.outcome.error
