"""The Typst PDF engine against WeasyPrint: the 50-page sample report, in one run.

Usage: ``.venv/bin/python bench/typst_bench.py [--runs 2] [--skip-service]``

Every peer runs as its own process (the ``citerender`` CLI, or pandoc), and each is charged the
CPU time of its whole process tree (user + system of the process and every child it waited
for: pandoc's WeasyPrint included), besides wall time. Our CLI runs with bytecode caches on,
as an installed package does (a first, untimed run of each engine writes them). Printed, with
the load average:

  1. ``render --pdf-engine typst`` vs pandoc ``--citeproc`` + WeasyPrint on the same document
     (pandoc gets the citations as ``[@id]`` and the pool as CSL-JSON, with link-citations)
     — goal ≤ 0.1×;
  2. ``--pdf-engine typst`` vs our WeasyPrint engine — goal ≤ 0.1×;
  3. PNG of every page at 150 dpi from the Typst PDF: pypdfium2 (what the PNG writer does) and,
     for the record, Typst's own PNG export — goal ≤ 0.5 s;
  4. warm service p50 for a 5-page PDF with the Typst engine — goal ≤ 0.1 s;
  5. a 500-page report (the sample ten times) vs the 50-page one — goal ≤ 11×;
  6. peak memory (VmHWM) of a process rendering each report with each engine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from render_bench import ab, best, ratios  # noqa: E402
from report import child_env, load_average  # noqa: E402

from citations.pool import SourcePool  # noqa: E402
from citations.tokens import scan  # noqa: E402
from renderers.options import RenderOptions  # noqa: E402
from renderers.readers.markdown import read_markdown  # noqa: E402
from renderers.resolve import resolve  # noqa: E402
from renderers.writers.png import png_pages  # noqa: E402
from renderers.writers.typst.markup import typst_source  # noqa: E402
from renderers.writers.typst.writer import compile_source, typst_pdf  # noqa: E402

SAMPLE = ROOT / "samples" / "long-report.md"
POOL = ROOT / "samples" / "long-report.pool.json"
CLI = ROOT / ".venv" / "bin" / "citerender"


def cli(document: Path, out: Path, engine: str) -> Callable[[], object]:
    """A ``citerender render`` process for one engine."""

    def run() -> object:
        return subprocess.run(
            [str(CLI), "render", str(document), "--pool", str(POOL), "--to", "pdf",
             "--out", str(out), "--pdf-engine", engine],
            check=True, capture_output=True, timeout=1800, env=child_env(),
        )

    return run


def pandoc_markdown(text: str) -> str:
    """``text`` with every citation token as a pandoc citation (``[@s1; @s3]``)."""
    pieces: list[str] = []
    last = 0
    for token in scan(text, syntax="markdown"):
        if token.in_code or token.error or not token.sids:
            continue
        keys = "; ".join(f"@s{sid}" for sid in token.sids)
        pieces += [text[last : token.start], "" if token.kind == "usage" else f"[{keys}]"]
        last = token.end
    pieces.append(text[last:])
    return "".join(pieces)


def csl_json(pool: SourcePool) -> list[dict[str, object]]:
    """The pool as CSL-JSON items (id ``s<sid>``) for pandoc's citeproc."""
    items: list[dict[str, object]] = []
    for source in pool:
        item: dict[str, object] = {"id": f"s{source.sid}", "type": "webpage",
                                   "title": source.title or f"Source {source.sid}"}
        if source.url:
            item["URL"] = source.url
        if source.date[:4].isdigit():
            parts = [int(p) for p in source.date.split("-")[:3] if p.isdigit()]
            item["issued"] = {"date-parts": [parts]}
        items.append(item)
    return items


def pandoc_citeproc(markdown: Path, bibliography: Path, out: Path) -> Callable[[], object]:
    """pandoc ``--citeproc`` with link-citations, typeset by WeasyPrint."""
    env = {**child_env(), "PATH": f"{ROOT / '.venv' / 'bin'}:{os.environ.get('PATH', '')}"}

    def run() -> object:
        return subprocess.run(
            ["pandoc", str(markdown), "-o", str(out), "--citeproc",
             "--bibliography", str(bibliography), "--metadata", "link-citations=true",
             "--metadata", "title=Report", "--pdf-engine=weasyprint"],
            check=True, capture_output=True, env=env, timeout=1800,
        )

    return run


