"""A name or title that reads against its CSL entry or citation is held in an isolate.

APA in an English document printed "Al-Khwarizmi, M., & محمد, أحمد (2022)." as
"Al-Khwarizmi, M., & (2022) .محمد, أحمد" and its citation as "(Al-Khwarizmi & 2022 ,محمد)":
the Arabic name joined the neutrals and digits after it. The same, mirrored, for a Latin name
in an Arabic report. Checked where the style's text is made, then on the page: both PDF
engines, LibreOffice (DOCX, PPTX) and Chromium, by where each word is drawn.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from citations.pool import SourcePool
from renderers.api import build_options, prepare
from renderers.document import Cite, Emph, Link, Text, iter_inlines, plain_text
from renderers.pipeline import Session
from renderers.resolve import ResolvedDocument
from renderers.styles.bidi import cite_base, entry_base, isolate_units, mark_units, own_base
from renderers.styles.markup import (
    closing,
    item_prefix,
    link_title,
    parse_marked,
    strip_marks,
    unit,
)
from renderers.text import text_direction
from renderers.writers.common import cite_direction
from tests.helpers import convert_all_with_libreoffice, pdf_lines

RLI, LRI, PDI = "\u2067", "\u2066", "\u2069"
NAME = "محمد, أحمد"
ROWS: list[dict[str, Any]] = [
    {"sid": 1, "title": "Algebra and its history", "url": "https://ex.org/a",
     "published_at": "2022-01-01", "source_type": "book",
     "authors": ["Al-Khwarizmi, Muhammad", "محمد, أحمد"], "publisher": "دار النشر"},
    {"sid": 2, "title": "تاريخ الجبر", "url": "https://ex.org/b",
     "published_at": "2021-01-01", "source_type": "book",
     "authors": ["حسن, علي", "Smith, John"], "publisher": "Oxford Press"},
    {"sid": 3, "title": "الجبر الحديث", "url": "https://ex.org/c",
     "published_at": "2020-01-01", "source_type": "book",
     "authors": ["Smith, John", "حسن, علي"], "publisher": "Oxford Press"},
]
POOL = SourcePool.from_rows(ROWS)
ENGLISH = "# T\n\nAlgebra grew [[S:1]] and more [[S:2]] text [[S:3]].\n"
ARABIC = "# ت\n\nنما علم الجبر [[S:1]] ثم [[S:2]] نص [[S:3]].\n"


def styled(content: str, **options: Any) -> ResolvedDocument:
    return prepare(content, sources_pool=POOL, options=build_options(csl="apa", **options)).rdoc


def cite_texts(rdoc: ResolvedDocument) -> list[str]:
    return [plain_text(n.children) for n in iter_inlines(rdoc.document.blocks)
            if isinstance(n, Cite)]


def entry_texts(rdoc: ResolvedDocument) -> dict[int, str]:
    return {entry.number: plain_text(entry.formatted) for entry in rdoc.entries}


# ---------------------------------------------------------------- the style's text


def test_an_item_reading_as_its_document_is_left_as_it_is() -> None:
    item = {"title": "Solar", "author": [{"family": "Smith", "given": "John"}],
            "publisher": "Oxford"}
    assert mark_units(item, "ltr") is item
    marked = mark_units({**item, "publisher": "دار النشر"}, "ltr")
    assert strip_marks(marked["publisher"]) == "دار النشر" and marked["publisher"] != "دار النشر"
    assert strip_marks(marked["author"][0]["family"]) == "Smith"


def test_the_parts_of_one_name_are_one_isolate_and_the_next_name_another() -> None:
    text = (f"{unit('Al-Khwarizmi', 0)}, {unit('M.', 0)}, & {unit('محمد', 1)}, "
            f"{unit('أحمد', 1)}, & {unit('حسن', 2)} (2022). {unit('Algebra', 3)}.")
    assert isolate_units(text, "ltr") == (
        f"Al-Khwarizmi, M., & {RLI}محمد, أحمد{PDI}, & {RLI}حسن{PDI} (2022). Algebra.")
    assert isolate_units(text, "rtl") == (
        f"{LRI}Al-Khwarizmi, M.{PDI}, & محمد, أحمد, & حسن (2022). {LRI}Algebra{PDI}.")
    assert isolate_units("(Smith, 2024)", "rtl") == "(Smith, 2024)"


def test_the_names_of_two_items_of_a_citation_are_two_isolates() -> None:
    """Each item numbers its units from 0: the first authors of two items share a number."""
    text = (f"({item_prefix(1)}{unit('محمد', 0)}, 2022{closing('item')}; "
            f"{item_prefix(2)}{unit('حسن', 0)}, 2021{closing('item')})")
    shown = plain_text(parse_marked(isolate_units(text, "ltr")).inlines)
    assert shown == f"({RLI}محمد{PDI}, 2022; {RLI}حسن{PDI}, 2021)"


def test_a_citation_reads_as_its_document_when_it_holds_a_letter_of_it() -> None:
    assert cite_base("(Smith & محمد, 2022)", "ltr") == "ltr"
    assert cite_base("(محمد & Smith, 2022)", "ltr") == "ltr"
    assert cite_base("(محمد, 2022)", "ltr") == "rtl"  # held apart whole, as it was
    assert cite_base("(IEA, 2024)", "rtl") == "ltr"
    assert own_base("“عنوان,” https://ex.org", "ltr") == "rtl"  # a note: by its first letter


def test_an_entry_reads_as_its_list_or_in_a_right_to_left_list_as_it_starts() -> None:
    assert entry_base("محمد (2022). Title.", "ltr") == "ltr"
    assert entry_base("Smith (2022). عنوان.", "rtl") == "ltr"
    assert entry_base("(2022).", "rtl") == "rtl"


def test_a_direction_skips_what_an_isolate_holds() -> None:
    assert text_direction(f"({RLI}محمد{PDI}, 2022)") is None
    assert text_direction(f"{RLI}محمد{PDI} & Smith") == "ltr"
    assert text_direction(f"{LRI}Smith{PDI} و محمد") == "rtl"


def test_an_english_entry_and_citation_isolate_the_arabic_names() -> None:
    rdoc = styled(ENGLISH)
    entries = entry_texts(rdoc)
    assert f"Al-Khwarizmi, M., & {RLI}{NAME}{PDI}. (2022)." in entries[1]
    assert f"{RLI}دار النشر{PDI}." in entries[1]
    assert entries[2].startswith(f"{RLI}حسن, علي{PDI}, & Smith, J. (2021). {RLI}تاريخ الجبر{PDI}")
    assert cite_texts(rdoc)[:2] == [f"(Al-Khwarizmi & {RLI}محمد{PDI}, 2022)",
                                f"({RLI}حسن{PDI} & Smith, 2021)"]


def test_a_citation_opening_with_an_isolated_name_reads_as_its_line() -> None:
    """"(حسن & Smith, 2021)" read right to left as a whole, as its first letter is Arabic:
    "(2021 ,Smith & حسن)" in an English line. The isolated name leaves it the line's."""
    rdoc = styled(ENGLISH)
    second = [n for n in iter_inlines(rdoc.document.blocks) if isinstance(n, Cite)][1]
    assert cite_direction([second], "ltr") is None


