"""Jobs into an S3 store: a real worker writing to a moto S3 server on 127.0.0.1."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import boto3
import pytest
from PIL import Image
from starlette.testclient import TestClient

from renderers.service.app import create_app
from renderers.workers.provenance import sources_used_text
from renderers.workers.stores import open_store
from tests.processes import (
    POOL,
    moto_server,
    redis_server,
    start_worker,
    wait_job,
    wait_ready,
)

pytestmark = pytest.mark.slow

BUCKET = "citerender-jobs"


def test_jobs_land_in_an_s3_bucket_with_their_provenance(tmp_path: Path) -> None:
    store = f"s3://{BUCKET}/tenant-a/reports"
    with moto_server(tmp_path, BUCKET) as aws, redis_server(tmp_path) as (url, _):
        broker = f"{url}/0"
        worker = start_worker(broker, store, "s3w", tmp_path, env=aws)
        try:
            wait_ready(worker)
            with TestClient(create_app(workers=1, warmup=False, broker=broker)) as client:
                bodies = [
                    {"content": "PDF in a bucket.[[S:1]]\n", "format": "pdf"},
                    {"content": "# Deck\n\n## One\n\nSlide claim.[[S:2]]\n", "format": "pptx"},
                    {"content": "# Pages\n\n" + "Line on storage.[[S:3]]\n\n" * 120,
                     "format": "png", "pages": "all", "dpi": 30},
                ]
                ids = [client.post("/jobs", json={**b, "sources_pool": POOL}).json()["id"]
                       for b in bodies]
                states = [wait_job(client, job_id) for job_id in ids]
                files = [client.get(state["artifact_url"]) for state in states]
                provenance = json.loads(sources_used_text(open_store(store)))
        finally:
            worker.stop()
        objects = boto3.client("s3").list_objects_v2(Bucket=BUCKET)["Contents"]
    assert [s["status"] for s in states] == ["done"] * 3, states
    assert files[0].content.startswith(b"%PDF")
    with zipfile.ZipFile(io.BytesIO(files[1].content)) as deck:
        slides = [n for n in deck.namelist() if n.startswith("ppt/slides/slide")]
        assert any("Slide claim" in deck.read(n).decode("utf-8") for n in slides)
    with zipfile.ZipFile(io.BytesIO(files[2].content)) as pages:
        assert len(pages.namelist()) >= 2
        assert Image.open(io.BytesIO(pages.read(pages.namelist()[0]))).format == "PNG"
    keys = {o["Key"] for o in objects}
    expected = {key for state in states for key in state["result"]["artifacts"]}
    assert {f"tenant-a/reports/{k}" for k in expected} <= keys
    assert {f"tenant-a/reports/jobs/{i}.json" for i in ids} <= keys
    assert {row["filename"] for row in provenance} == expected
    pdf_key = states[0]["result"]["artifacts"][0]
    pdf_row = next(row for row in provenance if row["filename"] == pdf_key)
    assert pdf_row["sha256"] == hashlib.sha256(files[0].content).hexdigest()
    assert pdf_row["sids"] == [1]
