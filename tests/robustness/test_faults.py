"""Faults: concurrent writers, writers killed with SIGKILL, corrupt and unwritable stores.

Every test uses real processes and real files: 16 processes rendering through
:mod:`renderers.api` into one directory, a ``sources_used.json`` writer killed at random points,
an artifact writer killed while its temporary file is being written.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import multiprocessing
import os
import random
import shutil
import signal
import subprocess
import time
import zipfile
from collections.abc import Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import pytest

from citations.errors import CitationError, StoreError
from citations.store import STORE_NAME, ArtifactRecord, SourcesUsedStore
from renderers.errors import RenderError

POOL: list[dict[str, Any]] = [
    {"sid": 1, "title": "World Energy Outlook", "url": "https://www.iea.org/weo"},
    {"sid": 2, "title": "Capacity statistics", "url": "https://www.irena.org/stats"},
    {"sid": 3, "title": "LCOE+", "url": "https://www.lazard.com/lcoe"},
]
FORK = multiprocessing.get_context("fork")


@pytest.fixture(scope="module", autouse=True)
def _warm_writers(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Import and warm the writers once, so forked workers do not each pay for it."""
    from renderers.api import render

    render(_content(0), tmp_path_factory.mktemp("warm"), name="warm",
           formats=("md", "html", "docx"), sources_pool=POOL)


def _content(i: int) -> str:
    return f"# Report {i}\n\nSolar grew [[S:{1 + i % 3}]] and wind too [[S:2,3]].\n\n- item {i}\n"


def _records(out: Path) -> list[dict[str, Any]]:
    data = json.loads((out / STORE_NAME).read_text("utf-8"))
    assert isinstance(data, list)
    return data


# ------------------------------------------------------------------ 16 concurrent processes


def _render_worker(out: str, index: int, barrier: Any) -> None:
    from renderers.api import render

    barrier.wait(timeout=60)
    for round_ in range(2):
        render(_content(index), out, name=f"w{index:02d}-{round_}", formats=("md", "html"),
               sources_pool=POOL)
    render(_content(index), out, name=f"w{index:02d}-2", formats=("docx",), sources_pool=POOL)


@pytest.mark.slow
def test_sixteen_processes_lose_no_record(tmp_path: Path) -> None:
    out = tmp_path / "shared"
    out.mkdir()
    barrier = FORK.Barrier(16)
    workers = [FORK.Process(target=_render_worker, args=(str(out), i, barrier)) for i in range(16)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=240)
        assert worker.exitcode == 0, f"worker exited with {worker.exitcode}"

    records = _records(out)
    expected = {f"w{i:02d}-{r}.{ext}" for i in range(16) for r in range(2)
                for ext in ("md", "html")}
    expected |= {f"w{i:02d}-2.docx" for i in range(16)}
    assert [rec["filename"] for rec in records] == sorted(expected)  # 80 records, none lost
    for rec in records:
        data = (out / rec["filename"]).read_bytes()
        assert rec["sha256"] == hashlib.sha256(data).hexdigest(), rec["filename"]
        index = int(rec["filename"][1:3])
        first = 1 + index % 3
        assert rec["sids"] == [first, *[s for s in (2, 3) if s != first]]
        assert rec["format"] == rec["filename"].rsplit(".", 1)[1]
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]


# ------------------------------------------------------------------ SIGKILL while recording


def _record_forever(out: str, start: int, ack: Connection) -> None:
    """Record a, a+1, … into the store, acknowledging each once ``record`` has returned."""
    store = SourcesUsedStore(out)
    ack.send("ready")
    n = start
    while True:
        store.record(ArtifactRecord(artifact_name=f"a{n}", filename=f"a{n:05d}.md", format="md",
                                    sids=[n % 7 + 1], numbers={str(n % 7 + 1): 1},
                                    sha256=hashlib.sha256(str(n).encode()).hexdigest()))
        ack.send(n)
        n += 1


def _acks(conn: Connection) -> list[int]:
    done: list[int] = []
    while conn.poll(0):
        try:
            item = conn.recv()
        except (EOFError, OSError):
            break
        if isinstance(item, int):
            done.append(item)
    return done


