"""Raw HTML blocks in markdown (an LLM answer's ``<table>``, ``<details>``, centred image) reach
every output as content, never as tag soup: each test opens the produced file."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from lxml import html as lxml_html
from pptx import Presentation
from typer.testing import CliRunner

from renderers import cli
from tests.helpers import convert_with_libreoffice, pdf_text

POOL = [
    {"sid": sid, "title": f"Source {sid}", "url": f"https://s{sid}.example.org/"}
    for sid in range(1, 6)
]
ANSWER = """# Energy prices

<details>
<summary>Why it matters [[S:2]]</summary>

Prices **fell** sharply [[S:1]].

</details>

<table>
<tr><th>Year</th><th>Price</th></tr>
<tr><td>2023</td><td>Ten [[S:3]]</td></tr>
<tr><td title="[[S:4]]">2024</td><td>Eight <sup class="cite" data-sids="1">[S:1]</sup></td></tr>
</table>

<div align="center">

Centred *markdown* line.

</div>

<!-- reviewer note [[S:5]] -->

After the HTML.
"""
#: Where the tag soup of the old rendering showed: none of it may reach any output.
SOUP = re.compile(r"</?(?:details|summary|table|tr|td|th|div|sup)\b|data-sids|\[\[S:")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The answer rendered to every format, and to PDF through Typst as ``typst/answer.pdf``."""
    root = tmp_path_factory.mktemp("raw-html")
    source = root / "answer.md"
    source.write_text(ANSWER, "utf-8")
    (root / "answer.pool.json").write_text(json.dumps(POOL), "utf-8")
    for out, extra in ((root / "out", ["--to", "all"]),
                       (root / "typst", ["--to", "pdf", "--pdf-engine", "typst"])):
        result = CliRunner().invoke(cli.app, ["render", str(source), "--out", str(out), *extra])
        assert result.exit_code == 0, result.output
    return root


def squeezed(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("where", ["out", "typst"])
def test_pdf_shows_the_html_as_content_with_its_citations(rendered: Path, where: str) -> None:
    text = squeezed(pdf_text(rendered / where / "answer.pdf"))
    for words in ("Why it matters", "Prices fell sharply", "Year Price", "2023 Ten",
                  "2024 Eight", "Centred markdown line.", "After the HTML."):
        assert words in text, words
    assert not SOUP.search(text) and "reviewer note" not in text
    sources = text.split("Sources")[-1]
    assert [n for n in ("Source 2", "Source 1", "Source 3") if n in sources] == [
        "Source 2", "Source 1", "Source 3"]
    assert "Source 4" not in sources and "Source 5" not in sources


def test_html_output_has_real_elements(rendered: Path) -> None:
    page = lxml_html.fromstring((rendered / "out" / "answer.html").read_bytes())
    body = page.find(".//body")
    assert body is not None
    cells = [squeezed(c.text_content()) for c in body.iter("td", "th")]
    assert cells[:4] == ["Year", "Price", "2023", "Ten 3"]
    assert body.xpath("//strong[text()='fell']")
    assert not SOUP.search(squeezed(body.text_content()))
    links = [a.get("href") for a in body.xpath("//table//sup[@class='cite']/a")]
    assert links == ["#src-3", "#src-2"]  # the table's citations link to their sources
    assert body.xpath("//p/sup[@class='cite']/a/@href")[:2] == ["#src-1", "#src-2"]


def test_markdown_output_has_a_pipe_table_and_the_details_text(rendered: Path) -> None:
    text = (rendered / "out" / "answer.md").read_text("utf-8")
    lines = text.splitlines()
    assert "Why it matters [^1]" in lines and "Prices **fell** sharply [^2]." in lines
    assert "| Year | Price |" in lines and "| 2023 | Ten [^3] |" in lines
    assert "```html" not in text and "<details>" not in text and "[[S:" not in text


def test_sources_used_records_the_html_citations(rendered: Path) -> None:
    records = json.loads((rendered / "out" / "sources_used.json").read_text("utf-8"))
    assert records and all(r["sids"] == [2, 1, 3] for r in records)
    assert all(r["numbers"] == {"2": 1, "1": 2, "3": 3} for r in records)


def test_the_audit_counts_the_html_text_and_reports_the_markup(rendered: Path) -> None:
    result = CliRunner().invoke(cli.app, ["audit", str(rendered / "answer.md"), "--json"])
    assert result.exit_code == 1, result.output  # the tokens in markup are a finding
    report = json.loads(result.stdout)
    assert report["cited_sids"] == [2, 1, 3] and report["numbers"] == {"2": 1, "1": 2, "3": 3}
    assert report["in_raw_html_sids"] == [4, 5] and report["not_rendered_sids"] == []


def test_pptx_slides_hold_the_table_and_the_details_text(rendered: Path) -> None:
    deck = Presentation(io.BytesIO((rendered / "out" / "answer.pptx").read_bytes()))
    shown: list[str] = []
    for slide in deck.slides:
        for shape in slide.shapes:
            if shape.has_text_frame:
                shown.append(shape.text_frame.text)
            if shape.has_table:
                shown += [cell.text for row in shape.table.rows for cell in row.cells]
    text = squeezed(" ".join(shown))
    assert "Why it matters" in text and "Prices fell sharply" in text
    assert "2024" in text and "Eight" in text and not SOUP.search(text)


@pytest.mark.libreoffice
def test_libreoffice_shows_the_docx_content(rendered: Path, tmp_path: Path) -> None:
    text = squeezed(pdf_text(convert_with_libreoffice(rendered / "out" / "answer.docx",
                                                      tmp_path)))
    for words in ("Why it matters", "Prices fell sharply", "Year", "Price", "2023", "Ten",
                  "Centred markdown line.", "After the HTML."):
        assert words in text, words
    assert not SOUP.search(text) and "reviewer note" not in text
