"""Ids that clash with what a writer makes or that a PDF engine mishandles: an author's heading
or anchor given the HTML page's preview-script id, and ids holding a quote or a backslash, which
WeasyPrint made no anchor of. Each link still lands, one element per id."""

from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import quote

import pytest
from pypdf import PdfReader

from renderers.api import render
from tests.helpers import internal_links
from tests.support.render import render_markdown

POOL = [{"sid": 1, "title": "Alpha report", "url": "https://example.com/a"}]
FILLER = "\n\n".join(["A filler sentence that takes room on the page. " * 10] * 12)


@pytest.mark.parametrize("markdown", [
    "## Previews {#citation-previews}\n\nText [[S:1]].\n",
    'Text <a id="citation-previews"></a>[[S:1]].\n',
])
def test_an_author_id_never_duplicates_the_preview_scripts(markdown: str) -> None:
    """The page's citation-preview script has its id on every page: an author's heading or
    anchor given that id takes another (an HTML page holds each id once)."""
    page = render_markdown("html", markdown, POOL).decode("utf-8")
    ids = re.findall(r'\bid="([^"]*)"', page)
    assert len(ids) == len(set(ids))
    assert '<script id="citation-previews">' in page


@pytest.mark.parametrize("content_format", ["markdown", "html"])
def test_weasyprint_lands_links_on_ids_holding_a_quote_or_a_backslash(
    tmp_path: Path, content_format: str
) -> None:
    """WeasyPrint makes an element's anchor from a CSS string it writes around the id without
    escaping it: ``x"y`` and ``a\\b`` (``\\b`` a CSS escape) made no anchor, and the links to
    them no link. Both land, in the report and in an HTML input's own look."""
    idents = ['x"y', "a\\b", "c\\41"]
    if content_format == "markdown":
        source = "# Doc\n\n" + "".join(
            f"## Head {n} {{id='{ident.replace(chr(92), chr(92) * 2)}'}}\n\n{FILLER}\n\n"
            for n, ident in enumerate(idents))
        source += " ".join(f"[to {n}](#{quote(ident, safe='')})" for n, ident in enumerate(idents))
    else:
        source = "<h1>Doc</h1>" + "".join(
            f'<h2 id="{html.escape(ident)}">Head {n}</h2><p>{FILLER}</p>'
            for n, ident in enumerate(idents))
        source += " ".join(f'<a href="#{quote(ident, safe="")}">to {n}</a>'
                           for n, ident in enumerate(idents))
    (result,) = render(source + " [[S:1]]\n", tmp_path, sources_pool=POOL, formats="pdf",
                       pdf_engine="weasyprint", content_format=content_format)
    pages = [page.extract_text() for page in PdfReader(result.path).pages]
    landed = {shown: page for shown, page, _ in internal_links(result.path)}
    for n in range(len(idents)):
        page = next(i for i, text in enumerate(pages) if f"Head {n}" in text)
        assert landed.get(f"to {n}") == page, (n, landed)
