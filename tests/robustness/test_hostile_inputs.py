"""Hostile input through the public API, for every output format and both input kinds.

- server-side requests: every external reference points at a loopback server this module starts;
  it must see zero requests;
- local files outside the base directory (``file:``, ``../``, symlinks, ``physical_path``) are
  never read, while a file inside it does load (so the check can fail);
- only http, https and mailto links reach an output; titles with markup are escaped;
- bad output names are refused before anything is written.
"""

from __future__ import annotations

import io
import re
import threading
import zipfile
from collections.abc import Iterator
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from PIL import Image
from pypdf import PdfReader

from renderers.api import RenderResult, render, write_markdown
from renderers.errors import OutputPathError
from renderers.tools import call_tool
from tests.helpers import without_preview_script

FORMATS = ("pdf", "png", "docx", "pptx", "html", "md")
#: What the PDF engine typesets (every other format is the same whichever engine is chosen).
TYPST_FORMATS = ("pdf", "png")
SAFE_SCHEMES = ("http:", "https:", "mailto:")
SECRET = "SECRETMARK-7f3a"


def _png(color: tuple[int, int, int], size: tuple[int, int] = (24, 12)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, "PNG")
    return buffer.getvalue()


# ------------------------------------------------------------------ a loopback server that counts


class _Recorder(BaseHTTPRequestHandler):
    hits: list[str]

    def do_GET(self) -> None:
        self.hits.append(self.path)
        if self.path.startswith("/redirect"):
            self.send_response(302)
            self.send_header("Location", "/img.png")
            self.end_headers()
            return
        body = _png((255, 0, 0))
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET
    do_HEAD = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, list[str]]]:
    hits: list[str] = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), type("H", (_Recorder,), {"hits": hits}))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", hits
    finally:
        httpd.shutdown()
        httpd.server_close()


def _remote_refs(srv: str) -> str:
    """Raw HTML that asks for every kind of external resource (valid in both input kinds)."""
    return f"""<link rel="stylesheet" href="{srv}/link.css">
<style>@import url("{srv}/import.css"); @import "{srv}/import2.css";
body {{ background: url({srv}/bg.png) }} @font-face {{ font-family: X; src: url({srv}/f.woff) }}
</style>
<base href="{srv}/base/">
<p style="background-image: url('{srv}/style-attr.png')">Styled claim [[S:1]].</p>
<img src="{srv}/img.png" alt="remote image"> <img src="{srv}/redirect" alt="redirected">
<img srcset="{srv}/srcset.png 2x" src="{srv}/src2.png" alt="srcset">
<iframe src="{srv}/iframe"></iframe><object data="{srv}/object"></object>
<embed src="{srv}/embed"><video poster="{srv}/poster.png" src="{srv}/v.mp4"></video>
<svg width="10" height="10"><image href="{srv}/svg-image.png" width="9" height="9"/>
<use href="{srv}/sprite.svg#a"/></svg>
<audio src="{srv}/a.mp3"></audio><input type="image" src="{srv}/input.png">
<p><img src="evil.svg" alt="local svg with external references"></p>
"""


def _evil_svg(srv: str) -> str:
    """A local SVG file (inside the base directory) whose parts point at the server."""
    return f"""<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"
 width="40" height="20"><style>@import url("{srv}/svg-import.css");
rect {{ fill: url({srv}/svg-fill.svg#g) }}</style>
<image href="{srv}/svg-href.png" width="10" height="10"/>
<image xlink:href="{srv}/svg-xlink.png" width="10" height="10"/>
<use href="{srv}/svg-use.svg#a"/><rect width="5" height="5"/></svg>"""


def _hostile_markdown(srv: str) -> str:
    return f"""# Report [[S:2]]

![remote]({srv}/md-img.png) ![redirect]({srv}/redirect?md=1 "t")

![local svg](evil.svg)

{_remote_refs(srv)}

Closing paragraph [[S:2]].
"""


def _hostile_html(srv: str) -> str:
    return f"""<!DOCTYPE html><html><head><title>Hostile</title>
<link rel="stylesheet" href="{srv}/head-link.css"><link rel="icon" href="{srv}/favicon.ico">
<link rel="preload" href="{srv}/preload.png" as="image">
<meta http-equiv="refresh" content="0; url={srv}/refresh"></head>
<body background="{srv}/body-bg.png"><h1>Report</h1>
{_remote_refs(srv)}
<table background="{srv}/table-bg.png"><tr><td>Cell [[S:2]]</td></tr></table>
</body></html>"""


