"""``sources_used.json``: which sources each artifact in an output directory used.

One JSON list per output directory, one record per artifact file keyed by ``filename``
(ARCHITECTURE §3.3). Writers merge under an exclusive file lock and replace the file
atomically, so concurrent processes lose nothing; a corrupt file is moved aside, never
overwritten; records in the older ``artifact_name``/``filename``/``sids`` shape are upgraded.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from citations.atomic import remove_stale_temps, write_atomic
from citations.errors import StoreError
from citations.locking import LockError, exclusive_lock

STORE_NAME = "sources_used.json"
LOCK_SUFFIX = ".lock"
#: Keys of a record, in the order they are written.
RECORD_KEYS: tuple[str, ...] = (
    "artifact_name",
    "filename",
    "format",
    "sids",
    "numbers",
    "usage_sids",
    "unknown_sids",
    "sha256",
)
#: Seconds to wait for the lock before giving up with :class:`StoreError`.
LOCK_TIMEOUT = 120.0


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _int_list(value: object, name: str) -> list[int]:
    if not isinstance(value, list | tuple):
        raise ValueError(f"{name} is {type(value).__name__}, not a list")
    out: list[int] = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int | str):
            raise ValueError(f"{name} holds {item!r}, not an integer sid")
        out.append(int(item))
    return out


def _check_filename(filename: str) -> str:
    """``filename`` as a relative posix path inside the output directory, or ValueError."""
    posix = filename.replace("\\", "/")
    parts = [p for p in posix.split("/") if p not in ("", ".")]
    if not parts or posix.startswith("/") or ".." in parts or ":" in parts[0]:
        raise ValueError(f"filename {filename!r} must be a relative path inside the output dir")
    return "/".join(parts)


@dataclass
class ArtifactRecord:
    """One artifact's entry in ``sources_used.json``.

    ``filename`` is the artifact's posix path relative to the output directory (the key);
    ``sids`` the cited sids that exist in the pool in first-appearance order; ``numbers`` maps
    each of them (as a string) to its display number. Keys other records carry that this
    contract does not know are kept in ``extra`` and written after the contract keys.
    """

    artifact_name: str
    filename: str
    format: str = ""
    sids: list[int] = field(default_factory=list)
    numbers: dict[str, int] = field(default_factory=dict)
    usage_sids: list[int] = field(default_factory=list)
    unknown_sids: list[int] = field(default_factory=list)
    sha256: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        texts = (self.artifact_name, self.filename, self.format, self.sha256)
        if not all(isinstance(t, str) for t in texts):
            raise StoreError(
                f"artifact record {self.filename!r}: artifact_name, filename, format and "
                "sha256 must be strings"
            )
        try:
            self.filename = _check_filename(self.filename)
            self.sids = _int_list(self.sids, "sids")
            self.usage_sids = _int_list(self.usage_sids, "usage_sids")
            self.unknown_sids = _int_list(self.unknown_sids, "unknown_sids")
            self.numbers = {str(int(k)): int(v) for k, v in dict(self.numbers).items()}
        except (TypeError, ValueError) as exc:
            raise StoreError(f"artifact record for {self.filename!r}: {exc}") from exc
        if not self.format:
            self.format = PurePosixPath(self.filename).suffix.lstrip(".").lower()

    def sorted_numbers(self) -> list[tuple[str, int]]:
        """``numbers`` ordered by display number (then sid)."""
        return sorted(self.numbers.items(), key=lambda kv: (kv[1], int(kv[0])))

    def to_dict(self) -> dict[str, Any]:
        """The record as written: contract keys in order, numbers ordered by number."""
        numbers = self.sorted_numbers()
        out: dict[str, Any] = {
            "artifact_name": self.artifact_name,
            "filename": self.filename,
            "format": self.format,
            "sids": list(self.sids),
            "numbers": dict(numbers),
            "usage_sids": list(self.usage_sids),
            "unknown_sids": list(self.unknown_sids),
            "sha256": self.sha256,
        }
        out.update((k, v) for k, v in self.extra.items() if k not in out)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], out_dir: Path | None = None) -> ArtifactRecord:
        """A record from its JSON form; the older shape (only ``artifact_name``/``filename``/
        ``sids``) is upgraded: format from the extension, empty numbers and sid lists, and
        ``sha256`` of ``out_dir/filename`` when that file exists (else ``""``).
        """
        filename = data.get("filename")
        if not isinstance(filename, str) or not filename:
            raise StoreError(f"artifact record {dict(data)!r} has no 'filename' string")
        name = data.get("artifact_name")
        if not isinstance(name, str):
            name = PurePosixPath(filename.replace("\\", "/")).stem
        sha = data.get("sha256")
        if not isinstance(sha, str):
            sha = ""
        legacy = "format" not in data and "sha256" not in data
        if legacy and out_dir is not None:
            target = out_dir / filename
            with contextlib.suppress(OSError, ValueError):
                if target.is_file():
                    sha = sha256_of(target)
        fmt = data.get("format")
        numbers = data.get("numbers") or {}
        if not isinstance(numbers, dict):
            raise StoreError(f"artifact record {filename!r}: 'numbers' is not an object")
        return cls(
            artifact_name=name,
            filename=filename,
            format=fmt if isinstance(fmt, str) else "",
            sids=data.get("sids") or [],
            numbers=dict(numbers),
            usage_sids=data.get("usage_sids") or [],
            unknown_sids=data.get("unknown_sids") or [],
            sha256=sha,
            extra={k: v for k, v in data.items() if k not in RECORD_KEYS},
        )


def dump_records(records: Iterable[ArtifactRecord]) -> str:
    """The stable text of ``sources_used.json``: sorted by filename, trailing newline.

    Byte-identical to ``json.dumps(rows, indent=2, ensure_ascii=False)``; the record layout
    is spelled out because ``indent`` switches the C encoder off, and a locked update of a
    large file should stay short.
    """
    ordered = sorted(records, key=lambda r: r.filename)
    if not ordered:
        return "[]\n"
    return "[\n" + ",\n".join(_record_text(r) for r in ordered) + "\n]\n"


_string = json.encoder.encode_basestring  # the C encoder for str (ensure_ascii=False)
_ITEM_SEP = ",\n      "


def _record_text(rec: ArtifactRecord) -> str:
    """One record as ``json.dumps(indent=2)`` writes it one level deep in a list."""
    numbers = _ITEM_SEP.join(f"{_string(k)}: {v}" for k, v in rec.sorted_numbers())
    lines = [
        f'    "artifact_name": {_string(rec.artifact_name)}',
        f'    "filename": {_string(rec.filename)}',
        f'    "format": {_string(rec.format)}',
        f'    "sids": {_int_list_text(rec.sids)}',
        f'    "numbers": {{\n      {numbers}\n    }}' if numbers else '    "numbers": {}',
        f'    "usage_sids": {_int_list_text(rec.usage_sids)}',
        f'    "unknown_sids": {_int_list_text(rec.unknown_sids)}',
        f'    "sha256": {_string(rec.sha256)}',
    ]
    for key, value in rec.extra.items():
        if key not in RECORD_KEYS:
            text = json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n    ")
            lines.append(f"    {_string(key)}: {text}")
    return "  {\n" + ",\n".join(lines) + "\n  }"


def _int_list_text(values: list[int]) -> str:
    if not values:
        return "[]"
    return "[\n      " + _ITEM_SEP.join(map(str, values)) + "\n    ]"


class SourcesUsedStore:
    """The ``sources_used.json`` of one output directory."""

    def __init__(self, out_dir: str | Path) -> None:
        self.out_dir = Path(out_dir)
        self.path = self.out_dir / STORE_NAME
        self.lock_path = self.out_dir / (STORE_NAME + LOCK_SUFFIX)

    # reading --------------------------------------------------------------------------------

    def read(self) -> list[ArtifactRecord]:
        """All records, sorted by filename (older records upgraded); StoreError when corrupt."""
        records, problem = self._load()
        if problem:
            raise StoreError(f"{self.path}: {problem}; accepted: a JSON list of artifact records")
        return records

    def _load(self) -> tuple[list[ArtifactRecord], str]:
        """``(records, problem)``; ``problem`` is ``""`` when the file is sound or absent.

        When the file is unsound, ``records`` holds the records that could still be read.
        """
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return [], ""
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot read ({exc.strerror})") from exc
        try:
            data = json.loads(raw.decode("utf-8")) if raw.strip() else []
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            return [], f"not valid JSON ({exc})"
        except RecursionError:
            return [], "nested too deeply to be a list of records"
        except ValueError as exc:  # e.g. an integer longer than Python's digit limit
            return [], f"not readable JSON ({exc})"
        if not isinstance(data, list):
            return [], f"top level is {type(data).__name__}, not a list"
        records: dict[str, ArtifactRecord] = {}
        bad: list[str] = []
        for index, item in enumerate(data):
            try:
                if not isinstance(item, dict):
                    raise StoreError(f"is {type(item).__name__}, not an object")
                record = ArtifactRecord.from_dict(item, self.out_dir)
            except StoreError as exc:
                bad.append(f"record {index} {exc}")
                continue
            records[record.filename] = record
        problem = "; ".join(bad[:3]) + (f" (+{len(bad) - 3} more)" if len(bad) > 3 else "")
        return sorted(records.values(), key=lambda r: r.filename), problem

    # writing --------------------------------------------------------------------------------

    def record(self, rec: ArtifactRecord) -> list[str]:
        """Merge ``rec`` into the file (replacing any record with its filename); return warnings.

        A corrupt existing file is moved aside to ``sources_used.json.corrupt-<n>`` (its bytes
        untouched) and the records that could still be read are carried over.
        """
        return self.record_many([rec])

    def check(self) -> list[str]:
        """Make sure a record can be written, before the artifact it describes is.

        A lock or store path that is a directory, a link or anything but a regular file is
        moved aside (renamed, never followed) like a corrupt file; the warnings say so.
        An unwritable directory raises :class:`StoreError`.
        """
        self._ensure_dir()
        warnings: list[str] = []
        for path in (self.lock_path, self.path):
            try:
                mode = path.lstat().st_mode
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise StoreError(self._unwritable(exc)) from exc
            if stat.S_ISREG(mode):
                continue
            kind = "a link" if stat.S_ISLNK(mode) else "a directory" if stat.S_ISDIR(mode) else (
                "not a regular file"
            )
            aside = self._free_name(f"{path.name}.corrupt-")
            try:
                os.replace(path, aside)
            except OSError as exc:
                raise StoreError(self._unwritable(exc)) from exc
            warnings.append(f"{path.name} was {kind}; kept as {aside.name}")
        return warnings

    def record_many(
        self,
        recs: Iterable[ArtifactRecord],
        *,
        supersedes: Callable[[ArtifactRecord], bool] | None = None,
        write: Callable[[], None] | None = None,
    ) -> list[str]:
        """Like :meth:`record` for several records in one locked update.

        ``supersedes`` picks existing records the new ones replace under other names (the pages
        of a longer earlier render): they are dropped, and after the file is written their
        artifact files are deleted, all under the same lock. A record written by this update is
        never superseded. ``write`` writes the artifact files the records describe, under the
        lock before they are recorded: two renders to one name then leave one render's file
        with that render's record (written before the lock, the file could be the other's).
        """
        new = list(recs)
        warnings = self.check()
        remove_stale_temps(self.out_dir)
        try:
            with exclusive_lock(self.lock_path, LOCK_TIMEOUT):
                if write is not None:
                    write()
                records, problem = self._load()
                if problem:
                    aside = self._move_aside()
                    warnings.append(
                        f"{self.path.name} was unreadable ({problem}); kept as {aside.name} and "
                        f"started afresh with {len(records)} readable record(s)"
                    )
                merged = {r.filename: r for r in records}
                fresh = {rec.filename for rec in new}
                retired = [
                    r.filename
                    for r in records
                    if supersedes is not None and r.filename not in fresh and supersedes(r)
                ]
                for filename in retired:
                    del merged[filename]
                for rec in new:
                    merged[rec.filename] = rec
                self._write_atomic(dump_records(merged.values()).encode("utf-8"))
                self._delete_artifacts(retired)
        except LockError as exc:  # names the .lock file, not the directory
            raise StoreError(str(exc)) from exc
        except PermissionError as exc:
            raise StoreError(self._unwritable(exc)) from exc
        return warnings

    def _delete_artifacts(self, filenames: Iterable[str]) -> None:
        """Delete the files of retired records (only regular files inside the directory)."""
        root = self.out_dir.resolve()
        for filename in filenames:
            path = self.out_dir / filename
            if path.is_symlink() or not path.resolve().is_relative_to(root):
                continue
            with contextlib.suppress(FileNotFoundError, IsADirectoryError):
                path.unlink()

    def _ensure_dir(self) -> None:
        try:
            self.out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(self._unwritable(exc)) from exc
        if not os.access(self.out_dir, os.W_OK | os.X_OK):
            raise StoreError(self._unwritable(None))

    def _unwritable(self, exc: OSError | None) -> str:
        reason = f" ({exc.strerror})" if exc is not None and exc.strerror else ""
        return (
            f"{self.out_dir}: cannot write {STORE_NAME} here{reason}; "
            "accepted: a writable output directory"
        )

    def _move_aside(self) -> Path:
        """Rename the current file to the first free ``.corrupt-<n>`` name (bytes untouched)."""
        aside = self._free_name(f"{STORE_NAME}.corrupt-")
        os.replace(self.path, aside)
        return aside

    def _free_name(self, prefix: str) -> Path:
        """The first ``<prefix><n>`` in the directory that names nothing (not even a link)."""
        n = 1
        while True:
            candidate = self.out_dir / f"{prefix}{n}"
            if not os.path.lexists(candidate):
                return candidate
            n += 1

    def _write_atomic(self, data: bytes) -> None:
        """Replace the file atomically (:func:`citations.atomic.write_atomic`)."""
        try:
            write_atomic(self.path, data)
        except PermissionError as exc:
            raise StoreError(self._unwritable(exc)) from exc
        except OSError as exc:
            raise StoreError(f"{self.path}: write failed ({exc.strerror or exc})") from exc
