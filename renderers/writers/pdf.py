"""The PDF writer: WeasyPrint on our HTML, resources through the sandbox, deterministic bytes.

The only module that imports WeasyPrint: its ``url_fetcher`` seam is :class:`SandboxFetcher`,
an adapter over the pure :mod:`renderers.sandbox`.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import zlib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from urllib.request import url2pathname

import pydyf
from fontTools.misc.timeTools import timestampSinceEpoch
from fontTools.ttLib.tables import _h_e_a_d
from weasyprint import CSS, HTML
from weasyprint.document import Document as WeasyDocument
from weasyprint.formatting_structure.boxes import TableRowBox, TableRowGroupBox
from weasyprint.urls import URLFetcher, URLFetcherResponse, path2url

from renderers.diagnostics import Code, Diagnostic
from renderers.errors import InputError, LimitError, ResourceError, short_repr
from renderers.fonts import installed_font_file
from renderers.metadata import GENERATOR
from renderers.options import Limits, PageSize, RenderOptions
from renderers.resolve import ResolvedDocument
from renderers.sandbox import LoadedImage, Sandbox, allowed_dirs
from renderers.text import document_text
from renderers.writers import Artifact, WriteSource
from renderers.writers.common import (
    PAGE_SIZES,
    check_page_size,
    joined_authors,
    page_dimensions,
    pdf_uri,
)
from renderers.writers.html.report import WrittenReport, print_report
from renderers.writers.html.templating import css_string
from renderers.writers.ooxml import build_timestamp


class SandboxFetcher(URLFetcher):  # type: ignore[misc]
    """A WeasyPrint (≥ 70) URL fetcher that serves only what the sandbox allows, and the
    report's own shared images (``citerender-image:N``) from the table it was given.

    Every refusal raises, so WeasyPrint logs a warning and skips the resource; each refusal is
    also kept in :attr:`refused`, which the writer returns as its diagnostics. A
    ``citerender-image:`` URL not in the table (author HTML or CSS naming one) is refused like
    any other scheme the sandbox does not know.
    """

    def __init__(
        self, allowed_dirs: Sequence[Path], *, max_image_pixels: int = 50_000_000,
        images: Mapping[str, LoadedImage] | None = None,
    ) -> None:
        super().__init__(timeout=1, allowed_protocols=("data", "file"), allow_redirects=False)
        self.sandbox = Sandbox(allowed_dirs)
        self.max_image_pixels = max_image_pixels
        self.images: Mapping[str, LoadedImage] = images or {}
        self.refused: list[Diagnostic] = []

    @classmethod
    def for_options(
        cls, options: RenderOptions, images: Mapping[str, LoadedImage] | None = None
    ) -> SandboxFetcher:
        """The fetcher for a render with ``options`` (allowed dirs and pixel limit) serving the
        print report's ``images`` (already loaded and checked by the sandbox)."""
        return cls(allowed_dirs(options), max_image_pixels=options.limits.max_image_pixels,
                   images=images)

    def fetch(self, url: str, headers: Any = None) -> URLFetcherResponse:
        """Serve ``url`` from the image table, the installed fonts or the sandbox, or raise
        :class:`ResourceError`."""
        shared = self.images.get(url)
        if shared is not None:
            return URLFetcherResponse(url, shared.data, {"Content-Type": shared.mime})
        font = installed_font(url)
        if font is not None:
            return URLFetcherResponse(url, font.read_bytes(), {"Content-Type": "font/sfnt"})
        try:
            data, mime = self.sandbox.load_resource(url, self.max_image_pixels)
        except ResourceError as exc:
            shown = url[:80] + ("…" if len(url) > 80 else "")
            self.refused.append(
                Diagnostic(Code.RESOURCE_REFUSED, f"pdf: resource not loaded: {exc}", file=shown)
            )  # reported once, as this diagnostic (a log record would reach stderr a 2nd time)
            raise
        return URLFetcherResponse(url, data, {"Content-Type": mime})

    def open(self, url: Any, data: Any = None, timeout: Any = None) -> URLFetcherResponse:
        """Never let urllib's opener machinery run: everything goes through :meth:`fetch`."""
        return self.fetch(url if isinstance(url, str) else url.full_url)


