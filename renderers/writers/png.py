"""The PNG writer: the PDF's pages rasterized with pypdfium2, written as PNG with zlib-ng deflate.

Pillow's PNG encoder picks a row filter adaptively (all five tried on every row), which costs
three quarters of its encoding time on a text page. Here each row is stored unfiltered and the
image data is deflated with zlib-ng (``zlib-ng``) at level 1: on a 150-dpi A4 text page (3.5 MB
of pixels) 1.3 ms against 6.6 ms for the standard library's zlib and much more for Pillow
(text pages are long runs of white that deflate well unfiltered). ISA-L (``isal``) was faster
still (0.7 ms) but not deterministic: the same page compressed on the encoder threads sometimes
gave different (valid) bytes, once in about forty runs of the determinism tests, which broke
byte-identical PNGs. The pixels are exactly pdfium's; the files carry only IHDR, pHYs (dpi),
IDAT and IEND chunks.
"""

from __future__ import annotations

import ctypes
import math
import os
import struct
import zlib
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from zlib_ng import zlib_ng

from renderers.errors import LimitError, OptionError
from renderers.options import RenderOptions
from renderers.writers import Artifact, WriteSource
from renderers.writers.common import check_page_size

#: zlib-ng deflate level: 1 is its fast strategy; 2 writes files ~30 % smaller for 50 % more time.
COMPRESS_LEVEL = 1
#: Compression threads: zlib-ng releases the GIL, and pdfium releases it while rasterizing,
#: so pages rasterize on the calling thread while earlier ones compress.
ENCODE_WORKERS = max(1, min(2, os.cpu_count() or 1))

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: Bytes per pixel of the formats pages are rendered in.
_BYTES_PER_PIXEL: dict[int, int] = {pdfium_c.FPDFBitmap_BGR: 3}
_TRUECOLOR = 2  # PNG colour type of 8-bit RGB
_METERS_PER_INCH = 0.0254


def select_pages(page_count: int, pages: tuple[int, ...] | None) -> list[int]:
    """0-based indexes of the requested 1-based ``pages`` (all when None); bad numbers raise."""
    if pages is None:
        return list(range(page_count))
    bad = [p for p in pages if not 1 <= p <= page_count]
    if bad:
        raise OptionError(
            f"pages={list(pages)}: page {bad[0]} does not exist; accepted are 1..{page_count}",
            field="pages",
        )
    return [p - 1 for p in dict.fromkeys(pages)]


def _chunk(kind: bytes, data: bytes) -> bytes:
    """One PNG chunk: length, type, data, CRC-32 of type and data."""
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


class _FilterStreamBitmap(pdfium.PdfBitmap):
    """A white pdfium bitmap whose memory *is* the PNG filter stream of its pixels (``stream``).

    Each row is preceded by one byte pdfium never writes: the first scan line starts at offset 1
    and each row is ``1 + width × 3`` bytes apart, so the byte before every row keeps its 0,
    PNG's "None" filter. Copying the rows out behind their filter bytes instead took 2.5 ms of
    a 150-dpi A4 page on the rasterizing thread (0.15 s of the 58-page report, a quarter of its
    PNG time). The memory is allocated white, so pypdfium2's fill before rendering (1.3 ms a
    page, pdfium writing 3-byte pixels one by one) is skipped; were pypdfium2 to fill some
    other way, the page would only be filled twice.
    """

    stream: memoryview  # the filter stream: every row behind its filter byte

    @classmethod
    def make(cls, width: int, height: int, *, format: int, rev_byteorder: bool
             ) -> _FilterStreamBitmap:
        """pypdfium2's ``bitmap_maker``: a white bitmap of ``width`` × ``height`` in
        ``format``."""
        stride = 1 + width * _BYTES_PER_PIXEL[format]
        size = stride * height
        # White (0xFF) with a 0 before each row; one spare byte at the end, as pdfium's view
        # starts one byte in and must hold ``stride × height`` bytes.
        memory = bytearray(b"\xff") * (size + 1)
        memory[0:size:stride] = bytes(height)
        pixels = (ctypes.c_ubyte * size).from_buffer(memory, 1)
        bitmap = cls.new_native(width, height, format, rev_byteorder, buffer=pixels,
                                stride=stride)
        bitmap.stream = memoryview(memory)[:size]
        return bitmap

    def fill_rect(self, *args: object, **kwargs: object) -> None:
        """Nothing to do: the memory is white already."""


