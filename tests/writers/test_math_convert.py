"""TeX → the checked MathML tree and what each writer makes of it: MathML markup, Office Math,
SVG/PNG drawings and the linear text of slides."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from lxml import etree

from renderers.math import MathError, parse_tex, shown_tex
from renderers.math.linear import linear_text
from renderers.math.mathml import mathml_markup
from renderers.math.omml import M_NS, W_NS, omml_math, omml_paragraph
from renderers.math.svg import draw_formula, formula_png
from renderers.math.tex import ATTRIBUTES, COLOUR_ATTRIBUTES, ELEMENTS, MathNode

MATHML = "{http://www.w3.org/1998/Math/MathML}"


def walk(node: MathNode) -> list[MathNode]:
    return [node, *(n for child in node.children for n in walk(child))]


def omml_tags(tex: str) -> list[str]:
    return [e.tag.replace(f"{{{M_NS}}}", "m:") for e in omml_math(parse_tex(tex)).iter()
            if isinstance(e.tag, str) and e.tag.startswith(f"{{{M_NS}}}")]


@pytest.mark.parametrize(
    "tex",
    [
        "\\href{javascript:alert(1)}{x}",
        "\\color{red}{x} \\style{x}",
        "\\text{<script>alert(1)</script>}",
        "\\mathbf{v} \\operatorname{foo} \\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}",
    ],
)
def test_only_allow_listed_elements_and_attributes_survive(tex: str) -> None:
    try:
        formula = parse_tex(tex)
    except MathError:
        return  # refused outright is as safe
    for node in walk(formula.root):
        assert node.tag == "mrow" or node.tag in ELEMENTS
        assert {name for name, _ in node.attrs} <= ATTRIBUTES | COLOUR_ATTRIBUTES
    bare = mathml_markup(formula, annotate=False)
    assert "href" not in bare and "<script" not in bare and "javascript" not in bare
    markup = mathml_markup(formula)  # the TeX rides along as escaped annotation text only
    assert "<script" not in markup and " href=" not in markup
    ET.fromstring(markup)


def test_mathml_markup_carries_display_and_the_tex_annotation() -> None:
    markup = mathml_markup(parse_tex("a < b", display=True))
    root = ET.fromstring(markup)
    assert root.tag == f"{MATHML}math" and root.get("display") == "block"
    annotation = root.find(f".//{MATHML}annotation")
    assert annotation is not None and annotation.text == "a < b"
    assert root.find(f".//{MATHML}mo") is not None


@pytest.mark.parametrize(
    ("tex", "message"),
    [("", "empty"), ("\\frac{a}{", "latex2mathml"), ("\\unknowncmd", "unknown command"),
     ("x" * 5000, "longer than"), ("{" * 40 + "}" * 40, "nested deeper")],
)
def test_what_is_not_math(tex: str, message: str) -> None:
    with pytest.raises(MathError, match=message):
        parse_tex(tex)


@pytest.mark.parametrize(
    ("tex", "expected"),
    [
        ("\\frac{a}{b}", ["m:oMath", "m:f", "m:num", "m:r", "m:t", "m:den", "m:r", "m:t"]),
        ("\\sqrt{x}", ["m:oMath", "m:rad", "m:radPr", "m:degHide", "m:deg", "m:e", "m:r",
                       "m:t"]),
        ("x^2", ["m:oMath", "m:sSup", "m:e", "m:r", "m:t", "m:sup", "m:r", "m:t"]),
        ("x_i^2", ["m:oMath", "m:sSubSup", "m:e", "m:r", "m:t", "m:sub", "m:r", "m:t", "m:sup",
                   "m:r", "m:t"]),
    ],
)
def test_omml_structures(tex: str, expected: list[str]) -> None:
    assert omml_tags(tex) == expected


def test_omml_operators_brackets_accents_and_matrices() -> None:
    tags = omml_tags("\\sum_{i=1}^n x_i")
    assert tags[:4] == ["m:oMath", "m:nary", "m:naryPr", "m:chr"] and "m:sSub" in tags
    assert "m:d" in omml_tags("\\left( \\frac{1}{2} \\right)")
    scripted = omml_math(parse_tex("(1+d)^t"))
    sup = scripted.find(f"{{{M_NS}}}sSup")
    assert sup is not None and sup.find(f"{{{M_NS}}}e/{{{M_NS}}}d") is not None
    assert "m:acc" in omml_tags("\\hat{x}") and "m:bar" in omml_tags("\\overline{AB}")
    assert "m:m" in omml_tags("\\begin{matrix}1&2\\\\3&4\\end{matrix}")
    paragraph = omml_paragraph(parse_tex("x", display=True))
    assert paragraph.tag == f"{{{M_NS}}}oMathPara" and len(paragraph) == 1


def test_linear_text_of_slides() -> None:
    assert linear_text(parse_tex("E = mc^2")) == "E=mc²"
    assert linear_text(parse_tex("\\frac{a+1}{b}")) == "(a+1)/b"
    assert linear_text(parse_tex("\\sqrt{x}")) == "√x"
    assert linear_text(parse_tex("x_{i}")) == "x_i"
    assert linear_text(parse_tex("\\alpha \\leq \\beta")) == "α≤β"


def test_drawings_are_sized_in_em_and_repeatable() -> None:
    formula = parse_tex("\\frac{a}{b}")
    drawn = draw_formula(formula)
    assert drawn.svg.startswith("<svg") and "<path" in drawn.svg and "<script" not in drawn.svg
    assert 0.3 < drawn.width < 2 and 0.8 < drawn.height < 2 and 0 < drawn.depth < drawn.height
    draw_formula.cache_clear()
    assert draw_formula(formula) == drawn
    png, width, height = formula_png(formula)
    assert png.startswith(b"\x89PNG") and width > 20 and height > 40
    formula_png.cache_clear()
    draw_formula.cache_clear()
    assert formula_png(formula) == (png, width, height)


@pytest.mark.parametrize(
    "tex", ["\\text{}", "\\mbox{}", "\\frac{}{}", "{}", "\\quad", "\\\\", "\\boxed{}",
            "\\begin{matrix}\\end{matrix}"],
)
def test_a_formula_that_shows_nothing_is_not_math(tex: str) -> None:
    """ziamath raised on these (IndexError, ValueError) or drew them -999 em high, which
    failed every PDF, PNG, PPTX and HTML render holding one."""
    with pytest.raises(MathError, match="shows nothing"):
        parse_tex(tex)


@pytest.mark.parametrize(
    "tex", ["a\\text{}b", "\\text{}_2 x", "x + \\begin{pmatrix}\\end{pmatrix}", "\\sqrt{}"],
)
def test_an_empty_text_or_table_inside_a_formula_is_drawn_around(tex: str) -> None:
    for display in (False, True):
        formula = parse_tex(tex, display)
        drawn = draw_formula(formula)
        assert drawn.width > 0 and drawn.height > 0
        assert formula_png(formula)[0].startswith(b"\x89PNG")


@pytest.mark.parametrize(
    "tex",
    ["\\overline{}", "\\hat{\\mathrm{{}}}", "\\not", "\\overset{_{\\substack{)\\\\>>^}}}{x}"],
)
def test_a_tree_ziamath_cannot_lay_out_is_drawn_as_its_source(tex: str) -> None:
    """ziamath raised AssertionError on the last, and sized the others 0 em wide or -999 em
    high (its sentinel for an empty row), which resvg refused ("SVG has an invalid size"),
    failing the PDF, PNG and PPTX renders; found by a random nesting of TeX constructs."""
    for display in (False, True):
        formula = parse_tex(tex, display)
        drawn = draw_formula(formula)
        assert 0 < drawn.width < 100 and 0 < drawn.height < 5
        assert formula_png(formula)[0].startswith(b"\x89PNG")
    assert draw_formula(parse_tex("\\frac{a}{b}")).width < 2  # a sound tree is drawn as before


def cells(tex: str) -> list[list[str]]:
    """The text of each cell of the formula's table, row by row."""
    (table,) = [n for n in walk(parse_tex(tex).root) if n.tag == "mtable"]
    return [["".join(n.text for n in walk(cell)) for cell in row.children]
            for row in table.children]


