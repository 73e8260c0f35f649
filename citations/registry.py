"""A persistent, append-only sources pool that the tools of a conversation register into.

The file is an ordinary pool — a standalone JSON pool (a list of rows, or
``{"sources_pool": [...]}``) or a ``timeline.json`` whose ``sources_pool`` it maintains, every
other key kept as it was — so ``SourcePool.load`` and ``citerender render --pool`` read it as
is. Rules:

- ``register(rows)`` returns the sid map (each row's own sid, or its 1-based position, → the
  registry's sid). A row whose dedupe key (normalized URL, else path, else content) is already
  registered keeps that sid; a new source gets the next sid; sids are never reused or changed.
- A duplicate with richer metadata fills the existing row's *missing* fields (a title, a date, a
  snippet, unknown extras); it never overwrites one, and its sid stays.
- Writers in many processes lose nothing: each registration reads, merges and replaces the file
  under an exclusive lock (``POOL.lock``, :mod:`citations.locking`) with
  :func:`citations.atomic.write_atomic` — the same discipline as ``sources_used.json``. A
  process keeps the parsed file between registrations and re-reads it only when it changed.
- Optional near-duplicate detection (:mod:`citations.neardup`): a new source whose text is
  nearly the same as a registered one under another URL is *reported*, never merged.

:class:`AsyncSourceRegistry` offers the same operations to asyncio code (a worker thread each).
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from citations import json_keys
from citations.atomic import write_atomic
from citations.errors import PoolError, RegistryError
from citations.grammar import SID_RANGE, sid_in_range
from citations.locking import LockError, exclusive_lock
from citations.model import CANONICAL_FIELDS, Source
from citations.neardup import SimHashIndex, simhash
from citations.pool import SourcePool, _with_sid, dedupe_key, parse_sid, source_from_row
from citations.urls import normalize_path, normalize_url

LOCK_SUFFIX = ".lock"
#: Seconds to wait for the lock before giving up with :class:`RegistryError`.
LOCK_TIMEOUT = 120.0
POOL_KEY = "sources_pool"
_FILLABLE = tuple(name for name in CANONICAL_FIELDS if name != "sid")
_Stamp = tuple[int, int, int, int]


@dataclass(frozen=True)
class NearDuplicate:
    """Source ``sid`` (just registered) reads almost like ``similar_to`` (``distance`` bits of
    64 apart in SimHash) although their URLs differ."""

    sid: int
    similar_to: int
    distance: int


@dataclass(frozen=True)
class Registration:
    """The outcome of one :meth:`SourceRegistry.register` call."""

    sid_map: dict[int, int]
    added: tuple[int, ...] = ()
    enriched: tuple[int, ...] = ()
    near_duplicates: tuple[NearDuplicate, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """``{"sid_map": {"1": 12, …}, "added", "enriched", "near_duplicates"}`` (JSON-ready)."""
        return {
            "sid_map": {str(k): v for k, v in self.sid_map.items()},
            "added": list(self.added),
            "enriched": list(self.enriched),
            "near_duplicates": [
                {"sid": n.sid, "similar_to": n.similar_to, "distance": n.distance}
                for n in self.near_duplicates
            ],
        }


@dataclass
class _State:
    """The parsed registry file."""

    shape: Literal["list", "object"]
    key: str = POOL_KEY
    head: dict[str, Any] = field(default_factory=dict)  # an object file's other keys, in order
    rows: list[dict[str, Any]] = field(default_factory=list)  # as stored
    document: bytearray | None = None  # the file as last written (None: compose afresh)
    tail: bytes = b""  # the document's bytes after its last row
    written_rows: int = 0  # rows the document holds (the rest are appended on the next write)
    sources: dict[int, Source] = field(default_factory=dict)
    position: dict[int, int] = field(default_factory=dict)  # sid → index in rows
    by_key: dict[str, int] = field(default_factory=dict)
    last_sid: int = 0
    stamp: _Stamp | None = None
    near: SimHashIndex | None = None


class SourceRegistry:
    """The registry stored at ``path`` (created on first registration)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        near_duplicates: bool = False,
        lock_timeout: float = LOCK_TIMEOUT,
    ) -> None:
        self.path = Path(path)
        if self.path.suffix.lower() in (".yaml", ".yml"):
            raise RegistryError(f"{self.path}: a registry is a JSON file; accepted: .json")
        self.lock_path = self.path.with_name(self.path.name + LOCK_SUFFIX)
        self.near_duplicates = near_duplicates
        self.lock_timeout = lock_timeout
        self._state: _State | None = None
        self._mutex = threading.RLock()

    # reading --------------------------------------------------------------------------------

    def get(self, sid: int) -> Source | None:
        """The registered source ``sid``, or None."""
        return self._current().sources.get(sid)

    def find_by_key(self, key: str) -> Source | None:
        """The source a dedupe key names (``url:…``, ``path:…``, ``row:…``) — or a URL or a
        file path, normalized as the pool normalizes them."""
        if not key.startswith(("url:", "path:", "row:")):
            key = "url:" + normalize_url(key) if "://" in key else "path:" + normalize_path(key)
        state = self._current()
        sid = state.by_key.get(key)
        return None if sid is None else state.sources[sid]

    def iter_all(self) -> Iterator[Source]:
        """Every registered source in sid order."""
        state = self._current()
        return iter([state.sources[sid] for sid in sorted(state.sources)])

    def pool(self) -> SourcePool:
        """The registry as a :class:`SourcePool`."""
        return SourcePool(self.iter_all(), origin=str(self.path))

    def __len__(self) -> int:
        return len(self._current().sources)

    def _current(self) -> _State:
        with self._mutex:
            stamp = self._stamp()
            if self._state is None or stamp is None or stamp != self._state.stamp:
                self._state = self._read(stamp)
            return self._state

    def _stamp(self) -> _Stamp | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise RegistryError(f"{self.path}: cannot read ({exc.strerror})") from exc
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)

    def _read(self, stamp: _Stamp | None) -> _State:
        """Parse the file (a missing or empty file is an empty registry)."""
        new_shape: Literal["list", "object"] = (
            "object" if self.path.stem.lower() == "timeline" else "list"
        )
        try:
            raw = self.path.read_bytes() if stamp is not None else b""
        except FileNotFoundError:
            raw, stamp = b"", None
        except OSError as exc:
            raise RegistryError(f"{self.path}: cannot read ({exc.strerror})") from exc
        if not raw.strip():
            return _State(new_shape, stamp=stamp)
        try:
            data = json_keys.loads(raw.decode("utf-8-sig"))
        except (UnicodeDecodeError, json.JSONDecodeError, json_keys.DuplicateKeyError) as exc:
            raise RegistryError(
                f"{self.path}: not valid JSON ({exc}); the registry is left untouched — fix or "
                "move the file"
            ) from exc
        state = _State("list" if isinstance(data, list) else "object", stamp=stamp)
        if isinstance(data, list):
            rows = data
        elif isinstance(data, dict):
            state.key = next((k for k in (POOL_KEY, "sources") if k in data), POOL_KEY)
            rows = data.get(state.key, [])
            if not isinstance(rows, list):
                raise RegistryError(f"{self.path}: {state.key!r} is not a list of rows")
            state.head = dict(data)
        else:
            raise RegistryError(
                f"{self.path}: top level is {type(data).__name__}; accepted: a list of rows or "
                "an object with 'sources_pool'"
            )
        try:
            pool = SourcePool.from_rows(rows, origin=str(self.path))
        except PoolError as exc:
            raise RegistryError(str(exc)) from exc
        for row in rows:
            sid = parse_sid(row["sid"], str(self.path)) if isinstance(row, dict) else 0
            if sid in pool and sid not in state.position:
                state.position[sid] = len(state.rows)
                state.rows.append(row)
        state.sources = {source.sid: source for source in pool}
        for sid in pool.sids:
            state.by_key.setdefault(pool.key_of(sid) or "", sid)
        state.last_sid = pool.sids[-1] if len(pool) else 0
        return state

    # writing --------------------------------------------------------------------------------

    def register(self, rows: Iterable[Mapping[str, Any] | Source]) -> Registration:
        """Register ``rows`` (with or without sids); return the sid map and what changed.

        Nothing is written when every row is already registered with nothing to add.
        """
        items = list(rows)
        with self._mutex:
            try:
                with exclusive_lock(self.lock_path, self.lock_timeout):
                    state = self._current()
                    result = self._merge(state, items)
                    if result.added or result.enriched:
                        self._write(state)
            except LockError as exc:  # names the .lock file, not the registry
                raise RegistryError(str(exc)) from exc
            except PermissionError as exc:
                raise RegistryError(f"{self.path}: cannot write ({exc.strerror})") from exc
        return result

    def _merge(self, state: _State, items: list[Mapping[str, Any] | Source]) -> Registration:
        sid_map: dict[int, int] = {}
        incoming: dict[int, Source] = {}
        added: list[int] = []
        enriched: dict[int, None] = {}
        near: list[NearDuplicate] = []
        if self.near_duplicates and state.near is None:
            state.near = SimHashIndex()
            for sid, source in state.sources.items():
                fingerprint = simhash(source.content or source.text)
                if fingerprint is not None:
                    state.near.add(sid, fingerprint)
        for index, item in enumerate(items, start=1):
            source = self._source(item, index)
            previous = incoming.get(source.sid)
            if previous is not None and previous != source:
                raise RegistryError(
                    f"rows to register: two rows share sid {source.sid} but differ; accepted: "
                    "one row per sid, or rows without sids"
                )
            incoming[source.sid] = source
            key = dedupe_key(source)
            known = state.by_key.get(key)
            if known is None:
                if not sid_in_range(state.last_sid + 1):
                    raise RegistryError(
                        f"{self.path}: no sid is left for a new source (the last is "
                        f"{state.last_sid}); accepted: {SID_RANGE}, what a citation token can name"
                    )
                sid = state.last_sid = state.last_sid + 1
                stored = _with_sid(source, sid)
                state.position[sid] = len(state.rows)
                state.rows.append(stored.to_dict())
                state.sources[sid] = stored
                state.by_key[key] = sid
                added.append(sid)
                if state.near is not None:
                    near += self._near(state.near, sid, stored)
            else:
                sid = known
                if self._fill(state, sid, source):
                    enriched[sid] = None
            sid_map[source.sid] = sid
        return Registration(sid_map, tuple(added), tuple(enriched), tuple(near))

    @staticmethod
    def _source(item: Mapping[str, Any] | Source, index: int) -> Source:
        if isinstance(item, Source):
            return item
        if not isinstance(item, Mapping):
            raise RegistryError(
                f"row {index} is {type(item).__name__}; accepted: an object with a url, a path or "
                "a text"
            )
        row = dict(item) if item.get("sid") not in (None, "") else {**item, "sid": index}
        try:
            return source_from_row(row, f"row {index}")
        except PoolError as exc:
            raise RegistryError(str(exc)) from exc

    def _fill(self, state: _State, sid: int, source: Source) -> bool:
        """Fill the fields ``sid`` lacks from ``source``; True when something was added."""
        current = state.sources[sid]
        row = state.rows[state.position[sid]]
        changed = False
        for name in _FILLABLE:
            value = getattr(source, name)
            if value not in ("", None) and getattr(current, name) in ("", None) and row.get(
                name
            ) in (None, ""):
                row[name] = value
                changed = True
        for name, value in source.extra.items():
            if name not in row and name not in current.extra and value not in (None, ""):
                row[name] = value
                changed = True
        if changed:
            state.sources[sid] = source_from_row(row, str(self.path))
            state.document = None  # a row inside the document changed
        return changed

    @staticmethod
    def _near(index: SimHashIndex, sid: int, source: Source) -> list[NearDuplicate]:
        fingerprint = simhash(source.content or source.text)
        if fingerprint is None:
            return []
        found = [NearDuplicate(sid, other, distance) for other, distance in index.near(fingerprint)]
        index.add(sid, fingerprint)
        return found

    def _write(self, state: _State) -> None:
        """Replace the file (atomically, under the caller's lock) with ``state``.

        Rows are only ever appended, so the document is kept between writes and a registration
        encodes only its new rows, in place (an enriched row composes the document afresh).
        """
        indent = b"\n  " if state.shape == "list" else b"\n    "
        if state.document is None or not state.written_rows:
            state.document, state.tail = _compose(state, indent)
        else:
            del state.document[len(state.document) - len(state.tail) :]
            for row in state.rows[state.written_rows :]:
                state.document += b"," + indent + _row_bytes(row)
            state.document += state.tail
        state.written_rows = len(state.rows)
        try:
            write_atomic(self.path, state.document)
        except OSError as exc:
            state.document = None
            raise RegistryError(f"{self.path}: write failed ({exc.strerror or exc})") from exc
        state.stamp = self._stamp()


