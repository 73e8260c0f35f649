"""The sources pool: loading, row normalization, dedupe keys, append-only merge and selectors."""

from __future__ import annotations

import bisect
import dataclasses
import gc
import hashlib
import mimetypes
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from citations.chars import clean_text, encoding_shown, text_encoding
from citations.errors import DuplicateSidError, PoolError, SelectorError
from citations.grammar import MAX_NUMBER_DIGITS, MAX_SID, SID_RANGE, read_digits, sid_in_range
from citations.model import BIBLIOGRAPHIC_KEYS, CANONICAL_FIELDS, Source
from citations.pool_text import ACCEPTED_SHAPES as ACCEPTED_SHAPES
from citations.pool_text import MAX_POOL_FILE_BYTES, _is_pool_text, _parse_text, _rows_of
from citations.urls import normalize_path, normalize_url

#: Other names the canonical fields go by in tool outputs and older pools (alias → field).
#: A canonical field given explicitly wins; the alias then stays in ``extra``.
FIELD_ALIASES: dict[str, str] = {
    "link": "url",
    "href": "url",
    "snippet": "text",
    "published": "published_at",
    "date": "published_at",
    "published_time_iso": "published_at",
    "fetched": "fetched_at",
    "fetched_time_iso": "fetched_at",
    "retrieved_at": "fetched_at",
    "type": "source_type",
    "mime_type": "mime",
    "mimetype": "mime",
    "size": "size_bytes",
    "path": "physical_path",
    "file_path": "physical_path",
    "score": "relevance",
}

_CANONICAL = frozenset(CANONICAL_FIELDS)
_STR_FIELDS = _CANONICAL - {"sid", "size_bytes", "relevance"}
_INTEGRAL = re.compile(r"\+?\d+")
_DIGITS = re.compile(r"\d+")


def is_eligible_mime(mime: str | None) -> bool:
    """True for MIME types an attachment or file source may have: text/*, image/*, PDF."""
    base = (mime or "").split(";", 1)[0].strip().lower()
    return base.startswith(("text/", "image/")) or base == "application/pdf"


def file_mime(source: Source) -> str:
    """A file source's MIME type: the declared one, else the one its file name implies ("")."""
    if source.mime.strip():
        return source.mime
    name = source.artifact_path or source.physical_path
    return (mimetypes.guess_type(name, strict=False)[0] or "") if name else ""


def ineligible_file(source: Source) -> bool:
    """True for a file or attachment whose (declared or implied) MIME type may not be attached.

    A file whose type is unknown either way is let in: refusing it would drop real attachments
    whose tool simply did not say what they are.
    """
    if not source.is_file:
        return False
    mime = file_mime(source)
    return bool(mime) and not is_eligible_mime(mime)


def dedupe_key(source: Source) -> str:
    """The identity of a source: its normalized URL, else its normalized physical path, else a
    fingerprint of its content (so identical rows under two sids are one source)."""
    if source.url.strip():
        return "url:" + normalize_url(source.url)
    if source.physical_path.strip():
        return "path:" + normalize_path(source.physical_path)
    # Canonical fields only: unknown fields are never serialized here (a row's extras may be
    # large or deeply nested, and this runs for every row of every pool).
    body = [str(v) for k, v in source.__dict__.items() if k not in ("sid", "extra")]
    digest = hashlib.sha1("\x00".join(body).encode("utf-8")).hexdigest()
    return "row:" + digest


# -- row parsing -------------------------------------------------------------------------------


#: A JSON Schema of one row, for the tool and HTTP schemas: the shape and the types that
#: :func:`source_from_row` reads, never narrower (a sid may be ``"3"``, a title a number), so a
#: schema check never refuses a row the loader takes. The loader decides: run it to check rows
#: (the HTTP service does, one row at a time).
ROW_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "One source. Unknown fields are kept; common aliases (link, snippet, date, "
                   "path …) are understood.",
    "properties": {
        "sid": {"type": ["integer", "string"], "minimum": 1,
                "description": 'Source id, cited as [[S:sid]]: a positive integer ("3" is '
                               "read as 3)."},
        **{name: {"type": ["string", "number", "null"], **({"description": text} if text else {})}
           for name, text in (
               ("title", ""),
               ("url", "http, https or mailto; others are not linked."),
               ("text", "Snippet or extract."),
               ("source_type", "e.g. web, file, rag."),
               ("published_at", "ISO date."),
               ("artifact_path", "Label for a file source."),
           )},
    },
    "required": ["sid"],
}


