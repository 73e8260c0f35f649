"""DOCX benchmark: a 50-page cited report, our cold render vs pandoc, in one run.

Usage: ``.venv/bin/python bench/docx_bench.py [--runs 5] [--keep DIR]``

Prints, A/B interleaved: cold ``citerender render --to docx`` (a fresh process, imports
included) vs ``pandoc -o x.docx`` on the same markdown, the ratio (goal ≤ 1.0×, stretch
0.6×), peak memory of each child process (maxrss), an in-process split of our time
(read, resolve, write) and the cProfile top entries of the DOCX writer.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"
CLI = ROOT / ".venv" / "bin" / "citerender"

WORDS = (
    "energy", "grid", "capacity", "solar", "wind", "storage", "battery", "demand", "supply",
    "market", "price", "cost", "investment", "policy", "carbon", "emission", "transition",
    "network", "utility", "generation", "forecast", "region", "country", "growth", "decline",
    "scenario", "model", "analysis", "report", "sector", "industry", "efficiency", "heating",
    "transport", "hydrogen", "nuclear", "hydro", "coal", "gas", "oil", "finance", "risk",
)

#: Pipeline used when the CLI cannot render DOCX yet (same work: read, resolve, write).
PIPELINE = """
import json, sys
from pathlib import Path
from citations.pool import SourcePool
from renderers.read_markdown import read_markdown
from renderers.resolve import resolve
from renderers.options import RenderOptions
from renderers.docx import docx_bytes
src, pool, out = sys.argv[1:4]
rdoc = resolve(read_markdown(Path(src).read_text("utf-8")), SourcePool.load(pool))
Path(out).write_bytes(docx_bytes(rdoc, RenderOptions()))
"""


def make_pool(count: int = 120) -> list[dict[str, object]]:
    """``count`` web sources with titles, URLs and dates."""
    rng = random.Random(7)
    return [
        {
            "sid": sid,
            "title": " ".join(rng.choice(WORDS).title() for _ in range(5)),
            "url": f"https://www.example{sid % 17}.org/reports/{sid}/{rng.choice(WORDS)}",
            "published_at": f"2024-{sid % 12 + 1:02d}-{sid % 27 + 1:02d}",
            "source_type": "web",
        }
        for sid in range(1, count + 1)
    ]


def make_report(words: int = 26_000, citations: int = 500, sources: int = 120) -> str:
    """A deterministic ≈50-page markdown report with headings, lists, tables and code."""
    rng = random.Random(42)
    sentences: list[str] = []
    lines: list[str | list[int]] = ["# Global Energy Transition Report", ""]  # list: a paragraph
    section = 0
    while sum(len(s.split()) for s in sentences) < words - 3000:
        section += 1
        lines += [f"## {section}. {rng.choice(WORDS).title()} and {rng.choice(WORDS)}", ""]
        for sub in range(3):
            lines += [f"### {section}.{sub + 1} {rng.choice(WORDS).title()} outlook", ""]
            for _ in range(3):
                paragraph: list[int] = []
                for _ in range(4):
                    chosen = [rng.choice(WORDS) for _ in range(rng.randint(18, 30))]
                    if rng.random() < 0.2:
                        chosen[5] = f"**{chosen[5]}**"
                    paragraph.append(len(sentences))
                    sentences.append(" ".join(chosen).capitalize())
                lines += [paragraph, ""]
            if sub == 1:
                lines += [f"- {rng.choice(WORDS)} {rng.choice(WORDS)} item {i}" for i in range(5)]
                lines.append("")
        if section % 3 == 0:
            lines += ["| Region | 2023 | 2024 | Change |", "|:--|--:|--:|--:|"]
            for r in range(15):
                a, b = rng.randint(10, 999), rng.randint(10, 999)
                lines.append(f"| {rng.choice(WORDS).title()} {r} | {a} | {b} | {b - a:+d} |")
            lines.append("")
        if section % 5 == 0:
            code = '    return x["[[S:1]]"]  # verbatim'
            lines += ["```python", "def share(x):", code, "```", ""]
    for index in rng.sample(range(len(sentences)), citations):
        if rng.random() < 0.25:
            first = rng.randint(1, sources - 3)
            sentences[index] += f"[[S:{first}-{first + 2}, {rng.randint(1, sources)}]]"
        else:
            sentences[index] += f"[[S:{rng.randint(1, sources)}]]"
    out = [
        " ".join(sentences[i] + "." for i in line) if isinstance(line, list) else line
        for line in lines
    ]
    return "\n".join(out) + "\n"


def run_child(argv: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Run ``argv`` once; return (wall seconds, peak RSS in KiB of that child)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        err = proc.stderr.read().decode() if proc.stderr else ""
        raise RuntimeError(f"{argv[0]} failed ({proc.returncode}): {err[-800:]}")
    return elapsed, usage.ru_maxrss


def our_command(md: Path, pool: Path, out: Path, env: dict[str, str]) -> list[str]:
    """The cold CLI when it renders DOCX, else a cold ``python -c`` running the same pipeline."""
    cli = [str(CLI), "render", str(md), "--pool", str(pool), "--to", "docx", "--out", str(out)]
    if CLI.exists():
        try:
            run_child(cli, env)
            if (out / f"{md.stem}.docx").exists():
                return cli
        except RuntimeError:
            pass
    print("(CLI cannot render DOCX here; timing a cold `python -c` pipeline instead)")
    return [str(PYTHON), "-c", PIPELINE, str(md), str(pool), str(out / f"{md.stem}.docx")]


def in_process_split(md_text: str, pool_path: Path) -> None:
    """Time each stage in one warm process and profile the DOCX writer."""
    from citations.pool import SourcePool
    from renderers.docx import docx_bytes
    from renderers.options import RenderOptions
    from renderers.read_markdown import read_markdown
    from renderers.resolve import resolve

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
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "0"}
    ours = our_command(md, pool, work, env)
    times: dict[str, list[float]] = {"citerender": [], "pandoc": []}
    peaks: dict[str, int] = {"citerender": 0, "pandoc": 0}
    for _ in range(args.runs):
        seconds, rss = run_child(ours, env)
        times["citerender"].append(seconds)
        peaks["citerender"] = max(peaks["citerender"], rss)
        if pandoc:
            seconds, rss = run_child([pandoc, str(md), "-o", str(work / "pandoc.docx")], env)
            times["pandoc"].append(seconds)
            peaks["pandoc"] = max(peaks["pandoc"], rss)
    ours_median = statistics.median(times["citerender"])
    print(f"\nciterender render --to docx (cold): median {ours_median:.3f} s "
          f"over {args.runs} runs, peak RSS {peaks['citerender'] / 1024:.0f} MiB")
    if pandoc:
        theirs = statistics.median(times["pandoc"])
        print(f"pandoc -o x.docx                  : median {theirs:.3f} s, "
              f"peak RSS {peaks['pandoc'] / 1024:.0f} MiB")
        print(f"ratio citerender / pandoc         : {ours_median / theirs:.2f}x "
              "(goal <= 1.0x, stretch 0.6x)")
    else:
        print("pandoc not installed: no A/B ratio")
    in_process_split(md_text, pool)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
