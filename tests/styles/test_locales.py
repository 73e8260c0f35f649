"""A declared language picks the CSL locale: the terms, dates, quotes and punctuation of the
document's language in every format; a detected one, or one without a CSL locale, leaves the
style's default (the golden files of ``test_golden_styles`` show that default unchanged)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from citeproc import LOCALES_PATH
from lxml import html as lxml_html

from renderers.api import render
from renderers.document import Cite, iter_inlines, plain_text
from renderers.language import Language
from renderers.options import build_options
from renderers.pipeline import prepare
from renderers.resolve import ResolvedDocument
from renderers.styles.locales import csl_locale
from renderers.tools import call_tool
from tests.helpers import convert_all_with_libreoffice, pdf_text

DATA = Path(__file__).resolve().parent / "data"
#: The styled fixture's pool and an undated web page by three authors, fetched on 3 February.
POOL: list[dict[str, Any]] = [
    *json.loads((DATA / "styled-pool.json").read_text("utf-8")),
    {"sid": 5, "title": "Netzausbau im Überblick", "url": "https://example.org/netz",
     "fetched_at": "2025-02-03", "author": ["Müller, Anna", "Schmidt, Ben", "Weber, Carla"],
     "source_type": "web"},
]
#: Documents citing every source, in sid order (each entry's number is its sid).
GERMAN = ("# Bericht\n\nDie Solarenergie wächst [[S:1]], die Modulpreise fallen [[S:2,3]], "
          "auch im Einkauf [[S:4]]; der Netzausbau hinkt hinterher [[S:5]].\n")
FRENCH = ("# Rapport\n\nLe solaire progresse [[S:1]], les prix des modules baissent [[S:2,3]], "
          "aux achats aussi [[S:4]]; le réseau suit mal [[S:5]].\n")


def styled(content: str = GERMAN, **options: Any) -> ResolvedDocument:
    return prepare(content, sources_pool=POOL, options=build_options(**options)).rdoc


def entries(rdoc: ResolvedDocument) -> dict[int, str]:
    return {e.number: plain_text(e.formatted) for e in rdoc.entries}


def citations(rdoc: ResolvedDocument) -> list[str]:
    return [plain_text(n.children) for n in iter_inlines(rdoc.document.blocks)
            if isinstance(n, Cite) and n.children]


@pytest.mark.parametrize(("tag", "style_default", "locale"), [
    ("de", "en-US", "de-DE"),            # the language's primary dialect
    ("de-DE", "en-US", "de-DE"),
    ("de-CH", "en-US", "de-CH"),         # a region with its own locale
    ("de-LU", "en-US", "de-DE"),         # a region without one: the primary dialect
    ("pt", "en-US", "pt-PT"),
    ("pt-BR", "en-US", "pt-BR"),
    ("zh", "en-US", "zh-CN"),
    ("zh-Hant", "en-US", "zh-TW"),       # the script's locale
    ("zh-HK", "en-US", "zh-TW"),         # written in Traditional characters
    ("zh-Hans-SG", "en-US", "zh-CN"),
    ("sr", "en-US", "sr-Latn-RS"),
    ("sr-Cyrl", "en-US", "sr-Cyrl-RS"),
    ("ar", "en-US", "ar"),               # a locale without a region
    ("de-DE-1996", "en-US", "de-DE"),    # a variant is not a different locale
    ("en", "en-GB", "en-GB"),            # the style's dialect of the same language is kept
    ("en-AU", "en-US", "en-US"),
    ("en-GB", "en-US", "en-GB"),
    ("en-US", "en-GB", "en-US"),
    ("sw", "en-GB", "en-GB"),            # no CSL locale: the style's default
    ("und", "en-US", "en-US"),
])
def test_a_declared_language_picks_its_csl_locale(
    tag: str, style_default: str, locale: str
) -> None:
    assert csl_locale(Language(tag, declared=True), style_default) == locale
    assert (Path(LOCALES_PATH) / f"locales-{locale}.xml").is_file(), "a locale citeproc-py has"


def test_a_detected_language_keeps_the_styles_default_locale() -> None:
    assert csl_locale(Language("de"), "en-GB") == "en-GB"
    assert csl_locale(Language("zh"), "en-US") == "en-US"


def test_a_german_document_reads_german_terms_in_apa() -> None:
    rdoc = styled(csl="apa", lang="de")
    assert citations(rdoc)[-1] == "(Müller et al., o.\u00a0J.)"
    shown = entries(rdoc)
    assert shown[5] == ("Müller, A., Schmidt, B., & Weber, C. (o.\u00a0J.). "
                        "Netzausbau im Überblick. Abgerufen 3. Februar 2025, von "
                        "https://example.org/netz")
    assert "(2024, Mai 8)" in shown[3] and "(2025, März 1)" in shown[4]
    assert not any(word in " ".join(shown.values())
                   for word in ("Retrieved", "n.d.", "from", "May", "March", "3rd"))


def test_german_quotes_take_the_punctuation_after_them_and_titles_keep_their_case() -> None:
    """en-US puts a period inside the closing quote and title-cases English titles; German has
    „…“, the period after it, and no English title case for a title without a language."""
    english = entries(styled(csl="chicago-note"))[2]
    german = entries(styled(csl="chicago-note", lang="de"))[2]
    assert english == ("Smith, Jane, and John Doe. “Solar Module Prices in 2024.” Energy Policy, "
                       "June 11, 2024. https://example.org/solar-prices.")
    assert german == ("Smith, Jane, und John Doe. „Solar module prices in 2024“. Energy Policy, "
                      "11. Juni 2024. https://example.org/solar-prices.")


def test_a_french_document_reads_french_terms_and_guillemets() -> None:
    rdoc = styled(FRENCH, csl="chicago-author-date", lang="fr")
    assert citations(rdoc)[-1] == "(Müller et al., s.\u00a0d.)"
    assert entries(rdoc)[5] == (
        "Müller, Anna, Ben Schmidt, et Carla Weber. s.\u00a0d. "
        "«\u00a0Netzausbau im Überblick\u00a0». Consulté le 3 février 2025. "
        "https://example.org/netz."
    )


def test_a_region_picks_its_own_locale() -> None:
    brazil = entries(styled(csl="apa", lang="pt-BR"))[5]
    portugal = entries(styled(csl="apa", lang="pt"))[5]
    assert "(s.d.)" in brazil and "Recuperado 3 de fevereiro de 2025, de" in brazil
    assert "Obtido 3 de fevereiro de 2025, de" in portugal


@pytest.mark.parametrize(("style", "lang"), [("apa", "sw"), ("nature", "sw"), ("nature", "en"),
                                             ("apa", "en")])
def test_a_language_without_its_own_locale_keeps_the_styles_default(style: str, lang: str) -> None:
    """Swahili has no CSL locale, and English is the styles' own language (nature's default
    is en-GB): the entries are those of an undeclared document."""
    assert entries(styled(csl=style, lang=lang)) == entries(styled(csl=style))


def test_a_detected_language_reads_the_styles_default() -> None:
    """German text without a declared language: detection knows only the script (Latin)."""
    rdoc = styled(csl="apa")
    assert not rdoc.language.declared
    assert "(n.d.)" in entries(rdoc)[5] and "Retrieved February 3, 2025, from" in entries(rdoc)[5]


def test_the_html_inputs_own_lang_picks_the_locale() -> None:
    body = '<h1>Bericht</h1><p>Der Netzausbau hinkt hinterher [[S:5]].</p>'
    declared = styled(f'<html lang="de"><body>{body}</body></html>', csl="ieee")
    undeclared = styled(f"<html><body>{body}</body></html>", csl="ieee")
    assert "Zugegriffen: 3. Februar 2025. [Online]. Verfügbar unter:" in entries(declared)[1]
    assert "Accessed: Feb. 03, 2025. [Online]. Available:" in entries(undeclared)[1]


def test_one_style_serves_documents_in_different_languages() -> None:
    """The parsed style is cached; the locale is chosen per document, so no document keeps
    the wording of the one before it."""
    first = entries(styled(csl="harvard", lang="de"))[5]
    english = entries(styled(csl="harvard"))[5]
    again = entries(styled(csl="harvard", lang="fr"))[5]
    assert "(ohne Datum)" in first and "(no date)" in english and "(sans date)" in again


def _sources_text(path: Path) -> str:
    """The text of a file's Sources section, white space removed (lines wrap differently in
    each format)."""
    if path.suffix == ".html":
        text = lxml_html.fromstring(path.read_bytes()).text_content()
    elif path.suffix == ".pdf":
        text = pdf_text(path)
    else:
        text = path.read_text("utf-8")
    return "".join(text.split())


#: What a reader of the German and the French document finds in each format (white space
#: removed; Markdown has a footnote mark before a citation's closing parenthesis).
GERMAN_WORDS = ("(Mülleretal.,o.J.", "Abgerufen3.Februar2025,von", "(2024,Mai8)")
FRENCH_WORDS = ("(Mülleretal.,s.d.", "«NetzausbauimÜberblick»", "Consultéle3février2025",
                "Smith,Jane,etJohnDoe")


@pytest.mark.slow
@pytest.mark.parametrize(("content", "style", "lang", "words"), [
    (GERMAN, "apa", "de", GERMAN_WORDS), (FRENCH, "chicago-author-date", "fr", FRENCH_WORDS),
])
@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_every_text_format_shows_the_localized_entries(
    tmp_path: Path, content: str, style: str, lang: str, words: tuple[str, ...], engine: str
) -> None:
    results = render(content, tmp_path, sources_pool=POOL, formats=["html", "md", "pdf"],
                     csl=style, lang=lang, pdf_engine=engine)
    for result in results:
        shown = _sources_text(result.path)
        assert all(word in shown for word in words), (result.path.suffix, shown)
        assert "n.d." not in shown and "Retrieved" not in shown and "Accessed" not in shown


@pytest.mark.slow
@pytest.mark.libreoffice
def test_docx_and_pptx_show_the_localized_entries(tmp_path: Path) -> None:
    results = render(GERMAN, tmp_path, sources_pool=POOL, formats=["docx", "pptx"], csl="apa",
                     lang="de")
    # one PDF per file: their stems differ
    paths = [r.path.rename(r.path.with_stem(r.path.suffix[1:])) for r in results]
    for pdf in convert_all_with_libreoffice(paths, tmp_path):
        shown = _sources_text(pdf)
        assert all(word in shown for word in GERMAN_WORDS), (pdf.name, shown)


def test_the_markdown_tool_takes_the_language_for_a_styles_wording(tmp_path: Path) -> None:
    """``lang`` was offered only by the formats that declare a language; with a style it is
    the wording of Markdown too."""
    envelope = call_tool("write_markdown", {"content": GERMAN, "sources_pool": POOL,
                                            "csl": "apa", "lang": "de"}, out_dir=tmp_path)
    assert envelope["ok"] is True, envelope
    written = next(tmp_path.glob("*.md")).read_text("utf-8")
    assert "Abgerufen 3. Februar 2025, von" in written
