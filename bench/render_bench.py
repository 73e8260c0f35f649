"""PDF/PNG benchmark: a 50-page cited report (≈26,000 words, 500 citations, 120 sources).

Usage: ``.venv/bin/python bench/render_bench.py [--runs 2] [--warm-rounds 20]``

Prints, measured A/B in one run (best of ``--runs``, alternating), wall-clock and CPU time
(user + system of every thread and waited-for child) with the load average, since a shared
machine stretches wall time but hardly CPU time:
  1. our ``render(..., formats="pdf")`` vs ``pandoc --pdf-engine=weasyprint`` (goal ≤ 0.7×);
  2. our PDF writer vs plain WeasyPrint on the same HTML (goal ≤ 1.05×);
  3. PNG of every page at 150 dpi (goal ≤ 1.5 s) and the share spent encoding;
  4. pdf+png+html+md in one call vs pdf alone (goal ≤ 1.3×);
  5. peak memory (VmHWM) of a child process rendering the PDF (goal ≤ 250 MiB);
  6. a warm process rendering a 5-page report to PDF again and again, as a service worker
     does, with the report's stylesheets parsed once (``parsed_rules``) vs parsed for every
     render as before (medians of ``--warm-rounds`` renders each, alternating).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pypdfium2 as pdfium  # noqa: E402
from weasyprint import HTML  # noqa: E402

import renderers.writers.pdf  # noqa: E402
from citations.pool import SourcePool  # noqa: E402
from renderers.api import render  # noqa: E402
from renderers.options import RenderOptions  # noqa: E402
from renderers.readers.markdown import read_markdown  # noqa: E402
from renderers.resolve import resolve  # noqa: E402
from renderers.writers.html.report import render_html  # noqa: E402
from renderers.writers.pdf import parsed_rules, pdf_bytes  # noqa: E402
from renderers.writers.png import ENCODE_WORKERS, encode_png, png_pages, rasterize  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from report import load_average, make_pool, make_report  # noqa: E402


@dataclass(frozen=True)
class Timing:
    """Wall-clock and CPU seconds (user + system, this process and its waited-for children)."""

    wall: float
    cpu: float

    def __str__(self) -> str:
        return f"{self.wall:6.2f} s (CPU {self.cpu:6.2f} s)"


def _cpu_now() -> float:
    """CPU seconds so far, to the microsecond (``os.times`` counts 10 ms clock ticks, too coarse
    for the benches that take tens of milliseconds)."""
    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                           resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(fn: Callable[[], object]) -> Timing:
    """One run of ``fn``: wall and CPU time (all threads; children such as pandoc included)."""
    wall, cpu = time.perf_counter(), _cpu_now()
    fn()
    return Timing(time.perf_counter() - wall, _cpu_now() - cpu)


def best(fn: Callable[[], object], runs: int) -> Timing:
    """The fastest of ``runs`` runs (by wall time; CPU of that same run)."""
    return min((timed(fn) for _ in range(runs)), key=lambda t: t.wall)


def ab(a: Callable[[], object], b: Callable[[], object], runs: int) -> tuple[Timing, Timing]:
    """Best runs of ``a`` and ``b``, measured alternately."""
    ta, tb = [], []
    for _ in range(runs):
        ta.append(timed(a))
        tb.append(timed(b))
    return min(ta, key=lambda t: t.wall), min(tb, key=lambda t: t.wall)


def ratios(a: Timing, b: Timing) -> str:
    """``a / b`` by wall and by CPU time."""
    return f"ratio {a.wall / b.wall:.2f}x wall, {a.cpu / b.cpu:.2f}x CPU"


def median(timings: list[Timing]) -> Timing:
    """The median wall and the median CPU time of ``timings``."""
    return Timing(statistics.median(t.wall for t in timings),
                  statistics.median(t.cpu for t in timings))


@contextmanager
def rules_parsed_per_render() -> Iterator[None]:
    """Renders inside parse the report's stylesheets each time, as before they were kept."""
    renderers.writers.pdf.parsed_rules = parsed_rules.__wrapped__  # type: ignore[assignment]
    try:
        yield
    finally:
        renderers.writers.pdf.parsed_rules = parsed_rules


