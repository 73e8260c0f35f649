"""Right-to-left text: paragraphs, list items, tables, cells and a note style's notes take the
direction of their first strong character (renderers.text.text_direction) in HTML, PDF and
DOCX; the Sources list takes the document's (an Arabic title in an English report keeps its
number on the left, in a left-to-right entry).

The PDF from WeasyPrint and the PDF LibreOffice makes of the DOCX are read back character by
character (tests.helpers.pdf_lines): a right-to-left paragraph must end at the right margin,
read right to left with each citation number after the word it follows, and lists and tables
must start on the right.
"""

from __future__ import annotations

import base64
import io
import subprocess
import unicodedata
import zipfile
from collections.abc import Iterable, Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import lxml.html
import pytest
from lxml import etree

from citations.pool import SourcePool
from renderers.api import build_options, prepare
from renderers.document import plain_text
from renderers.options import RenderOptions
from renderers.pipeline import Session
from renderers.readers.markdown import read_markdown
from renderers.resolve import ResolvedDocument, resolve
from renderers.text import ISOLATES, POP_ISOLATE, blocks_direction, text_direction
from renderers.writers.docx.writer import docx_bytes
from renderers.writers.html.report import render_html
from renderers.writers.pdf import pdf_bytes
from tests.helpers import convert_all_with_libreoffice, convert_with_libreoffice, pdf_lines

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
A4_WIDTH = 595.3

POOL: list[dict[str, Any]] = [
    {"sid": 1, "title": "World Energy Outlook 2024", "url": "https://www.iea.org/reports/weo"},
    {"sid": 2, "title": "تقرير الطاقة المتجددة", "url": "https://www.irena.org/ar"},
]

ARABIC = "هذه فقرة عربية تنتهي باستشهاد[[S:1]] ثم تستمر بعده."
ARABIC_READ = "هذه فقرة عربية تنتهي باستشهاد1 ثم تستمر بعده."
HEBREW = "זוהי פסקה בעברית עם ציטוט[[S:2]] באמצע."
HEBREW_READ = "זוהי פסקה בעברית עם ציטוט2 באמצע."

REPORT = f"""# Directions

An English paragraph stays left to right.

{ARABIC}

- بند أول في القائمة[[S:2]]
- بند ثان

| العمود الأول | العمود الثاني |
|---|---|
| خلية | 42 |

{HEBREW}
"""


#: A report in Arabic from its title on: its Sources list reads right to left.
ARABIC_REPORT = f"# تقرير\n\n{ARABIC}\n\nنص آخر[[S:2]].\n"


@pytest.fixture(scope="module")
def rdoc() -> ResolvedDocument:
    return resolve(read_markdown(REPORT), SourcePool.from_rows(POOL))


def reading(text: str) -> str:
    """A right-to-left line read as its reader does (right to left), in logical characters."""
    return unicodedata.normalize("NFKC", text)[::-1]


def line_with(lines: list[tuple[float, float, str]], part: str) -> tuple[float, float, str]:
    return next(line for line in lines if part in reading(line[2]) or part in line[2])


def check_layout(pdf: bytes, margin: float) -> None:
    """Right-aligned right-to-left blocks, read right to left with markers after their words."""
    lines = pdf_lines(pdf)
    right_edge = A4_WIDTH - margin
    english = line_with(lines, "An English paragraph")
    assert abs(english[0] - margin) < 3, english
    for logical in (ARABIC_READ, HEBREW_READ):
        left, right, text = line_with(lines, logical[:12])
        assert reading(text) == logical, (text, logical)
        assert abs(right - right_edge) < 3 and left > margin + 60, (left, right, text)
    item = line_with(lines, "بند أول في القائمة")
    assert reading(item[2]).startswith("• بند أول في القائمة2"), item  # the bullet on the right
    header = line_with(lines, "العمود الأول")
    assert reading(header[2]).startswith("العمود الأول"), header  # the first column on the right
    entry = line_with(lines, "تقرير الطاقة المتجددة")  # an English report: left to right
    assert entry[2].startswith("2."), entry  # its number first, on the left
    assert margin - 1 < entry[0] < margin + 30, entry


# ---------------------------------------------------------------- the rule


def test_direction_is_decided_by_the_first_strong_character() -> None:
    assert text_direction("  42, «שלום» world") == "rtl"
    assert text_direction("(IEA) تقرير") == "ltr"
    assert text_direction("42 — 17") is None
    document = read_markdown("```\nكود\n```\n\n- 42\n- نص\n")
    assert blocks_direction(document.blocks) == "rtl"  # code is skipped, then the list
    assert blocks_direction(document.blocks[:1]) is None


# ---------------------------------------------------------------- HTML and PDF


def test_html_marks_lists_tables_and_cells(rdoc: ResolvedDocument) -> None:
    root = lxml.html.document_fromstring(render_html(rdoc, RenderOptions()))
    paragraphs = {p.text_content()[:7]: p.get("dir") for p in root.iter("p")}
    assert paragraphs["An Engl"] == "auto" and paragraphs["هذه فقر"] == "rtl"
    assert paragraphs["זוהי פס"] == "rtl"
    assert root.find(".//ul").get("dir") == "rtl"
    assert [li.get("dir") for li in root.find(".//ul").iter("li")] == [None, None]  # inherited
    assert root.find(".//table").get("dir") == "rtl"
    assert [td.get("dir") for td in root.find(".//table").iter("td", "th")] == [None] * 4
    assert root.get_element_by_id("src-2").get("dir") is None  # the document's direction
    assert root.get_element_by_id("src-1").get("dir") is None
    arabic = lxml.html.document_fromstring(render_html(
        resolve(read_markdown(ARABIC_REPORT), SourcePool.from_rows(POOL)), RenderOptions()))
    assert [arabic.get_element_by_id(f"src-{n}").get("dir") for n in (1, 2)] == ["rtl"] * 2
    mixed = lxml.html.document_fromstring(render_html(
        resolve(read_markdown("- نص\n- English\n\n| a | نص |\n|---|---|\n"),
                SourcePool.from_rows(POOL)), RenderOptions()))
    assert [li.get("dir") for li in mixed.iter("li")] == [None, "ltr"]
    assert mixed.find(".//table").get("dir") is None
    assert [th.get("dir") for th in mixed.iter("th")] == [None, "rtl"]


def test_pdf_lays_out_right_to_left_blocks(rdoc: ResolvedDocument) -> None:
    options = RenderOptions()
    check_layout(pdf_bytes(render_html(rdoc, options), options), margin=56.7)


# ---------------------------------------------------------------- DOCX


def test_docx_marks_paragraphs_items_cells_tables_and_runs(rdoc: ResolvedDocument) -> None:
    with zipfile.ZipFile(io.BytesIO(docx_bytes(rdoc, RenderOptions()))) as package:
        body = etree.fromstring(package.read("word/document.xml"))

    def text(element: etree._Element) -> str:
        return "".join(t.text or "" for t in element.iter(f"{W}t"))

    def bidi(start: str) -> bool:
        p = next(p for p in body.iter(f"{W}p") if text(p).startswith(start))
        return p.find(f"{W}pPr/{W}bidi") is not None

    assert not bidi("Directions") and not bidi("An English") and not bidi("1.World")
    assert not bidi("2.تقرير")  # the Sources list reads in the document's direction
    for start in ("هذه فقرة", "بند أول", "بند ثان", "العمود الأول", "العمود الثاني", "خلية", "42",
                  "זוהי פסקה"):
        assert bidi(start), start  # "42" has no strong character: it takes its table's direction
    table = body.find(f".//{W}tbl")
    assert table.find(f"{W}tblPr/{W}bidiVisual") is not None
    runs = {text(r): r.find(f"{W}rPr/{W}rtl") is not None for r in body.iter(f"{W}r")}
    assert runs["هذه فقرة عربية تنتهي باستشهاد"] and runs["זוהי פסקה בעברית עם ציטוט"]
    assert not runs["1"] and not runs["An English paragraph stays left to right."]
    arabic = resolve(read_markdown(ARABIC_REPORT), SourcePool.from_rows(POOL))
    with zipfile.ZipFile(io.BytesIO(docx_bytes(arabic, RenderOptions()))) as package:
        body = etree.fromstring(package.read("word/document.xml"))
    assert bidi("1.World") and bidi("2.تقرير")  # an Arabic report's Sources: right to left


@pytest.mark.libreoffice
def test_libreoffice_lays_out_right_to_left_paragraphs(
    rdoc: ResolvedDocument, tmp_path: Path
) -> None:
    path = tmp_path / "rtl.docx"
    path.write_bytes(docx_bytes(rdoc, RenderOptions()))
    check_layout(convert_with_libreoffice(path, tmp_path).read_bytes(), margin=72.0)


def test_author_look_html_input_marks_lists_and_tables() -> None:
    from renderers.readers.html import read_html
    from renderers.writers.html.author_look import render_html_input

    html = ("<h1>Brief</h1><ul><li>بند أول</li><li>42</li></ul>"
            "<table><tr><td>خلية</td><td><code>كود</code> code</td></tr></table>")
    rdoc = resolve(read_html(html), SourcePool.from_rows(POOL))
    root = lxml.html.document_fromstring(render_html_input(html, rdoc, RenderOptions()))
    main = root.find(".//main")
    assert main.find(".//ul").get("dir") == "rtl" and main.find(".//table").get("dir") == "rtl"
    assert [li.get("dir") for li in main.iter("li")] == ["rtl", None]
    assert [td.get("dir") for td in main.iter("td")] == ["rtl", None]  # code does not count


def test_docx_keeps_an_authors_column_alignment_in_right_to_left_cells() -> None:
    rdoc = resolve(read_markdown("| Left | Right |\n|:--|--:|\n| نص | نص |\n| text | text |\n"),
                   SourcePool.from_rows(POOL))
    with zipfile.ZipFile(io.BytesIO(docx_bytes(rdoc, RenderOptions()))) as package:
        body = etree.fromstring(package.read("word/document.xml"))
    cells = [
        (p.find(f"{W}pPr/{W}bidi") is not None, p.find(f"{W}pPr/{W}jc").get(f"{W}val"))
        for p in body.iter(f"{W}p") if p.find(f"{W}pPr/{W}jc") is not None
    ]
    # Word and LibreOffice read jc of a right-to-left paragraph from its start: mirrored
    assert cells == [(False, "left"), (False, "right"), (True, "right"), (True, "left"),
                     (False, "left"), (False, "right")]


# ---------------------------------------------------------------- a note style's notes

#: Note 1 cites the Arabic title (the note starts right to left), note 2 the English one.
NOTED = "# Notes\n\nفقرة عربية تستشهد[[S:2]] ثم بمصدر آخر[[S:1]].\n"
#: The same in an Arabic report (its title too).
ARABIC_NOTED = "# ملاحظات\n\nفقرة عربية تستشهد[[S:2]] ثم بمصدر آخر[[S:1]].\n"


def noted(fmt: str, **options: Any) -> bytes:
    built = build_options(csl="chicago-note", **options)
    return Session(prepare(NOTED, sources_pool=POOL, options=built)).artifact(fmt).data


def test_html_marks_a_citation_note_by_its_first_strong_character() -> None:
    items = lxml.html.fromstring(noted("html")).xpath("//li[starts-with(@id, 'cnote-')]")
    assert [(li.get("id"), li.get("dir")) for li in items] == [
        ("cnote-1", "rtl"), ("cnote-2", None)
    ]


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_pdf_lays_out_a_right_to_left_citation_note(engine: str) -> None:
    lines = pdf_lines(noted("pdf", pdf_engine=engine))
    margin = 56.7
    left, right, text = line_with(lines, "تقرير الطاقة المتجددة")  # note 1 (Sources come later)
    assert reading(text).startswith("1. ”تقرير الطاقة المتجددة"), text  # its number on the right
    assert abs(right - (A4_WIDTH - margin)) < 3 and left > margin + 60, (left, right, text)
    english = line_with(lines, "2. “World Energy Outlook 2024")
    assert abs(english[0] - margin) < 3, english


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_pdf_sets_an_added_right_to_left_title_from_the_right_margin(
    engine: str, tmp_path: Path
) -> None:
    """A title the report adds above the body (``title=``, no heading shows it) in Arabic
    words reads from the right margin, as a heading of the body would."""
    from renderers.api import open_session

    session = open_session(f"{ARABIC}\n", tmp_path, sources_pool=POOL, title="تقرير الطاقة",
                           content_format="markdown", pdf_engine=engine)
    lines = pdf_lines(session.artifact("pdf").blobs[0])
    margin = 56.7
    left, right, text = line_with(lines, "تقرير الطاقة")
    assert reading(text) == "تقرير الطاقة", text
    assert abs(right - (A4_WIDTH - margin)) < 3 and left > margin + 200, (left, right, text)


