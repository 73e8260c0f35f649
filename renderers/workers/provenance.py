"""``sources_used.json`` for a store that many workers on many machines write at once.

A local output directory merges every record into one file under a file lock
(:mod:`citations.store`). A lock does not hold across machines (NFS locks are advisory and
S3 has none), and a read-merge-write of one shared object loses a record whenever two writers
overlap. So a store keeps **one record object per artifact**:

    provenance/<artifact filename>.json     e.g. provenance/artifacts/<job>/document.pdf.json

Writers never share an object (the key is the artifact's own filename, which only the job
that renders it writes), so no write can undo another. The merged ``sources_used.json`` is a
**view**: :func:`read_records` lists the record objects and merges them by filename, and
:func:`sources_used_text` gives the exact text a local directory would hold. :func:`compact`
writes that view as ``sources_used.json`` at the store's root for tools that read a plain file;
it never deletes a record object, so a compaction that races with writers can only leave the
snapshot a little behind (the next one catches up), never lose a record.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from citations.errors import StoreError
from citations.store import STORE_NAME, ArtifactRecord, dump_records
from renderers.workers.stores import ArtifactStore

PREFIX = "provenance/"


def record_key(filename: str) -> str:
    """The object key of the record for the artifact ``filename``."""
    return f"{PREFIX}{filename}.json"


def write_records(store: ArtifactStore, records: Iterable[ArtifactRecord]) -> None:
    """Write each record as its own object (replacing that artifact's previous record)."""
    for record in records:
        text = json.dumps(record.to_dict(), indent=2, ensure_ascii=False) + "\n"
        store.put(record_key(record.filename), text.encode("utf-8"))


def read_record(store: ArtifactStore, key: str) -> ArtifactRecord:
    """One record object; StoreError when it is missing or not a record."""
    raw = store.get(key)
    if raw is None:
        raise StoreError(f"{store.url}{key}: no such provenance record")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise StoreError(f"{store.url}{key}: not a JSON record ({exc})") from exc
    if not isinstance(data, dict):
        raise StoreError(f"{store.url}{key}: a record is a JSON object")
    return ArtifactRecord.from_dict(data)


def read_records(store: ArtifactStore) -> tuple[list[ArtifactRecord], list[str]]:
    """``(records sorted by filename, warnings)``: every record object in the store.

    An unreadable record object is reported in the warnings and left in place (never deleted),
    so a reader never hides data it could not parse.
    """
    merged: dict[str, ArtifactRecord] = {}
    warnings: list[str] = []
    for key in store.keys(PREFIX):
        if not key.endswith(".json"):
            continue
        try:
            record = read_record(store, key)
        except StoreError as exc:
            warnings.append(str(exc))
            continue
        merged[record.filename] = record
    return sorted(merged.values(), key=lambda r: r.filename), warnings


def sources_used_text(store: ArtifactStore) -> str:
    """The merged ``sources_used.json`` text, as :mod:`citations.store` writes it."""
    records, _ = read_records(store)
    return dump_records(records)


def compact(store: ArtifactStore) -> int:
    """Write the merged view as ``sources_used.json`` at the store's root; return its size.

    Safe to run any time and from anywhere, concurrently with workers and with itself.
    """
    records, _ = read_records(store)
    store.put(STORE_NAME, dump_records(records).encode("utf-8"))
    return len(records)
