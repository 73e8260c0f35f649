"""citeproc-py's departures from CSL that :mod:`renderers.styles.fixes` corrects, seen in the
files a render writes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from citations.model import Source
from renderers.api import render
from renderers.document import Cite, iter_inlines, plain_text
from renderers.options import build_options
from renderers.pipeline import prepare
from renderers.styles.catalog import styles_dir
from renderers.styles.fixes import (
    given_initials,
    merged_seams,
    ordinal_suffix,
    punctuation_in_quotes,
    range_end,
    title_case,
)
from renderers.styles.markup import closing
from renderers.styles.processor import year_suffix

#: Authors in scripts without letter case, and a lower-case given name.
UNCASED_POOL: list[dict[str, Any]] = [
    {"sid": 1, "title": "风能报告", "url": "https://example.cn/wind", "author": "王, 小明",
     "published_at": "2023"},
    {"sid": 2, "title": "太阳能成本", "url": "https://example.cn/solar",
     "authors": [{"family": "李", "given": "华"}], "published_at": "2022"},
    {"sid": 3, "title": "דו\"ח אנרגיה", "url": "https://example.co.il/x", "author": "כהן, דוד",
     "published_at": "2021"},
    {"sid": 4, "title": "Mixed names", "url": "https://example.com/m", "published_at": "2019",
     "authors": [{"family": "Da Silva", "given": "jean-luc"},
                 {"family": "Smith", "given": "John Paul"}]},
]
UNCASED_TEXT = "Wind.[[S:1]] Sun.[[S:2]] Energy.[[S:3]] Names.[[S:4]]\n"


def rendered_md(tmp_path: Path, content: str, pool: list[dict[str, Any]], csl: str) -> str:
    render(content, tmp_path, name="styled", formats=["md"], sources_pool=pool, csl=csl)
    return (tmp_path / "styled.md").read_text("utf-8")


@pytest.mark.parametrize(
    ("given", "mark", "hyphenate", "expected"),
    [
        ("John Paul", ". ", True, "J. P."),
        ("John Paul", ".", True, "J.P."),
        ("John Paul", "", False, "JP"),
        ("Jean-Paul", ". ", True, "J.-P."),
        ("Jean-Paul", "", False, "JP"),
        ("J.R.R.", ". ", True, "J. R. R."),
        ("Ludwig van", ". ", True, "L. van"),
        ("jean-luc", ". ", True, "jean-luc"),
        ("jean-luc", "", False, "jean-luc"),
        ("小明", ". ", True, "小明"),
        ("דוד", ". ", True, "דוד"),
        ("John 小", ". ", True, "J. 小"),
    ],
)
def test_given_initials(given: str, mark: str, hyphenate: bool, expected: str) -> None:
    assert given_initials(given, mark, hyphenate=hyphenate) == expected


@pytest.mark.parametrize(
    ("csl", "entries"),
    [
        ("apa", ["王小明. (2023).", "李华. (2022).", "כהן, דוד. (2021).",
                 "Da Silva, jean-luc, & Smith, J. P. (2019)."]),
        ("ieee", ["王小明, “风能报告", "李华, “太阳能成本", "דוד כהן, “דו\"ח",
                  "jean-luc Da Silva and J. P. Smith, “Mixed names"]),
        ("harvard", ["王小明 (2023)", "李华 (2022)", "כהן, דוד (2021)"]),
        ("nature", ["王小明. 风能报告.", "李华. 太阳能成本.", "כהן, דוד. דו\"ח"]),
        ("vancouver", ["王小明. 风能报告", "李华. 太阳能成本", "Da Silva jean-luc, Smith JP."]),
    ],
)
def test_names_without_letter_case_are_not_initialised(
    tmp_path: Path, csl: str, entries: list[str]
) -> None:
    """A Chinese, Japanese or Korean name is shown as its script writes it, family name first
    with no space (as citeproc-js shows it) in every style; other names keep the style's order,
    without initials where their script has no letter case."""
    text = rendered_md(tmp_path, UNCASED_TEXT, UNCASED_POOL, csl)
    text = re.sub("&#x206[6-9];", "", text)  # a Hebrew name's isolate (styles/bidi.py) aside
    for entry in entries:
        assert entry in text, text
    assert ". 小明" not in text and " . " not in text and "小明 王" not in text, text


def test_family_first_names_stay_whole_in_every_script_that_writes_them_so() -> None:
    from renderers.styles.items import csl_item

    source = Source(sid=1, title="T", extra={"authors": [
        {"family": "山田", "given": "太郎"}, {"family": "김", "given": "민수"}, "王, 小明",
        {"family": "Smith", "given": "小明"}, {"family": "王", "given": "Ming"}]})
    assert csl_item(source)["author"] == [
        {"literal": "山田太郎"}, {"literal": "김민수"}, {"literal": "王小明"},
        {"family": "Smith", "given": "小明"}, {"family": "王", "given": "Ming"}]


def docx_footnotes(path: Path) -> str:
    """The text of a DOCX file's footnotes, one line per footnote."""
    import re
    import zipfile

    xml = zipfile.ZipFile(path).read("word/footnotes.xml").decode("utf-8")
    notes = re.findall(r"<w:footnote\b.*?</w:footnote>", xml, re.S)
    return "\n".join("".join(re.findall(r"<w:t(?: [^>]*)?>([^<]*)</w:t>", n)) for n in notes)


