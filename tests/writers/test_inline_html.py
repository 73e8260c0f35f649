"""Raw inline HTML in markdown: the safe subset is formatting in every writer, the rest never
shows as tags or runs; ``<code>`` keeps citation tokens verbatim, exactly like a code span."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from citations.audit import audit
from renderers.api import render
from tests.helpers import convert_with_libreoffice, pdf_text

POOL = [{"sid": 1, "title": "Water", "url": "https://e.org/w"}]
TEXT = (
    "H<sub>2</sub>O and E=mc<sup>2</sup>, press <kbd>Ctrl</kbd>, <mark>hot</mark>, "
    "<small>fine</small>, <abbr title=\"World Health Organization\">WHO</abbr>, "
    "<ins>new</ins>, <del>old</del>, <u>under</u><br>next line [[S:1]].\n\n"
    "Literal <code>[[S:1]] stays</code> and <span onclick=\"x()\">plain</span>"
    "<script>alert(1)</script>.\n"
)
FORMATS = ("html", "md", "docx", "pptx", "pdf")


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("inline-html")
    results = render(TEXT, root, name="r", formats=FORMATS, sources_pool=POOL)
    assert all(r.sources_used == [1] for r in results)
    return root


def _zip(path: Path, prefix: str) -> str:
    with zipfile.ZipFile(path) as package:
        return "".join(package.read(n).decode() for n in package.namelist()
                       if n.startswith(prefix) and n.endswith(".xml"))


def test_html_shows_the_subset_as_elements(out: Path) -> None:
    html = (out / "r.html").read_text("utf-8")
    for element in ("<sub>2</sub>", "<sup>2</sup>", "<kbd>Ctrl</kbd>", "<mark>hot</mark>",
                    "<small>fine</small>", '<abbr title="World Health Organization">WHO</abbr>',
                    "<ins>new</ins>", "<del>old</del>", "<u>under</u>", "<br>",
                    "<code>[[S:1]] stays</code>"):
        assert element in html, element
    # the one script is citerender's own citation previews
    assert "onclick" not in html and html.count("<script") == 1 and "&lt;" not in html
    assert '<script id="citation-previews">' in html


def test_markdown_keeps_the_subset_as_inline_html(out: Path) -> None:
    text = (out / "r.md").read_text("utf-8")
    assert "H<sub>2</sub>O" in text and "<kbd>Ctrl</kbd>" in text
    assert "`[[S:1]] stays`" in text
    assert "<span" not in text and "<script" not in text and "onclick" not in text


def test_pdf_text_has_no_tags_and_keeps_the_code_literal(out: Path) -> None:
    text = " ".join(pdf_text(out / "r.pdf").split())
    assert "<" not in text.split("Sources")[0]
    assert "[[S:1]] stays" in text
    assert "alert(1)" in text or "alert" not in text  # script text may stay as text, never runs


def test_docx_formats_runs_and_shows_no_tags(out: Path) -> None:
    xml = _zip(out / "r.docx", "word/document")
    assert '<w:vertAlign w:val="subscript"/>' in xml
    assert '<w:highlight w:val="yellow"/>' in xml
    assert "&lt;sub&gt;" not in xml and "&lt;span" not in xml


def test_pptx_shows_no_tags(out: Path) -> None:
    xml = _zip(out / "r.pptx", "ppt/slides/slide")
    assert "&lt;sub&gt;" not in xml and "&lt;kbd&gt;" not in xml and "onclick" not in xml
    assert "[[S:1]] stays" in xml


def test_tokens_in_raw_code_are_reported_as_in_code() -> None:
    report = audit("Literal <code>[[S:1]]</code> here.\n\nReal [[S:1]].\n", POOL)
    assert report.in_code_sids == (1,)
    assert report.cited_sids == (1,)


@pytest.mark.libreoffice
def test_libreoffice_reads_the_formatted_text(out: Path, tmp_path: Path) -> None:
    text = " ".join(pdf_text(convert_with_libreoffice(out / "r.docx", tmp_path)).split())
    assert "H2O" in text and "press Ctrl" in text and "<" not in text.split("Sources")[0]
