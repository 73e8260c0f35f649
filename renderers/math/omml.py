"""A checked formula as Office Math (OMML), the equation markup of Word documents.

Microsoft's MML2OMML.XSL is not redistributable, and the Python ports on PyPI are young forks
of an unmaintained 2019 package; the tree of :mod:`renderers.math.tex` uses a small, closed set
of elements, so the mapping is written here, element by element, as Word itself writes them:

``mi``/``mn``/``mo``/``mtext`` → ``m:r`` · ``msub``/``msup``/``msubsup`` → ``m:sSub``/``m:sSup``/
``m:sSubSup`` · a large operator with limits (``∑``, ``∫`` …) → ``m:nary`` over the element
after it · ``mfrac`` → ``m:f`` · ``msqrt``/``mroot`` → ``m:rad`` · a fenced ``mrow``
(``\\left( … \\right)``) → ``m:d`` · ``mover`` with an accent → ``m:acc`` (overline → ``m:bar``),
else ``m:limUpp``; ``munder`` → ``m:limLow`` · ``mtable`` → ``m:m`` (``columnspacing`` its
column gap; its rules, which Office Math has not, as :func:`_ruled_matrix` gives them) ·
``menclose`` → ``m:borderBox`` (sides hidden and struck through for
``\\cancel``) · ``mathvariant`` → ``m:sty``/``m:scr`` · an operator name with a limit
(``\\lim_{n}``) → ``m:func`` over ``m:limLow`` · scripts on an empty base → ``m:sPre``; other
containers give their children. A displayed ``multline`` is also given line by line
(:func:`omml_lines`).
"""

from __future__ import annotations

import re
from typing import TypeAlias

from lxml import etree

from renderers.math.arrows import LONG_ARROWS, LabelledArrow, labelled_arrow
from renderers.math.rules import TableRules, bar_columns, barred_rows, table_rules
from renderers.math.spans import office_cells
from renderers.math.tex import Formula, MathNode

M_NS = "http://schemas.openxmlformats.org/officeDocument/2006/math"
W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
MATH_FONT = "Cambria Math"

Element: TypeAlias = etree._Element

#: Operators Word draws as n-ary operators (a sum, an integral) with their limits.
NARY = frozenset("∑∏∐⋂⋃⋀⋁⨀⨁⨂∫∬∭∮∯∰")
#: Accents drawn as a bar rather than a character above the base.
BARS = frozenset("―‾¯_")


#: What an empty identifier or table cell holds: LibreOffice shows an empty ``m:e`` as its
#: placeholder "¿", and an operator with nothing on its left (the ``=`` that starts the second
#: column of ``aligned``, after latex2mathml's empty ``<mi/>``) as "¿" in place of the operator
#: and lost the rest of the cell. An invisible operator (U+2062) fills them: LibreOffice drops
#: a zero-width space as white space, and Word draws neither.
HOLDER = "\u2062"
#: Relations LibreOffice reads as operators that need an operand on each side.
RELATIONS = frozenset("=<>")
EMPTY = MathNode("mi", text="")

#: TeX's spaces as the Unicode characters Word's own math writes for them (its ``\\thinsp``,
#: ``\\medsp``, ``\\thicksp``, ``\\ensp``, ``\\emsp``), by width in em: Office Math has no
#: space of a given size.
SPACES: tuple[tuple[float, str], ...] = (
    (3 / 18, "\u2009"), (4 / 18, "\u205f"), (5 / 18, "\u2005"), (0.5, "\u2002"), (1.0, "\u2003"),
)
_EM = re.compile(r"(-?\d*\.?\d+)em")


