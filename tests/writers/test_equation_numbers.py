"""Numbered displayed equations as pandoc-crossref writes them (``$$ … $$ {#eq:a}``, ``@eq:a``):
the reader's labels, the cross-reference pass's numbers and words, and each format's file read
back: the number "(1)" (or a ``\\tag``) at the right margin, references linked to the formula.
The PDF from WeasyPrint and the DOCX through LibreOffice are in
``test_equation_numbers_print.py``."""

from __future__ import annotations

import io
import re
import zipfile

import lxml.html
import pytest
from lxml import etree
from pptx import Presentation

from renderers.crossref import number_crossrefs
from renderers.document import CrossRef, Link, Math, Paragraph, iter_inlines, plain_text
from renderers.math import parse_tex
from renderers.math.marks import equation_mark
from renderers.readers.html import read_html
from renderers.readers.markdown import read_markdown
from renderers.writers.html.math import EQUATION_CSS
from tests.helpers import internal_links, pdf_lines
from tests.support.render import render_markdown

MARKDOWN = r"""Energy is @eq:energy; see [@eq-gauss; @eq:square] and [-@eq-gauss], and @Eq:long.

$$ E = mc^2 $$ {#eq:energy}

$$ \int_0^\infty e^{-x^2}\,dx = \frac{\sqrt{\pi}}{2} $$ {#eq-gauss}

$$ a^2 + b^2 = c^2 \tag{P} $$

$$ \begin{aligned} f(x) &= (x+1)^2 \\ &= x^2 + 2x + 1 \end{aligned} $$ {#eq:square}

$$ x = y $$

$$ \sum_{k=1}^{n} k = LONG $$ {#eq:long}
""".replace("LONG", " + ".join(f"a_{{{n}}}" for n in range(1, 18)))
#: The prose line as every format words it.
WORDED = "Energy is Equation 1; see Equations 2 and 3 and 2, and Equation 4."
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
M = "http://schemas.openxmlformats.org/officeDocument/2006/math"


def numbered(markdown: str) -> tuple[list[Math], list[CrossRef], list[str]]:
    document = read_markdown(markdown)
    blocks, notes = number_crossrefs(document.blocks)
    nodes = list(iter_inlines(blocks))
    return ([n for n in nodes if isinstance(n, Math) and n.display],
            [n for n in nodes if isinstance(n, CrossRef)], [note.message for note in notes])


def test_a_label_after_the_closing_dollars_numbers_the_formula_in_document_order() -> None:
    formulas, refs, notes = numbered(MARKDOWN)
    assert [(f.label, f.number) for f in formulas] == [
        ("eq:energy", 1), ("eq-gauss", 2), ("", 0), ("eq:square", 3), ("", 0), ("eq:long", 4)]
    assert [equation_mark(f) for f in formulas] == ["(1)", "(2)", "(P)", "(3)", "", "(4)"]
    assert [f.anchor for f in formulas] == ["eq-1", "eq-2", "", "eq-3", "", "eq-4"]
    assert [(r.number, r.form) for r in refs] == [
        (1, "name"), (2, "names"), (3, "number"), (2, "number"), (4, "name")]
    assert notes == []


def test_the_label_must_follow_on_the_same_line_and_name_an_equation() -> None:
    formulas, _, _ = numbered(
        "$$ a $$\n{#eq:a}\n\n$$ b $$ {#fig:b}\n\nText $$ c $$ {#eq:c} after.\n")
    assert [(f.tex, f.label) for f in formulas] == [("a", ""), ("b", ""), ("c", "eq:c")]
    document = read_markdown("Text $$ c $$ {#eq:c} after.\n")
    (paragraph,) = document.blocks
    assert isinstance(paragraph, Paragraph)
    assert plain_text(paragraph.children) == "Text c after."


