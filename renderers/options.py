"""Options shared by every writer, validated once."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from renderers.errors import InputError

Numbering = Literal["appearance", "sid"]
PageSize = Literal["A4", "Letter"]
FORMATS: tuple[str, ...] = ("pdf", "png", "docx", "pptx", "html", "md")


@dataclass(frozen=True)
class Limits:
    """Input limits; each fails fast with :class:`renderers.errors.LimitError`."""

    max_content_bytes: int = 20 * 1024 * 1024
    max_citations: int = 200_000
    max_nesting: int = 64
    max_table_rows: int = 100_000
    max_pool_rows: int = 200_000
    max_image_pixels: int = 50_000_000
    max_pages: int = 2_000


@dataclass(frozen=True)
class RenderOptions:
    """Everything a writer may read. Unknown values are rejected by :meth:`validate`."""

    title: str = ""
    author: str = ""
    numbering: Numbering = "appearance"
    strict: bool = False
    sources_heading: str = "Sources"
    page_size: PageSize = "A4"
    base_dir: Path | None = None  # resources load only from here (and the output directory)
    out_dir: Path | None = None
    # PDF
    pdf_variant: str | None = None  # "pdf/a-3b" | "pdf/ua-1"
    # PNG
    dpi: int = 110
    pages: tuple[int, ...] | None = None  # 1-based page numbers; None = every page
    # DOCX
    docx_citations: Literal["superscript", "footnotes"] = "superscript"
    reference_docx: Path | None = None
    # PPTX
    slide_level: int = 2
    slide_ratio: Literal["16:9", "4:3"] = "16:9"
    source_footer: bool = True
    reference_pptx: Path | None = None
    limits: Limits = field(default_factory=Limits)

    def validate(self) -> RenderOptions:
        """Return self, or raise :class:`InputError` naming the bad option and what is accepted."""
        if self.numbering not in ("appearance", "sid"):
            raise InputError(
                f"numbering={self.numbering!r}: accepted values are 'appearance', 'sid'"
            )
        if self.page_size not in ("A4", "Letter"):
            raise InputError(f"page_size={self.page_size!r}: accepted values are 'A4', 'Letter'")
        if self.pdf_variant not in (None, "pdf/a-3b", "pdf/ua-1"):
            raise InputError(
                f"pdf_variant={self.pdf_variant!r}: accepted values are 'pdf/a-3b', 'pdf/ua-1'"
            )
        if not 10 <= self.dpi <= 600:
            raise InputError(f"dpi={self.dpi}: accepted range is 10..600")
        if self.docx_citations not in ("superscript", "footnotes"):
            raise InputError(
                f"docx_citations={self.docx_citations!r}: accepted values are "
                "'superscript', 'footnotes'"
            )
        if not 1 <= self.slide_level <= 6:
            raise InputError(f"slide_level={self.slide_level}: accepted range is 1..6")
        if self.slide_ratio not in ("16:9", "4:3"):
            raise InputError(f"slide_ratio={self.slide_ratio!r}: accepted values are '16:9', '4:3'")
        return self
