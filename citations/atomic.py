"""Atomic, durable file replacement shared by artifacts and ``sources_used.json``.

Readers always see the old file or the new one, never a torn one: the bytes go to a hidden
temporary file in the same directory, which is flushed, fsynced and moved over the target with
:func:`os.replace`; the directory is fsynced so the rename itself survives a crash.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import time
from pathlib import Path

__all__ = ["remove_stale_temps", "write_atomic"]

#: The hidden temporary names :func:`write_atomic` creates: ``.<name>.<12 hex>.tmp``.
_TEMP_NAME = re.compile(r"\..+\.[0-9a-f]{12}\.tmp")
#: A temporary file older than this was left by a writer that died: a live one lives for the
#: time it takes to write bytes already in memory.
STALE_TEMP_SECONDS = 600.0


def write_atomic(path: str | os.PathLike[str], data: bytes | bytearray | memoryview) -> Path:
    """Write ``data`` to ``path`` atomically and durably; return the path.

    Missing parent directories are created. The temporary file and the rename both go through
    one open handle on the parent directory, opened without following a link and checked to be
    the directory the path names, so a directory or link swapped in meanwhile cannot redirect
    the write; the rename replaces a link at ``path`` itself, never its target. ``OSError``
    propagates to the caller, and the temporary file is removed whatever happens.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    dir_fd = _open_directory(target.parent)
    try:
        fd, tmp = _open_temp(target.name, dir_fd)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, target.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise
        with contextlib.suppress(OSError):
            os.fsync(dir_fd)  # persist the rename itself
    finally:
        os.close(dir_fd)
    return target


def _open_directory(directory: Path) -> int:
    """A handle on ``directory`` that is the directory its path names right now (no link in
    the last component, the same inode the resolved path has); OSError otherwise."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0))
    try:
        if not os.path.samestat(os.fstat(fd), os.stat(directory.resolve())):
            raise OSError(errno.EXDEV, "the directory changed while writing", str(directory))
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_temp(name: str, dir_fd: int) -> tuple[int, str]:
    """Create a fresh hidden temporary file beside ``name`` (mode 0666 minus the umask)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    while True:
        tmp = f".{name}.{os.urandom(6).hex()}.tmp"
        try:
            return os.open(tmp, flags, 0o666, dir_fd=dir_fd), tmp
        except FileExistsError:
            continue


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
