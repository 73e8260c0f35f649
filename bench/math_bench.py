"""Benchmark of math reading and conversion (not a test): prints times and ratios against a peer.

1. read a ≈0.25 MB markdown with 4,000 inline and 400 displayed formulas (above the default
   ``max_formulas``), against the same text
   with every formula replaced by a word of the same length (the peer): what math costs the
   reader (parsing, checking each distinct formula once);
2. hostile delimiters: 20,000 unclosed ``\\(`` and 20,000 ``$a `` in one paragraph, against
   the same number of characters of prose (mdit-py-plugins' texmath took 5 s for the first);
3. one formula through every writer's converter: MathML, OMML, SVG, PNG (cache cleared).

Each figure is the median of several runs, as wall time and as CPU time of this process.
Run: ``.venv/bin/python bench/math_bench.py``.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from renderers.math import parse_tex
from renderers.math.mathml import mathml_markup
from renderers.math.omml import omml_math
from renderers.math.svg import draw_formula, formula_png
from renderers.options import Limits
from renderers.readers.markdown import read_markdown

FORMULAS = ["E = mc^{2}", "\\frac{a_{%d}}{b}", "\\sum_{i=1}^{%d} x_i^2", "\\sqrt{x + %d}",
            "\\int_0^{%d} e^{-t}\\,dt", "\\alpha_{%d} \\leq \\beta"]


def timed(work: Callable[[], object], runs: int = 5) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        work()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def documents() -> tuple[str, str]:
    rng = random.Random(3)
    with_math, peer = [], []
    for paragraph in range(400):
        words_a, words_b = [], []
        for _ in range(10):
            tex = rng.choice(FORMULAS).replace("%d", str(rng.randrange(50)))
            words_a.append(f"the value ${tex}$ grows with load and price")
            words_b.append(f"the value {'x' * (len(tex) + 2)} grows with load and price")
        display = f"$$\n\\frac{{P_{{{paragraph}}}}}{{2}}\n$$"
        with_math.append(" ".join(words_a) + "\n\n" + display)
        peer.append(" ".join(words_b) + "\n\n" + "y" * (len(display)))
    filler = "Plain prose about grids and storage. " * 40
    return ("\n\n".join(with_math) + "\n\n" + filler, "\n\n".join(peer) + "\n\n" + filler)


def line(label: str, ours: tuple[float, float], peer: tuple[float, float]) -> None:
    print(f"{label:44} wall {ours[0] * 1000:8.1f} ms vs {peer[0] * 1000:8.1f} ms "
          f"({ours[0] / peer[0]:.2f}×) · cpu {ours[1] * 1000:8.1f} ms vs "
          f"{peer[1] * 1000:8.1f} ms ({ours[1] / peer[1]:.2f}×)")


def main() -> None:
    limits = Limits(max_content_bytes=50_000_000, max_formulas=10_000)
    math_doc, peer_doc = documents()
    print(f"document: {len(math_doc) / 1e6:.2f} MB, 4,000 inline + 400 displayed formulas")
    parse_tex.cache_clear()
    def read_cold() -> object:
        parse_tex.cache_clear()
        return read_markdown(math_doc, limits=limits)

    line("read with formulas vs without (cold cache)",
         timed(read_cold, 3),
         timed(lambda: read_markdown(peer_doc, limits=limits), 3))
    hostile = "\\(" * 20_000 + " and $a " * 20_000  # no formula: within the default limits
    prose = "w" * len(hostile)
    line("20,000 unclosed \\( and $a vs prose", timed(lambda: read_markdown(hostile)),
         timed(lambda: read_markdown(prose)))
    tex = "\\mathrm{LCOE} = \\frac{\\sum_{t=0}^{N} C_t (1+d)^{-t}}{\\sum_{t=1}^{N} E_t (1+d)^{-t}}"

    def convert() -> None:
        parse_tex.cache_clear()
        draw_formula.cache_clear()
        formula_png.cache_clear()
        formula = parse_tex(tex, True)
        mathml_markup(formula)
        omml_math(formula)
        formula_png(formula)

    wall, cpu = timed(convert)
    print(f"{'one formula: TeX → MathML, OMML, SVG, PNG':44} wall {wall * 1000:8.1f} ms · "
          f"cpu {cpu * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
