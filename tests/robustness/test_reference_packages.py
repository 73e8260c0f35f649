"""Reference DOCX/PPTX templates are bounded: a zip bomb or broken package is an input error."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import docx
import pytest
from pptx import Presentation

from renderers import write_docx, write_pptx
from renderers.errors import InputError
from renderers.writers.ooxml import MAX_REFERENCE_PART_BYTES


def _real_docx(path: Path) -> Path:
    docx.Document().save(str(path))
    return path


def _rewrite(source: Path, target: Path, replace: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            new.writestr(info.filename, replace.pop(info.filename, old.read(info.filename)))
        for name, data in replace.items():
            new.writestr(name, data)
    return target


def test_a_zip_bomb_reference_docx_is_refused_before_it_is_unpacked(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.docx"
    _real_docx(tmp_path / "base.docx")
    _rewrite(tmp_path / "base.docx", bomb, {})
    with zipfile.ZipFile(bomb, "a", zipfile.ZIP_DEFLATED) as package, package.open(
        "word/media/huge.bin", "w", force_zip64=True
    ) as handle:
        chunk = bytes(1 << 20)
        for _ in range(MAX_REFERENCE_PART_BYTES // len(chunk) + 1):
            handle.write(chunk)
    assert bomb.stat().st_size < 2 * 1024 * 1024
    with pytest.raises(InputError, match=r"reference_docx .*huge\.bin.*unpacks to"):
        write_docx("Text.", tmp_path / "out.docx", reference_docx=bomb)
    assert not (tmp_path / "out.docx").exists()


@pytest.mark.parametrize(
    ("part", "data"),
    [
        ("[Content_Types].xml", b"<Types><broken"),
        ("word/document.xml",
         b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">'
         b'<!ENTITY c "&b;&b;&b;&b;">]><w:document xmlns:w="http://schemas.openxmlformats.org/'
         b'wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>&c;</w:t></w:r></w:p></w:body>'
         b"</w:document>"),
        ("word/styles.xml", b"\x00\x01 not xml"),
    ],
    ids=["content-types", "entity-expansion", "binary-styles"],
)
def test_a_broken_reference_docx_is_an_input_error_naming_the_option(
    tmp_path: Path, part: str, data: bytes
) -> None:
    bad = _rewrite(_real_docx(tmp_path / "base.docx"), tmp_path / "bad.docx", {part: data})
    try:
        result = write_docx("Text.", tmp_path / "out.docx", reference_docx=bad)
    except InputError as exc:
        assert "reference_docx" in str(exc)
    else:  # a package the library can read safely (entities are never expanded) is fine
        assert result.path.exists()
        assert b"aaaaaaaaaa" * 16 not in result.path.read_bytes()


_DTD_STYLES = (
    '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY b "bbbb">]><w:styles xmlns:w="http://schemas.'
    'openxmlformats.org/wordprocessingml/2006/main">&b;</w:styles>'
)


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
def test_a_reference_docx_part_declaring_a_dtd_is_refused(tmp_path: Path, encoding: str) -> None:
    """python-docx keeps the entity reference but drops its DTD, so the DOCX it wrote held an
    undeclared ``&b;``: not XML, which LibreOffice would not open. OOXML forbids DTDs."""
    styles = _DTD_STYLES.replace('"1.0"?', f'"1.0" encoding="{encoding}"?').encode(encoding)
    bad = _rewrite(_real_docx(tmp_path / "base.docx"), tmp_path / "bad.docx",
                   {"word/styles.xml": styles})
    with pytest.raises(InputError, match=r"reference_docx .*'word/styles\.xml', which declares a"):
        write_docx("Text.", tmp_path / "out.docx", reference_docx=bad)
    assert not (tmp_path / "out.docx").exists()


def test_a_reference_pptx_part_declaring_a_dtd_is_refused(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    Presentation().save(buffer)
    (tmp_path / "base.pptx").write_bytes(buffer.getvalue())
    theme = "ppt/theme/theme1.xml"
    with zipfile.ZipFile(tmp_path / "base.pptx") as package:
        xml = package.read(theme).decode()
    declared = xml.replace("?>", '?><!DOCTYPE a:theme [<!ENTITY x "x">]>', 1).encode()
    bad = _rewrite(tmp_path / "base.pptx", tmp_path / "bad.pptx", {theme: declared})
    with pytest.raises(InputError, match=r"reference_pptx .*theme1\.xml', which declares a DTD"):
        write_pptx("# Slide\n\nText.", tmp_path / "out.pptx", reference_pptx=bad)


def test_a_reference_pptx_that_is_not_a_zip_is_an_input_error(tmp_path: Path) -> None:
    fake = tmp_path / "deck.pptx"
    fake.write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(InputError, match="reference_pptx"):
        write_pptx("# Slide\n\nText.", tmp_path / "out.pptx", reference_pptx=fake)


def test_a_sound_reference_pptx_still_works(tmp_path: Path) -> None:
    deck = tmp_path / "ref.pptx"
    buffer = io.BytesIO()
    Presentation().save(buffer)
    deck.write_bytes(buffer.getvalue())
    result = write_pptx("# Slide\n\nText.", tmp_path / "out.pptx", reference_pptx=deck)
    assert result.path.exists()
