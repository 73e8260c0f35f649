"""The standalone HTML and the footnoted Markdown keep what the PDF gives a reader or a program:
links that lead somewhere, the text, no live markup. Each test reads the file a render wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote

import lxml.html
import pytest
from markdown_it import MarkdownIt
from mdit_py_plugins.footnote import footnote_plugin

from renderers import write_html, write_markdown, write_pdf
from tests.helpers import pdf_text

POOL = [
    {"sid": 1, "title": "World Energy Outlook 2024", "url": "https://www.iea.org/reports/weo-2024"},
    {"sid": 2, "title": "Renewable Capacity Statistics", "url": "https://www.irena.org/stats"},
]

#: HTML as pandoc and word processors write it: footnotes and a contents list whose links lead
#: to ids on elements that are not headings (a section, a table, list items, a footnote mark).
LINKED_HTML = """<h1>Report</h1>
<nav><ul><li><a href="#costs">Costs</a></li><li><a href="#tbl">Table</a></li></ul></nav>
<section id="costs"><h2>Costs</h2><p>Text<a href="#fn1" id="fnref1"><sup>1</sup></a>
cited<sup class="cite" data-sids="1">[S:1]</sup>.</p></section>
<table id="tbl"><tr><td>cell</td></tr></table>
<section class="footnotes"><ol><li id="fn1"><p>The note.<a href="#fnref1">back</a></p></li>
</ol></section>"""


def _html_root(path: Path) -> Any:
    return lxml.html.document_fromstring(path.read_text(encoding="utf-8"))


def _fragment_links(root: Any) -> list[str]:
    return [unquote(a.get("href")[1:]) for a in root.xpath("//a[starts-with(@href, '#')]")]


def test_html_input_links_to_ids_lead_somewhere_in_the_html(tmp_path: Path) -> None:
    """The PDF keeps the author's ids (its links jump); the standalone HTML kept only headings'
    ids, so a footnote mark, its back-link and a contents entry for a section led nowhere."""
    path = tmp_path / "linked.html"
    write_html(LINKED_HTML, path, sources_pool=POOL, content_format="html")
    root = _html_root(path)
    ids = [e.get("id") for e in root.iter() if isinstance(e.tag, str) and e.get("id")]
    assert len(ids) == len(set(ids)), "ids are unique"
    targets = _fragment_links(root)
    assert {"costs", "tbl", "fn1", "fnref1", "src-1", "cite-1"} <= set(targets)
    assert [t for t in targets if t not in ids] == []
    # each anchor sits at the start of the element the author named
    assert root.xpath("string(//*[@id='fn1']/following::text()[1])").startswith("The note.")
    assert root.xpath("string(//*[@id='tbl']/ancestor::td)") == "cell"


def test_html_input_anchors_reach_the_markdown(tmp_path: Path) -> None:
    path = tmp_path / "linked.md"
    write_markdown(LINKED_HTML, path, sources_pool=POOL, content_format="html")
    text = path.read_text(encoding="utf-8")
    rendered = MarkdownIt("commonmark").enable("table").use(footnote_plugin).render(text)
    root = lxml.html.fragment_fromstring(rendered, create_parent="div")
    ids = {e.get("id") for e in root.iter() if isinstance(e.tag, str) and e.get("id")}
    for target in ("costs", "tbl", "fn1", "fnref1"):
        assert target in ids, f"#{target} leads nowhere in the Markdown"


def test_pdf_of_linked_html_still_jumps(tmp_path: Path) -> None:
    """The reference: the PDF's named destinations hold the author's ids."""
    from pypdf import PdfReader

    path = tmp_path / "linked.pdf"
    write_pdf(LINKED_HTML, path, sources_pool=POOL, content_format="html")
    names = set(PdfReader(str(path)).named_destinations)
    assert {"fn1", "fnref1", "costs"} <= names
    assert "The note." in pdf_text(path)
