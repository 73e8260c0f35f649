"""An image shown more than once is embedded once in the HTML report and in the HTML WeasyPrint
lays out (issue 13, item 3; :mod:`renderers.writers.html.images`)."""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path

import lxml.html
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
from PIL import Image as PILImage

from renderers.api import render
from renderers.errors import ResourceError
from renderers.options import RenderOptions
from renderers.readers.markdown import read_markdown
from renderers.sandbox import LoadedImage
from renderers.writers.html.report import print_report, render_html
from renderers.writers.pdf import SandboxFetcher
from tests.helpers import pdf_text
from tests.support.render import render_markdown, resolve_rows

POOL = [{"sid": 1, "title": "Source", "url": "https://e.example/"}]
RED, BLUE = (255, 0, 0), (0, 0, 255)


def png(color: tuple[int, int, int], size: tuple[int, int] = (40, 20)) -> bytes:
    out = io.BytesIO()
    PILImage.new("RGB", size, color).save(out, "PNG")
    return out.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def uri(data: bytes) -> str:
    return "data:image/png;base64," + b64(data)


#: A red image shown three times through a reference definition (one use with a title) and a
#: blue image shown once.
THREE_REDS = (
    "# Pictures\n\n![red box][r] and ![red box][r] [[S:1]]\n\n"
    f"![blue box]({uri(png(BLUE))})\n\n![red box][r]\n\n"
    f'[r]: {uri(png(RED))} "A red box"\n'
)


def html_of(markdown: str, **options: object) -> str:
    return render_markdown("html", markdown, POOL, **options).decode("utf-8")


def test_an_image_shown_three_times_is_embedded_once() -> None:
    html = html_of(THREE_REDS)
    assert html.count(b64(png(RED))) == 1
    root = lxml.html.document_fromstring(html)
    (definition,) = root.xpath("//svg[@class='img-defs']//image")
    uses = root.xpath("//svg[@class='img']")
    assert len(uses) == 3
    for use in uses:
        assert use.get("role") == "img" and use.get("aria-label") == "red box"
        assert use.get("viewbox") == "0 0 40 20" and use.get("width") == "40"
        assert use.xpath("string(title)") == "A red box"
        assert use.xpath("use/@href") == ["#" + definition.get("id")]
    (blue,) = root.xpath("//img")  # shown once: the plain <img> every report had
    assert blue.get("src") == uri(png(BLUE)) and blue.get("alt") == "blue box"
    assert "svg.img" in html.split("</style>", 1)[0]


def test_a_report_without_shared_images_has_no_definitions_or_their_css() -> None:
    html = html_of(f"# One\n\n![red]({uri(png(RED))}) [[S:1]]\n")
    assert "img-defs" not in html and "svg.img" not in html and html.count("<img ") == 1


def test_every_place_an_image_can_stand_counts_as_a_use() -> None:
    """A figure, a list item, a table cell, a block quote, a link and an author note each
    show the image: one definition, six uses."""
    markdown = (
        "# Places\n\n![red][r]\n\n- item ![red][r]\n\n| a |\n|---|\n| ![red][r] |\n\n"
        "> ![red][r]\n\n[![red][r]](https://e.example/) note[^n] [[S:1]]\n\n"
        f"[^n]: ![red][r]\n\n[r]: {uri(png(RED))}\n"
    )
    html = html_of(markdown)
    assert html.count(b64(png(RED))) == 1
    assert html.count('<use href="#image-1"/>') == 6 and "<img " not in html


def test_the_same_bytes_under_two_references_are_one_image(tmp_path: Path) -> None:
    (tmp_path / "red.png").write_bytes(png(RED))
    html = html_of(f"# Two\n\n![a](red.png) ![b]({uri(png(RED))}) [[S:1]]\n", base_dir=tmp_path)
    assert html.count(b64(png(RED))) == 1 and html.count("<use ") == 2


def test_shared_images_take_ids_no_heading_has_and_the_page_is_deterministic() -> None:
    markdown = "# Image 1\n\n" + THREE_REDS.replace("# Pictures", "## image-1")
    html = html_of(markdown)
    root = lxml.html.document_fromstring(html)
    ids = root.xpath("//@id")
    assert len(ids) == len(set(ids))
    (definition,) = root.xpath("//svg[@class='img-defs']//image")
    assert definition.get("id") not in {h.get("id") for h in root.xpath("//h1|//h2")}
    assert html == html_of(markdown)


def test_an_image_without_alt_text_stays_decorative() -> None:
    html = html_of(f"# D\n\n![][r] ![][r] [[S:1]]\n\n[r]: {uri(png(RED))}\n")
    root = lxml.html.document_fromstring(html)
    uses = root.xpath("//svg[@class='img']")
    assert len(uses) == 2
    assert all(u.get("aria-hidden") == "true" and u.get("role") is None for u in uses)