def warm_renders(
    render_once: Callable[[], bytes], rounds: int
) -> tuple[Timing, Timing, Timing]:
    """Median timings of ``render_once`` in a warm process with the report's stylesheets parsed
    once and parsed per render, alternating (ABBA), and the median of each round's difference
    (per render minus once: steadier than the difference of medians on a busy machine, which
    slows both renders of a round alike); both must give the same bytes."""
    def per_render() -> bytes:
        with rules_parsed_per_render():
            return render_once()

    expected = render_once()
    if per_render() != expected:
        raise RuntimeError("the PDF differs with the stylesheets parsed per render")
    kept: list[Timing] = []
    parsed: list[Timing] = []
    for index in range(rounds):
        pair = [(kept, render_once), (parsed, per_render)]
        for timings, fn in pair if index % 2 == 0 else pair[::-1]:
            timings.append(timed(fn))
    saved = [Timing(p.wall - k.wall, p.cpu - k.cpu) for k, p in zip(kept, parsed, strict=True)]
    return median(kept), median(parsed), median(saved)


def pandoc_pdf(markdown: Path, out: Path) -> Callable[[], object]:
    env = {**os.environ, "PATH": f"{ROOT / '.venv' / 'bin'}:{os.environ.get('PATH', '')}"}

    def run() -> object:
        return subprocess.run(
            ["pandoc", str(markdown), "-o", str(out), "--pdf-engine=weasyprint",
             "--metadata", "title=Report"],
            check=True, capture_output=True, env=env, timeout=600,
        )

    return run


def pipeline(content: str, rows: list[dict[str, object]], formats: list[str], out: Path) -> None:
    """Parse once, render many (what ``render`` does, minus sources_used.json)."""
    from renderers.writers.markdown import markdown_text

    out.mkdir(parents=True, exist_ok=True)
    options = RenderOptions(base_dir=out, out_dir=out)
    rdoc = resolve(read_markdown(content), SourcePool.from_rows(rows))
    html = render_html(rdoc, options)
    pdf = pdf_bytes(html, options) if {"pdf", "png"} & set(formats) else b""
    if "pdf" in formats:
        (out / "report.pdf").write_bytes(pdf)
    if "png" in formats:
        for number, png in enumerate(png_pages(pdf, options), start=1):
            (out / f"report-{number}.png").write_bytes(png)
    if "html" in formats:
        (out / "report.html").write_text(html, "utf-8")
    if "md" in formats:
        (out / "report.md").write_text(markdown_text(rdoc, options), "utf-8")


