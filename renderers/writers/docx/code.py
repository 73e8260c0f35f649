"""Code blocks in DOCX: shaded, boxed paragraphs in a monospace font, one per code line, with
coloured runs when the block is highlighted (:mod:`renderers.writers.highlight`), on the
style's background.

A line is a paragraph of its own so that the part of it Word wraps hangs in by its own
indentation plus four characters (:func:`~renderers.writers.common.code_hang`, the rule the
HTML and both PDFs follow): ``w:ind`` ``left`` is the hang and ``hanging`` takes the first
line back to the block's edge. In one paragraph with line breaks the wrapped part started at
the left edge, where ``    return compute(…)`` read as a new, shallower line. The lines keep the
one frame: adjacent paragraphs bordered alike are drawn as one box, without space between
them; only the first keeps the space above the block and the last the space below it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from renderers.writers.common import code_hang
from renderers.writers.docx.oxml import (
    Element,
    ParaProps,
    RunProps,
    add_paragraph,
    add_run,
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
    parent: Element, props: ParaProps, text: str, language: str, highlight: Highlighter
) -> Element:
    """Append the code block ``text`` (in ``language``, coloured by the document's
    ``highlight``) as paragraphs with ``props`` plus the code frame, one per line; return
    the first."""
    code = text.rstrip("\n")
    frame = replace(props, shade=CODE_SHADE, border_box=True)
    highlighted = highlight(code, language)
    if highlighted is None:
        plain = RunProps(mono=MONO_FONT)
        return _add_lines(parent, frame, [[(line, plain)] for line in code.split("\n")],
                          mark=plain)
    lines = [
        [(piece, RunProps(mono=MONO_FONT, color=look.color, bold=look.bold,
                          italic=look.italic, underline=look.underline))
         for piece, look in line]
        for line in highlighted.runs()
    ]
    return _add_lines(parent, replace(frame, shade=highlighted.background), lines)


def _add_lines(
    parent: Element, frame: ParaProps, lines: Sequence[CodeLine], mark: RunProps | None = None
) -> Element:
    """Append ``lines`` as the paragraphs of one ``frame``, each paragraph mark formatted as
    ``mark`` (None: as the body); return the first.

    The mark is in the font each line of the block ended in when the block was one paragraph
    (its line break: in the code font in a plain block, in the body's in a highlighted one),
    which gives an empty line, and in Word the last line of each paragraph, its height: a
    block whose lines all fit is as tall as before."""
    texts = ["".join(text for text, _ in line) for line in lines]
    hangs = _hangs(texts)
    last = len(lines) - 1
    made: dict[tuple[int, bool, bool, bool, bool], ParaProps] = {}  # lines repeat few
    first: Element | None = None
    for index, (line, hang) in enumerate(zip(lines, hangs, strict=True)):
        # the first two lines and the last two stay together, as widow control keeps the
        # lines of one paragraph
        keep = index in (0, last - 1) and index < last
        key = (hang, "\t" in texts[index], keep, index == 0, index == last)
        props = made.get(key)
        if props is None:
            end = frame.indent + hang
            props = made[key] = replace(
                frame,
                indent=end, hanging=hang, keep_lines=True, keep_next=keep,
                tabs=_tab_stops(frame.indent, end) if key[1] else (),
                space_before=frame.space_before if index == 0 else 0,
                space_after=frame.space_after if index == last else 0,
            )
        p = add_paragraph(parent, props)
        if mark is not None:
            run_props(p.find(w("pPr")), mark)  # w:rPr ends w:pPr
        for piece, look in line:
            if piece:
                add_run(p, piece, look)
        first = p if first is None else first
    assert first is not None  # a block has at least one line, if empty
    return first


def _hangs(texts: Sequence[str]) -> list[int]:
    """Each line's hang in twips (:func:`~renderers.writers.common.code_hang` characters of
    the code font at the body's size). A blank line, which cannot wrap, takes the hang of
    the line above it (of the first line with text, at the top): a paragraph indented as its
    neighbour shares its frame in every reader, whatever the reader compares."""
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


def _tab_stops(edge: int, indent: int) -> tuple[int, ...]:
    """The default tab stops from the block's ``edge`` to a line's hanging ``indent`` (twips
    from the margin), set as the line's own: Word and LibreOffice take a hanging indent for
    a tab stop that comes before the default ones, and a leading tab went to the hang."""
    return tuple(range((edge // TAB_STOP + 1) * TAB_STOP, indent + TAB_STOP, TAB_STOP))