def test_docx_marks_a_right_to_left_citation_footnote() -> None:
    with zipfile.ZipFile(io.BytesIO(noted("docx"))) as package:
        footnotes = etree.fromstring(package.read("word/footnotes.xml"))
    notes = [n for n in footnotes.iter(f"{W}footnote") if int(n.get(f"{W}id", "0")) > 0]
    bidi = [n.find(f"{W}p/{W}pPr/{W}bidi") is not None for n in notes]
    assert bidi == [True, False]


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_pdf_lays_out_a_right_to_left_entry_of_an_unnumbered_style(engine: str) -> None:
    # APA's entries have no marker: Typst sized the entry's block to its text, so a
    # right-to-left entry stood at the left margin while WeasyPrint set it at the right. In an
    # Arabic report every entry is set from the right, the English one too.
    built = build_options(csl="apa", pdf_engine=engine)
    pdf = Session(prepare(ARABIC_NOTED, sources_pool=POOL, options=built)).artifact("pdf").data
    margin = 56.7
    lines = pdf_lines(pdf)
    for address in ("https://www.irena.org/ar", "https://www.iea.org/reports/weo"):
        left, right, text = line_with(lines, address)  # the entry, not the text
        assert abs(right - (A4_WIDTH - margin)) < 3, (left, right, text)
        assert left > margin + 60, (left, right, text)
    english = pdf_lines(Session(prepare(NOTED, sources_pool=POOL, options=built))
                        .artifact("pdf").data)
    for address in ("https://www.irena.org/ar", "https://www.iea.org/reports/weo"):
        left, right, text = line_with(english, address)  # an English report: from the left
        assert abs(left - margin) < 3, (left, right, text)


#: A Hebrew entry long enough to wrap, its address at the end of its first line or the next.
LONG_HEBREW = [{"sid": 1, "author": "כהן, דוד", "published_at": "2021",
                "url": "https://example.co.il/reports/renewable-energy-outlook",
                "title": "דו\"ח אנרגיה מתחדשת ארוך מאוד שנמשך על פני כמה שורות כדי לראות את "
                         "ההזחה התלויה של הרשומה בסגנון ללא מספרים"}]


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_a_right_to_left_entry_hangs_from_the_right_margin(engine: str) -> None:
    """APA's hanging indent in a right-to-left entry: the first line starts at the right
    margin, the next ones 2.2 em in from it, none reaching into the left margin (WeasyPrint
    applied the indent on the left: the first line ran 2.2 em into the left margin). An
    address reads "https://" wherever it wraps."""
    built = build_options(csl="apa", pdf_engine=engine)
    pdf = Session(prepare("זוהי פסקה.[[S:1]]\n", sources_pool=LONG_HEBREW,
                          options=built)).artifact("pdf").data
    margin, hanging = 56.7, 2.2 * 10.5 * 0.9
    lines = pdf_lines(pdf)
    start = next(i for i, line in enumerate(lines) if "כהן, דוד" in reading(line[2]))
    entry = lines[start:start + 3]
    entry = entry[:next((i for i, line in enumerate(entry) if "Page" in line[2]), len(entry))]
    assert len(entry) >= 2, lines
    (first_left, first_right, _), *rest = entry
    assert abs(first_right - (A4_WIDTH - margin)) < 3 and first_left > margin - 1, entry
    for left, right, _ in rest:
        assert abs(right - (A4_WIDTH - margin - hanging)) < 3 and left > margin - 1, entry
    shown = " ".join(text for _, _, text in entry)
    assert "https://" in shown and "//:" not in shown, shown


LONG_URL = "https://example.com/reports/renewable-energy-outlook-2024"


def test_a_long_address_in_a_right_to_left_paragraph_reads_left_to_right_with_typst() -> None:
    """Typst breaks a long word as a row of boxes; in a right-to-left line each box counted as
    a neutral object and the row came out reversed ("2024/outlook-…//:https")."""
    text = f"זוהי פסקה בעברית עם כתובת ארוכה מאוד {LONG_URL} ועוד מילים רבות כאן.[[S:1]]\n"
    built = build_options(pdf_engine="typst")
    lines = pdf_lines(Session(prepare(text, sources_pool=POOL, options=built)).artifact("pdf").data)
    shown = "".join(line[2] for line in lines).replace(" ", "")
    assert "https://example.com/reports/" in shown and "//:https" not in shown, lines


def test_long_inline_code_in_a_right_to_left_paragraph_reads_left_to_right_with_typst() -> None:
    code = "some_very_long_identifier_name/and_more"
    text = f"זוהי פסקה עם קוד `{code}` ארוך מאוד בתוכה ועוד מילים.[[S:1]]\n"
    built = build_options(pdf_engine="typst")
    lines = pdf_lines(Session(prepare(text, sources_pool=POOL, options=built)).artifact("pdf").data)
    assert code in "".join(line[2] for line in lines), lines


#: A word too long for a line (renderers.text.LONG_WORD): Typst may break it anywhere.
LONG_LATIN = "Internationalisationsbestrebungenxyz"


def test_only_a_document_with_right_to_left_text_breaks_long_words_at_zero_width_spaces() -> None:
    """A document with right-to-left text breaks a long word at zero-width spaces, which the
    bidi algorithm does not see; one without keeps the rows of boxes it always had (its PDF
    as it was). Neither holds a long word or an address between isolate marks."""
    from renderers.writers.typst.markup import typst_source

    def source(text: str) -> str:
        rdoc = resolve(read_markdown(text), SourcePool.from_rows(POOL))
        return typst_source(rdoc, RenderOptions()).text

    english = source(f"Read {LONG_URL} and {LONG_LATIN} now.[[S:1]]\n")
    assert "\\u{200b}" not in english and '#box[#"Internationa";];' in english
    for text in (f"Read {LONG_URL} and {LONG_LATIN} now.[[S:2]]\n",  # an Arabic title cited
                 f"קרא {LONG_URL} ו {LONG_LATIN} עכשיו.\n"):
        written = source(text)
        assert '#"Internationa";#text(size: 1em, "\\u{200b}");#"lisationsbes";' in written
        assert "\\u{2066}" not in written and "#box[" not in written


#: One Latin entry with a domain and a date, one Arabic, one bare: in an Arabic report each
#: reads right to left, in an English one left to right.
ENTRY_POOL: list[dict[str, Any]] = [
    {"sid": 1, "title": "World Energy Outlook 2024", "url": "https://www.iea.org/x",
     "published_at": "2024-10-16"},
    {"sid": 2, "title": "تقرير الطاقة المتجددة", "url": "https://www.irena.org/ar"},
    {"sid": 3, "title": "B", "url": "https://b.example"},
]


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_a_right_to_left_sources_list_starts_each_entry_at_the_right_margin(engine: str) -> None:
    """Every entry of an Arabic report reads right to left: its number at the right margin,
    then (leftwards) the title, the domain and date, the back-link last at the left. Typst
    left the numbers at the left margin, set the entries right-aligned in a column ending two
    thirds across, and ran a Latin title and its domain together left to right."""
    built = build_options(pdf_engine=engine)
    report = "# تقرير الطاقة\n\nفقرة.[[S:1]] نص.[[S:2]] آخر.[[S:3]]\n"
    lines = pdf_lines(Session(prepare(report, sources_pool=ENTRY_POOL, options=built))
                      .artifact("pdf").data)
    right_margin = A4_WIDTH - 56.7
    shown = {
        1: "↑ 2024-10-16 · iea.org — World Energy Outlook 2024 .1",
        2: "↑ irena.org — " + reading("تقرير الطاقة المتجددة") + " .2",
        3: "↑ b.example — B .3",
    }
    for number, text in shown.items():
        left, right, line = next(line for line in lines if line[2].endswith(f".{number}"))
        assert unicodedata.normalize("NFKC", line) == text, (line, text)
        assert right_margin - 15 < right <= right_margin + 1, (left, right, line)
    english = pdf_lines(Session(prepare("# Energy\n\nText.[[S:1]] More.[[S:2]] Also.[[S:3]]\n",
                                        sources_pool=ENTRY_POOL, options=built))
                        .artifact("pdf").data)
    shown = {
        1: "1. World Energy Outlook 2024 — iea.org · 2024-10-16 ↑",
        2: "2. " + reading("تقرير الطاقة المتجددة") + " — irena.org ↑",
        3: "3. B — b.example ↑",
    }
    for number, text in shown.items():
        left, right, line = next(line for line in english if line[2].startswith(f"{number}. "))
        assert unicodedata.normalize("NFKC", line) == text, (line, text)
        assert 56.7 < left < 56.7 + 15, (left, right, line)


#: A Latin title ending in a neutral "?", which a right-to-left run would move to its left.
QUESTION_POOL: list[dict[str, Any]] = [
    *ENTRY_POOL, {"sid": 4, "title": "What is solar power?", "url": "https://example.com/solar"},
]
ARABIC_ENTRIES = "# تقرير الطاقة\n\nفقرة.[[S:1]] نص.[[S:2]] آخر.[[S:3]] سؤال.[[S:4]]\n"
ENGLISH_ENTRIES = "# Energy\n\nText.[[S:1]] More.[[S:2]] Also.[[S:3]] Asked.[[S:4]]\n"
#: The parts of an entry in reading order, as programs find them (li > a.source-title …).
ENTRY_PARTS = ("a.source-title", ".source-label", ".source-date", "a.backlink")


def entries(report: str, fmt: str, pool: list[dict[str, Any]] = QUESTION_POOL,
            **options: Any) -> bytes:
    built = build_options(**options)
    return Session(prepare(report, sources_pool=pool, options=built)).artifact(fmt).data


def pdf_text(pdf: bytes) -> str:
    """The text of ``pdf`` as a reader copies it (pdfium's text page), pages in order."""
    import pypdfium2 as pdfium

    return "".join(page.get_textpage().get_text_range() for page in pdfium.PdfDocument(pdf))


def entries_html(report: str) -> str:
    return entries(report, "html").decode()


def test_each_part_of_a_right_to_left_entry_says_its_direction() -> None:
    """No wrapper: the parts stay the entry's children, each with its own dir (the entry's when
    it has no strong character); a left-to-right entry's parts carry none."""
    root = lxml.html.document_fromstring(entries_html(ARABIC_ENTRIES))

    def dirs(number: int) -> list[tuple[str, str | None]]:
        entry = root.get_element_by_id(f"src-{number}")
        return [(part.get("class"), part.get("dir")) for part in entry]

    assert dirs(1) == [("source-title", "ltr"), ("source-label", "ltr"), ("source-date", "rtl"),
                       ("backlink", "rtl")]
    assert dirs(2) == [("source-title", "rtl"), ("source-label", "ltr"), ("backlink", "rtl")]
    english = lxml.html.document_fromstring(entries_html(ENGLISH_ENTRIES))
    assert all(part.get("dir") is None for part in english.xpath("//li[@id]/*"))


#: A Latin title too long to be set as one box in Typst (renderers.writers.typst.parts).
LONG_QUESTION = "What is solar power, and how does it compare with the wind over a lifetime?"


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_pdf_keeps_a_latin_titles_question_mark_at_its_end_in_a_right_to_left_entry(
    engine: str,
) -> None:
    """Typst set a Latin title as text of the right-to-left line and moved its final "?" to
    its start; each part is now set in its own direction (a box, or, too long for one, between
    isolate marks), and the text a reader copies has no control character in the entry."""
    pool = [*QUESTION_POOL, {"sid": 5, "title": LONG_QUESTION, "url": "https://example.com/w"}]
    pdf = entries(ARABIC_ENTRIES.replace("[[S:4]]", "[[S:4]][[S:5]]"), "pdf", pool,
                  pdf_engine=engine)
    lines = [text for _, _, text in pdf_lines(pdf)]
    assert next(text for text in lines if text.endswith(".4")) == (
        "↑ example.com — What is solar power? .4"), lines
    assert next(text for text in lines if text.endswith(".5")) == (
        f"↑ example.com — {LONG_QUESTION} .5"), lines
    copied = pdf_text(pdf)
    controls = {c for c in copied[copied.index("Sources"):] if unicodedata.category(c) == "Cf"}
    assert not controls, controls


