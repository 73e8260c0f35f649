"""What the bidi run pass (``renderers/writers/html/bidi.py``) costs the HTML writer.

Usage: ``.venv/bin/python bench/bidi_bench.py [--runs 5]``; to measure another checkout (the
code before a change) with the same cases: ``PYTHONPATH=/path/to/checkout python
bench/bidi_bench.py`` (the checkout measured is printed first).

Prints, best of ``--runs`` (alternating A/B), wall-clock and CPU time of this process:
  1. HTML of a deterministic mixed English/Arabic document, 2,000 paragraphs in both
     directions (Arabic phrases in English sentences and the other way round, numbers,
     percentages, brackets, emphasis, links, citations), against the same render with the
     pass replaced by one that holds nothing (the peer): what the pass adds;
  2. one right-to-left paragraph of about 100,000 characters inside 62 nested pairs of
     brackets, against the same text with no brackets (the peer), and at half and a quarter
     of its length: the pairs' cost, and its growth with the length (time ratio over size
     ratio: about 1 when linear).
Every render is done once more at the start to check that the output does not change between
runs. The input is read and numbered outside the timings.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if not os.environ.get("PYTHONPATH"):  # else the checkout PYTHONPATH names is measured
    sys.path.insert(0, str(ROOT))

import renderers  # noqa: E402
import renderers.writers.html.report as report_writer  # noqa: E402
from citations.pool import SourcePool  # noqa: E402
from renderers.options import RenderOptions  # noqa: E402
from renderers.readers.markdown import read_markdown  # noqa: E402
from renderers.resolve import ResolvedDocument, resolve  # noqa: E402
from renderers.writers.html.report import render_html  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from render_bench import Timing, ab, ratios  # noqa: E402
from report import load_average  # noqa: E402

ARABIC = ("الطاقة", "الشبكة", "التخزين", "الرياح", "الشمسية", "السوق", "السعر", "النمو",
          "الطلب", "الانتقال", "الكهرباء", "المنطقة", "التقرير", "الاستثمار", "الكفاءة")
ENGLISH = ("energy", "grid", "storage", "wind", "solar", "market", "price", "growth",
           "demand", "transition", "power", "region", "report", "investment", "efficiency")
SOURCES = 40
DEPTH = 62


def phrase(rng: random.Random, words: tuple[str, ...], low: int = 2, high: int = 5) -> str:
    return " ".join(rng.choice(words) for _ in range(rng.randint(low, high)))


def piece(rng: random.Random, own: tuple[str, ...], other: tuple[str, ...],
          nested: bool = True) -> str:
    """One piece of a sentence: words of the paragraph's language, or something mixed in
    (brackets in brackets unless not ``nested``)."""
    choice = rng.randrange(10)
    if choice == 5 and not nested:
        choice = 6
    if choice == 0:
        return f"{phrase(rng, own)} {phrase(rng, other)} {rng.randint(1, 99)}.{rng.randint(0, 9)}%"
    if choice == 1:
        return f"{phrase(rng, own)} ({phrase(rng, other)}) {phrase(rng, own, 1, 2)}"
    if choice == 2:
        return f"**{phrase(rng, other, 1, 3)}** {rng.randint(1990, 2030)}"
    if choice == 3:
        return f"[{phrase(rng, other, 1, 3)}](https://example.org/{rng.randrange(100)})"
    if choice == 4:
        return f"{phrase(rng, own)} *{phrase(rng, other, 1, 2)} {rng.randint(2, 9)}%*"
    if choice == 5:
        return f"{phrase(rng, own)} [{phrase(rng, own, 1, 2)} ({phrase(rng, other, 1, 2)})]"
    return phrase(rng, own, 3, 8)


def mixed_document(paragraphs: int = 2_000) -> str:
    """``paragraphs`` paragraphs, every other one Arabic with English in it, each of a few
    sentences with citations; deterministic."""
    rng = random.Random(11)
    out = ["# تقرير مختلط Mixed report", ""]
    for number in range(paragraphs):
        own, other = (ARABIC, ENGLISH) if number % 2 else (ENGLISH, ARABIC)
        sentences = []
        for _ in range(rng.randint(2, 4)):
            sentence = " ".join(piece(rng, own, other) for _ in range(rng.randint(2, 4)))
            if rng.random() < 0.6:
                sentence += f"[[S:{rng.randint(1, SOURCES)}]]"
            sentences.append(sentence + ".")
        out += [" ".join(sentences), ""]
    return "\n".join(out)


def nested_document(characters: int, depth: int = DEPTH) -> str:
    """One Arabic paragraph of about ``characters`` characters, all but its first words inside
    ``depth`` nested pairs of brackets: English runs, numbers, emphasis and one more level of
    brackets among Arabic words (63 levels: as deep as the bidi algorithm pairs them)."""
    rng = random.Random(5)
    body: list[str] = []
    size = 0
    while size < characters:
        part = piece(rng, ARABIC, ENGLISH, nested=False)
        body.append(part)
        size += len(part) + 1
    return f"نص {'(' * depth}{' '.join(body)}{')' * depth} English¹ نص[[S:1]]\n"


def resolved(text: str) -> ResolvedDocument:
    rows = [{"sid": s, "title": f"Source {s}", "url": f"https://example.org/{s}"}
            for s in range(1, SOURCES + 1)]
    options = RenderOptions()
    return resolve(read_markdown(text, limits=options.limits), SourcePool.from_rows(rows))


def ms(timing: Timing) -> str:
    """A timing in milliseconds: the nested case takes tens of them."""
    return f"{timing.wall * 1000:7.1f} ms (CPU {timing.cpu * 1000:7.1f} ms)"


@contextmanager
def pass_off() -> Iterator[None]:
    """The report writer holds no run (the peer): every line as if it had no bidi pass
    (``held_ltr_runs`` in a checkout from before the pass read both directions)."""
    name = "held_line_runs" if hasattr(report_writer, "held_line_runs") else "held_ltr_runs"
    held = getattr(report_writer, name)
    setattr(report_writer, name, lambda runs, *_: list(runs))
    try:
        yield
    finally:
        setattr(report_writer, name, held)


def html_of(rdoc: ResolvedDocument) -> Callable[[], str]:
    options = RenderOptions()
    return lambda: render_html(rdoc, options)


def without_pass(fn: Callable[[], str]) -> Callable[[], str]:
    def run() -> str:
        with pass_off():
            return fn()
    return run


def steady(fn: Callable[[], str]) -> Callable[[], str]:
    """``fn`` after checking that two renders give the same bytes."""
    if fn() != fn():
        raise RuntimeError("two renders of the same document differ")
    return fn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--characters", type=int, default=100_000)
    args = parser.parse_args()
    runs = max(1, args.runs)
    print(f"checkout: {Path(renderers.__file__).resolve().parent.parent}")
    print(f"before: load average {load_average()} (1/5/15 min) on {os.cpu_count()} cores")

    mixed = mixed_document()
    html = steady(html_of(resolved(mixed)))
    t_pass, t_off = ab(html, without_pass(html), runs)
    held = html().count('<span dir="')
    print(f"1. mixed document, {mixed.count(chr(10) * 2)} paragraphs, {len(mixed):,} characters "
          f"({held} spans held): HTML {ms(t_pass)} | pass off {ms(t_off)} | "
          f"{ratios(t_pass, t_off)}; "
          f"the pass {(t_pass.cpu - t_off.cpu) * 1000:.0f} ms CPU")

    size = args.characters
    nested = steady(html_of(resolved(nested_document(size))))
    flat_text = nested_document(size).replace("(", "").replace(")", "")
    flat = steady(html_of(resolved(flat_text)))
    t_nested, t_flat = ab(nested, flat, runs)
    print(f"2. {DEPTH} nested brackets around {size:,} characters: HTML {ms(t_nested)} | "
          f"no brackets {ms(t_flat)} | {ratios(t_nested, t_flat)}")
    smaller = {part: steady(html_of(resolved(nested_document(size // part)))) for part in (2, 4)}
    for part, fn in smaller.items():
        t_small, t_large = ab(fn, nested, runs)
        growth = (t_large.cpu / t_small.cpu) / part
        print(f"   at {size // part:,} characters: {ms(t_small)}; growth to {size:,}: "
              f"{t_large.cpu / t_small.cpu:.2f}x CPU for {part}x the length ({growth:.2f})")
    print(f"after: load average {load_average()} (1/5/15 min) on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