def test_a_tagged_formula_takes_no_number_and_a_reference_to_it_stays_text() -> None:
    formulas, refs, notes = numbered(
        "See @eq:t and @eq:n.\n\n$$ a \\tag{A} $$ {#eq:t}\n\n$$ b $$ {#eq:n}\n")
    assert [(f.number, equation_mark(f)) for f in formulas] == [(0, "(A)"), (1, "(1)")]
    assert [r.label for r in refs] == ["eq:n"]  # @eq:t is its text again
    (note,) = notes
    assert "'eq:t'" in note and "\\tag" in note


def test_unknown_and_duplicate_equation_labels_are_noted() -> None:
    _, _, notes = numbered("See @eq:none.\n\n$$ a $$ {#eq:a}\n\n$$ b $$ {#eq:a}\n")
    assert any("unknown label 'eq:none'" in note for note in notes)
    assert any("'eq:a' is defined twice" in note for note in notes)


def test_the_margin_tag_is_taken_out_of_the_formula_and_align_rows_take_no_numbers() -> None:
    tagged = parse_tex(r"E = mc^2 \tag{1.5}", True)
    assert tagged.tag == "(1.5)" and "1.5" not in repr(tagged.root)
    assert parse_tex(r"a = b \tag*{$\star$ 2}", True).tag == "⋆ 2"
    assert parse_tex(r"\begin{equation} x \tag{Q} \end{equation}", True).tag == "(Q)"
    in_row = parse_tex(r"\begin{align} a &= b \tag{R} \\ c &= d \end{align}", True)
    assert in_row.tag == "" and "(R)" in repr(in_row.root)  # a row's tag stays in its row
    rows = parse_tex(r"\begin{align} a &= b \\ c &= d \end{align}", True)
    assert "(1)" not in repr(rows.root) and "(2)" not in repr(rows.root)


@pytest.mark.parametrize(("lang", "expected"), [
    ("de", "Energy is Gleichung 1; see Gleichungen 2 und 3 and 2, and Gleichung 4."),
    ("ja", "Energy is 式1; see 式2、3 and 2, and 式4."),
])
def test_references_are_worded_in_the_document_language(lang: str, expected: str) -> None:
    html = render_markdown("html", f"---\nlang: {lang}\n---\n\n" + MARKDOWN, []).decode()
    root = lxml.html.document_fromstring(html)
    (paragraph,) = [p for p in root.xpath("//p") if p.text_content().startswith("Energy")]
    assert paragraph.text_content() == expected


def test_html_sets_the_number_at_the_margin_and_links_references_to_the_formula() -> None:
    html = render_markdown("html", MARKDOWN, []).decode()
    assert EQUATION_CSS in html
    root = lxml.html.document_fromstring(html)
    equations = root.xpath("//span[@class='equation']")
    assert [(e.get("id"), e.xpath("string(span[@class='eqno'])")) for e in equations] == [
        ("eq-1", "(1)"), ("eq-2", "(2)"), (None, "(P)"), ("eq-3", "(3)"), ("eq-4", "(4)")]
    for equation in equations:  # the formula first, then its mark
        assert [c.get("class") for c in equation] == ["math display", "eqno"]
    assert len(root.xpath("//span[@class='math display']")) == 6  # x = y: no mark, no wrapper
    (paragraph,) = [p for p in root.xpath("//p") if p.text_content().startswith("Energy")]
    assert paragraph.text_content() == WORDED
    assert [(a.get("href"), a.text) for a in paragraph.xpath(".//a")] == [
        ("#eq-1", "Equation 1"), ("#eq-2", "2"), ("#eq-3", "3"), ("#eq-2", "2"),
        ("#eq-4", "Equation 4")]


def test_the_css_centres_the_formula_and_puts_the_mark_at_the_right_margin() -> None:
    rules = dict(re.findall(r"([^{}]+)\{([^{}]*)\}", EQUATION_CSS))
    assert "display:flex" in rules[".equation"] and "flex-wrap:wrap" in rules[".equation"]
    assert "align-items:center" in rules[".equation"]  # centred on the formula's height
    assert "flex:1 1 0" in rules[".equation::before"]  # the spacer and the mark share alike
    assert "flex:1 1 0" in rules[".eqno"] and "text-align:right" in rules[".eqno"]


