"""The report's features, read back from the PDF of each engine (WeasyPrint and Typst).

Tables repeat their header row on every page, code keeps its monospace font, task items show
their boxes, author notes keep their letters, text and order, inline styles keep their text,
right-to-left paragraphs are set from the right, CJK and emoji use the Noto fonts, a loaded
image is embedded once, HTML input's own stylesheet is reported when Typst cannot apply it.
"""

from __future__ import annotations

import ctypes
import io
import json
import re
import subprocess
from itertools import pairwise
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
from PIL import Image as PILImage
from pypdf import PdfReader

from citations.pool import SourcePool
from renderers.api import render
from renderers.diagnostics import Code
from renderers.options import RenderOptions
from renderers.readers.markdown import read_markdown
from renderers.resolve import resolve
from renderers.testing import normalize_pdf
from renderers.writers.typst.writer import STYLES_NOT_APPLIED
from tests.helpers import pdf_lines
from tests.support.render import write_resolved

ROWS = [{"sid": 1, "title": "A source", "url": "https://example.org/a"}]
POOL = SourcePool.from_rows(ROWS)
MM = 72 / 25.4


@pytest.fixture(params=["weasyprint", "typst"])
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def pdf_of(markdown: str, engine: str, **options: object) -> bytes:
    rdoc = resolve(read_markdown(markdown), POOL)
    return write_resolved("pdf", rdoc, RenderOptions(pdf_engine=engine, **options))  # type: ignore[arg-type]


def page_texts(pdf: bytes) -> list[str]:
    document = pdfium.PdfDocument(pdf)
    try:
        return [document[i].get_textpage().get_text_range() for i in range(len(document))]
    finally:
        document.close()


def fonts_of(pdf: bytes) -> set[str]:
    return {
        re.sub(r"[^a-z]", "", str(font.get_object().get("/BaseFont")).split("+", 1)[-1].lower())
        for page in PdfReader(io.BytesIO(pdf)).pages
        for font in (page["/Resources"].get("/Font") or {}).values()
    }


@pytest.mark.slow
def test_table_header_repeats_on_every_page(engine: str) -> None:
    rows = "".join(f"| row {i} [[S:1]] | {i * 7} |\n" for i in range(160))
    pdf = pdf_of(f"# T\n\n| Region HDR [[S:1]] | Value HDR |\n|---|--:|\n{rows}", engine)
    texts = page_texts(pdf)
    assert len(texts) >= 3
    assert all("Region HDR" in text and "Value HDR" in text for text in texts)
    body = "".join(texts)
    assert all(f"row {i}" in body for i in range(160))


def test_a_row_taller_than_a_page_starts_under_the_heading_and_keeps_its_header(
    engine: str,
) -> None:
    # WeasyPrint kept the row whole (report.css: tr break-inside: avoid): page 1 held only the
    # heading, and the row's pages lost the header row but for the last one.
    words = " ".join(f"word{i}" for i in range(1400))
    pdf = pdf_of(f"# Tall row\n\n| LeftHDR | RightHDR |\n|---|---|\n| {words} | short |\n"
                 f"| next | row [[S:1]] |\n", engine)
    texts = page_texts(pdf)
    assert len(texts) == 4
    assert "Tall row" in texts[0] and "word0 " in texts[0]
    assert all("LeftHDR" in text and "RightHDR" in text for text in texts)
    body = " ".join(texts).split()
    assert all(f"word{i}" in body for i in (0, 700, 1399))


def test_code_block_is_verbatim_and_monospace(engine: str) -> None:
    pdf = pdf_of("# T\n\n```python\nx = [[S:1]]  # not a citation\n    indented()\n```\n", engine)
    text = "".join(page_texts(pdf))
    assert "x = [[S:1]]" in text and "indented()" in text
    assert "dejavusansmono" in fonts_of(pdf)
    assert "Sources" not in text  # code is not cited


def test_block_quote_and_task_list(engine: str) -> None:
    markdown = "# T\n\n> Quoted claim [[S:1]]\n\n- [x] done task\n- [ ] open task\n- plain item\n"
    text = "".join(page_texts(pdf_of(markdown, engine)))
    assert "Quoted claim" in text
    assert re.search(r"☒\s*done task", text) and re.search(r"☐\s*open task", text)
    assert "plain item" in text and "•" in text


def test_author_notes_keep_their_letters_text_and_order(engine: str) -> None:
    markdown = (
        "# T\n\nFirst claim.[^x] Second.[^y] Again.[^x]\n\n[^x]: Note X text.\n[^y]: Note Y text.\n"
    )
    lines = [text for _, _, text in pdf_lines(pdf_of(markdown, engine))]
    assert "First claim.a Second.b Again.a" in lines
    notes = lines[lines.index("Notes") + 1 :]
    assert notes[:2] == ["a. Note X text. ↑", "b. Note Y text. ↑"]


def test_inline_styles_keep_their_text(engine: str) -> None:
    markdown = "# T\n\nH<sub>2</sub>O, E = mc<sup>2</sup>, <kbd>Ctrl</kbd>, <mark>marked</mark>, " \
               '<small>small</small>, <abbr title="World Health">WHO</abbr>, <ins>in</ins>, ' \
               "<u>under</u>.\n"
    text = "".join(page_texts(pdf_of(markdown, engine)).pop(0).split())  # spacing is layout
    assert "H2O,E=mc2,Ctrl,marked,small,WHO,in,under." in text


def test_right_to_left_paragraph_is_set_from_the_right(engine: str) -> None:
    pdf = pdf_of("# T\n\nمرحبا بالعالم هذا نص عربي قصير\n\nLeft to right text.\n", engine)
    document = pdfium.PdfDocument(pdf)
    page = document[0]
    textpage = page.get_textpage()
    chars = [
        (chr(pdfium_c.FPDFText_GetUnicode(textpage.raw, i)), textpage.get_charbox(i))
        for i in range(textpage.count_chars())
    ]
    arabic = [box for char, box in chars if "\u0600" <= char <= "\u06ff"]
    latin = [box for char, box in chars if char == "L"]
    right_margin = page.get_width() - 20 * MM
    assert max(box[2] for box in arabic) > right_margin - 3  # flush right
    assert min(box[0] for box in latin) < 20 * MM + 3  # flush left


def test_cjk_and_emoji_use_the_noto_fonts(engine: str) -> None:
    pdf = pdf_of("# T\n\n你好世界 日本語 한국어 and the sun ☀️ 🔋\n", engine)
    text = "".join(page_texts(pdf))
    assert "你好世界" in text and "日本語" in text and "한국어" in text
    fonts = fonts_of(pdf)
    assert any(name.startswith("notosanscjk") for name in fonts), fonts
    # WeasyPrint embeds the colour emoji as a font, Typst as bitmap glyphs (a Type 3 font)
    subtypes = {
        str(font.get_object().get("/Subtype"))
        for page in PdfReader(io.BytesIO(pdf)).pages
        for font in (page["/Resources"].get("/Font") or {}).values()
    }
    assert "notocoloremoji" in fonts or "/Type3" in subtypes, (fonts, subtypes)


def test_a_loaded_image_is_embedded_once(engine: str, tmp_path: Path) -> None:
    PILImage.new("RGB", (80, 40), (0, 120, 0)).save(tmp_path / "chart.png")
    markdown = "# T\n\n![A chart](chart.png)\n\n![remote](https://example.org/x.png)\n"
    pdf = pdf_of(markdown, engine, base_dir=tmp_path)
    assert len(re.findall(rb"/Subtype\s*/Image", pdf)) == 1
    assert "[Image: remote]" in "".join(page_texts(pdf))


STYLED_HTML = (
    "<html><head><style>p { color: #123456 }</style></head><body><h1>Styled</h1>"
    "<p>Claim [[S:1]].</p></body></html>"
)


def test_html_input_with_its_own_css_is_reported_on_typst(tmp_path: Path) -> None:
    (typst,) = render(STYLED_HTML, tmp_path, name="t", formats=("pdf",), sources_pool=ROWS,
                      pdf_engine="typst")  # fmt: skip
    assert STYLES_NOT_APPLIED in typst.warnings
    assert [d.code for d in typst.diagnostics] == [Code.STYLES_NOT_APPLIED]
    assert "Claim" in "".join(page_texts(typst.path.read_bytes()))
    (weasy,) = render(STYLED_HTML, tmp_path, name="w", formats=("pdf",), sources_pool=ROWS)
    assert STYLES_NOT_APPLIED not in weasy.warnings
    plain = "<h1>Plain</h1><p>Claim [[S:1]].</p>"
    (unstyled,) = render(plain, tmp_path, name="p", formats=("pdf",), sources_pool=ROWS,
                         content_format="html", pdf_engine="typst")  # fmt: skip
    assert unstyled.warnings == []