@pytest.mark.slow
def test_sigkill_loop_never_corrupts_or_loses_records(tmp_path: Path) -> None:
    out = tmp_path / "killed"
    rng = random.Random(20240611)
    committed: set[int] = set()
    next_start = 0
    for _ in range(15):
        receiver, sender = FORK.Pipe(duplex=False)
        child = FORK.Process(target=_record_forever, args=(str(out), next_start, sender))
        child.start()
        sender.close()
        assert receiver.poll(30) and receiver.recv() == "ready"
        time.sleep(rng.uniform(0.0, 0.25))
        os.kill(child.pid or 0, signal.SIGKILL)
        child.join(timeout=30)
        assert child.exitcode == -signal.SIGKILL
        acked = _acks(receiver)
        receiver.close()
        committed.update(acked)
        next_start = max(acked) + 1 if acked else next_start

        records = SourcesUsedStore(out).read()  # parses, and every record is well formed
        names = {rec.filename for rec in records}
        lost = sorted(n for n in committed if f"a{n:05d}.md" not in names)
        assert lost == [], f"acknowledged records lost after SIGKILL: {lost}"
        assert not list(out.glob(f"{STORE_NAME}.corrupt-*")), "a sound file was moved aside"
    assert len(committed) > 15  # the loop really recorded while being killed
    # the store still works after the kills (no stale lock left behind)
    SourcesUsedStore(out).record(ArtifactRecord(artifact_name="after", filename="after.md"))
    assert "after.md" in {rec.filename for rec in SourcesUsedStore(out).read()}


# ------------------------------------------------------------------ atomic artifact writes


def _write_docx_forever(out: str, ack: Connection) -> None:
    from renderers.api import write_docx

    body = "\n\n".join(f"Paragraph {i} about solar power [[S:{1 + i % 3}]]." for i in range(400))
    ack.send("ready")
    n = 0
    while True:
        write_docx(f"# Version {n}\n\n{body}", Path(out) / "report.docx", sources_pool=POOL)
        ack.send(n)
        n += 1


def _docx_text(path: Path) -> str:
    import docx

    return "\n".join(p.text for p in docx.Document(str(path)).paragraphs)


@pytest.mark.slow
def test_killed_api_writer_never_leaves_a_torn_artifact(tmp_path: Path) -> None:
    out = tmp_path / "artifacts"
    rng = random.Random(7)
    for _ in range(6):
        receiver, sender = FORK.Pipe(duplex=False)
        child = FORK.Process(target=_write_docx_forever, args=(str(out), sender))
        child.start()
        sender.close()
        assert receiver.poll(60) and receiver.recv() == "ready"
        assert receiver.poll(60) and isinstance(receiver.recv(), int)  # one complete version
        time.sleep(rng.uniform(0.0, 0.5))
        os.kill(child.pid or 0, signal.SIGKILL)
        child.join(timeout=30)
        receiver.close()
        target = out / "report.docx"
        data = target.read_bytes()  # present since the first version, whatever the kill hit
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            assert package.testzip() is None
        text = _docx_text(target)
        assert text.startswith("Version ") and "Paragraph 399 about solar power" in text
        assert [rec.filename for rec in SourcesUsedStore(out).read()] == ["report.docx"]
    # temporary files are hidden dot-files, never the final name
    assert all(p.name == "report.docx" or p.name.startswith(".") or p.name.startswith(STORE_NAME)
               for p in out.iterdir())


def _atomic_big_write(target: str, payload_mb: int) -> None:
    from renderers.outputs import write_atomic

    write_atomic(target, b"%PDF-1.7\n" + b"0" * (payload_mb << 20) + b"\n%%EOF\n")


@pytest.mark.slow
def test_kill_while_the_temporary_file_is_written_keeps_the_old_artifact(tmp_path: Path) -> None:
    from renderers.outputs import write_atomic

    target = tmp_path / "report.pdf"
    old = b"%PDF-1.7\nthe complete previous version\n%%EOF\n"
    killed_mid_write = 0
    for _ in range(5):  # a kill that lands after the rename is retried, never counted
        write_atomic(target, old)
        child = FORK.Process(target=_atomic_big_write, args=(str(target), 128))
        child.start()
        deadline = time.monotonic() + 60
        temps: list[Path] = []
        while not temps and time.monotonic() < deadline and child.is_alive():
            temps = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        with contextlib.suppress(ProcessLookupError):
            os.kill(child.pid or 0, signal.SIGKILL)
        child.join(timeout=30)
        if child.exitcode != -signal.SIGKILL or not temps:
            continue
        killed_mid_write += 1
        assert target.read_bytes() == old  # the final name still holds the old, complete file
        assert temps[0].name.startswith(".report.pdf.")
        for temp in temps:
            temp.unlink(missing_ok=True)
        break
    assert killed_mid_write == 1, "no kill landed while the temporary file was being written"


