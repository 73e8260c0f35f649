"""The ``_citations`` sidecar of JSON/YAML outputs, addressed with RFC 6901 JSON Pointers.

Structured outputs cannot carry superscripts, so their citations live beside the data::

    {
      "summary": "Solar capacity grew 30 % in 2024.",
      "sections": [{"title": "Costs", "body": "Utility PV is cheapest."}],
      "_citations": [
        {"path": "/summary", "sids": [1, 3]},
        {"path": "/sections/0/body", "sids": [2]}
      ]
    }

- the sidecar is a list found at a configurable JSON Pointer (default ``/_citations``);
- each entry is an object with ``path`` (a JSON Pointer from the document root to the string
  the sids support) and ``sids`` (a non-empty list of positive integers);
- inline tokens (``[[S:1]]``) inside strings are read only with ``allow_inline_tokens=True``;
  otherwise they are reported.
"""

from __future__ import annotations

import json
import re
from collections.abc import Container, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml

from citations import json_keys
from citations.errors import SidecarError, shown
from citations.grammar import MAX_SID, sid_in_range
from citations.pool_text import alias_expansion_problem, value_problem
from citations.tokens import citation_groups, scan

StructuredFormat = Literal["json", "yaml"]
ContentFormat = Literal["markdown", "html", "json", "yaml"]
DEFAULT_POINTER = "/_citations"
_INDEX_RE = re.compile(r"0|[1-9][0-9]*")
#: Digits of the longest array index a pointer may hold: no array has 10**18 elements, and a
#: longer token is never handed to ``int()`` (which refuses 4,300 digits with a ValueError).
_MAX_INDEX_DIGITS = 18
@dataclass(frozen=True)
class SidecarCitation:
    """The sids supporting the string at ``path`` (``inline``: read from tokens in the string)."""

    path: str
    sids: tuple[int, ...]
    inline: bool = False


@dataclass(frozen=True)
class SidecarReport:
    """Outcome of :func:`validate_sidecar`: every citation found and every problem."""

    citations: tuple[SidecarCitation, ...]
    unknown_sids: tuple[int, ...]
    errors: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        """True when there is no error (unknown sids are errors too)."""
        return not self.errors

    @property
    def sids(self) -> list[int]:
        """Every cited sid, first appearance order, each once."""
        return _unique(s for c in self.citations for s in c.sids)


def parse_pointer(pointer: str) -> list[str]:
    """The reference tokens of an RFC 6901 pointer (``""`` is the whole document)."""
    if not isinstance(pointer, str):
        raise SidecarError(f"JSON Pointer {pointer!r} is not a string")
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise SidecarError(f"JSON Pointer {pointer!r} must be empty or start with '/'")
    tokens = pointer[1:].split("/")
    for token in tokens:
        if re.search(r"~(?![01])", token):
            raise SidecarError(
                f"JSON Pointer {pointer!r}: '~' must be followed by 0 or 1 (~0 is '~', ~1 is '/')"
            )
    return [t.replace("~1", "/").replace("~0", "~") for t in tokens]


def escape_pointer_token(token: str) -> str:
    """Escape one reference token (``~`` → ``~0``, ``/`` → ``~1``)."""
    return token.replace("~", "~0").replace("/", "~1")


def resolve_pointer(document: Any, pointer: str) -> Any:
    """The value ``pointer`` names in ``document``; SidecarError when it does not exist."""
    value = document
    walked = ""
    for token in parse_pointer(pointer):
        walked += "/" + escape_pointer_token(token)
        if isinstance(value, dict):
            if token in value:
                value = value[token]
                continue
            matches = [k for k in value if str(k) == token]
            if not matches:
                raise SidecarError(f"JSON Pointer {pointer!r}: no member {token!r} at {walked!r}")
            value = value[matches[0]]
        elif isinstance(value, list):
            if token == "-":
                raise SidecarError(
                    f"JSON Pointer {pointer!r}: '-' (past the end of an array) never names a value"
                )
            if not _INDEX_RE.fullmatch(token):
                raise SidecarError(
                    f"JSON Pointer {pointer!r}: {token!r} is not an array index at {walked!r}"
                )
            if len(token) > _MAX_INDEX_DIGITS:
                raise SidecarError(
                    f"JSON Pointer {shown(pointer)}: an index of {len(token):,} digits is out "
                    f"of range at {shown(walked)} (array of {len(value)})"
                )
            index = int(token)
            if index >= len(value):
                raise SidecarError(
                    f"JSON Pointer {pointer!r}: index {index} is out of range at {walked!r} "
                    f"(array of {len(value)})"
                )
            value = value[index]
        else:
            raise SidecarError(
                f"JSON Pointer {pointer!r}: {walked!r} goes into a {type(value).__name__}"
            )
    return value


def load_structured(content: str, format: StructuredFormat, *, name: str = "<content>") -> Any:
    """Parse JSON or YAML ``content``; SidecarError naming ``name`` when it does not parse."""
    try:
        if format == "json":
            return json_keys.loads(content)
        if format == "yaml":
            return _load_yaml(content, name)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise SidecarError(f"{name}: not valid {format.upper()}: {exc}") from exc
    except json_keys.DuplicateKeyError as exc:
        raise SidecarError(f"{name}: {exc}") from exc
    except RecursionError as exc:
        raise SidecarError(
            f"{name}: {format.upper()} nested too deeply to read; accepted: {format.upper()} "
            "nested at most a few hundred levels"
        ) from exc
    except ValueError as exc:  # a number past 4,300 digits, a YAML date such as 2024-13-45
        raise SidecarError(f"{name}: not valid {format.upper()}: {value_problem(exc)}") from exc
    raise SidecarError(f"format={format!r}: accepted are 'json', 'yaml'")


