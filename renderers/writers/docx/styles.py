"""Paragraph and character styles: resolve names to ids, add a fallback definition when the
base document lacks one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from docx.oxml.parser import parse_xml
from lxml import etree

from renderers.writers.docx.oxml import W_NS, Element, sub, w


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
    doc_defaults = styles.find(w("docDefaults"))
    if doc_defaults is None:
        doc_defaults = etree.Element(w("docDefaults"))
        styles.insert(0, doc_defaults)
    defaults = doc_defaults.find(w("rPrDefault"))
    if defaults is None:
        defaults = etree.Element(w("rPrDefault"))
        doc_defaults.insert(0, defaults)
    rpr = defaults.find(w("rPr"))
    if rpr is None:
        rpr = sub(defaults, "rPr")
    fonts = rpr.find(w("rFonts"))
    if fonts is None:
        fonts = etree.Element(w("rFonts"))
        rpr.insert(0, fonts)
    if fonts.get(w("eastAsia")) is None:
        fonts.set(w("eastAsia"), face)
    for themed in styles.iter(w("rFonts")):
        if themed.get(w("eastAsiaTheme")) is not None:
            del themed.attrib[w("eastAsiaTheme")]
            themed.set(w("eastAsia"), face)

