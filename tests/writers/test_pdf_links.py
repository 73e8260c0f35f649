"""Links in the two PDF engines, read back from the PDF: one annotation per link and line, over
the link's text; links to the document's own headings (an HTML author's ids and markdown's
slugs); a link to an anchor the document does not have; side-by-side citations in the author's
look."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from pypdf import PdfReader
from weasyprint.urls import iri_to_uri

from renderers.api import render
from renderers.writers.common import pdf_uri

POOL = [
    {"sid": 1, "title": "Alpha report on things", "author": "Doe, Jane", "date": "2024-03-01",
     "url": "https://www.example.com/reports/2024/alpha-report-on-things-and-more?ref=abc&u=x"},
    {"sid": 2, "title": "中文标题 with emoji 🚀 and more", "date": "2023",
     "url": "https://cjk.example.org/page"},
    {"sid": 3, "title": "Beta", "url": "https://beta.example.net/a/very/long/path/that/keeps/on"},
]
ENGINES = ["typst", "weasyprint"]
AUTOLINK = "https://autolink.example.com/path?x=1"


def render_pdf(tmp_path: Path, content: str, engine: str, *, dead: str = "",
               **options: object) -> Path:
    """The PDF of ``content``; the only note of a link is the one of a link to ``#dead``,
    which leads nowhere."""
    out = tmp_path / engine
    (result,) = render(content, out, sources_pool=POOL, formats=["pdf"], pdf_engine=engine,
                       **options)
    noted = [w.split(": ", 1)[1] for w in result.warnings
             if "link" in w.lower() or "anchor" in w.lower()]
    assert noted == ([f"the link to '#{dead}' leads nowhere: no heading or element has the "
                      "id; its text is kept"] if dead else [])
    return out / "report.pdf"


def links(pdf: Path) -> list[tuple[int, tuple[float, float, float, float], str]]:
    """Every link annotation: its page, rectangle and target (URI, or the destination)."""
    out = []
    for index, page in enumerate(PdfReader(pdf).pages):
        for ref in page.get("/Annots") or []:
            annot = ref.get_object()
            if annot.get("/Subtype") != "/Link":
                continue
            x1, y1, x2, y2 = (float(v) for v in annot["/Rect"])
            action = annot.get("/A")
            target = action.get_object().get("/URI") if action else None
            dest = annot.get("/Dest")
            named = dest if isinstance(dest, str) else None
            out.append((index, (min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2)),
                        str(target or named or "dest")))
    return out


def text_under(pdf: Path, page: int, rect: tuple[float, float, float, float]) -> str:
    document = pdfium.PdfDocument(str(pdf))
    try:
        textpage = document[page].get_textpage()
        return textpage.get_text_bounded(*rect).strip()
    finally:
        document.close()


def url_links(pdf: Path, url: str) -> list[tuple[int, tuple[float, float, float, float], str]]:
    return [link for link in links(pdf) if link[2] == url]


@pytest.mark.parametrize("engine", ENGINES)
def test_an_autolink_is_one_annotation(tmp_path: Path, engine: str) -> None:
    pdf = render_pdf(tmp_path, f"# T\n\nSee <{AUTOLINK}> for more [[S:1]].\n", engine)
    (link,) = url_links(pdf, AUTOLINK)
    assert text_under(pdf, link[0], link[1]).replace("\n", "") == AUTOLINK


@pytest.mark.parametrize("engine", ENGINES)
def test_each_link_has_one_annotation_per_line_over_its_text(tmp_path: Path, engine: str) -> None:
    """A title of Chinese, Latin and an emoji is several text runs in Typst, and a URL was a
    row of boxes: each a PDF annotation. Now one per line, each over text."""
    text = f"# T\n\nSee <{AUTOLINK}> [[S:1]] [[S:2]] [[S:3]].\n"
    for style in (None, "apa"):
        pdf = render_pdf(tmp_path / str(style), text, engine, **({"csl": style} if style else {}))
        for row in POOL:
            found = url_links(pdf, row["url"])
            assert found, (style, row["url"])
            lines = {(page, round(rect[1])) for page, rect, _ in found}
            assert len(found) == len(lines), (style, row["url"], found)  # one per line
            for page, rect, _ in found:
                assert text_under(pdf, page, rect), (style, row["url"], rect)


@pytest.mark.parametrize("csl", [None, "apa"])
def test_typst_and_weasyprint_agree_on_url_annotations(tmp_path: Path, csl: str | None) -> None:
    text = f"# T\n\nSee <{AUTOLINK}> [[S:1]] [[S:2]] [[S:3]].\n"
    options = {"csl": csl} if csl else {}
    counts = {}
    for engine in ENGINES:
        pdf = render_pdf(tmp_path, text, engine, **options)
        counts[engine] = len([link for link in links(pdf) if link[2].startswith("https://")])
    assert counts["typst"] == counts["weasyprint"]


def test_a_long_url_in_a_link_still_breaks_over_lines(tmp_path: Path) -> None:
    url = "https://example.org/" + "segment/" * 30 + "x" * 60
    pdf = render_pdf(tmp_path, f"# T\n\nSee <{url}>.\n", "typst")
    found = url_links(pdf, url)
    assert len(found) >= 3  # one per line: the URL wraps
    page = pdfium.PdfDocument(str(pdf))[0]
    textpage = page.get_textpage()
    right = max(textpage.get_charbox(i)[2] for i in range(textpage.count_chars()))
    assert right <= page.get_width() - 20 * 72 / 25.4 + 1  # nothing runs into the margin


HEADING_ID_HTML = (
    "<html><body><h1>Doc</h1><h2 id=\"Custom_Id\">Target</h2><p>text</p>"
    "<p><a href=\"#Custom_Id\">to custom</a> and <a href=\"#missing\">to missing</a></p>"
    "<h2>Second Heading</h2></body></html>"
)


def pages_of_destinations(pdf: Path) -> list[int]:
    """The page each internal link leads to."""
    reader = PdfReader(pdf)
    pages = []
    for page in reader.pages:
        for ref in page.get("/Annots") or []:
            annot = ref.get_object()
            if annot.get("/Subtype") != "/Link" or annot.get("/A") is not None:
                continue
            dest = annot["/Dest"]
            if isinstance(dest, str):
                dest = reader.named_destinations[dest]
                pages.append(reader.get_destination_page_number(dest))
            else:
                pages.append(reader.get_page_number(dest[0].get_object()))
    return pages


@pytest.mark.parametrize("engine", ENGINES)
def test_a_link_to_an_authors_heading_id_leads_there(tmp_path: Path, engine: str) -> None:
    pdf = render_pdf(tmp_path, HEADING_ID_HTML, engine, dead="missing")
    internal = [link for link in links(pdf) if not link[2].startswith("http")]
    assert len(internal) == 1  # "to custom"; "to missing" has no annotation in either engine
    assert text_under(pdf, internal[0][0], internal[0][1]) == "to custom"
    assert pages_of_destinations(pdf) == [0]
    assert "to missing" in subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True,
                                          text=True, check=True).stdout


@pytest.mark.parametrize("engine", ENGINES)
def test_markdown_links_to_heading_slugs(tmp_path: Path, engine: str) -> None:
    text = "# Doc\n\n## Second Heading\n\n## Second Heading\n\n[one](#second-heading) " \
           "[two](#second-heading-1) [none](#nowhere)\n"
    pdf = render_pdf(tmp_path, text, engine, dead="nowhere")
    internal = [link for link in links(pdf) if not link[2].startswith("http")]
    assert [text_under(pdf, page, rect) for page, rect, _ in internal] == ["one", "two"]


def test_typst_keeps_the_html_readers_heading_ids() -> None:
    from renderers.document import Heading
    from renderers.readers.html import read_html

    document = read_html(HEADING_ID_HTML.replace("<h2>Second", '<h2 id="cite-3">Second'))
    ids = [block.id for block in document.blocks if isinstance(block, Heading)]
    assert ids == ["doc", "Custom_Id", "second-heading"]  # a writer's own anchor is refused


ADJACENT_HTML = (
    "<html><head><style>p { color: #222; }</style></head><body><h1>T</h1>"
    '<p>x<sup class="cite" data-sids="1">[S:1]</sup><sup class="cite" data-sids="2">[S:2]</sup>'
    ' and y<sup class="cite" data-sids="3">[S:3]</sup> <sup class="cite" data-sids="1">[S:1]'
    "</sup> and z [S:2][S:3].</p></body></html>"
)


@pytest.mark.parametrize("engine", ENGINES)
def test_side_by_side_citations_of_html_input_read_apart(tmp_path: Path, engine: str) -> None:
    """In the author's look too (WeasyPrint keeps the HTML): ``x¹,²``, never ``x¹²``."""
    pdf = render_pdf(tmp_path, ADJACENT_HTML, engine)
    shown = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                           check=True).stdout
    body = re.sub(r"\s+", "", shown.split("Sources")[0])
    assert body == "Tx1,2andy31andz2,3."


