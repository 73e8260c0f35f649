"""The slide model: what goes on which slide, measured (pandoc's split, document → slides → PPTX).

:func:`build_deck` turns a :class:`~renderers.resolve.ResolvedDocument` into a :class:`Deck` of
frozen :class:`Slide` values. Nothing here imports python-pptx: the PPTX writer only draws what
the model decided. Overflow is measured, never left to PowerPoint's autofit: every paragraph's
wrapped line count comes from real font metrics (:class:`TextMetrics`, Pillow on an installed
font file whose metrics match the typeface written into the deck), and text, tables and code
that would not fit the content box continue on a "Title (cont.)" slide.
"""

from __future__ import annotations

import dataclasses
import math
import mmap
import os
import re
import struct
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from citations.chars import UNSAFE_CHARS
from citations.links import safe_link
from citations.numbering import display_segments
from renderers.document import (
    Alignment,
    Block,
    BlockQuote,
    BulletList,
    Cite,
    Code,
    CodeBlock,
    Emph,
    Figure,
    FootnoteDef,
    FootnoteRef,
    Heading,
    Image,
    Inline,
    LineBreak,
    Link,
    ListItem,
    OrderedList,
    Paragraph,
    RawBlock,
    RawInline,
    SoftBreak,
    Strike,
    Strong,
    Styled,
    Table,
    TableCell,
    Text,
    ThematicBreak,
    plain_text,
    task_marker,
)
from renderers.errors import LimitError, UnsupportedNodeError
from renderers.options import RenderOptions
from renderers.resolve import ResolvedDocument, SourceEntry

EMU_PER_PT = 12700
#: Exact line spacing written into every paragraph, as a multiple of the font size.
LINE_FACTOR = 1.2
#: Text frame insets (points) written into every text box and table cell.
INSET_X = 7.2
INSET_Y = 3.6
#: Share of a box's inner width the wrapper may fill (renderers differ by a few per cent).
WIDTH_SLACK = 0.97

BODY_SIZE = 18.0
SUBHEAD_SIZE = 20.0
CODE_SIZE = 13.0
CAPTION_SIZE = 14.0
SOURCES_SIZE = 14.0
FOOTER_SIZE = 10.0
TITLE_SIZES = (30.0, 26.0, 22.0, 20.0)
COVER_SIZES = (40.0, 34.0, 28.0, 24.0)
SUBTITLE_SIZE = 20.0
FOOTER_MAX_LINES = 2
TAGLINE_MAX_CHARS = 160  # a longer line under the title stays on a body slide
LEVEL_INDENT = 24.0  # points per list/quote level
HANGING = 18.0  # bullet hanging indent (points)
ITEM_GAP = 8.0  # vertical gap between items on a slide (points)
BULLETS = ("•", "–", "◦")
CONT = " (cont.)"


def pt_to_emu(points: float) -> int:
    """Points → EMU, rounded up so a measured height is never shortened."""
    return math.ceil(points * EMU_PER_PT - 1e-6)


# ================================================================ fonts and metrics

Style = tuple[bool, bool, bool]  # (bold, italic, monospace)
FONT_DIRS = (
    "/usr/share/fonts",
    "/usr/local/share/fonts",
    "~/.local/share/fonts",
    "~/.fonts",
    "/Library/Fonts",
    "/System/Library/Fonts",
    "C:/Windows/Fonts",
)
_STYLE_NAMES = ("regular", "bold", "italic", "bolditalic")


@dataclass(frozen=True)
class FontFamily:
    """A typeface written into the deck and the file names whose metrics match it."""

    name: str
    files: Mapping[str, tuple[str, ...]]  # style name → candidate file names


SANS_FAMILIES = (
    # Liberation Sans is metric-compatible with Arial, present on every PowerPoint machine.
    FontFamily("Arial", {
        "regular": ("LiberationSans-Regular.ttf", "Arial.ttf", "arial.ttf"),
        "bold": ("LiberationSans-Bold.ttf", "Arial Bold.ttf", "arialbd.ttf"),
        "italic": ("LiberationSans-Italic.ttf", "Arial Italic.ttf", "ariali.ttf"),
        "bolditalic": ("LiberationSans-BoldItalic.ttf", "Arial Bold Italic.ttf", "arialbi.ttf"),
    }),
    FontFamily("DejaVu Sans", {
        "regular": ("DejaVuSans.ttf",), "bold": ("DejaVuSans-Bold.ttf",),
        "italic": ("DejaVuSans-Oblique.ttf",), "bolditalic": ("DejaVuSans-BoldOblique.ttf",),
    }),
    FontFamily("Noto Sans", {
        "regular": ("NotoSans-Regular.ttf",), "bold": ("NotoSans-Bold.ttf",),
        "italic": ("NotoSans-Italic.ttf",), "bolditalic": ("NotoSans-BoldItalic.ttf",),
    }),
)
MONO_FAMILIES = (
    FontFamily("Courier New", {
        "regular": ("LiberationMono-Regular.ttf", "Courier New.ttf", "cour.ttf"),
        "bold": ("LiberationMono-Bold.ttf", "Courier New Bold.ttf", "courbd.ttf"),
        "italic": ("LiberationMono-Italic.ttf", "Courier New Italic.ttf", "couri.ttf"),
        "bolditalic": ("LiberationMono-BoldItalic.ttf", "Courier New Bold Italic.ttf",
                       "courbi.ttf"),
    }),
    FontFamily("DejaVu Sans Mono", {
        "regular": ("DejaVuSansMono.ttf",), "bold": ("DejaVuSansMono-Bold.ttf",),
        "italic": ("DejaVuSansMono-Oblique.ttf",),
        "bolditalic": ("DejaVuSansMono-BoldOblique.ttf",),
    }),
)
#: Fonts measured for characters the chosen family lacks (CJK, Arabic, symbols …).
FALLBACK_FILES = (
    "DejaVuSans.ttf",
    "NotoSansCJK-Regular.ttc",
    "NotoSans-Regular.ttf",
    "NotoSansArabic-Regular.ttf",
    "NotoSansDevanagari-Regular.ttf",
)


@lru_cache(maxsize=1)
def font_index() -> dict[str, str]:
    """Lower-cased font file name → path, over the standard font directories (first wins)."""
    index: dict[str, str] = {}
    for raw in FONT_DIRS:
        root = Path(os.path.expanduser(raw))
        if not root.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in sorted(filenames):
                if name.lower().endswith((".ttf", ".otf", ".ttc")):
                    index.setdefault(name.lower(), os.path.join(dirpath, name))
    return index


def _find(names: Iterable[str]) -> str | None:
    index = font_index()
    for name in names:
        path = index.get(name.lower())
        if path:
            return path
    return None


@dataclass(frozen=True)
class FontChoice:
    """The typefaces a deck uses and the files measured for them (style name → path)."""

    sans: str
    mono: str
    sans_files: Mapping[str, str]
    mono_files: Mapping[str, str]


def _choose(families: Sequence[FontFamily]) -> tuple[str, dict[str, str]]:
    for family in families:
        regular = _find(family.files["regular"])
        if regular is None:
            continue
        files = {style: _find(family.files[style]) or regular for style in _STYLE_NAMES}
        return family.name, files
    return families[0].name, {}