def installed_font(url: str) -> Path | None:
    """The installed font file a ``file:`` URL names, else None. A face the stylesheet names
    with ``local()`` (templates/report.css) reaches the fetcher as such a URL; the fonts the
    layout finds by family name it reads without asking, so serving these grants nothing."""
    parts = urlsplit(url)
    if parts.scheme.lower() != "file" or parts.netloc not in ("", "localhost"):
        return None
    path = url2pathname(parts.path)
    return Path(path) if installed_font_file(path) else None


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


#: WeasyPrint's own default page size: no fallback stylesheet is needed for it.
_DEFAULT_PAGE_SIZE = "A4"


@lru_cache(maxsize=len(PAGE_SIZES))
def _fallback_page_css(page_size: PageSize) -> CSS:
    """``@page { size: … }`` parsed once per page size (a CSS object is reusable)."""
    return CSS(string=f"@page {{ size: {page_dimensions(page_size).css} }}")


#: Distinct pieces of the report's look kept parsed (:func:`parsed_rules`): report.css comes
#: in one text per page size, CJK face and footer language, the code colours in one per set
#: of token kinds. A parsed report.css holds about 190 KiB, so the cache stays under 7 MiB.
PARSED_RULES_KEPT = 32

#: What a piece parsed once for every document must not hold: rules whose parse writes into
#: one document's own state (its font configuration, counter styles, colour profiles) or
#: loads a resource, relative to a base URL that differs between renders.
_DOCUMENT_BOUND = re.compile(
    r"@(?:font-face|import|counter-style|color-profile)\b|url\(", re.IGNORECASE
)
_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)


@lru_cache(maxsize=PARSED_RULES_KEPT)
def parsed_rules(css: str) -> CSS:
    """A piece of the report's look (:attr:`WrittenReport.stylesheets`) parsed once per
    process for each distinct text: WeasyPrint parsed the report's inline ``<style>`` again
    for every render (10 ms for report.css). Keyed by the whole text, so a page never gets
    another page's rules; parsed without a document's fonts or base URL, which is why a
    piece holding anything that needs them is refused (it stays in the page's ``<style>``).
    A parsed sheet is only read while laying out, so threads may share it."""
    bound = _DOCUMENT_BOUND.search(_COMMENT.sub("", css))
    if bound is not None:
        raise RuntimeError(
            f"a stylesheet of the report's look holds {bound[0]!r}, which WeasyPrint parses "
            "per document: it belongs in the page's own <style>"
        )
    return CSS(string=css)


#: WeasyPrint measures pages in CSS pixels.
_CSS_PX_PER_INCH = 96


def _render_options(options: RenderOptions, rules: Sequence[str] = ()) -> dict[str, Any]:
    """WeasyPrint options: the report's look (``rules``, parsed once: :func:`parsed_rules`)
    or else a fallback page size (the page's own CSS wins), variant, tags, identifier.

    Handed over this way the rules are WeasyPrint's "user" stylesheets, which lose to the
    page's own CSS whatever their specificity: a report page has none but ``style``
    attributes, which beat the report's rules (selectors without an id) either way, and
    its ``@font-face`` rules. The fallback stylesheet is left out for A4, WeasyPrint's
    default, and beside the report's look, which sets its page size: every extra stylesheet
    is matched against every element of the document.
    """
    stylesheets = [parsed_rules(css) for css in rules]
    if not rules and options.page_size != _DEFAULT_PAGE_SIZE:
        stylesheets.append(_fallback_page_css(options.page_size))
    return {
        "stylesheets": stylesheets,
        "pdf_variant": options.pdf_variant,
        "pdf_identifier": True,  # /ID = MD5 of the PDF's own objects: fixed for fixed content
        "optimize_images": False,
    }