@pytest.mark.parametrize(
    ("tex", "expected"),
    [
        ("\\begin{matrix}a&\\end{matrix}", [["a", ""]]),
        ("\\begin{pmatrix}a&b\\\\c& \\end {pmatrix}", [["a", "b"], ["c", ""]]),
        ("\\begin{matrix}a&\\\\c&d\\end{matrix}", [["a", ""], ["c", "d"]]),
        ("\\begin{matrix}a\\&\\end{matrix}", [["a&"]]),  # an escaped & is a character
        ("\\begin{matrix}a\\\\\\end{matrix}", [["a"]]),  # a trailing \\ opens no row
    ],
)
def test_a_row_ending_in_an_empty_cell_keeps_its_cells(tex: str, expected: list[list[str]]) -> None:
    """latex2mathml dropped a table's last row when its last cell was empty, so ``a&`` was
    "a formula that shows nothing" and ``a&b\\\\c&`` lost its ``c``."""
    assert cells(tex) == expected


def test_a_formula_drawn_as_its_source_says_so_at_every_render() -> None:
    """The drawing is cached, so the fallback is a value it returns, reported by
    ``formula_drawing`` into the writer's diagnostics each time a render asks, not once."""
    from renderers.diagnostics import Code, collect
    from renderers.math.svg import formula_drawing

    formula = parse_tex("\\overline{}")
    assert draw_formula(formula).fallback == "the drawing library gives it no size it can lay out"
    assert draw_formula(parse_tex("\\overline{x}")).fallback == ""
    for _ in range(2):
        with collect() as reported:
            formula_drawing(formula)
            formula_drawing(parse_tex("\\overline{x}"))
        assert [(d.code, d.message) for d in reported] == [(
            Code.MATH_NOT_DRAWN,
            "formula '\\\\overline{}' cannot be drawn (the drawing library gives it no size it "
            "can lay out); its picture shows the TeX source instead",
        )]
    assert shown_tex("x + " * 20) == repr(("x + " * 15)[:59] + "…")  # 60 characters at most


