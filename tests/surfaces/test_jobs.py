"""The job API without a broker: ``/jobs`` on the service's own worker pool, real renders."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import socket
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from starlette.testclient import TestClient

from renderers.service.app import create_app
from renderers.service.requests import RequestProblem, parse_render_request
from renderers.workers import webhooks
from renderers.workers.provenance import sources_used_text
from tests.helpers import pdf_text, pool_rows_validated
from tests.processes import free_port, wait_job, wait_until, webhook_receiver

CONTENT = "# Grid note\n\nStorage paired with solar now wins tenders.[[S:3]] Wind too.[[S:1]]\n"


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app(workers=1, warmup=False, webhook_hosts=["127.0.0.1"])) as app:
        yield app


def test_job_renders_on_the_local_pool_and_streams_its_artifact(
    client: TestClient, sample_pool: list[dict[str, Any]], tmp_path: Path
) -> None:
    body = {"content": CONTENT, "format": "pdf", "sources_pool": sample_pool, "title": "Grid"}
    accepted = client.post("/jobs", json=body)
    assert accepted.status_code == 202, accepted.text
    job = accepted.json()
    assert len(job["id"]) == 64 and job["status"] in ("queued", "running", "done")
    assert job["status_url"] == f"/jobs/{job['id']}" == accepted.headers["location"]
    state = wait_job(client, job["id"])
    assert state["status"] == "done", state
    result = state["result"]
    assert result["sources_used"] == [3, 1] and result["filename"] == "Grid.pdf"
    artifact = client.get(state["artifact_url"])
    assert artifact.status_code == 200
    assert artifact.headers["content-type"] == "application/pdf"
    assert artifact.headers["x-sources-used"] == "3,1"
    assert 'filename="Grid.pdf"' in artifact.headers["content-disposition"]
    target = tmp_path / "grid.pdf"
    target.write_bytes(artifact.content)
    assert "Storage paired with solar" in pdf_text(target) and "Lazard" in pdf_text(target)
    (record,) = result["provenance"]  # the job's own records travel with its state
    assert record["filename"] == result["artifacts"][0] and record["sids"] == [3, 1]
    assert record["sha256"] == hashlib.sha256(artifact.content).hexdigest()
    merged = json.loads(sources_used_text(client.app.state.jobs.store()))  # the operator's view
    assert record in merged


def test_no_route_lists_job_ids(client: TestClient, sample_pool: list[dict[str, Any]]) -> None:
    """A job id is all ``GET /jobs/{id}/artifact`` needs, so it is a capability: no route
    without the id may list it (the store's merged provenance names every artifact by it)."""
    state = wait_job(client, client.post("/jobs", json={
        "content": CONTENT + "Private.\n", "format": "md", "sources_pool": sample_pool}
    ).json()["id"])
    assert state["status"] == "done", state
    assert client.get("/sources_used.json").status_code == 404
    for path, spec in client.get("/openapi.json").json()["paths"].items():
        if "get" in spec and "{" not in path:
            answer = client.get(path)
            assert state["id"] not in answer.text, f"GET {path} lists a job id"
    assert not any("{" not in path and "sources_used" in path
                   for path in client.get("/openapi.json").json()["paths"])


def test_repeat_request_answers_the_finished_job_without_rendering(
    client: TestClient, sample_pool: list[dict[str, Any]]
) -> None:
    body = {"content": CONTENT + "Repeat.\n", "format": "md", "sources_pool": sample_pool}
    first = wait_job(client, client.post("/jobs", json=body).json()["id"])
    assert first["status"] == "done" and first["attempts"] == 1
    same = {"sources_pool": sample_pool, "format": "markdown", "content": body["content"]}
    again = client.post("/jobs", json=same)
    assert again.status_code == 200
    repeat = again.json()
    assert repeat["id"] == first["id"] and repeat["status"] == "done"
    assert repeat["attempts"] == 1 and repeat["finished_at"] == first["finished_at"]
    other = client.post("/jobs", json={**body, "numbering": "sid"})
    assert other.json()["id"] != first["id"]


def test_job_key_covers_content_pool_options_and_format(sample_pool: list[dict[str, Any]]) -> None:
    base = {"content": CONTENT, "format": "pdf", "sources_pool": sample_pool}
    key = parse_render_request(dict(base)).job_key()
    assert parse_render_request(dict(reversed(list(base.items())))).job_key() == key
    assert parse_render_request({**base, "numbering": "appearance"}).job_key() == key
    changed = [
        {**base, "content": CONTENT + " "},
        {**base, "sources_pool": sample_pool[:3]},
        {**base, "page_size": "Letter"},
        {**base, "format": "png"},
        {**base, "filename": "other"},
    ]
    keys = {parse_render_request(variant).job_key() for variant in changed}
    assert key not in keys and len(keys) == len(changed)


def test_several_png_pages_come_as_a_zip(
    client: TestClient, sample_pool: list[dict[str, Any]]
) -> None:
    long_content = "# Pages\n\n" + "".join(
        f"Paragraph {i} on storage and grids.[[S:{i % 3 + 1}]]\n\n" for i in range(90))
    state = wait_job(client, client.post("/jobs", json={
        "content": long_content, "format": "png", "pages": "all", "dpi": 30,
        "sources_pool": sample_pool, "filename": "pages"}).json()["id"])
    assert state["status"] == "done", state
    assert len(state["result"]["artifacts"]) >= 2
    answer = client.get(state["artifact_url"])
    assert answer.headers["content-type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(answer.content)) as archive:
        names = archive.namelist()
        assert names[:2] == ["pages-1.png", "pages-2.png"]
        assert all(Image.open(io.BytesIO(archive.read(n))).format == "PNG" for n in names)


def test_failed_job_names_the_error_and_has_no_artifact(
    client: TestClient, sample_pool: list[dict[str, Any]]
) -> None:
    state = wait_job(client, client.post("/jobs", json={
        "content": "Claim.[[S:99]]\n", "format": "md", "sources_pool": sample_pool,
        "strict": True}).json()["id"])
    assert state["status"] == "failed"
    assert state["error"]["code"] == "strict_failed" and "99" in state["error"]["message"]
    refused = client.get(f"/jobs/{state['id']}/artifact")
    assert refused.status_code == 409 and "failed" in refused.json()["error"]


def test_the_service_keeps_only_its_newest_finished_jobs_and_their_files(
    sample_pool: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a broker the finished jobs' states and artifacts live in the service (its
    memory, its temporary root). Past ``KEEP_LOCAL_JOBS`` jobs or ``KEEP_LOCAL_BYTES`` of
    artifacts, the job that finished first is forgotten, files and all; its request, sent
    again, renders it again. Kept for ever, they filled the disk: a 600 dpi PNG zip is 245 MB."""
    from renderers.service import jobs as local_jobs

    monkeypatch.setattr(local_jobs, "KEEP_LOCAL_JOBS", 2)
    bodies = [{"content": f"Kept {i}.[[S:{i + 1}]]\n", "format": "md",
               "sources_pool": sample_pool} for i in range(3)]
    with TestClient(create_app(workers=1, warmup=False)) as app:
        store = app.app.state.jobs.store()
        ids = [wait_job(app, app.post("/jobs", json=body).json()["id"])["id"] for body in bodies]
        assert app.get(f"/jobs/{ids[0]}").status_code == 404
        assert app.get(f"/jobs/{ids[0]}/artifact").status_code == 404
        assert [app.get(f"/jobs/{job_id}/artifact").status_code for job_id in ids[1:]] == [200] * 2
        left = sorted(store.keys(""))
        assert left and not any(ids[0] in key for key in left), left
        assert not (store.root / "artifacts" / ids[0]).exists()  # no empty folder either
        again = wait_job(app, app.post("/jobs", json=bodies[0]).json()["id"])
        assert again["status"] == "done" and again["attempts"] == 1, again
        assert app.get(f"/jobs/{ids[1]}").status_code == 404  # now the oldest
        monkeypatch.setattr(local_jobs, "KEEP_LOCAL_BYTES", 1)  # only the newest fits
        newest = wait_job(app, app.post("/jobs", json={**bodies[1], "title": "T"}).json()["id"])
        assert [app.get(f"/jobs/{job_id}").status_code for job_id in (ids[2], newest["id"])] == [
            404, 200]


def test_a_job_whose_result_the_store_refuses_fails_and_runs_again_when_repeated(
    client: TestClient, sample_pool: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last write of a job (its result, after its artifacts) may fail: a full disk, an S3
    outage. The job then fails ``unavailable`` instead of staying ``running`` for good, which
    also made every repeat of the request answer that stuck job."""
    from renderers.workers.errors import StoreUnavailable
    from renderers.workers.stores import FileStore

    put = FileStore.put

    def refuse_results(store: FileStore, key: str, data: bytes) -> None:
        if key.startswith("jobs/"):
            raise StoreUnavailable(f"{store.url}: cannot write {key} (No space left on device)")
        put(store, key, data)

    body = {"content": CONTENT + "Full disk.\n", "format": "md", "sources_pool": sample_pool}
    with monkeypatch.context() as patched:  # only the service's own writes: the worker's
        patched.setattr(FileStore, "put", refuse_results)  # process is not patched
        state = wait_job(client, client.post("/jobs", json=body).json()["id"], 60)
    assert state["status"] == "failed", state
    assert state["error"]["code"] == "unavailable"
    assert "No space left on device" in state["error"]["message"]
    again = wait_job(client, client.post("/jobs", json=body).json()["id"], 60)
    assert again["status"] == "done" and again["attempts"] == 1, again


@pytest.mark.slow
def test_a_job_past_the_memory_cap_fails_with_limit_exceeded() -> None:
    from tests.surfaces.test_service import CAP_MIB, ten_long_reports

    with TestClient(create_app(workers=1, warmup=False, worker_memory_mib=CAP_MIB)) as capped:
        state = wait_job(capped, capped.post("/jobs", json=ten_long_reports()).json()["id"])
        assert state["status"] == "failed", state
        assert state["error"]["code"] == "limit_exceeded"
        assert f"more than the {CAP_MIB} MiB" in state["error"]["message"]
        assert state["error"]["field"] == "content"


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"content": "x"}, "format"),
        ({"content": "x", "format": "gif"}, "format"),
        ({"content": "x", "format": "pdf", "base_dir": "/etc"}, "base_dir"),
        ({"content": "x\x00y", "format": "md"}, "content"),
        ({"content": "x", "format": "md", "webhook": "http://example.org/hook"}, "webhook"),
        ({"content": "x", "format": "md", "webhook": "ftp://127.0.0.1/hook"}, "webhook"),
        ({"content": "x", "format": "md", "webhook": "http://u:p@127.0.0.1/hook"}, "webhook"),
        ({"content": "x", "format": "md", "webhook": 5}, "webhook"),
    ],
)
def test_bad_job_requests_answer_400_naming_the_field(
    client: TestClient, payload: dict[str, Any], field: str
) -> None:
    answer = client.post("/jobs", json=payload)
    assert answer.status_code == 400, answer.text
    assert answer.json()["field"] == field


