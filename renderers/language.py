"""The document's natural language: the ``lang`` option read as a BCP 47 tag, and the one rule
that decides the language of a document that declares none.

Every writer that declares a language (HTML ``<html lang>``, the PDF's ``/Lang`` of both
engines, Typst's ``text(lang:, region:)``, DOCX's default ``w:lang``, PPTX's run ``lang``) and
the choice of the regional CJK face read the :class:`Language` that :func:`language_for` gives:
the ``lang`` option when given; else the input's own (an HTML ``<html lang>``, a markdown
front matter's ``lang:``, :mod:`renderers.metadata`); else the dominant script of the text
(:func:`detect_language`). The Markdown writer declares a declared language in its front matter
(:func:`renderers.metadata.metadata_block`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from renderers.text import (
    HANGUL_CHARS,
    KANA_CHARS,
    CjkRegion,
    beyond_ascii,
    cjk_region,
    kana_and_hangul,
    may_have_cjk,
)

if TYPE_CHECKING:
    from renderers.document import Document
    from renderers.options import RenderOptions
    from renderers.resolve import ResolvedDocument

__all__ = [
    "DEFAULT_LANGUAGE",
    "MAX_TAG_LENGTH",
    "TAG_HELP",
    "Language",
    "detect_language",
    "document_language",
    "language_for",
    "normalize_tag",
]

#: Longest tag accepted (RFC 5646 §4.4.1: the length every implementation must support).
MAX_TAG_LENGTH = 35
#: What a ``lang`` value may be, in the words every refusal ends with.
TAG_HELP = (
    "a BCP 47 language tag such as en, ar, ja, zh-Hant, pt-BR or sr-Latn-RS (a language of 2 "
    f"to 3 letters, then optional script, region and variant subtags), at most "
    f"{MAX_TAG_LENGTH} characters; or empty, for the language detected from the input"
)

# RFC 5646 §2.1 "langtag" (grandfathered and private-use-only tags are not document languages),
# its language subtag of 2 or 3 letters: the 4-letter form is reserved and no 5-8 letter one is
# registered, so "english" or "chinese" is a mistake to name, not a tag to declare.
_LANGTAG = re.compile(
    r"""
    [a-z]{2,3}(?:-[a-z]{3}){0,3}                      # language, extlang
    (?:-[a-z]{4})?                                    # script
    (?:-(?:[a-z]{2}|[0-9]{3}))?                       # region
    (?:-(?:[a-z0-9]{5,8}|[0-9][a-z0-9]{3}))*          # variants
    (?:-[0-9a-wyz](?:-[a-z0-9]{2,8})+)*               # extensions
    (?:-x(?:-[a-z0-9]{1,8})+)?                        # private use
    """,
    re.IGNORECASE | re.VERBOSE | re.ASCII,
)


def normalize_tag(value: str) -> str:
    """``value`` as a well-formed BCP 47 language tag in its canonical case (``zh-hant-tw`` →
    ``zh-Hant-TW``; ``pt_BR`` → ``pt-BR``), or ValueError saying what is accepted."""
    tag = value.strip().replace("_", "-")
    if len(tag) > MAX_TAG_LENGTH:
        raise ValueError(f"{len(tag)} characters; accepted: {TAG_HELP}")
    if not _LANGTAG.fullmatch(tag):
        raise ValueError(f"not a language tag; accepted: {TAG_HELP}")
    subtags = tag.split("-")
    canonical = [subtags[0].lower()]
    extended = False  # after a singleton (extension or private use) every subtag is lower-case
    for subtag in subtags[1:]:
        if len(subtag) == 1:
            extended = True
        if extended:
            canonical.append(subtag.lower())
        elif len(subtag) == 4 and subtag.isalpha():
            canonical.append(subtag.title())
        elif len(subtag) == 2:
            canonical.append(subtag.upper())
        else:
            canonical.append(subtag.lower())
    return "-".join(canonical)


#: Languages written right to left unless their tag names another script.
_RTL_LANGUAGES = frozenset({
    "ar", "arz", "ckb", "dv", "fa", "he", "iw", "ks", "ps", "sd", "syr", "ug", "ur", "yi", "ji",
})
_RTL_SCRIPTS = frozenset({"Arab", "Hebr", "Syrc", "Thaa", "Nkoo", "Adlm", "Rohg", "Mand", "Samr"})
#: Chinese languages (macrolanguage zh and its members written with Han characters).
_CHINESE = frozenset({"zh", "cmn", "yue", "wuu", "hak", "nan", "gan", "hsn", "lzh", "cjy",
                      "cdo", "cpx", "czh", "czo", "mnp"})
_TRADITIONAL_REGIONS = frozenset({"TW", "HK", "MO"})
_SIMPLIFIED_REGIONS = frozenset({"CN", "SG", "MY"})


@dataclass(frozen=True)
class Language:
    """A document's language: a canonical BCP 47 ``tag`` and whether it was ``declared`` (by the
    ``lang`` option or the input's own markup) rather than detected from the text."""

    tag: str = "en"
    declared: bool = False

    @property
    def subtags(self) -> tuple[str, ...]:
        """The subtags before any extension or private-use singleton."""
        found: list[str] = []
        for subtag in self.tag.split("-"):
            if len(subtag) == 1:
                break
            found.append(subtag)
        return tuple(found)

    @property
    def primary(self) -> str:
        """The primary language subtag (``zh`` of ``zh-Hant-TW``)."""
        return self.subtags[0]

    @property
    def script(self) -> str:
        """The script subtag (``Hant``), or "" when the tag names none."""
        return next((s for s in self.subtags[1:] if len(s) == 4 and s.isalpha()), "")

    @property
    def region(self) -> str:
        """The region subtag (``TW``, ``419``), or "" when the tag names none."""
        return next(
            (s for s in self.subtags[1:] if (len(s) == 2 and s.isalpha())
             or (len(s) == 3 and s.isdigit())),
            "",
        )

    @property
    def right_to_left(self) -> bool:
        """Whether the language is written right to left (its script when the tag names one)."""
        if self.script:
            return self.script in _RTL_SCRIPTS
        return self.primary in _RTL_LANGUAGES

    @property
    def east_asian(self) -> bool:
        """Whether the language is Chinese, Japanese or Korean (Word's East Asian language)."""
        return self.primary in _CHINESE or self.primary in ("ja", "ko") or self.script in (
            "Hans", "Hant", "Hani", "Jpan", "Hira", "Kana", "Kore", "Hang"
        )

    def declared_cjk_face(self) -> CjkRegion | None:
        """The regional CJK face the language asks for, or None when it asks for none."""
        script, region = self.script, self.region
        if self.primary == "ja" or script in ("Jpan", "Hira", "Kana"):
            return "JP"
        if self.primary == "ko" or script in ("Kore", "Hang"):
            return "KR"
        if self.primary in _CHINESE or script in ("Hans", "Hant"):
            if script == "Hant" or (not script and region in _TRADITIONAL_REGIONS):
                return "TC"
            if script == "Hans" or region in _SIMPLIFIED_REGIONS or self.primary != "yue":
                return "SC"
            return "TC"  # Cantonese without a script is written in Traditional characters
        return None

    def cjk_face(self, text: str) -> CjkRegion:
        """The Noto Sans CJK face for ``text`` in this language: the declared language's region
        (ja → JP, ko → KR, zh-Hant/zh-TW/zh-HK → TC, zh/zh-Hans → SC); a detected language or a
        declared one that is not CJK leaves it to the text (:func:`renderers.text.cjk_region`)."""
        face = self.declared_cjk_face() if self.declared else None
        return face or cjk_region(text)

    @property
    def typst_lang(self) -> str:
        """The ``lang`` of Typst's ``text``: an ISO 639 code of 2 or 3 letters (``und`` for a
        tag whose language subtag is longer)."""
        return self.primary if len(self.primary) <= 3 else "und"

    @property
    def typst_region(self) -> str | None:
        """The ``region`` of Typst's ``text``: an ISO 3166-1 alpha-2 code, or None."""
        region = self.region
        return region if len(region) == 2 else None


