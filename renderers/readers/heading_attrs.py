"""Pandoc's heading attributes in markdown: ``## Results {#results .unlisted}``.

Pandoc (``header_attributes``, on in its ``markdown``) and many model answers end a heading
with an attribute block; read as CommonMark, the block stayed in the heading's text and
``[see](#results)`` led nowhere. Here the block is taken off the heading as pandoc 2.17 reads
it, and the heading's token carries what it said (:class:`HeadingAttributes`, in
``heading_open.meta["attributes"]``) for the reader to give the heading.

Where the block starts is the grammar's one home, :mod:`citations.attribute_block` (the
scanner reads it too, so the audit without render agrees); here is what the block says: the
last ``#id`` wins, ``id=`` and ``class=`` set those, ``-`` is ``.unnumbered``. ``{}`` is an
empty block, taken off too. An ATX heading's closing ``#`` may come before the block
(``# A ## {#a}``); they are closing marks when a space comes before them, as CommonMark (and
so this reader, ``# C#``) has it, where pandoc would read ``# C# {#cs}`` as "C".

Why not ``mdit_py_plugins``' ``attrs``/``attrs_block``: they read djot's grammar (``%``
comments, no ``-``), ``attrs`` only after an inline element (an image, a code span, a link)
and ``attrs_block`` only on a line of its own before a block; neither takes a block off a
heading's end. A block right after a code span or link ends the heading here, where pandoc
gives it to that element: the place a link to the id leads to is the same line.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.token import Token

from citations.attribute_block import BARE, IDENT, QUOTED, attribute_block_start, block_starts
from citations.chars import clean_text
from renderers.document import UNLISTED

__all__ = [
    "HeadingAttributes", "escape_attribute_block", "heading_attributes_plugin",
    "split_attributes",
]

_NAME = re.compile(IDENT)
#: ``key=value``: the key, then the value quoted (group 2) or else bare (group 3).
_KEY_VALUE = re.compile(rf"({IDENT})=(?:({QUOTED})|({BARE}))")
_CLOSING = re.compile(r"(?:^|[ \t])(#+)[ \t]*$")


@dataclass(frozen=True)
class HeadingAttributes:
    """What a heading's (or a code fence's) attribute block said: its ``id`` ("" for none), its
    ``classes`` (in order), the block as written (``source``, for a note naming it) and its
    other ``key=value`` pairs (``values``: a listing's ``caption="…"``; the last one wins)."""

    id: str = ""
    classes: tuple[str, ...] = ()
    source: str = ""
    values: tuple[tuple[str, str], ...] = ()

    def value(self, key: str) -> str:
        """The value the block gives ``key`` ("" for none)."""
        return dict(self.values).get(key, "")

    @property
    def unlisted(self) -> bool:
        """Whether the author kept the heading out of the contents and the PDF outline
        (``.unlisted``). The other classes change nothing: ``.unnumbered`` (``-``) as no
        writer numbers headings."""
        return UNLISTED in self.classes


def split_attributes(text: str) -> tuple[str, HeadingAttributes | None]:
    """``text`` (a heading's last line, up to its end) without the attribute block that ends
    it, and what the block says; ``(text, None)`` when it ends in none
    (:func:`citations.attribute_block.attribute_block_start` finds it)."""
    start = attribute_block_start(text)
    if start is None:
        return text, None
    return text[:start], _attributes(text[start:].rstrip(" \t"))


def escape_attribute_block(text: str) -> str:
    """Markdown ``text`` ending a heading with the brace of each attribute block it would end
    in escaped (``a \\{#x}``), so that it reads back as text, here and in pandoc: how the
    Markdown writer keeps a heading whose text ends so (read from ``a \\{#x}``)."""
    pieces: list[str] = []
    done = 0
    for start in block_starts(text):
        pieces += (text[done:start], "\\")
        done = start
    return "".join(pieces) + text[done:]


def _attributes(block: str) -> HeadingAttributes:
    """What a block :func:`attribute_block_start` found says (pandoc's fold: the last id wins)."""
    ident = ""
    classes: list[str] = []
    values: list[tuple[str, str]] = []
    inner = block[1:-1]
    pos = 0
    while pos < len(inner):
        char = inner[pos]
        pair = _KEY_VALUE.match(inner, pos)
        if char in " \t":
            pos += 1
        elif pair is not None:
            key, value = pair.group(1), _value(pair.group(2), pair.group(3))
            if key == "id":
                ident = value
            elif key == "class":
                classes.extend(value.split())
            else:
                values.append((key, value))
            pos = pair.end()
        elif char == "-":
            classes.append("unnumbered")
            pos += 1
        else:
            name = _NAME.match(inner, pos + 1)
            assert name is not None  # the grammar read the block
            if char == "#":
                ident = name.group()
            else:
                classes.append(name.group())
            pos = name.end()
    return HeadingAttributes(ident, tuple(dict.fromkeys(classes)), block, tuple(values))


def _value(quoted: str | None, bare: str | None) -> str:
    """A value as pandoc reads it: a quoted one without its quotes, its character references
    decoded; backslash escapes decoded in both kinds. Which kind it is comes from the grammar,
    not its first character: a quote that does not close starts a bare value (``id="abc``).
    A character no writer can carry that a reference gives (``&#12;``) is U+FFFD, as in an
    HTML id and in a link's target (:func:`renderers.text.link_target`)."""
    if quoted is not None:
        return clean_text(html.unescape(re.sub(r"\\(.)", r"\1", quoted[1:-1])))
    return re.sub(r"\\(.)", r"\1", bare or "")


def _atx_text(line: str) -> str:
    """An ATX heading's text before its attribute block, its closing ``#``s taken off when a
    space comes before them or they are all there is (CommonMark's closing sequence)."""
    closing = _CLOSING.search(line)
    return (line[: closing.start(1)] if closing else line).strip(" \t")


#: A markdown-it block rule, and what takes a block off the heading one of them made.
_BlockRule = Callable[[StateBlock, int, int, bool], bool]
_Take = Callable[[StateBlock, int, Token, Token], None]


def heading_attributes_plugin(md: MarkdownIt) -> None:
    """Take attribute blocks off ATX and setext headings (wrapping markdown-it's two rules)."""
    rules = {rule.name: rule for rule in md.block.ruler.__rules__}
    takes: tuple[tuple[str, _Take], ...] = (("heading", _take_atx), ("lheading", _take_setext))
    for name, take in takes:
        rule = rules[name]
        md.block.ruler.at(name, _with_attributes(rule.fn, take), {"alt": rule.alt})


def _with_attributes(rule: _BlockRule, take: _Take) -> _BlockRule:
    """``rule`` (markdown-it's ``heading`` or ``lheading``), its heading's block taken off."""

    def read(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
        count = len(state.tokens)
        found = bool(rule(state, start_line, end_line, silent))
        if found and not silent and len(state.tokens) >= count + 3:
            opening, inline = state.tokens[count], state.tokens[count + 1]
            if opening.type == "heading_open" and inline.type == "inline":
                take(state, start_line, opening, inline)
        return found

    return read


def _take_atx(state: StateBlock, line: int, opening: Token, inline: Token) -> None:
    begin = state.bMarks[line] + state.tShift[line]
    after_marks = state.src[begin + len(opening.markup) : state.eMarks[line]]
    text, attributes = split_attributes(after_marks)
    if attributes is not None:
        opening.meta["attributes"] = attributes
        inline.content = _atx_text(text)


def _take_setext(state: StateBlock, line: int, opening: Token, inline: Token) -> None:
    """A setext heading's block ends its last line (pandoc's setext headings have one)."""
    head, newline, last = inline.content.rpartition("\n")
    text, attributes = split_attributes(last)
    if attributes is not None:
        opening.meta["attributes"] = attributes
        inline.content = (head + newline + text).rstrip(" \t\n")
