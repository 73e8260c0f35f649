"""A job's writers do not take turns: a worker records its end in the store, then on the board,
while clients read, remove artifacts and send the request again. Each test holds one writer
between two of its writes (a board that runs a hook before a chosen write) and checks that an
older run's state never answers for a newer one. On the in-process board and on a real
redis-server (whose write is a script)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from renderers.service.requests import RenderRequest, parse_render_request
from renderers.workers.execute import Finished, begin, record
from renderers.workers.jobstate import (
    JobBoard,
    JobState,
    MemoryBoard,
    RedisBoard,
    current_state,
    finished_state,
    look_up,
    new_state,
    save_result,
)
from renderers.workers.stores import ArtifactStore, open_store
from renderers.workers.submit import Submission, submit
from tests.processes import redis_server


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as (url, _):
        yield f"{url}/0"


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.slow)])
def board(request: pytest.FixtureRequest) -> Iterator[JobBoard]:
    if request.param == "memory":
        yield MemoryBoard()
        return
    redis_board = RedisBoard(request.getfixturevalue("broker"))
    redis_board._redis.flushdb()
    try:
        yield redis_board
    finally:
        redis_board.close()


@pytest.fixture
def store(tmp_path: Path) -> ArtifactStore:
    return open_store((tmp_path / "store").as_uri())


class HeldBoard:
    """``board``, running ``hook`` once, just before (or ``after``) the first write of a state
    ``when`` picks: its writer held there while others read and write."""

    def __init__(self, board: JobBoard, when: Callable[[JobState], bool],
                 hook: Callable[[], None], *, after: bool = False) -> None:
        self.board, self.when, self.hook, self.after = board, when, hook, after
        self.held = False

    def get(self, job_id: str) -> JobState | None:
        return self.board.get(job_id)

    def put(self, state: JobState) -> bool:
        hold = not self.held and self.when(state)
        self.held = self.held or hold
        if hold and not self.after:
            self.hook()
        stored = self.board.put(state)
        if hold and self.after:
            self.hook()
        return stored

    def claim(self, state: JobState) -> bool:
        return self.board.claim(state)

    def drop(self, job_id: str) -> None:
        self.board.drop(job_id)


REQUEST = parse_render_request({"content": "Removed later.[[S:1]]\n", "format": "md",
                                "sources_pool": [{"sid": 1, "title": "Lazard LCOE+",
                                                  "url": "https://www.lazard.com/"}]})
JOB = REQUEST.job_key()
ARTIFACT = f"artifacts/{JOB}/removed-later.md"


def _send(board: JobBoard, store: ArtifactStore, request: RenderRequest = REQUEST) -> Submission:
    return submit(request, board=board, store=store, enqueue=lambda state, payload: None)


def _run(board: JobBoard, store: ArtifactStore, text: bytes = b"Removed later.") -> JobState:
    """One task of the job as a worker runs it: begun from the board's state, its artifact
    written, its end recorded (store, then board)."""
    assert finished_state(board, store, JOB) is None
    current = board.get(JOB)
    assert current is not None
    started = begin(board, current, worker="w@test", pid=1, lease_s=600)
    assert isinstance(started, JobState)
    store.put(ARTIFACT, text)
    return record(board, store, started, Finished("done", result={"artifacts": [ARTIFACT]}))


def _read(board: JobBoard, store: ArtifactStore) -> JobState:
    """What ``GET /jobs/{id}`` answers."""
    state = current_state(board, lambda: store, JOB)
    assert state is not None
    return state


def test_a_request_sent_again_while_its_run_records_its_end_is_rendered_again(
    board: JobBoard, store: ArtifactStore,
) -> None:
    """The flake of test_a_job_whose_artifact_left_the_store_is_rendered_again: a client read
    ``done`` from the store while the worker's board write had not landed, removed the
    artifact and sent the request again. The request joined the ended run (the board still said
    ``running``), whose board write then landed: the client read the first ``done`` again."""
    _send(board, store)
    again: list[Submission] = []

    def client() -> None:  # the worker is between its store write and its board write
        seen = _read(board, store)
        assert seen.status == "done" and seen.run == 1
        store.delete(ARTIFACT)
        again.append(_send(board, store))

    held = HeldBoard(board, lambda state: state.status == "done", client)
    first = _run(held, store)  # type: ignore[arg-type]
    assert again[0].queued_now and again[0].state.status == "queued" and again[0].state.run == 2
    assert _read(board, store).status == "queued"  # the first run's late end did not land
    second = _run(board, store)
    answered = _read(board, store)
    assert answered == second and answered.run == 2 and answered.attempts == 1
    assert (answered.finished_at or 0) >= (first.finished_at or 0)
    assert store.get(ARTIFACT) == b"Removed later."


def test_a_read_while_a_new_run_is_queued_never_answers_the_old_result(
    board: JobBoard, store: ArtifactStore,
) -> None:
    """Queuing a job again whose artifacts were removed writes the board, then the store (over
    the old result): a read in between answered the old ``done`` from the store."""
    _send(board, store)
    _run(board, store)
    store.delete(ARTIFACT)
    seen: list[JobState] = []
    held = HeldBoard(board, lambda state: state.status == "queued",
                     lambda: seen.append(_read(board, store)), after=True)
    assert _send(held, store).queued_now  # type: ignore[arg-type]
    assert len(seen) == 1 and seen[0].status == "queued" and seen[0].run == 2
    assert _read(board, store) == seen[0]


def test_a_run_begun_again_is_not_replaced_by_the_result_it_rewrites(
    board: JobBoard, store: ArtifactStore,
) -> None:
    """A message redelivered after the artifacts were removed renders the job again at the same
    keys: once they were back, a look-up put the old result over the running job (``done``
    with the old time while the render went on), and a repeat of the request answered it."""
    _send(board, store)
    first = _run(board, store)
    store.delete(ARTIFACT)
    started = begin(board, first, worker="w@again", pid=2, lease_s=600)
    assert isinstance(started, JobState) and started.run == 2
    store.put(ARTIFACT, b"Removed later.")  # mid-render: the artifact is back, not recorded
    found = look_up(board, store, JOB)
    assert found.finished is None and found.state == board.get(JOB)
    assert _read(board, store).status == "running"
    repeat = _send(board, store)
    assert not repeat.queued_now and repeat.state.status == "running"


def test_a_board_keeps_the_newest_run(board: JobBoard) -> None:
    """A write of an older run is refused and leaves the newer state (and its lease); a state
    of the same or a newer run, or one held from a version without runs, is replaced."""
    queued = new_state(JOB, "md", "removed-later", run=2)
    assert board.claim(queued)
    late = queued.with_status("done", run=1, result={"artifacts": []})
    assert not board.put(late)
    held = board.get(JOB)
    assert held is not None and held.status == "queued" and held.run == 2
    assert not held.lapsed()  # its lease is still held
    running = queued.with_status("running", lease_s=600, lease_until=None)
    assert board.put(running)
    assert board.put(running.with_status("done", run=3))
    board.drop(JOB)
    older: dict[str, Any] = {k: v for k, v in queued.to_dict().items() if k != "run"}
    if isinstance(board, RedisBoard):  # as a service of the previous version wrote it
        board._redis.set(f"citerender:job:{JOB}", json.dumps(older))
    else:
        assert board.claim(JobState.from_dict(older))
    assert board.put(late)
    assert board.get(JOB) == late


def test_a_message_redelivered_after_its_run_ended_begins_a_new_run(
    board: JobBoard, store: ArtifactStore, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Run 1 stored its result, its board write was refused (the board says ``running``), then
    its artifact was removed. A delivery of its message began from the board's ``running`` as
    run 1 again, and while it rendered, reads answered run 1's old result from the store."""
    from renderers.workers import celery_app
    from renderers.workers.celery_app import WorkerSettings, make_celery, run_render_task

    sent: list[JobState] = []
    submit(REQUEST, board=board, store=store, enqueue=lambda state, payload: sent.append(state))
    started = begin(board, sent[0], worker="w@one", pid=1, lease_s=600)
    assert isinstance(started, JobState)
    store.put(ARTIFACT, b"Removed later.")
    save_result(store, started.with_status("done", finished_at=1.0,
                                           result={"artifacts": [ARTIFACT]}))
    store.delete(ARTIFACT)
    seen: list[JobState] = []
    held = HeldBoard(board, lambda state: state.status == "running",
                     lambda: seen.append(_read(board, store)), after=True)
    monkeypatch.setattr(celery_app, "board_for", lambda _: held)
    monkeypatch.setattr(celery_app, "refresh_advertisement", lambda _: None)
    settings = WorkerSettings(broker="redis://127.0.0.1:1/0", store=store.url)
    app = make_celery(settings)
    try:
        run_render_task(settings, sent[0].to_dict(), REQUEST.payload, store.url,
                        worker="w@two", app=app)
    finally:
        app.close()
    assert len(seen) == 1 and seen[0].status == "running" and seen[0].run == 2
    done = _read(board, store)
    assert done.status == "done" and done.run == 2 and done.attempts == 2
    assert done.result is not None and store.get(done.result["artifacts"][0]) is not None
