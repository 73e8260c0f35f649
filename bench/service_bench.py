"""Benchmark the HTTP export service on loopback (bounded: every run stops by itself).

For a 5-page PDF it measures, with 1 and with 2 worker processes: warm single-client latency
(p50/p95) and throughput with 2×workers concurrent clients. Then it oversubscribes 2 workers
with 8× as many clients and checks that only 200 and 503 answers come back and that the
service is healthy afterwards. Goals: warm p50 ≤ 0.4 s; 2 workers ≥ 1.8× one worker.
Besides wall-clock latency it prints the CPU seconds the service and its workers spent per
rendered answer, and the load average: on a shared machine wall time stretches, CPU hardly.

    .venv/bin/python bench/service_bench.py [--requests 8] [--pages 5]

Each service runs in its own process (``--serve PORT WORKERS`` re-invokes this script), so
the load generator never competes with the service's event loop.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
POOL = [
    {"sid": i, "title": f"Source {i}: grid and storage study", "url": f"https://example.org/{i}",
     "published_at": f"2024-05-0{i % 9 + 1}"}
    for i in range(1, 9)
]


def document(paragraphs: int) -> str:
    """A report of ``paragraphs`` cited paragraphs under a few headings."""
    body = ["# Service benchmark report\n"]
    for i in range(paragraphs):
        if i % 6 == 0:
            body.append(f"\n## Section {i // 6 + 1}\n")
        body.append(
            f"\nParagraph {i}: transmission build-out, storage deployment and demand response "
            "together decide how fast variable renewables can grow without curtailment; the "
            f"studies disagree mostly on cost of capital and permitting time.[[S:{i % 8 + 1}]]\n"
        )
    return "".join(body)


def tree_cpu_seconds(root: int) -> float:
    """User + system CPU seconds of process ``root`` and all its live descendants (Linux /proc).

    The service's workers are grandchildren (via the fork server) that live through a run, so
    ``RUSAGE_CHILDREN`` would not see them; their reaped children's time is included.
    """
    tick = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # exited meanwhile
        pid = int(entry)
        parents[pid] = int(fields[1])
        times[pid] = sum(int(v) for v in fields[11:15]) / tick  # utime stime cutime cstime
    total, stack = 0.0, [root]
    while stack:
        pid = stack.pop()
        total += times.get(pid, 0.0)
        stack.extend(child for child, parent in parents.items() if parent == pid)
    return total


@dataclass
class Run:
    """Latencies and answers of one load run, and the CPU time the service spent on it."""

    latencies: list[float]
    statuses: Counter[int]
    seconds: float
    cpu: float = 0.0

    @property
    def cpu_per_render(self) -> float:
        return self.cpu / self.statuses[200] if self.statuses[200] else float("nan")

    @property
    def throughput(self) -> float:
        return self.statuses[200] / self.seconds if self.seconds else 0.0

    def pct(self, q: float) -> float:
        ordered = sorted(self.latencies)
        if not ordered:
            return float("nan")
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def load(url: str, payload: dict[str, object], clients: int, each: int) -> Run:
    """``clients`` concurrent clients, ``each`` requests apiece."""
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    limits = httpx.Limits(max_connections=clients)
    async with httpx.AsyncClient(base_url=url, timeout=180, limits=limits) as http:

        async def client() -> None:
            for _ in range(each):
                started = time.perf_counter()
                response = await http.post("/render", json=payload)
                statuses[response.status_code] += 1
                if response.status_code == 200:
                    latencies.append(time.perf_counter() - started)

        started = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(clients)))
        return Run(latencies, statuses, time.perf_counter() - started)


class Service:
    """A service subprocess on a loopback port."""

    def __init__(self, port: int, workers: int) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(port), str(workers)], cwd=ROOT,
        )

    def wait_ready(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"service exited with {self.process.returncode}")
            try:
                if httpx.get(self.url + "/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise TimeoutError("service did not become ready")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def calibrate(url: str, pages: int) -> dict[str, object]:
    """A request payload whose PDF has exactly ``pages`` pages."""
    paragraphs = 12 * pages
    for _ in range(8):
        payload: dict[str, object] = {"content": document(paragraphs), "format": "pdf",
                                      "sources_pool": POOL, "title": "Benchmark"}
        answer = httpx.post(url + "/render", json=payload, timeout=180,
                            headers={"Accept": "application/json"}).json()
        got = int(answer["stats"]["pages"])
        if got == pages:
            return payload
        paragraphs = max(1, round(paragraphs * pages / got) - (1 if got > pages else 0))
    raise RuntimeError(f"could not calibrate a {pages}-page document")


def metered(service: Service, payload: dict[str, object], clients: int, each: int) -> Run:
    """:func:`load` with the service's CPU time over the run."""
    before = tree_cpu_seconds(service.process.pid)
    run = asyncio.run(load(service.url, payload, clients, each))
    run.cpu = tree_cpu_seconds(service.process.pid) - before
    return run