def test_the_engine_is_recorded_for_pdf_and_png(tmp_path: Path) -> None:
    markdown = "# A\n\nClaim [[S:1]].\n"
    results = render(markdown, tmp_path, name="t", formats=("pdf", "png", "md"),
                     sources_pool=ROWS, pdf_engine="typst")  # fmt: skip
    render(markdown, tmp_path, name="w", formats=("pdf",), sources_pool=ROWS)
    records = {r["filename"]: r for r in json.loads((tmp_path / "sources_used.json").read_text())}
    assert records["t.pdf"]["engine"] == "typst" and records["t.png"]["engine"] == "typst"
    assert "engine" not in records["w.pdf"]  # the default engine keeps the record's shape
    assert "engine" not in records["t.md"]
    assert (tmp_path / "t.pdf").read_bytes() != (tmp_path / "w.pdf").read_bytes()
    png = next(r for r in results if r.format == "png")
    assert png.stats["pages"] == 1 and (tmp_path / "t.png").read_bytes().startswith(b"\x89PNG")


@pytest.mark.slow
def test_cross_references_link_to_their_numbered_figure_and_formulas_are_drawn(
    engine: str, tmp_path: Path
) -> None:
    PILImage.new("RGB", (200, 100), (0, 120, 0)).save(tmp_path / "chart.png")
    filler = "\n\n".join(f"Paragraph {i} " + "with words " * 40 for i in range(30))
    markdown = (f"# T\n\nSee @fig:chart and $\\frac{{a}}{{b}}$.\n\n{filler}\n\n"
                "![A chart](chart.png){#fig:chart}\n")  # fmt: skip
    pdf = pdf_of(markdown, engine, base_dir=tmp_path)
    texts = page_texts(pdf)
    figure_page = next(i for i, text in enumerate(texts, 1) if "Figure 1: A chart" in text)
    assert figure_page > 1 and "See Figure 1" in texts[0] and "frac" not in "".join(texts)
    links = normalize_pdf(pdf)["links.txt"].splitlines()
    # "goto #fig-1 (page 5)" (WeasyPrint names its anchors) or "goto page 5" (Typst)
    assert links[0].startswith("page 1: goto") and links[0].rstrip(")").endswith(
        f"page {figure_page}"
    )


def test_contents_list_their_headings_with_page_numbers(engine: str) -> None:
    filler = "\n\n".join(f"Paragraph {i} " + "with words " * 40 for i in range(25))
    markdown = f"# Report\n\n## First part\n\n{filler}\n\n## Second part\n\nEnd.[[S:1]]\n"
    pdf = pdf_of(markdown, engine, toc=True)
    texts = page_texts(pdf)
    heading = re.compile(r"^Second part\s*$", re.M)
    second = next(i for i, text in enumerate(texts, 1) if heading.search(text))
    lines = [text for _, _, text in pdf_lines(pdf)]
    contents = lines[lines.index("Contents") + 1 : lines.index("Contents") + 4]
    assert [re.sub(r"[ .]+(\d+)$", r" \1", line) for line in contents] == [
        "First part 1", f"Second part {second}", "Sources " + str(len(texts))
    ]
    assert second > 1


def text_colours(pdf: bytes) -> dict[str, tuple[int, int, int]]:
    """The fill colour of the first of each character on page 1."""
    document = pdfium.PdfDocument(pdf)
    try:
        textpage = document[0].get_textpage()
        colours: dict[str, tuple[int, int, int]] = {}
        for index in range(textpage.count_chars()):
            red, green, blue, alpha = (ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint(),
                                       ctypes.c_uint())  # fmt: skip
            pdfium_c.FPDFText_GetFillColor(textpage.raw, index, red, green, blue, alpha)
            char = chr(pdfium_c.FPDFText_GetUnicode(textpage.raw, index))
            colours.setdefault(char, (red.value, green.value, blue.value))
        return colours
    finally:
        document.close()


def test_code_blocks_are_highlighted(engine: str) -> None:
    colours = text_colours(pdf_of("# T\n\n```python\ndef f(x):\n    return 'text'\n```\n",
                                  engine))
    assert colours["d"] != colours["("]  # "def" is coloured as a keyword, "(" is not
    assert colours["'"] != colours["("]  # and the string in its own colour


def test_a_link_leading_nowhere_is_drawn_as_text(engine: str) -> None:
    """The reader notes a link to an id nothing has and every writer keeps only its text: in
    the link colour, it would look like a link that does nothing when clicked."""
    colours = text_colours(pdf_of("# T\n\nSee [QQQ](#nowhere), [ZZZ](#t) and XXX.\n", engine))
    assert colours["Q"] == colours["X"] == (0x1B, 0x1B, 0x1B)  # the text's colour
    assert colours["Z"] == (0x1F, 0x4E, 0x8C)  # a live link's accent


WIDE = """A word too long for any line: {word} and a URL https://example.com/{path}?x=1 end.

| Column A | Column B with long text | Code | Cite |
|---|---|---|---|
| short | Many words that wrap over lines [[S:1]] | `some_function(argument_one, two)` | [[S:1]] |
| {cell} | https://example.com/another/very/long/url/in/a/table/cell | `x` | [[S:1]] |

Inline code that is long: `{code}` end.
""".format(word="Supercalifragilistic" * 6, path="segment/" * 20, cell="Unbroken" * 10,
           code="a_long_identifier_" * 6)


def test_long_words_and_wide_tables_stay_inside_the_text_column(engine: str) -> None:
    """A long word wraps (in text, code and table cells) instead of running off the page, and
    a table with one shrinks to the column: its last column and citations stay visible."""
    document = pdfium.PdfDocument(pdf_of(WIDE, engine))
    try:
        page = document[0]
        right_margin = page.get_width() - 20 * MM
        textpage = page.get_textpage()
        text = textpage.get_text_range()
        for index in range(textpage.count_chars()):
            _, _, right, _ = textpage.get_charbox(index)
            if textpage.get_text_range(index, 1).strip():
                assert right <= right_margin + 1, f"{text[index - 20:index + 1]!r} overflows"
    finally:
        document.close()
    squashed = re.sub(r"\s+", "", text)
    assert "CodeCite" in squashed  # the last header cell is there, after its neighbour
    assert squashed.count("Supercalifragilistic") == 6


#: The mark moves one character to the right per paragraph, so that in some paragraph it falls
#: just past the end of a line, where it would wrap alone if a break were allowed before it.
CREEPING_MARKS = "\n\n".join(
    f"lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum {'x' * k} "
    f"end.{mark} Next sentence goes on here."
    for mark in ("[[S:1]]", "[^n]") for k in range(1, 60)
) + "\n\n[^n]: A note.\n"


@pytest.mark.slow
def test_no_line_starts_with_a_citation_or_note_mark(engine: str) -> None:
    """A raised mark stays on the line of the word it follows: a reader never finds "¹ Next
    sentence…" opening a line, cut off from the claim it supports."""
    document = pdfium.PdfDocument(pdf_of(CREEPING_MARKS, engine))
    orphans: list[str] = []
    try:
        for page in document:
            textpage = page.get_textpage()
            chars = []
            for index in range(textpage.count_chars()):
                char = textpage.get_text_range(index, 1)
                if char.strip():
                    size = pdfium_c.FPDFText_GetFontSize(textpage.raw, index)
                    chars.append((char, size, *textpage.get_charbox(index)))
            body = [c for c in chars if c[1] > 9]
            for char, size, left, bottom, _, top in chars:
                middle = (bottom + top) / 2
                if size < 8 and char in "1a" and not any(
                    b[2] < left and b[3] - 3 <= middle <= b[5] + 3 for b in body
                ):
                    orphans.append(char)
    finally:
        document.close()
    assert orphans == []


def pdftotext(pdf: bytes, tmp_path: Path) -> str:
    """The PDF's text as ``pdftotext -layout`` reads it."""
    path = tmp_path / "read.pdf"
    path.write_bytes(pdf)
    return subprocess.run(["pdftotext", "-layout", str(path), "-"], check=True,
                          capture_output=True, text=True).stdout


#: The text each engine gives the hyphen it draws at a break at a soft hyphen: WeasyPrint the
#: hyphen it inserts (U+2010), Typst a soft hyphen (U+00AD), which pdfium reads as a hyphen at a
#: line's end (U+FFFE) and joins to the next line. (In a table, ``pdftotext -layout`` puts
#: the next cell on that line.)
BREAK_HYPHEN = re.compile("[\u2010\u00ad](?:\r?\n| )|\ufffe")
SHY = "\u00ad"
SHY_PARTS = ["Donau", "dampf", "schiff", "fahrts", "gesellschafts", "kapitäns", "mütze"]
SHY_CELL = ["Ver", "sicherungs", "gesellschaft", "en", "vertreter", "versammlung", "en"]
SHY_MARKDOWN = (
    f"# T\n\nShort{SHY}ly said.[[S:1]] "
    + "Some words to fill the line up to near its end so the long word wraps: " * 2
    + f"{SHY.join(SHY_PARTS)} ends.\n\n| Word | B |\n|---|---|\n| {SHY.join(SHY_CELL)} | "
    + "x " * 80 + f"|\n\nUn{SHY}broken, a short word: Ver{SHY}trag.\n"
)


