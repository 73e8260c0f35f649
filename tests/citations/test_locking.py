"""The exclusive lock around ``sources_used.json`` and the registry (:mod:`citations.locking`):
it excludes other holders — filelock's included, on the same ``.lock`` file, and a holder of a
file put in the place of the one a waiter opened — times out with :class:`LockTimeout`, never
follows a link, names the ``.lock`` file in its errors, and falls back to filelock where flock is
missing."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

import filelock
import pytest

from citations import locking
from citations.errors import RegistryError, StoreError
from citations.locking import LockError, LockTimeout, exclusive_lock
from citations.registry import SourceRegistry
from citations.store import ArtifactRecord, SourcesUsedStore


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
    with (
        pytest.raises(LockError, match=r"x\.lock: cannot open") as raised,
        exclusive_lock(tmp_path / "x.lock", timeout=1),
    ):
        pass
    assert isinstance(raised.value.__cause__, OSError)
    assert raised.value.__cause__.errno == errno.ELOOP
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


@pytest.mark.parametrize("replace", ["renamed away, a new file made", "deleted, a new file made"])
def test_a_lock_file_replaced_while_a_second_holder_waits_is_never_held_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, replace: str
) -> None:
    """A holds the file; B opens it and waits; the file is replaced and C locks the new one;
    A lets go. B then holds a file no longer at the path: it must not count that as the lock
    while C holds the new file, but wait for C."""
    path = tmp_path / "pool.json.lock"
    a_held, a_release = threading.Event(), threading.Event()
    b_waits, b_moved, b_in = threading.Event(), threading.Event(), threading.Event()
    c_holds = threading.Event()
    seen_by_b: list[bool] = []
    flock = locking._flock
    tries = 0

    def watched_flock(fd: int, wait: locking._Wait) -> bool:
        """B's first flock is on the file A holds; a second one means B went back to the path."""
        nonlocal tries
        if threading.current_thread().name == "B":
            tries += 1
            (b_waits if tries == 1 else b_moved).set()
        return flock(fd, wait)

    monkeypatch.setattr(locking, "_flock", watched_flock)

    def a() -> None:
        with exclusive_lock(path, timeout=10):
            a_held.set()
            assert a_release.wait(10)

    def b() -> None:
        with exclusive_lock(path, timeout=10):
            seen_by_b.append(c_holds.is_set())
            b_in.set()
            b_moved.set()

    threads = [threading.Thread(target=a, name="A"), threading.Thread(target=b, name="B")]
    threads[0].start()
    assert a_held.wait(10)
    threads[1].start()
    assert b_waits.wait(10)  # B has the old file open and is polling it
    if replace.startswith("renamed"):
        os.replace(path, tmp_path / "pool.json.lock.old")
    else:
        path.unlink()
    with exclusive_lock(path, timeout=1):  # C: a new file at the path, free
        c_holds.set()
        a_release.set()  # A lets go of the old file: B gets it, then must see it is stale
        assert b_moved.wait(10)
        assert not b_in.is_set()
        c_holds.clear()
    for thread in threads:
        thread.join(10)
    assert seen_by_b == [False]
    assert path.is_file()


def test_a_lock_file_that_never_stays_in_place_times_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Retrying a replaced file is bounded by the same deadline as waiting for a holder."""
    monkeypatch.setattr(locking, "_still_at", lambda fd, path: False)
    with pytest.raises(LockTimeout), exclusive_lock(tmp_path / "x.lock", timeout=0.05):
        pass


def _record(filename: str) -> ArtifactRecord:
    return ArtifactRecord(artifact_name="a", filename=filename, format="pdf", sids=[1])


def test_a_store_lock_timeout_names_the_lock_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SourcesUsedStore(tmp_path)
    monkeypatch.setattr("citations.store.LOCK_TIMEOUT", 0.05)
    with exclusive_lock(store.lock_path, timeout=1), pytest.raises(StoreError) as raised:
        store.record(_record("a.pdf"))
    message = str(raised.value)
    assert message.startswith(f"{store.lock_path}: lock not acquired within 0.05 s")
    assert "accepted: " in message
    assert not store.path.exists()


@pytest.mark.parametrize("kind", ["a directory", "a link"])
def test_a_registry_lock_file_that_cannot_be_opened_is_named(tmp_path: Path, kind: str) -> None:
    pool = tmp_path / "pool.json"
    lock = tmp_path / "pool.json.lock"
    if kind == "a directory":
        lock.mkdir()
    else:
        lock.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(RegistryError) as raised:
        SourceRegistry(pool).register([{"url": "https://example.org/a", "title": "A"}])
    message = str(raised.value)
    assert message.startswith(f"{lock}: cannot open the lock file (")
    assert message.endswith(f"; {locking.ACCEPTED}")
    assert raised.value.code == RegistryError.default_code  # the CLI's exit code stays 2
    assert not pool.exists() and not (tmp_path / "elsewhere").exists()


def test_lock_errors_survive_pickling() -> None:
    """Worker processes send errors back pickled."""
    import pickle

    timeout = pickle.loads(pickle.dumps(LockTimeout(Path("x.lock"), 2.0)))
    assert isinstance(timeout, LockTimeout) and str(timeout) == str(LockTimeout(Path("x.lock"), 2))
    error = pickle.loads(pickle.dumps(LockError(Path("x.lock"), "cannot open the lock file")))
    assert str(error) == f"x.lock: cannot open the lock file; {locking.ACCEPTED}"
