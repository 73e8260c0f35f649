"""Jobs on real Celery workers: a real redis-server, ``citerender worker`` processes, replicas.

Every loop here is bounded in count and time; the fixtures stop every process they start.
"""

from __future__ import annotations

import filecmp
import hashlib
import io
import json
import os
import re
import signal
import socket
import subprocess
import zipfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from starlette.testclient import TestClient

from renderers.service.app import create_app
from renderers.workers.celery_app import WEBHOOK_TASK_NAME
from renderers.workers.provenance import sources_used_text
from renderers.workers.stores import open_store
from tests.helpers import pdf_text, pool_rows_validated
from tests.processes import (
    CITERENDER,
    POOL,
    Process,
    free_port,
    redis_server,
    slow_document,
    start_service,
    start_worker,
    wait_job,
    wait_ready,
    wait_until,
    webhook_receiver,
)

pytestmark = pytest.mark.slow

@dataclass
class Cluster:
    broker: str
    store_dir: Path
    store: str
    client: TestClient
    workers: dict[str, Process]
    tmp: Path

    def submit(self, body: dict[str, Any]) -> dict[str, Any]:
        answer = self.client.post("/jobs", json=body)
        assert answer.status_code in (200, 202), answer.text
        result: dict[str, Any] = answer.json()
        return result


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    tmp = tmp_path_factory.mktemp("cluster")
    store_dir = tmp / "store"
    store = store_dir.as_uri()
    with redis_server(tmp) as (url, _):
        broker = f"{url}/0"
        limits = ("--soft-time-limit", "60", "--time-limit", "70", "--webhook-host", "127.0.0.1")
        workers = {name: start_worker(broker, store, name, tmp, *limits) for name in ("w1", "w2")}
        try:
            wait_ready(*workers.values())
            app = create_app(workers=1, warmup=False, broker=broker, store=store,
                             webhook_hosts=["127.0.0.1"])
            with TestClient(app) as client:
                yield Cluster(broker, store_dir, store, client, workers, tmp)
        finally:
            for worker in workers.values():
                worker.stop()


def artifact_text(fmt: str, data: bytes, tmp: Path) -> str:
    if fmt == "pdf":
        target = tmp / f"{hashlib.sha256(data).hexdigest()}.pdf"
        target.write_bytes(data)
        return pdf_text(target)
    if fmt == "docx":
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            return package.read("word/document.xml").decode("utf-8")
    return data.decode("utf-8")


def test_fifty_jobs_through_two_workers_all_complete(cluster: Cluster) -> None:
    formats = ["pdf", "md", "html", "docx", "md"]
    jobs = []
    for index in range(50):
        fmt = formats[index % len(formats)]
        body = {"content": f"# Job {index}\n\nMarker job-{index}-done.[[S:{index % 5 + 1}]]\n",
                "format": fmt, "sources_pool": POOL, "title": f"Job {index}"}
        jobs.append((fmt, index, cluster.submit(body)["id"]))
    assert len({job_id for _, _, job_id in jobs}) == 50
    states = {job_id: wait_job(cluster.client, job_id, 600) for _, _, job_id in jobs}
    assert Counter(state["status"] for state in states.values()) == {"done": 50}
    board = redis.Redis.from_url(cluster.broker)
    ran_on = Counter(json.loads(board.get(f"citerender:job:{job_id}"))["worker"].split("@")[0]
                     for job_id in states)
    assert set(ran_on) == {"w1", "w2"}, ran_on
    provenance = {row["filename"]: row for row in
                  json.loads(sources_used_text(open_store(cluster.store)))}
    for fmt, index, job_id in jobs:
        state = states[job_id]
        answer = cluster.client.get(state["artifact_url"])
        assert answer.status_code == 200
        assert f"job-{index}-done" in artifact_text(fmt, answer.content, cluster.tmp)
        (key,) = state["result"]["artifacts"]
        record = provenance[key]
        assert record["sids"] == [index % 5 + 1] and record["format"] == fmt
        assert record["sha256"] == hashlib.sha256(answer.content).hexdigest()