def math_space(width: str | None) -> str:
    """The characters for an ``mspace`` of ``width`` (latex2mathml's ``0.167em`` for ``\\,``,
    ``2em`` for ``\\qquad``): whole em spaces, an en space when half an em or more is left
    (0.8 em is not rounded to one em, as the filled cells of a ruled table need), then the
    nearest smaller space; nothing for a negative one (``\\!``, which Word cannot draw). A
    width in other units: one word space."""
    if width is not None and width.startswith("negative"):
        return ""
    match = _EM.fullmatch(width or "")
    if match is None:
        return " "
    em = float(match.group(1))
    whole, rest = divmod(max(em, 0.0), 1.0)
    half = "\u2002" if 0.5 <= rest < 0.95 else ""
    rest -= 0.5 if half else 0.0
    nearest = min(SPACES, key=lambda pair: abs(pair[0] - rest))
    tail = nearest[1] if rest > 0.05 else ""
    return "\u2003" * min(int(whole), 8) + half + tail


#: The plain upright style (``\\mathrm``, ``\\operatorname``, element symbols, units). Such a
#: run is written as normal text (``m:nor``), upright in Word and in LibreOffice alike:
#: LibreOffice 7.4's import ignores ``m:sty m:val="p"`` and set each letter in italic. Word
#: keeps a normal-text run part of the equation (its "Normal Text" button).
UPRIGHT: tuple[str | None, str | None] = ("p", None)
#: MathML ``mathvariant`` → Office Math style (``m:sty``: plain, bold, italic, bold italic) and
#: script (``m:scr``), so ``\\boldsymbol{\\theta}`` or ``\\mathscr{L}`` keep their look in Word.
VARIANTS: dict[str, tuple[str | None, str | None]] = {
    "normal": ("p", None), "bold": ("b", None), "italic": ("i", None), "bold-italic": ("bi", None),
    "double-struck": ("p", "double-struck"), "script": (None, "script"),
    "bold-script": ("b", "script"), "fraktur": ("p", "fraktur"), "bold-fraktur": ("b", "fraktur"),
    "sans-serif": ("p", "sans-serif"), "bold-sans-serif": ("b", "sans-serif"),
    "sans-serif-italic": ("i", "sans-serif"), "monospace": ("p", "monospace"),
}
#: MathML ``menclose`` strikes → the ``m:borderBoxPr`` strike that draws them.
STRIKES = {"updiagonalstrike": "strikeBLTR", "downdiagonalstrike": "strikeTLBR",
           "horizontalstrike": "strikeH", "verticalstrike": "strikeV"}


def m(tag: str) -> str:
    return f"{{{M_NS}}}{tag}"


def _sub(parent: Element, tag: str, val: str | None = None) -> Element:
    element = etree.SubElement(parent, m(tag))
    if val is not None:
        element.set(m("val"), val)
    return element


def omml_math(formula: Formula) -> Element:
    """``m:oMath`` for ``formula`` (wrap it in ``m:oMathPara`` for a displayed equation)."""
    root = etree.Element(m("oMath"), nsmap={"m": M_NS, "w": W_NS})
    _content(root, formula.root.children)
    return root


#: A formula that is one ``multline`` environment (its lines set left, centred, right).
_MULTLINE = re.compile(r"\s*\\begin\s*\{multline\*?\}.*\\end\s*\{multline\*?\}\s*", re.DOTALL)


def omml_lines(formula: Formula) -> list[Element]:
    """An ``m:oMath`` for each line of a displayed ``multline`` of two lines or more, which TeX
    sets the first at the left, the last at the right and the others centred: Office Math
    aligns no line of one formula on its own, so the writer places each; none for another
    formula (or a ``multline`` among other TeX)."""
    if not formula.display or not _MULTLINE.fullmatch(formula.tex):
        return []
    node = formula.root
    while node.tag == "mrow" and len(node.children) == 1:
        node = node.children[0]
    if node.tag != "mtable" or len(node.children) < 2:
        return []
    lines = []
    for row in node.children:
        line = etree.Element(m("oMath"), nsmap={"m": M_NS, "w": W_NS})
        _content(line, tuple(child for cell in row.children for child in cell.children))
        lines.append(line)
    return lines


