"""The pages a source is cited at, shown in its Sources entry by every writer and CSL style."""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path
from typing import Any

from renderers import write_docx, write_markdown, write_pdf
from tests.helpers import pdf_text

ANSWER = (Path(__file__).resolve().parent.parent / "fixtures" / "answers" / "locations"
          / "anthropic-pdf-pages.json")


def answer() -> Any:
    return json.loads(ANSWER.read_text("utf-8"))


def test_pdf_and_docx_entries_name_the_cited_pages(tmp_path: Path) -> None:
    pdf = write_pdf(answer(), tmp_path / "report.pdf")
    text = " ".join(pdf_text(Path(pdf.path)).split())
    assert "Annual report 2024 — pages 3–4, 7" in text
    assert "Board minutes" in text and "characters" not in text
    docx = write_docx(answer(), tmp_path / "report.docx")
    with zipfile.ZipFile(io.BytesIO(Path(docx.path).read_bytes())) as package:
        body = package.read("word/document.xml").decode("utf-8")
    assert "Annual report 2024" in body and "pages 3–4, 7" in body
    records = json.loads((tmp_path / "sources_used.json").read_text("utf-8"))
    assert [r["locations"] for r in records] == [{"1": "pages 3–4, 7"}] * 2


def test_a_pool_location_is_a_detail_between_label_and_date(tmp_path: Path) -> None:
    pool = [{"sid": 1, "title": "Grid code", "artifact_path": "grid-code.pdf",
             "location": "chapter 2", "published_at": "2024-03-01"}]
    out = write_markdown("Rule.[[S:1]]", tmp_path / "r.md", sources_pool=pool)
    assert "[^1]: Grid code — grid-code.pdf · chapter 2 · 2024-03-01" in Path(
        out.path).read_text("utf-8")
    write_markdown("Rule.[[S:1]]", tmp_path / "plain.md",
                   sources_pool=[{"sid": 1, "title": "Grid code"}])
    records = json.loads((tmp_path / "sources_used.json").read_text("utf-8"))
    found = {r["filename"]: r.get("locations") for r in records}
    assert found == {"r.md": {"1": "chapter 2"}, "plain.md": None}  # no location: no key


def test_csl_styles_print_the_pages_as_the_item_page(tmp_path: Path) -> None:
    found = {}
    for style in ("ieee", "apa", "harvard"):
        out = write_markdown(answer(), tmp_path / f"{style}.md", csl=style)
        found[style] = next(line for line in Path(out.path).read_text("utf-8").splitlines()
                            if "Annual report 2024" in line and line.startswith("[^"))
    assert "pp. 3–4, 7" in found["ieee"] and "(pp. 3–4, 7)" in found["apa"]
    assert "3–4" not in found["harvard"]  # Harvard prints no pages for a document


def test_the_pages_are_worded_in_the_documents_language(tmp_path: Path) -> None:
    """The adapter records "pages 3–4, 7"; the entry says it in the declared language (CSL's
    locale terms), as the Sources heading does; sources_used.json keeps the recorded form."""
    found = {}
    for lang in ("de", "ja"):
        out = write_markdown(answer(), tmp_path / f"{lang}.md", lang=lang)
        found[lang] = next(line for line in Path(out.path).read_text("utf-8").splitlines()
                           if "Annual report 2024" in line and line.startswith("[^"))
    assert "Annual report 2024 — Seiten 3–4, 7" in found["de"]
    assert "3–4, 7ページ" in found["ja"] and "pages" not in found["ja"]
    records = json.loads((tmp_path / "sources_used.json").read_text("utf-8"))
    assert {r["locations"]["1"] for r in records} == {"pages 3–4, 7"}


def test_a_files_pages_from_several_retrieved_documents_are_one_entry(tmp_path: Path) -> None:
    """A LangChain retrieval answer citing two pages of one PDF (and two chunks of one web
    page): the PDF and DOCX show one entry per file with both pages, one for the page."""
    chunks = json.loads((ANSWER.parent / "langchain-pdf-chunks.json").read_text("utf-8"))
    pdf = write_pdf(chunks, tmp_path / "chunks.pdf")
    text = " ".join(pdf_text(Path(pdf.path)).split())
    assert text.count("Annual report 2024 — annual-2024.pdf · pages 2, 5") == 1
    assert text.count("Balance 2024 | Red Eléctrica") == 1
    assert text.count("annual-2024.pdf — page 1") == 1  # the same name in another folder
    docx = write_docx(chunks, tmp_path / "chunks.docx")
    with zipfile.ZipFile(io.BytesIO(Path(docx.path).read_bytes())) as package:
        body = package.read("word/document.xml").decode("utf-8")
    shown = "".join(re.findall(r"<w:t(?: [^>]*)?>([^<]*)</w:t>", body)).replace("\xa0", " ")
    assert shown.count("Annual report 2024 — annual-2024.pdf · pages 2, 5") == 1
    assert shown.count("Balance 2024 | Red Eléctrica") == 1