@pytest.mark.parametrize("fmt", ["pdf", "png"])
def test_typst_jobs_render_on_the_workers(cluster: Cluster, fmt: str) -> None:
    """The worker warms WeasyPrint before its pool forks; Typst, whose compile threads a fork
    does not copy, is warmed in each render process: warmed before the fork, every Typst job
    hung until the hard time limit."""
    body = {"content": f"# Typst {fmt}\n\nMarker typst-{fmt}-done.[[S:1]]\n", "format": fmt,
            "sources_pool": POOL, "pdf_engine": "typst"}
    state = wait_job(cluster.client, cluster.submit(body)["id"], 60)
    assert state["status"] == "done" and state["attempts"] == 1, state
    data = cluster.client.get(state["artifact_url"]).content
    if fmt == "pdf":
        assert f"typst-{fmt}-done" in artifact_text(fmt, data, cluster.tmp)
    else:
        assert data.startswith(b"\x89PNG")


def test_repeat_is_answered_from_the_board_then_from_the_store(cluster: Cluster) -> None:
    body = {"content": "Repeat me.[[S:2]]\n", "format": "pdf", "sources_pool": POOL}
    first = wait_job(cluster.client, cluster.submit(body)["id"])
    artifact = cluster.store_dir / first["result"]["artifacts"][0]
    written = artifact.stat().st_mtime_ns
    again = cluster.client.post("/jobs", json=body)
    assert again.status_code == 200 and again.json()["finished_at"] == first["finished_at"]
    redis.Redis.from_url(cluster.broker).delete(f"citerender:job:{first['id']}")  # Redis forgot
    from_store = cluster.client.post("/jobs", json=body)
    assert from_store.status_code == 200
    assert from_store.json()["status"] == "done" and from_store.json()["attempts"] == 1
    assert artifact.stat().st_mtime_ns == written  # nothing rendered or written again


def test_a_job_whose_artifact_left_the_store_is_rendered_again(cluster: Cluster) -> None:
    """A lifecycle rule removed the file: the artifact answers 410 and says to submit again,
    and submitting again renders it again (it used to answer the finished job for ever)."""
    body = {"content": "Removed later.[[S:3]]\n", "format": "md", "sources_pool": POOL}
    first = wait_job(cluster.client, cluster.submit(body)["id"])
    (cluster.store_dir / first["result"]["artifacts"][0]).unlink()
    gone = cluster.client.get(first["artifact_url"])
    assert gone.status_code == 410 and "submit the request again" in gone.json()["error"]
    again = cluster.client.post("/jobs", json=body)
    # Queued anew, never the first run: read done from the store before the first run's board
    # write landed, that run was still "running" on the board, and the request joined it
    # (test_workers_runs holds that interleaving).
    assert again.status_code == 202 and again.json()["status"] == "queued", again.json()
    state = wait_job(cluster.client, again.json()["id"])
    assert state["status"] == "done" and state["finished_at"] > first["finished_at"]
    assert b"Removed later." in cluster.client.get(state["artifact_url"]).content


def test_worker_process_killed_mid_render_is_redelivered(cluster: Cluster) -> None:
    job = cluster.submit({"content": slow_document(), "format": "pdf", "sources_pool": POOL,
                          "title": "Killed once"})
    board = redis.Redis.from_url(cluster.broker)

    def running_pid() -> int:
        raw = board.get(f"citerender:job:{job['id']}")
        state = json.loads(raw) if raw else {}
        return int(state["pid"]) if state.get("status") == "running" else 0

    pid = wait_until(running_pid, 120, "the slow job to start")
    os.kill(pid, signal.SIGKILL)  # the render process, as the out-of-memory killer would
    state = wait_job(cluster.client, job["id"], 300)
    assert state["status"] == "done", state
    assert state["attempts"] == 2
    data = cluster.client.get(state["artifact_url"]).content
    assert "Paragraph 199" in artifact_text("pdf", data, cluster.tmp)
    record = next(r for r in json.loads(sources_used_text(open_store(cluster.store)))
                  if r["filename"] == state["result"]["artifacts"][0])
    assert record["sha256"] == hashlib.sha256(data).hexdigest()


def test_webhook_is_sent_by_the_worker(cluster: Cluster) -> None:
    with webhook_receiver() as (url, received):
        job = cluster.submit({"content": "Hooked.[[S:1]]\n", "format": "md",
                              "sources_pool": POOL, "webhook": url})
        wait_until(lambda: received, 120, "the webhook call")
    assert received[0]["id"] == job["id"] and received[0]["status"] == "done"
    assert received[0]["result"]["sources_used"] == [1]


