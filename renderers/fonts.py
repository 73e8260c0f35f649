"""The installed font files the writers share: discovery, character coverage and metrics.

The PPTX deck names a typeface (Arial, DejaVu Sans …); its layout measures text with an installed
file whose metrics match it. This module finds those files, and tells which characters each one
covers so that text a face lacks (CJK, Arabic …) is measured with the fallback a viewer would use.
Both PDF engines ask it which files are installed, and the Typst engine reads faces' ascenders
and descenders from it (the line depth WeasyPrint gives each script).
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

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

#: The Unicode blocks of the Arabic script (and its presentation forms, without U+FEFF).
ARABIC_BLOCKS: tuple[tuple[int, int], ...] = (
    (0x0600, 0x06FF), (0x0750, 0x077F), (0x0870, 0x08FF), (0xFB50, 0xFDFF), (0xFE70, 0xFEFC),
)
#: The Unicode blocks of the Hebrew script (and its presentation forms).
HEBREW_BLOCKS: tuple[tuple[int, int], ...] = ((0x0590, 0x05FF), (0xFB1D, 0xFB4F))


@dataclass(frozen=True)
class CodeFace:
    """A face code in one script is drawn in, in both PDF engines, instead of the code font
    (DejaVu Sans Mono), so that the two engines draw it alike.

    ``first``: named ahead of the code font, for its script's blocks only. DejaVu Sans Mono
    has Arabic in its upright faces but not in its Oblique ones (an italic comment's Arabic
    came out blank in WeasyPrint), so Arabic code is in the body's Arabic face ("Code Arabic",
    renderers/writers/html/templating.py). Otherwise it follows the code font, which lacks the
    script: Hebrew, which WeasyPrint's font configuration takes from Noto Sans Hebrew (no face
    of report.css's code stack has it) and Typst from the first body face that has it (DejaVu
    Sans) unless told.
    """

    script: str  # the detection's key (renderers.language.has_script)
    family: str
    blocks: tuple[tuple[int, int], ...]
    first: bool


CODE_FACES: tuple[CodeFace, ...] = (
    CodeFace("ar", "Noto Sans Arabic", ARABIC_BLOCKS, first=True),
    CodeFace("he", "Noto Sans Hebrew", HEBREW_BLOCKS, first=False),
)


def block_class(blocks: Sequence[tuple[int, int]]) -> str:
    """A regular expression's character class matching a character of ``blocks``."""
    return "[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in blocks) + "]"


#: Endings of the font files the standard font directories are searched for.
FONT_SUFFIXES = (".ttf", ".otf", ".ttc")


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
                if name.lower().endswith(FONT_SUFFIXES):
                    index.setdefault(name.lower(), os.path.join(dirpath, name))
    return index


