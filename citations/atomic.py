"""Atomic, durable file replacement shared by artifacts and ``sources_used.json``.

Readers always see the old file or the new one, never a torn one: the bytes go to a hidden
temporary file in the same directory, which is flushed, fsynced and moved over the target with
:func:`os.replace`; the directory is fsynced so the rename itself survives a crash.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import time
from pathlib import Path

__all__ = ["remove_stale_temps", "write_atomic"]

#: The hidden temporary names :func:`write_atomic` creates: ``.<name>.<12 hex>.tmp``.
_TEMP_NAME = re.compile(r"\..+\.[0-9a-f]{12}\.tmp")
#: A temporary file older than this was left by a writer that died: a live one lives for the
#: time it takes to write bytes already in memory.
STALE_TEMP_SECONDS = 600.0


def write_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically and durably; return the path.

    Missing parent directories are created; ``OSError`` propagates to the caller, and the
    temporary file is removed whatever happens.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _open_temp(target)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    _fsync_dir(target.parent)
    return target


def _open_temp(target: Path) -> tuple[int, Path]:
    """Create a fresh hidden temporary file next to ``target`` (mode 0666 minus the umask)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue


def _fsync_dir(directory: Path) -> None:
    """Persist the rename itself (POSIX); a no-op where directories cannot be opened."""
    if not hasattr(os, "O_DIRECTORY"):
        return
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_stale_temps(directory: Path, *, older_than: float = STALE_TEMP_SECONDS) -> int:
    """Delete the temporary files of killed writers in ``directory``; return how many.

    Only names :func:`write_atomic` makes are touched, only regular files (never a link), and
    only when older than ``older_than`` seconds, so a writer still at work keeps its file.
    """
    removed = 0
    deadline = time.time() - older_than
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    for entry in entries:
        if not _TEMP_NAME.fullmatch(entry.name):
            continue
        with contextlib.suppress(OSError):
            if entry.is_file(follow_symlinks=False) and entry.stat(
                follow_symlinks=False
            ).st_mtime < deadline:
                os.unlink(entry.path)
                removed += 1
    return removed
