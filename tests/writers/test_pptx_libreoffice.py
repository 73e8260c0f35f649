"""PPTX decks as LibreOffice Impress draws them (converted to PDF, read back with pypdfium2)."""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium
import pytest

from citations.pool import SourcePool
from renderers.options import RenderOptions
from renderers.readers.markdown import read_markdown
from renderers.resolve import resolve
from renderers.writers.pptx.output import pptx_bytes
from tests.helpers import convert_with_libreoffice

pytestmark = pytest.mark.libreoffice

TERMS = ["interconnection", "levelized", "merchant", "tariff", "storage", "capacity",
         "transmission", "regional", "assessment", "distribution", "flexibility", "procurement",
         "hydrogen", "electrolysis", "offshore", "decarbonization", "methodology",
         "international", "comparative"]


def _title(sid: int) -> str:
    """A source title of 15 to 22 words (long linked titles are what LibreOffice wraps apart)."""
    return " ".join(TERMS[(sid * 3 + k * 7) % len(TERMS)].capitalize()
                    for k in range(15 + sid % 8))


def _sentences(k: int, count: int) -> str:
    return " ".join(
        f"The {TERMS[(k + j) % len(TERMS)]} market grew by {j} per cent in the "
        f"{TERMS[(k * j) % len(TERMS)]} segment [[S:{(k + j) % 45 + 1}]]." for j in range(count)
    )


def _crowded_deck_markdown() -> str:
    parts = ["# Crowded deck", "## Long paragraphs", *(_sentences(k, 14) for k in range(6)),
             "## Bullets", "\n".join(f"- {_sentences(k, 9)}" for k in range(5)),
             "## Table", "| Region | Notes | Value |\n|:--|:--|--:|"]
    parts[-1] += "".join(
        f"\n| Region {i} [[S:{i % 45 + 1}]] | "
        f"{' '.join(TERMS[(i + j) % len(TERMS)] for j in range(6))} | {i * 3} |"
        for i in range(40)
    )
    parts += ["## Every source", " ".join(f"Claim {i} [[S:{i}]]." for i in range(1, 46))]
    return "\n\n".join(parts) + "\n"


def _convert(markdown: str, pool: SourcePool, tmp_path: Path) -> pdfium.PdfDocument:
    path = tmp_path / "deck.pptx"
    path.write_bytes(pptx_bytes(resolve(read_markdown(markdown), pool), RenderOptions()))
    return pdfium.PdfDocument(convert_with_libreoffice(path, tmp_path))


def test_no_character_is_drawn_outside_its_slide_in_libreoffice(tmp_path: Path) -> None:
    pool = SourcePool.from_rows([
        {"sid": i, "title": _title(i), "url": f"https://www.example{i}.org/reports/2024/{i}",
         "published_at": "2024-03-01"} for i in range(1, 46)
    ])
    pdf = _convert(_crowded_deck_markdown(), pool, tmp_path)
    outside: list[str] = []
    text = []
    for number, page in enumerate(pdf, start=1):
        width, height = page.get_size()
        chars = page.get_textpage()
        text.append(chars.get_text_range())
        for index in range(chars.count_chars()):
            left, bottom, right, top = chars.get_charbox(index)
            if left < -0.5 or bottom < -0.5 or right > width + 0.5 or top > height + 0.5:
                outside.append(f"slide {number}: {chars.get_text_range(index, 1)!r}")
    assert not outside, f"{len(outside)} characters outside their slide: {outside[:5]}"
    everything = "".join("".join(text).split())  # LibreOffice may break a long link anywhere
    for sid in (1, 17, 45):  # the Sources slides hold every title in full
        assert "".join(_title(sid).split()) in everything
    assert len(pdf) >= 12
