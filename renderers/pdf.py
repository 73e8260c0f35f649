"""The PDF writer: WeasyPrint on our HTML, resources through the sandbox, deterministic bytes."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fontTools.misc.timeTools import timestampSinceEpoch
from fontTools.ttLib.tables import _h_e_a_d
from weasyprint import CSS, HTML
from weasyprint.document import Document as WeasyDocument
from weasyprint.urls import path2url

from renderers.errors import LimitError
from renderers.fetch import SandboxFetcher, allowed_dirs
from renderers.ooxml import build_timestamp
from renderers.options import RenderOptions
from renderers.templating import PAGE_SIZES

GENERATOR = "citerender"
LOGGER = logging.getLogger(__name__)


def _base_url(options: RenderOptions) -> str | None:
    """``file:`` URL of the first allowed directory (relative references resolve inside it)."""
    dirs = allowed_dirs(options)
    if not dirs:
        return None
    return path2url(os.path.realpath(dirs[0]) + os.sep)


def _w3c_date() -> str | None:
    """``SOURCE_DATE_EPOCH`` as a W3C date, or None when it is not set (then no date is written)."""
    if not os.environ.get("SOURCE_DATE_EPOCH", "").strip():
        return None
    return build_timestamp().strftime("%Y-%m-%dT%H:%M:%SZ")


def _render_options(options: RenderOptions) -> dict[str, Any]:
    """WeasyPrint options: fallback page size (author CSS wins), variant, tags, identifier."""
    fallback = CSS(string=f"@page {{ size: {PAGE_SIZES[options.page_size]} }}")
    return {
        "stylesheets": [fallback],
        "pdf_variant": options.pdf_variant,
        "pdf_identifier": True,  # /ID = MD5 of the PDF's own objects: fixed for fixed content
        "optimize_images": False,
    }


def pdf_document(html: str, options: RenderOptions) -> WeasyDocument:
    """Lay out ``html`` (sandboxed fetcher, base URL inside the base directory) and set metadata."""
    fetcher = SandboxFetcher.for_options(options)
    document = HTML(string=html, base_url=_base_url(options), url_fetcher=fetcher).render(
        **_render_options(options)
    )
    if len(document.pages) > options.limits.max_pages:
        raise LimitError(
            f"the document lays out to {len(document.pages)} pages; the limit is "
            f"{options.limits.max_pages} (Limits.max_pages)"
        )
    metadata = document.metadata
    if options.title.strip():
        metadata.title = options.title.strip()
    if options.author.strip():
        metadata.authors = [options.author.strip()]
    metadata.generator = GENERATOR
    stamp = _w3c_date()
    metadata.created = stamp
    metadata.modified = stamp
    if not metadata.lang:
        metadata.lang = "en"
    return document


@contextmanager
def _fixed_font_timestamps() -> Iterator[None]:
    """Pin the ``head.modified`` date fontTools writes into every embedded font subset.

    fontTools stamps subsets with the current time unless ``SOURCE_DATE_EPOCH`` is set, which
    made PDFs with several subsetted fonts differ from run to run.
    """
    stamp = timestampSinceEpoch(build_timestamp().timestamp())
    original = _h_e_a_d.timestampNow
    _h_e_a_d.timestampNow = lambda: stamp
    try:
        yield
    finally:
        _h_e_a_d.timestampNow = original


def write_document(document: WeasyDocument, options: RenderOptions) -> bytes:
    """The PDF bytes of a laid-out document (same options as :func:`pdf_document`)."""
    with _fixed_font_timestamps():
        data = document.write_pdf(**_render_options(options))
    assert isinstance(data, bytes)
    return data


def pdf_bytes(html: str, options: RenderOptions) -> bytes:
    """The PDF of ``html``: A4 (or Letter), title/author metadata, links, bookmarks, no dates
    unless ``SOURCE_DATE_EPOCH`` is set, byte-identical for identical input."""
    return write_document(pdf_document(html, options), options)


def write_pdf_file(html: str, path: Path, options: RenderOptions) -> bytes:
    """Render ``html`` and write it to ``path``; returns the bytes written."""
    data = pdf_bytes(html, options)
    path.write_bytes(data)
    return data
