"""Two citations side by side (``[[S:2]][[S:3]]``) read ``²,³`` in every format, never ``²³``
(which a reader takes for source 23), note numbers of a note style and Word footnote references
too; citations apart, or one citation of two sources, are unchanged."""

from __future__ import annotations

import io
import re
import subprocess
import zipfile
from pathlib import Path

import pytest
from lxml import etree

from citations.numbering import display_segments, note_segments
from renderers.api import build_options, prepare
from renderers.document import Cite, iter_inlines
from renderers.pipeline import Session
from renderers.readers.markdown import read_markdown
from tests.helpers import convert_all_with_libreoffice
from tests.support.render import render_markdown, resolve_rows

ROWS = [{"sid": s, "title": f"Source {s}", "url": f"https://example.org/{s}"} for s in (1, 2, 3, 5)]
# Shown numbers (appearance order): sid 2 → 1, sid 3 → 2, sid 1 → 3, sid 5 → 4.
TEXT = (
    "Revenue.[[S:2]][[S:3]] Apart [[S:1]] [[S:2]]. Gap [[S:1]][[S:99]][[S:3]] "
    "and [[S:1-3]][[S:5]] end.\n"
)
EXPECTED = "Revenue.1, 2 Apart 3 1. Gap 3, 2 and 1–3, 4 end."


def shown_text(pdf: Path) -> str:
    """The PDF's text in reading order (poppler), white space removed: superscripts sit a
    little above the line, so where spaces fall around them differs between producers."""
    text = subprocess.run(
        ["pdftotext", str(pdf), "-"], check=True, capture_output=True, text=True
    ).stdout
    return re.sub(r"\s+", "", text)


SHOWN = re.sub(r"\s+", "", EXPECTED)
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def test_the_citation_pass_marks_a_citation_right_after_another() -> None:
    rdoc = resolve_rows(read_markdown(TEXT), ROWS)
    cites = [n for n in iter_inlines(rdoc.document.blocks) if isinstance(n, Cite) and n.numbers]
    assert [(c.numbers, c.joined) for c in cites] == [
        ((1,), False), ((2,), True),  # side by side
        ((3,), False), ((1,), False),  # a space between: apart
        ((3,), False), ((2,), True),  # an unknown sid between shows nothing: side by side
        ((1, 2, 3), False), ((4,), True),
    ]


def test_a_joined_display_opens_with_the_separator() -> None:
    assert display_segments((4,), joined=True) == [(", ", None), ("4", 4)]
    assert display_segments((), joined=True) == []


def test_html_writes_two_linked_superscripts() -> None:
    html = render_markdown("html", TEXT, ROWS).decode()
    assert '<sup class="cite" id="cite-1" data-sids="2"><a href="#src-1">1</a></sup>' in html
    assert ('<sup class="cite cite-joined" id="cite-2" data-sids="3">, <a href="#src-2">2</a>'
            "</sup>") in html
    assert '<sup class="cite" id="cite-4" data-sids="2"><a href="#src-1">1</a></sup>' in html


def test_markdown_keeps_one_footnote_reference_per_source() -> None:
    markdown = render_markdown("md", TEXT, ROWS).decode()
    assert "Revenue.[^1][^2] Apart [^3] [^1]." in markdown


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_pdf_shows_the_separator(engine: str, tmp_path: Path) -> None:
    pdf = tmp_path / "adjacent.pdf"
    pdf.write_bytes(render_markdown("pdf", TEXT, ROWS, pdf_engine=engine))
    assert SHOWN in shown_text(pdf)


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_pdf_text_has_no_space_before_the_separator(engine: str, tmp_path: Path) -> None:
    """Extracted with its spaces, the pair reads "1, 2" as one citation of two sources does:
    Typst set the joined mark's gap before its separator, which poppler read as a space
    ("1 , 2")."""
    pdf = tmp_path / "adjacent.pdf"
    pdf.write_bytes(render_markdown("pdf", "Revenue.[[S:2]][[S:3]] and[[S:2,3]].\n", ROWS,
                                    pdf_engine=engine))
    for layout in ([], ["-layout"]):
        text = subprocess.run(["pdftotext", *layout, str(pdf), "-"], check=True,
                              capture_output=True, text=True).stdout
        assert re.findall(r"\d\s*,\s*\d", text.split("Sources")[0]) == ["1, 2"] * 2, text


