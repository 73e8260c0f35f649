"""A run of joined citation marks (``[[S:1]][[S:2]]…``) holds together like a word while it is
short, and wraps after its separators once long (:func:`~renderers.writers.common.cite_wraps`),
in both PDF engines at the same places: inside the text's width, every number still linked to
its Sources entry, no line opening with a separator, a range "1–3" never cut."""

from __future__ import annotations

import re
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from citations.numbering import display_segments
from renderers.api import render
from renderers.document import Cite
from renderers.writers.common import WHOLE_CITE_RUN, cite_wraps, unbroken_parts
from tests.helpers import internal_links, pdf_lines
from tests.support.render import render_markdown

MM = 72 / 25.4
RUN = 120
ROWS = [{"sid": s, "title": f"Source {s}", "url": f"https://example.org/{s}"}
        for s in range(1, RUN + 1)]
LONG_RUN = "Claims cited many times.{} After the run.\n".format(
    "".join(f"[[S:{sid}]]" for sid in range(1, RUN + 1)))
#: The short run moves one character to the right per paragraph, so that in some paragraph it
#: falls at the end of a line, where it would wrap after its separator if a break were allowed.
CREEPING_RUNS = "\n\n".join(
    f"lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum {'x' * k} "
    "end.[[S:1]][[S:2]] Next sentence goes on here." for k in range(1, 40)
) + "\n"


def cite(numbers: tuple[int, ...], *, joined: bool = False) -> Cite:
    return Cite(numbers, numbers, "cite-1", joined=joined)


def test_a_short_run_stays_whole_and_a_long_one_wraps() -> None:
    assert not cite_wraps([cite((1,)), cite((2,), joined=True)])
    assert not cite_wraps([cite((1, 3, 5, 7, 9, 11))])  # "1, 3, 5, 7, 9, 11"
    marks = [cite((1,))] + [cite((n,), joined=True) for n in range(2, 12)]  # 33 characters
    assert WHOLE_CITE_RUN < 33 and cite_wraps(marks)


def test_a_wrapping_mark_breaks_after_each_separator_and_keeps_ranges_whole() -> None:
    pieces = display_segments((1, 2, 3, 5, 8, 9), joined=True)  # ", 1–3, 5, 8, 9"
    assert [[text for text, _ in part] for part in unbroken_parts(pieces, wraps=True)] == [
        [", "], ["1", "–", "3"], [", "], ["5"], [", "], ["8"], [", "], ["9"]]
    assert unbroken_parts(pieces, wraps=False) == [pieces]
    assert unbroken_parts([], wraps=False) == []


def test_html_marks_a_long_run_to_wrap_and_leaves_a_short_one_whole() -> None:
    html = render_markdown("html", "Short.[[S:1]][[S:2]]\n\n" + LONG_RUN.replace(
        "[[S:3]]", "[[S:3,4,5]]"), ROWS).decode()
    short = re.search(r"Short\.(.*?)</p>", html, re.S)
    assert short is not None and "cite-wraps" not in short.group(1)
    assert '<sup class="cite cite-joined" id="cite-2" data-sids="2">, ' in short.group(1)
    long = html[html.index("Claims"):]
    assert long.count('class="cite cite-wraps"') == 1  # the run's first mark
    assert long.count('class="cite cite-joined cite-wraps"') == RUN - 1
    assert ('<span class="cite-range"><a href="#src-3">3</a>–<a href="#src-5">5</a></span>'
            in long)


def entry_tops(pdf: bytes) -> dict[str, tuple[int, float]]:
    """Each Sources entry's number (its source's: sid N is cited N-th), with its page and the
    top of its line."""
    document = pdfium.PdfDocument(pdf)
    tops: dict[str, tuple[int, float]] = {}
    try:
        for index in range(len(document)):
            textpage = document[index].get_textpage()
            text = textpage.get_text_range()
            for match in re.finditer("Source (\\d+)\\s\u2014", text):
                _, _, _, top = textpage.get_charbox(match.start())
                tops[match.group(1)] = (index, top)
    finally:
        document.close()
    return tops


def run_lines(pdf: bytes) -> list[str]:
    """The lines from the long run's paragraph's first to its last, spaces taken out."""
    lines = [text for _, _, text in pdf_lines(pdf)]
    first = next(i for i, line in enumerate(lines) if line.startswith("Claims"))
    last = next(i for i, line in enumerate(lines) if "After the run." in line)
    return [re.sub(r"\s+", "", line) for line in lines[first:last + 1]]