def test_soft_hyphens_leave_no_trace_but_the_hyphen_at_a_break(
        engine: str, tmp_path: Path) -> None:
    """A search for a word written with soft hyphens (U+00AD) finds it: Typst wrote them into
    the PDF's text where the word did not break (WeasyPrint leaves them out), and none at a
    break but the hyphen drawn there. A long word breaks at one of them."""
    pdf = pdf_of(SHY_MARKDOWN, engine)
    for text in (pdftotext(pdf, tmp_path), "".join(page_texts(pdf)),
                 "".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages)):
        joined = BREAK_HYPHEN.sub("", text)
        assert SHY not in joined and "\u2010" not in joined
        for words in ("Shortly said.", "Unbroken, a short word: Vertrag.", "".join(SHY_PARTS)):
            assert words in joined, (words, text)
    lines = [line for _, _, line in pdf_lines(pdf)]
    for parts in (SHY_PARTS, SHY_CELL):  # a break between two of the parts, none inside one
        first = next(i for i, line in enumerate(lines) if parts[0] in line)
        assert any(re.search("".join(parts[:n]) + "[\u2010\ufffe]", lines[first])
                   for n in range(1, len(parts))), lines[first]


def read_lines(pdf: bytes) -> list[str]:
    """The text of each line (``pdf_lines``), a hyphen drawn at a break read as "-"."""
    return [line.replace("\u2010", "-").replace("\ufffe", "-") for _, _, line in pdf_lines(pdf)]


def hyphen_boxes(pdf: bytes) -> list[tuple[float, ...]]:
    """The glyph box of each hyphen drawn at a break at a soft hyphen on page 1."""
    document = pdfium.PdfDocument(pdf)
    try:
        textpage = document[0].get_textpage()
        return [textpage.get_charbox(index) for index in range(textpage.count_chars())
                if textpage.get_text_range(index, 1) in ("\u2010", "\ufffe")]
    finally:
        document.close()


def test_a_break_at_a_soft_hyphen_draws_the_hyphen_of_the_weasyprint_pdf() -> None:
    """CSS draws a hyphen where a line breaks at a soft hyphen; Typst drew none (the writer
    left soft hyphens out, and broke a long word at their places without one). Now both break
    the lines alike and draw the hyphen in the same place."""
    css, typst = (pdf_of(SHY_MARKDOWN, engine) for engine in ("weasyprint", "typst"))
    assert read_lines(css) == read_lines(typst)
    hyphens = [hyphen_boxes(pdf) for pdf in (css, typst)]
    assert len(hyphens[0]) == len(hyphens[1]) == 2, hyphens
    for a, b in zip(*hyphens, strict=True):
        assert all(abs(p - q) < 0.2 for p, q in zip(a, b, strict=True)), (a, b)


def test_a_column_narrows_to_the_parts_between_soft_hyphens_as_in_the_weasyprint_pdf() -> None:
    """CSS's min-content width of a word with soft hyphens is its widest part with the hyphen
    drawn after it; Typst's column took the whole word (119 pt wide instead of 64)."""
    markdown = (f"# T\n\n| Word | B |\n|---|---|\n| {SHY.join(SHY_PARTS[:3])}{SHY}fahrt | "
                + "lorem ipsum " * 30 + f"|\n| Ver{SHY}trag | x |\n")
    css, typst = (pdf_of(markdown, engine) for engine in ("weasyprint", "typst"))
    assert column_rules(css) == column_rules(typst), (column_rules(css), column_rules(typst))
    assert read_lines(css) == read_lines(typst)


FORMULAS = """# T

Text before the formula.[[S:1]]

$$
E = mc^2 + \\sum_{i=1}^n x_i
$$

Text after the formula.

$$x^2$$

Text after the small one.

A paragraph with a formula inside
$$\\alpha = \\frac{1}{2}$$
and text after it.
"""


def vertical_gaps(pdf: bytes) -> list[float]:
    """Top to bottom on the first page, the gaps between what is drawn after the title: lines
    of text (their characters' glyph boxes) and formulas (their glyph outlines, as paths)."""
    document = pdfium.PdfDocument(pdf)
    page = document[0]
    height = page.get_height()
    textpage = page.get_textpage()
    spans: list[tuple[float, float, str]] = []
    for index in range(textpage.count_chars()):
        if textpage.get_text_range(index, 1).strip():
            _, bottom, _, top = textpage.get_charbox(index)
            spans.append((height - top, height - bottom, "text"))
    for obj in page.get_objects(max_depth=5):
        if obj.type == pdfium_c.FPDF_PAGEOBJ_PATH:
            _, bottom, _, top = obj.get_bounds()
            spans.append((height - top, height - bottom, "formula"))
    drawn: list[tuple[float, float, str]] = []
    for top, bottom, kind in sorted(spans):
        if drawn and drawn[-1][2] == kind and (kind == "formula" or top < drawn[-1][1]):
            drawn[-1] = (drawn[-1][0], max(drawn[-1][1], bottom), kind)  # the same line or formula
        else:
            drawn.append((top, bottom, kind))
    shown = drawn[1:9]  # up to the last line of the text (the Sources heading aside)
    return [round(below[0] - above[1], 1) for above, below in pairwise(shown)]


def test_a_displayed_formula_is_spaced_as_in_the_weasyprint_pdf() -> None:
    """Typst set a displayed formula 0.5 em from the text around it (its block's spacing
    overrode the paragraph's), 2.6 pt closer than WeasyPrint, where a formula that is a
    paragraph of its own has the paragraph's 0.7 em and a small one a line of text's height."""
    weasy = vertical_gaps(pdf_of(FORMULAS, "weasyprint"))
    typst = vertical_gaps(pdf_of(FORMULAS, "typst"))
    assert len(typst) == len(weasy) == 7, (weasy, typst)  # line, f, line, f, line, line, f, line
    assert all(abs(a - b) < 0.8 for a, b in zip(weasy, typst, strict=True)), (weasy, typst)


#: Paragraphs holding several displayed formulas: each case's markdown.
DISPLAYS = {
    "between lines": "Before line\n$$x^2$$\n$$y^2$$\nafter line.\n\nAfter.\n",
    "in a line": "Before line $$x^2$$ $$y^2$$ after line.\n\nAfter.\n",
    "side by side": "Before line $$x^2$$$$y^2$$ after line.\n\nAfter.\n",
    "apart by a break": "Before.\n\n$$x^2$$\\\n$$y^2$$\n\nAfter.\n",
}


def formula_edges(pdf: bytes) -> list[tuple[float, float]]:
    """The top and bottom of each path drawn on page 1 (a formula's glyphs), top to bottom."""
    document = pdfium.PdfDocument(pdf)
    try:
        return sorted({(round(top, 2), round(bottom, 2))
                       for obj in document[0].get_objects(max_depth=5)
                       if obj.type == pdfium_c.FPDF_PAGEOBJ_PATH
                       for _, bottom, _, top in [obj.get_bounds()]}, reverse=True)
    finally:
        document.close()


@pytest.mark.parametrize("case", DISPLAYS)
def test_displayed_formulas_in_one_paragraph_are_spaced_as_in_the_weasyprint_pdf(
    case: str,
) -> None:
    """A space between two displayed formulas was a line of its own in Typst (CSS drops it):
    the second 20.5 pt lower. Two formulas side by side were 0.46 pt further apart (CSS
    collapses their 0.5 em margins; Typst added a line's half-leading), and one at a
    paragraph's edge 2.1 pt closer to the paragraph beside it (CSS: the paragraph's 0.7 em)."""
    markdown = f"# T\n\n{DISPLAYS[case]}"
    words = ["Before", "After"]
    css, typst = (pdf_of(markdown, engine) for engine in ("weasyprint", "typst"))
    for word, a, b in zip(words, baselines(css, words), baselines(typst, words), strict=True):
        assert abs(a - b) < 0.05, (word, a, b)
    css_edges, typst_edges = formula_edges(css), formula_edges(typst)
    assert len(css_edges) == len(typst_edges) == 4, (css_edges, typst_edges)  # two glyphs each
    for a, b in zip(css_edges, typst_edges, strict=True):
        assert all(abs(p - q) < 0.05 for p, q in zip(a, b, strict=True)), (a, b)


def origins(pdf: bytes, words: list[str]) -> list[tuple[float, float]]:
    """The origin (x, and y from the page's bottom: its baseline) of the first character of
    each of ``words`` on page 1, each word found once in the page's text."""
    document = pdfium.PdfDocument(pdf)
    try:
        textpage = document[0].get_textpage()
        text = textpage.get_text_range()
        out = []
        for word in words:
            x, y = ctypes.c_double(), ctypes.c_double()
            assert pdfium_c.FPDFText_GetCharOrigin(textpage.raw, text.index(word), x, y), word
            out.append((x.value, y.value))
        return out
    finally:
        document.close()