def test_an_arabic_report_isolates_the_latin_names_of_its_citations() -> None:
    rdoc = styled(ARABIC)
    assert cite_texts(rdoc)[:2] == [f"({LRI}Al-Khwarizmi{PDI} & محمد, 2022)",
                                f"(حسن & {LRI}Smith{PDI}, 2021)"]
    entries = entry_texts(rdoc)  # a Latin entry of the Arabic list: its Arabic words isolated
    assert f"Al-Khwarizmi, M., & {RLI}{NAME}{PDI}. (2022)." in entries[1]
    assert entries[2].startswith("حسن, علي, & ")  # an Arabic entry: its Latin name isolated
    assert f"{LRI}Smith, J.{PDI}" in entries[2]


def test_documents_of_one_direction_are_formatted_as_they_were() -> None:
    pool = SourcePool.from_rows([{**ROWS[0], "authors": ["Smith, John"], "publisher": "Oxford"}])
    rdoc = prepare(ENGLISH.replace(" and more [[S:2]]", ""), sources_pool=pool,
                   options=build_options(csl="apa")).rdoc
    assert entry_texts(rdoc)[1].startswith("Smith, J. (2022). ")
    assert "\u2066" not in str(rdoc.entries) and RLI not in str(rdoc.entries)


def test_works_of_one_arabic_author_get_year_suffixes_whatever_their_places() -> None:
    rows = [{"sid": n, "title": f"Work {n}", "published_at": "2020", "source_type": "book",
             "authors": authors} for n, authors in
            ((1, ["محمد, أحمد"]), (2, ["محمد, أحمد"]))]
    rdoc = prepare("# T\n\nA [[S:1]] B [[S:2]].\n", sources_pool=SourcePool.from_rows(rows),
                   options=build_options(csl="apa")).rdoc
    assert [text.endswith(("2020a)", "2020b)")) for text in cite_texts(rdoc)] == [True, True]