@pytest.fixture(scope="module")
def long_runs() -> dict[str, bytes]:
    return {engine: render_markdown("pdf", LONG_RUN, ROWS, pdf_engine=engine)
            for engine in ("weasyprint", "typst")}


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_a_long_run_wraps_inside_the_text_width_and_links_every_mark(
        long_runs: dict[str, bytes], engine: str) -> None:
    pdf = long_runs[engine]
    lines = run_lines(pdf)
    assert len(lines) >= 3  # the run takes lines of its own
    for line in lines:
        assert not line.startswith(","), line
    shown = "".join(lines)
    numbers = ",".join(str(n) for n in range(1, RUN + 1))
    assert shown == f"Claimscitedmanytimes.{numbers}Aftertherun."
    document = pdfium.PdfDocument(pdf)
    try:
        page = document[0]
        right_margin = page.get_width() - 20 * MM
        textpage = page.get_textpage()
        for index in range(textpage.count_chars()):
            if textpage.get_text_range(index, 1).strip():
                assert textpage.get_charbox(index)[2] <= right_margin + 1
    finally:
        document.close()
    entries = entry_tops(pdf)
    marks = [(text, page, top) for text, page, top in internal_links(pdf) if text.isdigit()]
    assert [text for text, _, _ in marks] == [str(n) for n in range(1, RUN + 1)]
    assert all(page == entries[text][0] for text, page, _ in marks)
    # each lands on its own entry: as high above its text as any other mark's above its own,
    # less than an entry's height (an engine places a destination at its line's top or above)
    above = [top - entries[text][1] for text, _, top in marks]
    assert max(above) - min(above) < 1 and 0 <= min(above) < 15, above


def test_both_engines_put_the_same_marks_on_the_same_lines(long_runs: dict[str, bytes]) -> None:
    assert run_lines(long_runs["weasyprint"]) == run_lines(long_runs["typst"])


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_a_short_run_stays_on_the_line_of_the_word_it_follows(engine: str) -> None:
    lines = [text for _, _, text in
             pdf_lines(render_markdown("pdf", CREEPING_RUNS, ROWS[:2], pdf_engine=engine))]
    body = [line for line in lines if "Source" not in line and not line.startswith("Page")]
    assert sum("end.1, 2" in line for line in body) == 39
    for line in body:
        assert not re.match(r"[,\d]", line), line
        assert not line.rstrip().endswith(","), line


@pytest.mark.slow
def test_html_input_in_its_authors_look_wraps_a_long_run_too(tmp_path: Path) -> None:
    """WeasyPrint keeps an HTML input's own markup; its citations are the report writer's,
    a long run's marked to wrap as in the report (and as Typst sets the same input)."""
    marks = "".join(f'<sup class="cite" data-sids="{sid}">[S:{sid}]</sup>'
                    for sid in range(1, RUN + 1))
    html = (f"<html><head><style>p {{ color: #222; }}</style></head><body><h1>T</h1><p>Claims "
            f"cited many times.{marks} After the run.</p><p>Short x[[S:1]][[S:2]] end.</p>"
            "</body></html>")
    lines = {}
    for engine in ("weasyprint", "typst"):
        render(html, tmp_path / engine, sources_pool=ROWS, formats=["pdf"], pdf_engine=engine)
        pdf = (tmp_path / engine / "report.pdf").read_bytes()
        lines[engine] = run_lines(pdf)
        assert "Shortx1,2end." in [re.sub(r"\s+", "", text) for _, _, text in pdf_lines(pdf)]
    assert len(lines["weasyprint"]) >= 3 and lines["weasyprint"] == lines["typst"]


@pytest.mark.slow
def test_a_long_run_in_a_right_to_left_line_wraps_alike_in_both_engines() -> None:
    """Held apart left to right (HTML ``span.cite-run``; Typst between isolate marks, since a
    box would not wrap), the run still wraps after its separators, at the same places."""
    text = ("هذه جملة عربية طويلة عن الطاقة" + "".join(f"[[S:{sid}]]" for sid in range(1, 61))
            + " وهنا نهاية الجملة.\n")
    lines = [[re.sub(r"\s+", "", line) for _, _, line in pdf_lines(
        render_markdown("pdf", text, ROWS[:60], pdf_engine=engine))] for engine in
        ("weasyprint", "typst")]
    assert lines[0][:2] == lines[1][:2]
    assert lines[0][0].startswith("1,2,3,") and lines[0][1].endswith(",59,60")
