"""A broker batch copies a finished job's artifacts into the output directory: written under the
``sources_used.json`` lock with their records, as a local render writes its own, so a render to
the same name in between cannot leave one render's file under the other's record."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from citations.store import SourcesUsedStore
from renderers.api import render
from renderers.cli_batch import Job, Outcome
from renderers.service.requests import parse_render_request
from renderers.workers import batch
from renderers.workers.jobstate import new_state
from renderers.workers.stores import FileStore

POOL = [{"sid": 1, "title": "Alpha", "url": "https://example.com/a"},
        {"sid": 2, "title": "Beta", "url": "https://example.com/b"}]


class _Quiet:
    """The reporter of a batch, silent."""

    def event(self, _: object) -> None:
        pass

    def finished(self, _: object) -> None:
        pass


def test_a_fetched_artifact_keeps_its_own_record_when_a_render_to_its_name_comes_between(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    worker_side = tmp_path / "worker"
    (made,) = render("# A\n\nFirst [[S:1]].\n", worker_side, name="same", formats="md",
                     sources_pool=POOL)
    (record,) = SourcesUsedStore(worker_side).read()
    store = FileStore(tmp_path / "store")
    key = "job-a/same.md"
    store.put(key, Path(made.path).read_bytes())
    state = new_state("job-a", "md", "same")
    state = state.with_status("done", result={
        "artifacts": [key], "provenance": [{**record.to_dict(), "filename": key}],
        "sources_used": [1], "stats": {"sources": 1}, "diagnostics": []})
    out = tmp_path / "out"
    job = Job(input="same.md", pool="", out=str(out), name="same", formats=("md",),
              content_format=None)
    request = parse_render_request({"content": "# A", "format": "md"})
    item = batch._Pending(job, "md", request, state)
    entry = batch._Progress(Outcome(job.input), left=1)

    record_many = SourcesUsedStore.record_many
    between: list[str] = []

    def local_render_first(self: SourcesUsedStore, *args: Any, **kwargs: Any) -> list[str]:
        if not between:  # a local render of the same name runs whole just before the record
            between.append("b")
            render("# B\n\nSecond [[S:2]].\n", out, name="same", formats="md",
                   sources_pool=POOL)
        return record_many(self, *args, **kwargs)

    monkeypatch.setattr(SourcesUsedStore, "record_many", local_render_first)
    batch._fetch(item, state, store, entry, _Quiet())  # type: ignore[arg-type]
    assert between == ["b"] and not entry.outcome.error
    (kept,) = SourcesUsedStore(out).read()
    written = (out / "same.md").read_bytes()
    assert kept.sha256 == hashlib.sha256(written).hexdigest()
    assert kept.sids == [1] and b"First" in written
