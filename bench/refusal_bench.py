"""Benchmark: do refused clients crowd out good ones? (bounded: every run stops by itself)

N bad clients each send a request whose body is past the service's limit (8 MiB against
1 MiB: answered 413 by its Content-Length, then closed gently while the rest still arrives),
and M good clients, arriving at random moments of the same second (``--spread``), send a
small valid render. It prints, per round, how many good clients got 200 and how many were
refused 503 ``busy`` for want of a connection slot, and how many bad clients read their 413
(not a reset, not a 503).

    .venv/bin/python bench/refusal_bench.py [--bad 150] [--good 20] [--rounds 3]

The service runs in its own process (``--serve PORT`` re-invokes this script) through
:func:`renderers.service.server.run`, so the production connection limits apply (100
connections); its pool takes every good render (queue limit 64), so a 503 here is the
connection limit's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
GOOD = json.dumps({"content": "Solar is cheap.[[S:1]]\n", "format": "md", "sources_pool": [
    {"sid": 1, "title": "Lazard LCOE+", "url": "https://www.lazard.com/"}]}).encode()
BAD_BODY = b" " * (8 << 20)


async def _exchange(port: int, head: bytes, body: bytes, delay: float) -> str:
    """After ``delay`` seconds, send ``head`` and ``body`` whole, then read the answer: its
    status, or how it failed."""
    await asyncio.sleep(delay)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError as exc:
        return f"connect:{type(exc).__name__}"
    try:
        writer.write(head)
        for start in range(0, len(body), 1 << 16):
            writer.write(body[start:start + (1 << 16)])
            await writer.drain()
        answer = await asyncio.wait_for(reader.read(), 60)
    except (OSError, TimeoutError) as exc:
        return type(exc).__name__
    finally:
        writer.close()
    status = answer.split(b"\r\n", 1)[0].split(b" ")
    if len(status) < 2:
        return "empty"
    if status[1] == b"503" and b"most connections" in answer:
        return "503 connections"
    return status[1].decode()


async def _round(port: int, bad: int, good: int, spread: float,
                 seed: int) -> tuple[Counter[str], Counter[str]]:
    """One round: every client starts at a random moment within ``spread`` seconds."""
    rng = random.Random(seed)
    bad_head = (b"POST /render HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n" % len(BAD_BODY))
    good_head = (b"POST /render HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(GOOD))
    bad_runs = [_exchange(port, bad_head, BAD_BODY, rng.uniform(0, spread)) for _ in range(bad)]
    good_runs = [_exchange(port, good_head, GOOD, rng.uniform(0, spread)) for _ in range(good)]
    results = await asyncio.gather(*bad_runs, *good_runs)
    return Counter(results[:bad]), Counter(results[bad:])


def _serve(port: int) -> None:
    from renderers.service.app import create_app
    from renderers.service.server import listen, run

    app = create_app(workers=2, max_body_bytes=1 << 20, queue_limit=64)
    run(app, sockets=listen("127.0.0.1", port), log_level="warning")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bad", type=int, default=150)
    parser.add_argument("--good", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--spread", type=float, default=1.0,
                        help="seconds over which the clients of a round arrive")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        _serve(args.serve)
        return
    port = _free_port()
    service = subprocess.Popen([sys.executable, __file__, "--serve", str(port)], cwd=ROOT)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or service.poll() is not None:
                sys.exit("the service did not start")
            time.sleep(0.2)
        print(f"{args.bad} bad clients (8 MiB body, limit 1 MiB) + {args.good} good clients "
              f"(small render) arriving within {args.spread:g} s, per round")
        for number in range(1, args.rounds + 1):
            bad, good = asyncio.run(_round(port, args.bad, args.good, args.spread, number))
            print(f"round {number}: good 200: {good['200']}/{args.good}, good refused: "
                  f"{dict(sorted((k, v) for k, v in good.items() if k != '200'))}; "
                  f"bad read 413: {bad['413']}/{args.bad}, bad otherwise: "
                  f"{dict(sorted((k, v) for k, v in bad.items() if k != '413'))}")
            time.sleep(2.5)  # every linger of the round has ended
        health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10).status_code
        print(f"healthz after: {health}")
    finally:
        service.terminate()
        try:
            service.wait(30)
        except subprocess.TimeoutExpired:
            service.kill()
            service.wait()


if __name__ == "__main__":
    main()
