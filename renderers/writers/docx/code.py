"""Code blocks in DOCX: one shaded, boxed paragraph in a monospace font, its lines separated
by line breaks; coloured runs when the block is highlighted
(:mod:`renderers.writers.highlight`), on the style's background."""

from __future__ import annotations

from dataclasses import replace

from renderers.writers.docx.oxml import (
    Element,
    ParaProps,
    RunProps,
    add_break,
    add_paragraph,
    add_run,
)
from renderers.writers.highlight import Highlighter

MONO_FONT = "Consolas"  # fontconfig maps it to DejaVu Sans Mono where Consolas is absent
CODE_SHADE = "F2F2F2"


def add_code_block(
    parent: Element, props: ParaProps, text: str, language: str, highlight: Highlighter
) -> Element:
    """Append the code block ``text`` (in ``language``, coloured by the document's
    ``highlight``) as a paragraph with ``props`` plus the code frame; return the paragraph."""
    code = text.rstrip("\n")
    frame = replace(props, shade=CODE_SHADE, border_box=True)
    highlighted = highlight(code, language)
    if highlighted is None:
        p = add_paragraph(parent, frame)
        add_run(p, code, RunProps(mono=MONO_FONT))
        return p
    p = add_paragraph(parent, replace(frame, shade=highlighted.background))
    for index, line in enumerate(highlighted.runs()):
        if index:
            add_break(p)
        for piece, look in line:
            add_run(p, piece, RunProps(mono=MONO_FONT, color=look.color, bold=look.bold,
                                       italic=look.italic, underline=look.underline))
    return p