def measure(port: int, workers: int, pages: int, each: int) -> tuple[Run, Run]:
    """(warm single-client run, 2×workers-client throughput run) for ``workers``."""
    service = Service(port, workers)
    try:
        service.wait_ready()
        payload = calibrate(service.url, pages)
        asyncio.run(load(service.url, payload, workers, 2))  # warm every worker
        single = metered(service, payload, 1, each)
        loaded = metered(service, payload, 2 * workers, each)
        return single, loaded
    finally:
        service.stop()


def oversubscribe(port: int, pages: int, each: int) -> tuple[Run, int, int]:
    """2 workers, 16 clients: (run, healthz status after, render status after)."""
    service = Service(port, 2)
    try:
        service.wait_ready()
        payload = calibrate(service.url, pages)
        run = asyncio.run(load(service.url, payload, 16, each))
        health = httpx.get(service.url + "/healthz", timeout=10).status_code
        after = httpx.post(service.url + "/render", json=payload, timeout=180).status_code
        return run, health, after
    finally:
        service.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=8, help="requests per client")
    parser.add_argument("--pages", type=int, default=5)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--serve", nargs=2, type=int, metavar=("PORT", "WORKERS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        import uvicorn

        from renderers.service.app import create_app

        # No access log: one line per request would flood the benchmark's output.
        uvicorn.run(create_app(workers=args.serve[1]), host="127.0.0.1", port=args.serve[0],
                    log_level="warning", access_log=False)
        return

    before = os.getloadavg()[0]
    results = {w: measure(args.port + w, w, args.pages, args.requests) for w in (1, 2)}
    load1, load5, _ = os.getloadavg()
    print(f"{args.pages}-page PDF, {args.requests} requests per client; "
          f"{os.cpu_count()} cores, load average {before:.1f} before, {load1:.1f} / {load5:.1f} "
          "after (1 / 5 min)")
    print(f"{'workers':>7} {'p50 (1 client)':>15} {'p95 (1 client)':>15} {'CPU/req':>8} "
          f"{'clients':>7} {'p50':>7} {'p95':>7} {'req/s':>7} {'CPU/req':>8}")
    for workers, (single, loaded) in results.items():
        print(f"{workers:>7} {single.pct(0.5):>14.3f}s {single.pct(0.95):>14.3f}s "
              f"{single.cpu_per_render:>7.3f}s "
              f"{2 * workers:>7} {loaded.pct(0.5):>6.2f}s {loaded.pct(0.95):>6.2f}s "
              f"{loaded.throughput:>7.2f} {loaded.cpu_per_render:>7.3f}s")
    print("CPU/req: user + system seconds of the service and its workers per 200 answer "
          "(robust to a busy machine, unlike wall time)")
    ratio = results[2][1].throughput / results[1][1].throughput
    warm = results[1][0].pct(0.5)
    print(f"warm p50 {warm:.3f} s (goal ≤ 0.4 s: {'met' if warm <= 0.4 else 'NOT met'})")
    print(f"2 workers / 1 worker throughput: {ratio:.2f}× "
          f"(goal ≥ 1.8×: {'met' if ratio >= 1.8 else 'NOT met'}; "
          f"machine has {os.cpu_count()} cores, shared)")

    run, health, after = oversubscribe(args.port + 3, args.pages, max(2, args.requests // 2))
    codes = dict(sorted(run.statuses.items()))
    only_ok = set(codes) <= {200, 503}
    print(f"8× oversubscription (2 workers, 16 clients): answers {codes}; "
          f"only 200/503: {'yes' if only_ok else 'NO'}; healthz after: {health}; "
          f"render after: {after}")
    if not only_ok or health != 200 or after != 200:
        sys.exit(1)


if __name__ == "__main__":
    main()
