"""Artifact stores and store provenance: a shared directory and S3 (moto server on loopback)."""

from __future__ import annotations

import json
import multiprocessing
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from citations.store import ArtifactRecord
from renderers.workers.errors import StoreUnavailable, WorkerSetupError
from renderers.workers.provenance import (
    compact,
    read_records,
    record_key,
    sources_used_text,
    write_records,
)
from renderers.workers.stores import STALE_TEMP_S, ArtifactStore, FileStore, open_store
from tests.processes import moto_server

BUCKET = "citerender-tests"
WRITERS, RECORDS_EACH = 4, 25


@pytest.fixture(scope="module")
def s3_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    with moto_server(tmp_path_factory.mktemp("moto"), BUCKET) as env:
        yield env


@pytest.fixture(params=["file", pytest.param("s3", marks=pytest.mark.slow)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ArtifactStore:
    if request.param == "file":
        return open_store((tmp_path / "store").as_uri())
    request.getfixturevalue("s3_env")
    return open_store(f"s3://{BUCKET}/run-{uuid.uuid4().hex[:8]}/citerender")


def record(filename: str, sids: list[int]) -> ArtifactRecord:
    return ArtifactRecord(artifact_name="document", filename=filename, sids=sids,
                          numbers={str(s): i + 1 for i, s in enumerate(sids)},
                          sha256=f"{len(filename):064x}")


def write_many(url: str, writer: int, count: int) -> None:
    """One writer process: ``count`` artifacts, each with its own record (spawned)."""
    target = open_store(url)
    for index in range(count):
        key = f"artifacts/w{writer}-{index}/document.pdf"
        target.put(key, f"%PDF writer {writer} item {index}".encode())
        write_records(target, [record(key, [writer + 1, index + 1])])


def test_objects_round_trip_and_list_by_prefix(store: ArtifactStore) -> None:
    store.put("artifacts/a/document.pdf", b"%PDF-1.7 a")
    store.put("artifacts/b/document-1.png", b"\x89PNG one")
    store.put("jobs/a.json", b"{}")
    assert store.get("artifacts/a/document.pdf") == b"%PDF-1.7 a"
    assert b"".join(store.stream("artifacts/b/document-1.png")) == b"\x89PNG one"
    assert store.get("artifacts/missing.pdf") is None
    with pytest.raises(KeyError):
        store.stream("artifacts/missing.pdf")
    assert sorted(store.keys("artifacts/")) == ["artifacts/a/document.pdf",
                                                "artifacts/b/document-1.png"]
    store.put("artifacts/a/document.pdf", b"%PDF-1.7 replaced")
    assert store.get("artifacts/a/document.pdf") == b"%PDF-1.7 replaced"
    store.delete("artifacts/a/document.pdf")
    store.delete("artifacts/a/document.pdf")  # gone already: nothing to do
    assert store.get("artifacts/a/document.pdf") is None
    assert sorted(store.keys("")) == ["artifacts/b/document-1.png", "jobs/a.json"]
    store.delete("jobs/a.json")
    store.check()


@pytest.mark.parametrize("key", ["../escape", "/abs/key", ".hidden", "a//b", "a/../b", "a b"])
def test_keys_that_could_escape_or_hide_are_refused(store: ArtifactStore, key: str) -> None:
    with pytest.raises(WorkerSetupError, match="store key"):
        store.put(key, b"x")


@pytest.mark.slow
def test_concurrent_writers_in_many_processes_lose_no_record(store: ArtifactStore) -> None:
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=write_many, args=(store.url, w, RECORDS_EACH))
               for w in range(WRITERS)]
    for process in writers:
        process.start()
    for process in writers:
        process.join(240)
        assert process.exitcode == 0
    records, warnings = read_records(store)
    assert warnings == []
    assert len(records) == WRITERS * RECORDS_EACH
    assert {r.filename for r in records} == {
        f"artifacts/w{w}-{i}/document.pdf" for w in range(WRITERS) for i in range(RECORDS_EACH)}
    assert compact(store) == WRITERS * RECORDS_EACH
    snapshot = store.get("sources_used.json")
    assert snapshot is not None and snapshot.decode("utf-8") == sources_used_text(store)
    rows = json.loads(snapshot)
    assert [row["filename"] for row in rows] == sorted(row["filename"] for row in rows)
    assert rows[0]["sids"] == [1, 1] and set(rows[0]) >= {"numbers", "sha256", "format"}


def test_rewriting_an_artifact_replaces_its_record(store: ArtifactStore) -> None:
    write_records(store, [record("artifacts/x/document.pdf", [1, 2])])
    write_records(store, [record("artifacts/x/document.pdf", [])])
    records, _ = read_records(store)
    assert [(r.filename, r.sids) for r in records] == [("artifacts/x/document.pdf", [])]


def test_an_unreadable_record_is_reported_and_kept(store: ArtifactStore) -> None:
    write_records(store, [record("artifacts/good/document.pdf", [4])])
    store.put(record_key("artifacts/bad/document.pdf"), b"{not json")
    records, warnings = read_records(store)
    assert [r.filename for r in records] == ["artifacts/good/document.pdf"]
    assert len(warnings) == 1 and "not a JSON record" in warnings[0]
    assert store.get(record_key("artifacts/bad/document.pdf")) == b"{not json"


@pytest.mark.parametrize("skew_s", [0, 7200, -7200], ids=["same", "ahead", "behind"])
def test_directory_store_hides_and_sweeps_temporary_files(
    tmp_path: Path, skew_s: float, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Temporary files are aged on the file system's clock: a writer whose clock is 2 hours
    ahead of the file server's removed a live one, and one behind never swept a stale one."""
    store = FileStore(tmp_path)
    folder = tmp_path / "artifacts" / "job"
    folder.mkdir(parents=True)
    stale = folder / ".document.pdf.0123456789ab.tmp"
    live = folder / ".document.pdf.ba9876543210.tmp"
    stale.write_bytes(b"%PDF torn by a killed writer")
    live.write_bytes(b"%PDF still being written")
    old = time.time() - STALE_TEMP_S - 60
    os.utime(stale, (old, old))
    assert list(store.keys("artifacts")) == []
    real_time = time.time
    monkeypatch.setattr(time, "time", lambda: real_time() + skew_s)  # this machine's clock
    store.put("artifacts/job/document.pdf", b"%PDF whole")
    monkeypatch.undo()
    assert not stale.exists() and live.exists()
    assert list(store.keys("artifacts")) == ["artifacts/job/document.pdf"]


def test_unwritable_directory_store_is_reported(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    store = FileStore(blocker)
    with pytest.raises(StoreUnavailable, match="cannot write"):
        store.check()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("file://relative/dir", "file:///absolute"),
        ("s3://", "s3://bucket/prefix"),
        ("s3://key:secret@bucket/x", "credentials"),
        ("s3://bucket/x?endpoint=http://a", "credentials"),
        ("gs://bucket/x", "accepted"),
        ("/plain/path", "accepted"),
    ],
)
def test_store_urls_are_checked(url: str, message: str) -> None:
    with pytest.raises(WorkerSetupError, match=message):
        open_store(url)
