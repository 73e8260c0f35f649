"""What stands at the right margin of a displayed formula: its number, "(1)", when the
cross-reference pass numbered it (``$$…$$ {#eq:a}``), else its own ``\\tag{x}``, "(x)", else
nothing. Every writer asks here, so the rule has one home."""

from __future__ import annotations

from renderers.document import Math
from renderers.math.tex import MathError, parse_tex


def equation_mark(node: Math) -> str:
    """"(1)", a tag's "(x)", or "" (an inline or unnumbered formula, TeX that is not math)."""
    if not node.display:
        return ""
    if node.number:
        return f"({node.number})"
    return formula_tag(node.tex)


def formula_tag(tex: str) -> str:
    """The margin tag of a displayed formula ``tex`` ("" for none, or for TeX that is not
    math)."""
    if "\\tag" not in tex:
        return ""
    try:
        return parse_tex(tex, True).tag
    except MathError:
        return ""