@pytest.mark.browser
def test_chromium_lays_out_a_right_to_left_entry_part_by_part(tmp_path: Path) -> None:
    """Chromium ran a Latin title, its domain and date together left to right in an Arabic
    report's entry; each part now stands to the left of the one before it, as both PDF engines
    set it, and reads in its own direction. An English report's entries read left to right."""
    from tests.helpers import chromium_browser

    measure = (
        "([number, parts]) => parts.map(part => {"
        " const e = document.querySelector(`#src-${number} > ${part}`);"
        " if (!e) return null;"
        " const r = e.getBoundingClientRect(); return [r.left, r.right, r.top]; })"
    )
    last_char = (  # the box of the fourth title's last character ("?")
        "() => { const t = document.querySelector('#src-4 > a.source-title').lastChild;"
        " const range = document.createRange(); range.setStart(t, t.length - 1);"
        " range.setEnd(t, t.length); const r = range.getBoundingClientRect();"
        " return [r.left, r.right]; }"
    )
    shown: dict[str, dict[int, list[Any]]] = {}
    question: dict[str, list[float]] = {}
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 900, "height": 900})
        for name, report in (("arabic", ARABIC_ENTRIES), ("english", ENGLISH_ENTRIES)):
            path = tmp_path / f"{name}.html"
            path.write_text(entries_html(report), encoding="utf-8")
            page.goto(path.as_uri())
            shown[name] = {n: page.evaluate(measure, [n, ENTRY_PARTS]) for n in (1, 2, 3, 4)}
            question[name] = page.evaluate(last_char)
            title = shown[name][4][0]
            assert abs(question[name][1] - title[1]) < 1, (name, question[name], title)
    for name, measured in shown.items():
        for number, boxes in measured.items():
            parts = [box for box in boxes if box is not None]  # no date in entries 2-4
            tops = [top for _, _, top in parts]
            assert max(tops) - min(tops) < 3, (name, number, parts)  # one line
            for before, after in pairwise(parts):
                if name == "arabic":  # the next part left of the one before it
                    assert after[1] < before[0], (name, number, parts)
                else:
                    assert before[1] < after[0], (name, number, parts)


#: Lists and Sources in an Arabic report and in an English one, for the office formats.
LISTED = {
    "arabic": ("# تقرير الطاقة\n\n- بند عربي[[S:1]]\n- بند ثان[[S:2]]\n\n"
               "1. خطة أ[[S:3]]\n2. خطة ب[[S:4]]\n"),
    "english": ("# Energy\n\n- First item[[S:1]]\n- Second item[[S:2]]\n\n"
                "1. First step[[S:3]]\n2. Second step[[S:4]]\n"),
}


def marker_sides(pdf: bytes) -> list[tuple[str, str]]:
    """Each list or Sources marker of ``pdf`` (a bullet, or a number by its full stop)
    with the side of its line it stands on: ``"right"`` when it is right of every other
    character of the line, ``"left"`` when left of them all, else ``"middle"``. A line is the
    characters whose centre lies within the marker's box: LibreOffice draws a slide's bullet
    a little higher than its text, so the lines of :func:`pdf_lines` put it apart."""
    import pypdfium2 as pdfium

    sides = []
    for page in pdfium.PdfDocument(pdf):
        textpage = page.get_textpage()
        chars = [(textpage.get_text_range(i, 1), *textpage.get_charbox(i, loose=True))
                 for i in range(textpage.count_chars())
                 if textpage.get_text_range(i, 1) not in ("\r", "\n", "")]
        for index, (char, left, bottom, right, top) in enumerate(chars):
            stop = next((i for i, c in enumerate(chars)  # ".1" or "1.", side by side
                         if c[0] == "." and bottom < (c[2] + c[4]) / 2 < top
                         and min(abs(c[1] - right), abs(left - c[3])) < 1), None)
            if char != "•" and not (char.isdigit() and stop is not None):
                continue
            own = {index} if stop is None else {index, stop}
            line = [c for i, c in enumerate(chars) if i not in own and not c[0].isspace()
                    and bottom < (c[2] + c[4]) / 2 < top]
            side = ("right" if all(c[3] <= left + 0.5 for c in line)
                    else "left" if all(c[1] >= right - 0.5 for c in line) else "middle")
            sides.append((char, side))
    return sides


@pytest.mark.libreoffice
def test_libreoffice_sets_markers_and_entry_parts_in_the_documents_direction(
    tmp_path: Path,
) -> None:
    """The DOCX and the PPTX as LibreOffice lays them out: in an Arabic report bullets, list
    numbers and Sources numbers stand at the right of their text, and each entry reads part by
    part from its number leftwards (title, domain, date, back-link, as in the PDF), where
    LibreOffice ran a Latin title, its domain and date together left to right and moved a
    final "?" to the title's start; in an English report the markers stand at the left."""
    paths = []
    for name, report in LISTED.items():
        for fmt in ("docx", "pptx"):
            path = tmp_path / f"{name}-{fmt}.{fmt}"
            path.write_bytes(entries(report, fmt))
            paths.append(path)
    for pdf in convert_all_with_libreoffice(paths, tmp_path):
        lines = pdf_lines(pdf.read_bytes())
        arabic = pdf.stem.startswith("arabic")
        side = "right" if arabic else "left"
        assert marker_sides(pdf.read_bytes()) == [
            ("•", side), ("•", side), ("1", side), ("2", side),  # the lists
            ("1", side), ("2", side), ("3", side), ("4", side),  # the Sources
        ], pdf.name
        arabic_title = reading("تقرير الطاقة المتجددة")
        expected = [
            "↑ 2024-10-16 · iea.org — World Energy Outlook 2024 .1",
            f"↑ irena.org — {arabic_title} .2",
            "↑ b.example — B .3", "↑ example.com — What is solar power? .4",
        ] if arabic else [
            "1. World Energy Outlook 2024 — iea.org · 2024-10-16 ↑",
            f"2. {arabic_title} — irena.org ↑",
            "3. B — b.example ↑", "4. What is solar power? — example.com ↑",
        ]
        if pdf.stem.endswith("pptx"):  # LibreOffice breaks up an Arabic link on a slide
            del expected[1]
        texts = [unicodedata.normalize("NFKC", text) for _, _, text in lines]
        assert all(entry in texts for entry in expected), (pdf.name, texts)


@pytest.mark.libreoffice
@pytest.mark.parametrize("host", ["s", "source", "longersource"])
def test_libreoffice_keeps_each_number_with_its_label_in_a_wrapped_right_to_left_footer(
    host: str, tmp_path: Path
) -> None:
    """A right-to-left slide's footer of two lines: each number stays on the line of its
    label, at the label's right; LibreOffice ended the first line with a bare "[12]" and
    started the second with its label (a NO-BREAK SPACE between them did not hold), and with
    longer labels a bare "[9]" (a FIGURE SPACE did not hold either)."""
    import re

    pool = [{"sid": n, "title": f"Source {n}", "url": f"https://{host}{n}.example"}
            for n in range(1, 15)]
    path = tmp_path / "footer.pptx"
    path.write_bytes(entries("# تقرير الطاقة\n\nنص عربي قصير[[S:1-14]] هنا.\n", "pptx", pool))
    lines = [unicodedata.normalize("NFKC", text) for _, _, text in
             pdf_lines(convert_with_libreoffice(path, tmp_path).read_bytes())
             if "example [" in text or "example ·" in text]
    assert len(lines) == 2, lines
    shown = set()
    for line in lines:
        for number in re.finditer(r"\[(\d+)\]", line):
            label = f"{host}{number.group(1)}.example "
            assert line[: number.start()].endswith(label), (number.group(0), line)
            shown.add(int(number.group(1)))
    assert shown == set(range(1, len(shown) + 1)) and len(shown) >= 10, lines


# ---------------------------------------------------------------- CSL-styled entries

#: Chicago's entries open with a quotation mark and end with a full stop: neutrals that a
#: right-to-left line moved to the far end of a Latin entry.
STYLED_LATIN = {
    1: "“World Energy Outlook 2024.” 2024. October 16. https://www.iea.org/x.",
    3: "“B.” n.d. https://b.example.",
    4: "“What Is Solar Power?” n.d. https://example.com/solar.",
}


def styled(report: str, fmt: str, **options: Any) -> bytes:
    return entries(report, fmt, csl="chicago-author-date", **options)


def test_html_holds_a_latin_csl_entry_in_its_own_direction_in_a_right_to_left_list() -> None:
    """A styled entry's text whose direction is not the list's is one span with its own dir;
    an entry in the list's direction, and every entry of a left-to-right list, has none."""
    def spans(report: str) -> dict[int, str | None]:
        root = lxml.html.document_fromstring(styled(report, "html").decode())
        found = {n: root.get_element_by_id(f"src-{n}").find("span[@class='source-text']")
                 for n in (1, 2, 3, 4)}
        return {n: None if span is None else span.get("dir") for n, span in found.items()}

    assert spans(ARABIC_ENTRIES) == {1: "ltr", 2: None, 3: "ltr", 4: "ltr"}
    assert spans(ENGLISH_ENTRIES) == {1: None, 2: None, 3: None, 4: None}


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_pdf_reads_a_latin_csl_entry_left_to_right_in_a_right_to_left_list(engine: str) -> None:
    """Each Latin entry of an Arabic report reads left to right as a whole, its opening
    quotation mark and its final full stop at its ends, from the right margin, the back-link
    at its left; set as right-to-left text, the full stop stood at the entry's start, the
    quotation mark at its end, and the runs in between read right to left."""
    lines = pdf_lines(styled(ARABIC_ENTRIES, "pdf", pdf_engine=engine))
    right_margin = A4_WIDTH - 56.7
    for text in STYLED_LATIN.values():
        left, right, line = next(line for line in lines if text.split()[-1] in line[2])
        assert unicodedata.normalize("NFKC", line) == unicodedata.normalize(
            "NFKC", f"↑ {text}"), (line, text)
        assert abs(right - right_margin) < 3, (left, right, line)


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_the_copied_text_of_a_right_to_left_report_holds_no_isolate_mark(engine: str) -> None:
    """Poppler copied a POP DIRECTIONAL ISOLATE from each Latin CSL entry of an Arabic report
    set by Typst (shaped with the back-link's space, the mark became part of that space's
    ActualText), and the marks around a long address in a Hebrew line; pdfium showed none.
    Neither reader copies one now, from a long Latin title either (held by isolate marks, too
    long for a box), nor a long word's zero-width spaces; the entries, the address and the
    word read as before."""
    pool = [*QUESTION_POOL, {"sid": 5, "title": LONG_QUESTION, "url": "https://example.com/w"}]
    report = (ARABIC_ENTRIES.replace("[[S:4]]", "[[S:4]][[S:5]]")
              + f"\nזוהי פסקה עם כתובת ארוכה מאוד {LONG_URL} ועוד מילים.\n"
              + f"\nזוהי פסקה עם מילה ארוכה {LONG_LATIN} ועוד.\n")
    marks = {*ISOLATES.values(), POP_ISOLATE, "\u200b"}  # nor a long word's break
    for options in ({"csl": "chicago-author-date"}, {}):
        pdf = entries(report, "pdf", pool, pdf_engine=engine, **options)
        poppler = subprocess.run(["pdftotext", "-", "-"], input=pdf, check=True,
                                 capture_output=True).stdout.decode()
        for reader, text in (("poppler", poppler), ("pdfium", pdf_text(pdf))):
            assert not marks & set(text), (reader, options, text)
            assert LONG_URL in text and LONG_LATIN in text, (reader, options, text)
        if not options:
            assert LONG_QUESTION in poppler, poppler
        else:
            for shown in STYLED_LATIN.values():
                assert f"↑ {shown}" in poppler, (shown, poppler)


