"""Small builders for the Typst markup: calls, arrays, labels, a Sources entry, images.

Each takes values we produced (escaped strings, numbers, generated markup) and only arranges
them; no author text reaches Typst here except through
:func:`~renderers.writers.typst.escape.text_markup` and
:func:`~renderers.writers.typst.escape.string_literal`.
"""

from __future__ import annotations

import io
from collections.abc import Iterable

from renderers.document import InlineStyle
from renderers.sandbox import LoadedImage
from renderers.text import Direction, has_long_word, text_direction
from renderers.writers.common import BACKLINK_JOIN, BACKLINK_MARK, EntryParts, pdf_uri
from renderers.writers.typst.escape import isolated, string_literal, text_markup

#: Image formats Typst reads as they are; the others the sandbox accepts become PNG first.
TYPST_IMAGE_FORMATS: dict[str, str] = {
    "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp",
}  # fmt: skip
#: The template function drawing each inline style (``renderers.document.Styled``).
STYLE_FUNCTIONS: dict[InlineStyle, str] = {
    "sub": "sub-text",
    "sup": "super-text",
    "kbd": "kbd-text",
    "mark": "mark-text",
    "small": "small-text",
    "abbr": "abbr-text",
    "ins": "underline",
    "u": "underline",
}


class RootFiles:
    """The files a compile's root holds besides the main file: each distinct picture once,
    under a name we make (``image-1.png``, ``math-2.svg``), never one the input chose."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}  # name in the root → bytes
        self._names: dict[bytes, str] = {}

    def name_of(self, data: bytes, prefix: str, extension: str) -> tuple[str, bool]:
        """The file name holding ``data`` and whether it is new (its bytes not yet in the root)."""
        known = self._names.get(data)
        if known is not None:
            return known, False
        name = self._names[data] = f"{prefix}-{len(self.files) + 1}.{extension}"
        self.files[name] = data
        return name, True


def call(function: str, *args: str) -> str:
    """``#function(arg, …);`` — a call of a template function with arguments we built."""
    return f"#{function}({', '.join(args)});"


def content(markup: str) -> str:
    """``markup`` as a content argument: ``[markup]``."""
    return f"[{markup}]"


def section_title(text: str) -> str:
    """The title of a section the writers add (Contents, Notes, Sources) as a content
    argument, laid out right to left when its words read so ("المصادر" at the right margin
    of an Arabic document), as the HTML report's ``dir`` on its heading."""
    markup = text_markup(text)
    if text_direction(text) == "rtl":
        markup = call("directed", "rtl", content(markup))
    return content(markup)


def code_span(text: str, *, bidi: bool) -> str:
    """Inline code: its text on the shade, padded at both ends.

    A long word in it is a row of boxes or text items, and Typst shades each one apart; padding
    each one would lay its shade over the last glyph of the one before. Such a span is shaded
    without padding (``breakable``). ``bidi``: as for :func:`~.escape.text_markup` (a
    document with right-to-left text).
    """
    flags = ["breakable: true"] if has_long_word(text) else []
    return call("code-span", content(text_markup(text, bidi=bidi)), *flags)


def optional(markup: str) -> str:
    """A content argument, or ``none`` when there is no markup."""
    return content(markup) if markup else "none"


def array(items: Iterable[str]) -> str:
    """A Typst array literal (a one-item array needs its trailing comma)."""
    values = list(items)
    return "(" + ", ".join(values) + ("," if len(values) == 1 else "") + ")"


def label_call(name: str) -> str:
    """``#label("name")`` after an element: the anchor links and back-links jump to."""
    return f"#label({string_literal(name)})"


def labelled(markup: str, anchor: str) -> str:
    """A call (``#f(…);``) with the label ``anchor`` attached, so links can target it; the
    call as it is when there is no anchor."""
    if not anchor:
        return markup
    return markup.removesuffix(";") + label_call(anchor) + ";"


def typst_image(image: LoadedImage) -> tuple[bytes, str]:
    """``image`` as bytes Typst reads, with the file extension to store them under.

    PNG, JPEG, GIF and WebP go in as loaded; BMP and TIFF are converted to PNG.
    """
    extension = TYPST_IMAGE_FORMATS.get(image.mime)
    if extension is not None:
        return image.data, extension
    from PIL import Image as PILImage

    with PILImage.open(io.BytesIO(image.data)) as loaded:
        loaded.seek(0)
        alpha = "A" in loaded.getbands() or "transparency" in loaded.info
        converted = loaded.convert("RGBA" if alpha else "RGB")
    buffer = io.BytesIO()
    converted.save(buffer, "PNG")
    return buffer.getvalue(), "png"