def baselines(pdf: bytes, words: list[str]) -> list[float]:
    """The baseline (points from the page's bottom) of each of ``words`` on page 1."""
    return [y for _, y in origins(pdf, words)]


def filled_rects(pdf: bytes, colour: tuple[int, int, int]) -> list[tuple[float, ...]]:
    """The bounds (left, bottom, right, top) of each path on page 1 filled in ``colour``."""
    document = pdfium.PdfDocument(pdf)
    try:
        found = []
        for obj in document[0].get_objects(max_depth=5):
            if obj.type != pdfium_c.FPDF_PAGEOBJ_PATH:
                continue
            rgba = [ctypes.c_uint() for _ in range(4)]
            if pdfium_c.FPDFPageObj_GetFillColor(obj.raw, *rgba) and tuple(
                    c.value for c in rgba[:3]) == colour:
                found.append(tuple(round(v, 1) for v in obj.get_bounds()))
        return sorted(found)
    finally:
        document.close()


def drawn_paths(pdf: bytes, top: float, bottom: float) -> list[tuple[float, ...]]:
    """The bounds of each path on page 1 between ``top`` and ``bottom`` (points from the page's
    bottom) that is no rule (a formula's glyph outlines)."""
    document = pdfium.PdfDocument(pdf)
    try:
        found = []
        for obj in document[0].get_objects(max_depth=5):
            if obj.type == pdfium_c.FPDF_PAGEOBJ_PATH:
                left, low, right, high = obj.get_bounds()
                if bottom < low and high < top and min(right - left, high - low) > 2:
                    found.append((left, low, right, high))
        return sorted(found)
    finally:
        document.close()


def test_inline_code_is_padded_and_shaded_as_in_the_weasyprint_pdf() -> None:
    """Typst padded inline code 0.2 em of the text around it, CSS 0.2 em of the code's own
    (smaller) size: the text after a span 0.5 pt further right, and a table column holding one
    wider; its shade sat 0.8 pt lower (Typst's edges are the face's typographic ascender and
    descender, WeasyPrint's one em centred on the content area)."""
    markdown = ("# T\n\n| Option | Meaning |\n|---|---|\n| a `--pdf-engine` b | x |\n\n"
                "Body a `code` b and `more` c.\n")
    words = ["--pdf", "x", "code", "b and", "more", "c."]
    shade = (0xF3, 0xF4, 0xF6)
    for_engine = {}
    for engine in ("weasyprint", "typst"):
        pdf = pdf_of(markdown, engine)
        for_engine[engine] = (origins(pdf, words), filled_rects(pdf, shade))
    (css_at, css_shades), (typst_at, typst_shades) = for_engine.values()
    for word, css, typst in zip(words, css_at, typst_at, strict=True):
        assert abs(css[0] - typst[0]) < 0.05 and abs(css[1] - typst[1]) < 0.05, (word, css, typst)
    assert len(css_shades) == len(typst_shades) == 3, (css_shades, typst_shades)
    for css, typst in zip(css_shades, typst_shades, strict=True):
        assert all(abs(a - b) < 0.15 for a, b in zip(css, typst, strict=True)), (css, typst)


def test_code_blocks_are_placed_as_in_the_weasyprint_pdf() -> None:
    """Typst's code block left its 0.5 pt border no room (CSS's takes it inside the box), its
    lines had Noto Sans's text edges, its margin below was in the body's em, not the code's, and
    its margin above had a whole leading: its text sat 0.4 pt lower and 0.5 pt further left,
    the text after it 1 pt lower."""
    markdown = "# T\n\nBefore.\n\n```\nline one\nline two\n```\n\nAfter.\n"
    words = ["Before", "line one", "line two", "After"]
    css = origins(pdf_of(markdown, "weasyprint"), words)
    typst = origins(pdf_of(markdown, "typst"), words)
    for word, a, b in zip(words, css, typst, strict=True):
        assert abs(a[0] - b[0]) < 0.05 and abs(a[1] - b[1]) < 0.05, (word, a, b)


def test_headings_are_spaced_alike_in_both_engines() -> None:
    """Typst's heading had the text edges of body text (1.362 em) where CSS's line box is 1.2 em,
    and lacked the half-leading CSS puts between a heading and the body line next to it: 1.2 pt
    more below a level-1 heading, 0.5 pt more above the Sources heading."""
    markdown = ("# Heading one\n\nFirst paragraph.\n\n## Section two\n\nSecond paragraph.\n\n"
                "### Third level\n\nThird paragraph.\n\nLast paragraph [[S:1]].\n\n"
                "# Another one\n\nClosing paragraph.\n")
    words = ["Heading", "First", "Section", "Second", "Third level", "Third paragraph", "Last",
             "Another", "Closing", "Sources", "A source"]
    lines = {engine: baselines(pdf_of(markdown, engine), words)
             for engine in ("weasyprint", "typst")}
    gaps = {engine: [a - b for a, b in pairwise(ys)] for engine, ys in lines.items()}
    for word, css, typst in zip(words[1:], gaps["weasyprint"], gaps["typst"], strict=True):
        assert abs(typst - css) < 0.2, (word, css, typst)
    assert abs(lines["typst"][0] - lines["weasyprint"][0]) < 0.2  # the page's first heading


#: Block quotes where they meet what surrounds them: each case's markdown and the words (each
#: once on the page) whose baselines are compared.
QUOTES = {
    "one paragraph": ("Before.\n\n> Quoted.\n\nAfter.\n", ["Before", "Quoted", "After"]),
    "two paragraphs": ("Before.\n\n> Quoted one.\n>\n> Quoted two.\n\nAfter.\n",
                       ["Before", "Quoted one", "Quoted two", "After"]),
    "then a heading": ("Before.\n\n> Quoted.\n\n## Next\n\nAfter.\n",
                       ["Before", "Quoted", "Next", "After"]),
    "then a list": ("> Quoted.\n\n- Item one\n- Item two\n\nAfter.\n",
                    ["Quoted", "Item one", "Item two", "After"]),
    "then a table": ("> Quoted.\n\n| Head |\n|---|\n| Cell |\n", ["Quoted", "Head"]),
    "in a list item": ("- Item one\n\n  > Quoted.\n\n- Item two\n\nAfter.\n",
                       ["Item one", "Quoted", "Item two", "After"]),
    "in a tight list item": ("- Item one\n  > Quoted.\n- Item two\n  > Last.\n\nAfter.\n",
                             ["Item one", "Quoted", "Item two", "Last", "After"]),
    "in a quote": ("> Outer.\n>\n> > Inner.\n\nAfter.\n", ["Outer", "Inner", "After"]),
}


@pytest.mark.parametrize("case", QUOTES)
def test_block_quotes_are_spaced_alike_in_both_engines(case: str) -> None:
    """Typst left 7.35 pt less below a quote than WeasyPrint, where the quote's last paragraph
    keeps its 0.7 em margin inside the quote's padding (and a quote ending a list item keeps its
    0.8 em margin before the next item; in a tight item, none above it)."""
    markdown, words = QUOTES[case]
    lines = {engine: baselines(pdf_of(f"# T\n\n{markdown}", engine), words)
             for engine in ("weasyprint", "typst")}
    gaps = {engine: [a - b for a, b in pairwise(ys)] for engine, ys in lines.items()}
    for word, css, typst in zip(words[1:], gaps["weasyprint"], gaps["typst"], strict=True):
        assert abs(typst - css) < 0.5, (word, css, typst)


def column_rules(pdf: bytes) -> list[float]:
    """The x of each vertical rule (a table's column edges) drawn on page 1, left to right."""
    document = pdfium.PdfDocument(pdf)
    try:
        rules = set()
        for obj in document[0].get_objects(max_depth=5):
            if obj.type == pdfium_c.FPDF_PAGEOBJ_PATH:
                left, bottom, right, top = obj.get_bounds()
                if right - left < 2 and top - bottom > 5:
                    rules.add(round((left + right) / 2, 1))
        return sorted(rules)
    finally:
        document.close()


def sample_table(name: str) -> str:
    """The first table of ``samples/<name>.md``."""
    text = (Path(__file__).resolve().parents[2] / "samples" / f"{name}.md").read_text("utf-8")
    found = re.search(r"(?m)(?:^\|.*\n)+", text)
    assert found is not None
    return found.group(0)


