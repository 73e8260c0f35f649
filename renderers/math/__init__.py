"""Math: TeX parsed once into a checked MathML tree (:mod:`.tex`), then written as MathML
(:mod:`.mathml`), Office Math (:mod:`.omml`), SVG/PNG (:mod:`.svg`) or a line of text
(:mod:`.linear`)."""

from renderers.math.tex import Formula, MathError, MathNode, parse_tex, shown_tex, tex_error

__all__ = ["Formula", "MathError", "MathNode", "parse_tex", "shown_tex", "tex_error"]
