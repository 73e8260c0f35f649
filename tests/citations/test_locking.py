"""The exclusive lock around ``sources_used.json`` and the registry (:mod:`citations.locking`):
it excludes other holders — filelock's included, on the same ``.lock`` file — times out with
:class:`LockTimeout`, never follows a link, and falls back to filelock where flock is missing."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

import filelock
import pytest

from citations import locking
from citations.locking import LockTimeout, exclusive_lock


def test_a_held_lock_keeps_a_second_holder_out_until_it_is_released(tmp_path: Path) -> None:
    path = tmp_path / "sources_used.json.lock"
    # a second holder in the same process is kept out too (a lock belongs to an open file)
    with exclusive_lock(path, timeout=5), pytest.raises(LockTimeout), exclusive_lock(path, 0.05):
        pass
    with exclusive_lock(path, timeout=0.05):
        assert path.is_file()  # left in place, as filelock leaves it: waiters share the inode
    assert path.is_file()


def test_a_waiter_gets_the_lock_once_the_holder_lets_go(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    order: list[str] = []
    held, release = threading.Event(), threading.Event()

    def holder() -> None:
        with exclusive_lock(path, timeout=5):
            held.set()
            release.wait(5)
            order.append("holder done")

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait(5)
    threading.Timer(0.05, release.set).start()
    with exclusive_lock(path, timeout=5):
        order.append("waiter in")
    thread.join(5)
    assert order == ["holder done", "waiter in"]


def test_it_excludes_filelock_holders_and_filelock_excludes_it(tmp_path: Path) -> None:
    """Another process (an older citerender, a tool) may lock the same file with filelock."""
    path = tmp_path / "pool.json.lock"
    with filelock.FileLock(str(path)), pytest.raises(LockTimeout), exclusive_lock(path, 0.05):
        pass
    with exclusive_lock(path, timeout=1), pytest.raises(filelock.Timeout):
        filelock.FileLock(str(path), timeout=0.05).acquire()


def test_a_link_in_place_of_the_lock_file_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    (tmp_path / "x.lock").symlink_to(target)
    with pytest.raises(OSError) as raised, exclusive_lock(tmp_path / "x.lock", timeout=1):
        pass
    assert raised.value.errno == errno.ELOOP
    assert not target.exists()


def test_without_flock_the_lock_is_filelock_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file system that answers ENOSYS to flock: filelock takes over (its soft lock where it
    needs one), still excluding the holders that can flock the file."""

    class NoFlock:
        LOCK_EX, LOCK_NB, LOCK_UN = 2, 4, 8

        @staticmethod
        def flock(fd: int, operation: int) -> None:
            raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))

    path = tmp_path / "x.lock"
    monkeypatch.setattr(locking, "fcntl", NoFlock)
    with exclusive_lock(path, timeout=1):
        monkeypatch.undo()  # a holder on a file system with flock
        with pytest.raises(LockTimeout), exclusive_lock(path, timeout=0.05):
            pass


def test_a_missing_directory_is_made_as_filelock_makes_it(tmp_path: Path) -> None:
    path = tmp_path / "new" / "deeper" / "timeline.json.lock"
    with exclusive_lock(path, timeout=1):
        assert path.is_file()
