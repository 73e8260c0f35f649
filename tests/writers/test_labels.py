"""The words citerender writes itself follow the document's declared language (renderers.labels):
section headings, the PDF footer, figure and table names, "(cont.)", back-link titles and an
image's fallback text, in every format; an explicit ``sources_heading`` wins; a detected or
unknown language keeps English."""

from __future__ import annotations

import zipfile
from pathlib import Path
from string import Formatter
from typing import Any

import pytest
from lxml import html as lxml_html
from pypdf import PdfReader

from citations.pool import SourcePool
from renderers.api import render
from renderers.labels import ENGLISH, LABELS, Labels, labels_for
from renderers.language import Language
from renderers.options import RenderOptions
from renderers.readers.markdown import read_markdown
from renderers.resolve import resolve
from renderers.writers.pptx.layout import build_deck
from renderers.writers.pptx.runs import cont_marker, continued_mark
from tests.helpers import convert_all_with_libreoffice, pdf_text

POOL: list[dict[str, Any]] = [
    {"sid": 1, "title": "Renewables 2024", "url": "https://www.iea.org/reports/renewables-2024",
     "published_at": "2024-10-09"},
    {"sid": 2, "title": "Grid study", "url": "https://example.org/grid"},
]

GERMAN = """# Energiebericht

Die Photovoltaik wächst schnell [[S:1]]. Siehe @fig:solar und @tbl:kosten.[^a]

[^a]: Eine Anmerkung des Autors.

![Solarzubau](https://example.org/solar.png){#fig:solar}

| Jahr | Kosten |
|------|--------|
| 2023 | 10 |

: Kosten pro Jahr {#tbl:kosten}

## Ausblick

Mehr Text [[S:2]]. {filler}
""".replace("{filler}", "Ein langer Satz über den Ausbau der Netze und Speicher. " * 70)

JAPANESE = """# エネルギー報告

太陽光発電は急速に成長している[[S:1]]。@fig:solar と @tbl:cost を参照。[^a]

[^a]: 著者による注。

![太陽光](https://example.org/solar.png){#fig:solar}

| 年 | 費用 |
|------|--------|
| 2023 | 10 |

: 年ごとの費用 {#tbl:cost}

## 見通し

追加の本文[[S:2]]。{filler}
""".replace("{filler}", "送電網と蓄電の拡大についての長い文です。" * 90)

#: Per language: the document, what a reader finds in every format (white space removed), in
#: the formats with Notes and contents sections, and where a slide is continued.
CASES = {
    "de": (GERMAN, ("Quellen", "Abbildung1", "Tabelle1", "[Bild:Solarzubau]"),
           ("Anmerkungen", "Inhalt"), "(Forts.)"),
    "ja": (JAPANESE, ("出典", "図1", "表1", "[画像:太陽光]"), ("注", "目次"), "（続き）"),
}
#: English words citerender writes itself, none of which a German or Japanese report may show.
ENGLISH_CHROME = ("Sources", "Notes", "Contents", "Figure", "Table", "Image", "Page", "cont.",
                  "Back to")


def squeezed(text: str) -> str:
    return "".join(text.split())


def html_text(path: Path) -> str:
    """The visible text of an HTML report and its link titles (the preview script aside)."""
    root = lxml_html.fromstring(path.read_bytes())
    for script in root.iter("script", "style"):
        script.drop_tree()
    titles = " ".join(element.get("title", "") for element in root.iter())
    return root.text_content() + " " + titles


def assert_localized(shown: str, words: tuple[str, ...], where: str) -> None:
    squeezed_text = squeezed(shown)
    assert all(word in squeezed_text for word in words), (where, words, shown[:2000])
    leftover = [word for word in ENGLISH_CHROME if word.replace(" ", "") in squeezed_text]
    assert not leftover, (where, leftover)


# ---------------------------------------------------------------- the sets


def test_a_declared_language_picks_its_set_by_primary_subtag_and_chinese_script() -> None:
    def words(tag: str, declared: bool = True) -> Labels:
        return labels_for(Language(tag, declared=declared))

    assert words("de").sources == "Quellen" and words("de-AT").sources == "Quellen"
    assert words("pt-BR") is LABELS["pt"] and words("no") is LABELS["nb"]
    assert words("zh") is LABELS["zh-Hans"] and words("zh-CN") is LABELS["zh-Hans"]
    assert words("zh-TW") is LABELS["zh-Hant"] and words("zh-Hant") is LABELS["zh-Hant"]
    assert words("yue") is LABELS["zh-Hant"]  # Cantonese is written in Traditional characters
    assert words("en-GB") is ENGLISH
    assert words("sw") is ENGLISH  # no set of its own
    assert words("de", declared=False) is ENGLISH  # detection only knows the script