def installed_font_file(path: str) -> bool:
    """Whether ``path`` is a font file in one of the standard font directories: a file any
    layout engine reads through the system's font configuration anyway."""
    normal = os.path.normpath(os.path.abspath(path))
    if not normal.lower().endswith(FONT_SUFFIXES) or not os.path.isfile(normal):
        return False
    roots = (os.path.normpath(os.path.expanduser(raw)) for raw in FONT_DIRS)
    return any(normal.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def find_font(names: Iterable[str]) -> str | None:
    """The path of the first of ``names`` installed, or None."""
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
        regular = find_font(family.files["regular"])
        if regular is None:
            continue
        files = {style: find_font(family.files[style]) or regular for style in _STYLE_NAMES}
        return family.name, files
    return families[0].name, {}


@lru_cache(maxsize=1)
def default_fonts() -> FontChoice:
    """The first installed sans and monospace family (Arial/Liberation, DejaVu, Noto)."""
    sans, sans_files = _choose(SANS_FAMILIES)
    mono, mono_files = _choose(MONO_FAMILIES)
    return FontChoice(sans, mono, sans_files, mono_files)


class FontFace:
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
            self._cmap = coverage(path)
        self._widths: dict[str, float] = {}

    def covers(self, char: str) -> bool:
        """Whether the file has a glyph for ``char`` (the built-in font claims everything)."""
        return self._cmap is None or ord(char) in self._cmap

    def width(self, char: str) -> float:
        """Advance width of ``char`` in em."""
        cached = self._widths.get(char)
        if cached is None:
            cached = self._font.getlength(char) / 1000.0
            self._widths[char] = cached
        return cached


Buffer = bytes | mmap.mmap
#: Unicode ``cmap`` subtables by preference (HarfBuzz's order, as fontTools' getBestCmap).
_CMAP_PREFERENCES = ((3, 10), (0, 6), (0, 4), (3, 1), (0, 3), (0, 2), (0, 1), (0, 0))


def coverage(path: str) -> set[int]:
    """The code points the font maps to a glyph (its best Unicode ``cmap`` subtable).

    Formats 4 and 12 (every common font) are read directly; any other subtable, or a table
    this reader cannot follow, goes through fontTools, which gives the same set (a test compares
    the two on every installed font the writer uses).

    Why not fontTools alone: ``getBestCmap`` names every glyph (it parses ``post``) and needs
    fontTools imported. Measured with ``bench/cmap_bench.py`` (cold child processes, median of
    5, 2 busy cores): the four faces of a plain deck take 0.070 s CPU through fontTools (import
    included) against 0.002 s here; all 13 faces with the CJK fallback 0.24 s against 0.017 s;
    laying out and writing a whole small deck takes 0.032 s. fontTools would triple that.
    """
    try:
        with (
            open(path, "rb") as handle,
            mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data,
        ):
            found = _read_cmap(data)
    except (OSError, struct.error, ValueError):
        found = None
    return found if found is not None else coverage_fonttools(path)


def _table(data: Buffer, tag: bytes) -> int | None:
    """The offset of table ``tag`` of the first font of ``data`` (a collection's too)."""
    base = struct.unpack_from(">I", data, 12)[0] if data[:4] == b"ttcf" else 0
    (num_tables,) = struct.unpack_from(">H", data, base + 4)
    return next((offset for name, _, offset, _ in
                 struct.iter_unpack(">4sIII", data[base + 12:base + 12 + 16 * num_tables])
                 if name == tag), None)


@lru_cache(maxsize=16)
def ascender_descender(path: str) -> tuple[float, float]:
    """The first face's ascender and descender (below the baseline: positive) in em, as
    HarfBuzz, and so WeasyPrint, takes them for a line's content area: OS/2's typographic ones
    when the font asks for them (USE_TYPO_METRICS), ``hhea``'s otherwise."""
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        head, hhea, os2 = (_table(data, tag) for tag in (b"head", b"hhea", b"OS/2"))
        if head is None or hhea is None:
            raise ValueError(f"{path}: no head or hhea table")
        (units,) = struct.unpack_from(">H", data, head + 18)
        ascender, descender = struct.unpack_from(">hh", data, hhea + 4)
        if os2 is not None and struct.unpack_from(">H", data, os2 + 62)[0] & 0x80:
            ascender, descender = struct.unpack_from(">hh", data, os2 + 68)
    return ascender / units, -descender / units


def _read_cmap(data: Buffer) -> set[int] | None:
    """Coverage from the first font of ``data``; None when the subtable is not format 4/12."""
    cmap = _table(data, b"cmap")
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


def coverage_fonttools(path: str) -> set[int]:
    """The same set through fontTools (subtables other than format 4 or 12)."""
    from fontTools.ttLib import TTFont  # lazy: rarely needed, and costly to import


    font = TTFont(path, fontNumber=0, lazy=True)
    try:
        cmap = font.getBestCmap() or {}
        return set(cmap)
    finally:
        font.close()


@lru_cache(maxsize=16)
def font_face(path: str | None) -> FontFace:
    """The (shared) face of ``path``; None is Pillow's built-in font."""
    return FontFace(path)