def test_a_webhook_receiver_that_never_answers_leaves_the_job_done(tmp_path: Path) -> None:
    """The webhook is a task of its own, sent once the job is recorded. Sent inside the render
    task, a receiver that never answered kept it past its hard time limit, and the limit's
    handler turned the finished job into ``failed``."""
    sink = socket.socket()
    sink.bind(("127.0.0.1", 0))
    sink.listen(16)  # connections land in the backlog, never accepted nor answered
    silent = f"http://127.0.0.1:{sink.getsockname()[1]}/hook"
    store = (tmp_path / "store").as_uri()
    with redis_server(tmp_path) as (url, _):
        broker = f"{url}/0"
        # Every attempt of the webhook times out: 3 x 5 s, past the render's 10 s hard limit.
        worker = start_worker(broker, store, "short", tmp_path, "--queues", "render.office",
                              "--soft-time-limit", "8", "--time-limit", "10",
                              "--webhook-host", "127.0.0.1")
        try:
            wait_ready(worker)
            app = create_app(workers=1, warmup=False, broker=broker, store=store,
                             webhook_hosts=["127.0.0.1"])
            with TestClient(app) as client, webhook_receiver() as (hook, received):
                jobs = [client.post("/jobs", json={"content": f"Job {name}.[[S:1]]\n",
                                                   "format": "md", "sources_pool": POOL,
                                                   "webhook": target}).json()
                        for name, target in (("silent", silent), ("heard", hook))]
                for job in jobs:
                    assert wait_job(client, job["id"], 120)["status"] == "done"

                def webhook_tasks_ended() -> bool:
                    ended = re.findall(rf"Task {re.escape(WEBHOOK_TASK_NAME)}\[\S+\] succeeded",
                                       worker.output())
                    return len(ended) == 2

                wait_until(webhook_tasks_ended, 120, "both webhook tasks")
                log = worker.output()
                assert f"webhook {silent} failed: no answer within 5 s (attempt 3)" in log
                assert "TimeLimitExceeded" not in log  # the render tasks ended at once
                for job in jobs:
                    state = client.get(f"/jobs/{job['id']}").json()
                    assert state["status"] == "done", state
                    artifact = client.get(f"/jobs/{job['id']}/artifact")
                    assert artifact.status_code == 200
                    assert f"Job {'silent' if job is jobs[0] else 'heard'}." in artifact.text
                assert len(received) == 1
                assert received[0]["id"] == jobs[1]["id"] and received[0]["status"] == "done"
                assert received[0]["result"]["sources_used"] == [1]
        finally:
            worker.stop()
            sink.close()


def test_batch_render_through_the_broker_matches_a_local_batch(cluster: Cluster) -> None:
    inputs = cluster.tmp / "inputs"
    inputs.mkdir()
    (inputs / "pool.json").write_text(json.dumps(POOL), encoding="utf-8")
    names = []
    for index in range(3):
        name = inputs / f"brief-{index}.md"
        name.write_text(f"# Brief {index}\n\nStorage claim.[[S:{index + 1}]] Grid.[[S:5]]\n"
                        + "Long paragraph on grids.[[S:2]]\n\n" * 40 * index
                        + "".join(f"[gone](#gone-{n})\n\n" for n in range(25 * (index == 0))),
                        encoding="utf-8")
        names.append(str(name))
    common = [*names, "--pool", str(inputs / "pool.json"), "--to", "pdf,md,png,docx"]
    remote = subprocess.run(
        [CITERENDER, "render", *common, "--out", str(cluster.tmp / "remote"),
         "--broker", cluster.broker], capture_output=True, text=True, timeout=600)
    assert remote.returncode == 0, remote.stderr
    assert "brief-2.md" in remote.stdout and "Sources cited" in remote.stdout
    local = subprocess.run([CITERENDER, "render", *common, "--out", str(cluster.tmp / "local")],
                           capture_output=True, text=True, timeout=600)
    assert local.returncode == 0, local.stderr
    comparison = filecmp.dircmp(cluster.tmp / "remote", cluster.tmp / "local")
    assert comparison.left_only == comparison.right_only == [] and comparison.common_files
    _, mismatch, errors = filecmp.cmpfiles(cluster.tmp / "remote", cluster.tmp / "local",
                                           comparison.common_files, shallow=False)
    assert mismatch == errors == []
    assert "sources_used.json" in comparison.common_files
    assert (cluster.tmp / "remote" / "brief-2-2.png").exists()
    # brief-0's 25 dead links: 20 notes and one summary, counted 25, as the local batch says
    warned = [line for line in remote.stderr.splitlines() if "warning" in line]
    assert warned == [line for line in local.stderr.splitlines() if "warning" in line]
    assert len(warned) == 21 and warned[-1].endswith("and 5 more reader notes (first at line 44)")
    counts = [line.split("│")[4].strip() for line in remote.stdout.splitlines()
              if line.startswith("│")]  # a folded path's further lines have none
    assert sorted(count for count in counts if count) == ["0", "0", "25"]


