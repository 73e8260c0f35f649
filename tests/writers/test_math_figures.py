"""Math and numbered figures/tables in every writer, from the ``math_figures`` IR fixture
(pandoc's ``.native`` way): what each format holds, read back from the file it made."""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path
from typing import Any

import lxml.html
import pytest
from lxml import etree
from pptx import Presentation
from pypdf import PdfReader
from pypdf.generic import IndirectObject

from renderers import render
from renderers.document import Math, iter_inlines
from renderers.options import RenderOptions
from renderers.readers.markdown import read_markdown
from renderers.resolve import ResolvedDocument
from renderers.writers.html.math import MATH_CSS
from tests.helpers import ROOT
from tests.support.ir import load_ir
from tests.support.render import render_markdown, resolve_rows, write_resolved

SAMPLES = ROOT / "samples"
OPTIONS = RenderOptions(base_dir=SAMPLES)
M = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


@pytest.fixture(scope="module")
def rdoc() -> ResolvedDocument:
    pool = json.loads((SAMPLES / "math-figures.pool.json").read_text(encoding="utf-8"))
    return resolve_rows(load_ir("math_figures"), pool)


def formulas(rdoc: ResolvedDocument) -> list[Math]:
    return [n for n in iter_inlines(rdoc.document.blocks) if isinstance(n, Math)]


def test_the_fixture_has_what_the_tests_count(rdoc: ResolvedDocument) -> None:
    assert len(formulas(rdoc)) == 12 and sum(m.display for m in formulas(rdoc)) == 2
    assert any("fig:unknown" in w for w in rdoc.warnings)


def test_html_mathml_with_its_print_drawing_numbered_captions_and_links(
    rdoc: ResolvedDocument,
) -> None:
    html = write_resolved("html", rdoc, OPTIONS).decode()
    root = lxml.html.document_fromstring(html)
    maths = root.xpath("//span[contains(@class,'math')]/*[local-name()='math']")
    assert len(maths) == len(formulas(rdoc))
    assert [m.get("display") for m in maths].count("block") == 2
    drawings = root.xpath("//img[@class='math-svg']")
    assert len(drawings) == len(maths)
    assert all(img.get("src").startswith("data:image/svg+xml;base64,") for img in drawings)
    assert MATH_CSS in html
    assert not re.search(r"<math[^>]*\son\w+=|href=\"javascript", html)
    assert root.xpath("//figure/@id") == ["fig-1"]
    assert root.xpath("//figure/figcaption")[0].text_content().startswith("Figure 1: Global")
    assert root.xpath("//table/@id") == ["tbl-1", "tbl-2"]
    assert root.xpath("//table/caption")[1].text_content() == "Table 2: Annual yield by array size"
    links = [(a.get("href"), a.text) for a in root.xpath("//a[@class='xref']")]
    assert links == [("#fig-1", "Figure 1"), ("#tbl-1", "Table 1"), ("#tbl-2", "Table 2"),
                     ("#tbl-1", "Table 1"), ("#fig-1", "Figure 1")]
    assert "@fig:unknown" in root.text_content()
    assert root.xpath("//code[.='$\\frac{1}{$']")


def test_html_without_math_or_labels_is_unchanged(sample_pool: list[dict[str, Any]]) -> None:
    html = write_resolved("html", resolve_rows(load_ir("every_node"), sample_pool), OPTIONS)
    assert b"math-svg" not in html and b"Figure 1" not in html and b'class="xref"' not in html


def pdf_annotations(reader: PdfReader) -> list[dict[str, Any]]:
    return [
        dict(ref.get_object() if isinstance(ref, IndirectObject) else ref)
        for page in reader.pages for ref in page.get("/Annots") or []
    ]


def test_pdf_text_links_and_drawn_formulas(rdoc: ResolvedDocument) -> None:
    reader = PdfReader(io.BytesIO(write_resolved("pdf", rdoc, OPTIONS)))
    text = "\n".join(page.extract_text() for page in reader.pages)
    assert "Figure 1: Global renewable capacity additions" in text
    assert "Table 1: Model inputs for one module" in text and "Table 2 gives" in text
    assert "\\cdot" not in text and "\\int" not in text  # formulas are drawn, not spelled
    destinations = {str(a["/Dest"]) for a in pdf_annotations(reader) if "/Dest" in a}
    assert {"fig-1", "tbl-1", "tbl-2"} <= destinations <= set(reader.named_destinations) | {
        d for d in destinations if d.startswith(("src-", "cite-"))
    }


