"""A cross-reference inside the author's link, in every writer, read back from the file each
one made: the author's link wins and holds the reference's words ("Intro", "Figure 1", a
group's "Figures 1–3") as plain text, with no link inside it (HTML would nest ``<a>``, and
Markdown's inner link would win on re-reading and lose the outer one)."""

from __future__ import annotations

import io
import zipfile

import lxml.html
import pytest
from lxml import etree
from pptx import Presentation

from renderers.document import Document, Link, Paragraph, plain_text, walk_inlines
from renderers.options import RenderOptions
from renderers.readers.markdown import read_markdown
from tests.helpers import ROOT, uri_links
from tests.support.render import WriterFormat, resolve_rows, write_resolved

URL = "https://example.org/"
FIGURES = "".join(f"![{n}](assets/chart.png){{#fig:{n}}}\n\n" for n in "abc")
HEAD = "# Intro {#sec:intro}\n\n" + FIGURES
#: A heading's and a figure's references inside a link, as an author writes them.
WRITTEN = HEAD + f"See [the part @sec:intro and @fig:a]({URL}) here.\n"
#: A group inside a link's text, as an author writes it (the reader takes the bracket as nesting).
GROUPED = HEAD + f"See [the charts [@fig:a; @fig:b; @fig:c]]({URL}) here.\n"
CASES = {"written": "the part Intro and Figure 1", "group": "the charts Figures 1–3"}
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"


def document(case: str) -> Document:
    """The case's document, read from its Markdown."""
    return read_markdown(WRITTEN if case == "written" else GROUPED)


def rendered(fmt: WriterFormat, case: str, **options: object) -> bytes:
    rdoc = resolve_rows(document(case), [])
    return write_resolved(fmt, rdoc, RenderOptions(base_dir=ROOT / "samples", **options))


@pytest.mark.parametrize("case", CASES)
def test_html_keeps_the_one_outer_link_around_the_words(case: str) -> None:
    root = lxml.html.document_fromstring(rendered("html", case))
    (paragraph,) = [p for p in root.xpath("//p") if p.text_content().startswith("See")]
    assert paragraph.text_content() == f"See {CASES[case]} here."
    assert [(a.get("href"), a.text_content()) for a in paragraph.xpath(".//a")] == [
        (URL, CASES[case])]  # one link: none nested in it
    assert not root.xpath("//a//a")


@pytest.mark.parametrize("case", CASES)
def test_markdown_reads_back_as_the_outer_link_with_the_words(case: str) -> None:
    text = rendered("md", case).decode()
    assert f"See [{CASES[case]}]({URL}) here." in text
    again = read_markdown(text)
    (paragraph,) = [b for b in again.blocks if isinstance(b, Paragraph)
                    and plain_text(b.children).startswith("See")]
    links = [n for n in walk_inlines(paragraph.children) if isinstance(n, Link)]
    assert [(link.url, plain_text(link.children)) for link in links] == [(URL, CASES[case])]


@pytest.mark.parametrize("case", CASES)
def test_docx_holds_the_words_in_one_hyperlink_to_the_url(case: str) -> None:
    package = zipfile.ZipFile(io.BytesIO(rendered("docx", case)))
    body = etree.fromstring(package.read("word/document.xml"))
    rels = etree.fromstring(package.read("word/_rels/document.xml.rels"))
    targets = {rel.get("Id"): rel.get("Target") for rel in rels}
    (paragraph,) = [p for p in body.iter(f"{W}p") if "".join(p.itertext()).startswith("See")]
    links = [(targets.get(h.get(f"{R}id")), h.get(f"{W}anchor"), "".join(h.itertext()))
             for h in paragraph.iter(f"{W}hyperlink")]
    assert links == [(URL, None, CASES[case])]


@pytest.mark.parametrize("case", CASES)
def test_pptx_runs_of_the_words_all_link_to_the_url(case: str) -> None:
    deck = Presentation(io.BytesIO(rendered("pptx", case)))
    paragraphs = [para for slide in deck.slides for shape in slide.shapes
                  if shape.has_text_frame for para in shape.text_frame.paragraphs]
    (paragraph,) = [p for p in paragraphs if "".join(r.text for r in p.runs).startswith("See")]
    linked = [run for run in paragraph.runs if run.hyperlink.address or
              run._r.xpath(".//a:hlinkClick")]
    assert "".join(run.text for run in linked) == CASES[case]
    assert {run.hyperlink.address for run in linked} == {URL}  # no jump to a slide among them


@pytest.mark.parametrize("engine", [pytest.param("weasyprint", marks=pytest.mark.slow), "typst"])
@pytest.mark.parametrize("case", CASES)
def test_pdf_links_only_the_outer_url_over_the_words(engine: str, case: str) -> None:
    annotations = uri_links(rendered("pdf", case, pdf_engine=engine))
    assert annotations, "no link annotation"
    assert {uri for _, uri in annotations} == {URL}  # no link inside the document at all
    shown = [" ".join(text.split()) for text, _ in annotations]
    # WeasyPrint gives the span inside the link an annotation of its own, to the same URL
    assert max(shown, key=len) == CASES[case] and all(text in CASES[case] for text in shown)
