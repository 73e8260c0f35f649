"""A checked formula as MathML markup (HTML output; the SVG renderer's input).

Only the tree of :mod:`renderers.math.tex` is written, text and attribute values escaped, so the
markup carries nothing the allow-list did not keep. The TeX source rides along as an
``application/x-tex`` annotation (copy and paste, assistive tools).
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from renderers.math.tex import MATHML_NS, Formula, MathNode


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
    attrs = "".join(f" {name}={quoteattr(value)}" for name, value in node.attrs)
    inner = "".join(node_markup(child) for child in node.children) or escape(node.text)
    return f"<{node.tag}{attrs}>{inner}</{node.tag}>"