def omml_paragraph(formula: Formula) -> Element:
    """``m:oMathPara`` holding the equation: a displayed formula on its own line."""
    para = etree.Element(m("oMathPara"), nsmap={"m": M_NS, "w": W_NS})
    para.append(omml_math(formula))
    return para


#: Accents as latex2mathml gives them (spacing characters) → the combining characters Word
#: writes in ``m:chr`` (LibreOffice reads only these, and showed "¿" for ``\\widehat``).
COMBINING = {
    "^": "\u0302", "ˆ": "\u0302", "~": "\u0303", "˜": "\u0303", "˙": "\u0307", "¨": "\u0308",
    "ˇ": "\u030c", "˘": "\u0306", "´": "\u0301", "`": "\u0300", "˚": "\u030a", "→": "\u20d7",
    "←": "\u20d6",
}
#: Brackets paired into one ``m:d`` when both halves sit in the same row.
PAIRS = {"(": ")", "[": "]", "{": "}", "|": "|", "‖": "‖", "⟨": "⟩", "⌊": "⌋", "⌈": "⌉"}
_FENCE = "x-fence"  # a bracketed group found by :func:`_paired` (not a MathML element)


def _closes(node: MathNode, closing: str) -> bool:
    """``node`` is the closing bracket, or a script whose base is (``(1+d)^t``)."""
    base = node.children[0] if node.tag in ("msub", "msup", "msubsup") and node.children else node
    return base.tag == "mo" and base.text == closing


def _paired(nodes: tuple[MathNode, ...]) -> tuple[MathNode, ...]:
    """Bracket pairs in a row grouped as ``m:d`` (Word's own form; LibreOffice cannot import
    a bracket whose partner sits in another structure, as ``(1+d)^t`` gives)."""
    out: list[MathNode] = []
    index = 0
    while index < len(nodes):
        node = nodes[index]
        closing = PAIRS.get(node.text) if node.tag == "mo" else None
        end = _partner(nodes, index, closing) if closing else None
        if closing is None or end is None:
            out.append(node)
            index += 1
            continue
        closer = nodes[end]
        fence = MathNode(_FENCE, (("close", closing), ("open", node.text)),
                         _paired(nodes[index + 1 : end]))
        if closer.tag == "mo":
            out.append(fence)
        else:
            out.append(MathNode(closer.tag, closer.attrs, (fence, *closer.children[1:])))
        index = end + 1
    return tuple(out)


def _partner(nodes: tuple[MathNode, ...], start: int, closing: str) -> int | None:
    opening = nodes[start].text
    depth = 0
    for index in range(start + 1, len(nodes)):
        node = nodes[index]
        if node.tag == "mo" and node.text == opening and opening != closing:
            depth += 1
        elif _closes(node, closing):
            if depth == 0:
                return index
            depth -= 1
    return None


def _joined(nodes: tuple[MathNode, ...]) -> tuple[MathNode, ...]:
    """Neighbouring upright letters (``\\mathrm{Cl}``, mhchem's element symbols) as one
    identifier, one run as Word writes "Cl"."""
    out: list[MathNode] = []
    for node in nodes:
        last = out[-1] if out else None
        if (last is not None and node.tag == last.tag == "mi" and node.text and last.text
                and node.attrs == last.attrs == _NORMAL):
            out[-1] = MathNode("mi", _NORMAL, (), last.text + node.text)
        else:
            out.append(node)
    return tuple(out)


_NORMAL = (("mathvariant", "normal"),)


def _content(parent: Element, nodes: tuple[MathNode, ...]) -> None:
    """Append ``nodes`` in order; a large operator takes the node after it as its operand."""
    nodes = _paired(_joined(nodes))
    index = 0
    while index < len(nodes):
        node = nodes[index]
        operator = _nary_operator(node)
        if operator is not None and index + 1 < len(nodes):
            _nary(parent, node, operator, nodes[index + 1])
            index += 2
            continue
        if _prescripted(node) and index + 1 < len(nodes):
            _prescripts(parent, node, nodes[index + 1])
            index += 2
            continue
        if _named_limit(node) and index + 1 < len(nodes):
            _function(parent, node, nodes[index + 1])
            index += 2
            continue
        _node(parent, node)
        index += 1


