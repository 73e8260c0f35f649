"""A checked formula as MathML markup (HTML output; the SVG renderer's input).

Only the tree of :mod:`renderers.math.tex` is written, text and attribute values escaped, so the
markup carries nothing the allow-list did not keep. The TeX source rides along as an
``application/x-tex`` annotation (copy and paste, assistive tools).

A table's rules (:mod:`renderers.math.rules`) are written twice: as MathML's ``columnlines``
and ``rowlines`` (the rules between columns and rows, which Firefox draws; MathML has no
value for a double rule, given as ``solid``, nor for one outer side) and as CSS borders on the
cells, which is what Chromium draws (MathML Core dropped the attributes): a rule between two
columns is the right border of the cells before it, in the middle of the gap their padding
makes, as TeX sets a rule in the middle of ``2\\arraycolsep``; a double rule is a ``double``
border as wide as TeX's two rules and ``\\doublerulesep``. A dashed rule (arydshln's ``:``
and ``\\hdashline``) is ``dashed`` in both; CSS has no double dashed border, so ``::`` is one
dashed border, and the browser chooses the dashes' length (Chromium: a few pixels, not
arydshln's 4 pt).
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from renderers.math.rules import NO_RULE, Edge, TableRules, table_rules
from renderers.math.tex import MATHML_NS, Formula, MathNode

#: One rule as a cell border, and two (TeX: 0.4 pt rules 2 pt apart, at 10 pt); dashed ones.
_BORDERS = {Edge(1): ".04em solid", Edge(2): ".28em double", Edge(1, True): ".04em dashed",
            Edge(2, True): ".04em dashed"}


def mathml_markup(formula: Formula, *, annotate: bool = True) -> str:
    """``<math>`` for ``formula`` (``display="block"`` when displayed)."""
    display = "block" if formula.display else "inline"
    body = node_markup(formula.root)
    if annotate:
        body = (
            f"<semantics>{body}<annotation encoding=\"application/x-tex\">"
            f"{escape(formula.tex)}</annotation></semantics>"
        )
    return f'<math xmlns="{MATHML_NS}" display="{display}">{body}</math>'


def node_markup(node: MathNode) -> str:
    """One element and everything inside it."""
    rules = table_rules(node)
    if rules is not None:
        node = _bordered(node, rules)
    attrs = "".join(f" {name}={quoteattr(value)}" for name, value in node.attrs)
    inner = "".join(node_markup(child) for child in node.children) or escape(node.text)
    return f"<{node.tag}{attrs}>{inner}</{node.tag}>"


def _bordered(table: MathNode, rules: TableRules) -> MathNode:
    """``table`` with its rules as MathML's attributes and as its cells' borders."""
    attrs = list(table.attrs)
    for name, edges in (("columnlines", rules.inner_columns()), ("rowlines", rules.inner_rows())):
        if any(edge.count for edge in edges):
            attrs.append((name, " ".join(edge.style for edge in edges)))
    rows = []
    for row_index, row in enumerate(table.children):
        cells = []
        for index, cell in enumerate(row.children):
            sides = (("left", rules.columns[0] if index == 0 else NO_RULE),
                     ("right", rules.columns[min(index + 1, len(rules.columns) - 1)]),
                     ("top", rules.rows[0] if row_index == 0 else NO_RULE),
                     ("bottom", rules.rows[min(row_index + 1, len(rules.rows) - 1)]))
            style = ";".join(f"border-{side}:{_BORDERS[edge]}" for side, edge in sides
                             if edge.count)
            cells.append(MathNode(cell.tag, (*cell.attrs, ("style", style)), cell.children,
                                  cell.text) if style else cell)
        rows.append(MathNode(row.tag, row.attrs, tuple(cells), row.text))
    return MathNode(table.tag, tuple(attrs), tuple(rows), table.text)