def test_markdown_keeps_the_labels_and_reads_back_numbered_the_same() -> None:
    text = render_markdown("md", MARKDOWN, []).decode()
    assert "$$E = mc^2$$ {#eq:energy}" in text and "{#eq-gauss}" in text
    assert "$$a^2 + b^2 = c^2 \\tag{P}$$\n" in text and "$$x = y$$\n" in text
    assert "[Equation 1](#eq-1)" in text and "[2](#eq-2)" in text
    again = render_markdown("md", text, []).decode()
    assert again == text
    back = read_markdown(text)
    assert back.notes == ()
    html = lxml.html.document_fromstring(render_markdown("html", text, []))
    assert html.xpath("//span[@class='equation']/@id") == ["eq-1", "eq-2", "eq-3", "eq-4"]


def test_an_html_page_citerender_wrote_reads_back_its_numbered_equations() -> None:
    page = render_markdown("html", MARKDOWN, []).decode()
    document = read_html(page)
    formulas = [n for n in iter_inlines(document.blocks) if isinstance(n, Math) and n.display]
    assert [f.label for f in formulas] == ["eq:1", "eq:2", "", "eq:3", "", "eq:4"]
    refs = [n.label for n in iter_inlines(document.blocks) if isinstance(n, CrossRef)]
    assert refs == ["eq:1", "eq:4"]  # the numbers alone are links showing them, as figures'
    links = [n.url for n in iter_inlines(document.blocks) if isinstance(n, Link)]
    assert links == ["#eq-2", "#eq-3", "#eq-2"]
    assert "(1)" not in plain_text(document.blocks[1].children)  # the margin number is left out
    blocks, notes = number_crossrefs(document.blocks)
    assert notes == []
    assert [f.number for f in iter_inlines(blocks) if isinstance(f, Math) and f.label] == [
        1, 2, 3, 4]


def test_docx_puts_the_formula_at_a_centre_tab_and_the_number_at_a_right_tab() -> None:
    package = zipfile.ZipFile(io.BytesIO(render_markdown("docx", MARKDOWN, [])))
    body = etree.fromstring(package.read("word/document.xml"))
    marked = [p for p in body.iter(f"{W}p") if p.find(f"{W}pPr/{W}tabs") is not None]
    assert ["".join(p.xpath("w:r/w:t/text()", namespaces={"w": W[1:-1]})) for p in marked] == [
        "(1)", "(2)", "(P)", "(3)", "(4)"]
    for p in marked:
        stops = [(t.get(f"{W}val"), int(t.get(f"{W}pos"))) for t in p.iter(f"{W}tab")
                 if t.get(f"{W}val")]
        (centre, right) = stops
        assert centre[0] == "center" and right[0] == "right" and centre[1] * 2 == right[1]
        kinds = [etree.QName(c).localname for c in p if etree.QName(c).localname != "pPr"]
        runs = [k for k in kinds if k != "bookmarkStart" and k != "bookmarkEnd"]
        assert runs == ["r", "oMath", "r"]  # tab, the formula inline, tab and the mark
    marks = [p.find(f"{W}bookmarkStart") for p in marked]
    names = [m.get(f"{W}name") if m is not None else None for m in marks]
    assert names == ["eq_1", "eq_2", None, "eq_3", "eq_4"]
    assert len(body.findall(f".//{{{M}}}oMathPara")) == 1  # x = y, centred by Word
    (paragraph,) = [p for p in body.iter(f"{W}p") if "".join(p.itertext()).startswith("Energy")]
    assert "".join(paragraph.itertext()) == WORDED
    assert [h.get(f"{W}anchor") for h in paragraph.iter(f"{W}hyperlink")] == [
        "eq_1", "eq_2", "eq_3", "eq_2", "eq_4"]