def test_a_repeated_mark_across_span_ends_is_dropped() -> None:
    end = closing("item") + closing("i")
    assert merged_seams(f"n.d.{end}.") == f"n.d.{end}"
    assert merged_seams(f"n.d.{end},") == f"n.d.{end},"  # only the same mark repeats
    # a title's own "?" or "!" ends the sentence: no period after it
    assert merged_seams(f"Title?{end}. (2024)") == f"Title?{end} (2024)"
    assert merged_seams("Why not! 2024.") == "Why not! 2024."
    assert merged_seams("Why not!. 2024.") == "Why not! 2024."
    assert merged_seams("https://a.example/?.x and ?..") == "https://a.example/?.x and ?.."
    assert merged_seams("Ellipsis...") == "Ellipsis..."  # the processor's own seams untouched


UNDATED_POOL = [{"sid": 1, "title": "No URL source"},
                {"sid": 2, "title": "Undated page", "url": "https://example.com/undated"}]
UNDATED_TEXT = "One.[[S:1]] Two.[[S:2]] Again.[[S:1]]\n"


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_notes_end_with_one_period_where_the_item_span_closes(
    tmp_path: Path, engine: str
) -> None:
    from tests.helpers import pdf_text

    render(UNDATED_TEXT, tmp_path, formats=["html", "docx", "pdf"], sources_pool=UNDATED_POOL,
           csl="chicago-note", pdf_engine=engine)
    html = (tmp_path / "report.html").read_text("utf-8")
    shown = {
        "html": html,
        "docx": docx_footnotes(tmp_path / "report.docx"),
        "pdf": pdf_text(tmp_path / "report.pdf"),
    }
    for name, text in shown.items():
        assert "n.d.." not in text, (name, text)
        assert "n.d." in text, (name, text)
    notes = [line.strip() for line in shown["docx"].splitlines() if line.strip()]
    assert notes == ["“No URL Source,” n.d.", "“Undated Page,” https://example.com/undated.",
                     "“No URL Source.”"], notes


@pytest.mark.parametrize(
    ("given", "mark", "expected"),
    [("Jane", ". ", "Jane"), ("James T", ". ", "James T."), ("J.R.R.", ". ", "J. R. R."),
     ("Jean-Paul", ". ", "Jean-Paul"), ("John Paul", "", "John Paul"), ("小明", ". ", "小明")],
)
def test_given_names_are_whole_without_initialize(given: str, mark: str, expected: str) -> None:
    assert given_initials(given, mark, hyphenate=True, initialize=False) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("“Wind report”. [Online]", "“Wind report.” [Online]"),
        ("“Solar Costs”, 2024", "“Solar Costs,” 2024"),
        ("“Why?”.", "“Why?”"),
        (f"“Why?{closing('i')}”.", f"“Why?{closing('i')}”"),  # an italic end inside the quote
        ("“Why?”, 2024", "“Why?” 2024"),
        ("“Acme Inc.”.", "“Acme Inc.”"),
        ("“Acme Inc.”, 2024", "“Acme Inc.,” 2024"),
        (f"“Costs”{closing('item')}.", f"“Costs.”{closing('item')}"),
        ("“Costs”; “Prices”: 2024", "“Costs”; “Prices”: 2024"),
    ],
)
def test_punctuation_goes_inside_the_closing_quote(text: str, expected: str) -> None:
    assert punctuation_in_quotes(text, "”") == expected