@lru_cache(maxsize=1)
def default_fonts() -> FontChoice:
    """The first installed sans and monospace family (Arial/Liberation, DejaVu, Noto)."""
    sans, sans_files = _choose(SANS_FAMILIES)
    mono, mono_files = _choose(MONO_FAMILIES)
    return FontChoice(sans, mono, sans_files, mono_files)


class _Face:
    """One font file: per-character advance widths in em, and its character coverage."""

    def __init__(self, path: str | None) -> None:
        from PIL import ImageFont

        self._font: ImageFont.FreeTypeFont | ImageFont.ImageFont
        if path is None:
            self._font = ImageFont.load_default(size=1000)
            self._cmap: set[int] | None = None
        else:
            self._font = ImageFont.truetype(
                path, size=1000, layout_engine=ImageFont.Layout.BASIC
            )
            self._cmap = _coverage(path)
        self._widths: dict[str, float] = {}

    def covers(self, char: str) -> bool:
        return self._cmap is None or ord(char) in self._cmap

    def width(self, char: str) -> float:
        cached = self._widths.get(char)
        if cached is None:
            cached = self._font.getlength(char) / 1000.0
            self._widths[char] = cached
        return cached


Buffer = bytes | mmap.mmap
#: Unicode ``cmap`` subtables by preference (HarfBuzz's order, as fontTools' getBestCmap).
_CMAP_PREFERENCES = ((3, 10), (0, 6), (0, 4), (3, 1), (0, 3), (0, 2), (0, 1), (0, 0))


def _coverage(path: str) -> set[int]:
    """The code points the font maps to a glyph (its best Unicode ``cmap`` subtable).

    Formats 4 and 12 (every common font) are read directly, without importing fontTools and
    without naming glyphs; any other subtable, or a table this reader cannot follow, goes
    through fontTools, which gives the same set.
    """
    try:
        with (
            open(path, "rb") as handle,
            mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data,
        ):
            found = _read_cmap(data)
    except (OSError, struct.error, ValueError):
        found = None
    return found if found is not None else _coverage_fonttools(path)


def _read_cmap(data: Buffer) -> set[int] | None:
    """Coverage from the first font of ``data``; None when the subtable is not format 4/12."""
    base = struct.unpack_from(">I", data, 12)[0] if data[:4] == b"ttcf" else 0
    (num_tables,) = struct.unpack_from(">H", data, base + 4)
    cmap = next((offset for tag, _, offset, _ in
                 struct.iter_unpack(">4sIII", data[base + 12:base + 12 + 16 * num_tables])
                 if tag == b"cmap"), None)
    if cmap is None:
        return set()
    (count,) = struct.unpack_from(">H", data, cmap + 2)
    records = struct.iter_unpack(">HHI", data[cmap + 4:cmap + 4 + 8 * count])
    subtables: dict[tuple[int, int], int] = {}
    for platform, encoding, offset in records:
        subtables.setdefault((platform, encoding), cmap + offset)
    start = next((subtables[key] for key in _CMAP_PREFERENCES if key in subtables), None)
    if start is None:
        return set()
    (fmt,) = struct.unpack_from(">H", data, start)
    if fmt == 4:
        return _cmap_format_4(data, start)
    if fmt == 12:
        return _cmap_format_12(data, start)
    return None


def _cmap_format_4(data: Buffer, start: int) -> set[int]:
    """Segment mapping to delta values (the BMP); the final 0xFFFF segment is skipped."""
    length, _, seg_x2 = struct.unpack_from(">HHH", data, start + 2)
    seg = seg_x2 // 2
    words = struct.unpack_from(f">{(length - 14) // 2}H", data, start + 14)
    ends, starts = words[:seg], words[seg + 1:2 * seg + 1]
    deltas, range_offsets = words[2 * seg + 1:3 * seg + 1], words[3 * seg + 1:4 * seg + 1]
    glyphs = words[4 * seg + 1:]
    covered: set[int] = set()
    for i in range(seg - 1):
        first, delta, range_offset = starts[i], deltas[i], range_offsets[i]
        codes = range(first, ends[i] + 1)
        if range_offset == 0:
            covered.update(c for c in codes if (c + delta) & 0xFFFF)
            continue
        shift = range_offset // 2 - first + i - seg
        for code in codes:
            index = code + shift
            if not 0 <= index < len(glyphs):
                raise ValueError("cmap format 4: glyph index out of range")
            if glyphs[index] and (glyphs[index] + delta) & 0xFFFF:
                covered.add(code)
    return covered


def _cmap_format_12(data: Buffer, start: int) -> set[int] | None:
    """Segmented coverage (full Unicode); None for tables fontTools would repair."""
    (groups,) = struct.unpack_from(">I", data, start + 12)
    covered: set[int] = set()
    last_end = 0
    for first, last, glyph in struct.iter_unpack(">III", data[start + 16:start + 16 + 12 * groups]):
        if last > 0x10FFFF or first > last or first < last_end:
            return None
        last_end = last
        covered.update(range(first + (glyph == 0), last + 1))
    return covered


def _coverage_fonttools(path: str) -> set[int]:
    from fontTools.ttLib import TTFont  # lazy: only for subtables _read_cmap cannot follow

    font = TTFont(path, fontNumber=0, lazy=True)
    try:
        cmap = font.getBestCmap() or {}
        return set(cmap)
    finally:
        font.close()


@lru_cache(maxsize=16)
def _face(path: str | None) -> _Face:
    return _Face(path)


_CJK = "\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
#: One token per match: a line break, a run of spaces, a CJK character (breaks anywhere) or a
#: word, each followed by the spaces that hang after it.
_TOKENS = re.compile(f"(\n)|( +)|([{_CJK}])( *)|([^ \n{_CJK}]+)( *)")
_BREAK, _GAP, _WORD = 0, 1, 2


#: A wrap unit: [kind, offset of its first character, end of its word, word width (em),
#: width of the spaces hanging after it, whether a word continues into the next segment].
_Token = list[Any]


