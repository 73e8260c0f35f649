"""A JSON/YAML answer with a ``_citations`` sidecar as a readable markdown document.

Structured outputs carry their citations beside the data (:mod:`citations.sidecar`). To render
one, each key becomes a heading (nested keys one level deeper, to ``######``), each string a
paragraph (or a list item inside a list) followed by the ``[[S:n]]`` token of every sidecar
entry that points at it, and other scalars their JSON text. Strings are taken as markdown, as
LLM answers write them; keys are escaped. The sidecar itself is not shown.

Which entries are placed is decided by the audit's rule (``citations.audit``): an entry the
audit reports (a pointer that names nothing or a non-string, a sidecar that is not a list) is
left out and listed in :attr:`StructuredAnswer.problems` in the audit's words, so a render can
warn about exactly what ``citerender audit`` reports instead of dropping it silently.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from citations.audit import sidecar_entries  # the audit's one rule
from citations.errors import SidecarError
from citations.sidecar import (
    DEFAULT_POINTER,
    escape_pointer_token,
    inside_pointer,
    parse_pointer,
    read_sidecar,
)
from citations.tokens import format_token

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~])")
#: Deeper structures keep ``######`` headings: markdown has six levels.
_MAX_HEADING = 6
#: How deep an answer may nest (objects and lists); deeper is refused, not recursed into.
MAX_DEPTH = 64


@dataclass(frozen=True)
class StructuredAnswer:
    """A sidecar answer as markdown, the sids it cites and the sidecar problems left out.

    Each problem reads ``"{pointer}: {what the audit says}"``, e.g. ``"/summry: the pointer
    names nothing (…)"``: the entry's pointer, or the sidecar's own when it is not a list.
    """

    markdown: str
    sids: tuple[int, ...]  # each once, in order of first citation
    citations: int  # sids cited by the placed entries, repeats counted
    problems: tuple[str, ...]


def structured_markdown(document: Any, *, pointer: str = DEFAULT_POINTER) -> str:
    """Markdown for ``document`` with its sidecar's citations placed after the strings they
    support. Raises :class:`citations.errors.SidecarError` when the sidecar is malformed or
    not a list; :func:`read_structured` also lists the entries it left out, and why."""
    read_sidecar(document, pointer=pointer)
    return read_structured(document, pointer=pointer).markdown


def read_structured(document: Any, *, pointer: str = DEFAULT_POINTER) -> StructuredAnswer:
    """``document`` as a :class:`StructuredAnswer`: sound sidecar entries placed, the others
    listed as problems.

    Every entry the audit reports is a problem, not an error, whatever is wrong with it (not an
    object, a ``path`` that is no pointer or names nothing, ``sids`` that are not positive
    integers), as an invalid token is in markdown: the answer's other entries and data are
    still worth showing, and a render (``--strict`` aside) cites what the audit counts.
    :class:`~citations.errors.SidecarError` is raised only for a bad ``pointer`` and for an
    answer nested deeper than :data:`MAX_DEPTH`.
    """
    parse_pointer(pointer)
    cited: dict[str, list[int]] = {}
    problems: list[str] = []
    for path, sids, problem in sidecar_entries(document, pointer):
        if problem:
            problems.append(f"{path}: {problem}")
        else:
            cited.setdefault(path, []).extend(sids)
    lines = list(_blocks(document, "", 1, cited, pointer, 0))
    markdown = "\n\n".join(line for line in lines if line) + "\n"
    every = [s for group in cited.values() for s in group]
    return StructuredAnswer(markdown, tuple(dict.fromkeys(every)), len(every), tuple(problems))


def _blocks(
    value: Any, path: str, level: int, cited: dict[str, list[int]], pointer: str, depth: int
) -> Iterator[str]:
    if depth > MAX_DEPTH:
        raise SidecarError(f"{path}: the answer nests deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}/{escape_pointer_token(str(key))}"
            if inside_pointer(here, pointer):
                continue
            yield f"{'#' * min(level, _MAX_HEADING)} {_escape(_label(str(key)))}"
            yield from _blocks(item, here, level + 1, cited, pointer, depth + 1)
    elif isinstance(value, list):
        items: list[str] = []
        for index, item in enumerate(value):
            here = f"{path}/{index}"
            if isinstance(item, dict | list):
                if items:
                    yield "\n".join(items)
                    items = []
                yield from _blocks(item, here, level, cited, pointer, depth + 1)
            else:
                items.append("- " + _scalar(item, here, cited).replace("\n", "\n  "))
        if items:
            yield "\n".join(items)
    else:
        yield _scalar(value, path, cited)


def _scalar(value: Any, path: str, cited: dict[str, list[int]]) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    sids = list(dict.fromkeys(cited.get(path, ())))
    return text.strip() + (format_token(sids) if sids else "")


def _label(key: str) -> str:
    """A key as a heading: ``key_findings`` → ``Key findings``."""
    words = key.replace("_", " ").replace("-", " ").strip()
    return words[:1].upper() + words[1:] if words else key


def _escape(text: str) -> str:
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)