LINKED_CITES_HTML = (
    "<html><head><style>p { color: #222; }</style></head><body><h1>T</h1>"
    '<p>x <a href="https://x.org/">a [[S:1]] and b [[S:2]]</a> y [[S:3]].</p>'
    '<p>z <a href="https://x.org/">c <sup class="cite" data-sids="3">[S:3]</sup></a>[S:1]'
    " <tt>[[S:2]]</tt> <kbd>[[S:1]]</kbd>.</p></body></html>"
)


@pytest.mark.parametrize("engine", ENGINES)
def test_citations_inside_a_link_of_html_input_follow_it_as_one(
    tmp_path: Path, engine: str
) -> None:
    """The author's look (WeasyPrint) sets them as the citation pass does: after the link, one
    citation, "1, 2" and never "12"; its anchors count alike, so each entry's back-link leads
    to its first citation (``<tt>`` is code there too, ``<kbd>`` is not)."""
    pdf = render_pdf(tmp_path, LINKED_CITES_HTML, engine)
    shown = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                           check=True).stdout
    body = re.sub(r"\s+", "", shown.split("Sources")[0])
    assert body == "Txaandb1,2y3.zc3,1[[S:2]]1."
    found = links(pdf)
    assert [t for _, _, t in found if t == "https://x.org/"] == ["https://x.org/"] * 2
    if engine == "weasyprint":  # the author's look; Typst's destinations are not named
        backlinks = [t for _, _, t in found if t.startswith("cite-")]
        assert backlinks == ["cite-1", "cite-1", "cite-2"]  # sources 1, 2, 3 first cited there
        named = PdfReader(pdf).named_destinations  # z c³,¹ and the kbd¹: cite-3 to cite-5
        assert "cite-5" in named and "cite-6" not in named


