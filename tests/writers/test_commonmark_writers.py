"""All 652 CommonMark 0.31.2 examples through every writer: no crash, no lost text.

The expected text of an example is what the markdown reader sees (``document_text`` of its
IR, one line per block). Each line must appear, in order and with white space ignored, in the
text read back from every output:

- HTML and Markdown: every example on its own (Markdown is read back with the reader);
- DOCX, PPTX and PDF (both engines): one combined document per spec section (rendering 652
  separate Word or PDF files would take minutes), each example after a unique marker
  paragraph, so the output text is split back into examples at the markers;
- PNG: the rasterized pages of every section's PDF (no crash, one non-blank image per page;
  its text is the PDF's, checked above).
"""

from __future__ import annotations

import io
import json
import re
import unicodedata
import zipfile
from functools import cache
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pytest
from lxml import etree, html
from PIL import Image

from citations.pool import SourcePool
from renderers.document import Block, Document, Paragraph, Text
from renderers.document import Image as ImageNode
from renderers.labels import ENGLISH
from renderers.options import RenderOptions
from renderers.readers.markdown import read_markdown
from renderers.resolve import ResolvedDocument, resolve
from renderers.testing import normalize_pdf
from renderers.text import document_text
from renderers.writers.common import image_fallback
from renderers.writers.docx.writer import docx_bytes
from renderers.writers.html.report import render_html
from renderers.writers.markdown import markdown_text
from renderers.writers.pdf import pdf_bytes
from renderers.writers.png import png_pages
from renderers.writers.pptx.output import pptx_bytes
from renderers.writers.typst.writer import typst_pdf

SPEC = Path(__file__).resolve().parents[1] / "data" / "commonmark" / "commonmark-spec.json"
EXAMPLES: list[dict[str, Any]] = json.loads(SPEC.read_text(encoding="utf-8"))
SECTIONS: list[str] = list(dict.fromkeys(e["section"] for e in EXAMPLES))
OPTIONS = RenderOptions(dpi=30)
#: White space (layout) and an image's fallback decoration (an image that cannot load shows as
#: "[Image: alt]", renderers.writers.common.image_fallback).
_IGNORED = re.compile(r"[\s\[\]]+|Image:")
_MARKER = re.compile(r"QZX(\d{4})XZQ")
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"


#: What the shared image rule puts before an image's alt text when the image cannot be shown.
_FALLBACK_LEAD = image_fallback(ImageNode("", alt="\0"), ENGLISH).split("\0")[0]


def squeeze(text: str) -> str:
    """``text`` in NFKC without white space, brackets or the missing-image lead: layout and
    decoration cannot matter."""
    return _IGNORED.sub("", unicodedata.normalize("NFKC", text.replace(_FALLBACK_LEAD, "")))


def marker(number: int) -> str:
    return f"QZX{number:04d}XZQ"


@cache
def read_example(number: int) -> Document:
    return read_markdown(EXAMPLES[number - 1]["markdown"])


def expected_lines(number: int) -> list[str]:
    """The squeezed, non-empty lines of an example's visible text."""
    lines = (squeeze(line) for line in document_text(read_example(number)).split("\n"))
    return [line for line in lines if line]


def missing_line(output: str, number: int) -> str | None:
    """The first expected line of example ``number`` not found (in order) in ``output``."""
    position = 0
    for line in expected_lines(number):
        found = output.find(line, position)
        if found < 0:
            return line
        position = found + len(line)
    return None


def resolved(document: Document) -> ResolvedDocument:
    return resolve(document, SourcePool.coerce(None))


def section_document(section: str) -> tuple[Document, list[int]]:
    """Every example of ``section`` in one document, each after its marker paragraph."""
    numbers = [e["example"] for e in EXAMPLES if e["section"] == section]
    blocks: list[Block] = []
    for number in numbers:
        blocks.append(Paragraph((Text(marker(number)),)))
        blocks.extend(read_example(number).blocks)
    return Document(tuple(blocks)), numbers


