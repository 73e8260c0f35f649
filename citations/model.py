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

#: Bibliographic fields a row may carry for citation styles: the CSL-JSON variable each fills
#: → the row keys read for it, the first one present winning. They are kept in
#: :attr:`Source.extra` under the key given; the pool accepts text or a number there
#: (:func:`citations.pool.source_from_row`) and ``renderers.styles.items`` maps them.
BIBLIOGRAPHIC_FIELDS: dict[str, tuple[str, ...]] = {
    "container-title": ("container", "container_title", "container-title", "journal",
                        "site_name", "website"),
    "collection-title": ("collection", "collection_title", "collection-title", "series"),
    "collection-number": ("collection_number", "collection-number"),
    "publisher": ("publisher",),
    "publisher-place": ("publisher_place", "publisher-place"),
    "volume": ("volume",),
    "issue": ("issue",),
    "page": ("page", "pages"),
    "edition": ("edition",),
    "DOI": ("doi", "DOI"),
    "ISBN": ("isbn", "ISBN"),
    "ISSN": ("issn", "ISSN"),
    "language": ("language",),
}
#: Name fields (CSL name variable → row keys): ``"Family, Given"``, ``{family, given}`` (with
#: particles), a literal (an organisation), or a list of those; read leniently (an entry of
#: another shape is left out).
NAME_FIELDS: dict[str, tuple[str, ...]] = {
    "author": ("author", "authors"),
    "editor": ("editor", "editors"),
    "translator": ("translator", "translators"),
}
#: Every row key of :data:`BIBLIOGRAPHIC_FIELDS` (those whose values the pool checks).
BIBLIOGRAPHIC_KEYS: frozenset[str] = frozenset(
    key for keys in BIBLIOGRAPHIC_FIELDS.values() for key in keys
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
