"""A markdown answer's YAML front matter reaches every format's metadata through the CLI, the
options winning; the Markdown output declares it again, for citerender and pandoc alike."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import docx
import pytest
from pptx import Presentation
from pypdf import PdfReader
from typer.testing import CliRunner

from renderers import cli
from renderers.readers.markdown import read_markdown
from tests.helpers import pdf_text, require_client

POOL = [{"sid": 1, "title": "Source 1", "url": "https://s1.example.org/"}]
ANSWER = """---
title: "Grid storage in 2025 <b>[[S:1]]</b>"
author: [Ana Ruiz, {name: Li Wei}]
date: 2025-03-01
lang: de
keywords: [storage, grid]
description: "Costs & prices of <i>grid</i> storage"
subtitle: Under the title
---

Batteries got cheaper [[S:1]].
"""
TITLE = "Grid storage in 2025 <b>[[S:1]]</b>"
AUTHOR = "Ana Ruiz; Li Wei"
DESCRIPTION = "Costs & prices of <i>grid</i> storage"


def _render(root: Path, text: str, *extra: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "answer.md").write_text(text, "utf-8")
    (root / "answer.pool.json").write_text(json.dumps(POOL), "utf-8")
    out = root / "out"
    for args in (["--to", "pdf,docx,pptx,html,md"], ["--to", "pdf", "--pdf-engine", "typst",
                                                      "--name", "typst"]):
        result = CliRunner().invoke(
            cli.app, ["render", str(root / "answer.md"), "--out", str(out), *args, *extra]
        )
        assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _render(tmp_path_factory.mktemp("front-matter"), ANSWER)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["answer.pdf", "typst.pdf"])
def test_the_pdf_of_either_engine_has_the_title_and_authors(rendered: Path, name: str) -> None:
    meta = PdfReader(rendered / name).metadata
    assert meta is not None
    assert (meta.title, meta.author) == (TITLE, AUTHOR)
    assert meta["/Keywords"] == "storage, grid"
    assert meta.subject == DESCRIPTION
    text = " ".join(pdf_text(rendered / name).split())
    assert "title:" not in text and "Costs" not in text  # the keys, the description: metadata
    # the title block: title, subtitle, authors (joined as in /Author), date
    assert text.startswith(f"{TITLE} Under the title {AUTHOR} 2025-03-01 Batteries")
    assert "Quellen" in text  # lang: de


@pytest.mark.slow
def test_docx_and_pptx_core_properties(rendered: Path) -> None:
    core = docx.Document(str(rendered / "answer.docx")).core_properties
    assert (core.title, core.author, core.keywords) == (TITLE, AUTHOR, "storage, grid")
    deck = Presentation(str(rendered / "answer.pptx")).core_properties
    assert (deck.title, deck.author, deck.keywords) == (TITLE, AUTHOR, "storage, grid")
    assert core.subject == deck.subject == DESCRIPTION


@pytest.mark.slow
def test_html_title_and_meta_are_escaped_text(rendered: Path) -> None:
    page = (rendered / "answer.html").read_text("utf-8")
    assert "<title>Grid storage in 2025 &lt;b&gt;[[S:1]]&lt;/b&gt;</title>" in page
    assert ('<meta name="author" content="Ana Ruiz">\n'
            '<meta name="author" content="Li Wei">') in page  # one each, as pandoc writes them
    assert '<meta name="dcterms.date" content="2025-03-01">' in page
    assert ('<meta name="description" content="Costs &amp; prices of &lt;i&gt;grid&lt;/i&gt; '
            'storage">') in page
    assert re.search(r'<html lang="de"', page) and "<b>[[S:1]]" not in page


@pytest.mark.slow
def test_the_markdown_output_reads_back_with_the_same_metadata(rendered: Path) -> None:
    markdown = (rendered / "answer.md").read_text("utf-8")
    # the title is declared with its title block (pandoc shows the block only under one)
    assert markdown.startswith(
        "---\ntitle: Grid storage in 2025 <b>[[S:1]]</b>\nsubtitle: Under the title\n"
        "author:\n- Ana Ruiz\n- Li Wei\ndate: '2025-03-01'\n")
    assert "\n# Grid" not in markdown
    again = read_markdown(markdown)
    assert (again.title, again.authors, again.date, again.lang) == (
        TITLE, ("Ana Ruiz", "Li Wei"), "2025-03-01", "de")
    assert again.keywords == ("storage", "grid") and again.notes == ()
    assert again.description == DESCRIPTION and again.subtitle == "Under the title"
    require_client(shutil.which("pandoc") is not None, "pandoc is not installed")
    meta = json.loads(subprocess.run(
        ["pandoc", "--from", "markdown", "--to", "json"], input=markdown,
        capture_output=True, text=True, check=True).stdout)["meta"]
    assert [a["c"][0]["c"] for a in meta["author"]["c"]] == ["Ana", "Li"]
    assert meta["lang"]["c"][0]["c"] == "de"
    assert meta["description"]["c"][0]["c"] == "Costs"


@pytest.mark.slow
def test_the_options_win_over_the_front_matter(tmp_path: Path) -> None:
    out = _render(tmp_path, ANSWER, "--title", "Given", "--author", "Editor", "--lang", "fr")
    for name in ("answer.pdf", "typst.pdf"):
        meta = PdfReader(out / name).metadata
        assert meta is not None and (meta.title, meta.author) == ("Given", "Editor")
    core = docx.Document(io.BytesIO((out / "answer.docx").read_bytes())).core_properties
    assert (core.title, core.author) == ("Given", "Editor")
    markdown = (out / "answer.md").read_text("utf-8")
    again = read_markdown(markdown)
    assert (again.title, again.authors, again.lang) == ("Given", ("Editor",), "fr")


@pytest.mark.slow
def test_a_title_the_first_heading_does_not_give_back_is_declared(tmp_path: Path) -> None:
    text = "---\ntitle: Later\n---\n\n# First\n\nA.\n\n# Later\n\nB [[S:1]].\n"
    markdown = (_render(tmp_path, text) / "answer.md").read_text("utf-8")
    assert markdown.startswith("---\ntitle: Later\n---\n\n# First\n")
    assert read_markdown(markdown).title == "Later"


@pytest.mark.slow
def test_yaml_escapes_no_output_can_carry_become_replacement_characters(tmp_path: Path) -> None:
    # A YAML escape makes a lone surrogate or a NUL after the content was cleaned: every
    # writer raised UnicodeEncodeError on such a title (an internal error at the CLI).
    text = '---\ntitle: "Grid \\ud800 \\0 storage"\nauthor: "Ana \\x01"\n---\n\nB [[S:1]].\n'
    out = _render(tmp_path, text)
    for name in ("answer.pdf", "typst.pdf"):
        meta = PdfReader(out / name).metadata
        assert meta is not None and meta.title == "Grid \ufffd \ufffd storage"
        assert meta.author == "Ana \ufffd"
    core = docx.Document(io.BytesIO((out / "answer.docx").read_bytes())).core_properties
    assert core.title == "Grid \ufffd \ufffd storage"
    assert Presentation(str(out / "answer.pptx")).core_properties.title == core.title
    assert read_markdown((out / "answer.md").read_text("utf-8")).title == core.title