#: Tables whose columns CSS's automatic layout sizes each of its ways: shared by their
#: max-content (all fits), min-content plus a share of the rest (one or more columns wrap),
#: and a long word, which may break anywhere, counted out of the min-content.
TABLES = {
    "long report": sample_table("long-report"),
    "slides": sample_table("slides"),
    "long text and numbers": (
        "| Measure | Description | 2023 | 2024 |\n|---|---|--:|--:|\n"
        "| Solar | Utility-scale photovoltaic plants connected to the transmission grid, "
        "including single-axis trackers and bifacial modules installed since 2015 | 12.5 | 14.1 |\n"
        "| Wind | Onshore turbines | 8.2 | 9.0 |\n"),
    "short cells": "| A | B | C |\n|---|---|---|\n| x | 1 | yes |\n| yy | 22 | no |\n",
    "two long columns": (
        "| Topic | Finding | Source |\n|---|---|---|\n| Grid queues | Connection queues grew "
        "in most markets as developers filed speculative applications ahead of rule changes | "
        "Agency report on interconnection, 2024 edition, chapter three |\n"
        "| Storage | Battery prices fell | Industry survey |\n"),
    "long word": (
        "| Word | Text |\n|---|---|\n| Supercalifragilisticexpialidocious | Some long text "
        "that must wrap, as it is long enough to overflow the whole line: really, very long "
        "indeed. |\n"),
    "wide": ("| " + " | ".join(f"Column {i}" for i in range(9)) + " |\n|" + "---|" * 9 + "\n| "
             + " | ".join(f"value {i} with words to wrap" for i in range(9)) + " |\n"),
    "code": "| Option | Meaning |\n|---|---|\n| `--pdf-engine` | The engine of the PDF |\n",
}


@pytest.mark.parametrize("case", TABLES)
def test_table_columns_are_as_wide_in_both_engines(case: str) -> None:
    """Typst's columns were content-sized (``auto``) or shared by text length, up to 162 pt off
    WeasyPrint's; they now follow CSS's automatic table layout on measured widths. Within 1 pt
    (measured: 0.1 pt): glyph advances round differently in the two engines, and Typst measures
    only each column's longest cells."""
    css = column_rules(pdf_of(f"# T\n\n{TABLES[case]}", "weasyprint"))
    typst = column_rules(pdf_of(f"# T\n\n{TABLES[case]}", "typst"))
    assert len(css) == len(typst), (css, typst)
    assert all(abs(a - b) < 1 for a, b in zip(css, typst, strict=True)), (css, typst)


def test_tables_are_spaced_alike_in_both_engines() -> None:
    """Typst's rules took no room (CSS's collapsed ones take half their width on each side),
    its margin below was in the body's em, not the table's: rows were 0.6 pt shorter and the
    text after a table 0.7 pt lower. Its lines now fall where WeasyPrint's do."""
    markdown = ("## Above\n\n| Head | Other |\n|---|---|\n| Cell | More |\n| Last | Row |\n\n"
                "Between.\n\n| Again | Other |\n|---|---|\n| Once | More |\n\n"
                "Table: Captioned.\n\nAfter.\n")
    words = ["Above", "Head", "Cell", "Last", "Between", "Again", "Once", "Captioned", "After"]
    lines = {engine: baselines(pdf_of(f"# T\n\n{markdown}", engine), words)
             for engine in ("weasyprint", "typst")}
    gaps = {engine: [a - b for a, b in pairwise(ys)] for engine, ys in lines.items()}
    for word, css, typst in zip(words[1:], gaps["weasyprint"], gaps["typst"], strict=True):
        assert abs(typst - css) < 0.5, (word, css, typst)


def test_a_heading_after_a_table_is_placed_as_in_the_weasyprint_pdf() -> None:
    """Typst's table block ended at its last rule's centre and a heading after it added the
    half-leading of a line of text that is not there: the heading sat 0.16 pt lower."""
    markdown = ("Before.\n\n| Head | Other |\n|---|---|\n| Cell | More |\n\n## Next\n\nAfter.\n\n"
                "| Again | Other |\n|---|---|\n| Once | More |\n\n### Third\n\nEnd.\n")
    words = ["Before", "Cell", "Next", "After", "Once", "Third", "End"]
    css = baselines(pdf_of(f"# T\n\n{markdown}", "weasyprint"), words)
    typst = baselines(pdf_of(f"# T\n\n{markdown}", "typst"), words)
    for word, a, b in zip(words, css, typst, strict=True):
        assert abs(a - b) < 0.05, (word, a, b)


def test_list_markers_and_text_are_indented_as_in_the_weasyprint_pdf() -> None:
    """CSS sets an item's text 1.6 em in (a Sources entry's 2.2 em) and its marker and a space
    before it, outside; Typst indented the marker and put the text after it, 1.1 pt short for a
    bullet, 5.9 pt further in after a "10.", 3.4 pt short in the Sources list. A task item's box
    (DejaVu Sans) makes WeasyPrint's line 0.44 pt taller."""
    markdown = ("# T\n\n- Item one\n  - Nested one\n\nTasks:\n\n- [ ] Task one\n- [x] Task two\n\n"
                "7. Seven\n8. Eight\n9. Nine\n10. Ten\n\nAfter.[[S:1]]\n")
    # WeasyPrint's text has the markers after the page's other text: each word once
    words = ["Item one", "Nested", "Task one", "Task two", "7.", "Seven", "10.", "Ten", "After",
             "1. ", "A source"]
    css = origins(pdf_of(markdown, "weasyprint"), words)
    typst = origins(pdf_of(markdown, "typst"), words)
    for word, a, b in zip(words, css, typst, strict=True):
        assert abs(a[0] - b[0]) < 0.05 and abs(a[1] - b[1]) < 0.05, (word, a, b)


def test_inline_formulas_sit_as_in_the_weasyprint_pdf() -> None:
    """A formula alone in a table cell stood on a line only as tall as the picture (CSS's line
    box holds a line of text at least): 4 pt higher than in WeasyPrint. A picture deeper than the
    text made Typst's line taller by what the text edges lack, CSS's only by what its line box
    (half-leadings included) lacks: 0.44 pt more."""
    markdown = ("# T\n\n| Input | Symbol | Value |\n|---|:-:|--:|\n| Area | $A$ | 1.9 |\n"
                "| Ratio | $\\frac{1}{2}$ | 0.80 |\n\n"
                "Body $x^2$ and $\\frac{1}{2}$ here.\n\nAfter.\n")
    words = ["Area", "Ratio", "Body", "After"]
    pdfs = [pdf_of(markdown, engine) for engine in ("weasyprint", "typst")]
    css, typst = (baselines(pdf, words) for pdf in pdfs)
    for word, a, b in zip(words, css, typst, strict=True):
        assert abs(a - b) < 0.05, (word, a, b)
    css_formulas, typst_formulas = (drawn_paths(pdf, css[0] + 12, css[2] - 6) for pdf in pdfs)
    assert len(css_formulas) == len(typst_formulas) >= 4, (css_formulas, typst_formulas)
    for a, b in zip(css_formulas, typst_formulas, strict=True):
        assert all(abs(p - q) < 0.05 for p, q in zip(a, b, strict=True)), (a, b)


#: Blocks that meet a heading, a code block, a rule, a formula or a figure and no paragraph:
#: each case's markdown and the words (each once on the page) whose baselines are compared.
NEIGHBOURS = {
    "headings": ("# One\n\n## Two\n\n### Three\n\n#### Four\n\n## Five\n\n# Six\n\nText.\n",
                 ["One", "Two", "Three", "Four", "Five", "Six", "Text"]),
    "code after headings": ("## Two\n\n```\ncode two\n```\n\n### Three\n\n```\ncode three\n```\n\n"
                            "#### Four\n\n```\ncode four\n```\n\nText.\n",
                            ["Two", "code two", "Three", "code three", "Four", "code four",
                             "Text"]),
    "headings after code": ("```\ncode one\n```\n\n## Two\n\n```\ncode two\n```\n\n### Three\n\n"
                            "Text.\n", ["code one", "Two", "code two", "Three", "Text"]),
    "formulas": ("## Two\n\n$$x^2$$\n\n### Three\n\n$$y^2$$\n\n#### Four\n\nText.\n",
                 ["Two", "Three", "Four", "Text"]),
    "rules": ("Para.\n\n---\n\nText.\n\n---\n\n## Two\n\n---\n\n```\ncode one\n```\n\nEnd.\n",
              ["Para", "Text", "Two", "code one", "End"]),
    "figures": ("Para.\n\n![Cap one](chart.png)\n\n## Two\n\n![Cap two](chart.png)\n\n"
                "![](chart.png)\n\n### Three\n\n![Cap three](chart.png)\n\nText.\n",
                ["Para", "Cap one", "Two", "Cap two", "Three", "Cap three", "Text"]),
    "code beside other blocks": ("> Quoted.\n\n```\ncode one\n```\n\n- Item.\n\n"
                                 "```\ncode two\n```\n\n| Head |\n|---|\n| Cell |\n\n"
                                 "```\ncode three\n```\n\nText.\n",
                                 ["Quoted", "code one", "Item", "code two", "Cell",
                                  "code three", "Text"]),
}


