"""The Typst engine: author text never becomes Typst code, files or inputs; deep input stays
bounded; fonts, root and output are ours alone.

The hostile text below is Typst syntax of every kind (imports, file reads, ``eval``,
``sys.inputs``, loops, math, references, labels, comments, escapes, brackets) and every special
character. It goes through every node type of the document model; each PDF must show exactly
that text, and the markup handed to Typst must hold it only inside string literals.
"""

from __future__ import annotations

import io
import json
import os
import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pytest
import typst
from PIL import Image as PILImage
from pypdf import PdfReader

from citations.pool import SourcePool
from renderers.api import render as api_render
from renderers.document import (
    INLINE_STYLES,
    Block,
    BlockQuote,
    BulletList,
    Cite,
    Code,
    CodeBlock,
    Document,
    Emph,
    Figure,
    FootnoteDef,
    FootnoteRef,
    Heading,
    Image,
    LineBreak,
    Link,
    ListItem,
    Math,
    OrderedList,
    Paragraph,
    RawBlock,
    RawInline,
    SoftBreak,
    Strike,
    Strong,
    Styled,
    Table,
    TableCell,
    Text,
    ThematicBreak,
)
from renderers.errors import InputError, LimitError, RenderError
from renderers.fonts import font_index
from renderers.options import Limits, PdfVariant, RenderOptions
from renderers.readers.markdown import read_markdown
from renderers.resolve import ResolvedDocument, resolve
from renderers.writers.typst import fonts as typst_fonts
from renderers.writers.typst import writer as typst_writer
from renderers.writers.typst.bounds import (
    CELL_PIECES,
    CODE_LINE_PIECES,
    ENTRY_PIECES,
    MAX_DOCUMENT_PIECES,
    MAX_PARAGRAPH_PIECES,
    check_paragraph_pieces,
    document_pieces,
)
from renderers.writers.typst.escape import string_literal, text_markup
from renderers.writers.typst.markup import TypstSource, typst_source
from renderers.writers.typst.parts import code_span
from renderers.writers.typst.tables import column_pieces, widest_cells
from renderers.writers.typst.writer import page_count, typst_pdf

HOSTILE = (
    '#import "@preview/cetz:0.3.0": * #include "main.typ" #read("/etc/passwd") '
    '#eval("1 + 1") #sys.inputs.at("x") #let x = 1 #while true { } #for i in range(9) [] '
    "$x^2$ @ref <label> // line comment /* block comment */ \\ \\\\ \\u{41} ] [ } { ) ( "
    "*bold* _emph_ `raw` = heading - item + item / term: ~ -- --- ... 'q' \"qq\" : ; , . ! ? "
    "% & | ^ < > #box[x] #(1) #[content] #{code} #\"str\" #set text(red) #show: none"
)
ROOT = Path(__file__).resolve().parents[2]
POOL = SourcePool.from_rows([{"sid": 1, "title": "A source", "url": "https://example.org/a"}])
_FOOTER = re.compile(r"Page\d+of\d+")


