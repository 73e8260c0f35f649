"""The citation core: sources pools, the token grammar, numbering, audit and provenance.

No rendering library is imported here.
"""

from citations.errors import (
    CitationError,
    DuplicateSidError,
    ExtractorError,
    PoolError,
    SelectorError,
    SidecarError,
    StoreError,
    TokenError,
    UnknownSidError,
)
from citations.model import Source

__all__ = [
    "CitationError",
    "DuplicateSidError",
    "ExtractorError",
    "PoolError",
    "SelectorError",
    "SidecarError",
    "Source",
    "StoreError",
    "TokenError",
    "UnknownSidError",
]