FULL_NAMES_POOL: list[dict[str, Any]] = [
    {"sid": 1, "title": "Solar Costs", "url": "https://example.com/solar", "published_at": "2024",
     "authors": [{"family": "Doe", "given": "Jane"}, {"family": "Roe", "given": "Richard"}]},
    {"sid": 2, "title": "Wind report", "url": "https://example.com/wind",
     "author": "Kirk, James T", "published_at": "2020"},
]
FULL_NAMES_TEXT = "Solar.[[S:1]] Wind.[[S:2]] Again.[[S:1]]\n"


def test_chicago_names_are_in_full_and_punctuation_goes_inside_quotes(tmp_path: Path) -> None:
    render(FULL_NAMES_TEXT, tmp_path, formats=["html", "md", "docx"],
           sources_pool=FULL_NAMES_POOL, csl="chicago-note")
    notes = docx_footnotes(tmp_path / "report.docx").split("\n")
    assert [n.strip() for n in notes if n.strip()] == [
        "Jane Doe and Richard Roe, “Solar Costs,” 2024, https://example.com/solar.",
        "James T. Kirk, “Wind Report,” 2020, https://example.com/wind.",
        "Doe and Roe, “Solar Costs.”",
    ]
    html = (tmp_path / "report.html").read_text("utf-8")
    assert "Jane Doe and Richard Roe, “Solar Costs,” 2024, <a" in html
    markdown = (tmp_path / "report.md").read_text("utf-8")
    assert "Doe, Jane, and Richard Roe. “Solar Costs.” 2024." in markdown
    assert "Kirk, James T. “Wind Report.” 2020." in markdown


def test_ieee_puts_the_period_inside_the_title_quotes(tmp_path: Path) -> None:
    text = rendered_md(tmp_path, FULL_NAMES_TEXT, FULL_NAMES_POOL, "ieee")
    assert "J. Doe and R. Roe, “Solar Costs.” \\[Online\\]" in text, text
    assert "J. T. Kirk, “Wind report.” \\[Online\\]" in text, text


def test_a_locale_without_punctuation_in_quote_leaves_it_outside(tmp_path: Path) -> None:
    british = (styles_dir() / "ieee.csl").read_text("utf-8").replace(
        'class="in-text"', 'class="in-text" default-locale="en-GB"', 1)
    assert 'default-locale="en-GB"' in british
    (tmp_path / "british.csl").write_text(british, "utf-8")
    text = rendered_md(tmp_path, FULL_NAMES_TEXT, FULL_NAMES_POOL, "british.csl")
    assert "J. Doe and R. Roe, ‘Solar Costs’. \\[Online\\]" in text, text


#: A journal article and a book, with every field pandoc's citeproc needs for the entries below.
BIBLIOGRAPHIC_POOL: list[dict[str, Any]] = [
    {"sid": 1, "title": "Attention is all you need", "source_type": "article",
     "authors": [{"family": "Vaswani", "given": "Ashish"}], "journal": "NeurIPS", "volume": "30",
     "issue": "2", "page": "5998-6008", "doi": "10.5555/3295222.3295349", "published_at": "2017"},
    {"sid": 2, "title": "Origins", "source_type": "book", "author": "van Gogh, Vincent",
     "edition": "2", "publisher": "Penguin", "publisher_place": "London", "published_at": "2001"},
]