def test_two_service_replicas_serve_each_others_jobs(cluster: Cluster) -> None:
    ports = [free_port(), free_port()]
    args = ("--broker", cluster.broker, "--store", cluster.store)
    replicas = [start_service(port, cluster.tmp, *args) for port in ports]
    try:
        first, second = (httpx.Client(base_url=f"http://127.0.0.1:{p}", timeout=60)
                         for p in ports)
        body = {"content": "Replicated.[[S:3]]\n", "format": "pdf", "sources_pool": POOL}
        accepted = first.post("/jobs", json=body)
        assert accepted.status_code == 202
        job_id = accepted.json()["id"]
        state = wait_job(second, job_id)
        assert state["status"] == "done"
        from_second = second.get(f"/jobs/{job_id}/artifact")
        from_first = first.get(f"/jobs/{job_id}/artifact")
        assert from_second.status_code == 200 and from_second.content == from_first.content
        repeat = second.post("/jobs", json=body)
        assert repeat.status_code == 200 and repeat.json()["id"] == job_id
        first.close()
        second.close()
    finally:
        for replica in replicas:
            replica.stop()


def test_broker_going_down_answers_503_and_the_service_stays_healthy(tmp_path: Path) -> None:
    with redis_server(tmp_path) as (url, server):
        app = create_app(workers=1, warmup=False, broker=f"{url}/0",
                         store=(tmp_path / "store").as_uri())
        with TestClient(app) as client:
            body = {"content": "Queued while up.[[S:1]]\n", "format": "md", "sources_pool": POOL}
            queued = client.post("/jobs", json=body)
            assert queued.status_code == 202
            server.stop(5)
            down = client.post("/jobs", json={**body, "content": "After the fall.[[S:1]]\n"})
            assert down.status_code == 503
            assert "unreachable" in down.json()["error"] and down.headers["retry-after"]
            assert client.get(f"/jobs/{queued.json()['id']}").status_code == 503
            assert client.get("/healthz").status_code == 200
            rendered = client.post("/render", json=body)
            assert rendered.status_code == 200 and b"[^1]" in rendered.content


def test_a_render_past_the_worker_memory_cap_fails_and_the_worker_carries_on(
    tmp_path: Path,
) -> None:
    from tests.surfaces.test_service import CAP_MIB, ten_long_reports

    store = (tmp_path / "store").as_uri()
    with redis_server(tmp_path) as (url, _):
        broker = f"{url}/0"
        capped = start_worker(broker, store, "capped", tmp_path,
                              "--max-worker-memory", str(CAP_MIB))
        try:
            wait_ready(capped)
            app = create_app(workers=1, warmup=False, broker=broker, store=store)
            with TestClient(app) as client:
                big = client.post("/jobs", json=ten_long_reports()).json()
                state = wait_job(client, big["id"], 300)
                # Typst aborts past the cap: each attempt costs its process, up to the limit.
                assert state["status"] == "failed", state
                assert state["error"]["code"] in ("worker_lost", "limit_exceeded"), state
                small = client.post("/jobs", json={"content": "After.[[S:1]]\n", "format": "md",
                                                   "sources_pool": POOL}).json()
                assert wait_job(client, small["id"], 120)["status"] == "done"
            assert capped.alive()
        finally:
            capped.stop()


