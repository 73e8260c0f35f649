"""DOCX benchmark: a 50-page cited report, our cold render vs pandoc, in one run.

Usage: ``.venv/bin/python bench/docx_bench.py [--runs 5] [--keep DIR]``

Prints, A/B interleaved: cold ``citerender render --to docx`` (a fresh process, imports
included) vs ``pandoc -o x.docx`` on the same markdown, the ratio (goal ≤ 1.0×, stretch
0.6×) in wall-clock and in CPU time (user + system of the child: steadier on a busy machine),
peak memory of each child process (maxrss), the load average, an in-process split of our time
(read, resolve, write) and the cProfile top entries of the DOCX writer.

Children run with bytecode caching on (``PYTHONDONTWRITEBYTECODE`` removed), as an installed
package runs; the first, untimed run writes the caches.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from report import child_env, load_average, make_pool, make_report

ROOT = Path(__file__).resolve().parent.parent
CLI = ROOT / ".venv" / "bin" / "citerender"


@dataclass(frozen=True)
class Sample:
    """One child run: wall seconds, CPU seconds (user + system) and peak RSS (KiB)."""

    wall: float
    cpu: float
    rss: int


def run_child(argv: list[str], env: dict[str, str]) -> Sample:
    """Run ``argv`` once and measure that child alone (``os.wait4`` resource usage)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        err = proc.stderr.read().decode() if proc.stderr else ""
        raise RuntimeError(f"{argv[0]} failed ({proc.returncode}): {err[-800:]}")
    return Sample(elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss)


def ab_runs(ours: list[str], theirs: list[str] | None, env: dict[str, str],
            runs: int) -> dict[str, list[Sample]]:
    """``runs`` interleaved A/B runs of our command and (when given) pandoc's."""
    samples: dict[str, list[Sample]] = {"citerender": [], "pandoc": []}
    for _ in range(runs):
        samples["citerender"].append(run_child(ours, env))
        if theirs:
            samples["pandoc"].append(run_child(theirs, env))
    return samples


def report_ab(samples: dict[str, list[Sample]], labels: tuple[str, str], goal: str) -> None:
    """Median wall and CPU time, peak RSS of both sides and the ratios."""
    medians: dict[str, tuple[float, float]] = {}
    for key, label in zip(("citerender", "pandoc"), labels, strict=True):
        runs = samples[key]
        if not runs:
            continue
        wall = statistics.median(s.wall for s in runs)
        cpu = statistics.median(s.cpu for s in runs)
        medians[key] = (wall, cpu)
        print(f"{label:<36}: median wall {wall:.3f} s, CPU {cpu:.3f} s over {len(runs)} runs, "
              f"peak RSS {max(s.rss for s in runs) / 1024:.0f} MiB")
    if "pandoc" in medians:
        (ours_wall, ours_cpu), (their_wall, their_cpu) = medians["citerender"], medians["pandoc"]
        print(f"{'ratio citerender / pandoc':<36}: wall {ours_wall / their_wall:.2f}x, "
              f"CPU {ours_cpu / their_cpu:.2f}x ({goal})")
    else:
        print("pandoc not installed: no A/B ratio")
    print(f"load average after the runs         : {load_average()}")


def our_command(md: Path, pool: Path, out: Path, fmt: str = "docx") -> list[str]:
    """The cold CLI rendering ``md`` to ``fmt``."""
    return [str(CLI), "render", str(md), "--pool", str(pool), "--to", fmt, "--out", str(out)]


def in_process_split(md_text: str, pool_path: Path) -> None:
    """Time each stage in one warm process and profile the DOCX writer."""
    from citations.pool import SourcePool
    from renderers.options import RenderOptions
    from renderers.readers.markdown import read_markdown
    from renderers.resolve import resolve
    from renderers.writers.docx.writer import docx_bytes

    stages: dict[str, float] = {}
    t0 = time.perf_counter()
    pool = SourcePool.load(pool_path)
    document = read_markdown(md_text)
    stages["read markdown + pool"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    rdoc = resolve(document, pool)
    stages["resolve citations"] = time.perf_counter() - t0
    options = RenderOptions()
    docx_bytes(rdoc, options)  # warm caches once
    t0 = time.perf_counter()
    data = docx_bytes(rdoc, options)
    stages["docx_bytes (warm)"] = time.perf_counter() - t0
    print(f"\nin-process split ({len(rdoc.entries)} sources, "
          f"{sum(1 for _ in rdoc.plan.order)} cited sids, {len(data) // 1024} KiB DOCX):")
    for name, seconds in stages.items():
        print(f"  {name:<24} {seconds * 1000:8.1f} ms")
    profiler = cProfile.Profile()
    profiler.enable()
    docx_bytes(rdoc, options)
    profiler.disable()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(12)
    print("\ncProfile of docx_bytes, top entries by own time:")
    print("\n".join(line for line in text.getvalue().splitlines()[4:] if line.strip()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="keep the generated inputs and outputs here")
    args = parser.parse_args()
    pandoc = shutil.which("pandoc")
    work = Path(args.keep or tempfile.mkdtemp(prefix="docx-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    md = work / "report.md"
    pool = work / "pool.json"
    md_text = make_report()
    md.write_text(md_text, "utf-8")
    pool.write_text(json.dumps(make_pool()), "utf-8")
    words = len(md_text.split())
    print(f"input: {words} words, {md_text.count('[[S:')} citation tokens, 120 sources")
    env = child_env()
    print(f"load average before the runs        : {load_average()}")
    ours = our_command(md, pool, work)
    theirs = [pandoc, str(md), "-o", str(work / "pandoc.docx")] if pandoc else None
    if theirs:
        run_child(theirs, env)  # warm the file cache like our untimed first run
    samples = ab_runs(ours, theirs, env, args.runs)
    print()
    report_ab(samples, ("citerender render --to docx (cold)", "pandoc -o x.docx"),
              "goal <= 1.0x, stretch 0.6x")
    in_process_split(md_text, pool)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
