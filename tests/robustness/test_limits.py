"""Size and shape: each hostile input renders within the documented limits or fails fast.

Every case names the exact outcome: a :class:`renderers.errors.LimitError` naming the limit
(``limits.<field>``), an :class:`InputError` naming the problem, or a finished render whose
files are checked. Memory is bounded for real: the reader battery runs in a child process
whose address space is capped with ``RLIMIT_AS``.
"""

from __future__ import annotations

import io
import json
import multiprocessing
import re
import resource
import struct
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from citations.errors import CitationError
from renderers import cli
from renderers.api import render
from renderers.errors import InputError, LimitError, OptionError, RenderError
from renderers.options import Limits
from renderers.readers.html import read_html
from renderers.readers.markdown import read_markdown
from tests.helpers import at_sizes

POOL: list[dict[str, Any]] = [
    {"sid": 1, "title": "World Energy Outlook", "url": "https://www.iea.org/weo"},
    {"sid": 2, "title": "Capacity statistics", "url": "https://www.irena.org/stats"},
]
MB = 1024 * 1024


def test_documented_defaults() -> None:
    """The defaults docs/security.md documents (a change here must change the docs)."""
    assert Limits() == Limits(
        max_content_bytes=20 * MB,
        max_citations=200_000,
        max_cited_sids=500_000,
        max_nesting=64,
        max_table_rows=100_000,
        max_table_cells=100_000,
        max_formulas=1_000,
        max_pool_rows=200_000,
        max_image_pixels=50_000_000,
        max_pages=2_000,
        max_page_inches=100,
        max_raster_pixels=100_000_000,
        max_png_bytes=256 * MB,
    )
    security = (Path(__file__).resolve().parents[2] / "docs" / "security.md").read_text("utf-8")
    for name, value in (("max_content_bytes", "20 MiB"), ("max_citations", "200,000"),
                        ("max_cited_sids", "500,000"), ("max_table_cells", "100,000"),
                        ("max_nesting", "64"), ("max_table_rows", "100,000"),
                        ("max_pool_rows", "200,000"), ("max_formulas", "1,000"),
                        ("max_image_pixels", "50,000,000"),
                        ("max_pages", "2,000"), ("max_page_inches", "100"),
                        ("max_raster_pixels", "100,000,000"),
                        ("max_png_bytes", "256 MiB")):
        assert f"`{name}`" in security and value in security, name


# ------------------------------------------------------------------ content size