class _PageLimit(logging.Filter):
    """Stops WeasyPrint's layout at the first page past ``limits.max_pages``.

    WeasyPrint lays out every page before it returns, and announces each one on its
    ``weasyprint.progress`` logger ("Step 5 - Creating layout - Page N"); this filter raises
    :class:`LimitError` from that announcement, so a 2,500-page input costs the layout of
    ``max_pages`` pages, not of all of them. The limit is per thread (renders may run in
    threads). The progress logger is set to INFO for this and no longer propagates: its
    per-page messages would otherwise reach every root handler.
    """

    def __init__(self) -> None:
        super().__init__()
        self.active = threading.local()

    def filter(self, record: logging.LogRecord) -> bool:
        limit: int | None = getattr(self.active, "max_pages", None)
        if limit is not None and record.msg == _PAGE_MESSAGE and record.args:
            page = record.args[0] if isinstance(record.args, tuple) else None
            if isinstance(page, int) and page > limit:
                raise LimitError(
                    f"the document lays out to more than {limit} pages; the limit is {limit} "
                    "(limits.max_pages)"
                )
        return False  # nothing is printed

    @contextmanager
    def applied(self, max_pages: int) -> Iterator[None]:
        self.active.max_pages = max_pages
        try:
            yield
        finally:
            self.active.max_pages = None


_PAGE_MESSAGE = "Step 5 - Creating layout - Page %d"
_PAGE_LIMIT = _PageLimit()
_PROGRESS = logging.getLogger("weasyprint.progress")
_PROGRESS.setLevel(logging.INFO)
_PROGRESS.propagate = False
_PROGRESS.addFilter(_PAGE_LIMIT)


#: What a table row taller than a page gets (inline, on the second layout): leave to break.
_BREAKABLE_ROW = "break-inside: auto; page-break-inside: auto"


def _rows_split_despite_avoid(document: WeasyDocument) -> list[Any]:
    """The ``<tr>`` elements of body rows kept whole (``break-inside: avoid``, report.css) that
    WeasyPrint split anyway: rows taller than a page.

    WeasyPrint first moves such a row to the next page, leaving the page before with nothing of
    the table, and on an empty page it lays the row out only after dropping the table's header
    (``table_layout`` tries the body under the header as if the page were not empty, where the
    row is refused): the row's pages lost the header row. Left to break, the row starts under
    the header where the table starts and the header repeats on each of its pages, as in Typst.
    """
    pages: dict[Any, set[int]] = {}
    for number, page in enumerate(document.pages):
        for box in page._page_box.descendants():
            if not isinstance(box, TableRowGroupBox) or box.is_header or box.is_footer:
                continue
            for row in box.children:
                if (isinstance(row, TableRowBox) and row.element is not None
                        and row.style["break_inside"] in ("avoid", "avoid-page")):
                    pages.setdefault(row.element, set()).add(number)
    return [element for element, seen in pages.items() if len(seen) > 1]


#: Unicode's line and paragraph separators, as the line feeds WeasyPrint lays out.
_SEPARATORS = str.maketrans({"\u2028": "\n", "\u2029": "\n"})


#: What ends or changes a CSS string written unescaped: a quote, a backslash, a line break.
_CSS_STRING_BREAKERS = re.compile(r'["\\\n\r\f]')


def _anchor_ids_as_written(parsed: HTML) -> None:
    """Give each element whose id (or ``<a name>``) holds a ``"``, a ``\\`` or a line break its
    anchor as a style declaration of the id as a CSS string: WeasyPrint writes the anchor of
    every id as ``-weasy-anchor:"<id>"`` unescaped, which makes no anchor of ``x"y`` (nor of
    ``a\\b``, whose ``\\b`` is a CSS escape, nor of an id a line break ends the string of), so
    the links to it were dropped."""
    for element in parsed.etree_element.iter():
        for name in ("id", "name") if element.tag == "a" else ("id",):
            ident = element.get(name)
            if ident and _CSS_STRING_BREAKERS.search(ident):
                style = element.get("style")
                anchor = f"-weasy-anchor: {css_string(ident)}"
                element.set("style", f"{style};{anchor}" if style else anchor)


