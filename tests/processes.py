"""Real servers for the worker tests: redis-server, ``citerender worker``/``serve``, moto.

Every process binds 127.0.0.1 on a free port, starts in its own session (so a test can kill a
whole worker with its pool), is waited for with a time bound, and is stopped by the fixture
that started it; only a test marked ``slow`` may start one. Outside CI a missing
``redis-server`` skips the tests; in CI it fails them (``.ci/system-deps all`` installs it).
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import ROOT, require_client, require_marker

CITERENDER = str(Path(sys.executable).with_name("citerender"))
READY_TIMEOUT_S = 120.0
#: The sources pool of the worker tests.
POOL = [{"sid": i, "title": f"Study {i} on grid storage", "url": f"https://example.org/s{i}"}
        for i in range(1, 6)]


def slow_document(paragraphs: int = 200) -> str:
    """A report that takes a few seconds to lay out (long enough to kill mid-render)."""
    return "# Slow report\n\n" + "".join(
        f"Paragraph {i}: transmission build-out, storage deployment and demand response decide "
        f"how fast variable renewables can grow.[[S:{i % 5 + 1}]]\n\n" for i in range(paragraphs))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until(check: Callable[[], Any], timeout: float, what: str, every: float = 0.05) -> Any:
    """Poll ``check`` until it returns something truthy; fail the test after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(every)
    pytest.fail(f"timed out after {timeout:g} s waiting for {what}")


class Process:
    """A child process in its own session with its output in a log file."""

    def __init__(self, argv: Sequence[str], log: Path, env: dict[str, str] | None = None) -> None:
        require_marker("slow", f"starts {Path(argv[0]).name}")
        self.log = log
        self._handle = log.open("wb")
        self.popen = subprocess.Popen(
            list(argv), stdout=self._handle, stderr=subprocess.STDOUT, cwd=ROOT,
            env={**os.environ, **(env or {})}, start_new_session=True,
        )

    @property
    def pid(self) -> int:
        return self.popen.pid

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def alive(self) -> bool:
        return self.popen.poll() is None

    def kill_group(self) -> None:
        """SIGKILL the process and everything in its session (a machine that dies)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait(30)

    def stop(self, grace: float = 20.0) -> None:
        """SIGTERM, then SIGKILL the session after ``grace`` seconds."""
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(grace)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(30)
        self._handle.close()


def redis_binary() -> str:
    found = shutil.which("redis-server")
    require_client(found is not None, "redis-server is not installed (apt-get install it)")
    assert found is not None
    return found


@contextlib.contextmanager
def redis_server(tmp: Path) -> Iterator[tuple[str, Process]]:
    """A throw-away redis-server on 127.0.0.1: yields (``redis://127.0.0.1:PORT``, process)."""
    import redis

    port = free_port()
    process = Process([redis_binary(), "--port", str(port), "--bind", "127.0.0.1",
                       "--save", "", "--appendonly", "no", "--dir", str(tmp),
                       "--protected-mode", "yes"], tmp / f"redis-{port}.log")
    url = f"redis://127.0.0.1:{port}"
    client = redis.Redis.from_url(url, socket_connect_timeout=1)

    def pong() -> bool:
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False

    try:
        wait_until(pong, 30, "redis-server")
        yield url, process
    finally:
        client.close()
        process.stop(5)


def start_worker(broker: str, store: str, name: str, log_dir: Path, *extra: str,
                 env: dict[str, str] | None = None) -> Process:
    """``citerender worker`` with one render process (call :func:`wait_ready` next)."""
    return Process([CITERENDER, "worker", "--broker", broker, "--store", store,
                    "--concurrency", "1", "--name", f"{name}@%h", "--loglevel", "INFO",
                    *extra], log_dir / f"worker-{name}.log", env)


def wait_ready(*workers: Process) -> None:
    """Wait until every worker logged that it is ready; stop them all if one is not."""
    try:
        for worker in workers:
            def settled(w: Process = worker) -> bool:
                return " ready." in w.output() or not w.alive()

            wait_until(settled, READY_TIMEOUT_S, f"worker {worker.log.name}", every=0.2)
            if not worker.alive():
                pytest.fail(f"{worker.log.name} exited:\n{worker.output()[-3000:]}")
    except BaseException:
        for worker in workers:
            worker.stop(5)
        raise


def start_service(port: int, log_dir: Path, *args: str) -> Process:
    """``citerender serve`` on ``port``; returns once ``/healthz`` answers."""
    import httpx

    process = Process([CITERENDER, "serve", "--port", str(port), "--workers", "1", *args],
                      log_dir / f"serve-{port}.log")

    def healthy() -> bool:
        if not process.alive():
            pytest.fail(f"service on {port} exited:\n{process.output()[-3000:]}")
        try:
            return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_until(healthy, READY_TIMEOUT_S, f"service on port {port}", every=0.2)
    except BaseException:
        process.stop(5)
        raise
    return process


@contextlib.contextmanager
def moto_server(tmp: Path, bucket: str) -> Iterator[dict[str, str]]:
    """A moto S3 server on 127.0.0.1 with ``bucket``; yields the AWS environment to use it."""
    import boto3

    port = free_port()
    process = Process([str(Path(sys.executable).with_name("moto_server")), "-H", "127.0.0.1",
                       "-p", str(port)], tmp / f"moto-{port}.log")
    env = {"AWS_ENDPOINT_URL_S3": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "test",
           "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-east-1"}
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)

    def bucket_made() -> bool:
        try:
            boto3.client("s3").create_bucket(Bucket=bucket)
            return True
        except Exception:
            return False

    try:
        wait_until(bucket_made, 60, "moto server", every=0.2)
        yield env
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        process.stop(5)


def wait_job(client: Any, job_id: str, timeout: float = 300) -> dict[str, Any]:
    """Poll ``GET /jobs/{id}`` (TestClient or httpx.Client) until the job is done or failed."""

    def ended() -> dict[str, Any] | None:
        state: dict[str, Any] = client.get(f"/jobs/{job_id}").json()
        return state if state.get("status") in ("done", "failed") else None

    result: dict[str, Any] = wait_until(ended, timeout, f"job {job_id}")
    return result


class _Hook(http.server.BaseHTTPRequestHandler):
    """Records the JSON bodies POSTed to it (the webhook receiver)."""

    received: list[dict[str, Any]]

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        self.received.append(json.loads(self.rfile.read(length)))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        return


@contextlib.contextmanager
def webhook_receiver() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """An HTTP server on 127.0.0.1: yields (its URL, the bodies it received so far)."""
    received: list[dict[str, Any]] = []
    handler = type("Hook", (_Hook,), {"received": received})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook?x=1", received
    finally:
        server.shutdown()
        server.server_close()