DEFAULT_LANGUAGE = Language()

# ---------------------------------------------------------------- detection

#: Each script the text may be dominated by, and the language it is taken for.
_ARABIC = "\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufefc"
_HEBREW = "\u0590-\u05ff\ufb1d-\ufb4f"
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_SCRIPT_CHARS: dict[str, str] = {
    "ar": _ARABIC,
    "he": _HEBREW,
    "cjk": _HAN + KANA_CHARS + HANGUL_CHARS,
    "hi": "\u0900-\u097f\ua8e0-\ua8ff",
    "ru": "\u0400-\u052f",
    "el": "\u0370-\u03ff\u1f00-\u1fff",
    "th": "\u0e00-\u0e7f",
    "en": "A-Za-z\u00c0-\u024f\u1e00-\u1eff",  # Latin: taken for English
}


@cache
def _script_run(language: str) -> re.Pattern[str]:
    """A run of ``language``'s script's letters, for counting them: one match a word rather
    than a letter (a Latin text's count takes a sixth of the time), and a repeated class
    compiles in half the time of a single one (no table for a first-character scan). Compiled
    on first use: the CJK class alone takes 1.2 ms, which text without CJK never pays."""
    return re.compile(f"[{_SCRIPT_CHARS[language]}]+")


@cache
def _script_letter(language: str) -> re.Pattern[str]:
    """One letter of ``language``'s script: a single class, whose search scans for its first
    character fast (as a run's does not)."""
    return re.compile(f"[{_SCRIPT_CHARS[language]}]")


