"""The PNG writer: the PDF's pages rasterized with pypdfium2 and saved with Pillow."""

from __future__ import annotations

import io
import os
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor

import pypdfium2 as pdfium
from PIL import Image

from renderers.errors import InputError, LimitError
from renderers.options import RenderOptions

#: zlib level for PNG: 1 encodes ~1.5× faster than Pillow's default 6 for ~10 % larger files.
COMPRESS_LEVEL = 1
#: Encoding threads (Pillow's encoder releases the GIL; pdfium rasterizes on one thread).
ENCODE_WORKERS = max(1, min(4, os.cpu_count() or 1))


def select_pages(page_count: int, pages: tuple[int, ...] | None) -> list[int]:
    """0-based indexes of the requested 1-based ``pages`` (all when None); bad numbers raise."""
    if pages is None:
        return list(range(page_count))
    bad = [p for p in pages if not 1 <= p <= page_count]
    if bad:
        raise InputError(
            f"pages={list(pages)}: page {bad[0]} does not exist; accepted are 1..{page_count}"
        )
    return [p - 1 for p in dict.fromkeys(pages)]


def encode_png(image: Image.Image, dpi: int) -> bytes:
    """PNG bytes with only the pHYs (dpi) chunk besides the image: no time, no text chunks."""
    buffer = io.BytesIO()
    image.save(buffer, "PNG", compress_level=COMPRESS_LEVEL, dpi=(dpi, dpi))
    return buffer.getvalue()


def png_pages(pdf: bytes, options: RenderOptions) -> list[bytes]:
    """One PNG per selected page (``options.pages``, default all) at ``options.dpi``.

    Pages rasterize in order on this thread while earlier ones encode on a small thread pool;
    at most ``2 × ENCODE_WORKERS`` page bitmaps are held at once.
    """
    document = pdfium.PdfDocument(pdf)
    try:
        indexes = select_pages(len(document), options.pages)
        if len(indexes) > options.limits.max_pages:
            raise LimitError(
                f"{len(indexes)} pages to rasterize; the limit is {options.limits.max_pages}"
            )
        scale = options.dpi / 72
        out: list[bytes] = []
        pending: deque[Future[bytes]] = deque()
        with ThreadPoolExecutor(max_workers=ENCODE_WORKERS) as pool:
            for index in indexes:
                page = document[index]
                try:
                    image = page.render(scale=scale, draw_annots=False).to_pil()
                finally:
                    page.close()
                pending.append(pool.submit(encode_png, image, options.dpi))
                if len(pending) >= 2 * ENCODE_WORKERS:
                    out.append(pending.popleft().result())
            out.extend(f.result() for f in pending)
        return out
    finally:
        document.close()