def test_a_latin_given_name_in_an_arabic_report_keeps_its_initial() -> None:
    assert f"{LRI}Smith, J.{PDI}" in entry_texts(styled(ARABIC))[2]


def test_an_isolated_italic_title_is_still_linked() -> None:
    inlines = (Text("Name. "), Emph((Text(f"{RLI}عنوان{PDI}"),)), Text(". Publisher."))
    linked = link_title(inlines, "عنوان", "https://ex.org/a")
    assert isinstance(linked[1], Link) and linked[1].children == (inlines[1],)


# ---------------------------------------------------------------- on the page


def rendered(fmt: str, content: str, **options: Any) -> bytes:
    return Session(prepare(content, sources_pool=POOL,
                           options=build_options(csl="apa", **options))).artifact(fmt).data


def order(lines: list[tuple[float, float, str]], key: str, *words: str) -> list[int]:
    """Where each of ``words`` is drawn (its first character, from the left) in the 60
    characters from ``key`` on, as drawn; an Arabic word is found as drawn (its letters from
    the right)."""
    line = next(text for _, _, text in lines if key in text)
    window = line[line.find(key):][:60]
    drawn = [word[::-1] if text_direction(word) == "rtl" else word for word in words]
    places = [window.find(word) for word in drawn]
    assert -1 not in places, (window, drawn)
    return places


def check_english(lines: list[tuple[float, float, str]]) -> None:
    """Left to right: "&", then the Arabic name (family, given), then the year."""
    amp, family, given, year = order(lines, "M., &", "&", "محمد", "أحمد", "2022")
    assert amp < given < family < year, lines  # the name reads right to left in its place
    first, name, cited = order(lines, "(Al-Khwarizmi", "Al-Khwarizmi", "محمد", "2022")
    assert first < name < cited, lines
    # an Arabic name, digits and an Arabic title after Latin words: each in its place (held
    # as one run, WeasyPrint had set the title left of the name)
    amp, family, given, year, last, title = order(lines, "Smith, J., &", "&", "حسن", "علي",
                                                  "2020", "الحديث", "الجبر")
    assert amp < given < family < year < last < title, lines


def check_arabic(lines: list[tuple[float, float, str]]) -> None:
    """The citation after "ثم" (at its left) reads right to left: the Latin name right of the
    Arabic one, the year at the left."""
    year, name, latin = order(lines, "ثم"[::-1], "2022", "محمد", "Al-Khwarizmi")
    assert year < name < latin, lines


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_pdf_draws_each_name_in_its_place(engine: str) -> None:
    check_english(pdf_lines(rendered("pdf", ENGLISH, pdf_engine=engine)))
    check_arabic(pdf_lines(rendered("pdf", ARABIC, pdf_engine=engine)))


@pytest.mark.libreoffice
def test_libreoffice_draws_each_name_in_its_place(tmp_path: Path) -> None:
    paths = []
    for fmt in ("docx", "pptx"):
        path = tmp_path / f"english-{fmt}.{fmt}"
        path.write_bytes(rendered(fmt, ENGLISH))
        paths.append(path)
    for pdf in convert_all_with_libreoffice(paths, tmp_path):
        lines = pdf_lines(pdf.read_bytes())
        amp, family, given, year = order(lines, "M., &", "&", "محمد", "أحمد", "2022")
        assert amp < given < family < year, (pdf.name, lines)


@pytest.mark.browser
def test_chromium_draws_each_name_in_its_place(tmp_path: Path) -> None:
    from tests.helpers import chromium_browser

    path = tmp_path / "english.html"
    path.write_bytes(rendered("html", ENGLISH))
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(path.as_uri())
        places = page.evaluate(
            "(words) => { const li = document.querySelector('#sources li');"
            " const walker = document.createTreeWalker(li, NodeFilter.SHOW_TEXT);"
            " const found = {}; let node;"
            " while ((node = walker.nextNode())) { for (const w of words) {"
            "  const i = node.data.indexOf(w); if (i >= 0 && !(w in found)) {"
            "   const r = document.createRange(); r.setStart(node, i);"
            "   r.setEnd(node, i + w.length); found[w] = r.getBoundingClientRect().left; } } }"
            " return words.map(w => found[w]); }", ["&", "محمد", "أحمد", "2022"])
    amp, family, given, year = places
    assert amp < given < family < year, places
