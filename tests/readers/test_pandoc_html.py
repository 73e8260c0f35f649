"""HTML that pandoc with pandoc-crossref wrote, read back with its numbered figures, tables,
formulas and listings: each labelled by its id, its caption without the number pandoc-crossref
led it with (the pass numbers it again, in this document's order and words), and a link to one
whose words end in a number a reference to it, in every format written from it."""

from __future__ import annotations

import io

import docx
import lxml.html
import pytest

from renderers.document import (
    Anchor,
    CodeBlock,
    CrossRef,
    Figure,
    Link,
    Math,
    Paragraph,
    Table,
    iter_inlines,
    plain_text,
)
from renderers.labels import LABELS
from renderers.options import RenderOptions
from renderers.readers.context import HTML_SPACE
from renderers.readers.html import read_html
from renderers.readers.markdown import read_markdown
from tests.helpers import ROOT
from tests.support.render import resolve_rows, write_resolved

#: A page as pandoc 3 and pandoc-crossref write one (``--mathjax``, ``linkReferences``): the
#: figure and its caption in a ``<figure id>``, the table in a ``<div id>`` (pandoc before 3.8.2)
#: and one with its own id, the formula's number inside its TeX, a listing's ``div.listing``;
#: the references show the number alone, the name before the link. Numbered 7, 9 … as a
#: chapter's excerpt would be: the page is numbered again from 1.
PAGE = """\
<p>See fig.&nbsp;<a href="#fig:chart">7</a>, <a href="#tbl:cost">Table 4</a>,
tbls.&nbsp;<a href="#tbl:cost">4</a>, <a href="#tbl:time">5</a>,
eq.&nbsp;<a href="#eq:energy">2</a>, lst.&nbsp;<a href="#lst:hello">3</a> and
<a href="#fig:chart">the chart</a>.</p>
<figure id="fig:chart">
<img src="assets/chart.png" />
<figcaption>Figure 7: Sales by <em>region</em></figcaption>
</figure>
<div id="tbl:cost">
<table>
<caption><p>Table 4: Costs</p></caption>
<thead><tr class="header"><th>Item</th><th>Cost</th></tr></thead>
<tbody><tr class="odd"><td>Paper</td><td>3</td></tr></tbody>
</table>
</div>
<table id="tbl:time">
<caption>Table 5: Times</caption>
<tbody><tr class="odd"><td>Print</td><td>2 h</td></tr></tbody>
</table>
<p>Energy is <span id="eq:energy"><span class="math display">\\[ E = mc^2 \\qquad(2)\\]\
</span></span> at rest.</p>
<div id="lst:hello" class="listing python"><p>Listing 3: Say hello</p>
<div class="sourceCode" id="cb1"><pre class="sourceCode python"><code class="sourceCode python">\
print("hello")</code></pre></div></div>
"""
SHOWN = "See fig.\u00a01, Table 1, tbls.\u00a01, 2, eq.\u00a01, lst.\u00a01 and the chart."
OPTIONS = RenderOptions(base_dir=ROOT / "samples")


def _see(blocks: tuple[object, ...]) -> Paragraph:
    (see,) = [b for b in blocks if isinstance(b, Paragraph)
              and plain_text(b.children).startswith("See")]
    return see


def test_pandoc_crossref_s_page_reads_as_labelled_elements_and_references() -> None:
    page = read_html(PAGE)
    assert page.notes == ()
    (figure,) = [b for b in page.blocks if isinstance(b, Figure)]
    assert (figure.label, plain_text(figure.caption), figure.image.src) == (
        "fig:chart", "Sales by region", "assets/chart.png")
    tables = [b for b in page.blocks if isinstance(b, Table)]
    assert [(t.label, plain_text(t.caption)) for t in tables] == [
        ("tbl:cost", "Costs"), ("tbl:time", "Times")]
    (formula,) = [n for n in iter_inlines(page.blocks) if isinstance(n, Math)]
    assert (formula.tex, formula.display, formula.label) == ("E = mc^2", True, "eq:energy")
    (listing,) = [b for b in page.blocks if isinstance(b, CodeBlock)]
    assert (listing.label, plain_text(listing.caption)) == ("lst:hello", "Say hello")
    see = _see(page.blocks)
    assert [(n.label, n.form, n.prefix) for n in see.children if isinstance(n, CrossRef)] == [
        ("fig:chart", "number", ""), ("tbl:cost", "name", "Table"), ("tbl:cost", "number", ""),
        ("tbl:time", "number", ""), ("eq:energy", "number", ""), ("lst:hello", "number", "")]
    (link,) = [n for n in see.children if isinstance(n, Link)]
    assert link.url == "#fig:chart"  # the author's own words stay a link to the figure