def test_pptx_sets_the_number_beside_the_picture_and_references_jump_to_it() -> None:
    deck = Presentation(io.BytesIO(render_markdown("pptx", MARKDOWN, [])))
    shapes = [shape for slide in deck.slides for shape in slide.shapes]
    pictures = [s for s in shapes if s.shape_type == 13]
    marks = [s for s in shapes if s.has_text_frame and re.fullmatch(r"\(\w\)", s.text_frame.text)]
    assert [m.text_frame.text for m in marks] == ["(1)", "(2)", "(P)", "(3)", "(4)"]
    for mark in marks:
        (picture,) = [p for p in pictures if p.top <= mark.top + mark.height / 2
                      <= p.top + p.height and p._parent is mark._parent]
        assert picture.left + picture.width <= mark.left + mark.width  # beside, not over
        centre = picture.top + picture.height / 2
        assert abs(mark.top + mark.height / 2 - centre) < 12700  # within a point
    texts = [s for s in shapes if s.has_text_frame and s.text_frame.text.startswith("Energy")]
    jumps = [run.text for run in texts[0].text_frame.paragraphs[0].runs
             if run._r.xpath(".//a:hlinkClick[@action='ppaction://hlinksldjump']")]
    assert jumps == ["Equation 1", "2", "3", "2", "Equation 4"]


def test_typst_pdf_sets_the_numbers_at_the_right_margin_linked_from_the_text() -> None:
    check_pdf(render_markdown("pdf", MARKDOWN, [], pdf_engine="typst"))
    check_widths(render_markdown("pdf", WIDE, [], pdf_engine="typst"))


def terms(count: int) -> str:
    return " + ".join(f"a_{{{n}}}" for n in range(1, count + 1))


#: Formulas of three widths: centred with the number on both sides; too wide for that, so
#: moved left to the number; too wide for the number beside it, which goes below.
WIDE = (f"$$ {terms(10)} $$ {{#eq:fit}}\n\n$$ {terms(19)} $$ {{#eq:wide}}\n\n"
        f"$$ {terms(26)} $$ {{#eq:wider}}\n")

Box = tuple[float, float, float, float]  # left, bottom, right, top (PDF points, y up)


def marks_and_formulas(pdf: bytes) -> tuple[float, list[tuple[Box, Box]]]:
    """The first page's width, and each "(N)" mark's box with the box of the drawing (the
    formula's outlined glyphs) nearest above or beside it."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    page = pdfium.PdfDocument(pdf)[0]
    text = page.get_textpage()
    marks: list[Box] = []
    for index in range(text.count_chars()):
        if text.get_text_range(index, 1) == "(":
            end = next(i for i in range(index, text.count_chars())
                       if text.get_text_range(i, 1) == ")")
            boxes = [text.get_charbox(i) for i in (index, end)]
            marks.append((boxes[0][0], boxes[0][1], boxes[1][2], boxes[1][3]))
    paths = [o.get_bounds() for o in page.get_objects(max_depth=3)
             if o.type == raw.FPDF_PAGEOBJ_PATH]
    drawings: list[Box] = []
    for left, bottom, right, top in sorted(paths, key=lambda b: -b[3]):
        last = drawings[-1] if drawings else None
        if last is not None and bottom <= last[3] and top >= last[1] - 6:
            drawings[-1] = (min(left, last[0]), min(bottom, last[1]), max(right, last[2]),
                            max(top, last[3]))
        else:
            drawings.append((left, bottom, right, top))
    pairs = []
    for mark in marks:
        above = [d for d in drawings if d[1] <= mark[3] + 20 and d[3] >= mark[1]]
        pairs.append((mark, min(above, key=lambda d: d[1])))
    return page.get_width(), pairs


def check_widths(pdf: bytes) -> None:
    """The three formulas of :data:`WIDE` laid out as TeX's ``\\eqno`` lays them out."""
    width, pairs = marks_and_formulas(pdf)
    (fit_mark, fit), (wide_mark, wide), (wider_mark, wider) = pairs
    assert abs((fit[0] + fit[2]) / 2 - width / 2) < 1  # centred, as without a number
    middle = (fit[1] + fit[3]) / 2
    assert abs((fit_mark[1] + fit_mark[3]) / 2 - middle) < 2  # on the formula's height
    assert fit[2] < fit_mark[0] and wide[2] < wide_mark[0]  # never under the number
    assert (wide[0] + wide[2]) / 2 < width / 2 - 1  # moved left to make room
    assert wide_mark[0] - wide[2] < 15  # up to the number, an em apart
    assert wide_mark[1] < (wide[1] + wide[3]) / 2 < wide_mark[3]  # still beside it
    assert wider_mark[3] < wider[1]  # below the formula
    assert abs(wider_mark[2] - fit_mark[2]) < 1  # at the same right margin


