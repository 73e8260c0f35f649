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
    w,
)
from renderers.writers.highlight import Highlighter

MONO_FONT = "Consolas"  # fontconfig maps it to DejaVu Sans Mono where Consolas is absent
CODE_SHADE = "F2F2F2"


#: The paragraph between two code blocks in a row: one point high, no space around it.
_GAP = ParaProps(space_before=0, space_after=0, line_exact=20)


def add_code_block(
    parent: Element, props: ParaProps, text: str, language: str, highlight: Highlighter
) -> Element:
    """Append the code block ``text`` (in ``language``, coloured by the document's
    ``highlight``) as a paragraph with ``props`` plus the code frame; return the paragraph.

    Word and LibreOffice draw one box around adjacent paragraphs whose borders are the same,
    so a code block right after another (the last paragraph of ``parent``, shaded and boxed
    with the same frame) is kept apart by a one-point empty paragraph.
    """
    code = text.rstrip("\n")
    frame = replace(props, shade=CODE_SHADE, border_box=True)
    if _follows_code(parent, frame):
        add_paragraph(parent, replace(_GAP, indent=props.indent, bidi=props.bidi))
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


def _follows_code(parent: Element, frame: ParaProps) -> bool:
    """Whether the last paragraph of ``parent`` is a code block framed like ``frame`` (boxed,
    at the same indent): its box and the next one's would be drawn as one."""
    if not len(parent):
        return False
    last = parent[-1]
    ppr = last.find(w("pPr"))
    if last.tag != w("p") or ppr is None:
        return False
    border = ppr.find(f"{w('pBdr')}/{w('top')}")
    indent = ppr.find(w("ind"))
    shown = int(indent.get(w("left"), "0")) if indent is not None else 0
    return border is not None and shown == frame.indent
