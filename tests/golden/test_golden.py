"""Every sample in samples/ × every output format against its golden files in tests/golden/.

Regenerate with ``make golden`` (``pytest tests/golden/test_golden.py --update-golden``, the option
of citerender's pytest plugin) and review the diff. The 50-page long report is rasterized to PNG
for its first two pages only. Each sample's PDF and PNG through the Typst engine
(``pdf_engine="typst"``) have golden files of their own in ``<sample>/typst/``. Rendering every
sample takes about half a minute, so the tests that compare samples are ``slow``; the tests of
the golden machinery itself are not.
"""

from __future__ import annotations

import io
import re
import shutil
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from renderers.api import EXTENSIONS
from renderers.options import FORMATS
from renderers.testing import (
    UPDATE_ENV,
    PixelTolerance,
    assert_matches_golden,
    normalize_artifact,
    normalize_bytes,
    render_artifacts,
)
from tests.support.samples import ENGINE_FORMATS, OTHER_ENGINES, SAMPLE_IDS, SAMPLES, Sample

GOLDEN = Path(__file__).resolve().parent


def of_format(paths: list[Path], fmt: str) -> list[Path]:
    """The artifacts among ``paths`` that belong to ``fmt``."""
    return [path for path in paths if path.suffix == EXTENSIONS[fmt]]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, list[Path]]]:
    """Each sample rendered once (without SOURCE_DATE_EPOCH, like the golden files)."""
    out = tmp_path_factory.mktemp("golden-render")
    cache: dict[str, list[Path]] = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("SOURCE_DATE_EPOCH", raising=False)
        for sample in SAMPLES:
            cache[sample.name] = sample.render(out / sample.name)
            for engine in OTHER_ENGINES:
                where = f"{sample.name}/{engine}"
                cache[where] = sample.render_engine(out / where, engine)
    yield cache
    shutil.rmtree(out, ignore_errors=True)


def test_there_are_samples_for_every_use() -> None:
    assert len(SAMPLES) >= 6, SAMPLE_IDS
    assert {s.input.suffix for s in SAMPLES} >= {".md", ".html"}


def test_no_golden_files_of_removed_samples(update_golden: bool) -> None:
    # a sample's directory; not Python's __pycache__, which a run with bytecode caches on leaves
    stored = {p.name for p in GOLDEN.iterdir()
              if p.is_dir() and p.name != "__pycache__"} if GOLDEN.is_dir() else set()
    if update_golden:
        for stale in stored - set(SAMPLE_IDS):
            shutil.rmtree(GOLDEN / stale)
        return
    assert stored == set(SAMPLE_IDS), "run `make golden` after adding or removing a sample"


#: Each format, then each format a PDF engine typesets again (``pdf-typst``, ``png-typst``).
VARIANTS: tuple[str, ...] = (
    *FORMATS, *(f"{fmt}-{engine}" for engine in OTHER_ENGINES for fmt in ENGINE_FORMATS)
)


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("sample", SAMPLES, ids=SAMPLE_IDS)
def test_output_matches_golden(
    sample: Sample, variant: str, rendered: dict[str, list[Path]], update_golden: bool
) -> None:
    fmt, _, engine = variant.partition("-")
    where = f"{sample.name}/{engine}" if engine else sample.name
    artifacts = of_format(rendered[where], fmt)
    assert artifacts, f"{where}: nothing written for {fmt}"
    golden_dir = GOLDEN / where
    for artifact in artifacts:
        assert_matches_golden(artifact, golden_dir, update=update_golden or None)
    if update_golden:  # drop goldens of PNG pages that no longer exist
        names = {a.name for a in artifacts}
        for stale in golden_dir.glob(f"*{EXTENSIONS[fmt]}"):
            if stale.name not in names:
                shutil.rmtree(stale)
    written = {p.name for p in golden_dir.glob(f"*{EXTENSIONS[fmt]}")}
    assert written == {a.name for a in artifacts}, "golden files for pages that were not rendered"


@pytest.mark.parametrize("fmt", ["html", "md", "docx", "pptx"])
def test_a_changed_input_fails_with_a_readable_diff(
    fmt: str, tmp_path: Path, update_golden: bool
) -> None:
    """Change one word of a sample: its golden test must fail and the diff must show the word."""
    if update_golden:
        pytest.skip("golden files are being regenerated")
    sample = next(s for s in SAMPLES if s.name == "agent-answer")
    text = sample.input.read_text(encoding="utf-8")
    assert "older homes" in text
    changed = tmp_path / sample.input.name
    changed.write_text(text.replace("older homes", "elderly homes"), encoding="utf-8")
    for asset in sample.input.parent.glob("assets"):
        shutil.copytree(asset, tmp_path / asset.name)
    (artifact,) = render_artifacts(changed, tmp_path / "out", sources_pool=str(sample.pool),
                                   formats=[fmt])  # fmt: skip
    with pytest.raises(AssertionError) as caught:
        assert_matches_golden(artifact, GOLDEN / sample.name, update=False)
    added = [line for line in str(caught.value).splitlines() if line.startswith("+")]
    assert any("elderly homes" in line for line in added), str(caught.value)[:2000]


