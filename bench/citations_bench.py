"""Benchmark of the citation core (not a test): prints timings and ratios against a bare peer.

1. scan + number a generated 1 MB markdown with 10,000 tokens, against a bare
   ``re.finditer(r"\\[\\[S:[^\\]]*\\]\\]")`` pass over the same text (goal ≤ 3×, ≤ 50 ms);
2. merge 100,000 rows into a pool (goal ≤ 1 s);
3. one ``sources_used.json`` write (goal ≤ 5 ms).

Each figure is the median of several runs. Run: ``.venv/bin/python bench/citations_bench.py``.
"""

from __future__ import annotations

import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from citations.numbering import plan_citations
from citations.pool import SourcePool
from citations.store import ArtifactRecord, SourcesUsedStore
from citations.tokens import citation_groups, scan

TARGET_BYTES = 1_000_000
TOKENS = 10_000
POOL_SIZE = 200
MERGE_ROWS = 100_000
BARE = re.compile(r"\[\[S:[^\]]*\]\]")


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


def median_seconds(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_scan(pool: SourcePool, text: str, runs: int) -> None:
    bare = median_seconds(lambda: sum(1 for _ in BARE.finditer(text)), runs)

    def full() -> object:
        tokens = scan(text)
        groups = [t.sids for t in tokens if t.kind == "cite" and not t.in_code and not t.error]
        return plan_citations(groups, pool)

    def lean() -> object:
        return plan_citations(citation_groups(text), pool)

    found = len(scan(text))
    full_s = median_seconds(full, runs)
    lean_s = median_seconds(lean, runs)
    print(f"text: {len(text.encode()) / 1e6:.2f} MB, {found} tokens")
    print(f"  bare re.finditer            {bare * 1e3:8.1f} ms")
    print(f"  scan + plan_citations       {full_s * 1e3:8.1f} ms  ({full_s / bare:.1f}x bare; "
          "goal <= 3x, <= 50 ms)")
    print(f"  citation_groups + plan      {lean_s * 1e3:8.1f} ms  ({lean_s / bare:.1f}x bare)")


def bench_merge(pool: SourcePool, runs: int) -> None:
    rows = [
        {"sid": i, "title": f"Result {i}", "url": f"https://site{i % 40_000}.example.org/p/{i}/"
         f"?utm_source=agent&q={i % 7}", "text": "snippet"}
        for i in range(1, MERGE_ROWS + 1)
    ]
    incoming = SourcePool.from_rows(rows)
    merge_s = median_seconds(lambda: pool.merge(incoming), runs)
    rows_s = median_seconds(lambda: pool.merge(rows), max(1, runs // 2))
    print(f"merge {MERGE_ROWS:,} rows (pool already loaded) {merge_s * 1e3:8.1f} ms  (goal <= 1 s)")
    print(f"merge {MERGE_ROWS:,} raw rows (load + merge)   {rows_s * 1e3:8.1f} ms")


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

        write_s = median_seconds(write, runs)
        print(f"one sources_used.json write (6 records) {write_s * 1e3:8.2f} ms  (goal <= 5 ms)")


def main() -> None:
    runs = 7
    pool = SourcePool.from_rows(
        [{"sid": i, "title": f"S{i}", "url": f"https://s{i}.org"} for i in range(1, POOL_SIZE + 1)]
    )
    bench_scan(pool, make_markdown(), runs)
    bench_merge(pool, 5)
    bench_store(21)


if __name__ == "__main__":
    main()
