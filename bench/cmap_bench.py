"""Font coverage benchmark: the PPTX writer's own ``cmap`` reader vs fontTools' ``getBestCmap``.

Usage: ``.venv/bin/python bench/cmap_bench.py [--runs 5]``

Each measurement runs in a fresh child process (as a cold render does: fontTools not yet
imported), interleaved A/B, for two face sets: the four faces of a plain deck (sans regular,
bold, italic; mono regular) and every face the writer may measure (fallbacks with CJK
included). A third child lays out and writes a small deck, for scale. Prints the median CPU and
wall seconds of the coverage work inside each child (fontTools' import included) and the ratios.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from report import load_average

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, sys, time
from renderers import fonts
mode, which = sys.argv[1], sys.argv[2]
choice = fonts.default_fonts()
typical = [choice.sans_files["regular"], choice.sans_files["bold"], choice.sans_files["italic"],
           choice.mono_files["regular"]]
every = sorted({*choice.sans_files.values(), *choice.mono_files.values(),
                *(p for p in (fonts.find_font((n,)) for n in fonts.FALLBACK_FILES) if p)})
paths = typical if which == "typical" else every
if mode == "deck":
    from citations.pool import SourcePool
    from renderers.options import RenderOptions
    from renderers.readers.markdown import read_markdown
    from renderers.resolve import resolve
    from renderers.writers.pptx.output import pptx_bytes
    pool = SourcePool.from_rows([{"sid": 1, "title": "A", "url": "https://a.org"}])
    rdoc = resolve(read_markdown("# T\n\n## S\n\nText *em* **b** `c` [[S:1]].\n\n- x\n"), pool)
cpu, wall = time.process_time(), time.perf_counter()
if mode == "own":
    for path in paths:
        fonts.coverage(path)
elif mode == "fonttools":
    for path in paths:
        fonts.coverage_fonttools(path)
else:
    pptx_bytes(rdoc, RenderOptions())
print(json.dumps([time.process_time() - cpu, time.perf_counter() - wall]))
"""


def child(mode: str, which: str) -> tuple[float, float]:
    """CPU and wall seconds of one measurement in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", CHILD, mode, which], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    cpu, wall = json.loads(out.strip().splitlines()[-1])
    return cpu, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"load average: {load_average()}")
    child("own", "typical")  # warm the bytecode caches
    deck = [child("deck", "typical") for _ in range(args.runs)]
    deck_cpu = statistics.median(c for c, _ in deck)
    print(f"small deck, layout + write: CPU {deck_cpu:.4f} s, "
          f"wall {statistics.median(w for _, w in deck):.4f} s")
    for which in ("typical", "every"):
        samples: dict[str, list[tuple[float, float]]] = {"own": [], "fonttools": []}
        for _ in range(args.runs):
            for mode in samples:
                samples[mode].append(child(mode, which))
        cpu = {m: statistics.median(c for c, _ in s) for m, s in samples.items()}
        wall = {m: statistics.median(w for _, w in s) for m, s in samples.items()}
        print(f"{which} faces: own CPU {cpu['own']:.4f} s wall {wall['own']:.4f} s | "
              f"fontTools CPU {cpu['fonttools']:.4f} s wall {wall['fonttools']:.4f} s | "
              f"fontTools/own CPU {cpu['fonttools'] / max(cpu['own'], 1e-6):.1f}x "
              f"wall {wall['fonttools'] / max(wall['own'], 1e-6):.1f}x | "
              f"fontTools extra vs small deck CPU "
              f"{(cpu['fonttools'] - cpu['own']) / max(deck_cpu, 1e-6):.1f}x")


if __name__ == "__main__":
    main()
