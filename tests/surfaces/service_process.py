"""A real export service in a subprocess: uvicorn on a socket bound to 127.0.0.1, real workers.

:func:`running_service` starts ``python -m tests.surfaces.service_process`` with a listening
socket the test bound (no port race), waits for ``/healthz``, and on exit sends SIGTERM and
waits a bounded time. The child serves through :func:`renderers.service.server.run`, so the
tests exercise the production server settings. Its jobs understand a few markers
(:func:`marked_job`) that make failures happen on demand.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from renderers.service.app import JobOutcome, RenderJob, create_app, render_job
from renderers.service.server import ServerLimits, run

REPO = Path(__file__).resolve().parents[2]
UNPICKLABLE = "@unpicklable"


def marked_job(job: RenderJob) -> JobOutcome:
    """Worker job: ``@hang`` sleeps, ``@bogus`` answers something that is not an outcome."""
    if job.content == "@hang":
        time.sleep(600)
    if job.content == "@bogus":
        return None  # type: ignore[return-value]  # the app fails on it: an unexpected error
    return render_job(job)


def slow_warmup(seconds: float) -> None:
    """Worker initializer standing in for the warm-up, taking ``seconds``."""
    time.sleep(seconds)


def _refuse_to_pickle_marked_jobs() -> None:
    """Make a job whose content starts with ``@unpicklable`` fail to pickle, as a job nested
    900 deep once did (``RecursionError`` while the parent serialized it for the worker)."""
    original = RenderJob.__reduce_ex__

    def reduce_ex(self: RenderJob, protocol: Any) -> Any:
        if self.content.startswith(UNPICKLABLE):
            raise RecursionError("maximum recursion depth exceeded while pickling an object")
        return original(self, protocol)

    RenderJob.__reduce_ex__ = reduce_ex  # type: ignore[assignment, method-assign]


@dataclass
class Service:
    """A running service: its base URL, process and the directory holding its temp root."""

    url: str
    process: subprocess.Popen[bytes]
    tmpdir: Path
    log: Path

    def temp_roots(self) -> list[Path]:
        """The service's temporary roots still on disk."""
        return sorted(self.tmpdir.glob("citerender-service-*"))

    def stop(self, timeout: float = 90) -> None:
        """SIGTERM, then wait at most ``timeout`` seconds for a clean exit.

        uvicorn re-raises the signal once it has shut down, so a clean exit is code 0 or
        death by that SIGTERM; anything else, or no exit in time, fails the test.
        """
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(30)
            raise AssertionError(
                f"the service did not stop within {timeout} s of SIGTERM"
            ) from None
        assert code in (0, -signal.SIGTERM), f"exit code {code}: {self.log.read_text()[-3000:]}"


@contextmanager
def running_service(
    tmp_path: Path, *, start_timeout: float = 120, **options: Any
) -> Iterator[Service]:
    """Start a service (``options``: create_app keywords and ServerLimits fields;
    ``warmup_s``: each new worker's warm-up is a sleep this long, instead of none)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    port = listener.getsockname()[1]
    # The service's TMPDIR, to find its temporary root; short, since the fork server puts its
    # AF_UNIX socket there (108 bytes at most).
    tmpdir = Path(tempfile.mkdtemp(prefix="crsvc-"))
    log = tmp_path / "service.log"
    env = {**os.environ, "TMPDIR": str(tmpdir), "PYTHONPATH": str(REPO)}
    with log.open("wb") as log_file:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.surfaces.service_process",
             "--fd", str(listener.fileno()), "--options", json.dumps(options)],
            cwd=REPO, env=env, pass_fds=[listener.fileno()], stdout=log_file,
            stderr=subprocess.STDOUT,
        )
    listener.close()
    service = Service(f"http://127.0.0.1:{port}", process, tmpdir, log)
    try:
        deadline = time.monotonic() + start_timeout
        while True:
            assert process.poll() is None, f"the service exited: {log.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"no /healthz: {log.read_text()[-3000:]}"
            try:
                if httpx.get(f"{service.url}/healthz", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        yield service
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(30)
        shutil.rmtree(tmpdir, ignore_errors=True)


def main() -> None:
    """Child process: serve the app on the inherited socket until SIGTERM."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--fd", type=int, required=True)
    parser.add_argument("--options", required=True)
    args = parser.parse_args()
    options = json.loads(args.options)
    limit_names = set(ServerLimits.__dataclass_fields__)
    limits = ServerLimits(**{k: v for k, v in options.items() if k in limit_names})
    app_options = {k: v for k, v in options.items() if k not in limit_names}
    warmup_s = app_options.pop("warmup_s", None)
    if warmup_s is not None:  # the pool takes its initializer from the app module
        import functools

        import renderers.service.app as app_module

        app_module.warm_worker = functools.partial(slow_warmup, warmup_s)  # type: ignore[assignment]
    # The job is pickled by name: take it from the module's importable name, not __main__.
    from tests.surfaces.service_process import marked_job as job

    _refuse_to_pickle_marked_jobs()
    app = create_app(warmup=warmup_s is not None, job=job, **app_options)
    run(app, sockets=[socket.socket(fileno=args.fd)], limits=limits, log_level="info")


if __name__ == "__main__":
    main()