class TextMetrics:
    """Wrapped line counts of styled text, from real font metrics (cached per character)."""

    def __init__(self, fonts: FontChoice | None = None) -> None:
        self.fonts = fonts or default_fonts()
        self._widths: dict[Style, dict[str, float]] = {}
        self._runs: dict[Style, dict[str, float]] = {}  # width of whole words and space runs
        self._fallbacks = [p for p in (_find((n,)) for n in FALLBACK_FILES) if p]

    def _style_face(self, style: Style) -> _Face:
        bold, italic, mono = style
        files = self.fonts.mono_files if mono else self.fonts.sans_files
        name = ("bold" if bold else "") + ("italic" if italic else "") or "regular"
        return _face(files.get(name))

    def char_width(self, char: str, style: Style) -> float:
        """Advance width of ``char`` in em."""
        table = self._widths.setdefault(style, {})
        width = table.get(char)
        if width is None:
            width = self._measure(char, style)
            table[char] = width
        return width

    def _em_widths(self, text: str, style: Style) -> list[float]:
        table = self._widths.setdefault(style, {})
        try:
            return [table[ch] for ch in text]
        except KeyError:
            return [self.char_width(ch, style) for ch in text]

    def _measure(self, char: str, style: Style) -> float:
        if unicodedata.category(char) in ("Mn", "Me", "Cf"):
            return 0.0
        face = self._style_face(style)
        if face.covers(char):
            return face.width(char)
        for path in self._fallbacks:
            fallback = _face(path)
            if fallback.covers(char):
                return fallback.width(char) * (1.08 if style[0] else 1.0)
        return 1.0

    def line_height(self, size: float) -> float:
        """The exact line pitch (points) written for text of ``size`` points."""
        return size * LINE_FACTOR

    def _run_width(self, text: str, style: Style) -> float:
        """Width in em of a word or a run of spaces (cached: words repeat)."""
        table = self._runs.setdefault(style, {})
        width = table.get(text)
        if width is None:
            width = table[text] = sum(self._em_widths(text, style))
        return width

    def _tokens(
        self, segments: Iterable[tuple[str, Style]]
    ) -> tuple[list[_Token], list[tuple[int, str, Style]]]:
        """Wrap units of the joined text (a word split across segments is one unit)."""
        tokens: list[_Token] = []
        pieces: list[tuple[int, str, Style]] = []
        pos = 0
        for text, style in segments:
            if not text:
                continue
            pieces.append((pos, text, style))
            known = self._runs.setdefault(style, {})
            first = True
            for newline, spaces, cjk, cjk_tail, word, tail in _TOKENS.findall(text):
                if newline:
                    tokens.append([_BREAK, pos, pos + 1, 0.0, 0.0, False])
                    pos += 1
                elif spaces:
                    width = known.get(spaces)
                    if width is None:
                        width = self._run_width(spaces, style)
                    tokens.append([_GAP, pos, pos, width, 0.0, False])
                    pos += len(spaces)
                else:
                    body, trail = (word, tail) if word else (cjk, cjk_tail)
                    width = known.get(body)
                    if width is None:
                        width = self._run_width(body, style)
                    trailing = 0.0
                    if trail:
                        trailing = known.get(trail) or self._run_width(trail, style)
                    end = pos + len(body)
                    if first and word and tokens and tokens[-1][5]:
                        last = tokens[-1]
                        last[2:] = [end, last[3] + width, trailing, not trail]
                    else:
                        tokens.append([_WORD, pos, end, width, trailing, bool(word) and not trail])
                    pos = end + len(trail)
                first = False
            if tokens and tokens[-1][5] and tokens[-1][2] != pos:
                tokens[-1][5] = False
        return tokens, pieces

    def _span_widths(self, pieces: list[tuple[int, str, Style]], start: int,
                     end: int) -> list[float]:
        """Per-character widths (em) of joined-text offsets ``start``..``end``."""
        widths: list[float] = []
        for offset, text, style in pieces:
            lo, hi = max(start, offset), min(end, offset + len(text))
            if lo < hi:
                widths += self._em_widths(text[lo - offset:hi - offset], style)
        return widths

    def line_starts(
        self, segments: Iterable[tuple[str, Style]], width: float, size: float
    ) -> list[int]:
        """Offsets (into the joined text) where each wrapped line starts; ``\\n`` breaks a line.

        Greedy word wrap as PowerPoint does it: spaces hang at a line end, a word wider than
        the line breaks between characters, CJK characters break anywhere.
        """
        tokens, pieces = self._tokens(segments)
        limit = max(width * WIDTH_SLACK, size) / size  # in em from here on
        starts = [0]
        x = 0.0
        content = False
        for kind, start, end, w, trailing, _ in tokens:
            if kind == _BREAK:
                starts.append(end)
                x, content = 0.0, False
                continue
            if kind == _GAP:
                x += w
                continue
            if content and x + w > limit:
                starts.append(start)
                x, content = 0.0, False
            if w <= limit:
                x += w + trailing
                content = True
                continue
            for k, char_w in enumerate(self._span_widths(pieces, start, end), start):
                if content and x + char_w > limit:
                    starts.append(k)
                    x = 0.0
                x += char_w
                content = True
            x += trailing
        return starts

    def line_count(self, segments: Iterable[tuple[str, Style]], width: float, size: float) -> int:
        """Number of lines ``segments`` wrap to in a line ``width`` points wide."""
        return len(self.line_starts(segments, width, size))

    def text_width(self, text: str, style: Style, size: float) -> float:
        """Unwrapped width of ``text`` in points."""
        return sum(self._em_widths(text, style)) * size


# ================================================================ the model


@dataclass(frozen=True)
class Box:
    """A rectangle in EMU."""

    left: int
    top: int
    width: int
    height: int

    @property
    def bottom(self) -> int:
        return self.top + self.height

    @property
    def width_pt(self) -> float:
        return self.width / EMU_PER_PT

    @property
    def height_pt(self) -> float:
        return self.height / EMU_PER_PT


@dataclass(frozen=True)
class Geometry:
    """Slide size and the boxes the model fills (from the defaults or a reference deck)."""

    width: int
    height: int
    title: Box  # content slides' title
    content: Box  # content area (footer excluded)
    footer: Box
    cover_title: Box
    cover_subtitle: Box
    section_title: Box

    @classmethod
    def default(cls, ratio: str = "16:9", *, footer: bool = True) -> Geometry:
        """The built-in layout: 13.333×7.5 in (16:9) or 10×7.5 in (4:3)."""
        width_pt = 960.0 if ratio == "16:9" else 720.0
        return cls.from_boxes(
            width=pt_to_emu(width_pt),
            height=pt_to_emu(540.0),
            title=_box(36, 16, width_pt - 72, 80),
            body=_box(36, 104, width_pt - 72, 540 - 104 - 12),
            cover_title=_box(48, 130, width_pt - 96, 170),
            cover_subtitle=_box(48, 310, width_pt - 96, 90),
            section_title=_box(48, 170, width_pt - 96, 200),
            footer=footer,
        )

    @classmethod
    def from_boxes(
        cls,
        *,
        width: int,
        height: int,
        title: Box,
        body: Box,
        cover_title: Box,
        cover_subtitle: Box,
        section_title: Box,
        footer: bool,
    ) -> Geometry:
        """Split ``body`` into the content box and (when wanted) a footer strip below it."""
        footer_h = pt_to_emu(FOOTER_MAX_LINES * FOOTER_SIZE * LINE_FACTOR + 2 * INSET_Y)
        gap = pt_to_emu(6)
        bottom = min(body.bottom, height - pt_to_emu(8))
        if footer:
            content_h = bottom - footer_h - gap - body.top
            foot = Box(body.left, bottom - footer_h, body.width, footer_h)
        else:
            content_h = bottom - body.top
            foot = Box(body.left, bottom, body.width, 0)
        content = Box(body.left, body.top, body.width, max(content_h, pt_to_emu(120)))
        return cls(width, height, title, content, foot, cover_title, cover_subtitle,
                   section_title)


def _box(left: float, top: float, width: float, height: float) -> Box:
    return Box(pt_to_emu(left), pt_to_emu(top), pt_to_emu(width), pt_to_emu(height))


