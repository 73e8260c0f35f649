"""A hostile HTML input renders to HTML, PDF and PNG with zero requests and nothing hostile kept.

Every external reference points at a loopback HTTP server the test starts; it must see no
request at all, whichever path renders (the model path and the author's-look path).
"""

from __future__ import annotations

import io
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from pypdf import PdfReader

from citations.pool import SourcePool
from renderers.options import RenderOptions
from renderers.readers.html import read_html
from renderers.resolve import ResolvedDocument, resolve
from renderers.writers.html.author_look import render_html_input
from renderers.writers.html.report import render_html
from renderers.writers.pdf import pdf_bytes
from renderers.writers.png import png_pages
from renderers.writers.typst.writer import typst_pdf
from tests.helpers import without_preview_script


def _png(color: str) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (40, 20), color).save(buffer, "PNG")
    return buffer.getvalue()


class _Recorder(BaseHTTPRequestHandler):
    hits: list[str]

    def do_GET(self) -> None:  # would serve anything: a request is the failure, not a 404
        self.hits.append(self.path)
        body = _png("red")
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, list[str]]]:
    hits: list[str] = []
    handler = type("Handler", (_Recorder,), {"hits": hits})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", hits
    finally:
        httpd.shutdown()
        httpd.server_close()


def hostile_html(srv: str) -> str:
    return f"""<!DOCTYPE html><html><head><title>Hostile</title>
<link rel="stylesheet" href="{srv}/link.css">
<style>
@import url("{srv}/import.css"); @import "{srv}/import2.css";
body {{ background: url({srv}/bg.png); }}
@font-face {{ font-family: Evil; src: url({srv}/font.woff); }}
p.x {{ background-image: url('{srv}/css-url.png'); color: #123456 }}
.y {{ background: url(\\68ttp://127.0.0.1/escaped.png) }}
</style>
<script>fetch("{srv}/script")</script>
<meta http-equiv="refresh" content="0; url={srv}/refresh">
<base href="{srv}/base/">
</head><body onload="alert(1)">
<h1>Hostile report</h1>
<p class="x" style="background: url({srv}/style-attr.png)" onclick="alert(2)">Claim
<sup class="cite" data-sids="1">[S:1]</sup> and [[S:2]] text.</p>
<p><a href="javascript:alert(3)">js link</a> <a href="JaVaScRiPt:alert(4)">js two</a>
<a href="java&#x0A;script:alert(5)">js three</a></p>
<img src="file:///etc/passwd" alt="passwd file">
<img src="../../../../etc/passwd" alt="relative passwd">
<img src="{srv}/img.png" alt="remote image" onerror="alert(6)">
<img src="ok.png" alt="local image">
<img srcset="{srv}/srcset.png 2x" alt="srcset">
<svg width="10" height="10"><image href="{srv}/svg-image.png" width="10" height="10"/>
<use href="{srv}/sprite.svg#a"/></svg>
<iframe src="{srv}/frame"></iframe><object data="{srv}/object"></object>
<embed src="{srv}/embed"><video poster="{srv}/poster.png"></video>
<form action="{srv}/form"><input type="image" src="{srv}/input.png"></form>
<p>[[USAGE:3]] The end <code>[[S:2]]</code>.</p>
</body></html>"""


HOSTILE_MARKERS = ("<script", "onload", "onclick", "onerror", "javascript", "alert(",
                   "<iframe", "<object", "<embed", "<form", "file:", "/etc/passwd", "root:x:0")


@pytest.fixture
def base(tmp_path: Path) -> Path:
    (tmp_path / "ok.png").write_bytes(_png("green"))
    return tmp_path


def _rdoc(html: str) -> ResolvedDocument:
    pool = SourcePool.from_rows([
        {"sid": 1, "title": "Good source", "url": "https://example.org/good"},
        {"sid": 2, "title": "FTP source", "url": "ftp://files.example.org/data.csv"},
        {"sid": 3, "title": "Used only", "url": "https://example.org/used"},
    ])
    return resolve(read_html(html), pool)


def _assert_clean_pdf(pdf: bytes, srv: str) -> None:
    lowered = pdf.lower()
    for marker in (b"javascript", b"127.0.0.1", b"/etc/passwd", b"root:x:0", b"/launch"):
        assert marker not in lowered, marker
    text = "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages)
    assert "Claim" in text and "Good source" in text and "root:" not in text
    assert "[[USAGE" not in text and srv not in text