def pdf_document(
    html: str, options: RenderOptions, fetcher: SandboxFetcher | None = None,
    stylesheets: Sequence[str] = (),
) -> WeasyDocument:
    """Lay out ``html`` with ``stylesheets`` (the report's look, kept apart from its HTML:
    :attr:`WrittenReport.stylesheets`) through a sandboxed fetcher, base URL inside the base
    directory, and set metadata."""
    fetcher = fetcher or SandboxFetcher.for_options(options)
    # WeasyPrint's line breaking asserts on a space before U+2029 (PARAGRAPH SEPARATOR), which
    # Pango breaks at, and draws U+2028 (LINE SEPARATOR) as a missing glyph: each is laid out
    # as the line feed it stands for.
    html = html.translate(_SEPARATORS)
    parsed = HTML(string=html, base_url=_base_url(options), url_fetcher=fetcher)
    _anchor_ids_as_written(parsed)
    layout = _render_options(options, stylesheets)
    with _PAGE_LIMIT.applied(options.limits.max_pages):
        document = parsed.render(**layout)
        tall_rows = _rows_split_despite_avoid(document) if "<tr" in html else []
        if tall_rows:
            for row in tall_rows:
                row.set("style", f"{row.get('style') or ''};{_BREAKABLE_ROW}")
            document = parsed.render(**layout)
    if len(document.pages) > options.limits.max_pages:
        raise LimitError(
            f"the document lays out to {len(document.pages)} pages; the limit is "
            f"{options.limits.max_pages} (Limits.max_pages)"
        )
    for number, page in enumerate(document.pages, 1):
        check_page_size(number, page.width / _CSS_PX_PER_INCH, page.height / _CSS_PX_PER_INCH,
                        options.limits)
    metadata = document.metadata
    if options.title.strip():
        metadata.title = options.title.strip()
    if options.author.strip():
        metadata.authors = [options.author.strip()]
    elif metadata.authors:  # the page's <meta name="author"> tags: one value, as Typst's
        metadata.authors = [joined_authors(metadata.authors)]
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


def _compress_streams_once(document: WeasyDocument, pdf: pydyf.PDF) -> None:
    """WeasyPrint finisher: deflate every stream now, once, exactly as pydyf would.

    pydyf deflates a stream each time its bytes are asked for, and the fixed ``/ID`` (an MD5
    of every object) asks once more than writing does, so without this every page's content
    and every font was compressed twice. The bytes written are the same either way.
    """
    for obj in pdf.objects:
        if isinstance(obj, pydyf.Stream) and obj.compress:
            compressor = zlib.compressobj(level=9)  # pydyf's level
            raw = b"\n".join(pydyf._to_bytes(item) for item in obj.stream)
            obj.stream = [compressor.compress(raw) + compressor.flush()]
            obj.extra["Filter"] = "/FlateDecode"
            obj.compress = False


def _set_link_tooltips(pdf: pydyf.PDF, tooltips: Mapping[str, str]) -> None:
    """Give each link annotation whose target (an in-document anchor such as ``src-3``, or a
    URL) is in ``tooltips`` that text as its ``/Contents``, which PDF viewers show as the
    link's tooltip: a citation shows its source's title, not an anchor id."""
    for obj in pdf.objects:
        if not isinstance(obj, pydyf.Dictionary) or obj.get("Subtype") != "/Link":
            continue
        target = obj.get("Dest")
        if target is None and isinstance(obj.get("A"), pydyf.Dictionary):
            target = obj["A"].get("URI")
        text = tooltips.get(target.string) if isinstance(target, pydyf.String) else None
        if text:
            obj["Contents"] = pydyf.String(text)


def write_document(
    document: WeasyDocument, options: RenderOptions, tooltips: Mapping[str, str] | None = None
) -> bytes:
    """The PDF bytes of a laid-out document (same options as :func:`pdf_document`);
    ``tooltips`` maps link targets to the tooltip their annotations get."""

    def finish(laid_out: WeasyDocument, pdf: pydyf.PDF) -> None:
        if tooltips:
            _set_link_tooltips(pdf, tooltips)
        _compress_streams_once(laid_out, pdf)

    with _fixed_font_timestamps():
        data = document.write_pdf(finisher=finish, **_render_options(options))
    assert isinstance(data, bytes)
    return data


