"""A markdown input's YAML front matter: where it is, and the mapping it holds (pandoc's rule).

The block opens the input (after an optional BOM) with a line ``---`` not followed by a blank
line, and ends at the next line ``---`` or ``...``; it is front matter when its content is a YAML
mapping. Anything else is the author's markdown (a rule, then text). The scanner reads its
tokens as not prose (:func:`metadata_spans`) but the ``abstract``'s, which is markdown (pandoc
reads metadata values as markdown; citerender shows the abstract so), the markdown reader its keys
(:mod:`renderers.metadata`): both ask :func:`front_matter`, so they never disagree on where it
is. YAML is read with ``safe_load``'s constructors, at most :data:`MAX_FRONT_MATTER_BYTES` of it,
and refusing aliases: ``*name`` repeats a node without copying it, so a few hundred bytes of
aliases ("billion laughs") name more strings than memory holds once anything walks them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import yaml

from citations import json_keys
from citations.errors import FrontMatterError
from citations.pool_text import value_problem

__all__ = [
    "MAX_FRONT_MATTER_BYTES", "FrontMatter", "blank_lines", "front_matter", "front_matter_span",
    "metadata_spans",
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
                           abstract_line=line)
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


def front_matter_span(text: str) -> tuple[int, int] | None:
    """The offsets of the front matter of ``text`` (None when it has none): text that is not
    prose, whose tokens cite nothing."""
    found = front_matter(text)
    return (0, found.end) if found is not None and found.read else None


def metadata_spans(text: str) -> list[tuple[int, int]]:
    """The offsets of the front matter of ``text`` that is metadata, not prose (its tokens cite
    nothing): the whole block but the ``abstract`` value's text, which is markdown."""
    found = front_matter(text)
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