def _compose(state: _State, indent: bytes) -> tuple[bytearray, bytes]:
    """The whole file for ``state`` and its bytes after the last row."""
    rows = b",".join(indent + _row_bytes(row) for row in state.rows)
    close = (indent[:-2] if rows else b"") + b"]"
    if state.shape == "list":
        return bytearray(b"[" + rows + close + b"\n"), close + b"\n"
    state.head.setdefault(state.key, [])
    keys = list(state.head)
    at = keys.index(state.key)

    def entry(key: str) -> bytes:
        value = json.dumps(state.head[key], ensure_ascii=False, indent=2).replace("\n", "\n  ")
        return b"  " + json.dumps(key, ensure_ascii=False).encode() + b": " + value.encode()

    before = b"".join(entry(key) + b",\n" for key in keys[:at])
    opening = b"  " + json.dumps(state.key, ensure_ascii=False).encode() + b": ["
    after = b"".join(b",\n" + entry(key) for key in keys[at + 1 :])
    tail = close + after + b"\n}\n"
    return bytearray(b"{\n" + before + opening + rows + tail), tail


def _row_bytes(row: Mapping[str, Any]) -> bytes:
    """One row as compact UTF-8 JSON (non-ASCII kept; a lone surrogate escaped)."""
    text = json.dumps(row, ensure_ascii=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(row).encode("ascii")


class AsyncSourceRegistry:
    """:class:`SourceRegistry` for asyncio code: each call runs in a worker thread."""

    def __init__(self, path: str | os.PathLike[str], **options: Any) -> None:
        self.registry = SourceRegistry(path, **options)

    async def register(self, rows: Iterable[Mapping[str, Any] | Source]) -> Registration:
        return await asyncio.to_thread(self.registry.register, list(rows))

    async def get(self, sid: int) -> Source | None:
        return await asyncio.to_thread(self.registry.get, sid)

    async def find_by_key(self, key: str) -> Source | None:
        return await asyncio.to_thread(self.registry.find_by_key, key)

    async def iter_all(self) -> AsyncIterator[Source]:
        """Every registered source in sid order (one read of the file)."""
        sources = await asyncio.to_thread(lambda: list(self.registry.iter_all()))
        for source in sources:
            yield source