@pytest.mark.parametrize("case", NEIGHBOURS)
def test_blocks_beside_headings_and_code_are_placed_as_in_the_weasyprint_pdf(
    case: str, tmp_path: Path
) -> None:
    """Each block's spacing in report.typ is CSS's beside a paragraph; where two blocks meet
    and neither is one, Typst took the larger of the two and CSS collapses the margins: a
    heading after a heading sat 0.45 pt lower (a half-leading of a line that is not there), a
    code block after an h2 0.7 pt lower (a paragraph's margin), after an h3 2.1 pt lower. A rule
    took no room (CSS's border 0.75 pt) nor the text's half-leadings: the text after it 1.7 pt
    higher. A figure's image stood on no line of text: its caption 3.2 pt higher."""
    PILImage.new("RGB", (200, 60), (0, 120, 0)).save(tmp_path / "chart.png")
    markdown, words = NEIGHBOURS[case]
    css, typst = (baselines(pdf_of(f"# T\n\n{markdown}", engine, base_dir=tmp_path), words)
                  for engine in ("weasyprint", "typst"))
    for word, a, b in zip(words, css, typst, strict=True):
        assert abs(a - b) < 0.05, (word, a, b)


def test_rules_and_figures_are_drawn_where_weasyprint_draws_them(tmp_path: Path) -> None:
    """The rule's centre and the image's and formula's edges, as far down as the text."""
    PILImage.new("RGB", (200, 60), (0, 120, 0)).save(tmp_path / "chart.png")
    markdown = "# T\n\nPara.\n\n---\n\n### Sec\n\n![Cap one](chart.png)\n\n$$x^2$$\n\nText.\n"
    drawn = {}
    for engine in ("weasyprint", "typst"):
        document = pdfium.PdfDocument(pdf_of(markdown, engine, base_dir=tmp_path))
        try:
            found = []
            for obj in document[0].get_objects(max_depth=5):
                if obj.type in (pdfium_c.FPDF_PAGEOBJ_PATH, pdfium_c.FPDF_PAGEOBJ_IMAGE):
                    _, bottom, _, top = obj.get_bounds()
                    if top - bottom < 2:  # a rule: its centre line
                        bottom = top = (top + bottom) / 2
                    found.append((bottom, top))
            drawn[engine] = sorted(found, reverse=True)
        finally:
            document.close()
    css, typst = drawn.values()
    assert len(css) == len(typst) == 4, (css, typst)  # the rule, the image, two glyphs
    for a, b in zip(css, typst, strict=True):
        assert all(abs(p - q) < 0.05 for p, q in zip(a, b, strict=True)), (a, b)


@pytest.mark.parametrize("page_size", ["A4", "Letter"])
def test_the_footer_is_placed_as_in_the_weasyprint_pdf(page_size: str) -> None:
    """CSS centres the footer's line box in the bottom margin; Typst hung its text 40 % of the
    margin below the text area: "Page 1 of 1" stood 1.0 pt higher."""
    words = ["Page 1", "of 1"]
    css, typst = (origins(pdf_of("# T\n\nText.\n", engine, page_size=page_size), words)
                  for engine in ("weasyprint", "typst"))
    for word, a, b in zip(words, css, typst, strict=True):
        assert abs(a[0] - b[0]) < 0.05 and abs(a[1] - b[1]) < 0.05, (word, a, b)


def line_baselines(pdf: bytes) -> list[float]:
    """The baseline of each line of text of body size or larger on page 1, top to bottom (the
    footer aside: WeasyPrint's text reports a larger size for it)."""
    document = pdfium.PdfDocument(pdf)
    try:
        textpage = document[0].get_textpage()
        found = set()
        for index in range(textpage.count_chars()):
            if (textpage.get_text_range(index, 1).strip()
                    and pdfium_c.FPDFText_GetFontSize(textpage.raw, index) > 9.5):
                x, y = ctypes.c_double(), ctypes.c_double()
                pdfium_c.FPDFText_GetCharOrigin(textpage.raw, index, x, y)
                if y.value > 24 * MM:
                    found.add(round(y.value, 2))
        return sorted(found, reverse=True)
    finally:
        document.close()


ARABIC_WORDS = " ".join(["كلمة"] * 40)
#: Lines with letters Noto Sans lacks: each case's markdown.
SCRIPT_LINES = {
    "paragraph": f"{ARABIC_WORDS}\n\nAfter.\n",
    "list": f"- {ARABIC_WORDS}\n- ثانية\n\n1. قصير جدا\n2. ثانية\n\nAfter.\n",
    "one word in a line": "Some English words then عربي words here.\n\nAfter.\n",
    "heading": "## عنوان القسم\n\nنص بعد العنوان.\n\nAfter.\n",
    "table": "| عمود | ب |\n|---|---|\n| خلية | نص |\n\nAfter.\n",
    "devanagari": " ".join(["शब्द"] * 40) + "\n\n## हिन्दी शीर्षक\n\nAfter.\n",
    "hebrew": "- " + " ".join(["מילה"] * 40) + "\n- שני\n\nAfter.\n",
    "cjk": "汉字" * 120 + "\n\n## 标题\n\nSome English 汉字 words.\n\nA · B · C\n\nAfter.\n",
    "devanagari beside latin": "## हिन्दी (Hindi)\n\nभारत ने 2024 में, and शब्द **शब्द**\n\nAfter.\n",
    "hebrew beside latin": "מילה מילה, abc\n\nabc **מילה**\n\nAfter.\n",
    "all at once": "Arabic كلمة, Hindi शब्द, Hebrew מילה, Chinese 汉字.\n\nAfter.\n",
}


@pytest.mark.parametrize("case", SCRIPT_LINES)
def test_lines_in_other_scripts_are_as_deep_as_in_the_weasyprint_pdf(case: str) -> None:
    """CSS centres the line height on each run's content area, from the largest ascender and
    descender of the faces in it: a line in Noto Sans Arabic is 0.07 em (0.74 pt) deeper in
    WeasyPrint, in Noto Sans Devanagari 0.144 em (1.51 pt), in DejaVu Sans (Hebrew) 0.042 em
    (0.44 pt); one in Noto Sans CJK 0.048 em (0.50 pt) taller above. With a glyph of Noto Sans
    in the run, a Devanagari line is only 0.058 em deeper, a Hebrew one not at all. Typst's
    text edges were Noto Sans's for every face but Arabic's, each later line that much higher
    (the fourth Hebrew line 1.33 pt, the seventh CJK line 3.03 pt)."""
    markdown = f"# T\n\n{SCRIPT_LINES[case]}"
    css, typst = (line_baselines(pdf_of(markdown, engine)) for engine in ("weasyprint", "typst"))
    assert len(css) == len(typst) >= 3, (css, typst)
    assert all(abs(a - b) < 0.05 for a, b in zip(css, typst, strict=True)), (css, typst)


def char_glyphs(pdf: bytes, chars: str) -> list[tuple[str, str, float]]:
    """Each of ``chars`` drawn on page 1: the character, its font's name (subset tag and
    punctuation left out, lower case, "regular" left out: the face that draws it) and its
    glyph's width."""
    document = pdfium.PdfDocument(pdf)
    try:
        textpage = document[0].get_textpage()
        found = []
        for index in range(textpage.count_chars()):
            char = chr(pdfium_c.FPDFText_GetUnicode(textpage.raw, index))
            if char in chars:
                name = ctypes.create_string_buffer(200)
                pdfium_c.FPDFText_GetFontInfo(textpage.raw, index, name, 200, None)
                face = re.sub(r"[^a-z]", "", name.value.decode().split("+")[-1].lower())
                left, _, right, _ = textpage.get_charbox(index)
                found.append((char, face.removesuffix("regular"), round(right - left, 2)))
        return found
    finally:
        document.close()


def char_faces(pdf: bytes, chars: str) -> list[tuple[str, str]]:
    """Each of ``chars`` drawn on page 1 with the face that draws it (:func:`char_glyphs`)."""
    return [(char, face) for char, face, _ in char_glyphs(pdf, chars)]


#: Symbols report.css's stack draws from Noto Sans CJK (no face before it has them): the
#: multilingual sample's Direction column, a wrapped paragraph, a heading; no CJK text.
CJK_SYMBOL_LINES = (
    "| Language | Direction |\n|---|:-:|\n| Greek | → |\n| Arabic | ← |\n| Hindi | → |\n\n"
    "A → B, C ← D, x ≤ y: " + " ".join(["words"] * 30) + " ★ end.\n\n## Step → next\n\n"
    "After.\n"
)


