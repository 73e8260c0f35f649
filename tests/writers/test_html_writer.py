"""The standalone HTML report: every IR node, citations, Sources section, no live hostile markup.

The tests start from the IR (the fixture ``every_node`` and small documents built here); one
goes through the markdown reader on purpose.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lxml.html
import pytest

from renderers.document import Cite, Document, Paragraph, Text
from renderers.errors import UnsupportedNodeError
from renderers.options import RenderOptions
from renderers.resolve import ResolvedDocument
from renderers.writers.html.report import cite_markup, render_html
from tests.support.ir import load_ir
from tests.support.render import resolve_rows


def parse(html: str) -> Any:
    return lxml.html.document_fromstring(html)


@pytest.fixture
def report(sample_pool: list[dict[str, Any]]) -> tuple[ResolvedDocument, str]:
    rdoc = resolve_rows(load_ir("every_node"), sample_pool)
    return rdoc, render_html(rdoc, RenderOptions(author="Analyst"))


def test_every_node_renders(report: tuple[ResolvedDocument, str]) -> None:
    _, html = report
    root = parse(html)
    assert html.startswith("<!DOCTYPE html>")
    assert [h.text_content() for h in root.iter("h1")] == ["Energy report"]
    for xpath in ("//em", "//strong", "//del", "//p/code", "//br", "//ul/li", "//ol[@start='4']",
                  "//table/thead/tr/th", "//table/caption", "//pre/code[@class='language-python']",
                  "//blockquote/p", "//figure/img", "//figure/figcaption", "//hr",
                  "//pre[@class='raw']", "//span[@class='raw']"):
        assert root.xpath(xpath), xpath
    assert root.xpath("//td[@class='al-right']")[0].text_content().startswith("1")
    assert "\u2612" in root.xpath("//li[contains(@class,'checked')]")[0].text_content()
    # tight list items have no <p>, loose ones do
    assert not root.xpath("//ul/li/p") and root.xpath("//ol/li/p")


def test_citations_link_each_number_to_its_entry(report: tuple[ResolvedDocument, str]) -> None:
    rdoc, html = report
    root = parse(html)
    sups = root.xpath("//sup[@class='cite']")
    # the unknown-only citation renders nothing; the others carry the resolver's anchors
    expected = [c for c in _cites(rdoc) if c.numbers]
    assert [s.get("id") for s in sups] == [c.anchor for c in expected]
    many = root.get_element_by_id(expected[1].anchor)
    assert many.text_content() == "1–4"
    assert [a.get("href") for a in many.iter("a")] == ["#src-1", "#src-4"]
    entry_ids = {li.get("id") for li in root.xpath("//section[@id='sources']/ol/li")}
    for sup in sups:
        for a in sup.iter("a"):
            assert a.get("href")[1:] in entry_ids


def _cites(rdoc: ResolvedDocument) -> list[Cite]:
    from renderers.document import iter_inlines

    return [n for n in iter_inlines(rdoc.document.blocks) if isinstance(n, Cite)]


def test_sources_section(report: tuple[ResolvedDocument, str]) -> None:
    rdoc, html = report
    root = parse(html)
    section = root.get_element_by_id("sources")
    assert section.tag == "section"
    assert section.xpath("h2")[0].text_content() == "Sources"
    items = section.xpath("ol/li")
    assert [li.get("id") for li in items] == [e.anchor for e in rdoc.entries]
    by_id = {li.get("id"): li for li in items}
    for entry in rdoc.entries:
        li = by_id[entry.anchor]
        links = li.xpath("a[contains(@class,'source-title')]")
        if entry.url:
            assert links[0].get("href") == entry.url and links[0].text_content() == entry.title
        else:
            assert not links and entry.title in li.text_content()
        assert entry.label in li.text_content()
        if entry.date:
            assert entry.date in li.text_content()
        assert li.xpath("a[@class='backlink']")[0].get("href") == f"#{entry.backlink}"
        assert root.get_element_by_id(entry.backlink) is not None
    memo = by_id[next(e.anchor for e in rdoc.entries if e.label == "attachments/memo.pdf")]
    assert "attachments/memo.pdf" in memo.text_content()


def test_nothing_hostile_or_external(report: tuple[ResolvedDocument, str]) -> None:
    _, html = report
    root = parse(html)
    # the one script is citerender's own citation previews, inline (no src)
    assert not root.xpath("//script[not(@id='citation-previews')] | //link | //iframe | //object")
    assert not root.xpath("//script[@src]")
    assert not [e for e in root.iter() if any(k.startswith("on") for k in e.attrib)]
    assert "javascript:" not in html
    assert "bad link" in root.text_content()
    assert "<script>alert(1)</script>" in root.xpath("//pre[@class='raw']")[0].text_content()
    assert all(img.get("src").startswith("data:image/png;base64,") for img in root.iter("img"))
    assert "[Image: remote alt]" in root.text_content() and "remote.png" not in html
    assert root.xpath("//a[@href='https://example.org/a?b=1&c=2']")


def test_notes_and_directions(report: tuple[ResolvedDocument, str]) -> None:
    _, html = report
    root = parse(html)
    ref = root.xpath("//sup[@class='fnref']/a")[0]
    note = root.get_element_by_id(ref.get("href")[1:])
    assert "An author note." in note.text_content()
    assert root.get_element_by_id("notes").xpath("h2")[0].text_content() == "Notes"
    arabic = next(p for p in root.iter("p") if "العربية" in p.text_content())
    assert arabic.get("dir") == "rtl"
    assert root.xpath("//p[@dir='auto']")


def test_title_author_page_size_and_heading(sample_pool: list[dict[str, Any]]) -> None:
    doc = Document((Paragraph((Text("x"), Cite((1,)))),), title="")
    rdoc = resolve_rows(doc, sample_pool, sources_heading="References")
    html = render_html(rdoc, RenderOptions(title="Given <title>", page_size="Letter"))
    root = parse(html)
    assert root.find(".//title").text == "Given <title>"
    assert root.xpath("//h1[@class='doc-title']")[0].text_content() == "Given <title>"
    assert root.get_element_by_id("sources").xpath("h2")[0].text_content() == "References"
    assert "size: letter" in html and "size: A4" not in html
    plain = parse(render_html(rdoc, RenderOptions()))
    assert plain.find(".//title").text == "Report"


def test_sid_numbering_keeps_list_values(sample_pool: list[dict[str, Any]]) -> None:
    doc = Document((Paragraph((Text("x"), Cite((5, 3)))),))
    rdoc = resolve_rows(doc, sample_pool, numbering="sid")
    root = parse(render_html(rdoc, RenderOptions()))
    items = root.xpath("//ol[@class='sources-list']/li")
    assert [(li.get("id"), li.get("value")) for li in items] == [("src-3", "3"), ("src-5", "5")]


def test_deterministic(sample_pool: list[dict[str, Any]]) -> None:
    first = render_html(resolve_rows(load_ir("every_node"), sample_pool), RenderOptions())
    second = render_html(resolve_rows(load_ir("every_node"), sample_pool), RenderOptions())
    assert first == second


def test_unsupported_node_fails_loudly(sample_pool: list[dict[str, Any]]) -> None:
    class Alien:
        pass

    doc = Document((Paragraph((Text("x"),)), Alien()))  # type: ignore[arg-type]
    rdoc = ResolvedDocument(doc, resolve_rows(Document(()), sample_pool).plan, (), ())
    with pytest.raises(UnsupportedNodeError, match="Alien"):
        render_html(rdoc, RenderOptions())


def test_cite_markup_escapes_and_skips_empty() -> None:
    assert cite_markup("cite-1", (), ()) == ""
    assert str(cite_markup('cite-"2', (2, 3), (7, 4))) == (
        '<sup class="cite" id="cite-&#34;2" data-sids="7,4"><a href="#src-2">2</a>, '
        '<a href="#src-3">3</a></sup>'
    )


def test_markdown_input_renders(sample_pool: list[dict[str, Any]], tmp_path: Path) -> None:
    from renderers.readers.markdown import read_markdown

    text = (
        "# Title\n\nText [[S:1]] and [[S:2-3]].[^a]\n\n- [x] task\n- item\n\n"
        "| a | b |\n|:--|--:|\n| 1 | 2 [[S:5]] |\n\n```py\n[[S:1]]\n```\n\n> quote\n\n---\n\n"
        "![alt](missing.png)\n\n<div>raw</div>\n\n[^a]: note\n"
    )
    rdoc = resolve_rows(read_markdown(text), sample_pool)
    root = parse(render_html(rdoc, RenderOptions(base_dir=tmp_path)))
    assert len(root.xpath("//sup[@class='cite']")) == 3
    assert "[[S:1]]" in root.xpath("//pre/code")[0].text_content()
    assert root.get_element_by_id("sources") is not None
