"""A formula as one line of text (UnicodeMath-like: ``x²``, ``(a)/(b)``, ``√(x)``), for places
that hold only text: PPTX inline math, alt text, contents entries and PDF outline entries."""

from __future__ import annotations

from renderers.math.rules import BARS, NO_RULE, Edge, table_rules
from renderers.math.tex import ARROW, Formula, MathError, MathNode, parse_tex

#: Characters with a superscript and a subscript form, and those forms. The minus sign U+2212 is
#: what latex2mathml writes for ``-`` (``x^{-1}``, mhchem's ``OH-``); text keeps the hyphen.
_SCRIPTABLE = "0123456789+-\u2212=()"
_SUPERSCRIPTS = str.maketrans(_SCRIPTABLE + "n", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ⁿ")
_SUBSCRIPTS = str.maketrans(_SCRIPTABLE, "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎")
_SUPERSCRIPTABLE = frozenset(_SCRIPTABLE + "n")
_SUBSCRIPTABLE = frozenset(_SCRIPTABLE)
#: The horizontal braces of ``\\underbrace`` and ``\\overbrace``.
BRACES = frozenset("⏟⏞")


def linear_text(formula: Formula) -> str:
    """The formula as a line of Unicode text."""
    return _text(formula.root).strip()


def tex_line(tex: str, display: bool = False) -> str | None:
    """The formula ``tex`` as a line of Unicode text, or None when the TeX is not math (the
    caller then shows the source, as every writer does for such TeX)."""
    try:
        return linear_text(parse_tex(tex, display))
    except MathError:
        return None


def _group(node: MathNode) -> str:
    """A script or fraction part: in parentheses unless it is a single symbol."""
    text = _text(node)
    return text if len(text) <= 1 else f"({text})"


def _script(node: MathNode, marks: frozenset[str], table: dict[int, int], sign: str) -> str:
    text = _text(node)
    if text and set(text) <= marks:
        return text.translate(table)
    return sign + _group(node)


def _text(node: MathNode) -> str:
    parts = node.children
    match node.tag:
        case "mi" | "mn" | "mo" | "mtext" | "ms":
            return node.text
        case "mspace":
            return " "
        case "mphantom":
            return ""
        case "msup" if len(parts) == 2:
            return _text(parts[0]) + _script(parts[1], _SUPERSCRIPTABLE, _SUPERSCRIPTS, "^")
        case "msub" if len(parts) == 2:
            return _text(parts[0]) + _script(parts[1], _SUBSCRIPTABLE, _SUBSCRIPTS, "_")
        case "msubsup" | "munderover" if len(parts) == 3:
            below = _script(parts[1], _SUBSCRIPTABLE, _SUBSCRIPTS, "_")
            return _text(parts[0]) + below + _script(parts[2], _SUPERSCRIPTABLE,
                                                     _SUPERSCRIPTS, "^")
        case "munder" | "mover" if len(parts) == 2 and parts[1].text in BRACES:
            return _text(parts[0])  # the brace of \underbrace: its label follows as a script
        case "munder" if len(parts) == 2:
            return _text(parts[0]) + "_" + _group(parts[1])
        case "mover" if len(parts) == 2:
            return _text(parts[0]) + _text(parts[1]) if node.attr("accent") else (
                _text(parts[0]) + "^" + _group(parts[1])
            )
        case "mfrac" if len(parts) == 2:
            return f"{_group(parts[0])}/{_group(parts[1])}"
        case "msqrt":
            return "√" + _group(MathNode("mrow", children=parts))
        case "mroot" if len(parts) == 2:
            return f"√({_text(parts[1])}&{_text(parts[0])})"
        case "mtable" if (rules := table_rules(node)) is not None:
            return "; ".join(_ruled_row(row, rules.columns) for row in parts)
        case "mtable":
            return "; ".join(_text(row) for row in parts)
        case "mtr":
            return ", ".join(_text(cell) for cell in parts)
        case _:
            if len(parts) == 1:  # a braced arrow (mhchem's dative bond {\rightarrow}): unspaced
                return _text(parts[0])
            if not any(_arrow(child) for child in parts):
                return "".join(_text(child) for child in parts)
            return "".join(f" {_text(child)} " if _arrow(child) else _text(child)
                           for child in parts).replace("  ", " ")  # a space beside it once


#: A rule between two cells in a line of text (the others as Office Math draws them:
#: :data:`~renderers.math.rules.BARS`).
_TEXT_BARS = {**BARS, Edge(1): "|"}


def _ruled_row(row: MathNode, rules: tuple[Edge, ...]) -> str:
    """A row of a table with rules: a rule between two cells as " | " (the augmented matrix
    "1, 2 | 3"; " ‖ " for ``||``, " ╎ " for a dashed one); the outer ones and those between
    rows are left out, where "|" would read as an absolute value."""
    out = ""
    for index, cell in enumerate(row.children):
        if index:
            edge = rules[index] if index < len(rules) - 1 else NO_RULE
            out += f" {_TEXT_BARS[edge]} " if edge.count else ", "
        out += _text(cell)
    return out


def _arrow(node: MathNode) -> bool:
    """Whether ``node`` is an arrow, alone or carrying text (``A ⟶ B``, ``A →^(heat) B``): a
    space on each side, as the drawings give it a relation's."""
    base = node.children[0] if node.tag in ("mover", "munder", "munderover") else node
    return base.tag == "mo" and ARROW.fullmatch(base.text) is not None