# ------------------------------------------------------------------ corrupt and unwritable


@pytest.mark.parametrize(
    "garbage",
    [
        b'[{"artifact_name": "old", "filename": "old.pdf", "sids": [1, 2\xff\x00 truncated',
        b'{"not": "a list"}',
        b"\x89PNG\r\n\x1a\n\x00\x00binary",
    ],
    ids=["truncated", "wrong-shape", "binary"],
)
def test_corrupt_store_is_kept_aside_byte_for_byte(tmp_path: Path, garbage: bytes) -> None:
    from renderers.api import write_markdown

    (tmp_path / STORE_NAME).write_bytes(garbage)
    write_markdown("Claim [[S:2]].", tmp_path / "new.md", sources_pool=POOL)
    aside = sorted(tmp_path.glob(f"{STORE_NAME}.corrupt-*"))
    assert [p.read_bytes() for p in aside] == [garbage]
    records = _records(tmp_path)
    assert [(r["filename"], r["sids"]) for r in records] == [("new.md", [2])]
    # a second corrupt file is kept aside too, under a new name
    (tmp_path / STORE_NAME).write_bytes(garbage + b"again")
    SourcesUsedStore(tmp_path).record(ArtifactRecord(artifact_name="x", filename="x.md"))
    kept = sorted(p.read_bytes() for p in tmp_path.glob(f"{STORE_NAME}.corrupt-*"))
    assert kept == sorted([garbage, garbage + b"again"])


def _make_unwritable(directory: Path) -> str:
    """Make ``directory`` refuse new files, even for root; return the mechanism used or ''."""
    if os.geteuid() != 0:
        directory.chmod(0o555)
        return "chmod 555"
    chattr = shutil.which("chattr")
    if chattr is None:
        return ""
    done = subprocess.run([chattr, "+i", str(directory)], capture_output=True, check=False)
    if done.returncode != 0:
        return ""
    try:
        (directory / ".probe").write_bytes(b"")
    except OSError:
        return "chattr +i"
    (directory / ".probe").unlink()
    return ""


@pytest.fixture
def unwritable_dir(tmp_path: Path) -> Iterator[Path]:
    directory = tmp_path / "readonly"
    directory.mkdir()
    (directory / STORE_NAME).write_text("[]\n", "utf-8")
    mechanism = _make_unwritable(directory)
    if not mechanism:
        pytest.skip("running as root without a working `chattr +i`: no honest way to make a "
                    "directory unwritable for root here")
    try:
        yield directory
    finally:
        chattr = shutil.which("chattr")
        if chattr and os.geteuid() == 0:
            subprocess.run([chattr, "-i", str(directory)], capture_output=True, check=False)
        with contextlib.suppress(OSError):
            directory.chmod(0o755)


def test_read_only_directory_gives_a_clear_store_error(unwritable_dir: Path) -> None:
    with pytest.raises(StoreError) as caught:
        SourcesUsedStore(unwritable_dir).record(ArtifactRecord(artifact_name="r", filename="r.md"))
    message = str(caught.value)
    assert str(unwritable_dir) in message and "writable" in message
    assert (unwritable_dir / STORE_NAME).read_text("utf-8") == "[]\n"


def test_read_only_directory_gives_a_clear_render_error(unwritable_dir: Path) -> None:
    from renderers.api import write_markdown

    with pytest.raises((RenderError, CitationError)) as caught:
        write_markdown("Claim [[S:1]].", unwritable_dir / "r.md", sources_pool=POOL)
    assert str(unwritable_dir) in str(caught.value)
    assert sorted(p.name for p in unwritable_dir.iterdir()) == [STORE_NAME]


def test_output_directory_that_is_a_file_gives_a_clear_error(tmp_path: Path) -> None:
    from renderers.api import render

    blocker = tmp_path / "out"
    blocker.write_bytes(b"not a directory")
    with pytest.raises((RenderError, CitationError)) as caught:
        render("Claim [[S:1]].", blocker, name="r", formats=("md",), sources_pool=POOL)
    assert str(blocker) in str(caught.value)
    assert blocker.read_bytes() == b"not a directory"
