"""Pool rows → CSL-JSON items, the data a CSL processor formats.

Canonical fields map directly (``title``, ``url`` → ``URL``, ``published_at`` → ``issued``,
``fetched_at`` → ``accessed``, ``source_type`` → ``type``); ``author``/``authors``,
``publisher`` and ``container``/``container_title``/``site_name``/``journal`` come from the row's
extra fields. Files and attachments are ``document`` items whose artifact path is their
``archive_location``. Only http, https and mailto URLs are passed on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from citations.links import safe_link
from citations.model import Source
from renderers.resolve import file_name, source_title
from renderers.styles.markup import strip_marks

#: ``source_type`` values (lower-cased) → CSL item types; anything else is a web page for a row
#: with a URL, else a document.
SOURCE_TYPES: dict[str, str] = {
    "web": "webpage", "webpage": "webpage", "http": "webpage", "mcp_resource": "webpage",
    "page": "webpage", "blog": "post-weblog", "post": "post-weblog",
    "news": "article-newspaper", "newspaper": "article-newspaper",
    "article": "article-journal", "journal": "article-journal", "paper": "article-journal",
    "magazine": "article-magazine", "book": "book", "chapter": "chapter", "report": "report",
    "thesis": "thesis", "dataset": "dataset", "software": "software", "patent": "patent",
    "standard": "standard", "legislation": "legislation", "file": "document",
    "attachment": "document", "document": "document", "pdf": "document",
}
_AUTHOR_KEYS = ("author", "authors")
_CONTAINER_KEYS = ("container", "container_title", "container-title", "site_name", "journal",
                   "website")
_DATE = re.compile(r"^\s*(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?")
_MAX_FIELD = 1000
_MAX_NAMES = 50
#: A name part written in a script whose personal names put the family name first with no
#: space between the parts (Han, kana, Hangul). citeproc-js shows such a name as written,
#: 山田 + 太郎 → 山田太郎, in every style: never inverted, initialled or split by a comma.
_FAMILY_FIRST_PART = re.compile(
    "[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003ffff]+"
)


def item_id(sid: int) -> str:
    return f"s{sid}"


def csl_item(source: Source) -> dict[str, Any]:
    """The CSL-JSON item of ``source`` (its id is :func:`item_id` of the sid)."""
    url = safe_link(source.url)
    kind = SOURCE_TYPES.get(source.source_type.strip().lower())
    item: dict[str, Any] = {
        "id": item_id(source.sid),
        "type": kind or ("webpage" if url else "document"),
        "title": _text(source_title(source)),
    }
    if url:
        item["URL"] = url
    if not url and (source.artifact_path or source.physical_path):
        item["archive_location"] = _text(
            source.artifact_path.strip() or file_name(source.physical_path)
        )
    for key, value in (("issued", source.published_at), ("accessed", source.fetched_at)):
        parts = date_parts(value)
        if parts:
            item[key] = {"date-parts": [parts]}
    authors = _names(_first(source.extra, _AUTHOR_KEYS))
    if authors:
        item["author"] = authors
    publisher = _first(source.extra, ("publisher",))
    if isinstance(publisher, str) and publisher.strip():
        item["publisher"] = _text(publisher)
    container = _first(source.extra, _CONTAINER_KEYS)
    if isinstance(container, str) and container.strip():
        item["container-title"] = _text(container)
    return item


def date_parts(value: str) -> list[int]:
    """``2024-10-16T…`` → ``[2024, 10, 16]``; ``2024-10`` → ``[2024, 10]``; else ``[]``."""
    match = _DATE.match(value or "")
    if not match:
        return []
    parts = [int(p) for p in match.groups() if p is not None]
    if len(parts) > 1 and not 1 <= parts[1] <= 12:
        return parts[:1]
    if len(parts) > 2 and not 1 <= parts[2] <= 31:
        return parts[:2]
    return parts


def _text(value: str) -> str:
    return strip_marks(" ".join(value.split()))[:_MAX_FIELD]


def _first(extra: dict[str, Any], keys: Iterable[str]) -> Any:
    return next((extra[k] for k in keys if extra.get(k) not in (None, "", [])), None)


def _names(value: Any) -> list[dict[str, str]]:
    """Authors as CSL names: ``"Family, Given"`` is split, a mapping with ``family``/``given``
    or ``literal`` is kept, any other string (an organisation, a full name) is a literal name.
    A string holding several names separated by ``;`` gives several."""
    raw = value.split(";") if isinstance(value, str) else value
    if not isinstance(raw, list | tuple):
        return []
    names: list[dict[str, str]] = []
    for entry in raw[:_MAX_NAMES]:
        if isinstance(entry, dict):
            kept = {k: _text(str(v)) for k, v in entry.items()
                    if k in ("family", "given", "literal") and isinstance(v, str) and v.strip()}
            if kept:
                names.append(_family_first(kept))
        elif isinstance(entry, str) and entry.strip():
            family, comma, given = entry.partition(",")
            if comma and family.strip() and given.strip() and "," not in given:
                names.append(_family_first({"family": _text(family), "given": _text(given)}))
            else:
                names.append({"literal": _text(entry)})
    return names


def _family_first(name: dict[str, str]) -> dict[str, str]:
    """A CJK name (both parts in :data:`_FAMILY_FIRST_PART`) as the literal its script writes,
    family then given name with no space; any other name as it is."""
    family, given = name.get("family", ""), name.get("given", "")
    if _FAMILY_FIRST_PART.fullmatch(family) and _FAMILY_FIRST_PART.fullmatch(given):
        return {"literal": family + given}
    return name