@pytest.mark.parametrize(
    ("csl", "entries"),
    [
        ("apa", ["[^2]: van Gogh, V. (2001). *Origins* (2nd ed.). Penguin.",
                 "[^1]: Vaswani, A. (2017). Attention is all you need. *NeurIPS*, *30*(2), "
                 "5998–6008. <https://doi.org/10.5555/3295222.3295349>"]),
        ("ieee", ["[^1]: A. Vaswani, “Attention is all you need,” *NeurIPS*, vol. 30, no. 2, "
                  "pp. 5998–6008, 2017, doi: [10.5555/3295222.3295349]"
                  "(https://doi.org/10.5555/3295222.3295349).",
                  "[^2]: V. van Gogh, *Origins*, 2nd ed. London: Penguin, 2001."]),
        ("chicago-author-date", [
            "[^2]: Gogh, Vincent van. 2001. *Origins*. 2nd ed. Penguin.",
            "[^1]: Vaswani, Ashish. 2017. “Attention Is All You Need.” *NeurIPS* 30 (2): "
            "5998–6008. <https://doi.org/10.5555/3295222.3295349>."]),
        # Nature prints no DOI: the title links to it, as it would to a URL.
        ("nature", ["[^1]: Vaswani, A. [Attention is all you need]"
                    "(https://doi.org/10.5555/3295222.3295349). *NeurIPS* **30**, 5998–6008 "
                    "(2017).",
                    "[^2]: van Gogh, V. *Origins*. (Penguin, London, 2001)."]),
    ],
)
def test_entries_show_volume_issue_pages_doi_edition_and_place_as_citeproc_does(
    tmp_path: Path, csl: str, entries: list[str]
) -> None:
    # The entries pandoc --citeproc writes for the same items (its CSL-JSON: container-title,
    # volume, issue, page, DOI, edition, publisher-place), in the style's order.
    text = rendered_md(tmp_path, "A[[S:1]] B[[S:2]]\n", BIBLIOGRAPHIC_POOL, csl)
    assert text.split("## Sources\n\n", 1)[1].splitlines() == entries


#: Family names with particles (and one in another language's title).
PARTICLE_POOL: list[dict[str, Any]] = [
    {"sid": 1, "title": "Éléments de géométrie", "source_type": "book",
     "authors": ["de la Vallée Poussin, Charles"], "publisher": "Gauthier-Villars",
     "published_at": "1905"},
    {"sid": 2, "title": "Letters", "source_type": "book", "author": "van Gogh, Vincent",
     "publisher": "Penguin", "published_at": "1996"},
    {"sid": 3, "title": "Heat", "source_type": "book", "author": "Fourier, Joseph",
     "publisher": "Didot", "published_at": "1822"},
    {"sid": 4, "title": "Théorie analytique de la chaleur", "source_type": "book",
     "author": "Fourier, Joseph", "publisher": "Didot", "published_at": "1822",
     "language": "fr"},
]
PARTICLE_TEXT = "A[[S:1]] B[[S:2]] C[[S:3]] D[[S:4]]\n"


def test_chicago_demotes_non_dropping_particles_in_display_and_sort(tmp_path: Path) -> None:
    # Chicago leaves demote-non-dropping-particle at its default, display-and-sort: pandoc and
    # citeproc-js file "Vallée Poussin, Charles de la" under V and "Gogh, Vincent van" under G;
    # the citation keeps the particle ("de la Vallée Poussin 1905").
    text = rendered_md(tmp_path, PARTICLE_TEXT, PARTICLE_POOL, "chicago-author-date")
    assert "A (de la Vallée Poussin 1905[^1]) B (van Gogh 1996[^2])" in text
    assert text.split("## Sources\n\n", 1)[1].splitlines() == [
        "[^3]: Fourier, Joseph. 1822a. *Heat*. Didot.",  # two works of 1822: a, b
        "[^4]: Fourier, Joseph. 1822b. *Théorie analytique de la chaleur*. Didot.",
        "[^2]: Gogh, Vincent van. 1996. *Letters*. Penguin.",
        "[^1]: Vallée Poussin, Charles de la. 1905. *Éléments de Géométrie*. Gauthier-Villars.",
    ]
    notes = rendered_md(tmp_path / "n", PARTICLE_TEXT, PARTICLE_POOL, "chicago-note")
    assert "[^1]: Vallée Poussin, Charles de la. *Éléments de Géométrie*. Gauthier-Villars, " \
           "1905." in notes


