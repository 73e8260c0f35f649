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


def test_html_keeps_no_link_to_a_missing_fragment(tmp_path: Path) -> None:
    """A link to an id nothing has: no annotation in the PDF; in the HTML no dead href (every
    ``href="#x"`` of the page names an element), its text kept."""
    content = "# Links\n\n[dangling](#nowhere) and [home](#links) and cite[[S:1]].\n"
    path = tmp_path / "links.html"
    write_html(content, path, sources_pool=POOL)
    root = _html_root(path)
    ids = {e.get("id") for e in root.iter() if isinstance(e.tag, str) and e.get("id")}
    assert [t for t in _fragment_links(root) if t not in ids] == []
    assert {"links", "src-1", "cite-1"} <= set(_fragment_links(root))
    assert "dangling and home and cite" in root.text_content()


def test_html_input_quotes_and_superscripts_that_are_not_citations(tmp_path: Path) -> None:
    """``<q>`` shows its quotation marks and a ``<sup class="cite">`` that names no source
    stays a superscript, as in the PDF (the author's look keeps both)."""
    content = (
        '<p>He said <q>stop <em>now</em></q> and eps'
        '<sup class="cite" data-sids="abc">x</sup>.</p>'
    )
    html_path, md_path, pdf_path = (tmp_path / f"q.{ext}" for ext in ("html", "md", "pdf"))
    write_html(content, html_path, sources_pool=POOL, content_format="html")
    write_markdown(content, md_path, sources_pool=POOL, content_format="html")
    write_pdf(content, pdf_path, sources_pool=POOL, content_format="html")
    assert "\u201cstop now\u201d" in pdf_text(pdf_path)
    root = _html_root(html_path)
    assert "He said \u201cstop now\u201d and eps" in root.text_content()
    assert root.xpath("string(//p/sup)") == "x"
    assert "He said \u201cstop *now*\u201d and eps<sup>x</sup>." in md_path.read_text("utf-8")


@pytest.mark.parametrize("tex", [r"\text{<a>(1)</a>}", r"\text{<script>x</script>}",
                                 r"\text{</mtext><mi>y}", r"\mbox{a{<b>z</b>}}"])
def test_markup_inside_text_of_a_formula_is_kept_verbatim(tmp_path: Path, tex: str) -> None:
    """latex2mathml copies ``\\text{…}`` unescaped: ``<a>(1)</a>`` became MathML elements, its
    text vanished from the HTML and ziamath failed on what was left (the HTML and PDF renders
    ended in an internal error while the Markdown went through). Now the formula is code,
    its TeX shown as written, in every format."""
    content = f"Before ${tex}$ after.[[S:1]]\n"
    html_path, md_path, pdf_path = (tmp_path / f"m.{ext}" for ext in ("html", "md", "pdf"))
    write_html(content, html_path, sources_pool=POOL)
    write_markdown(content, md_path, sources_pool=POOL)
    write_pdf(content, pdf_path, sources_pool=POOL)
    root = _html_root(html_path)
    assert root.xpath("string(//p/code)") == f"${tex}$"
    assert not root.xpath("//math")
    assert f"`${tex}$`" in md_path.read_text("utf-8")
    assert f"${tex}$" in pdf_text(pdf_path).replace("\n", "")


SPANNED = """<table><tr><th colspan="2">Wide head</th><th>C</th></tr>
<tr><td rowspan="2">Tall</td><td>r1b</td><td>r1c</td></tr>
<tr><td>r2b</td><td>r2c</td></tr>
<tr><td>x</td><td colspan="2">block</td></tr>
<tr><td colspan="100">whole width</td></tr></table>"""


def test_spanned_cells_leave_every_cell_in_its_column(tmp_path: Path) -> None:
    """The PDF draws the author's spans; the HTML and Markdown have none, and the cells after a
    span slid left under the wrong heading (``r2b`` under "Tall"'s column). Now a span is
    followed by, or stands above, empty cells."""
    html_path, md_path = tmp_path / "t.html", tmp_path / "t.md"
    write_html(SPANNED, html_path, sources_pool=POOL, content_format="html")
    write_markdown(SPANNED, md_path, sources_pool=POOL, content_format="html")
    root = _html_root(html_path)
    grid = [[c.text_content() for c in tr.xpath("./th|./td")] for tr in root.xpath("//tr")]
    assert grid == [
        ["Wide head", "", "C"],
        ["Tall", "r1b", "r1c"],
        ["", "r2b", "r2c"],
        ["x", "block", ""],
        ["whole width", "", ""],
    ]
    assert "|  | r2b | r2c |" in md_path.read_text("utf-8").splitlines()