def test_pandoc_crossref_s_page_to_html_numbers_captions_and_links_again() -> None:
    resolved = resolve_rows(read_html(PAGE), [])
    assert resolved.notes == ()
    root = lxml.html.document_fromstring(write_resolved("html", resolved, OPTIONS))
    (figure,) = root.xpath("//figure[img]")
    assert figure.get("id") == "fig-1"
    assert figure.xpath("string(figcaption)") == "Figure 1: Sales by region"
    assert [(t.get("id"), t.xpath("string(caption)")) for t in root.xpath("//table")] == [
        ("tbl-1", "Table 1: Costs"), ("tbl-2", "Table 2: Times")]
    assert root.xpath("string(//*[@class='eqno'])") == "(1)"
    see = next(p for p in root.xpath("//p") if p.text_content().startswith("See"))
    assert HTML_SPACE.sub(" ", see.text_content()) == SHOWN
    assert [(a.text, a.get("href")) for a in see.xpath(".//a")] == [
        ("1", "#fig-1"), ("Table 1", "#tbl-1"), ("1", "#tbl-1"), ("2", "#tbl-2"),
        ("1", "#eq-1"), ("1", "#lst-1"), ("the chart", "#fig:chart")]
    assert root.xpath("//*[@id='fig:chart']")  # where the author's own link leads


def test_pandoc_crossref_s_page_to_markdown_and_back() -> None:
    resolved = resolve_rows(read_html(PAGE), [])
    text = write_resolved("md", resolved, OPTIONS).decode()
    assert "**Figure 1:** " in text and "Sales by *region*" in text
    assert '<a id="tbl-1"></a>**Table 1:** Costs' in text
    assert '<a id="tbl-2"></a>**Table 2:** Times' in text
    assert "Energy is $$E = mc^2$$ {#eq:energy} at rest." in text
    assert ("See fig.\u00a0[1](#fig-1), [Table 1](#tbl-1), tbls.\u00a0[1](#tbl-1), [2](#tbl-2)"
            in text)
    again = read_markdown(text)
    assert again.notes == ()
    assert [n.label for n in iter_inlines(again.blocks) if isinstance(n, Math)] == ["eq:energy"]


def test_pandoc_crossref_s_page_to_docx_text() -> None:
    resolved = resolve_rows(read_html(PAGE), [])
    body = docx.Document(io.BytesIO(write_resolved("docx", resolved, OPTIONS))).paragraphs
    shown = [p.text for p in body]
    assert SHOWN in shown
    assert {"Figure 1: Sales by region", "Table 1: Costs", "Table 2: Times",
            "Listing 1: Say hello"} <= set(shown)
    (energy,) = [p for p in body if p.text.startswith("Energy is")]
    assert energy.text.endswith("(1) at rest.")  # the number at the margin
    assert energy._p.xpath(".//m:oMath")  # the formula as Office Math


@pytest.mark.parametrize("html", [
    # pandoc 2 put the id on the image, its caption in the alt text too
    '<figure><img src="a.png" id="fig:a" alt="Figure 2: Cap" />'
    '<figcaption aria-hidden="true">Figure 2: Cap</figcaption></figure>',
    # and for HTML 4 a div.figure with a p.caption
    '<div class="figure"><img src="a.png" id="fig:a" alt="Figure 2: Cap" />'
    '<p class="caption">Figure 2: Cap</p></div>',
    '<figure id="fig:a"><img src="a.png" /><figcaption><p>Figure 2: Cap</p></figcaption>'
    "</figure>",
])
def test_pandoc_s_figure_forms_read_as_one_labelled_figure(html: str) -> None:
    page = read_html(f'<p>See fig. <a href="#fig:a">2</a>, <a href="#fig:a">this</a>.</p>{html}')
    assert page.notes == ()
    (figure,) = [b for b in page.blocks if isinstance(b, Figure)]
    assert (figure.label, plain_text(figure.caption), figure.image.alt) == (
        "fig:a", "Cap", figure.image.alt and "Cap")
    assert Anchor("fig:a") in figure.caption  # where the author's words lead
    assert [n for n in iter_inlines(page.blocks) if isinstance(n, CrossRef)] == [
        CrossRef("fig:a", form="number")]