def _arg(parent: Element, tag: str, node: MathNode | None) -> None:
    element = _sub(parent, tag)
    if node is not None:
        _content(element, node.children if node.tag == "mrow" else (node,))
        _operands_held(element)


def _operands_held(element: Element) -> None:
    """A :data:`HOLDER` on the open side of a ``=``, ``<`` or ``>`` that starts or ends an
    argument (the ``=`` column of ``eqnarray``, ``\\overset{!}{=}``): LibreOffice reads these
    as operators needing both operands and shows "¿" for the missing one."""
    if len(element) and _relation(element[0]):
        element.insert(0, _run(element, HOLDER))
    if len(element) and _relation(element[-1]):
        _run(element, HOLDER)


def _relation(run: Element) -> bool:
    text = run.find(m("t"))
    return run.tag == m("r") and text is not None and (text.text or "") in RELATIONS


def _node(parent: Element, node: MathNode) -> None:
    parts = node.children
    if node.tag in ("mover", "munder", "munderover") and (
            arrow := labelled_arrow(node)) is not None:
        _arrow(parent, arrow)
        return
    match node.tag:
        case "mi" if not node.text:
            _run(parent, HOLDER)
        case "mi" | "mn" | "mo" | "ms":
            variant = node.attr("mathvariant")
            style = VARIANTS.get(variant, UPRIGHT if (
                node.tag in ("mi", "mo") and _upright(node)) else (None, None))
            # Plain upright as normal text, which LibreOffice too sets upright (UPRIGHT).
            _run(parent, node.text, style=style if style != UPRIGHT else (None, None),
                 text_run=style == UPRIGHT)
        case "mtext":
            _run(parent, node.text, text_run=True, style=VARIANTS.get(node.attr("mathvariant"),
                                                                       (None, None)))
        case "mspace":
            space = math_space(node.attr("width"))
            if space:
                _run(parent, space, text_run=True)
        case "msub" | "msup" if len(parts) == 2:
            if _nary_operator(node) is not None:
                _nary(parent, node, _nary_operator(node) or "", None)
                return
            script = _sub(parent, "sSub" if node.tag == "msub" else "sSup")
            _arg(script, "e", parts[0])
            _arg(script, "sub" if node.tag == "msub" else "sup", parts[1])
        case "msubsup" | "munderover" if len(parts) == 3:
            if _nary_operator(node) is not None:
                _nary(parent, node, _nary_operator(node) or "", None)
            elif node.tag == "msubsup":
                script = _sub(parent, "sSubSup")
                _arg(script, "e", parts[0])
                _arg(script, "sub", parts[1])
                _arg(script, "sup", parts[2])
            else:
                upper = _sub(parent, "limUpp")
                lower = _sub(_sub(upper, "e"), "limLow")
                _arg(lower, "e", parts[0])
                _arg(lower, "lim", parts[1])
                _arg(upper, "lim", parts[2])
        case "mfrac" if len(parts) == 2:
            fraction = _sub(parent, "f")
            if node.attr("linethickness") in ("0", "0px", "0em"):
                _sub(_sub(fraction, "fPr"), "type", "noBar")
            _arg(fraction, "num", parts[0])
            _arg(fraction, "den", parts[1])
        case "msqrt":
            radical = _sub(parent, "rad")
            _sub(_sub(radical, "radPr"), "degHide", "1")
            _sub(radical, "deg")
            _arg(radical, "e", MathNode("mrow", children=parts))
        case "mroot" if len(parts) == 2:
            radical = _sub(parent, "rad")
            _arg(radical, "deg", parts[1])
            _arg(radical, "e", parts[0])
        case "mover" | "munder" if len(parts) == 2:
            _over_under(parent, node)
        case "mtable" if (rules := table_rules(node)) is not None:
            _ruled_matrix(parent, node, rules)
        case "mtable":
            matrix = _sub(parent, "m")
            columns = max(len(row.children) for row in parts) if parts else 0
            leads = _matrix_props(matrix, node, columns)
            for row in parts:
                mr = _sub(matrix, "mr")
                cells = office_cells(row, columns) or (MathNode("mtd"),)
                for index, cell in enumerate(cells):
                    lead = leads[index] if index < len(leads) else ()
                    _arg(mr, "e", MathNode("mrow", children=lead + (cell.children or (EMPTY,))))
        case "menclose":
            _enclosed(parent, node)
        case "mphantom":
            _arg(_sub(parent, "phant"), "e", MathNode("mrow", children=parts))
        case "x-ruled":  # :data:`~renderers.math.rules.RULED_CELL`
            _barred(parent, node)
        case "x-fence":
            delimiter = _sub(parent, "d")
            props = _sub(delimiter, "dPr")
            _sub(props, "begChr", node.attr("open"))
            _sub(props, "endChr", node.attr("close"))
            _arg(delimiter, "e", MathNode("mrow", children=parts))
        case "mrow" if _fenced(parts):
            delimiter = _sub(parent, "d")
            props = _sub(delimiter, "dPr")
            _sub(props, "begChr", parts[0].text)
            _sub(props, "endChr", parts[-1].text if parts[-1].attr("fence") else "")
            inner = parts[1:-1] if parts[-1].attr("fence") else parts[1:]
            _arg(delimiter, "e", MathNode("mrow", children=inner))
        case _:
            _content(parent, parts)