@pytest.mark.libreoffice
def test_docx_and_pptx_show_the_separator_in_libreoffice(tmp_path: Path) -> None:
    paths = []
    for fmt in ("docx", "pptx"):
        path = tmp_path / f"adjacent-{fmt}.{fmt}"
        path.write_bytes(render_markdown(fmt, TEXT, ROWS))
        paths.append(path)
    for converted in convert_all_with_libreoffice(paths, tmp_path / "pdf"):
        assert SHOWN in shown_text(converted), converted.name


# ------------------------------------------------ notes (a note style, Word footnotes)

NOTE_TEXT = "Side by side[[S:2]][[S:3]]. Apart [[S:1]] [[S:5]].\n"
#: Note numbers follow the citations: 1, 2 side by side, then 3 and 4 apart.
NOTES_SHOWN = "Sidebyside1,2.Apart34."


def render_noted(fmt: str, **options: object) -> bytes:
    """``NOTE_TEXT`` in ``fmt`` with ``options`` (a note style, or DOCX footnotes)."""
    built = build_options(**options)
    return Session(prepare(NOTE_TEXT, sources_pool=ROWS, options=built)).artifact(fmt).data


def test_note_numbers_open_with_the_separator() -> None:
    assert note_segments(7, joined=True) == [(", ", None), ("7", 7)]
    assert note_segments(7) == [("7", 7)]


def test_html_note_numbers_side_by_side_are_separated() -> None:
    html = render_noted("html", csl="chicago-note").decode()
    assert '<sup class="cite" id="cite-1" data-sids="2"><a href="#cnote-1">1</a></sup>' in html
    assert ('<sup class="cite cite-joined" id="cite-2" data-sids="3">, <a href="#cnote-2">2</a>'
            "</sup>") in html
    assert '<sup class="cite" id="cite-4" data-sids="5"><a href="#cnote-4">4</a></sup>' in html


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_pdf_note_numbers_side_by_side_are_separated(engine: str, tmp_path: Path) -> None:
    pdf = tmp_path / "notes.pdf"
    pdf.write_bytes(render_noted("pdf", csl="chicago-note", pdf_engine=engine))
    assert NOTES_SHOWN in shown_text(pdf)


@pytest.mark.parametrize("options", [{"csl": "chicago-note"}, {"docx_citations": "footnotes"}])
def test_docx_footnote_references_side_by_side_are_separated(options: dict[str, str]) -> None:
    body = docx_body_runs(render_noted("docx", **options))
    # each reference in its own run; the second of the pair is led by a superscript separator
    assert body[:5] == ["Side by side", "<ref 1>", "<sup>, ", "<ref 2>", ". Apart "]
    assert body[5:8] == ["<ref 3>", " ", "<ref 4>"]


def docx_body_runs(data: bytes) -> list[str]:
    """The runs of the DOCX's first paragraph that cites: footnote references as ``<ref N>``,
    superscript text led by ``<sup>``."""
    root = etree.fromstring(zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml"))
    cites = (p for p in root.iter(f"{W}p") if p.find(f".//{W}footnoteReference") is not None)
    paragraph = next(cites)
    runs: list[str] = []
    for run in paragraph.iter(f"{W}r"):
        reference = run.find(f"{W}footnoteReference")
        if reference is not None:
            runs.append(f"<ref {reference.get(f'{W}id')}>")
            continue
        raised = run.find(f"{W}rPr/{W}vertAlign[@{W}val='superscript']") is not None
        runs.append(("<sup>" if raised else "") + "".join(t.text or "" for t in run.iter(f"{W}t")))
    return runs


@pytest.mark.libreoffice
def test_docx_footnote_references_show_the_separator_in_libreoffice(tmp_path: Path) -> None:
    path = tmp_path / "notes.docx"
    path.write_bytes(render_noted("docx", csl="chicago-note"))
    (converted,) = convert_all_with_libreoffice([path], tmp_path / "pdf")
    assert NOTES_SHOWN in shown_text(converted)
