"""Code blocks in DOCX: a boxed table shaded as the code style's background, a row per code
line, each a paragraph in a monospace font, with coloured runs when the block is highlighted
(:mod:`renderers.writers.highlight`).

A line is a paragraph of its own so that the part of it Word wraps hangs in by its own
indentation plus four characters (:func:`~renderers.writers.common.code_hang`, the rule the
HTML and both PDFs follow): ``w:ind`` ``left`` is the hang and ``hanging`` takes the first
line back to the cell's edge. The box is the table's, not the paragraphs' borders: Word draws
adjacent bordered paragraphs as one box only when their indents are alike too, and lines
indented differently would have been a stair of boxes. The cells' margins are the space a
paragraph's border keeps (:func:`~renderers.writers.docx.oxml.frame_edges`), so the box and
its text stand where one bordered paragraph's would: the text at the scope's indent, across
the text's width, the box around it.

A line is a row of its own, not a paragraph of one cell, for the page breaks: a row that may
not split keeps a wrapped line on one page, and ``keepNext`` in a row keeps it with the next
row. In one cell LibreOffice broke a wrapped line across pages, and a ``keepNext`` there kept
the whole table with the paragraph after it, moving a long block to the next page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from renderers.writers.common import code_hang
from renderers.writers.docx.oxml import (
    Element,
    ParaProps,
    RunProps,
    Side,
    add_cell,
    add_paragraph,
    add_row,
    add_run,
    add_table,
    frame_edges,
    parting,
    run_props,
    w,
)
from renderers.writers.docx.tables import TEXT_SIZE
from renderers.writers.highlight import Highlighter

MONO_FONT = "Consolas"  # fontconfig maps it to DejaVu Sans Mono where Consolas is absent
CODE_SHADE = "F2F2F2"
#: Consolas' advance (1126 of 2048 units per em), what a character of the hang is: Word's
#: width of it. DejaVu Sans Mono, LibreOffice's stand-in, is 9 % wider, so there a hang
#: falls short by under half a character per four, still right of the line's own start.
MONO_ADVANCE = 1126 / 2048
#: Word's default tab stops (the base document's ``w:defaultTabStop``), in twips.
TAB_STOP = 720
#: One code line as runs of text in their run formatting.
CodeLine = Sequence[tuple[str, RunProps]]


def add_code_block(
    parent: Element, props: ParaProps, text: str, language: str, highlight: Highlighter,
    *, width: int, indent_at_edge: bool,
) -> Element:
    """Append the code block ``text`` (in ``language``, coloured by the document's
    ``highlight``) as a boxed table whose text starts at ``props``' indent and is ``width``
    twips wide (``indent_at_edge``: :func:`~renderers.writers.docx.oxml.add_table`'s), then
    the paragraph that keeps it apart from the next block (a table right after it would join
    it) with ``props``' space below; return the table."""
    code = text.rstrip("\n")
    highlighted = highlight(code, language)
    if highlighted is None:
        plain = RunProps(mono=MONO_FONT)
        lines: list[CodeLine] = [[(line, plain)] for line in code.split("\n")]
        shade, mark = CODE_SHADE, plain
    else:
        lines = [
            [(piece, RunProps(mono=MONO_FONT, color=look.color, bold=look.bold,
                              italic=look.italic, underline=look.underline))
             for piece, look in line]
            for line in highlighted.runs()
        ]
        shade, mark = highlighted.background, None
    edges = frame_edges(replace(props, border_box=True))
    padding = {edge.side: edge.padding for edge in edges}
    outer = width + padding["left"] + padding["right"]
    tbl = add_table(parent, [outer], indent=props.indent, edges=edges,
                    indent_at_edge=indent_at_edge)
    _add_lines(tbl, outer, shade, ParaProps(style=props.style), lines, mark)
    add_paragraph(parent, replace(parting(props), style=props.style,
                                  space_after=props.space_after))
    return tbl


def _add_lines(
    tbl: Element, width: int, shade: str, base: ParaProps, lines: Sequence[CodeLine],
    mark: RunProps | None,
) -> None:
    """Append ``lines`` to ``tbl``, a row each, as paragraphs formatted as ``base`` in cells
    ``width`` twips wide shaded ``shade``, each paragraph mark formatted as ``mark`` (None: as
    the body).

    A row may not split, so a wrapped line stays on one page; the first two rows stay
    together, and the last two, as widow control keeps a paragraph's lines (``keepNext`` in
    a row keeps it with the next). Only the first row keeps the table's space above its text
    and the last the space below, so that the rows are one box.

    The mark is in the font each line of the block ended in when the block was one paragraph
    (its line break: in the code font in a plain block, in the body's in a highlighted one),
    which gives an empty line, and in Word the last line of each paragraph, its height: a
    block whose lines all fit is as tall as before."""
    texts = ["".join(text for text, _ in line) for line in lines]
    last = len(lines) - 1
    made: dict[tuple[int, bool, bool], ParaProps] = {}  # lines repeat few
    for index, (text, line, hang) in enumerate(zip(texts, lines, _hangs(texts), strict=True)):
        keep = index in (0, last - 1) and index < last
        key = (hang, "\t" in text, keep)
        props = made.get(key)
        if props is None:
            props = made[key] = replace(
                base, indent=hang, hanging=hang, keep_next=keep,
                tabs=_tab_stops(hang) if key[1] else (), space_before=0, space_after=0,
            )
        inner: tuple[Side, ...] = (*(("top",) if index else ()),
                                   *(("bottom",) if index < last else ()))
        cell = add_cell(add_row(tbl, whole=True), width, shade=shade, margins=inner)
        p = add_paragraph(cell, props)
        if mark is not None:
            run_props(p.find(w("pPr")), mark)  # w:rPr ends w:pPr
        for piece, look in line:
            if piece:
                add_run(p, piece, look)


def _hangs(texts: Sequence[str]) -> list[int]:
    """Each line's hang in twips (:func:`~renderers.writers.common.code_hang` characters of
    the code font at the body's size). A blank line, which cannot wrap, takes the hang of
    the line above it (of the first line with text, at the top), so that lines repeat fewer
    paragraph formats."""
    hangs: list[int | None] = [
        round(code_hang(text) * MONO_ADVANCE * TEXT_SIZE) if text.strip() else None
        for text in texts
    ]
    known = next((hang for hang in hangs if hang is not None), 0)
    filled = []
    for hang in hangs:
        known = hang if hang is not None else known
        filled.append(known)
    return filled


def _tab_stops(indent: int) -> tuple[int, ...]:
    """The default tab stops up to a line's hanging ``indent`` (twips from the cell's text
    edge), set as the line's own: Word and LibreOffice take a hanging indent for a tab stop
    that comes before the default ones, and a leading tab went to the hang."""
    return tuple(range(TAB_STOP, indent + TAB_STOP, TAB_STOP))
