"""Code blocks and the table of contents in the Typst markup.

A code block is coloured as the HTML report colours it (:mod:`renderers.writers.highlight`,
one highlighter per document, so both PDFs colour the same blocks): the style's background and
text colour on the block, each run of one look in its colour, weight, slant and underline.
The contents list (:mod:`renderers.writers.contents` decides its entries) links each entry to
its heading and ends it in a dot leader and the heading's page number, as the WeasyPrint PDF's
does.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from renderers.labels import Labels
from renderers.text import split_runs_at_long_words
from renderers.writers.common import CODE_TAB_SIZE, CONTENTS_ID, code_hang
from renderers.writers.contents import ContentsEntry
from renderers.writers.typst.escape import string_literal, text_markup, word_pieces
from renderers.writers.typst.parts import array, call, content, section_title

if TYPE_CHECKING:
    from renderers.writers.highlight import Highlighter, TokenLook


def code_lines(lines: Sequence[str]) -> str:
    """Verbatim lines (tabs expanded, long words breakable), each a ``code-line``."""
    return "".join(
        code_line(line, text_markup(line, collapse=False))
        for line in (line.expandtabs(CODE_TAB_SIZE) for line in lines)
    )


def code_line(text: str, markup: str) -> str:
    """One line of code (``text``, its tabs expanded) as ``markup``: a paragraph of its own,
    whose wrapped part hangs in by :func:`~renderers.writers.common.code_hang` characters; a
    blank line keeps its height."""
    if not text.strip():
        return "#code-line(0, none);"
    return f"#code-line({code_hang(text)}, {content(markup)});"


class CodeBlocks:
    """Writes the code blocks of one document, highlighted where their language has a lexer."""

    def __init__(self, style: str) -> None:
        self.style = style
        self.highlight: Highlighter | None = None  # made by the first code block

    def block(self, text: str, language: str, caption: str = "") -> str:
        """``code-block`` of ``text``, coloured when its language has a lexer, under
        ``caption`` (a listing's "Listing 1: …" markup) when there is one."""
        captioned = (f"caption: {content(caption)}",) if caption else ()
        if self.highlight is None:  # a document without code never imports the highlighter
            from renderers.writers.highlight import Highlighter

            self.highlight = Highlighter(self.style)
        highlighted = self.highlight(text, language)
        if highlighted is None:
            return call("code-block", content(code_lines(text.removesuffix("\n").split("\n"))),
                        *captioned)
        foreground = highlighted.foreground
        lines = [
            code_line("".join(piece for piece, _ in line).expandtabs(CODE_TAB_SIZE),
                      "".join(_runs(line, foreground)))
            for line in highlighted.runs()
        ]
        colours = (f"background: {string_literal(highlighted.background)}",
                   f"foreground: {string_literal(foreground)}")  # fmt: skip
        return call("code-block", content("".join(lines)), *colours, *captioned)


def _runs(line: Sequence[tuple[str, TokenLook]], foreground: str) -> Iterator[str]:
    """The runs of one highlighted line; those in a long word of the line (counted across its
    runs, as the HTML report counts it) as boxes Typst may break between, as
    :func:`~renderers.writers.typst.escape.text_markup` sets a long word of plain text."""
    for text, look, in_long_word in split_runs_at_long_words(line):
        if not in_long_word:
            yield _run(text, look, foreground)
            continue
        for piece in word_pieces(text.expandtabs(CODE_TAB_SIZE)):
            yield f"#box[{_run(piece, look, foreground)}];"


def _run(text: str, look: TokenLook, foreground: str) -> str:
    """One run of code in its look (plain text when it looks like the block's own text)."""
    from renderers.writers.highlight import TokenLook  # imported by the block's highlighting

    markup = text_markup(text.expandtabs(CODE_TAB_SIZE), collapse=False)
    if look == TokenLook(foreground):
        return markup
    flags = ", ".join("true" if f else "false" for f in (look.bold, look.italic, look.underline))
    return call("code-run", string_literal(look.color), flags, content(markup))


def contents_markup(entries: Sequence[ContentsEntry], words: Labels) -> str:
    """The contents list of ``entries`` under its heading in ``words`` ("" when there are
    none): ``(depth, text, anchor, rtl)`` for ``contents-list`` in the template."""
    if not entries:
        return ""
    items = array(
        f"({entry.depth}, [{text_markup(entry.text)}], {string_literal(entry.anchor)}, "
        f"{'true' if entry.direction == 'rtl' else 'false'})"
        for entry in entries
    )
    title = section_title(words.contents)
    return call("contents-list", title, string_literal(CONTENTS_ID), items)