def _arrow(parent: Element, arrow: LabelledArrow) -> None:
    """An arrow with text over or under it: the long arrow (⟶ for →, :data:`LONG_ARROWS`)
    with its texts as limits (``m:limUpp``/``m:limLow``). Word would stretch the arrow of an
    ``m:groupChr`` to its text, but LibreOffice 7.4 reads that as a small arrow under the text
    and, with text on both sides, as "¿": the long arrow is what both show well."""
    mark = MathNode("mo", text=LONG_ARROWS.get(arrow.arrow, arrow.arrow))
    base = parent
    if arrow.above is not None:
        upper = _sub(parent, "limUpp")
        base = _sub(upper, "e")
    if arrow.below is not None:
        lower = _sub(base, "limLow")
        _arg(lower, "e", mark)
        _arg(lower, "lim", arrow.below)
    else:
        _content(base, (mark,))
    if arrow.above is not None:
        _arg(upper, "lim", arrow.above)


def _over_under(parent: Element, node: MathNode) -> None:
    base, mark = node.children
    accent = (node.attr("accent") == "true" or mark.attr("accent") == "true"
              or (mark.tag == "mo" and mark.text in COMBINING))  # \\widehat, \\vec: no attribute
    if node.tag == "mover" and accent and mark.tag == "mo" and len(mark.text) == 1:
        if mark.text in BARS:
            bar = _sub(parent, "bar")
            _sub(_sub(bar, "barPr"), "pos", "top")
            _arg(bar, "e", base)
        else:
            acc = _sub(parent, "acc")
            _sub(_sub(acc, "accPr"), "chr", COMBINING.get(mark.text, mark.text))
            _arg(acc, "e", base)
        return
    if mark.tag == "mo" and len(mark.text) == 1 and mark.text in "⏟⏞":
        group = _sub(parent, "groupChr")
        props = _sub(group, "groupChrPr")
        _sub(props, "chr", mark.text)
        _sub(props, "pos", "bot" if node.tag == "munder" else "top")
        _arg(group, "e", base)
        return
    limit = _sub(parent, "limUpp" if node.tag == "mover" else "limLow")
    _arg(limit, "e", base)
    _arg(limit, "lim", mark)


