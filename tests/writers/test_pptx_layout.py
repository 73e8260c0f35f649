"""PPTX pagination: a paragraph or bullet moves whole to the next slide; only one taller than a
slide is split, at a sentence boundary, its remainder marked "(cont.)"."""

from __future__ import annotations

import io
import re
from collections.abc import Iterable
from typing import Any

from pptx import Presentation

from citations.pool import SourcePool
from renderers.labels import ENGLISH
from renderers.options import RenderOptions
from renderers.readers.markdown import read_markdown
from renderers.resolve import resolve
from renderers.writers.pptx.layout import build_deck
from renderers.writers.pptx.metrics import Client, Segment, TextMetrics
from renderers.writers.pptx.model import Run
from renderers.writers.pptx.output import pptx_bytes
from renderers.writers.pptx.runs import (
    cite_runs,
    cont_marker,
    continued_mark,
    continued_title,
    sentence_starts,
)

#: What starts the rest of a split paragraph, and what follows a continued slide's title.
CONT_MARK = continued_mark(ENGLISH)
CONT = ENGLISH.space + ENGLISH.continued

POOL = SourcePool.from_rows(
    [{"sid": i, "title": f"Report {i}", "url": f"https://r{i}.org/"} for i in range(1, 9)]
)
TERMS = ["interconnection", "levelized", "merchant", "tariff", "storage", "capacity",
         "transmission", "auction"]


def sentence(k: int, words: int = 14) -> str:
    body = " ".join(TERMS[(k + j) % len(TERMS)] for j in range(words))
    return f"Sentence {k} on {body} costs [[S:{k % 8 + 1}]]."


def body_paragraphs(markdown: str) -> list[tuple[int, str, bool]]:
    """(slide number, text, has a bullet) of every body paragraph (Sources slides left out)."""
    data = pptx_bytes(resolve(read_markdown(markdown), POOL), RenderOptions())
    found: list[tuple[int, str, bool]] = []
    for number, slide in enumerate(Presentation(io.BytesIO(data)).slides, start=1):
        if slide.shapes.title is not None and slide.shapes.title.text.startswith("Sources"):
            continue
        for shape in slide.shapes:
            if not shape.name.startswith("TextBox"):
                continue
            for p in shape.text_frame.paragraphs:
                ppr: Any = p._p.pPr
                bullet = ppr is not None and ppr.find(
                    "{http://schemas.openxmlformats.org/drawingml/2006/main}buChar") is not None
                found.append((number, p.text, bullet))
    return found


def shown(markdown: str) -> str:
    """The text a slide shows for ``markdown`` (citation tokens become their numbers)."""
    return re.sub(r"\[\[S:(\d+)\]\]", r"\1", markdown)


def joined(pieces: list[str]) -> str:
    """The pieces of a split paragraph put together again (markers removed)."""
    return " ".join(" ".join(p.replace(CONT_MARK, "") for p in pieces).split())


def test_a_long_bullet_that_does_not_fit_moves_whole_to_the_next_slide() -> None:
    intro = "\n\n".join(" ".join(sentence(k + 3 * n) for k in range(3)) for n in range(2))
    bullet = " ".join(sentence(40 + k) for k in range(8))  # half of it would fit below
    paras = body_paragraphs(f"## Findings\n\n{intro}\n\n- {bullet}\n- short one\n")
    bullets = [(slide, text) for slide, text, is_bullet in paras if is_bullet]
    assert len(bullets) == 2, "the bullet was split across slides"
    (bullet_slide, whole), (_, short) = bullets
    assert whole == shown(bullet) and short == "short one"
    intro_slides = {slide for slide, text, _ in paras if text.startswith("Sentence 0 ")}
    assert intro_slides and bullet_slide not in intro_slides, "it moved to the next slide, whole"
    assert not any(CONT_MARK in text for _, text, _ in paras)


def test_a_paragraph_taller_than_a_slide_splits_only_at_sentence_ends() -> None:
    text = " ".join(sentence(k) for k in range(40))
    paras = body_paragraphs(f"## Long\n\n{text}\n")
    pieces = [(slide, t) for slide, t, _ in paras]
    assert len({slide for slide, _ in pieces}) >= 2
    for index, (_, piece) in enumerate(pieces):
        assert re.search(r"costs \d+\.$", piece), f"piece {index} ends mid-sentence: {piece[-40:]}"
        if index:
            assert piece.startswith(CONT_MARK + "Sentence "), piece[:40]
    assert joined([t for _, t in pieces]) == shown(text)


def test_one_sentence_taller_than_a_slide_splits_at_a_line_marked_cont() -> None:
    words = " ".join(TERMS[k % len(TERMS)] for k in range(700))
    paras = body_paragraphs(f"## One sentence\n\nIntro line.\n\n{words}.\n")
    pieces = [t for _, t, _ in paras if "Intro" not in t]
    assert len(pieces) >= 2
    assert all(p.startswith(CONT_MARK) for p in pieces[1:])
    assert joined(pieces) == f"{words}."


