"""CSL styles and citation formats through the Typst engine: every bundled style's in-text
citations, notes and Sources entries are in the PDF, and their links lead where the WeasyPrint
PDF's do (entries, notes, back to the citations)."""

from __future__ import annotations

import itertools
import re
import unicodedata
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from renderers.api import build_options, prepare
from renderers.document import Cite, iter_inlines, plain_text
from renderers.pipeline import Session
from renderers.styles import BUNDLED
from renderers.testing import normalize_pdf

DATA = Path(__file__).resolve().parents[1] / "styles" / "data"
POOL = str(DATA / "styled-pool.json")


def squeeze(text: str) -> str:
    """``text`` without white space; pdfium reads a hyphen that ends a line as U+FFFE."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text).replace("\ufffe", "-"))


def session(engine: str, **options: object) -> Session:
    content = (DATA / "styled.md").read_text("utf-8")
    return Session(prepare(content, sources_pool=POOL,
                           options=build_options(pdf_engine=engine, **options)))  # fmt: skip


def pdf_text(pdf: bytes) -> str:
    document = pdfium.PdfDocument(pdf)
    return "".join(document[i].get_textpage().get_text_range() for i in range(len(document)))


#: An author-date and a note style run in `make test-fast`; every style in `make test`.
QUICK_STYLES = ("apa", "chicago-note")


@pytest.mark.parametrize(
    "style",
    [s if s in QUICK_STYLES else pytest.param(s, marks=pytest.mark.slow) for s in sorted(BUNDLED)],
)
def test_every_bundled_style_shows_its_citations_and_entries(style: str) -> None:
    typst = session("typst", csl=style)
    shown = squeeze(pdf_text(typst.artifact("pdf").data))
    for entry in typst.rdoc.entries:
        assert squeeze(plain_text(entry.formatted)) in shown, entry.anchor
    cites = [c for c in iter_inlines(typst.rdoc.document.blocks) if isinstance(c, Cite)]
    for cite in cites:
        if cite.children:
            assert squeeze(plain_text(cite.children)) in shown, cite.anchor
    # the same links, to the same pages, as WeasyPrint's PDF of the same document
    weasy = session("weasyprint", csl=style)
    assert link_pages(typst.artifact("pdf").data) == link_pages(weasy.artifact("pdf").data)


@pytest.mark.parametrize("citation_format", ["brackets", "inline-links"])
def test_citation_formats(citation_format: str) -> None:
    typst = session("typst", citation_format=citation_format)
    weasy = session("weasyprint", citation_format=citation_format)
    assert link_pages(typst.artifact("pdf").data) == link_pages(weasy.artifact("pdf").data)


def link_pages(pdf: bytes) -> list[str]:
    """Every link as ``page: target page`` or ``page: uri``, in order: named destinations
    (which only WeasyPrint writes) left out, and the annotations of one link (a box per line,
    per piece of a long word) counted once."""
    lines = normalize_pdf(pdf)["links.txt"].splitlines()
    links = [re.sub(r"goto #\S+ \((page \d+)\)", r"goto \1", line) for line in lines]
    return [link for link, _ in itertools.groupby(links)]
