"""IR fixtures (pandoc's ``.native`` files): load them, and print a document as fixture source.

A fixture is a module ``tests/fixtures/ir/NAME.py`` whose ``DOCUMENT`` is built with the
constructors of :mod:`renderers.document`; writer tests load it with :func:`load_ir` and so do
not depend on the markdown reader. ``python -m tests.support.ir INPUT.md`` prints the fixture
module for what the markdown reader makes of ``INPUT.md`` (the way ``pandoc -t native`` starts a
``.native`` file); edit it by hand from there.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import sys
from pathlib import Path

from renderers.document import Document

FIXTURE_PACKAGE = "tests.fixtures.ir"
FIXTURE_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "ir"
LINE_WIDTH = 100
INDENT = "    "


def fixture_names() -> list[str]:
    """The name of every IR fixture module."""
    return sorted(p.stem for p in FIXTURE_DIR.glob("*.py") if p.stem != "__init__")


def load_ir(name: str) -> Document:
    """The ``DOCUMENT`` of ``tests/fixtures/ir/<name>.py``."""
    if name not in fixture_names():
        raise LookupError(f"no IR fixture {name!r}; known: {', '.join(fixture_names())}")
    document = importlib.import_module(f"{FIXTURE_PACKAGE}.{name}").DOCUMENT
    if not isinstance(document, Document):
        raise TypeError(f"{FIXTURE_DIR / name}.py: DOCUMENT is a {type(document).__name__}")
    return document


def native(node: object, indent: str = "", prefix: str = "") -> str:
    """``node`` as Python source that rebuilds it, pandoc-native style.

    Required fields are positional, fields left at their default are omitted, the rest are
    keywords; a node is broken over lines when its line (``indent``, ``prefix`` such as
    ``"blocks="``, the node and a comma) would pass :data:`LINE_WIDTH`.
    """
    flat = _flat(node)
    if len(indent) + len(prefix) + len(flat) + 1 <= LINE_WIDTH:
        return flat
    inner = indent + INDENT
    if isinstance(node, tuple) and node:
        return "(\n" + "".join(f"{inner}{native(v, inner)},\n" for v in node) + f"{indent})"
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        lines = []
        for key, value in _arguments(node):
            label = f"{key}=" if key else ""
            lines.append(f"{inner}{label}{native(value, inner, label)},\n")
        return f"{type(node).__name__}(\n{''.join(lines)}{indent})"
    return flat


def _arguments(node: object) -> list[tuple[str, object]]:
    """(keyword or "" for positional, value) of each field of a node not at its default."""
    arguments: list[tuple[str, object]] = []
    for field in dataclasses.fields(node):  # type: ignore[arg-type]
        value = getattr(node, field.name)
        if field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        else:
            default = field.default
        if default is dataclasses.MISSING:
            arguments.append(("", value))
        elif value != default:
            arguments.append((field.name, value))
    return arguments


def _flat(node: object) -> str:
    if isinstance(node, tuple):
        items = ", ".join(_flat(v) for v in node)
        return f"({items},)" if len(node) == 1 else f"({items})"
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        args = ", ".join(f"{k}={_flat(v)}" if k else _flat(v) for k, v in _arguments(node))
        return f"{type(node).__name__}({args})"
    if isinstance(node, enum.Enum):  # a diagnostic's code: its text, read back as the member
        return repr(node.value)
    return repr(node)


def fixture_source(document: Document, origin: str) -> str:
    """A fixture module holding ``document`` (imports only the constructors it uses)."""
    used = sorted({type(n).__name__ for n in _nodes(document)})
    imports = "".join(f"    {name},\n" for name in used)
    return (
        f'"""IR fixture made from {origin} by ``python -m tests.support.ir``."""\n\n'
        f"from renderers.document import (\n{imports})\n\n"
        f"DOCUMENT = {native(document)}\n"
    )


def _nodes(node: object) -> list[object]:
    found: list[object] = []
    if isinstance(node, tuple):
        for value in node:
            found.extend(_nodes(value))
    elif dataclasses.is_dataclass(node) and not isinstance(node, type):
        found.append(node)
        for _, value in _arguments(node):
            found.extend(_nodes(value))
    return found


def main(argv: list[str]) -> int:
    """``python -m tests.support.ir INPUT.md``: print the fixture module for ``INPUT.md``."""
    from renderers.readers.markdown import read_markdown

    if len(argv) != 1:
        print("usage: python -m tests.support.ir INPUT.md", file=sys.stderr)
        return 2
    path = Path(argv[0])
    sys.stdout.write(fixture_source(read_markdown(path.read_text(encoding="utf-8")), path.name))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