#: MathML ``columnalign`` → ``m:mcJc`` (how Word sets a matrix column).
JUSTIFY = {"left": "left", "right": "right", "center": "center"}


def _matrix_props(matrix: Element, table: MathNode, columns: int) -> list[tuple[MathNode, ...]]:
    """``m:mPr`` of the ``table``: its column gap (:func:`_column_gaps`) and each column set as
    the first row's cells are aligned (``aligned`` and ``cases`` right and left, not Word's
    default of centred). Returns what starts each column's cells (a wider gap before it)."""
    first = table.children[0].children if table.children else ()
    sides = [JUSTIFY.get(cell.attr("columnalign"), "") for cell in first]
    gap, leads = _column_gaps(table.attr("columnspacing"), columns)
    aligned = any(side and side != "center" for side in sides)
    if gap is None and not aligned:
        return leads
    props = _sub(matrix, "mPr")
    if gap is not None:  # Word's default is one em between columns
        _sub(props, "cGpRule", "4" if gap else "3")  # multiples of half an em; exactly, twips
        _sub(props, "cGp", str(gap))
    if aligned:
        mcs = _sub(props, "mcs")
        for side in sides:
            column = _sub(_sub(mcs, "mc"), "mcPr")
            _sub(column, "count", "1")
            _sub(column, "mcJc", side or "center")
    return leads


def _column_gaps(spacing: str, columns: int) -> tuple[int | None, list[tuple[MathNode, ...]]]:
    """The matrix gap for MathML's ``columnspacing`` (``1em`` between the columns of
    ``cases``, amsmath's quad; ``0em 2em`` in ``aligned``, each relation against its left side
    and pairs of columns two em apart), in half ems (``m:cGp`` when ``m:cGpRule`` is 4), and
    for each column the space starting its cells: Office Math has one gap for a whole matrix,
    so the first is the gap and a wider one later is made up by a space in the cells after it.
    No gap (Word's default) for a table without ``columnspacing`` or with another unit."""
    values = [_EM.fullmatch(value) for value in spacing.split()]
    leads: list[tuple[MathNode, ...]] = [()] * columns
    if not values or None in values:
        return None, leads
    ems = [max(float(match.group(1)), 0.0) for match in values if match is not None]
    base = ems[0]
    for column in range(1, columns):
        wider = ems[min(column - 1, len(ems) - 1)] - base
        if wider > 0.05:
            leads[column] = (MathNode("mspace", (("width", f"{wider:g}em"),)),)
    return round(base * 2), leads


#: A table's outer rules at its sides as the bracket of an ``m:d`` (one rule, two).
_SIDE_BARS = {1: "|", 2: "‖"}


def _ruled_matrix(parent: Element, table: MathNode, rules: TableRules) -> None:
    """A table with rules. Office Math has no rule in a matrix (``m:m`` has no border, and a
    Word table cannot stand inside ``m:oMath``), so the closest forms it has: a rule between
    two columns is a column of bars (:data:`~renderers.math.rules.BARS`) in every row, as
    people write an augmented matrix in Word; a rule above or below a row (``\\hline``) is a
    bar (``m:bar``) over or under each of its cells, filled out to meet across the table
    (:func:`~renderers.math.rules.barred_rows`); outer rules at the sides (``{|cc|}``) are
    bracket bars around the matrix (``m:d``, the side without a rule empty), which Word and
    LibreOffice stretch to its height. LibreOffice 7.4 draws no ``m:borderBox`` (not even
    its bottom side alone) and shows an ``m:phant`` as its placeholder, which ruled out a box
    around the rows and a row of hidden cells under a rule. A dashed rule at a side
    is a plain bar: a dashed bracket is not stretched (LibreOffice sets a short one at each
    end)."""
    matrix = bar_columns(table, rules)
    if any(edge.count for edge in rules.rows):
        from renderers.math.svg import cell_widths  # the drawing's measure, loaded when used

        matrix = barred_rows(matrix, rules, cell_widths)
    left, right = rules.columns[0].count, rules.columns[-1].count
    if left or right:
        delimiter = _sub(parent, "d")
        props = _sub(delimiter, "dPr")
        _sub(props, "begChr", _SIDE_BARS.get(left, ""))
        _sub(props, "endChr", _SIDE_BARS.get(right, ""))
        _arg(delimiter, "e", matrix)
    else:
        _content(parent, (matrix,))


