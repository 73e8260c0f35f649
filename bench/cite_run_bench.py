"""How a PDF's cost grows with a run of adjacent citations in one paragraph.

Usage: ``.venv/bin/python bench/cite_run_bench.py [--sizes 1000 2000 4000 6000]
[--engines weasyprint typst] [--sources 500] [--root CHECKOUT]``

One paragraph holds N tokens with nothing between them (``[[S:1]][[S:2]]…``): joined marks, one
run. They cycle over 500 sources, so that the Sources section stays the same size and the
growth is the run's; ``--sources 0`` cites a source of its own with each token.

Each case renders in its own process, which reports the CPU seconds (user + system, all
threads) of writing the PDF, and the PDF's pages. Printed beside each: the time per 1,000
tokens and the growth from the smallest case (time ratio over size ratio: about 1 when the
cost is linear, less while fixed costs dominate). ``--root`` measures another checkout (the
code before a change) with the same cases. The Typst engine refuses a paragraph of more than
5,000 inline pieces (``renderers.writers.typst.bounds``), so it shows no 6,000 case.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = 500

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from citations.pool import SourcePool
from renderers.options import RenderOptions
from renderers.readers.markdown import read_markdown
from renderers.resolve import resolve
count, sources, engine = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
tokens = "".join(f"[[S:{i % sources + 1}]]" for i in range(count))
text = f"Claims cited many times over.{tokens} After the run.\n"
rows = [{"sid": s, "title": f"Source {s}", "url": f"https://example.org/{s}"}
        for s in range(1, sources + 1)]
options = RenderOptions(pdf_engine=engine)
rdoc = resolve(read_markdown(text, limits=options.limits), SourcePool.from_rows(rows))
cpu = time.process_time()
if engine == "typst":
    from renderers.writers.typst.writer import typst_pdf
    pdf = typst_pdf(rdoc, options)[0]
else:
    from renderers.writers.html.report import print_report
    from renderers.writers.pdf import report_pdf_bytes
    pdf = report_pdf_bytes(print_report(rdoc, options), options)
cpu = time.process_time() - cpu
import pypdfium2 as pdfium
pages = len(pdfium.PdfDocument(pdf))
print(json.dumps({"cpu": cpu, "pages": pages}))
"""


def measure(
    root: Path, count: int, engine: str, timeout: float, sources: int = SOURCES
) -> dict[str, object]:
    """One case in a fresh process: its CPU seconds, or the error it ended with."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(root), str(count), str(sources or count), engine],
            capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout:.0f} s"}
    if done.returncode:
        return {"error": (done.stderr.strip().splitlines() or ["?"])[-1]}
    return dict(json.loads(done.stdout))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 4000, 6000])
    parser.add_argument("--engines", nargs="+", default=["weasyprint", "typst"])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per case")
    parser.add_argument("--sources", type=int, default=SOURCES,
                        help="sources the tokens cycle over (0: one per token)")
    args = parser.parse_args()
    print(f"checkout: {args.root}; sources: {args.sources or 'one per token'}")
    for engine in args.engines:
        first: tuple[int, float] | None = None
        for count in args.sizes:
            result = measure(args.root, count, engine, args.timeout, args.sources)
            if "error" in result:
                print(f"{engine:10} {count:6} tokens: {result['error']}", flush=True)
                continue
            cpu = float(str(result["cpu"]))
            first = first or (count, cpu)
            growth = (cpu / first[1]) / (count / first[0])
            print(f"{engine:10} {count:6} tokens: CPU {cpu:7.2f} s, "
                  f"{1000 * cpu / count:5.2f} s per 1,000, growth {growth:4.2f}, "
                  f"{result['pages']} pages", flush=True)


if __name__ == "__main__":
    main()
