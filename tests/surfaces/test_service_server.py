"""The export service as deployed: uvicorn in a subprocess on 127.0.0.1 with real workers.

Each test replays a way a few requests once disabled the service or held it (issue 13): a job
that could not be handed to a worker, a hung render at shutdown, an unexpected error that cost
the client its connection, a huge body parsed on the event loop, slow clients.
"""

from __future__ import annotations

import json
import select
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.processes import wait_until
from tests.surfaces.service_process import UNPICKLABLE, Service, running_service

pytestmark = pytest.mark.slow

GOOD = {"content": "Solar is cheap.[[S:1]]\n", "format": "md",
        "sources_pool": [{"sid": 1, "title": "Lazard LCOE+", "url": "https://www.lazard.com/"}]}


def _health(service: Service) -> httpx.Response:
    return httpx.get(f"{service.url}/healthz", timeout=30)


def test_a_job_that_cannot_be_handed_over_fails_alone_and_the_pool_stays_whole(
    tmp_path: Path,
) -> None:
    with running_service(tmp_path, workers=1) as service:
        with httpx.Client(base_url=service.url, timeout=60) as client:
            for _ in range(2):
                refused = client.post("/render", json={**GOOD, "content": UNPICKLABLE})
                assert refused.status_code == 500
                assert "could not be serialized" in refused.json()["error"]
            health = _health(service)
            assert health.status_code == 200 and health.json()["status"] == "ok"
            workers = health.json()["workers"]
            assert workers["alive"] == 1 and workers["busy"] == 0 and workers["replaced"] == 0
            after = client.post("/render", json=GOOD)
            assert after.status_code == 200 and "Solar is cheap" in after.text
        assert service.temp_roots()
        service.stop()
        assert service.temp_roots() == []


def test_shutdown_completes_with_a_render_still_running(tmp_path: Path) -> None:
    with running_service(tmp_path, workers=1, render_timeout_s=600,
                         graceful_shutdown_s=2) as service:
        answers: list[Any] = []

        def hung_request() -> None:
            try:
                answers.append(httpx.post(f"{service.url}/render",
                                          json={**GOOD, "content": "@hang"}, timeout=300))
            except httpx.HTTPError as exc:  # the connection closed at shutdown
                answers.append(exc)

        thread = threading.Thread(target=hung_request, daemon=True)
        thread.start()
        for _ in range(300):
            if _health(service).json()["workers"]["busy"] == 1:
                break
            time.sleep(0.1)
        else:
            pytest.fail("the hanging job never started")
        service.stop(timeout=90)
        thread.join(60)
        assert answers, "the hung request neither answered nor was disconnected"
        assert service.temp_roots() == []


