"""Citations inside link text and headings, and refused links, in every format."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from pypdf import PdfReader

from renderers.api import render
from tests.helpers import convert_with_libreoffice, pdf_lines, pdf_text

POOL = [{"sid": 3, "title": "IEA World Energy Outlook", "url": "https://iea.org/weo"}]
TEXT = (
    "# Outlook[[S:3]]\n\n"
    "See [IEA outlook[[S:3]]](https://iea.org/x) now.\n\n"
    "Then [click me](javascript:alert(1)) and ![logo](javascript:x).\n"
)
FORMATS = ("html", "md", "docx", "pptx", "pdf")


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("positions")
    render(TEXT, root, name="r", formats=FORMATS, sources_pool=POOL)
    return root


def _zip_text(path: Path, prefix: str) -> str:
    with zipfile.ZipFile(path) as package:
        return "".join(
            package.read(n).decode("utf-8") for n in package.namelist() if n.startswith(prefix)
        )


def test_link_text_with_a_citation_stays_a_link_in_html_and_markdown(out: Path) -> None:
    html = (out / "r.html").read_text("utf-8")
    assert '<a href="https://iea.org/x">IEA outlook</a><sup class="cite"' in html
    markdown = (out / "r.md").read_text("utf-8")
    assert "[IEA outlook](https://iea.org/x)[^1]" in markdown
    assert "](javascript" not in markdown and "javascript" not in html


def test_link_text_with_a_citation_stays_a_link_in_pdf_docx_pptx(out: Path) -> None:
    uris = [
        str(a.get_object()["/A"]["/URI"])
        for page in PdfReader(str(out / "r.pdf")).pages
        for a in page.get("/Annots") or []
        if "/URI" in (a.get_object().get("/A") or {})
    ]
    assert "https://iea.org/x" in uris
    assert "https://iea.org/x" in _zip_text(out / "r.docx", "word/_rels/document.xml.rels")
    assert "https://iea.org/x" in _zip_text(out / "r.pptx", "ppt/slides/_rels/")


def test_refused_links_show_only_their_text(out: Path) -> None:
    text = pdf_text(out / "r.pdf")
    assert "Then click me and" in " ".join(text.split())
    assert "](" not in text and "javascript" not in text
    assert "javascript" not in _zip_text(out / "r.docx", "word/")
    assert "javascript" not in _zip_text(out / "r.pptx", "ppt/slides/")


def test_pdf_outline_uses_heading_text_without_citation_numbers(out: Path) -> None:
    titles = [item.title for item in PdfReader(str(out / "r.pdf")).outline
              if not isinstance(item, list)]
    assert titles[0] == "Outlook"


def test_html_input_heading_outline_has_no_citation_numbers(tmp_path: Path) -> None:
    html = '<h1>Findings<sup class="cite" data-sids="3">[S:3]</sup></h1><p>Text.</p>'
    (result,) = render(html, tmp_path, name="h", formats=("pdf",), sources_pool=POOL,
                       content_format="html")
    titles = [i.title for i in PdfReader(str(result.path)).outline if not isinstance(i, list)]
    assert titles[0] == "Findings"


@pytest.mark.libreoffice
def test_libreoffice_shows_the_linked_text_and_its_citation(out: Path, tmp_path: Path) -> None:
    pdf = convert_with_libreoffice(out / "r.docx", tmp_path)
    text = " ".join(pdf_text(pdf).split())
    assert "See IEA outlook1 now." in text or "See IEA outlook 1 now." in text
    assert "Then click me and" in text


#: Citations written apart inside one link, two inside one link text, and one written right
#: after a link that holds one: once out of the link they stand side by side.
APART_POOL = [{"sid": s, "title": f"Source {s}", "url": f"https://s{s}.org"} for s in (1, 2, 3, 4)]
APART = (
    "Energy [solar [[S:1]] and wind [[S:2]]](https://x.org) grows.\n\n"
    "Range [a [[S:1]] b *[[S:2]]* c [[S:3]]](https://x.org) done.\n\n"
    "After [solar [[S:1]]](https://x.org)[[S:4]] end.\n"
)


@pytest.fixture(scope="module")
def apart(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("apart")
    render(APART, root, name="a", formats=("html", "md", "docx", "pdf"), sources_pool=APART_POOL)
    return root


def test_citations_moved_out_of_a_link_read_as_one_in_the_pdf(apart: Path) -> None:
    text = [line for _, _, line in pdf_lines((apart / "a.pdf").read_bytes())]
    assert "Energy solar and wind1, 2 grows." in text
    assert "Range a b c1–3 done." in text  # one citation: its numbers compress
    assert "After solar1, 4 end." in text  # the next citation is joined to it


def test_citations_moved_out_of_a_link_read_as_one_in_html_and_markdown(apart: Path) -> None:
    html = (apart / "a.html").read_text("utf-8")
    assert ('Energy <a href="https://x.org">solar and wind</a><sup class="cite" id="cite-1" '
            'data-sids="1,2"><a href="#src-1">1</a>, <a href="#src-2">2</a></sup> grows.') in html
    assert ('Range <a href="https://x.org">a b c</a><sup class="cite" id="cite-2" '
            'data-sids="1,2,3"><a href="#src-1">1</a>–<a href="#src-3">3</a></sup> done.') in html
    markdown = (apart / "a.md").read_text("utf-8")
    assert "Energy [solar and wind](https://x.org)[^1][^2] grows." in markdown
    assert "Range [a b c](https://x.org)[^1][^2][^3] done." in markdown
    assert "After [solar](https://x.org)[^1][^4] end." in markdown


def test_citations_moved_out_of_a_link_are_linked_in_docx(apart: Path) -> None:
    document = _zip_text(apart / "a.docx", "word/document.xml")
    # each citation links to its entry (inside the link it could not)
    assert document.count('w:anchor="src_1"') == 3


@pytest.mark.libreoffice
def test_libreoffice_shows_moved_citations_joined(apart: Path, tmp_path: Path) -> None:
    pdf = convert_with_libreoffice(apart / "a.docx", tmp_path)
    text = " ".join(pdf_text(pdf).split())
    assert "Energy solar and wind1, 2 grows." in text
    assert "Range a b c1–3 done." in text and "After solar1, 4 end." in text