def child_peak_mib(document: Path, engine: str, out: Path) -> float:
    """Peak resident memory (VmHWM) of a process rendering ``document`` with ``engine``.

    The child reports its own high-water mark: ``ru_maxrss`` would carry the parent's peak
    across fork+exec."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from renderers.api import render_file;"
        "render_file(sys.argv[2], sys.argv[3], sources_pool=sys.argv[4], formats=['pdf'],"
        " pdf_engine=sys.argv[5]);"
        "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(ROOT), str(document), str(out), str(POOL), engine],
        check=True, timeout=1800, capture_output=True, text=True,
    )
    return int(done.stdout.split()[-1]) / 1024  # Linux: KiB


def service_p50(pages: int, requests: int) -> tuple[float, float, float, int]:
    """Warm single-client p50 and p95 (seconds) for a ``pages``-page Typst PDF, the service's
    CPU seconds per render, and the PDF's pages."""
    import httpx
    from service_bench import Service, calibrate, load, metered

    service = Service(8765, 1)
    try:
        service.wait_ready()
        payload = calibrate(service.url, pages) | {"pdf_engine": "typst"}
        answer = httpx.post(service.url + "/render", json=payload, timeout=180,
                            headers={"Accept": "application/json"}).json()
        asyncio.run(load(service.url, payload, 1, 3))  # warm
        run = metered(service, payload, 1, requests)
        return run.pct(0.5), run.pct(0.95), run.cpu_per_render, int(answer["stats"]["pages"])
    finally:
        service.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--skip-service", action="store_true")
    args = parser.parse_args()
    runs = max(1, args.runs)
    work = Path(tempfile.mkdtemp(prefix="typst-bench-"))
    try:
        text = SAMPLE.read_text("utf-8")
        pool = SourcePool.coerce(str(POOL))
        rdoc = resolve(read_markdown(text), pool)
        pdf, pages, _ = typst_pdf(rdoc, RenderOptions())
        print(f"report: {SAMPLE.name}, {len(text.split())} words, {text.count('[[S:')} "
              f"citations, {len(pool)} sources, {pages} pages with Typst")
        print(f"before: load average {load_average()} (1/5/15 min) on {os.cpu_count()} cores")

        # 1. and 2.: three processes on the same document
        (work / "pandoc.md").write_text(pandoc_markdown(text), "utf-8")
        (work / "pool.csl.json").write_text(json.dumps(csl_json(pool)), "utf-8")
        typst_run = cli(SAMPLE, work / "typst", "typst")
        for warm_up in (typst_run, cli(SAMPLE, work / "weasy", "weasyprint")):
            warm_up()  # untimed: writes the bytecode caches, as installing a package does
        t_typst, t_pandoc = ab(typst_run, pandoc_citeproc(work / "pandoc.md",
                                                          work / "pool.csl.json",
                                                          work / "pandoc.pdf"), runs)
        print(f"1. render --pdf-engine typst {t_typst} | pandoc --citeproc + WeasyPrint "
              f"{t_pandoc} | {ratios(t_typst, t_pandoc)} (goal <= 0.1x)")
        t_typst2, t_weasy = ab(typst_run, cli(SAMPLE, work / "weasy", "weasyprint"), runs)
        print(f"2. render --pdf-engine typst {t_typst2} | --pdf-engine weasyprint {t_weasy} | "
              f"{ratios(t_typst2, t_weasy)} (goal <= 0.1x)")

        # 3. PNG of every page at 150 dpi
        options = RenderOptions(dpi=150)
        t_pdfium = best(lambda: png_pages(pdf, options), runs)
        source = typst_source(rdoc, options)
        t_own = best(lambda: compile_source(source, options, stamp=None, output="png"), runs)
        print(f"3. PNG {pages} pages @150 dpi from the Typst PDF: pypdfium2 {t_pdfium} "
              f"(goal <= 0.5 s) | Typst's own PNG export (layout cached in-process) {t_own} | "
              f"{ratios(t_pdfium, t_own)}")

        # 4. warm service
        if not args.skip_service:
            p50, p95, cpu, got = service_p50(5, args.requests)
            print(f"4. warm service, {got}-page PDF with Typst: p50 {p50:.3f} s, p95 {p95:.3f} s,"
                  f" service CPU {cpu:.3f} s per render (goal p50 <= 0.1 s)")

        # 5. ten times the report
        big = work / "long-report-x10.md"
        big.write_text("\n\n".join([text] * 10), "utf-8")
        t_big = best(cli(big, work / "big", "typst"), runs)
        t_small = best(typst_run, runs)
        print(f"5. 500-page report {t_big} | 50-page {t_small} | "
              f"{ratios(t_big, t_small)} (goal <= 11x)")

        # 6. peak memory
        peaks = {
            (name, engine): child_peak_mib(document, engine, work / f"peak-{name}-{engine}")
            for name, document in (("50-page", SAMPLE), ("500-page", big))
            for engine in ("typst", "weasyprint")
            if not (name == "500-page" and engine == "weasyprint")
        }
        print("6. peak memory (child VmHWM): " + ", ".join(
            f"{name} {engine} {mib:.0f} MiB" for (name, engine), mib in peaks.items()))
        print(f"after: load average {load_average()} (1/5/15 min) on {os.cpu_count()} cores")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    started = time.perf_counter()
    main()
    print(f"bench took {time.perf_counter() - started:.0f} s")
