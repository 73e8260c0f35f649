"""Paragraph and character styles: resolve names to ids, add a fallback definition when the
base document lacks one."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from docx.oxml.parser import parse_xml

from renderers.language import DEFAULT_LANGUAGE, Language, script_chars
from renderers.writers.docx.oxml import W_NS, Element, child, w


@dataclass(frozen=True)
class StyleDef:
    """A fallback style definition added when the base document lacks the style."""

    kind: Literal["paragraph", "character"]
    style_id: str
    name: str
    ppr: str = ""
    rpr: str = ""
    based_on: str = ""


def _heading(level: int, size: int) -> StyleDef:
    return StyleDef(
        "paragraph", f"Heading{level}", f"heading {level}",
        ppr='<w:keepNext/><w:spacing w:before="240" w:after="80"/>'
        f'<w:outlineLvl w:val="{level - 1}"/>',
        rpr=f'<w:b/><w:sz w:val="{size}"/>', based_on="Normal",
    )


def _toc(level: int) -> StyleDef:
    """Word's ``toc N``: the contents entries of level-N headings, indented by level."""
    return StyleDef(
        "paragraph", f"TOC{level}", f"toc {level}",
        ppr=f'<w:spacing w:after="60"/><w:ind w:left="{(level - 1) * 240}"/>', based_on="Normal",
    )


FALLBACK_STYLES: dict[str, StyleDef] = {
    d.name.lower(): d
    for d in (
        StyleDef("paragraph", "Title", "Title", ppr='<w:spacing w:after="240"/>',
                 rpr='<w:sz w:val="48"/>', based_on="Normal"),
        *(_heading(n, size) for n, size in enumerate((32, 28, 26, 24, 22, 22), start=1)),
        StyleDef("paragraph", "ListParagraph", "List Paragraph", ppr='<w:contextualSpacing/>',
                 based_on="Normal"),
        StyleDef("paragraph", "Caption", "caption", ppr='<w:spacing w:after="200"/>',
                 rpr='<w:i/><w:sz w:val="18"/>', based_on="Normal"),
        StyleDef("paragraph", "FootnoteText", "footnote text", ppr='<w:spacing w:after="0"/>',
                 rpr='<w:sz w:val="18"/>', based_on="Normal"),
        StyleDef("character", "FootnoteReference", "footnote reference",
                 rpr='<w:vertAlign w:val="superscript"/>'),
        StyleDef("character", "Hyperlink", "Hyperlink",
                 rpr='<w:color w:val="0563C1"/><w:u w:val="single"/>'),
        StyleDef("paragraph", "TOCHeading", "TOC Heading",
                 ppr='<w:keepNext/><w:spacing w:before="240" w:after="120"/>'
                 '<w:outlineLvl w:val="9"/>',
                 rpr='<w:b/><w:sz w:val="32"/>', based_on="Normal"),
        *(_toc(level) for level in range(1, 7)),
        # The title block (pandoc's reference.docx names), as report.css sets it.
        StyleDef("paragraph", "Subtitle", "Subtitle", ppr='<w:spacing w:after="120"/>',
                 rpr='<w:color w:val="333333"/><w:sz w:val="30"/>', based_on="Normal"),
        StyleDef("paragraph", "Author", "Author", ppr='<w:keepNext/><w:spacing w:after="0"/>',
                 based_on="Normal"),
        StyleDef("paragraph", "Date", "Date", ppr='<w:keepNext/><w:spacing w:after="0"/>',
                 rpr='<w:color w:val="5B5B5B"/>', based_on="Normal"),
        StyleDef("paragraph", "AbstractTitle", "Abstract Title",
                 ppr='<w:keepNext/><w:spacing w:before="240" w:after="60"/>'
                 '<w:ind w:left="400" w:right="400"/>',
                 rpr='<w:b/><w:sz w:val="19"/>', based_on="Normal"),
        StyleDef("paragraph", "Abstract", "Abstract",
                 ppr='<w:spacing w:after="100"/><w:ind w:left="400" w:right="400"/>',
                 rpr='<w:sz w:val="19"/>', based_on="Normal"),
    )
}