def path_objects(pdf: bytes) -> int:
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    document = pdfium.PdfDocument(pdf)
    return sum(1 for page in document for obj in page.get_objects()
               if obj.type == raw.FPDF_PAGEOBJ_PATH)


def test_pdf_draws_a_formula_as_glyph_outlines() -> None:
    pool = [{"sid": 1, "title": "S", "url": "https://example.org"}]
    plain = render_markdown("pdf", "Text only.\n", pool)
    drawn = render_markdown("pdf", "Text only.\n\n$$\\frac{a}{b}$$\n", pool)
    assert path_objects(drawn) >= path_objects(plain) + 3  # a, b and the fraction bar


def test_docx_office_math_bookmarked_captions_and_internal_links(rdoc: ResolvedDocument) -> None:
    data = write_resolved("docx", rdoc, OPTIONS)
    body = etree.fromstring(zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml"))
    assert len(body.findall(f".//{M}oMathPara")) == 2
    assert len(body.findall(f".//{M}oMath")) == len(formulas(rdoc))
    assert body.findall(f".//{M}f") and body.findall(f".//{M}nary")
    marks = {b.get(f"{W}name") for b in body.iter(f"{W}bookmarkStart")}
    assert {"fig_1", "tbl_1", "tbl_2"} <= marks
    anchors = [h.get(f"{W}anchor") for h in body.iter(f"{W}hyperlink")]
    assert anchors.count("fig_1") == 2 and anchors.count("tbl_1") == 2
    text = "".join(body.itertext())
    assert "Figure 1: Global renewable" in text and "Table 2: Annual yield" in text
    assert "$\\frac{1}{$" in text and "@fig:unknown" in text


def test_pptx_equation_pictures_linear_inline_math_and_slide_jumps(
    rdoc: ResolvedDocument,
) -> None:
    deck = Presentation(io.BytesIO(write_resolved("pptx", rdoc, OPTIONS)))
    descriptions = [
        shape._element.xpath(".//p:cNvPr/@descr")[0]
        for slide in deck.slides for shape in slide.shapes if shape.shape_type == 13
    ]
    displayed = [m.tex for m in formulas(rdoc) if m.display]
    assert all(tex in descriptions for tex in displayed)
    text = "\n".join(
        shape.text_frame.text for slide in deck.slides for shape in slide.shapes
        if shape.has_text_frame
    )
    assert "E=A·r·H·PR" in text and "Figure 1: Global renewable" in text
    assert "Table 1: Model inputs" in text
    jumps = [
        run.text for slide in deck.slides for shape in slide.shapes if shape.has_text_frame
        for para in shape.text_frame.paragraphs for run in para.runs
        if run._r.xpath(".//a:hlinkClick[@action='ppaction://hlinksldjump']")
    ]
    assert jumps.count("Figure 1") == 2 and jumps.count("Table 2") == 1


def test_markdown_keeps_tex_and_links_numbers_to_anchors(rdoc: ResolvedDocument) -> None:
    text = write_resolved("md", rdoc, OPTIONS).decode()
    assert "$E = A \\cdot r \\cdot H \\cdot PR$" in text
    assert "[Figure 1](#fig-1)" in text and "[Table 2](#tbl-2)" in text
    assert '<a id="fig-1"></a>**Figure 1:** Global' in text
    assert '<a id="tbl-2"></a>**Table 2:** Annual yield' in text
    again = [n for n in iter_inlines(read_markdown(text).blocks) if isinstance(n, Math)]
    assert again == formulas(rdoc)


def test_every_format_is_deterministic(rdoc: ResolvedDocument, tmp_path: Path) -> None:
    for fmt in ("html", "md", "docx", "pptx"):
        assert write_resolved(fmt, rdoc, OPTIONS) == write_resolved(fmt, rdoc, OPTIONS), fmt


def test_a_reference_right_after_a_cjk_or_arabic_letter_links_in_every_format() -> None:
    markdown = ("![容量图](assets/chart.png){#fig:cap}\n\n"
                "见@fig:cap。如[@fig:cap]所示。انظر@fig:cap\n")
    options: dict[str, Any] = {"base_dir": SAMPLES}
    html = render_markdown("html", markdown, [], **options).decode()
    root = lxml.html.document_fromstring(html)
    assert [a.get("href") for a in root.xpath("//a[@class='xref']")] == ["#fig-1"] * 3
    assert "@fig" not in root.text_content()
    document = zipfile.ZipFile(io.BytesIO(render_markdown("docx", markdown, [], **options)))
    xml = document.read("word/document.xml").decode()
    assert "@fig" not in xml and xml.count('w:anchor="fig_1"') == 3
    deck = Presentation(io.BytesIO(render_markdown("pptx", markdown, [], **options)))
    lines = [line for slide in deck.slides for shape in slide.shapes if shape.has_text_frame
             for line in shape.text_frame.text.splitlines()]
    assert "见Figure 1。如Figure 1所示。انظرFigure 1" in lines


def test_formulas_that_show_nothing_render_as_code_in_every_format(tmp_path: Path) -> None:
    """``$\\text{}$``, ``$$\\frac{}{}$$`` and an empty matrix were internal errors of the PDF,
    PNG, PPTX and HTML writers (ziamath cannot draw them); now each is its source as code,
    with a warning, and the formulas around them are drawn."""
    markdown = (
        "Empty $\\text{}$ and $\\mbox{}$ and $E = mc^2$.\n\n$$\n\\frac{}{}\n$$\n\n"
        "$$\\begin{matrix}\\end{matrix}$$\n\n$$\\quad$$\n"
    )
    results = render(markdown, tmp_path, name="m", formats=("pdf", "png", "pptx", "html", "docx"),
                     sources_pool=[])
    for result in results:
        assert result.path.exists()
        assert sum("shows nothing" in warning for warning in result.warnings) == 5
    html = (tmp_path / "m.html").read_text()
    assert "<code>$\\text{}$</code>" in html
    assert ('<pre dir="ltr"><code><span class="code-line" style="--hang:4">\\quad</span></code>'
            in html)
    assert html.count('class="math-svg"') == 1  # E = mc^2


def test_a_matrix_row_ending_in_an_empty_cell_keeps_its_content_in_every_format() -> None:
    """``c&`` ending a matrix lost the whole row ``c`` inside latex2mathml (and ``a&`` alone
    became code, "shows nothing"): each format now shows every cell."""
    markdown = ("Matrix $\\begin{pmatrix}a&b\\\\c&\\end{pmatrix}$ and "
                "$\\begin{matrix}x&\\end{matrix}$.\n")
    html = lxml.html.document_fromstring(render_markdown("html", markdown, []))
    tables = html.xpath("//*[local-name()='mtable']")
    assert [["".join(t.itertext()) for t in table.xpath("*[local-name()='mtr']")]
            for table in tables] == [["ab", "c"], ["x"]]
    assert not html.xpath("//code")
    document = zipfile.ZipFile(io.BytesIO(render_markdown("docx", markdown, [])))
    body = etree.fromstring(document.read("word/document.xml"))
    rows = [["".join(t.text or "" for t in row.iter(f"{M}t")) for row in matrix.iter(f"{M}mr")]
            for matrix in body.iter(f"{M}m")]
    assert rows == [["ab", "c"], ["x"]]
    deck = Presentation(io.BytesIO(render_markdown("pptx", markdown, [])))
    text = "\n".join(shape.text_frame.text for slide in deck.slides for shape in slide.shapes
                     if shape.has_text_frame)
    assert "Matrix (a, b; c, ) and x,." in text  # the linear form: rows by ";", cells by ","


NOT_DRAWN = ("formula '\\\\overline{}' cannot be drawn (the drawing library gives it no size it "
             "can lay out); its picture shows the TeX source instead")


@pytest.mark.parametrize(
    ("formats", "options"),
    [
        (("html", "docx", "md"), {}),
        (("pptx",), {}),
        (("pdf",), {"pdf_engine": "typst"}),
        pytest.param(("pdf", "png"), {}, marks=pytest.mark.slow),
    ],
)
def test_a_formula_drawn_as_its_source_is_a_warning_of_each_drawn_format(
    tmp_path: Path, formats: tuple[str, ...], options: dict[str, str]
) -> None:
    """``$\\overline{}$`` has no size ziamath can lay out, so its picture is its TeX source;
    each output with such a picture (the PDF, PNG, the HTML's print picture, a slide's
    displayed formula) says so, and the DOCX (Office Math) and Markdown (TeX) do not."""
    markdown = "Bar $\\overline{}$ and $x^2$.\n\n$$\\overline{}$$\n"
    results = render(markdown, tmp_path, name="m", formats=formats, sources_pool=[], **options)
    for result in results:
        drawn = result.path.suffix in (".html", ".pdf", ".png", ".pptx")
        notes = [d for d in result.diagnostics if d.code == "math-not-drawn"]
        assert [d.message for d in notes] == ([NOT_DRAWN] if drawn else []), result.path
        assert [d for d in result.diagnostics if d.code != "math-not-drawn"] == []
    if "html" in formats:
        html = (tmp_path / "m.html").read_text()
        assert html.count('alt="\\overline{}"') == 2  # both pictures, each its source