def child_peak_mib(content: Path, pool: Path, out: Path) -> float:
    code = (
        "import json,sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]);"
        "from bench.render_bench import pipeline;"
        "pipeline(Path(sys.argv[2]).read_text('utf-8'),"
        " json.loads(Path(sys.argv[3]).read_text('utf-8')), ['pdf'], Path(sys.argv[4]));"
        "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')))"
    )
    # The child reports its own high-water mark (VmHWM, KiB). Not ru_maxrss: Linux carries the
    # parent's peak across fork+exec into it, and RUSAGE_CHILDREN includes pandoc's weasyprint.
    done = subprocess.run(
        [sys.executable, "-c", code, str(ROOT), str(content), str(pool), str(out)],
        check=True, timeout=600, capture_output=True, text=True,
    )
    return int(done.stdout.split()[-1]) / 1024  # Linux: KiB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--warm-rounds", type=int, default=20)
    args = parser.parse_args()
    runs = max(1, args.runs)
    work = Path(tempfile.mkdtemp(prefix="render-bench-"))
    try:
        content, rows = make_report(), make_pool()
        (work / "report.md").write_text(content, "utf-8")
        (work / "pool.json").write_text(json.dumps(rows), "utf-8")
        rdoc = resolve(read_markdown(content), SourcePool.from_rows(rows))
        options = RenderOptions()
        html = render_html(rdoc, options)
        pdf = pdf_bytes(html, options)
        pages = len(pdfium.PdfDocument(pdf))
        cites = content.count("[[S:")
        print(f"report: {len(content.split())} words, {cites} citations, {len(rows)} sources, "
              f"{pages} pages, HTML {len(html) // 1024} KiB, PDF {len(pdf) // 1024} KiB")

        print(f"before: load average {load_average()} (1/5/15 min) on {os.cpu_count()} cores")

        def ours(formats: str, name: str) -> Callable[[], object]:
            return lambda: render(content, work / name, formats=formats, sources_pool=rows)

        # 1. ours vs pandoc + weasyprint (pandoc gets our footnoted markdown: same document)
        from renderers.writers.markdown import markdown_text

        (work / "pandoc.md").write_text(markdown_text(rdoc, options), "utf-8")
        try:
            t_ours, t_pandoc = ab(ours("pdf", "o1"), pandoc_pdf(work / "pandoc.md",
                                                                   work / "pandoc.pdf"), runs)
            print(f"1. render --to pdf {t_ours} | pandoc --pdf-engine=weasyprint {t_pandoc} | "
                  f"{ratios(t_ours, t_pandoc)} (goal <= 0.7x)")
        except subprocess.CalledProcessError as exc:
            print(f"1. pandoc --pdf-engine=weasyprint failed: {exc.stderr.decode()[-400:]}")

        # 2. our PDF writer vs WeasyPrint alone on the same HTML
        t_writer, t_plain = ab(lambda: pdf_bytes(html, options),
                               lambda: HTML(string=html).write_pdf(), runs)
        print(f"2. pdf_bytes {t_writer} | WeasyPrint alone {t_plain} | "
              f"{ratios(t_writer, t_plain)} (goal <= 1.05x)")

        # 3. PNG of every page at 150 dpi: png_pages, and how much of it is encoding
        png_options = RenderOptions(dpi=150)
        t_png = best(lambda: png_pages(pdf, png_options), runs)
        document = pdfium.PdfDocument(pdf)
        rasters: list[tuple[memoryview, int, int]] = []
        t_raster = timed(lambda: rasters.extend(rasterize(document, i, 150)
                                                for i in range(len(document))))
        encoded: list[bytes] = []
        t_encode = timed(lambda: encoded.extend(encode_png(rows, width, height, 150)
                                                for rows, width, height in rasters))
        share = 100 * t_encode.cpu / (t_raster.cpu + t_encode.cpu)
        print(f"3. PNG {pages} pages @150 dpi {t_png} (goal <= 1.5 s), "
              f"{sum(map(len, encoded)) / 2**20:.1f} MiB; serially: rasterize {t_raster}, "
              f"encode {t_encode} = {share:.0f} % of the CPU time; encoding overlaps "
              f"rasterizing on {ENCODE_WORKERS} threads")

        # 4. four formats in one call vs PDF alone
        t_four, t_pdf = ab(ours("pdf,png,html,md", "o4"), ours("pdf", "o5"), runs)
        print(f"4. pdf+png+html+md {t_four} | pdf alone {t_pdf} | "
              f"{ratios(t_four, t_pdf)} (goal <= 1.3x)")

        # 5. peak memory of a child process rendering the PDF
        peak = child_peak_mib(work / "report.md", work / "pool.json", work / "o6")
        print(f"5. peak memory (child VmHWM) {peak:6.1f} MiB (goal <= 250 MiB)")

        # 6. warm repeated renders of a 5-page report: stylesheets parsed once vs per render
        short, short_rows = make_report(words=4_600, citations=40, sources=12), make_pool(12)

        def short_pdf() -> bytes:
            (result,) = render(short, work / "o7", formats="pdf", sources_pool=short_rows)
            return result.path.read_bytes()

        t_kept, t_parsed, t_saved = warm_renders(short_pdf, max(1, args.warm_rounds))
        print(f"6. warm 5-page PDF, median of {args.warm_rounds}: stylesheets parsed once "
              f"{t_kept} | per render {t_parsed} | {ratios(t_kept, t_parsed)}; saved per "
              f"render (median of pairs) {t_saved.cpu * 1000:.1f} ms CPU = "
              f"{100 * t_saved.cpu / t_parsed.cpu:.1f} %, {t_saved.wall * 1000:.1f} ms wall")
        print(f"after: load average {load_average()} (1/5/15 min) on {os.cpu_count()} cores")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
