"""Where the CPU of one ``citerender render --pdf-engine typst`` process goes.

Usage: ``.venv/bin/python bench/startup_bench.py [--runs 10]``

Two documents, each rendered to PDF by fresh CLI processes (bytecode caches on, as for an
installed package): ``samples/long-report.md`` (50 pages) and a one-paragraph note. Each is
run ``--runs`` times plain — total CPU (user + system of the process and its threads) and wall
time — interleaved with as many instrumented runs that split the CPU into phases (medians):

  start+exit   the interpreter's start-up and shutdown (outside the CLI's code)
  imports      every import, wherever it happens (the CLI's own and those on the render path)
  typer        click's commands built from the functions' signatures (typer's get_command or
               get_group)
  read         decoding, the pool, the markdown reader (renderers.pipeline.read_document)
  resolve      the citation pass (renderers.pipeline._resolved)
  markup       the Typst markup (renderers.writers.typst.markup.typst_source)
  typst        Typst's compile and its query (every thread)
  report       the summary table rich prints
  gc           the cycle collector, wherever it runs
  rest         everything else: options, checks, the PDF's links, sources_used.json …

The instrumentation (a wrapper around ``__import__`` and the phases' functions) costs a few
milliseconds, so the phases add up to a little more than the plain total. There is no goal
and no peer: the split says where a change to start-up should look.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from report import child_env, load_average  # noqa: E402

SAMPLE = ROOT / "samples" / "long-report.md"
POOL = ROOT / "samples" / "long-report.pool.json"
PHASES = ("start+exit", "imports", "typer", "read", "resolve", "markup", "typst", "report", "gc",
          "rest")

#: Run in the child: charges the process's CPU to the innermost active phase, then runs the CLI
#: and writes the split to the file named by argv[2] when the interpreter exits.
SHIM = r"""
import atexit, builtins, gc, importlib, json, resource, sys, time
sys.path.insert(0, sys.argv[1])
split_file = sys.argv[2]
clock = time.process_time
spent, stack, last = {}, ["rest"], [clock()]
started = last[0]

def switch(push=None):
    now = clock()
    spent[stack[-1]] = spent.get(stack[-1], 0.0) + now - last[0]
    last[0] = now
    stack.append(push) if push else stack.pop()

def phase(name, fn):
    def timed(*args, **kwargs):
        switch(name)
        try:
            return fn(*args, **kwargs)
        finally:
            switch()
    return timed

PATCHES = {  # module: [(object path, phase)] — patched once the module is imported
    "typer.main": [("get_command", "typer"), ("get_group", "typer")],
    "renderers.pipeline": [("read_document", "read"), ("_resolved", "resolve")],
    "renderers.writers.typst.writer": [("typst_source", "markup")],
    "renderers.cli": [("report_outcomes", "report"), ("get_group", "typer")],
}

def patch():
    for name in [n for n in PATCHES if n in sys.modules]:
        module = sys.modules[name]
        for attr, label in PATCHES.pop(name):
            if hasattr(module, attr):  # an older CLI may call typer otherwise
                setattr(module, attr, phase(label, getattr(module, attr)))
    if "typst" in sys.modules and "typst" not in done:
        done.add("typst")
        typst, real = sys.modules["typst"], sys.modules["typst"].Compiler

        class Compiler:
            def __init__(self, **kwargs):
                self._real = real(**kwargs)
                self.compile_with_warnings = phase("typst", self._real.compile_with_warnings)
                self.query = phase("typst", self._real.query)

        typst.Compiler = Compiler

done = set()
real_import, real_import_module = builtins.__import__, importlib.import_module

def importing(fn):
    def wrapper(*args, **kwargs):
        switch("imports")
        try:
            return fn(*args, **kwargs)
        finally:
            switch()
            if stack[-1] != "imports":
                patch()
    return wrapper

builtins.__import__ = importing(real_import)
importlib.import_module = importing(real_import_module)
gc.callbacks.append(lambda step, info: switch("gc") if step == "start" else switch())

def report():
    switch()  # the last of "rest"
    gc.callbacks.clear()
    with open(split_file, "w") as out:
        json.dump({"phases": spent, "started": started, "accounted": clock()}, out)

atexit.register(report)
sys.argv = ["citerender", *sys.argv[3:]]
from renderers.cli import main
main()
"""


def run(args: list[str], split: Path | None) -> tuple[float, float, dict[str, float]]:
    """One CLI process: its CPU and wall seconds, and (instrumented) its phases."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    if split is None:
        command = [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv.pop(1));"
                   "sys.argv[0] = 'citerender'; from renderers.cli import main; main()",
                   str(ROOT), *args]
    else:
        command = [sys.executable, "-c", SHIM, str(ROOT), str(split), *args]
    subprocess.run(command, check=True, capture_output=True, timeout=600, env=child_env())
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    phases: dict[str, float] = {}
    if split is not None:
        found = json.loads(split.read_text("utf-8"))
        phases = dict(found["phases"])
        phases["start+exit"] = cpu - (found["accounted"] - found["started"])
    return cpu, wall, phases


def measure(label: str, args: list[str], runs: int, work: Path) -> None:
    """``runs`` plain and ``runs`` instrumented processes, interleaved; medians printed."""
    run(args, None)  # untimed: writes the bytecode caches
    plain: list[tuple[float, float]] = []
    splits: list[dict[str, float]] = []
    for _ in range(runs):
        cpu, wall, _ = run(args, None)
        plain.append((cpu, wall))
        splits.append(run(args, work / "split.json")[2])
    cpu = statistics.median(c for c, _ in plain)
    wall = statistics.median(w for _, w in plain)
    parts = " ".join(
        f"{name} {statistics.median(s.get(name, 0.0) for s in splits):.3f}" for name in PHASES
    )
    print(f"{label}: CPU {cpu:.3f} s, wall {wall:.3f} s (medians of {runs})")
    print(f"  split (s): {parts}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    runs = max(1, args.runs)
    print(f"before: load average {load_average()} (1/5/15 min) on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="startup-bench-") as tmp:
        work = Path(tmp)
        note = work / "note.md"
        note.write_text("A one-paragraph note that cites one source [[S:1]].\n", "utf-8")
        (work / "note.pool.json").write_text(
            json.dumps([{"sid": 1, "url": "https://www.iea.org/", "title": "IEA"}]), "utf-8"
        )
        typst = ["--to", "pdf", "--out", str(work / "out"), "--pdf-engine", "typst"]
        measure(f"{SAMPLE.name} (50 pages)", ["render", str(SAMPLE), "--pool", str(POOL), *typst],
                runs, work)
        measure("one-paragraph note", ["render", str(note), *typst], runs, work)
    print(f"after: load average {load_average()}")


if __name__ == "__main__":
    main()