def squeeze(text: str) -> str:
    """``text`` in NFKC without white space (line breaks and spacing are layout)."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def pdf_text(pdf: bytes) -> str:
    document = pdfium.PdfDocument(pdf)
    try:
        return "".join(document[i].get_textpage().get_text_range() for i in range(len(document)))
    finally:
        document.close()


def render(blocks: tuple[Block, ...], **options: object) -> tuple[ResolvedDocument, bytes]:
    rdoc = resolve(Document(blocks), POOL)
    pdf, _, notes = typst_pdf(rdoc, RenderOptions(title="T", **options))  # type: ignore[arg-type]
    assert notes == []
    return rdoc, pdf


def para(*inlines: object) -> Paragraph:
    return Paragraph(tuple(inlines))  # type: ignore[arg-type]


H = Text(HOSTILE)
CELL = TableCell((H,))
#: Every node type carrying the hostile text, and the text its PDF must show after the title.
CASES: dict[str, tuple[tuple[Block, ...], str]] = {
    "heading": ((Heading(2, (H,)),), HOSTILE),
    "paragraph": ((para(H, SoftBreak(), H, LineBreak(), H),), HOSTILE * 3),
    "emph-strong-strike": ((para(Emph((H,)), Strong((H,)), Strike((H,))),), HOSTILE * 3),
    "styled": ((para(*(Styled(style, (H,), HOSTILE) for style in INLINE_STYLES)),),
               HOSTILE * len(INLINE_STYLES)),
    "code-span": ((para(Code(HOSTILE)),), HOSTILE),
    "styled-cite": ((para(Text("x"), Cite((1,), children=(Link("#src-1", (H,)),))),),
                    f"x{HOSTILE} Sources 1. A source — example.org ↑"),
    "note-cite": ((para(Text("x"), Cite((1,), children=(H,), note=1)),),
                  f"x1 Notes 1. {HOSTILE} ↑ Sources 1. A source — example.org ↑"),
    "math": ((para(Math(HOSTILE), Math(HOSTILE, display=True)),), HOSTILE * 2),
    "raw-inline": ((para(RawInline(HOSTILE)),), HOSTILE),
    "link": ((para(Link("https://example.org/?q=%22#import", (H,), HOSTILE)),), HOSTILE),
    "internal-link": ((para(Link("#nowhere", (H,))),), HOSTILE),
    "image-alt": ((para(Image("https://example.org/x.png", alt=HOSTILE)),),
                  f"[Image: {HOSTILE}]"),
    "undefined-note": ((para(FootnoteRef(HOSTILE)),), f"[^{HOSTILE}]"),
    "note": (
        (para(Text("x"), FootnoteRef("n")), FootnoteDef("n", (para(H),))),
        f"xa Notes a. {HOSTILE} ↑",
    ),
    "unreferenced-note": ((FootnoteDef(HOSTILE, (para(H),)),), f"Notes a. {HOSTILE}"),
    "bullet-list": ((BulletList((ListItem((para(H),)), ListItem((para(H),), True))),),
                    f"• {HOSTILE} ☒ {HOSTILE}"),
    "ordered-list": ((OrderedList((ListItem((para(H),)),), start=7),), f"7. {HOSTILE}"),
    "table": ((Table((CELL, CELL), ((CELL, CELL),), ("left", "right"), (H,)),), HOSTILE * 5),
    "code-block": ((CodeBlock(f"{HOSTILE}\n\t{HOSTILE}\n", HOSTILE),), HOSTILE * 2),
    "raw-block": ((RawBlock(HOSTILE),), HOSTILE),
    "highlighted-code": ((CodeBlock(f"{HOSTILE}\nx = '{HOSTILE}'  # {HOSTILE}\n", "python"),),
                         f"{HOSTILE}x = '{HOSTILE}' # {HOSTILE}"),
    "block-quote": ((BlockQuote((para(H), BlockQuote((para(H),)))),), HOSTILE * 2),
    "figure": ((Figure(Image("/etc/passwd", alt=HOSTILE), (H,)),),
               f"[Image: {HOSTILE}]{HOSTILE}"),
    "thematic-break": ((para(H), ThematicBreak(), para(H)), HOSTILE * 2),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_hostile_text_is_shown_exactly(case: str) -> None:
    blocks, expected = CASES[case]
    _, pdf = render(blocks)
    shown = _FOOTER.sub("", squeeze(pdf_text(pdf)))
    assert shown == squeeze("T" + expected), case


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_hostile_text_stays_inside_string_literals(case: str) -> None:
    blocks, _ = CASES[case]
    source = typst_source(resolve(Document(blocks), POOL), RenderOptions(title=HOSTILE)).text
    code = re.sub(r'"(?:[^"\\]|\\.)*"', '""', source)  # every string literal emptied
    for word in ("import", "include", "read(", "eval", "sys.", "while", "for ", "set text",
                 "cetz", "passwd", "$", "@", "<label>", "//", "/*", "`", "\\u"):
        assert word not in code, (case, word)
    assert "\n" not in "".join(re.findall(r'"(?:[^"\\]|\\.)*"', source))  # one line each


def test_hostile_title_author_sources_and_pool_fields() -> None:
    pool = SourcePool.from_rows([
        {"sid": 1, "title": HOSTILE, "url": "https://example.org/a?x=%23import"},
        {"sid": 2, "title": "", "artifact_path": "#read(/etc/passwd)/$x$.pdf"},
    ])  # fmt: skip
    document = Document((para(Text("c"), Cite((1, 2))),), subtitle=HOSTILE,
                        abstract=(para(Text(HOSTILE)),), shows_metadata=True)
    rdoc = resolve(document, pool, sources_heading=HOSTILE)
    options = RenderOptions(title=HOSTILE, author=HOSTILE)
    pdf, _, _ = typst_pdf(rdoc, options)
    meta = PdfReader(io.BytesIO(pdf)).metadata
    assert meta is not None and (meta.title, meta.author) == (HOSTILE, HOSTILE)
    shown = _FOOTER.sub("", squeeze(pdf_text(pdf)))
    # the title, then the title block: subtitle, author, the abstract under its heading
    expected = f"{HOSTILE} {HOSTILE} {HOSTILE} Abstract {HOSTILE} c1, 2 {HOSTILE} 1. " \
               f"{HOSTILE} — example.org ↑ 2. #read(/etc/passwd)/$x$.pdf ↑"
    assert shown == squeeze(expected)


def test_deep_nesting_keeps_its_text_and_compiles() -> None:
    depth = Limits().max_nesting
    inline: object = H
    for level in range(depth):
        inline = (Strong, Emph, Strike)[level % 3]((inline,))
    quote: Block = para(H)
    items: Block = para(H)
    for _ in range(depth):
        quote = BlockQuote((quote,))
        items = BulletList((ListItem((items,)),))
    _, pdf = render((para(inline), quote, items))
    shown = _FOOTER.sub("", squeeze(pdf_text(pdf)))
    assert shown.count(squeeze(HOSTILE)) == 3
    brackets = "[" * 300 + "(" * 300 + "{" * 300
    _, pdf = render((para(Text(brackets)),))
    assert squeeze(brackets) in squeeze(pdf_text(pdf))


def test_deep_nesting_from_the_markdown_reader() -> None:
    depth = Limits().max_nesting
    markdown = ">" * (depth - 1) + " quoted [[S:1]]\n\n" + "".join(
        "  " * i + "- item\n" for i in range(depth - 1)
    )
    pdf, _, _ = typst_pdf(resolve(read_markdown(markdown), POOL), RenderOptions())
    assert squeeze("quoted") in squeeze(pdf_text(pdf))


def test_string_literals_escape_everything() -> None:
    assert string_literal('a"b\\c') == '"a\\"b\\\\c"'
    assert string_literal("line\nnext\ttab\r\x00\x7f") == '"line\\nnext\\ttab\\r\\u{0}\\u{7f}"'
    assert string_literal("\ud800") == '"\\u{fffd}"'
    value = typst.Compiler().eval(string_literal(HOSTILE + '\n"\\'), format="json")
    assert value == '"' + (HOSTILE + '\n"\\').replace("\\", "\\\\").replace('"', '\\"') \
        .replace("\n", "\\n") + '"'


@pytest.mark.parametrize("text", [
    "plain words", "", 'say "hi"', "back\\slash", "tab\tline\nend", "zero\u200bwidth",
    "no-break\u00a0space", "bidi \u202e override", "delete\x7f", "lone \udc80 half",
])
def test_a_string_literal_reads_back_as_its_text(text: str) -> None:
    value = typst.Compiler().eval(string_literal(text), format="json")
    assert json.loads(value) == text.replace("\udc80", "\ufffd")


def test_text_folds_white_space_as_html_does() -> None:
    """Spaces, tabs and line ends fold to one space; a no-break space is text, kept."""
    assert text_markup("a  b\t\n c") == '#"a b c";'
    assert text_markup("a \u00a0 b") == '#"a \u00a0 b";'
    assert text_markup("a b") == '#"a b";'


URL = "https://example.org/" + "segment/" * 30 + "x" * 120 + "/index.html"


@pytest.mark.parametrize(("word", "kept", "boxes"), [
    (URL, URL, 0),  # a URL: one string (one text item) that Typst breaks itself
    # Typst breaks a long last piece of a URL nowhere: that piece is boxed
    ("https://example.org/" + "x" * 120, "https://example.org/", 5),
    ("Grüße-aus-dem-Süden/" * 15 + "y" * 120, "", 30),  # no URL: a row of boxes
    ("see:https://example.org/Grüße/" + "z" * 120, "https://example.org/Gr", 10),
])
def test_long_words_break_without_changing_the_text(word: str, kept: str, boxes: int) -> None:
    markup = text_markup(word)
    assert (markup.count("#box[") > boxes) if boxes else "#box[" not in markup
    assert not kept or f"#{string_literal(kept)};" in markup
    _, pdf = render((para(Text(word)),))
    document = pdfium.PdfDocument(pdf)
    page = document[0]
    textpage = page.get_textpage()
    right = max(textpage.get_charbox(i)[2] for i in range(textpage.count_chars()))
    assert right <= page.get_width() - 20 * 72 / 25.4 + 1  # nothing runs into the margin
    assert squeeze(word) in squeeze(pdf_text(pdf))


def test_emoji_use_the_colour_font() -> None:
    markup = text_markup("sun ☀️ bolt ⚡ plain ☀ 👍🏽")
    assert markup.count("#emoji-text(") == 3  # ☀ without U+FE0F stays text
    flags = text_markup("🇫🇷🇩🇪 and a lone 🇫")  # a flag is a pair of regional indicators
    assert re.findall(r'#emoji-text\("([^"]*)"\)', flags) == ["🇫🇷", "🇩🇪", "🇫"]


def test_a_paragraph_of_too_many_pieces_is_refused_before_typst_starts() -> None:
    """Typst's paragraph layout grows with the square of its pieces and cannot be stopped:
    such a paragraph (here in a table cell) is refused with the way out, before compiling."""
    pieces = tuple(Text(f"w{i} ") if i % 2 else Cite((1,)) for i in range(MAX_PARAGRAPH_PIECES))
    check_paragraph_pieces((para(*pieces),))  # at the bound: accepted
    cell = Table((TableCell((Text("h"),)),), ((TableCell((*pieces, Text("one more"))),),))
    with pytest.raises(LimitError, match=r"typst: a paragraph has more than 5,000 inline pieces"
                       r".*pdf_engine 'weasyprint'"):
        render((cell,))


@pytest.mark.slow
def test_a_document_of_too_many_pieces_is_refused_before_typst_starts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A large table passes every input limit, but Typst's compile of it (minutes, gigabytes)
    cannot be interrupted: refused at once with the way out, and Typst never starts."""
    def never(*args: object, **kwargs: object) -> object:
        raise AssertionError("Typst was started")

    monkeypatch.setattr(typst_writer, "compile_source", never)
    table = "|" + "a|" * 50 + "\n|" + "-|" * 50 + "\n" + ("|" + "x [[S:1]]|" * 50 + "\n") * 600
    with pytest.raises(LimitError, match=r"typst: the document has more than 80,000 pieces"
                       r".*pdf_engine 'weasyprint'"):
        api_render(table, sources_pool=[{"sid": 1, "title": "One", "url": "https://e.example"}],
                   formats=["pdf"], out_dir=tmp_path, pdf_engine="typst")
    assert not list(tmp_path.glob("*.pdf"))  # 1,000 such rows took Typst 20 s and 2.2 GB


