"""The benchmark input shared by every renderer benchmark: a deterministic ≈50-page report.

≈26,000 words, 500 citations over 120 sources, with headings, lists, tables and code, so every
benchmark measures the same document.
"""

from __future__ import annotations

import os
import random

WORDS = (
    "energy", "grid", "capacity", "solar", "wind", "storage", "battery", "demand", "supply",
    "market", "price", "cost", "investment", "policy", "carbon", "emission", "transition",
    "network", "utility", "generation", "forecast", "region", "country", "growth", "decline",
    "scenario", "model", "analysis", "report", "sector", "industry", "efficiency", "heating",
    "transport", "hydrogen", "nuclear", "hydro", "coal", "gas", "oil", "finance", "risk",
)


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


def child_env() -> dict[str, str]:
    """The environment for timed child processes: bytecode caches on (``PYTHONDONTWRITEBYTECODE``
    removed), as for an installed package; otherwise every run would compile our modules again."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def load_average() -> str:
    """``1.23 1.10 0.98`` (1, 5, 15 minutes), or ``n/a``."""
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"