IRI_POOL = [
    {"sid": 1, "title": "Größe", "url": "https://de.wikipedia.org/wiki/Größe"},
    {"sid": 2, "title": "Beispiel", "url": "https://例え.jp/パス?q=ü"},
]
IRI_TEXT = ("# T\n\nSee [Größe](https://de.wikipedia.org/wiki/Größe),"
            " [mail](mailto:jürgen@example.org) and [odd](https://example.org/a%20b|c{d})"
            " [[S:1]] [[S:2]].\n")


def test_both_engines_write_the_same_ascii_uris_for_non_ascii_urls(tmp_path: Path) -> None:
    """Typst wrote a non-ASCII URL into the link annotation as raw UTF-8 (a PDF URI action is
    7-bit ASCII); WeasyPrint percent-encodes it (its iri_to_uri), and now both do."""
    uris = {}
    for engine in ENGINES:
        out = tmp_path / engine
        render(IRI_TEXT, out, sources_pool=IRI_POOL, formats=["pdf"], pdf_engine=engine)
        uris[engine] = sorted(target for _, _, target in links(out / "report.pdf")
                              if target.startswith(("https:", "mailto:")))
    assert uris["typst"] == uris["weasyprint"]
    assert all(uri.isascii() for uri in uris["typst"])
    assert "https://de.wikipedia.org/wiki/Gr%C3%B6%C3%9Fe" in uris["typst"]
    assert "https://%E4%BE%8B%E3%81%88.jp/%E3%83%91%E3%82%B9?q=%C3%BC" in uris["typst"]
    assert "mailto:j%C3%BCrgen@example.org" in uris["typst"]
    assert "https://example.org/a%20b%7Cc%7Bd%7D" in uris["typst"]


def test_a_source_with_a_non_ascii_url_keeps_its_tooltip_in_weasyprint(tmp_path: Path) -> None:
    render(IRI_TEXT, tmp_path, sources_pool=IRI_POOL, formats=["pdf"], pdf_engine="weasyprint")
    tips = {
        str(annot["/A"]["/URI"]): str(annot.get("/Contents"))
        for page in PdfReader(tmp_path / "report.pdf").pages
        for ref in page.get("/Annots") or []
        if "/A" in (annot := ref.get_object()) and "/URI" in annot["/A"]
    }
    assert tips["https://%E4%BE%8B%E3%81%88.jp/%E3%83%91%E3%82%B9?q=%C3%BC"] == "Beispiel"


@pytest.mark.parametrize("url", [
    "https://例え.jp/パス?q=ü#frag", "https://de.wikipedia.org/wiki/Größe", "mailto:jürgen@x.org",
    "https://example.org/a%20b|c{d}<e>\"f\\g^h`i~j'k(l)*m!n$o&p;q=r+s,t@u[v]",
    "https://example.org/plain/ascii?x=1",
])
def test_pdf_uri_is_weasyprints_iri_to_uri(url: str) -> None:
    assert pdf_uri(url) == iri_to_uri(url)