def test_the_document_bound_weighs_cells_entries_and_code_lines() -> None:
    cell = TableCell((Text("x"), Cite((1,))))
    table = Table((cell,), ((cell, cell),) * 2)  # 5 cells of 2 pieces
    code = CodeBlock("a\nb\nc\n", "python")  # 3 lines, with or without the last newline
    assert document_pieces((table,)) == 5 * (2 + CELL_PIECES)
    assert document_pieces((code,)) == document_pieces((CodeBlock("a\nb\nc"),)) == 3 * 4
    assert CODE_LINE_PIECES == 4
    assert document_pieces((para(Text("x")),), entries=3) == 1 + 3 * ENTRY_PIECES
    lines = MAX_DOCUMENT_PIECES // CODE_LINE_PIECES
    assert document_pieces((CodeBlock("x\n" * lines),)) == MAX_DOCUMENT_PIECES  # accepted
    assert document_pieces((CodeBlock("x\n" * (lines + 1)),)) > MAX_DOCUMENT_PIECES


@pytest.mark.slow
def test_the_benchmarks_500_page_report_stays_within_the_document_bound() -> None:
    """bench/typst_bench.py renders the long sample ten times over with Typst."""
    text = (ROOT / "samples" / "long-report.md").read_text("utf-8")
    pool = SourcePool.load(ROOT / "samples" / "long-report.pool.json")
    rdoc = resolve(read_markdown("\n\n".join([text] * 10)), pool)
    weighed = document_pieces(rdoc.document.blocks, len(rdoc.entries))
    assert weighed <= MAX_DOCUMENT_PIECES / 2, weighed  # with room for a longer report