def test_omml_aligned_columns_keep_their_sides_and_an_operator_its_left_operand() -> None:
    """Word sets a matrix column by ``m:mcJc`` (centred by default); LibreOffice showed "¿"
    for the ``=`` opening the second column of ``aligned`` and lost the rest of that cell."""
    from renderers.math.omml import HOLDER

    root = omml_math(parse_tex("\\begin{aligned}f&=1\\\\&=2\\end{aligned}", display=True))
    sides = [e.get(f"{{{M_NS}}}val") for e in root.iter(f"{{{M_NS}}}mcJc")]
    assert sides == ["right", "left"]
    cells = [["".join(t.text or "" for t in cell.iter(f"{{{M_NS}}}t")) for cell in row]
             for row in root.iter(f"{{{M_NS}}}mr")]
    assert cells == [["f", f"{HOLDER}=1"], [HOLDER, f"{HOLDER}=2"]]
    assert not list(omml_math(parse_tex("\\begin{matrix}1&2\\end{matrix}")).iter(f"{{{M_NS}}}mPr"))


def test_omml_spaces_are_the_characters_word_writes_for_them() -> None:
    """``\\,`` is Word's thin space, ``\\qquad`` two em spaces, ``\\!`` nothing (it was a
    full word space each, so a unit stood a word away from its number)."""
    root = omml_math(parse_tex("a\\,b\\:c\\;d\\quad e\\!f\\qquad g\\ h"))
    texts = [t.text for t in root.iter(f"{{{M_NS}}}t")]
    assert texts == ["a", "\u2009", "b", "\u205f", "c", "\u2005", "d", "\u2003", "e", "f",
                     "\u2003\u2003", "g", "\u00a0", "h"]


def test_omml_cancel_strikes_and_letter_styles() -> None:
    root = omml_math(parse_tex("\\cancel{x}\\boxed{y}\\boldsymbol{\\theta}\\mathscr{L}\\textbf{b}"))
    boxes = list(root.iter(f"{{{M_NS}}}borderBox"))
    struck = [etree.QName(e).localname for e in boxes[0].iter() if e.get(f"{{{M_NS}}}val") == "1"]
    assert struck == ["hideTop", "hideBot", "hideLeft", "hideRight", "strikeBLTR"]
    assert boxes[1].find(f"{{{M_NS}}}borderBoxPr") is None  # \boxed: all four sides
    styles = [(etree.QName(e).localname, e.get(f"{{{M_NS}}}val"))
              for e in root.iter(f"{{{M_NS}}}sty", f"{{{M_NS}}}scr")]
    assert styles == [("sty", "bi"), ("scr", "script")]
    assert root.find(f".//{{{W_NS}}}b") is not None  # bold text stays bold


def test_arg_reads_the_same_before_and_after_the_drawing_library_is_imported() -> None:
    """ziamath, once imported, declares ``\\arg`` an operator name inside latex2mathml, which
    refused it before ("unknown command"): a DOCX made in a fresh process lost the formula
    that a PDF made first kept. ``\\arg`` is rewritten before latex2mathml sees it."""
    from renderers.math.normalise import normalise

    assert normalise("\\arg\\max_x f") == "\\operatorname{arg}\\max_x f"
    (node,) = [n for n in walk(parse_tex("\\arg z").root) if n.text == "arg"]
    assert node.tag == "mo"


def test_omml_limits_prescripts_accents_and_bars_as_word_writes_them() -> None:
    """Forms LibreOffice could not read ("¿" or an empty box) and Word draws differently:
    ``\\lim_{n}`` as a subscript, a prescript on an empty base, ``\\widehat`` as a character
    above, a lone ``|``."""
    tags = omml_tags("\\lim_{n\\to\\infty} a_n")
    assert tags[:4] == ["m:oMath", "m:func", "m:fName", "m:limLow"]
    limsup = omml_math(parse_tex("\\limsup_n a_n"))
    assert limsup.find(f".//{{{M_NS}}}lit") is not None  # "lim sup": one literal name
    assert omml_tags("{}^{14}_{6}\\mathrm{C}")[:2] == ["m:oMath", "m:sPre"]
    accents = [e.get(f"{{{M_NS}}}val") for e in
               omml_math(parse_tex("\\widehat{AB}\\tilde{x}\\vec{v}")).iter(f"{{{M_NS}}}chr")]
    assert accents == ["\u0302", "\u0303", "\u20d7"]
    bars = omml_math(parse_tex("\\lvert x \\rvert + \\lVert y \\rVert"))
    assert [(d.find(f"{{{M_NS}}}dPr/{{{M_NS}}}begChr").get(f"{{{M_NS}}}val"))  # type: ignore[union-attr]
            for d in bars.iter(f"{{{M_NS}}}d")] == ["|", "‖"]
    held = omml_math(parse_tex("\\begin{eqnarray}a&=&b\\end{eqnarray}", display=True))
    cells = ["".join(t.text or "" for t in e.iter(f"{{{M_NS}}}t"))
             for e in held.iter(f"{{{M_NS}}}e")]
    assert "\u2062=\u2062" in cells  # a lone "=" gets an operand on each side