def _image_count(pdf: bytes) -> int:
    return len(re.findall(rb"/Subtype\s*/Image", pdf))


def test_hostile_html_reaches_nothing(server: tuple[str, list[str]], base: Path) -> None:
    srv, hits = server
    html = hostile_html(srv)
    rdoc = _rdoc(html)
    options = RenderOptions(base_dir=base, out_dir=base / "out")

    report = render_html(rdoc, options)
    for marker in (*HOSTILE_MARKERS, "127.0.0.1", "<link", "<base", "<meta http-equiv"):
        assert marker not in without_preview_script(report).lower(), marker
    assert 'href="#src-1"' in report and "Good source" in report

    model_pdf = pdf_bytes(report, options)
    author_html = render_html_input(html, rdoc, options)
    for marker in HOSTILE_MARKERS:
        assert marker not in without_preview_script(author_html).lower(), marker
    author_pdf = pdf_bytes(author_html, options)
    typst_model_pdf, _, _ = typst_pdf(rdoc, options)  # the Typst engine always takes the model
    for pdf in (model_pdf, author_pdf, typst_model_pdf):
        _assert_clean_pdf(pdf, srv)
        assert _image_count(pdf) == 1  # only the local ok.png loaded
        for png in png_pages(pdf, RenderOptions(dpi=30)):
            with Image.open(io.BytesIO(png)) as image:
                assert image.convert("L").getextrema()[0] < 128  # something was drawn
    assert hits == []


def test_author_look_keeps_styles_and_rewrites_citations(
    server: tuple[str, list[str]], base: Path
) -> None:
    srv, hits = server
    html = hostile_html(srv)
    rdoc = _rdoc(html)
    options = RenderOptions(base_dir=base)
    author_html = render_html_input(html, rdoc, options)
    assert "#123456" in author_html  # the author's own CSS survives
    assert author_html.index("/* citerender report") < author_html.index("#123456")
    assert '<sup class="cite" id="cite-1" data-sids="1"><a href="#src-1">1</a></sup>' in author_html
    assert '<sup class="cite" id="cite-2" data-sids="2"><a href="#src-2">2</a></sup>' in author_html
    assert "<code>[[S:2]]</code>" in author_html and "[[USAGE" not in author_html
    assert author_html.count('<section id="sources"') == 1
    entries = {e.anchor: e for e in rdoc.entries}
    assert entries["src-2"].url == ""  # only http, https and mailto are linked
    assert "ftp://" not in author_html.split("<section id=\"sources\"")[1].split("<span")[0]
    pdf = pdf_bytes(author_html, options)
    reader = PdfReader(io.BytesIO(pdf))
    dests = [str(a.get_object().get("/Dest")) for p in reader.pages for a in p.get("/Annots") or []]
    assert "src-1" in dests and "src-2" in dests
    assert hits == []


@pytest.mark.parametrize("css", [
    "@page { size: 0 0 }",  # IndexError: a line with no room
    "@page { margin: 10000in }",
    "p { font-size: 1e9px }",  # ZeroDivisionError while drawing
    "p { letter-spacing: -1e9px }",  # OverflowError in Pango's attributes
])
@pytest.mark.parametrize("formats", [("pdf",), ("png",)])
def test_author_css_weasyprint_cannot_lay_out_is_an_input_error(
    css: str, formats: tuple[str, ...], tmp_path: Path
) -> None:
    """WeasyPrint raised IndexError, ZeroDivisionError or OverflowError out of the render (an
    internal error at the CLI); the input's CSS is at fault, so the error says so and names
    what works, and Typst, which ignores the author's CSS, renders the page."""
    from renderers import render
    from renderers.errors import InputError

    html = f"<html><head><style>{css}</style></head><body><p>Text [[S:1]]</p></body></html>"
    pool = [{"sid": 1, "title": "Source"}]
    with pytest.raises(InputError, match=r"own styles could not be laid out .*pdf_engine='typst'"):
        render(html, tmp_path, name="r", formats=formats, sources_pool=pool)
    (result,) = render(html, tmp_path, name="t", formats=formats, sources_pool=pool,
                       pdf_engine="typst")
    assert result.sources_used == [1]