def test_apa_keeps_the_particle_in_front_as_the_style_says(tmp_path: Path) -> None:
    # APA sets demote-non-dropping-particle="never": "van Gogh, V." and "de la Vallée
    # Poussin, C.", filed by the particle.
    entries = rendered_md(tmp_path, PARTICLE_TEXT, PARTICLE_POOL, "apa").split(
        "## Sources\n\n", 1)[1].splitlines()
    assert entries[0] == "[^1]: de la Vallée Poussin, C. (1905). *Éléments de géométrie*. " \
                         "Gauthier-Villars."
    assert entries[-1] == "[^2]: van Gogh, V. (1996). *Letters*. Penguin."


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("éléments de géométrie", "Éléments de Géométrie"),
        ("what solar panels are made of", "What Solar Panels Are Made Of"),
        ("the sun: a history of the world", "The Sun: A History of the World"),
        ("studies in van gogh versus the rest", "Studies in van Gogh versus the Rest"),
        ("(new) results from iPhone sales", "(New) Results from iPhone Sales"),
        ("U.S. energy in the 2020s", "U.S. Energy in the 2020s"),
    ],
)
def test_title_case_keeps_stop_words_lower_case(title: str, expected: str) -> None:
    from citeproc.string import String

    assert title_case(String(title)) == expected


def test_title_case_applies_to_english_titles_only(tmp_path: Path) -> None:
    # citeproc-js title-cases an item whose language is English or unset; "fr" is kept as
    # written ("Théorie analytique de la chaleur"), as the Chicago entries above show.
    text = rendered_md(tmp_path, PARTICLE_TEXT, PARTICLE_POOL, "chicago-note")
    assert "*Théorie analytique de la chaleur*" in text
    assert "*Éléments de Géométrie*" in text


def _ordinal_terms(locale: str) -> list[Any]:
    """The ordinal terms of citeproc-py's locale file ``locale``."""
    from citeproc import LOCALES_PATH
    from lxml import etree

    root = etree.parse(str(Path(LOCALES_PATH) / f"locales-{locale}.xml")).getroot()
    return [t for t in root.iter("{*}term") if t.get("name", "").startswith("ordinal")]


@pytest.mark.parametrize(("locale", "gender", "suffixes"), [
    ("en-US", None, {1: "st", 2: "nd", 3: "rd", 4: "th", 11: "th", 12: "th", 13: "th", 21: "st",
                     22: "nd", 101: "st", 111: "th", 112: "th", 123: "rd"}),
    ("de-DE", None, {1: ".", 3: ".", 22: "."}),
    # ordinal-01 has only gendered variants, matched by the whole number
    ("fr-FR", "masculine", {1: "ᵉʳ", 2: "ᵉ", 21: "ᵉ"}),
    ("fr-FR", "feminine", {1: "ʳᵉ", 2: "ᵉ"}),
    ("fr-FR", None, {1: "ᵉ"}),
    # ordinal-00 by the whole number, ordinal-02 by the last two digits, ordinal-10..19
    ("nl-NL", None, {0: "de", 1: "ste", 2: "de", 8: "ste", 12: "de", 20: "ste", 102: "de"}),
])
def test_ordinal_suffixes_follow_the_match_rules_of_csl(
    locale: str, gender: str | None, suffixes: dict[int, str]
) -> None:
    terms = _ordinal_terms(locale)
    assert {n: ordinal_suffix(n, terms, gender) for n in suffixes} == suffixes


@pytest.mark.parametrize(("lang", "edition"), [("", "(2nd ed.)"), ("de", "(2. Aufl.)"),
                                                ("fr", "(2ᵉ éd.)"), ("nl", "(2de dr.)")])
def test_an_edition_takes_the_ordinal_of_the_documents_locale(
    tmp_path: Path, lang: str, edition: str
) -> None:
    """citeproc-py looked each ordinal term up through every locale: a German entry read
    "2nd Aufl." (en-US's ordinal-02 found before de-DE's ordinal)."""
    render("B[[S:2]]\n", tmp_path, name="styled", formats=["md"], sources_pool=BIBLIOGRAPHIC_POOL,
           csl="apa", lang=lang)
    entry = (tmp_path / "styled.md").read_text("utf-8").split("[^1]: ", 1)[1]
    assert f"*Origins* {edition}" in entry, entry

