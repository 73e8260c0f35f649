"""The pipeline behind every surface: writer diagnostics reach the CLI, the tool envelope and the
service; outputs never replace their inputs; a shorter PNG re-render leaves no stale pages;
rendering anything but PDF/PNG never loads WeasyPrint."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from renderers import cli
from renderers.api import OverwriteError, available_formats, render, render_file, write_pptx
from renderers.diagnostics import Code
from renderers.service.app import create_app
from renderers.tools import call_tool
from tests.helpers import pdf_text
from tests.support.html_notes import NOTED_HTML, NOTES
from tests.support.html_notes import POOL as HTML_POOL

ROOT = Path(__file__).resolve().parents[2]
POOL = [
    {"sid": 1, "title": "Global EV Outlook 2024", "url": "https://www.iea.org/reports/ev-2024"},
    {"sid": 2, "title": "Battery price survey", "url": "https://about.bnef.com/blog/battery/"},
]
REMOTE_IMAGE = "# Brief\n\nPrices fell.[[S:1]]\n\n![chart](https://example.com/chart.png)\n"
#: One code line far longer than a slide holds: the slide model must shorten it (a table row
#: as tall goes on in rows on the next slides).
LONG_CODE_LINE = "# Deck\n\n## Code\n\n```\n" + "x" * 20000 + "\n```\n\nText.[[S:2]]\n"


def warning_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("citerender: warning")]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "pool.json").write_text(json.dumps(POOL), encoding="utf-8")
    (tmp_path / "image.md").write_text(REMOTE_IMAGE, encoding="utf-8")
    (tmp_path / "code.md").write_text(LONG_CODE_LINE, encoding="utf-8")
    return tmp_path


def cli_render(workspace: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        cli.app, ["render", *args, "--pool", str(workspace / "pool.json")]
    )
    assert "Traceback" not in result.output
    return result.exit_code, result.stderr


# ---------------------------------------------------------------- writer diagnostics


@pytest.mark.parametrize("fmt", ["html", "docx", "pptx", "pdf"])
def test_a_refused_image_is_a_warning_in_the_cli_and_the_envelope(
    workspace: Path, fmt: str
) -> None:
    code, stderr = cli_render(
        workspace, str(workspace / "image.md"), "--to", fmt, "--out", str(workspace / "out")
    )
    assert code == 0
    lines = warning_lines(stderr)
    assert len(lines) == 1 and "https://example.com/chart.png" in lines[0], stderr
    assert "refused" in lines[0]

    envelope = call_tool(
        f"write_{fmt}", {"content": REMOTE_IMAGE, "sources_pool": POOL}, out_dir=workspace / "t"
    )
    assert envelope["ok"] is True
    assert [w for w in envelope["warnings"] if "https://example.com/chart.png" in w]


def test_the_diagnostic_is_data(tmp_path: Path) -> None:
    (result,) = render(REMOTE_IMAGE, tmp_path, formats="html", sources_pool=POOL)
    (diagnostic,) = result.diagnostics
    assert diagnostic.code is Code.IMAGE_REFUSED
    assert diagnostic.file == "https://example.com/chart.png"
    assert result.warnings == [diagnostic.message]
    assert diagnostic.to_dict() == {
        "code": "image-refused",
        "message": diagnostic.message,
        "file": "https://example.com/chart.png",
    }


#: An image whose source the reader refuses: writers see no source, the reader names it.
REFUSED_SOURCE = {
    "markdown": "# Brief\n\nPrices fell.[[S:1]]\n\n![chart](file:///etc/passwd)\n",
    "html": "<h1>Brief</h1><p>Prices fell.[[S:1]]</p>"
    '<p><img src="file:///etc/passwd" alt="chart"></p>',
}


@pytest.mark.parametrize("content_format", sorted(REFUSED_SOURCE))
def test_a_refused_image_source_is_named_once_in_every_format(
    tmp_path: Path, content_format: str
) -> None:
    results = render(
        REFUSED_SOURCE[content_format], tmp_path, formats=available_formats(),
        sources_pool=POOL, content_format=content_format, strict=True,
    )  # fmt: skip
    assert [r.format for r in results] == list(available_formats())
    for result in results:
        (diagnostic,) = result.diagnostics
        assert diagnostic.code is Code.IMAGE_REFUSED, result.format
        assert diagnostic.file == "file:///etc/passwd", result.format
        assert "'file:///etc/passwd'" in diagnostic.message
        assert "file: URLs are never loaded" in diagnostic.message
        assert "accepted: a path relative to the input" in diagnostic.message
        assert result.warnings == [diagnostic.message]


def test_refused_image_sources_are_named_printably_and_briefly(tmp_path: Path) -> None:
    html = (
        '<p><img src="ftp://files.example/&#10;' + "a" * 300 + '.png" alt="long">'
        ' <img alt="logo"> <img src="javascript:alert(1)" alt="js">'
        ' <img src="JaVaScRiPt:alert(1)" alt="js"></p>'
        "<!-- <img src='file:///hidden.png'> -->"
    )
    (result,) = render(html, tmp_path, formats="md", content_format="html")
    shortened = "ftp://files.example/\n" + "a" * 59 + "…"
    by_file = {d.file: d.message for d in result.diagnostics}
    assert set(by_file) == {shortened, None, "javascript:alert(1)", "JaVaScRiPt:alert(1)"}
    for message in by_file.values():
        assert "\n" not in message and len(message) < 300, message
    assert f"image {shortened!r} not loaded" in by_file[shortened]
    assert "ftp: URLs are never loaded" in by_file[shortened]
    assert "the image 'logo' has no source" in by_file[None]


def test_a_shortened_pptx_code_line_is_a_warning_in_the_cli_and_the_envelope(
    workspace: Path,
) -> None:
    code, stderr = cli_render(
        workspace, str(workspace / "code.md"), "--to", "pptx", "--out", str(workspace / "out")
    )
    assert code == 0
    assert any("code line" in line and "shortened" in line for line in warning_lines(stderr))

    envelope = call_tool(
        "write_pptx", {"content": LONG_CODE_LINE, "sources_pool": POOL}, out_dir=workspace / "t"
    )
    assert any("code line" in w and "shortened" in w for w in envelope["warnings"])
    result = write_pptx(LONG_CODE_LINE, workspace / "w" / "deck.pptx", sources_pool=POOL)
    assert Code.CONTENT_SHORTENED in {d.code for d in result.diagnostics}


def test_service_counts_writer_warnings(workspace: Path) -> None:
    with TestClient(create_app(workers=1, warmup=False)) as client:
        answer = client.post(
            "/render", json={"content": REMOTE_IMAGE, "format": "html", "sources_pool": POOL}
        )
        assert answer.status_code == 200, answer.text
        assert answer.headers["x-warnings-count"] == "1"
        envelope = client.post(
            "/render",
            json={"content": REMOTE_IMAGE, "format": "docx", "sources_pool": POOL},
            headers={"Accept": "application/json"},
        ).json()
    assert [d["code"] for d in envelope["diagnostics"]] == ["image-refused"]
    assert envelope["warnings"] == [d["message"] for d in envelope["diagnostics"]]


def test_stats_are_the_writers_counts(tmp_path: Path) -> None:
    long = "# Long\n\n" + "\n\n".join(f"## Part {i}\n\n" + "word " * 300 for i in range(8))
    pdf, png, pptx = render(long, tmp_path, formats="pdf,png,pptx", sources_pool=POOL, dpi=20)
    document = pdfium.PdfDocument(pdf.path)
    assert pdf.stats["pages"] == len(document) > 1
    document.close()
    assert png.stats["pages"] == len(png.paths) == pdf.stats["pages"]
    with zipfile.ZipFile(pptx.path) as package:
        slides = [n for n in package.namelist() if n.startswith("ppt/slides/slide")]
    assert pptx.stats["slides"] == len(slides) > 8
    import renderers.api as api

    assert not hasattr(api, "pdf_page_count") and not hasattr(api, "pptx_slide_count")


# ---------------------------------------------------------------- reader and citation-pass notes

#: An invalid token on line 3, a reversed range on line 5, an unknown sid, a label defined
#: twice and a reference to a label nothing defines.
NOTED = (
    "# Brief\n\nPrices fell.[[S:0]]\n\nAnd rose.[[S:2-1]] See @fig:nope.[[S:9]]\n\n"
    "![a](a.png){#fig:a}\n\n![b](b.png){#fig:a}\n"
)
INVALID_ZERO = (
    "markdown input, line 3: invalid citation token '[[S:0]]': sid 0 is not valid: sids are "
    "positive integers; kept as text"
)


def test_reader_notes_carry_their_line_and_keep_their_text(tmp_path: Path) -> None:
    (result,) = render(NOTED, tmp_path, formats="md", sources_pool=POOL)
    noted = [d for d in result.diagnostics if d.code is not Code.IMAGE_REFUSED]
    assert [(d.code, d.line, d.file) for d in noted] == [
        (Code.READER_NOTE, 3, None),
        (Code.READER_NOTE, 5, None),
        (Code.UNKNOWN_SID, None, None),
        (Code.DUPLICATE_LABEL, None, None),
        (Code.UNKNOWN_LABEL, None, None),
    ]
    assert result.warnings[:5] == [  # the text surfaces print, as before
        INVALID_ZERO,
        "markdown input, line 5: '[[S:2-1]]': reversed range '2-1' read as 1-2",
        "unknown sids not in the sources pool: 9",
        "label 'fig:a' is defined twice; references go to the first",
        "cross-reference to unknown label 'fig:nope' kept as text",
    ]
    assert result.warnings == [d.message for d in result.diagnostics]
    assert noted[0].to_dict() == {"code": "reader-note", "message": INVALID_ZERO, "line": 3}


def test_a_rendered_file_is_named_by_its_reader_notes(tmp_path: Path) -> None:
    source = tmp_path / "brief.md"
    source.write_text("# Brief\n\nPrices fell.[[S:0]]\n", encoding="utf-8")
    (result,) = render_file(source, tmp_path / "out", formats="md", sources_pool=POOL)
    (note,) = result.diagnostics
    assert note.to_dict() == {
        "code": "reader-note", "message": INVALID_ZERO, "file": str(source), "line": 3,
    }
    assert result.warnings == [INVALID_ZERO]


def test_a_skipped_sidecar_entry_names_the_answer_file_but_no_line(tmp_path: Path) -> None:
    """The answer is read as markdown made from it: that markdown's lines are not the file's."""
    source = tmp_path / "answer.json"
    source.write_text(json.dumps({
        "summary": "Solar grew.\n\nAgain.[[S:0]]",
        "_citations": [{"path": 7, "sids": [1]}, {"path": "/summary", "sids": [2]}],
    }), encoding="utf-8")
    (result,) = render_file(source, tmp_path / "out", formats="md", sources_pool=POOL)
    assert [(d.code, d.file, d.line) for d in result.diagnostics] == [
        (Code.READER_NOTE, str(source), None), (Code.READER_NOTE, str(source), None),
    ]
    assert result.warnings[0] == "/_citations/0: 'path' is 7, not a JSON Pointer string; skipped"


def _service_md_envelope(content: str, pool: Sequence[Mapping[str, object]]) -> dict[str, Any]:
    """The service's JSON envelope for ``content`` rendered to Markdown."""
    with TestClient(create_app(workers=1, warmup=False)) as client:
        envelope: dict[str, Any] = client.post(
            "/render",
            json={"content": content, "format": "md", "sources_pool": pool},
            headers={"Accept": "application/json"},
        ).json()
    return envelope


