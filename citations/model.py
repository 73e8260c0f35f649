"""The canonical source row shared by every part of citerender."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Fields of the canonical row, in the order they are written back out.
CANONICAL_FIELDS: tuple[str, ...] = (
    "sid",
    "title",
    "url",
    "text",
    "content",
    "source_type",
    "mime",
    "size_bytes",
    "artifact_path",
    "physical_path",
    "published_at",
    "fetched_at",
    "relevance",
)

@dataclass(frozen=True)
class Source:
    """One row of a sources pool.

    ``url`` is the original URL exactly as given (it is what gets linked); dedupe keys are
    computed from it by :func:`citations.pool.dedupe_key`. Fields the contract does not know
    are preserved in ``extra`` and written back by :meth:`to_dict`.
    """

    sid: int
    title: str = ""
    url: str = ""
    text: str = ""
    content: str = ""
    source_type: str = ""
    mime: str = ""
    size_bytes: int | None = None
    artifact_path: str = ""
    physical_path: str = ""
    published_at: str = ""
    fetched_at: str = ""
    relevance: float | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=True, hash=False)

    @property
    def date(self) -> str:
        """The best known date of the source (published, else fetched), or ``""``."""
        return self.published_at or self.fetched_at

    @property
    def is_file(self) -> bool:
        """True for attachments and files (sources shown by artifact path, not domain)."""
        return bool(self.physical_path or self.artifact_path) and not self.url

    def to_dict(self) -> dict[str, Any]:
        """The row as a plain dict: canonical fields that are set, then the preserved extras."""
        out: dict[str, Any] = {}
        for name in CANONICAL_FIELDS:
            value = getattr(self, name)
            if value not in ("", None):
                out[name] = value
        out.update(self.extra)
        return out
