"""An option none of a render's formats uses is said, naming it, on every surface.

``--pages 2 --to pdf`` used to write the PDF and say nothing: the caller meant page images and
got none. The rule is the option spec's (:func:`renderers.options.unused_options`), applied only
to options the caller gave, so no surface's defaults trip it. A render says it (a warning, the
file written: one set of options kept for a document and rendered to some of its formats is a
normal use); a write tool, whose schema each format narrows, refuses the argument. Each surface
names the option as its caller wrote it: the command line the flag typed (``--no-source-footer``),
the API and the service the option (``source_footer``), the tools their argument.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from renderers import cli, cli_options
from renderers.api import open_session, render, render_file, write_docx, write_pdf, write_pptx
from renderers.diagnostics import Code
from renderers.errors import OptionError
from renderers.tools import call_tool
from tests.processes import wait_until
from tests.surfaces.service_process import Service, running_service

POOL = [{"sid": 1, "title": "Lazard LCOE+", "url": "https://www.lazard.com/"}]
CONTENT = "# Costs\n\nSolar is cheap.[[S:1]]\n"


# ---------------------------------------------------------------- Python API


PAGES_FOR_PDF = "pages applies to png output only, and this render writes pdf"


def test_write_pdf_says_pages_changed_nothing(tmp_path: Path) -> None:
    result = write_pdf(CONTENT, tmp_path / "report.pdf", sources_pool=POOL, pages=[2])
    assert [(d.code, d.message) for d in result.diagnostics] == [
        (Code.OPTION_UNUSED, PAGES_FOR_PDF)]
    assert result.warnings == [PAGES_FOR_PDF]
    assert (tmp_path / "report.pdf").read_bytes().startswith(b"%PDF")


def test_write_pdf_refuses_other_formats_rather_than_ignore_them(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match=r"write_pdf\(\) writes pdf only") as refused:
        write_pdf(CONTENT, tmp_path / "report.pdf", sources_pool=POOL, formats=["png"])
    assert refused.value.field == "formats"
    assert list(tmp_path.iterdir()) == []


def test_render_says_an_option_none_of_its_formats_uses(tmp_path: Path) -> None:
    results = render(CONTENT, tmp_path, formats=["md", "html"], sources_pool=POOL,
                     slide_level=3, page_size="Letter")  # HTML prints on the page size
    assert [result.warnings for result in results] == [
        ["slide_level applies to pptx output only, and this render writes md, html"]] * 2
    (result,) = render(CONTENT, tmp_path / "md", formats="md", sources_pool=POOL,
                       page_size="Letter", dpi=200)
    assert result.warnings == [
        "page_size applies to pdf, png, docx, html output only, and this render writes md",
        "dpi applies to png output only, and this render writes md",
    ]
    assert "Solar is cheap" in (tmp_path / "md" / "report.md").read_text(encoding="utf-8")


def test_the_api_names_the_option_whatever_its_value(tmp_path: Path) -> None:
    (result,) = render(CONTENT, tmp_path, formats="md", sources_pool=POOL, source_footer=False)
    assert result.warnings == [
        "source_footer applies to pptx output only, and this render writes md"]


def test_an_option_one_format_uses_and_none_are_fine(tmp_path: Path) -> None:
    results = render(CONTENT, tmp_path, formats=["md", "pptx"], sources_pool=POOL,
                     slide_level=1, pages=None, dpi=None)
    assert [result.format for result in results] == ["md", "pptx"]


REFERENCE_FOR_MD = "reference_docx applies to docx output only, and this render writes md"


def test_a_missing_reference_file_no_format_reads_is_only_unused(tmp_path: Path) -> None:
    """Only its format reads a reference file: a render that writes none of them needs no such
    file (a set of options kept for a document, its template on another machine), so it is
    the option-unused warning, not "no such file"."""
    missing = tmp_path / "missing"
    (result,) = render(CONTENT, tmp_path / "md", formats="md", sources_pool=POOL,
                       reference_docx=missing / "ref.docx")
    assert result.warnings == [REFERENCE_FOR_MD]
    assert "Solar is cheap" in (tmp_path / "md" / "report.md").read_text(encoding="utf-8")
    results = render(CONTENT, tmp_path / "deck", formats=["html", "pptx"], sources_pool=POOL,
                     reference_docx=missing / "ref.docx")
    assert [result.warnings for result in results] == [
        ["reference_docx applies to docx output only, and this render writes html, pptx"]] * 2
    assert (tmp_path / "deck" / "report.pptx").read_bytes().startswith(b"PK")
    (result,) = render(CONTENT, tmp_path / "page", formats="html", sources_pool=POOL,
                       reference_pptx=missing / "ref.pptx")
    assert result.warnings == [
        "reference_pptx applies to pptx output only, and this render writes html"]


@pytest.mark.parametrize(("option", "formats"), [
    ("reference_docx", ["md", "docx"]), ("reference_pptx", ["pptx"]),
])
def test_a_missing_reference_file_its_format_reads_is_refused_up_front(
    tmp_path: Path, option: str, formats: list[str]
) -> None:
    with pytest.raises(OptionError, match=rf"^{option}=.*: no such file$") as no:
        render(CONTENT, tmp_path / "out", formats=formats, sources_pool=POOL,
               **{option: tmp_path / f"missing.{option[-4:]}"})
    assert no.value.field == option
    assert not (tmp_path / "out").exists()  # nothing written, not even the Markdown
    write = write_docx if option == "reference_docx" else write_pptx
    with pytest.raises(OptionError, match="no such file"):
        write(CONTENT, tmp_path / f"report.{option[-4:]}", sources_pool=POOL,
              **{option: tmp_path / "missing"})
    with pytest.raises(OptionError, match="no such file"):  # its formats not known yet
        open_session(CONTENT, tmp_path, sources_pool=POOL, **{option: tmp_path / "missing"})


def test_the_remote_surfaces_take_no_reference_file_whether_or_not_it_exists(
    tmp_path: Path,
) -> None:
    """A tool and the service do not offer the option at all (it names a file on the host):
    the same refusal for a file that is there and one that is not."""
    from renderers.service.requests import RequestProblem, parse_render_request

    there = tmp_path / "ref.docx"
    there.write_bytes(b"PK")
    for reference in (str(there), str(tmp_path / "missing.docx")):
        envelope = call_tool("write_markdown", {"content": CONTENT, "reference_docx": reference},
                             out_dir=tmp_path / "tool")
        assert envelope["ok"] is False and envelope["error"]["where"] == "reference_docx"
        assert "unknown field 'reference_docx'" in envelope["error"]["message"]
        with pytest.raises(RequestProblem, match="unknown field 'reference_docx'"):
            parse_render_request({"content": CONTENT, "format": "md",
                                  "reference_docx": reference})


# ---------------------------------------------------------------- command line


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "pool.json").write_text(json.dumps(POOL), encoding="utf-8")
    (tmp_path / "note.md").write_text(CONTENT, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("args", "written", "said"),
    [
        (["--to", "pdf", "--pages", "2"], ["note.pdf"], ["--" + PAGES_FOR_PDF]),
        (["--to", "pdf,md", "--dpi", "200"], ["note.pdf", "note.md"],
         ["--dpi applies to png output only, and this render writes pdf, md"]),
        (["--to", "md", "--no-source-footer"], ["note.md"],
         ["--no-source-footer applies to pptx output only, and this render writes md"]),
        (["--to", "md", "--source-footer"], ["note.md"],
         ["--source-footer applies to pptx output only, and this render writes md"]),
        (["--to", "html", "--docx-citations", "footnotes"], ["note.html"],
         ["--docx-citations applies to docx output only, and this render writes html"]),
        (["--to", "md,html", "--slide-level", "3", "--page-size", "Letter"],
         ["note.md", "note.html"],
         ["--slide-level applies to pptx output only, and this render writes md, html"]),
        (["--to", "md", "--reference-docx", "missing.docx"], ["note.md"],
         ["--reference-docx applies to docx output only, and this render writes md"]),
        (["--to", "html", "--reference-pptx", "missing.pptx"], ["note.html"],
         ["--reference-pptx applies to pptx output only, and this render writes html"]),
    ],
)
def test_the_cli_says_an_option_its_formats_do_not_use(
    workspace: Path, args: list[str], written: list[str], said: list[str]
) -> None:
    """As typed: ``source_footer`` named an option nobody typed, and for ``--no-source-footer``
    not even the flag's own spelling. Said once for the file, whatever its formats."""
    result = CliRunner().invoke(cli.app, [
        "render", str(workspace / "note.md"), "--pool", str(workspace / "pool.json"),
        "--out", str(workspace / "out"), *args,
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    warnings = [line.split(": ", 3)[-1] for line in result.stderr.splitlines()
                if ": warning: " in line]
    assert warnings == said
    assert all((workspace / "out" / name).stat().st_size > 0 for name in written)


@pytest.mark.parametrize(("flag", "formats"), [
    ("--reference-docx", "md,docx"), ("--reference-pptx", "pptx"),
])
def test_the_cli_refuses_a_missing_reference_file_its_formats_read(
    workspace: Path, flag: str, formats: str
) -> None:
    """The error it always gave, before any file is written."""
    missing = workspace / "missing.file"
    result = CliRunner().invoke(cli.app, [
        "render", str(workspace / "note.md"), "--pool", str(workspace / "pool.json"),
        "--out", str(workspace / "out"), "--to", formats, flag, str(missing),
    ])  # fmt: skip
    assert result.exit_code == 2, result.output
    option = flag[2:].replace("-", "_")
    assert re.search(rf"error: {flag}: {option}='/.*: no such file", result.stderr)
    assert not (workspace / "out").exists()


@pytest.mark.parametrize("flag", ["--no-source-footer", "--source-footer"])
def test_the_cli_says_the_apis_notes_in_the_apis_order(workspace: Path, flag: str) -> None:
    """One builder: the command line hands the API its naming (the flag as typed) and says the
    render's diagnostics as they come, the unused option among them where the API puts it
    (after the reader's, before the writer's), not dropped and said again at the end."""
    (workspace / "note.md").write_text(
        "# Costs\n\nSolar is cheap.[[S:1]] ![chart](missing.png) [[S:9]]\n", encoding="utf-8")
    result = CliRunner().invoke(cli.app, [
        "render", str(workspace / "note.md"), "--pool", str(workspace / "pool.json"),
        "--out", str(workspace / "out"), "--to", "pdf", flag,
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    said = [line.split(": ", 3)[-1] for line in result.stderr.splitlines()
            if ": warning: " in line]
    (api,) = render_file(workspace / "note.md", workspace / "out", formats="pdf",
                         sources_pool=POOL, source_footer=flag == "--source-footer",
                         option_naming=cli_options.flag_typed)
    assert [d.code for d in api.diagnostics] == [
        Code.UNKNOWN_SID, Code.OPTION_UNUSED, Code.IMAGE_REFUSED]
    assert said == [" ".join(d.message.split()) for d in api.diagnostics]
    assert said[1] == f"{flag} applies to pptx output only, and this render writes pdf"


def test_the_clis_own_defaults_do_not_trip_the_rule(workspace: Path) -> None:
    """``--dpi`` defaults to 110 and ``--slide-level`` to 2 on the command line: not given."""
    result = CliRunner().invoke(cli.app, [
        "render", str(workspace / "note.md"), "--pool", str(workspace / "pool.json"),
        "--out", str(workspace / "out"), "--to", "md", "--title", "Costs",
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "warning" not in result.stderr
    assert "Solar is cheap" in (workspace / "out" / "note.md").read_text(encoding="utf-8")


def test_the_broker_batch_says_the_flags_typed_too() -> None:
    """The broker's batch says a job's unused options itself (its workers get only the
    options each format uses): in the same words as the local batch."""
    from renderers.cli_batch import Job

    job = Job(input="note.md", pool="pool.json", out="out", name=None, formats=("pdf",),
              content_format=None, kwargs={"source_footer": False, "pages": (2,)})
    assert [(note.code, note.message) for note in job.unused_notes()] == [
        (Code.OPTION_UNUSED, "--" + PAGES_FOR_PDF),
        (Code.OPTION_UNUSED, "--no-source-footer applies to pptx output only, and this render "
                             "writes pdf"),
    ]


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
def test_the_service_says_pages_changed_a_pdf_nothing(service: Service) -> None:
    body = {"content": CONTENT, "format": "pdf", "sources_pool": POOL, "pages": [2]}
    answer = httpx.post(f"{service.url}/render", timeout=60, json=body)
    assert answer.status_code == 200, answer.text
    assert answer.content.startswith(b"%PDF") and answer.headers["X-Warnings-Count"] == "1"
    envelope = httpx.post(f"{service.url}/render", timeout=60, json=body,
                          headers={"Accept": "application/json"}).json()
    assert envelope["warnings"] == [PAGES_FOR_PDF]
    job = httpx.post(f"{service.url}/jobs", timeout=60, json=body).json()
    wait_until(lambda: httpx.get(f"{service.url}/jobs/{job['id']}", timeout=60).json()["status"]
               == "done", 60, "the job")
    state = httpx.get(f"{service.url}/jobs/{job['id']}", timeout=60).json()
    assert state["result"]["warnings"] == [PAGES_FOR_PDF]


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