def test_the_service_answers_a_reader_notes_line(tmp_path: Path) -> None:
    envelope = _service_md_envelope(NOTED, POOL)
    assert envelope["diagnostics"][0] == {"code": "reader-note", "message": INVALID_ZERO,
                                          "line": 3}
    assert [d["code"] for d in envelope["diagnostics"]][2:5] == [
        "unknown-sid", "duplicate-label", "unknown-label",
    ]


def test_strict_still_fails_on_reader_notes_and_unknown_labels(tmp_path: Path) -> None:
    from renderers.errors import StrictError

    with pytest.raises(StrictError, match=r"line 3: invalid citation token '\[\[S:0\]\]'"):
        render("# B\n\nPrices fell.[[S:0]]\n", tmp_path, formats="md", sources_pool=POOL,
               strict=True)
    with pytest.raises(StrictError, match="unknown label 'fig:nope'"):
        render("See @fig:nope.[[S:1]]\n", tmp_path, formats="md", sources_pool=POOL,
               strict=True)


def test_html_input_notes_name_their_file_and_line_everywhere(tmp_path: Path) -> None:
    """The API's diagnostics, the service's JSON, the CLI's warnings and the audit point at
    the lines of the HTML file (see :data:`tests.support.html_notes.NOTED_HTML`)."""
    source = tmp_path / "page.html"
    source.write_text(NOTED_HTML, encoding="utf-8")
    (result,) = render_file(source, tmp_path / "out", formats="md", sources_pool=HTML_POOL)
    assert [(str(d.code), d.line, d.message) for d in result.diagnostics] == NOTES
    assert [d.file for d in result.diagnostics] == [str(source)] * 3 + [None, "javascript:alert(1)"]

    envelope = _service_md_envelope(NOTED_HTML, HTML_POOL)
    assert [(d["code"], d.get("line"), d["message"]) for d in envelope["diagnostics"]] == NOTES

    pool = tmp_path / "pool.json"
    pool.write_text(json.dumps(HTML_POOL), encoding="utf-8")
    rendered = CliRunner().invoke(cli.app, ["render", str(source), "--pool", str(pool), "--to",
                                            "md", "--out", str(tmp_path / "cli")])
    assert rendered.exit_code == 0, rendered.output
    assert [line for line in rendered.stderr.splitlines() if "warning" in line] == [
        f"citerender: warning: {source}: {message}" for _, _, message in NOTES
    ]
    audited = CliRunner().invoke(cli.app, ["audit", str(source), "--pool", str(pool)])
    assert "Invalid token on line 7: [[S:abc]]" in audited.stdout
    assert "Invalid token on line 17: [[S:0]]" in audited.stdout
    assert "Warning: line 10: <sup" in audited.stdout