def test_the_pieces_a_line_cannot_break_are_named_in_their_look() -> None:
    """Typst measures a column's min-content width on these: words between spaces and after
    dashes, each CJK character, bold in the header, code in its face; a long word (it may break
    anywhere) and a citation number are no such piece."""
    header = [TableCell((Text("Region"),)), TableCell((Text("Note"),))]
    row = [TableCell((Text("well-known 15–30% -5 "), Code("x_y"), Cite((1,)))),
           TableCell((Text("東京 " + "Unbroken" * 4),))]
    pieces = column_pieces([header, row], 2, header=True)
    assert pieces[0] == '(strong("Region"), "well-", "known", "15–")'  # the four longest
    assert pieces[1] == '(strong("Note"), "東", "京")'
    assert column_pieces([row], 2, header=False)[0] == '("well-", "known", "15–", "30%")'
    assert column_pieces([[TableCell((Code("x_y"), Text(" -5")))]], 1, header=False) == [
        '(code-span("x_y"), "-5")']


def test_a_column_of_in_line_citations_is_sized_by_their_text() -> None:
    """A style's citation or a linked title (``--citation-format inline-links``) is text the
    column shows: its cell is among those measured for the column's width, so the other
    columns keep room for their words."""
    title = Text("Levelized Cost of Energy+ (LCOE+) 2024, Annual Technology Baseline")
    cite = Cite((1,), children=(Link("#src-1", (title,)),))
    header = tuple(TableCell((Text(t),)) for t in ("Technology", "Capacity factor", "Source"))
    row = (TableCell((Text("Utility-scale PV"),)), TableCell((Text("15–30%"),)),
           TableCell((Text("Lazard "), cite)))
    plain = (TableCell((Text("Solar"),)), TableCell((Text("20%"),)), TableCell((Text("Lazard"),)))
    assert widest_cells([header, row, *[plain] * 5], 3)[2] == "(5, 2, 8, 11)"  # cited first
    _, pdf = render((Table(header, (row,)),))
    shown = " ".join(pdfium.PdfDocument(pdf)[0].get_textpage().get_text_range().split())
    assert "Technology Capacity factor Source Utility-scale PV 15–30%" in shown


def test_a_long_inline_code_span_is_shaded_without_padding_between_its_pieces() -> None:
    assert code_span("short_name()", bidi=False) == '#code-span([#"short_name()";]);'
    long = code_span("a_long_identifier_" * 3, bidi=False)
    assert long.endswith(", breakable: true);") and "#box[" in long
    spaced = code_span("a_long_identifier_" * 3, bidi=True)  # a document with RTL text
    assert spaced.startswith('#code-span([#"a_";#text(size: 1em, "\\u{200b}");#"long_";')
    assert spaced.endswith(", breakable: true);") and "#box[" not in spaced