def test_request_parsing_is_shared_with_render(client: TestClient) -> None:
    with pytest.raises(RequestProblem) as caught:
        parse_render_request({"content": "x", "format": "pdf", "dpi": 5000})
    assert caught.value.field == "dpi"
    assert client.post("/render", json={"content": "x", "format": "pdf", "dpi": 5000}
                       ).json()["field"] == "dpi"
    assert client.post("/jobs", json={"content": "x", "format": "pdf", "dpi": 5000}
                       ).json()["field"] == "dpi"


def test_unknown_and_malformed_job_ids_answer_404(client: TestClient) -> None:
    assert client.get("/jobs/" + "0" * 64).status_code == 404
    assert client.get("/jobs/../etc").status_code == 404
    assert client.get("/jobs/xyz/artifact").status_code == 404


def test_webhook_is_called_when_the_job_is_done(
    client: TestClient, sample_pool: list[dict[str, Any]]
) -> None:
    with webhook_receiver() as (url, received):
        job = client.post("/jobs", json={"content": CONTENT + "Hook.\n", "format": "html",
                                         "sources_pool": sample_pool, "webhook": url}).json()
        state = wait_job(client, job["id"])
        wait_until(lambda: received, 30, "the webhook call")
    call = received[-1]
    assert call["id"] == job["id"] and call["status"] == "done"
    assert call["result"]["sources_used"] == state["result"]["sources_used"]


