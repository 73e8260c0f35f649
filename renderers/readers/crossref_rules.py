"""Cross-references in markdown, as pandoc-crossref and Quarto write them.

* ``@fig:solar``, ``@tbl:costs`` (or ``fig-solar``), a heading's ``@sec:intro``, with a
  capitalised prefix too (``@Fig:solar``), and bracketed ``[@fig:solar]`` or the group
  ``[@fig:a; @tbl:b]``: the inline rule makes ``crossref`` tokens. Inside brackets a ``-``
  before the ``@`` asks for the number alone (pandoc-crossref's ``[-@fig:solar]``, "3"; in a
  group each reference says so for itself: ``[-@fig:a; @fig:b]``). A ``@`` right after a
  letter or digit of a script that spaces its words, or after ``.``/``_``/``-``/``+``, is part
  of an e-mail address, never a reference (:func:`renderers.document.crossref_may_follow`);
  after a CJK, Thai or Arabic letter it is one (``见@fig:solar``). Such a refused ``@`` is a
  ``crossref_refused`` token, so the reader can warn when its label names a figure or table.
  ``[@…]`` followed by ``(`` or ``[`` is a link; citation tokens (``[[S:…]]``) never start
  with ``[@``. Labels hold letters and digits of any script (``@fig:图表``); a bare Latin
  label ends where words of an unspaced script go on (:func:`_bare_end`).
* ``![Caption](img.png){#fig:solar}``: a figure's label (:func:`figure_label`).
* ``$$ E = mc^2 $$ {#eq:energy}`` (Quarto's ``{#eq-energy}`` too): a displayed formula's
  label, right after its closing ``$$`` on the same line (:func:`equation_labels`).
* ``: Caption {#tbl:costs}`` or ``Table: Caption`` in the paragraph just before or after a
  table: its caption and label (:func:`attach_table_captions`).
"""

from __future__ import annotations

import dataclasses
import functools
import re
import unicodedata

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline

from renderers.document import (
    CROSSREF_LABEL,
    Block,
    CrossRefForm,
    Image,
    Inline,
    Math,
    Paragraph,
    Table,
    Text,
    crossref_may_follow,
    label_key,
    unspaced_letter,
)

LABEL = CROSSREF_LABEL

_SPLIT = re.compile(r"[ \t]*[;,][ \t]*")
_CAPTION = re.compile(r"^(?:Table:|table:|:)[ \t]")


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """``@label``, ``[@label; -@label …]`` and ``{#label …}`` (other pandoc attributes after the
    label are accepted and ignored), compiled on first use: a label's class
    of letters and marks takes a few milliseconds to compile, which an import need not pay."""
    return (
        re.compile(rf"@({LABEL})"),
        re.compile(rf"\[[ \t]*(-?@{LABEL}(?:[ \t]*[;,][ \t]*-?@{LABEL})*)[ \t]*\]"),
        re.compile(rf"^\{{#({LABEL})(?:\s[^{{}}]*)?\}}$"),
    )


def crossref_plugin(md: MarkdownIt) -> None:
    """Register the ``@fig:…``/``[@fig:…]`` inline rule (before links)."""
    md.inline.ruler.before("link", "crossref", _crossref)


def _crossref(state: StateInline, silent: bool) -> bool:
    src, pos = state.src, state.pos
    char = src[pos]
    if char == "@":
        match = _patterns()[0].match(src, pos, state.posMax)
        if match is None:
            return False
        end = _bare_end(src, match.start(1), match.end())
        if pos > 0 and not crossref_may_follow(src[pos - 1]):
            if not silent:  # "@" stays text; the reader warns when the label exists
                token = state.push("crossref_refused", "", 0)
                token.content = "@"
                token.meta = {"label": _nfc(src[pos + 1 : end]), "before": _word_before(src, pos),
                              "pos": pos}
            state.pos = pos + 1
            return True
        refs: list[tuple[str, CrossRefForm]] = [(_nfc(src[pos + 1 : end]), "name")]
    elif char == "[":
        match = _patterns()[1].match(src, pos, state.posMax)
        if match is None or src[match.end() : match.end() + 1] in ("(", "["):
            return False
        end = match.end()
        refs = [_bracketed(item) for item in _SPLIT.split(match.group(1))]
    else:
        return False
    if not silent:
        token = state.push("crossref", "", 0)
        token.meta = {"refs": refs}
        token.content = src[pos:end]
    state.pos = end
    return True


