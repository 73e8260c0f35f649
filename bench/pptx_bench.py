"""PPTX benchmark: the 50-page cited report, our cold render vs pandoc, and slide-count scaling.

Usage: ``.venv/bin/python bench/pptx_bench.py [--runs 5] [--keep DIR]``

Prints, A/B interleaved in one run: cold ``citerender render --to pptx`` (a fresh process,
imports included) vs ``pandoc --slide-level=2 -o x.pptx`` on the same markdown, the ratio
(goal ≤ 1.0×) in wall-clock and in CPU time (user + system of the child), the peak memory of
each child (maxrss) and the load average; then a 100-slide and a 300-slide deck rendered in
one warm process, with the per-slide time ratio (≈ 1.0 means linear cost).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docx_bench import ab_runs, our_command, report_ab, run_child
from report import child_env, load_average, make_pool, make_report


def deck_markdown(slides: int) -> str:
    """``slides`` short cited slides (one heading and one paragraph each)."""
    parts = []
    for k in range(slides):
        parts.append(f"## Slide {k + 1}\n\nGrid storage grew fast in region {k} "
                     f"[[S:{k % 120 + 1}]] while prices fell [[S:{(k * 7) % 120 + 1}]].\n")
    return "\n".join(parts)


def scaling() -> None:
    """Warm per-slide cost of a ~100-slide and a ~300-slide deck (and ~1,000 as a check)."""
    from citations.pool import SourcePool
    from renderers.options import RenderOptions
    from renderers.readers.markdown import read_markdown
    from renderers.resolve import resolve
    from renderers.writers.pptx.output import pptx_bytes

    pool = SourcePool.from_rows(make_pool())
    options = RenderOptions()
    pptx_bytes(resolve(read_markdown(deck_markdown(20)), pool), options)  # warm caches
    per_slide: dict[int, float] = {}
    print("\nscaling (warm, in-process, best of 3):")
    for count in (100, 300, 1000):
        rdoc = resolve(read_markdown(deck_markdown(count)), pool)
        best, best_cpu = float("inf"), float("inf")
        for _ in range(3 if count < 1000 else 1):
            start, start_cpu = time.perf_counter(), time.process_time()
            pptx_bytes(rdoc, options)
            best = min(best, time.perf_counter() - start)
            best_cpu = min(best_cpu, time.process_time() - start_cpu)
        per_slide[count] = best_cpu / count
        print(f"  {count:>5} content slides: wall {best:6.2f} s, CPU {best_cpu:6.2f} s, "
              f"{per_slide[count] * 1000:6.2f} ms CPU/slide")
    print(f"  per-slide CPU ratio 300 vs 100 slides : {per_slide[300] / per_slide[100]:.2f}x "
          "(1.0 = linear)")
    print(f"  per-slide CPU ratio 1000 vs 100 slides: {per_slide[1000] / per_slide[100]:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="keep the generated inputs and outputs here")
    args = parser.parse_args()
    pandoc = shutil.which("pandoc")
    work = Path(args.keep or tempfile.mkdtemp(prefix="pptx-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    md = work / "report.md"
    pool = work / "pool.json"
    md_text = make_report()
    md.write_text(md_text, "utf-8")
    pool.write_text(json.dumps(make_pool()), "utf-8")
    print(f"input: {len(md_text.split())} words, {md_text.count('[[S:')} citation tokens, "
          "120 sources")
    env = child_env()
    print(f"load average before the runs        : {load_average()}")
    ours = our_command(md, pool, work, "pptx")
    theirs = None
    if pandoc:
        theirs = [pandoc, "--slide-level=2", str(md), "-o", str(work / "pandoc.pptx")]
        run_child(theirs, env)  # warm the file cache like our untimed first run
    samples = ab_runs(ours, theirs, env, args.runs)
    print()
    report_ab(samples, ("citerender render --to pptx (cold)", "pandoc --slide-level=2 -o x.pptx"),
              "goal <= 1.0x")
    scaling()
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
