"""The HTML sanitizer: hostile markup never survives, citations and content do."""

from __future__ import annotations

import pytest

from renderers.readers.sanitize import safe_image_src, sanitize_css, sanitize_html

HOSTILE = """<!doctype html><html><head><title>Report</title>
<base href="http://evil.example/"><link rel="stylesheet" href="http://evil.example/x.css">
<meta http-equiv="refresh" content="0;url=javascript:alert(1)">
<style>@import url(http://evil.example/a.css);
body { background: url('http://evil.example/bg.png') }
.local { background: url(img/x.png) } .inline { background: url(data:image/png;base64,AA) }</style>
<script>alert("head")</script></head>
<body onload="steal()"><p id="cite-1" class="lead" style="color: red; background: url(file:///etc/passwd)"
 onclick="steal()" onmouseover="steal()">Claim <sup class="cite" data-sids="1,3">[S:1,3]</sup>
<a href="javascript:alert(1)">js</a> <a href="JaVaScRiPt&#x09;:alert(1)">js2</a>
<a href="data:text/html,<script>alert(1)</script>">data</a> <a href="page.html">relative</a>
<a href="#part">fragment</a> <a href="https://ok.example/">ok</a>
<a href="mailto:a@b.example">mail</a>
<img src="file:///etc/passwd" alt="pw"> <img src="pic.png" onerror="steal()" alt="pic">
<img src="data:image/png;base64,iVBORw0KGgo=" alt="inline"> <img src="javascript:alert(1)" alt="js">
</p><iframe src="http://evil.example/frame">frame text</iframe><object data="x.swf">obj</object>
<embed src="x.swf"><form action="http://evil.example/post"><input name="q" value="v">
<textarea>typed</textarea><button>Press</button><label>Label text</label></form>
<svg><script>alert(2)</script></svg><script>alert(3)</script>
<table><tr><th style="text-align: right; color: red" onclick="x()">H</th></tr></table>
</body></html>"""

FORBIDDEN = (
    "<script", "alert(", "onload", "onclick", "onmouseover", "onerror", "javascript", "<iframe",
    "<object", "<embed", "<form", "<input", "<textarea", "<button", "<base", "<link", "<meta",
    "file:", "evil.example", "data:text", "steal", "frame text", "typed", "Press",
)  # fmt: skip


@pytest.mark.parametrize("keep_styles", [False, True])
def test_hostile_parts_are_removed(keep_styles: bool) -> None:
    cleaned = sanitize_html(HOSTILE, keep_styles=keep_styles)
    lowered = cleaned.lower()
    for needle in FORBIDDEN:
        assert needle.lower() not in lowered, needle
    assert '<sup class="cite" data-sids="1,3">[S:1,3]</sup>' in cleaned
    assert 'href="https://ok.example/"' in cleaned
    assert 'href="mailto:a@b.example"' in cleaned
    assert 'href="#part"' in cleaned
    assert 'href="page.html"' not in cleaned
    assert 'src="pic.png"' in cleaned
    assert 'src="data:image/png;base64,iVBORw0KGgo="' in cleaned
    assert "<title>Report</title>" in cleaned
    assert "Label text" in cleaned and "relative" in cleaned


def test_plain_mode_drops_styles_but_keeps_cell_alignment() -> None:
    cleaned = sanitize_html(HOSTILE)
    assert "<style" not in cleaned
    assert 'class="lead"' not in cleaned
    assert 'style="text-align:right"' in cleaned


@pytest.mark.parametrize(("given", "kept"), [
    ('<h2 class="unlisted">Aside</h2>', '<h2 class="unlisted">Aside</h2>'),
    ('<h6 class="x unlisted">Aside</h6>', '<h6 class="unlisted">Aside</h6>'),
    ('<h3 class="evil">Aside</h3>', '<h3 class="">Aside</h3>'),  # read as no class
    ('<h1 class="Unlisted toc-hidden">Aside</h1>', '<h1 class="">Aside</h1>'),
    ('<p class="unlisted">Text</p>', "<p>Text</p>"),
    ('<div class="unlisted">Text</div>', "<div>Text</div>"),
])
def test_plain_mode_keeps_only_a_headings_unlisted_class(given: str, kept: str) -> None:
    """Pandoc's ``.unlisted`` (the section stays out of the contents), which the HTML reader
    honours; no other class, and on no other element."""
    assert sanitize_html(given) == kept


def test_the_paths_that_keep_classes_keep_every_heading_class() -> None:
    for options in ({"keep_styles": True}, {"keep_classes": True}):
        cleaned = sanitize_html('<h2 class="x unlisted">Aside</h2>', **options)
        assert cleaned == '<h2 class="x unlisted">Aside</h2>', options


def test_keep_styles_keeps_author_css_without_remote_urls() -> None:
    cleaned = sanitize_html(HOSTILE, keep_styles=True)
    assert "<style>" in cleaned
    assert "@import" not in cleaned
    assert "url(img/x.png)" in cleaned
    assert "url(data:image/png;base64,AA)" in cleaned
    assert 'class="lead"' in cleaned
    assert "color: red" in cleaned or "color:red" in cleaned
    assert 'id="cite-1"' not in cleaned  # would hijack a citation anchor


def test_user_ids_are_kept_with_styles() -> None:
    cleaned = sanitize_html('<h2 id="intro">Intro</h2>', keep_styles=True)
    assert cleaned == '<h2 id="intro">Intro</h2>'


@pytest.mark.parametrize(
    ("css", "expected"),
    [
        ("a{background:url(http://x.example/a.png)}", "a{background:none}"),
        ("a{background:url( '//x.example/a.png' )}", "a{background:none}"),
        ('a{background:url("java\\73 cript:x")}', "a{background:none}"),
        ("@import 'x.css'; p{}", " p{}"),
        ("@IMPORT url(x.css) screen;p{}", "p{}"),
        ("a{background:url(fonts/a.woff2)}", "a{background:url(fonts/a.woff2)}"),
    ],
)
def test_sanitize_css(css: str, expected: str) -> None:
    assert sanitize_css(css) == expected


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        ("https://x.example/a.png", "https://x.example/a.png"),
        ("img/a b.png", "img/a b.png"),
        ("data:image/png;base64,AA", "data:image/png;base64,AA"),
        ("data:text/html,<b>", ""),
        ("file:///etc/passwd", ""),
        ("java\tscript:alert(1)", ""),
        ("", ""),
    ],
)
def test_safe_image_src(src: str, expected: str) -> None:
    assert safe_image_src(src) == expected


def test_sanitizing_is_deterministic_and_idempotent() -> None:
    once = sanitize_html(HOSTILE, keep_styles=True)
    assert once == sanitize_html(HOSTILE, keep_styles=True)
    assert sanitize_html(once, keep_styles=True) == once


@pytest.mark.parametrize(
    "css",
    [
        "@\\69mport url(https://evil.example/x.css);",
        "@i\\mport 'https://evil.example/x.css';",
        "@\\000069 mport 'x';",
        "p{background:\\75rl(https://evil.example/t.png)}",
        "p{background:u\\rl(https://evil.example/t.png)}",
        "p{background:\\55 RL(https://evil.example/t.png)}",
    ],
)
def test_css_escapes_do_not_hide_imports_or_urls(css: str) -> None:
    cleaned = sanitize_css(css)
    assert "evil.example" not in cleaned
    assert "import" not in cleaned.lower()


def test_css_escapes_outside_keywords_and_functions_are_kept() -> None:
    css = '.\\31 23{content:"\\201C"} .a\\:b{color:red} p{background:url(img/ok.png)}'
    assert sanitize_css(css) == css