def test_a_service_without_store_looks_for_the_advertisement_again_at_each_request(
    tmp_path: Path,
) -> None:
    """No worker has advertised a store yet: 503, and the absence is not kept — the request
    after an advertisement lands is queued."""
    from renderers.workers.jobstate import RedisBoard

    store = (tmp_path / "store").as_uri()
    with redis_server(tmp_path) as (url, _):
        broker = f"{url}/0"
        with TestClient(create_app(workers=1, warmup=False, broker=broker)) as client:
            body = {"content": "Waits for a store.[[S:1]]\n", "format": "md",
                    "sources_pool": POOL}
            missing = client.post("/jobs", json=body)
            assert missing.status_code == 503 and missing.headers["retry-after"]
            assert "no artifact store" in missing.json()["error"]
            assert "--advertise-interval" in missing.json()["error"]
            board = RedisBoard(broker)
            board.advertise_store(store, 60)
            assert 0 < redis.Redis.from_url(broker).ttl("citerender:store") <= 60
            board.close()
            queued = client.post("/jobs", json=body)
            assert queued.status_code == 202, queued.json()
            assert client.get(f"/jobs/{queued.json()['id']}").json()["status"] == "queued"


def test_a_render_task_advertises_the_store_again(tmp_path: Path) -> None:
    """Each task a worker takes sets the advertisement again (here one that returns at once:
    its job finished before)."""
    from renderers.workers.celery_app import WorkerSettings, make_celery, run_render_task
    from renderers.workers.jobstate import new_state, save_result

    store = (tmp_path / "store").as_uri()
    with redis_server(tmp_path) as (url, _):
        broker = f"{url}/0"
        settings = WorkerSettings(broker=broker, store=store, advertise_interval_s=3600)
        finished = new_state("f" * 64, "md", "old").with_status("done", result={"artifacts": []})
        save_result(open_store(store), finished)
        client = redis.Redis.from_url(broker)
        assert client.get("citerender:store") is None
        app = make_celery(settings)
        run_render_task(settings, finished.to_dict(), {}, store, worker="test@host", app=app)
        app.close()
        assert client.get("citerender:store") == store.encode()
        assert 3600 < client.ttl("citerender:store") <= 3 * 3600  # it expires without workers
        client.close()


def test_after_redis_is_flushed_running_workers_advertise_their_store_again(
    tmp_path: Path,
) -> None:
    """Redis restarted empty (here: flushed) while a worker runs: within one advertisement
    interval a service and a batch given no ``--store`` find the store again, and a service
    that was already running before keeps queueing jobs that get rendered."""
    store = (tmp_path / "store").as_uri()
    body = {"content": "Before the flush.[[S:1]]\n", "format": "md", "sources_pool": POOL}
    with redis_server(tmp_path) as (url, _):
        broker = f"{url}/0"
        worker = start_worker(broker, store, "beat", tmp_path, "--advertise-interval", "1")
        try:
            wait_ready(worker)
            with TestClient(create_app(workers=1, warmup=False, broker=broker)) as before:
                first = before.post("/jobs", json=body)
                assert first.status_code == 202, first.json()
                assert wait_job(before, first.json()["id"], 120)["status"] == "done"
                redis.Redis.from_url(broker).flushall()
                with TestClient(create_app(workers=1, warmup=False, broker=broker)) as after:
                    again = {**body, "content": "After the flush.[[S:2]]\n"}

                    def accepted() -> dict[str, Any] | None:
                        answer = after.post("/jobs", json=again)
                        assert answer.status_code in (202, 503), answer.json()
                        return answer.json() if answer.status_code == 202 else None

                    job = wait_until(accepted, 60, "the store to be advertised again", every=0.2)
                    state = wait_job(after, job["id"], 120)
                    assert state["status"] == "done", state
                    assert b"After the flush." in after.get(state["artifact_url"]).content
                ttl = redis.Redis.from_url(broker).ttl("citerender:store")
                assert 0 < ttl <= 3  # three intervals: gone soon after the last worker stops
                old = before.post("/jobs", json={**body, "content": "Old replica.[[S:3]]\n"})
                assert old.status_code == 202, old.json()
                assert wait_job(before, old.json()["id"], 120)["status"] == "done"
            (tmp_path / "in.md").write_text("Batch after the flush.[[S:4]]\n", encoding="utf-8")
            (tmp_path / "pool.json").write_text(json.dumps(POOL), encoding="utf-8")
            batch = subprocess.run(
                [CITERENDER, "render", str(tmp_path / "in.md"), "--pool",
                 str(tmp_path / "pool.json"), "--to", "md", "--out", str(tmp_path / "out"),
                 "--broker", broker], capture_output=True, text=True, timeout=300)
            assert batch.returncode == 0, batch.stderr
            assert "Batch after the flush." in (tmp_path / "out" / "in.md").read_text("utf-8")
            assert worker.alive()
        finally:
            worker.stop()