@pytest.mark.browser
def test_chromium_shows_the_image_at_every_use(tmp_path: Path) -> None:
    from tests.helpers import chromium_browser

    page_file = tmp_path / "report.html"
    page_file.write_text(html_of(THREE_REDS), encoding="utf-8")
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 900, "height": 1200})
        page.goto(page_file.as_uri())
        boxes = page.evaluate(
            "[...document.querySelectorAll('svg.img, img')].map(e => {"
            "const r = e.getBoundingClientRect(); return [r.width, r.height]; })"
        )
        named = page.get_by_role("img", name="red box").count()
        shot = PILImage.open(io.BytesIO(page.screenshot(full_page=True))).convert("RGB")
    assert sorted(boxes) == [[40, 20]] * 4 and named == 3
    colors = shot.getcolors(maxcolors=1 << 16) or []
    reds = sum(n for n, rgb in colors if rgb == RED)
    blues = sum(n for n, rgb in colors if rgb == BLUE)
    assert (reds, blues) == (3 * 40 * 20, 40 * 20)


def test_the_pdf_draws_three_placements_of_one_image() -> None:
    rdoc = resolve_rows(read_markdown(THREE_REDS), POOL)
    report = print_report(rdoc, RenderOptions())
    assert b64(png(RED)) not in report.html  # WeasyPrint parses no copy of it
    assert report.html.count('src="citerender-image:1"') == 3
    assert [(url, image.data) for url, image in report.images.items()] == [
        ("citerender-image:1", png(RED))
    ]
    pdf = render_markdown("pdf", THREE_REDS, POOL)
    assert len(re.findall(rb"/Subtype\s*/Image", pdf)) == 2  # the red one and the blue one
    document = pdfium.PdfDocument(pdf)
    placed = [obj for page in document for obj in page.get_objects()
              if obj.type == pdfium_c.FPDF_PAGEOBJ_IMAGE]
    assert len(placed) == 4
    assert sorted(obj.get_px_size() for obj in placed) == [(40, 20)] * 4
    document.close()


def test_the_standalone_page_is_not_what_the_pdf_lays_out() -> None:
    """The standalone page keeps the data inline (SVG ``<use>``), which WeasyPrint would not
    draw: the two reports differ only in the shared image's markup, and in where the rules
    are (inline, or handed to WeasyPrint apart: :attr:`WrittenReport.stylesheets`)."""
    rdoc = resolve_rows(read_markdown(THREE_REDS), POOL)
    standalone = render_html(rdoc, RenderOptions())
    printed = print_report(rdoc, RenderOptions()).html
    assert "citerender-image" not in standalone and "<use " not in printed
    once = resolve_rows(read_markdown(f"# One\n\n![red]({uri(png(RED))}) [[S:1]]\n"), POOL)
    report = print_report(once, RenderOptions())
    rules = "</title>\n<style>\n" + "".join(report.stylesheets) + "\n</style>\n"
    assert render_html(once, RenderOptions()) == report.html.replace("</title>\n", rules)


def test_the_internal_scheme_loads_only_from_the_writers_table() -> None:
    options = RenderOptions()
    table = {"citerender-image:1": LoadedImage(png(RED), "image/png", 40, 20)}
    fetcher = SandboxFetcher.for_options(options, table)
    assert fetcher.fetch("citerender-image:1").read() == png(RED)
    for stranger in ("citerender-image:2", "CITERENDER-IMAGE:1", "citerender-image:1#x"):
        with pytest.raises(ResourceError):
            fetcher.fetch(stranger)
    with pytest.raises(ResourceError):
        SandboxFetcher.for_options(options).fetch("citerender-image:1")


def test_author_html_naming_the_internal_scheme_loads_nothing(tmp_path: Path) -> None:
    """The sanitizer already drops such URLs; the fetcher would refuse them too (above)."""
    html = (
        "<h1>T</h1><p><img src='citerender-image:1' alt='sneaky'> "
        "<span style='background: url(citerender-image:1)'>x</span> [[S:1]]</p>"
    )
    (result,) = render(html, tmp_path, sources_pool=POOL, formats=["pdf"], content_format="html")
    pdf = result.path.read_bytes()
    assert not re.findall(rb"/Subtype\s*/Image", pdf)
    assert "[Image: sneaky]" in pdf_text(result.path)


def test_markdown_naming_the_internal_scheme_beside_a_shared_image_loads_nothing() -> None:
    markdown = THREE_REDS + "\n![sneaky](citerender-image:1)\n"
    pdf = render_markdown("pdf", markdown, POOL)
    document = pdfium.PdfDocument(pdf)
    placed = sum(1 for page in document for obj in page.get_objects()
                 if obj.type == pdfium_c.FPDF_PAGEOBJ_IMAGE)
    text = "".join(page.get_textpage().get_text_range() for page in document)
    document.close()
    assert placed == 4 and "[Image: sneaky]" in text