def test_list_item_value_numbers_the_item_as_the_pdf_does(tmp_path: Path) -> None:
    """``<li value="5">``: the PDF numbers 1, 5, 6; the HTML and Markdown said 1, 2, 3."""
    content = '<ol><li>one</li><li value="5">five</li><li>six</li></ol>'
    html_path, md_path, pdf_path = (tmp_path / f"l.{ext}" for ext in ("html", "md", "pdf"))
    write_html(content, html_path, sources_pool=POOL, content_format="html")
    write_markdown(content, md_path, sources_pool=POOL, content_format="html")
    write_pdf(content, pdf_path, sources_pool=POOL, content_format="html")
    lines = {line.strip() for line in pdf_text(pdf_path).splitlines()}
    assert {"1.", "5.", "6."} <= lines and "2." not in lines
    root = _html_root(html_path)
    starts = [(ol.get("start") or "1", len(ol.xpath("./li"))) for ol in root.xpath("//ol")]
    assert starts == [("1", 1), ("5", 2)]
    md = MarkdownIt("commonmark").parse(md_path.read_text("utf-8"))
    lists = [(t.attrs.get("start", 1), t.map) for t in md if t.type == "ordered_list_open"]
    assert [start for start, _ in lists] == [1, 5]


def test_markdown_anchors_lead_somewhere_in_every_output(tmp_path: Path) -> None:
    """``<a id="x"></a>`` in markdown (how the Markdown writer names a place) was dropped: the
    links to it led nowhere in the HTML, the PDF and the Markdown written from it, and the
    Markdown of an HTML input lost its anchors when read again."""
    content = (
        "# Intro\n\nSee [the costs](#costs).\n\n<a id=\"costs\"></a>Costs.[[S:1]]\n"
    )
    html_path, md_path, pdf_path = (tmp_path / f"a.{ext}" for ext in ("html", "md", "pdf"))
    write_html(content, html_path, sources_pool=POOL)
    write_markdown(content, md_path, sources_pool=POOL)
    write_pdf(content, pdf_path, sources_pool=POOL)
    root = _html_root(html_path)
    assert root.xpath("string(//*[@id='costs']/following::text()[1])") == "Costs."
    assert '<a id="costs"></a>Costs.[^1]' in md_path.read_text("utf-8")
    from pypdf import PdfReader

    assert "costs" in PdfReader(str(pdf_path)).named_destinations
    # the Markdown written from an HTML input keeps its anchors when it is read again
    linked_md = tmp_path / "linked.md"
    write_markdown(LINKED_HTML, linked_md, sources_pool=POOL, content_format="html")
    again = tmp_path / "again.html"
    write_html(linked_md.read_text("utf-8"), again, sources_pool=POOL)
    ids = {e.get("id") for e in _html_root(again).iter() if isinstance(e.tag, str)}
    assert {"costs", "tbl", "fn1", "fnref1"} <= ids


@pytest.mark.browser
def test_chromium_follows_the_authors_internal_links(tmp_path: Path) -> None:
    """In a real browser every link of the page leads to an element, and following the
    footnote mark and its back-link scrolls to the note and back to the mark."""
    from tests.helpers import chromium_browser

    path = tmp_path / "linked.html"
    filler = "".join(f"<p>Filler paragraph {i}.</p>" for i in range(80))
    write_html(LINKED_HTML.replace("<section class", filler + "<section class"), path,
               sources_pool=POOL, content_format="html")
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 900, "height": 700})
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        page.goto(path.as_uri())
        missing = page.evaluate(
            "[...document.querySelectorAll('a[href^=\"#\"]')]"
            ".map(a => decodeURIComponent(a.getAttribute('href').slice(1)))"
            ".filter(id => !document.getElementById(id))"
        )
        page.click("a[href='#fn1']")
        note_top = page.evaluate("document.getElementById('fn1').getBoundingClientRect().top")
        scrolled = page.evaluate("window.scrollY")
        page.click("a[href='#fnref1']")
        mark_top = page.evaluate("document.getElementById('fnref1').getBoundingClientRect().top")
    assert missing == []
    assert scrolled > 500 and 0 <= note_top < 700, "the note is in the window"
    assert -1 < mark_top < 50, "the back-link returns to the mark, at the window's top"
    assert [u for u in requests if u != path.as_uri()] == []
