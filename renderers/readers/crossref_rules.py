"""Cross-references in markdown, as pandoc-crossref and Quarto write them.

* ``@fig:solar``, ``@tbl:costs`` (or ``fig-solar``), ``@eq:a``, ``@lst:code``, a heading's
  ``@sec:intro``, with a capitalised prefix too (``@Fig:solar``), and bracketed ``[@fig:solar]``
  or the group ``[@fig:a; @tbl:b]``: the inline rule makes ``crossref`` tokens. Inside brackets
  a ``-`` before the ``@`` asks for the number alone (pandoc-crossref's ``[-@fig:solar]``, "3";
  in a group each reference says so for itself: ``[-@fig:a; @fig:b]``), and words before it are
  the author's own prefix (``[Chart @fig:a]``, "Chart 3": pandoc-crossref's custom prefix, a
  citation's prefix in pandoc; plain words, no ``*``, ``_``, backquote, brace or bracket).
  A group inside a link's text (``[see [@fig:a; @fig:b]](…)``) leaves the link to be read: in
  markdown-it's silent pass, which measures the link's text, the rule declines a ``[``, so the
  bracket counts as nesting and the link rule does not give up on it. A ``@`` right after a
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
* A code listing, as pandoc-crossref reads one: the fence's attributes
  ````` ```{#lst:code .python caption="Caption"} ````` (:func:`fence_attributes`), or a
  ``Listing: Caption {#lst:code}`` / ``: Caption`` paragraph just before (else just after)
  the block (:func:`attach_listing_captions`; its ``codeBlockCaptions``, always on here).

What pandoc-crossref writes in HTML, for the HTML reader: an element whose id labels it
(:func:`element_label`) and whose caption is led by its number ("Figure 1: …", taken off:
:func:`without_caption_lead`): a figure (``<figure id="fig:a">``), a table (``<table
id="tbl:a">``, or a ``<div>`` around it), a listing (``<div id="lst:code">``), a displayed
formula (``<span id="eq:a">`` around MathJax's ``\\[ … \\qquad(1)\\]``:
:func:`displayed_formula`); and a reference is a link to one whose words end in that number
(:func:`link_reference`).
"""

from __future__ import annotations

import dataclasses
import functools
import re
import unicodedata
from typing import Literal

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline

