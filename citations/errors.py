"""Error types of the citation core. Every message names the input and what is accepted.

Every error also carries two machine-readable facts, so that a surface (agent tool envelope,
HTTP status, CLI exit code) decides how to answer without reading the message:

* ``code`` — one :class:`ErrorCode`, a closed set shared with :mod:`renderers.errors`;
* ``field`` — the input field at fault (``content``, ``sources_pool``, ``dpi`` …), as the
  tools and the HTTP service name their arguments.

Each class has a default for both; a raise site that knows better passes ``field=`` (and,
rarely, ``code=``).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar


class ErrorCode(StrEnum):
    """What kind of problem an error is. The values are the ``code`` of the tool envelope."""

    INVALID_ARGUMENT = "invalid_argument"  # an option or argument value is not accepted
    INVALID_INPUT = "invalid_input"  # the content cannot be read (encoding, format)
    INVALID_SOURCES_POOL = "invalid_sources_pool"  # the pool cannot be loaded
    INVALID_CITATION = "invalid_citation"  # a citation token or sidecar entry is malformed
    INVALID_PATH = "invalid_path"  # an output name or path is refused
    WRITE_FAILED = "write_failed"  # an output could not be written (disk, permissions)
    RESOURCE_REFUSED = "resource_refused"  # an image, stylesheet or template was refused
    LIMIT_EXCEEDED = "limit_exceeded"  # a configured limit (size, depth, pages …) was hit
    STRICT_FAILED = "strict_failed"  # strict mode met unknown sids or invalid tokens
    UNKNOWN_TOOL = "unknown_tool"  # an agent asked for a tool that does not exist
    INTERNAL = "internal_error"  # a bug: never the caller's fault


#: Characters of an input's string (a key, a pointer) an error message quotes whole.
SHOWN_CHARS = 60


def shown(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text`` quoted for an error message, cut to its head and length when it is long: a
    megabyte key must not make a megabyte message."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text):,} characters)"


def shown_part(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text`` as one part of a dotted place (``options.<key>``), cut to ``limit`` characters
    and ``…`` when it is long."""
    return text if len(text) <= limit else f"{text[:limit]}…"


class CodedError(Exception):
    """An exception with a :class:`ErrorCode` and the field at fault (see the module doc)."""

    default_code: ClassVar[ErrorCode] = ErrorCode.INVALID_INPUT
    default_field: ClassVar[str] = "content"

    def __init__(
        self, message: str = "", *, field: str | None = None, code: ErrorCode | None = None
    ) -> None:
        super().__init__(message)
        self.field: str = self.default_field if field is None else field
        self.code: ErrorCode = self.default_code if code is None else code

    def __reduce__(self) -> tuple[Any, ...]:
        # Worker processes send errors back pickled; keyword-only fields survive the trip.
        message = str(self.args[0]) if self.args else ""
        return _restore, (type(self), message, self.field, self.code), self.__dict__


def _restore(cls: type[CodedError], message: str, field: str, code: ErrorCode) -> CodedError:
    return cls(message, field=field, code=code)


class CitationError(CodedError):
    """Base class of every error raised by :mod:`citations`."""


class PoolError(CitationError):
    """A sources pool could not be loaded or is malformed (names the file and row)."""

    default_code = ErrorCode.INVALID_SOURCES_POOL
    default_field = "sources_pool"
    #: The field of the refused row at fault (``sid``, ``title`` …), ``""`` when the error is
    #: not about one field of one row; set by :func:`citations.pool.source_from_row`.
    row_field: str = ""


class DuplicateSidError(PoolError):
    """Two rows share a sid but differ in content."""


class TokenError(CitationError):
    """A citation token is invalid (strict mode) — names the token text and line."""

    default_code = ErrorCode.INVALID_CITATION


class UnknownSidError(CitationError):
    """A citation names a sid that is not in the pool (strict mode)."""

    default_code = ErrorCode.INVALID_CITATION


class FrontMatterError(CitationError):
    """A markdown input's front matter names a key twice (the content is at fault)."""


class SidecarError(CitationError):
    """A `_citations` sidecar is malformed or points at something that does not exist."""

    default_code = ErrorCode.INVALID_CITATION


class SelectorError(CitationError):
    """A pool selector such as ``so:sources_pool[1-3]`` could not be parsed."""

    default_code = ErrorCode.INVALID_ARGUMENT
    default_field = "selector"


class StoreError(CitationError):
    """``sources_used.json`` could not be read or written."""

    default_code = ErrorCode.WRITE_FAILED
    default_field = "sources_used.json"


class ExtractorError(CitationError):
    """A tool output could not be turned into source rows."""

    default_field = "tool_output"


class AnswerError(CitationError):
    """A provider's answer (OpenAI, Anthropic, …) is malformed or is no answer at all.

    ``path`` names the bad part inside the answer, such as
    ``output[0].content[1].annotations[2].end_index`` (``""``: the answer as a whole); the
    message starts with it. ``field`` is ``answer`` followed by that path, as the agent tools
    name the argument.
    """

    default_code = ErrorCode.INVALID_ARGUMENT
    default_field = "answer"

    def __init__(self, path: str, message: str) -> None:
        super().__init__(
            f"{path}: {message}" if path else message,
            field=f"answer.{path}" if path else "answer",
        )
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        message = str(self.args[0]) if self.args else ""
        detail = message[len(self.path) + 2 :] if self.path else message
        return type(self), (self.path, detail), self.__dict__


class RegistryError(CitationError):
    """A persistent source registry file could not be read, locked or written."""

    default_code = ErrorCode.INVALID_SOURCES_POOL
    default_field = "pool"