@pytest.mark.browser
def test_chromium_lays_out_a_latin_csl_entry_left_to_right_from_the_right(tmp_path: Path) -> None:
    """In an Arabic report Chromium sets a Latin entry's styled text left to right, its
    opening quotation mark at its left end and its full stop at its right end, the text
    ending at the entry's right edge (its first line hangs) and the back-link to its left."""
    from tests.helpers import chromium_browser

    measure = (
        "(number) => { const li = document.querySelector(`#src-${number}`);"
        " const span = li.querySelector('span.source-text');"
        " const walker = document.createTreeWalker(span, NodeFilter.SHOW_TEXT);"
        " const nodes = []; while (walker.nextNode()) {"
        "  if (walker.currentNode.length) nodes.push(walker.currentNode); }"
        " const char = (node, i) => { const range = document.createRange();"
        "  range.setStart(node, i); range.setEnd(node, i + 1);"
        "  const r = range.getBoundingClientRect(); return [r.left, r.right]; };"
        " const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.right]; };"
        " const last = nodes[nodes.length - 1];"
        " return {first: char(nodes[0], 0), last: char(last, last.length - 1), span: box(span),"
        "  back: box(li.querySelector('a.backlink')), entry: box(li),"
        "  text: [nodes[0].data[0], last.data[last.length - 1]]}; }"
    )
    path = tmp_path / "styled.html"
    path.write_bytes(styled(ARABIC_ENTRIES, "html"))
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 900, "height": 900})
        page.goto(path.as_uri())
        shown = {n: page.evaluate(measure, n) for n in STYLED_LATIN}
    for number, box in shown.items():
        assert box["text"] == ["“", "."], (number, box)
        assert abs(box["first"][0] - box["span"][0]) < 1, (number, box)  # “ at the left end
        assert abs(box["last"][1] - box["span"][1]) < 1, (number, box)  # . at the right end
        assert abs(box["span"][1] - box["entry"][1]) < 1, (number, box)  # from the right edge
        assert box["back"][1] < box["span"][0], (number, box)  # the back-link to its left


@pytest.mark.libreoffice
def test_libreoffice_reads_a_latin_csl_entry_left_to_right_in_a_right_to_left_list(
    tmp_path: Path,
) -> None:
    """The DOCX and the PPTX of an Arabic report: a Latin entry's styled text reads left to
    right between invisible marks (EntryParts.formatted_marks), where LibreOffice set its
    opening quotation mark at its end and its full stop at its start (PPTX: the runs read
    right to left too); a slide numbers the entry, at the right."""
    paths = []
    for fmt in ("docx", "pptx"):
        paths.append(tmp_path / f"styled-{fmt}.{fmt}")
        paths[-1].write_bytes(styled(ARABIC_ENTRIES, fmt))
    for pdf in convert_all_with_libreoffice(paths, tmp_path):
        texts = [unicodedata.normalize("NFKC", text) for _, _, text in pdf_lines(pdf.read_bytes())]
        for number, text in STYLED_LATIN.items():
            marker = f" .{number}" if pdf.stem.endswith("pptx") else ""
            assert unicodedata.normalize("NFKC", f"↑ {text}{marker}") in texts, (pdf.name, texts)


@pytest.mark.libreoffice
def test_libreoffice_sets_a_right_to_left_slides_source_footer_from_the_right(
    tmp_path: Path,
) -> None:
    """The footer naming a slide's sources ("[1] iea.org · [2] irena.org …") follows the
    slide's direction: on an Arabic slide it ends at the footer's right edge and reads right
    to left, each number at the right of its label, where it stayed left to right at the
    bottom left and ran the labels of the Latin sources together; on an English slide it
    starts at the left edge."""
    from renderers.writers.pptx.model import EMU_PER_PT, INSET_X, Geometry

    footer = Geometry.default("16:9", footer=True).footer
    left_edge = footer.left / EMU_PER_PT + INSET_X
    right_edge = (footer.left + footer.width) / EMU_PER_PT - INSET_X
    paths = []
    for name, report in LISTED.items():
        paths.append(tmp_path / f"{name}.pptx")
        paths[-1].write_bytes(entries(report, "pptx"))
    expected = {
        "arabic": "example.com [4] · b.example [3] · irena.org [2] · iea.org [1]",
        "english": "[1] iea.org · [2] irena.org · [3] b.example · [4] example.com",
    }
    for pdf in convert_all_with_libreoffice(paths, tmp_path):
        left, right, text = next(line for line in pdf_lines(pdf.read_bytes())
                                 if "iea.org" in line[2] and "[" in line[2])
        assert unicodedata.normalize("NFKC", text) == expected[pdf.stem], (pdf.name, text)
        if pdf.stem == "arabic":
            assert abs(right - right_edge) < 2 and left > left_edge + 100, (left, right)
        else:
            assert abs(left - left_edge) < 2 and right < right_edge - 100, (left, right)


# ---------------------------------------------------------------- citations in a line

#: Sources cited by author and date; the third has no date (APA writes "n.d.").
CITED_POOL: list[dict[str, Any]] = [
    {"sid": 1, "title": "World Energy Outlook 2024", "url": "https://www.iea.org/x",
     "author": "International Energy Agency", "published_at": "2024"},
    {"sid": 2, "title": "Solar", "url": "https://b.example", "author": "Smith, John",
     "published_at": "2020"},
    {"sid": 3, "title": "Wind", "url": "https://c.example", "author": "World Bank"},
    {"sid": 4, "title": "تقرير الطاقة المتجددة", "url": "https://www.irena.org/ar",
     "author": "الوكالة الدولية للطاقة المتجددة", "published_at": "2023"},
]
#: The words before and after each citation of :data:`CITED`, in reading order.
CITED_WORDS = (("فقرة بمصدرين", "ثم تستمر."), ("مصدر بلا تاريخ", "هنا."), ("نطاق", "كامل."))
#: An Arabic report: two sources, one without a date, a range.
CITED = "# تقرير الطاقة\n\n" + "".join(
    f"{before}{token} {after}\n\n"
    for (before, after), token in zip(CITED_WORDS, ("[[S:1,2]]", "[[S:3]]", "[[S:1-3]]"),
                                      strict=True))
#: The options of each look and how its citations of :data:`CITED` read: each one unit, left
#: to right. Set as text of the right-to-left line, "1–3" read "3–1", "1, 2" "2, 1", the
#: parts of "(A, 2024; B, 2020)" swapped (WeasyPrint), "n.d.)" stood as ".)" at its start.
CITED_LOOKS: dict[str, tuple[dict[str, str], tuple[str, ...]]] = {
    "superscript": ({}, ("1, 2", "3", "1–3")),
    "brackets": ({"citation_format": "brackets"}, ("[1, 2]", "[3]", "[1–3]")),
    "author-date": ({"csl": "apa"}, (
        "(International Energy Agency, 2024; Smith, 2020)", "(World Bank, n.d.)",
        # longer than a Typst box may be: held between isolate marks
        "(International Energy Agency, 2024; Smith, 2020; World Bank, n.d.)")),
}


def cited(look: str, fmt: str, report: str = CITED, **options: Any) -> bytes:
    built = build_options(**CITED_LOOKS[look][0], **options)
    return Session(prepare(report, sources_pool=CITED_POOL, options=built)).artifact(fmt).data


def squeezed(text: str) -> str:
    """``text`` as lines of every engine compare: NFKC, without spaces (engines differ in the
    spaces they put around a superscript) or format characters, each bracket as its opening
    one — a PDF's text names a mirrored bracket either way; which way a citation's brackets
    face is for the Chromium test to see."""
    kept = (c for c in unicodedata.normalize("NFKC", text)
            if not c.isspace() and unicodedata.category(c) != "Cf")
    return "".join(kept).translate(str.maketrans(")]", "(["))


def cited_lines(look: str) -> list[str]:
    """How each paragraph of :data:`CITED` reads on the page from the left: the words after
    the citation, the citation left to right, the words it follows."""
    return [squeezed(reading(after) + cite + reading(before))
            for (before, after), cite in zip(CITED_WORDS, CITED_LOOKS[look][1], strict=True)]


def assert_cited_lines(pdf: bytes, look: str, name: str) -> None:
    shown = [squeezed(text) for _, _, text in pdf_lines(pdf)]
    for expected in cited_lines(look):
        assert expected in shown, (name, look, expected, shown)


def test_html_holds_a_citation_apart_from_a_line_that_reads_the_other_way() -> None:
    """A citation whose direction (its own, left to right without a strong character) is not
    its line's has its own dir, the space before it outside; digits alone, a citation in a
    line of its direction and a superscript joined to the one before it have none (the
    joined run is held by a wrapper: test_html_holds_a_joined_run_as_one_unit)."""
    def cites(html: bytes) -> list[tuple[str | None, str]]:
        root = lxml.html.document_fromstring(html.decode())
        return [(cite.get("dir"), cite.text_content()) for cite in root.find_class("cite")]

    assert cites(cited("superscript", "html")) == [
        ("ltr", "1, 2"), (None, "3"), ("ltr", "1–3")]
    assert cites(cited("brackets", "html")) == [
        ("ltr", "[1, 2]"), ("ltr", "[3]"), ("ltr", "[1–3]")]
    assert cites(cited("author-date", "html")) == [
        ("ltr", text) for text in CITED_LOOKS["author-date"][1]]
    english = "# Energy\n\nTwo sources[[S:1,2]] and a range[[S:1-3]].\n"
    for look in CITED_LOOKS:
        assert all(direction is None for direction, _ in cites(cited(look, "html", english)))
    mixed = ("# Energy\n\nAn Arabic author[[S:4]] in English.\n\n"
             "مؤلف عربي[[S:4]] في العربية.\n\nنص[[S:1]][[S:2,3]] هنا.\n")
    assert cites(cited("author-date", "html", mixed))[:2] == [
        ("rtl", "(الوكالة الدولية للطاقة المتجددة, 2023)"),
        (None, " (الوكالة الدولية للطاقة المتجددة, 2023)")]
    assert cites(cited("superscript", "html", mixed))[2:] == [(None, "2"), (None, ", 3, 4")]


@pytest.mark.slow  # many PDF renders; the HTML tests check the same runs fast
@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_pdf_reads_each_citation_as_one_unit_in_a_right_to_left_line(engine: str) -> None:
    """Superscripts, brackets and author-date citations in an Arabic report: each reads left
    to right as one unit, to the left of the word it follows (:data:`CITED_LOOKS`)."""
    for look in CITED_LOOKS:
        assert_cited_lines(cited(look, "pdf", pdf_engine=engine), look, engine)


def test_the_authors_look_holds_a_citation_apart_as_the_report_does() -> None:
    """HTML input printed in its author's look: each citation gets the report's dir, once the
    author's blocks have their direction, the space before it outside (an Arabic author's in
    an English sentence too); the PDF reads each as one unit."""
    html = "<h1>تقرير الطاقة</h1>" + "".join(
        f"<p>{before}{token} {after}</p>"
        for (before, after), token in zip(CITED_WORDS, ("[[S:1,2]]", "[[S:3]]", "[[S:1-3]]"),
                                          strict=True)) + "<p>An Arabic author[[S:4]] here.</p>"
    for look, (options, shown) in CITED_LOOKS.items():
        session = Session(prepare(html, sources_pool=CITED_POOL,
                                  options=build_options(**options)))
        root = lxml.html.document_fromstring(session.print_html())
        cites = [(cite.get("dir"), cite.text_content()) for cite in root.find_class("cite")]
        held = [None if text.isdigit() else "ltr" for text in shown]
        assert cites[:3] == list(zip(held, shown, strict=True)), (look, cites)
        assert_cited_lines(session.artifact("pdf").data, look, "author's look")
        if look == "author-date":
            assert cites[3] == ("rtl", "(الوكالة الدولية للطاقة المتجددة, 2023)"), cites
            assert "An Arabic author " in root.text_content()