from renderers.document import (
    CROSSREF_LABEL,
    Block,
    CodeBlock,
    CrossRef,
    CrossRefForm,
    CrossRefKind,
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
from renderers.readers.heading_attrs import split_attributes
from renderers.text import cut_long_mark_runs

LABEL = CROSSREF_LABEL

_SPLIT = re.compile(r"[ \t]*[;,][ \t]*")
#: What starts a caption paragraph, by the kind of block it captions.
_CAPTIONS = {
    "tbl": re.compile(r"^(?:Table:|table:|:)[ \t]"),
    "lst": re.compile(r"^(?:Listing:|listing:|:)[ \t]"),
}
#: One reference of a ``crossref`` token: its label, form, the author's prefix and whether
#: a ``-`` stood before its ``@`` after that prefix (:attr:`CrossRef.dash`).
CrossRefItem = tuple[str, CrossRefForm, str, bool]
#: The words of an author's prefix (``Chart`` of ``[Chart @fig:a]``).
_PREFIX = r"[^\s\[\]@;,{}*_`\\](?:[^\n\[\]@;,{}*_`\\]*[^\s\[\]@;,{}*_`\\])?"


@functools.cache
def _patterns() -> tuple[
    re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]
]:
    """``@label``, ``[@label; -@label; Chart @label …]``, ``{#label …}`` (other pandoc
    attributes after the label are accepted and ignored) and one reference of a bracket
    (prefix, ``-``, label), compiled on first use: a label's class of letters and marks takes
    a few milliseconds to compile, which an import need not pay."""
    item = rf"(?:{_PREFIX}[ \t]+)?-?@{LABEL}"
    return (
        re.compile(rf"@({LABEL})"),
        re.compile(rf"\[[ \t]*({item}(?:[ \t]*[;,][ \t]*{item})*)[ \t]*\]"),
        re.compile(rf"^\{{#({LABEL})(?:\s[^{{}}]*)?\}}$"),
        re.compile(rf"(?:({_PREFIX})[ \t]+)?(-?)@({LABEL})"),
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
        refs: list[CrossRefItem] = [(_nfc(src[pos + 1 : end]), "name", "", False)]
    elif char == "[":
        if silent:  # measuring a link's text: this bracket nests (a group inside a link)
            return False
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


def _bracketed(item: str) -> CrossRefItem:
    """The label, form, prefix and ``-`` of one reference of a bracket (``@fig:a``,
    ``-@fig:a``, ``Chart @fig:a``; a prefix names the kind itself, so it takes the named form
    even with a ``-``, which is kept to show as written should the label be unknown)."""
    match = _patterns()[3].fullmatch(item)
    assert match is not None  # the bracket's pattern read it
    prefix, dash, label = match.group(1) or "", bool(match.group(2)), _nfc(match.group(3))
    if prefix:
        return label, "name", prefix, dash
    return label, "number" if dash else "name", "", False  # the form says it


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
    (``e`` + U+0301, as some editors save it) is one label. A run of more than MOST_MARKS marks
    is normalised in pieces: CPython orders a run of marks in time quadratic in its length, in
    one call the deadline cannot interrupt (40,000 pairs of two marks of different classes took
    5 s; the content limit allows hours)."""
    return "".join(unicodedata.normalize("NFC", piece) for piece in cut_long_mark_runs(label))


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


def _caption(block: Block, kind: str) -> tuple[tuple[Inline, ...], str] | None:
    """A pandoc caption paragraph of a table (``kind`` "tbl") or listing ("lst"): its
    inlines (prefix and label removed) and label ("" when it ends in none of that kind)."""
    if not isinstance(block, Paragraph) or not block.children:
        return None
    first = block.children[0]
    start = _CAPTIONS[kind]
    if not isinstance(first, Text) or not start.match(first.text):
        return None
    children = list(block.children)
    children[0] = Text(start.sub("", first.text, count=1).lstrip())
    label = ""
    last = children[-1]
    if isinstance(last, Text):
        head, brace, tail = last.text.rpartition("{")
        match = _patterns()[2].match("{" + tail.strip()) if brace else None
        if match is not None and label_key(match.group(1)).startswith(kind):
            label = _nfc(match.group(1))
            children[-1] = Text(head.rstrip())
    return tuple(c for c in children if not (isinstance(c, Text) and not c.text)), label


def attach_table_captions(blocks: list[Block]) -> list[Block]:
    """Tables joined with the caption paragraph right after (or, failing that, right
    before) them, as pandoc reads ``: Caption {#tbl:label}``."""
    return _attach_captions(blocks, Table, "tbl", after_first=True)


def attach_listing_captions(blocks: list[Block]) -> list[Block]:
    """Code blocks joined with the caption paragraph right before (or, failing that, right
    after) them, as pandoc-crossref reads ``Listing: Caption {#lst:code}``; a label in the
    caption numbers a block its fence did not label. Before comes first, so that listings
    each captioned above keep their own; blocks captioned by their fence take none."""
    return _attach_captions(blocks, CodeBlock, "lst", after_first=False)


def _attach_captions(blocks: list[Block], kind: type[Table] | type[CodeBlock],
                     prefix: Literal["tbl", "lst"], *, after_first: bool) -> list[Block]:
    """Each uncaptioned block of ``kind`` joined with the caption paragraph (labelled
    ``prefix``) on its first side, else on its other side; the paragraph is taken out."""
    if not any(isinstance(block, kind) for block in blocks):
        return blocks
    out: list[Block] = []
    index = 0
    while index < len(blocks):
        block = blocks[index]
        if isinstance(block, kind) and not block.caption:
            before = _caption(out[-1], prefix) if out else None
            after = _caption(blocks[index + 1], prefix) if index + 1 < len(blocks) else None
            if after_first and after is not None:
                before = None
            elif not after_first and before is not None:
                after = None
            found = before or after
            if found is not None:
                if before is not None:
                    out.pop()
                block = dataclasses.replace(block, caption=found[0],
                                            label=block.label or found[1])
                index += 1 if after is not None else 0
        out.append(block)
        index += 1
    return out


def fence_attributes(info: str) -> tuple[str, str, tuple[Inline, ...]]:
    """The language, listing label and caption a fence's info string gives: ``python``,
    ``{#lst:code .python caption="Caption"}`` or ``python {#lst:code}`` (pandoc's
    ``fenced_code_attributes``: the language is the first word, else the first class; an id
    is a label when it names a listing, ``lst:…``)."""
    head, attributes = split_attributes(info) if "{" in info else (info, None)
    words = head.split()
    if attributes is None:
        return (words[0] if words else ""), "", ()
    language = words[0] if words else next(iter(attributes.classes), "")
    caption = attributes.value("caption")
    return language, element_label(attributes.id, "lst"), (Text(caption),) if caption else ()


def element_label(ident: str, kind: CrossRefKind) -> str:
    """The label an id gives an element of ``kind`` (a fence's ``{#lst:code}``, an HTML
    figure's ``id="fig:a"``): the id when it is a label of that kind, else ""."""
    if not label_key(ident).startswith(kind) or not _whole_label().fullmatch(ident):
        return ""  # the prefix first: most ids an HTML page has are no label at all
    return _nfc(ident)


@functools.cache
def _whole_label() -> re.Pattern[str]:
    """:data:`LABEL`, compiled on first use (as :func:`_patterns`)."""
    return re.compile(LABEL)


#: A displayed formula as pandoc writes it for MathJax (``\[ … \]``), the number
#: pandoc-crossref put in it at the end (``\qquad(1)``, or ``\tag{1}`` when asked).
_DISPLAYED = re.compile(
    r"\s*\\\[(.*?)(?:\\qquad\s*\([0-9]+(?:\.[0-9]+)*\)|\\tag\{[0-9]+(?:\.[0-9]+)*\})?\s*\\\]\s*",
    re.DOTALL,
)


def displayed_formula(text: str) -> str | None:
    """The TeX of a displayed formula pandoc wrote for MathJax, without the number
    pandoc-crossref put at its end (the formula is numbered again), or None when ``text`` is
    no such formula."""
    match = _DISPLAYED.fullmatch(text)
    tex = match.group(1).strip() if match else ""
    return tex or None


#: A number as pandoc-crossref shows one: "3", or with its chapter's, "1.3".
_SHOWN_NUMBER = r"[1-9][0-9]{0,8}(?:\.[0-9]{1,9})*"
#: The words of a link to a numbered element that make it a reference: the number, after the
#: name or the author's word for it ("lst.\u00a01", "Listing 1", "1").
_LINK_WORDS = re.compile(rf"(?:({_PREFIX})\s+)?({_SHOWN_NUMBER})")


def link_reference(label: str, shown: str) -> CrossRef | None:
    """The reference an HTML link to the element labelled ``label`` is, from the words it
    shows (white space collapsed): "1" (a chapter's "1.3") the number alone (pandoc-crossref's
    ``[-@lst:a]``, and its links by default: the name stays outside, "lst.\u00a0<a>1</a>"),
    "lst. 1" the author's words before the number (:attr:`CrossRef.prefix`: the number is the
    pass's, the words theirs); None for other words ("the code below"), which stay the
    author's link."""
    match = _LINK_WORDS.fullmatch(shown.strip())
    if match is None:
        return None
    prefix = match.group(1) or ""
    return CrossRef(label, prefix=prefix) if prefix else CrossRef(label, form="number")


def without_caption_lead(children: tuple[Inline, ...], kind: CrossRefKind) -> tuple[Inline, ...]:
    """A caption without the number its HTML writer led it with ("Listing 1: …", in any of
    citerender's languages, pandoc-crossref's default among them): the element is numbered
    again, and its caption would read "Listing 1: Listing 1: …"."""
    first = children[0] if children else None
    if not isinstance(first, Text):
        return children
    rest = without_text_lead(first.text, kind)
    if rest == first.text:
        return children
    return ((Text(rest),) if rest else ()) + children[1:]


def without_text_lead(text: str, kind: CrossRefKind) -> str:
    """``text`` without the numbered caption lead it starts with (:func:`without_caption_lead`;
    an image's alt text, where pandoc 2 wrote a figure's caption)."""
    match = _caption_leads(kind).match(text)
    return text[match.end():] if match else text


@functools.cache
def _caption_leads(kind: CrossRefKind) -> re.Pattern[str]:
    """The numbered caption leads of ``kind`` in every language, as :meth:`Labels.caption_lead`
    writes them, any number (a chapter's too: "Figure 1.3:"), then white space or the caption's
    end."""
    from renderers.labels import LABELS

    leads = {
        re.escape(words.caption.format(name=words.numbered(kind, 0))).replace("0", _SHOWN_NUMBER)
        for words in LABELS.values()
    }
    return re.compile(rf"(?:{'|'.join(sorted(leads, key=len, reverse=True))})(?:\s+|$)")
