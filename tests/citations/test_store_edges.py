"""``sources_used.json`` edge cases: odd files are kept aside, never fatal, never followed."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from citations.atomic import remove_stale_temps, write_atomic
from citations.store import ArtifactRecord, SourcesUsedStore
from renderers import write_markdown


def _record(name: str = "a.md") -> ArtifactRecord:
    return ArtifactRecord(artifact_name="a", filename=name, sids=[1], numbers={"1": 1})


@pytest.mark.parametrize(
    "content",
    [
        "[" + "9" * 5000 + "]",
        "[" * 100_000 + "]" * 100_000,
        '[{"filename": "x.md", "sids": [' + "1" * 5000 + "]}]",
    ],
    ids=["huge-number", "deep-nesting", "huge-sid"],
)
def test_an_unreadable_store_is_kept_aside_and_the_next_render_succeeds(
    tmp_path: Path, content: str
) -> None:
    (tmp_path / "sources_used.json").write_text(content)
    warnings = SourcesUsedStore(tmp_path).record(_record())
    assert any("kept as sources_used.json.corrupt-1" in w for w in warnings)
    assert (tmp_path / "sources_used.json.corrupt-1").read_text() == content
    assert [r.filename for r in SourcesUsedStore(tmp_path).read()] == ["a.md"]


def test_a_lock_path_that_is_a_directory_is_moved_aside_before_the_artifact(tmp_path: Path) -> None:
    (tmp_path / "sources_used.json.lock").mkdir()
    result = write_markdown("Claim [[S:1]].", tmp_path / "r.md",
                            sources_pool=[{"sid": 1, "title": "T", "url": "https://e.org"}])
    assert any("sources_used.json.lock was a directory" in w for w in result.warnings)
    assert (tmp_path / "sources_used.json.lock.corrupt-1").is_dir()
    assert [r.filename for r in SourcesUsedStore(tmp_path).read()] == ["r.md"]


def test_a_planted_lock_link_is_never_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(victim, out / "sources_used.json.lock")
    warnings = SourcesUsedStore(out).record(_record())
    assert victim.read_text() == "keep me"
    assert any("was a link" in w for w in warnings)
    assert (out / "sources_used.json.lock.corrupt-1").is_symlink()


def test_stale_temporary_files_of_killed_writers_are_removed(tmp_path: Path) -> None:
    stale = tmp_path / ".report.pdf.0123456789ab.tmp"
    fresh = tmp_path / ".report.pdf.ba9876543210.tmp"
    other = tmp_path / ".notes.tmp"
    for path in (stale, fresh, other):
        path.write_bytes(b"x")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    os.utime(other, (old, old))
    SourcesUsedStore(tmp_path).record(_record())
    assert not stale.exists()
    assert fresh.exists() and other.exists()
    assert remove_stale_temps(tmp_path, older_than=0) == 1  # the fresh one, once it is old
    write_atomic(tmp_path / "x.bin", b"1")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == [other.name]
