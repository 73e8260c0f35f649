"""Benchmark of the citation core (not a test): prints timings and ratios against a bare peer.

1. scan + number a generated 1 MB markdown with 10,000 tokens (code-aware scanning of the
   markdown, then :func:`~citations.numbering.plan_citations`), against a bare
   ``re.finditer(r"\\[\\[S:[^\\]]*\\]\\]")`` pass over the same text (goal ≤ 3×, ≤ 50 ms).
   The numbering path is :func:`~citations.tokens.citation_groups`; the auditor's path,
   :func:`~citations.tokens.scan` (one Token object per token), is timed too;
2. merge 100,000 rows into a loaded pool (goal ≤ 1 s), and load + merge of the raw rows;
3. one ``sources_used.json`` write (goal ≤ 5 ms).

Each figure is the median of several runs, as wall time and as CPU time of this process
(``time.process_time``): on a shared machine the CPU time is the steadier figure. The load
average is printed before and after. Run: ``.venv/bin/python bench/citations_bench.py``.
"""

from __future__ import annotations

import os
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from citations.numbering import plan_citations
from citations.pool import SourcePool
from citations.store import ArtifactRecord, SourcesUsedStore
from citations.tokens import citation_groups, scan

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import load_average

TARGET_BYTES = 1_000_000
TOKENS = 10_000
POOL_SIZE = 200
MERGE_ROWS = 100_000
BARE = re.compile(r"\[\[S:[^\]]*\]\]")


class Timing(NamedTuple):
    """Median wall and CPU seconds of one benchmarked call."""

    wall: float
    cpu: float

    def show(self, scale: float = 1e3, unit: str = "ms") -> str:
        return f"wall {self.wall * scale:8.1f} {unit}  cpu {self.cpu * scale:8.1f} {unit}"

    def ratio(self, peer: Timing) -> str:
        return f"{self.wall / peer.wall:4.1f}x wall, {self.cpu / peer.cpu:4.1f}x cpu"


def make_markdown(seed: int = 7) -> str:
    """~1 MB of markdown prose, lists and code spans holding exactly TOKENS tokens."""
    rng = random.Random(seed)
    words = [
        "energy", "solar", "wind", "grid", "storage", "demand", "policy", "market", "capacity",
        "price", "cost", "investment", "outlook", "report", "growth", "emissions", "transition",
    ]
    filler_per_token = TARGET_BYTES // TOKENS - 20
    parts: list[str] = ["# Benchmark report\n\n"]
    for i in range(TOKENS):
        sentence = " ".join(rng.choice(words) for _ in range(filler_per_token // 7))
        a = rng.randint(1, POOL_SIZE)
        token = f"[[S:{a}]]" if i % 3 else f"[[S:{a},{min(a + 2, POOL_SIZE)}]]"
        parts.append(f"{sentence.capitalize()} {token}.")
        if i % 10 == 9:
            parts.append("\n\n")
        if i % 200 == 199:
            parts.append("Use `np.array([[1, 2], [3, 4]])` here.\n\n- item *a*\n- item b\n\n")
        else:
            parts.append(" ")
    return "".join(parts)


def measure(fn: Callable[[], object], runs: int) -> Timing:
    """Median wall and CPU time of ``fn`` over ``runs`` calls (after one warm-up call)."""
    fn()
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
    return Timing(statistics.median(walls), statistics.median(cpus))


def bench_scan(pool: SourcePool, text: str, runs: int) -> None:
    bare = measure(lambda: sum(1 for _ in BARE.finditer(text)), runs)

    def number() -> object:
        return plan_citations(citation_groups(text), pool)

    def tokens() -> object:
        found = scan(text)
        groups = [t.sids for t in found if t.kind == "cite" and not t.in_code and not t.error]
        return plan_citations(groups, pool)

    found = scan(text)
    assert len(found) == TOKENS and citation_groups(text) == [t.sids for t in found]
    lean = measure(number, runs)
    full = measure(tokens, runs)
    print(f"text: {len(text.encode()) / 1e6:.2f} MB, {len(found):,} tokens")
    print(f"  bare re.finditer                    {bare.show()}")
    print(f"  scan + number (citation_groups+plan) {lean.show()}  ({lean.ratio(bare)}; "
          "goal <= 3x, <= 50 ms)")
    print(f"  scan() Tokens + plan (auditor path)  {full.show()}  ({full.ratio(bare)})")


def bench_merge(pool: SourcePool, runs: int) -> None:
    rows = [
        {"sid": i, "title": f"Result {i}", "url": f"https://site{i % 40_000}.example.org/p/{i}/"
         f"?utm_source=agent&q={i % 7}", "text": "snippet"}
        for i in range(1, MERGE_ROWS + 1)
    ]
    incoming = SourcePool.from_rows(rows)
    merged = measure(lambda: pool.merge(incoming), runs)
    loaded = measure(lambda: pool.merge(rows), runs)
    print(f"merge {MERGE_ROWS:,} rows (pool already loaded)  {merged.show()}  (goal <= 1 s)")
    print(f"merge {MERGE_ROWS:,} raw rows (load + merge)     {loaded.show()}")


def bench_store(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = SourcesUsedStore(tmp)
        for i in range(5):
            store.record(ArtifactRecord(f"a{i}", f"a{i}.pdf", sids=[1, 2, 3]))
        counter = iter(range(10**9))

        def write() -> object:
            n = next(counter)
            return store.record(ArtifactRecord("report", "report.pdf", sids=[n % 9 + 1, 2],
                                               numbers={"2": 1}))

        written = measure(write, runs)
        print(f"one sources_used.json write (6 records)  {written.show(1e3, 'ms')}  "
              "(goal <= 5 ms)")


def main() -> None:
    print(f"load average {load_average()} on {os.cpu_count()} CPUs")
    pool = SourcePool.from_rows(
        [{"sid": i, "title": f"S{i}", "url": f"https://s{i}.org"} for i in range(1, POOL_SIZE + 1)]
    )
    bench_scan(pool, make_markdown(), 9)
    bench_merge(pool, 5)
    bench_store(21)
    print(f"load average {load_average()} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