def test_symbols_drawn_from_the_cjk_face_are_drawn_and_placed_as_in_the_weasyprint_pdf() -> None:
    """WeasyPrint draws → ← ≤ ★ from Noto Sans CJK, whose content area makes CSS's line 0.048 em
    taller above (a line with Noto Sans in it too 0.046 em): each table row holding an arrow
    was 0.48 pt lower in WeasyPrint than the one before it in Typst, which drew them from
    DejaVu Sans when the document had no CJK text (the arrow column 10 pt wider) and counted
    them as Noto Sans's when it had. Both now draw them from the same face, on the same lines."""
    markdown = f"# T\n\n{CJK_SYMBOL_LINES}"
    pdfs = [pdf_of(markdown, engine) for engine in ("weasyprint", "typst")]
    css, typst = (line_baselines(pdf) for pdf in pdfs)
    assert len(css) == len(typst) >= 8, (css, typst)
    assert all(abs(a - b) < 0.05 for a, b in zip(css, typst, strict=True)), (css, typst)
    css_faces, typst_faces = (char_faces(pdf, "→←≤★") for pdf in pdfs)
    assert all(face.startswith("notosanscjksc") for _, face in css_faces), css_faces
    assert sorted(css_faces) == sorted(typst_faces)
    assert column_rules(pdfs[0]) == pytest.approx(column_rules(pdfs[1]), abs=0.05)


#: CJK paragraphs opening in each way Pango tells apart, long ones wrapping: with a CJK
#: character, with digits or punctuation Noto Sans draws (report.typ's ``opens-before-cjk``),
#: with Latin; a heading, cells, an element's text opening with digits. The Chinese section of
#: samples/multilingual.md, whose citations are measured apart (``line_baselines`` takes
#: WeasyPrint's for lines): there the lines of ``CJK_WORDS``.
CJK_LINES = {
    "digits first": "2024年，中国的汉字文本在这里继续。" * 8 + "\n\nAfter.\n",
    "han first": "中国2024年的汉字文本在这里继续。" * 8 + "\n\nAfter.\n",
    "punctuation first": "“汉字”。\n\n(汉字)。\n\n2024 年 AB。\n\n- 2024年。\n\nAfter.\n",
    "latin first": "AB 汉字 words.\n\nx 2024年\n\n汉字 2024。\n\nAfter.\n",
    "heading, cell, element": ("## 2024年报告\n\n| 2024年 | 汉字 |\n|---|---|\n| (汉字) | x |\n\n"
                               "Some *2024年* text.\n\n> 2024年，中国。\n\nAfter.\n"),
    # strong text's weight reached deepen-scripts as regular: its line stood 0.11 pt deeper
    "bold element": ("Some **2024年** text.\n\n| **2024年** | x |\n|---|---|\n| y **2024年** | z |"
                     "\n\n- **2024年** item\n\n> a __2024 年__ b\n\nAfter.\n"),
    "sample": ("## 中文 (Chinese)\n\n2024年，中国新增太阳能发电装机容量超过2亿千瓦，"
               "风电和太阳能发电总装机已超过火电。[[S:1]]\n\n## 日本語 (Japanese)\n\n"
               "日本政府は、2040年度に再生可能エネルギーを最大の電源とする方針を示している。"
               "[[S:1]]\n\nAfter.\n"),
}
CJK_WORDS = {"sample": ["中文", "2024年", "日本語", "日本政府", "After"]}


@pytest.mark.parametrize("case", CJK_LINES)
def test_cjk_lines_are_placed_as_in_the_weasyprint_pdf(case: str) -> None:
    """A line of a paragraph that opens with digits before CJK text ("2024年…") stood 0.46 pt
    lower in Typst (the Chinese paragraph of the multilingual sample 0.43 pt), the lines after
    it 0.1 pt; each line of one opening with CJK a further 0.026 pt lower; bold "2024年" in a
    line made it 0.11 pt deeper. Within 0.02 pt now (Typst's A4 page is 0.01 pt taller)."""
    markdown = f"# T\n\n{CJK_LINES[case]}"
    words = CJK_WORDS.get(case)
    css, typst = (line_baselines(pdf) if words is None else baselines(pdf, words)
                  for pdf in (pdf_of(markdown, engine) for engine in ("weasyprint", "typst")))
    assert len(css) == len(typst) >= 3, (css, typst)
    assert all(abs(a - b) < 0.02 for a, b in zip(css, typst, strict=True)), (css, typst)


def test_sources_entries_are_spaced_as_in_the_weasyprint_pdf() -> None:
    """An entry's back-link mark is in DejaVu Sans, whose content area makes CSS's line 0.042 em
    deeper: each entry stood 0.4 pt higher than the one before in Typst (the 50-page report
    took a page less than WeasyPrint's). A title opening with digits before CJK is placed too."""
    titles = ["Alpha report", "Beta review", "2024年全国电力工业统计数据", "エネルギー白書2024",
              "Gamma survey"]
    pool = SourcePool.from_rows([{"sid": n, "title": title, "url": f"https://e{n}.org/a"}
                                 for n, title in enumerate(titles, 1)])
    markdown = "# T\n\nText." + "".join(f"[[S:{n}]]" for n in range(1, len(titles) + 1)) + "\n"
    css, typst = (
        baselines(write_resolved("pdf", resolve(read_markdown(markdown), pool),
                                 RenderOptions(pdf_engine=engine)), ["Text", *titles])
        for engine in ("weasyprint", "typst"))
    assert all(abs(a - b) < 0.02 for a, b in zip(css, typst, strict=True)), (css, typst)


#: Code in those scripts: each case's markdown, and words whose lines are measured.
SCRIPT_CODE = {
    "block": ("```\nكلمة code\nمرحبا\n汉字\nशब्द x\nמילה\n```\n\nAfter.\n", ["After"]),
    "inline": ("Arabic `كلمة` code.\n\nHindi `शब्द` code.\n\nAfter.\n", ["Hindi", "After"]),
}


@pytest.mark.parametrize("case", SCRIPT_CODE)
def test_code_in_other_scripts_is_as_deep_as_in_the_weasyprint_pdf(case: str) -> None:
    """The same in code, against DejaVu Sans Mono's line box in a block (the text after this
    block stood 2.5 pt higher in Typst) and against the paragraph's in inline code, whose
    glyphs are smaller than the line's (Arabic: 0.23 pt, Devanagari 0.92 pt)."""
    markdown, words = SCRIPT_CODE[case]
    markdown = f"# T\n\nBefore.\n\n{markdown}"
    css, typst = (baselines(pdf_of(markdown, engine), words)
                  for engine in ("weasyprint", "typst"))
    assert all(abs(a - b) < 0.05 for a, b in zip(css, typst, strict=True)), (css, typst)


#: Word spaces after text of those scripts, in a code block, in inline code and in text, each
#: line ending in a Latin word: its place is measured. One before a digit or a mark keeps the
#: line's font; after an Arabic or Hebrew word on a left-to-right line, one before Latin text.
SCRIPT_SPACES = (
    "```\nكلمة كلمة كلمة one\nशब्द शब्द शब्द two\nמילה מילה three\n汉字 汉字 four\n"
    "शब्द (x) 2024 five\nكلمة 2024 six\n```\n\n"
    "Inline `كلمة كلمة` seven and `शब्द शब्द` eight.\n\n"
    "Text מילה מילה, nine; 汉字 汉字 ten, 中文 (eleven).\n\n한국어 텍스트 twelve.\n"
)
SPACED_WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                "eleven", "twelve"]


def test_word_spaces_in_other_scripts_are_as_wide_as_in_the_weasyprint_pdf() -> None:
    """Pango draws a space after a character of Noto Sans Arabic, Noto Sans Devanagari, DejaVu
    Sans (Hebrew) or Noto Sans CJK in that face; Typst in the first font that has a space. In
    code, DejaVu Sans Mono's 0.602 em made each space between Arabic or Devanagari words
    3.16 pt wider than WeasyPrint's (0.26 em), between CJK words 0.95 pt; in text, one between
    Hebrew words 0.61 pt narrower, between CJK words 0.38 pt wider, and after Korean, which
    Pango shapes as Korean (0.28 em), 0.21 pt narrower."""
    markdown = f"# T\n\n{SCRIPT_SPACES}"
    css, typst = (origins(pdf_of(markdown, engine), SPACED_WORDS)
                  for engine in ("weasyprint", "typst"))
    for word, a, b in zip(SPACED_WORDS, css, typst, strict=True):
        assert abs(a[0] - b[0]) < 0.05 and abs(a[1] - b[1]) < 0.05, (word, a, b)


def marker_glyphs(pdf: bytes) -> list[tuple[str, str, float]]:
    """Each list bullet on page 1: the character, its face and its glyph's width."""
    return char_glyphs(pdf, "•◦▪")