@pytest.mark.browser
def test_chromium_reads_each_citation_as_one_unit_in_a_right_to_left_line(
    tmp_path: Path,
) -> None:
    """In Chromium each citation of the Arabic report reads left to right, its characters in
    their order from the left (an opening bracket at its left end, unmirrored), all of it to
    the left of the word it follows."""
    from tests.helpers import chromium_browser

    measure = (
        "() => [...document.querySelectorAll('p .cite')].map(cite => {"
        " const box = (node, i) => { const range = document.createRange();"
        "  range.setStart(node, i); range.setEnd(node, i + 1);"
        "  const r = range.getBoundingClientRect(); return [node.data[i], r.left, r.right]; };"
        " const chars = []; const walker = document.createTreeWalker(cite, NodeFilter.SHOW_TEXT);"
        " while (walker.nextNode()) { const node = walker.currentNode;"
        "  for (let i = 0; i < node.length; i++) chars.push(box(node, i)); }"
        " const before = cite.previousSibling; const end = before.data.trimEnd().length;"
        " return {chars, word: box(before, end - 1)}; })"
    )
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 900, "height": 900})
        for look, (_, expected) in CITED_LOOKS.items():
            path = tmp_path / f"{look}.html"
            path.write_bytes(cited(look, "html"))
            page.goto(path.as_uri())
            for cite, shown in zip(page.evaluate(measure), expected, strict=True):
                chars = cite["chars"]
                assert "".join(c for c, _, _ in chars) == shown, (look, chars)
                from_left = "".join(c for c, _, _ in sorted(chars, key=lambda c: c[1]))
                assert from_left == shown, (look, from_left, shown)
                word_left = cite["word"][1]
                assert max(right for _, _, right in chars) <= word_left + 0.5, (look, cite)


@pytest.mark.libreoffice
def test_libreoffice_reads_each_citation_as_one_unit_in_a_right_to_left_line(
    tmp_path: Path,
) -> None:
    """The DOCX and the PPTX of the Arabic report as LibreOffice lays them out: each citation
    reads left to right as one unit, held between direction marks."""
    paths = []
    for look in CITED_LOOKS:
        for fmt in ("docx", "pptx"):
            paths.append(tmp_path / f"{look}-{fmt}.{fmt}")
            paths[-1].write_bytes(cited(look, fmt))
    for pdf in convert_all_with_libreoffice(paths, tmp_path):
        assert_cited_lines(pdf.read_bytes(), pdf.stem.rsplit("-", 1)[0], pdf.name)


# ---------------------------------------------------------------- joined citations

#: Forty sources, cited by their sids (``numbering="sid"``) so that a run can be long.
JOINED_POOL: list[dict[str, Any]] = [
    {"sid": n, "title": f"Source {n}", "url": f"https://s{n}.example"} for n in range(1, 41)
]
#: Odd sids from 3 to 39: joined to [[S:1]], a run too long for a Typst box (BOXED_PART).
MANY = ",".join(str(n) for n in range(3, 40, 2))
#: The words before and after each joined run of :func:`joined`, in reading order.
JOINED_WORDS = (("نص عربي", "هنا."), ("سطر ثان", "أيضا."), ("طويل", "جدا."))
JOINED_TOKENS = ("[[S:1]][[S:2-4]]", "[[S:2]][[S:4]][[S:1,3]]", f"[[S:1]][[S:{MANY}]]")
#: The options of each look and how each run of :func:`joined` reads from the left: one unit,
#: left to right ("5–3 ,1" when the joined marks were left to the line). A style's brackets
#: open with no separator: each is a unit of its own, the first at the right.
ODD = ", ".join(str(n) for n in range(3, 40, 2))
JOINED_LOOKS: dict[str, tuple[dict[str, str], tuple[str, ...]]] = {
    "superscript": ({"numbering": "sid"}, ("1, 2–4", "2, 4, 1, 3", f"1, {ODD}")),
    "notes": ({"csl": "chicago-note"}, ("1, 2", "3, 4, 5", "6, 7")),
    "brackets": ({"citation_format": "brackets", "numbering": "sid"},
                 ("[2–4] [1]", "[1, 3] [4] [2]", f"[{ODD}] [1]")),
}
#: How the English line reads in each look (a note style's numbers follow the Arabic notes).
JOINED_ENGLISH = {"superscript": "English text1, 2–4 here.",
                  "notes": "English text{}, {} here.", "brackets": "English text [1] [2–4] here."}


def joined(look: str, fmt: str, *, runs: int = 3, **options: Any) -> bytes:
    """An Arabic report whose paragraphs hold the first ``runs`` joined runs (the third is long
    enough that its superscripts would outnumber the letters on a slide, from which
    :func:`~tests.helpers.pdf_lines` tells the size of text), then an English line."""
    report = "# تقرير الطاقة\n\n" + "".join(
        f"{before}{tokens} {after}\n\n"
        for (before, after), tokens in zip(JOINED_WORDS[:runs], JOINED_TOKENS, strict=False)
    ) + "English text[[S:1]][[S:2-4]] here.\n"
    built = build_options(**JOINED_LOOKS[look][0], **options)
    return Session(prepare(report, sources_pool=JOINED_POOL, options=built)).artifact(fmt).data


def assert_joined_lines(pdf: bytes, look: str, name: str, runs: int = 3) -> None:
    """Each of the first ``runs`` runs of :func:`joined` reads as one unit left of the word it
    follows (a slide shows a note style's citations as the sources' numbers); the English line
    as written."""
    shown = [squeezed(text) for _, _, text in pdf_lines(pdf)]
    if name.endswith("pptx") and look == "notes":
        look = "superscript"
    expected_runs = JOINED_LOOKS[look][1][:runs]
    for (before, after), run in zip(JOINED_WORDS, expected_runs, strict=False):
        expected = squeezed(reading(after) + run + reading(before))
        assert expected in shown, (name, look, expected, shown)
    notes = sum(tokens.count("[[") for tokens in JOINED_TOKENS[:runs])
    english = JOINED_ENGLISH[look].format(notes + 1, notes + 2)
    assert squeezed(english) in shown, (name, look, english, shown)


def test_html_holds_a_joined_run_as_one_unit() -> None:
    """A citation and the superscripts joined to it sit in one ``span.cite-run`` with the
    run's ``dir`` in a right-to-left line, each still its own ``sup.cite`` with one link per
    number; in a left-to-right line there is no wrapper. A style's brackets are each held."""
    root = lxml.html.document_fromstring(joined("superscript", "html").decode())
    runs = root.find_class("cite-run")
    assert [(run.get("dir"), run.text_content()) for run in runs] == [
        ("ltr", text) for text in JOINED_LOOKS["superscript"][1][:2]] + [("ltr", f"1, {ODD}")]
    first = runs[0]
    assert [(sup.get("id"), sup.text_content(), [a.get("href") for a in sup.iter("a")])
            for sup in first] == [("cite-1", "1", ["#src-1"]),
                                  ("cite-2", ", 2–4", ["#src-2", "#src-4"])]
    english = root.xpath("//p[starts-with(., 'English')]")[0]
    assert not english.find_class("cite-run") and english.get("dir") == "auto"
    assert [sup.get("dir") for sup in english.find_class("cite")] == [None, None]
    brackets = lxml.html.document_fromstring(joined("brackets", "html").decode())
    assert not brackets.find_class("cite-run")
    assert [(cite.get("dir"), cite.text_content()) for cite in brackets.find_class("cite")][:2] \
        == [("ltr", "[1]"), ("ltr", "[2–4]")]  # the space before it moved outside


def test_the_authors_look_holds_a_joined_run_as_the_report_does() -> None:
    html = "<h1>تقرير الطاقة</h1><p>نص عربي[[S:1]][[S:2-4]] هنا.</p><p>Text[[S:1]][[S:2]].</p>"
    session = Session(prepare(html, sources_pool=JOINED_POOL, options=build_options()))
    root = lxml.html.document_fromstring(session.print_html())
    runs = root.find_class("cite-run")
    assert [(run.get("dir"), [sup.get("id") for sup in run]) for run in runs] == [
        ("ltr", ["cite-1", "cite-2"])]
    lines = [squeezed(text) for _, _, text in pdf_lines(session.artifact("pdf").data)]
    assert squeezed(reading("هنا.") + "1, 2–4" + reading("نص عربي")) in lines, lines


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_pdf_reads_a_joined_run_as_one_unit_in_a_right_to_left_line(engine: str) -> None:
    """"1" with "2–4" joined to it reads "1, 2–4" from the left in an Arabic line, not
    "4–2 ,1"; a run too long for a Typst box too (held by isolate marks there)."""
    for look in JOINED_LOOKS:
        assert_joined_lines(joined(look, "pdf", pdf_engine=engine), look, engine)


@pytest.mark.libreoffice
def test_libreoffice_reads_a_joined_run_as_one_unit_in_a_right_to_left_line(
    tmp_path: Path,
) -> None:
    """The DOCX (Word footnotes for the note style) and the PPTX as LibreOffice lays them out:
    each joined run reads left to right between direction marks."""
    paths = []
    for look in JOINED_LOOKS:
        for fmt in ("docx", "pptx"):
            paths.append(tmp_path / f"{look}-{fmt}.{fmt}")
            # no source footer: its small letters would outnumber the slide's text
            extra = {"source_footer": False} if fmt == "pptx" else {}
            paths[-1].write_bytes(joined(look, fmt, runs=2, **extra))
    for pdf in convert_all_with_libreoffice(paths, tmp_path):
        assert_joined_lines(pdf.read_bytes(), pdf.stem.rsplit("-", 1)[0], pdf.stem, runs=2)


@pytest.mark.browser
def test_chromium_reads_a_joined_run_as_one_unit_in_a_right_to_left_line(
    tmp_path: Path,
) -> None:
    """In Chromium each run's characters read "1, 2–4" from the left, all of it left of the
    word it follows."""
    from tests.helpers import chromium_browser

    measure = (
        "() => [...document.querySelectorAll('p .cite-run')].map(run => {"
        " const box = (node, i) => { const range = document.createRange();"
        "  range.setStart(node, i); range.setEnd(node, i + 1);"
        "  const r = range.getBoundingClientRect(); return [node.data[i], r.left, r.right]; };"
        " const chars = []; const walker = document.createTreeWalker(run, NodeFilter.SHOW_TEXT);"
        " while (walker.nextNode()) { const node = walker.currentNode;"
        "  for (let i = 0; i < node.length; i++) chars.push(box(node, i)); }"
        " const before = run.previousSibling; const end = before.data.trimEnd().length;"
        " return {chars, word: box(before, end - 1)}; })"
    )
    path = tmp_path / "joined.html"
    path.write_bytes(joined("superscript", "html"))
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(path.as_uri())
        shown = page.evaluate(measure)
    assert len(shown) == 3, shown
    for run, expected in zip(shown, JOINED_LOOKS["superscript"][1], strict=True):
        from_left = "".join(c for c, _, _ in sorted(run["chars"], key=lambda c: c[1]))
        assert from_left == expected, (from_left, expected)
        assert max(right for _, _, right in run["chars"]) <= run["word"][1] + 0.5, run


def _picture() -> str:
    """A small red picture as a ``data:`` address (loaded in every engine, no network)."""
    from PIL import Image as PILImage

    out = io.BytesIO()
    PILImage.new("RGB", (30, 12), (200, 0, 0)).save(out, "PNG")
    return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode("ascii")


#: An image for lines that show one.
PICTURE = _picture()
#: A figure for a line's cross-reference to point to (Figure 1).
FIGURE = f"\n\n![A figure]({PICTURE}){{#fig:a}}"

