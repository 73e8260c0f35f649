"""The resource sandbox: data: URIs and files inside the allowed directories only."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest
from PIL import Image

from renderers.errors import ResourceError
from renderers.options import Limits, RenderOptions
from renderers.sandbox import LoadedImage, decode_data_uri, load_image
from renderers.writers.pdf import SandboxFetcher


def png_bytes(width: int = 4, height: int = 3, color: str = "red") -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buffer, "PNG")
    return buffer.getvalue()


def data_uri(data: bytes, mime: str = "image/png") -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """base/ with an image and a stylesheet; outside/ next to it with a secret image."""
    base = tmp_path / "base"
    (base / "img").mkdir(parents=True)
    (base / "img" / "chart.png").write_bytes(png_bytes(8, 5))
    (base / "style.css").write_text("p { color: red }", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.png").write_bytes(png_bytes(2, 2, "blue"))
    return base, outside


def test_data_uri_image_loads_without_any_directory() -> None:
    image = load_image(data_uri(png_bytes(4, 3)), RenderOptions())
    assert isinstance(image, LoadedImage)
    assert (image.mime, image.width, image.height) == ("image/png", 4, 3)
    assert image.data_uri().startswith("data:image/png;base64,")


def test_percent_encoded_data_uri_decodes() -> None:
    assert decode_data_uri("data:text/css,p%20%7B%7D") == (b"p {}", "text/css")
    with pytest.raises(ResourceError):
        decode_data_uri("data:image/png;base64")


def test_relative_and_file_url_inside_base_load(layout: tuple[Path, Path]) -> None:
    base, _ = layout
    options = RenderOptions(base_dir=base)
    relative = load_image("img/chart.png", options)
    assert relative is not None and (relative.width, relative.height) == (8, 5)
    by_url = load_image((base / "img" / "chart.png").as_uri(), options)
    assert by_url is not None and by_url.data == relative.data


def test_out_dir_is_an_allowed_directory_too(layout: tuple[Path, Path]) -> None:
    base, outside = layout
    assert load_image("secret.png", RenderOptions(base_dir=base, out_dir=outside)) is not None
    assert load_image("secret.png", RenderOptions(base_dir=base)) is None


@pytest.mark.parametrize(
    "src",
    [
        "../outside/secret.png",
        "img/../../outside/secret.png",
        "file:///etc/passwd",
        "/etc/passwd",
        "http://127.0.0.1:9/x.png",
        "https://example.com/x.png",
        "ftp://example.com/x.png",
        "file://remotehost/share/x.png",
    ],
)
def test_references_outside_the_sandbox_are_refused(layout: tuple[Path, Path], src: str) -> None:
    base, _ = layout
    assert load_image(src, RenderOptions(base_dir=base)) is None
    fetcher = SandboxFetcher([base])
    url = src if ":" in src.split("/")[0] else (base / src).as_uri()
    with pytest.raises(ResourceError):
        fetcher.fetch(url)
    assert fetcher.refused


def test_symlink_pointing_out_is_refused(layout: tuple[Path, Path]) -> None:
    base, outside = layout
    (base / "link.png").symlink_to(outside / "secret.png")
    (base / "linkdir").symlink_to(outside, target_is_directory=True)
    options = RenderOptions(base_dir=base)
    assert load_image("link.png", options) is None
    assert load_image("linkdir/secret.png", options) is None
    with pytest.raises(ResourceError):
        SandboxFetcher([base]).fetch((base / "link.png").as_uri())


def test_without_directories_only_data_uris_load(layout: tuple[Path, Path]) -> None:
    base, _ = layout
    assert load_image(str(base / "img" / "chart.png"), RenderOptions()) is None
    with pytest.raises(ResourceError, match="only data: URIs"):
        SandboxFetcher([]).fetch((base / "img" / "chart.png").as_uri())


def test_non_images_and_oversized_images_are_refused(layout: tuple[Path, Path]) -> None:
    base, _ = layout
    (base / "fake.png").write_text("not an image", encoding="utf-8")
    options = RenderOptions(base_dir=base, limits=Limits(max_image_pixels=30))
    assert load_image("fake.png", options) is None
    assert load_image("img/chart.png", options) is None  # 8×5 = 40 pixels > 30
    assert load_image("img/chart.png", RenderOptions(base_dir=base)) is not None
    fetcher = SandboxFetcher([base], max_image_pixels=30)
    with pytest.raises(ResourceError, match="pixels"):
        fetcher.fetch((base / "img" / "chart.png").as_uri())


def test_fetcher_serves_inside_files_with_their_type(layout: tuple[Path, Path]) -> None:
    base, _ = layout
    fetcher = SandboxFetcher([base])
    response = fetcher.fetch((base / "style.css").as_uri())
    assert response.content_type == "text/css"
    assert response.read() == b"p { color: red }"
    data = fetcher.fetch(data_uri(b"abc", "text/plain"))
    assert data.read() == b"abc"
    assert fetcher.refused == []


def _load_warnings(src: str, options: RenderOptions) -> list[str]:
    from renderers.diagnostics import collect

    with collect() as found:
        assert load_image(src, options) is None
    return [d.message for d in found]


@pytest.mark.parametrize(
    "data", [b"AAAA", png_bytes(40, 30)[:-20]], ids=["unknown-format", "truncated-png"]
)
def test_an_unreadable_image_is_named_the_same_way_every_time(data: bytes) -> None:
    """Pillow's message held ``<_io.BytesIO object at 0x7f…>``: the warning differed on every
    load, so one image was printed once per format instead of once per file."""
    src = data_uri(data)
    first = _load_warnings(src, RenderOptions())
    assert first == _load_warnings(src, RenderOptions())
    (message,) = first
    assert " at 0x" not in message and "object" not in message
    assert message.endswith("accepted: PNG, JPEG, GIF, WebP, BMP or TIFF images")


def test_an_unreadable_image_is_one_warning_for_every_format(tmp_path: Path) -> None:
    from renderers.api import render

    content = "A ![d](data:image/png;base64,AAAA)\n"
    results = render(content, tmp_path, name="b", formats=("docx", "pptx", "html", "md"))
    warnings = {w for r in results for w in r.warnings}
    assert warnings == {
        "image 'data:image/png;base64,AAAA' not loaded (its alt text is shown): not a readable "
        "image (unknown format); accepted: PNG, JPEG, GIF, WebP, BMP or TIFF images"
    }


def test_object_reprs_are_left_out_of_pillows_reasons() -> None:
    from renderers.sandbox import _pillow_reason

    reason = _pillow_reason(OSError("cannot identify image file <_io.BytesIO object at 0x7f43>"))
    assert reason == "cannot identify image file"


def test_a_refused_image_names_each_allowed_directory_once(tmp_path: Path) -> None:
    """``write_pdf(text, "out/report.pdf")`` allows the output directory as ``base_dir`` and as
    ``out_dir``: the refusal listed it twice (``not a file inside /x/out, /x/out``)."""
    from renderers.api import write_html
    from renderers.sandbox import allowed_dirs

    out = tmp_path / "out"
    out.mkdir()
    assert allowed_dirs(RenderOptions(base_dir=out, out_dir=out)) == (out,)
    result = write_html("A ![c](missing.png)\n", out / "report.html")
    (warning,) = [w for w in result.warnings if "missing.png" in w]
    root = str(out.resolve())
    assert f"not a file inside {root}" in warning and warning.count(root) == 1, warning
