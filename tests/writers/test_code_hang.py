"""A wrapped code line hangs in by its own indentation plus four characters, in every layout
that wraps code: both PDF engines (text positions read back from the PDF), the HTML (the
``--hang`` of each line's span), DOCX (a paragraph per line, ``w:ind``, in a boxed table)
and PPTX (``marL`` and ``indent``, the slides reserving the extra lines), the last two also
as LibreOffice draws them.
They had all started the wrapped part at the block's left edge, where it read as a new
statement, shallower than the line it belongs to."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import docx
import pypdfium2 as pdfium
import pytest
from pptx import Presentation

from citations.pool import SourcePool
from renderers.api import build_options, prepare
from renderers.options import RenderOptions
from renderers.pipeline import Session
from renderers.readers.markdown import read_markdown
from renderers.resolve import resolve
from renderers.writers.common import CODE_CONTINUATION, code_hang
from renderers.writers.docx.code import MONO_ADVANCE
from renderers.writers.docx.tables import TEXT_SIZE
from renderers.writers.pptx.code import MONO_STYLE, line_starts
from renderers.writers.pptx.layout import build_deck
from renderers.writers.pptx.metrics import WIDTH_SLACK, TextMetrics
from renderers.writers.pptx.model import CODE_SIZE, INSET_X, INSET_Y, CodeItem
from tests.helpers import convert_with_libreoffice, pdf_lines
from tests.support.render import render_markdown

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
EMU_PER_PT = 12700

CALL = ("result = client.generate(model=\"llama-2-7b\", temperature=0.2, max_tokens=512, "
        "stream=False, stop=None, seed=42, top_p=0.95)")
INDENTED = ("        print(out.outputs[0].text, out.outputs[0].text, out.outputs[0].text, "
            "out.outputs[0].text, out.outputs[0].text)")
MARKDOWN = f"# Code\n\n```python\n{CALL}\nfor out in outs:\n{INDENTED}\n```\n"


def test_code_hang_counts_indentation_and_tabs() -> None:
    assert code_hang("x = 1") == CODE_CONTINUATION
    assert code_hang("    return x") == 4 + CODE_CONTINUATION
    assert code_hang("\treturn x") == 8 + CODE_CONTINUATION


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_the_wrapped_part_of_a_code_line_hangs_in(engine: str) -> None:
    lines = pdf_lines(render_markdown("pdf", MARKDOWN, [], pdf_engine=engine))
    code = [line for line in lines if line[2] and not line[2].startswith(("Code", "Page"))]
    first = next(i for i, line in enumerate(code) if line[2].startswith("result ="))
    loop = next(i for i, line in enumerate(code) if line[2] == "for out in outs:")
    assert loop - first == 2, "the long call wrapped once"
    left, right, text = code[loop]
    advance = (right - left) / len(text)  # one monospace character, measured
    edge = code[first][0]
    assert code[loop][0] == pytest.approx(edge, abs=0.5)  # a line of its own: at the edge
    assert code[first + 1][0] == pytest.approx(edge + 4 * advance, abs=0.5)
    assert code[loop + 1][2].startswith("print(")  # indented 8 (Typst draws those spaces)
    assert code[loop + 2][0] == pytest.approx(edge + 12 * advance, abs=0.5)


def test_every_html_code_line_carries_its_hang_and_the_code_as_written() -> None:
    html = render_markdown("html", MARKDOWN, []).decode()
    block = re.search(r'<code class="language-python">(.*?)</code>', html, re.S)
    assert block is not None
    hangs = re.findall(r'<span class="code-line" style="--hang:(\d+)">', block.group(1))
    assert hangs == ["4", "4", "12"]
    text = re.sub(r"<[^>]+>", "", block.group(1)).replace("&#34;", '"')
    assert text == f"{CALL}\nfor out in outs:\n{INDENTED}"
    assert "pre > code > span.code-line {" in html and "calc(var(--hang) * -1ch)" in html


def test_an_authors_own_line_number_spans_stay_in_their_line() -> None:
    """An HTML page laid out in its author's look keeps its own markup: a highlighter's
    line-number span (Chroma's ``span.ln``) stays inline, not on a line of its own."""
    page = ('<html><head><style>h1 { color: navy; }</style></head><body><h1>T</h1>'
            '<pre><code><span class="ln">1</span> x = 1\n<span class="ln">2</span> y = 2'
            '</code></pre></body></html>')
    session = Session(prepare(page, sources_pool=[], options=build_options()))
    assert "<span class=\"ln\">1</span>" in session.print_html()  # the author's look
    lines = [text for _, _, text in pdf_lines(session.artifact("pdf").data)]
    assert "1 x = 1" in lines and "2 y = 2" in lines


# ---------------------------------------------------------------- DOCX and PPTX

DOCX_MARKDOWN = MARKDOWN + "\n```\nplain\n\n\tdone()\n```\n"


def _docx_code_tables(data: bytes) -> list[Any]:
    """The ``w:tbl`` of every code block (a box of one column, no lines between its rows)."""
    body = docx.Document(io.BytesIO(data)).element.body
    return [tbl for tbl in body.iter(f"{W}tbl")
            if tbl.find(f"{W}tblPr/{W}tblBorders/{W}insideH") is None]


def _docx_code_lines(data: bytes) -> list[Any]:
    """The ``w:p`` of every code line, in order."""
    return [p for tbl in _docx_code_tables(data) for p in tbl.iter(f"{W}p")]


def _twips(element: Any, path: str, attr: str = "w") -> int:
    found = element.find(path)
    assert found is not None, path
    return int(found.get(f"{W}{attr}"))


def test_every_docx_code_line_is_a_paragraph_hanging_in_by_its_own_hang() -> None:
    lines = _docx_code_lines(render_markdown("docx", DOCX_MARKDOWN, []))
    texts = ["".join(t.text for t in p.iter(f"{W}t")) for p in lines]
    assert texts[:3] == [CALL, "for out in outs:", INDENTED]
    assert texts[3:] == ["plain", "", "done()"]  # a tab is a w:tab, as before
    hangs = [round(h * MONO_ADVANCE * TEXT_SIZE) for h in (4, 4, 12, 4, 4, 12)]
    for p, hang in zip(lines, hangs, strict=True):
        ind = p.find(f"{W}pPr/{W}ind")
        assert (int(ind.get(f"{W}left")), int(ind.get(f"{W}hanging"))) == (hang, hang)
        # the box is the table's: a line has no border or shading of its own
        assert p.find(f"{W}pPr/{W}pBdr") is None and p.find(f"{W}pPr/{W}shd") is None
        spacing = p.find(f"{W}pPr/{W}spacing")
        assert (spacing.get(f"{W}before"), spacing.get(f"{W}after")) == ("0", "0")
    # the empty line takes the hang of the line above it
    assert lines[4].find(f"{W}r") is None
    keep = [p.find(f"{W}pPr/{W}keepNext") is not None for p in lines]
    assert keep == [True, True, False, True, True, False]  # first two and last two together
    # a leading tab keeps its default stop: the hang, a tab stop too, comes after it
    stops = [int(t.get(f"{W}pos")) for t in lines[5].iter(f"{W}tab") if t.get(f"{W}pos")]
    assert stops == list(range(720, hangs[5] + 720, 720))
    assert lines[5].find(f".//{W}r/{W}tab") is not None


def test_a_docx_code_block_is_one_box_a_row_per_line() -> None:
    """Word joins bordered paragraphs into one box only when their indents match too: lines
    hanging differently would have been a stair of boxes. The box is a table's, at the
    paragraphs' place: its text at the body's edge, its edges the border's space (4 pt)
    outside, rows that keep a wrapped line on one page and no space between them."""
    data = render_markdown("docx", DOCX_MARKDOWN, [])
    document = docx.Document(io.BytesIO(data))
    section = document.sections[-1]
    text_width = (section.page_width - section.left_margin - section.right_margin) // 635
    tables = _docx_code_tables(data)
    assert len(tables) == 2
    for tbl in tables:
        assert tbl.find(f"{W}tblPr/{W}bidiVisual") is None
        assert tbl.find(f"{W}tblPr/{W}tblInd") is None  # text at the margin, the box 4 pt out
        assert _twips(tbl, f"{W}tblPr/{W}tblW") == text_width + 160
        assert tbl.find(f"{W}tblPr/{W}tblLayout").get(f"{W}type") == "fixed"
        edges = tbl.find(f"{W}tblPr/{W}tblBorders")
        assert [(e.tag[len(W):], e.get(f"{W}sz"), e.get(f"{W}color")) for e in edges] == [
            (side, "6", "A6A6A6") for side in ("top", "left", "bottom", "right")]
        margins = tbl.find(f"{W}tblPr/{W}tblCellMar")
        assert [(m.tag[len(W):], m.get(f"{W}w")) for m in margins] == [
            (side, "80") for side in ("top", "left", "bottom", "right")]
        rows = tbl.findall(f"{W}tr")
        assert len(rows) == 3 and all(r.find(f"{W}trPr/{W}cantSplit") is not None for r in rows)
        inner = [[m.tag[len(W):] for m in r.iterfind(f"{W}tc/{W}tcPr/{W}tcMar/*")] for r in rows]
        assert inner == [["bottom"], ["top", "bottom"], ["top"]]  # padding at the box's edges
        fills = {r.find(f"{W}tc/{W}tcPr/{W}shd").get(f"{W}fill") for r in rows}
        assert len(fills) == 1
        # the one-point paragraph after it keeps the next block (a table too) apart
        after = tbl.getnext()
        assert after.tag == f"{W}p" and after.find(f"{W}pPr/{W}pBdr") is None
        assert after.find(f"{W}pPr/{W}spacing").get(f"{W}line") == "20"
    plain = tables[1].find(f"{W}tr/{W}tc/{W}tcPr/{W}shd").get(f"{W}fill")
    assert plain == "F2F2F2"


def test_a_docx_code_block_in_a_quote_hangs_from_the_quotes_indent() -> None:
    quoted = "> Quote.\n>\n> ```\n> x = 1\n>     y = compute()\n> ```\n"
    data = render_markdown("docx", quoted, [])
    (tbl,) = _docx_code_tables(data)
    quote = docx.Document(io.BytesIO(data)).paragraphs[0]._p
    indent = _twips(quote, f"{W}pPr/{W}ind", "left")
    assert indent > 0 and _twips(tbl, f"{W}tblPr/{W}tblInd") == indent  # text at the quote's
    # the box carries the quote's bar at its left, 6 pt from the text, as the paragraphs did
    assert tbl.find(f"{W}tblPr/{W}tblBorders/{W}left").get(f"{W}sz") == "18"
    assert _twips(tbl, f"{W}tblPr/{W}tblCellMar/{W}left") == 120
    lines = _docx_code_lines(data)
    assert [_twips(p, f"{W}pPr/{W}ind", "hanging") for p in lines] == [
        round(h * MONO_ADVANCE * TEXT_SIZE) for h in (4, 8)]


def test_a_docx_code_block_in_a_list_item_spans_the_items_width() -> None:
    data = render_markdown("docx", "- item\n\n  ```\n  x = 1\n  ```\n", [])
    document = docx.Document(io.BytesIO(data))
    section = document.sections[-1]
    text_width = (section.page_width - section.left_margin - section.right_margin) // 635
    (tbl,) = _docx_code_tables(data)
    indent = _twips(tbl, f"{W}tblPr/{W}tblInd")
    assert indent > 0 and _twips(tbl, f"{W}tblPr/{W}tblW") == text_width - indent + 160


def test_a_docx_code_box_stays_in_place_in_a_word_2013_document(tmp_path: Path) -> None:
    """From compatibility mode 15 (what Word saves now) ``w:tblInd`` places a table's edge,
    not its text: a reference DOCX of that mode gets the box's edge a margin left of the
    text's indent, so that the text still starts at it."""
    base = docx.Document()
    compat = base.settings.element.find(f"{W}compat")
    mode = next(s for s in compat if s.get(f"{W}name") == "compatibilityMode")
    mode.set(f"{W}val", "15")
    reference = tmp_path / "word2013.docx"
    base.save(str(reference))
    quoted = "> ```\n> x = 1\n> ```\n"
    old = _docx_code_tables(render_markdown("docx", quoted, []))[0]
    new = _docx_code_tables(render_markdown("docx", quoted, [],
                                            reference_docx=str(reference)))[0]
    assert _twips(new, f"{W}tblPr/{W}tblInd") == _twips(old, f"{W}tblPr/{W}tblInd") - 120
    body = _docx_code_tables(render_markdown("docx", "```\nx\n```\n", [],
                                             reference_docx=str(reference)))[0]
    assert _twips(body, f"{W}tblPr/{W}tblInd") == -80


def test_every_pptx_code_line_hangs_by_its_own_hang() -> None:
    deck = Presentation(io.BytesIO(render_markdown("pptx", MARKDOWN, [])))
    box = next(shape for slide in deck.slides for shape in slide.shapes
               if shape.name.startswith("Code"))
    ppr = [p._p.find(f"{A}pPr") for p in box.text_frame.paragraphs]
    margins = [int(p.get("marL")) for p in ppr]
    assert [int(p.get("indent")) for p in ppr] == [-m for m in margins]
    advance = TextMetrics().char_width(" ", MONO_STYLE) * CODE_SIZE * EMU_PER_PT
    assert margins == [round(h * advance) for h in (4, 4, 12)]


def test_pptx_measures_the_wrapped_part_of_a_code_line_at_the_width_less_its_hang() -> None:
    """A line that fits twice the box's width wraps to three lines once its second line is
    narrower by the hang: the box reserves them."""
    metrics = TextMetrics()
    width = 600.0
    chars = int(width * WIDTH_SLACK / (metrics.char_width("x", MONO_STYLE) * CODE_SIZE))
    line = " " * 20 + "x" * (2 * chars - 20)
    plain = metrics.line_starts([(line, MONO_STYLE, False)], width, CODE_SIZE)
    starts = line_starts(line, metrics, width, CODE_SIZE)
    assert (len(plain), len(starts)) == (2, 3)
    assert starts[:2] == plain[:2]


@pytest.mark.libreoffice
@pytest.mark.parametrize("fmt", ["docx", "pptx"])
def test_a_wrapped_code_line_hangs_in_as_libreoffice_draws_it(fmt: str, tmp_path: Path) -> None:
    path = tmp_path / f"code.{fmt}"
    path.write_bytes(render_markdown(fmt, MARKDOWN, []))
    lines = pdf_lines(convert_with_libreoffice(path, tmp_path).read_bytes())
    first = next(i for i, line in enumerate(lines) if line[2].startswith("result ="))
    loop = next(i for i, line in enumerate(lines) if line[2] == "for out in outs:")
    assert loop - first == 2, "the long call wrapped once"
    left, right, text = lines[loop]
    advance = (right - left) / len(text)  # one monospace character, as drawn
    edge = lines[first][0]
    assert lines[loop][0] == pytest.approx(edge, abs=0.5)
    assert lines[loop + 1][2].startswith("print(")
    hang = lines[first + 1][0] - edge
    deep = lines[loop + 2][0] - edge
    # DOCX hangs by Consolas' advance, LibreOffice draws DejaVu Sans Mono: a little short
    low = 0.9 if fmt == "docx" else 0.98
    assert low * 4 * advance < hang < 4.05 * advance
    assert low * 12 * advance < deep < 12.05 * advance  # right of the 8 spaces it wraps
    assert lines[loop + 2][2].startswith("out.outputs")


@pytest.mark.libreoffice
def test_a_long_docx_code_block_breaks_between_its_lines(tmp_path: Path) -> None:
    """A block longer than the page starts under the text before it and breaks between two
    of its lines, each wrapped line whole on its page: in one table cell LibreOffice broke
    a wrapped line across pages, and a line kept with the next there moved the whole block
    to the next page."""
    rows = [f"{' ' * (4 * (n % 3))}value_{n} = compute(alpha={n}, beta={n * 2}, "
            f"gamma='{'abc' * (n % 9)}', delta=[{', '.join(str(k) for k in range(n % 25))}])"
            for n in range(70)]
    markdown = "# Long\n\n" + "Text. " * 300 + "\n\n```python\n" + "\n".join(rows) + "\n```\n"
    path = tmp_path / "long.docx"
    path.write_bytes(render_markdown("docx", markdown, []))
    pdf = pdfium.PdfDocument(convert_with_libreoffice(path, tmp_path))
    pages = ["".join(page.get_textpage().get_text_range().split()) for page in pdf]
    assert "value_0=" in pages[0] and "value_1=" in pages[0]  # not moved to the next page
    for row in rows:
        flat = "".join(row.split())
        assert any(flat in page for page in pages), f"split across pages: {row[:30]}"


#: Forty indented lines, each wrapping to two to four lines on a slide.
ROWS = "\n".join(f"{' ' * (4 * (n % 4))}value_{n} = compute(alpha={n}, beta={n * 2}, "
                 f"gamma='{'abc' * (n % 7)}', delta=[{', '.join(str(k) for k in range(n))}])"
                 for n in range(12, 52))
LONG_CODE = f"## Data\n\nIntro.\n\n```python\n{ROWS}\n```\n"


def test_the_slides_reserve_every_wrapped_line_of_long_code() -> None:
    """The code boxes are as tall as the lines wrapped with their hangs, more than the same
    lines wrapped at the box's whole width: a box measured without the hang was too short
    for PowerPoint's wrapping."""
    metrics = TextMetrics()
    deck = build_deck(resolve(read_markdown(LONG_CODE), SourcePool.from_rows([])),
                      RenderOptions(), metrics=metrics)
    items = [item for slide in deck.slides for item in slide.items if isinstance(item, CodeItem)]
    assert len(items) >= 3 and "\n".join(line for item in items for line in item.lines) == ROWS
    width = deck.geometry.content.width_pt - 2 * INSET_X
    pitch = metrics.line_height(CODE_SIZE)
    reserved = sum(round((item.height / EMU_PER_PT - 2 * INSET_Y) / pitch) for item in items)
    hanging = sum(len(line_starts(line, metrics, width, CODE_SIZE)) for line in ROWS.split("\n"))
    flat = sum(len(metrics.line_starts([(line, MONO_STYLE, False)], width, CODE_SIZE))
               for line in ROWS.split("\n"))
    assert reserved == hanging > flat


@pytest.mark.libreoffice
def test_long_wrapping_code_stays_in_its_boxes_on_the_slides(tmp_path: Path) -> None:
    """Every part of a long block of wrapping lines fits its slide, and every character
    LibreOffice draws below a box's top lies inside the box."""
    rows = ROWS
    path = tmp_path / "code.pptx"
    path.write_bytes(render_markdown("pptx", LONG_CODE, []))
    deck = Presentation(str(path))
    pdf = pdfium.PdfDocument(convert_with_libreoffice(path, tmp_path))
    height = deck.slide_height / EMU_PER_PT
    boxes = 0
    for slide, page in zip(deck.slides, pdf, strict=True):
        code = [shape for shape in slide.shapes if shape.name.startswith("Code")]
        if not code:
            continue
        boxes += 1
        top = height - code[0].top / EMU_PER_PT
        bottom = height - (code[0].top + code[0].height) / EMU_PER_PT
        chars = page.get_textpage()
        for index in range(chars.count_chars()):
            if not chars.get_text_range(index, 1).strip():
                continue
            _, low, _, high = chars.get_charbox(index)
            if high <= top + 0.5:
                assert low >= bottom - 0.5, f"slide {slide.slide_id}: below its code box"
    assert boxes >= 3
    drawn = "".join("".join(page.get_textpage().get_text_range().split()) for page in pdf)
    assert "".join(rows.split()) in drawn.replace("Data(cont.)", "")


def test_code_in_a_right_to_left_document_stays_left_to_right_and_hangs_in() -> None:
    arabic = f"# تقرير\n\nهذا نص عربي قبل الشيفرة.\n\n```python\n{CALL}\n    return x\n```\n"
    data = render_markdown("docx", arabic, [])
    (tbl,) = _docx_code_tables(data)
    assert tbl.find(f"{W}tblPr/{W}bidiVisual") is None  # not mirrored: the box at the left
    lines = _docx_code_lines(data)
    assert [p.find(f"{W}pPr/{W}bidi") for p in lines] == [None, None]
    assert [int(p.find(f"{W}pPr/{W}ind").get(f"{W}hanging")) for p in lines] == [
        round(h * MONO_ADVANCE * TEXT_SIZE) for h in (4, 8)]
    deck = Presentation(io.BytesIO(render_markdown("pptx", arabic, [])))
    box = next(shape for slide in deck.slides for shape in slide.shapes
               if shape.name.startswith("Code"))
    ppr = [p._p.find(f"{A}pPr") for p in box.text_frame.paragraphs]
    assert [p.get("rtl") for p in ppr] == [None, None]
    assert 0 < int(ppr[0].get("marL")) < int(ppr[1].get("marL"))