def test_an_option_one_of_a_batchs_formats_uses_is_no_warning_through_the_broker(
    cluster: Cluster,
) -> None:
    """``--to pdf,png --pages 1``: PNG uses ``pages``, so neither the local batch nor the broker's
    (one job per format) says it went unused."""
    inputs = cluster.tmp / "unused"
    inputs.mkdir()
    (inputs / "pool.json").write_text(json.dumps(POOL), encoding="utf-8")
    (inputs / "brief.md").write_text("# Brief\n\nStorage claim.[[S:1]]\n", encoding="utf-8")
    common = [str(inputs / "brief.md"), "--pool", str(inputs / "pool.json"), "--to", "pdf,png",
              "--pages", "1", "--slide-level", "3"]
    remote = subprocess.run(
        [CITERENDER, "render", *common, "--out", str(cluster.tmp / "unused-remote"),
         "--broker", cluster.broker], capture_output=True, text=True, timeout=600)
    local = subprocess.run(
        [CITERENDER, "render", *common, "--out", str(cluster.tmp / "unused-local")],
        capture_output=True, text=True, timeout=600)
    assert remote.returncode == local.returncode == 0, (remote.stderr, local.stderr)
    warned = [line for line in remote.stderr.splitlines() if "warning" in line]
    assert warned == [line for line in local.stderr.splitlines() if "warning" in line]
    assert len(warned) == 1 and "--slide-level applies to pptx output only" in warned[0], warned
    counts = [line.split("│")[4].strip() for line in remote.stdout.splitlines()
              if line.startswith("│")]
    assert [count for count in counts if count] == ["1"]