#: A style whose dates show the day as an ordinal ("1st March 2025").
DAY_ORDINAL_STYLE = """<?xml version="1.0" encoding="utf-8"?>
<style xmlns="http://purl.org/net/xbiblio/csl" class="in-text" version="1.0">
  <info><title>Day ordinals</title><id>day-ordinals</id>
    <updated>2025-01-01T00:00:00+00:00</updated></info>
  <citation><layout><text variable="citation-number"/></layout></citation>
  <bibliography><layout>
    <text variable="title" suffix=", "/>
    <date variable="issued"><date-part name="day" form="ordinal" suffix=" "/>
      <date-part name="month" suffix=" "/><date-part name="year"/></date>
  </layout></bibliography>
</style>
"""


@pytest.mark.parametrize(("lang", "days"), [
    ("", ["Day one, 1st March 2025", "Day two, 2nd March 2025"]),
    # French months are masculine: "1er", and only the first day is an ordinal
    ("fr", ["Day one, 1ᵉʳ mars 2025", "Day two, 2 mars 2025"]),
])
def test_a_day_ordinal_takes_the_gender_of_the_month(
    tmp_path: Path, lang: str, days: list[str]
) -> None:
    (tmp_path / "days.csl").write_text(DAY_ORDINAL_STYLE, "utf-8")
    pool = [{"sid": n, "title": f"Day {word}", "published_at": f"2025-03-0{n}"}
            for n, word in ((1, "one"), (2, "two"))]
    render("A[[S:1]] B[[S:2]]\n", tmp_path, name="styled", formats=["md"], sources_pool=pool,
           csl="days.csl", base_dir=tmp_path, lang=lang)
    entries = (tmp_path / "styled.md").read_text("utf-8").split("## Sources\n\n", 1)[1]
    assert [line.split(": ", 1)[1] for line in entries.splitlines()] == days


def test_no_period_after_a_titles_own_question_mark_in_a_rendered_entry(tmp_path: Path) -> None:
    """APA italicizes a web page's title and puts a period after it: after a title's "?" the
    period goes, as citeproc-js leaves it out; the Markdown shows it as the reader sees it."""
    pool = [{"sid": 1, "title": "What is solar power?", "url": "https://example.org/solar",
             "published_at": "2024-05-08"}]
    render("# T\n\nSolar.[[S:1]]\n", tmp_path, sources_pool=pool, formats=["md"], csl="apa")
    text = (tmp_path / "report.md").read_text("utf-8")
    assert "*What is solar power?* (2024, May 8)." in text, text


@pytest.mark.parametrize(
    ("first", "last", "range_format", "expected"),
    [  # the examples of CSL 1.0.2, appendix V
        ("42", "45", "expanded", "45"), ("321", "28", "expanded", "328"),
        ("2787", "2816", "expanded", "2816"),
        ("42", "45", "minimal", "5"), ("321", "328", "minimal", "8"),
        ("2787", "2816", "minimal", "816"), ("1", "12", "minimal", "12"),
        ("98", "102", "minimal", "102"), ("113", "129", "minimal", "29"),
        ("42", "45", "minimal-two", "45"), ("321", "328", "minimal-two", "28"),
        ("2787", "2816", "minimal-two", "816"), ("1", "12", "minimal-two", "12"),
        ("3", "10", "chicago-16", "10"), ("71", "72", "chicago-16", "72"),
        ("100", "104", "chicago-16", "104"), ("1100", "1123", "chicago-16", "1123"),
        ("107", "108", "chicago-16", "8"), ("1002", "1006", "chicago-16", "6"),
        ("321", "328", "chicago-16", "28"), ("1087", "1089", "chicago-16", "89"),
        ("1496", "1500", "chicago-16", "500"), ("11564", "11615", "chicago-16", "615"),
        ("12991", "13001", "chicago-16", "3001"),
        ("1496", "1504", "chicago-15", "1504"), ("2787", "2816", "chicago", "2816"),
        ("S12", "S15", "minimal", "S15"), ("5998", "6008", None, "6008"),
    ],
)
def test_page_ranges_follow_the_page_range_formats_of_csl(
    first: str, last: str, range_format: str | None, expected: str
) -> None:
    assert range_end(first, last, range_format) == expected


