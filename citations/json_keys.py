"""JSON and YAML from outside read with each object's keys once: one key twice is refused, not
last-wins.

``{"format": "pdf", "format": "docx"}`` is valid JSON whose meaning depends on the parser
(Python, JavaScript and pydantic keep the last value, others the first or both): it comes from a
client with a bug, and rendering either value would hide that. Every reader of JSON that a
caller, a file or a tool hands in parses it with :func:`loads` (or combines
:func:`unique_object` with a hook of its own); the project's own files (records, job states)
are read as they are.

The hook costs one dict per object, as ``json.loads`` builds anyway. Where the duplicate is
(its key path, line and column) is found only once one was seen, by one linear scan of the
text up to it, so a body of 100,000 keys costs the same as without the check.

YAML (front matter, pool files, sidecar answers) is read with :func:`yaml_loader`, whose
mappings check their own keys as they are built (one set per mapping); a merge key ``<<`` is
not a repeat, and the keys it brings in may be overridden, as YAML says.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import TYPE_CHECKING, Any

from citations.errors import shown, shown_part

if TYPE_CHECKING:
    import yaml

__all__ = ["DuplicateKeyError", "loads", "unique_object", "yaml_loader"]

#: A string literal, then whether a colon follows (a key). The text before the duplicate is
#: valid JSON (the parser read it), so every literal the scan meets there is terminated.
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"(\s*:)?|[\[\]{},]', re.DOTALL)


class _Duplicate(Exception):
    """Raised by :func:`unique_object` to stop the parse; :func:`loads` says where."""


class DuplicateKeyError(ValueError):
    """A JSON object names the same key twice.

    ``path`` is the duplicated key's place from the top (``("options", "format")``, array
    items by index); ``shown_path`` the same with each part cut for a message, and ``where``
    that dotted (``options.format``); ``line`` and ``column`` (1-based) point at the second
    occurrence; ``reason`` is the message without ``where``. Messages quote a long key by its
    head and length, so they stay short whatever the keys.
    """

    def __init__(self, key: str, path: tuple[str, ...], line: int, column: int) -> None:
        self.key = key
        self.path = path
        self.shown_path = tuple(shown_part(part) for part in path)
        self.where = ".".join(self.shown_path)
        self.line = line
        self.column = column
        self.reason = (
            f"the key {shown(key)} appears twice in one object (line {line}, column {column}); "
            "accepted: each key once per object"
        )
        super().__init__(f"{self.where}: {self.reason}")


def unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON ``object_pairs_hook``: the object as a dict, refusing a key given twice."""
    built = dict(pairs)
    if len(built) != len(pairs):
        raise _Duplicate
    return built


def loads(text: str | bytes | bytearray, **kwargs: Any) -> Any:
    """``json.loads`` refusing an object with a key twice (:class:`DuplicateKeyError`).

    ``kwargs`` go to ``json.loads``; an ``object_pairs_hook`` given there must build its
    objects with :func:`unique_object`.
    """
    kwargs.setdefault("object_pairs_hook", unique_object)
    try:
        return json.loads(text, **kwargs)
    except _Duplicate:
        if not isinstance(text, str):
            text = bytes(text).decode(json.detect_encoding(text))
        raise locate_duplicate(text) from None


def locate_duplicate(text: str) -> DuplicateKeyError:
    """The first key (in document order) that repeats one of its object's earlier keys.

    One pass over the string literals and brackets of ``text``, keeping per open container
    its keys so far (None for an array) and the key or index being read; called only after
    the parser saw a duplicate, so one is found before the text could stop being valid JSON.
    """
    seen: list[set[str] | None] = []
    places: list[str | int] = []
    for match in _TOKENS.finditer(text):
        token = match.group()
        first = token[0]
        if first == '"':
            keys = seen[-1] if seen and match.group(1) is not None else None
            if keys is None:
                continue
            literal = token[: match.start(1) - match.start()]
            key = json.loads(literal) if "\\" in literal else literal[1:-1]
            if key in keys:
                line = text.count("\n", 0, match.start()) + 1
                column = match.start() - text.rfind("\n", 0, match.start())
                path = (*(str(place) for place in places[:-1]), key)
                return DuplicateKeyError(key, path, line, column)
            keys.add(key)
            places[-1] = key
        elif first in "{[":
            seen.append(set() if first == "{" else None)
            places.append("" if first == "{" else 0)
        elif first in "]}":
            if seen:
                seen.pop()
                places.pop()
        elif seen and seen[-1] is None:  # a comma between array items
            places[-1] = int(places[-1]) + 1
    raise AssertionError("no duplicate key in text the parser refused for one")


@cache
def yaml_loader() -> type[yaml.SafeLoader]:
    """``safe_load``'s loader refusing a mapping that names a key twice (:class:`DuplicateKeyError`,
    its line and column those of the YAML text). Made on first use: PyYAML's import costs more
    than reading a document without YAML."""
    import yaml

    merge_tag = "tag:yaml.org,2002:merge"

    class UniqueKeyLoader(yaml.SafeLoader):
        def construct_document(self, node: Any) -> Any:
            self._root_node = node
            self._checked_nodes: set[int] = set()
            return super().construct_document(node)

        def flatten_mapping(self, node: Any) -> None:
            # Every mapping passes here before its merge keys are replaced by what they bring
            # (also when merged into another first): its own keys are those seen now.
            if id(node) not in self._checked_nodes:
                self._checked_nodes.add(id(node))
                self._check_keys(node)
            super().flatten_mapping(node)

        def _check_keys(self, node: Any) -> None:
            keys: set[Any] = set()
            for key_node, _ in node.value:
                if key_node.tag == merge_tag or not isinstance(key_node, yaml.ScalarNode):
                    continue  # a list or mapping as a key is refused by PyYAML (unhashable)
                key = self.construct_object(key_node)
                if key in keys:
                    mark = key_node.start_mark
                    path = (*_yaml_path(self._root_node, node), str(key))
                    raise DuplicateKeyError(str(key), path, mark.line + 1, mark.column + 1)
                keys.add(key)

    return UniqueKeyLoader


def _yaml_path(root: Any, target: Any) -> tuple[str, ...]:
    """The keys and indexes leading from ``root`` to the composed node ``target`` (first found;
    aliases make a node reachable by several). One walk, done once a repeat was seen."""
    stack: list[tuple[Any, tuple[str, ...]]] = [(root, ())]
    seen: set[int] = set()
    while stack:
        node, path = stack.pop()
        if node is target:
            return path
        if id(node) in seen or not isinstance(node.value, list):
            continue
        seen.add(id(node))
        for index, item in enumerate(node.value):
            if isinstance(item, tuple):
                stack.append((item[1], (*path, str(item[0].value))))
            else:
                stack.append((item, (*path, str(index))))
    return ()
