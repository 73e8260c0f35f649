"""Every bundled CSL style in every format, and each citation format, against golden files.

One small fixture (``data/styled.md``: a single, a double, an attachment and repeated
citations; a report, a journal article, an author-less web page and a file) per style, in
``golden/<style>/``. Of DOCX and PPTX only the parts a style changes are kept (body, footnotes,
slides and their relationships): the theme and style sheets are the sample goldens' business.
Regenerate with ``pytest tests/styles --update-golden`` and review the diff.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from renderers.styles import BUNDLED
from renderers.testing import assert_matches_golden, render_artifacts

DATA = Path(__file__).resolve().parent / "data"
GOLDEN = Path(__file__).resolve().parent / "golden"
STYLE_FORMATS = ("html", "md", "docx", "pptx", "pdf")
#: Citation formats without a CSL style: their in-text forms, in the two text formats.
CITATION_FORMATS = ("brackets", "inline-links")
#: The OOXML parts a citation style shows in.
STYLED_PARTS = re.compile(
    r"word/(document|footnotes)\.xml|word/_rels/(document|footnotes)\.xml\.rels"
    r"|ppt/slides/(_rels/)?slide\d+\.xml(\.rels)?"
)
POOL = str(DATA / "styled-pool.json")


def styled_parts(path: Path) -> Path:
    """``path`` itself, or for DOCX/PPTX a package of only its :data:`STYLED_PARTS`."""
    if path.suffix not in (".docx", ".pptx"):
        return path
    kept = path.parent / "styled-parts" / path.name
    kept.parent.mkdir(exist_ok=True)
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(kept, "w") as target:
        for name in source.namelist():
            if STYLED_PARTS.fullmatch(name):
                target.writestr(name, source.read(name))
    return kept


@pytest.fixture(autouse=True)
def _no_epoch(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)  # as the sample goldens
    yield


@pytest.mark.slow
@pytest.mark.parametrize("style", sorted(BUNDLED))
def test_style_matches_golden(style: str, tmp_path: Path, update_golden: bool) -> None:
    paths = render_artifacts(DATA / "styled.md", tmp_path, sources_pool=POOL,
                             formats=STYLE_FORMATS, csl=style)
    assert sorted(p.suffix for p in paths) == sorted(f".{f}" for f in STYLE_FORMATS)
    for path in paths:
        assert_matches_golden(styled_parts(path), GOLDEN / style, update=update_golden or None)


@pytest.mark.parametrize("citation_format", CITATION_FORMATS)
def test_citation_format_matches_golden(
    citation_format: str, tmp_path: Path, update_golden: bool
) -> None:
    paths = render_artifacts(DATA / "styled.md", tmp_path, sources_pool=POOL,
                             formats=("html", "md"), citation_format=citation_format)
    for path in paths:
        assert_matches_golden(path, GOLDEN / citation_format, update=update_golden or None)


def test_no_golden_files_of_unknown_styles() -> None:
    stored = {p.name for p in GOLDEN.iterdir() if p.is_dir()} if GOLDEN.is_dir() else set()
    assert stored <= set(BUNDLED) | set(CITATION_FORMATS), stored