#: The back-link's mark, escaped: the markup's own ↑ would read as the author's, one of the
#: symbols the body's stack draws from Noto Sans CJK, for which the writer loads those fonts
#: (:func:`~renderers.writers.typst.fonts.cjk_symbols_in`); it is drawn in the symbol fonts.
_BACKLINK_MARK = f'"\\u{{{ord(BACKLINK_MARK):x}}}"'
#: What joins the back-link to the word before it (``backlink`` in the template).
_BACKLINK_JOIN = string_literal(BACKLINK_JOIN)


def note_fields(anchor: str, marker: str, body: str, backlink: str, direction: str | None) -> str:
    """One entry of a Notes section as a Typst dictionary (``note-entry`` lays it out): its
    anchor, marker (``a.``, ``1.``), body markup, the anchor it links back to ("" for none)."""
    fields = {
        "anchor": string_literal(anchor),
        "marker": string_literal(marker),
        "body": content(body),
        "backlink": string_literal(backlink) if backlink else "none",
        "mark": _BACKLINK_MARK,
        "join": _BACKLINK_JOIN,
        "dir": direction or "none",
    }
    return "(" + ", ".join(f"{key}: {value}" for key, value in fields.items()) + ")"


#: The longest part of a right-to-left entry set as one box (a box does not wrap).
BOXED_PART = 60


def _part(text: str, entry: EntryParts, *, bidi: bool) -> str:
    """The markup of one part of an entry (its title, domain or date). In a right-to-left entry
    each part reads in its own direction (:meth:`~renderers.writers.common.EntryParts.
    part_direction`), apart from the others, as the HTML's ``dir`` on each part has WeasyPrint
    lay it out: the parts read right to left from the number, and a Latin title's final "?"
    stays at its end, where Typst, the title being text of the right-to-left line, moved it to
    the title's start. Each part is :func:`held` in its direction, so the separators around
    it take the entry's."""
    markup = text_markup(text, bidi=bidi)
    if not entry.rtl:
        return markup
    return held(markup, text, entry.part_direction(text))


def held(markup: str, text: str, direction: Direction) -> str:
    """``markup`` (showing ``text``) read in ``direction`` apart from the line around it (an
    entry's part, a citation: :func:`~renderers.writers.common.cite_direction`): a box set in
    that direction, which the bidi algorithm sees as one neutral object and which adds no
    character to the PDF's text; too long for a line (:data:`BOXED_PART`: a box does not
    wrap), between isolate marks (:func:`~.escape.isolated`)."""
    if len(text) > BOXED_PART:
        return isolated(markup, direction)
    return f"#directed({direction}, box[{markup}]);"


def source_entry(entry: EntryParts, formatted: str, *, bidi: bool) -> str:
    """One Sources entry as a Typst dictionary (``source-entry`` in the template lays it out);
    ``formatted`` is the markup of a CSL-styled entry ("" for the default look), held in its
    own direction when it is not the list's; ``bidi``: as for :func:`~.escape.text_markup`."""
    if formatted and (own := entry.formatted_direction) is not None:
        formatted = isolated(formatted, own)  # may wrap, so not a box
    details = array(
        f"({string_literal(d.separator)}, [{_part(d.text, entry, bidi=bidi)}])"
        for d in entry.details
    )
    fields = {
        "number": str(int(entry.number)),
        "anchor": string_literal(entry.anchor),
        "title": content(_part(entry.title, entry, bidi=bidi)),
        "url": string_literal(pdf_uri(entry.url)) if entry.url else "none",
        "details": details,
        "backlink": string_literal(entry.backlink) if entry.backlink else "none",
        "mark": _BACKLINK_MARK,
        "join": _BACKLINK_JOIN,
        "dir": "rtl" if entry.rtl else "none",
        "formatted": optional(formatted),
        "marker": string_literal(entry.marker),
    }
    return "(" + ", ".join(f"{key}: {value}" for key, value in fields.items()) + ")"
