"""A note style's notes and the author's footnotes are two sections with two titles: "Notes"
(the author's, lettered) and "Citation notes" (the style's, numbered), each with its own anchor,
both in the contents and in the PDF outline; the formats without a Citation notes section (DOCX
footnotes, PPTX and Markdown numbers) keep one "Notes"."""

from __future__ import annotations

import io
import re

import docx
import pytest
from pptx import Presentation
from pypdf import PdfReader

from renderers.api import build_options, prepare
from renderers.labels import ENGLISH
from renderers.pipeline import Session
from renderers.writers.contents import back_matter
from tests.helpers import outline_titles

NOTES_HEADING, CITATION_NOTES_HEADING = ENGLISH.notes, ENGLISH.citation_notes

POOL = [
    {"sid": 1, "title": "Storage outlook", "url": "https://iea.example/storage"},
    {"sid": 2, "title": "Cost survey", "url": "https://irena.example/costs"},
]
TEXT = """# Grid Storage

## Citation notes

Batteries scale.[[S:1]] See [the survey[[S:2]]](https://x.example).[^f]

## Cnote 1

More.

[^f]: A note that cites.[[S:1]]
"""
BACK = [NOTES_HEADING, CITATION_NOTES_HEADING, "Sources"]


def render(fmt: str, **options: object) -> bytes:
    built = build_options(csl="chicago-note", toc=True, **options)
    return Session(prepare(TEXT, sources_pool=POOL, options=built)).artifact(fmt).data


def test_the_titles_differ_and_come_in_the_order_the_sections_are_written() -> None:
    assert NOTES_HEADING != CITATION_NOTES_HEADING
    back = back_matter(ENGLISH, notes="n", citation_notes="c", sources="s",
                       sources_heading="Sources")
    assert back == [(NOTES_HEADING, "n"), (CITATION_NOTES_HEADING, "c"), ("Sources", "s")]
    assert back_matter(ENGLISH, sources="s", sources_heading="Sources") == [("Sources", "s")]


def test_html_has_two_titled_sections_with_their_own_ids_and_lists_both() -> None:
    html = render("html").decode()
    sections = re.findall(r'<section id="([^"]+)"[^>]*>\s*<h2>([^<]*)</h2>', html)
    assert sections == [
        ("notes", "Notes"), ("citation-notes", "Citation notes"), ("sources", "Sources")
    ]
    toc = html[html.index('<nav id="contents"'):html.index("</nav>")]
    assert re.findall(r'<a href="#([^"]+)">([^<]*)</a>', toc)[-3:] == [
        ("notes", "Notes"), ("citation-notes", "Citation notes"), ("sources", "Sources")
    ]
    # body headings never take a section's or a note's id
    assert '<h2 id="citation-notes-1"' in html and '<h2 id="cnote-1-1"' in html
    assert len(re.findall(r'\sid="citation-notes"', html)) == 1
    assert len(re.findall(r'\sid="cnote-1"', html)) == 1


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_pdf_outline_and_contents_list_both_sections(engine: str) -> None:
    reader = PdfReader(io.BytesIO(render("pdf", pdf_engine=engine)))
    titles = outline_titles(reader)
    assert titles[-3:] == BACK
    assert titles.count(NOTES_HEADING) == 1
    text = reader.pages[0].extract_text()
    contents = [line.split(" .")[0].strip() for line in text.splitlines() if " ....." in line]
    assert contents[-3:] == BACK
    headings_shown = [line.strip() for line in text.splitlines() if line.strip() in BACK]
    assert headings_shown[-3:] == BACK  # the section titles as printed


def test_docx_and_pptx_keep_one_notes_section() -> None:
    document = docx.Document(io.BytesIO(render("docx")))
    headings = [p.text for p in document.paragraphs if p.style.name == "Heading 2"]
    # the added sections are peers of the body's own (Heading 2), and there is one Notes
    assert headings[-2:] == [NOTES_HEADING, "Sources"] and headings.count(NOTES_HEADING) == 1
    deck = Presentation(io.BytesIO(render("pptx")))
    titles = [s.shapes.title.text for s in deck.slides if s.shapes.title is not None]
    assert titles[-2:] == [NOTES_HEADING, "Sources"] and titles.count(NOTES_HEADING) == 1
