"""The HTTP export service: real renders through the worker pool, limits and failure handling."""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from starlette.testclient import TestClient

from renderers.service.app import JobOutcome, RenderJob, create_app, render_job
from tests.helpers import ROOT, pdf_text

CONTENT = (
    "# Energy briefing\n\n"
    "Utility solar is now the cheapest new power in most markets.[[S:3]]\n\n"
    "Renewable capacity grew by a record amount in 2023.[[S:2]] The outlook is for "
    "renewables to supply half of global electricity by 2030.[[S:1,3]]\n"
)
EXPECTED_SIDS = "3,2,1"

MIME = {
    "pdf": "application/pdf",
    "png": "image/png",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "html": "text/html; charset=utf-8",
    "md": "text/markdown; charset=utf-8",
}


def controlled_job(job: RenderJob) -> JobOutcome:
    """Worker job for failure tests: ``@hang``, ``@crash``, ``@hog``, ``@abort`` and
    ``@block:PATH`` contents."""
    if job.content == "@hang":
        time.sleep(120)
    if job.content == "@crash":
        os._exit(7)
    if job.content == "@hog":
        bytearray(8 * 1024**3)  # 8 GiB: past any cap a test sets
    if job.content == "@abort":
        os.abort()  # as Typst (Rust) does when an allocation is refused
    if job.content.startswith("@block:"):
        flag = Path(job.content.removeprefix("@block:"))
        deadline = time.monotonic() + 30
        while not flag.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        return render_job(RenderJob("Released.[[S:1]]\n", job.out_dir, job.format, job.kwargs))
    return render_job(job)


def body(fmt: str, pool: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"content": CONTENT, "format": fmt, "sources_pool": pool,
            "title": "Energy briefing", **extra}


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app(workers=2, warmup=False)) as test_client:
        yield test_client


def zip_xml(data: bytes, prefix: str) -> str:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return "".join(
            archive.read(name).decode("utf-8")
            for name in sorted(archive.namelist())
            if name.startswith(prefix) and name.endswith(".xml")
        )


@pytest.mark.parametrize("fmt", ["pdf", "docx", "pptx", "png", "html", "md"])
def test_each_format_answers_the_file(
    client: TestClient, sample_pool: list[dict[str, Any]], fmt: str, tmp_path: Path
) -> None:
    response = client.post("/render", json=body(fmt, sample_pool))
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == MIME[fmt]
    ext = {"md": ".md"}.get(fmt, f".{fmt}")
    assert response.headers["content-disposition"] == (
        f"attachment; filename=\"Energy_briefing{ext}\"; "
        f"filename*=UTF-8''Energy%20briefing{ext}"
    )
    assert response.headers["x-sources-used"] == EXPECTED_SIDS
    data = response.content
    if fmt == "pdf":
        target = tmp_path / "out.pdf"
        target.write_bytes(data)
        text = pdf_text(target)
        assert "cheapest new power" in text
        assert "Lazard" in text and "Sources" in text
    elif fmt == "docx":
        xml = zip_xml(data, "word/document")
        assert "cheapest new power" in xml and "Lazard LCOE+" in xml
    elif fmt == "pptx":
        xml = zip_xml(data, "ppt/slides/slide")
        assert "Energy briefing" in xml and "Lazard LCOE+" in xml
    elif fmt == "png":
        image = Image.open(io.BytesIO(data))
        image.verify()
        assert image.format == "PNG"
    elif fmt == "html":
        text = data.decode("utf-8")
        assert 'class="cite"' in text and 'href="#src-1"' in text
        assert "cheapest new power" in text
    else:
        text = data.decode("utf-8")
        assert "[^1]" in text and "cheapest new power" in text


def test_json_envelope(client: TestClient, sample_pool: list[dict[str, Any]]) -> None:
    response = client.post("/render", json=body("md", sample_pool),
                           headers={"Accept": "application/json"})
    assert response.status_code == 200
    envelope = response.json()
    assert envelope["ok"] is True and envelope["format"] == "md"
    assert envelope["sources_used"] == [3, 2, 1]
    assert envelope["filename"] == "Energy_briefing.md"
    assert isinstance(envelope["warnings"], list) and isinstance(envelope["stats"], dict)
    assert "cheapest new power" in base64.b64decode(envelope["content_base64"]).decode("utf-8")


