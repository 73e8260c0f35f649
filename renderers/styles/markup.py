"""The CSL processor's output as IR inline nodes, so that every writer shows a styled entry
with the writer code it already has for emphasis, links and superscripts.

citeproc-py formats through a *formatter* module (functions and ``str`` wrapper classes). The
:data:`FORMATTER` here wraps each formatted span in a pair of private-use characters; the input
data has those characters removed first (:func:`strip_marks`), so a title can never open or
close a span. :func:`parse_marked` turns the marked string into ``Emph``, ``Strong``,
``Styled`` and ``Link`` nodes; :func:`link_urls` links the URLs and DOIs an entry prints.
"""

from __future__ import annotations

import re
import types
from collections.abc import Callable

from citations.links import safe_link
from renderers.document import Emph, Inline, InlineStyle, Link, Strong, Styled, Text
from renderers.text import BIDI_CONTROLS

#: Private-use characters that delimit spans in the processor's output (never in input data).
_BASE = 0xE000
_MARKS = re.compile("[\ue000-\ue0ff]")

Kind = str  # "i", "b", "u", "sup", "sub", "plain", "item", "number", "unit"
_OPEN: dict[Kind, str] = {}
_CLOSE: dict[str, Kind] = {}
for _index, _kind in enumerate(("i", "b", "u", "sup", "sub", "plain", "item", "number",
                                "unit")):
    _OPEN[_kind] = chr(_BASE + 2 * _index)
    _CLOSE[chr(_BASE + 2 * _index + 1)] = _kind
_OPENERS = {char: kind for kind, char in _OPEN.items()}
#: Separates an item span's entry number from its text: ``OPEN(item) 12 ITEM_SEP text CLOSE``.
ITEM_SEP = chr(_BASE + 0x40)
#: Every span's closing character, in one string (for a regular expression's ``[...]``).
CLOSINGS = "".join(_CLOSE)
#: A unit span (:mod:`renderers.styles.bidi`: one name, one title) opens with the unit mark
#: and one of these, its number, so that the parts of one name are told from the next name's.
UNIT_NUMBERS = 0x80
_UNIT_NUMBER_BASE = _BASE + 0x80
_UNIT_NUMBER_CHARS = frozenset(map(chr, range(_UNIT_NUMBER_BASE,
                                              _UNIT_NUMBER_BASE + UNIT_NUMBERS)))


#: A straight apostrophe between two letters or digits ("O'Brien", "Europe's").
_APOSTROPHE = re.compile(r"(?<=\w)'(?=\w)")


def typographic_apostrophes(text: str) -> str:
    """``text`` with each apostrophe inside a word typographic ("O’Brien"), as citeproc-js and
    pandoc print a name or title given with a straight one."""
    return _APOSTROPHE.sub("\u2019", text)


def strip_marks(text: str) -> str:
    """``text`` without the private-use characters the spans are made of."""
    return _MARKS.sub("", text)


def opening(kind: Kind) -> str:
    return _OPEN[kind]


def closing(kind: Kind) -> str:
    return chr(ord(_OPEN[kind]) + 1)


def item_prefix(number: int) -> str:
    """What a citation item's ``prefix`` holds so that its rendering becomes a link to the
    Sources entry ``number``."""
    return f"{_OPEN['item']}{number}{ITEM_SEP}"


def unit(text: str, number: int) -> str:
    """``text`` (a name part, a title) as unit ``number`` (any int; two units are told apart
    by their numbers modulo :data:`UNIT_NUMBERS`)."""
    return f"{_OPEN['unit']}{chr(_UNIT_NUMBER_BASE + number % UNIT_NUMBERS)}{text}{closing('unit')}"


def unit_parts(text: str) -> tuple[str, str, str]:
    """A unit's opening (its mark and number), its text and its closing mark; ``("", text,
    "")`` for text that is not one unit."""
    if len(text) >= 3 and text[0] == _OPEN["unit"] and text[-1] == closing("unit"):
        return text[:2], text[2:-1], text[-1]
    return "", text, ""


