"""sources_used.json: shape, replacement, concurrency, corruption, legacy upgrade, errors."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
from pathlib import Path

import pytest

from citations.errors import StoreError
from citations.store import RECORD_KEYS, ArtifactRecord, SourcesUsedStore


def _record(filename: str, sids: list[int], **kw: object) -> ArtifactRecord:
    return ArtifactRecord(
        artifact_name=Path(filename).stem, filename=filename, sids=sids, **kw  # type: ignore[arg-type]
    )


def _writer(out_dir: str, worker: int, count: int) -> None:
    store = SourcesUsedStore(out_dir)
    for i in range(count):
        store.record(_record(f"w{worker}/doc-{i:03d}.pdf", [worker, i]))


def test_record_shape_matches_contract(tmp_path: Path) -> None:
    (tmp_path / "report.pdf").write_bytes(b"%PDF-1.7 fake")
    rec = ArtifactRecord(
        "report", "report.pdf", "pdf", [3, 1, 7], {"7": 3, "3": 1, "1": 2}, [], [99],
        hashlib.sha256(b"%PDF-1.7 fake").hexdigest(),
    )
    assert SourcesUsedStore(tmp_path).record(rec) == []
    text = (tmp_path / "sources_used.json").read_text(encoding="utf-8")
    assert text.endswith("]\n") and text.startswith("[\n  {\n")
    data = json.loads(text)
    assert list(data[0]) == list(RECORD_KEYS)
    assert data[0]["numbers"] == {"3": 1, "1": 2, "7": 3}
    assert list(data[0]["numbers"]) == ["3", "1", "7"]
    assert data[0]["sids"] == [3, 1, 7] and data[0]["unknown_sids"] == [99]
    assert SourcesUsedStore(tmp_path).read() == [rec]


def test_output_is_stable_and_sorted(tmp_path: Path) -> None:
    store = SourcesUsedStore(tmp_path)
    store.record(_record("b.docx", [2]))
    store.record(_record("a.pdf", [1]))
    first = (tmp_path / "sources_used.json").read_bytes()
    store.record(_record("a.pdf", [1]))
    assert (tmp_path / "sources_used.json").read_bytes() == first
    assert [r["filename"] for r in json.loads(first)] == ["a.pdf", "b.docx"]
    assert [r.format for r in store.read()] == ["pdf", "docx"]


def test_non_ascii_is_written_verbatim(tmp_path: Path) -> None:
    SourcesUsedStore(tmp_path).record(_record("rapport-é.pdf", [1]))
    assert "rapport-é.pdf" in (tmp_path / "sources_used.json").read_text(encoding="utf-8")


def test_rerender_citing_nothing_replaces_record(tmp_path: Path) -> None:
    store = SourcesUsedStore(tmp_path)
    store.record(_record("report.pdf", [3, 1], numbers={"3": 1, "1": 2}))
    store.record(_record("other.md", [5]))
    store.record(_record("report.pdf", []))
    data = json.loads((tmp_path / "sources_used.json").read_text())
    by_name = {r["filename"]: r for r in data}
    assert len(data) == 2
    assert by_name["report.pdf"]["sids"] == [] and by_name["report.pdf"]["numbers"] == {}
    assert by_name["other.md"]["sids"] == [5]


@pytest.mark.slow
def test_concurrent_processes_lose_nothing(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), w, 100)) for w in range(8)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(600)  # generous: a loaded CI machine is slow, and this test is about loss
        assert proc.exitcode == 0
    data = json.loads((tmp_path / "sources_used.json").read_text())
    assert len(data) == 800
    assert len({r["filename"] for r in data}) == 800
    assert {tuple(r["sids"]) for r in data} == {(w, i) for w in range(8) for i in range(100)}
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("garbage", [b"{not json", b'{"a": 1}', b"\xff\xfe\x00garbage"])
def test_corrupt_file_is_kept_aside_byte_for_byte(tmp_path: Path, garbage: bytes) -> None:
    (tmp_path / "sources_used.json").write_bytes(garbage)
    (tmp_path / "sources_used.json.corrupt-1").write_bytes(b"older")
    store = SourcesUsedStore(tmp_path)
    with pytest.raises(StoreError, match=r"sources_used\.json"):
        store.read()
    warnings = store.record(_record("report.pdf", [1]))
    assert len(warnings) == 1 and "sources_used.json.corrupt-2" in warnings[0]
    assert (tmp_path / "sources_used.json.corrupt-2").read_bytes() == garbage
    assert (tmp_path / "sources_used.json.corrupt-1").read_bytes() == b"older"
    assert [r.filename for r in store.read()] == ["report.pdf"]


def test_bad_records_are_salvaged_and_original_kept(tmp_path: Path) -> None:
    original = json.dumps([{"artifact_name": "a", "filename": "a.pdf", "sids": [1]}, 42]).encode()
    (tmp_path / "sources_used.json").write_bytes(original)
    warnings = SourcesUsedStore(tmp_path).record(_record("b.pdf", [2]))
    assert warnings and "record 1" in warnings[0]
    assert (tmp_path / "sources_used.json.corrupt-1").read_bytes() == original
    assert [r.filename for r in SourcesUsedStore(tmp_path).read()] == ["a.pdf", "b.pdf"]


def test_legacy_file_is_upgraded(tmp_path: Path) -> None:
    (tmp_path / "old.pptx").write_bytes(b"pptx bytes")
    legacy = [
        {"artifact_name": "old", "filename": "old.pptx", "sids": [4, 2]},
        {"artifact_name": "gone", "filename": "gone.png", "sids": []},
    ]
    (tmp_path / "sources_used.json").write_text(json.dumps(legacy))
    store = SourcesUsedStore(tmp_path)
    old, gone = sorted(store.read(), key=lambda r: r.filename, reverse=True)
    assert old.format == "pptx" and old.sids == [4, 2] and old.numbers == {}
    assert old.usage_sids == [] and old.unknown_sids == []
    assert old.sha256 == hashlib.sha256(b"pptx bytes").hexdigest()
    assert gone.format == "png" and gone.sha256 == ""
    assert store.record(_record("new.html", [1])) == []
    data = {r["filename"]: r for r in json.loads((tmp_path / "sources_used.json").read_text())}
    assert list(data["old.pptx"]) == list(RECORD_KEYS)
    assert data["old.pptx"]["sha256"] == old.sha256


def test_unknown_keys_are_preserved(tmp_path: Path) -> None:
    row = {"artifact_name": "a", "filename": "a.pdf", "sids": [1], "agent": "planner"}
    (tmp_path / "sources_used.json").write_text(json.dumps([row]))
    SourcesUsedStore(tmp_path).record(_record("b.pdf", []))
    data = json.loads((tmp_path / "sources_used.json").read_text())
    assert data[0]["agent"] == "planner" and list(data[0])[-1] == "agent"


def test_unwritable_directory_is_a_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    with pytest.raises(StoreError, match=r"not-a-dir.*writable output directory"):
        SourcesUsedStore(blocker / "out").record(_record("a.pdf", [1]))


def test_read_only_directory_is_a_store_error(tmp_path: Path) -> None:
    out = tmp_path / "ro"
    out.mkdir()
    out.chmod(0o555)
    try:
        if os.access(out, os.W_OK):
            pytest.skip("running with privileges that ignore directory permissions")
        with pytest.raises(StoreError, match=r"cannot write sources_used\.json"):
            SourcesUsedStore(out).record(_record("a.pdf", [1]))
    finally:
        out.chmod(0o755)


@pytest.mark.parametrize("bad", ["/abs/report.pdf", "../escape.pdf", ""])
def test_filename_must_stay_inside_out_dir(bad: str) -> None:
    with pytest.raises(StoreError, match="relative path"):
        _record(bad, [1])


def test_windows_separators_become_posix() -> None:
    assert _record("sub\\report.pdf", []).filename == "sub/report.pdf"


def test_superseded_records_and_their_files_go_in_the_same_update(tmp_path: Path) -> None:
    store = SourcesUsedStore(tmp_path)
    for name in ("rep-1.png", "rep-2.png", "rep-3.png", "keep.png"):
        (tmp_path / name).write_bytes(b"png")
    store.record_many([_record(f"rep-{i}.png", [i]) for i in (1, 2, 3)])
    store.record(_record("keep.png", [9]))
    (tmp_path / "rep-3.png").unlink()  # a record whose file is already gone

    def stale(record: ArtifactRecord) -> bool:
        return record.filename.startswith("rep-")

    new = _record("rep-1.png", [5])
    assert store.record_many([new], supersedes=stale) == []
    assert [(r.filename, r.sids) for r in store.read()] == [("keep.png", [9]), ("rep-1.png", [5])]
    assert sorted(p.name for p in tmp_path.glob("*.png")) == ["keep.png", "rep-1.png"]
