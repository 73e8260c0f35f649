"""The one Jinja2 environment every HTML writer uses (templates from :mod:`renderers.templates`)."""

from __future__ import annotations

import base64
import hashlib
import re
from functools import lru_cache

import jinja2
from markupsafe import Markup

from renderers.fonts import ARABIC_BLOCKS, block_class
from renderers.labels import ENGLISH, Labels
from renderers.options import PageSize
from renderers.templates import templates_dir
from renderers.text import CjkRegion, text_direction
from renderers.writers.common import ADDED_SECTION_LEVEL, EntryParts, page_dimensions
from renderers.writers.html.breaks import breakable
from renderers.writers.html.list_numbers import li_value_style


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The shared environment: autoescaping, strict undefined variables, no caching surprises."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,
    )
    env.globals["li_value_style"] = li_value_style
    env.globals["part_dir"] = part_dir
    env.globals["heading_dir"] = heading_dir
    env.globals["section_level"] = ADDED_SECTION_LEVEL  # Notes, Sources: h2
    env.filters["breakable"] = breakable
    return env


def part_dir(entry: EntryParts, text: str) -> Markup:
    """The ``dir`` attribute of one part of a right-to-left Sources entry (title, domain, date,
    back-link): the part's own direction, the entry's for a part without a strong character (a
    date, the arrow, whose start margin then stays on the side of the date); nothing in a
    left-to-right entry.

    The attribute isolates the part: without it Chromium ran a Latin title, its domain and date
    together as one left-to-right run, where the entry reads part by part from the right (as
    both PDF engines lay it out). Not ``dir="auto"``, which WeasyPrint ignores: said, the
    direction also keeps a Latin title's final "?" at its end in the PDF."""
    if not entry.rtl:
        return Markup("")
    return Markup(f' dir="{entry.part_direction(text)}"')


def page_footer(words: Labels) -> str:
    """The CSS ``content`` of the page footer in the document's ``words``: ``"Page "
    counter(page) " of " counter(pages)``."""
    counters = {"page": "counter(page)", "pages": "counter(pages)"}
    return " ".join(
        counters[kind] if kind in counters else css_string(text)
        for kind, text in words.page_parts()
    )


def css_string(text: str) -> str:
    """``text`` as a CSS string (each of CSS's line breaks escaped: unescaped, one ends it)."""
    escaped = (text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\a ")
               .replace("\r", "\\d ").replace("\f", "\\c "))
    return f'"{escaped}"'


#: The footer report.css is written with (an English one), and its fonts.
_FOOTER = page_footer(ENGLISH)
_FOOTER_FONTS = '"Noto Sans", "DejaVu Sans", sans-serif'
#: The body's font families in report.css.
_BODY_FONTS = re.compile(r"\nhtml \{\n  font-family: ([^;]+);")


def heading_dir(text: str) -> Markup:
    """The ``dir`` attribute of the heading of a section the writers add (Contents, Notes,
    Sources) whose words read right to left ("المصادر"): WeasyPrint ignores the section's
    ``dir="auto"``, and set left to right such a heading stood at the left margin above
    entries set from the right. Nothing for any other heading."""
    return Markup(' dir="rtl"') if text_direction(text) == "rtl" else Markup("")


@lru_cache(maxsize=16)
def report_css(
    page_size: PageSize = "A4", cjk: CjkRegion = "SC", footer: str = _FOOTER
) -> str:
    """The print stylesheet with its page size set (``A4`` or ``Letter``), its CJK faces the
    regional ones of ``cjk`` (:meth:`renderers.language.Language.cjk_face`; report.css names
    SC) and its page footer ``footer`` (:func:`page_footer`).

    A footer in other words is set in the body's fonts: report.css's English one names Latin
    faces only, and fontconfig would draw "第 1 頁" in whichever CJK face it found first."""
    size = page_dimensions(page_size).css
    css = stylesheet("report.css").replace("/*PAGE_SIZE*/A4", size)
    if footer != _FOOTER:
        english = f"content: {_FOOTER};\n    font-family: {_FOOTER_FONTS};"
        body_fonts = _BODY_FONTS.search(css)
        if english not in css or body_fonts is None:
            raise RuntimeError("report.css: no English page footer or body fonts to replace")
        css = css.replace(english, f"content: {footer};\n    font-family: {body_fonts[1]};")
    for family in ("Noto Sans CJK", "Noto Sans Mono CJK"):
        css = css.replace(f'"{family} SC"', f'"{family} {cjk}"')
    return css


_ARABIC = re.compile(block_class(ARABIC_BLOCKS))
#: The faces of "Code Arabic", the first family of report.css's code font stack
#: (:data:`renderers.fonts.CODE_FACES`).
_CODE_ARABIC_FACES: tuple[tuple[str, str], ...] = (
    ("normal", "local(\"Noto Sans Arabic Regular\"), local(\"NotoSansArabic-Regular\")"),
    ("bold", "local(\"Noto Sans Arabic Bold\"), local(\"NotoSansArabic-Bold\")"),
)


def code_arabic_css(html: str) -> str:
    """The ``@font-face`` rules of "Code Arabic" when ``html`` has Arabic, else "".

    "DejaVu Sans Mono", the code font, draws Arabic upright, but its Oblique faces have none:
    an italic token (a comment) takes the upright face slanted, which WeasyPrint embeds under
    the real Oblique face's name, so the Arabic comes out blank. Naming the body's Arabic face
    for the Arabic blocks ahead of it draws Arabic code in every style. A page without Arabic
    goes without: each face costs WeasyPrint 20-30 ms of font configuration per document.
    """
    if _ARABIC.search(html) is None:
        return ""
    ranges = ", ".join(f"U+{lo:04X}-{hi:04X}" for lo, hi in ARABIC_BLOCKS)
    return "".join(
        f'@font-face {{ font-family: "Code Arabic"; font-weight: {weight}; src: {src}; '
        f"unicode-range: {ranges}; }}\n"
        for weight, src in _CODE_ARABIC_FACES
    )


#: The id of the citation-preview script every report carries (templates/preview.html.j2).
PREVIEW_SCRIPT_ID = "citation-previews"


@lru_cache(maxsize=1)
def preview_script_csp() -> str:
    """The Content-Security-Policy source (``'sha256-…'``) that lets the citation-preview
    script run where a policy forbids inline scripts (the export page's live preview)."""
    html = environment().get_template("preview.html.j2").render()
    body = html.split(f'<script id="{PREVIEW_SCRIPT_ID}">', 1)[1].split("</script>", 1)[0]
    digest = base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode("ascii")
    return f"'sha256-{digest}'"
@lru_cache(maxsize=4)
def stylesheet(name: str) -> str:
    """The stylesheet ``templates/<name>`` (report.css; contents.css when a render has a
    table of contents, title-block.css when it has a title block)."""
    return (templates_dir() / name).read_text(encoding="utf-8")
