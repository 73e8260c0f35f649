"""The Python API: write_* per format, render (parse once), sources_used.json, envelopes, errors."""

from __future__ import annotations

import codecs
import hashlib
import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

import renderers
from renderers import api
from renderers.api import (
    RenderResult,
    available_formats,
    render,
    render_file,
    write_docx,
    write_html,
    write_markdown,
    write_pdf,
    write_png,
    write_pptx,
)
from renderers.errors import InputError, OptionError, OutputPathError, StrictError
from tests.helpers import pdf_text

CONTENT = (
    "# Grid storage brief\n\n"
    "Battery pack prices fell to a record low.[[S:2]] Storage deployment doubled.[[S:1, 3]]\n\n"
    "- Utility-scale growth[[S:3]]\n- Behind the meter[[S:99]]\n\n"
    "```python\nx = np.array([[1, 2], [3, 4]])  # [[S:4]]\n```\n\n"
    "Used for background only.[[USAGE:4]]\n"
)
POOL = [
    {
        "sid": 1,
        "title": "Batteries and Secure Energy Transitions",
        "url": "https://www.iea.org/reports/batteries-and-secure-energy-transitions",
        "published_at": "2024-04-25",
    },
    {
        "sid": 2,
        "title": "Battery pack prices hit record low",
        "url": "https://about.bnef.com/blog/x/",
    },
    {
        "sid": 3,
        "title": "Grid-Scale Battery Storage FAQ",
        "url": "https://www.nrel.gov/docs/74426.pdf",
    },
    {"sid": 4, "title": "Background memo", "artifact_path": "attachments/memo.pdf"},
]
ENVELOPE_KEYS = {"ok", "path", "format", "sources_used", "stats", "warnings"}

Writer = Callable[..., RenderResult]
WRITERS: dict[str, tuple[Writer, str]] = {
    "pdf": (write_pdf, "report.pdf"),
    "png": (write_png, "report.png"),
    "docx": (write_docx, "report.docx"),
    "pptx": (write_pptx, "report.pptx"),
    "html": (write_html, "report.html"),
    "md": (write_markdown, "report.md"),
}


def need(fmt: str) -> None:
    if fmt not in available_formats():
        pytest.skip(f"the {fmt} writer is not installed")


def records(out_dir: Path) -> dict[str, dict[str, Any]]:
    data = json.loads((out_dir / "sources_used.json").read_text(encoding="utf-8"))
    return {record["filename"]: record for record in data}