@pytest.mark.slow
def test_a_webhook_receiver_that_never_answers_holds_up_no_job_route(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Webhooks of local jobs have threads of their own. Sent on the threads the job routes
    use, more calls to a receiver that accepts and never answers than there are such threads
    kept ``GET /jobs/{id}`` waiting until the calls timed out."""
    monkeypatch.setattr(webhooks, "WEBHOOK_TIMEOUT_S", 600.0)
    sink = socket.socket()
    sink.bind(("127.0.0.1", 0))
    sink.listen(128)  # connections land in the backlog, never accepted nor answered
    hook = f"http://127.0.0.1:{sink.getsockname()[1]}/hook"
    shared_threads = min(32, (os.cpu_count() or 1) + 4)  # asyncio's default executor
    states: list[dict[str, Any]] = []
    with TestClient(create_app(workers=1, warmup=False, webhook_hosts=["127.0.0.1"])) as app:

        def submit_and_poll() -> None:
            for n in range(shared_threads + 2):
                job = app.post("/jobs", json={"content": f"Job {n}.", "format": "md",
                                              "webhook": hook}).json()
                states.append(wait_job(app, job["id"], 120))

        try:
            client = threading.Thread(target=submit_and_poll, daemon=True)
            client.start()
            client.join(180)
            assert not client.is_alive(), "POST /jobs, GET /jobs/{id} waited behind webhooks"
            assert [state["status"] for state in states] == ["done"] * (shared_threads + 2)
        finally:
            sink.close()  # the held calls fail at once, so the app can stop


def test_a_receiver_answering_a_byte_at_a_time_is_cut_off_at_the_time_limit(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The socket's timeout bounds each read, not a call: a receiver sending its status line
    a byte every 0.1 s held the call (and a webhook thread) for as long as it went on."""
    monkeypatch.setattr(webhooks, "WEBHOOK_TIMEOUT_S", 0.5)
    monkeypatch.setattr(webhooks, "WEBHOOK_ATTEMPTS", 1)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    stop = threading.Event()

    def trickle() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            with contextlib.suppress(OSError):
                while not stop.wait(0.1):
                    connection.send(b"H")

    receiver = threading.Thread(target=trickle, daemon=True)
    receiver.start()
    answer: list[bool] = []
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/hook"
    call = threading.Thread(target=lambda: answer.append(webhooks.send_webhook(
        url, {"id": "job"}, webhooks.WebhookPolicy.of(["127.0.0.1"]))), daemon=True)
    try:
        call.start()
        call.join(60)  # a guard only: the call ends at its 0.5 s limit
        assert answer == [False], "the call was still reading the trickle"
        assert "no answer within 0.5 s" in caplog.text
    finally:
        stop.set()
        listener.close()


def test_webhooks_are_off_unless_hosts_are_allowed(sample_pool: list[dict[str, Any]]) -> None:
    with TestClient(create_app(workers=1, warmup=False)) as plain:
        answer = plain.post("/jobs", json={"content": "x", "format": "md",
                                           "webhook": "http://127.0.0.1:9/x"})
    assert answer.status_code == 400
    assert "--webhook-host" in answer.json()["error"]


def test_broker_down_answers_503_and_the_service_stays_healthy(
    sample_pool: list[dict[str, Any]], tmp_path: Path
) -> None:
    from renderers.workers.jobstate import new_state, save_result
    from renderers.workers.stores import open_store

    broker = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    store = (tmp_path / "store").as_uri()
    finished = new_state("e" * 64, "md", "old").with_status("done", result={"artifacts": []})
    save_result(open_store(store), finished)
    with TestClient(create_app(workers=1, warmup=False, broker=broker, store=store)) as app:
        answer = app.post("/jobs", json={"content": CONTENT, "format": "md",
                                         "sources_pool": sample_pool})
        assert answer.status_code == 503
        assert "unreachable" in answer.json()["error"] and answer.headers["retry-after"]
        assert "127.0.0.1" in answer.json()["error"]
        assert app.get("/jobs/" + "0" * 64).status_code == 503
        assert app.get("/jobs/" + "e" * 64).json()["status"] == "done"  # read from the store
        assert app.get("/healthz").status_code == 200
        rendered = app.post("/render", json={"content": CONTENT, "format": "md",
                                             "sources_pool": sample_pool})
        assert rendered.status_code == 200 and b"[^1]" in rendered.content


def test_a_worker_advertising_its_store_to_a_redis_that_is_down_carries_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The timer and every task advertise the store again; Redis down only logs a warning
    (never raises out of the timer or the task): the next task or beat tries again."""
    from renderers.workers.celery_app import WorkerSettings, refresh_advertisement

    settings = WorkerSettings(broker=f"redis://127.0.0.1:{free_port()}/0",
                              store=(tmp_path / "store").as_uri(), advertise_interval_s=5)
    assert settings.advertise_ttl_s == 15
    with caplog.at_level("WARNING", logger="citerender.worker"):
        refresh_advertisement(settings)
    assert "could not advertise the store" in caplog.text and "unreachable" in caplog.text


def test_openapi_describes_the_job_routes(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/jobs", "/jobs/{job_id}", "/jobs/{job_id}/artifact", "/render"} <= set(paths)


def test_openapi_gives_post_jobs_its_body_and_every_route_its_refusals(
    client: TestClient,
) -> None:
    """A generated client could not send a job's body (no requestBody), and the job routes
    did not list the 503 they answer when the broker or store is down."""
    paths = client.get("/openapi.json").json()["paths"]
    render_body = paths["/render"]["post"]["requestBody"]["content"]["application/json"]
    post_jobs = paths["/jobs"]["post"]
    job_body = post_jobs["requestBody"]["content"]["application/json"]["schema"]
    assert post_jobs["requestBody"]["required"] is True
    assert job_body["properties"]["webhook"]["type"] == "string"
    assert {k: v for k, v in job_body["properties"].items() if k != "webhook"} == (
        render_body["schema"]["properties"]
    )
    assert job_body["required"] == render_body["schema"]["required"]
    assert {"400", "408", "413", "415", "422", "503"} <= set(post_jobs["responses"])
    for path in ("/jobs/{job_id}", "/jobs/{job_id}/artifact"):
        assert "503" in paths[path]["get"]["responses"], path


def test_bad_store_or_broker_url_fails_at_start() -> None:
    from renderers.workers.errors import WorkerSetupError

    with pytest.raises(WorkerSetupError, match="file:///absolute"):
        create_app(workers=1, warmup=False, store="file://relative/dir")
    with pytest.raises(WorkerSetupError, match="redis://"):
        create_app(workers=1, warmup=False, broker="amqp://127.0.0.1")


def test_a_store_without_a_broker_is_refused_at_start() -> None:
    """Without a broker no Celery worker writes to the store: refused, not silently unused."""
    from renderers.workers.errors import WorkerSetupError

    with pytest.raises(WorkerSetupError, match="without a broker"):
        create_app(workers=1, warmup=False, store="file:///tmp/citerender-store")


def test_a_job_that_keeps_killing_its_worker_is_failed_not_retried() -> None:
    from renderers.workers.execute import MAX_ATTEMPTS, Finished, begin
    from renderers.workers.jobstate import MemoryBoard, new_state

    board = MemoryBoard()
    state = new_state("f" * 64, "pdf", "report")
    for attempt in range(1, MAX_ATTEMPTS + 1):
        running = begin(board, state, worker="w", pid=1)
        assert not isinstance(running, Finished) and running.attempts == attempt
        state = running
    ended = begin(board, state, worker="w", pid=1)
    assert isinstance(ended, Finished) and ended.status == "failed"
    assert ended.error is not None and ended.error["code"] == "worker_lost"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["worker", "--broker", "amqp://127.0.0.1", "--store", "file:///tmp/x"], "redis://"),
        (["worker", "--broker", "redis://127.0.0.1:1/0", "--store", "file://rel"], "--store"),
        (["worker", "--broker", "redis://127.0.0.1:{port}/0", "--store", "file:///tmp/x"],
         "unreachable"),
        (["worker", "--broker", "redis://127.0.0.1:1/0", "--store", "file:///tmp/x", "-Q",
          "render.gif"], "--queues"),
        (["render", "{input}", "--pool", "{pool}", "--broker", "redis://127.0.0.1:{port}/0"],
         "unreachable"),
        (["render", "{input}", "--pool", "{pool}", "--broker", "redis://127.0.0.1:{port}/0",
          "--max-pages", "5"], "--max-pages"),
    ],
)
def test_worker_and_remote_batch_report_bad_settings_in_one_line(
    argv: list[str], named: str, tmp_path: Path, sample_pool: list[dict[str, Any]]
) -> None:
    import subprocess

    from tests.processes import CITERENDER

    (tmp_path / "in.md").write_text("Claim.[[S:1]]\n", encoding="utf-8")
    (tmp_path / "pool.json").write_text(json.dumps(sample_pool), encoding="utf-8")
    values = {"port": free_port(), "input": tmp_path / "in.md", "pool": tmp_path / "pool.json"}
    done = subprocess.run([CITERENDER, *(a.format(**values) for a in argv)], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("citerender: error:") and named in lines[0]


def test_remote_batch_requests_carry_cli_options_in_request_form(
    tmp_path: Path, sample_pool: list[dict[str, Any]]
) -> None:
    from renderers.cli_batch import Job
    from renderers.workers.batch import request_body

    (tmp_path / "in.md").write_text("Claim.[[S:1]]\n", encoding="utf-8")
    (tmp_path / "pool.json").write_text(json.dumps(sample_pool), encoding="utf-8")
    job = Job(input=str(tmp_path / "in.md"), pool=str(tmp_path / "pool.json"),
              out=str(tmp_path / "out"), name=None, formats=("png",), content_format=None,
              kwargs={"pages": "1,2", "dialects": "s_dialect,numeric", "title": "T", "dpi": 90})
    body = request_body(job)
    assert body["pages"] == [1, 2] and body["dialects"] == ["numeric", "s_dialect"]
    assert body["content_format"] == "markdown" and body["sources_pool"][0]["sid"] == 1
    request = parse_render_request({**body, "format": "png"})
    assert request.kwargs["dpi"] == 90 and request.kwargs["pages"] == (1, 2)


@pytest.mark.slow  # four 1 MB bodies parsed, spooled and rendered: 6 s
def test_queued_jobs_wait_with_their_bodies_on_disk_not_in_the_services_memory(
    tmp_path: Path,
) -> None:
    """A queued local job's body waits in a file under the service's temporary root, read
    back by the worker that renders it, and the file goes when the job ends. Held parsed in
    the service (which has no memory cap), a 10 MiB body of pool rows cost 60 MiB, and a full
    backlog of 256 of them over 15 GiB."""
    import gc
    import tracemalloc

    from tests.surfaces.test_service import controlled_job

    rows = [{"sid": i, "title": f"Source {i}", "url": f"https://example.org/{i}"}
            for i in range(1, 20_001)]  # about 1 MB of JSON, 6 MB once parsed
    flag = tmp_path / "release"
    with TestClient(create_app(workers=1, warmup=False, job=controlled_job)) as busy:
        blocker = threading.Thread(target=busy.post, args=("/render",), kwargs={"json": {
            "content": f"@block:{flag}", "format": "md", "sources_pool": rows[:1]}})
        blocker.start()
        try:
            wait_until(lambda: busy.get("/healthz").json()["workers"]["busy"] >= 1, 30,
                       "the blocking render to start")
            def queue(index: int) -> str:
                body = {"content": f"Job {index}.[[S:{index + 1}]]\n", "format": "md",
                        "sources_pool": rows}
                return str(busy.post("/jobs", json=body).json()["id"])

            # The first job loads what queuing imports (as much memory as a body, or none,
            # by which tests ran before in this process): measured from the second on.
            ids = [queue(0)]
            # what the service holds, not garbage waiting for the cycle collector (whose
            # turn depends on what ran before in this process)
            gc.collect()
            tracemalloc.start()
            try:
                before = tracemalloc.get_traced_memory()[0]
                ids += [queue(index) for index in range(1, 4)]
                gc.collect()
                held = tracemalloc.get_traced_memory()[0] - before
            finally:
                tracemalloc.stop()
            # held parsed, three bodies would be 18 MB; spooled, what is left is noise
            assert held < 6_000_000, f"three queued jobs hold {held:,} bytes of the service"
            spool = busy.app.state.service.temp_root / "queued"
            assert len(list(spool.iterdir())) == 4
        finally:
            flag.touch()
            blocker.join(60)
        states = [wait_job(busy, job_id) for job_id in ids]
        assert [state["result"]["sources_used"] for state in states] == [[1], [2], [3], [4]], states
        assert not list(spool.iterdir())


@pytest.mark.slow
def test_queued_jobs_leave_render_its_queue_and_stay_queued_until_a_worker_takes_them(
    tmp_path: Path, sample_pool: list[dict[str, Any]]
) -> None:
    """One worker, busy; one waiting slot for /render; a backlog of two jobs. The jobs wait
    apart (``queued``, not started), a third is refused 503 ``busy``, and a /render still gets
    the waiting slot and the next free worker, before the jobs."""
    import threading
    import time

    from tests.surfaces.test_service import controlled_job

    flag = tmp_path / "release"
    app = create_app(workers=1, queue_limit=1, job_backlog=2, warmup=False, job=controlled_job)
    with TestClient(app) as busy:
        answers: dict[str, Any] = {}

        def post(name: str, content: str) -> None:
            answers[name] = busy.post("/render", json={
                "content": content, "format": "md", "sources_pool": sample_pool})

        blocker = threading.Thread(target=post, args=("blocked", f"@block:{flag}"))
        blocker.start()
        try:
            wait_until(lambda: busy.get("/healthz").json()["workers"]["busy"] >= 1, 30,
                       "the blocking render to start")
            jobs = [busy.post("/jobs", json={"content": f"Job {i}.[[S:1]]\n", "format": "md",
                                             "sources_pool": sample_pool}) for i in range(2)]
            assert [job.status_code for job in jobs] == [202, 202], [j.text for j in jobs]
            time.sleep(0.5)  # the jobs' tasks are waiting for a worker by now
            for job in jobs:
                state = busy.get(f"/jobs/{job.json()['id']}").json()
                assert state["status"] == "queued", state
                assert state["started_at"] is None and state["attempts"] == 0
            full = busy.post("/jobs", json={"content": "Job 3.\n", "format": "md"})
            assert full.status_code == 503, full.text
            assert full.json()["code"] == "busy" and full.json()["field"] == ""
            assert "backlog" in full.json()["error"] and int(full.headers["retry-after"]) >= 1
            waiting = threading.Thread(target=post, args=("waiting", "Waited.[[S:2]]\n"))
            waiting.start()
            wait_until(lambda: busy.get("/healthz").json()["workers"]["waiting"] == 1, 30,
                       "the /render request to wait for the worker")
            assert busy.get("/healthz").json()["workers"]["background"] == 2
        finally:
            flag.touch()
            blocker.join(60)
        waiting.join(60)
        assert answers["blocked"].status_code == 200
        assert answers["waiting"].status_code == 200, answers["waiting"].text
        assert "Waited" in answers["waiting"].text
        states = [wait_job(busy, job.json()["id"]) for job in jobs]
        assert [state["status"] for state in states] == ["done", "done"], states
        for state in states:
            assert state["attempts"] == 1 and state["started_at"] is not None
            # the render waited behind the jobs' queue, not the other way round
            assert state["started_at"] >= state["created_at"]
        after = busy.post("/jobs", json={"content": "Job 3.\n", "format": "md"})
        assert after.status_code == 202, after.text  # the backlog emptied


def test_a_local_jobs_worker_builds_the_checked_body_without_checking_it_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    """The service checks a body before it spools it; its worker ran the whole body, every
    pool row included, through the schema validator again: 5 s of a job with 190,000 rows."""
    from renderers.service.jobs import render_spooled, spool

    rows = [{"sid": i, "title": f"Study {i}", "url": f"https://example.org/{i}"}
            for i in range(1, 101)]
    seen = pool_rows_validated(monkeypatch)
    job = spool(tmp_path, "a" * 64, {"content": "Claim.[[S:7]]", "format": "md",
                                     "sources_pool": rows}, (tmp_path / "store").as_uri())
    finished = render_spooled(job)
    assert finished.status == "done" and finished.result is not None, finished
    assert finished.result["sources_used"] == [7]
    assert max(seen, default=0) == 0, f"the schema validator saw {max(seen)} rows"


def test_a_body_no_producer_of_this_version_checked_is_refused_as_the_service_refuses_it(
    client: TestClient, tmp_path: Path,
) -> None:
    """A message from a producer of another version (a rolling upgrade) is checked by the
    worker, with the service's own check: the same words, field and code as ``POST /jobs``."""
    from renderers.workers.execute import StoreJob, render_to_store

    body = {"content": "Claim.[[S:2]]", "format": "md",
            "sources_pool": [{"sid": 1, "title": "A", "url": "https://example.org/a"},
                             {"sid": "two", "title": "B", "url": "https://example.org/b"}]}
    refused = client.post("/jobs", json=body).json()
    assert refused["code"] == "invalid_sources_pool" and refused["field"] == "sources_pool.1.sid"
    store = (tmp_path / "store").as_uri()
    finished = render_to_store(StoreJob("b" * 64, body, store, checked=False))
    assert finished.status == "failed" and finished.error == {
        "code": refused["code"], "message": refused["error"], "field": refused["field"]}


def test_a_running_job_reads_stalled_only_past_its_workers_lease() -> None:
    """Past the lease nothing is known of the job: ``stalled`` says so and what to do, where
    ``running`` kept a client polling for ever; the stored state stays ``running``."""
    from renderers.workers.jobstate import JobState, new_state

    queued = new_state("a" * 64, "pdf", "report")
    running = queued.with_status("running", attempts=1, started_at=100.0, lease_until=260.0)
    assert running.public(now=260.0)["status"] == "running"
    late = running.public(now=260.5)
    assert late["status"] == "stalled" and late["stalled"]["since"] == 260.0
    assert "POST /jobs again" in late["stalled"]["message"]
    assert JobState.loads(running.dumps()).status == "running"
    local = queued.with_status("running", attempts=1, started_at=100.0)  # no broker: no lease
    assert local.public(now=1e12)["status"] == "running"
    failed = running.with_status("failed", error={"code": "internal", "message": "x", "field": ""})
    assert failed.public(now=1e12)["status"] == "failed" and "stalled" not in failed.public()



@contextlib.contextmanager
def _failing_receiver(hold_s: float = 0.0, stop: threading.Event | None = None,
                      ) -> Iterator[tuple[str, list[bytes]]]:
    """A webhook receiver answering 500 to every call, ``hold_s`` after it arrived (setting
    ``stop`` first, as a service shutting down meanwhile would); its URL and the calls."""
    calls: list[bytes] = []
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                connection, _ = listener.accept()
                with connection:
                    calls.append(connection.recv(65536))
                    if stop is not None:
                        stop.set()
                    time.sleep(hold_s)
                    connection.sendall(b"HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n"
                                       b"Connection: close\r\n\r\n")

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/hook", calls
    finally:
        listener.close()


def test_a_webhook_makes_no_further_attempt_once_the_service_stops(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The process exit waits for a webhook thread: a receiver failing its calls held a
    shutdown for every attempt and pause (16.5 s) past its bound, for a job whose files the
    shutdown removes. Set at shutdown, ``stop`` ends the pause and begins no attempt."""
    stop = threading.Event()
    answer: list[bool] = []
    with _failing_receiver(stop=stop) as (url, calls):
        call = threading.Thread(target=lambda: answer.append(webhooks.send_webhook(
            url, {"id": "job"}, webhooks.WebhookPolicy.of(["127.0.0.1"]), stop)), daemon=True)
        call.start()
        call.join(60)  # a guard only
    assert answer == [False] and len(calls) == 1
    assert "not sent again: the service is shutting down" in caplog.text


@pytest.mark.slow  # waits out a webhook attempt (about 3 s)
def test_a_services_shutdown_ends_its_webhooks_retries(sample_pool: list[dict[str, Any]]) -> None:
    with _failing_receiver(hold_s=1.0) as (url, calls):
        with TestClient(create_app(workers=1, warmup=False, webhook_hosts=["127.0.0.1"])) as app:
            app.post("/jobs", json={"content": CONTENT + "Stopping.\n", "format": "md",
                                    "sources_pool": sample_pool, "webhook": url})
            wait_until(lambda: calls, 120, "the first webhook call")
        time.sleep(2.5)  # past the held answer and the 0.5 s pause before a second attempt
        assert len(calls) == 1
