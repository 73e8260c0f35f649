"""The PDF writer, read back: text, links, bookmarks, metadata, fonts, variants, determinism."""

from __future__ import annotations

import io
from typing import Any

import pypdfium2 as pdfium
import pytest
from pypdf import PdfReader
from pypdf.generic import IndirectObject

from citations.pool import SourcePool
from renderers.document import Cite, iter_inlines
from renderers.options import RenderOptions
from renderers.readers.markdown import read_markdown
from renderers.resolve import ResolvedDocument, resolve
from renderers.writers.html.report import render_html
from renderers.writers.pdf import pdf_bytes
from tests.support.render import render_in_fresh_process

MULTILINGUAL = {
    "greek": "Ελληνικά κείμενα",
    "cyrillic": "Русский текст",
    "arabic": "مرحبا بالعالم",
    "devanagari": "नमस्ते भारत",  # no reordered i-matra: its ToUnicode entry is lossy
    "cjk": "你好世界",
}


def report_markdown(paragraphs: int = 40) -> str:
    """A multi-page report with citations in paragraphs, lists and a table."""
    body = "\n\n".join(
        f"Paragraph {i} discusses capacity growth and cost declines in some detail, "
        f"with enough words to fill the line several times over [[S:{i % 3 + 1}]]. "
        "Further sentences keep the page busy and the layout honest."
        for i in range(paragraphs)
    )
    return (
        "# Energy Outlook\n\n## Summary\n\nSolar leads [[S:1, 2]] and wind follows [[S:3]].\n\n"
        "- memo [[S:5]]\n- duplicate URL [[S:4]]\n\n| Tech | Cost |\n|---|--:|\n"
        f"| PV | 40 [[S:2]] |\n\n## Detail\n\n{body}\n\n## Languages\n\n"
        + "\n\n".join(MULTILINGUAL.values())
        + "\n"
    )


def resolved(pool_rows: list[dict[str, Any]], text: str | None = None) -> ResolvedDocument:
    return resolve(read_markdown(text or report_markdown()), SourcePool.from_rows(pool_rows))


@pytest.fixture(scope="module")
def pool_rows() -> list[dict[str, Any]]:
    return [
        {"sid": 1, "title": "World Energy Outlook 2024", "url": "https://www.iea.org/reports/weo"},
        {"sid": 2, "title": "Renewable Capacity Statistics", "url": "https://www.irena.org/stats",
         "published_at": "2024-03-01"},
        {"sid": 3, "title": "Lazard LCOE+", "url": "https://www.lazard.com/lcoe/"},
        {"sid": 4, "title": "IEA WEO (tracking)", "url": "https://www.iea.org/reports/weo?utm=x"},
        {"sid": 5, "title": "Board memo", "artifact_path": "attachments/memo.pdf"},
    ]


@pytest.fixture(scope="module")
def rendered(pool_rows: list[dict[str, Any]]) -> tuple[ResolvedDocument, bytes]:
    rdoc = resolved(pool_rows)
    options = RenderOptions(author="Analyst")
    return rdoc, pdf_bytes(render_html(rdoc, options), options)


def annotations(reader: PdfReader) -> list[dict[str, Any]]:
    out = []
    for page in reader.pages:
        for ref in page.get("/Annots") or []:
            annot = ref.get_object() if isinstance(ref, IndirectObject) else ref
            out.append(dict(annot))
    return out


def test_text_pages_and_page_numbers(rendered: tuple[ResolvedDocument, bytes]) -> None:
    _, pdf = rendered
    reader = PdfReader(io.BytesIO(pdf))
    pages = len(reader.pages)
    assert pages >= 2
    text = "\n".join(page.extract_text() for page in reader.pages)
    assert "Energy Outlook" in text and "Sources" in text
    assert f"Page 1 of {pages}" in text and f"Page {pages} of {pages}" in text
    assert "attachments/memo.pdf" in text and "[[S:" not in text
    assert tuple(round(float(v)) for v in reader.pages[0].mediabox[2:]) == (595, 842)  # A4


def test_every_superscript_links_to_its_entry(rendered: tuple[ResolvedDocument, bytes]) -> None:
    rdoc, pdf = rendered
    reader = PdfReader(io.BytesIO(pdf))
    internal = [str(a["/Dest"]) for a in annotations(reader) if "/Dest" in a]
    expected = [
        f"src-{n}"
        for cite in iter_inlines(rdoc.document.blocks) if isinstance(cite, Cite)
        for n in cite.numbers
    ]
    # each number piece links once: "1, 2" has two links; backlinks point at cite anchors
    assert sorted(d for d in internal if d.startswith("src-")) == sorted(expected)
    assert sorted(d for d in internal if d.startswith("cite-")) == sorted(
        e.backlink for e in rdoc.entries
    )
    destinations = set(reader.named_destinations)
    assert {e.anchor for e in rdoc.entries} <= destinations
    assert {e.backlink for e in rdoc.entries} <= destinations


