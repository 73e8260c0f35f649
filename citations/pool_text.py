"""Pool files and pool text: JSON or YAML read with bounded work, and the rows inside.

Split from :mod:`citations.pool`: parsing is where a few hundred bytes can cost minutes (a YAML
alias chain, JSON nested a hundred thousand deep), so every bound on it lives here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from citations import json_keys
from citations.errors import PoolError
from citations.grammar import MAX_NUMBER_DIGITS

ACCEPTED_SHAPES = (
    'a list of rows, {"sources_pool": [...]}, {"sources": [...]} (JSON), or the same in YAML'
)


#: Largest pool file read (a pool file is read whole before it is parsed): 200,000 rows of
#: about 1 KB each.
MAX_POOL_FILE_BYTES = 256 * 1024 * 1024


def _is_pool_text(text: str) -> bool:
    """Whether a ``sources_pool`` string is JSON text rather than a file path."""
    return text.lstrip().startswith(("[", "{"))


class TooManyRows(PoolError):
    """Pool text holds more than ``max_rows`` rows; raised while parsing, before the rest of the
    text is turned into objects (the renderer reports it as its ``limits.max_pool_rows``)."""

    def __init__(self, name: str, rows: int, max_rows: int) -> None:
        super().__init__(f"{name}: more than {max_rows:,} rows; the limit is {max_rows:,}")
        self.rows = rows
        self.max_rows = max_rows


def _row_counter(name: str, max_rows: int | None) -> Any:
    """A JSON ``object_pairs_hook`` that counts objects with a ``sid`` key (rows) and stops the
    parse at the first one over ``max_rows``: a million-row pool costs what the limit allows,
    not a gigabyte of dicts. A key given twice is refused as everywhere (:mod:`json_keys`)."""
    rows = 0

    def build(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal rows
        if max_rows is not None and any(key == "sid" for key, _ in pairs):
            rows += 1
            if rows > max_rows:
                raise TooManyRows(name, rows, max_rows)
        return json_keys.unique_object(pairs)

    return build


def value_problem(exc: ValueError) -> str:
    """What a ``ValueError`` out of the JSON or YAML parser means, without Python's advice.

    Past 4,300 digits ``int()`` refuses a number with a message that tells the caller to call
    ``sys.set_int_max_str_digits()``; any other (a YAML date such as ``2024-13-45``) is quoted.
    """
    if "integer string conversion" in str(exc):
        return f"a number too long to read (more than {MAX_NUMBER_DIGITS:,} digits)"
    return f"a value that cannot be read ({exc})"


def _parse_text(
    text: str, name: str, *, yaml_first: bool, max_rows: int | None = None
) -> object:
    """Parse pool text as JSON (or YAML when ``yaml_first`` or JSON fails on non-JSON input);
    more than ``max_rows`` rows raise :class:`TooManyRows` while parsing."""
    if not yaml_first:
        try:
            if max_rows is None:
                return json_keys.loads(text)
            return json_keys.loads(text, object_pairs_hook=_row_counter(name, max_rows))
        except RecursionError as exc:
            raise PoolError(f"{name}: nests too deeply; accepted: {ACCEPTED_SHAPES}") from exc
        except json_keys.DuplicateKeyError as exc:
            raise PoolError(f"{name}: {exc}") from exc
        except json.JSONDecodeError as exc:
            if text.lstrip().startswith(("[", "{")) or name.lower().endswith(".json"):
                raise PoolError(
                    f"{name}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
                    f"accepted: {ACCEPTED_SHAPES}"
                ) from exc
        except ValueError as exc:  # an integer longer than Python converts (4,300 digits)
            raise PoolError(f"{name}: {value_problem(exc)}; accepted: {ACCEPTED_SHAPES}") from exc
    import yaml  # only YAML pools pay for it

    loader = json_keys.yaml_loader()(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_alias_expansion(node, name)
        _check_yaml_rows(node, name, max_rows)
        return loader.construct_document(node)
    except RecursionError as exc:
        raise PoolError(f"{name}: nests too deeply; accepted: {ACCEPTED_SHAPES}") from exc
    except json_keys.DuplicateKeyError as exc:
        raise PoolError(f"{name}: {exc}") from exc
    except ValueError as exc:  # a number past 4,300 digits, a date such as 2024-13-45
        raise PoolError(f"{name}: {value_problem(exc)}; accepted: {ACCEPTED_SHAPES}") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise PoolError(f"{name}: not valid YAML{at}; accepted: {ACCEPTED_SHAPES}") from exc
    finally:
        loader.dispose()


#: How many nodes YAML aliases may add beyond the document's own. An alias re-uses a node, so a
#: chain of aliases to aliases (a "billion laughs") describes exponentially many rows in a few
#: hundred bytes; anchors shared by a few fields stay far below this.
MAX_ALIAS_EXPANSION = 100_000


def _check_alias_expansion(root: Any, name: str) -> None:
    """Refuse a YAML node graph whose expanded size exceeds its own by more than the bound."""
    problem = alias_expansion_problem(root)
    if problem == SELF_ALIAS:
        raise PoolError(f"{name}: {problem}; accepted: {ACCEPTED_SHAPES}")
    if problem:
        raise PoolError(f"{name}: {problem}")


#: :func:`alias_expansion_problem` for an alias inside the node it names.
SELF_ALIAS = "a YAML alias refers to itself"


def alias_expansion_problem(root: Any) -> str:
    """What is wrong with the aliases of a composed YAML document, "" when nothing: one that
    refers to itself, or an expanded size exceeding the document's own by more than
    :data:`MAX_ALIAS_EXPANSION` (every YAML reader of the project walks what it loads).

    Sizes are summed bottom-up with one entry per distinct node, so the check itself is linear
    in the composed document even when the expansion is astronomically large.
    """
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        ident = id(node)
        children = _yaml_children(node)
        if done:
            on_path.discard(ident)
            sizes[ident] = 1 + sum(sizes[id(child)] for child in children)
            continue
        if ident in sizes:
            continue
        if ident in on_path:
            return SELF_ALIAS
        on_path.add(ident)
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in sizes)
    if sizes[id(root)] - len(sizes) > MAX_ALIAS_EXPANSION:
        return (
            f"YAML aliases expand the document by {sizes[id(root)] - len(sizes):,} nodes; "
            f"the limit is {MAX_ALIAS_EXPANSION:,} (alias chains are refused)"
        )
    return ""


def _check_yaml_rows(root: Any, name: str, max_rows: int | None) -> None:
    """Count the rows of a composed YAML document before any Python object is built."""
    import yaml

    if max_rows is None:
        return
    rows = root
    if isinstance(root, yaml.MappingNode):
        rows = next(
            (value for key, value in root.value
             if isinstance(key, yaml.ScalarNode) and key.value in ("sources_pool", "sources")),
            None,
        )
    if isinstance(rows, yaml.SequenceNode) and len(rows.value) > max_rows:
        raise TooManyRows(name, len(rows.value), max_rows)


def _yaml_children(node: Any) -> list[Any]:
    """The child nodes of a composed YAML node (keys and values of a mapping)."""
    value = node.value
    if isinstance(value, list):
        return [part for item in value for part in (item if isinstance(item, tuple) else (item,))]
    return []


def _rows_of(data: object, name: str) -> list[object]:
    """The list of rows inside parsed pool data, or PoolError naming the wrong shape."""
    if isinstance(data, list):
        return data
    if isinstance(data, Mapping):
        for key in ("sources_pool", "sources"):
            if key in data:
                rows = data[key]
                if isinstance(rows, list):
                    return rows
                kind = type(rows).__name__
                raise PoolError(f"{name}: {key!r} is {kind}, not a list; {ACCEPTED_SHAPES}")
        keys = ", ".join(sorted(map(str, data))[:5]) or "no keys"
        raise PoolError(f"{name}: an object with {keys} but no rows; accepted: {ACCEPTED_SHAPES}")
    kind = "empty" if data is None else f"a {type(data).__name__}"
    raise PoolError(f"{name}: top level is {kind}; accepted: {ACCEPTED_SHAPES}")
