"""Benchmark of the style pass (not a test): the ≈50-page report (500 citations, 120 sources)
read and resolved in each bundled CSL style, against the same read without a style (the peer).

Prints the median wall and CPU seconds of ``pipeline.prepare`` per style and the ratio to the
peer; the style pass is all the difference (citeproc-py formats every entry and, for author-date
and note styles, every citation). Run: ``.venv/bin/python bench/styles_bench.py``.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from renderers.options import build_options
from renderers.pipeline import prepare
from renderers.styles import BUNDLED

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import load_average, make_pool, make_report

RUNS = 3


def measure(content: str, pool: list[dict[str, object]], csl: str) -> tuple[float, float]:
    """Median (wall, cpu) seconds of one prepare with ``csl`` (after one warm-up run)."""
    options = build_options(csl=csl)
    prepare(content, sources_pool=pool, options=options)
    walls, cpus = [], []
    for _ in range(RUNS):
        wall, cpu = time.perf_counter(), time.process_time()
        prepare(content, sources_pool=pool, options=options)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    print(f"load before: {load_average()}")
    content, pool = make_report(), make_pool()
    peer_wall, peer_cpu = measure(content, pool, "")
    print(f"{'no style (peer)':22} wall {peer_wall:7.3f} s  cpu {peer_cpu:7.3f} s")
    for name in BUNDLED:
        wall, cpu = measure(content, pool, name)
        print(f"{name:22} wall {wall:7.3f} s  cpu {cpu:7.3f} s  "
              f"{wall / peer_wall:5.1f}x wall, {cpu / peer_cpu:5.1f}x cpu")
    print(f"load after: {load_average()}")


if __name__ == "__main__":
    main()