def _load_yaml(content: str, name: str) -> Any:
    """``yaml.safe_load`` that refuses an alias chain (a "billion laughs"), whose expansion the
    readers would walk for ever, before anything is built, and a key given twice."""
    loader = json_keys.yaml_loader()(content)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        problem = alias_expansion_problem(node)
        if problem:
            raise SidecarError(f"{name}: {problem}")
        return loader.construct_document(node)
    finally:
        loader.dispose()


def read_sidecar(document: Any, *, pointer: str = DEFAULT_POINTER) -> list[SidecarCitation]:
    """The sidecar entries at ``pointer`` ([] when absent); SidecarError when malformed."""
    parse_pointer(pointer)
    try:
        entries = resolve_pointer(document, pointer)
    except SidecarError:
        return []
    if not isinstance(entries, list):
        raise SidecarError(
            f"sidecar at {pointer!r} is a {type(entries).__name__}: expected a list of "
            '{"path": "/json/pointer", "sids": [1, 3]} objects'
        )
    citations: list[SidecarCitation] = []
    for index, entry in enumerate(entries):
        where = f"{pointer}/{index}"
        if not isinstance(entry, dict):
            raise SidecarError(f"{where}: expected an object with 'path' and 'sids'")
        path, sids = entry.get("path"), entry.get("sids")
        if not isinstance(path, str):
            raise SidecarError(f"{where}: 'path' must be a JSON Pointer string, got {path!r}")
        parse_pointer(path)
        if not isinstance(sids, list) or not sids:
            raise SidecarError(f"{where}: 'sids' must be a non-empty list of positive integers")
        for sid in sids:
            if isinstance(sid, bool) or not isinstance(sid, int) or sid <= 0:
                raise SidecarError(f"{where}: sid {sid!r} is not a positive integer")
            if not sid_in_range(sid):
                raise SidecarError(f"{where}: sid {sid} is past the largest sid ({MAX_SID})")
        citations.append(SidecarCitation(path, tuple(_unique(sids))))
    return citations


def iter_strings(value: Any, pointer: str = "") -> Iterator[tuple[str, str]]:
    """Every string inside ``value`` with its JSON Pointer, in document order."""
    if isinstance(value, str):
        yield pointer, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from iter_strings(item, f"{pointer}/{escape_pointer_token(str(key))}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from iter_strings(item, f"{pointer}/{index}")


def inline_citations(document: Any, *, skip: str = DEFAULT_POINTER) -> list[SidecarCitation]:
    """Citations written as tokens inside the document's strings (the sidecar ``skip`` aside)."""
    found: list[SidecarCitation] = []
    for path, text in iter_strings(document):
        if inside_pointer(path, skip):
            continue
        sids = _unique(s for group in citation_groups(text, syntax="text") for s in group)
        if sids:
            found.append(SidecarCitation(path, tuple(sids), inline=True))
    return found


def validate_sidecar(
    document: Any,
    pool: Container[int],
    *,
    pointer: str = DEFAULT_POINTER,
    allow_inline_tokens: bool = False,
) -> SidecarReport:
    """Check the sidecar of ``document`` against ``pool`` (anything with ``sid in pool``).

    Errors: malformed sidecar, a path that names nothing or names a non-string, unknown sids,
    and inline tokens in strings unless ``allow_inline_tokens``.
    """
    errors: list[str] = []
    try:
        citations = read_sidecar(document, pointer=pointer)
    except SidecarError as exc:
        return SidecarReport((), (), (str(exc),))
    for citation in citations:
        try:
            target = resolve_pointer(document, citation.path)
        except SidecarError as exc:
            errors.append(str(exc))
            continue
        if not isinstance(target, str):
            errors.append(
                f"sidecar path {citation.path!r} names a {type(target).__name__}: "
                "citations must point at a string"
            )
    inline = inline_citations(document, skip=pointer)
    if inline and not allow_inline_tokens:
        for citation in inline:
            errors.append(
                f"inline citation token in the string at {citation.path!r}: not allowed here "
                f"(list its sids in {pointer!r} or pass allow_inline_tokens=True)"
            )
        inline = []
    if allow_inline_tokens:
        for path, text in iter_strings(document):
            if not inside_pointer(path, pointer):
                errors += [
                    f"invalid token {t.text!r} in the string at {path!r}: {t.error}"
                    for t in scan(text, syntax="text")
                    if t.error is not None
                ]
    everything = (*citations, *inline)
    unknown = tuple(_unique(s for c in everything for s in c.sids if s not in pool))
    errors += [f"sid {sid} is not in the sources pool" for sid in unknown]
    return SidecarReport(everything, unknown, tuple(errors))


def extract_citation_sids_any(content: str, format: ContentFormat) -> list[int]:
    """Cited sids of ``content`` in first-appearance order, each once (USAGE tags excluded).

    markdown/html: the tokens outside code; json/yaml: the ``/_citations`` sidecar entries,
    then inline tokens in strings. SidecarError when JSON/YAML does not parse or the sidecar is
    malformed.
    """
    if format in ("markdown", "html"):
        groups = citation_groups(content, syntax=format)
        return _unique(s for group in groups for s in group)
    if format not in ("json", "yaml"):
        raise SidecarError(f"format={format!r}: accepted are 'markdown', 'html', 'json', 'yaml'")
    document = load_structured(content, format)
    citations = [*read_sidecar(document), *inline_citations(document)]
    return _unique(s for c in citations for s in c.sids)


def inside_pointer(path: str, pointer: str) -> bool:
    """True when ``path`` is ``pointer`` or below it."""
    return bool(pointer) and (path == pointer or path.startswith(pointer + "/"))


def _unique(values: Any) -> list[int]:
    return list(dict.fromkeys(values))