def test_nested_bullets_are_the_glyphs_of_the_weasyprint_pdf() -> None:
    """report.css's font stack has no ◦ or ▪ before Noto Sans CJK, which WeasyPrint draws them
    from; Typst, without the CJK fonts, fell back to DejaVu Sans's smaller ones."""
    markdown = "# T\n\n- Item one\n  - Nested one\n    - Deeper one\n\nAfter.\n"
    css, typst = (marker_glyphs(pdf_of(markdown, engine)) for engine in ("weasyprint", "typst"))
    assert [(c, f) for c, f, _ in css] == [("•", "notosans"), ("◦", "notosanscjksc"),
                                           ("▪", "notosanscjksc")], css
    assert css == typst


def marker_boxes(pdf: bytes) -> list[tuple[float, ...]]:
    """The glyph box (left, bottom, right, top) of each list bullet on page 1."""
    document = pdfium.PdfDocument(pdf)
    try:
        textpage = document[0].get_textpage()
        return [textpage.get_charbox(index) for index in range(textpage.count_chars())
                if chr(pdfium_c.FPDFText_GetUnicode(textpage.raw, index)) in "•◦▪"]
    finally:
        document.close()


@pytest.mark.parametrize("words", [("Item one", "Nested one", "Deeper one"),
                                   ("مرحبا", "عالم جديد", "نص ثالث")])
def test_nested_bullets_are_placed_as_in_the_weasyprint_pdf(words: tuple[str, ...]) -> None:
    """WeasyPrint sets an outside marker on a line box of its own, top-aligned with the item's
    first line: Noto Sans CJK's taller ascender put ◦ and ▪ 0.5 pt lower than in Typst (on the
    text's baseline), and the CJK face's narrower space after them 0.38 pt nearer the text."""
    one, two, three = words
    markdown = f"# T\n\n- {one}\n  - {two}\n    - {three}\n\nAfter.\n"
    css, typst = (marker_boxes(pdf_of(markdown, engine)) for engine in ("weasyprint", "typst"))
    assert len(css) == len(typst) == 3, (css, typst)
    for a, b in zip(css, typst, strict=True):
        assert all(abs(p - q) < 0.05 for p, q in zip(a, b, strict=True)), (a, b)


def test_a_wrapped_task_item_is_set_as_in_the_weasyprint_pdf() -> None:
    """CSS's task box (an inline block of DejaVu Sans) makes the item's first line 0.44 pt
    deeper, so its next lines follow that much lower; Typst deepened only the marker beside
    it. (A loose list's box stands on a line of its own in WeasyPrint: not compared.)"""
    long = " ".join(["wrapped"] * 14)
    markdown = (f"# T\n\n- [ ] First {long} alpha end\n- [x] Second item\n- Plain {long} beta\n\n"
                f"1. [x] Numbered {long} gamma end\n2. Two\n\nAfter.\n")
    words = ["First", "alpha", "Second", "Plain", "beta", "Numbered", "gamma", "Two", "After"]
    css, typst = (origins(pdf_of(markdown, engine), words) for engine in ("weasyprint", "typst"))
    for word, a, b in zip(words, css, typst, strict=True):
        assert abs(a[0] - b[0]) < 0.05 and abs(a[1] - b[1]) < 0.05, (word, a, b)


#: Blocks HTML aligns (a heading, paragraphs, markdown in an aligned division) among plain ones.
ALIGNED = (
    "# Alignment\n\n<h2 align=\"center\">Centred heading</h2>\n\n"
    "<p align=\"center\">Centred words here.</p>\n\n<p align=\"right\">Right words here.</p>\n\n"
    "<div align=\"center\">\n\nWrapped markdown words.\n\n</div>\n\nPlain words here.\n"
)
ALIGNED_WORDS = ["Centred heading", "Centred words", "Right words", "Wrapped", "Plain"]
#: Where each word's line is aligned, as a fraction of the page's width (0: left, 1: right).
ALIGNED_TO = [0.5, 0.5, 1.0, 0.5, 0.0]


def test_aligned_blocks_are_placed_as_the_input_asks(engine: str) -> None:
    pdf = pdf_of(ALIGNED, engine)
    document = pdfium.PdfDocument(pdf)
    width = document[0].get_width()
    document.close()
    lines = {text: (left, right) for left, right, text in pdf_lines(pdf)}
    for centred in ("Centred heading", "Centred words here.", "Wrapped markdown words."):
        left, right = lines[centred]
        assert abs((left + right) / 2 - width / 2) < 0.5, (centred, left, right)
    assert abs(lines["Right words here."][1] - (width - 20 * MM)) < 0.5
    assert abs(lines["Plain words here."][0] - 20 * MM) < 0.5


def image_lefts(pdf: bytes) -> list[float]:
    """The left edge of each image drawn on page 1, top to bottom."""
    document = pdfium.PdfDocument(pdf)
    try:
        found = [obj.get_bounds() for obj in document[0].get_objects(max_depth=5)
                 if obj.type == pdfium_c.FPDF_PAGEOBJ_IMAGE]
        return [left for left, _, _, _ in sorted(found, key=lambda box: -box[3])]
    finally:
        document.close()


def test_aligned_blocks_are_placed_alike_in_both_engines(tmp_path: Path) -> None:
    """Typst's `aligned` is a set rule: the blocks keep their spacing, and sit where
    WeasyPrint's `al-*` classes put them."""
    PILImage.new("RGB", (200, 60), (0, 120, 0)).save(tmp_path / "logo.png")
    markdown = ALIGNED + "".join(
        f'\n<p align="{side}"><img src="logo.png" alt="{side} logo"></p>\n'
        for side in ("left", "center", "right")
    )
    placed = {}
    for engine in ("weasyprint", "typst"):
        pdf = pdf_of(markdown, engine, base_dir=tmp_path)
        document = pdfium.PdfDocument(pdf)
        width, height = document[0].get_width(), document[0].get_height()
        document.close()
        # From the page's side, centre or top the line is aligned to: Typst's A4 page, in
        # whole twips, is 0.02 pt wider and 0.01 pt taller than WeasyPrint's.
        lines = origins(pdf, ALIGNED_WORDS)
        placed[engine] = (
            [(x - side * width, height - y)
             for (x, y), side in zip(lines, ALIGNED_TO, strict=True)],
            [x - side * width for x, side in zip(image_lefts(pdf), (0, 0.5, 1), strict=True)],
        )
    (css_words, css_images), (typst_words, typst_images) = placed.values()
    for word, css, typst in zip(ALIGNED_WORDS, css_words, typst_words, strict=True):
        assert all(abs(a - b) < 0.01 for a, b in zip(css, typst, strict=True)), (word, css, typst)
    assert len(css_images) == len(typst_images) == 3
    image = 200 * 0.75  # points wide, at 96 pixels an inch
    expected = [20 * MM, -image / 2, -20 * MM - image]  # at the margin, centred, at the margin
    assert all(abs(a - b) < 0.5 for a, b in zip(css_images, expected, strict=True)), css_images
    assert all(abs(a - b) < 0.01 for a, b in zip(css_images, typst_images, strict=True)), (
        css_images, typst_images)


#: Title blocks: every part, only an abstract (its margin above is the h1's), a paragraph or a
#: heading after it, the block under a heading of the body that shows the title.
TITLE_BLOCKS = {
    "full": ("---\ntitle: Grid\nsubtitle: Sub line\nauthor: [Ana, Bo]\ndate: May 2024\n"
             "abstract: |\n  Abs one that is long enough to wrap in the inset block of the "
             "abstract, so that its lines are spaced too.\n\n  Abs two.\n---\n\n"
             "## After\n\nText.\n", ["Grid", "Sub", "Ana", "May", "Abstract", "Abs one",
                                     "spaced", "Abs two", "After", "Text"]),
    "abstract": ("---\nabstract: Abs one.\n---\n\n# Grid\n\nText.\n",
                 ["Grid", "Abstract", "Abs one", "Text"]),
    "lines": ("---\ntitle: Grid\nsubtitle: Sub line\ndate: May 2024\n---\n\nText.\n\n# Next\n",
              ["Grid", "Sub", "May", "Text", "Next"]),
    # right to left: each part set from the right margin
    "rtl": ("---\nlang: ar\nsubtitle: نظرة على الطوابير\nauthor: علي\nabstract: ندرس الطوابير.\n"
            "---\n\n# تقرير\n\nنص.\n", ["تقرير", "نظرة", "علي", "ملخص", "ندرس", "نص"]),
}


@pytest.mark.parametrize("case", TITLE_BLOCKS)
def test_the_title_block_is_placed_as_in_the_weasyprint_pdf(case: str) -> None:
    """report.typ's title-block restates title-block.css: each part's baseline and left edge
    (the abstract inset) within 0.05 pt, and the text after it."""
    markdown, words = TITLE_BLOCKS[case]
    css, typst = (origins(pdf_of(markdown, engine), words) for engine in ("weasyprint", "typst"))
    for word, a, b in zip(words, css, typst, strict=True):
        assert abs(a[0] - b[0]) < 0.05 and abs(a[1] - b[1]) < 0.05, (word, a, b)