def citation_tooltips(rdoc: ResolvedDocument) -> dict[str, str]:
    """Link target → tooltip: each Sources entry's anchor (what citation numbers link to) and
    each cited URL (what inline-link citations link to) → the source's title."""
    tips = {entry.anchor: entry.title for entry in rdoc.entries}
    tips.update({pdf_uri(entry.url): entry.title for entry in rdoc.entries if entry.url})
    return tips


def pdf_bytes(
    html: str, options: RenderOptions, images: Mapping[str, LoadedImage] | None = None,
    stylesheets: Sequence[str] = (),
) -> bytes:
    """The PDF of ``html`` (a print report's ``images`` served by the fetcher, its
    ``stylesheets`` laid out with it): A4 (or Letter), title/author metadata, links,
    bookmarks, no dates unless ``SOURCE_DATE_EPOCH`` is set, byte-identical for identical
    input."""
    fetcher = SandboxFetcher.for_options(options, images)
    return write_document(pdf_document(html, options, fetcher, stylesheets), options)


def report_pdf_bytes(report: WrittenReport, options: RenderOptions) -> bytes:
    """The PDF of a print report (:func:`print_report`): its HTML, images and stylesheets."""
    return pdf_bytes(report.html, options, report.images, report.stylesheets)


#: More characters of text than any page of the report's own look holds (A4 or Letter, its
#: smallest type, tables and code included): text length over this is a page count the layout
#: cannot come in under. Author CSS may set any type size, so its HTML is not estimated.
MAX_CHARS_PER_PAGE = 15_000


def check_page_estimate(text_chars: int, limits: Limits) -> None:
    """Refuse before layout a report whose text alone needs more than ``limits.max_pages``."""
    least = text_chars // MAX_CHARS_PER_PAGE
    if least > limits.max_pages:
        raise LimitError(
            f"the document's {text_chars:,} characters of text need at least {least:,} pages; "
            f"the limit is {limits.max_pages} (limits.max_pages)"
        )


def laid_out_html(source: WriteSource) -> WrittenReport:
    """What WeasyPrint lays out: the author's own look for HTML input, else the report written
    for print, whose images shown more than once the fetcher serves from its table."""
    if source.authors_look:
        return WrittenReport(source.print_html(), {})
    return print_report(source.rdoc, source.options)


def pdf_artifact(source: WriteSource) -> Artifact:
    """The PDF writer: the pages it laid out, and every resource its sandbox refused."""
    options = source.options
    if not source.authors_look:
        check_page_estimate(len(document_text(source.rdoc.document)), options.limits)
    report = laid_out_html(source)
    fetcher = SandboxFetcher.for_options(options, report.images)
    with _authors_css_faults(source.authors_look):
        document = pdf_document(report.html, options, fetcher, report.stylesheets)
        data = write_document(document, options, citation_tooltips(source.rdoc))
    return Artifact((data,), stats={"pages": len(document.pages)},
                    diagnostics=tuple(fetcher.refused))


#: What WeasyPrint raises, laying out or drawing, on CSS past what it handles (a 1e9 px font
#: divides by zero, a page too small for its margins leaves a line no room, a -1e9 px
#: letter-spacing overflows Pango's integers).
_LAYOUT_FAULTS = (ArithmeticError, IndexError, ValueError, AssertionError)


@contextmanager
def _authors_css_faults(authors_look: bool) -> Iterator[None]:
    """WeasyPrint's failures on the HTML input's own styles as the input's error, naming what
    works; on the report's own look they stay internal errors (our CSS, our bug)."""
    try:
        yield
    except _LAYOUT_FAULTS as exc:
        if not authors_look:
            raise
        raise InputError(
            "the HTML input's own styles could not be laid out (WeasyPrint: "
            f"{type(exc).__name__}: {short_repr(str(exc), 80)}); accepted: CSS whose sizes "
            "WeasyPrint can lay out (remove or bound the rule), or pdf_engine='typst', which "
            "lays the input out in the report's look"
        ) from exc