def check_pdf(pdf: bytes) -> None:
    """The numbers at the right margin, right-aligned with one another and with the text's
    right edge, the long formula's below it; each reference a link to its formula's page."""
    import pypdfium2 as pdfium

    lines = pdf_lines(pdf)
    prose = next(line for line in lines if line[2].startswith("Energy"))
    width = pdfium.PdfDocument(pdf)[0].get_width()
    margin = width - prose[0]  # the right margin, as wide as the left
    marks = [line for line in lines if re.search(r"\((\d|P)\)$", line[2])]
    assert [line[2][-3:] for line in marks] == ["(1)", "(2)", "(P)", "(3)", "(4)"]
    rights = {round(line[1]) for line in marks}
    assert max(rights) - min(rights) <= 1, marks  # aligned at one right edge
    assert abs(max(rights) - margin) < 2, (marks, margin)  # at the text's right margin
    for line in marks[:-1]:  # a mark alone on its line: the formula is a picture
        assert line[2] in ("(1)", "(2)", "(P)", "(3)") and line[0] > prose[0] + 300
    links = internal_links(pdf)
    shown = [link[0] for link in links]
    assert shown == ["Equation 1", "2", "3", "2", "Equation 4"]
    assert {link[1] for link in links} == {0}


def test_a_formula_without_a_label_or_tag_is_written_as_before() -> None:
    html = render_markdown("html", "$$ x = y $$\n", []).decode()
    assert 'class="equation"' not in html and ".eqno" not in html  # nor its CSS




def test_a_numbered_formula_among_words_keeps_its_number_and_its_link_target() -> None:
    markdown = "Before $$ c = d $$ {#eq:c} after, see @eq:c.\n"
    package = zipfile.ZipFile(io.BytesIO(render_markdown("docx", markdown, [])))
    body = etree.fromstring(package.read("word/document.xml"))
    (paragraph,) = [p for p in body.iter(f"{W}p") if "".join(p.itertext()).startswith("Before")]
    assert "\u2003(1) after, see Equation 1." in "".join(paragraph.itertext())
    assert [m.get(f"{W}name") for m in paragraph.iter(f"{W}bookmarkStart")] == ["eq_1"]
    assert [h.get(f"{W}anchor") for h in paragraph.iter(f"{W}hyperlink")] == ["eq_1"]
    deck = Presentation(io.BytesIO(render_markdown("pptx", markdown, [])))
    runs = [run for slide in deck.slides for shape in slide.shapes if shape.has_text_frame
            for para in shape.text_frame.paragraphs for run in para.runs]
    assert "".join(run.text for run in runs).startswith("Before c=d (1) after, see Equation 1.")
    html = lxml.html.document_fromstring(render_markdown("html", markdown, []))
    assert html.xpath("//p//span[@class='equation']/@id") == ["eq-1"]


def test_docx_puts_the_number_of_a_formula_too_wide_for_it_on_the_next_line() -> None:
    package = zipfile.ZipFile(io.BytesIO(render_markdown("docx", WIDE, [])))
    body = etree.fromstring(package.read("word/document.xml"))
    marked = [p for p in body.iter(f"{W}p") if p.find(f"{W}pPr/{W}tabs") is not None]
    last_runs = [[etree.QName(c).localname for c in p.findall(f"{W}r")[-1]] for p in marked]
    assert last_runs[0] == ["tab", "t"]  # beside the formula
    assert last_runs[-1] == ["br", "tab", "tab", "t"]  # below it, past the centre stop
