"""The PPTX writer's font discovery and its own ``cmap`` reader (checked against fontTools)."""

from __future__ import annotations

from pathlib import Path

import pytest

from renderers import fonts
from renderers.writers.typst.fonts import OTHER_FACES


def _measured_faces() -> list[str]:
    choice = fonts.default_fonts()
    found = {*choice.sans_files.values(), *choice.mono_files.values()}
    found.update(p for p in (fonts.find_font((n,)) for n in fonts.FALLBACK_FILES) if p)
    return sorted(found)


FACES = _measured_faces()


def test_fonts_are_found_for_both_families() -> None:
    choice = fonts.default_fonts()
    assert choice.sans_files and choice.mono_files, "no sans or mono font installed"
    assert set(choice.sans_files) == {"regular", "bold", "italic", "bolditalic"}


@pytest.mark.parametrize("path", FACES, ids=[Path(p).name for p in FACES])
def test_own_cmap_reader_agrees_with_fonttools(path: str) -> None:
    ours = fonts.coverage(path)
    assert ours == fonts.coverage_fonttools(path)
    assert len(ours) > 100


SCRIPT_FACES = sorted({name for face in OTHER_FACES for name in (face.text_file, face.code_file)})


@pytest.mark.parametrize("face", [*SCRIPT_FACES, "NotoSans-Regular.ttf"])
def test_own_ascender_and_descender_agree_with_fonttools(face: str) -> None:
    """The metrics the Typst writer's script rule is computed from (``hhea`` here, as no face
    of the report asks for OS/2's typographic ones), the first face of a collection's too."""
    from fontTools.ttLib import TTFont

    path = fonts.font_index().get(face.lower())
    if path is None:
        pytest.skip(f"{face} is not installed")
    font = TTFont(path, fontNumber=0, lazy=True)
    try:
        units = font["head"].unitsPerEm
        expected = (font["hhea"].ascent / units, -font["hhea"].descent / units)
    finally:
        font.close()
    assert fonts.ascender_descender(path) == expected


def test_a_subtable_the_reader_cannot_follow_goes_through_fonttools(tmp_path: Path) -> None:
    """A font whose best Unicode subtable is format 6 is read by fontTools, not dropped."""
    from fontTools.fontBuilder import FontBuilder
    from fontTools.ttLib.tables._c_m_a_p import cmap_format_6

    builder = FontBuilder(1000, isTTF=True)
    builder.setupGlyphOrder([".notdef", "A", "B"])
    builder.setupCharacterMap({0x41: "A", 0x42: "B"})
    table = builder.font["cmap"]
    sub = cmap_format_6(6)
    sub.platformID, sub.platEncID, sub.language = 3, 1, 0
    sub.cmap = {0x41: "A", 0x42: "B"}
    table.tables = [sub]
    builder.setupGlyf({name: _empty_glyph() for name in (".notdef", "A", "B")})
    builder.setupHorizontalMetrics({name: (500, 0) for name in (".notdef", "A", "B")})
    builder.setupHorizontalHeader()
    builder.setupNameTable({"familyName": "Probe", "styleName": "Regular"})
    builder.setupOS2()
    builder.setupPost()
    path = tmp_path / "probe.ttf"
    builder.save(str(path))
    assert fonts.coverage(str(path)) == {0x41, 0x42}


def _empty_glyph() -> object:
    from fontTools.pens.ttGlyphPen import TTGlyphPen

    return TTGlyphPen(None).glyph()