def test_a_render_whose_client_goes_away_is_stopped(tmp_path: Path) -> None:
    """The route rendered to the end for a client that had closed its connection (the export
    page's Cancel): a 2,000-paragraph PDF kept its worker busy for the 25 s watched. Now the
    worker is stopped and replaced, and the next request has it at once."""
    with running_service(tmp_path, workers=1, render_timeout_s=600) as service:
        body = json.dumps({**GOOD, "content": "@hang"}).encode()
        with socket.create_connection(("127.0.0.1", _port(service)), timeout=30) as sock:
            sock.sendall(b"POST /render HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                         b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
            wait_until(lambda: _health(service).json()["workers"]["busy"] == 1, 30,
                       "the hanging render to start", every=0.1)
        # The fresh worker is counted alive a moment before the stopped job stops counting busy.
        workers = wait_until(lambda: (w := _health(service).json()["workers"])["replaced"]
                             and w["alive"] == 1 and not w["busy"] and w, 30,
                             "the render to be stopped", every=0.2)
        assert workers["replaced"] == 1, workers
        answer = httpx.post(f"{service.url}/render", json=GOOD, timeout=60)
        assert answer.status_code == 200 and b"Solar is cheap" in answer.content


def test_clients_leaving_while_the_workers_warm_up_cost_no_worker(tmp_path: Path) -> None:
    """While the service was starting, a render was handed to a worker still warming up and
    waited in its pipe; its client leaving, the grace ran out before the render began, and
    the worker was replaced (its warm-up lost): 9 times at one start-up. Now a render waits
    for a warm worker, and one whose client leaves while it waits is dropped at once."""
    with running_service(tmp_path, workers=1, warmup_s=8, render_timeout_s=600) as service:
        body = json.dumps({**GOOD, "content": "@hang"}).encode()  # never ends once it starts
        head = (b"POST /render HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n" % len(body))
        leaving = [socket.create_connection(("127.0.0.1", _port(service)), timeout=30)
                   for _ in range(3)]
        try:
            for sock in leaving:
                sock.sendall(head + body)
            workers = wait_until(lambda: (w := _health(service).json()["workers"])["waiting"]
                                 == 3 and w, 30, "3 renders to wait for a worker", every=0.1)
            assert workers["warming"] == 1 and workers["busy"] == 0, workers
        finally:
            for sock in leaving:
                sock.close()
        wait_until(lambda: _health(service).json()["workers"]["waiting"] == 0, 30,
                   "the renders whose clients left to be dropped", every=0.1)
        wait_until(lambda: _health(service).json()["workers"]["warming"] == 0, 60,
                   "the worker to warm up", every=0.2)
        answer = httpx.post(f"{service.url}/render", json=GOOD, timeout=60)
        assert answer.status_code == 200 and b"Solar is cheap" in answer.content
        workers = _health(service).json()["workers"]
        assert workers["replaced"] == 0 and workers["completed"] == 1, workers


def test_an_unexpected_error_answers_500_and_keeps_the_connection(tmp_path: Path) -> None:
    with (
        running_service(tmp_path, workers=1) as service,
        httpx.Client(base_url=service.url, timeout=60) as client,
    ):
        failed = client.post("/render", json={**GOOD, "content": "@bogus"})
        assert failed.status_code == 500
        first = failed.extensions["network_stream"].get_extra_info("client_addr")
        good = client.post("/render", json=GOOD)
        assert good.status_code == 200
        again = good.extensions["network_stream"].get_extra_info("client_addr")
        assert again == first, "the failing request cost the client its connection"
        assert "internal error" in failed.json()["error"]


def _raw_request(port: int, body: bytes) -> socket.socket:
    """A POST /render whose body is sent in full; the answer is left to read."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=120)
    head = (f"POST /render HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    sock.sendall(head + body)
    return sock


def _port(service: Service) -> int:
    return int(service.url.rsplit(":", 1)[1])


def test_health_answers_while_a_huge_body_is_parsed(tmp_path: Path) -> None:
    rows: list[dict[str, Any]] = [{"sid": i, "title": "t"} for i in range(1, 150_000)]
    rows.append({"sid": "not a number"})
    body = json.dumps({"content": "x", "format": "md", "sources_pool": rows}).encode()
    with running_service(tmp_path, workers=1) as service:
        sock = _raw_request(_port(service), body)
        with sock:
            health_during_parse = 0
            for _ in range(2000):
                readable, _, _ = select.select([sock], [], [], 0)
                if readable:
                    break
                assert _health(service).status_code == 200
                readable, _, _ = select.select([sock], [], [], 0)
                if readable:
                    break  # the answer came first: this probe does not count
                health_during_parse += 1
            answer = sock.recv(65536).decode("utf-8", "replace")
        assert answer.startswith("HTTP/1.1 422"), answer[:300]
        assert '"field":"sources_pool.149999.sid"' in answer
        assert health_during_parse >= 1, "/healthz waited for the parse"


def test_slow_clients_are_cut_off(tmp_path: Path) -> None:
    with running_service(tmp_path, workers=1, header_timeout_s=2.0, keep_alive_s=1,
                         body_timeout_s=3.0) as service:
        port = _port(service)
        head = b"POST /render HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        slow_heads = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
        slow_bodies = [socket.create_connection(("127.0.0.1", port)) for _ in range(2)]
        for sock, route in zip(slow_bodies, (b"/render", b"/jobs"), strict=True):  # both bodies
            sock.sendall(head.replace(b"/render", route) + b"Content-Length: 1000\r\n\r\n{")
        received: dict[socket.socket, bytes] = {sock: b"" for sock in slow_heads + slow_bodies}
        closed: set[socket.socket] = set()
        try:
            for step in range(60):  # 30 s at most, then the test fails by itself
                for sock in set(received) - closed:
                    try:
                        sock.sendall(head[step % len(head):][:1] if sock in slow_heads else b" ")
                    except OSError:
                        closed.add(sock)
                readable, _, _ = select.select(list(set(received) - closed), [], [], 0.5)
                for sock in readable:
                    try:
                        data = sock.recv(65536)
                    except OSError:
                        data = b""
                    received[sock] += data
                    if not data:
                        closed.add(sock)
                if len(closed) == len(received):
                    break
                assert _health(service).status_code == 200  # others are still served
        finally:
            for sock in received:
                sock.close()
        assert closed == set(received), f"{len(received) - len(closed)} slow clients still open"
        for sock in slow_bodies:
            assert received[sock].startswith(b"HTTP/1.1 408"), received[sock][:200]
            assert b"did not arrive within 3 s" in received[sock]
            assert b'"code":"time_limit"' in received[sock]


def _peak_rss_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmHWM"))
               .split()[1]) / 1024


def test_a_large_answer_streams_from_disk(tmp_path: Path) -> None:
    """PNG pages of incompressible noise at 600 dpi: a 1 MB request answers a zip of about
    90 MB. The service process (uncapped, unlike its workers) zips the pages one at a time on
    disk and streams the file and the JSON envelope's base64 from there: built in memory, the
    answer took it to several times the answer's size (1.2 GB for 245 MB)."""
    import base64
    import io
    import os
    import zipfile

    from PIL import Image

    noise = io.BytesIO()
    Image.frombytes("RGB", (600, 600), os.urandom(600 * 600 * 3)).save(noise, "PNG")
    tile = base64.b64encode(noise.getvalue()).decode("ascii")
    content = (f"<style>@page {{ background: url(data:image/png;base64,{tile}) repeat; "
               "background-size: 0.5in 0.5in; }</style>"
               + "".join(f"<h1>Page {n}</h1><div style='page-break-after: always'>x</div>"
                         for n in range(1, 13)))
    body = {"content": content, "content_format": "html", "format": "png", "pages": "all",
            "dpi": 600, "filename": "noise"}
    with running_service(tmp_path, workers=1) as service, httpx.Client(timeout=300) as client:
        small = {**body, "content": "<h1>Warm</h1>", "dpi": 72}
        warm = client.post(f"{service.url}/render", json=small)
        assert warm.status_code == 200, warm.text
        assert client.post(f"{service.url}/render", json=small,
                           headers={"Accept": "application/json"}).status_code == 200
        before = _peak_rss_mib(service.process.pid)
        answer = client.post(f"{service.url}/render", json=body)
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"] == "application/zip"
        assert int(answer.headers["content-length"]) == len(answer.content) > 60 * 2**20
        with zipfile.ZipFile(io.BytesIO(answer.content)) as archive:
            names = archive.namelist()
            assert names == [f"noise-{n}.png" for n in range(1, 13)]
            assert Image.open(io.BytesIO(archive.read(names[-1]))).size[0] > 4000
        envelope = client.post(f"{service.url}/render", json=body,
                               headers={"Accept": "application/json"})
        assert envelope.status_code == 200
        assert int(envelope.headers["content-length"]) == len(envelope.content)
        decoded = envelope.json()
        assert decoded["filename"] == "noise.zip" and decoded["stats"]["pages"] == 12
        assert base64.b64decode(decoded["content_base64"]) == answer.content
        job = client.post(f"{service.url}/jobs", json=body).json()
        wait_until(lambda: client.get(f"{service.url}/jobs/{job['id']}").json()["status"]
                   == "done", 300, "the job")
        artifact = client.get(f"{service.url}/jobs/{job['id']}/artifact")
        assert artifact.status_code == 200 and artifact.content == answer.content
        assert int(artifact.headers["content-length"]) == len(answer.content)
        grown = _peak_rss_mib(service.process.pid) - before
        # Streamed, the service holds a page or two (a twelfth of the answer each) and the
        # request's copies: 20-29 MiB measured. Built in memory it holds at least the whole
        # answer (88 MiB here) and its base64, so half the answer tells the two apart.
        assert grown < len(answer.content) / 2**20 / 2, f"the service grew by {grown:.0f} MiB"
        # every render's directory removed, the job's spooled body and its zip too; only the
        # local jobs' store holds files
        root = service.temp_roots()[0]
        assert sorted(p.name for p in root.iterdir()) == ["jobs", "queued", "zips"]
        assert not [*(root / "queued").iterdir(), *(root / "zips").iterdir()]


def _exchange(port: int, request: bytes) -> tuple[bytes, dict[str, Any]]:
    """Send ``request`` on a fresh connection; the status line and the JSON body answered."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):  # the server closes the connection after a refusal
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"content-type: application/json" in head.lower(), answer[:300]
    return head.split(b"\r\n")[0], json.loads(body)


def _send_then_read(port: int, head: bytes, body: bytes, piece: int = 1 << 16) -> bytes:
    """``head`` then ``body`` sent whole before anything is read, as most HTTP clients do;
    then the answer. A connection reset while sending fails the test."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head)
        for start in range(0, len(body), piece):
            sock.sendall(body[start:start + piece])
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def test_a_refusal_before_the_body_is_read_reaches_a_client_still_sending(
    tmp_path: Path,
) -> None:
    """A 413 answered by the Content-Length, or while a chunked body streams in, closed the
    connection with the body unread; the kernel reset it, and a client still sending (raw,
    or Node's fetch, 2 times in 10) saw ECONNRESET, not the refusal. The connection now
    half-closes and drops what still arrives, for a bounded time: a client that never stops
    sending is cut off."""
    with running_service(tmp_path, workers=1, max_body_bytes=1 << 20) as service:
        port = _port(service)
        post = b"POST /render HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        body = b" " * (8 << 20)
        for framing, sent in ((b"Content-Length: %d\r\n\r\n" % len(body), body),
                              (b"Transfer-Encoding: chunked\r\n\r\n",
                               b"".join(b"10000\r\n" + body[:1 << 16] + b"\r\n"
                                        for _ in range(128)) + b"0\r\n\r\n")):
            answer = _send_then_read(port, post + framing, sent)
            assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
            assert b'"code":"too_large"' in answer and b"connection: close" in answer.lower()
        with socket.create_connection(("127.0.0.1", port), timeout=30) as endless:
            endless.sendall(post + b"Content-Length: %d\r\n\r\n" % (1 << 40))
            cut_off = False
            for _ in range(6000):  # 64 KiB every 10 ms: at most 60 s, far past the linger
                try:
                    endless.sendall(body[:1 << 16])
                except OSError:
                    cut_off = True
                    break
                time.sleep(0.01)
            assert cut_off, "a client sending without end held its connection"
        assert _health(service).status_code == 200


def test_the_servers_own_refusals_have_the_shape_of_every_refusal(tmp_path: Path) -> None:
    """uvicorn refuses a request it cannot read (400) and one past its concurrency limit (503)
    itself, in plain text; clients reading ``{"error", "field", "code"}`` got none."""
    with running_service(tmp_path, workers=1, max_connections=2) as service:
        port = _port(service)
        status, refusal = _exchange(port, b"NOT HTTP\r\n\r\n")
        assert status.startswith(b"HTTP/1.1 400") and refusal["code"] == "invalid_argument"
        assert refusal["field"] == "" and "not a readable HTTP/1.1 request" in refusal["error"]
        pad = b"X-Pad: " + b"a" * 8000 + b"\r\n"
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            for piece in (b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + pad, pad, pad):
                sock.sendall(piece)  # past the 16 KiB head limit, a piece at a time
                time.sleep(0.1)
            answer = sock.recv(65536)
        assert answer.startswith(b"HTTP/1.1 431") and b'"code":"too_large"' in answer
        held = [socket.create_connection(("127.0.0.1", port)) for _ in range(2)]
        try:
            status, refusal = _exchange(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        finally:
            for sock in held:
                sock.close()
        assert status.startswith(b"HTTP/1.1 503"), status
        assert refusal["code"] == "busy" and refusal["field"] == "" and "(2)" in refusal["error"]
        assert _health(service).status_code == 200


def test_a_request_head_past_16_kib_is_refused_however_it_arrives(tmp_path: Path) -> None:
    """h11 bounds only a head still arriving: a head that came in one read was served at any
    size, though the limit was documented as the head's. Now the head itself is measured."""

    def head(pad: int) -> bytes:
        return (b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Pad: "
                + b"a" * pad + b"\r\n\r\n")

    at_limit = 16 * 1024 - len(head(0))
    with running_service(tmp_path, workers=1) as service:
        port = _port(service)
        status, health = _exchange(port, head(at_limit))
        assert status.startswith(b"HTTP/1.1 200") and health["status"] == "ok", health
        for pad in (at_limit + 1, 40_000, 200_000):
            status, refusal = _exchange(port, head(pad))
            assert status.startswith(b"HTTP/1.1 431"), (pad, status)
            assert refusal == {"error": "request: the head (request line and headers) is larger "
                               "than 16384 bytes; accepted: at most 16384", "field": "",
                               "code": "too_large"}
        assert _health(service).status_code == 200


def _refused_while_sending(port: int) -> socket.socket:
    """A client whose body (1 GiB by its Content-Length) is refused 413 while it goes on
    sending: it has read its answer and the server's half-close, and has not closed."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(b"POST /render HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n" % (1 << 30) + b" " * 4096)
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    return sock


def _still_taken(sock: socket.socket) -> bool:
    """Whether the server still reads what ``sock`` sends (a cut-off connection is reset)."""
    try:
        for _ in range(50):
            sock.sendall(b" " * 65536)
            time.sleep(0.01)
    except OSError:
        return False
    return True


def test_refused_clients_lingering_do_not_crowd_out_good_ones(tmp_path: Path) -> None:
    """150 clients sending 8 MiB bodies, refused 413 and closing gently, held the connection
    slots while they lingered: good requests among them answered 503 ``busy``. A refused
    connection now leaves the count once answered; lingering ones have their own budget,
    whose oldest is closed at once when a newcomer finds it full."""
    with running_service(tmp_path, workers=1, max_body_bytes=1 << 20, max_connections=4,
                         max_lingering=3, linger_s=60) as service:
        port = _port(service)
        refused = [_refused_while_sending(port) for _ in range(6)]
        try:
            assert _health(service).status_code == 200  # 6 refused clients, 4 slots
            answer = httpx.post(f"{service.url}/render", json=GOOD, timeout=60)
            assert answer.status_code == 200, answer.text
            assert [_still_taken(sock) for sock in refused] == [False] * 3 + [True] * 3
        finally:
            for sock in refused:
                sock.close()


def test_shutdown_closes_lingering_connections_within_its_bound(tmp_path: Path) -> None:
    """At SIGTERM, refused connections still lingering were left to the process's exit: a
    client still sending its refused body then lost its answer to a reset. They now get what
    remains of the graceful period to finish (never their own 60 s linger), and are closed."""
    graceful_s = 5
    with running_service(tmp_path, workers=1, max_body_bytes=1 << 20, linger_s=60,
                         graceful_shutdown_s=graceful_s) as service:
        port = _port(service)
        endless = [_refused_while_sending(port) for _ in range(2)]
        sending = socket.create_connection(("127.0.0.1", port), timeout=30)
        piece = b" " * (1 << 16)
        sending.sendall(b"POST /render HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        b"Content-Length: %d\r\n\r\n" % (8 << 20) + piece)
        assert select.select([sending], [], [], 30)[0], "no 413 for the oversized body"
        service.process.send_signal(signal.SIGTERM)
        cut_off: set[socket.socket] = set()
        for _ in range(60):  # about 1.5 s more of the refused body, then it is read
            sending.sendall(piece)  # a reset here fails the test
            for sock in set(endless) - cut_off:
                try:
                    sock.sendall(piece)
                except OSError:
                    cut_off.add(sock)
            time.sleep(0.025)
        answer = b""
        while chunk := sending.recv(65536):  # the answer, then the server's clean close
            answer += chunk
        sending.close()
        assert answer.startswith(b"HTTP/1.1 413") and b'"code":"too_large"' in answer
        try:
            service.process.wait(graceful_s + 15)  # 5 s, 3 s for idle workers, slack
        except subprocess.TimeoutExpired:
            pytest.fail(f"the service did not exit within {graceful_s + 15} s of SIGTERM")
        assert [_still_taken(sock) for sock in endless] == [False, False]
        for sock in endless:
            sock.close()
        service.stop()
        assert "closed 2 refused connections still lingering at shutdown" in (
            service.log.read_text())