@dataclass(frozen=True)
class Run:
    """A styled piece of text. ``cite`` is a source number (links to its Sources slide),
    ``target`` an internal anchor (slide jump), ``url`` an external link (already vetted by
    ``safe_link``), ``defines`` an anchor id that lives here (a citation's ``cite-K``)."""

    text: str
    bold: bool = False
    italic: bool = False
    strike: bool = False
    code: bool = False
    superscript: bool = False
    url: str = ""
    target: str = ""
    cite: int = 0
    defines: str = ""

    @property
    def style(self) -> Style:
        return (self.bold, self.italic, self.code)

    def with_text(self, text: str) -> Run:
        """This run with other text (``dataclasses.replace`` without its per-call overhead)."""
        if text == self.text:
            return self
        return Run(text, self.bold, self.italic, self.strike, self.code, self.superscript,
                   self.url, self.target, self.cite, self.defines)


@dataclass(frozen=True)
class Para:
    """One paragraph: runs, indent level, bullet (a character, or ``number`` for ordered lists)."""

    runs: tuple[Run, ...]
    size: float = BODY_SIZE
    level: int = 0
    bullet: str = ""
    number: int = 0
    space_before: float = 6.0
    align: Alignment = "left"
    keep_with_next: bool = False  # a heading: never the last paragraph of a slide

    @property
    def margin_left(self) -> float:
        """Left margin in points (text start)."""
        return self.level * LEVEL_INDENT

    @property
    def indent(self) -> float:
        """First-line indent in points (negative = hanging bullet)."""
        return -HANGING if (self.bullet or self.number) else 0.0


@dataclass(frozen=True)
class TextItem:
    """A text box of paragraphs; ``top`` is the offset (EMU) inside the content box."""

    paras: tuple[Para, ...]
    top: int
    height: int


@dataclass(frozen=True)
class CodeItem:
    lines: tuple[str, ...]
    language: str
    top: int
    height: int
    size: float = CODE_SIZE


@dataclass(frozen=True)
class TableItem:
    """A PowerPoint table; ``header`` is repeated on every continuation slide."""

    header: tuple[tuple[Run, ...], ...]
    rows: tuple[tuple[tuple[Run, ...], ...], ...]
    aligns: tuple[Alignment, ...]
    col_widths: tuple[int, ...]
    row_heights: tuple[int, ...]  # header first when there is one
    size: float
    top: int
    height: int


@dataclass(frozen=True)
class Picture:
    """Image bytes as the sandboxed loader returned them."""

    data: bytes
    mime: str
    width: int  # pixels
    height: int


@dataclass(frozen=True)
class PictureItem:
    picture: Picture
    alt: str
    left: int  # offset inside the content box (centred)
    top: int
    width: int
    height: int


Item = TextItem | CodeItem | TableItem | PictureItem
SlideKind = Literal["title", "section", "content", "sources"]


@dataclass(frozen=True)
class Slide:
    """One slide: its title runs (and chosen size), items, footer runs and the anchors it holds."""

    kind: SlideKind
    title: tuple[Run, ...]
    title_size: float
    items: tuple[Item, ...] = ()
    subtitle: str = ""
    footer: tuple[Run, ...] = ()
    anchors: tuple[str, ...] = ()


@dataclass(frozen=True)
class Deck:
    """The whole slide model."""

    geometry: Geometry
    fonts: FontChoice
    slides: tuple[Slide, ...]
    anchors: Mapping[str, int]  # anchor id ("src-3", heading id, "cite-2") → slide index
    title: str
    warnings: tuple[str, ...] = field(default=())


ImageLoader = Callable[[str], Picture | None]

# ================================================================ inlines → runs

_SPACES = re.compile(r"[\t\r\n]+")


def clean(text: str) -> str:
    """Text safe for XML: control characters removed, tabs and newlines as spaces."""
    return UNSAFE_CHARS.sub("", _SPACES.sub(" ", text))


@dataclass(frozen=True)
class _Ctx:
    bold: bool = False
    italic: bool = False
    strike: bool = False
    url: str = ""
    target: str = ""


def inline_runs(inlines: tuple[Inline, ...], ctx: _Ctx = _Ctx()) -> list[Run]:
    """Runs for ``inlines``; a citation becomes superscript runs, one linked run per number."""
    runs: list[Run] = []
    for node in inlines:
        match node:
            case Text(text):
                runs.append(_run(clean(text), ctx))
            case SoftBreak():
                runs.append(_run(" ", ctx))
            case LineBreak():
                runs.append(Run("\n"))
            case Code(text):
                runs.append(dataclasses.replace(_run(clean(text), ctx), code=True))
            case RawInline(text):
                runs.append(_run(clean(text), ctx))
            case Emph(children):
                runs += inline_runs(children, dataclasses.replace(ctx, italic=True))
            case Strong(children):
                runs += inline_runs(children, dataclasses.replace(ctx, bold=True))
            case Strike(children):
                runs += inline_runs(children, dataclasses.replace(ctx, strike=True))
            case Styled(style, children):
                runs += _styled_runs(style, children, ctx)
            case Link(url, children):
                runs += inline_runs(children, _link_ctx(ctx, url))
            case Image(alt=alt):
                runs.append(_run(clean(f"[{alt or 'image'}]"), ctx))
            case FootnoteRef(label):
                runs.append(Run(clean(f"[{label}]"), superscript=True))
            case Cite(numbers=numbers, anchor=anchor):
                runs += cite_runs(numbers, anchor)
            case _:
                raise UnsupportedNodeError(f"pptx: inline node {type(node).__name__}")
    return runs


def _styled_runs(style: str, children: tuple[Inline, ...], ctx: _Ctx) -> list[Run]:
    """Runs for the safe HTML subset: ``sup`` is superscript, ``kbd`` code; the other styles
    keep their words unformatted (the slide model has no subscript, highlight or small print)."""
    runs = inline_runs(children, ctx)
    if style == "sup":
        return [dataclasses.replace(r, superscript=True) for r in runs]
    if style == "kbd":
        return [dataclasses.replace(r, code=True) for r in runs]
    return runs


def _run(text: str, ctx: _Ctx) -> Run:
    return Run(text, ctx.bold, ctx.italic, ctx.strike, url=ctx.url, target=ctx.target)


def _link_ctx(ctx: _Ctx, url: str) -> _Ctx:
    if url.startswith("#") and len(url) > 1:
        return dataclasses.replace(ctx, target=url[1:], url="")
    return dataclasses.replace(ctx, url=safe_link(url), target="")


def cite_runs(numbers: tuple[int, ...], anchor: str = "") -> list[Run]:
    """Superscript runs for a citation's numbers (``1–3, 5``); each number links to its entry."""
    runs: list[Run] = []
    for text, number in display_segments(numbers):
        defines = anchor if (number is not None and not runs) else ""
        runs.append(Run(text, superscript=True, cite=number or 0, defines=defines))
    return runs