#: A short journal article (pages 1–12), a newspaper article, and an article cited twice.
SERIAL_POOL: list[dict[str, Any]] = [
    {"sid": 1, "title": "Heat pumps", "source_type": "article", "author": "Smith, Jane",
     "journal": "Energy Policy", "volume": "186", "pages": "1-12", "published_at": "2024-05"},
    {"sid": 2, "title": "Net zero explained", "source_type": "news", "author": "Harrabin, Roger",
     "container": "BBC News", "published_at": "2021-10-27"},
    {"sid": 3, "title": "Attention", "source_type": "article", "author": "Vaswani, Ashish",
     "journal": "NeurIPS", "volume": 30, "pages": "5998-6008", "published_at": "2017"},
]


def test_vancouver_prints_a_short_page_range_whole(tmp_path: Path) -> None:
    # NLM's minimal format drops only the digits both pages share: 1–12, 5998–6008 (citeproc-py
    # printed "1–2", comparing "1" with "12" digit by digit).
    text = rendered_md(tmp_path, "A[[S:1]] B[[S:3]]\n", SERIAL_POOL, "vancouver")
    assert "Energy Policy. 2024 May;186:1–12." in text
    assert "NeurIPS. 2017;30:5998–6008." in text


def test_chicago_prints_no_label_for_an_empty_edition(tmp_path: Path) -> None:
    # A cs:label renders only with its variable: no "Edition." after a newspaper's date and no
    # ", edition" in the short note of a journal article.
    content = "A[[S:1]] B[[S:2]] C[[S:1]]\n"
    text = rendered_md(tmp_path, content, SERIAL_POOL, "chicago-note")
    assert "edition" not in text.lower(), text
    assert "Harrabin, Roger. “Net Zero Explained.” *BBC News*, October 27, 2021." in text
    rdoc = prepare(content, sources_pool=SERIAL_POOL,
                   options=build_options(csl="chicago-note")).rdoc
    notes = [plain_text(n.children) for n in iter_inlines(rdoc.document.blocks)
             if isinstance(n, Cite)]
    assert notes[2] == "Smith, “Heat Pumps.”"


def test_a_citation_without_a_sort_keeps_the_order_given(tmp_path: Path) -> None:
    # Chicago author-date has no cs:sort in its citation: "[[S:3,1]]" cites Vaswani first, as
    # written (citeproc-py sorted the cites in bibliography order); APA sorts by author.
    content = "Both [[S:3,1]].\n"
    chicago = rendered_md(tmp_path / "c", content, SERIAL_POOL, "chicago-author-date")
    assert "(Vaswani 2017[^1]; Smith 2024[^2])" in chicago
    apa = rendered_md(tmp_path / "a", content, SERIAL_POOL, "apa")
    assert "(Smith, 2024[^2]; Vaswani, 2017[^1])" in apa


#: Two works of one author in one year, one by two authors that year, an author-less report
#: and a name with a particle.
SAME_YEAR_POOL: list[dict[str, Any]] = [
    {"sid": 1, "title": "Heat pump adoption", "source_type": "article", "author": "Smith, Jane",
     "journal": "Energy Policy", "published_at": "2024-05"},
    {"sid": 2, "title": "Annual report", "source_type": "report", "author": "Smith, Jane",
     "publisher": "Acme", "published_at": "2024"},
    {"sid": 3, "title": "Prices", "source_type": "article", "author": ["Smith, Jane", "Doe, John"],
     "journal": "Energy Policy", "published_at": "2024"},
    {"sid": 4, "title": "Internal cost review", "artifact_path": "review.pdf",
     "source_type": "file", "published_at": "2025"},
    {"sid": 5, "title": "Letters", "source_type": "book", "author": "van Gogh, Vincent",
     "publisher": "Penguin", "published_at": "1996"},
]
SAME_YEAR_TEXT = "A [[S:1]]. B [[S:2]]. C [[S:3]]. D [[S:4]]. E [[S:5]].\n"