POOL_SAFE: list[dict[str, Any]] = [
    {"sid": 1, "title": "Good source", "url": "https://example.org/good"},
    {"sid": 2, "title": "Second source", "url": "https://example.org/second"},
]


def _render_all(content: str, out: Path, kind: str, pool: list[dict[str, Any]],
                base: Path | None = None, engine: str = "weasyprint") -> dict[str, RenderResult]:
    """Every format (with WeasyPrint), or those the PDF engine typesets (with another)."""
    formats = FORMATS if engine == "weasyprint" else TYPST_FORMATS
    results = render(content, out, name=f"hostile-{kind}", formats=formats, sources_pool=pool,
                     content_format=kind, base_dir=base, pdf_engine=engine)
    return {r.format: r for r in results}


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
@pytest.mark.parametrize("kind", ["markdown", "html"])
def test_no_server_side_request_for_any_format(
    server: tuple[str, list[str]], tmp_path: Path, kind: str, engine: str
) -> None:
    srv, hits = server
    hits.clear()
    (tmp_path / "evil.svg").write_text(_evil_svg(srv), "utf-8")
    content = _hostile_markdown(srv) if kind == "markdown" else _hostile_html(srv)
    results = _render_all(content, tmp_path, kind, POOL_SAFE, engine=engine)
    assert hits == []
    assert sorted(results) == sorted(FORMATS if engine == "weasyprint" else TYPST_FORMATS)
    # raw HTML the markdown reader shows as text may mention the server; no reference may
    host = srv.removeprefix("http://")
    if "html" in results:
        html_refs, _ = _html_links(results["html"].path.read_text("utf-8"), styles=True)
        assert [ref for ref in html_refs if host in ref] == []
    for fmt in ("docx", "pptx"):
        if fmt in results:
            targets = _package_targets(results[fmt].path, external=False)
            assert [t for t in targets if host in t] == []
    assert [uri for uri in _pdf_uris(results["pdf"].path) if host in uri] == []
    assert _pdf_image_count(results["pdf"].path) == 0
    assert "Report" in _pdf_text(results["pdf"].path)
    # the Markdown output may keep a remote image reference as text; rendering never fetched it
    assert hits == []


# ------------------------------------------------------------------ local files


@pytest.fixture
def sandbox(tmp_path: Path) -> tuple[Path, Path]:
    """``base`` (allowed, with ok.png and a symlink pointing out) and ``secret`` (outside)."""
    base, secret = tmp_path / "base", tmp_path / "secret"
    base.mkdir()
    secret.mkdir()
    (secret / "secret.png").write_bytes(_png((1, 2, 3), (13, 7)))
    (secret / "secret.css").write_text(f'body::before {{ content: "{SECRET}" }}', "utf-8")
    (secret / "secret.txt").write_text(f"{SECRET} root:x:0:0", "utf-8")
    (base / "ok.png").write_bytes(_png((0, 160, 0), (20, 10)))
    (base / "link.png").symlink_to(secret / "secret.png")
    (base / "link.css").symlink_to(secret / "secret.css")
    (base / "sub").symlink_to(secret, target_is_directory=True)
    return base, secret


def _local_refs(secret: Path, kind: str) -> str:
    """References to files outside the base (each image a paragraph of its own) and ok.png."""
    refs = [
        f"file://{secret}/secret.png", f"{secret}/secret.png", "../secret/secret.png",
        "../../../../../../" + str(secret).lstrip("/") + "/secret.png", "link.png",
        "sub/secret.png", "%2e%2e/secret/secret.png", "file:///etc/passwd", "/etc/passwd",
        "file://localhost/etc/passwd", "../../../../../../etc/passwd",
    ]
    css = (f'<link rel="stylesheet" href="file://{secret}/secret.css">\n'
           '<link rel="stylesheet" href="link.css">\n'
           f'<style>@import url("../secret/secret.css"); @import "file://{secret}/secret.css";'
           "</style>")
    if kind == "markdown":
        images = "\n\n".join(f"![ref {i}](<{ref}>)" for i, ref in enumerate(refs))
        return f"{css}\n\nLocal image [[S:1]].\n\n![allowed](ok.png)\n\n{images}\n"
    images = "\n".join(f'<p><img src="{ref}" alt="ref {i}"></p>' for i, ref in enumerate(refs))
    return f'{css}\n<p>Local image [[S:1]].</p>\n<p><img src="ok.png" alt="allowed"></p>\n{images}'


