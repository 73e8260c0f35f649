"""Writers report: each registered writer returns an artifact with its bytes, its own counts and
its diagnostics; the registry is the one table of which code writes which format."""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from PIL import Image

from citations.pool import SourcePool
from renderers.api import build_options, prepare
from renderers.diagnostics import Code, Diagnostic, collect, forward, report
from renderers.errors import InputError
from renderers.options import FORMATS, RenderOptions
from renderers.pipeline import Session
from renderers.readers.markdown import read_markdown
from renderers.readers.numeric import map_numeric_citations
from renderers.resolve import ResolvedDocument, resolve
from renderers.writers import REGISTRY, Artifact, writer_for
from renderers.writers.pdf import pdf_artifact
from renderers.writers.pptx.output import pptx_artifact

POOL = [{"sid": 1, "title": "Outlook", "url": "https://www.iea.org/outlook"}]


@dataclass
class Source:
    """A bare WriteSource: a resolved document, options and fixed HTML to lay out (as the
    author's look; without it the PDF writer lays out the report)."""

    rdoc: ResolvedDocument
    options: RenderOptions
    html: str = ""
    made: dict[str, Artifact] = field(default_factory=dict)
    html_text: str | None = None  # the text of HTML input (None: markdown input)

    def artifact(self, fmt: str) -> Artifact:
        return self.made[fmt]

    def print_html(self) -> str:
        return self.html

    @property
    def authors_look(self) -> bool:
        return bool(self.html)  # fixed HTML stands for HTML input's own look

    def html_input(self) -> str | None:
        return self.html_text


def source_of(markdown: str, html: str = "", **options: object) -> Source:
    rdoc = resolve(read_markdown(markdown), SourcePool.from_rows(POOL))
    return Source(rdoc, RenderOptions(**options), html)  # type: ignore[arg-type]


def test_the_registry_has_one_writer_per_format() -> None:
    assert tuple(REGISTRY) == FORMATS
    for fmt in FORMATS:
        assert callable(writer_for(fmt))
    with pytest.raises(InputError, match="accepted: pdf, png"):
        writer_for("odt")


def test_the_pdf_writer_reports_what_its_sandbox_refused(tmp_path: Path) -> None:
    html = (
        "<html><head><link rel='stylesheet' href='https://evil.example/x.css'></head><body>"
        "<p>Text</p><img src='file:///etc/passwd'></body></html>"
    )
    artifact = pdf_artifact(source_of("Text", html, base_dir=tmp_path))
    refused = {d.file: d for d in artifact.diagnostics}
    assert set(refused) == {"https://evil.example/x.css", "file:///etc/passwd"}
    assert {d.code for d in artifact.diagnostics} == {Code.RESOURCE_REFUSED}
    document = pdfium.PdfDocument(artifact.data)
    assert artifact.stats == {"pages": len(document)}
    document.close()


def test_the_typst_engine_writes_the_pdf_from_the_document_model() -> None:
    writer = writer_for("pdf", "typst")
    assert writer is not writer_for("pdf") and writer_for("png", "typst") is writer_for("png")
    artifact = writer(source_of("# T\n\nText [[S:1]]"))
    assert artifact.data.startswith(b"%PDF") and artifact.diagnostics == ()
    assert artifact.stats == {"pages": 1}
    styled = source_of("# T\n\nText [[S:1]]")
    styled.html_text = "<style>p { color: red }</style><h1>T</h1><p>Text [[S:1]]</p>"
    assert [d.code for d in writer(styled).diagnostics] == [Code.STYLES_NOT_APPLIED]


def test_the_pptx_writer_returns_its_slide_count_and_what_it_shortened() -> None:
    # a code line longer than a whole slide holds is shortened (a tall table row is not: it
    # goes on in rows on the next slides)
    code = "## Code\n\n```\n" + "x" * 20000 + "\n```\n\nText[[S:1]]\n"
    artifact = pptx_artifact(source_of(code))
    with zipfile.ZipFile(io.BytesIO(artifact.data)) as package:
        slides = [n for n in package.namelist() if n.startswith("ppt/slides/slide")]
    assert artifact.stats == {"slides": len(slides)}
    (shortened,) = set(artifact.diagnostics)
    assert shortened.code is Code.CONTENT_SHORTENED and "code line" in shortened.message
    assert pptx_artifact(source_of("## Fine\n\nShort.[[S:1]]")).diagnostics == ()


def test_png_pages_carry_the_pdf_diagnostics(tmp_path: Path) -> None:
    options = build_options(base_dir=tmp_path, out_dir=tmp_path, dpi=20)
    session = Session(prepare("Hi.[[S:1]]\n\n![x](../secret.png)\n", sources_pool=POOL,
                              options=options))
    png = session.artifact("png")
    assert png.stats == {"pages": len(png.blobs)} and png.stats["pages"] >= 1
    with Image.open(io.BytesIO(png.blobs[0])) as image:
        assert image.format == "PNG"
    assert [d.code for d in png.diagnostics] == [Code.IMAGE_REFUSED]
    assert png.diagnostics == session.artifact("pdf").diagnostics == (
        session.artifact("html").diagnostics
    )


def test_reported_diagnostics_stay_in_their_scope() -> None:
    first = Diagnostic(Code.IMAGE_REFUSED, "one", file="a.png")
    second = Diagnostic(Code.CONTENT_SHORTENED, "two", slide=3)
    report(first)  # no scope: logged, not kept anywhere
    with collect() as outer:
        report(first)
        with collect() as inner:
            report(second)
        assert inner == [second] and outer == [first]
        forward(inner)
    assert outer == [first, second]
    assert second.to_dict() == {"code": "content-shortened", "message": "two", "slide": 3}
    assert str(first) == "one"


def test_the_numeric_dialect_reports_indexes_past_the_pool() -> None:
    pool = SourcePool.from_rows([*POOL, {"sid": 7, "title": "Other"}])
    text, found = map_numeric_citations("A [2].\n\nB [5].\n\n`[1]`\n", "markdown", pool)
    assert text == "A [[S:7]].\n\nB [5].\n\n`[1]`\n"
    (diagnostic,) = found
    assert diagnostic.code is Code.NUMERIC_OUT_OF_RANGE and diagnostic.line == 3
    assert "'[5]'" in diagnostic.message