def _row_error(where: str, row_field: str, message: str) -> PoolError:
    """A :class:`PoolError` for one field of one row, naming the row (``where``) and the field."""
    error = PoolError(f"{where}: {message}")
    error.row_field = row_field
    return error


#: Characters of a refused sid an error message shows whole.
_SHOWN_SID_CHARS = 40


def parse_sid(value: object, where: str) -> int:
    """An integral sid a citation token can name from ``value`` (``3``, ``"3"``, ``3.0``: 1 …
    :data:`~citations.grammar.MAX_SID`, the token grammar's rule); PoolError naming the row and
    the accepted range otherwise (a row with sid 3000000000 loaded, and was reported orphaned
    because ``[[S:3000000000]]`` is an invalid token)."""
    sid: int | None = None
    if isinstance(value, bool):
        sid = None
    elif isinstance(value, int):
        sid = value
    elif isinstance(value, float) and value.is_integer():
        sid = int(value)
    elif isinstance(value, str) and _INTEGRAL.fullmatch(value.strip()):
        sid = _read_integral(value, "sid", where, "a positive integer")
    if sid is None or not sid_in_range(sid):
        shown = repr(value)
        if len(shown) > _SHOWN_SID_CHARS:
            shown = f"{shown[:_SHOWN_SID_CHARS]}… ({len(shown):,} characters)"
        beyond = " (larger than a citation token can name)" if sid is not None and sid > 0 else ""
        raise _row_error(
            where, "sid", f"sid {shown} is not valid{beyond}; accepted: {SID_RANGE}"
        )
    return sid


def _read_integral(text: str, name: str, where: str, accepted: str) -> int:
    """The integer a string of digits (``_INTEGRAL``) names; PoolError naming ``name`` when it
    has more digits than :func:`~citations.grammar.read_digits` reads."""
    digits = text.strip().lstrip("+")
    value = read_digits(digits)
    if value is None:
        raise _row_error(
            where, name, f"{name} is a number too long to read ({len(digits):,} digits); "
            f"accepted: {accepted} of at most {MAX_NUMBER_DIGITS:,} digits"
        )
    return value