#: Right-to-left lines with left-to-right text that ends in citation marks, and each line's
#: characters from the left as the bidi algorithm (and Chromium) sets them: the marks' digits
#: read with the letters before them (UAX #9, W7), so each stands at the right end of that
#: text, and the run goes on over the digits or letters after them. WeasyPrint set each box of
#: the run from the right: the marks left of their words (html/bidi.py).
MARKED_RUNS = {
    "العربية [[S:1]] 中文摘要[[S:2]]": "中文摘要21ةيبرعلا",
    "العربية [[S:1]] English text here[[S:2]].": ".Englishtexthere21ةيبرعلا",
    "نص English[[S:1]] more English[[S:2]] نص": "صنEnglish1moreEnglish2صن",
    "نص 中文[[S:1]] [[S:2]] العربية": "ةيبرعلا中文12صن",
    "نص English[[S:1]] 2024 نص": "صنEnglish12024صن",
    "نص English[[S:1]] more": "English1moreصن",
    "نص **English**[[S:1]] نص": "صنEnglish1صن",
    "نص [English](https://example.org/x)[[S:1]] نص": "صنEnglish1صن",
    "נוסח *more English*[[S:1]] 2024 נוסח": "חסונmoreEnglish12024חסונ",
    "نص <https://example.org/x>[[S:1]] نص": "صنhttps://example.org/x1صن",
    "نص **نص English**[[S:1]] نص": "صنEnglish1صنصن",
    "نص English[[S:1]] **more, نص** نص": "صنصن,English1moreصن",
    "نص `code` more[[S:1]] نص": "صنcodemore1صن",
    "نص English[[S:1]] 2024 نص Other[[S:2]] نص": "صنOther2صنEnglish12024صن",
    # a mark inside emphasis counts as it does outside (the run went on without it)
    "نص English **[[S:1]]** نص": "صنEnglish1صن",
    "نص **English [[S:1]]** 2024 نص": "صنEnglish12024صن",
    "نص English **more [[S:1]]** نص": "صنEnglishmore1صن",
    "نص *English* *[[S:1]]* 2024 نص": "صنEnglish12024صن",
    "نص English ~~[[S:1]]~~ نص": "صنEnglish1صن",
    "نص **English [[S:1]] نص** نص": "صنصنEnglish1صن",
    # long words, which Typst may break anywhere (renderers.writers.typst.escape)
    f"نص {LONG_LATIN}[[S:1]] نص": f"صن{LONG_LATIN}1صن",
    f"نص {LONG_LATIN}[[S:1]]. نص": f"صن.{LONG_LATIN}1صن",
    f"نص *{LONG_LATIN}*[[S:1]] 2024 نص": f"صن{LONG_LATIN}12024صن",
    f"نص [{LONG_LATIN}](https://example.org/x)[[S:1]] نص": f"صن{LONG_LATIN}1صن",
    f"نص `{LONG_LATIN}`[[S:1]] نص": f"صن{LONG_LATIN}1صن",
    f"נוסח {LONG_URL}[[S:1]] נוסח": f"חסונ{LONG_URL}1חסונ",
    f"نص {LONG_LATIN}. نص": f"صن.{LONG_LATIN}صن",
    # an image is one neutral (U+FFFC), at the line's level as inside emphasis (where its
    # Arabic alt text ended the run), a cross-reference the name it shows
    f"نص more ![box]({PICTURE}) English[[S:1]] نص": "صنmoreEnglish1صن",
    f"نص **more ![صورة]({PICTURE}) English**[[S:1]] نص": "صنmoreEnglish1صن",
    f"نص more @fig:a English[[S:1]] نص{FIGURE}": "صنmoreFigure1English1صن",
}
MARKED_POOL = SourcePool.from_rows([
    {"sid": 1, "title": "A source", "url": "https://example.org/a"},
    {"sid": 2, "title": "Another", "url": "https://example.org/b"},
])


def marked(fmt: str, line: str, **options: Any) -> bytes:
    return Session(prepare(f"# T\n\n{line}\n", sources_pool=MARKED_POOL,
                           options=build_options(**options))).artifact(fmt).data


def in_chromium(tmp_path: Path, lines: Iterable[str], stem: str) -> Iterator[tuple[str, Any]]:
    """Each of ``lines`` as the report's HTML (:func:`marked`), open in one Chromium page."""
    from tests.helpers import chromium_browser

    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        for n, line in enumerate(lines):
            path = tmp_path / f"{stem}-{n}.html"
            path.write_bytes(marked("html", line))
            page.goto(path.as_uri())
            yield line, page


def assert_drawn_in_chromium(tmp_path: Path, lines: dict[str, str], stem: str) -> None:
    """Each of ``lines`` (a line → its characters from the left, squeezed) drawn so by
    Chromium, the referee of the bidi algorithm (:func:`in_chromium`)."""
    for line, page in in_chromium(tmp_path, lines, stem):
        assert squeezed(page.evaluate(PARAGRAPH_IN_DRAWN_ORDER)) == lines[line], line


def test_html_holds_left_to_right_text_and_its_marks_together_in_a_right_to_left_line() -> None:
    """From the run's first letter to its last letter or digit (a mark's count), over
    emphasis and links, in a span of its direction; not a run of one box, nor in a
    left-to-right line, nor after right-to-left text, nor a citation held apart (an isolate:
    it joins no run), nor a run that enters a link past right-to-left text or digits."""
    def held(line: str, **options: Any) -> list[str]:
        root = lxml.html.document_fromstring(marked("html", line, **options).decode())
        spans = root.xpath("//main//p//span[@dir='ltr'][not(@class)]")
        return [span.text_content() for span in spans]

    assert held("العربية [[S:1]] 中文摘要[[S:2]]") == ["中文摘要2"]
    assert held("العربية [[S:1]] English text here[[S:2]].") == ["English text here2"]
    assert held("نص English[[S:1]] more English[[S:2]] نص") == ["English1 more English2"]
    assert held("نص English[[S:1]] 2024 نص") == ["English1 2024"]  # on over the digits
    assert held("نص English[[S:1]] more") == ["English1 more"]
    assert held("نص English[[S:1]] 2024 نص Other[[S:2]] نص") == ["English1 2024", "Other2"]
    assert held("نص **English**[[S:1]] نص") == ["English1"]
    assert held("نص [English](https://example.org/x)[[S:1]] نص") == ["English1"]
    assert held("نص English[[S:1]] نص") == ["English1"]
    assert held("نص English نص") == []
    assert held("نص عربي[[S:1]] نص") == []
    assert held("English text[[S:1]] then العربية[[S:2]].") == []
    assert held("نص English[[S:1]] نص", citation_format="brackets") == []
    assert held("نص English[[S:1]][[S:2]] نص") == []  # "1, 2" is held apart
    # an address shown as a link is isolated in a browser, not in Typst: as its letters
    assert held("نص <https://example.org/x>[[S:1]] نص") == ["https://example.org/x1"]
    assert held("نص **نص English**[[S:1]] نص") == ["English1"]  # the emphasis cut in two
    assert held("نص English[[S:1]] **more, نص** نص") == ["English1 more"]
    assert held("نص [نص English](https://example.org/x)[[S:1]] نص") == []  # a link is not
    # ... but a link that shows only neutrals outside the run is held whole (one link)
    assert held('نص ["English"](https://example.org/x)[[S:1]] نص') == ['"English"1']
    assert held("نص English[[S:1]] [more text.](https://example.org/x) نص") == [
        "English1 more text."]
    assert held("نص [2024 English](https://example.org/x)[[S:1]] نص") == []  # digits are not
    # a picture or a formula is one neutral, a cross-reference its name
    assert held(f"نص more ![box]({PICTURE}) English[[S:1]] نص") == ["more  English1"]
    assert held("نص **نص $y$ English**[[S:1]] نص") == ["English1"]
    assert held(f"نص more @fig:a English[[S:1]] نص{FIGURE}") == ["more Figure 1 English1"]
    # a mark inside emphasis is one digit there too, a citation held apart one neutral
    assert held("نص English **[[S:1]]** نص") == ["English 1"]
    assert held("نص English **more [[S:1]]** نص") == ["English more 1"]
    assert held("نص **English [[S:1]] نص** نص") == ["English 1"]
    assert held("نص English **[[S:1]]** نص", citation_format="brackets") == []
    assert held("نص English *[[S:1]][[S:2]]* نص") == []


@pytest.mark.parametrize("line", [
    *MARKED_RUNS, "نص **English نص Other** 2024 نص English[[S:1]] **more نص**",
    "نص *a **نص b** c*[[S:1]] نص", "نص **English**", "**English** نص", "نص ~~x~~ نص",
    "نص **نص $y$ English**[[S:1]] نص", 'نص ["English"](https://example.org/x)[[S:1]] نص',
    "نص (**English**)[[S:1]] more (x) نص", "English **عربي *3.5%* more** x",
    "English عربي *3.5%* more", "English **عربي** 3+4 more"])
def test_held_runs_keep_the_lines_inlines_in_order(line: str) -> None:
    """Cutting texts and emphasis and holding runs drops, repeats or moves nothing: the held
    line shows the same text and marks, in the same order."""
    from renderers.document import Cite, Inline, Paragraph, walk_inlines
    from renderers.writers.common import joined_runs
    from renderers.writers.html.bidi import HeldRun, held_line_runs

    def shown(nodes: tuple[Inline, ...]) -> tuple[str, list[tuple[int, ...]]]:
        marks = [node.sids for node in walk_inlines(nodes) if isinstance(node, Cite)]
        return plain_text(nodes).replace("\u061c", ""), marks  # less the numbers' marks

    from renderers.labels import ENGLISH
    from renderers.writers.html.report import ReportWriter

    document = read_markdown(f"{line}\n")
    block = document.blocks[0]
    assert isinstance(block, Paragraph)
    children = block.children
    assert shown(children)[1] or "[[" not in line  # the marks are there to be kept
    written = ReportWriter(RenderOptions(), resolve(document, MARKED_POOL), ENGLISH).inline
    held = [part for item in held_line_runs(list(joined_runs(children)), written,
                                                   text_direction(plain_text(children)) or "rtl")
            for part in (item.runs if isinstance(item, HeldRun) else (item,))]
    assert shown(tuple(node for run in held for node in run)) == shown(children)


#: Lines whose run starts or ends inside a link that shows only neutrals outside it, how
#: WeasyPrint's PDF and Chromium (reading the same HTML) set them from the left, and the
#: letter the mark follows with the most room between them (a quotation mark's). The link is
#: held whole, the neutrals on the run's side: the bidi algorithm alone (Typst) sets them
#: across the run, the link in two pieces, which one ``<a>`` cannot be in WeasyPrint.
LINKED_RUNS = {
    'نص ["English"](https://example.org/x)[[S:1]] نص': ('صن"English"1صن', 8),
    "نص English[[S:1]] [more text.](https://example.org/x) نص": ("صنEnglish1moretext.صن", 3),
}


def link_rects(pdf: bytes, uri: str) -> list[tuple[float, float]]:
    """The left and right edge of each link annotation to ``uri`` on page 1."""
    import pypdf

    rects = []
    for annotation in pypdf.PdfReader(io.BytesIO(pdf)).pages[0].get("/Annots") or []:
        annotation = annotation.get_object()
        if (annotation.get("/A") or {}).get("/URI") == uri:
            left, _, right, _ = (float(v) for v in annotation["/Rect"])
            rects.append((left, right))
    return rects


@pytest.mark.parametrize("line", list(LINKED_RUNS))
def test_a_run_entering_or_leaving_a_link_past_neutrals_holds_the_link_whole(line: str) -> None:
    """The span holds the whole link: one ``<a>``, one annotation in WeasyPrint's PDF, the
    mark right after its word in both engines (WeasyPrint set it 38–43 pt left of the word:
    the run was not held)."""
    expected, gap = LINKED_RUNS[line]
    root = lxml.html.document_fromstring(marked("html", line).decode())
    (link,) = root.xpath("//main//a[@href='https://example.org/x']")
    assert link.getparent().get("dir") == "ltr"
    pdf = marked("pdf", line)
    assert expected in [squeezed(text) for _, _, text in pdf_lines(pdf)]
    assert len(link_rects(pdf, "https://example.org/x")) == 1
    for engine in ("weasyprint", "typst"):
        word, mark = mark_after(marked("pdf", line, pdf_engine=engine), "h")
        assert 0 <= mark - word < gap, (engine, word, mark)


@pytest.mark.browser
def test_chromium_reads_a_link_held_whole_as_weasyprint_does(tmp_path: Path) -> None:
    """Chromium isolates the span: it sets the line as WeasyPrint does, the link in one
    piece."""
    for line, page in in_chromium(tmp_path, LINKED_RUNS, "linked"):
        assert squeezed(page.evaluate(PARAGRAPH_IN_DRAWN_ORDER)) == LINKED_RUNS[line][0], line
        pieces = page.evaluate(
            "() => document.querySelector('main p a[href^=\"https\"]')"
            ".getClientRects().length")
        assert pieces == 1, line


def test_html_cuts_a_text_or_an_emphasis_where_a_held_run_starts_or_ends() -> None:
    """A span cuts a text, or an emphasis in two (which looks the same), never a link: it
    holds a link whole, so the link keeps one annotation (a span inside a link doubled
    WeasyPrint's)."""
    html = marked("html", "نص [English](https://example.org/x)[[S:1]] نص").decode()
    assert ('<span dir="ltr"><a href="https://example.org/x">English</a><sup class="cite"'
            in html)
    html = marked("html", "نص ***نص English***[[S:1]] نص").decode()
    assert ('نص <em><strong>نص </strong></em><span dir="ltr"><em><strong>English</strong></em>'
            '<sup class="cite"' in html)
    html = marked("html", "نص English[[S:1]] 2024 نص").decode()
    assert '<p dir="rtl">نص <span dir="ltr">English<sup' in html
    assert "</sup> 2024</span> نص</p>" in html


