"""The inputs of issue 13 ("bounded work"), each as a render a child process runs under a memory
cap: ``python -m tests.robustness.bounded_cases CASE OUT_DIR`` prints one JSON line (outcome,
error code, bytes written). :mod:`tests.robustness.test_bounded_cost` runs every case."""

from __future__ import annotations

import base64
import io
import json
import random
import resource
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MB = 1024 * 1024
#: Address space a case may add to what the imports already mapped.
HEADROOM = 1536 * MB


def pool(count: int) -> list[dict[str, Any]]:
    return [
        {"sid": i, "title": f"Source {i}", "url": f"https://e.example/{i}"}
        for i in range(1, count + 1)
    ]


def noise_png(side: int) -> bytes:
    """An incompressible PNG of about ``3 * side**2`` bytes."""
    from PIL import Image

    rng = random.Random(side)
    image = Image.frombytes("RGB", (side, side), rng.randbytes(side * side * 3))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def yaml_alias_bomb() -> str:
    lines = [
        "- sid: 1",
        '  title: "bomb"',
        "  extra:",
        '    a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]',
    ]
    for level in range(1, 10):
        refs = ", ".join([f"*a{level - 1}"] * 9)
        lines.append(f"    a{level}: &a{level} [{refs}]")
    return "\n".join(lines) + "\n"


def zip_bomb_docx(directory: Path) -> Path:
    from renderers.api import write_docx

    base = directory / "base.docx"
    write_docx("Base.", base)
    bomb = directory / "bomb.docx"
    with zipfile.ZipFile(base) as old, zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            new.writestr(info.filename, old.read(info.filename))
        with new.open("word/media/huge.bin", "w", force_zip64=True) as handle:
            chunk = bytes(MB)
            for _ in range(1536):  # 1.5 GiB unpacked, about 1.5 MB packed
                handle.write(chunk)
    return bomb


@dataclass(frozen=True)
class Case:
    """One hostile input: what is rendered, to which formats, with which options."""

    item: str  # the item number and a few words
    content: Callable[[Path], Any]
    formats: tuple[str, ...]
    pool: Callable[[Path], Any] = lambda _: pool(3)
    options: Callable[[Path], dict[str, Any]] = lambda _: {}


def reference_image_uri() -> str:
    """The image of the reference-images case: a ``data:`` URI of about 1.9 MB (1.4 MB PNG)."""
    return "data:image/png;base64," + base64.b64encode(noise_png(680)).decode()


def _ref_images(_: Path) -> str:
    return "# Pictures\n\n" + "![a][r] " * 200 + "[[S:1]]\n\n[r]: " + reference_image_uri() + "\n"