@pytest.mark.parametrize(
    ("csl", "first", "second", "entries"),
    [
        ("apa", "(Smith, 2024b[^1])", "(Smith, 2024a[^2])",
         ["*Internal cost review*", "Smith, J. (2024a). *Annual report*", "Smith, J. (2024b). Heat",
          "Smith, J., & Doe, J. (2024)", "van Gogh"]),
        ("chicago-author-date", "(Smith 2024b[^1])", "(Smith 2024a[^2])",
         ["Gogh, Vincent van", "“Internal Cost Review.”", "Smith, Jane. 2024a. *Annual",
          "Smith, Jane. 2024b. “Heat", "Smith, Jane, and John Doe. 2024."]),
        ("harvard", "(Smith, 2024b[^1])", "(Smith, 2024a[^2])",
         ["van Gogh, V. (1996)", "“Internal cost review” (2025)", "Smith, J. (2024a) *Annual",
          "Smith, J. (2024b) “Heat", "Smith, J. and Doe, J. (2024)"]),
    ],
)
def test_same_author_same_year_works_get_year_suffixes_and_sort_as_citeproc_js(
    tmp_path: Path, csl: str, first: str, second: str, entries: list[str]
) -> None:
    # Year suffixes go in bibliography order (Annual report before Heat pump adoption); the
    # two-author work keeps its plain year. A quoted title files by its first word, and
    # Harvard (sort-only) files "van Gogh" under G: the orders citeproc-js gives.
    text = rendered_md(tmp_path, SAME_YEAR_TEXT, SAME_YEAR_POOL, csl)
    assert f"A {first}. B {second}." in text
    shown = text.split("## Sources\n\n", 1)[1].splitlines()
    assert len(shown) == len(entries)
    for line, start in zip(shown, entries, strict=True):
        assert line.split(": ", 1)[1].startswith(start), (line, start)


def test_year_suffixes_run_past_z() -> None:
    assert [year_suffix(i) for i in (0, 1, 25, 26, 27, 701, 702)] == [
        "a", "b", "z", "aa", "ab", "zz", "aaa"]


def test_a_quotation_in_a_quoted_title_takes_the_inner_quotes(tmp_path: Path) -> None:
    # IEEE and Chicago quote an article's title: its own quotation becomes ‘…’ (en-US inner
    # quotes), as citeproc-js writes it; an apostrophe stays as it is.
    pool = [{"sid": 1, "title": "“Net zero” by 2050: Europe’s plan", "source_type": "news",
             "author": "Harrabin, Roger", "container": "BBC News", "published_at": "2021-10-27"}]
    ieee = rendered_md(tmp_path / "i", "A[[S:1]]\n", pool, "ieee")
    assert "R. Harrabin, “‘Net zero’ by 2050: Europe’s plan,” *BBC News*" in ieee
    chicago = rendered_md(tmp_path / "c", "A[[S:1]]\n", pool, "chicago-author-date")
    assert "“‘Net Zero’ by 2050: Europe’s Plan.”" in chicago


@pytest.mark.parametrize(
    ("csl", "expected"),
    [
        ("apa", "(Smith, 2024a[^3], 2024b[^1]; Smith & Doe, 2024[^2])"),
        ("harvard", "(Smith, 2024a[^3], 2024b[^1]; Smith and Doe, 2024[^2])"),
        # no sort in Chicago's citation: the order written, each name group where it starts
        ("chicago-author-date", "(Smith 2024b[^1], 2024a[^3]; Smith and Doe 2024[^2])"),
    ],
)
def test_cites_of_the_same_names_are_grouped_with_the_names_once(
    tmp_path: Path, csl: str, expected: str
) -> None:
    # collapse="year": "(Smith, 2024a, 2024b)" (APA 7, 8.12), each year still linking its own
    # entry; two authors are other names and stand apart.
    text = rendered_md(tmp_path, "All [[S:1,3,2]].\n", SAME_YEAR_POOL, csl)
    assert f"All {expected}." in text, text