def test_every_set_has_every_word_and_placeholder() -> None:
    required = {"de", "fr", "es", "it", "pt", "nl", "sv", "da", "nb", "fi", "pl", "cs", "ru", "uk",
                "el", "tr", "ar", "he", "fa", "hi", "ja", "zh-Hans", "zh-Hant", "ko"}
    assert required <= LABELS.keys()
    fields = {"page": {"page", "pages"}, "figure": {"number"}, "table": {"number"},
              "caption": {"name"}, "image_described": {"alt"}, "more": {"count"},
              "source": {"sid"}, "figures": {"numbers"}, "tables": {"numbers"},
              "equation": {"number"}, "equations": {"numbers"}, "listing": {"number"},
              "listings": {"numbers"}, "cited_page": {"pages"}, "cited_pages": {"pages"}}
    for name, words in LABELS.items():
        for field, text in vars(words).items():
            wanted = fields.get(field, set())
            used = {f for _, f, _, _ in Formatter().parse(text) if f is not None}
            assert used == wanted, (name, field, text)
            assert text.strip() or field == "space", (name, field)
        if name != "en":
            assert words.sources != ENGLISH.sources or name == "fr", name  # French: "Sources"
            assert words.page != ENGLISH.page, name


def test_right_to_left_words_are_marked_in_their_own_direction() -> None:
    """An Arabic "(cont.)" in a left-to-right paragraph, like an English one in an Arabic
    paragraph, is held between marks of its own direction; in its own direction it is bare."""
    arabic = continued_mark(LABELS["ar"])
    assert cont_marker(arabic, True) == arabic
    assert cont_marker(arabic, False) == "\u200f(تابع)\u200f "
    assert cont_marker(continued_mark(ENGLISH), True) == "\u200e(cont.)\u200e "


# ---------------------------------------------------------------- every format


@pytest.mark.slow
@pytest.mark.parametrize("lang", sorted(CASES))
def test_html_markdown_and_both_pdf_engines_speak_the_documents_language(
    tmp_path: Path, lang: str
) -> None:
    content, everywhere, sections, _ = CASES[lang]
    results = render(content, tmp_path / "w", sources_pool=POOL, formats=["html", "md", "pdf"],
                     lang=lang, toc=True)
    typst = render(content, tmp_path / "t", sources_pool=POOL, formats=["pdf"], lang=lang,
                   toc=True, pdf_engine="typst")
    for result in (*results, *typst):
        path = result.path
        if path.suffix == ".html":
            assert_localized(html_text(path), everywhere + sections, "html")
            words = LABELS[lang]
            titles = [a.get("title") for a in lxml_html.fromstring(path.read_bytes()).iter("a")
                      if "backlink" in (a.get("class") or "")]
            assert titles and set(titles) == {words.backlink, words.note_backlink}, titles
        elif path.suffix == ".md":  # Markdown's notes are footnotes, with no section heading
            unescaped = path.read_text("utf-8").replace("\\[", "[").replace("\\]", "]")
            assert_localized(unescaped, everywhere, "md")
        else:
            shown = pdf_text(path)
            where = f"pdf {path.parent.name}"
            assert_localized(shown, everywhere + sections, where)
            pages = shown.split("\f")
            for number, page in enumerate(pages, start=1):  # "Seite 2 von 3", "2 / 3 ページ"
                footer = LABELS[lang].page.format(page=number, pages=len(pages))
                assert squeezed(footer) in squeezed(page), (where, footer, page[-200:])


@pytest.mark.slow
@pytest.mark.libreoffice
def test_docx_and_pptx_speak_the_documents_language(tmp_path: Path) -> None:
    paths: list[Path] = []
    for lang, (content, *_) in sorted(CASES.items()):
        for result in render(content, tmp_path / lang, sources_pool=POOL, formats=["docx", "pptx"],
                             lang=lang, toc=True, name=lang):
            paths.append(result.path.rename(tmp_path / f"{lang}-{result.path.suffix[1:]}"
                                                       f"{result.path.suffix}"))
    for path, pdf in zip(paths, convert_all_with_libreoffice(paths, tmp_path), strict=True):
        lang = path.stem.split("-")[0]
        _, everywhere, sections, continued = CASES[lang]
        wanted = everywhere + sections + ((continued,) if path.suffix == ".pptx" else ())
        assert_localized(pdf_text(pdf), wanted, path.name)
        if path.suffix == ".docx":  # the back-links' tooltips
            xml = zipfile.ZipFile(path).read("word/document.xml").decode("utf-8")
            words = LABELS[lang]
            assert f'w:tooltip="{words.backlink}"' in xml
            assert f'w:tooltip="{words.note_backlink}"' in xml


# ---------------------------------------------------------------- the Sources heading


def test_an_explicit_sources_heading_wins_over_the_languages_word(tmp_path: Path) -> None:
    results = render(GERMAN, tmp_path, sources_pool=POOL, formats=["md", "html"], lang="de",
                     sources_heading="Literatur")
    for result in results:
        text = result.path.read_text("utf-8")
        assert "Literatur" in text and "Quellen" not in text, result.path.name


