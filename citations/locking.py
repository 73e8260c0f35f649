"""The exclusive lock around a read-merge-write cycle (``sources_used.json``, the registry).

Where ``flock`` works (Linux, macOS, the BSDs), the lock is taken here the way filelock's
``UnixFileLock`` takes it — ``flock`` on the same ``.lock`` file, left in place — so processes
using either exclude each other. filelock itself is used only where ``flock`` is missing
(Windows, or a file system that answers ENOSYS): importing filelock 4 costs 8–11 ms of CPU, a
twentieth of a one-paragraph CLI render, which takes exactly one lock.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

#: ``flock`` errors that mean another holder, not a failure (some file systems say EACCES).
_HELD = frozenset({errno.EACCES, errno.EAGAIN, errno.EWOULDBLOCK})
#: Open the lock file read-write, creating it, never through a symbolic link.
_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)


class LockTimeout(TimeoutError):
    """The lock was not acquired within the time given."""


@contextmanager
def exclusive_lock(path: Path, timeout: float, poll: float = 0.002) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created, with its directory, if missing) for the
    block; waits up to ``timeout`` seconds, trying every ``poll`` seconds, then raises
    :class:`LockTimeout`.

    Locks are per open file: two holders in one process exclude each other too."""
    deadline = time.monotonic() + timeout
    while fcntl is not None:
        fd = _open(path)
        try:
            if not _flock(fd, path, deadline, poll):
                break  # flock is missing here: filelock's own fallback below
            if os.fstat(fd).st_nlink == 0:
                continue  # the file was removed while we waited: lock the one at ``path`` now
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
            return
        finally:
            os.close(fd)
    with _filelock(path, deadline, poll):
        yield


def _open(path: Path) -> int:
    """The lock file, opened; its directory is made first if missing (as filelock does)."""
    try:
        return os.open(path, _FLAGS, 0o666)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, _FLAGS, 0o666)


def _flock(fd: int, path: Path, deadline: float, poll: float) -> bool:
    """Lock ``fd``, polling until ``deadline``; False when the file system has no ``flock``."""
    assert fcntl is not None
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError as exc:
            if exc.errno == errno.ENOSYS:
                return False
            if exc.errno not in _HELD:
                raise
        if time.monotonic() >= deadline:
            raise LockTimeout(f"{path}: lock not acquired in time")
        time.sleep(poll)


@contextmanager
def _filelock(path: Path, deadline: float, poll: float) -> Iterator[None]:
    """filelock's lock (its soft lock where nothing else works), with the same timeout."""
    from filelock import FileLock, Timeout

    lock = FileLock(str(path), timeout=max(0.0, deadline - time.monotonic()))
    try:
        lock.acquire(poll_interval=poll)
    except Timeout as exc:
        raise LockTimeout(f"{path}: lock not acquired in time") from exc
    try:
        yield
    finally:
        lock.release()