def _barred(parent: Element, node: MathNode) -> None:
    """A cell of a ruled row (:data:`~renderers.math.rules.RULED_CELL`): its content in a bar
    under it for each rule below, in a bar over it for each above (two nested bars: a double
    rule)."""
    element = parent
    for position, count in (("bot", node.attr("under")), ("top", node.attr("over"))):
        for _ in range(int(count or 0)):
            bar = _sub(element, "bar")
            _sub(_sub(bar, "barPr"), "pos", position)
            element = _sub(bar, "e")
    _content(element, node.children)
    _operands_held(element)


def _enclosed(parent: Element, node: MathNode) -> None:
    """``\\boxed`` as a box; ``\\cancel`` (and ``\\bcancel``, ``\\xcancel``) as a box with no
    sides and its strikes, as Word writes a struck-out term."""
    box = _sub(parent, "borderBox")
    strikes = [STRIKES[name] for name in node.attr("notation").split() if name in STRIKES]
    if strikes:
        props = _sub(box, "borderBoxPr")
        for side in ("hideTop", "hideBot", "hideLeft", "hideRight", *strikes):
            _sub(props, side, "1")
    _arg(box, "e", MathNode("mrow", children=node.children))


def _prescripted(node: MathNode) -> bool:
    """``{}^{14}_{6}\\mathrm{C}`` or ``^{235}U``: scripts on an empty base (an empty group, or
    latex2mathml's empty identifier when nothing stands before them), which belong to what
    follows."""
    if node.tag not in ("msub", "msup", "msubsup") or len(node.children) not in (2, 3):
        return False
    base = node.children[0]
    return not base.children and (base.tag == "mrow" or (base.tag == "mi" and not base.text))


def _prescripts(parent: Element, node: MathNode, base: MathNode) -> None:
    """``m:sPre``: scripts before their base (LibreOffice showed the empty base as a box). A
    missing script is a :data:`HOLDER`: Word has no prescript without both, and an empty one is
    its placeholder, which LibreOffice 7.4 shows as "❑" (its import turns any empty argument
    into one) and Word as a dotted box on screen."""
    scripts = node.children[1:]
    lower = scripts[0] if node.tag != "msup" else EMPTY
    upper = scripts[-1] if node.tag != "msub" else EMPTY
    pre = _sub(parent, "sPre")
    _arg(pre, "sub", lower)
    _arg(pre, "sup", upper)
    _arg(pre, "e", base)


def _named_limit(node: MathNode) -> bool:
    """``\\lim_{n\\to\\infty}``, ``\\max_x``, ``\\operatorname*{arg max}_x``: an operator name
    with a script below it (or as a subscript, which a displayed formula sets below)."""
    if node.tag not in ("msub", "munder") or len(node.children) != 2:
        return False
    base = node.children[0]
    letters = base.text.replace(" ", "").replace("\u2006", "").replace("\u2009", "")
    return base.tag == "mo" and len(letters) > 1 and letters.isalpha()


def _function(parent: Element, node: MathNode, operand: MathNode) -> None:
    """An operator name with its limit below, applied to the node after it: ``m:func`` over
    ``m:limLow``, as Word writes ``lim``. LibreOffice reads that as ``lim from {…} {…}``; a
    bare ``lim`` with a subscript was to it an operator missing its operand ("¿")."""
    function = _sub(parent, "func")
    below = _sub(_sub(function, "fName"), "limLow")
    name, limit = node.children
    _run(_sub(below, "e"), name.text, style=("p", None), literal=not name.text.isalpha())
    _arg(below, "lim", limit)
    _arg(function, "e", operand)


