"""The report's stylesheets, parsed once per process (:func:`renderers.writers.pdf.parsed_rules`):
the PDF does not depend on whether the parse was cached, on what was rendered before, on the
thread, and an HTML input's own CSS never reaches another render."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from itertools import product
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pytest

from renderers.api import render
from renderers.options import RenderOptions
from renderers.readers.markdown import read_markdown
from renderers.resolve import ResolvedDocument
from renderers.writers.html.report import print_report, render_html
from renderers.writers.pdf import parsed_rules, pdf_bytes, report_pdf_bytes
from tests.support.render import resolve_rows

POOL = [{"sid": 1, "title": "Source one", "url": "https://one.example/"},
        {"sid": 2, "title": "Source two", "url": "https://two.example/"}]

#: Documents whose stylesheets differ: plain, with contents and a title block, with math and
#: highlighted code, with Arabic code (its @font-face rules stay in the page), with CJK text.
DOCUMENTS = {
    "plain": (
        "# Plain\n\nA paragraph [[S:1]] and another [[S:2]].\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    ),
    "front": (
        "---\ntitle: Fronted\nsubtitle: A subtitle\nauthor: An Author\nabstract: Short.\n---\n\n"
        "# One\n\nText [[S:1]].\n\n## Two\n\nMore text [[S:2]].\n"
    ),
    "math-code": (
        "# Maths\n\nInline $x^2$ [[S:1]] and\n\n$$\\frac{a}{b}$$\n\n"
        "```python\ndef f(x):\n    return x + 1  # one\n```\n"
    ),
    "arabic-code": "# Code\n\n```python\n# تعليق\nx = 'مرحبا'  # note\n```\n\nText [[S:2]].\n",
    "cjk": "# 日本語\n\nこれは日本語の文章です [[S:1]].\n",
}

#: Option sets that change the stylesheets or the PDF WeasyPrint writes.
VARIANTS: dict[str, dict[str, Any]] = {
    "a4": {},
    "letter": {"page_size": "Letter"},
    "pdf/a": {"pdf_variant": "pdf/a-3b"},
    "pdf/ua": {"pdf_variant": "pdf/ua-1", "toc": True},
}


#: Each document and each variant once in the quick loop; every other pair with ``slow``.
QUICK = [("plain", "a4"), ("front", "pdf/ua"), ("math-code", "letter"), ("arabic-code", "pdf/a"),
         ("cjk", "letter")]
PAIRS = [
    pair if pair in QUICK else pytest.param(*pair, marks=pytest.mark.slow)
    for pair in product(sorted(DOCUMENTS), sorted(VARIANTS))
]


@pytest.fixture
def cold() -> Iterator[None]:
    """Each test starts with nothing parsed, and leaves nothing it parsed behind."""
    parsed_rules.cache_clear()
    yield
    parsed_rules.cache_clear()


def resolved(name: str) -> ResolvedDocument:
    return resolve_rows(read_markdown(DOCUMENTS[name]), POOL)


def report_pdf(name: str, variant: str) -> bytes:
    options = RenderOptions(**VARIANTS[variant])
    return report_pdf_bytes(print_report(resolved(name), options), options)


def test_the_print_page_leaves_its_rules_to_the_pdf_writer() -> None:
    """The standalone page carries every rule inline; the page WeasyPrint lays out carries
    only its @font-face rules, its other rules are the report's stylesheets, in order."""
    options = RenderOptions(toc=True)
    rdoc = resolved("arabic-code")
    report = print_report(rdoc, options)
    standalone = render_html(rdoc, options)
    assert len(report.stylesheets) == 3  # report.css, contents, code colours
    assert "".join(report.stylesheets) in standalone
    assert "@font-face {" in report.html and "@page" not in report.html
    assert not any("@font-face {" in sheet for sheet in report.stylesheets)
    plain = print_report(resolved("plain"), RenderOptions())
    assert "<style>" not in plain.html and len(plain.stylesheets) == 1