@pytest.mark.parametrize(
    ("fmt", "accept", "envelope"),
    [
        ("md", None, False),
        ("md", "*/*", False),
        ("md", "application/json", True),
        ("md", "APPLICATION/JSON; charset=utf-8", True),
        ("md", "application/json, text/plain, */*", False),  # axios's default: a tie
        ("pdf", "application/pdf, application/json;q=0.1", False),
        ("pdf", "application/*;q=0.2, application/json;q=0.1", False),  # the most specific
        ("md", "text/markdown;q=0.5, application/json", True),
        ("md", "*/*;q=0.8, application/json", True),
        ("md", "text/html, application/json;q=0.9", True),  # markdown not accepted at all
        ("md", "application/json;q=0", False),
        ("md", "application/json;q=2", False),  # a malformed q is skipped
    ],
)
def test_accept_chooses_the_envelope_only_when_json_is_preferred(
    client: TestClient, sample_pool: list[dict[str, Any]], fmt: str, accept: str | None,
    envelope: bool,
) -> None:
    headers = {"Accept": accept} if accept is not None else {}
    response = client.post("/render", json=body(fmt, sample_pool), headers=headers)
    assert response.status_code == 200, response.text
    if envelope:
        assert response.headers["content-type"] == "application/json"
        assert response.json()["format"] == fmt
    else:
        assert response.headers["content-type"] == MIME[fmt]
        assert response.headers["x-sources-used"] == EXPECTED_SIDS


def test_unknown_sid_warns_and_strict_refuses(
    client: TestClient, sample_pool: list[dict[str, Any]]
) -> None:
    content = "Claim.[[S:1]] Other claim.[[S:99]]\n"
    loose = client.post("/render", json={"content": content, "format": "md",
                                         "sources_pool": sample_pool},
                        headers={"Accept": "application/json"})
    assert loose.status_code == 200
    assert loose.json()["sources_used"] == [1]
    assert any("99" in warning for warning in loose.json()["warnings"])
    strict = client.post("/render", json={"content": content, "format": "md",
                                          "sources_pool": sample_pool, "strict": True})
    assert strict.status_code == 422
    assert "99" in strict.json()["error"]


def test_png_pages_zip_and_unicode_filename(
    client: TestClient, sample_pool: list[dict[str, Any]]
) -> None:
    long_content = "# Long\n\n" + "".join(
        f"Paragraph {i} about grid build-out and storage.[[S:{i % 3 + 1}]]\n\n" for i in range(90)
    )
    response = client.post("/render", json={
        "content": long_content, "format": "png", "sources_pool": sample_pool,
        "pages": [1, 2], "dpi": 40, "filename": "Énergie rapport",
    })
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/zip"
    disposition = response.headers["content-disposition"]
    assert 'filename="Energie_rapport.zip"' in disposition
    assert "filename*=UTF-8''%C3%89nergie%20rapport.zip" in disposition
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        names = archive.namelist()
        assert names == ["Energie_rapport-1.png", "Energie_rapport-2.png"]
        for name in names:
            assert Image.open(io.BytesIO(archive.read(name))).format == "PNG"


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"content": "x"}, "format"),
        ({"format": "pdf"}, "content"),
        ({"content": "x", "format": "gif"}, "format"),
        ({"content": "x", "format": "pdf", "title": 12}, "title"),
        ({"content": "x", "format": "pdf", "base_dir": "/etc"}, "base_dir"),
        ({"content": "x", "format": "pdf", "sources_pool": "/etc/passwd"}, "sources_pool"),
        ({"content": "x", "format": "pdf", "numbering": "alpha"}, "numbering"),
        ({"content": "x", "format": "png", "pages": [0]}, "pages.0"),
        ({"content": "x", "format": "png", "dpi": 5000}, "dpi"),
        ({"content": "x\x00y", "format": "md"}, "content"),
        ({"content": "x", "format": "md", "csl": "mla"}, "csl"),
        ({"content": "x", "format": "md", "csl": "/etc/styles/any.csl"}, "csl"),
        ({"content": "x", "format": "md", "citation_format": "footnotes"}, "citation_format"),
    ],
)
def test_bad_fields_answer_400_naming_the_field(
    client: TestClient, payload: dict[str, Any], field: str
) -> None:
    response = client.post("/render", json=payload)
    assert response.status_code == 400
    assert response.json()["field"] == field
    assert field.split(".")[0] in response.json()["error"]