def _merge_runs(runs: list[Run]) -> list[Run]:
    """Drop empty runs and merge adjacent runs of equal style (fewer XML runs)."""
    merged: list[Run] = []
    texts: list[list[str]] = []  # the texts each merged run joins
    for run in runs:
        if not run.text:
            continue
        last = merged[-1] if merged else None
        if (
            last is not None
            and run.text != "\n"
            and last.text != "\n"
            and not run.cite
            and not last.cite
            and not run.defines
            and _style_key(last) == _style_key(run)
        ):
            texts[-1].append(run.text)
        else:
            merged.append(run)
            texts.append([run.text])
    return [run.with_text("".join(parts)) for run, parts in zip(merged, texts, strict=True)]


def _style_key(run: Run) -> tuple[object, ...]:
    return (run.bold, run.italic, run.strike, run.code, run.superscript, run.url, run.target,
            run.cite, run.defines)


def normalize_runs(runs: Iterable[Run]) -> tuple[Run, ...]:
    """Runs merged and trimmed (leading/trailing spaces of the paragraph removed)."""
    merged = _merge_runs(list(runs))
    if merged and not merged[0].superscript:
        merged[0] = merged[0].with_text(merged[0].text.lstrip(" "))
    if merged and not merged[-1].superscript:
        merged[-1] = merged[-1].with_text(merged[-1].text.rstrip(" "))
    return tuple(r for r in merged if r.text)


def segments(runs: Iterable[Run]) -> list[tuple[str, Style]]:
    """The (text, style) pieces the metrics measure."""
    return [(r.text, r.style) for r in runs]


# ================================================================ the builder