def test_the_page_count_is_read_from_the_page_tree() -> None:
    _, pdf = render(tuple(para(Text(f"paragraph {i} " * 40)) for i in range(60)))
    assert page_count(pdf) == len(pdfium.PdfDocument(pdf)) >= 3
    with pytest.raises(LimitError, match=r"limits\.max_pages"):
        render(tuple(para(Text(f"paragraph {i} " * 40)) for i in range(60)),
               limits=Limits(max_pages=2))  # fmt: skip


# ---------------------------------------------------------------- confinement


def _png(path: Path, color: tuple[int, int, int]) -> None:
    PILImage.new("RGB", (40, 20), color).save(path)


def test_images_come_only_through_the_sandbox(tmp_path: Path) -> None:
    base, outside = tmp_path / "base", tmp_path / "outside"
    base.mkdir()
    outside.mkdir()
    _png(base / "ok.png", (0, 128, 0))
    _png(outside / "secret.png", (1, 2, 3))
    (base / "link.png").symlink_to(outside / "secret.png")
    PILImage.new("RGB", (30, 10), (0, 0, 200)).save(base / "ok.bmp")
    refs = ["ok.png", "ok.bmp", "ok.png", "link.png", "../outside/secret.png",
            str(outside / "secret.png"), f"file://{outside}/secret.png",
            "https://example.org/x.png", "/etc/passwd"]  # fmt: skip
    blocks = tuple(Figure(Image(ref, alt=f"ref{i}")) for i, ref in enumerate(refs))
    rdoc = resolve(Document(blocks), POOL)
    options = RenderOptions(base_dir=base)
    source = typst_source(rdoc, options)
    # the BMP became a PNG; the image shown twice is handed over once
    assert sorted(source.images) == ["image-1.png", "image-2.png"]
    assert all(data.startswith(b"\x89PNG") for data in source.images.values())
    pdf, _, _ = typst_pdf(rdoc, options)
    assert len(re.findall(rb"/Subtype\s*/Image", pdf)) == 2
    shown = squeeze(pdf_text(pdf))
    assert all(f"[Image:ref{i}]" in shown for i in range(3, len(refs)))
    assert "ref0" not in shown and "ref1" not in shown and "ref2" not in shown


def test_image_bytes_are_counted_once_per_distinct_image(tmp_path: Path) -> None:
    _png(tmp_path / "ok.png", (0, 128, 0))
    size = (tmp_path / "ok.png").stat().st_size
    blocks = tuple(Figure(Image("ok.png", alt="x")) for _ in range(3))
    rdoc = resolve(Document(blocks), POOL)
    typst_source(rdoc, RenderOptions(base_dir=tmp_path, limits=Limits(max_image_bytes=size)))
    with pytest.raises(LimitError, match="max_image_bytes"):
        typst_source(rdoc, RenderOptions(base_dir=tmp_path,
                                         limits=Limits(max_image_bytes=size - 1)))


def test_typst_sees_only_the_report_fonts() -> None:
    families = set(typst_fonts.report_fonts().families())
    assert {"Noto Sans", "Noto Sans Arabic", "Noto Sans Devanagari", "DejaVu Sans Mono",
            "Noto Color Emoji", "Noto Sans CJK SC"} <= families
    assert "Noto Sans CJK SC" not in set(typst_fonts.report_fonts(cjk=False).families())
    system = set(typst.Fonts(include_system_fonts=True).families())
    assert len(system - families) > 10, "the system has fonts Typst is not given"


def test_the_symbols_the_body_stack_draws_from_cjk_are_read_from_the_fonts() -> None:
    """Arrows, operators and shapes no face before Noto Sans CJK has: the writer loads the CJK
    fonts for them (a document holding only the back-link's ↑, which is the markup's own and
    drawn in DejaVu Sans, does not), so Typst draws them from the face WeasyPrint does."""
    if not typst_fonts.cjk_symbols():
        pytest.skip("Noto Sans CJK is not installed")
    assert set("→←↑≤≥★■◦▪") <= typst_fonts.cjk_symbols()
    assert not set("•…×°–A") & typst_fonts.cjk_symbols()  # Noto Sans has them
    assert typst_fonts.cjk_symbols_in("a ≥ b → c, → d") == "→≥"
    assert typst_fonts.cjk_symbols_in("plain text, 汉字") == ""
    cited = typst_source(resolve(read_markdown("# T\n\nClaim [[S:1]].\n"), POOL), RenderOptions())
    assert typst_fonts.cjk_symbols_in(cited.text) == ""