def test_bad_bodies(client: TestClient) -> None:
    json_header = {"Content-Type": "application/json"}
    not_json = client.post("/render", content=b"{nope", headers=json_header)
    assert not_json.status_code == 400 and "JSON" in not_json.json()["error"]
    array = client.post("/render", json=[1, 2])
    assert array.status_code == 400 and "object" in array.json()["error"]
    form = client.post("/render", data={"content": "x"})
    assert form.status_code == 415
    assert form.json() == {"error": "Content-Type must be application/json", "field": "body",
                           "code": "unsupported_media_type"}


def test_body_limit_by_header_and_by_stream(sample_pool: list[dict[str, Any]]) -> None:
    with TestClient(create_app(workers=1, max_body_bytes=2_000, warmup=False)) as small:
        big = json.dumps({"content": "x" * 5_000, "format": "md"}).encode()
        declared = small.post("/render", content=big, headers={"Content-Type": "application/json"})
        assert declared.status_code == 413 and declared.json()["field"] == "body"
        assert declared.json()["code"] == "too_large"

        def chunks() -> Iterator[bytes]:
            for start in range(0, len(big), 500):
                yield big[start:start + 500]

        streamed = small.post("/render", content=chunks(),
                              headers={"Content-Type": "application/json"})
        assert "content-length" not in streamed.request.headers
        assert streamed.status_code == 413 and streamed.json()["code"] == "too_large"
        ok = small.post("/render", json={"content": "Fits.[[S:1]]", "format": "md",
                                         "sources_pool": sample_pool[:1]})
        assert ok.status_code == 200


def test_full_queue_answers_503_with_retry_after(
    tmp_path: Path, sample_pool: list[dict[str, Any]]
) -> None:
    flag = tmp_path / "release"
    app = create_app(workers=1, queue_limit=0, warmup=False, job=controlled_job)
    with TestClient(app) as busy:
        first: dict[str, Any] = {}

        def blocked_request() -> None:
            first["response"] = busy.post("/render", json={
                "content": f"@block:{flag}", "format": "md", "sources_pool": sample_pool})

        thread = threading.Thread(target=blocked_request)
        thread.start()
        try:
            deadline = time.monotonic() + 20
            while busy.get("/healthz").json()["workers"]["busy"] < 1:
                assert time.monotonic() < deadline, "the blocking job never started"
                time.sleep(0.02)
            refused = busy.post("/render", json=body("md", sample_pool))
            assert refused.status_code == 503
            assert int(refused.headers["retry-after"]) >= 1
            answer = refused.json()
            assert answer["code"] == "busy" and answer["field"] == ""  # no field is at fault
            assert answer["error"].startswith("busy: ") and "retry later" in answer["error"]
        finally:
            flag.touch()
            thread.join(30)
        assert first["response"].status_code == 200
        assert "Released" in first["response"].text


@pytest.mark.slow
def test_timeout_answers_504_and_the_pool_recovers(sample_pool: list[dict[str, Any]]) -> None:
    app = create_app(workers=1, render_timeout_s=4.0, warmup=False, job=controlled_job)
    with TestClient(app) as slow:
        hung = slow.post("/render", json={"content": "@hang", "format": "md"})
        assert hung.status_code == 504 and "timed out" in hung.json()["error"]
        assert hung.json()["code"] == "time_limit" and hung.json()["field"] == ""
        health = slow.get("/healthz").json()
        assert health["status"] == "ok" and health["workers"]["replaced"] == 1
        after = slow.post("/render", json={"content": "Back.[[S:2]]", "format": "md",
                                           "sources_pool": sample_pool})
        assert after.status_code == 200 and after.headers["x-sources-used"] == "2"


@pytest.mark.slow
def test_worker_crash_answers_500_then_service_is_healthy(
    sample_pool: list[dict[str, Any]],
) -> None:
    app = create_app(workers=1, warmup=False, job=controlled_job)
    with TestClient(app) as crashy:
        crashed = crashy.post("/render", json={"content": "@crash", "format": "md"})
        assert crashed.status_code == 500 and "exit code 7" in crashed.json()["error"]
        assert crashed.json()["code"] == "internal_error" and crashed.json()["field"] == ""
        health = crashy.get("/healthz")
        assert health.status_code == 200 and health.json()["workers"]["alive"] == 1
        after = crashy.post("/render", json={"content": "Fine.[[S:1]]", "format": "md",
                                             "sources_pool": sample_pool})
        assert after.status_code == 200 and "Fine" in after.text