class _DeckBuilder:
    """Lays blocks onto slides, measuring every piece against the content box."""

    def __init__(
        self,
        rdoc: ResolvedDocument,
        options: RenderOptions,
        geometry: Geometry,
        metrics: TextMetrics,
        load_image: ImageLoader,
    ) -> None:
        self.rdoc = rdoc
        self.options = options
        self.geo = geometry
        self.metrics = metrics
        self.load_image = load_image
        self.slides: list[Slide] = []
        self.warnings: list[str] = []
        self.labels = {e.number: e.label for e in rdoc.entries}
        self.content_h = geometry.content.height_pt
        self.content_w = geometry.content.width_pt
        # the open slide
        self.title: tuple[Run, ...] = ()
        self.title_base: tuple[Run, ...] = ()
        self.items: list[Item] = []
        self.paras: list[Para] = []
        self.para_h = 0.0  # height of pending paragraphs (points, insets excluded)
        self.y = 0.0  # points used by finished items, gaps included
        self.anchors: list[str] = []
        self.open = False

    # ------------------------------------------------------------ slide bookkeeping

    def start(self, title: tuple[Run, ...], *, cont: bool = False) -> None:
        """Open a content slide (closing any open one)."""
        self.close()
        self.title_base = title if not cont else self.title_base
        self.title = (*self.title_base, Run(CONT)) if cont else title
        self.items, self.paras, self.para_h, self.y = [], [], 0.0, 0.0
        self.open = True

    def continue_slide(self) -> None:
        """Open a "(cont.)" slide; a trailing sub-heading moves along with its content."""
        carry: Para | None = None
        if self.paras and self.paras[-1].keep_with_next and (len(self.paras) > 1 or self.items):
            carry = self.paras.pop()
            self.para_h -= self.para_height(carry, len(self.para_lines(carry)))
        self.start(self.title_base, cont=True)
        if carry is not None:
            self.add_para(carry)

    def ensure_open(self) -> None:
        if not self.open:
            self.start(self.title_base)

    def close(self) -> None:
        if not self.open:
            return
        self.flush_text()
        if self.items or self.anchors or self.title:
            self.add_slide("content", self.title, tuple(self.items))
        self.open = False

    def add_slide(
        self, kind: SlideKind, title: tuple[Run, ...], items: tuple[Item, ...] = (),
        subtitle: str = "",
    ) -> None:
        box = {"title": self.geo.cover_title, "section": self.geo.section_title}.get(
            kind, self.geo.title
        )
        sizes = COVER_SIZES if kind in ("title", "section") else TITLE_SIZES
        title, size = self.fit_title(title, box, sizes)
        runs = [*title, *(r for it in items for r in _item_runs(it))]
        footer = self.footer(runs) if self.options.source_footer and kind == "content" else ()
        anchors = [*self.anchors, *(r.defines for r in runs if r.defines)]
        self.anchors = []
        self.slides.append(Slide(kind, title, size, items, subtitle, footer, tuple(anchors)))

    def fit_title(
        self, title: tuple[Run, ...], box: Box, sizes: Sequence[float]
    ) -> tuple[tuple[Run, ...], float]:
        """The largest size at which the title fits its box; else truncated at the smallest."""
        width = box.width_pt - 2 * INSET_X
        bold = tuple(dataclasses.replace(r, bold=True) for r in title)
        for size in sizes:
            lines = self.metrics.line_count(segments(bold), width, size)
            if lines * self.metrics.line_height(size) + 2 * INSET_Y <= box.height_pt + 0.01:
                return bold, size
        size = sizes[-1]
        max_lines = max(1, int((box.height_pt - 2 * INSET_Y) // self.metrics.line_height(size)))
        return _truncate(bold, self.metrics, width, size, max_lines), size

    def footer(self, runs: Sequence[Run]) -> tuple[Run, ...]:
        """``[1] iea.org · [3] irena.org`` for the sources cited in ``runs``, fitted to 2 lines."""
        numbers = sorted({r.cite for r in runs if r.cite})
        if not numbers:
            return ()
        width = self.geo.footer.width_pt - 2 * INSET_X
        max_h = self.geo.footer.height_pt - 2 * INSET_Y + 0.01
        for shown in range(len(numbers), 0, -1):
            out: list[Run] = []
            for i, n in enumerate(numbers[:shown]):
                if i:
                    out.append(Run(" · "))
                out += [Run(f"[{n}]", cite=n), Run(f" {_cap(clean(self.labels.get(n, '')), 60)}")]
            if shown < len(numbers):
                out.append(Run(f" · +{len(numbers) - shown} more"))
            lines = self.metrics.line_count(segments(out), width, FOOTER_SIZE)
            if lines * self.metrics.line_height(FOOTER_SIZE) <= max_h:
                return tuple(out)
        return ()

    # ------------------------------------------------------------ text

    @property
    def text_width(self) -> float:
        return self.content_w - 2 * INSET_X

    def para_lines(self, para: Para) -> list[int]:
        width = self.text_width - para.margin_left
        return self.metrics.line_starts(segments(para.runs), width, para.size)

    def para_height(self, para: Para, lines: int) -> float:
        return para.space_before + lines * self.metrics.line_height(para.size)

    def room(self) -> float:
        """Points left for more paragraphs in the pending text box."""
        top = self.y + (ITEM_GAP if self.items else 0.0)
        return self.content_h - top - 2 * INSET_Y - self.para_h

    def next_top(self) -> float:
        """Top (points) of the next non-text item, as if the pending text box were finished."""
        y = self.y
        if self.paras:
            y += (ITEM_GAP if self.items else 0.0) + self.para_h + 2 * INSET_Y
        return y + (ITEM_GAP if (self.items or self.paras) else 0.0)

    def add_para(self, para: Para) -> None:
        """Place a paragraph, splitting it across slides at line boundaries when needed."""
        self.ensure_open()
        if not para.runs:
            return
        while True:
            starts = self.para_lines(para)
            height = self.para_height(para, len(starts))
            room = self.room()
            if height <= room + 0.01:
                self.paras.append(para)
                self.para_h += height
                return
            line_h = self.metrics.line_height(para.size)
            fit = int((room - para.space_before + 0.01) // line_h)
            if para.keep_with_next or fit < 1 or (fit < 2 and len(starts) > 2):
                if self.is_empty():
                    fit = max(fit, 1)  # never loop: an empty slide takes what it can
                else:
                    self.continue_slide()
                    continue
            if fit >= len(starts):
                fit = len(starts) - 1
            head, tail = split_para(para, starts[fit])
            self.paras.append(head)
            self.para_h += self.para_height(head, fit)
            self.continue_slide()
            para = tail

    def is_empty(self) -> bool:
        return not self.items and not self.paras

    def flush_text(self) -> None:
        if not self.paras:
            return
        gap = ITEM_GAP if self.items else 0.0
        top = self.y + gap
        height = self.para_h + 2 * INSET_Y
        self.items.append(TextItem(tuple(self.paras), pt_to_emu(top), pt_to_emu(height)))
        self.y = top + height
        self.paras, self.para_h = [], 0.0

    def place(self, height: float) -> float | None:
        """Top offset (points) for a non-text item of ``height``, or None when it does not fit.

        The pending text box is finished only when the item fits, so a trailing sub-heading can
        still move to the continuation slide with it.
        """
        top = self.next_top()
        if top + height <= self.content_h + 0.01 or self.is_empty():
            self.flush_text()
            return top
        return None

    # ------------------------------------------------------------ blocks

    def blocks(self, blocks: Sequence[Block], level: int = 0, italic: bool = False) -> None:
        for block in blocks:
            self.block(block, level, italic)

    def block(self, block: Block, level: int, italic: bool) -> None:
        match block:
            case Heading(lvl, children, hid):
                self.heading(lvl, children, hid)
            case Paragraph(children):
                self.paragraph(children, level, italic)
            case BulletList(items, tight):
                self.list_items(items, level, None, tight, italic)
            case OrderedList(items, start, tight):
                self.list_items(items, level, start, tight, italic)
            case Table():
                self.table(block)
            case CodeBlock(text, language):
                self.code(text, language)
            case BlockQuote(inner):
                self.blocks(inner, level + 1, True)
            case Figure(image, caption):
                self.figure(image, caption)
            case ThematicBreak():
                if self.open and not self.is_empty():
                    self.continue_slide()
            case RawBlock(text):
                self.code(text, "")
            case FootnoteDef(label, inner):
                self.footnote(label, inner)
            case _:
                raise UnsupportedNodeError(f"pptx: block node {type(block).__name__}")

    def heading(self, level: int, children: tuple[Inline, ...], hid: str) -> None:
        runs = normalize_runs(inline_runs(children))
        slide_level = self.options.slide_level
        if level < slide_level:
            self.close()
            if hid:
                self.anchors.append(hid)
            self.add_slide("section", runs)
            self.title_base = runs
            self.open = False
        elif level == slide_level:
            self.start(runs)
            if hid:
                self.anchors.append(hid)
        else:
            self.ensure_open()
            if hid:
                self.anchors.append(hid)
            size = SUBHEAD_SIZE if level == slide_level + 1 else BODY_SIZE
            bold = tuple(dataclasses.replace(r, bold=True) for r in runs)
            self.add_para(Para(bold, size=size, space_before=10.0, keep_with_next=True))

    def paragraph(self, children: tuple[Inline, ...], level: int, italic: bool) -> None:
        if len(children) == 1 and isinstance(children[0], Image) and level == 0:
            self.figure(children[0], ())
            return
        runs = _italic(normalize_runs(inline_runs(children)), italic)
        self.add_para(Para(runs, level=level))

    def list_items(
        self, items: tuple[ListItem, ...], level: int, start: int | None, tight: bool,
        italic: bool,
    ) -> None:
        depth = level + 1
        for index, item in enumerate(items):
            first = True
            bullet = "" if start is not None else BULLETS[(depth - 1) % len(BULLETS)]
            number = start + index if start is not None else 0
            box = task_marker(item.checked)
            for sub in item.blocks or (Paragraph(()),):
                if isinstance(sub, Paragraph) and first:
                    runs = _italic(normalize_runs(inline_runs(sub.children)), italic)
                    if box:
                        runs = (Run(box), *runs)
                    space = 3.0 if tight else 6.0
                    self.add_para(Para(runs or (Run(" "),), level=depth, bullet=bullet,
                                       number=number, space_before=space))
                elif isinstance(sub, Paragraph):
                    self.paragraph(sub.children, depth, italic)
                else:
                    if first:
                        self.add_para(Para((Run(box or " "),), level=depth, bullet=bullet,
                                           number=number, space_before=3.0))
                    self.block(sub, depth, italic)
                first = False

    def footnote(self, label: str, inner: tuple[Block, ...]) -> None:
        for index, sub in enumerate(inner):
            if isinstance(sub, Paragraph):
                runs = normalize_runs(inline_runs(sub.children))
                if index == 0:
                    runs = (Run(clean(f"[{label}] "), superscript=True), *runs)
                self.add_para(Para(runs, size=CAPTION_SIZE))
            else:
                self.block(sub, 0, False)

    # ------------------------------------------------------------ code

    def code(self, text: str, language: str) -> None:
        self.ensure_open()
        lines = [UNSAFE_CHARS.sub("", ln.replace("\t", "    ").rstrip("\r"))
                 for ln in text.rstrip("\n").split("\n")]
        width = self.text_width
        line_h = self.metrics.line_height(CODE_SIZE)
        counts = [
            self.metrics.line_count([(ln, (False, False, True))], width, CODE_SIZE)
            for ln in lines
        ]
        i = 0
        while i < len(lines):
            top = self.next_top()
            room = self.content_h - top - 2 * INSET_Y
            j, used = i, 0.0
            while j < len(lines) and used + counts[j] * line_h <= room + 0.01:
                used += counts[j] * line_h
                j += 1
            if j == i:
                if not self.is_empty():
                    self.continue_slide()
                    continue
                j = i + 1  # a single line taller than a whole slide
                lines[i], used = self.clip_code_line(lines[i], room)
            self.flush_text()
            height = used + 2 * INSET_Y
            self.items.append(CodeItem(tuple(lines[i:j]), language, pt_to_emu(top),
                                       pt_to_emu(height)))
            self.y = top + height
            i = j
            if i < len(lines):
                self.continue_slide()

    def clip_code_line(self, line: str, room: float) -> tuple[str, float]:
        line_h = self.metrics.line_height(CODE_SIZE)
        max_lines = max(1, int(room // line_h))
        style: Style = (False, False, True)
        starts = self.metrics.line_starts([(line, style)], self.text_width, CODE_SIZE)
        if len(starts) > max_lines:
            self.warnings.append("pptx: a code line too long for one slide was shortened")
            line = line[: max(starts[max_lines] - 1, 0)] + "…"
            starts = self.metrics.line_starts([(line, style)], self.text_width, CODE_SIZE)
        return line, len(starts) * line_h

    # ------------------------------------------------------------ tables

    def table(self, table: Table) -> None:
        self.ensure_open()
        ncols = max([len(table.header), *(len(r) for r in table.rows)], default=0)
        if ncols == 0:
            return
        size = 14.0 if ncols <= 5 else 12.0 if ncols <= 8 else 10.0
        header = _cells(table.header, ncols, bold=True) if table.header else ()
        rows = [_cells(r, ncols) for r in table.rows]
        aligns = tuple(_align(table.aligns, c) for c in range(ncols))
        widths = self.column_widths([header, *rows] if header else rows, ncols, size)
        avail_row = self.content_h - 2 * INSET_Y
        header_h = self.row_height(header, widths, size) if header else 0.0
        heights: list[float] = []
        for index, row in enumerate(rows):
            h = self.row_height(row, widths, size)
            if header_h + h > avail_row:
                row = self.clip_row(row, widths, size, avail_row - header_h)
                rows[index] = row
                h = self.row_height(row, widths, size)
            heights.append(h)
        col_emu = _distribute(self.geo.content.width, widths)
        i = 0
        while True:
            top = self.place(header_h + (heights[i] if i < len(rows) else 0.0))
            if top is None:
                self.continue_slide()
                continue
            j, used = i, header_h
            while j < len(rows) and top + used + heights[j] <= self.content_h + 0.01:
                used += heights[j]
                j += 1
            if j == i and i < len(rows):
                j = i + 1
            row_h = ((header_h,) if header else ()) + tuple(heights[i:j])
            row_emu = tuple(pt_to_emu(h) for h in row_h)
            self.items.append(TableItem(header, tuple(rows[i:j]), aligns, col_emu, row_emu,
                                        size, pt_to_emu(top), sum(row_emu)))
            self.y = top + sum(row_emu) / EMU_PER_PT
            i = j
            if i >= len(rows):
                break
            self.continue_slide()
        if table.caption:
            runs = _italic(normalize_runs(inline_runs(table.caption)), True)
            self.add_para(Para(runs, size=CAPTION_SIZE))

    def column_widths(
        self, rows: Sequence[tuple[tuple[Run, ...], ...]], ncols: int, size: float
    ) -> list[float]:
        """Column widths (points) proportional to content, each at least its longest word."""
        total = self.content_w
        natural = [2 * INSET_X + size] * ncols
        minimum = [2 * INSET_X + size] * ncols
        for row in rows:
            for c, cell in enumerate(row):
                text_w = sum(self.metrics.text_width(r.text, r.style, size) for r in cell)
                natural[c] = max(natural[c], text_w + 2 * INSET_X)
                for r in cell:
                    for word in r.text.split():
                        w = self.metrics.text_width(word, r.style, size) + 2 * INSET_X
                        minimum[c] = max(minimum[c], min(w, total / ncols))
        if sum(natural) <= total:
            scale = total / sum(natural)
            return [w * scale for w in natural]
        capped = [min(n, total * 0.6) for n in natural]
        rest = total - sum(minimum)
        if rest <= 0:
            return [total / ncols] * ncols
        extra = [max(c - m, 0.0) for c, m in zip(capped, minimum, strict=True)]
        share = sum(extra) or 1.0
        return [m + rest * e / share for m, e in zip(minimum, extra, strict=True)]

    def row_height(
        self, row: tuple[tuple[Run, ...], ...], widths: Sequence[float], size: float
    ) -> float:
        line_h = self.metrics.line_height(size)
        lines = max(
            (self.metrics.line_count(segments(cell), w - 2 * INSET_X, size)
             for cell, w in zip(row, widths, strict=True)),
            default=1,
        )
        return lines * line_h + 2 * INSET_Y

    def clip_row(
        self, row: tuple[tuple[Run, ...], ...], widths: Sequence[float], size: float,
        room: float,
    ) -> tuple[tuple[Run, ...], ...]:
        """A row taller than a whole slide: each cell shortened to the lines that fit."""
        self.warnings.append("pptx: a table row too tall for one slide was shortened")
        max_lines = max(1, int((room - 2 * INSET_Y) // self.metrics.line_height(size)))
        return tuple(
            _truncate(cell, self.metrics, w - 2 * INSET_X, size, max_lines)
            for cell, w in zip(row, widths, strict=True)
        )

    # ------------------------------------------------------------ images

    def figure(self, image: Image, caption: tuple[Inline, ...]) -> None:
        self.ensure_open()
        picture = self.load_image(image.src)
        cap_runs = _italic(normalize_runs(inline_runs(caption)), True) if caption else ()
        if picture is None or picture.width <= 0 or picture.height <= 0:
            alt = clean(image.alt or image.title or "image")
            self.add_para(Para((Run(f"[Image: {alt}]", italic=True),), size=CAPTION_SIZE))
            if cap_runs:
                self.add_para(Para(cap_runs, size=CAPTION_SIZE))
            return
        cap_h = 0.0
        if cap_runs:
            cap = Para(cap_runs, size=CAPTION_SIZE)
            cap_h = self.para_height(cap, len(self.para_lines(cap))) + 2 * INSET_Y + ITEM_GAP
        natural_w = picture.width * 0.75  # 96 dpi
        natural_h = picture.height * 0.75
        for attempt in range(2):
            top = self.next_top()
            room_h = self.content_h - top - cap_h
            scale = min(1.0, self.content_w / natural_w, max(room_h, 1.0) / natural_h)
            full = min(1.0, self.content_w / natural_w,
                       max(self.content_h - cap_h, 1.0) / natural_h)
            if attempt == 0 and not self.is_empty() and scale < 0.6 * full:
                self.continue_slide()
                continue
            self.flush_text()
            w, h = natural_w * scale, natural_h * scale
            left = (self.content_w - w) / 2
            self.items.append(PictureItem(picture, clean(image.alt), pt_to_emu(left),
                                          pt_to_emu(top), pt_to_emu(w), pt_to_emu(h)))
            self.y = top + h
            break
        if cap_runs:
            self.add_para(Para(cap_runs, size=CAPTION_SIZE, align="center"))

    # ------------------------------------------------------------ sources

    def sources(self, entries: Sequence[SourceEntry]) -> None:
        """Sources slides, paginated so none overflows; anchors ``src-N`` on each slide."""
        if not entries:
            return
        heading = (Run(clean(self.rdoc.sources_heading or "Sources")),)
        first = True
        pending: list[Para] = []
        numbers: list[int] = []
        used = 2 * INSET_Y
        for entry in entries:
            para = Para(entry_runs(entry), size=SOURCES_SIZE, space_before=4.0)
            h = self.para_height(para, len(self.para_lines(para)))
            if pending and used + h > self.content_h + 0.01:
                self.sources_slide(heading, first, pending, numbers, used)
                first, pending, numbers, used = False, [], [], 2 * INSET_Y
            pending.append(para)
            numbers.append(entry.number)
            used += h
        self.sources_slide(heading, first, pending, numbers, used)

    def sources_slide(
        self, heading: tuple[Run, ...], first: bool, paras: list[Para], numbers: list[int],
        used: float,
    ) -> None:
        title = heading if first else (*heading, Run(CONT))
        self.anchors = [f"src-{n}" for n in numbers]
        item = TextItem(tuple(paras), 0, pt_to_emu(min(used, self.content_h)))
        self.add_slide("sources", title, (item,))

    # ------------------------------------------------------------ the whole deck

    def build(self) -> Deck:
        blocks = list(self.rdoc.document.blocks)
        title = clean(self.options.title or self.rdoc.title)
        tagline = ""
        if blocks and isinstance(blocks[0], Heading) and blocks[0].level == 1:
            first = clean(plain_text(blocks[0].children)).strip()
            if not title or first == title.strip():
                title = title or first
                if blocks[0].id:
                    self.anchors.append(blocks[0].id)
                blocks.pop(0)
                tagline = _tagline(blocks)
                if tagline:
                    blocks.pop(0)
        if not title:
            title = next((clean(plain_text(b.children)) for b in blocks
                          if isinstance(b, Heading) and b.level == 1), "")
        if title:
            subtitle = " · ".join(x for x in (tagline, clean(self.options.author)) if x)
            self.add_slide("title", (Run(title.strip()),), subtitle=subtitle)
        self.blocks(blocks)
        self.close()
        self.sources(self.rdoc.entries)
        if len(self.slides) > self.options.limits.max_pages:
            raise LimitError(
                f"pptx: the deck needs {len(self.slides)} slides; the limit is "
                f"{self.options.limits.max_pages} (limits.max_pages)"
            )
        anchors: dict[str, int] = {}
        for index, slide in enumerate(self.slides):
            for anchor in slide.anchors:
                anchors.setdefault(anchor, index)
        return Deck(self.geo, self.metrics.fonts, tuple(self.slides), anchors, title,
                    tuple(self.warnings))


def _tagline(blocks: list[Block]) -> str:
    """The text of a short plain paragraph standing alone under the title heading, else "".

    Such a line (``Strategy offsite · Energy team · January 2025``) belongs on the title slide as
    its subtitle rather than on a slide of its own. Paragraphs with citations, links or images
    stay in the body, so nothing they carry is lost.
    """
    if not blocks or not isinstance(blocks[0], Paragraph):
        return ""
    if len(blocks) > 1 and not isinstance(blocks[1], Heading):
        return ""
    if any(not isinstance(node, Text | Emph | Strong | SoftBreak) for node in blocks[0].children):
        return ""
    text = " ".join(clean(plain_text(blocks[0].children)).split())
    return text if 0 < len(text) <= TAGLINE_MAX_CHARS else ""


def entry_runs(entry: SourceEntry) -> tuple[Run, ...]:
    """``[n] Title — label · date ↑`` with the title linked to the entry's URL (when safe)."""
    title = _cap(clean(entry.title), 300)
    label = _cap(clean(entry.label), 200)
    runs = [Run(f"[{entry.number}] ", bold=True), Run(title, url=entry.url)]
    detail = " · ".join(x for x in (label if label != title else "", clean(entry.date)) if x)
    if detail:
        runs.append(Run(f" — {detail}"))
    if entry.backlink:
        runs.append(Run(" ↑", target=entry.backlink))
    return tuple(runs)


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _item_runs(item: Item) -> Iterator[Run]:
    match item:
        case TextItem(paras):
            for para in paras:
                yield from para.runs
        case TableItem(header, rows):
            for cell in header:
                yield from cell
            for row in rows:
                for cell in row:
                    yield from cell
        case CodeItem() | PictureItem():
            return


def _italic(runs: tuple[Run, ...], italic: bool) -> tuple[Run, ...]:
    if not italic:
        return runs
    return tuple(r if r.superscript else dataclasses.replace(r, italic=True) for r in runs)


def _cells(
    cells: tuple[TableCell, ...], ncols: int, *, bold: bool = False
) -> tuple[tuple[Run, ...], ...]:
    out: list[tuple[Run, ...]] = []
    for c in range(ncols):
        runs = normalize_runs(inline_runs(cells[c].children)) if c < len(cells) else ()
        runs = tuple(dataclasses.replace(r, text=r.text.replace("\n", " ")) for r in runs)
        if bold:
            runs = tuple(r if r.superscript else dataclasses.replace(r, bold=True) for r in runs)
        out.append(runs)
    return tuple(out)


def _align(aligns: tuple[Alignment, ...], column: int) -> Alignment:
    return aligns[column] if column < len(aligns) else "default"


def _distribute(total: int, widths: Sequence[float]) -> tuple[int, ...]:
    """Integer EMU widths proportional to ``widths`` summing exactly to ``total``."""
    scale = sum(widths) or 1.0
    out = [int(total * w / scale) for w in widths]
    out[-1] += total - sum(out)
    return tuple(out)


def split_para(para: Para, offset: int) -> tuple[Para, Para]:
    """Split ``para`` at character ``offset`` of its joined text; the tail has no bullet."""
    head: list[Run] = []
    tail: list[Run] = []
    pos = 0
    for run in para.runs:
        end = pos + len(run.text)
        if end <= offset:
            head.append(run)
        elif pos >= offset:
            tail.append(run)
        else:
            cut = offset - pos
            head.append(run.with_text(run.text[:cut]))
            tail.append(dataclasses.replace(run, text=run.text[cut:], defines=""))
        pos = end
    while head and head[-1].text == "\n":
        head.pop()
    while tail and tail[0].text == "\n":
        tail.pop(0)
    return (
        dataclasses.replace(para, runs=normalize_runs(head)),
        dataclasses.replace(
            para, runs=normalize_runs(tail), bullet="", number=0, space_before=0.0
        ),
    )


def _truncate(
    runs: tuple[Run, ...], metrics: TextMetrics, width: float, size: float, max_lines: int
) -> tuple[Run, ...]:
    """``runs`` cut to ``max_lines`` wrapped lines, ending with an ellipsis."""
    starts = metrics.line_starts(segments(runs), width, size)
    if len(starts) <= max_lines:
        return runs
    cut = starts[max_lines] - 1
    while cut > 0:
        head, _ = split_para(Para(runs, size=size), cut)
        candidate = (*head.runs, Run("…", bold=runs[0].bold if runs else False))
        if metrics.line_count(segments(candidate), width, size) <= max_lines:
            return candidate
        cut -= max(1, cut // 20)
    return (Run("…"),)


def build_deck(
    rdoc: ResolvedDocument,
    options: RenderOptions,
    geometry: Geometry | None = None,
    *,
    metrics: TextMetrics | None = None,
    load_image: ImageLoader | None = None,
) -> Deck:
    """The measured slide model of ``rdoc`` (``geometry`` defaults to the built-in layout)."""
    geo = geometry or Geometry.default(options.slide_ratio, footer=options.source_footer)
    builder = _DeckBuilder(
        rdoc, options, geo, metrics or TextMetrics(), load_image or (lambda _src: None)
    )
    return builder.build()