@pytest.mark.parametrize(("name", "variant"), PAIRS)
def test_cold_warm_and_inline_rules_give_the_same_bytes(
    name: str, variant: str, cold: None
) -> None:
    """Parsed now, parsed before, or parsed by WeasyPrint from the page's own ``<style>``
    (the standalone page, the same document here, laid out as it is): one PDF."""
    first = report_pdf(name, variant)
    assert parsed_rules.cache_info().misses >= 1
    again = report_pdf(name, variant)
    assert parsed_rules.cache_info().hits >= 1
    options = RenderOptions(**VARIANTS[variant])
    inline = pdf_bytes(render_html(resolved(name), options), options)
    assert first == again == inline


@pytest.mark.slow
def test_documents_interleaved_get_their_own_rules(cold: None) -> None:
    """Every document and variant rendered alone, with nothing parsed, then all of them in turn
    twice over with the parsed sheets shared: the same bytes each time."""
    cases = [("plain", "letter"), ("front", "pdf/ua"), ("math-code", "a4"), ("cjk", "pdf/a"),
             ("arabic-code", "letter")]
    alone = {}
    for case in cases:
        parsed_rules.cache_clear()
        alone[case] = report_pdf(*case)
    assert len(set(alone.values())) == len(cases)
    for case in cases + cases[::-1]:
        assert report_pdf(*case) == alone[case], case


@pytest.mark.slow
def test_threads_share_the_parsed_rules(cold: None) -> None:
    cases = [("plain", "a4"), ("front", "letter"), ("math-code", "pdf/ua")] * 2
    alone = {case: report_pdf(*case) for case in dict.fromkeys(cases)}
    parsed_rules.cache_clear()
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(lambda case: report_pdf(*case), cases))
    assert results == [alone[case] for case in cases]


#: HTML input with a stylesheet of its own: red paragraphs on a page of its own size.
AUTHOR_HTML = (
    "<html><head><style>p { color: rgb(255, 0, 0); font-size: 30pt } "
    "@page { size: 120mm 120mm }</style></head><body><h1>Styled</h1>"
    "<p>Red text [[S:1]].</p></body></html>"
)


def rendered(tmp_path: Path, content: str, name: str, **options: Any) -> bytes:
    (result,) = render(content, tmp_path, name=name, formats="pdf", sources_pool=POOL,
                       **options)
    return result.path.read_bytes()


def red_pixels(pdf: bytes) -> int:
    document = pdfium.PdfDocument(pdf)
    try:
        image = document[0].render(scale=0.5).to_pil().convert("RGB")
    finally:
        document.close()
    colors = image.getcolors(maxcolors=1 << 20) or []
    return sum(n for n, (r, g, b) in colors if r > 200 and g < 60 and b < 60)


def test_an_html_inputs_own_css_stays_in_its_render(tmp_path: Path, cold: None) -> None:
    """The author's look is laid out from its own page, rules and all: its CSS reaches no
    later render, and the report's parsed rules reach no later author's look."""
    report = rendered(tmp_path, DOCUMENTS["plain"], "before")
    author = rendered(tmp_path, AUTHOR_HTML, "author", content_format="html")
    assert red_pixels(author) > 0
    with pdfium.PdfDocument(author) as opened:
        assert [round(v) for v in opened[0].get_size()] == [340, 340]  # 120 mm
    after = rendered(tmp_path, DOCUMENTS["plain"], "after")
    assert after == report and red_pixels(after) == 0
    parsed_rules.cache_clear()
    assert rendered(tmp_path, AUTHOR_HTML, "alone", content_format="html") == author


@pytest.mark.parametrize("rule", [
    "@font-face { font-family: X; src: local(X) }",
    "@import 'more.css';",
    "@counter-style x { system: cyclic; symbols: a }",
    "p { background: URL(dot.png) }",
])
def test_rules_that_belong_to_one_document_are_not_parsed_for_all(rule: str) -> None:
    with pytest.raises(RuntimeError, match="belongs in the page's own <style>"):
        parsed_rules(f"p {{ color: red }}\n{rule}\n")


def test_such_rules_named_in_a_comment_are_no_obstacle() -> None:
    parsed_rules("/* the faces (@font-face) and url(x) live elsewhere */ p { color: red }")