@pytest.mark.slow  # many PDF renders; the HTML tests check the same runs fast
@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_pdf_sets_marks_after_left_to_right_text_in_a_right_to_left_line(engine: str) -> None:
    """Typst followed the bidi algorithm; WeasyPrint set "²" left of "中文摘要" in an Arabic
    line, and Typst a long word's mark at its left and its full stop at its right (the word's
    boxes, isolated, were one neutral object). Both now set each line as Chromium does
    (:data:`MARKED_RUNS`)."""
    for line, expected in MARKED_RUNS.items():
        shown = [squeezed(text) for _, _, text in pdf_lines(marked("pdf", line,
                                                                   pdf_engine=engine))]
        assert expected in shown, (engine, line, shown)


@pytest.mark.parametrize("form", ["{}", "*{}*", "`{}`", "[{}](https://example.org/x)"])
def test_typst_wraps_a_long_word_in_a_right_to_left_paragraph_inside_the_page(form: str) -> None:
    """A word of 300 letters in an Arabic paragraph still breaks anywhere (its pieces are
    text between zero-width spaces there, no longer boxes): every line stays between the
    margins, and the word reads whole and in order over its lines, its mark after it."""
    word = "".join(chr(ord("a") + n % 26) for n in range(300))
    line = f"هذه فقرة عربية {form.format(word)}[[S:1]] ثم تستمر بعده."
    lines = pdf_lines(marked("pdf", line, pdf_engine="typst"))
    margin = 56.7
    for left, right, text in lines:  # an italic glyph's box leans a little past its advance
        assert left > margin - 1 and right < A4_WIDTH - margin + 2, (left, right, text)
    latin = ["".join(c for c in squeezed(text) if c.isascii() and c.isalnum())
             for _, _, text in lines]
    pieces = [piece for piece in latin if len(piece) > 10 and piece in word + "1"]
    assert len(pieces) >= 4 and "".join(pieces) == word + "1", latin


#: Lines whose mark follows a left-to-right run that goes on past it or crosses an element,
#: with the last letter of the word the mark follows (and a space where one comes between).
MARKED_WORDS = {
    "نص English[[S:1]] 2024 نص": "h",
    "نص English[[S:1]] more": "h",
    "نص **English**[[S:1]] نص": "h",
    "نص [English](https://example.org/x)[[S:1]] نص": "h",
    "נוסח *more English*[[S:1]] 2024 נוסח": "h",
    "نص **نص English**[[S:1]] نص": "h",
    "نص Internationalisationsbestrebungenenglish[[S:1]] نص": "h",
    "نص *Internationalisationsbestrebungenenglish*[[S:1]] 2024 نص": "h",
    "نص [Internationalisationsbestrebungenenglish](https://example.org/x)[[S:1]] نص": "h",
    # a mark inside emphasis, after a space (the letter's)
    "نص English **[[S:1]]** نص": "h ",
    "نص English **bold [[S:1]]** نص": "d ",
    "نص **English [[S:1]]** 2024 نص": "h ",
    "نص English ~~[[S:1]]~~ نص": "h ",
    # after a picture, a formula or a cross-reference, which ended the run; a formula inside
    # emphasis, whose TeX the report read as letters (WeasyPrint set it inside the span)
    f"نص more ![box]({PICTURE}) English[[S:1]] نص": "h",
    f"نص **more ![صورة]({PICTURE}) English**[[S:1]] نص": "h",
    "نص more $y$ English[[S:1]] نص": "h",
    "نص **نص $y$ English**[[S:1]] نص": "h",
    f"نص more @fig:a English[[S:1]] نص{FIGURE}": "h",
}


def mark_after(pdf: bytes, letter: str) -> tuple[float, float]:
    """The right edge of ``letter`` and the left edge of the raised "1" on page 1 (the only
    ones), in points."""
    import pypdfium2 as pdfium

    page = pdfium.PdfDocument(pdf)[0]
    textpage = page.get_textpage()
    boxes = [(textpage.get_text_range(n, 1), textpage.get_charbox(n))
             for n in range(textpage.count_chars())]
    word = next(box for char, box in boxes if char == letter)
    height = word[3] - word[1]
    mark = next(box for char, box in boxes if char == "1" and box[3] - box[1] < 0.8 * height)
    return word[2], mark[0]


@pytest.mark.slow  # many PDF renders; the HTML tests check the same runs fast
@pytest.mark.parametrize("line", list(MARKED_WORDS))
def test_weasyprint_sets_each_mark_after_its_word_where_typst_does(line: str) -> None:
    """The mark stands right after its word (at the run's right end, UAX #9 W7) in both
    engines, and at Typst's place within 0.05 pt. WeasyPrint drew it 39–64 pt left of the
    word: each box of the run was set from the right (html/bidi.py), and one inside emphasis
    after a space 39–69 pt left of it; one after a picture, a formula or a cross-reference
    (which ended the run) 56–108 pt left of Typst's, and one after a formula in emphasis
    (its TeX read as letters) 8.4 pt right of it."""
    letter = MARKED_WORDS[line]
    ends = {engine: mark_after(marked("pdf", line, pdf_engine=engine), letter.strip())
            for engine in ("weasyprint", "typst")}
    gap = 3 if letter == letter.strip() else 6  # a space is 3 to 5 pt wide
    for word, mark in ends.values():
        assert 0 <= mark - word < gap, (line, ends)
    assert abs(ends["weasyprint"][1] - ends["typst"][1]) < 0.05, (line, ends)


#: Chromium: the first paragraph of ``main``'s characters in the order they are drawn, left to
#: right (each character's box, sorted by its left edge).
PARAGRAPH_IN_DRAWN_ORDER = (
    "() => { const chars = []; const p = document.querySelector('main p');"
    " const walker = document.createTreeWalker(p, NodeFilter.SHOW_TEXT);"
    " while (walker.nextNode()) { const node = walker.currentNode;"
    "  for (let i = 0; i < node.length; i++) { const range = document.createRange();"
    "   range.setStart(node, i); range.setEnd(node, i + 1);"
    "   chars.push([node.data[i], range.getBoundingClientRect().left]); } }"
    " return chars.sort((a, b) => a[1] - b[1]).map(c => c[0]).join(''); }"
)


@pytest.mark.browser
def test_chromium_sets_marks_after_left_to_right_text_in_a_right_to_left_line(
    tmp_path: Path,
) -> None:
    """The referee: the HTML's spans change nothing of the bidi algorithm's order."""
    assert_drawn_in_chromium(tmp_path, MARKED_RUNS, "marked")


# ---------------------------------------------------------------- numbers after an element

#: Right-to-left lines with a European number in a box after Arabic letters in another (after
#: emphasis, a citation mark, a link, code, or inside emphasis), and each line's characters
#: from the left as the bidi algorithm (and Chromium, and Typst) sets them: after Arabic
#: letters the digits read as Arabic ones (UAX #9, W2), so a percent, degree or dollar sign,
#: or a plus or minus between digits, no longer joins them (W4–W6) but takes the line's side.
#: WeasyPrint, whose Pango reads each box alone, set "3.5%", "3+4" as after no letter.
NUMBER_LINES = {
    "نص **عريض** 3.5% نص": "صن%3.5ضيرعصن",
    "نص **عريض**[[S:1]] 3.5% نص": "صن%3.51ضيرعصن",
    "نص [رابط](https://example.org/x) 3.5% نص": "صن%3.5طبارصن",
    "نص `كود` 3.5% نص": "صن%3.5دوكصن",
    "نص **3.5%** نص": "صن%3.5صن",
    "نص *مائل **عريض*** 30° نص": "صن°30ضيرعلئامصن",
    "نص **عريض** 3+4 نص": "صن4+3ضيرعصن",
    "نص **عريض** 3−4 نص": "صن4−3ضيرعصن",
    "نص **عريض** $30 نص": "صن30$ضيرعصن",
    "نص **عريض** 3.5 و 3,5 نص": "صن3,5و3.5ضيرعصن",
    "نص **عريض** ٣٫٥٪ نص": "صن٪٣٫٥ضيرعصن",  # Arabic digits read so in any box
    "متن **پررنگ** ۳٫۵٪ متن": "نتم٪۳٫۵گنررپنتم",  # Persian digits are European ones
    "نص **عريض**\n3.5% نص": "صن%3.5ضيرعصن",  # the same box as the line's next text
    # after a Hebrew letter (R) the digits stay European; after Latin ones they join the
    # run, a percent sign with them (W5, W7)
    "נוסח **מודגש** 3.5% נוסח": "חסונ3.5%שגדומחסונ",
    "نص **English** 3.5% نص": "صنEnglish3.5%صن",
    "نص English[[S:1]] 50% نص": "صنEnglish150%صن",
}


def number_line_shown(fmt: str, line: str, **options: Any) -> list[str]:
    return [squeezed(text) for _, _, text in pdf_lines(marked(fmt, line, **options))]


@pytest.mark.slow  # many PDF renders; the HTML tests check the same runs fast
@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_pdf_sets_a_number_after_an_element_as_the_bidi_algorithm_does(engine: str) -> None:
    """Both engines set each line of :data:`NUMBER_LINES` as Chromium does (WeasyPrint drew
    "3.5%" where Typst drew "%3.5", and "3+4" for "4+3")."""
    for line, expected in NUMBER_LINES.items():
        shown = number_line_shown("pdf", line, pdf_engine=engine)
        assert expected in shown, (engine, line, shown)


def test_html_marks_only_a_number_whose_box_lost_the_arabic_letters_before_it() -> None:
    """An ARABIC LETTER MARK stands before the first digit of a box that holds no strong
    letter before it, in a line that reads Arabic letters last there; not in a box after
    those letters, nor after Hebrew or Latin letters, nor in a line without Arabic letters,
    nor past a line break (which ends the bidi paragraph). The copied text of the PDF holds
    none."""
    from renderers.writers.html.bidi import ALM

    def paragraph(line: str) -> str:
        html = marked("html", line).decode()
        return html[html.index("<main"):].split("<p", 2)[1]

    assert "</strong> \u061c3.5%" in paragraph("نص **عريض** 3.5% نص")
    assert "<strong>\u061c3.5%</strong>" in paragraph("نص **3.5%** نص")
    assert "<code>\u061c3.5%</code>" in paragraph("نص `3.5%` نص")
    assert paragraph("نص **عريض** 3 و 4 نص").count(ALM) == 1  # the box's first digit only
    for line in ("نص عريض 3.5% نص", "نص **عريض 3.5%** نص", "נוסח **מודגש** 3.5% נוסח",
                 "نص **English** 3.5% نص", "An **English** 3.5% line", "نص **عريض**\\\n3.5%",
                 "نص **عريض** *English 3.5%*"):
        assert ALM not in paragraph(line), line
    pdf = marked("pdf", "نص **عريض** 3.5% نص")
    poppler = subprocess.run(["pdftotext", "-", "-"], input=pdf, check=True,
                             capture_output=True).stdout.decode()
    for reader, text in (("poppler", poppler), ("pdfium", pdf_text(pdf))):
        assert "3.5" in text and ALM not in text, (reader, text)


@pytest.mark.browser
def test_chromium_sets_a_number_after_an_element_as_the_pdfs_do(tmp_path: Path) -> None:
    """The referee: the marks change nothing of Chromium's order (:data:`NUMBER_LINES`)."""
    assert_drawn_in_chromium(tmp_path, NUMBER_LINES, "number")


# ---------------------------------------------------------------- paired brackets

