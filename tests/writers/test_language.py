"""The document's language: the ``lang`` option (a BCP 47 tag), the input's own ``<html lang>``
and the dominant-script detection, declared in every produced file that declares one — each
file opened and its declaration read — and the regional CJK face that follows it."""

from __future__ import annotations

import re
import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pypdf
import pytest

from renderers.api import render
from renderers.errors import OptionError
from renderers.language import Language, detect_language, normalize_tag, script_chars
from renderers.readers.html import read_html
from renderers.readers.markdown import read_markdown
from renderers.text import CJK_CLASS, may_have_cjk, needs_cjk
from tests.helpers import require_client

POOL = [{"sid": 1, "title": "One", "url": "https://example.org/"}]
ARABIC = "# تقرير الطاقة\n\nتمتلك المنطقة العربية بعضاً من أفضل موارد الطاقة الشمسية.[[S:1]]\n"
CHINESE = "# 能源報告\n\n這是一份關於能源轉型的報告，內容涵蓋太陽能與風能的發展。[[S:1]]\n"
ENGLISH = "# Energy\n\nSolar is the cheapest source of new power.[[S:1]]\n"
FORMATS = ("html", "pdf", "docx", "pptx")


# ---------------------------------------------------------------- the tag and the detection


@pytest.mark.parametrize(("given", "canonical"), [
    ("en", "en"), ("AR", "ar"), ("zh-hant", "zh-Hant"), ("pt_br", "pt-BR"),
    ("zh-hant-tw", "zh-Hant-TW"), ("sr-latn-rs", "sr-Latn-RS"), ("es-419", "es-419"),
    ("de-CH-1996", "de-CH-1996"), ("en-US-x-Twain", "en-US-x-twain"), (" ja ", "ja"),
])  # fmt: skip
def test_a_well_formed_tag_is_kept_in_its_canonical_case(given: str, canonical: str) -> None:
    assert normalize_tag(given) == canonical


@pytest.mark.parametrize("bad", [
    "english", "e", "en--US", "en-", "x-private", "12", "en US", "zh-Hant-TW-" , "é",
    "a" * 36, "en-a", "ar-EG;drop",
])  # fmt: skip
def test_a_malformed_tag_is_refused_saying_what_is_accepted(bad: str) -> None:
    with pytest.raises(ValueError, match="accepted: a BCP 47 language tag such as"):
        normalize_tag(bad)
    with pytest.raises(OptionError, match=r"^lang=.*accepted: a BCP 47 language tag") as info:
        render("x", "/nonexistent-out", formats=["html"], lang=bad)
    assert info.value.field == "lang"


@pytest.mark.parametrize(("text", "language"), [
    ("تمتلك المنطقة العربية بعضاً من أفضل موارد الطاقة", "ar"),
    ("השמש היא מקור האנרגיה הזול ביותר", "he"),
    ("日本政府は、2040年度に再生可能エネルギーを最大の電源とする方針を示している。", "ja"),
    ("한국은 2024년에 재생에너지 발전 비중을 꾸준히 늘렸으며", "ko"),
    ("2024年，中国新增太阳能发电装机容量超过2亿千瓦", "zh"),
    ("भारत ने 2024 में रिकॉर्ड सौर क्षमता जोड़ी", "hi"),
    ("В 2024 году ввод солнечных электростанций продолжил расти", "ru"),
    ("Το 2024 οι ανανεώσιμες πηγές κάλυψαν", "el"),
    ("ประเทศไทยเพิ่มกำลังการผลิตไฟฟ้าจากแสงอาทิตย์", "th"),
    ("Solar is cheapest", "en"),
    ("Die Sonne ist die günstigste Quelle", "en"),  # Latin says nothing more than "en"
    ("12345 — 67", "en"),
    ("Arabic العربية quoted in a long English sentence about many other things", "en"),
])  # fmt: skip
def test_the_dominant_script_decides(text: str, language: str) -> None:
    assert detect_language(text) == language


def test_every_cjk_character_passes_the_cheap_check_that_spares_latin_text_the_cjk_classes(
) -> None:
    """:func:`may_have_cjk` lets through every character of both CJK classes (the fonts' and
    the detection's Han, kana and Hangul), and not the punctuation of Latin text."""
    every = "".join(map(chr, range(0x110000)))
    for cjk_class in (CJK_CLASS, f"[{script_chars('cjk')}]"):
        found = re.findall(cjk_class, every)
        assert len(found) > 100_000
        assert all(may_have_cjk(char) for char in found)
    latin = "caf\u00e9 \u201cquoted\u201d \u2014 \u2026 \u2022 \u20ac5 \u2192 \u2264 \u00b7"
    assert not may_have_cjk(latin)
    assert not needs_cjk(latin)
    assert needs_cjk("\u2460") and needs_cjk("x \u6f22") and not needs_cjk("\u1100")