def test_html_in_its_authors_look_reports_the_same_lines(tmp_path: Path) -> None:
    """The PDF that keeps the author's stylesheet reads the input with the same reader: the
    token on line 7 is kept as text in the PDF and its note names line 7."""
    (result,) = render(NOTED_HTML, tmp_path, formats="pdf", sources_pool=HTML_POOL)
    assert [(str(d.code), d.line, d.message) for d in result.diagnostics] == NOTES
    assert "A bad token [[S:abc]] on line 7." in pdf_text(result.path)


def test_the_readme_lists_every_diagnostic_code() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert [code for code in Code if f"`{code}`" not in readme] == []


# ---------------------------------------------------------------- outputs never replace inputs


@pytest.mark.parametrize(("name", "fmt"), [("d1.md", "md"), ("x.html", "html")])
def test_the_cli_refuses_to_overwrite_its_input(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, name: str, fmt: str
) -> None:
    text = "# D1\n\nHello.[[S:1]]\n" if fmt == "md" else "<h1>X</h1><p>Hi.[[S:1]]</p>\n"
    source = workspace / name
    source.write_text(text, encoding="utf-8")
    monkeypatch.chdir(workspace)
    code, stderr = cli_render(workspace, name, "--to", fmt, "--out", ".")
    assert code == 2
    (line,) = [line for line in stderr.splitlines() if line.strip()]
    assert line.startswith("citerender: error: ")
    assert str(source) in line and f"input file {name!r}" in line
    assert source.read_text(encoding="utf-8") == text
    assert not (workspace / "sources_used.json").exists()