def _bracketed(item: str) -> tuple[str, CrossRefForm]:
    """The label and form of one reference of a bracket (``@fig:a`` or ``-@fig:a``)."""
    if item.startswith("-"):
        return _nfc(item[2:]), "number"
    return _nfc(item[1:]), "name"


def _bare_end(src: str, start: int, end: int) -> int:
    """Where a bare ``@label`` ends: a Latin label stops before a letter of a script whose
    words meet without a space (``如图@fig:cap所示`` refers to ``fig:cap``), while a label in
    such a script runs on as pandoc reads it (``[@fig:图表]`` bounds one)."""
    for index in range(start + 1, end):
        before = src[index - 1]
        if before.isascii() and (before.isalnum() or before == "_") and unspaced_letter(
            src[index]
        ):
            return index
    return end


def _nfc(label: str) -> str:
    """A label in one normal form, so that ``fig:café`` written composed and decomposed
    (``e`` + U+0301, as some editors save it) is one label."""
    return unicodedata.normalize("NFC", label)


def _word_before(src: str, pos: int) -> str:
    """The end of the word right before ``src[pos]`` (at most 20 characters), for a warning."""
    return src[max(0, pos - 20) : pos].split()[-1]


def figure_label(children: tuple[Inline, ...]) -> tuple[Image, str] | None:
    """The image and label of a paragraph that is an image followed by ``{#fig:…}``."""
    if len(children) != 2 or not isinstance(children[0], Image):
        return None
    attributes = children[1]
    if not isinstance(attributes, Text):
        return None
    match = _patterns()[2].match(attributes.text.strip())
    if match is None or not match.group(1).startswith("fig"):
        return None
    return children[0], _nfc(match.group(1))


def equation_labels(children: tuple[Inline, ...]) -> tuple[Inline, ...]:
    """``children`` with each displayed formula followed on its line by ``{#eq:…}`` labelled
    (the label's text taken out), as pandoc-crossref reads ``$$ … $$ {#eq:a}``."""
    if not any(isinstance(node, Math) and node.display for node in children):
        return children
    out: list[Inline] = []
    for node in children:
        last = out[-1] if out else None
        if isinstance(node, Text) and isinstance(last, Math) and last.display and not last.label:
            head = node.text.lstrip(" \t")
            close = head.find("}") + 1 if head.startswith("{#") else 0
            match = _patterns()[2].match(head[:close]) if close else None
            if match is not None and label_key(match.group(1)).startswith("eq"):
                out[-1] = dataclasses.replace(last, label=_nfc(match.group(1)))
                rest = head[close:]
                if rest:
                    out.append(Text(rest))
                continue
        out.append(node)
    return tuple(out)


def _caption(block: Block) -> tuple[tuple[Inline, ...], str] | None:
    """A pandoc table caption paragraph: its inlines (prefix and label removed) and label."""
    if not isinstance(block, Paragraph) or not block.children:
        return None
    first = block.children[0]
    if not isinstance(first, Text) or not _CAPTION.match(first.text):
        return None
    children = list(block.children)
    children[0] = Text(_CAPTION.sub("", first.text, count=1).lstrip())
    label = ""
    last = children[-1]
    if isinstance(last, Text):
        head, brace, tail = last.text.rpartition("{")
        match = _patterns()[2].match("{" + tail.strip()) if brace else None
        if match is not None and match.group(1).startswith("tbl"):
            label = _nfc(match.group(1))
            children[-1] = Text(head.rstrip())
    return tuple(c for c in children if not (isinstance(c, Text) and not c.text)), label


def attach_table_captions(blocks: list[Block]) -> list[Block]:
    """Tables joined with the caption paragraph right after (or, failing that, right
    before) them, as pandoc reads ``: Caption {#tbl:label}``."""
    if not any(isinstance(block, Table) for block in blocks):
        return blocks
    out: list[Block] = []
    index = 0
    while index < len(blocks):
        block = blocks[index]
        if isinstance(block, Table) and not block.caption:
            after = _caption(blocks[index + 1]) if index + 1 < len(blocks) else None
            before = _caption(out[-1]) if out and after is None else None
            found = after or before
            if found is not None:
                if before is not None:
                    out.pop()
                block = dataclasses.replace(block, caption=found[0], label=found[1])
                index += 1 if after is not None else 0
        out.append(block)
        index += 1
    return out
