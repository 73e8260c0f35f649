"""The PDF writers, read back: text, links, bookmarks, metadata, fonts, variants, determinism.

Every test runs on both PDF engines (WeasyPrint and Typst): the same resolved document must give
the same text, links, outline, metadata and page geometry.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
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
from tests.helpers import outline_titles
from tests.support.render import render_in_fresh_process, write_resolved

PDF_ENGINES = ("weasyprint", "typst")

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


@pytest.fixture(scope="module", params=PDF_ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def engine_pdf(rdoc: ResolvedDocument, engine: str, **options: Any) -> bytes:
    """The PDF of ``rdoc`` through ``engine`` with ``options``."""
    return write_resolved("pdf", rdoc, RenderOptions(pdf_engine=engine, **options))


@pytest.fixture(scope="module")
def rendered(pool_rows: list[dict[str, Any]], engine: str) -> tuple[ResolvedDocument, bytes]:
    rdoc = resolved(pool_rows)
    return rdoc, engine_pdf(rdoc, engine, author="Analyst")


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


Location = tuple[int, float]


def internal_links(reader: PdfReader) -> list[tuple[int, Location]]:
    """Each internal link in reading order: its page and its target (page, height on page).

    Targets are compared by location, so named destinations (WeasyPrint names every anchor)
    and explicit ones (Typst names only headings) are read alike.
    """
    pages = {page.indirect_reference.idnum: index for index, page in enumerate(reader.pages)}
    named = reader.named_destinations
    found: list[tuple[int, Location]] = []
    for index, page in enumerate(reader.pages):
        for ref in page.get("/Annots") or []:
            annot = ref.get_object()
            dest = annot.get("/Dest")
            if dest is None and "/A" in annot and annot["/A"].get("/S") == "/GoTo":
                dest = annot["/A"]["/D"]
            dest = dest.get_object() if isinstance(dest, IndirectObject) else dest
            if dest is None:
                continue
            if isinstance(dest, list):
                target = (pages[dest[0].idnum], round(float(dest[3]), 1))
            else:
                item = named[str(dest)]
                target = (reader.get_destination_page_number(item), round(float(item.top), 1))
            found.append((index, target))
    return found


def reading_order(location: Location) -> tuple[int, float]:
    return location[0], -location[1]


def test_every_superscript_links_to_its_entry(
    rendered: tuple[ResolvedDocument, bytes], engine: str
) -> None:
    rdoc, pdf = rendered
    reader = PdfReader(io.BytesIO(pdf))
    cites = [c for c in iter_inlines(rdoc.document.blocks) if isinstance(c, Cite)]
    expected = [n for cite in cites for n in cite.numbers]  # "1, 2" is two links
    links = internal_links(reader)
    assert len(links) == len(expected) + len(rdoc.entries)  # then one back-link per entry
    cite_links, back_links = links[: len(expected)], links[len(expected) :]
    # every link of number N lands on entry N: one place per number, in number order
    target: dict[int, Location] = {}
    for number, (_, location) in zip(expected, cite_links, strict=True):
        assert target.setdefault(number, location) == location, number
    places = [target[n] for n in sorted(target)]
    assert len(set(places)) == len(places) and places == sorted(places, key=reading_order)
    sources_page = min(page for page, _ in places)
    assert all(page >= sources_page for page, _ in back_links)
    # each entry links back to the page of its first citation
    first_link_page: dict[str, int] = {}
    position = 0
    for cite in cites:
        first_link_page.setdefault(cite.anchor, cite_links[position][0])
        position += len(cite.numbers)
    assert [location[0] for _, location in back_links] == [
        first_link_page[e.backlink] for e in rdoc.entries
    ]
    destinations = set(reader.named_destinations)
    assert {"sources", "summary", "detail"} <= destinations  # headings are named in both
    if engine == "weasyprint":  # WeasyPrint names every anchor; Typst only headings
        assert {e.anchor for e in rdoc.entries} <= destinations
        assert {e.backlink for e in rdoc.entries} <= destinations


def test_every_source_url_is_a_uri_link(rendered: tuple[ResolvedDocument, bytes]) -> None:
    rdoc, pdf = rendered
    reader = PdfReader(io.BytesIO(pdf))
    uris = [str(a["/A"]["/URI"]) for a in annotations(reader) if "/A" in a]
    assert {e.url for e in rdoc.entries if e.url} <= set(uris)
    assert all(u.startswith(("http://", "https://", "mailto:")) for u in uris)
    assert b"javascript" not in pdf.lower() and b"/JavaScript" not in pdf


def test_bookmarks_and_metadata(rendered: tuple[ResolvedDocument, bytes], engine: str) -> None:
    _, pdf = rendered
    reader = PdfReader(io.BytesIO(pdf))
    titles = outline_titles(reader)
    assert titles == ["Energy Outlook", "Summary", "Detail", "Languages", "Sources"]
    meta = reader.metadata
    assert meta is not None
    assert (meta.title, meta.author) == ("Energy Outlook", "Analyst")
    # Typst always names itself as the creator; WeasyPrint takes ours
    assert meta.creator == ("citerender" if engine == "weasyprint" else f"Typst {typst_version()}")
    assert "/CreationDate" not in meta and "/ModDate" not in meta


def typst_version() -> str:
    """The Typst compiler's version, as it writes it into the PDF's Creator."""
    import typst

    return ".".join(re.findall(r"\d+", typst.Compiler().eval("sys.version")))


def test_no_citation_numbers_in_the_outline(pool_rows: list[dict[str, Any]], engine: str) -> None:
    rdoc = resolved(pool_rows, "# Outlook [[S:1]]\n\n## Costs [[S:2, 3]] and prices\n\nB [[S:1]]\n")
    reader = PdfReader(io.BytesIO(engine_pdf(rdoc, engine)))
    titles = [item.title for item in reader.outline if not isinstance(item, list)]
    titles += [i.title for item in reader.outline if isinstance(item, list) for i in item]
    assert sorted(titles) == sorted(["Outlook", "Costs and prices", "Sources"])


def test_source_date_epoch_sets_dates(
    pool_rows: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    rdoc = resolved(pool_rows, "# A\n\nB [[S:1]]\n")
    meta = PdfReader(io.BytesIO(engine_pdf(rdoc, engine, title="Dated"))).metadata
    assert meta is not None and meta.title == "Dated"
    assert str(meta["/CreationDate"]).startswith("D:20231114")


def test_letter_page_size(pool_rows: list[dict[str, Any]], engine: str) -> None:
    rdoc = resolved(pool_rows, "# A\n\nB [[S:1]]\n")
    reader = PdfReader(io.BytesIO(engine_pdf(rdoc, engine, page_size="Letter")))
    assert tuple(round(float(v)) for v in reader.pages[0].mediabox[2:]) == (612, 792)


def test_margins(pool_rows: list[dict[str, Any]], engine: str) -> None:
    """The text block starts 22 mm from the top and 20 mm from the left, as report.css says."""
    rdoc = resolved(pool_rows, "# Title\n\nB [[S:1]]\n")
    document = pdfium.PdfDocument(engine_pdf(rdoc, engine))
    page = document[0]
    textpage = page.get_textpage()
    left, _, _, top = textpage.get_charbox(0)  # the "T" of the title
    height = page.get_height()
    assert 20 * 72 / 25.4 - 1 < left < 20 * 72 / 25.4 + 3
    assert 22 * 72 / 25.4 < height - top < 22 * 72 / 25.4 + 12  # the line's ascent above it


def test_multilingual_text_and_fonts(
    rendered: tuple[ResolvedDocument, bytes], engine: str
) -> None:
    _, pdf = rendered
    document = pdfium.PdfDocument(pdf)
    text = "".join(document[i].get_textpage().get_text_range() for i in range(len(document)))
    # Typst writes no space glyph between Devanagari words (the gap is there, pdfium does not
    # read it as a space; poppler does): their words are checked one by one, like Arabic's
    by_word = {MULTILINGUAL["arabic"]}
    if engine == "typst":
        by_word.add(MULTILINGUAL["devanagari"])
    for sample in MULTILINGUAL.values():
        if sample in by_word:
            assert all(word in text or word[::-1] in text for word in sample.split())
        else:
            assert sample in text
    fonts = {  # "XYZ+Noto-Sans-Arabic" (WeasyPrint), "XYZ+NotoSansArabic-Regular" (Typst)
        re.sub(r"regular|identityh", "", re.sub(r"[^a-z]", "", str(font["/BaseFont"])
                                                .split("+", 1)[-1].lower()))
        for page in PdfReader(io.BytesIO(pdf)).pages
        for font in (page["/Resources"].get("/Font") or {}).values()
    }
    for family in ("notosans", "notosansarabic", "notosansdevanagari", "notosanscjksc"):
        assert family in fonts, fonts


@pytest.mark.parametrize(("variant", "marker"), [("pdf/a-3b", b"pdfaid"), ("pdf/ua-1", b"pdfuaid")])
def test_pdf_variants(
    pool_rows: list[dict[str, Any]], variant: str, marker: bytes, engine: str
) -> None:
    # a skipped heading level and an image that is not loaded: PDF/UA must still hold
    rdoc = resolved(pool_rows, "# A\n\n### Skipped level\n\nB [[S:1]] ![x](nowhere.png)\n")
    reader = PdfReader(io.BytesIO(engine_pdf(rdoc, engine, pdf_variant=variant, title="Variant")))
    root = reader.trailer["/Root"]
    xmp = root["/Metadata"].get_object().get_data()
    assert marker in xmp
    if variant == "pdf/a-3b":
        assert re.search(rb"pdfaid:part(?:>|=\")3", xmp), xmp[:2000]
        assert re.search(rb"pdfaid:conformance(?:>|=\")B", xmp), xmp[:2000]
    if variant == "pdf/ua-1":
        assert "/StructTreeRoot" in root and root["/MarkInfo"]["/Marked"]
    else:
        assert "/OutputIntents" in root


def test_deterministic_within_one_process(
    rendered: tuple[ResolvedDocument, bytes], engine: str
) -> None:
    rdoc, first = rendered
    assert engine_pdf(rdoc, engine, author="Analyst") == first


@pytest.mark.slow
def test_identical_bytes_in_a_fresh_process(
    rendered: tuple[ResolvedDocument, bytes], pool_rows: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch, engine: str,
) -> None:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    _, first = rendered
    other = render_in_fresh_process("pdf", report_markdown(), pool_rows, author="Analyst",
                                    pdf_engine=engine)
    assert other == first


@pytest.mark.slow
@pytest.mark.parametrize(("sample", "pool", "csl"), [
    ("multilingual", "multilingual.pool.yaml", None),
    ("multilingual", "multilingual.pool.yaml", "apa"),
    ("math-figures", "math-figures.pool.json", None),
])
def test_weasyprint_accepts_every_rule_of_the_report_stylesheet(
    caplog: pytest.LogCaptureFixture, tmp_path: Path, sample: str, pool: str, csl: str | None
) -> None:
    """WeasyPrint ignores CSS it does not support with a warning on its logger (a library user
    without logging set up sees it on stderr; ``unicode-bidi`` was one, the math CSS's
    ``-webkit-right`` for Chromium another): the report's own stylesheet has none of it, for the
    multilingual sample with and without a CSL style and for the sample with math."""
    from renderers.api import render
    from renderers.writers.pdf import parsed_rules

    parsed_rules.cache_clear()  # parsed before, its warnings would have been logged then
    samples = Path(__file__).resolve().parents[2] / "samples"
    with caplog.at_level("WARNING", logger="weasyprint"):
        (result,) = render((samples / f"{sample}.md").read_text("utf-8"), tmp_path,
                           sources_pool=str(samples / pool), formats=["pdf"], csl=csl,
                           base_dir=samples)
    assert result.path.stat().st_size > 0
    ignored = [r.getMessage() for r in caplog.records if "Ignored" in r.getMessage()]
    assert ignored == []


#: Code lines longer than an A4 code block, whose highlighted form WeasyPrint broke inside a
#: token (`50|3`, `re|tries`) while the block had `overflow-wrap: anywhere`.
LONG_CODE = (
    "def configure(session, retries=3, backoff_factor=0.5, status_forcelist=(500, 502, 503, "
    '504), allowed_methods=frozenset({"GET", "POST"})):',
    "adapter = HTTPAdapter(max_retries=Retry(total=retries, read=retries, connect=retries, "
    "backoff_factor=backoff_factor))",
)


@pytest.mark.parametrize("language", ["", "python"])
def test_a_long_code_line_wraps_at_its_spaces(language: str) -> None:
    """WeasyPrint wraps a long code line at a space, not inside whichever token reaches the
    margin; only a word too long for a line of its own still breaks inside (and stays on the
    page)."""
    word = "x" * 120
    text = f"```{language}\n{LONG_CODE[0]}\n{LONG_CODE[1]}\ny = '{word}'\n```\n"
    pdf = engine_pdf(resolve(read_markdown(text), SourcePool.from_rows([])), "weasyprint")
    page = pdfium.PdfDocument(pdf)[0]
    lines = [line.strip() for line in page.get_textpage().get_text_range().split("\r\n")]
    for code in LONG_CODE:
        start = next(i for i, line in enumerate(lines) if code.startswith(line))
        wrapped = lines[start:start + 2]
        assert " ".join(wrapped) == code  # wrapped once, at a space
    # broken inside (after "y =", the space before it being a break), all of it on the page
    assert f"y='{word}'" in "".join(lines).replace(" ", "")


@pytest.mark.parametrize(("text", "face"), [
    ("本文は日本語です。直線と骨格。", "notosanscjkjp"),  # kana: Japanese
    ("이 문서는 한국어입니다. 漢字 直骨.", "notosanscjkkr"),  # Hangul: Korean
    ("你好世界，直线与骨骼。", "notosanscjksc"),  # Han only: Simplified Chinese
])
def test_cjk_text_takes_the_regional_face_it_needs(text: str, face: str, engine: str) -> None:
    """Kanji in Japanese text take the Japanese glyph shapes (and Hanja in Korean text the
    Korean ones): the PDF embeds the regional Noto Sans CJK face, in body and code alike,
    and no other."""
    rdoc = resolve(read_markdown(f"# {text}\n\n{text} `{text}`\n"), SourcePool.from_rows([]))
    pdf = engine_pdf(rdoc, engine)
    fonts = {  # "XYZ+Noto-Sans-CJK-JP-Bold" (WeasyPrint), "XYZ+NotoSansCJKjp-Regular…" (Typst)
        re.sub(r"[^a-z]", "", str(font["/BaseFont"]).split("+", 1)[-1].lower())
        for page in PdfReader(io.BytesIO(pdf)).pages
        for font in (page["/Resources"].get("/Font") or {}).values()
    }
    cjk = {name for name in fonts if "cjk" in name}
    mono = face.replace("notosans", "notosansmono")
    assert cjk and all(name.startswith((face, mono)) for name in cjk), fonts
    assert any(name.startswith(mono) for name in cjk), fonts  # the code span's face


#: Lines with no space that a highlighter cuts into many short tokens: none of the tokens is a
#: long word, but the line is one word too long for the block.
TOKEN_CHAINS = {
    "python": "result=" + ".".join(f"step_{i}()" for i in range(24)),
    "json": json.dumps({f"key{i}": i for i in range(30)}, separators=(",", ":")),
}


@pytest.mark.parametrize("language", sorted(TOKEN_CHAINS))
def test_a_highlighted_line_of_short_tokens_wraps_inside_the_page(
    language: str, engine: str
) -> None:
    """A line of short highlighted tokens with no space (a call chain, minified JSON) wraps
    like a long word of plain text instead of running off the page: the word is counted over
    the whole line."""
    code = TOKEN_CHAINS[language]
    pdf = engine_pdf(resolve(read_markdown(f"```{language}\n{code}\n```\n"),
                             SourcePool.from_rows([])), engine)
    page = pdfium.PdfDocument(pdf)[0]
    width = page.get_width()
    textpage = page.get_textpage()
    text = textpage.get_text_range()
    shown = "".join(text.split())
    assert "".join(code.split()) in shown  # all of it, in order
    rights = [textpage.get_charbox(i)[2] for i in range(len(text)) if not text[i].isspace()]
    assert max(rights) < width - 36  # inside the right margin (0.5 in)
    lines = [line for line in text.split("\r\n") if line.strip()]
    assert sum(1 for line in lines if line.strip() and line.strip() in code) >= 2  # wrapped


@pytest.mark.parametrize("text", [
    "Grid storage \u2029grew.",  # markdown: a space before PARAGRAPH SEPARATOR
    "Grid storage\u2028 grew.",  # LINE SEPARATOR: was drawn as a missing glyph
    "<html><body><p>Grid storage \u2029grew.</p></body></html>",  # HTML input's own look
])
def test_line_and_paragraph_separators_are_laid_out(
    text: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """WeasyPrint asserted on ``' \\u2029'`` between two lines (an AssertionError out of the
    render, an internal error at the CLI); the separator is laid out as a line feed."""
    from renderers import render

    render(text, tmp_path, name="r", formats=("pdf", "png"), sources_pool=[])
    page = pdfium.PdfDocument(tmp_path / "r.pdf")[0]
    assert re.sub(r"\s+", " ", page.get_textpage().get_text_range()).startswith(
        "Grid storage grew.")
    assert (tmp_path / "r.png").read_bytes().startswith(b"\x89PNG")
    assert ".notdef" not in caplog.text  # no separator drawn as a missing glyph
