"""The citation core: sources pools, the token grammar, numbering, audit and provenance.

No rendering library is imported here.
"""

from citations.errors import (
    AnswerError,
    CitationError,
    DuplicateSidError,
    ExtractorError,
    PoolError,
    RegistryError,
    SelectorError,
    SidecarError,
    StoreError,
    TokenError,
    UnknownSidError,
)
from citations.model import Source

__all__ = [
    "AnswerError",
    "CitationError",
    "DuplicateSidError",
    "ExtractorError",
    "PoolError",
    "RegistryError",
    "SelectorError",
    "SidecarError",
    "Source",
    "StoreError",
    "TokenError",
    "UnknownSidError",
]