def check_content(fmt: str, path: Path) -> None:
    """Open the artifact and check it holds the body, the citations and the Sources."""
    data = path.read_bytes()
    if fmt == "pdf":
        text = pdf_text(path)
        assert "Battery pack prices fell" in text and "Grid-Scale Battery Storage FAQ" in text
    elif fmt == "png":
        image = Image.open(io.BytesIO(data))
        assert image.format == "PNG" and image.width > 100
        darkest, _ = image.convert("L").getextrema()
        assert isinstance(darkest, int) and darkest < 100  # not a blank page
    elif fmt in ("docx", "pptx"):
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            xml = "".join(
                package.read(n).decode("utf-8")
                for n in package.namelist()
                if n.endswith(".xml") and ("word/" in n or "ppt/slides/" in n)
            )
        assert "Battery pack prices" in xml and "Grid-Scale Battery Storage FAQ" in xml
    elif fmt == "html":
        html = data.decode("utf-8")
        assert 'href="#src-1"' in html and "https://www.nrel.gov/docs/74426.pdf" in html
    elif fmt == "md":
        md = data.decode("utf-8")
        assert "record low.[^1] Storage deployment doubled.[^2][^3]" in md
        assert ("[^3]: [Grid-Scale Battery Storage FAQ](https://www.nrel.gov/docs/74426.pdf)"
                " — nrel.gov") in md
        assert "np.array([[1, 2], [3, 4]])  # [[S:4]]" in md


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_write_each_format(fmt: str, tmp_path: Path) -> None:
    need(fmt)
    writer, filename = WRITERS[fmt]
    result = writer(CONTENT, tmp_path / filename, sources_pool=POOL)
    assert result.format == fmt
    assert result.path == (tmp_path / filename).resolve()  # a short report: one PNG page
    assert result.sources_used == [2, 1, 3]
    assert any("99" in w for w in result.warnings)
    for path in result.paths:
        assert path.is_file()
    check_content(fmt, result.path)

    envelope = result.to_envelope()
    assert set(envelope) == ENVELOPE_KEYS
    assert envelope["ok"] is True and envelope["format"] == fmt
    assert envelope["path"] == str(result.path)
    json.dumps(envelope)  # serializable as is
    assert envelope["stats"]["bytes"] == sum(p.stat().st_size for p in result.paths)
    assert envelope["stats"]["citations"] == 3  # the citation of unknown sid 99 renders nothing

    saved = records(tmp_path)
    for path in result.paths:
        record = saved[path.name]
        assert record["format"] == fmt and record["artifact_name"] == "report"
        assert record["sids"] == [2, 1, 3]
        assert record["numbers"] == {"2": 1, "1": 2, "3": 3}
        assert record["usage_sids"] == [4]
        assert record["unknown_sids"] == [99]
        assert record["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_render_many_formats_parses_once_and_png_reuses_pdf(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    need("png")
    import renderers.readers.markdown
    import renderers.writers.pdf

    calls = {"read": 0, "pdf": 0}
    real_read = renderers.readers.markdown.read_markdown
    real_pdf = renderers.writers.pdf.pdf_document

    def counting_read(*args: Any, **kwargs: Any) -> Any:
        calls["read"] += 1
        return real_read(*args, **kwargs)

    def counting_pdf(*args: Any, **kwargs: Any) -> Any:
        calls["pdf"] += 1
        return real_pdf(*args, **kwargs)

    monkeypatch.setattr(renderers.readers.markdown, "read_markdown", counting_read)
    monkeypatch.setattr(renderers.writers.pdf, "pdf_document", counting_pdf)
    seen: list[str] = []
    results = render(
        CONTENT,
        tmp_path,
        name="brief",
        formats="pdf,png,html,md",
        sources_pool=POOL,
        on_result=lambda r: seen.append(r.format),
    )
    assert calls == {"read": 1, "pdf": 1}
    assert [r.format for r in results] == seen == ["pdf", "png", "html", "md"]
    assert {p.name for r in results for p in r.paths} >= {
        "brief.pdf",
        "brief.png",
        "brief.html",
        "brief.md",
    }
    assert set(records(tmp_path)) == {p.name for r in results for p in r.paths}


@pytest.mark.slow
def test_png_pages_are_numbered_when_there_are_several(tmp_path: Path) -> None:
    need("png")
    long_text = "# Long\n\n" + "\n\n".join(
        f"Paragraph {i} about storage economics and grid flexibility.[[S:{i % 3 + 1}]] " * 6
        for i in range(60)
    )
    result = write_png(long_text, tmp_path / "deck.png", sources_pool=POOL, dpi=30)
    names = [p.name for p in result.paths]
    assert len(names) >= 2 and names[:2] == ["deck-1.png", "deck-2.png"]
    assert not (tmp_path / "deck.png").exists()
    assert result.stats["pages"] == len(names)
    assert set(records(tmp_path)) == set(names)


def test_same_input_gives_same_bytes(tmp_path: Path) -> None:
    first = write_markdown(CONTENT, tmp_path / "a.md", sources_pool=POOL)
    second = write_markdown(CONTENT, tmp_path / "b.md", sources_pool=POOL)
    assert first.path.read_bytes() == second.path.read_bytes()


def test_rewriting_a_file_replaces_its_record(tmp_path: Path) -> None:
    write_markdown(CONTENT, tmp_path / "r.md", sources_pool=POOL)
    write_markdown("No citations any more.\n", tmp_path / "r.md", sources_pool=POOL)
    record = records(tmp_path)["r.md"]
    assert record["sids"] == [] and record["numbers"] == {}
    assert record["sha256"] == hashlib.sha256((tmp_path / "r.md").read_bytes()).hexdigest()


def test_html_input_and_bytes_content(tmp_path: Path) -> None:
    html = (
        b'<h1>Brief</h1><p>Prices fell.<sup class="cite" data-sids="2">[S:2]</sup> '
        b"Bare marker [S:3].</p><pre><code>[[S:1]]</code></pre>"
    )
    result = write_markdown(html, tmp_path / "brief.md", sources_pool=POOL)
    md = result.path.read_text(encoding="utf-8")
    assert "Prices fell.[^1] Bare marker [^2]." in md
    assert "[[S:1]]" in md and result.sources_used == [2, 3]


def test_numeric_dialect_maps_pool_indexes(tmp_path: Path) -> None:
    pool = [
        {"sid": 10, "title": "Ten", "url": "https://ten.org/"},
        {"sid": 20, "title": "Twenty", "url": "https://twenty.org/"},
    ]
    result = write_markdown(
        "First [2] then [1] and `[1]` and [7].\n",
        tmp_path / "n.md",
        sources_pool=pool,
        dialects=["numeric"],
    )
    md = result.path.read_text(encoding="utf-8")
    assert result.sources_used == [20, 10]
    assert "First [^1] then [^2] and `[1]` and \\[7\\]." in md
    assert any("[7]" in w for w in result.warnings)


def test_pool_as_path_and_sid_numbering(tmp_path: Path) -> None:
    pool_file = tmp_path / "pool.json"
    pool_file.write_text(json.dumps({"sources_pool": POOL}), encoding="utf-8")
    result = write_markdown(
        CONTENT,
        tmp_path / "s.md",
        sources_pool=str(pool_file),
        numbering="sid",
        title="Custom title",
        sources_heading="References",
    )
    md = result.path.read_text(encoding="utf-8")
    assert "record low.[^2] Storage deployment doubled.[^1][^3]" in md
    assert "## References" in md
    assert records(tmp_path)["s.md"]["numbers"] == {"2": 2, "1": 1, "3": 3}


def test_strict_turns_unknown_sids_into_an_error(tmp_path: Path) -> None:
    with pytest.raises(StrictError, match="99"):
        write_markdown(CONTENT, tmp_path / "x.md", sources_pool=POOL, strict=True)
    assert not (tmp_path / "x.md").exists()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"colour": "red"}, r"unknown option 'colour'; accepted options: .*dpi"),
        ({"dpi": "high"}, r"dpi='high': expected an integer"),
        ({"dpi": 5000}, r"dpi=5000: accepted range"),
        ({"numbering": "random"}, r"numbering='random': accepted values"),
        ({"page_size": "A3"}, r"page_size='A3': accepted values"),
        ({"pages": [0]}, r"pages=\[0\]"),
        ({"content_format": "docx"}, r"content_format='docx': accepted values"),
        ({"dialects": ["klingon"]}, r"dialects='klingon': accepted values"),
        ({"limits": {"max_bananas": 1}}, r"accepted keys are"),
    ],
)
def test_bad_options_are_clear_input_errors(
    kwargs: dict[str, Any], message: str, tmp_path: Path
) -> None:
    with pytest.raises(InputError, match=message):
        write_markdown(CONTENT, tmp_path / "x.md", sources_pool=POOL, **kwargs)