def _as_str(value: object, name: str, where: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise _row_error(where, name, f"field {name!r} is {type(value).__name__}; accepted: a string")


def _as_size(value: object, where: str) -> int | None:
    if value in (None, ""):
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    if isinstance(value, str) and _DIGITS.fullmatch(value.strip()):
        return _read_integral(value, "size_bytes", where, "a whole number >= 0")
    raise _row_error(where, "size_bytes",
                     f"size_bytes {value!r} is not valid; accepted: a whole number >= 0")


def _as_relevance(value: object, where: str) -> float | None:
    if value in (None, ""):
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    raise _row_error(where, "relevance", f"relevance {value!r} is not valid; accepted: a number")


def source_from_row(row: Mapping[str, Any], where: str) -> Source:
    """One canonical :class:`Source` from a row mapping (aliases folded, unknown keys kept).

    An empty canonical field counts as absent, so an alias may fill it.

    ``where`` names the row in error messages (``"pool.json: row 3"``).
    """
    fields: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    others: list[tuple[str, Any]] | None = None
    for key, value in row.items():
        name = key if type(key) is str else str(key)
        if name in _CANONICAL:
            if value is not None and value != "":
                fields[name] = value
        elif others is None:
            others = [(name, value)]
        else:
            others.append((name, value))
    if others is not None:
        for name, value in others:
            target = FIELD_ALIASES.get(name)
            if target is not None and target not in fields and value not in (None, ""):
                fields[target] = value
            else:
                extra[name] = value
    for name, value in extra.items():
        if name in BIBLIOGRAPHIC_KEYS and isinstance(value, str):
            extra[name] = clean_text(value)  # the styles print it, like every pool string
        elif type(value) in (list, dict) and _nesting_depth(value) > MAX_EXTRA_DEPTH:
            raise _row_error(
                where, name, f"field {name!r} nests deeper than {MAX_EXTRA_DEPTH} levels; "
                f"accepted: unknown fields nested at most {MAX_EXTRA_DEPTH} deep"
            )
    sid = fields.pop("sid", None)
    if sid is None:
        raise _row_error(where, "sid", f"the row has no 'sid'; accepted: {SID_RANGE}")
    values: dict[str, Any] = {
        "sid": sid if type(sid) is int and 0 < sid <= MAX_SID else parse_sid(sid, where),
        **_SOURCE_DEFAULTS,
        "extra": extra,
    }
    for name, value in fields.items():
        if name in _STR_FIELDS:
            values[name] = clean_text(value if type(value) is str else _as_str(value, name, where))
    if "size_bytes" in fields:
        values["size_bytes"] = _as_size(fields["size_bytes"], where)
    if "relevance" in fields:
        values["relevance"] = _as_relevance(fields["relevance"], where)
    return _make_source(values)


#: How deep an unknown field may nest. Rows travel between processes (pickle) and into JSON;
#: both recurse, so a row nested hundreds deep would fail far from where it came in.
MAX_EXTRA_DEPTH = 32


def _nesting_depth(value: object) -> int:
    """The nesting depth of lists and dicts in ``value`` (iterative: no recursion limit)."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if deepest > MAX_EXTRA_DEPTH:
                return deepest
        children: Iterable[object] = item.values() if isinstance(item, dict) else item  # type: ignore[assignment]
        stack.extend((c, depth + 1) for c in children if type(c) in (list, dict))
    return deepest


#: Every field of a :class:`Source` with its default, in field order (``extra`` is per row).
_SOURCE_DEFAULTS: dict[str, Any] = {
    f.name: f.default for f in dataclasses.fields(Source) if f.name not in ("sid", "extra")
}


def _make_source(values: dict[str, Any]) -> Source:
    """A :class:`Source` from a complete, already validated field dict.

    Same object as ``Source(**values)`` without its frozen ``__setattr__`` per field, which
    would dominate loading a 100,000-row pool.
    """
    source: Source = object.__new__(Source)
    object.__setattr__(source, "__dict__", values)
    return source


# -- selectors ---------------------------------------------------------------------------------

_SELECTOR = re.compile(r"\s*(?:so:)?\s*(?:sources_pool)?\s*(?:\[(?P<spec>[^\]]*)\])?\s*")
_ITEM = re.compile(r"\s*(\d+)\s*(?:[-\u2013\u2014]\s*(\d+)\s*)?")


def parse_selector(selector: str) -> list[tuple[int, int]] | None:
    """The inclusive sid ranges of ``so:sources_pool[1-3,7]`` (``None`` = the whole pool).

    Accepted: ``so:sources_pool[...]``, ``sources_pool[...]``, ``[...]`` and the bare
    ``so:sources_pool``; items are sids or ranges ``a-b`` separated by commas.
    """
    match = _SELECTOR.fullmatch(selector or "")
    if match is None or not (selector or "").strip():
        raise SelectorError(
            f"selector {selector!r} is not valid; accepted: so:sources_pool[1-5], [1,3,7], "
            "so:sources_pool[1-3,7]"
        )
    spec = match.group("spec")
    if spec is None:
        if "sources_pool" not in selector:
            raise SelectorError(
                f"selector {selector!r} names no pool; accepted: so:sources_pool[..]"
            )
        return None
    ranges: list[tuple[int, int]] = []
    for item in spec.split(","):
        found = _ITEM.fullmatch(item)
        if found is None:
            raise SelectorError(
                f"selector {selector!r}: item {item.strip()!r} is not a sid or range; "
                "accepted: positive integers and ranges such as 1-5"
            )
        first = int(found.group(1))
        last = int(found.group(2)) if found.group(2) else first
        if first < 1 or last < 1:
            raise SelectorError(f"selector {selector!r}: sids start at 1")
        ranges.append((min(first, last), max(first, last)))
    return ranges


# -- the pool ----------------------------------------------------------------------------------


class SourcePool:
    """An immutable set of sources keyed by sid, iterated in sid order."""

    __slots__ = ("_by_key", "_canonical", "_keys", "_order", "_sources", "origin", "warnings")

    def __init__(self, sources: Iterable[Source] = (), *, origin: str = "<pool>") -> None:
        self.origin = origin
        #: What the last :meth:`merge` that built this pool left out, and why.
        self.warnings: tuple[str, ...] = ()
        self._sources: dict[int, Source] = {s.sid: s for s in sorted(sources, key=_sid_of)}
        self._order: list[int] = list(self._sources)
        self._keys: dict[int, str] = {sid: dedupe_key(s) for sid, s in self._sources.items()}
        self._by_key: dict[str, int] = {}
        self._canonical: dict[int, int] = {}
        for sid, key in self._keys.items():
            self._canonical[sid] = self._by_key.setdefault(key, sid)

    # construction ---------------------------------------------------------------------------

    @classmethod
    def from_rows(cls, rows: Iterable[object], *, origin: str = "<pool>") -> SourcePool:
        """A pool from row mappings (or :class:`Source` objects).

        Identical rows under one sid collapse; a sid reused with different content raises
        :class:`DuplicateSidError` naming both rows.
        """
        seen: dict[int, tuple[int, Source]] = {}
        with _gc_paused():
            for index, row in enumerate(rows):
                if type(row) is dict or (not isinstance(row, Source) and isinstance(row, Mapping)):
                    source = source_from_row(row, f"{origin}: row {index}")
                elif isinstance(row, Source):
                    source = row
                else:
                    raise PoolError(
                        f"{origin}: row {index} is {type(row).__name__}; accepted: an object "
                        "with a 'sid' field"
                    )
                previous = seen.get(source.sid)
                if previous is None:
                    seen[source.sid] = (index, source)
                elif previous[1] != source:
                    raise DuplicateSidError(
                        f"{origin}: rows {previous[0]} and {index} share sid {source.sid} but "
                        "differ; accepted: one row per sid (identical repeats are merged)"
                    )
            return cls((source for _, source in seen.values()), origin=origin)

    @classmethod
    def load(cls, path: str | Path, *, max_rows: int | None = None) -> SourcePool:
        """Load a pool file: JSON (``.json`` or anything else) or YAML (``.yaml``/``.yml``);
        more than ``max_rows`` rows raise :class:`TooManyRows` while parsing."""
        file = Path(path)
        name = str(path)
        if not file.exists():
            raise PoolError(f"{name}: pool file not found")
        if not file.is_file():
            raise PoolError(f"{name}: not a file; accepted: a JSON or YAML pool file")
        if file.stat().st_size > MAX_POOL_FILE_BYTES:
            raise PoolError(
                f"{name}: {file.stat().st_size:,} bytes; accepted: a pool file of at most "
                f"{MAX_POOL_FILE_BYTES:,} bytes"
            )
        try:
            raw = file.read_bytes()
        except OSError as exc:
            raise PoolError(f"{name}: cannot read ({exc.strerror})") from exc
        encoding = text_encoding(raw)
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError as exc:
            raise PoolError(
                f"{name}: not valid {encoding_shown(encoding)} ({exc.reason}); "
                f"{ACCEPTED_SHAPES}"
            ) from exc
        yaml_first = file.suffix.lower() in (".yaml", ".yml")
        data = _parse_text(text, name, yaml_first=yaml_first, max_rows=max_rows)
        return cls.from_rows(_rows_of(data, name), origin=name)

    @classmethod
    def coerce(cls, obj: object, *, max_rows: int | None = None) -> SourcePool:
        """A pool from whatever callers pass as ``sources_pool``.

        Accepted: a SourcePool, None (empty), a list of rows, a mapping with ``sources_pool`` or
        ``sources``, a path (str or Path), or JSON text starting with ``[`` or ``{``. Text and
        files with more than ``max_rows`` rows raise :class:`TooManyRows` while parsing.
        """
        if isinstance(obj, SourcePool):
            return obj
        if obj is None:
            return cls()
        if isinstance(obj, Path):
            return cls.load(obj, max_rows=max_rows)
        if isinstance(obj, str):
            if _is_pool_text(obj):
                data = _parse_text(obj, "sources_pool", yaml_first=False, max_rows=max_rows)
                return cls.from_rows(_rows_of(data, "sources_pool"), origin="sources_pool")
            return cls.load(obj, max_rows=max_rows)
        if isinstance(obj, list | tuple):
            return cls.from_rows(obj, origin="sources_pool")
        if isinstance(obj, Mapping):
            return cls.from_rows(_rows_of(obj, "sources_pool"), origin="sources_pool")
        raise PoolError(
            f"sources_pool is {type(obj).__name__}; accepted: {ACCEPTED_SHAPES}, a file path, "
            "or a SourcePool"
        )

    @staticmethod
    def file_of(obj: object) -> Path | None:
        """The pool file ``obj`` names when :meth:`coerce` would load it from disk, else None
        (renders use it to keep their outputs from replacing the pool they read)."""
        if isinstance(obj, Path):
            return obj
        if isinstance(obj, str) and not _is_pool_text(obj):
            return Path(obj)
        return None

    # lookup ---------------------------------------------------------------------------------

    def get(self, sid: int) -> Source | None:
        """The source with ``sid``, or None."""
        return self._sources.get(sid)

    def __contains__(self, sid: object) -> bool:
        return sid in self._sources

    def __iter__(self) -> Iterator[Source]:
        return iter(self._sources.values())

    def __len__(self) -> int:
        return len(self._sources)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SourcePool):
            return NotImplemented
        return self._sources == other._sources

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SourcePool({len(self)} sources from {self.origin})"

    @property
    def sids(self) -> tuple[int, ...]:
        """All sids in ascending order."""
        return tuple(self._order)

    def key_of(self, sid: int) -> str | None:
        """The dedupe key of ``sid`` (see :func:`dedupe_key`), or None when unknown."""
        return self._keys.get(sid)

    def canonical_sid(self, sid: int) -> int:
        """The lowest sid sharing ``sid``'s dedupe key (``sid`` itself when unknown)."""
        return self._canonical.get(sid, sid)

    def by_index(self, index: int) -> Source | None:
        """The ``index``-th source (1-based, sid order) — the numeric ``[1]`` dialect."""
        if 1 <= index <= len(self._order):
            return self._sources[self._order[index - 1]]
        return None

    def select(self, selector: str) -> list[Source]:
        """The sources a selector names, in selector order, each once; absent sids are skipped."""
        ranges = parse_selector(selector)
        if ranges is None:
            return list(self)
        picked: list[Source] = []
        seen: set[int] = set()
        for first, last in ranges:
            start = bisect.bisect_left(self._order, first)
            stop = bisect.bisect_right(self._order, last)
            for sid in self._order[start:stop]:
                if sid not in seen:
                    seen.add(sid)
                    picked.append(self._sources[sid])
        return picked

    def eligible_files(self) -> list[Source]:
        """File sources whose MIME type may be attached (text/*, image/*, PDF)."""
        return [s for s in self if s.is_file and is_eligible_mime(s.mime)]

    # merging --------------------------------------------------------------------------------

    def merge(self, other: SourcePool | Iterable[object]) -> tuple[SourcePool, dict[int, int]]:
        """Append ``other`` to this pool; return ``(merged, old→new sid map)`` for ``other``.

        Existing sids never change and are never reused. A source already present (same dedupe
        key) maps to the existing sid; new sources get the next free sids in ``other``'s order.
        A file or attachment whose MIME type is not text/*, image/* or PDF does not enter: it
        gets no sid in the map and ``merged.warnings`` names it.
        """
        incoming = other if isinstance(other, SourcePool) else SourcePool.coerce(list(other))
        with _gc_paused():
            return self._merge(incoming)

    def _merge(self, incoming: SourcePool) -> tuple[SourcePool, dict[int, int]]:
        merged = dict(self._sources)
        keys = dict(self._keys)
        by_key = dict(self._by_key)
        next_sid = (self._order[-1] if self._order else 0) + 1
        mapping: dict[int, int] = {}
        refused: list[str] = []
        for source in incoming:
            if ineligible_file(source):
                name = source.artifact_path or Path(source.physical_path).name or source.title
                refused.append(
                    f"{incoming.origin}: sid {source.sid} ({name!r}) is {file_mime(source)!r} and "
                    "was not added; accepted for files: text/*, image/*, application/pdf"
                )
                continue
            key = incoming._keys[source.sid]
            existing = by_key.get(key)
            if existing is not None:
                mapping[source.sid] = existing
                continue
            if not sid_in_range(next_sid):
                raise PoolError(
                    f"{incoming.origin}: sid {source.sid} would get sid {next_sid}, past the "
                    f"sids a citation token can name; accepted: {SID_RANGE}"
                )
            new = source if source.sid == next_sid else _with_sid(source, next_sid)
            merged[next_sid] = new
            keys[next_sid] = key
            by_key[key] = next_sid
            mapping[source.sid] = next_sid
            next_sid += 1
        canonical = dict(self._canonical)
        canonical.update((sid, sid) for sid in merged if sid not in canonical)
        pool = SourcePool._from_parts(merged, keys, by_key, canonical, self.origin)
        pool.warnings = tuple(refused)
        return pool, mapping

    def with_rows(self, sources: Iterable[Source]) -> SourcePool:
        """This pool with the rows of ``sources`` replacing those of their sids: a row's own
        details (an adapter's cited pages) change, its identity never does — a sid it lacks or
        a changed dedupe key raises :class:`PoolError` (sids stay those the pool handed out)."""
        replaced = dict(self._sources)
        for source in sources:
            if source.sid not in replaced:
                raise PoolError(f"{self.origin}: sid {source.sid} is not in the pool")
            if dedupe_key(source) != self._keys[source.sid]:
                raise PoolError(
                    f"{self.origin}: sid {source.sid} would change its identity (URL, path or "
                    "content); accepted: the same source with other details"
                )
            replaced[source.sid] = source
        pool = SourcePool._from_parts(replaced, self._keys, self._by_key, self._canonical,
                                      self.origin)
        pool.warnings = self.warnings
        return pool

    @classmethod
    def _from_parts(
        cls,
        sources: dict[int, Source],
        keys: dict[int, str],
        by_key: dict[str, int],
        canonical: dict[int, int],
        origin: str,
    ) -> SourcePool:
        """A pool from already consistent internals (sources in ascending sid order)."""
        pool = cls.__new__(cls)
        pool.origin = origin
        pool._sources = sources
        pool._order = list(sources)
        pool._keys = keys
        pool._by_key = by_key
        pool._canonical = canonical
        pool.warnings = ()
        return pool

    # export ---------------------------------------------------------------------------------

    def rows(self) -> list[dict[str, Any]]:
        """The pool as plain row dicts in sid order (canonical fields, then extras)."""
        return [source.to_dict() for source in self]

    to_list = rows


def _with_sid(source: Source, sid: int) -> Source:
    """A copy of ``source`` under another sid (``dataclasses.replace`` without re-validation)."""
    values = dict(source.__dict__)
    values["sid"] = sid
    return _make_source(values)


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a pool builds many objects at once.

    Bulk construction allocates hundreds of thousands of objects and no cycles; the collector's
    full passes over them would take about half the time of a 100,000-row load or merge.
    The previous state is restored (nothing happens when the collector is already off).
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _sid_of(source: Source) -> int:
    return source.sid