#: A memory cap far above a fresh worker's own size (100–150 MiB with the renderers loaded)
#: and far below what ten times the 58-page sample report needs with Typst (about 840 MiB).
CAP_MIB = 400


def ten_long_reports() -> dict[str, Any]:
    samples = ROOT / "samples"
    report = (samples / "long-report.md").read_text(encoding="utf-8")
    pool = json.loads((samples / "long-report.pool.json").read_text(encoding="utf-8"))
    return {"content": "\n\n".join([report] * 10), "sources_pool": pool, "format": "pdf",
            "pdf_engine": "typst"}


@pytest.mark.slow
def test_a_render_past_the_memory_cap_answers_422_and_the_service_carries_on(
    sample_pool: list[dict[str, Any]],
) -> None:
    app = create_app(workers=1, warmup=False, worker_memory_mib=CAP_MIB)
    with TestClient(app) as capped:
        refused = capped.post("/render", json=ten_long_reports())
        assert refused.status_code == 422, refused.text
        answer = refused.json()
        assert answer["code"] == "limit_exceeded" and answer["field"] == "content"
        assert f"more than the {CAP_MIB} MiB" in answer["error"]
        assert "serve --max-worker-memory" in answer["error"]
        health = capped.get("/healthz").json()
        assert health["status"] == "ok" and health["workers"]["replaced"] == 1
        after = capped.post("/render", json=body("pdf", sample_pool))
        assert after.status_code == 200 and after.headers["x-sources-used"] == EXPECTED_SIDS


@pytest.mark.parametrize(("content", "how"), [("@hog", "raised"), ("@abort", "aborted")])
def test_both_ways_of_running_out_of_memory_answer_422(content: str, how: str) -> None:
    app = create_app(workers=1, warmup=False, worker_memory_mib=CAP_MIB, job=controlled_job)
    with TestClient(app) as capped:
        refused = capped.post("/render", json={"content": content, "format": "md"})
        assert refused.status_code == 422, refused.text
        assert refused.json()["code"] == "limit_exceeded"
        assert ("aborted when an allocation was refused" in refused.json()["error"]) == (
            how == "aborted")
        assert capped.get("/healthz").json()["workers"]["alive"] == 1


def test_the_default_memory_cap_leaves_room_for_every_worker() -> None:
    from renderers.process_memory import (
        DEFAULT_WORKER_MEMORY_MIB,
        MIN_WORKER_MEMORY_MIB,
        default_worker_memory_mib,
        machine_memory_mib,
    )

    total = machine_memory_mib()
    assert total is not None and total > 0
    for workers in (1, 2, 8, 64):
        cap = default_worker_memory_mib(workers)
        assert MIN_WORKER_MEMORY_MIB <= cap <= DEFAULT_WORKER_MEMORY_MIB
        assert cap * workers <= 0.8 * total or cap == MIN_WORKER_MEMORY_MIB
    service = create_app(workers=2, warmup=False).state.service
    assert service.worker_memory_mib == default_worker_memory_mib(2)