def _nary_operator(node: MathNode) -> str | None:
    """The operator character when ``node`` is a large operator, bare or with limits."""
    base = _operator_base(node)
    if base.tag == "mo" and base.text in NARY:
        return base.text
    return None


def _operator_base(node: MathNode) -> MathNode:
    """The base of a scripted ``node`` (``node`` itself when it has no scripts), an operator
    in braces (``\\sum\\nolimits``, see :mod:`renderers.math.tex`) taken out of them."""
    base = node.children[0] if node.tag in ("msub", "msup", "msubsup", "munder", "mover",
                                            "munderover") and node.children else node
    if base.tag == "mrow" and len(base.children) == 1 and base.children[0].tag == "mo":
        return base.children[0]
    return base


def _nary(parent: Element, node: MathNode, operator: str, operand: MathNode | None) -> None:
    nary = _sub(parent, "nary")
    props = _sub(nary, "naryPr")
    _sub(props, "chr", operator)
    under = node.tag in ("munder", "munderover")
    beside = _operator_base(node).attr("movablelimits") == "false"  # \nolimits
    _sub(props, "limLoc", "undOvr" if under or (operator not in "∫∬∭∮∯∰" and not beside)
         else "subSup")
    parts = node.children
    lower = upper = None
    if node.tag in ("msub", "munder") and len(parts) == 2:
        lower = parts[1]
    elif node.tag in ("msup", "mover") and len(parts) == 2:
        upper = parts[1]
    elif node.tag in ("msubsup", "munderover") and len(parts) == 3:
        lower, upper = parts[1], parts[2]
    if lower is None:
        _sub(props, "subHide", "1")
    if upper is None:
        _sub(props, "supHide", "1")
    _arg(nary, "sub", lower)
    _arg(nary, "sup", upper)
    _arg(nary, "e", operand)


def _fenced(parts: tuple[MathNode, ...]) -> bool:
    """An ``mrow`` opened by a stretchy fence (``\\left(``): an OMML delimiter."""
    return (
        len(parts) >= 2 and parts[0].tag == "mo" and parts[0].attr("fence") == "true"
        and parts[0].attr("form") == "prefix"
    )


def _upright(node: MathNode) -> bool:
    """Names of several letters (``sin``, ``rank``, ``mod``) and ``mathvariant="normal"`` are
    upright."""
    return node.attr("mathvariant") == "normal" or len(node.text) > 1


def _run(parent: Element, text: str, *, style: tuple[str | None, str | None] = (None, None),
         text_run: bool = False, literal: bool = False) -> Element:
    """``m:r``: italic math by default, else in the ``style`` of :data:`VARIANTS`; ordinary
    text (``text_run``) takes its bold or italic as Word text does. A ``literal`` run
    (``m:lit``) is one LibreOffice reads as quoted text: "lim sup" is otherwise two of its
    keywords, each missing its operand."""
    run = _sub(parent, "r")
    weight, script = style
    if text_run:
        _sub(_sub(run, "rPr"), "nor")
    elif weight or script or literal:
        props = _sub(run, "rPr")
        if literal:
            _sub(props, "lit")
        if script:
            _sub(props, "scr", script)
        if weight:
            _sub(props, "sty", weight)
    word_props = etree.SubElement(run, f"{{{W_NS}}}rPr")
    fonts = etree.SubElement(word_props, f"{{{W_NS}}}rFonts")
    for attr in ("ascii", "hAnsi"):
        fonts.set(f"{{{W_NS}}}{attr}", MATH_FONT)
    if text_run and weight in ("b", "bi"):
        etree.SubElement(word_props, f"{{{W_NS}}}b")
    if text_run and weight in ("i", "bi"):
        etree.SubElement(word_props, f"{{{W_NS}}}i")
    t = _sub(run, "t")
    t.text = text
    if text[:1].isspace() or text[-1:].isspace():
        t.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
    return run
