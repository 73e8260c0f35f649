"""Error types of the citation core. Every message names the input and what is accepted."""

from __future__ import annotations


class CitationError(Exception):
    """Base class of every error raised by :mod:`citations`."""


class PoolError(CitationError):
    """A sources pool could not be loaded or is malformed (names the file and row)."""


class DuplicateSidError(PoolError):
    """Two rows share a sid but differ in content."""


class TokenError(CitationError):
    """A citation token is invalid (strict mode) — names the token text and line."""


class UnknownSidError(CitationError):
    """A citation names a sid that is not in the pool (strict mode)."""


class SidecarError(CitationError):
    """A `_citations` sidecar is malformed or points at something that does not exist."""


class SelectorError(CitationError):
    """A pool selector such as ``so:sources_pool[1-3]`` could not be parsed."""


class StoreError(CitationError):
    """``sources_used.json`` could not be read or written."""


class ExtractorError(CitationError):
    """A tool output could not be turned into source rows."""


class AnswerError(CitationError):
    """A provider's answer (OpenAI, Anthropic, …) is malformed; ``field`` names the bad part.

    ``field`` is a path into the answer such as ``output[0].content[1].annotations[2].end_index``
    (``""`` for the answer as a whole); the message starts with it.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field


class RegistryError(CitationError):
    """A persistent source registry file could not be read, locked or written."""