def test_the_default_memory_cap_goes_by_a_containers_memory_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a container limited below the host's memory, caps made from the host's memory let
    the workers together pass the container's limit, whose out-of-memory killer may then stop
    the service itself."""
    from renderers import process_memory

    monkeypatch.setattr(process_memory, "CGROUP_ROOT", tmp_path)
    monkeypatch.setattr(process_memory, "PROC_SELF_CGROUP", tmp_path / "no-such-file")
    (tmp_path / "memory.max").write_text("2147483648\n")  # cgroup v2: 2 GiB
    assert process_memory.container_memory_mib() == 2048
    assert process_memory.machine_memory_mib() == min(2048, os.sysconf("SC_PHYS_PAGES")
                                                      * os.sysconf("SC_PAGE_SIZE") // 2**20)
    assert process_memory.default_worker_memory_mib(4) * 4 <= 0.8 * 2048
    (tmp_path / "memory.max").write_text("max\n")
    assert process_memory.container_memory_mib() is None
    (tmp_path / "memory.max").unlink()
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "memory.limit_in_bytes").write_text("1073741824\n")  # cgroup v1
    assert process_memory.container_memory_mib() == 1024
    (tmp_path / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    assert process_memory.container_memory_mib() is None  # v1's way of saying no limit


def test_a_systemd_units_memory_max_counts_from_the_processs_own_cgroup(tmp_path: Path) -> None:
    """Under systemd, ``MemoryMax=`` sits at the unit's own cgroup, not the hierarchy's top:
    the limit is found from ``/proc/self/cgroup`` walking up, and the lowest on the way wins."""
    from renderers.process_memory import container_memory_mib

    root, membership = tmp_path / "cgroup", tmp_path / "self-cgroup"
    unit = root / "system.slice" / "citerender.service"
    unit.mkdir(parents=True)
    membership.write_text("0::/system.slice/citerender.service\n")
    (root / "memory.max").write_text("max\n")
    assert container_memory_mib(root, membership) is None
    (unit / "memory.max").write_text("max\n")
    (root / "system.slice" / "memory.max").write_text(str(3 * 2**30))  # the slice's limit
    assert container_memory_mib(root, membership) == 3072
    (unit / "memory.max").write_text(str(2**30))  # MemoryMax=1G
    assert container_memory_mib(root, membership) == 1024
    (unit / "memory.max").write_text(str(5 * 2**30))  # above its slice's: the slice holds
    assert container_memory_mib(root, membership) == 3072
    # cgroup v1 names the memory controller's own path; a path out of a cgroup namespace
    # ("/../..") is not followed, and an unreadable membership leaves the hierarchy's top.
    (root / "system.slice" / "memory.max").unlink()
    (unit / "memory.max").unlink()
    v1_unit = root / "memory" / "system.slice" / "citerender.service"
    v1_unit.mkdir(parents=True)
    (v1_unit / "memory.limit_in_bytes").write_text(str(512 * 2**20))
    membership.write_text("5:cpu,cpuacct:/\n4:memory:/system.slice/citerender.service\n0::/\n")
    assert container_memory_mib(root, membership) == 512
    membership.write_text("4:memory:/../../system.slice/citerender.service\n")
    assert container_memory_mib(root, membership) is None
    (root / "memory" / "memory.limit_in_bytes").write_text(str(2**30))
    assert container_memory_mib(root, membership) == 1024
    assert container_memory_mib(root, tmp_path / "missing") == 1024


def test_temp_dirs_are_removed(sample_pool: list[dict[str, Any]]) -> None:
    app = create_app(workers=1, warmup=False)
    with TestClient(app) as temp_client:
        root = app.state.service.temp_root
        assert root is not None and root.is_dir()
        assert temp_client.post("/render", json=body("md", sample_pool)).status_code == 200
        refused = temp_client.post("/render", json={"content": "x", "format": "gif"})
        assert refused.status_code == 400
        assert list(root.iterdir()) == []
    assert not root.exists()


def test_a_temporary_root_removed_under_the_service_is_made_again(
    sample_pool: list[dict[str, Any]],
) -> None:
    """A /tmp cleaner (systemd-tmpfiles removes what stood unused for ten days) or an operator
    may remove the service's temporary root while it runs; every /render and /jobs then
    answered 500 until the service was restarted."""
    from tests.processes import wait_job

    app = create_app(workers=1, warmup=False)
    with TestClient(app) as temp_client:
        root = app.state.service.temp_root
        shutil.rmtree(root)
        answer = temp_client.post("/render", json=body("md", sample_pool))
        assert answer.status_code == 200, answer.text
        job = temp_client.post("/jobs", json=body("md", sample_pool))
        assert job.status_code == 202, job.text
        assert wait_job(temp_client, job.json()["id"], 60)["status"] == "done"
    assert not root.exists()


@pytest.mark.parametrize(
    ("method", "path", "payload", "status", "code", "field"),
    [
        ("GET", "/nope", None, 404, "not_found", "path"),
        ("PUT", "/render", None, 405, "method_not_allowed", "path"),
        ("GET", "/static/nope.js", None, 404, "not_found", "path"),
        ("GET", "/jobs/" + "0" * 64, None, 404, "not_found", "job_id"),
        ("POST", "/render", {"content": "x", "format": "md", "dpi": 5000}, 400,
         "invalid_argument", "dpi"),
        ("POST", "/render", {"content": "x[[S:9]]", "format": "md", "strict": True}, 422,
         "strict_failed", "content"),
    ],
)
def test_every_refusal_has_error_field_and_code(
    client: TestClient, method: str, path: str, payload: Any, status: int, code: str,
    field: str,
) -> None:
    """The documented shape of every refusal: exactly ``error``, ``field`` and ``code``."""
    answer = client.request(method, path, json=payload)
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/json"
    refusal = answer.json()
    assert set(refusal) == {"error", "field", "code"}
    assert (refusal["code"], refusal["field"]) == (code, field)
    spec = client.get("/openapi.json").json()
    error = spec["paths"]["/render"]["post"]["responses"]["503"]["content"]["application/json"]
    assert set(error["schema"]["required"]) == {"error", "field", "code"}
    assert code in error["schema"]["properties"]["code"]["enum"]


def test_page_docs_and_health(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and 'id="export-pdf"' in page.text
    assert "https://" not in page.text.split("<textarea")[0]  # no external resources
    assert client.get("/static/app.js").headers["content-type"].startswith("text/javascript")
    assert client.get("/static/app.css").status_code == 200
    assert client.get("/static/../service.py").status_code == 404
    spec = client.get("/openapi.json").json()
    assert spec["openapi"].startswith("3.") and "/render" in spec["paths"]
    schema = spec["paths"]["/render"]["post"]["requestBody"]["content"]["application/json"]
    assert set(schema["schema"]["required"]) == {"content", "format"}
    docs = client.get("/docs")
    assert docs.status_code == 200 and "sources_pool" in docs.text
    # the policy admits the reports' own citation-preview script (the live preview runs it)
    from renderers.writers.html.templating import preview_script_csp

    assert f"script-src 'self' {preview_script_csp()}" in page.text
    assert 'id="csl"' in page.text and 'id="citation-format"' in page.text


def test_render_in_a_citation_style(client: TestClient) -> None:
    pool = [{"sid": 1, "title": "Outlook", "url": "https://iea.org/o", "published_at": "2024",
             "author": "IEA"}]
    response = client.post("/render", json={"content": "Claim [[S:1]].", "format": "html",
                                            "sources_pool": pool, "csl": "apa",
                                            "citation_format": "superscript"})
    assert response.status_code == 200
    assert '(<a href="#src-1">IEA, 2024</a>)' in response.text
    assert "IEA. (2024). <em>Outlook</em>." in response.text
    assert client.get("/healthz").json()["workers"]["size"] == 2


def test_answers_name_no_server_directory(client: TestClient, tmp_path: Path) -> None:
    """A refused image or ``csl`` file is named against "the request's directory", never the
    render's temporary path: it showed the server's file system, and two identical requests
    answered different warnings and errors. A file outside is still never read."""
    secret = tmp_path / "style.csl"
    secret.write_bytes((ROOT / "templates" / "csl" / "ieee.csl").read_bytes())
    image = {"content": f"![chart](/etc/hosts.png) and ![map]({tmp_path}/x.png)",
             "format": "pdf"}
    answers = [client.post("/render", json=image, headers={"Accept": "application/json"})
               for _ in range(2)]
    assert all(answer.status_code == 200 for answer in answers)
    first, second = (answer.json() for answer in answers)
    assert first["warnings"] == second["warnings"] and first["diagnostics"] == second["diagnostics"]
    assert len(first["warnings"]) == 2
    for warning, diagnostic in zip(first["warnings"], first["diagnostics"], strict=True):
        assert warning.endswith("not a file inside the request's directory"), warning
        assert diagnostic["message"] == warning and diagnostic["code"] == "image-refused"
    assert "citerender-service" not in json.dumps(first)
    styled = {"content": "Claim [[S:1]].", "format": "md", "csl": str(secret),
              "sources_pool": [{"sid": 1, "url": "https://iea.org"}]}
    refusals = [client.post("/render", json=styled) for _ in range(2)]
    assert [refused.status_code for refused in refusals] == [400, 400]
    assert refusals[0].json() == refusals[1].json()
    error = refusals[0].json()
    assert error["field"] == "csl" and "not a file inside the request's directory" in error["error"]
    assert error["error"].endswith("or a .csl file inside the request's directory")
    assert "citerender-service" not in error["error"]
