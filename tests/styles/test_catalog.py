"""Loading CSL styles: bundled names, files through the sandbox, and every refusal."""

from __future__ import annotations

from pathlib import Path

import pytest

from renderers.document import Text
from renderers.errors import OptionError
from renderers.options import build_options
from renderers.styles.catalog import BUNDLED, MAX_STYLE_BYTES, load_style, styles_dir


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_every_bundled_style_loads_with_its_kind(name: str) -> None:
    style = load_style(name.upper(), build_options())
    assert style.name == name and style.id.startswith("http") and style.title
    kinds = {"chicago-note": "note"}
    assert style.style_class == kinds.get(name, "in-text")
    assert style.numeric == (name in {"ieee", "vancouver", "nature"})


def test_vancouver_is_a_dependent_style_rendered_with_its_parent() -> None:
    style = load_style("vancouver", build_options())
    assert style.id == "http://www.zotero.org/styles/vancouver-nlm"
    assert b"<citation" in style.xml and b"nlm-citation-sequence" in style.xml


def test_a_dependent_styles_own_default_locale_overrides_its_parents(tmp_path: Path) -> None:
    """CSL: a dependent style's ``default-locale`` wins over the parent's (the terms a
    document without a declared language reads)."""
    assert load_style("nature", build_options()).default_locale == "en-GB"
    assert load_style("vancouver", build_options()).default_locale == "en-US"
    (tmp_path / "german.csl").write_text(
        '<style xmlns="http://purl.org/net/xbiblio/csl" version="1.0" default-locale="de-DE">'
        "<info><title>German NLM</title><id>german-nlm</id><link rel=\"independent-parent\" "
        'href="http://www.zotero.org/styles/nlm-citation-sequence"/></info></style>', "utf-8")
    style = load_style("german.csl", build_options(base_dir=tmp_path))
    assert style.default_locale == "de-DE" and b"nlm-citation-sequence" in style.xml


def test_the_licence_notice_sits_beside_the_styles() -> None:
    folder = styles_dir()
    notice = (folder / "README.md").read_text("utf-8") + (folder / "LICENSE").read_text("utf-8")
    assert "Attribution-ShareAlike 3.0" in notice and "citationstyles.org" in notice
    for file in BUNDLED.values():
        assert f"`{file}`" in notice and (folder / file).is_file()


def test_a_style_file_inside_the_base_directory_is_read(tmp_path: Path) -> None:
    (tmp_path / "house.csl").write_bytes((styles_dir() / "ieee.csl").read_bytes())
    style = load_style("house.csl", build_options(base_dir=tmp_path))
    assert style.name == "house.csl" and style.numeric


def _refusal(value: str, base: Path | None = None) -> str:
    with pytest.raises(OptionError) as caught:
        load_style(value, build_options(base_dir=base))
    assert caught.value.field == "csl"
    message = str(caught.value)
    assert "accepted: one of ieee, apa" in message
    return message


def test_unknown_names_and_files_outside_the_base_directory_are_refused(tmp_path: Path) -> None:
    assert "not a bundled style name" in _refusal("mla", tmp_path)
    outside = tmp_path / "outside.csl"
    outside.write_bytes((styles_dir() / "apa.csl").read_bytes())
    inner = tmp_path / "inner"
    inner.mkdir()
    assert "cannot be read" in _refusal(str(outside), inner)
    assert "cannot be read" in _refusal("../outside.csl", inner)
    assert "cannot be read" in _refusal("missing.csl", tmp_path)


def test_a_refusal_names_one_directory_in_its_reason_and_its_accepted_clause(
    tmp_path: Path,
) -> None:
    """The reason said the directory's path and the accepted clause "the base directory": two
    names for one directory (and the service, hiding the path, showed two different words)."""
    inner = tmp_path / "inner"
    inner.mkdir()
    message = _refusal("../outside.csl", inner)
    reason, accepted = message.split("; accepted: ")
    assert reason.endswith(f"not a file inside {inner.resolve()})")
    assert accepted.endswith(f"or a .csl file inside {inner.resolve()}")


def test_hostile_or_broken_style_files_are_refused(tmp_path: Path) -> None:
    cases = {
        "xxe.csl": '<?xml version="1.0"?><!DOCTYPE s [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
                   '<style xmlns="http://purl.org/net/xbiblio/csl">&e;</style>',
        "broken.csl": "<style",
        "other.csl": "<html/>",
        "empty.csl": '<style xmlns="http://purl.org/net/xbiblio/csl" class="in-text"/>',
        "orphan.csl": '<style xmlns="http://purl.org/net/xbiblio/csl"><info><link '
                      'href="http://www.zotero.org/styles/unknown" rel="independent-parent"/>'
                      "</info></style>",
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text, "utf-8")
    assert "DTD or entities" in _refusal("xxe.csl", tmp_path)
    assert "not well-formed" in _refusal("broken.csl", tmp_path)
    assert "not a CSL style" in _refusal("other.csl", tmp_path)
    assert "no <citation>" in _refusal("empty.csl", tmp_path)
    assert "parent http://www.zotero.org/styles/unknown is not bundled" in _refusal(
        "orphan.csl", tmp_path
    )


def test_an_oversized_style_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "big.csl"
    with big.open("wb") as handle:
        handle.truncate(MAX_STYLE_BYTES + 1)
    assert f"at most {MAX_STYLE_BYTES}" in _refusal("big.csl", tmp_path)


def test_a_style_the_processor_cannot_run_is_an_option_error(tmp_path: Path) -> None:
    from renderers.pipeline import prepare

    head = '<style xmlns="http://purl.org/net/xbiblio/csl" version="1.0" class="in-text"'
    (tmp_path / "loop.csl").write_text(
        f'{head}><macro name="loop"><text macro="loop"/></macro><citation><layout>'
        '<text macro="loop"/></layout></citation></style>', "utf-8")
    with pytest.raises(OptionError) as caught:
        prepare("Claim [[S:1]].", sources_pool=[{"sid": 1, "title": "T"}],
                options=build_options(csl="loop.csl", base_dir=tmp_path))
    message = str(caught.value)
    assert caught.value.field == "csl" and "RecursionError" in message
    assert "accepted: a valid CSL 1.0 style" in message


def test_a_minimal_style_without_bibliography_or_known_locale_still_renders(
    tmp_path: Path,
) -> None:
    from renderers.pipeline import prepare

    (tmp_path / "tiny.csl").write_text(
        '<style xmlns="http://purl.org/net/xbiblio/csl" version="1.0" class="in-text" '
        'default-locale="xx-XX"><citation><layout><text variable="title"/></layout>'
        "</citation></style>", "utf-8")
    rdoc = prepare("Claim [[S:1]].", sources_pool=[{"sid": 1, "title": "T"}],
                   options=build_options(csl="tiny.csl", base_dir=tmp_path)).rdoc
    assert rdoc.style == "tiny.csl"
    assert [e.formatted for e in rdoc.entries] == [(Text("T"),)]  # the citation stands in
