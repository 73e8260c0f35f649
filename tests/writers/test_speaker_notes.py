"""Speaker notes (issue 18, item 5): on the notes page of their slide in PPTX — read with
python-pptx and as LibreOffice Impress reads them — and in no other format, with their
citations counted for the deck only."""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

import pytest
from pptx import Presentation
from pypdf import PdfReader

from renderers.api import render
from tests.helpers import convert_with_libreoffice
from tests.support.render import WriterFormat, render_in_fresh_process, render_markdown

POOL = [{"sid": s, "title": f"Source {s}", "url": f"https://s{s}.example/"} for s in (1, 2, 3)]
DECK = """# Quarterly review

::: notes
Welcome everyone.
:::

## Storage

Batteries doubled.[[S:1]]

::: notes
Mention the cost curve.[[S:3]] Then **pause**.

1. first point
2. second point
:::

# Outlook

::: notes
This section is short.
:::

## Next year

More growth.[[S:2]]
"""
SPOKEN = ("Welcome everyone", "Mention the cost curve", "This section is short")


def notes_by_title(data: bytes) -> dict[str, str]:
    deck = Presentation(io.BytesIO(data))
    found = {}
    for slide in deck.slides:
        if slide.has_notes_slide:
            title = slide.shapes.title.text if slide.shapes.title is not None else ""
            found[title] = slide.notes_slide.notes_text_frame.text
    return found


def test_notes_go_to_the_notes_page_of_their_slide() -> None:
    notes = notes_by_title(render_markdown("pptx", DECK, POOL))
    assert notes == {
        "Quarterly review": "Welcome everyone.",
        "Storage": "Mention the cost curve.3 Then pause.\nfirst point\nsecond point",
        "Outlook": "This section is short.",
    }


def test_a_citation_in_notes_jumps_to_the_sources_slide() -> None:
    deck = Presentation(io.BytesIO(render_markdown("pptx", DECK, POOL)))
    slides = list(deck.slides)
    page = next(s for s in slides if s.shapes.title.text == "Storage").notes_slide
    paragraph = page.notes_text_frame.paragraphs[0]
    number = next(run for run in paragraph.runs if run.text == "3")
    assert number.font._rPr.get("baseline") == "30000"  # raised like a citation on a slide
    rid = number._r.find(".//{*}hlinkClick").get(
        "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id")
    target = page.part.related_part(rid)
    sources = next(s for s in slides if s.shapes.title.text == "Sources")
    assert target is sources.part
    numbered = [p.text for p in page.notes_text_frame.paragraphs[1:]]
    assert numbered == ["first point", "second point"]
    auto = page.notes_text_frame.paragraphs[1]._p.find(".//{*}buAutoNum")
    assert auto is not None and auto.get("startAt") == "1"


def test_the_slide_footer_does_not_name_what_only_the_notes_cite() -> None:
    deck = Presentation(io.BytesIO(render_markdown("pptx", DECK, POOL)))
    storage = next(s for s in deck.slides if s.shapes.title.text == "Storage")
    footer = next(shape for shape in storage.shapes if shape.name == "Sources")
    assert footer.text_frame.text == "[1]\u00a0s1.example"


def test_the_package_lists_its_notes_master() -> None:
    data = render_markdown("pptx", DECK, POOL)
    package = zipfile.ZipFile(io.BytesIO(data))
    presentation = package.read("ppt/presentation.xml").decode()
    assert re.search(r"</p:sldMasterIdLst><p:notesMasterIdLst><p:notesMasterId r:id=", presentation)
    assert len([n for n in package.namelist() if n.startswith("ppt/notesSlides/notesSlide")]) == 3


@pytest.mark.parametrize("fmt", ["html", "md", "docx"])
def test_no_other_format_shows_the_notes(fmt: WriterFormat) -> None:
    data = render_markdown(fmt, DECK, POOL)
    text = data.decode() if fmt != "docx" else zipfile.ZipFile(io.BytesIO(data)).read(
        "word/document.xml").decode()
    assert "Batteries doubled" in text
    for spoken in SPOKEN:
        assert spoken not in text
    assert "Source 3" not in text  # cited only in the notes: not in these Sources


def test_sources_used_counts_notes_citations_for_the_deck_only(tmp_path: Path) -> None:
    results = render(DECK, tmp_path, name="review", formats=["pptx", "pdf", "md"],
                     sources_pool=POOL)
    by_format = {r.format: r for r in results}
    assert by_format["pptx"].sources_used == [1, 2, 3]
    assert by_format["pdf"].sources_used == [1, 2]
    assert by_format["md"].sources_used == [1, 2]
    assert by_format["pptx"].stats["sources"] == 3 and by_format["pdf"].stats["sources"] == 2
    records = {r["format"]: r for r in json.loads((tmp_path / "sources_used.json").read_text())}
    assert records["pptx"]["sids"] == [1, 2, 3] and records["pdf"]["sids"] == [1, 2]
    assert records["pptx"]["numbers"] == {"1": 1, "2": 2, "3": 3}
    assert records["pdf"]["numbers"] == {"1": 1, "2": 2}
    pdf_text = "".join(p.extract_text() for p in PdfReader(str(by_format["pdf"].path)).pages)
    assert "Mention the cost curve" not in pdf_text and "Source 3" not in pdf_text


@pytest.mark.libreoffice
def test_libreoffice_reads_the_notes_of_each_slide(tmp_path: Path) -> None:
    path = tmp_path / "review.pptx"
    path.write_bytes(render_markdown("pptx", DECK, POOL))
    content = zipfile.ZipFile(convert_with_libreoffice(path, tmp_path, "odp")).read(
        "content.xml").decode()
    pages = re.findall(r"<draw:page .*?</draw:page>", content, re.S)

    def text(xml: str) -> str:
        return " ".join(re.sub(r"<[^>]+>", " ", xml).split())

    notes = []
    for page in pages:
        found = re.search(r"<presentation:notes.*?</presentation:notes>", page, re.S)
        notes.append(text(found.group(0)) if found else "")
    assert notes[0] == "Welcome everyone."
    storage = next(i for i, page in enumerate(pages) if "Batteries doubled" in text(page))
    assert notes[storage].startswith("Mention the cost curve. 3 Then pause")
    assert "second point" in notes[storage]
    assert sum(1 for n in notes if n) == 3


@pytest.mark.slow
def test_a_deck_with_notes_is_the_same_in_a_fresh_process() -> None:
    assert render_in_fresh_process("pptx", DECK, POOL) == render_markdown("pptx", DECK, POOL)