def _files_content(body: str, kind: str) -> str:
    """A document around the references of :func:`_local_refs` (head links go in the head)."""
    if kind == "markdown":
        return f"# Files [[S:2]]\n\n{body}"
    head, rest = body.split("<p>", 1)
    return f"<html><head>{head}</head><body><h1>Files [[S:2]]</h1><p>{rest}</body></html>"


def _secret_pool(secret: Path) -> list[dict[str, Any]]:
    return [
        {"sid": 1, "title": "Attachment", "physical_path": str(secret / "secret.txt"),
         "artifact_path": "../../secret/secret.txt", "mime": "text/plain", "source_type": "file"},
        {"sid": 2, "title": "Passwd", "physical_path": "/etc/passwd",
         "artifact_path": "/etc/passwd", "source_type": "file"},
    ]


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
@pytest.mark.parametrize("kind", ["markdown", "html"])
def test_files_outside_the_base_directory_are_never_read(
    sandbox: tuple[Path, Path], kind: str, engine: str
) -> None:
    base, secret = sandbox
    body = _local_refs(secret, kind)
    results = _render_all(_files_content(body, kind), base / "out", kind, _secret_pool(secret),
                          base=base, engine=engine)

    secret_png = (secret / "secret.png").read_bytes()
    for fmt, result in results.items():
        for path in result.paths:
            blob = path.read_bytes()
            assert secret_png not in blob and b"root:x:0" not in blob, fmt
            if fmt in ("docx", "pptx"):
                with zipfile.ZipFile(path) as package:
                    media = [n for n in package.namelist() if "/media/" in n]
                    inner = b"".join(package.read(n) for n in package.namelist())
                assert len(media) == 1, f"{fmt}: only ok.png may be embedded, got {media}"
                assert secret_png not in inner and SECRET.encode() not in inner
    pdf = results["pdf"].path
    assert _pdf_image_count(pdf) == 1  # ok.png loaded: the sandbox is not simply closed
    text = _pdf_text(pdf)
    assert SECRET not in text and "root:x:0" not in text and "Local" in text
    if "html" in results:
        html = results["html"].path.read_text("utf-8")
        assert html.count("data:image/png;base64,") == 1 and SECRET not in html
    for png in results["png"].paths:
        with Image.open(png) as image:
            colors = image.convert("RGB").getcolors(1 << 20) or []
        assert (1, 2, 3) not in {c for _, c in colors}


# ------------------------------------------------------------------ links and escaping

BAD_URLS = ("javascript:alert(1)", "JaVaScRiPt:alert(2)", "java\tscript:alert(3)",
            "vbscript:msgbox(4)", "data:text/html;base64,PHNjcmlwdD5hbGVydCg1KTwvc2NyaXB0Pg==",
            "file:///etc/passwd", " javascript:alert(6)")
MARKUP_TITLE = '<script>alert("t")</script><img src=x onerror=alert(7)> & "quoted"'

POOL_BAD: list[dict[str, Any]] = [
    {"sid": i + 1, "title": f"{MARKUP_TITLE} #{i + 1}", "url": url}
    for i, url in enumerate(BAD_URLS)
] + [{"sid": 20, "title": "Fine <b>bold</b>", "url": "https://example.org/fine"}]


def _bad_link_content(kind: str) -> str:
    cites = " ".join(f"[[S:{i + 1}]]" for i in range(len(BAD_URLS)))
    if kind == "markdown":
        links = " ".join(f"[bad {i}]({url.strip()})" for i, url in enumerate(BAD_URLS))
        auto = " ".join(f"<{url.strip()}>" for url in BAD_URLS if " " not in url.strip())
        raw = " ".join(f'<a href="{url}">raw {i}</a>' for i, url in enumerate(BAD_URLS))
        return (f"# {MARKUP_TITLE}\n\n{links}\n\n{auto}\n\n{raw}\n\nClaims {cites} [[S:20]].\n\n"
                f"[ref link][r]\n\n[r]: javascript:alert(8)\n")
    anchors = " ".join(f'<a href="{url}">bad {i}</a>' for i, url in enumerate(BAD_URLS))
    return (f"<html><head><title>{MARKUP_TITLE.replace('<', '&lt;')}</title></head><body>"
            f"<p>{anchors}</p><p>Claims {cites} [[S:20]]. "
            '<a href="&#106;avascript:alert(9)">entity</a> <form action="javascript:x">'
            '<button formaction="javascript:y">b</button></form></p></body></html>')