def test_the_api_refuses_before_writing_anything(workspace: Path) -> None:
    source = workspace / "d1.md"
    source.write_text("# D1\n\nHello.[[S:1]]\n", encoding="utf-8")
    with pytest.raises(OverwriteError, match="would replace the input file"):
        render_file(source, workspace, formats="html,md", sources_pool=workspace / "pool.json")
    assert not (workspace / "d1.html").exists()  # the check runs before the first format


def test_the_pool_file_is_protected_too(tmp_path: Path) -> None:
    pool = tmp_path / "brief.html"  # JSON rows, whatever the name says
    pool.write_text(json.dumps(POOL), encoding="utf-8")
    with pytest.raises(OverwriteError) as caught:
        render("Hi.[[S:1]]\n", tmp_path, name="brief", formats="html", sources_pool=pool)
    assert str(pool) in str(caught.value)
    assert json.loads(pool.read_text(encoding="utf-8")) == POOL


def test_the_files_the_writers_read_are_protected_too(tmp_path: Path) -> None:
    """An image the document shows, a reference DOCX and a CSL file are inputs as much as the
    content: an output named like one of them is refused before anything is written."""
    from PIL import Image as PILImage

    PILImage.new("RGB", (20, 10), (255, 0, 0)).save(tmp_path / "chart.png")
    picture = (tmp_path / "chart.png").read_bytes()
    with pytest.raises(OverwriteError, match=r"chart\.png"):
        render("# Chart\n\n![c](chart.png)\n", tmp_path, name="chart", formats="md,png",
               sources_pool=POOL, base_dir=tmp_path)
    assert (tmp_path / "chart.png").read_bytes() == picture
    assert not (tmp_path / "chart.md").exists()
    (docx,) = render("Hi.[[S:1]]\n", tmp_path, name="template", formats="docx",
                     sources_pool=POOL)
    template = docx.path.read_bytes()
    with pytest.raises(OverwriteError, match=r"template\.docx"):
        render("Hi.[[S:1]]\n", tmp_path, name="template", formats="docx", sources_pool=POOL,
               reference_docx=docx.path)
    assert docx.path.read_bytes() == template


