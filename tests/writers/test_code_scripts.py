"""Every script in a highlighted code block is drawn, in each PDF engine.

A Python comment is an italic token. "DejaVu Sans Mono" has Arabic in its upright faces only, so
WeasyPrint slanted the upright face for Arabic comments and embedded it under the real Oblique
face's name: the Arabic was in the text layer (pdftotext found it) but blank on the page. These
tests look at the page: the box pdftotext gives each word must hold ink.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from renderers.errors import ResourceError
from renderers.fonts import find_font
from renderers.writers.html.templating import code_arabic_css
from renderers.writers.pdf import SandboxFetcher
from tests.support.render import render_markdown

#: Comment words in the scripts whose faces differ between the upright and italic code font.
WORDS = ("تعليق", "עברית", "हिन्दी", "ภาษาไทย")
MARKDOWN = "```python\n" + "".join(f"# 注释 {word}\n# {word} x\n" for word in WORDS) + "```\n"
#: Pixels per point of the page image.
SCALE = 2
_WORD = re.compile(
    r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>'
)


def word_boxes(pdf: Path) -> list[tuple[str, tuple[float, float, float, float]]]:
    """Each word pdftotext finds on the first page, with its box in points."""
    shown = subprocess.run(
        ["pdftotext", "-bbox", "-f", "1", "-l", "1", str(pdf), "-"],
        check=True, capture_output=True, text=True,
    ).stdout
    found = _WORD.findall(shown)
    return [(word, (float(x0), float(y0), float(x1), float(y1))) for x0, y0, x1, y1, word in found]


def page_image(pdf: Path) -> Image.Image:
    """The first page in grey at SCALE pixels per point."""
    stem = pdf.with_suffix("")
    subprocess.run(
        ["pdftoppm", "-gray", "-png", "-r", str(72 * SCALE), "-f", "1", "-l", "1",
         "-singlefile", str(pdf), str(stem)],
        check=True, capture_output=True,
    )
    return Image.open(stem.with_suffix(".png")).convert("L")


def ink(image: Image.Image, box: tuple[float, float, float, float]) -> int:
    """How many pixels inside ``box`` (points) are clearly darker than the code's shade."""
    x0, y0, x1, y1 = (round(v * SCALE) for v in box)
    histogram = image.crop((x0, y0, x1, y1)).histogram()
    return sum(histogram[:170])


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_every_script_of_a_code_comment_is_drawn(engine: str, tmp_path: Path) -> None:
    pdf = tmp_path / "code.pdf"
    pdf.write_bytes(render_markdown("pdf", MARKDOWN, [], pdf_engine=engine))
    image = page_image(pdf)
    boxes = word_boxes(pdf)
    for word in WORDS:
        # pdftotext writes a right-to-left word in the order it is shown
        places = [box for shown, box in boxes if set(shown) == set(word)]
        assert len(places) == 2, (word, boxes)
        for box in places:
            assert ink(image, box) > 20, (engine, word, box)


def test_the_arabic_code_face_is_defined_only_for_pages_with_arabic() -> None:
    assert code_arabic_css("<pre># comment</pre>") == ""
    faces = code_arabic_css("<pre># تعليق</pre>")
    assert faces.count("@font-face") == 2
    assert 'font-family: "Code Arabic"' in faces and "U+0600-06FF" in faces


def test_arabic_code_in_an_author_note_gets_the_arabic_code_face() -> None:
    # Only the body and the contents were looked at: code in a note drew Arabic blank again.
    markdown = ("Text.[^a]\n\n[^a]: A note with code:\n\n"
                "    ```python\n    x = 1  # تعليق\n    ```\n")
    html = render_markdown("html", markdown, []).decode("utf-8")
    assert html.count('font-family: "Code Arabic"; font-weight') == 2


def test_the_pdf_fetcher_serves_installed_fonts_and_nothing_else_outside(tmp_path: Path) -> None:
    arabic = find_font(["NotoSansArabic-Regular.ttf"])
    if arabic is None:
        pytest.skip("Noto Sans Arabic is not installed (.ci/system-deps fonts)")
    fetcher = SandboxFetcher([tmp_path])
    assert fetcher.fetch(Path(arabic).as_uri()).read(4) == b"\x00\x01\x00\x00"
    escape = Path(arabic).parent.as_uri() + "/../../../../../etc/passwd"
    for refused in (escape, "file:///etc/passwd", "file://host" + arabic):
        with pytest.raises(ResourceError):
            fetcher.fetch(refused)


#: Code in the scripts whose faces are named for code (renderers.fonts.CODE_FACES) and one
#: whose face comes from the body's stack, inline and in a block, plain and highlighted.
OTHER_SCRIPTS_CODE = ("Arabic `كلمة عربية` code, Hebrew `מילה` code, Hindi `शब्द` code.\n\n"
                      "```\nكلمة code مرحبا\nמילה x\nशब्द x\n```\n\n"
                      "```python\n# تعليق عربي\nx = \"مرحبا\"\n```\n")


def test_code_in_other_scripts_is_drawn_in_the_faces_of_the_weasyprint_pdf(
        tmp_path: Path) -> None:
    """Typst drew Arabic code in DejaVu Sans Mono (each word a third wider than WeasyPrint's
    Noto Sans Arabic, "Code Arabic") and Hebrew code in DejaVu Sans (WeasyPrint: Noto Sans
    Hebrew): each word is now as wide in both engines."""
    widths = {}
    for engine in ("weasyprint", "typst"):
        pdf = tmp_path / f"{engine}.pdf"
        pdf.write_bytes(render_markdown("pdf", OTHER_SCRIPTS_CODE, [], pdf_engine=engine))
        widths[engine] = [(word, box[2] - box[0]) for word, box in word_boxes(pdf)
                          if not word.isascii()]
    assert len(widths["weasyprint"]) == len(widths["typst"]) == 11, widths
    for (word, css), (same, typst) in zip(widths["weasyprint"], widths["typst"], strict=True):
        assert word == same and abs(css - typst) < 0.05, (word, css, typst)