def test_a_compile_finds_the_cjk_symbols_once_and_draws_them_in_the_cjk_face(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The symbols decide whether the CJK fonts are loaded and are listed for the template:
    one reading of the text serves both, and the PDF draws them from Noto Sans CJK."""
    if not typst_fonts.cjk_symbols():
        pytest.skip("Noto Sans CJK is not installed")
    read: list[str] = []
    find = typst_writer.cjk_symbols_in
    monkeypatch.setattr(typst_writer, "cjk_symbols_in",
                        lambda text: read.append(text) or find(text))
    rdoc = resolve(read_markdown("# T\n\nIf a ≥ b then → c [[S:1]].\n"), POOL)
    pdf, _, _ = typst_pdf(rdoc, RenderOptions())
    assert len(read) == 1
    page = PdfReader(io.BytesIO(pdf)).pages[0]
    fonts = {str(font.get_object()["/BaseFont"]) for font in page["/Resources"]["/Font"].values()}
    assert any("NotoSansCJK" in name for name in fonts), fonts
    assert "→ c" in page.extract_text() and "≥" in page.extract_text()


def test_a_list_reads_the_cjk_symbols_only_for_a_nested_bullet() -> None:
    """Whether a bullet is drawn from Noto Sans CJK is asked of the fonts only for ◦ and ▪ (the
    symbol blocks): a report whose lists are not nested never reads the CJK face's 44,810 code
    points (16 ms of every such render), and the nested bullets still get their CJK face."""
    flat = read_markdown("- one [[S:1]]\n- two\n")
    nested = read_markdown("- one [[S:1]]\n  - two\n    - three\n")
    typst_fonts.cjk_symbols.cache_clear()
    typst_source(resolve(flat, POOL), RenderOptions())
    assert typst_fonts.cjk_symbols.cache_info().misses == 0
    markup = typst_source(resolve(nested, POOL), RenderOptions()).text
    assert typst_fonts.cjk_symbols.cache_info().misses == 1
    if typst_fonts.cjk_symbols():
        assert markup.count("cjk: true") == 2  # ◦ and ▪


def _space_advance(face: str) -> float:
    """The advance of ``face``'s space (a file name) in em."""
    from fontTools.ttLib import TTFont

    path = font_index().get(face.lower())
    if path is None:
        pytest.skip(f"{face} is not installed")
    font = TTFont(path, fontNumber=0, lazy=True)
    try:
        return font["hmtx"][font.getBestCmap()[0x20]][0] / font["head"].unitsPerEm
    finally:
        font.close()


@pytest.mark.parametrize("face", typst_fonts.OTHER_FACES, ids=lambda face: face.key)
def test_a_script_face_names_its_space_where_it_differs_from_the_line_fonts(
    face: typst_fonts.ScriptFace,
) -> None:
    """report.typ's script-spaces draws a space after the script in the script's face only
    where that face's space is not as wide as Noto Sans's (text) or DejaVu Sans Mono's (code)."""
    for named, file, line_font in ((face.text_space, face.text_file, "NotoSans-Regular.ttf"),
                                   (face.code_space, face.code_file, "DejaVuSansMono.ttf")):
        differs = abs(_space_advance(file) - _space_advance(line_font)) > 0.001
        assert (named is not None) == differs, (face.key, file, named)


def test_the_font_directory_links_to_the_fonts_and_its_removal_keeps_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Hard links where allowed, symbolic links where not (another file system); removing the
    directory at exit leaves the installed fonts in place."""
    fonts = typst_fonts.font_files(cjk=False)[:3]
    hard = typst_fonts.font_directory(fonts)

    def refused(target: str, name: str) -> None:
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(typst_fonts.os, "link", refused)
    soft = typst_fonts.font_directory(fonts)
    for directory, symbolic in ((hard, False), (soft, True)):
        links = sorted(Path(directory).iterdir())
        assert [link.name.split("-", 1)[1] for link in links] == [Path(f).name for f in fonts]
        assert all(link.is_symlink() == symbolic for link in links)
        assert all(link.samefile(font) for link, font in zip(links, fonts, strict=True))
        typst_fonts._remove_if_owner(directory, os.getpid())
        assert not Path(directory).exists()
    assert all(Path(font).is_file() for font in fonts)


@pytest.mark.parametrize(
    "code",
    ['#read("/etc/passwd")', '#read("../../../../../../etc/passwd")', '#image("/etc/passwd")',
     '#sys.inputs.at("secret")', '#read("' + str(Path(__file__).resolve()) + '")',
     '#import "@preview/example:0.1.0": *', '#include "x.typ"',
     '#import("@preview/example:0.1.0")'],
)
def test_the_compile_itself_is_confined(code: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Even markup that asked (ours never does) reads nothing outside the empty root, no
    inputs and no packages (no import is ever compiled: Typst would download a missing
    package): a second line of defence behind the escaping."""
    monkeypatch.setattr(typst_writer, "typst_source", lambda *a, **k: TypstSource(f"{code}\n"))
    reasons = "file not found|escape the project root|does not contain key|reach beyond"
    with pytest.raises(RenderError, match=f"Typst .*({reasons})"):
        typst_pdf(resolve(Document(()), POOL), RenderOptions())


def test_the_template_imports_nothing() -> None:
    typst_writer.refuse_reaching_out(typst_writer.report_template())
    typst_writer.refuse_reaching_out('#"#import \\"@preview/x:1.0.0\\"";')  # text, not code


@pytest.mark.parametrize(
    ("markup", "refused"),
    [("#import", True), ('#let x = "a" \nimport', True), ("(include)", True), ("#x.@local", True),
     ("#importx", False), ("#x-include", False), ("#reimport", False), ("#include_x", False),
     ('#"import"; #"include"', False), ('#"a" + "@preview"', False), ("#imports", False)],
)
def test_only_code_that_imports_or_includes_is_refused(markup: str, refused: bool) -> None:
    """Whole words ``import``/``include`` and ``@preview``/``@local`` outside string literals;
    not parts of longer words, not the author's text."""
    if refused:
        with pytest.raises(RenderError, match="reach beyond"):
            typst_writer.refuse_reaching_out(markup)
    else:
        typst_writer.refuse_reaching_out(markup)


def _resident_mib() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        return int(next(line.split()[1] for line in status if line.startswith("VmRSS"))) / 1024


@pytest.mark.slow
def test_a_long_lived_process_keeps_one_document_of_layout_cache() -> None:
    """Typst memoizes layout process-wide; without the writer's eviction every distinct report
    stays cached for ten more compiles (about 1 MiB per page)."""
    def report(run: int) -> ResolvedDocument:
        words = " ".join(f"claim{run}x{i}" for i in range(40))
        return resolve(Document(tuple(para(Text(f"{words} {p}")) for p in range(250))), POOL)

    for run in range(2):  # fonts, template and the first document's cache are in place
        typst_pdf(report(run), RenderOptions())
    before = _resident_mib()
    for run in range(2, 14):
        _, pages, _ = typst_pdf(report(run), RenderOptions())
        assert pages >= 10
    assert _resident_mib() - before < 40


def test_pdf_ua_takes_images_without_alt_text_as_decoration(tmp_path: Path) -> None:
    """PDF/UA-1 wants alt text on every figure: an image without one (HTML's alt="") is marked
    as an artifact instead, so the render succeeds and the image still shows."""
    _png(tmp_path / "x.png", (0, 100, 0))
    blocks = (Figure(Image("x.png")), para(Text("inline "), Image("x.png", alt="a chart")),
              Table((), ((CELL, CELL),)))  # fmt: skip
    options = RenderOptions(base_dir=tmp_path, pdf_variant="pdf/ua-1", title="T")
    pdf, _, _ = typst_pdf(resolve(Document(blocks), POOL), options)
    root = PdfReader(io.BytesIO(pdf)).trailer["/Root"]
    assert "/StructTreeRoot" in root and b"pdfuaid" in root["/Metadata"].get_object().get_data()
    assert len(re.findall(rb"/Subtype\s*/Image", pdf)) == 1  # one image, shown twice


def test_every_node_of_the_ir_fixture_keeps_its_text(sample_pool: list[dict[str, object]]) -> None:
    """The ``every_node`` fixture (every block and inline kind) through Typst: the text of each
    text, code and raw inline is in the PDF, in order."""
    from renderers.document import iter_inlines
    from tests.support.ir import load_ir
    from tests.support.render import resolve_rows

    rdoc = resolve_rows(load_ir("every_node"), sample_pool)
    pdf, _, notes = typst_pdf(rdoc, RenderOptions())
    assert notes == []
    shown = squeeze(pdf_text(pdf))
    position = 0
    body = tuple(b for b in rdoc.document.blocks if not isinstance(b, FootnoteDef))
    pieces = [n.text for n in iter_inlines(body) if isinstance(n, Text | Code | RawInline)]
    assert len(pieces) > 20
    for piece in filter(None, map(squeeze, pieces)):
        found = shown.find(piece, position)
        assert found >= 0, (piece, shown[position : position + 80])
        position = found + len(piece)


def _outline(pdf: bytes) -> list[object]:
    """The PDF's outline as nested lists of titles."""
    def titles(items: Sequence[Any]) -> list[object]:
        return [titles(item) if isinstance(item, list) else item.title
                for item in items]
    return titles(PdfReader(io.BytesIO(pdf)).outline)


@pytest.mark.parametrize("level, expected", [
    (2, ["Title", ["Part", "Sources"]]),
    (3, ["Title", ["Part", ["Sources"]]]),
])
def test_the_added_sections_take_their_level_from_python(
    level: int, expected: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Sources heading's level is ``common.ADDED_SECTION_LEVEL``, handed to the template in
    the prelude: the template writes no level of its own."""
    assert "heading(level: 2" not in typst_writer.report_template()
    monkeypatch.setattr(typst_writer, "ADDED_SECTION_LEVEL", level)
    rdoc = resolve(read_markdown("# Title\n\n## Part\n\nText [[S:1]].\n"), POOL)
    pdf, _, _ = typst_pdf(rdoc, RenderOptions())
    assert _outline(pdf) == expected


@pytest.mark.parametrize("text, expected", [
    ("Text [[S:1]].\n", ["Sources"]),
    ("Text[^1] [[S:1]].\n\n[^1]: A note.\n", ["Notes", "Sources"]),
    ("Text [[S:1]].\n\n### Part\n", ["Part", ["Sources"]]),  # levels made continuous
])
def test_pdf_ua_a_document_without_headings_gets_top_level_added_sections(
    text: str, expected: list[object]
) -> None:
    """PDF/UA-1 wants the first heading at level 1: a headingless answer's Sources heading at
    level 2 made Typst refuse the whole PDF (an internal error)."""
    options = RenderOptions(pdf_variant="pdf/ua-1")
    pdf, _, _ = typst_pdf(resolve(read_markdown(text), POOL), options)
    assert _outline(pdf) == expected
    assert "Text" in pdf_text(pdf)


@pytest.mark.parametrize("checked", [None, True])
def test_a_list_numbered_from_below_zero_shows_its_numbers(checked: bool | None) -> None:
    """HTML's ``<ol start="-2">`` (browsers count -2, -1, 0 …): Typst's enum refuses a start
    below zero, which was an internal error; the numbers are shifted by hand instead."""
    items = tuple(ListItem((para(Text(word)),), checked=checked if n == 0 else None)
                  for n, word in enumerate(("alpha", "beta", "gamma", "delta")))
    pdf, _, _ = typst_pdf(resolve(Document((OrderedList(items, start=-2),)), POOL),
                          RenderOptions())
    text = pdf_text(pdf)
    assert "-1. beta" in text and "0. gamma" in text and "1. delta" in text
    assert ("-2. alpha" in text) is (checked is None)  # a task item shows its box instead


@pytest.mark.parametrize("variant", ["pdf/a-3b", "pdf/ua-1"])
def test_a_character_no_font_draws_is_an_input_error_under_a_pdf_standard(
    variant: PdfVariant,
) -> None:
    """Typst refuses text without a glyph under PDF/A and PDF/UA; that was an internal error
    ("the Typst engine could not lay out"), now the input's, naming the text and what works."""
    rdoc = resolve(read_markdown("Linear B \U00010000 here.\n"), POOL)
    expected = rf"text \"\U00010000\" .*{re.escape(variant)}.*no pdf_variant"
    with pytest.raises(InputError, match=expected):
        typst_pdf(rdoc, RenderOptions(pdf_variant=variant))
    assert pdf_text(typst_pdf(rdoc, RenderOptions())[0]).startswith("Linear B")


def _line_starts(pdf: bytes) -> list[tuple[str, float]]:
    """Each text line of the first page: its text and the left edge of its first glyph."""
    page = pdfium.PdfDocument(pdf)[0]
    textpage = page.get_textpage()
    text = textpage.get_text_range()
    lines, start = [], 0
    for line in text.split("\r\n"):
        if line.strip():
            offset = start + len(line) - len(line.lstrip())
            lines.append((line.strip(), textpage.get_charbox(offset, loose=True)[0]))
        start += len(line) + 2
    return lines


@pytest.mark.parametrize("language", ["", "python"])
def test_a_wrapped_code_line_hangs_in_past_its_own_indentation(language: str) -> None:
    """A code line too long for the block goes on four characters further in than the line's
    own indentation: never from the left edge, where it would read as a line of its own."""
    long = "    result = compute(" + ", ".join(f"argument_{i}" for i in range(14)) + ")"
    code = f"def f():\n{long}\n\n    return result\n"
    pdf, _, _ = typst_pdf(resolve(Document((CodeBlock(code, language),)), POOL),
                          RenderOptions())
    lines = [line for line in _line_starts(pdf) if not _FOOTER.fullmatch(squeeze(line[0]))]
    texts = [text for text, _ in lines]
    assert texts[0] == "def f():" and texts[1].startswith("result = compute(")
    assert texts[-1] == "return result" and len(lines) >= 4  # the long line wrapped
    left, indented = lines[0][1], lines[1][1]
    advance = (indented - left) / 4  # four spaces of indentation
    for _, x in lines[2:-1]:  # the wrapped part
        assert x == pytest.approx(indented + 4 * advance, abs=0.5)
    assert lines[-1][1] == pytest.approx(indented, abs=0.5)
    blank = squeeze(pdf_text(pdf))
    assert "0return" not in blank  # the blank line's hidden text is not in the PDF


def test_renders_in_threads_age_the_layout_cache_one_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every compile but the first ages Typst's cache out through one shared compiler of an
    empty document; two threads compiling it at once failed the render ("RuntimeError:
    Already borrowed": 15 of 24 Typst PDFs rendered by six threads). One thread at a time."""
    import threading
    import time

    from renderers.writers.typst.writer import _LayoutCache

    inside, overlapped = [0], []

    class Empty:
        def compile(self, **_: object) -> None:
            inside[0] += 1
            overlapped.append(inside[0] > 1)
            time.sleep(0.001)
            inside[0] -= 1

    cache = _LayoutCache()
    cache.used = True
    monkeypatch.setattr(cache, "_empty", Empty())
    threads = [threading.Thread(target=cache.release) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(overlapped) == 4 * _LayoutCache.EVICTIONS and not any(overlapped)
