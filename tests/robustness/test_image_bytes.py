"""An image used many times is embedded once where the format allows it, and every output's
embedded image bytes are bounded by ``limits.max_image_bytes`` (issue 13, item 3)."""

from __future__ import annotations

import base64
import io
import random
import zipfile
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from PIL import Image

from renderers.api import render
from renderers.errors import LimitError
from renderers.options import Limits
from renderers.sandbox import Sandbox
from tests.support.render import render_markdown

POOL = [{"sid": 1, "title": "Source", "url": "https://e.example/"}]


def noise_png(seed: int, side: int = 160) -> bytes:
    """A PNG that does not compress (about 77 KB at 160 px)."""
    rng = random.Random(seed)
    pixels = bytes(rng.getrandbits(8) for _ in range(side * side * 3))
    image = Image.frombytes("RGB", (side, side), pixels)
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def reused(uri: str, uses: int, separator: str = " ") -> str:
    """``uses`` uses of one reference-defined image (in one paragraph, or one per paragraph
    with ``separator="\\n\\n"``: figures, which slides show as pictures)."""
    return "# Pictures\n\n" + "![a][r]" + (separator + "![a][r]") * (uses - 1) + (
        "\n\n[[S:1]]\n\n[r]: " + uri + "\n"
    )


def test_markdown_writes_a_reused_image_once_as_a_reference_definition() -> None:
    uri = data_uri(noise_png(1))
    output = render_markdown("md", reused(uri, 200), POOL).decode()
    assert output.count(uri) == 1
    assert len(output) < len(uri) + 10_000
    images = [
        token
        for block in MarkdownIt("commonmark").parse(output)
        for token in (block.children or [])
        if token.type == "image"
    ]
    assert len(images) == 200 and {token.attrs["src"] for token in images} == {uri}


@pytest.mark.parametrize("fmt", ["docx", "pptx"])
def test_packages_hold_a_reused_image_once(fmt: str) -> None:
    png = noise_png(2)
    data = render_markdown(fmt, reused(data_uri(png), 30, "\n\n"), POOL,
                           limits=Limits(max_image_bytes=2 * len(png)))
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        media = [n for n in package.namelist() if "/media/" in n]
        assert len(media) == 1 and package.read(media[0]) == png


@pytest.mark.parametrize("fmt", ["docx", "pptx", "md", "html", "pdf"])
def test_distinct_images_over_the_limit_are_refused(fmt: str) -> None:
    pngs = [noise_png(seed) for seed in (3, 4, 5)]
    text = "# Pictures\n\n" + "\n\n".join(f"![p{i}]({data_uri(p)})" for i, p in enumerate(pngs))
    limit = 2 * len(data_uri(pngs[0]))  # two fit, the third does not
    with pytest.raises(LimitError, match=r"limits\.max_image_bytes") as caught:
        render_markdown(fmt, text + "\n\n[[S:1]]\n", POOL, limits=Limits(max_image_bytes=limit))
    assert caught.value.field == "limits.max_image_bytes"


@pytest.mark.parametrize("fmt", ["html", "pdf"])
def test_fifty_uses_of_an_image_just_under_the_limit_render(fmt: str) -> None:
    """HTML and PDF count a reused image once, like the packages."""
    png = noise_png(6)
    data = render_markdown(fmt, reused(data_uri(png), 50), POOL,
                           limits=Limits(max_image_bytes=len(png) + 1))
    if fmt == "html":
        assert data.decode().count(base64.b64encode(png).decode()) == 1
        assert len(data) < 2 * len(data_uri(png))
    else:
        assert data.startswith(b"%PDF") and len(data) < 2 * len(png)


@pytest.mark.parametrize("fmt", ["html", "pdf"])
def test_two_different_images_over_the_limit_are_refused_in_html_and_pdf(fmt: str) -> None:
    first, second = noise_png(7), noise_png(8)
    text = reused(data_uri(first), 50) + f"\n![b]({data_uri(second)})\n"
    with pytest.raises(LimitError, match=r"limits\.max_image_bytes") as caught:
        render_markdown(fmt, text, POOL, limits=Limits(max_image_bytes=len(first) + 1))
    assert caught.value.field == "limits.max_image_bytes"


@pytest.mark.parametrize(
    ("fmt", "engine"),
    [("docx", None), ("html", None), ("pdf", "weasyprint"), ("pdf", "typst")],
)
def test_a_file_image_used_200_times_is_read_once(
    fmt: str, engine: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a ``data:`` image: one read and one decode per artifact, not one per use. (Markdown
    keeps the reference and a slide shows images inside text as their alt text: no reads.)"""
    (tmp_path / "chart.png").write_bytes(noise_png(9, side=40))
    reads: list[str] = []
    original = Sandbox.read

    def counting(self: Sandbox, reference: str) -> tuple[bytes, str]:
        reads.append(reference)
        return original(self, reference)

    monkeypatch.setattr(Sandbox, "read", counting)
    options = {"pdf_engine": engine} if engine else {}
    results = render(reused("chart.png", 200), tmp_path / "out", formats=[fmt],
                     sources_pool=POOL, base_dir=tmp_path, **options)
    assert results[0].path.stat().st_size > 0
    assert reads == ["chart.png"]
