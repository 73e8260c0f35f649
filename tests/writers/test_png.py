"""The PNG writer: one PNG per page, right size for the dpi, not blank, deterministic."""

from __future__ import annotations

import io

import pypdfium2 as pdfium
import pytest
from PIL import Image

from citations.pool import SourcePool
from renderers.errors import InputError
from renderers.options import RenderOptions
from renderers.readers.markdown import read_markdown
from renderers.resolve import resolve
from renderers.writers.html.report import render_html
from renderers.writers.pdf import pdf_bytes
from renderers.writers.png import png_pages

A4_POINTS = (595.28, 841.89)


@pytest.fixture(scope="module")
def multi_page_pdf() -> bytes:
    pool = SourcePool.from_rows([{"sid": 1, "title": "Source", "url": "https://example.org/"}])
    text = "# Pages\n\n" + "\n\n".join(
        f"Paragraph {i} with plenty of words to fill up the page quickly [[S:1]]."
        for i in range(60)
    ) + "\n\nΕλληνικά Русский مرحبا नमस्ते 你好\n"
    options = RenderOptions()
    return pdf_bytes(render_html(resolve(read_markdown(text), pool), options), options)


def dark_fraction(png: bytes) -> float:
    with Image.open(io.BytesIO(png)) as image:
        grey = image.convert("L")
        histogram = grey.histogram()
        return sum(histogram[:200]) / (grey.width * grey.height)


def test_every_page_at_the_requested_dpi(multi_page_pdf: bytes) -> None:
    pngs = png_pages(multi_page_pdf, RenderOptions(dpi=60))
    assert len(pngs) == len(pdfium.PdfDocument(multi_page_pdf)) >= 2
    for png in pngs:
        assert png.startswith(b"\x89PNG\r\n\x1a\n")
        with Image.open(io.BytesIO(png)) as image:
            assert image.format == "PNG" and image.mode == "RGB"
            expected = tuple(round(p * 60 / 72) for p in A4_POINTS)
            assert all(abs(a - b) <= 1 for a, b in zip(image.size, expected, strict=True))
            assert round(image.info["dpi"][0]) == 60
        assert 0.0003 < dark_fraction(png) < 0.5  # text was drawn; not blank, not a black box


def test_selected_pages_and_bad_pages(multi_page_pdf: bytes) -> None:
    all_pages = png_pages(multi_page_pdf, RenderOptions(dpi=40))
    only_second = png_pages(multi_page_pdf, RenderOptions(dpi=40, pages=(2,)))
    assert only_second == [all_pages[1]]
    with pytest.raises(InputError, match="page 99 does not exist"):
        png_pages(multi_page_pdf, RenderOptions(dpi=40, pages=(99,)))


def test_deterministic_bytes_without_metadata_chunks(multi_page_pdf: bytes) -> None:
    first = png_pages(multi_page_pdf, RenderOptions(dpi=50))
    assert first == png_pages(multi_page_pdf, RenderOptions(dpi=50))
    for chunk in (b"tIME", b"tEXt", b"iTXt", b"zTXt"):
        assert chunk not in first[0]


def test_higher_dpi_gives_bigger_pages(multi_page_pdf: bytes) -> None:
    small = png_pages(multi_page_pdf, RenderOptions(dpi=30, pages=(1,)))[0]
    large = png_pages(multi_page_pdf, RenderOptions(dpi=90, pages=(1,)))[0]
    with Image.open(io.BytesIO(small)) as a, Image.open(io.BytesIO(large)) as b:
        assert b.width == pytest.approx(a.width * 3, abs=2)


def test_page_encoding_gives_the_same_bytes_on_concurrent_threads(multi_page_pdf: bytes) -> None:
    """The deflate step runs on encoder threads; ISA-L, used before, now and then gave other
    (valid) bytes for the same page there. Many concurrent encodings must all agree."""
    from concurrent.futures import ThreadPoolExecutor

    from renderers.writers.png import encode_png, rasterize

    document = pdfium.PdfDocument(multi_page_pdf)
    try:
        pages = [rasterize(document, i, 100) for i in range(len(document))]
    finally:
        document.close()
    expected = [encode_png(rows, w, h, 100) for rows, w, h in pages]
    with ThreadPoolExecutor(max_workers=4) as pool:
        for _ in range(10):
            encoded = list(pool.map(lambda page: encode_png(*page, 100), pages))
            assert encoded == expected


@pytest.mark.parametrize("dpi", [37, 100])  # 37: rows whose byte length is odd
def test_pixels_are_exactly_pdfiums(multi_page_pdf: bytes, dpi: int) -> None:
    """pdfium renders straight into the PNG's filter stream (a spare byte before each row):
    every filter byte stays 0 and the decoded pixels equal pdfium's own packed bitmap."""
    from renderers.writers.png import rasterize

    document = pdfium.PdfDocument(multi_page_pdf)
    try:
        rows, width, height = rasterize(document, 0, dpi)
        reference = document[0].render(scale=dpi / 72, draw_annots=False, may_draw_forms=False,
                                       force_bitmap_format=pdfium.raw.FPDFBitmap_BGR,
                                       rev_byteorder=True).to_pil()
    finally:
        document.close()
    stride = 1 + 3 * width
    assert len(rows) == stride * height
    assert bytes(rows[i * stride] for i in range(height)) == bytes(height)
    png = png_pages(multi_page_pdf, RenderOptions(dpi=dpi, pages=(1,)))[0]
    with Image.open(io.BytesIO(png)) as image:
        assert image.size == reference.size == (width, height)
        assert image.tobytes() == reference.convert("RGB").tobytes()
