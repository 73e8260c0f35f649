"""Syntax highlighting of fenced code (issue 18, item 1): the shared tokenizer, then what each
format makes of it, read back from the file (HTML markup, DOCX and PPTX runs, PDF pixels)."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path
from typing import get_args

import docx
import pypdfium2 as pdfium
import pytest
from pptx import Presentation
from pygments.lexers import get_lexer_by_name
from pygments.styles import get_style_by_name

from renderers.errors import OptionError
from renderers.options import HighlightStyle, build_options
from renderers.writers.highlight import (
    MAX_CODE_CHARS,
    MAX_LINE_CHARS,
    NO_HIGHLIGHT,
    SLOW_LEXERS,
    Highlighter,
    highlight_code,
    lexer_name,
)
from tests.helpers import convert_all_with_libreoffice
from tests.support.render import WriterFormat, render_in_fresh_process, render_markdown

POOL = [{"sid": 1, "title": "Source", "url": "https://e.example/"}]
CODE = 'def area(r: float) -> float:\n    """Circle."""\n    return 3.14 * r ** 2  # [[S:1]]'
FENCED = f"# Code\n\nBefore.[[S:1]]\n\n```python\n{CODE}\n```\n"
KEYWORD = "008000"  # the default style's keyword colour (bold)


def green_pixels(pdf: bytes, page: int = 0) -> int:
    """Pixels of the default style's keyword green on a page."""
    rgb = pdfium.PdfDocument(pdf)[page].render(scale=2).to_pil().convert("RGB").tobytes()
    pixels = zip(rgb[0::3], rgb[1::3], rgb[2::3], strict=True)
    return sum(1 for r, g, b in pixels if r < 60 and 100 < g < 160 and b < 60)


# ---------------------------------------------------------------- the tokenizer


@pytest.mark.parametrize("text", [
    CODE,
    "\n\nx = 1\n\n",  # blank lines at both ends are kept
    "if x:\n\tpass\n",  # tabs as written
    "s = 'unterminated\nprint(s)",
])
def test_the_spans_give_back_the_code_exactly(text: str) -> None:
    highlighted = highlight_code(text, "python", "default")
    assert highlighted is not None
    assert highlighted.text == text
    assert all("\n" not in span.text for line in highlighted.lines for span in line)
    joined = "\n".join("".join(t for t, _ in line) for line in highlighted.runs())
    assert joined == text


def test_keywords_strings_and_comments_get_the_styles_colours() -> None:
    highlighted = highlight_code(CODE, "python", "default")
    assert highlighted is not None
    spans = {span.text: span for line in highlighted.lines for span in line}
    assert spans["def"].kind == "k" and spans["def"].look.color == KEYWORD
    assert spans["def"].look.bold
    assert spans["# [[S:1]]"].look.italic  # a comment, and no citation
    assert highlighted.background == "F8F8F8"


def test_a_dark_style_colours_every_token_and_shades_the_block() -> None:
    highlighted = highlight_code(CODE, "python", "monokai")
    assert highlighted is not None
    assert highlighted.background == "272822"
    colours = {span.look.color for line in highlighted.lines for span in line}
    assert "000000" not in colours  # nothing is drawn black on the dark background
    assert highlighted.foreground == "F8F8F2"


@pytest.mark.parametrize("language", ["", "nosuchlanguage", "x" * 200, "{.nothing}"])
def test_unknown_or_missing_languages_stay_plain(language: str) -> None:
    assert highlight_code("def f(): pass", language, "default") is None


def test_the_lexer_is_chosen_by_name_only() -> None:
    """Python source labelled as text is not guessed to be Python."""
    highlighted = highlight_code("def f(): pass", "text", "default")
    assert highlighted is None or {s.kind for line in highlighted.lines for s in line} <= {""}


def test_none_turns_highlighting_off_and_carriage_returns_stay_plain() -> None:
    assert highlight_code(CODE, "python", NO_HIGHLIGHT) is None
    assert highlight_code("x = 1\r\ny = 2", "python", "default") is None


@pytest.mark.parametrize("language, expected", [
    ("Python", "python"), ("{.python}", "python"), ("python {.numberLines}", "python"),
    (".js", "js"), ("", ""),
])
def test_fence_languages_name_lexers(language: str, expected: str) -> None:
    assert lexer_name(language) == expected


