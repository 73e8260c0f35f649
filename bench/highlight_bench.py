"""Syntax highlighting benchmark: what colouring code costs a render, and what its bounds cost.

Usage: ``.venv/bin/python bench/highlight_bench.py [--runs 3] [--fuzz]``

1. The benchmark report with 40 extra Python code blocks (≈600 lines of code), rendered to
   HTML, DOCX and PPTX with ``highlight_style="none"`` and ``"default"``, A/B interleaved in
   this process: CPU seconds (``time.process_time``), wall seconds and the ratio highlighted /
   plain per format (each render lexes every block; in one render the formats share it).
2. Lexing one block at the size bound (``MAX_CODE_CHARS``): realistic Python, then Make on
   lines at the line bound (quadratic within a line: what the line and document bounds
   allow), then the inputs that make the lexers
   :data:`renderers.writers.highlight.SLOW_LEXERS` quadratic across lines (why they are
   refused), each as a ratio to the Python peer.
3. ``--fuzz``: every Pygments lexer on 23 adversarial inputs at 250 and 1,000 characters; a
   lexer whose time grows more than 8× for 4× the input is listed (how the refused lexers were
   found). Takes about half an hour.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from pygments.lexers import get_lexer_by_name
from pygments.lexers._mapping import LEXERS
from report import load_average, make_pool, make_report

from citations.pool import SourcePool
from renderers.options import RenderOptions
from renderers.readers.markdown import read_markdown
from renderers.resolve import resolve
from renderers.writers.docx.writer import docx_bytes
from renderers.writers.highlight import (
    MAX_CODE_CHARS,
    MAX_DOCUMENT_CODE_CHARS,
    MAX_LINE_CHARS,
    SLOW_LEXERS,
    highlight_code,
)
from renderers.writers.html.report import render_html
from renderers.writers.pptx.output import pptx_bytes

SNIPPET = '''def levelized_cost(capex: float, opex: float, years: int = 20) -> float:
    """Levelized cost of a plant, in currency per MWh."""
    total = capex + sum(opex / (1.05 ** year) for year in range(1, years + 1))
    return round(total / (years * 8760 * 0.35), 2)  # capacity factor 35 %


class Portfolio:
    def __init__(self, plants: list[dict[str, float]]) -> None:
        self.plants = [p for p in plants if p.get("capacity", 0) > 0]

    def weighted(self) -> float:
        weights = [p["capacity"] for p in self.plants]
        return sum(w * levelized_cost(p["capex"], p["opex"])
                   for w, p in zip(weights, self.plants, strict=True)) / sum(weights)
'''


def measure(write: Callable[[RenderOptions], object], options: RenderOptions
            ) -> tuple[float, float]:
    """CPU and wall seconds of one call (every block lexed again: the cache that lets the
    formats of one render share the work is emptied first)."""
    highlight_code.cache_clear()
    cpu, wall = time.process_time(), time.perf_counter()
    write(options)
    return time.process_time() - cpu, time.perf_counter() - wall


def render_cost(runs: int) -> None:
    blocks = "\n\n".join(f"### Code {i}\n\n```python\n# block {i}\n{SNIPPET}\n```"
                         for i in range(40))
    markdown = make_report() + "\n\n## Appendix: code\n\n" + blocks
    rdoc = resolve(read_markdown(markdown), SourcePool.from_rows(make_pool()))
    writers: dict[str, Callable[[RenderOptions], object]] = {
        "html": lambda o: render_html(rdoc, o),
        "docx": lambda o: docx_bytes(rdoc, o),
        "pptx": lambda o: pptx_bytes(rdoc, o),
    }
    print(f"1. render cost, {runs} runs A/B interleaved (load {load_average()})")
    plain_options = RenderOptions(highlight_style="none")
    coloured_options = RenderOptions(highlight_style="default")
    for fmt, write in writers.items():
        plain: list[tuple[float, float]] = []
        coloured: list[tuple[float, float]] = []
        write(coloured_options)  # warm caches (lexer, style)
        for _ in range(runs):
            plain.append(measure(write, plain_options))
            coloured.append(measure(write, coloured_options))
        cpu_a = statistics.median(c for c, _ in plain)
        cpu_b = statistics.median(c for c, _ in coloured)
        wall_a = statistics.median(w for _, w in plain)
        wall_b = statistics.median(w for _, w in coloured)
        print(f"   {fmt}: plain {cpu_a:.2f} s CPU / {wall_a:.2f} s wall, highlighted "
              f"{cpu_b:.2f} s / {wall_b:.2f} s: {cpu_b / cpu_a:.2f}x CPU, "
              f"{wall_b / wall_a:.2f}x wall")


def lex_seconds(language: str, text: str) -> float:
    lexer = get_lexer_by_name(language, stripnl=False, ensurenl=True)
    cpu = time.process_time()
    for _ in lexer.get_tokens(text):
        pass
    return time.process_time() - cpu


def bound_cost() -> None:
    python = (SNIPPET * (MAX_CODE_CHARS // len(SNIPPET) + 1))[:MAX_CODE_CHARS]
    peer = lex_seconds("python", python)
    print(f"2. one block at the bound ({MAX_CODE_CHARS:,} characters): python {peer:.3f} s CPU")
    long_lines = ("a" * (MAX_LINE_CHARS - 1) + "\n") * (MAX_CODE_CHARS // MAX_LINE_CHARS)
    seconds = lex_seconds("make", long_lines[:MAX_CODE_CHARS])
    print(f"   make (quadratic within a line) on {MAX_CODE_CHARS // MAX_LINE_CHARS} lines of "
          f"{MAX_LINE_CHARS - 1} letters: {seconds:.3f} s CPU, {seconds / peer:.1f}x python; "
          f"the document budget allows {MAX_DOCUMENT_CODE_CHARS // MAX_CODE_CHARS} such blocks")
    blank_lines = (" \n" * MAX_CODE_CHARS)[: MAX_CODE_CHARS // 10]
    for name in sorted(SLOW_LEXERS):
        seconds = lex_seconds(name, blank_lines)
        print(f"   refused lexer {name} on a tenth of that ({len(blank_lines):,} characters of "
              f"blank lines): {seconds:.3f} s CPU, {seconds / peer:.1f}x the whole python block")


def fuzz() -> None:
    printable = "".join(chr(c) for c in range(32, 127))

    def inputs(n: int) -> dict[str, str]:
        rng = random.Random(1)
        return {
            "a": "a" * n, "bs": '"' + "\\" * n, "cm": "/*" * (n // 2), "lt": "<" * n,
            "par": "(" * n, "sq": "'" + "a " * (n // 2), "dig": "1" * n, "sp": " " * n,
            "hash": "#" * n, "dollar": "$(" * (n // 2), "brace": "{" * n,
            "rand": "".join(rng.choice(printable) for _ in range(n)), "dq": '"a' * (n // 2),
            "bt": "`" * n, "dot": "." * n, "dash": "-" * n, "colon": ":" * n, "star": "*" * n,
            "ws_nl": " \n" * (n // 2), "eq": "=" * n, "ab": "a." * (n // 2),
            "au": "a_" * (n // 2), "sl": "/" * n,
        }

    small, big = inputs(250), inputs(1000)
    print("3. lexers whose time grows more than 8x for 4x the input:")
    for _, _, aliases, _, _ in sorted(LEXERS.values()):
        if not aliases:
            continue
        for kind, text in small.items():
            short = lex_seconds(aliases[0], text)
            if short > 0.004:
                long = lex_seconds(aliases[0], big[kind])
                if long > 8 * short or long > 0.2:
                    print(f"   {aliases[0]} on {kind!r}: {short:.4f} s -> {long:.4f} s",
                          flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--fuzz", action="store_true")
    args = parser.parse_args()
    render_cost(args.runs)
    bound_cost()
    if args.fuzz:
        fuzz()


if __name__ == "__main__":
    main()