def test_bad_content_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not valid UTF-8"):
        write_markdown(b"caf\xe9 [[S:1]]", tmp_path / "x.md", sources_pool=POOL)
    with pytest.raises(InputError, match="expected text"):
        write_markdown(12345, tmp_path / "x.md", sources_pool=POOL)  # type: ignore[arg-type]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32", "utf-32-be"])
def test_content_with_another_byte_order_mark_reads_as_its_text(
    encoding: str, tmp_path: Path
) -> None:
    """Windows PowerShell 5 saves UTF-16 LE with its mark; the mark names the encoding."""
    text = "Café — naïve 漢字 [[S:1]]"
    bom = {"utf-16-be": codecs.BOM_UTF16_BE, "utf-32-be": codecs.BOM_UTF32_BE}.get(encoding, b"")
    write_markdown(bom + text.encode(encoding), tmp_path / "marked.md", sources_pool=POOL)
    write_markdown(text, tmp_path / "plain.md", sources_pool=POOL)
    written = (tmp_path / "marked.md").read_text(encoding="utf-8")
    assert written == (tmp_path / "plain.md").read_text(encoding="utf-8")
    assert written.startswith("Café — naïve 漢字 [^1]")


def test_an_answer_saved_as_utf16_is_read_as_the_answer(tmp_path: Path) -> None:
    """A provider's JSON answer in UTF-16 is adapted as that answer, not shown as its text,
    whether a ``.json`` name says so or only its first character does."""
    answer = Path(__file__).resolve().parent.parent / "fixtures" / "answers"
    text = (answer / "anthropic-web-search.json").read_text(encoding="utf-8")
    (tmp_path / "utf16.json").write_bytes(text.encode("utf-16"))
    (plain,) = render(text.encode(), tmp_path / "a", formats="md", name="answer")
    (named,) = render_file(tmp_path / "utf16.json", tmp_path / "b", formats="md", name="answer")
    (unnamed,) = render(text.encode("utf-16"), tmp_path / "c", formats="md", name="answer")
    assert plain.sources_used != []
    for result in (named, unnamed):
        assert result.sources_used == plain.sources_used
        assert result.path.read_bytes() == plain.path.read_bytes()