def test_sentence_boundaries() -> None:
    runs = (Run("Prices fell."), *cite_runs((1, 2, 3)), Run(" Then e.g. the grid grew; why? "),
            Run("Solar. 中文。下一句"))
    text = "".join(r.text for r in runs)
    starts = [text[i:i + 5] for i in sentence_starts(runs)]
    # the citation after a full stop stays with its sentence; "e.g. the" is no boundary
    assert starts == ["Then ", "Solar", "中文。下一", "下一句"]
    assert sentence_starts((Run(CONT_MARK, italic=True), Run("rest of it. Next")), CONT_MARK) == [
        len(CONT_MARK) + len("rest of it. ")]


def test_a_split_right_to_left_paragraph_stays_right_to_left() -> None:
    """The "(cont.)" marker starts left to right; the paragraph's direction was decided before."""
    arabic = " ".join(f"نمت الطاقة الشمسية في المنطقة رقم {k} بسرعة كبيرة [[S:{k % 8 + 1}]]."
                      for k in range(80))
    data = pptx_bytes(resolve(read_markdown(f"## الطاقة\n\n{arabic}\n"), POOL), RenderOptions())
    pieces = [p for slide in Presentation(io.BytesIO(data)).slides
              for shape in slide.shapes if shape.name.startswith("TextBox")
              for p in shape.text_frame.paragraphs if "الطاقة" in p.text]
    # the marker held left to right: bare, it would read "(.cont)" at the paragraph's start
    assert len(pieces) >= 2 and pieces[1].text.startswith("\u200e(cont.)\u200e ")
    assert all(p._p.pPr.get("rtl") == "1" and p._p.pPr.get("algn") == "r" for p in pieces)
    titles = [slide.shapes.title.text for slide in Presentation(io.BytesIO(data)).slides]
    assert "الطاقة \u200e(cont.)\u200e" in titles


def test_cont_marks_of_left_to_right_text_stay_bare() -> None:
    assert cont_marker(CONT_MARK, False) == "(cont.) " and cont_marker(CONT, False) == " (cont.)"
    assert continued_title((Run("Energy"),), ENGLISH)[-1].text == " (cont.)"
    marked = cont_marker(CONT_MARK, True)
    # the marker's full stop is no sentence end, held or bare
    assert sentence_starts((Run(marked, italic=True), Run("rest of it. Next")), CONT_MARK) == [
        len(marked) + len("rest of it. ")]


def slide_lines(markdown: str) -> list[list[str]]:
    """The paragraph texts of every shape on every slide, in order."""
    data = pptx_bytes(resolve(read_markdown(markdown), POOL), RenderOptions())
    return [
        [p.text for shape in slide.shapes if shape.has_text_frame
         for p in shape.text_frame.paragraphs]
        for slide in Presentation(io.BytesIO(data)).slides
    ]


def slide_of(slides: list[list[str]], text: str) -> int:
    return next(i for i, lines in enumerate(slides) if text in lines)


def test_a_code_block_one_slide_can_hold_moves_whole_with_its_heading_and_introduction() -> None:
    filler = "\n\n".join(sentence(k, words=30) for k in range(5))
    code = "\n".join(f"line_{n} = {n}" for n in range(8))
    slides = slide_lines(f"## Model\n\n{filler}\n\n### Setup\n\nIt reads:\n\n```\n{code}\n```\n")
    target = slide_of(slides, "line_0 = 0")
    assert all(f"line_{n} = {n}" in slides[target] for n in range(8)), slides
    assert slide_of(slides, "Setup") == target
    assert slide_of(slides, "It reads:") == target
    assert target > slide_of(slides, shown(sentence(0, words=30)))  # it did move


def test_a_code_block_longer_than_a_slide_keeps_three_lines_in_each_part() -> None:
    for extra in range(0, 40, 3):
        code = "\n".join(f"row_{n} = {n}" for n in range(40 + extra))
        slides = slide_lines(f"## Data\n\nIntro.\n\n```\n{code}\n```\n")
        parts = [sum(line.startswith("row_") for line in lines) for lines in slides]
        parts = [count for count in parts if count]
        assert len(parts) >= 2 and sum(parts) == 40 + extra
        assert min(parts) >= 3, (extra, parts)


class CountingMetrics(TextMetrics):
    """Metrics that count the characters they wrap: the work of measuring a deck."""

    def __init__(self) -> None:
        super().__init__()
        self.measured = 0

    def line_starts(self, segments: Iterable[Segment], width: float, size: float,
                    client: Client = "powerpoint") -> list[int]:
        pieces = list(segments)
        self.measured += sum(len(text) for text, _, _ in pieces)
        return super().line_starts(pieces, width, size, client)


def measured_characters(markdown: str) -> tuple[int, int]:
    """Characters wrapped to build the deck of ``markdown``, and its slides."""
    metrics = CountingMetrics()
    deck = build_deck(resolve(read_markdown(markdown), POOL), RenderOptions(), metrics=metrics)
    return metrics.measured, len(deck.slides)


def test_splitting_a_very_long_paragraph_measures_it_in_linear_work() -> None:
    # Each continuation slide re-measured the whole rest of the paragraph: 40,000 words took
    # 12 s and 200,000 words minutes. Doubling the paragraph must about double the work.
    for text in ("word " * 4000, " ".join(sentence(k) for k in range(240))):
        small, small_slides = measured_characters(f"## Long\n\n{text}\n")
        large, large_slides = measured_characters(f"## Long\n\n{text}{text}\n")
        assert large_slides >= 2 * small_slides - 1 and small_slides > 10
        assert large < 2.3 * small, (small, large)