def encode_png(rows: bytes | memoryview, width: int, height: int, dpi: int) -> bytes:
    """PNG bytes of 8-bit RGB ``rows`` (each row led by its filter byte, as
    :func:`rasterize` gives them): no time, no text chunks."""
    ppm = int(dpi / _METERS_PER_INCH + 0.5)  # pixels per metre, rounded as Pillow does
    header = struct.pack(">IIBBBBB", width, height, 8, _TRUECOLOR, 0, 0, 0)
    return b"".join((
        _SIGNATURE,
        _chunk(b"IHDR", header),
        _chunk(b"pHYs", struct.pack(">IIB", ppm, ppm, 1)),
        _chunk(b"IDAT", zlib_ng.compress(rows, COMPRESS_LEVEL)),
        _chunk(b"IEND", b""),
    ))


def rasterize(document: pdfium.PdfDocument, index: int, dpi: int) -> tuple[memoryview, int, int]:
    """Page ``index`` at ``dpi`` as the PNG filter stream of its RGB rows (each row led by
    filter type 0, None), its width and its height."""
    page = document[index]
    try:
        bitmap = page.render(
            scale=dpi / 72,
            draw_annots=False,
            may_draw_forms=False,
            bitmap_maker=_FilterStreamBitmap.make,
            force_bitmap_format=pdfium_c.FPDFBitmap_BGR,
            rev_byteorder=True,  # so the 3-byte pixels come out in PNG's RGB order
        )
    finally:
        page.close()
    bitmap.close()  # frees pdfium's handle only: the memory is ours
    return bitmap.stream, bitmap.width, bitmap.height


def check_raster_size(
    document: pdfium.PdfDocument, indexes: Sequence[int], options: RenderOptions
) -> None:
    """Refuse before rasterizing when a selected page is too large (``limits.max_page_inches``)
    or would hold more than ``limits.max_raster_pixels`` pixels at ``options.dpi``: one page's
    bitmap is held in memory whole, so its pixels bound the memory a PNG render needs."""
    limits = options.limits
    for index in indexes:
        width, height = document.get_page_size(index)  # PDF points, 1/72 inch
        check_page_size(index + 1, width / 72, height / 72, limits)
        pixels = math.ceil(width * options.dpi / 72) * math.ceil(height * options.dpi / 72)
        if pixels > limits.max_raster_pixels:
            raise LimitError(
                f"page {index + 1} would be {pixels:,} pixels at {options.dpi} dpi; the limit "
                f"is {limits.max_raster_pixels:,} (limits.max_raster_pixels): lower the dpi"
            )


class _EncodedPages:
    """The PNG pages encoded so far, refused once together they pass ``limits.max_png_bytes``:
    a few pages of a long report at a high dpi can be hundreds of megabytes, all held until
    written (or zipped, in the HTTP service)."""

    def __init__(self, max_bytes: int, wanted: int) -> None:
        self.pages: list[bytes] = []
        self.size = 0
        self.max_bytes = max_bytes
        self.wanted = wanted

    def add(self, page: bytes) -> None:
        self.pages.append(page)
        self.size += len(page)
        if self.size > self.max_bytes:
            raise LimitError(
                f"the first {len(self.pages)} of {self.wanted} PNG pages are already "
                f"{self.size:,} bytes; the limit is {self.max_bytes:,} (limits.max_png_bytes): "
                "lower the dpi or choose fewer pages"
            )


def png_pages(pdf: bytes, options: RenderOptions) -> list[bytes]:
    """One PNG per selected page (``options.pages``, default all) at ``options.dpi``.

    Pages rasterize in order on this thread while earlier ones compress on a small thread
    pool; at most ``2 × ENCODE_WORKERS`` pages of pixels are held at once.
    """
    document = pdfium.PdfDocument(pdf)
    try:
        indexes = select_pages(len(document), options.pages)
        if len(indexes) > options.limits.max_pages:
            raise LimitError(
                f"{len(indexes)} pages to rasterize; the limit is {options.limits.max_pages}"
            )
        check_raster_size(document, indexes, options)
        out = _EncodedPages(options.limits.max_png_bytes, len(indexes))
        pending: deque[Future[bytes]] = deque()
        with ThreadPoolExecutor(max_workers=ENCODE_WORKERS) as pool:
            for index in indexes:
                rows, width, height = rasterize(document, index, options.dpi)
                pending.append(pool.submit(encode_png, rows, width, height, options.dpi))
                if len(pending) >= 2 * ENCODE_WORKERS:
                    out.add(pending.popleft().result())
            while pending:
                out.add(pending.popleft().result())
        return out.pages
    finally:
        document.close()


def png_artifact(source: WriteSource) -> Artifact:
    """The PNG writer: a file per selected page of the render's PDF (whose diagnostics, such as
    refused resources, pass on to the pages)."""
    pages = png_pages(source.artifact("pdf").data, source.options)
    return Artifact(tuple(pages), stats={"pages": len(pages)})
