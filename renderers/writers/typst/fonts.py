"""The fonts Typst may use: the report's Noto and DejaVu families, given explicitly.

Typst is never asked to scan the system's fonts: it would read every installed file on each
process start and pick differently from machine to machine. Instead the files of the families
``templates/report.typ`` names (and the Noto faces of the other living scripts, for text no
listed family covers) are linked into a directory of their own, and Typst reads only that
one: a private directory of links (hard links where allowed), made once per process. The CJK
collections take most of the time Typst needs to index the fonts, so they are given only to
documents that have a character they cover.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile
from functools import lru_cache
from typing import NamedTuple

import typst

from renderers.fonts import ascender_descender, coverage, font_index

#: Files of the families the template names, by family (first match of each name wins).
REPORT_FONTS: dict[str, tuple[str, ...]] = {
    "Noto Sans": ("NotoSans-Regular.ttf", "NotoSans-Bold.ttf", "NotoSans-Italic.ttf",
                  "NotoSans-BoldItalic.ttf"),
    "Noto Sans Arabic": ("NotoSansArabic-Regular.ttf", "NotoSansArabic-Bold.ttf"),
    "Noto Sans Devanagari": ("NotoSansDevanagari-Regular.ttf", "NotoSansDevanagari-Bold.ttf"),
    "DejaVu Sans": ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSans-Oblique.ttf",
                    "DejaVuSans-BoldOblique.ttf"),
    "DejaVu Sans Mono": ("DejaVuSansMono.ttf", "DejaVuSansMono-Bold.ttf",
                         "DejaVuSansMono-Oblique.ttf", "DejaVuSansMono-BoldOblique.ttf"),
    "Noto Sans Symbols 2": ("NotoSansSymbols2-Regular.ttf",),
    "Noto Color Emoji": ("NotoColorEmoji.ttf",),
}  # fmt: skip
#: The CJK collections (Sans and Mono faces for Chinese, Japanese and Korean).
CJK_FONTS: tuple[str, ...] = ("NotoSansCJK-Regular.ttc", "NotoSansCJK-Bold.ttc")
#: Further scripts (Noto Sans <Script>, regular and bold) for Typst's font fallback.
FALLBACK_SCRIPTS: tuple[str, ...] = (
    "Armenian", "Bengali", "Ethiopic", "Georgian", "Gujarati", "Gurmukhi", "Hebrew", "Kannada",
    "Khmer", "Lao", "Malayalam", "Math", "Myanmar", "Oriya", "Sinhala", "Symbols", "Syriac",
    "Tamil", "Telugu", "Thaana", "Thai",
)  # fmt: skip


class ScriptFace(NamedTuple):
    """A script the report's fonts draw with a face other than Noto Sans (in code: other than
    DejaVu Sans Mono), and the faces that draw it in WeasyPrint, in text and in code."""

    key: str  # the detection's key (renderers.language.has_script)
    scripts: tuple[str, ...]  # the script's names in Typst's regexes
    text_file: str
    code_file: str
    #: The family a word space after the script's characters is drawn in, in text and in code
    #: (report.typ's script-spaces): "auto" for the document's regional CJK face (report.typ's
    #: cjk-fonts), None where that face's space is as wide as the line font's (Noto Sans
    #: Arabic's and Devanagari's are Noto Sans's 0.26 em: tests/writers/test_typst.py checks).
    text_space: str | None
    code_space: str | None
    rtl: bool
    #: Scripts Pango shapes in a language of their own (its sample language), which changes
    #: the space after them: Noto Sans CJK's Korean one is 0.28 em, its default one 0.224 em.
    languages: tuple[tuple[str, str], ...] = ()


#: Hebrew: DejaVu Sans, the first face of the body's stack that has it; in code, where no face
#: of report.css's stack has it, fontconfig's fallback (Noto Sans Hebrew here). Arabic code is
#: in the body's face ("Code Arabic"); CJK code in Noto Sans Mono CJK, whose metrics are Noto
#: Sans CJK's. The symbols the body's stack takes from Noto Sans CJK (:func:`cjk_symbols`) are
#: not a script: the writer lists them apart.
OTHER_FACES: tuple[ScriptFace, ...] = (
    ScriptFace("ar", ("Arabic",), "NotoSansArabic-Regular.ttf", "NotoSansArabic-Regular.ttf",
               None, "Noto Sans Arabic", rtl=True),
    ScriptFace("hi", ("Devanagari",), "NotoSansDevanagari-Regular.ttf",
               "NotoSansDevanagari-Regular.ttf", None, "Noto Sans Devanagari", rtl=False),
    ScriptFace("he", ("Hebrew",), "DejaVuSans.ttf", "NotoSansHebrew-Regular.ttf", "DejaVu Sans",
               "Noto Sans Hebrew", rtl=True),
    ScriptFace("cjk", ("Han", "Hiragana", "Katakana", "Hangul"), "NotoSansCJK-Regular.ttc",
               "NotoSansCJK-Regular.ttc", "auto", "auto", rtl=False,
               languages=(("Hangul", "ko"),)),
)


#: The faces ahead of Noto Sans CJK in report.css's body stack (and report.typ's).
BEFORE_CJK: tuple[str, ...] = (
    "NotoSans-Regular.ttf", "NotoSansArabic-Regular.ttf", "NotoSansDevanagari-Regular.ttf")
#: Where that stack reaches Noto Sans CJK for symbols: Letterlike Symbols to Miscellaneous
#: Symbols and Arrows (the CJK face's other non-CJK glyphs are emoji's or Hangul's).
SYMBOL_BLOCKS = re.compile("[\u2100-\u2bff]")


@lru_cache(maxsize=1)
def cjk_symbols() -> frozenset[str]:
    """The symbols report.css's body stack draws from Noto Sans CJK, no face before it having
    them (arrows, mathematical operators, geometric shapes, the nested lists' ◦ and ▪): those
    of :data:`SYMBOL_BLOCKS` the installed files say so of, none without Noto Sans CJK. Read
    once per process (15 ms), only for text that has a character of those blocks."""
    index = font_index()
    path = index.get(CJK_FONTS[0].lower())
    if path is None:
        return frozenset()
    before = set().union(*(coverage(index[face.lower()]) for face in BEFORE_CJK
                           if face.lower() in index))
    return frozenset(chr(point) for point in coverage(path) - before
                     if SYMBOL_BLOCKS.fullmatch(chr(point)))


def cjk_symbols_in(text: str) -> str:
    """The characters of ``text`` that :func:`cjk_symbols` has, each once, in code point
    order (empty, and nothing read, for text without a character of :data:`SYMBOL_BLOCKS`)."""
    found = set(SYMBOL_BLOCKS.findall(text))
    return "".join(sorted(found & cjk_symbols())) if found else ""


@lru_cache(maxsize=8)
def face_metrics(face: str) -> tuple[float, float] | None:
    """The ascender and descender (positive) in em of ``face``, a file name, as CSS's content
    area takes them (:func:`~renderers.fonts.ascender_descender`); None when the
    face is not installed."""
    path = font_index().get(face.lower())
    return None if path is None else ascender_descender(path)


def font_files(*, cjk: bool) -> list[str]:
    """Paths of the installed files among the report's fonts (with the CJK collections or
    without), in a fixed order."""
    index = font_index()
    names = [name for files in REPORT_FONTS.values() for name in files]
    for script in FALLBACK_SCRIPTS:
        names += [f"NotoSans{script}-Regular.ttf", f"NotoSans{script}-Bold.ttf"]
    if cjk:
        names += CJK_FONTS
    return [index[name.lower()] for name in names if name.lower() in index]


def font_directory(paths: list[str]) -> str:
    """A private temporary directory holding links to exactly ``paths``, removed when the
    process that made it exits (Typst reads a face's data lazily, so the links must outlive
    each compile)."""
    directory = tempfile.mkdtemp(prefix="citerender-typst-fonts-")
    owner = os.getpid()
    atexit.register(_remove_if_owner, directory, owner)
    for position, path in enumerate(paths):
        _link(path, os.path.join(directory, f"{position:03d}-{os.path.basename(path)}"))
    return directory


def _link(target: str, name: str) -> None:
    """``name`` as a hard link to ``target``, or a symbolic link where a hard link is not
    allowed (another file system, or a file the user may not hard-link).

    Measured on this project's machines (ext4): 60 symbolic links cost 12–17 ms of CPU, because
    targets longer than 60 bytes need a block of their own; 60 hard links cost 1 ms. That is
    paid by every process that renders through Typst, the CLI's included.
    """
    try:
        os.link(target, name)
    except OSError:
        os.symlink(target, name)


def _remove_if_owner(directory: str, owner: int) -> None:
    """Remove ``directory`` at exit, only in the process that made it (not in forked copies)."""
    if os.getpid() == owner:
        shutil.rmtree(directory, ignore_errors=True)


@lru_cache(maxsize=2)
def report_fonts(*, cjk: bool = True) -> typst.Fonts:
    """Typst's font book over the report's fonts only (each variant built once per process)."""
    directory = font_directory(font_files(cjk=cjk))
    return typst.Fonts(include_system_fonts=False, include_embedded_fonts=True,
                       font_paths=[directory])
