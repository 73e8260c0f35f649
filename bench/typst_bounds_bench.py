"""How the Typst engine's compile grows with a document's total inline pieces and table cells.

Usage: ``.venv/bin/python bench/typst_bounds_bench.py [CASE ...]``

Typst's compile is one call that ``limits.max_seconds`` cannot interrupt, so the Typst writer
refuses, before compiling, a document whose pieces (``renderers.writers.typst.bounds``) would
cost more than about the default ``max_seconds`` and a few hundred MiB. Each case runs in its
own process, which reports the pieces and cells counted, the compile's wall and CPU time and
the process's peak resident memory (VmHWM) — the figures written beside the bound.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "long-report.md"
POOL = ROOT / "samples" / "long-report.pool.json"


def table(rows: int, cols: int, cell: str) -> str:
    """A markdown table of ``rows`` × ``cols`` cells, each ``cell``."""
    head = "|" + "a|" * cols + "\n|" + "-|" * cols + "\n"
    return head + ("|" + f"{cell}|" * cols + "\n") * rows


def paragraphs(count: int, line: str) -> str:
    """``count`` paragraphs of ``line`` (``{n}`` in it is the paragraph's number, 1 …)."""
    return "\n\n".join(line.replace("{n}", str(n + 1)) for n in range(count))


CASES = {
    "table-1000x50-cited": lambda: table(1000, 50, "x [[S:1]]"),
    "table-500x50-cited": lambda: table(500, 50, "x [[S:1]]"),
    "table-250x50-cited": lambda: table(250, 50, "x [[S:1]]"),
    "table-266x50-cited": lambda: table(266, 50, "x [[S:1]]"),  # at the bound
    "table-1000x50-plain": lambda: table(1000, 50, "x"),
    "table-500x50-plain": lambda: table(500, 50, "x"),
    "table-2000x10-plain": lambda: table(2000, 10, "x"),
    "paras-20000-cited": lambda: paragraphs(20_000, "Some words here [[S:1]] and more."),
    "paras-40000-cited": lambda: paragraphs(40_000, "Some words here [[S:1]] and more."),
    "paras-50000-plain": lambda: paragraphs(50_000, "x"),
    "paras-100000-plain": lambda: paragraphs(100_000, "x"),
    "paras-2000-cite50": lambda: paragraphs(2_000, "x [[S:1]] " * 50),
    "sources-20000": lambda: paragraphs(20_000, "x [[S:{n}]]"),
    "sources-5000": lambda: paragraphs(5_000, "x [[S:{n}]]"),
    "sources-4000": lambda: paragraphs(4_000, "x [[S:{n}]]"),  # at the bound
    "code-10000-lines": lambda: "```python\n" + "x = f(1, 'a')  # c\n" * 10_000 + "```\n",
    "code-40000-lines": lambda: "```python\n" + "x = f(1, 'a')  # c\n" * 40_000 + "```\n",
    "long-report": lambda: SAMPLE.read_text("utf-8"),
    "long-report-x10": lambda: "\n\n".join([SAMPLE.read_text("utf-8")] * 10),
}

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from citations.pool import SourcePool
from renderers.document import Table, inline_runs, iter_blocks, walk_inlines
from renderers.options import RenderOptions
from renderers.readers.markdown import read_markdown
from renderers.resolve import resolve
from renderers.writers.typst.bounds import document_pieces
from renderers.writers.typst.markup import typst_source
from renderers.writers.typst.writer import compile_source
text = sys.stdin.read()
options = RenderOptions()
rdoc = resolve(read_markdown(text, limits=options.limits), SourcePool.coerce(sys.argv[2]))
blocks = rdoc.document.blocks
inlines = sum(1 for run in inline_runs(blocks) for _ in walk_inlines(run))
cells = sum(len(b.header) + sum(len(r) for r in b.rows)
            for b in iter_blocks(blocks) if isinstance(b, Table))
import renderers.writers.typst.markup as markup
markup.check_document_pieces = lambda *args: None  # measure what the bound would refuse
source = typst_source(rdoc, options)
wall, cpu = time.perf_counter(), time.process_time()
pages, _ = compile_source(source, options, stamp=None)
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
peak = next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM'))
print(json.dumps({"inlines": inlines, "cells": cells, "entries": len(rdoc.entries),
                  "weighed": document_pieces(blocks, len(rdoc.entries)),
                  "wall": wall, "cpu": cpu, "peak_mib": peak / 1024,
                  "pdf_bytes": len(pages[0])}))
"""


def measure(name: str) -> dict[str, object]:
    text = CASES[name]()
    sids = {int(m) for m in re.findall(r"\[\[S:(\d+)\]\]", text)}
    with tempfile.TemporaryDirectory() as work:
        pool = Path(work) / "pool.json"  # every sid the case cites, or the sample's pool
        rows = [{"sid": sid, "title": f"Source {sid}", "url": f"https://example.com/{sid}"}
                for sid in sorted(sids)]
        pool.write_text(json.dumps(rows) if len(sids) > 120 else POOL.read_text("utf-8"))
        done = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), str(pool)], input=text,
                              capture_output=True, text=True, timeout=1800, check=False)
    if done.returncode:
        return {"error": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout)


def main() -> None:
    names = sys.argv[1:] or list(CASES)
    for name in names:
        started = time.perf_counter()
        result = measure(name)
        print(f"{name}: {json.dumps(result)} ({time.perf_counter() - started:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
