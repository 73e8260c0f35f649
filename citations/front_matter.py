"""A markdown input's YAML front matter: where it is, and the mapping it holds (pandoc's rule).

The block opens the input (after an optional BOM) with a line ``---`` not followed by a blank
line, and ends at the next line ``---`` or ``...``; it is front matter when its content is a YAML
mapping. Anything else is the author's markdown (a rule, then text). The scanner reads its
tokens as not prose (:func:`metadata_spans`) but the ``abstract``'s, which is markdown (pandoc
reads metadata values as markdown; citerender shows the abstract so), the markdown reader its keys
(:mod:`renderers.metadata`): both ask :func:`front_matter`, so they never disagree on where it
is. The audit judges the abstract as the reader reads it, its value decoded
(:func:`abstract_source`), each of its tokens named by the line it was typed on. YAML is read
with ``safe_load``'s constructors, at most :data:`MAX_FRONT_MATTER_BYTES` of it, and refusing
aliases: ``*name`` repeats a node without copying it, so a few hundred bytes of aliases
("billion laughs") name more strings than memory holds once anything walks them.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import yaml

from citations import json_keys
from citations.chars import clean_text
from citations.errors import FrontMatterError
from citations.pool_text import value_problem

__all__ = [
    "MAX_FRONT_MATTER_BYTES", "AbstractSource", "FrontMatter", "abstract_markdown",
    "abstract_source", "blank_lines", "front_matter", "front_matter_span", "metadata_spans",
]

#: Largest front matter read, in UTF-8 bytes (the default of ``limits.max_front_matter_bytes``):
#: metadata is a few lines, and PyYAML reads about a megabyte a second.
MAX_FRONT_MATTER_BYTES = 64 * 1024

_OPEN = re.compile(r"\ufeff?---[ \t]*(?:\r\n|\r|\n)(?![ \t]*(?:\r\n|\r|\n|\Z))")
_CLOSE = re.compile(r"(?:\r\n|\r|\n)(?:---|\.\.\.)[ \t]*(?:\r\n|\r|\n|\Z)")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
#: A first line that makes a block front matter rather than prose between two rules: a key.
_KEY_LINE = re.compile(r"[ \t]*[^\s#:'\"\-?][^\r\n:]*:(?:[ \t]|$)", re.MULTILINE)


@dataclass(frozen=True)
class FrontMatter:
    """A leading ``---`` … ``---`` block: ``end`` is the offset after its closing line;
    ``fields`` the mapping it holds, or None when it is not front matter (``problem`` says why,
    at 1-based input ``line``; "" for prose that merely sits between two rules). ``too_large``:
    front matter by its first line (``key:``), but larger than the limit, so not parsed."""

    end: int
    fields: Mapping[str, Any] | None
    problem: str = ""
    line: int = 1
    size: int = 0
    too_large: bool = False
    #: The offsets in the input of the ``abstract`` value when it is a string (a ``|`` block's
    #: lines, a quoted or plain scalar's text): markdown, read as prose (pandoc reads metadata
    #: values as markdown), so its tokens cite; None when there is none.
    abstract: tuple[int, int] | None = None
    #: The 1-based input line where the abstract's text starts (the line after ``abstract: |``).
    abstract_line: int = 0
    #: The offsets of the YAML text between the two rules.
    content: tuple[int, int] = (0, 0)

    @property
    def read(self) -> bool:
        """Whether the block is front matter (its content is a YAML mapping)."""
        return self.fields is not None


@cache
def _no_alias_loader() -> type[yaml.SafeLoader]:
    """``safe_load``'s constructors refusing a key given twice (:func:`json_keys.yaml_loader`);
    an alias is an error, not a shared node. Made on first use: PyYAML's import costs more than
    reading a document without front matter."""
    import yaml

    class NoAliasLoader(json_keys.yaml_loader()):  # type: ignore[misc]
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                raise yaml.composer.ComposerError(
                    None, None, "found an alias (*name), which front matter does not expand",
                    self.peek_event().start_mark,
                )
            return super().compose_node(parent, index)

    return NoAliasLoader


def front_matter(text: str, max_bytes: int = MAX_FRONT_MATTER_BYTES) -> FrontMatter | None:
    """The block at the start of ``text`` (None when there is none). A block larger than
    ``max_bytes`` is not parsed: its ``problem`` says so and ``size`` gives its bytes. A mapping
    naming a key twice is refused (:class:`FrontMatterError`): which title was meant?"""
    opening = _OPEN.match(text)
    if opening is None:
        return None
    closing = _CLOSE.search(text, opening.end() - 1)
    if closing is None:
        return None
    content = text[opening.end() : closing.start()]
    first_line = 2
    size = len(content.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        # Not parsed. Prose between two rules (a document that opens with a rule) stays text;
        # what opens with a key is front matter too large to read.
        return FrontMatter(closing.end(), None, f"larger than {max_bytes} bytes", first_line,
                           size, too_large=_KEY_LINE.match(content) is not None)
    import yaml

    try:
        loader = _no_alias_loader()(content)
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = first_line + (mark.line if mark is not None else 0)
        problem = " ".join(part for part in (exc.context, exc.problem) if part)
        return FrontMatter(closing.end(), None, f"not YAML: {problem}", line, size)
    except yaml.YAMLError as exc:
        return FrontMatter(closing.end(), None, f"not YAML: {exc}", first_line, size)
    except RecursionError:
        return FrontMatter(closing.end(), None, "not YAML: nested too deeply", first_line, size)
    except json_keys.DuplicateKeyError as exc:
        at_line = json_keys.DuplicateKeyError(exc.key, exc.path, exc.line + first_line - 1,
                                              exc.column)
        raise FrontMatterError(f"front matter: {at_line}") from exc
    except ValueError as exc:  # a 5,000-digit number, a date such as 2024-02-30
        return FrontMatter(closing.end(), None, f"not YAML: {value_problem(exc)}", first_line,
                           size)
    if isinstance(data, dict):
        fields = {key: value for key, value in data.items() if isinstance(key, str)}
        span, line = _abstract_span(node, opening.end(), first_line)
        return FrontMatter(closing.end(), fields, "", first_line, size, abstract=span,
                           abstract_line=line, content=(opening.end(), closing.start()))
    if data is None or isinstance(data, str):  # prose (or nothing) between two rules
        return FrontMatter(closing.end(), None, "", first_line, size)
    kind = "a list" if isinstance(data, list) else f"a {type(data).__name__}"
    return FrontMatter(closing.end(), None, f"{kind}, not a YAML mapping", first_line, size)


def _abstract_span(node: Any, offset: int, first_line: int) -> tuple[tuple[int, int] | None, int]:
    """Where the last ``abstract`` key's string value is (offsets in the input: the mapping
    ``node`` starts at ``offset``, on line ``first_line``), and the line its text starts on."""
    import yaml

    found = None
    for key, value in node.value:
        if isinstance(key, yaml.ScalarNode) and key.value == "abstract":
            found = value
    if not isinstance(found, yaml.ScalarNode) or found.tag != "tag:yaml.org,2002:str":
        return None, 0
    start, end = found.start_mark, found.end_mark
    block = found.style in ("|", ">")  # its text starts on the line after the indicator
    return (offset + start.index, offset + end.index), first_line + start.line + int(block)


def abstract_markdown(value: str) -> str:
    """The abstract's markdown source as the reader reads it: the value with what no format can
    carry replaced (:func:`clean_text`: a YAML escape may make any character), without the
    line breaks around it; "" when it is only white space."""
    return clean_text(value).strip("\n") if value.strip() else ""


@dataclass(frozen=True)
class AbstractSource:
    """The front matter abstract as the reader reads it (``text``: :func:`abstract_markdown` of
    its value, escapes decoded and lines folded) and where it was written: ``span``, its
    offsets in the input (:attr:`FrontMatter.abstract`); input line ``lines[i]`` goes on at
    ``text[starts[i]]``, so a token of the decoded text is named by the line it was typed on."""

    text: str
    span: tuple[int, int]
    starts: tuple[int, ...]
    lines: tuple[int, ...]

    def line_at(self, offset: int) -> int:
        """The 1-based input line of ``text[offset]``."""
        return self.lines[max(bisect.bisect_right(self.starts, offset) - 1, 0)]

    @cached_property
    def _text_lines(self) -> tuple[int, ...]:
        """Where each line of ``text`` starts, its breaks as markdown reads them (CR too)."""
        return (0, *(found.end() for found in _LINE_BREAK.finditer(self.text)))

    def text_line(self, index: int) -> str:
        """The 0-based line ``index`` of ``text``, without its break ("" past the end)."""
        starts = self._text_lines
        if not 0 <= index < len(starts):
            return ""
        end = starts[index + 1] if index + 1 < len(starts) else len(self.text)
        return self.text[starts[index] : end].rstrip("\r\n")  # a line holds no break but its own

    def typed_line(self, index: int, column: int = 0) -> int:
        """The 1-based input line of ``column`` in the 0-based line ``index`` of ``text``, as
        :meth:`line_at` names it: how a reader of ``text`` names a place the audit names from
        its offset (a folded line joins several typed ones, so the column tells which)."""
        starts = self._text_lines
        index = min(max(index, 0), len(starts) - 1)
        return self.line_at(starts[index] + min(max(column, 0), len(self.text_line(index))))


def abstract_source(text: str, found: FrontMatter | None = None) -> AbstractSource | None:
    """The front matter abstract of ``text`` as render reads it (None when there is none, or
    it is no string): what the audit judges, never the YAML as typed (``"[[S:\\u0031]]"``
    cites sid 1; an escaped or folded line break joins a token), and where the reader's notes
    on it name their lines. ``found``: its :func:`front_matter`, when already read."""
    found = _read(text, found)
    value = found.fields.get("abstract") if found is not None and found.fields else None
    if found is None or found.abstract is None or not isinstance(value, str):
        return None
    source = abstract_markdown(value)
    lead = len(value) - len(value.lstrip("\n")) if source else 0
    places = _line_places(text, found, value) or [(0, found.abstract_line)]
    return AbstractSource(source, found.abstract, tuple(max(at - lead, 0) for at, _ in places),
                          tuple(line for _, line in places))


def _line_places(text: str, found: FrontMatter, value: str) -> list[tuple[int, int]]:
    """``(offset in value, input line)`` where the text of each input line of the abstract
    goes on in its decoded ``value``; [] when that is not known. Each line's text is led by a
    mark, a character the block does not hold, and the block read again: the marks come out
    where the lines' text went. A mark stands where the text starts (past the indentation,
    an opening quote, a ``|`` line), never on a blank line, so the value is the same but for
    the marks (checked)."""
    assert found.abstract is not None
    start, end = found.abstract
    begin, close = found.content
    mark = next((chr(c) for c in range(0xE000, 0xF900) if chr(c) not in text[begin:close]), "")
    if not mark:
        return []
    first_line = len(_LINE_BREAK.findall(text, 0, start)) + 1
    header = text[start] in "|>"  # a block scalar's text starts on the line after
    pieces, lines, done = [text[begin:start]], [], start
    line_start = start
    for number, found_break in enumerate([*_LINE_BREAK.finditer(text, start, end), None]):
        line_end = found_break.start() if found_break is not None else end
        at = line_start + (number == 0 and text[start] in "'\"")
        while at < line_end and text[at] in " \t":
            at += 1
        if at < line_end and not (number == 0 and header):
            pieces += (text[done:at], mark)
            lines.append(first_line + number)
            done = at
        if found_break is not None:
            line_start = found_break.end()
    pieces.append(text[done:close])
    import yaml

    try:
        loader = _no_alias_loader()("".join(pieces))
        try:
            marked = loader.get_single_data()
        finally:
            loader.dispose()
    except (yaml.YAMLError, ValueError, RecursionError):  # a duplicate key is a ValueError
        return []
    shown = marked.get("abstract") if isinstance(marked, dict) else None
    if not isinstance(shown, str) or shown.replace(mark, "") != value \
            or shown.count(mark) != len(lines):
        return []
    # each mark's offset in the value is its offset less the marks before it
    offsets = [m.start() - index for index, m in enumerate(re.finditer(mark, shown))]
    return list(zip(offsets, lines, strict=True))


def _read(text: str, found: FrontMatter | None) -> FrontMatter | None:
    """``found``, the caller's :func:`front_matter` of ``text``, else it read now: a caller
    asking several questions of one text (the audit: the scan, the coverage units and the
    abstract) parses its YAML once, 80 ms at the 64 KB limit. A None given is looked for
    again, at the cost of a regular expression: :func:`front_matter` is None only without a
    block, and parses nothing then."""
    return found if found is not None else front_matter(text)


def front_matter_span(text: str, found: FrontMatter | None = None) -> tuple[int, int] | None:
    """The offsets of the front matter of ``text`` (None when it has none): text that is not
    prose, whose tokens cite nothing. ``found``: its :func:`front_matter`, when already read."""
    found = _read(text, found)
    return (0, found.end) if found is not None and found.read else None


def metadata_spans(text: str, found: FrontMatter | None = None) -> list[tuple[int, int]]:
    """The offsets of the front matter of ``text`` that is metadata, not prose (its tokens cite
    nothing): the whole block but the ``abstract`` value's text, which is markdown.
    ``found``: its :func:`front_matter`, when already read."""
    found = _read(text, found)
    if found is None or not found.read:
        return []
    if found.abstract is None:
        return [(0, found.end)]
    start, end = found.abstract
    return [(0, start), (end, found.end)]


def blank_lines(text: str, end: int) -> str:
    """``text`` with its first ``end`` characters emptied but for their line breaks, so that
    every later line keeps its number."""
    return "".join(_LINE_BREAK.findall(text, 0, end)) + text[end:]