class StyleBook:
    """Resolve style names to ids in ``styles.xml``, adding a fallback definition when missing."""

    def __init__(self, styles: Element) -> None:
        self._root = styles
        self._ids: dict[tuple[str, str], str] = {}
        self._all_ids: set[str] = set()
        for style in styles.iter(w("style")):
            style_id = style.get(w("styleId"), "")
            name = style.find(w("name"))
            self._all_ids.add(style_id)
            if name is not None:
                key = (style.get(w("type"), "paragraph"), name.get(w("val"), "").lower())
                self._ids.setdefault(key, style_id)

    def get(self, name: str) -> str:
        """The styleId of the style called ``name`` (case-insensitive), created if missing."""
        fallback = FALLBACK_STYLES.get(name.lower())
        kind = fallback.kind if fallback else "paragraph"
        key = (kind, name.lower())
        found = self._ids.get(key)
        if found is not None:
            return found
        if fallback is None:
            return ""
        self._ids[key] = self._add(fallback)
        return self._ids[key]

    def _add(self, spec: StyleDef) -> str:
        style_id, n = spec.style_id, 1
        while style_id in self._all_ids:
            n += 1
            style_id = f"{spec.style_id}{n}"
        self._all_ids.add(style_id)
        based = f'<w:basedOn w:val="{spec.based_on}"/>' if spec.based_on in self._all_ids else ""
        xml = (
            f'<w:style xmlns:w="{W_NS}" w:type="{spec.kind}" w:styleId="{style_id}">'
            f'<w:name w:val="{spec.name}"/>{based}<w:qFormat/>'
            + (f"<w:pPr>{spec.ppr}</w:pPr>" if spec.ppr else "")
            + (f"<w:rPr>{spec.rpr}</w:rPr>" if spec.rpr else "")
            + "</w:style>"
        )
        self._root.append(parse_xml(xml))
        return style_id


#: ``w:rPr`` children that come after ``w:lang`` (ECMA-376 CT_RPr's sequence).
_AFTER_LANG = ("eastAsianLayout", "specVanish", "oMath", "rPrChange")


def set_default_language(styles: Element, language: Language, *, keep_base: bool = False) -> None:
    """Declare ``language`` as the document's default run language (``w:docDefaults``'
    ``w:lang``): ``w:val`` always, ``w:eastAsia`` for Chinese, Japanese and Korean, ``w:bidi``
    for a right-to-left language; the other attributes keep the base document's values.

    ``keep_base`` (a reference DOCX): a base that declares a language keeps it when the
    document declares none and its text tells nothing but the fallback (Latin script: en), as
    a German template's de-DE says more than "Latin letters" does."""
    defaults = child(styles, "docDefaults", first=True)
    rpr = child(child(defaults, "rPrDefault", first=True), "rPr")
    lang = rpr.find(w("lang"))
    fallback = not language.declared and language.tag == DEFAULT_LANGUAGE.tag
    if keep_base and fallback and lang is not None and lang.get(w("val")):
        return
    if lang is None:
        lang = rpr.makeelement(w("lang"), {})
        later = next((i for i, child in enumerate(rpr)
                      if isinstance(child.tag, str) and child.tag in {w(t) for t in _AFTER_LANG}),
                     None)
        if later is None:
            rpr.append(lang)
        else:
            rpr.insert(later, lang)
    lang.set(w("val"), language.tag)
    if language.east_asian:
        lang.set(w("eastAsia"), language.tag)
    if language.right_to_left:
        lang.set(w("bidi"), language.tag)


def name_east_asian_font(styles: Element, face: str) -> None:
    """Name ``face`` as the East Asian font of the document defaults and of every style that
    takes its East Asian font from the theme.

    The default document's theme names no East Asian typeface (Word maps a script to its own
    font); LibreOffice then draws CJK text in ``Title``, the headings and the body with no font
    at all — as empty boxes, or not at all when an emoji follows in the run ("日本語の見出し 🚀"
    showed only the emoji). A named face (an explicit ``w:eastAsia`` replaces the theme's
    ``w:eastAsiaTheme``, which would win over it) is drawn by both, as the PDF draws it. Fonts
    a reference document names itself are kept.
    """
    defaults = child(child(styles, "docDefaults", first=True), "rPrDefault", first=True)
    fonts = child(child(defaults, "rPr"), "rFonts", first=True)
    if fonts.get(w("eastAsia")) is None:
        fonts.set(w("eastAsia"), face)
    for themed in styles.iter(w("rFonts")):
        if themed.get(w("eastAsiaTheme")) is not None:
            del themed.attrib[w("eastAsiaTheme")]
            themed.set(w("eastAsia"), face)



#: Letters that join their neighbours (Arabic, Syriac, N'Ko, Mongolian; the headline stroke of
#: Devanagari, Bengali and Gurmukhi): letter spacing tears each word apart.
_JOINED_LETTERS = re.compile(
    f"[{script_chars('ar')}\u0700-\u074f\u07c0-\u07ff\u1800-\u18af\u0900-\u0a7f]"
)


def untrack_title(styles: Element, title: str) -> None:
    """Drop the letter spacing of the ``Title`` style when ``title`` is in a script whose
    letters join.

    The default document's Title is tracked (``w:spacing w:val="5"``, a quarter point); Word and
    LibreOffice then set an Arabic or Hindi title letter by letter, LibreOffice bridging each gap
    with a baseline stroke that runs through the title like a strikethrough. Other titles keep
    the template's tracking.
    """
    if not _JOINED_LETTERS.search(title):
        return
    for style in styles.iter(w("style")):
        name = style.find(w("name"))
        if name is None or name.get(w("val"), "").lower() != "title":
            continue
        rpr = style.find(w("rPr"))
        tracking = rpr.find(w("spacing")) if rpr is not None else None
        if rpr is not None and tracking is not None:
            rpr.remove(tracking)