def test_a_render_task_checks_only_a_body_no_producer_of_its_version_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A message whose job id is this version's key for its body was checked by a producer of
    this version, and is only built: the worker ran every pool row through the schema
    validator again (4 of the 5.6 CPU seconds of a job with 190,000 rows). Any other (another
    version's key) is checked, and refused as a service of the worker's version refuses it."""
    from renderers.service.requests import RequestProblem, parse_render_request
    from renderers.workers.celery_app import WorkerSettings, make_celery, run_render_task
    from renderers.workers.jobstate import RedisBoard, new_state

    rows = [{"sid": i, "title": f"Study {i}", "url": f"https://example.org/{i}"}
            for i in range(1, 101)]
    good = {"content": "Claim.[[S:7]]\n", "format": "md", "sources_pool": rows}
    bad = {**good, "sources_pool": [*rows[:2], {**rows[2], "sid": "three"}]}
    with pytest.raises(RequestProblem) as refused:
        parse_render_request(bad)
    good_id = parse_render_request(good).job_key()
    store = (tmp_path / "store").as_uri()
    with redis_server(tmp_path) as (url, _):
        broker = f"{url}/0"
        settings = WorkerSettings(broker=broker, store=store, advertise_interval_s=3600)
        board = RedisBoard(broker)
        app = make_celery(settings)
        seen = pool_rows_validated(monkeypatch)
        try:
            for job_id, body in ((good_id, good), ("e" * 64, bad)):
                state = new_state(job_id, "md", "report")
                board.put(state)
                run_render_task(settings, state.to_dict(), body, store, worker="test@host",
                                app=app)
            done, failed = board.get(good_id), board.get("e" * 64)
        finally:
            app.close()
            board.close()
    assert done is not None and done.status == "done" and done.result is not None, done
    assert done.result["sources_used"] == [7]
    assert max(seen, default=0) == 0, f"the schema validator saw {max(seen)} rows"
    assert failed is not None and failed.error == {
        "code": str(refused.value.code), "message": refused.value.message,
        "field": refused.value.field}


@dataclass
class StuckJob:
    """A job whose worker ran it while the board refused its end (see :func:`stuck_job`)."""

    broker: str
    store_url: str
    request: Any  # RenderRequest
    board: Any  # RedisBoard refusing every finished state
    queued: list[Any]  # the states published so far
    state: Any  # the job's state on the board once its render ended

    def repeat(self) -> bool:
        """Send the request again; whether that published the job."""
        from renderers.workers.submit import submit

        return submit(self.request, board=self.board, store=open_store(self.store_url),
                      enqueue=lambda state, _: self.queued.append(state)).queued_now


@pytest.fixture
def stuck_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[StuckJob]:
    """A strict render that fails, on a real Redis whose every write of a finished state is
    refused (out of memory at that moment), with a worker lease of 4 s (visibility 3 s and a
    1 s sweep): the job is left ``running`` on the board."""
    from renderers.service.requests import parse_render_request
    from renderers.workers import celery_app
    from renderers.workers.celery_app import WorkerSettings, make_celery, run_render_task
    from renderers.workers.errors import BrokerUnavailable
    from renderers.workers.jobstate import JobState, RedisBoard

    class RefusingEnds(RedisBoard):
        def put(self, state: JobState) -> bool:
            if state.status in ("done", "failed"):
                raise BrokerUnavailable("OOM command not allowed when used memory > 'maxmemory'")
            return super().put(state)

    request = parse_render_request({"content": "Claim.[[S:9]]\n", "format": "md",
                                    "strict": True, "sources_pool": POOL})
    store_url = (tmp_path / "store").as_uri()
    with redis_server(tmp_path) as (url, _):
        broker = f"{url}/0"
        settings = WorkerSettings(broker=broker, store=store_url, soft_time_limit_s=1,
                                  time_limit_s=2, visibility_timeout_s=3, restore_interval_s=1,
                                  advertise_interval_s=3600)
        board = RefusingEnds(broker)
        monkeypatch.setattr(celery_app, "board_for", lambda _: board)
        stuck = StuckJob(broker, store_url, request, board, [], None)
        assert stuck.repeat()
        app = make_celery(settings)
        try:
            run_render_task(settings, stuck.queued[0].to_dict(), request.payload, store_url,
                            worker="test@host", app=app)
        finally:
            app.close()
        stuck.state = board.get(stuck.queued[0].id)
        try:
            yield stuck
        finally:
            board.close()


def test_a_job_whose_end_the_board_refused_is_rendered_again_past_its_workers_lease(
    stuck_job: StuckJob,
) -> None:
    """Redis refusing the job's last write (down, or out of memory, at that moment) left the
    job ``running`` for the board's 7 days, and every repeat of its request answered it. Past
    its worker's lease (the visibility timeout and a sweep), a repeat publishes it again."""
    stuck = stuck_job.state
    assert stuck is not None and stuck.status == "running" and stuck.attempts == 1
    assert stuck.started_at is not None and stuck.lease_until == stuck.started_at + 3 + 1
    wait_until(stuck_job.repeat, 30, "a repeat past the lease to publish the job again",
               every=0.5)
    again = stuck_job.board.get(stuck.id)
    assert [state.id for state in stuck_job.queued] == [stuck.id] * 2
    assert again is not None and again.status == "queued" and again.attempts == 1, again


def test_a_job_past_its_workers_lease_reads_stalled_until_it_is_sent_again(
    stuck_job: StuckJob,
) -> None:
    """A client polling ``GET /jobs/{id}`` read ``running`` for as long as the board kept the
    state (7 days) when the end was refused: it never learnt to send the request again."""
    job_id = stuck_job.state.id
    app = create_app(workers=1, warmup=False, broker=stuck_job.broker, store=stuck_job.store_url)
    with TestClient(app) as client:
        first = client.get(f"/jobs/{job_id}").json()
        assert first["status"] == "running" and "stalled" not in first  # within its lease

        def stalled() -> bool:
            return bool(client.get(f"/jobs/{job_id}").json()["status"] == "stalled")

        wait_until(stalled, 30, "the job to read stalled past its lease", every=0.5)
        answer = client.get(f"/jobs/{job_id}").json()
        assert answer["stalled"]["since"] == stuck_job.state.lease_until
        assert "send the same request to POST /jobs again" in answer["stalled"]["message"]
        assert answer["attempts"] == 1 and "error" not in answer
        repeated = client.post("/jobs", json=stuck_job.request.payload)
        assert repeated.status_code == 202 and repeated.json()["status"] == "queued"
        assert client.get(f"/jobs/{job_id}").json()["status"] == "queued"


def test_a_broker_batch_sends_a_stalled_job_again(stuck_job: StuckJob) -> None:
    """A batch polled a job whose end the board refused until its hour was up; it now sends
    the request again once the job stalls, as a client of the service would."""
    from renderers.cli_batch import Job, Outcome
    from renderers.workers import batch
    from renderers.workers.jobstate import RedisBoard

    board = RedisBoard(stuck_job.broker)  # a board that takes every write, as after the outage
    sent: list[str] = []

    class Worker:
        """Publishing takes the job up at once and fails it, as a render would again."""

        def enqueue(self, state: Any, payload: dict[str, Any], store_url: str) -> None:
            sent.append(state.id)
            board.put(state.with_status("failed", error={
                "code": "strict_failed", "message": "S:9 is not in the pool", "field": ""}))

    class Quiet:
        def event(self, _: object) -> None:
            pass

        def finished(self, _: object) -> None:
            pass

    job = Job(input="claim.md", pool="", out="never-written", name="claim",
              formats=("md",), content_format=None)
    entry = batch._Progress(Outcome(job.input), left=1)
    item = batch._Pending(job, "md", stuck_job.request, stuck_job.state)
    try:
        batch._wait([item], board, Worker(), open_store(stuck_job.store_url),  # type: ignore[arg-type]
                    {job.input: entry}, Quiet())  # type: ignore[arg-type]
    finally:
        board.close()
    assert sent == [stuck_job.state.id]
    assert "S:9 is not in the pool" in entry.outcome.error



def test_a_redis_that_refuses_scripts_is_named_by_the_worker_batch_and_service(
    tmp_path: Path,
) -> None:
    """A managed Redis may refuse Lua (here an ACL user without ``@scripting``). Celery's Redis
    transport needs it (kombu's locks), so no fallback could make the workers run: each
    surface says so in one line, instead of a worker's traceback or "unreachable"."""
    store = (tmp_path / "store").as_uri()
    with redis_server(tmp_path) as (url, _):
        admin = redis.Redis.from_url(url)
        admin.acl_setuser("noscripts", enabled=True, reset=True, passwords=["+pw"], keys=["*"],
                          channels=["*"], commands=["+@all", "-@scripting"])
        admin.close()
        broker = url.replace("redis://", "redis://noscripts:pw@") + "/0"
        refused = "refuses Lua scripts"
        worker = subprocess.run([CITERENDER, "worker", "--broker", broker, "--store", store],
                                capture_output=True, text=True, timeout=120, check=False)
        assert worker.returncode != 0 and "Traceback" not in worker.stderr
        assert worker.stderr.startswith("citerender: error: --broker:") and refused in worker.stderr
        assert "@scripting" in worker.stderr and ":pw@" not in worker.stderr
        (tmp_path / "a.md").write_text("Text.[[S:1]]\n", encoding="utf-8")
        (tmp_path / "a.pool.json").write_text(json.dumps(POOL), encoding="utf-8")
        batch = subprocess.run([CITERENDER, "render", "a.md", "--broker", broker, "--store",
                                store, "-t", "md"], capture_output=True, text=True,
                               timeout=120, check=False, cwd=tmp_path)
        assert batch.returncode != 0 and "Traceback" not in batch.stderr
        assert refused in batch.stderr
        app = create_app(workers=1, warmup=False, broker=broker, store=store)
        with TestClient(app) as client:
            answer = client.post("/jobs", json={"content": "Text.[[S:1]]\n", "format": "md",
                                                "sources_pool": POOL})
            assert answer.status_code == 503 and refused in answer.json()["error"]
            assert client.get("/healthz").status_code == 200
