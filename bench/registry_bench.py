"""Benchmark of the persistent source registry (not a test): per-registration cost.

1. 100,000 registrations in one call into a new file-backed pool (goal ≤ 0.1 ms each,
   amortized), against a peer doing the least any registry must: merging the rows into a
   ``SourcePool`` and writing the same bytes with ``write_atomic``;
2. the same 100,000 in batches of 1,000 (100 locked read-merge-write cycles);
3. one locked registration into pools of 100 … 100,000 rows (goal ≤ 5 ms), against a bare
   ``write_atomic`` of a file of the same size — the floor of a durable atomic replace (two
   fsyncs and a rename), which no registry with that contract can go under;
4. 10,000 registrations with near-duplicate detection on.

Each figure is wall time and CPU time of this process (``time.process_time``); on a shared
machine the CPU time is the steadier one. Run: ``.venv/bin/python bench/registry_bench.py``.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from citations.atomic import write_atomic
from citations.pool import SourcePool
from citations.registry import SourceRegistry

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import WORDS, load_average

ROWS = 100_000
BATCH = 1_000
SINGLE_RUNS = 15


class Timing(NamedTuple):
    wall: float
    cpu: float

    def per(self, count: int) -> str:
        return f"wall {self.wall / count * 1e3:8.4f} ms  cpu {self.cpu / count * 1e3:8.4f} ms"

    def total(self) -> str:
        return f"wall {self.wall:7.2f} s  cpu {self.cpu:7.2f} s"

    def ratio(self, peer: Timing) -> str:
        return f"{self.wall / peer.wall:4.2f}x wall, {self.cpu / peer.cpu:4.2f}x cpu"


def timed(fn: Callable[[], object]) -> Timing:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return Timing(time.perf_counter() - wall, time.process_time() - cpu)


def rows(count: int, start: int = 0, text: bool = False) -> list[dict[str, Any]]:
    """Search-result rows: a title, a URL (a tenth of them repeat an earlier one), a snippet."""
    out = []
    for i in range(start, start + count):
        n = i - i % 10 if i % 10 == 9 else i  # every tenth row repeats a URL
        row: dict[str, Any] = {"title": f"Result {i}", "url": f"https://site{n % 9973}.example.org"
                               f"/reports/{n}?utm_source=agent", "published_at": "2024-05-01"}
        if text:  # a 40-word snippet; every hundredth one copies the previous (a mirror)
            rng = random.Random(i - 1 if i % 100 == 98 else i)
            row["text"] = " ".join(rng.choice(WORDS) for _ in range(40))
        out.append(row)
    return out


def bench_batch(tmp: Path) -> None:
    data = rows(ROWS)
    target = tmp / "batch.json"
    registry = SourceRegistry(target)
    result: list[Any] = []
    ours = timed(lambda: result.append(registry.register(data)))
    unique = len(result[0].added)

    numbered = [{**row, "sid": i} for i, row in enumerate(data, start=1)]

    def peer() -> None:
        merged, _ = SourcePool().merge(numbered)
        write_atomic(tmp / "peer.json", json.dumps(merged.rows(), ensure_ascii=False).encode())

    theirs = timed(peer)
    size = target.stat().st_size / 1e6
    print(f"{ROWS:,} registrations in one call ({unique:,} sources, {size:.1f} MB file)")
    print(f"  registry        {ours.total()}   per registration {ours.per(ROWS)}  "
          "(goal <= 0.1 ms)")
    print(f"  peer merge+write {theirs.total()}   ratio {ours.ratio(theirs)}")

    batched = SourceRegistry(tmp / "batches.json")
    def in_batches() -> None:
        for i in range(0, ROWS, BATCH):
            batched.register(data[i : i + BATCH])

    total = timed(in_batches)
    print(f"  in batches of {BATCH:,}: {total.total()}   per registration {total.per(ROWS)}")


def bench_single(tmp: Path) -> None:
    print(f"one locked registration (median of {SINGLE_RUNS})")
    for size in (100, 1_000, 10_000, ROWS):
        path = tmp / f"single-{size}.json"
        registry = SourceRegistry(path)
        registry.register(rows(size))
        counter = iter(range(10**9))
        walls: list[float] = []
        cpus: list[float] = []
        peers: list[Timing] = []
        for _ in range(SINGLE_RUNS):
            n = next(counter)
            row = {"url": f"https://new{n}.example.net/", "title": f"New {n}"}
            t = timed(partial(registry.register, [row]))
            walls.append(t.wall)
            cpus.append(t.cpu)
            payload = path.read_bytes()
            peers.append(timed(partial(write_atomic, tmp / "peer.json", payload)))
        ours = Timing(statistics.median(walls), statistics.median(cpus))
        floor = Timing(statistics.median(p.wall for p in peers),
                       statistics.median(p.cpu for p in peers))
        print(f"  into {size:>7,} rows   {ours.per(1)}   bare write_atomic {floor.per(1)}   "
              f"ratio {ours.ratio(floor)}   (goal <= 5 ms)")


def bench_near(tmp: Path) -> None:
    count = 10_000
    data = rows(count, text=True)
    registry = SourceRegistry(tmp / "near.json", near_duplicates=True)
    plain = SourceRegistry(tmp / "plain.json")
    result: list[Any] = []
    ours = timed(lambda: result.append(registry.register(data)))
    peer = timed(lambda: plain.register(data))
    print(f"{count:,} registrations with near-duplicate detection  {ours.total()}   per "
          f"registration {ours.per(count)}   ratio to without {ours.ratio(peer)}   "
          f"({len(result[0].near_duplicates)} reported)")


def main() -> None:
    print(f"load average {load_average()} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="registry-bench-") as tmp:
        bench_batch(Path(tmp))
        bench_single(Path(tmp))
        bench_near(Path(tmp))
    print(f"load average {load_average()} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
