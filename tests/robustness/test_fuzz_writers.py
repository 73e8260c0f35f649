"""Fuzz every writer: generated IR documents and hostile content through the whole pipeline.

Properties: no exception except the documented error types, and every output opens in its
own reader (HTML parser, markdown-it, python-docx, python-pptx, pypdf). The expensive writers
run a sixth of the profile's examples, PDF (each engine) and the whole pipeline a fifteenth
(``fuzz_strategies.heavy``): 25 and 10 in the "ci" profile, 833 and 333 in "fuzz".
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from PIL import Image as PILImage

import tests.hypothesis_profiles  # noqa: F401  (registers the Hypothesis profiles)
from citations.pool import SourcePool
from renderers.api import Session, build_options, prepare
from renderers.document import Document
from renderers.options import RenderOptions
from renderers.resolve import ResolvedDocument, resolve
from renderers.writers.docx.writer import docx_bytes
from renderers.writers.html.report import render_html
from renderers.writers.markdown import markdown_text
from renderers.writers.pdf import pdf_bytes
from renderers.writers.pptx.output import pptx_bytes
from renderers.writers.typst.writer import typst_pdf
from tests.fuzz_strategies import (
    DOCUMENTED_ERRORS,
    FUZZ_POOL,
    documents,
    heavy,
    hostile_html,
    hostile_markdown,
)

#: Fuzz runs take seconds per property: `make test`, not `make test-fast`.
pytestmark = pytest.mark.slow

POOL = SourcePool.from_rows(FUZZ_POOL)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("fuzz-base")
    PILImage.new("RGB", (16, 8), (0, 128, 0)).save(directory / "ok.png")
    return directory


def _options(base: Path, **extra: object) -> RenderOptions:
    return RenderOptions(base_dir=base, out_dir=base, **extra)  # type: ignore[arg-type]


def _resolved(document: Document, numbering: str) -> ResolvedDocument:
    return resolve(document, POOL, numbering=numbering)  # type: ignore[arg-type]


def _opens_html(data: str) -> None:
    parser = HTMLParser()
    parser.feed(data)
    parser.close()
    assert data.lstrip().lower().startswith("<!doctype html")


def _opens_markdown(data: str) -> None:
    MarkdownIt("commonmark").render(data)


def _opens_docx(data: bytes) -> None:
    import docx

    docx.Document(io.BytesIO(data))


def _opens_pptx(data: bytes) -> None:
    import pptx

    pptx.Presentation(io.BytesIO(data))


def _opens_pdf(data: bytes) -> None:
    from pypdf import PdfReader

    assert len(PdfReader(io.BytesIO(data)).pages) >= 1


def _write(run: Callable[[], object], check: Callable[..., None]) -> None:
    try:
        output = run()
    except DOCUMENTED_ERRORS:
        return
    check(output)


NUMBERING = st.sampled_from(["appearance", "sid"])


@heavy()
@given(document=documents, numbering=NUMBERING)
def test_fuzz_html_writer(base: Path, document: Document, numbering: str) -> None:
    rdoc = _resolved(document, numbering)
    _write(lambda: render_html(rdoc, _options(base)), _opens_html)


@heavy()
@given(document=documents, numbering=NUMBERING)
def test_fuzz_markdown_writer(base: Path, document: Document, numbering: str) -> None:
    rdoc = _resolved(document, numbering)
    _write(lambda: markdown_text(rdoc, _options(base)), _opens_markdown)


@heavy()
@given(document=documents, numbering=NUMBERING,
       citations=st.sampled_from(["superscript", "footnotes"]))
def test_fuzz_docx_writer(base: Path, document: Document, numbering: str, citations: str) -> None:
    rdoc = _resolved(document, numbering)
    _write(lambda: docx_bytes(rdoc, _options(base, docx_citations=citations)), _opens_docx)


@heavy()
@given(document=documents, numbering=NUMBERING, ratio=st.sampled_from(["16:9", "4:3"]))
def test_fuzz_pptx_writer(base: Path, document: Document, numbering: str, ratio: str) -> None:
    rdoc = _resolved(document, numbering)
    _write(lambda: pptx_bytes(rdoc, _options(base, slide_ratio=ratio)), _opens_pptx)


@heavy(15)
@given(document=documents)
def test_fuzz_pdf_writer(base: Path, document: Document) -> None:
    rdoc = _resolved(document, "appearance")
    options = _options(base)
    _write(lambda: pdf_bytes(render_html(rdoc, options), options), _opens_pdf)


@heavy(15)
@given(document=documents, numbering=NUMBERING)
def test_fuzz_typst_pdf_writer(base: Path, document: Document, numbering: str) -> None:
    rdoc = _resolved(document, numbering)
    options = _options(base, pdf_engine="typst")
    _write(lambda: typst_pdf(rdoc, options)[0], _opens_pdf)


CHECKS: dict[str, Callable[..., None]] = {
    "html": lambda blobs: _opens_html(blobs[0].decode("utf-8")),
    "md": lambda blobs: _opens_markdown(blobs[0].decode("utf-8")),
    "docx": lambda blobs: _opens_docx(blobs[0]),
    "pptx": lambda blobs: _opens_pptx(blobs[0]),
    "pdf": lambda blobs: _opens_pdf(blobs[0]),
}


@heavy(15)
@given(content=st.one_of(hostile_markdown, hostile_html),
       content_format=st.sampled_from([None, "markdown", "html"]))
def test_fuzz_pipeline_every_format(base: Path, content: str, content_format: str | None) -> None:
    """Hostile content through reader, citation pass and every writer (as the API runs them)."""
    try:
        prepared = prepare(content, sources_pool=POOL, content_format=content_format,
                           options=build_options(base_dir=base, out_dir=base))
    except DOCUMENTED_ERRORS:
        return
    session = Session(prepared)
    for fmt, check in CHECKS.items():
        _write(lambda fmt=fmt: list(session.artifact(fmt).blobs), check)  # type: ignore[misc]
    typst = Session(dataclasses.replace(
        prepared, options=dataclasses.replace(prepared.options, pdf_engine="typst")))
    _write(lambda: list(typst.artifact("pdf").blobs), CHECKS["pdf"])
