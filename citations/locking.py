"""The exclusive lock around a read-merge-write cycle (``sources_used.json``, the registry).

Where ``flock`` works (Linux, macOS, the BSDs), the lock is taken here the way filelock's
``UnixFileLock`` takes it — ``flock`` on the same ``.lock`` file, left in place — so processes
using either exclude each other. filelock itself is used only where ``flock`` is missing
(Windows, or a file system that answers ENOSYS): importing filelock 4 costs 8–11 ms of CPU, a
twentieth of a one-paragraph CLI render, which takes exactly one lock.

A lock held on a file no longer at the path (removed, or renamed away and another created in
its place) excludes nobody who opens the path now, so it counts only once the path is checked
to still be the file locked; otherwise the lock is let go and the one at the path taken.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

#: ``flock`` errors that mean another holder, not a failure (some file systems say EACCES).
_HELD = frozenset({errno.EACCES, errno.EAGAIN, errno.EWOULDBLOCK})
#: Open the lock file read-write, creating it, never through a symbolic link.
_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
#: What a lock file may be: the end of every :class:`LockError` message but a timeout's.
ACCEPTED = (
    "accepted: a regular file this user can read and write, or nothing, in a writable directory"
)


class LockError(Exception):
    """The ``.lock`` file at ``path`` could not be opened or locked (``reason`` says why).

    The message names that file, not the one it guards, and says what is accepted there; the
    store and the registry pass it on in their own error types."""

    def __init__(self, path: Path, reason: str, accepted: str = ACCEPTED) -> None:
        super().__init__(f"{path}: {reason}; {accepted}")
        self.path = path
        self.reason = reason
        self.accepted = accepted

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.path, self.reason, self.accepted)


class LockTimeout(LockError):
    """The lock was not acquired within the time given: another holder kept it."""

    def __init__(self, path: Path, timeout: float) -> None:
        super().__init__(
            path,
            f"lock not acquired within {timeout:g} s: another process holds it",
            "accepted: a lock its holder lets go of in that time (try again when it is done)",
        )
        self.timeout = timeout

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.path, self.timeout)


@dataclass(frozen=True)
class _Wait:
    """How long to try for ``path``: until ``deadline`` (``timeout`` s after the start)."""

    path: Path
    timeout: float
    deadline: float
    poll: float

    def give_up_if_late(self) -> None:
        """Raise :class:`LockTimeout` once the deadline has passed."""
        if time.monotonic() >= self.deadline:
            raise LockTimeout(self.path, self.timeout)


@contextmanager
def exclusive_lock(path: Path, timeout: float, poll: float = 0.002) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created, with its directory, if missing) for the
    block; waits up to ``timeout`` seconds, trying every ``poll`` seconds, then raises
    :class:`LockTimeout`; a lock file that cannot be opened or locked raises :class:`LockError`.

    Locks are per open file: two holders in one process exclude each other too."""
    wait = _Wait(path, timeout, time.monotonic() + timeout, poll)
    while fcntl is not None:
        fd = _open(path)
        try:
            if not _flock(fd, wait):
                break  # flock is missing here: filelock's own fallback below
            if not _still_at(fd, path):
                fcntl.flock(fd, fcntl.LOCK_UN)
                wait.give_up_if_late()
                continue  # a stale file was locked: lock the one at ``path`` now
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
            return
        finally:
            os.close(fd)
    with _filelock(wait):
        yield


def _open(path: Path) -> int:
    """The lock file, opened; its directory is made first if missing (as filelock does)."""
    try:
        try:
            return os.open(path, _FLAGS, 0o666)
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            return os.open(path, _FLAGS, 0o666)
    except OSError as exc:
        raise LockError(path, f"cannot open the lock file ({_why(exc)})") from exc


def _flock(fd: int, wait: _Wait) -> bool:
    """Lock ``fd``, polling until the deadline; False when the file system has no ``flock``."""
    assert fcntl is not None
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError as exc:
            if exc.errno == errno.ENOSYS:
                return False
            if exc.errno not in _HELD:
                raise LockError(wait.path, f"cannot lock the lock file ({_why(exc)})") from exc
        wait.give_up_if_late()
        time.sleep(wait.poll)


def _still_at(fd: int, path: Path) -> bool:
    """Whether the file ``fd`` has open is still the one at ``path`` (not followed if a link):
    False once it was removed, or renamed away and another file put in its place."""
    try:
        named = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise LockError(path, f"cannot check the lock file ({_why(exc)})") from exc
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino)


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


@contextmanager
def _filelock(wait: _Wait) -> Iterator[None]:
    """filelock's lock (its soft lock where nothing else works), with the same timeout."""
    from filelock import FileLock, Timeout

    lock = FileLock(str(wait.path), timeout=max(0.0, wait.deadline - time.monotonic()))
    try:
        lock.acquire(poll_interval=wait.poll)
    except Timeout as exc:
        raise LockTimeout(wait.path, wait.timeout) from exc
    except OSError as exc:
        raise LockError(wait.path, f"cannot lock the lock file ({_why(exc)})") from exc
    try:
        yield
    finally:
        lock.release()