def test_broken_utf16_is_refused_naming_its_mark(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"not valid UTF-16, although it opens with that "
                       r"byte-order mark \(byte 2: b'\\x00'\); save it as UTF-8"):
        write_markdown(codecs.BOM_UTF16_LE + b"\x00\xd8", tmp_path / "x.md", sources_pool=POOL)
    assert not (tmp_path / "x.md").exists()


def test_bad_formats_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="format 'gif' is not known"):
        render(CONTENT, tmp_path, formats=["gif"], sources_pool=POOL)
    with pytest.raises(InputError, match="no output format"):
        render(CONTENT, tmp_path, formats="", sources_pool=POOL)


@pytest.mark.parametrize("formats", [None, 5, b"pdf", object()])
def test_formats_that_are_no_names_are_an_option_error(formats: object, tmp_path: Path) -> None:
    with pytest.raises(OptionError) as caught:
        render(CONTENT, tmp_path, formats=formats, sources_pool=POOL)  # type: ignore[arg-type]
    assert caught.value.field == "formats"
    message = str(caught.value)
    assert message.startswith(f"formats={formats!r}"[:20])
    assert "expected a comma-separated string or a list of format names" in message
    assert "accepted: pdf, png, docx, pptx, html, md (aliases: htm, markdown) or 'all'" in message
    assert list(tmp_path.iterdir()) == []


def test_formats_may_be_a_string_a_list_or_any_iterable(tmp_path: Path) -> None:
    for formats in ("md,html", ["md", "html"], iter(("md", "html"))):
        results = render(CONTENT, tmp_path, formats=formats, sources_pool=POOL)
        assert [r.format for r in results] == ["md", "html"]


@pytest.mark.parametrize("name", ["../escape", "/abs/path", "a\x00b", "sub/../../x", "con", "x|y"])
def test_output_names_escaping_the_directory_are_refused(name: str, tmp_path: Path) -> None:
    out_dir = tmp_path / "out"
    with pytest.raises(OutputPathError):
        render(CONTENT, out_dir, name=name, formats="md", sources_pool=POOL)
    assert not any(p.is_file() for p in tmp_path.rglob("*"))


def test_write_refuses_reserved_file_names(tmp_path: Path) -> None:
    with pytest.raises(OutputPathError, match="reserved"):
        write_markdown(CONTENT, tmp_path / "a?b.md", sources_pool=POOL)


def test_render_name_may_carry_an_extension_and_a_subdirectory(tmp_path: Path) -> None:
    results = render(
        CONTENT, tmp_path, name="reports/q1.md", formats=["md", "html"], sources_pool=POOL
    )
    assert [p.relative_to(tmp_path.resolve()).as_posix() for r in results for p in r.paths] == [
        "reports/q1.md",
        "reports/q1.html",
    ]
    assert set(records(tmp_path)) == {"reports/q1.md", "reports/q1.html"}


def test_package_reexports_the_api() -> None:
    assert renderers.write_pdf is write_pdf and renderers.render is render
    assert renderers.RenderResult is RenderResult
    assert renderers.RenderOptions().dpi > 0
    assert issubclass(renderers.OutputPathError, renderers.RenderError)
    assert "md" in available_formats() and "md" in api.EXTENSIONS


def test_corrupt_provenance_file_is_kept_aside_with_a_warning(tmp_path: Path) -> None:
    (tmp_path / "sources_used.json").write_text("[{broken", encoding="utf-8")
    result = write_markdown(CONTENT, tmp_path / "r.md", sources_pool=POOL)
    assert any("sources_used.json" in w for w in result.warnings)
    assert (tmp_path / "sources_used.json.corrupt-1").read_text(encoding="utf-8") == "[{broken"
    assert set(records(tmp_path)) == {"r.md"}