class _Attrs(HTMLParser):
    URL_ATTRIBUTES = ("href", "src", "srcset", "action", "formaction", "xlink:href", "poster",
                      "data", "background")

    def __init__(self, styles: bool) -> None:
        super().__init__()
        self.styles = styles
        self.urls: list[str] = []
        self.tags: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self._in_style = tag == "style"
        for name, value in attrs:
            if name in self.URL_ATTRIBUTES or (self.styles and name == "style"):
                self.urls.append(value or "")
            assert not name.startswith("on"), f"event handler {name} on <{tag}>"

    def handle_data(self, data: str) -> None:
        if self._in_style and self.styles:
            self.urls.append(data)

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False


def _html_links(html: str, *, styles: bool = False) -> tuple[list[str], list[str]]:
    """URL-bearing attribute values (and, with ``styles``, style sheets and attributes)."""
    parser = _Attrs(styles)
    parser.feed(html)
    return parser.urls, parser.tags


def _assert_safe(urls: list[str], where: str) -> None:
    for url in urls:
        lowered = re.sub(r"[\x00-\x20]", "", url).lower()
        assert lowered.startswith(("#", *SAFE_SCHEMES)) or lowered.startswith("data:image/"), (
            f"{where}: unsafe link target {url!r}"
        )


def _package_targets(path: Path, *, external: bool = True) -> list[str]:
    """Relationship targets of an OOXML package (only external ones by default)."""
    with zipfile.ZipFile(path) as package:
        rels = [package.read(n).decode() for n in package.namelist() if n.endswith(".rels")]
    targets: list[str] = []
    for text in rels:
        for rel in re.finditer(r"<Relationship\b[^>]*>", text):
            target = re.search(r'Target="([^"]*)"', rel.group(0))
            if target and (not external or 'TargetMode="External"' in rel.group(0)):
                targets.append(target.group(1))
    return targets


def _pdf_uris(path: Path) -> list[str]:
    uris: list[str] = []
    for page in PdfReader(str(path)).pages:
        for annot in page.get("/Annots") or []:
            action = annot.get_object().get("/A")
            if action is not None and "/URI" in action:
                uris.append(str(action["/URI"]))
    return uris


@pytest.mark.parametrize("kind", ["markdown", "html"])
def test_only_safe_links_reach_any_output_and_titles_are_escaped(tmp_path: Path, kind: str) -> None:
    results = _render_all(_bad_link_content(kind), tmp_path, kind, POOL_BAD)

    html = results["html"].path.read_text("utf-8")
    urls, tags = _html_links(without_preview_script(html))
    _assert_safe(urls, "html")
    assert not {"script", "img", "form", "button", "iframe"} & set(tags)
    assert "https://example.org/fine" in urls
    assert "&lt;script&gt;" in html and "Fine &lt;b&gt;bold&lt;/b&gt;" in html

    markdown = results["md"].path.read_text("utf-8")
    rendered = MarkdownIt("commonmark", {"linkify": False}).render(markdown)
    md_urls, md_tags = _html_links(rendered)
    _assert_safe(md_urls, "markdown output")
    assert "script" not in md_tags and "https://example.org/fine" in md_urls
    assert "<script>" not in rendered and "Fine &lt;b&gt;bold&lt;/b&gt;" in rendered

    for fmt in ("docx", "pptx"):
        targets = _package_targets(results[fmt].path)
        _assert_safe(targets, fmt)
        assert "https://example.org/fine" in targets
    pdf_uris = _pdf_uris(results["pdf"].path)
    _assert_safe(pdf_uris, "pdf")
    assert "https://example.org/fine" in pdf_uris
    assert "Fine <b>bold</b>" in _pdf_text(results["pdf"].path)  # shown as text, not markup

    docx_xml = _zip_text(results["docx"].path, "word/document.xml")
    assert "Fine &lt;b&gt;bold&lt;/b&gt;" in docx_xml and "<b>" not in docx_xml


POOL_SPACED: list[dict[str, Any]] = [
    {"sid": 1, "title": "Solar search", "url": "https://www.google.com/search?q=solar panels"},
    {"sid": 2, "title": "Bank", "url": "https://mybank.com .attacker.example/login"},
]


