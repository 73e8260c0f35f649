"""An HTML input's own head (``<meta>`` author, keywords, description, date; ``<title>``,
``<html lang>``) reaches every format's metadata through the CLI as a markdown front matter's
does, the options winning; the HTML output reads back with the same metadata."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import docx
import pytest
from pptx import Presentation
from pypdf import PdfReader
from typer.testing import CliRunner

from renderers import cli
from renderers.readers.html import read_html
from renderers.readers.markdown import read_markdown
from tests.helpers import convert_all_with_libreoffice, pdf_text

POOL = [{"sid": 1, "title": "Source 1", "url": "https://s1.example.org/"}]
PAGE = """<!DOCTYPE html>
<html lang="de">
<head>
<meta charset="utf-8">
<meta name="author" content="Ana Ruiz">
<meta name="Author" content="Li &amp; Wei">
<meta name="keywords" content="storage, grid">
<meta name="description" content="Costs &amp; prices of
   grid storage">
<meta name="date" content="2025-03-01">
<title>Grid storage in 2025</title>
<style>p { color: #333; }</style>
</head>
<body>
<h1>Grid storage in 2025</h1>
<p>Batteries got cheaper [[S:1]].</p>
</body>
</html>
"""
TITLE = "Grid storage in 2025"
AUTHORS = ("Ana Ruiz", "Li & Wei")
AUTHOR = "Ana Ruiz; Li & Wei"
DESCRIPTION = "Costs & prices of grid storage"


def _render(root: Path, *extra: str, name: str = "page.html", text: str = PAGE) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(text, "utf-8")
    (root / Path(name).with_suffix(".pool.json").name).write_text(json.dumps(POOL), "utf-8")
    out = root / "out"
    for args in (["--to", "pdf,docx,pptx,html,md"], ["--to", "pdf", "--pdf-engine", "typst",
                                                      "--name", "typst"]):
        result = CliRunner().invoke(
            cli.app, ["render", str(root / name), "--out", str(out), *args, *extra]
        )
        assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _render(tmp_path_factory.mktemp("html-metadata"))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["page.pdf", "typst.pdf"])
def test_the_pdf_of_either_engine_has_the_head_s_metadata(rendered: Path, name: str) -> None:
    """``page.pdf`` is the author's look: WeasyPrint reads the page shell's ``<meta>`` tags
    (the author's own are sanitized away), so each value is there once, as Typst writes it."""
    meta = PdfReader(rendered / name).metadata
    assert meta is not None
    assert (meta.title, meta.author, meta.subject) == (TITLE, AUTHOR, DESCRIPTION)
    assert meta["/Keywords"] == "storage, grid"
    text = " ".join(pdf_text(rendered / name).split())
    assert text.startswith(TITLE) and "Quellen" in text  # <html lang="de">
    assert "Costs" not in text and "Ana Ruiz" not in text  # metadata, not text


@pytest.mark.slow
def test_docx_and_pptx_core_properties(rendered: Path) -> None:
    for core in (docx.Document(str(rendered / "page.docx")).core_properties,
                 Presentation(str(rendered / "page.pptx")).core_properties):
        assert (core.title, core.author, core.keywords, core.subject) == (
            TITLE, AUTHOR, "storage, grid", DESCRIPTION)
        assert core.language in ("", None, "de")  # python-docx/pptx leave it unset


@pytest.mark.slow
@pytest.mark.libreoffice
def test_libreoffice_reads_the_office_files_metadata(rendered: Path, tmp_path: Path) -> None:
    """What a user sees in Office: LibreOffice's PDF of each file carries the properties; the
    deck's cover shows the title, and the head's authors stay metadata, as in every format (no
    title block: renderers.writers.common.title_block)."""
    deck = shutil.copy(rendered / "page.pptx", tmp_path / "deck.pptx")
    pdfs = convert_all_with_libreoffice([rendered / "page.docx", Path(deck)], tmp_path)
    for pdf in pdfs:
        meta = PdfReader(pdf).metadata
        assert meta is not None
        assert (meta.title, meta.author, meta.subject) == (TITLE, AUTHOR, DESCRIPTION)
        assert meta["/Keywords"] == "storage, grid"
    cover = PdfReader(pdfs[1]).pages[0].extract_text()
    assert TITLE in cover and "Ana Ruiz" not in cover


@pytest.mark.slow
def test_the_html_output_reads_back_with_the_same_metadata(rendered: Path) -> None:
    page = (rendered / "page.html").read_text("utf-8")
    assert ('<meta name="author" content="Ana Ruiz">\n'
            '<meta name="author" content="Li &amp; Wei">') in page
    assert '<meta name="dcterms.date" content="2025-03-01">' in page
    again = read_html(page)
    assert (again.title, again.authors, again.date, again.lang) == (
        TITLE, AUTHORS, "2025-03-01", "de")
    assert (again.keywords, again.description) == (("storage", "grid"), DESCRIPTION)


@pytest.mark.slow
def test_the_markdown_output_declares_the_head_s_metadata(rendered: Path) -> None:
    again = read_markdown((rendered / "page.md").read_text("utf-8"))
    assert (again.title, again.authors, again.date, again.lang) == (
        TITLE, AUTHORS, "2025-03-01", "de")
    assert (again.keywords, again.description) == (("storage", "grid"), DESCRIPTION)


@pytest.mark.slow
def test_front_matter_survives_markdown_to_html_to_markdown(tmp_path: Path) -> None:
    """A markdown answer's front matter, through the HTML output read as input, comes back
    whole: several authors stay several (one ``<meta>`` each)."""
    answer = ("---\nauthor: ['Ruiz, Ana', Li Wei]\ndate: March 2025\nkeywords: [a, b c]\n"
              "description: What it says\n---\n\n# Title\n\nText [[S:1]].\n")
    html = _render(tmp_path / "md", name="answer.md", text=answer) / "answer.html"
    back = _render(tmp_path / "html", name="answer.html", text=html.read_text("utf-8"))
    first, again = read_markdown(answer), read_markdown((back / "answer.md").read_text("utf-8"))
    assert again.authors == first.authors == ("Ruiz, Ana", "Li Wei")
    assert (again.title, again.date, again.keywords, again.description) == (
        first.title, first.date, first.keywords, first.description)
    for name in ("answer.pdf", "typst.pdf"):
        meta = PdfReader(back / name).metadata
        assert meta is not None and meta.author == "Ruiz, Ana; Li Wei"


@pytest.mark.slow
def test_the_options_win_over_the_head(tmp_path: Path) -> None:
    out = _render(tmp_path, "--title", "Given", "--author", "Editor", "--lang", "fr")
    for name in ("page.pdf", "typst.pdf"):
        meta = PdfReader(out / name).metadata
        assert meta is not None and (meta.title, meta.author) == ("Given", "Editor")
        assert meta.subject == DESCRIPTION  # no option for it: the head's stays
    core = docx.Document(str(out / "page.docx")).core_properties
    assert (core.title, core.author) == ("Given", "Editor")
    page = (out / "page.html").read_text("utf-8")
    assert page.count('<meta name="author"') == 1
    again = read_html(page)
    assert (again.title, again.authors, again.lang) == ("Given", ("Editor",), "fr")


@pytest.mark.slow
def test_a_keyword_holding_a_comma_survives_the_html_output(tmp_path: Path) -> None:
    """HTML's keywords meta is split at commas with no escape: the writer writes one meta per
    keyword, which its own page reads back one keyword each (a foreign page's are split, as
    HTML says). PDF (both engines) and Office keep one string: the list joined by ", "."""
    answer = "---\ntitle: T\nkeywords: ['storage, grid', cost]\n---\n\nText [[S:1]].\n"
    html = _render(tmp_path / "md", name="answer.md", text=answer) / "answer.html"
    page = html.read_text("utf-8")
    assert ('<meta name="keywords" content="storage, grid">\n'
            '<meta name="keywords" content="cost">') in page
    assert read_html(page).keywords == ("storage, grid", "cost")
    assert read_html(page.replace('content="citerender"', 'content="x"')).keywords == (
        "storage", "grid", "cost")
    back = _render(tmp_path / "html", name="answer.html", text=page)
    assert read_markdown((back / "answer.md").read_text("utf-8")).keywords == (
        "storage, grid", "cost")
    for out in (html.parent, back):
        for name in ("answer.pdf", "typst.pdf"):
            meta = PdfReader(out / name).metadata
            assert meta is not None and meta["/Keywords"] == "storage, grid, cost"
        for core in (docx.Document(str(out / "answer.docx")).core_properties,
                     Presentation(str(out / "answer.pptx")).core_properties):
            assert core.keywords == "storage, grid, cost"