def script_chars(language: str) -> str:
    """The characters of the script taken for ``language`` (a key of the detection's table), as
    the body of a regular-expression class, for a rule about that script elsewhere."""
    return _SCRIPT_CHARS[language]


def has_script(text: str, language: str) -> bool:
    """Whether ``text`` has a letter of the script taken for ``language`` (a key of the
    detection's table: ar, he, cjk, hi, ru, el, th, en)."""
    return _script_letter(language).search(text) is not None


#: Characters of text looked at: enough to tell the dominant script of any document.
SAMPLE_CHARS = 100_000


def _count(pattern: re.Pattern[str], text: str) -> int:
    return len(text) - len(pattern.sub("", text))


def detect_language(text: str) -> str:
    """The language of ``text`` by its dominant script (the script most of its letters are in):
    Arabic → ar, Hebrew → he, Devanagari → hi, Cyrillic → ru, Greek → el, Thai → th; Han, kana
    and Hangul together are one script: with kana (at least one CJK character in 20) ja, with
    Hangul ko, Han alone zh. Latin, another script or no letters at all → en."""
    text = text[:SAMPLE_CHARS]
    # Latin is the one script with ASCII letters: the others are counted among the characters
    # beyond ASCII, a small part of most text (a seventh of the time for English).
    beyond = beyond_ascii(text)
    counts = {
        language: 0 if language == "cjk" and not may_have_cjk(beyond)
        else _count(_script_run(language), text if language == "en" else beyond)
        for language in _SCRIPT_CHARS
    }
    language = max(counts, key=lambda name: counts[name])  # the first of a tie: Latin is last
    if counts[language] == 0:
        return "en"
    if language == "cjk":
        kana, hangul = (_count(pattern, beyond) for pattern in kana_and_hangul())
        share = counts["cjk"] / 20
        if hangul > kana and hangul >= share:
            return "ko"
        if kana >= share and kana > 0:
            return "ja"
        return "zh"
    return language


def _sample(document: Document) -> str:
    """The document's prose for :func:`detect_language`: the title and the text of its
    paragraphs, headings, cells and captions (not code, raw markup or URLs), up to
    :data:`SAMPLE_CHARS` characters."""
    from renderers.document import Text, iter_inlines

    parts, size = [document.title], len(document.title)
    for node in iter_inlines(document.blocks):
        if isinstance(node, Text):
            parts.append(node.text)
            size += len(node.text)
            if size >= SAMPLE_CHARS:
                break
    return " ".join(parts)


def document_language(document: Document, lang: str = "") -> Language:
    """The language of ``document``: ``lang`` (the option, a canonical tag) when given, else the
    one its input declared (``Document.lang``: ``<html lang>``, a front matter ``lang:``),
    else the one its text's dominant script tells (:func:`detect_language`)."""
    if lang:
        return Language(lang, declared=True)
    if document.lang:
        return Language(document.lang, declared=True)
    return Language(detect_language(_sample(document)))


def language_for(rdoc: ResolvedDocument, options: RenderOptions) -> Language:
    """The language a writer declares for ``rdoc``: the ``lang`` option, else the one the
    citation pass found (:attr:`renderers.resolve.ResolvedDocument.language`)."""
    if options.lang:
        return Language(options.lang, declared=True)
    return rdoc.language