def test_a_hard_link_to_the_input_counts_as_the_input(tmp_path: Path) -> None:
    source = tmp_path / "in" / "d1.md"
    source.parent.mkdir()
    source.write_text("Hello.[[S:1]]\n", encoding="utf-8")
    (tmp_path / "out").mkdir()
    os.link(source, tmp_path / "out" / "d1.md")
    with pytest.raises(OverwriteError):
        render_file(source, tmp_path / "out", formats="md", sources_pool=POOL)


# ---------------------------------------------------------------- PNG pages of a re-render


@pytest.mark.slow
def test_a_shorter_png_rerender_leaves_exactly_its_own_pages(tmp_path: Path) -> None:
    long = "# Long\n\n" + "\n\n".join(
        f"Paragraph {i} cites.[[S:2]] " + "word " * 80 for i in range(40)
    )
    (first,) = render(long, tmp_path, name="rep", formats="png", sources_pool=POOL, dpi=20)
    assert len(first.paths) > 2
    # another artifact whose name looks like a page of "rep", and an unrecorded file
    render("# Other\n\nOther.[[S:1]]\n", tmp_path, name="rep-2", formats="png",
           sources_pool=POOL, dpi=20)
    (tmp_path / "rep-9.png").write_bytes(b"not ours")

    (again,) = render("# Short\n\nHi.[[S:1]]\n", tmp_path, name="rep", formats="png",
                      sources_pool=POOL, dpi=20)
    assert [p.name for p in again.paths] == ["rep.png"]
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    assert pngs == ["rep-2.png", "rep-9.png", "rep.png"]
    records = json.loads((tmp_path / "sources_used.json").read_text(encoding="utf-8"))
    assert {r["filename"]: r["sids"] for r in records} == {"rep.png": [1], "rep-2.png": [1]}

    (longer,) = render(long, tmp_path, name="rep", formats="png", sources_pool=POOL, dpi=20)
    assert not (tmp_path / "rep.png").exists()  # the one-page name of the previous render
    records = json.loads((tmp_path / "sources_used.json").read_text(encoding="utf-8"))
    assert {r["filename"] for r in records} == {p.name for p in longer.paths}


# ---------------------------------------------------------------- WeasyPrint only for PDF


