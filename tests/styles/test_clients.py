"""Styled citations and entries as real clients show them: DOCX and PPTX through LibreOffice,
PDF link tooltips through pypdf."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from renderers.api import render
from renderers.document import Cite, iter_inlines, plain_text
from renderers.options import build_options
from renderers.pipeline import prepare
from renderers.resolve import ResolvedDocument
from renderers.styles import BUNDLED
from tests.helpers import convert_all_with_libreoffice, pdf_text

DATA = Path(__file__).resolve().parent / "data"
POOL: list[dict[str, Any]] = json.loads((DATA / "styled-pool.json").read_text("utf-8"))
CONTENT = (DATA / "styled.md").read_text("utf-8")
STYLES = sorted(BUNDLED)


def squeeze(text: str) -> str:
    """Text without white space: line wrapping (URLs included) cannot hide a match."""
    return re.sub(r"\s+", "", text)


def resolved(style: str) -> ResolvedDocument:
    return prepare(CONTENT, sources_pool=POOL, options=build_options(csl=style)).rdoc


def expected_texts(style: str, *, notes: bool) -> list[str]:
    """Every entry as the style formats it, each styled in-text citation and (``notes``) each
    note: what a reader of the output must see."""
    rdoc = resolved(style)
    texts = [plain_text(e.formatted) for e in rdoc.entries]
    for cite in iter_inlines(rdoc.document.blocks):
        if isinstance(cite, Cite) and cite.children and (notes or not cite.note):
            texts.append(plain_text(cite.children).strip())
    return texts


@pytest.fixture(scope="module")
def office(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    """Each style's DOCX and PPTX, converted to PDF by LibreOffice in two batches: their text."""
    out = tmp_path_factory.mktemp("styled-office")
    files: dict[str, list[Path]] = {"docx": [], "pptx": []}
    for style in STYLES:
        for result in render(CONTENT, out, name=style, formats=["docx", "pptx"],
                             sources_pool=POOL, csl=style):
            files[result.format].append(Path(result.path))
    texts: dict[str, dict[str, str]] = {}
    for fmt, paths in files.items():
        target = out / f"from-{fmt}"
        target.mkdir()
        for style, pdf in zip(STYLES, convert_all_with_libreoffice(paths, target), strict=True):
            texts.setdefault(style, {})[fmt] = squeeze(pdf_text(pdf))
    return texts


@pytest.mark.libreoffice
@pytest.mark.slow
@pytest.mark.parametrize("style", STYLES)
def test_docx_shows_the_styled_entries_citations_and_notes(
    style: str, office: dict[str, dict[str, str]]
) -> None:
    text = office[style]["docx"]
    for expected in expected_texts(style, notes=True):  # notes are Word footnotes
        assert squeeze(expected) in text, (style, expected)


@pytest.mark.libreoffice
@pytest.mark.slow
@pytest.mark.parametrize("style", STYLES)
def test_pptx_shows_the_styled_entries_and_citations(
    style: str, office: dict[str, dict[str, str]]
) -> None:
    text = office[style]["pptx"]
    for expected in expected_texts(style, notes=False):  # slides cite notes by number
        assert squeeze(expected) in text, (style, expected)


@pytest.mark.libreoffice
def test_docx_italics_survive_in_libreoffice(tmp_path: Path) -> None:
    (result,) = render(CONTENT, tmp_path, formats=["docx"], sources_pool=POOL, csl="apa")
    (html,) = convert_all_with_libreoffice([Path(result.path)], tmp_path / "lo", "html")
    found = re.findall(r"<i>([^<]*)</i>", html.read_text("utf-8", errors="replace"))
    italic = [" ".join(text.split()) for text in found]
    assert "World Energy Outlook 2024" in italic and "Energy Policy" in italic, italic


def _tooltips(path: Path) -> dict[str, str]:
    from pypdf import PdfReader

    tips: dict[str, str] = {}
    for page in PdfReader(str(path)).pages:
        for ref in page.get("/Annots", []):
            annot = ref.get_object()
            target = annot.get("/Dest") or annot.get("/A", {}).get("/URI")
            tips[str(target)] = str(annot.get("/Contents", ""))
    return tips


@pytest.mark.parametrize("options", [{}, {"csl": "apa"}, {"citation_format": "inline-links"}],
                         ids=["default", "apa", "inline-links"])
def test_pdf_citation_links_have_the_source_title_as_tooltip(
    options: dict[str, str], tmp_path: Path
) -> None:
    (result,) = render(CONTENT, tmp_path, formats=["pdf"], sources_pool=POOL, **options)
    tips = _tooltips(Path(result.path))
    if options.get("citation_format") == "inline-links":
        iea = "https://www.iea.org/reports/world-energy-outlook-2024"
        assert tips[iea] == "World Energy Outlook 2024"
    else:
        assert tips["src-1"] == "World Energy Outlook 2024"
        assert tips["src-4"] == "Internal cost review"
    assert not any(tip.startswith(("src-", "cite-")) for tip in tips.values())


def test_html_input_keeps_the_authors_look_with_styled_citations(tmp_path: Path) -> None:
    html = ("<h1>Styled</h1><p>Solar led <sup class=\"cite\" data-sids=\"1\">[S:1]</sup> and "
            "costs fell [[S:2]].</p>")
    (result,) = render(html, tmp_path, formats=["pdf"], sources_pool=POOL, csl="apa")
    text = " ".join(pdf_text(Path(result.path)).split())
    assert "Solar led (IEA, 2024) and costs fell (Smith & Doe, 2024)." in text
    assert "Smith, J., & Doe, J. (2024). Solar module prices in 2024." in text
    assert _tooltips(Path(result.path))["src-2"] == "Solar module prices in 2024"
