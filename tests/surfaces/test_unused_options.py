"""An option none of a render's formats uses is refused, naming it, on every surface.

``--pages 2 --to pdf`` used to write the PDF and say nothing: the caller meant page images and
got none. The rule is the option spec's (:func:`renderers.options.refuse_unused`), applied only
to options the caller gave, so no surface's defaults trip it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from renderers import cli
from renderers.api import render, write_pdf
from renderers.errors import OptionError
from renderers.tools import call_tool
from tests.surfaces.service_process import Service, running_service
from tests.surfaces.test_cli import assert_one_line_error

POOL = [{"sid": 1, "title": "Lazard LCOE+", "url": "https://www.lazard.com/"}]
CONTENT = "# Costs\n\nSolar is cheap.[[S:1]]\n"


# ---------------------------------------------------------------- Python API


def test_write_pdf_refuses_pages_and_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(OptionError) as refused:
        write_pdf(CONTENT, tmp_path / "report.pdf", sources_pool=POOL, pages=[2])
    assert refused.value.field == "pages"
    assert str(refused.value) == (
        "pages applies to png output only, and this render writes pdf; leave it out or ask "
        "for png"
    )
    assert list(tmp_path.iterdir()) == []


def test_write_pdf_refuses_other_formats_rather_than_ignore_them(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match=r"write_pdf\(\) writes pdf only") as refused:
        write_pdf(CONTENT, tmp_path / "report.pdf", sources_pool=POOL, formats=["png"])
    assert refused.value.field == "formats"
    assert list(tmp_path.iterdir()) == []


def test_render_refuses_an_option_none_of_its_formats_uses(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match=r"^slide_level applies to pptx output only, and this "
                                          r"render writes md, html;") as refused:
        render(CONTENT, tmp_path, formats=["md", "html"], sources_pool=POOL, slide_level=3)
    assert refused.value.field == "slide_level"
    with pytest.raises(OptionError, match="page_size applies to pdf, png, docx, html output"):
        render(CONTENT, tmp_path, formats="md", sources_pool=POOL, page_size="Letter")
    assert list(tmp_path.iterdir()) == []


def test_an_option_one_format_uses_and_none_are_fine(tmp_path: Path) -> None:
    results = render(CONTENT, tmp_path, formats=["md", "pptx"], sources_pool=POOL,
                     slide_level=1, pages=None, dpi=None)
    assert [result.format for result in results] == ["md", "pptx"]


# ---------------------------------------------------------------- command line


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "pool.json").write_text(json.dumps(POOL), encoding="utf-8")
    (tmp_path / "note.md").write_text(CONTENT, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--to", "pdf", "--pages", "2"],
         ["--pages: pages applies to png output only, and this render writes pdf"]),
        (["--to", "pdf,md", "--dpi", "200"], ["--dpi: dpi applies to png output only", "pdf, md"]),
        (["--to", "md", "--no-source-footer"],
         ["error: --no-source-footer: source_footer applies to pptx output only"]),
        (["--to", "md", "--source-footer"],
         ["error: --source-footer: source_footer applies to pptx output only"]),
        (["--to", "html", "--docx-citations", "footnotes"], ["docx_citations applies to docx"]),
    ],
)
def test_the_cli_refuses_an_option_its_formats_do_not_use(
    workspace: Path, args: list[str], needles: list[str]
) -> None:
    result = CliRunner().invoke(cli.app, [
        "render", str(workspace / "note.md"), "--pool", str(workspace / "pool.json"),
        "--out", str(workspace / "out"), *args,
    ])  # fmt: skip
    assert result.exit_code == 2
    assert_one_line_error(result.stderr, *needles)
    assert not (workspace / "out").exists()


def test_the_clis_own_defaults_do_not_trip_the_rule(workspace: Path) -> None:
    """``--dpi`` defaults to 110 and ``--slide-level`` to 2 on the command line: not given."""
    result = CliRunner().invoke(cli.app, [
        "render", str(workspace / "note.md"), "--pool", str(workspace / "pool.json"),
        "--out", str(workspace / "out"), "--to", "md", "--title", "Costs",
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Solar is cheap" in (workspace / "out" / "note.md").read_text(encoding="utf-8")


# ---------------------------------------------------------------- agent tools


def test_a_write_tool_names_the_format_an_argument_belongs_to(tmp_path: Path) -> None:
    """It said "unknown field 'pages'", as for a misspelt name."""
    envelope = call_tool("write_pdf", {"content": CONTENT, "pages": [2]}, out_dir=tmp_path)
    assert envelope == {"ok": False, "error": {
        "code": "invalid_argument",
        "message": "pages applies to png output only, and this render writes pdf; leave it out "
                   "or ask for png",
        "where": "pages",
    }}  # fmt: skip
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- HTTP service


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    with running_service(tmp_path_factory.mktemp("service"), workers=1) as running:
        yield running


@pytest.mark.slow
@pytest.mark.parametrize("route", ["/render", "/jobs"])
def test_the_service_refuses_pages_for_a_pdf(service: Service, route: str) -> None:
    answer = httpx.post(f"{service.url}{route}", timeout=60, json={
        "content": CONTENT, "format": "pdf", "sources_pool": POOL, "pages": [2],
    })  # fmt: skip
    assert answer.status_code == 400, answer.text
    assert answer.json() == {
        "error": "pages: pages applies to png output only, and this render writes pdf; leave "
                 "it out or ask for png",
        "field": "pages",
        "code": "invalid_argument",
    }


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["md", "html", "docx", "pdf"])
def test_the_export_pages_bodies_are_accepted(service: Service, fmt: str) -> None:
    """The body templates/service/app.js sends for each button (``pdf_engine`` only for PDF
    and PNG)."""
    body = {"format": fmt, "content": CONTENT, "numbering": "appearance", "sources_pool": POOL,
            "title": "Costs", "citation_format": "superscript"}
    if fmt in ("pdf", "png"):
        body["pdf_engine"] = "weasyprint"
    answer = httpx.post(f"{service.url}/render", json=body, timeout=120)
    assert answer.status_code == 200, answer.text
    assert answer.headers["X-Sources-Used"] == "1"
