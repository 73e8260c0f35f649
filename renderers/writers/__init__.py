"""The writers: one per output format, found by name in :data:`REGISTRY`.

A writer is a function from a :class:`WriteSource` to an :class:`Artifact`. The source gives the
resolved document and the options, and the artifacts of the formats a writer builds on (the PDF
writer lays out HTML, the PNG writer rasterizes the PDF), each made once per render. The artifact
is everything the writer knows about what it made: the bytes (one item per file: PNG gives one
per page), its stats (pages, slides — counted while writing, never by re-reading the bytes) and
its diagnostics (pandoc's writers return their log messages the same way).

Writer modules are imported on first use, so ``import renderers`` stays cheap and a format that
is not asked for costs nothing: rendering DOCX never loads WeasyPrint.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from renderers.diagnostics import Diagnostic, unique
from renderers.errors import InputError, RenderError

if TYPE_CHECKING:
    from citations.numbering import CitationPlan
    from renderers.options import RenderOptions
    from renderers.resolve import ResolvedDocument


@dataclass(frozen=True)
class Artifact:
    """What a writer made: its files' bytes, what it counted and what it noticed."""

    blobs: tuple[bytes, ...]
    stats: Mapping[str, int] = field(default_factory=dict)  # "pages", "slides" …
    diagnostics: tuple[Diagnostic, ...] = ()
    #: the citations it shows when they are not the document's: a deck's speaker notes may
    #: cite sources the body does not (``sources_used.json`` records these)
    sources: CitationPlan | None = None

    @classmethod
    def of_text(cls, text: str) -> Artifact:
        """A one-file artifact of UTF-8 text (HTML, Markdown)."""
        return cls((text.encode("utf-8"),))

    @property
    def data(self) -> bytes:
        """The bytes of a one-file artifact (every format but PNG)."""
        return self.blobs[0]

    def text(self) -> str:
        """The bytes of a one-file text artifact, decoded."""
        return self.data.decode("utf-8")

    def with_diagnostics(self, more: Iterable[Diagnostic]) -> Artifact:
        """This artifact with ``more`` diagnostics after its own, each once."""
        return dataclasses.replace(self, diagnostics=unique((*self.diagnostics, *more)))


class WriteSource(Protocol):
    """What a writer reads (the pipeline's session implements it)."""

    @property
    def rdoc(self) -> ResolvedDocument: ...

    @property
    def options(self) -> RenderOptions: ...

    def artifact(self, fmt: str) -> Artifact:
        """The artifact of another format, made once; its diagnostics pass on to the caller."""
        ...

    def print_html(self) -> str:
        """The author's own look of HTML input, laid out as it is (only when
        :attr:`authors_look`)."""
        ...

    @property
    def authors_look(self) -> bool:
        """Whether :meth:`print_html` is the author's own (styled) HTML, not the report's."""
        ...

    def html_input(self) -> str | None:
        """The text of HTML input (None for any other input): the author's own look, which
        only a CSS engine can lay out."""
        ...


class Writer(Protocol):
    """One output format's writer."""

    def __call__(self, source: WriteSource) -> Artifact: ...


@dataclass(frozen=True)
class WriterEntry:
    """Where a format's writer lives, and every module the format needs."""

    module: str
    function: str
    requires: tuple[str, ...]

    def installed(self) -> bool:
        """Whether every module the format needs can be imported (checked without importing)."""
        return all(importlib.util.find_spec(name) is not None for name in self.requires)


_HTML = "renderers.writers.html.report"
_PDF = "renderers.writers.pdf"

#: Format name → its writer. The one place that says which code writes which format.
REGISTRY: dict[str, WriterEntry] = {
    "pdf": WriterEntry(_PDF, "pdf_artifact", (_HTML, _PDF)),
    "png": WriterEntry("renderers.writers.png", "png_artifact", (_HTML, _PDF,
                                                                 "renderers.writers.png")),
    "docx": WriterEntry("renderers.writers.docx.writer", "docx_artifact",
                        ("renderers.writers.docx.writer",)),
    "pptx": WriterEntry("renderers.writers.pptx.output", "pptx_artifact",
                        ("renderers.writers.pptx.output",)),
    "html": WriterEntry(_HTML, "html_artifact", (_HTML,)),
    "md": WriterEntry("renderers.writers.markdown", "markdown_artifact",
                      ("renderers.writers.markdown",)),
}


_TYPST = "renderers.writers.typst.writer"

#: The writers a PDF engine other than WeasyPrint (``RenderOptions.pdf_engine``) brings, by
#: engine and format; a format it does not name is written as :data:`REGISTRY` says (the PNG
#: writer rasterizes whichever engine's PDF).
ENGINE_WRITERS: dict[str, dict[str, WriterEntry]] = {
    "typst": {"pdf": WriterEntry(_TYPST, "pdf_artifact", (_TYPST,))},
}


def available_formats() -> tuple[str, ...]:
    """The output formats whose writer modules are installed, in canonical order."""
    return tuple(fmt for fmt, entry in REGISTRY.items() if entry.installed())


def writer_for(fmt: str, engine: str = "weasyprint") -> Writer:
    """The writer of ``fmt`` (with the PDF engine ``engine``), its module imported on first
    use."""
    entry = ENGINE_WRITERS.get(engine, {}).get(fmt) or REGISTRY.get(fmt)
    if entry is None:
        raise InputError(f"format {fmt!r} is not known; accepted: {', '.join(REGISTRY)}")
    try:
        module = importlib.import_module(entry.module)
    except ImportError as exc:
        raise RenderError(
            f"the writer {entry.module} cannot be loaded ({exc}); available formats: "
            f"{', '.join(available_formats())}"
        ) from exc
    writer: Writer = getattr(module, entry.function)
    return writer