def split_at_markers(output: str) -> dict[int, str]:
    """Squeezed output text per example number (the text after its marker)."""
    parts = _MARKER.split(squeeze(output))
    return {int(parts[i]): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def lost_examples(output: str, numbers: list[int]) -> list[str]:
    chunks = split_at_markers(output)
    problems = [f"example {n}: marker missing" for n in numbers if n not in chunks]
    for number in numbers:
        line = missing_line(chunks.get(number, ""), number) if number in chunks else None
        if line is not None:
            problems.append(f"example {number}: lost {line!r}")
    return problems


# ---------------------------------------------------------------- text read back from outputs


def html_text(markup: str) -> str:
    """Visible text of an HTML page: the body's text and the alt text of its images."""
    body = html.document_fromstring(markup).body
    parts: list[str] = []

    def walk(element: Any) -> None:
        if element.tag == "img":
            parts.append(element.get("alt") or "")
        elif isinstance(element.tag, str) and element.tag not in ("script", "style"):
            parts.append(element.text or "")
            for child in element:
                walk(child)
        parts.append(element.tail or "")

    walk(body)
    return "".join(parts)


def docx_text(data: bytes) -> str:
    """Text of a Word document body in order: runs, tabs, breaks, image descriptions."""
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        root = etree.fromstring(package.read("word/document.xml"))
    parts: list[str] = []
    for element in root.iter():
        if element.tag == f"{_W}t":
            parts.append(element.text or "")
        elif element.tag in (f"{_W}tab", f"{_W}br", f"{_W}p"):
            parts.append("\n")
        elif element.tag.endswith("}docPr"):
            parts.append(element.get("descr") or "")
    return "".join(parts)


def pptx_text(data: bytes) -> str:
    """Text of every slide in order (shapes, tables, picture descriptions, notes); the title of
    a continuation slide ("… (cont.)") is left out, as it interrupts the flowing text."""
    from pptx import Presentation

    parts: list[str] = []
    for slide in Presentation(io.BytesIO(data)).slides:
        title = slide.shapes.title
        continued = title is not None and title.text.endswith(ENGLISH.continued)
        skip = title.element if continued else None
        for element in slide.element.iter():
            if skip is not None and any(a is skip for a in element.iterancestors()):
                continue
            if element.tag == f"{_A}t":
                parts.append(element.text or "")
            elif element.tag == f"{_A}p":
                parts.append("\n")
            elif element.tag.endswith("}cNvPr") and element.get("descr"):
                parts.append(element.get("descr") or "")
        if slide.has_notes_slide:
            parts.append("\n" + slide.notes_slide.notes_text_frame.text)
    return "".join(parts)


def pdf_text(data: bytes) -> str:
    return normalize_pdf(data)["text.txt"]


# ---------------------------------------------------------------- tests


def test_the_spec_is_complete() -> None:
    assert len(EXAMPLES) == 652
    assert sum(len(section_document(s)[1]) for s in SECTIONS) == 652


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: f"ex{e['example']}")
def test_html_writer_keeps_the_text(example: dict[str, Any]) -> None:
    number = example["example"]
    output = render_html(resolved(read_example(number)), OPTIONS)
    assert missing_line(squeeze(html_text(output)), number) is None, example["markdown"]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: f"ex{e['example']}")
def test_markdown_writer_keeps_the_text(example: dict[str, Any]) -> None:
    number = example["example"]
    output = markdown_text(resolved(read_example(number)), OPTIONS)
    again = squeeze(document_text(read_markdown(output)))
    assert missing_line(again, number) is None, (example["markdown"], output)


@cache
def section_pdf(section: str) -> bytes:
    """The section's combined document as PDF (laid out once for the PDF and PNG tests)."""
    document, _ = section_document(section)
    return pdf_bytes(render_html(resolved(document), OPTIONS), OPTIONS)


@pytest.mark.parametrize("section", SECTIONS)
def test_docx_writer_keeps_the_text(section: str) -> None:
    document, numbers = section_document(section)
    assert lost_examples(docx_text(docx_bytes(resolved(document), OPTIONS)), numbers) == []


@pytest.mark.parametrize("section", SECTIONS)
def test_pptx_writer_keeps_the_text(section: str) -> None:
    document, numbers = section_document(section)
    assert lost_examples(pptx_text(pptx_bytes(resolved(document), OPTIONS)), numbers) == []


@pytest.mark.slow  # 26 WeasyPrint renders; the Typst writer's twin below stays in the fast loop
@pytest.mark.parametrize("section", SECTIONS)
def test_pdf_writer_keeps_the_text(section: str) -> None:
    _, numbers = section_document(section)
    assert lost_examples(pdf_text(section_pdf(section)), numbers) == []


@pytest.mark.parametrize("section", SECTIONS)
def test_typst_pdf_writer_keeps_the_text(section: str) -> None:
    document, numbers = section_document(section)
    pdf, _, _ = typst_pdf(resolved(document), OPTIONS)
    assert lost_examples(pdf_text(pdf), numbers) == []


@pytest.mark.parametrize("section", SECTIONS)
def test_png_writer_rasterizes_every_page(section: str) -> None:
    pdf = section_pdf(section)
    pages = png_pages(pdf, OPTIONS)
    assert len(pages) == len(pdfium.PdfDocument(pdf))
    for data in pages:
        with Image.open(io.BytesIO(data)) as image:
            assert image.format == "PNG"
            assert sum(image.convert("L").histogram()[:200]) > 0, "a blank page"


def test_the_check_notices_lost_text() -> None:
    document, numbers = section_document("Tabs")
    output = docx_text(docx_bytes(resolved(document), OPTIONS))
    assert lost_examples(output, numbers) == []
    damaged = output.replace("foo", "")
    assert lost_examples(damaged, numbers), "removing text must be noticed"