def weasyprint_modules_after(render_call: str, directory: Path) -> list[str]:
    """The ``weasyprint`` modules a fresh process has loaded after ``render_call`` (Python
    source using ``render`` and ``out``, the output directory)."""
    script = (
        "import sys\n"
        "from renderers.api import render\n"
        "out = sys.argv[1]\n"
        f"{render_call}\n"
        "print('\\n'.join(sorted(m for m in sys.modules if m.split('.')[0] == 'weasyprint')))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(directory)],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_rendering_without_pdf_never_imports_weasyprint(tmp_path: Path) -> None:
    loaded = weasyprint_modules_after(
        f"results = render({REMOTE_IMAGE!r}, out, formats='docx,pptx,html,md', "
        f"sources_pool={POOL!r})\n"
        "assert [r.format for r in results] == ['docx', 'pptx', 'html', 'md']\n"
        "assert all(r.warnings for r in results[:3])",
        tmp_path,
    )
    assert loaded == []
    assert "weasyprint" not in (ROOT / "renderers" / "sandbox.py").read_text(encoding="utf-8")


def test_the_typst_engine_never_imports_weasyprint(tmp_path: Path) -> None:
    """PDF and PNG through Typst: importing WeasyPrint would cost 0.45 s of a 0.35 s render
    (the PNG writer once took a page-size check from the WeasyPrint writer's module)."""
    loaded = weasyprint_modules_after(
        f"results = render('# T\\n\\nText.[[S:1]]\\n', out, formats='pdf,png', "
        f"sources_pool={POOL!r}, pdf_engine='typst', dpi=20)\n"
        "assert [r.format for r in results] == ['pdf', 'png']",
        tmp_path,
    )
    assert loaded == []


# ---------------------------------------------------------------- a flood of one note

#: 300 links to ids nothing has, a paragraph each (lines 3, 5 … 601), then a reference to an
#: unknown label and a citation: 300 reader notes and one of another code.
FLOOD = ("# Flood\n\n" + "".join(f"[x{i}](#nowhere-{i})\n\n" for i in range(300))
         + "See @fig:nope.[[S:1]]\n")
FLOOD_SUMMARY = "and 280 more reader notes (first at line 43)"


def test_a_flood_of_one_note_is_capped_and_counted_exactly(tmp_path: Path) -> None:
    """300 dead links cost 20 notes and one summary with the exact rest, where the first left
    out was; a note of another code is still listed; the file keeps every link's text."""
    (result,) = render(FLOOD, tmp_path, formats="md", sources_pool=POOL)
    codes = [d.code for d in result.diagnostics]
    assert codes == [Code.READER_NOTE] * 20 + [Code.UNKNOWN_LABEL, Code.READER_NOTE]
    assert result.diagnostics[19].message.startswith("markdown input, line 41: the link to "
                                                     "'#nowhere-19'")
    summary = result.diagnostics[-1]
    assert summary.to_dict() == {"code": "reader-note", "message": FLOOD_SUMMARY, "line": 43,
                                 "omitted": 280}
    assert result.warnings == [d.message for d in result.diagnostics]
    assert result.stats["warnings"] == 301
    written = result.path.read_text("utf-8")
    assert all(f"x{i}" in written for i in range(300))


def test_every_surface_shows_the_capped_list(workspace: Path) -> None:
    """The CLI's warning lines and summary table, the tool envelope (the MCP tool result) and
    the service's JSON and header all show the same 22 notes and count 301."""
    (workspace / "flood.md").write_text(FLOOD, encoding="utf-8")
    result = CliRunner().invoke(cli.app, [
        "render", str(workspace / "flood.md"), "--pool", str(workspace / "pool.json"),
        "--to", "md,html", "--out", str(workspace / "out"),
    ], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    lines = warning_lines(result.stderr)
    assert len(lines) == 22 and lines[-1].endswith(f"flood.md: {FLOOD_SUMMARY}")
    (row,) = [line for line in result.stdout.splitlines() if line.startswith("│")]
    assert row.split("│")[4].strip() == "301"

    envelope = call_tool("write_markdown", {"content": FLOOD, "sources_pool": POOL},
                         out_dir=workspace / "t")
    assert envelope["ok"] is True and len(envelope["warnings"]) == 22
    assert envelope["warnings"][-1] == FLOOD_SUMMARY and envelope["stats"]["warnings"] == 301

    with TestClient(create_app(workers=1, warmup=False)) as client:
        answer = client.post("/render", json={"content": FLOOD, "format": "md",
                                              "sources_pool": POOL})
        assert answer.status_code == 200, answer.text
        assert answer.headers["x-warnings-count"] == "301"
        data = client.post("/render", json={"content": FLOOD, "format": "md",
                                            "sources_pool": POOL},
                           headers={"Accept": "application/json"}).json()
    assert len(data["diagnostics"]) == 22 and data["diagnostics"][-1]["omitted"] == 280
    assert data["warnings"] == envelope["warnings"]


def test_strict_fails_on_a_flood_with_a_bounded_message(workspace: Path, tmp_path: Path) -> None:
    """Strict mode fails when any note was found; its message names 20 and counts the rest."""
    from renderers.errors import StrictError

    with pytest.raises(StrictError) as raised:
        render(FLOOD, tmp_path, formats="md", sources_pool=POOL, strict=True)
    message = str(raised.value)
    assert message.count("leads nowhere") == 20 and message.endswith(FLOOD_SUMMARY)
    (workspace / "flood.md").write_text(FLOOD, encoding="utf-8")
    code, stderr = cli_render(workspace, str(workspace / "flood.md"), "--to", "md", "--strict",
                              "--out", str(workspace / "out"))
    assert code == 1 and FLOOD_SUMMARY in stderr and len(stderr) < 8_000


def test_many_unknown_sids_are_counted_not_all_listed(tmp_path: Path) -> None:
    """The unknown-sid note names 20 sids; ``sources_used.json`` keeps them all."""
    content = "Text " + " ".join(f"[[S:{sid}]]" for sid in range(100, 400)) + ".\n"
    (result,) = render(content, tmp_path, formats="md", sources_pool=POOL)
    (note,) = result.diagnostics
    assert note.message == ("unknown sids not in the sources pool: "
                            + ", ".join(str(s) for s in range(100, 120)) + " and 280 more")
    (record,) = json.loads((tmp_path / "sources_used.json").read_text("utf-8"))
    assert record["unknown_sids"] == list(range(100, 400))


def test_capping_again_changes_nothing_and_merged_summaries_add_up() -> None:
    """Surfaces merge capped lists (the CLI's formats of one file): a merge capped again keeps
    the count exact, and every code has a name for its summary."""
    from renderers.diagnostics import KINDS, Diagnostic, capped, count, unique

    assert set(KINDS) == set(Code)
    notes = [Diagnostic(Code.IMAGE_REFUSED, f"page {p}", page=p) for p in range(1, 31)]
    once = capped(notes)
    assert capped(once) == once and count(once) == 30
    assert once[-1].message == "and 10 more refused images (first on page 21)"
    other = capped([*notes[:20], *(Diagnostic(Code.IMAGE_REFUSED, f"slide {s}", slide=s)
                                   for s in range(1, 6))])
    merged = capped(unique([*once, *other]))  # the 20 listed in both are one each
    assert count(merged) == 35 and len(merged) == 21
    assert merged[-1].message == "and 15 more refused images (first on page 21)"


def test_two_renders_to_one_name_leave_a_file_and_its_own_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Render A wrote ``same.md``, render B wrote and recorded its own, then A recorded: the
    record named A's sources and digest over B's file. The artifact is written under the
    store's lock, with its record; here B runs whole just as A is about to record."""
    from citations.store import SourcesUsedStore

    record_many = SourcesUsedStore.record_many
    interleaved: list[str] = []

    def b_first(self: SourcesUsedStore, *args: Any, **kwargs: Any) -> list[str]:
        if not interleaved:
            interleaved.append("b")
            render("# B\n\nSecond [[S:2]].\n", tmp_path, name="same", formats="md",
                   sources_pool=POOL)
        return record_many(self, *args, **kwargs)

    monkeypatch.setattr(SourcesUsedStore, "record_many", b_first)
    render("# A\n\nFirst [[S:1]].\n", tmp_path, name="same", formats="md", sources_pool=POOL)
    assert interleaved == ["b"]
    (record,) = SourcesUsedStore(tmp_path).read()
    written = (tmp_path / "same.md").read_bytes()
    assert record.sha256 == hashlib.sha256(written).hexdigest()
    assert record.sids == [1] and b"First" in written