@pytest.mark.parametrize(("lang", "heading"), [("", "Sources"), ("sw", "Sources"),
                                                ("de", "Quellen"), ("ar", "المصادر")])
def test_the_sources_heading_is_the_declared_languages_word(
    tmp_path: Path, lang: str, heading: str
) -> None:
    """German text without a declared language stays English (detection knows only Latin
    script), as does Swahili, which has no set; a declared German or Arabic one does not."""
    (result,) = render(GERMAN, tmp_path, sources_pool=POOL, formats=["md"], lang=lang)
    text = result.path.read_text("utf-8")
    assert f"\n## {heading}\n" in text
    figure = "Abbildung 1" if lang == "de" else "شكل 1" if lang == "ar" else "Figure 1"
    assert f"[{figure}](#fig-1)" in text


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_an_undeclared_document_keeps_the_english_footer(tmp_path: Path, engine: str) -> None:
    (result,) = render(GERMAN, tmp_path, sources_pool=POOL, formats=["pdf"], pdf_engine=engine)
    shown = squeezed(pdf_text(result.path))
    assert "Page1of" in shown and "Sources" in shown and "Figure1" in shown
    assert "Seite" not in shown and "Quellen" not in shown


def test_the_html_input_s_own_language_declares_the_words(tmp_path: Path) -> None:
    content = '<html lang="fr"><body><h1>Rapport</h1><p>Texte [[S:1]].</p></body></html>'
    (result,) = render(content, tmp_path, sources_pool=POOL, formats=["md"])
    assert "\n## Sources\n" in result.path.read_text("utf-8")  # French says "Sources" too
    (result,) = render(content.replace('"fr"', '"es"'), tmp_path / "es", sources_pool=POOL,
                       formats=["md"])
    assert "\n## Fuentes\n" in result.path.read_text("utf-8")


def slide_footers(lang: str, title: str, slide: str, text: str) -> list[str]:
    """The source footers of a deck whose one slide cites 60 sources (more than fit)."""
    rows = [{"sid": i, "title": f"T{i}", "url": f"https://a-long-domain-name-{i}.example.org/"}
            for i in range(1, 61)]
    cites = "".join(f"[[S:{i}]]" for i in range(1, 61))
    rdoc = resolve(read_markdown(f"# {title}\n\n## {slide}\n\n{text} {cites}.\n"),
                   SourcePool.from_rows(rows), lang=lang)
    deck = build_deck(rdoc, RenderOptions(lang=lang))
    return ["".join(run.text for run in s.footer) for s in deck.slides if s.footer]


def test_a_slide_footer_naming_some_sources_counts_the_rest_in_the_language() -> None:
    footers = slide_footers("de", "Titel", "Folie", "Text")
    assert footers and footers[0].endswith(" weitere") and "more" not in footers[0], footers


def test_an_arabic_slide_footer_counts_the_rest_in_arabic_without_left_to_right_marks() -> None:
    """The Arabic words for "+N more" read right to left by themselves: held left to right, as
    the English ones are in a right-to-left footer, they would read "أخرى N+"."""
    footers = slide_footers("ar", "تقرير", "شريحة", "نص")
    assert footers
    last = footers[0].rsplit(" · ", 1)[-1]
    assert last.startswith("+") and last.endswith(" أخرى"), footers[0]


@pytest.mark.slow
@pytest.mark.parametrize(("lang", "title"), [("", "Report"), ("de", "Bericht"), ("ja", "レポート")])
def test_an_untitled_document_is_named_in_its_language(
    tmp_path: Path, lang: str, title: str
) -> None:
    """A document with no title still needs one in the HTML's <title> and the PDF's metadata:
    the word for a report, in the declared language."""
    content = "Nur ein Absatz ohne Überschrift [[S:1]].\n"
    results = render(content, tmp_path, sources_pool=POOL, formats=["html"], lang=lang)
    assert lxml_html.fromstring(results[0].path.read_bytes()).findtext(".//title") == title
    for engine in ("weasyprint", "typst"):
        (pdf,) = render(content, tmp_path / engine, sources_pool=POOL, formats=["pdf"],
                        lang=lang, pdf_engine=engine)
        assert PdfReader(str(pdf.path)).metadata.title == title, engine


def test_every_language_names_a_group_and_joins_its_numbers() -> None:
    """The plural name ends where the numbers start (the writers link each number apart);
    Chinese, Japanese and Korean use the singular's word, having no plural."""
    for name, words in LABELS.items():
        for lead, single in ((words.names_lead("fig"), words.figure),
                             (words.names_lead("tbl"), words.table)):
            assert lead.strip(), (name, single)
            if name in ("ja", "zh-Hans", "zh-Hant", "ko"):
                assert lead == single.removesuffix("{number}"), name
        assert words.joiner("") == ""
        assert all(words.joiner(j).strip() for j in ("list", "last", "range")), name
    german = LABELS["de"]
    assert german.names_lead("fig") + "1" + german.joiner("last") == "Abbildungen 1 und "