@pytest.mark.parametrize("kind", ["markdown", "html"])
def test_ten_megabytes_over_a_configured_limit_fail_fast(tmp_path: Path, kind: str) -> None:
    para = "Solar capacity grew quickly in 2024 and costs fell again [[S:1]].\n\n"
    content = para * (10 * MB // len(para) + 1)
    if kind == "html":
        content = "<p>" + content.replace("\n\n", "</p><p>") + "</p>"
    assert len(content) > 10 * MB
    with pytest.raises(LimitError, match=r"larger than 1048576 bytes \(limits.max_content_bytes\)"):
        render(content, tmp_path, name="big", formats=("md",), sources_pool=POOL,
               content_format=kind, limits={"max_content_bytes": MB})
    assert list(tmp_path.iterdir()) == []


def test_content_over_the_default_limit_fails_fast(tmp_path: Path) -> None:
    content = "word " * (21 * MB // 5)
    with pytest.raises(LimitError, match=r"limits\.max_content_bytes"):
        render(content, tmp_path, name="big", formats=("md",))
    # the limit counts bytes, not characters: 8 MiB of 3-byte characters is 24 MiB of UTF-8
    with pytest.raises(LimitError, match=r"limits\.max_content_bytes"):
        render("€" * (8 * MB), tmp_path, name="big", formats=("md",))
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ citations


@pytest.mark.slow
def test_a_hundred_thousand_citations_render(tmp_path: Path) -> None:
    content = ("Claim [[S:1]] and [[S:2]]. " * 50 + "\n\n") * 1000
    (result,) = render(content, tmp_path, name="cites", formats=("md",), sources_pool=POOL)
    assert result.stats["citations"] == 100_000
    text = result.path.read_text("utf-8")
    assert text.count("[^1]") == 50_001 and text.count("[^2]") == 50_001
    record = json.loads((tmp_path / "sources_used.json").read_text("utf-8"))[0]
    assert record["sids"] == [1, 2]


@pytest.mark.slow
def test_thirty_thousand_citations_in_one_paragraph_render(tmp_path: Path) -> None:
    """One huge paragraph: per-citation work must not grow with the paragraph (no O(n²))."""
    content = "Claim [[S:1]] " * 30_000
    (result,) = render(content, tmp_path, name="para", formats=("md",), sources_pool=POOL)
    assert result.stats["citations"] == 30_000


def test_citations_over_a_configured_limit_fail(tmp_path: Path) -> None:
    content = ("Claim [[S:1]]. " * 100 + "\n\n") * 30
    with pytest.raises(LimitError, match=r"more than 2000 citations \(limits.max_citations\)"):
        render(content, tmp_path, name="c", formats=("md",), sources_pool=POOL,
               limits={"max_citations": 2000})
    with pytest.raises(LimitError, match=r"limits\.max_citations"):
        render("<p>" + "x [[S:1]] " * 2001 + "</p>", tmp_path, name="c", formats=("md",),
               sources_pool=POOL, content_format="html", limits={"max_citations": 2000})
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("token", ["[[S:1-1000000]]", "[[S:1000000-1]]", "[[S:1-1001]]"])
def test_a_huge_range_is_reported_never_expanded(tmp_path: Path, token: str) -> None:
    (result,) = render(f"Claim {token} and [[S:2]].", tmp_path, name="range", formats=("md",),
                       sources_pool=POOL)
    assert result.sources_used == [2]
    assert any("1000" in w and token in w for w in result.warnings), result.warnings
    text = result.path.read_text("utf-8")
    assert text.count("[^") == 2  # one citation and its definition: the range stayed text
    with pytest.raises(RenderError):
        render(f"Claim {token}.", tmp_path, name="strict", formats=("md",), sources_pool=POOL,
               strict=True)


# ------------------------------------------------------------------ nesting, tables, pools

DEEP = 10_000
NESTED: dict[str, tuple[str, str]] = {
    "md-list": ("markdown", "- " * DEEP + "deep\n"),
    "md-ordered": ("markdown", "1. " * DEEP + "deep\n"),
    "md-quote": ("markdown", "> " * DEEP + "deep\n"),
    "md-mixed": ("markdown", "> - " * (DEEP // 2) + "deep\n"),
    "md-emphasis": ("markdown", "*a _b " * (DEEP // 2) + "x" + " b_ a*" * (DEEP // 2)),
    "md-links": ("markdown", "[" * DEEP + "deep" + "](https://e.org)" * DEEP),
    "html-list": ("html", "<ul><li>" * DEEP + "deep"),
    "html-quote": ("html", "<blockquote>" * DEEP + "deep"),
    "html-div": ("html", "<div>" * DEEP + "deep" + "</div>" * DEEP),
    "html-inline": ("html", "<p>" + "<em><strong>" * (DEEP // 2) + "deep</p>"),
}


@pytest.mark.parametrize("case", sorted(NESTED))
def test_ten_thousand_deep_nesting_fails_fast_or_flattens(tmp_path: Path, case: str) -> None:
    kind, content = NESTED[case]
    try:
        results = render(content, tmp_path, name="deep", formats=("md", "html", "docx"),
                         content_format=kind)
    except LimitError as exc:
        assert "limits.max_nesting" in str(exc) and "64" in str(exc)
        assert list(tmp_path.iterdir()) == []
        return
    # accepted only when the reader did not build 10,000 levels (e.g. markdown-it's own cap)
    for result in results:
        assert result.path.stat().st_size < 2 * MB
    assert "deep" in results[0].path.read_text("utf-8")


def _table_md(rows: int) -> str:
    return "| year | value |\n|---|---|\n" + "".join(f"| {i} | {i * 3} |\n" for i in range(rows))


def _table_html(rows: int) -> str:
    body = "".join(f"<tr><td>{i}</td><td>{i * 3}</td></tr>" for i in range(rows))
    return f"<table><thead><tr><th>year</th><th>value</th></tr></thead>{body}</table>"


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["markdown", "html"])
def test_a_fifty_thousand_row_table_over_a_configured_limit_fails(
    tmp_path: Path, kind: str
) -> None:
    content = _table_md(50_000) if kind == "markdown" else _table_html(50_000)
    with pytest.raises(LimitError, match=r"more than 10000 rows \(limits.max_table_rows\)"):
        render(content, tmp_path, name="t", formats=("md",), content_format=kind,
               limits={"max_table_rows": 10_000, "max_table_cells": 1_000_000})


@at_sizes(500, 5_000)
def test_a_table_within_the_limit_renders_every_row(tmp_path: Path, size: int) -> None:
    (md, docx) = render(_table_md(size), tmp_path, name="t", formats=("md", "docx"))
    assert md.path.read_text("utf-8").count("\n| ") == size + 1
    with zipfile.ZipFile(docx.path) as package:
        rows = re.findall(rb"<w:tr[ >]", package.read("word/document.xml"))
    assert len(rows) == size + 1


def _pool(rows: int) -> list[dict[str, Any]]:
    return [{"sid": i, "title": f"Source {i}", "url": f"https://example.org/{i}"}
            for i in range(1, rows + 1)]


@pytest.mark.slow
def test_a_pool_of_a_hundred_thousand_rows_renders(tmp_path: Path) -> None:
    (result,) = render("Claim [[S:99999]] and [[S:7]].", tmp_path, name="pool", formats=("md",),
                       sources_pool=_pool(100_000))
    assert result.sources_used == [99999, 7]
    assert "https://example.org/99999" in result.path.read_text("utf-8")


def test_a_pool_over_a_configured_limit_fails(tmp_path: Path) -> None:
    with pytest.raises(LimitError, match=r"limits.max_pool_rows"):
        render("Claim [[S:1]].", tmp_path, name="pool", formats=("md",),
               sources_pool=_pool(1_001), limits={"max_pool_rows": 1_000})
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ encoding


@pytest.mark.parametrize(
    "data, where",
    [(b"Claim [[S:1]] \xff\xfe broken", 14), (b"\xc3\x28", 0), (b"ok \xed\xa0\x80 surrogate", 3),
     (b"Claim " + b"\xe2\x82" + b" cut", 6)],
)
def test_invalid_utf8_is_refused_naming_the_byte(tmp_path: Path, data: bytes, where: int) -> None:
    with pytest.raises(InputError, match=rf"not valid UTF-8 \(byte {where}\b"):
        render(data, tmp_path, name="bytes", formats=("md",), sources_pool=POOL)
    assert list(tmp_path.iterdir()) == []


def test_unencodable_characters_become_replacement_characters(tmp_path: Path) -> None:
    """Lone surrogates and XML-invalid controls, in content and pool rows, reach every writer
    as U+FFFD instead of crashing it."""
    pool = [{"sid": 1, "title": "Bad\x0btitle\ud800", "url": "https://example.org/\x01"}]
    results = render("Claim \ud800 [[S:1]] \udfff, tab\tok, vt\x0b, nul\x00, \x1f end.", tmp_path,
                     name="chars", formats=("md", "html", "docx", "pptx", "pdf"), sources_pool=pool)
    by_format = {r.format: r for r in results}
    markdown = by_format["md"].path.read_text("utf-8")
    assert "Claim \ufffd [^1] \ufffd, tab\tok, vt\ufffd, nul\ufffd, \ufffd end." in markdown
    assert "Bad\ufffdtitle\ufffd" in markdown
    with zipfile.ZipFile(by_format["docx"].path) as package:
        assert "vt\ufffd, nul\ufffd" in package.read("word/document.xml").decode("utf-8")
    assert by_format["pdf"].path.read_bytes().startswith(b"%PDF-")


# ------------------------------------------------------------------ decompression bombs


def _png_bomb(width: int, height: int) -> bytes:
    """A valid 1-bit PNG of ``width``×``height`` white pixels: a few hundred KB on disk."""
    def chunk(kind: bytes, payload: bytes) -> bytes:
        return (struct.pack(">I", len(payload)) + kind + payload
                + struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF))

    row = b"\x00" + b"\xff" * ((width + 7) // 8)
    packer = zlib.compressobj(9)
    data = b"".join(packer.compress(row * 1000) for _ in range(height // 1000))
    data += packer.compress(row * (height % 1000)) + packer.flush()
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data)
            + chunk(b"IEND", b""))


@pytest.fixture(scope="module")
def bomb() -> bytes:
    return _png_bomb(20_000, 20_000)  # 400 megapixels, 8 times the default limit


@pytest.mark.parametrize("kind", ["markdown", "html"])
def test_decompression_bomb_images_are_refused(tmp_path: Path, bomb: bytes, kind: str) -> None:
    (tmp_path / "bomb.png").write_bytes(bomb)
    assert len(bomb) < 2 * MB
    content = ("# Bomb\n\n![the bomb](bomb.png)\n\nAfter the image [[S:1]].\n" if kind == "markdown"
               else '<h1>Bomb</h1><p><img src="bomb.png" alt="the bomb"></p>'
                    '<p><img src="data:image/png;base64,{}" alt="inline bomb"></p>'
                    "<p>After the image [[S:1]].</p>")
    if kind == "html":
        import base64

        content = content.replace("{}", base64.b64encode(bomb).decode("ascii"))
    results = render(content, tmp_path / "out", name="bomb",
                     formats=("pdf", "docx", "pptx", "html"), sources_pool=POOL,
                     content_format=kind, base_dir=tmp_path)
    by_format = {r.format: r for r in results}
    html = by_format["html"].path.read_text("utf-8")
    assert "data:image" not in html and "the bomb" in html
    for fmt in ("docx", "pptx"):
        with zipfile.ZipFile(by_format[fmt].path) as package:
            assert [n for n in package.namelist() if "/media/" in n] == []
    pdf = by_format["pdf"].path.read_bytes()
    assert b"/Subtype /Image" not in pdf and b"/Subtype/Image" not in pdf


def test_a_lower_pixel_limit_refuses_an_ordinary_image(tmp_path: Path) -> None:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (300, 200), (0, 120, 0)).save(buffer, "PNG")
    (tmp_path / "photo.png").write_bytes(buffer.getvalue())
    content = "![photo](photo.png)\n"
    (ok,) = render(content, tmp_path / "a", name="p", formats=("docx",), base_dir=tmp_path)
    (refused,) = render(content, tmp_path / "b", name="p", formats=("docx",), base_dir=tmp_path,
                        limits={"max_image_pixels": 50_000})
    with zipfile.ZipFile(ok.path) as a, zipfile.ZipFile(refused.path) as b:
        assert len([n for n in a.namelist() if "/media/" in n]) == 1
        assert [n for n in b.namelist() if "/media/" in n] == []


@pytest.mark.slow
def test_pages_over_a_configured_limit_fail(tmp_path: Path) -> None:
    content = "\n\n".join(f"## Section {i}\n\nText [[S:1]]." for i in range(120))
    with pytest.raises(LimitError, match="max_pages"):
        render(content, tmp_path, name="pages", formats=("pdf",), sources_pool=POOL,
               limits={"max_pages": 2})
    with pytest.raises(LimitError, match="max_pages"):
        render(content, tmp_path, name="pages", formats=("pptx",), sources_pool=POOL,
               limits={"max_pages": 2})
    assert not list(tmp_path.glob("pages.*"))


def test_unknown_limit_names_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="accepted keys are max_content_bytes"):
        render("x", tmp_path, name="x", formats=("md",), limits={"max_bytes": 1})


@pytest.mark.parametrize("limits", [{"max_seconds": 10**10}, Limits(max_seconds=10**10)])
def test_max_seconds_over_a_week_is_an_option_error(tmp_path: Path, limits: object) -> None:
    # a timer that long overflowed the clock in its thread: two tracebacks and no deadline
    with pytest.raises(OptionError) as caught:
        render("x", tmp_path, name="x", formats=("md",), limits=limits)
    assert caught.value.field == "limits.max_seconds"
    assert str(caught.value) == "limits.max_seconds=10000000000: accepted range is 1..604800"
    assert not list(tmp_path.iterdir())
    (result,) = render("x", tmp_path, name="x", formats=("md",), limits={"max_seconds": 604800})
    assert result.path.exists()


def test_the_cli_refuses_max_seconds_over_a_week_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "doc.md").write_text("Hi [[S:1]]\n", encoding="utf-8")
    (tmp_path / "pool.json").write_text(json.dumps(POOL), encoding="utf-8")
    args = ["render", str(tmp_path / "doc.md"), "--pool", str(tmp_path / "pool.json")]
    with pytest.raises(SystemExit) as exit_info:
        cli.main([*args, "--to", "md", "--out", str(tmp_path / "o"),
                  "--max-seconds", "10000000000"])
    assert exit_info.value.code == 2
    stderr = capsys.readouterr().err
    assert "Traceback" not in stderr and "OverflowError" not in stderr
    assert "--max-seconds: limits.max_seconds=10000000000: accepted range is 1..604800" in stderr
    assert not (tmp_path / "o").exists()


# ------------------------------------------------------------------ bounded memory


def _battery() -> list[tuple[str, Callable[[], object]]]:
    para = "Solar grew [[S:1]] and wind [[S:2]] too.\n\n"
    return [
        ("10 MB markdown, 1 MiB limit",
         lambda: read_markdown(para * (10 * MB // len(para)), limits=Limits(max_content_bytes=MB))),
        ("deep list", lambda: read_markdown("- " * DEEP + "x")),
        ("deep html", lambda: read_html("<ul><li>" * DEEP + "x")),
        ("deep quote", lambda: read_markdown("> " * DEEP + "x")),
        ("range", lambda: read_markdown("[[S:1-1000000]] " * 1000)),
    ]


def _run_capped(cap: int, conn: Any) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    outcomes: list[str] = []
    for name, case in _battery():
        try:
            case()
            outcomes.append(f"{name}: ok")
        except (RenderError, CitationError) as exc:
            outcomes.append(f"{name}: {type(exc).__name__}")
        except MemoryError:
            outcomes.append(f"{name}: MemoryError")
    conn.send(outcomes)


def _vm_size() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmSize")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc (Linux)")
def test_memory_stays_bounded_under_an_address_space_cap() -> None:
    cap = _vm_size() + 768 * MB  # the reader battery gets at most 768 MiB more address space
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_run_capped, args=(cap, sender))
    child.start()
    sender.close()
    assert receiver.poll(300), "the capped battery did not report"
    outcomes = receiver.recv()
    child.join(timeout=30)
    assert outcomes == [
        "10 MB markdown, 1 MiB limit: LimitError",
        "deep list: LimitError",
        "deep html: LimitError",
        "deep quote: LimitError",
        "range: ok",
    ]