@pytest.mark.parametrize("kind", ["markdown", "html"])
def test_pool_urls_are_linked_where_they_go_never_with_spaces_removed(
    tmp_path: Path, kind: str
) -> None:
    """A space in a pool URL was removed (``q=solarpanels``; a host ``mybank.com .attacker…``
    became ``mybank.com.attacker.example`` under the label ``mybank.com .attacker.example``)."""
    content = ("<p>Claims [[S:1]] [[S:2]].</p>" if kind == "html" else "Claims [[S:1]] [[S:2]].")
    results = {r.format: r for r in render(content, tmp_path, name="spaced",
                                           formats=("md", "html", "docx", "pptx"),
                                           sources_pool=POOL_SPACED, content_format=kind)}
    encoded = "https://www.google.com/search?q=solar%20panels"
    html, _ = _html_links(without_preview_script(results["html"].path.read_text("utf-8")))
    markdown = results["md"].path.read_text("utf-8")
    targets = {fmt: _package_targets(results[fmt].path) for fmt in ("docx", "pptx")}
    for where, links in [("html", html), ("md", [markdown]), *targets.items()]:
        joined = " ".join(links)
        assert encoded in joined, where
        assert "solarpanels" not in joined and "attacker" not in joined, where
    for result in results.values():
        text = b"".join(p.read_bytes() for p in result.paths)
        assert b"mybank.com .attacker" not in text, result.format  # no label for a refused URL


# ------------------------------------------------------------------ output names


BAD_NAMES = ["../escape", "../../etc/cron.d/x", "/tmp/absolute", "a\x00b", "sub/../../x",
             "con", "a<b", 'a"b', "a|b", "a?b", "a*b", "a:b", "C:\\evil", "..", ".", "",
             "dir/./x", "trailing.", "x\\..\\y"]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_names_are_refused_before_anything_is_written(tmp_path: Path, name: str) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(OutputPathError) as caught:
        render("Claim [[S:1]].", out, name=name, formats=("md", "html"), sources_pool=POOL_SAFE)
    assert repr(name)[1:-1] in str(caught.value) or name == ""
    envelope = call_tool("write_docx", {"content": "Claim [[S:1]].", "path": name,
                                        "sources_pool": POOL_SAFE}, out_dir=out)
    assert envelope["ok"] is False and envelope["error"]["code"] in ("invalid_path",
                                                                     "invalid_argument")
    assert envelope["error"]["where"] == "path"
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == ["out"]


def test_write_function_refuses_a_name_with_reserved_characters(tmp_path: Path) -> None:
    with pytest.raises(OutputPathError, match="reserved"):
        write_markdown("Claim.", tmp_path / "a?b.md")
    with pytest.raises(OutputPathError, match="NUL"):
        write_markdown("Claim.", str(tmp_path / "a") + "\x00.md")
    assert list(tmp_path.iterdir()) == []


def test_symlinked_subdirectory_pointing_out_is_refused(tmp_path: Path) -> None:
    out, outside = tmp_path / "out", tmp_path / "outside"
    out.mkdir()
    outside.mkdir()
    (out / "escape").symlink_to(outside, target_is_directory=True)
    with pytest.raises(OutputPathError, match="outside the output directory"):
        render("Claim.", out, name="escape/report", formats=("md",))
    envelope = call_tool("write_markdown", {"content": "Claim.", "path": "escape/report.md"},
                         out_dir=out)
    assert envelope["ok"] is False and envelope["error"]["code"] == "invalid_path"
    assert list(outside.iterdir()) == []


# ------------------------------------------------------------------ helpers


def _pdf_text(path: Path) -> str:
    return "\n".join(page.extract_text() or "" for page in PdfReader(str(path)).pages)


def _pdf_image_count(path: Path) -> int:
    return len(re.findall(rb"/Subtype\s*/Image", path.read_bytes()))


def _zip_text(path: Path, member: str) -> str:
    with zipfile.ZipFile(path) as package:
        return package.read(member).decode("utf-8")


# ------------------------------------------------------------------ the Typst engine

@pytest.mark.parametrize("kind", ["markdown", "html"])
def test_typst_engine_links_only_safe_urls_and_shows_titles_as_text(
    tmp_path: Path, kind: str
) -> None:
    results = _render_all(_bad_link_content(kind), tmp_path, kind, POOL_BAD, engine="typst")
    pdf_uris = _pdf_uris(results["pdf"].path)
    _assert_safe(pdf_uris, "pdf")
    assert "https://example.org/fine" in pdf_uris
    text = _pdf_text(results["pdf"].path)
    assert "Fine <b>bold</b>" in text and '<script>alert("t")</script>' in text