def _wrapper(kind: Kind) -> type[str]:
    def new(cls: type[str], text: str) -> str:
        return str.__new__(cls, f"{_OPEN[kind]}{text}{closing(kind)}")

    return type(f"Marked_{kind}", (str,), {"__new__": new})


#: The formatter module citeproc-py is given (its interface: ``preformat`` and wrapper types).
FORMATTER = types.SimpleNamespace(
    preformat=lambda text: strip_marks(str(text)),
    Italic=_wrapper("i"),
    Oblique=_wrapper("i"),
    Bold=_wrapper("b"),
    Light=_wrapper("plain"),
    Underline=_wrapper("u"),
    Superscript=_wrapper("sup"),
    Subscript=_wrapper("sub"),
    SmallCaps=_wrapper("plain"),  # no writer has small capitals: the words stay as they are
)

_STYLED: dict[Kind, InlineStyle] = {"u": "u", "sup": "sup", "sub": "sub"}


class ParsedEntry:
    """A parsed string: its inlines and the text of its ``number`` span (the entry's marker)."""

    def __init__(self, inlines: tuple[Inline, ...], marker: str | None) -> None:
        self.inlines = inlines
        self.marker = marker


def parse_marked(text: str, entry_link: Callable[[int], str] | None = None) -> ParsedEntry:
    """The inlines of a marked string. An item span becomes a ``Link`` to
    ``entry_link(number)`` (or plain text when ``entry_link`` is None); the ``number`` span is
    removed from the inlines and returned as the marker."""
    stack: list[tuple[Kind, list[Inline], str]] = [("root", [], "")]
    marker: list[str] = []
    buffer: list[str] = []

    def flush() -> None:
        if buffer:
            _append(stack[-1][1], Text("".join(buffer)))
            buffer.clear()

    for char in text:
        if char in _OPENERS:
            flush()
            stack.append((_OPENERS[char], [], ""))
        elif char in _CLOSE and len(stack) > 1 and stack[-1][0] == _CLOSE[char]:
            flush()
            kind, children, _ = stack.pop()
            node = _node(kind, tuple(children), entry_link, marker)
            for part in node:
                _append(stack[-1][1], part)
        elif (char in _CLOSE or (char == ITEM_SEP and stack[-1][0] != "item")
              or char in _UNIT_NUMBER_CHARS):
            continue  # an unbalanced mark (or a unit's number): dropped, the words kept
        else:
            buffer.append(char)
    flush()
    while len(stack) > 1:  # unclosed spans keep their words
        _, children, _ = stack.pop()
        for part in children:
            _append(stack[-1][1], part)
    return ParsedEntry(tuple(stack[0][1]), "".join(marker).strip() if marker else None)


def _node(
    kind: Kind,
    children: tuple[Inline, ...],
    entry_link: Callable[[int], str] | None,
    marker: list[str],
) -> tuple[Inline, ...]:
    if not children:
        return ()
    match kind:
        case "i":
            return (Emph(children),)
        case "b":
            return (Strong(children),)
        case "u" | "sup" | "sub":
            return (Styled(_STYLED[kind], children),)
        case "number":
            marker.append("".join(_plain(children)))
            return ()
        case "item":
            return _item(children, entry_link)
        case _:
            return children


def _item(
    children: tuple[Inline, ...], entry_link: Callable[[int], str] | None
) -> tuple[Inline, ...]:
    """``12 ITEM_SEP text…`` → a link to entry 12 around the text."""
    first = children[0]
    if not isinstance(first, Text) or ITEM_SEP not in first.text:
        return children
    digits, _, rest = first.text.partition(ITEM_SEP)
    body = ((Text(rest),) if rest else ()) + children[1:]
    if entry_link is None or not digits.isdecimal() or not body:
        return body
    return (Link(entry_link(int(digits)), body),)


def _plain(nodes: tuple[Inline, ...]) -> list[str]:
    out: list[str] = []
    for node in nodes:
        if isinstance(node, Text):
            out.append(node.text)
        elif isinstance(node, Emph | Strong | Styled | Link):
            out.extend(_plain(node.children))
    return out