def test_every_source_url_is_a_uri_link(rendered: tuple[ResolvedDocument, bytes]) -> None:
    rdoc, pdf = rendered
    reader = PdfReader(io.BytesIO(pdf))
    uris = [str(a["/A"]["/URI"]) for a in annotations(reader) if "/A" in a]
    assert {e.url for e in rdoc.entries if e.url} <= set(uris)
    assert all(u.startswith(("http://", "https://", "mailto:")) for u in uris)
    assert b"javascript" not in pdf.lower() and b"/JavaScript" not in pdf


def test_bookmarks_and_metadata(rendered: tuple[ResolvedDocument, bytes]) -> None:
    _, pdf = rendered
    reader = PdfReader(io.BytesIO(pdf))
    titles: list[str] = []

    def walk(items: list[Any]) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item)
            else:
                titles.append(item.title)

    walk(reader.outline)
    assert titles == ["Energy Outlook", "Summary", "Detail", "Languages", "Sources"]
    meta = reader.metadata
    assert meta is not None
    assert (meta.title, meta.author, meta.creator) == ("Energy Outlook", "Analyst", "citerender")
    assert "/CreationDate" not in meta and "/ModDate" not in meta


def test_source_date_epoch_sets_dates(
    pool_rows: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    options = RenderOptions(title="Dated")
    rdoc = resolved(pool_rows, "# A\n\nB [[S:1]]\n")
    meta = PdfReader(io.BytesIO(pdf_bytes(render_html(rdoc, options), options))).metadata
    assert meta is not None and meta.title == "Dated"
    assert str(meta["/CreationDate"]).startswith("D:20231114")


def test_letter_page_size(pool_rows: list[dict[str, Any]]) -> None:
    options = RenderOptions(page_size="Letter")
    rdoc = resolved(pool_rows, "# A\n\nB [[S:1]]\n")
    reader = PdfReader(io.BytesIO(pdf_bytes(render_html(rdoc, options), options)))
    assert tuple(round(float(v)) for v in reader.pages[0].mediabox[2:]) == (612, 792)


def test_multilingual_text_and_fonts(rendered: tuple[ResolvedDocument, bytes]) -> None:
    _, pdf = rendered
    document = pdfium.PdfDocument(pdf)
    text = "".join(document[i].get_textpage().get_text_range() for i in range(len(document)))
    for sample in MULTILINGUAL.values():
        if sample == MULTILINGUAL["arabic"]:
            assert all(word in text or word[::-1] in text for word in sample.split())
        else:
            assert sample in text
    fonts = {
        str(font["/BaseFont"]).split("+", 1)[-1]
        for page in PdfReader(io.BytesIO(pdf)).pages
        for font in (page["/Resources"].get("/Font") or {}).values()
    }
    for family in ("Noto-Sans", "Noto-Sans-Arabic", "Noto-Sans-Devanagari", "Noto-Sans-CJK-SC"):
        assert family in fonts


@pytest.mark.parametrize(("variant", "marker"), [("pdf/a-3b", b"pdfaid"), ("pdf/ua-1", b"pdfuaid")])
def test_pdf_variants(pool_rows: list[dict[str, Any]], variant: str, marker: bytes) -> None:
    options = RenderOptions(pdf_variant=variant, title="Variant")
    rdoc = resolved(pool_rows, "# A\n\nB [[S:1]]\n")
    reader = PdfReader(io.BytesIO(pdf_bytes(render_html(rdoc, options), options)))
    root = reader.trailer["/Root"]
    assert marker in root["/Metadata"].get_object().get_data()
    if variant == "pdf/ua-1":
        assert "/StructTreeRoot" in root and root["/MarkInfo"]["/Marked"]
    else:
        assert "/OutputIntents" in root


def test_deterministic_within_one_process(
    rendered: tuple[ResolvedDocument, bytes]
) -> None:
    rdoc, first = rendered
    options = RenderOptions(author="Analyst")
    assert pdf_bytes(render_html(rdoc, options), options) == first


@pytest.mark.slow
def test_identical_bytes_in_a_fresh_process(
    rendered: tuple[ResolvedDocument, bytes], pool_rows: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    _, first = rendered
    other = render_in_fresh_process("pdf", report_markdown(), pool_rows, author="Analyst")
    assert other == first