#: Right-to-left lines with brackets around left-to-right text, and each line's characters from
#: the left as the bidi algorithm (Chromium, Typst) sets them: a pair that holds left-to-right
#: text only, after right-to-left text, takes the line's side (UAX #9, rule N0), so the mark
#: after ")" stands outside it, a run of its own (its digit a letter's: W7). WeasyPrint held
#: "English)¹" in one left-to-right span: the mark inside the brackets, each drawn the wrong
#: way ("English(¹(").
BRACKET_LINES = {
    "نص (English)[[S:1]] نص": "صن1(English(صن",
    "نص (**English**)[[S:1]] نص": "صن1(English(صن",
    "نص (English, 2024)[[S:1]] نص": "صن1(English,2024(صن",
    "نص (English (more))[[S:1]] نص": "صن1(English(more((صن",
    "نص (English)[[S:1]] more نص": "صن1more(English(صن",
    "נוסח [English][[S:1]] 2024 נוסח": "חסונ12024[English[חסונ",
    "نص \uff08English\uff09[[S:1]] نص": "صن1(English(صن",  # fullwidth, NFKC in squeezed
    # after left-to-right text the pair is left to right; around right-to-left text, or
    # inside, or unpaired, as before
    "نص English (more)[[S:1]] نص": "صنEnglish(more(1صن",
    "نص English (نص)[[S:1]] نص": "صن1(صن(Englishصن",
    "نص (English[[S:1]]) نص": "صن(English1(صن",
    "نص English)[[S:1]] نص": "صنEnglish(1صن",
}


def test_html_ends_a_held_run_at_a_bracket_that_takes_the_lines_side() -> None:
    """A pair of brackets around left-to-right text after right-to-left text ends the run (no
    span when the text is one box); the mark after it starts one of its own; a pair after
    left-to-right text stays in its run."""
    def held(line: str) -> list[str]:
        root = lxml.html.document_fromstring(marked("html", line).decode())
        return [span.text_content() for span in root.xpath("//main//p//span[@dir='ltr']"
                                                           "[not(@class)]")]

    assert held("نص (English)[[S:1]] نص") == []
    assert held("نص (**English**)[[S:1]] نص") == []
    assert held("نص (English)[[S:1]] more نص") == ["1 more"]
    assert held("نص English (more)[[S:1]] نص") == ["English (more)1"]
    assert held("نص English)[[S:1]] نص") == ["English)1"]  # unpaired: neutral
    assert held("نص (English[[S:1]]) نص") == ["English1"]


def test_brackets_pair_as_unicode_pairs_them() -> None:
    """BidiBrackets.txt, read from the character database: a closing bracket names its
    opening one (the two crossed pairs of U+298D–U+2990 too), canonical equivalents pair, and
    quotation marks are no brackets."""
    from renderers.writers.html.bidi import Bracket, _bracket

    assert _bracket("(") == Bracket("(", closes=False) and _bracket(")") == Bracket("(", True)
    assert _bracket("]") == Bracket("[", True) and _bracket("\uff3d") == Bracket("\uff3b", True)
    assert _bracket("\u2990") == Bracket("\u298d", True)
    assert _bracket("\u298e") == Bracket("\u298f", True)
    assert _bracket("\u232a") == Bracket("\u3008", True) == _bracket("\u3009")
    for char in ("«", "»", "\u201c", '"', "<", "\ufd3e"):
        assert _bracket(char) == "neutral", char


@pytest.mark.slow  # many PDF renders; the HTML tests check the same runs fast
@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_pdf_sets_a_mark_after_brackets_as_the_bidi_algorithm_does(engine: str) -> None:
    """Both engines set each line of :data:`BRACKET_LINES` as Chromium does."""
    for line, expected in BRACKET_LINES.items():
        shown = number_line_shown("pdf", line, pdf_engine=engine)
        assert expected in shown, (engine, line, shown)


@pytest.mark.parametrize("line", ["نص (English)[[S:1]] نص", "نص (English, 2024)[[S:1]] نص"])
def test_weasyprint_sets_the_mark_after_brackets_where_typst_does(line: str) -> None:
    """The raised "1" stands left of the pair in both engines, within 0.5 pt of each other
    (WeasyPrint drew it inside the pair, 40–69 pt right of Typst's)."""
    marks = {engine: mark_after(marked("pdf", line, pdf_engine=engine), "h")[1]
             for engine in ("weasyprint", "typst")}
    assert abs(marks["weasyprint"] - marks["typst"]) < 0.5, (line, marks)


@pytest.mark.browser
def test_chromium_sets_a_mark_after_brackets_as_the_pdfs_do(tmp_path: Path) -> None:
    """The referee: the bidi algorithm's own order of :data:`BRACKET_LINES`."""
    assert_drawn_in_chromium(tmp_path, BRACKET_LINES, "bracket")


# ---------------------------------------------------------------- left-to-right lines

#: Left-to-right lines with right-to-left text that runs on into another box, and each line's
#: characters from the left as the bidi algorithm (Chromium, Typst) sets them: the number after
#: the Arabic words belongs to their run, its digits Arabic ones (W2), its percent sign on the
#: line's side; after Hebrew the number stays European, its sign with it. WeasyPrint set each
#: box from the left ("يبرع3.5%"), as it set a right-to-left line's boxes from the right.
LTR_LINES = {
    "English عربي *3.5%* more": "English3.5يبرع%more",
    "English **عربي** 3+4 more": "English4+3يبرعmore",
    "English עברית *3.5%* more": "English3.5%תירבעmore",
    "English [عربي](https://example.org/x) 2024 more": "English2024يبرعmore",
    "English عربي[[S:1]] 3.5% more": "English3.51يبرع%more",
    "English (عربي) *3.5%* more": "English(يبرع(3.5%more",  # the brackets the line's
}


def test_html_holds_right_to_left_runs_of_a_left_to_right_line() -> None:
    """A right-to-left run over several boxes in a ``dir="rtl"`` span, an emphasis cut where
    it ends; none for a run in one box; a left-to-right line without right-to-left text
    written as it was (no span, no mark)."""
    from renderers.writers.html import report
    from renderers.writers.html.bidi import ALM

    def held(line: str) -> list[str]:
        root = lxml.html.document_fromstring(marked("html", line).decode())
        return [span.text_content().replace(ALM, "")
                for span in root.xpath("//main//p//span[@dir='rtl'][not(@class)]")]

    assert held("English عربي *3.5%* more") == ["عربي 3.5"]
    assert held("English **عربي** 3+4 more") == ["عربي 3+4"]
    assert held("English עברית *3.5%* more") == ["עברית 3.5%"]
    assert held("English عربي 3.5% more") == []  # one box: Pango orders it
    html = marked("html", "English عربي *3.5%* more").decode()
    assert (f'<p dir="auto">English <span dir="rtl">عربي <em>{ALM}3.5</em></span><em>%</em>'
            in html)  # the percent sign on the line's side
    assert f"<strong>عربي</strong> {ALM}3+4" in marked("html", "English **عربي** 3+4 more").decode()
    english = "An **English** line, *3.5%* and [a link](https://example.org/x)[[S:1]] 2024."
    written = marked("html", english)
    original = report.held_line_runs
    try:
        report.held_line_runs = lambda runs, written, line, *_: (  # type: ignore[assignment]
            list(runs) if line == "ltr" else original(runs, written, line, *_))
        assert marked("html", english) == written
    finally:
        report.held_line_runs = original


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_pdf_sets_right_to_left_runs_of_a_left_to_right_line_as_the_bidi_algorithm_does(
    engine: str,
) -> None:
    """Both engines set each line of :data:`LTR_LINES` as Chromium does."""
    for line, expected in LTR_LINES.items():
        shown = number_line_shown("pdf", line, pdf_engine=engine)
        assert expected in shown, (engine, line, shown)


@pytest.mark.browser
def test_chromium_sets_right_to_left_runs_of_a_left_to_right_line_as_the_pdfs_do(
    tmp_path: Path,
) -> None:
    """The referee: the spans and marks change nothing of Chromium's order."""
    assert_drawn_in_chromium(tmp_path, LTR_LINES, "ltr")


# ---------------------------------------------------------------- a citation read in its line

#: A source by an Arabic author and one by an English author.
AUTHORED_POOL = SourcePool.from_rows([
    {"sid": 1, "title": "تقرير", "url": "https://example.org/a", "author": "مؤلف",
     "published_at": "2024"},
    {"sid": 2, "title": "Report", "url": "https://example.org/b", "author": "Smith, John",
     "published_at": "2020"},
])
#: By look (:data:`CITED_LOOKS`), lines with a run over several boxes before a citation, and
#: how each reads from the left as the bidi algorithm (Typst, Chromium without the spans) sets
#: it. A citation not held apart reads as the text it shows: "(مؤلف, 2024)" in a right-to-left
#: line ends the English run (WeasyPrint drew it right of "words", inside the run's span);
#: One held apart is a neutral isolate: "(مؤلف, 2024)" in a left-to-right line stands on the
#: line's side of the Arabic words (WeasyPrint drew it left of them); so does a mark after
#: them (it stood left of them, between them and "text"), and "(Smith, 2020)" between two
#: Arabic words follows the first in their order (it parted them the other way round).
AUTHORED_LINES: dict[str, dict[str, str]] = {
    "author-date": {
        "نص عربي **English** words[[S:1]] نص.": ".صن(2024,فلؤم(Englishwordsيبرعصن",
        "English text **عربي** كلمات[[S:1]] more.": "Englishtextتاملكيبرع(2024,فلؤم(more.",
        "English text **عربي** كلمات[[S:2]] عربي more.":
            "Englishtextيبرع(Smith,2020(تاملكيبرعmore.",
    },
    "superscript": {
        "نص عربي **English** words[[S:1]] نص.": ".صنEnglishwords1يبرعصن",
        "English text **عربي** كلمات[[S:1]] more.": "Englishtextتاملكيبرع1more.",
    },
}


def authored(fmt: str, look: str, line: str, **options: Any) -> bytes:
    built = build_options(**CITED_LOOKS[look][0], **options)
    return Session(prepare(f"# T\n\n{line}\n", sources_pool=AUTHORED_POOL,
                           options=built)).artifact(fmt).data


def test_html_reads_a_citation_not_held_apart_as_the_text_it_shows() -> None:
    """A citation in its line's direction (or of digits) reads as its text; one held apart
    from the line, as one neutral: the spans end where the citation's letters end the run."""

    def held(line: str, direction: str) -> list[str]:
        root = lxml.html.document_fromstring(authored("html", "author-date", line).decode())
        return [squeezed(span.text_content())
                for span in root.xpath(f"//main//p//span[@dir='{direction}'][not(@class)]")]

    lines = list(AUTHORED_LINES["author-date"])
    assert held(lines[0], "ltr") == ["Englishwords"]  # "(مؤلف, 2024)" was inside
    assert held(lines[1], "rtl") == ["عربيكلمات"]  # "(مؤلف, 2024)" was inside
    # after Arabic words, "(Smith, 2020)" is held apart too (a neutral in the Arabic run,
    # after "كلمات" in its order): the span holds it with the second "عربي"
    assert held(lines[2], "rtl") == ["عربيكلمات(Smith,2020(عربي"]


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
@pytest.mark.parametrize("look", list(AUTHORED_LINES))
def test_pdf_sets_a_citation_after_a_run_as_the_bidi_algorithm_does(
    engine: str, look: str,
) -> None:
    """Both engines set each line of :data:`AUTHORED_LINES` as Chromium does."""
    for line, expected in AUTHORED_LINES[look].items():
        shown = [squeezed(text) for _, _, text in
                 pdf_lines(authored("pdf", look, line, pdf_engine=engine))]
        assert expected in shown, (engine, line, shown)


@pytest.mark.browser
def test_chromium_sets_a_citation_after_a_run_as_the_pdfs_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The referee: Chromium draws each line of :data:`AUTHORED_LINES` so from the report's
    HTML and from the same HTML without its spans (the bidi algorithm alone)."""
    from renderers.writers.html import report
    from tests.helpers import chromium_browser

    pages: dict[str, tuple[bytes, str]] = {}
    for kind in ("held", "alone"):
        if kind == "alone":  # a citation held apart keeps its own dir, an isolate
            monkeypatch.setattr(report, "held_line_runs", lambda runs, *_: list(runs))
        for look, lines in AUTHORED_LINES.items():
            for n, (line, expected) in enumerate(lines.items()):
                pages[f"{look}-{n}-{kind}.html"] = (authored("html", look, line), expected)
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        for name, (html, expected) in pages.items():
            path = tmp_path / name
            path.write_bytes(html)
            page.goto(path.as_uri())
            assert squeezed(page.evaluate(PARAGRAPH_IN_DRAWN_ORDER)) == expected, name