def _append(into: list[Inline], node: Inline) -> None:
    """Append ``node``, merging it into a preceding text node."""
    if isinstance(node, Text) and into and isinstance(into[-1], Text):
        into[-1] = Text(into[-1].text + node.text)
    elif not (isinstance(node, Text) and not node.text):
        into.append(node)


# ---------------------------------------------------------------- links in entries

_DOI = re.compile(r"\b(?:https?://(?:dx\.)?doi\.org/)?(10\.\d{4,9}/[^\s\"<>]+[^\s\"<>.,;:)])")


def link_urls(inlines: tuple[Inline, ...], urls: tuple[str, ...]) -> tuple[Inline, ...]:
    """``inlines`` with every printed occurrence of one of ``urls`` (and every DOI) linked.

    Text already inside a link is left alone (links do not nest)."""
    wanted = sorted({u for u in urls if u}, key=len, reverse=True)
    patterns = [re.escape(u) for u in wanted]
    finder = re.compile("|".join([*patterns, _DOI.pattern])) if patterns else _DOI
    return tuple(part for node in inlines for part in _link_node(node, finder))


def _link_node(node: Inline, finder: re.Pattern[str]) -> tuple[Inline, ...]:
    match node:
        case Text(text):
            return _link_text(text, finder)
        case Emph(children):
            return (Emph(tuple(p for c in children for p in _link_node(c, finder))),)
        case Strong(children):
            return (Strong(tuple(p for c in children for p in _link_node(c, finder))),)
        case Styled(style, children, title):
            return (Styled(style, tuple(p for c in children for p in _link_node(c, finder)),
                           title),)
        case _:
            return (node,)


def _link_text(text: str, finder: re.Pattern[str]) -> tuple[Inline, ...]:
    out: list[Inline] = []
    position = 0
    for match in finder.finditer(text):
        shown = match.group(0)
        target = shown if not _DOI.fullmatch(shown) else _doi_url(shown)
        target = safe_link(target)
        if not target:
            continue
        if match.start() > position:
            out.append(Text(text[position : match.start()]))
        out.append(Link(target, (Text(shown),)))
        position = match.end()
    if position < len(text):
        out.append(Text(text[position:]))
    return tuple(out)


def _doi_url(shown: str) -> str:
    match = _DOI.fullmatch(shown)
    return f"https://doi.org/{match.group(1)}" if match else shown


def link_title(inlines: tuple[Inline, ...], title: str, url: str) -> tuple[Inline, ...]:
    """``inlines`` with the first printed occurrence of ``title`` (any letter case) linked to
    ``url``: for styles that print no URL, the title carries the link, as the default look's
    entries do."""
    target = safe_link(url)
    wanted = typographic_apostrophes(" ".join(title.split()))  # as the item gave it
    if not target or not wanted:
        return inlines
    finder = re.compile(re.escape(wanted), re.IGNORECASE)
    out: list[Inline] = []
    done = False
    for node in inlines:
        if done:
            out.append(node)
            continue
        replaced = _title_in(node, finder, target)
        done = replaced is not None
        out.extend(replaced if replaced is not None else (node,))
    return tuple(out)


def _title_in(node: Inline, finder: re.Pattern[str], url: str) -> tuple[Inline, ...] | None:
    match node:
        case Text(text):
            found = finder.search(text)
            if found is None:
                return None
            parts: list[Inline] = []
            if found.start():
                parts.append(Text(text[: found.start()]))
            parts.append(Link(url, (Text(found.group(0)),)))
            if found.end() < len(text):
                parts.append(Text(text[found.end() :]))
            return tuple(parts)
        case Emph(children) | Strong(children):
            shown = BIDI_CONTROLS.sub("", "".join(_plain(children)))  # an isolated title too
            if finder.fullmatch(shown.strip()):
                return (Link(url, (node,)),)
            return None
        case _:
            return None