# ---------------------------------------------------------------- the machinery itself


def _zip(entries: list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as package:
        for name, data in entries:
            package.writestr(name, data)
    return buffer.getvalue()


def _png(path: Path, changed: int, value: int = 0) -> Path:
    """A white 100×100 page with ``changed`` pixels of grey ``value`` on its first rows."""
    image = Image.new("RGB", (100, 100), "white")
    for i in range(changed):
        image.putpixel((i % 100, i // 100), (value, value, value))
    image.save(path)
    return path


def test_ooxml_normal_form_ignores_zip_order_and_attribute_layout() -> None:
    body = (
        b'<w:document xmlns:w="urn:w"><w:p><w:t xml:space="preserve"> a </w:t></w:p></w:document>'
    )
    spaced = body.replace(b"<w:p>", b"<w:p  >\n").replace(b"xmlns:w", b"xmlns:w ")
    first = _zip([("[Content_Types].xml", b"<Types/>"), ("word/document.xml", body)])
    second = _zip([("word/document.xml", spaced), ("[Content_Types].xml", b"<Types/>")])
    assert normalize_bytes(first, "docx") == normalize_bytes(second, "docx")
    text = normalize_bytes(first, "docx")["word/document.xml"]
    assert '<w:t xml:space="preserve"> a </w:t>' in str(text)  # leaf text kept exactly
    assert "\n  <w:p>" in str(text)  # indented for review


def test_a_changed_ooxml_part_is_shown_as_a_diff(tmp_path: Path) -> None:
    golden = tmp_path / "golden"
    report = tmp_path / "deck.pptx"
    report.write_bytes(_zip([("ppt/slides/slide1.xml", b"<sld><t>Old claim</t></sld>")]))
    assert_matches_golden(report, golden, update=True)
    assert (golden / "deck.pptx" / "ppt" / "slides" / "slide1.xml").is_file()
    report.write_bytes(_zip([("ppt/slides/slide1.xml", b"<sld><t>New claim</t></sld>")]))
    with pytest.raises(AssertionError) as caught:
        assert_matches_golden(report, golden, update=False)
    message = str(caught.value)
    assert "-  <t>Old claim</t>" in message and "+  <t>New claim</t>" in message


def test_png_tolerance_accepts_noise_and_rejects_changes(tmp_path: Path) -> None:
    golden = tmp_path / "golden"
    page = _png(tmp_path / "page.png", 0)
    assert_matches_golden(page, golden, update=True)
    _png(page, 100, value=240)  # faint anti-aliasing-like noise: within the channel tolerance
    assert_matches_golden(page, golden, update=False)
    _png(page, 10)  # ten black pixels: a real change for the default tolerance
    with pytest.raises(AssertionError, match="10 of 10000 pixels differ by more than 32"):
        assert_matches_golden(page, golden, update=False)
    loose = PixelTolerance(channel=32, ratio=0.01)
    assert_matches_golden(page, golden, update=False, tolerance=loose)
    _png(page, 500)  # a black bar: too much even for the loose tolerance
    with pytest.raises(AssertionError, match="500 of 10000 pixels differ"):
        assert_matches_golden(page, golden, update=False, tolerance=loose)


def test_missing_golden_files_and_stale_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(UPDATE_ENV, raising=False)  # as `make golden` (--update-golden) sets it
    golden = tmp_path / "golden"
    report = tmp_path / "report.docx"
    report.write_bytes(_zip([("a.xml", b"<a/>"), ("b.xml", b"<b/>")]))
    with pytest.raises(AssertionError, match=r"no golden files for report\.docx"):
        assert_matches_golden(report, golden)
    monkeypatch.setenv(UPDATE_ENV, "1")  # the environment variable turns on updating
    assert_matches_golden(report, golden)
    report.write_bytes(_zip([("a.xml", b"<a/>"), ("media/c.png", b"\x89PNG")]))
    monkeypatch.delenv(UPDATE_ENV)
    with pytest.raises(AssertionError) as caught:
        assert_matches_golden(report, golden)
    assert "not in the output: b.xml" in str(caught.value)
    assert "not in the golden files: media/c.png.sha256" in str(caught.value)
    assert_matches_golden(report, golden, update=True)
    assert sorted(p.name for p in (golden / "report.docx").rglob("*") if p.is_file()) == [
        "a.xml",
        "c.png.sha256",
    ]


@pytest.mark.slow
def test_pdf_normal_form_has_text_links_and_metadata(rendered: dict[str, list[Path]]) -> None:
    sample = next(s for s in SAMPLES if s.name == "research-report")
    (pdf,) = of_format(rendered[sample.name], "pdf")
    form = normalize_artifact(pdf)
    assert set(form) == {"text.txt", "links.txt", "info.txt"}
    assert "=== page 1 ===" in str(form["text.txt"])
    links = str(form["links.txt"]).splitlines()
    assert any(" uri https://" in line for line in links)
    assert any(re.search(r" goto #src-\d+ \(page \d+\)$", line) for line in links)
    info = str(form["info.txt"])
    assert info.startswith("pages: ") and "\noutline:\n" in info and "Producer" not in info
