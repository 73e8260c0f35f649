"""Which CSL locale a document's language picks: the terms, dates, quotes and punctuation rules
the processor uses ("abgerufen", "o. J.", „…“ in a German document), as citeproc-js and pandoc
let the document's language override a style's ``default-locale``.

Only a *declared* language (the ``lang`` option or the input's own: ``<html lang>``, a
markdown metadata block's ``lang:``) picks one: a detected language is known by its script
alone (Latin text is taken for English), so it leaves the style's own default locale. The
locales are the files citeproc-py bundles (:data:`citeproc.LANGUAGE_NAMES`); its own lookup
falls back on the language's primary dialect and then en-US, never on the style's default,
hence this choice before it.
"""

from __future__ import annotations

from citeproc import LANGUAGE_NAMES, PRIMARY_DIALECTS

from renderers.language import Language

#: The CSL locale of each regional Chinese face (:meth:`Language.declared_cjk_face`): zh-Hant,
#: zh-HK and zh-MO are written in Traditional characters, as zh-TW is.
_CHINESE_LOCALES = {"TC": "zh-TW", "SC": "zh-CN"}


def csl_locale(language: Language, style_default: str) -> str:
    """The CSL locale for a document in ``language`` with a style whose default locale is
    ``style_default``.

    A declared language picks, in order: the locale file of its very tag (language, script,
    region: ``pt-BR``, ``sr-Cyrl-RS``); for Chinese, the file of its script (zh-Hant → zh-TW);
    the style's default when it is in the same language (``en`` keeps an en-GB style British);
    the language's primary dialect (de → de-DE, pt → pt-PT); else the style's default, as does
    a language that was only detected.
    """
    if not language.declared:
        return style_default
    primary = language.primary
    exact = "-".join(s for s in (primary, language.script, language.region) if s)
    if exact in LANGUAGE_NAMES:
        return exact
    if primary == "zh":
        face = language.declared_cjk_face()
        if face in _CHINESE_LOCALES:
            return _CHINESE_LOCALES[face]
    if language.script:
        scripted = [name for name in sorted(LANGUAGE_NAMES)
                    if name.split("-")[:2] == [primary, language.script]]
        if scripted:
            return scripted[0]
    if style_default.split("-")[0].lower() == primary:
        return style_default
    return PRIMARY_DIALECTS.get(primary, style_default)