CASES: dict[str, Case] = {
    "ranges-expanded": Case(
        "2: ranges multiply output",
        lambda _: "[[S:1-1000]] " * 100_000,
        ("md", "html", "docx"),
        pool=lambda _: pool(1000),
    ),
    "ranges-compressed": Case(
        "2: a long run displayed compressed",
        lambda _: "[[S:1-1000]] " * 400,
        ("md", "html", "docx", "pptx"),
        pool=lambda _: pool(1000),
    ),
    "reference-images": Case(
        "3: reference images multiply output",
        _ref_images,
        ("md", "docx", "pptx", "html", "pdf"),
    ),
    "long-code-line": Case(
        "4: a 100,000-character code line",
        lambda _: "# T\n\n```\n" + "x" * 100_000 + "\n```\n\n[[S:1]]\n",
        ("pdf",),
    ),
    "long-title": Case(
        "4: a 100,000-character pool title",
        lambda _: "# T\n\nText [[S:1]].\n",
        ("pdf",),
        pool=lambda _: [{"sid": 1, "title": "t" * 100_000, "url": "https://e.example/"}],
    ),
    "long-pre-html": Case(
        "4: a 100,000-character <pre> and <img src>",
        lambda _: (
            "<h1>T</h1><pre>"
            + "p" * 100_000
            + '</pre><p><img src="'
            + "i" * 100_000
            + '"> [[S:1]]</p>'
        ),
        ("pdf",),
    ),
    "huge-page": Case(
        "5: author CSS page size",
        lambda _: "<style>@page{size:200in 200in}</style><p>x [[S:1]]</p>",
        ("png",),
        options=lambda _: {"dpi": 600},
    ),
    "brackets": Case("7: '[' * 100000", lambda _: "[" * 100_000, ("md", "html", "pdf")),
    "long-integer-sid": Case(
        "7: a 5,000-digit sid",
        lambda _: "x [[S:1]]",
        ("md",),
        pool=lambda _: '[{"sid": ' + "9" * 5000 + ', "title": "t"}]',
    ),
    "deep-nesting": Case("7: nesting 5,000 deep", lambda _: "> " * 5000 + "x", ("md", "html")),
    "deep-html": Case("7: HTML nesting 5,000 deep", lambda _: "<div>" * 5000 + "x", ("md", "pdf")),
    "yaml-alias-bomb": Case(
        "8: YAML alias bomb",
        lambda _: "x [[S:1]]",
        ("md",),
        pool=lambda d: _write(d / "bomb.yaml", yaml_alias_bomb()),
    ),
    "wide-table": Case(
        "9: a 100,000-column table",
        lambda _: wide_table(100_000),
        ("md", "docx", "html"),
    ),
    "wide-table-allowed": Case(
        "9: a 20,000-column table, within max_table_cells",
        lambda _: wide_table(20_000),
        ("md", "docx", "html"),
    ),
    "million-tokens": Case("9: 1e6 citation tokens", lambda _: "[[S:1]] " * 1_000_000, ("md",)),
    "million-row-pool": Case(
        "9: a 1e6-row pool as JSON text",
        lambda _: "x [[S:1]]",
        ("md",),
        pool=lambda _: json.dumps(pool(1_000_000)),
    ),
    "many-pages": Case(
        "9: a report of thousands of pages",
        lambda _: "\n\n".join("Paragraph " + "words " * 80 + "[[S:1]]" for _ in range(5_000)),
        ("pdf",),
        options=lambda _: {"limits": {"max_pages": 100}},
    ),
    "swallowing-html": Case(
        "15: HTML that swallows the rest",
        lambda _: (
            "<p>Before [[S:1]]</p><math><mtext><table><mglyph><style>" + "<p>after</p>" * 1000
        ),
        ("html", "pdf"),
    ),
    "zip-bomb-reference": Case(
        "16: a zip-bomb reference DOCX",
        lambda _: "x [[S:1]]",
        ("docx",),
        options=lambda d: {"reference_docx": zip_bomb_docx(d)},
    ),
    "unclosed-cite-sups": Case(
        "sweep: 100,000 citation <sup>s never closed, in one paragraph (each scanned ahead)",
        lambda _: '<sup class="cite" data-sids="1">[S:1] ' * 100_000,
        ("md",),
    ),
    "long-list": Case(
        "sweep: a tight list of 100,000 items (each item copied the tokens after it)",
        lambda _: "- item [[S:1]]\n" * 100_000,
        ("md",),
    ),
    "many-attributes": Case(
        "native: 1.2 million attributes on one tag (nh3's parse checks each against the rest)",
        lambda _: "<h1>T</h1><p " + " ".join(f"a{i}" for i in range(1_200_000)) + ">x [[S:1]]</p>",
        ("md",),
        options=lambda _: {"limits": {"max_seconds": 5}},
    ),
    "many-html-tags": Case(
        "native: 200,000 <html> tags of one attribute each (nh3 merges each into the root)",
        lambda _: "<p>x [[S:1]]</p>" + "".join(f"<html a{i}>" for i in range(200_000)),
        ("md",),
        options=lambda _: {"limits": {"max_seconds": 5}},
    ),
    "long-mark-run": Case(
        "native: a letter under 200,000 acute accents (one cluster, shaped in one native call)",
        lambda _: "# T\n\nBefore x" + "\u0301" * 200_000 + "y after [[S:1]].\n",
        ("pdf",),
    ),
    "long-mark-run-typst": Case(
        "native: a letter under 200,000 acute accents, through Typst",
        lambda _: "# T\n\nBefore x" + "\u0301" * 200_000 + "y after [[S:1]].\n",
        ("pdf",),
        options=lambda _: {"pdf_engine": "typst"},
    ),
    "css-escapes": Case(
        "18: CSS escapes",
        lambda _: (
            "<style>@\\69mport 'http://127.0.0.1:9/x.css'; "
            "p{background:\\75rl(http://127.0.0.1:9/y)}</style><p>x [[S:1]]</p>"
        ),
        ("pdf",),
    ),
}


def wide_table(columns: int) -> str:
    """A markdown table of one header row and one body row, ``columns`` wide."""
    return (
        "| " + " | ".join("c" for _ in range(columns)) + " |\n|" + "-|" * columns + "\n| "
        + " | ".join("v" for _ in range(columns)) + " |\n"
    )


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _vm_size() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize in /proc/self/status")


def run(name: str, out: Path) -> dict[str, Any]:
    """Render case ``name`` into ``out`` under the memory cap; what happened, as JSON data."""
    from citations.errors import CodedError
    from renderers.api import EXTENSIONS, open_session
    from renderers.pipeline import write_all

    case = CASES[name]
    work = out / "inputs"
    work.mkdir(parents=True)
    content, pool_rows, options = case.content(work), case.pool(work), case.options(work)
    cap = _vm_size() + HEADROOM
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    results: dict[str, Any] = {}
    sizes: dict[str, int] = {}
    try:  # read once, as a render of several formats does
        session = open_session(content, out, sources_pool=pool_rows, **options)
    except CodedError as exc:
        return _report(dict.fromkeys(case.formats, f"{type(exc).__name__}:{exc.code}"), {}, out)
    except MemoryError:
        return _report(dict.fromkeys(case.formats, "MemoryError"), {}, out)
    for fmt in case.formats:
        try:
            (result,) = write_all(session, {fmt: out / f"report{EXTENSIONS[fmt]}"}, out, "report")
            results[fmt] = "ok"
            sizes[fmt] = sum(path.stat().st_size for path in result.paths or [result.path])
        except CodedError as exc:
            results[fmt] = f"{type(exc).__name__}:{exc.code}"
        except MemoryError:
            results[fmt] = "MemoryError"
    return _report(results, sizes, out)


def _report(results: dict[str, str], sizes: dict[str, int], out: Path) -> dict[str, Any]:
    written = sum(
        p.stat().st_size for p in out.rglob("*") if p.is_file() and "inputs" not in p.parts
    )
    return {
        "results": results,
        "sizes": sizes,  # bytes written per format that rendered
        "bytes": written,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
    }


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1], Path(sys.argv[2]))))
