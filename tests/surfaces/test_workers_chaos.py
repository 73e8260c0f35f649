"""Workers that die or overrun: a whole worker SIGKILLed mid-render, a render past its limit.

Each test has its own Redis database, so the workers of one never take another's jobs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from starlette.testclient import TestClient

from renderers.service.app import create_app
from renderers.workers.provenance import sources_used_text
from renderers.workers.stores import open_store
from tests.processes import (
    POOL,
    redis_server,
    slow_document,
    start_worker,
    wait_job,
    wait_ready,
    wait_until,
)

pytestmark = pytest.mark.slow

#: Short enough that a lost job is redelivered within the test, longer than the hard limit.
VISIBILITY_S = 35


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as (url, _):
        yield url


def visible_artifacts(store: Path) -> dict[str, bytes]:
    """Every artifact a reader can see (hidden temporary files excluded)."""
    root = store / "artifacts"
    return {path.relative_to(store).as_posix(): path.read_bytes()
            for path in root.rglob("*") if path.is_file() and not path.name.startswith(".")}


def test_whole_worker_killed_mid_render_job_completes_on_another(
    redis_url: str, tmp_path: Path
) -> None:
    broker, store = f"{redis_url}/1", tmp_path / "store"
    limits = ("--soft-time-limit", "25", "--time-limit", "30", "--visibility-timeout",
              str(VISIBILITY_S), "--restore-interval", "1")
    workers = {name: start_worker(broker, store.as_uri(), name, tmp_path, *limits)
               for name in ("k1", "k2")}
    try:
        wait_ready(*workers.values())
        with TestClient(create_app(workers=1, warmup=False, broker=broker,
                                   store=store.as_uri())) as client:
            slow = client.post("/jobs", json={"content": slow_document(), "format": "pdf",
                                              "sources_pool": POOL}).json()
            board = redis.Redis.from_url(broker)

            def running_on() -> str:
                raw = board.get(f"citerender:job:{slow['id']}")
                state = json.loads(raw) if raw else {}
                return str(state["worker"]) if state.get("status") == "running" else ""

            victim = wait_until(running_on, 120, "the slow job to start").split("@")[0]
            workers[victim].kill_group()  # the machine dies: main process and pool at once
            others = [client.post("/jobs", json={
                "content": f"Small job {i}.[[S:{i + 1}]]\n", "format": "md" if i % 2 else "pdf",
                "sources_pool": POOL}).json()["id"] for i in range(5)]
            states = [wait_job(client, job_id, 240) for job_id in [slow["id"], *others]]
            provenance = {row["filename"]: row for row in
                          json.loads(sources_used_text(open_store(store.as_uri())))}
    finally:
        for worker in workers.values():
            worker.stop()
    assert [state["status"] for state in states] == ["done"] * 6, states
    assert states[0]["attempts"] == 2
    survivor = json.loads(redis.Redis.from_url(broker).get(f"citerender:job:{slow['id']}"))
    assert survivor["worker"].split("@")[0] != victim
    visible = visible_artifacts(store)
    expected = {key for state in states for key in state["result"]["artifacts"]}
    assert set(visible) == expected  # nothing half-written under a final name
    assert set(provenance) == expected  # every artifact recorded, none lost
    for key, data in visible.items():
        assert provenance[key]["sha256"] == hashlib.sha256(data).hexdigest()


def test_render_past_its_time_limit_fails_the_job(redis_url: str, tmp_path: Path) -> None:
    broker, store = f"{redis_url}/2", (tmp_path / "store").as_uri()
    worker = start_worker(broker, store, "t1", tmp_path, "--soft-time-limit", "1",
                          "--time-limit", "3")
    try:
        wait_ready(worker)
        with TestClient(create_app(workers=1, warmup=False, broker=broker, store=store)) as app:
            job = app.post("/jobs", json={"content": slow_document(400), "format": "pdf",
                                          "sources_pool": POOL}).json()
            state = wait_job(app, job["id"], 120)
            quick = wait_job(app, app.post("/jobs", json={
                "content": "Quick.[[S:1]]\n", "format": "md", "sources_pool": POOL}).json()["id"])
    finally:
        worker.stop()
    assert state["status"] == "failed"
    assert state["error"]["code"] == "time_limit" and "limit" in state["error"]["message"]
    assert quick["status"] == "done"  # the worker goes on serving
