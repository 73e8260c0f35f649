"""Byte-identical output: every sample × every format, in one process and across processes.

Two fresh Python processes render every sample (the same jobs as the golden tests) into their
own output directories, concurrently:

- process A: without ``SOURCE_DATE_EPOCH``, twice (``plain``, ``plain-again``), then with it;
- process B: without it once, then with it.

``A/plain`` vs ``A/plain-again`` proves in-process determinism, ``A`` vs ``B`` cross-process
determinism (different output directories too), the ``epoch`` runs that SOURCE_DATE_EPOCH sets
each date a format writes and nothing else. ``sources_used.json`` is compared the same way.
Each run also renders every sample's PDF and PNG with the Typst engine (into ``typst/``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from citations.store import RECORD_KEYS, STORE_NAME
from renderers.api import EXTENSIONS
from renderers.options import FORMATS
from renderers.testing import normalize_pdf
from tests.helpers import ROOT
from tests.support.samples import ENGINE_FORMATS, SAMPLE_IDS, SAMPLES, Sample

#: Two render processes over every sample take minutes: only `make test`, not `make test-fast`.
pytestmark = pytest.mark.slow

EPOCH = 1_700_000_000  # 2023-11-14T22:13:20Z (an even second: zip stores 2-second steps)
EPOCH_TIME = dt.datetime.fromtimestamp(EPOCH, tz=dt.UTC)
WORKER = textwrap.dedent(
    """
    import json, os, sys
    from renderers.testing import render_artifacts

    plan = json.loads(sys.argv[1])
    for run in plan["runs"]:
        os.environ.pop("SOURCE_DATE_EPOCH", None)
        if run["epoch"]:
            os.environ["SOURCE_DATE_EPOCH"] = run["epoch"]
        for job in plan["samples"]:
            render_artifacts(job["input"], run["out"], sources_pool=job["pool"], formats="all",
                             **job["options"])
            render_artifacts(job["input"], run["out"] + "/typst", sources_pool=job["pool"],
                             formats=["pdf", "png"], pdf_engine="typst", **job["options"])
    """
)
Files = dict[str, bytes]


def _plan(out: Path, runs: list[tuple[str, int | None]]) -> str:
    samples = [{"input": str(s.input), "pool": str(s.pool), "options": s.options} for s in SAMPLES]
    steps = [{"out": str(out / name), "epoch": str(e) if e else None} for name, e in runs]
    return json.dumps({"samples": samples, "runs": steps})


def _read_tree(directory: Path) -> Files:
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Files]:
    """``{"A/plain": files, "A/plain-again": …, "A/epoch": …, "B/plain": …, "B/epoch": …}``."""
    out = tmp_path_factory.mktemp("determinism")
    env = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
    plans = {
        "A": [("plain", None), ("plain-again", None), ("epoch", EPOCH)],
        "B": [("plain", None), ("epoch", EPOCH)],
    }
    procs = {
        name: subprocess.Popen(
            [sys.executable, "-c", WORKER, _plan(out / name, steps)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for name, steps in plans.items()
    }
    for name, proc in procs.items():
        _, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, f"render process {name} failed:\n{err.decode()[-3000:]}"
    return {
        f"{name}/{run}": _read_tree(out / name / run)
        for name, steps in plans.items()
        for run, _ in steps
    }


def _artifacts(files: Files, sample: Sample, fmt: str, folder: str = "") -> Files:
    pattern = re.compile(
        rf"{re.escape(folder)}{re.escape(sample.name)}(?:-\d+)?{re.escape(EXTENSIONS[fmt])}"
    )
    return {name: data for name, data in files.items() if pattern.fullmatch(name)}


def _assert_identical(first: Files, second: Files, what: str) -> None:
    assert first, f"{what}: nothing was written"
    assert sorted(first) == sorted(second), f"{what}: different files"
    differing = [name for name in first if first[name] != second[name]]
    assert not differing, f"{what}: bytes differ in {differing}"


def test_every_sample_and_format_was_written(runs: dict[str, Files]) -> None:
    names = set(runs["A/plain"])
    assert STORE_NAME in names
    for sample in SAMPLES:
        for fmt in FORMATS:
            assert _artifacts(runs["A/plain"], sample, fmt), f"{sample.name}: no {fmt}"
    assert all(set(files) == names for files in runs.values())


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("sample", SAMPLES, ids=SAMPLE_IDS)
def test_identical_within_one_process(runs: dict[str, Files], sample: Sample, fmt: str) -> None:
    _assert_identical(
        _artifacts(runs["A/plain"], sample, fmt),
        _artifacts(runs["A/plain-again"], sample, fmt),
        f"{sample.name} {fmt} rendered twice in one process",
    )


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("sample", SAMPLES, ids=SAMPLE_IDS)
def test_identical_across_processes(runs: dict[str, Files], sample: Sample, fmt: str) -> None:
    for run in ("plain", "epoch"):
        _assert_identical(
            _artifacts(runs[f"A/{run}"], sample, fmt),
            _artifacts(runs[f"B/{run}"], sample, fmt),
            f"{sample.name} {fmt} ({run}) rendered in two processes",
        )


def test_sources_used_json_is_stable(runs: dict[str, Files]) -> None:
    for env in ("plain", "epoch"):  # the digests of dated formats differ between the two
        texts = {
            run: files[STORE_NAME]
            for run, files in runs.items()
            if run.split("/")[1].startswith(env)
        }
        first = texts[f"A/{env}"]
        assert all(text == first for text in texts.values()), f"{env}: {sorted(texts)} differ"
    records = json.loads(runs["A/plain"][STORE_NAME])
    files = runs["A/plain"]
    top = {name for name in files if "/" not in name}
    assert [r["filename"] for r in records] == sorted(top - {STORE_NAME})
    for record in records:
        # the contract keys, then the engine of a typeset format (ARCHITECTURE §3.4a)
        assert tuple(record)[: len(RECORD_KEYS)] == RECORD_KEYS
        extra = {"engine": "weasyprint"} if record["format"] in ENGINE_FORMATS else {}
        assert {k: record[k] for k in tuple(record)[len(RECORD_KEYS) :]} == extra
        assert record["sha256"] == hashlib.sha256(files[record["filename"]]).hexdigest()


@pytest.mark.parametrize("fmt", ENGINE_FORMATS)
@pytest.mark.parametrize("sample", SAMPLES, ids=SAMPLE_IDS)
def test_typst_engine_identical_within_and_across_processes(
    runs: dict[str, Files], sample: Sample, fmt: str
) -> None:
    for first, second in (("A/plain", "A/plain-again"), ("A/plain", "B/plain"),
                          ("A/epoch", "B/epoch")):  # fmt: skip
        _assert_identical(
            _artifacts(runs[first], sample, fmt, "typst/"),
            _artifacts(runs[second], sample, fmt, "typst/"),
            f"{sample.name} {fmt} (Typst) in {first} and {second}",
        )


@pytest.mark.parametrize("folder", ["", "typst/"], ids=["weasyprint", "typst"])
@pytest.mark.parametrize("sample", SAMPLES, ids=SAMPLE_IDS)
def test_source_date_epoch_sets_the_pdf_dates(
    runs: dict[str, Files], sample: Sample, folder: str
) -> None:
    ((_, plain),) = _artifacts(runs["A/plain"], sample, "pdf", folder).items()
    ((_, dated),) = _artifacts(runs["A/epoch"], sample, "pdf", folder).items()
    plain_form, dated_form = normalize_pdf(plain), normalize_pdf(dated)
    stamp = EPOCH_TIME.strftime("%Y%m%d%H%M%S")
    for key in ("CreationDate", "ModDate"):
        assert f"\n{key}: \n" in plain_form["info.txt"], "a date without SOURCE_DATE_EPOCH"
        assert re.search(rf"\n{key}: D:{stamp}", dated_form["info.txt"]), dated_form["info.txt"]
    for entry in ("text.txt", "links.txt"):  # the date is the only difference
        assert plain_form[entry] == dated_form[entry]


@pytest.mark.parametrize("fmt", ["docx", "pptx"])
@pytest.mark.parametrize("sample", SAMPLES, ids=SAMPLE_IDS)
def test_source_date_epoch_sets_the_ooxml_dates(
    runs: dict[str, Files], sample: Sample, fmt: str
) -> None:
    for run, when in (("A/plain", dt.datetime(2000, 1, 1, tzinfo=dt.UTC)), ("A/epoch", EPOCH_TIME)):
        ((_, data),) = _artifacts(runs[run], sample, fmt).items()
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            assert {info.date_time for info in package.infolist()} == {when.timetuple()[:6]}
            core = package.read("docProps/core.xml").decode()
        iso = when.strftime("%Y-%m-%dT%H:%M:%SZ")
        for tag in ("dcterms:created", "dcterms:modified"):
            assert re.search(rf"<{tag}[^>]*>{iso}</{tag}>", core), (run, core)


@pytest.mark.parametrize("fmt", ["html", "md", "png"])
@pytest.mark.parametrize("sample", SAMPLES, ids=SAMPLE_IDS)
def test_formats_without_dates_ignore_source_date_epoch(
    runs: dict[str, Files], sample: Sample, fmt: str
) -> None:
    _assert_identical(
        _artifacts(runs["A/plain"], sample, fmt),
        _artifacts(runs["A/epoch"], sample, fmt),
        f"{sample.name} {fmt} with and without SOURCE_DATE_EPOCH",
    )