def test_blocks_over_the_bounds_stay_plain() -> None:
    line = "x = 1  # " + "y" * 40 + "\n"
    big = line * (MAX_CODE_CHARS // len(line) + 1)
    assert len(big) > MAX_CODE_CHARS
    assert highlight_code(big, "python", "default") is None
    assert highlight_code(big[: MAX_CODE_CHARS - 100], "python", "default") is not None
    wide = "x = '" + "z" * MAX_LINE_CHARS + "'"
    assert highlight_code(wide, "python", "default") is None
    assert highlight_code(wide[: MAX_LINE_CHARS - 1], "python", "default") is not None


def test_a_document_highlights_within_its_budget_in_every_format(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("renderers.writers.highlight.MAX_DOCUMENT_CODE_CHARS", 100)
    highlight = Highlighter("default")
    assert highlight("x = 1  # " + "a" * 50, "python") is not None  # 59 of 100
    assert highlight("y = 2  # " + "b" * 50, "python") is None  # would pass the budget
    assert highlight("z = 3", "python") is not None  # still fits
    blocks = "\n\n".join(f"```python\nv{i} = {i}  # {'c' * 40}\n```" for i in range(3))
    html = render_markdown("html", blocks, POOL).decode()
    assert html.count('<pre class="hl"') == 2
    deck = Presentation(io.BytesIO(render_markdown("pptx", blocks, POOL)))
    coloured = [shape for slide in deck.slides for shape in slide.shapes
                if shape.name == "Code python" and str(shape.fill.fore_color.rgb) == "F8F8F8"]
    assert len(coloured) == 2


def test_lexers_that_a_crafted_input_makes_quadratic_are_refused_by_every_alias() -> None:
    for name in SLOW_LEXERS:
        lexer = get_lexer_by_name(name)  # still a Pygments lexer: the list is not stale
        for alias in lexer.aliases:
            assert highlight_code("x := 1", alias, "default") is None, alias


def test_every_offered_style_is_a_pygments_style() -> None:
    for name in get_args(HighlightStyle):
        if name != NO_HIGHLIGHT:
            assert get_style_by_name(name).styles


def test_the_option_names_the_accepted_styles_and_knows_pandocs_name() -> None:
    assert build_options(highlight_style="pygments").highlight_style == "default"
    assert build_options(highlight_style="Monokai").highlight_style == "monokai"
    with pytest.raises(OptionError) as caught:
        build_options(highlight_style="rainbow")
    assert caught.value.field == "highlight_style"
    assert "'tango'" in str(caught.value) and "'none'" in str(caught.value)


# ---------------------------------------------------------------- the formats


def test_html_colours_token_kinds_with_classes_and_one_stylesheet() -> None:
    html = render_markdown("html", FENCED, POOL).decode()
    assert '<pre class="hl" dir="ltr"><code class="language-python">' in html
    assert '<span class="hl-k">def</span>' in html
    assert f".hl-k {{ color: #{KEYWORD}; font-weight: bold }}" in html
    assert "pre.hl { background: #F8F8F8; color: #000000; }" in html
    code = re.search(r"<code class=\"language-python\">(.*?)</code>", html, re.S)
    assert code is not None
    text = re.sub(r"<[^>]+>", "", code.group(1)).replace("&#34;", '"').replace("&gt;", ">")
    assert text == CODE  # the code is all there, the token not turned into a citation
    assert html.count('class="cite"') == 1


def test_html_without_highlighting_is_the_plain_block() -> None:
    html = render_markdown("html", FENCED, POOL, highlight_style="none").decode()
    assert "hl-" not in html and 'class="hl"' not in html
    assert ('<pre dir="ltr"><code class="language-python">'
            '<span class="code-line" style="--hang:4">def area') in html


def test_a_code_block_without_a_language_is_plain_in_every_format() -> None:
    plain = "# Code\n\n```\ndef f(): pass\n```\n"
    assert 'class="hl"' not in render_markdown("html", plain, POOL).decode()
    document = docx.Document(io.BytesIO(render_markdown("docx", plain, POOL)))
    assert all(run.font.color.rgb is None for p in document.paragraphs for run in p.runs)


def test_docx_code_is_coloured_runs_on_the_styles_background() -> None:
    data = render_markdown("docx", FENCED, POOL)
    document = docx.Document(io.BytesIO(data))
    (box,) = document.tables
    code = [cell.paragraphs[0] for row in box.rows for cell in row.cells]  # a row per line
    runs = {run.text: run for run in code[0].runs}
    assert str(runs["def"].font.color.rgb) == KEYWORD and runs["def"].font.bold
    assert runs["def"].font.name == "Consolas"
    assert "\n".join(p.text for p in code) == CODE
    xml = zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml").decode()
    assert xml.count('w:fill="F8F8F8"') == len(code)  # the style's background on every row


def test_pptx_code_box_is_coloured_runs_on_the_styles_background() -> None:
    data = render_markdown("pptx", FENCED, POOL, highlight_style="monokai")
    deck = Presentation(io.BytesIO(data))
    box = next(shape for slide in deck.slides for shape in slide.shapes
               if shape.name == "Code python")
    assert str(box.fill.fore_color.rgb) == "272822"
    lines = ["".join(run.text for run in p.runs) for p in box.text_frame.paragraphs]
    assert lines == CODE.split("\n")
    colours = {str(run.font.color.rgb) for p in box.text_frame.paragraphs for run in p.runs}
    assert len(colours) > 3 and "000000" not in colours


def test_pdf_shows_the_keyword_colour() -> None:
    coloured = render_markdown("pdf", FENCED, POOL)
    plain = render_markdown("pdf", FENCED, POOL, highlight_style="none")
    assert green_pixels(coloured) > 200
    assert green_pixels(plain) == 0


@pytest.mark.libreoffice
def test_libreoffice_draws_the_colours_of_docx_and_pptx(tmp_path: Path) -> None:
    paths = []
    fmt: WriterFormat
    for fmt in ("docx", "pptx"):
        path = tmp_path / f"code-{fmt}.{fmt}"
        path.write_bytes(render_markdown(fmt, FENCED, POOL))
        paths.append(path)
    docx_pdf, pptx_pdf = convert_all_with_libreoffice(paths, tmp_path)
    assert green_pixels(docx_pdf.read_bytes()) > 100
    assert green_pixels(pptx_pdf.read_bytes(), page=1) > 100  # the slide after the cover


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["html", "docx", "pptx"])
def test_highlighted_output_is_the_same_in_a_fresh_process(fmt: WriterFormat) -> None:
    here = render_markdown(fmt, FENCED, POOL, highlight_style="tango")
    assert render_in_fresh_process(fmt, FENCED, POOL, highlight_style="tango") == here