@pytest.mark.parametrize(("tag", "face"), [
    ("ja", "JP"), ("ja-JP", "JP"), ("ko", "KR"), ("zh", "SC"), ("zh-Hans", "SC"),
    ("zh-CN", "SC"), ("zh-Hant", "TC"), ("zh-TW", "TC"), ("zh-HK", "TC"), ("zh-MO", "TC"),
    ("zh-Hant-CN", "TC"), ("yue", "TC"),
])  # fmt: skip
def test_a_declared_language_chooses_the_cjk_face(tag: str, face: str) -> None:
    assert Language(tag, declared=True).cjk_face("日本語のテキスト") == face


def test_without_a_declared_cjk_language_the_text_chooses_the_face() -> None:
    assert Language("ja").cjk_face("漢字") == "SC"  # detected: today's text rule
    assert Language("en", declared=True).cjk_face("ひらがな") == "JP"
    assert Language("zh", declared=True).cjk_face("ひらがな") == "SC"


def test_the_html_reader_keeps_the_inputs_own_language() -> None:
    assert read_html('<html lang="HE-il"><body><p>x</p></body></html>').lang == "he-IL"
    assert read_html('<html lang="not a tag"><p>x</p></html>').lang == ""
    assert read_html("<p lang='fr'>x</p>").lang == ""


# ---------------------------------------------------------------- every file declares it


def declared(path: Path) -> dict[str, Any]:
    """The language(s) ``path`` declares, read from the file itself."""
    match path.suffix:
        case ".html":
            found = re.search(r'<html lang="([^"]*)"', path.read_text(encoding="utf-8"))
            return {"lang": found.group(1) if found else None}
        case ".pdf":
            return {"lang": str(pypdf.PdfReader(path).trailer["/Root"].get("/Lang"))}
        case ".docx":
            styles = zipfile.ZipFile(path).read("word/styles.xml").decode()
            defaults = styles.split("</w:docDefaults>")[0]
            (tag,) = re.findall(r"<w:lang [^>]*>", defaults)
            return dict(re.findall(r'w:(val|eastAsia|bidi)="([^"]*)"', tag))
        case ".pptx":
            with zipfile.ZipFile(path) as deck:
                slides = [deck.read(n).decode() for n in deck.namelist()
                          if re.fullmatch(r"ppt/slides/slide\d+\.xml", n)]
            langs = {lang for xml in slides for lang in re.findall(r' lang="([^"]*)"', xml)}
            return {"lang": langs}
    raise AssertionError(path)


def rendered(tmp_path: Path, content: str, engine: str = "weasyprint",
             **options: Any) -> dict[str, dict[str, Any]]:
    results = render(content, tmp_path, name="doc", formats=FORMATS, sources_pool=POOL,
                     pdf_engine=engine, **options)
    return {r.format: declared(r.path) for r in results}


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_arabic_text_declares_arabic_in_every_format(tmp_path: Path, engine: str) -> None:
    found = rendered(tmp_path, ARABIC, engine)
    assert found["html"] == {"lang": "ar"}
    assert found["pdf"] == {"lang": "ar"}
    assert found["docx"]["val"] == "ar" and found["docx"]["bidi"] == "ar"
    assert found["pptx"] == {"lang": {"ar"}}


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_the_lang_option_is_declared_in_every_format(tmp_path: Path, engine: str) -> None:
    found = rendered(tmp_path, ENGLISH, engine, lang="pt-br")
    assert found["html"] == found["pdf"] == {"lang": "pt-BR"}
    assert found["docx"]["val"] == "pt-BR" and found["docx"].get("eastAsia") != "pt-BR"
    assert found["pptx"] == {"lang": {"pt-BR"}}
    japanese = rendered(tmp_path / "ja", ENGLISH, engine, lang="ja")
    assert japanese["pdf"] == {"lang": "ja"}
    assert japanese["docx"]["val"] == japanese["docx"]["eastAsia"] == "ja"


@pytest.mark.slow
def test_an_html_inputs_own_language_is_kept_unless_the_option_says_otherwise(
    tmp_path: Path,
) -> None:
    page = '<!doctype html><html lang="he"><body><p>Hello.<sup class="cite" data-sids="1">' \
           "[S:1]</sup></p></body></html>"
    assert {f: d.get("lang", d.get("val")) for f, d in rendered(tmp_path, page).items()} == {
        "html": "he", "pdf": "he", "docx": "he", "pptx": {"he"},
    }
    again = rendered(tmp_path / "fr", page, lang="fr")
    assert again["pdf"] == {"lang": "fr"} and again["docx"]["val"] == "fr"


def test_english_text_declares_english(tmp_path: Path) -> None:
    results = render(ENGLISH, tmp_path, name="doc", formats=("html", "docx", "pptx"),
                     sources_pool=POOL)
    found = {r.format: declared(r.path) for r in results}
    assert found["html"] == {"lang": "en"} and found["docx"]["val"] == "en"
    assert found["pptx"] == {"lang": {"en"}}