@pytest.mark.parametrize("language", sorted(LABELS))
def test_a_caption_s_lead_in_any_language_is_taken_off(language: str) -> None:
    words = LABELS[language]
    page = read_html(
        f'<figure id="fig:a"><img src="a.png"><figcaption>{words.caption_lead("fig", 3)} '
        f'Cap</figcaption></figure><table id="tbl:a"><caption>{words.caption_lead("tbl", 12)}'
        " Rows</caption><tr><td>1</td></tr></table>")
    (figure,) = [b for b in page.blocks if isinstance(b, Figure)]
    (table,) = [b for b in page.blocks if isinstance(b, Table)]
    assert (plain_text(figure.caption), plain_text(table.caption)) == ("Cap", "Rows")


def test_chapter_numbers_in_captions_and_links_are_read() -> None:
    page = read_html('<p>See figs. <a href="#fig:a">2.1</a>, <a href="#fig:b">Figure 2.2</a>.'
                     '</p><figure id="fig:a"><img src="a.png"><figcaption>Figure 2.1: One'
                     '</figcaption></figure><figure id="fig:b"><img src="b.png"><figcaption>'
                     "Figure 2.2: Two</figcaption></figure>")
    assert [plain_text(b.caption) for b in page.blocks if isinstance(b, Figure)] == ["One", "Two"]
    assert [(n.label, n.prefix) for n in iter_inlines(page.blocks) if isinstance(n, CrossRef)] == [
        ("fig:a", ""), ("fig:b", "Figure")]


@pytest.mark.parametrize("tex", ["\\[ a+b \\qquad(3)\\]", "\\[a+b\\tag{3}\\]", "\\[ a+b \\]"])
def test_a_labelled_mathjax_formula_reads_without_its_number(tex: str) -> None:
    page = read_html(f'<p><span id="eq:s"><span class="math display">{tex}</span></span></p>')
    assert [(n.tex, n.label) for n in iter_inlines(page.blocks) if isinstance(n, Math)] == [
        ("a+b", "eq:s")]


@pytest.mark.parametrize("html", [
    # another site's figure: its id labels nothing, its caption is its own
    '<figure id="photo"><img src="a.png"><figcaption>Figure 1: A photo</figcaption></figure>'
    '<p><a href="#photo">1</a></p>',
    '<figure><img src="a.png"><figcaption>Figure 1: A photo</figcaption></figure>',
    # a labelled id on what is no figure, table or formula
    '<div id="fig:x"><p>Figure 1: A photo</p><p>two</p></div><p><a href="#fig:x">1</a></p>',
    '<p><span id="eq:x">E = mc2</span> <a href="#eq:x">1</a></p>',
    '<div id="tbl:x"><p>Table 1: A photo</p><table><tr><td>1</td></tr></table></div>',
])
def test_elements_no_id_labels_read_as_before(html: str) -> None:
    page = read_html(html)
    assert page.notes == ()
    assert not [n for n in iter_inlines(page.blocks) if isinstance(n, CrossRef | Math)]
    assert not any(isinstance(b, Figure | Table) and b.label for b in page.blocks)
    shown = plain_text(tuple(iter_inlines(page.blocks)))
    assert "1: A photo" in shown or "E = mc2" in shown


def test_a_markdown_reference_to_an_html_block_s_figure_resolves() -> None:
    resolved = resolve_rows(read_markdown(
        'See @fig:a.\n\n<figure id="fig:a"><img src="a.png"><figcaption>Figure 5: Hi'
        "</figcaption></figure>\n"), [])
    assert resolved.notes == ()
    text = write_resolved("md", resolved, OPTIONS).decode()
    assert "See [Figure 1](#fig-1)." in text and "**Figure 1:** Hi" in text