def cjk_faces(path: Path) -> set[str]:
    """The regional CJK faces (SC, TC, JP, KR) embedded in a PDF, by their font names."""
    faces: set[str] = set()
    for page in pypdf.PdfReader(path).pages:
        for font in page["/Resources"]["/Font"].values():
            name = str(font.get_object()["/BaseFont"]).replace("-", "").lower()
            faces |= {f for f in ("SC", "TC", "JP", "KR") if f"cjk{f.lower()}" in name}
    return faces


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_zh_hant_embeds_the_traditional_chinese_face(tmp_path: Path, engine: str) -> None:
    (traditional,) = render(CHINESE, tmp_path / "tc", name="doc", formats=("pdf",),
                            sources_pool=POOL, pdf_engine=engine, lang="zh-Hant")
    assert cjk_faces(traditional.path) == {"TC"}
    assert declared(traditional.path) == {"lang": "zh-Hant"}
    (detected,) = render(CHINESE, tmp_path / "sc", name="doc", formats=("pdf",),
                         sources_pool=POOL, pdf_engine=engine)
    assert cjk_faces(detected.path) == {"SC"}
    assert declared(detected.path) == {"lang": "zh"}


# ---------------------------------------------------------------- the Markdown output

GERMAN = "# Bericht\n\nDie Solarenergie wächst.[[S:1]]\n"


def markdown_of(tmp_path: Path, content: str, **options: Any) -> str:
    (result,) = render(content, tmp_path, formats=["md"], sources_pool=POOL, **options)
    return result.path.read_text(encoding="utf-8")


def pandoc_reads(markdown: str) -> str:
    """The ``<html>`` tag pandoc writes for ``markdown`` (its metadata read as pandoc does)."""
    require_client(shutil.which("pandoc") is not None, "pandoc is not installed")
    page = subprocess.run(
        ["pandoc", "--from", "markdown", "--to", "html5", "--standalone",
         "--metadata", "title=t"],
        input=markdown, capture_output=True, text=True, check=True,
    ).stdout
    found = re.search(r"<html[^>]*>", page)
    assert found is not None
    return found.group(0)


@pytest.mark.parametrize(("lang", "block", "tag"), [
    ("de", "---\nlang: de\n---\n\n", 'lang="de" xml:lang="de">'),
    ("ar", "---\nlang: ar\ndir: rtl\n---\n\n", 'lang="ar" xml:lang="ar" dir="rtl">'),
    ("no", "---\nlang: 'no'\n---\n\n", 'lang="no" xml:lang="no">'),  # not YAML 1.1's false
])  # fmt: skip
def test_markdown_declares_a_declared_language_as_pandoc_reads_it(
    tmp_path: Path, lang: str, block: str, tag: str
) -> None:
    markdown = markdown_of(tmp_path, GERMAN, lang=lang)
    assert markdown.startswith(block + "# Bericht\n")
    assert pandoc_reads(markdown).endswith(tag)
    again = read_markdown(markdown)  # citerender's own reader takes it back
    assert again.lang == lang and again.blocks[0] == read_markdown(GERMAN).blocks[0]
    assert markdown_of(tmp_path / "again", markdown) == markdown.replace("[^1]", "[^a]")


def test_an_html_inputs_own_language_is_declared_in_its_markdown(tmp_path: Path) -> None:
    page = '<html lang="he"><body><h1>Report</h1><p>Text [[S:1]].</p></body></html>'
    assert markdown_of(tmp_path, page).startswith("---\nlang: he\ndir: rtl\n---\n\n# Report\n")


@pytest.mark.parametrize("content", [ENGLISH, ARABIC])
def test_markdown_of_an_undeclared_language_declares_none(tmp_path: Path, content: str) -> None:
    """A detected language is a guess (German text says ``en``): the file stays as it was."""
    assert markdown_of(tmp_path, content).startswith("# ")


def test_a_markdown_inputs_metadata_block_declares_its_language(tmp_path: Path) -> None:
    """Its lines read as blank (a note below keeps its line); a tag that is not one is
    ignored with a note, the rest of the front matter still read."""
    document = read_markdown("---\nlang: de-at\n---\n\nFakt.[[S:0]]\n")
    assert document.lang == "de-AT" and document.notes[0].line == 5
    assert document.blocks == read_markdown("Fakt.[[S:0]]\n").blocks
    assert "## Quellen" in markdown_of(tmp_path, "---\nlang: de\n---\n\n" + GERMAN)
    assert read_markdown("---\ntitle: Bericht\nlang: de\n---\n\nText\n").lang == "de"
    wrong = read_markdown("---\nlang: german\ntitle: Bericht\n---\n")
    assert wrong.lang == "" and wrong.title == "Bericht" and wrong.blocks == ()
    assert "front matter lang: 'german' is not a language tag" in wrong.warnings[0]
