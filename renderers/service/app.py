"""The HTTP export service: ``POST /render`` answers the rendered file; ``GET /`` an export page.

Rendering is CPU-bound, so it never runs in the event loop: each request becomes a job for a
bounded pool of worker processes (:mod:`renderers.service.pool`). A full queue answers 503 with
``Retry-After``, an overrun answers 504, a crashed worker 500 — each for that request only.
Neither does parsing: the event loop only collects the body (size limit, deadline) and a parser
thread decodes and validates it within fixed bounds (:mod:`renderers.service.body`).
Each request renders into its own directory under the service's temporary root; the directory
is removed before the response is sent and the root when the service stops.

Request body (JSON): ``content`` and ``format`` (pdf, png, docx, pptx, html, md; ``markdown``
and ``htm`` too) are required; ``sources_pool``, ``filename`` and every option the option spec
offers to the service (:func:`renderers.tools.option_properties`) are optional. PNG answers page
1 by default; ``pages`` selects others (``[2]``, ``[1, 3]`` or ``"all"``) and several pages
answer a zip of ``NAME-1.png``, ``NAME-2.png`` …. Errors answer ``{"error", "field", "code"}``
with the status :data:`HTTP_STATUS` gives the error's code.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import gc
import html
import itertools
import json
import logging
import math
import os
import re
import shutil
import sys
import tempfile
import time
import unicodedata
import uuid
import zipfile
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TypeVar, get_args
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route

from citations.errors import CodedError, ErrorCode
from renderers.formats import BY_NAME, EXTENSIONS
from renderers.options import PdfEngine
from renderers.process_memory import default_worker_memory_mib
from renderers.service.body import parse_json_object, read_body
from renderers.service.codes import ServiceCode, error_response
from renderers.service.disconnect import ClientGone, unless_client_leaves
from renderers.service.pool import (
    HandOffFailed,
    JobRaised,
    JobTimeout,
    MemoryExceeded,
    PoolError,
    PoolFull,
    WorkerDied,
    WorkerPool,
    memory_refusal,
)
from renderers.service.requests import (
    REQUEST_SCHEMA,
    RenderRequest,
    RequestProblem,
    parse_render_request,
)
from renderers.service.server import AnswerUnexpectedErrors, ServerLimits
from renderers.templates import templates_dir

CONTENT_TYPES: dict[str, str] = {
    **{f.name: f.media_type for f in BY_NAME.values()},
    "zip": "application/zip",
}
#: The HTTP status of each error code (a client's mistake is 4xx; only bugs are 500).
HTTP_STATUS: dict[ErrorCode, int] = {
    ErrorCode.INVALID_ARGUMENT: 400,
    ErrorCode.INVALID_PATH: 400,
    ErrorCode.UNKNOWN_TOOL: 400,
    ErrorCode.INVALID_INPUT: 422,
    ErrorCode.INVALID_SOURCES_POOL: 422,
    ErrorCode.INVALID_CITATION: 422,
    ErrorCode.RESOURCE_REFUSED: 422,
    ErrorCode.LIMIT_EXCEEDED: 422,
    ErrorCode.STRICT_FAILED: 422,
    ErrorCode.WRITE_FAILED: 500,
    ErrorCode.INTERNAL: 500,
}

_log = logging.getLogger("citerender.service")
_JOB_STEM = "document"
#: The zip of several PNG pages, written beside them in the job's directory.
_ANSWER_ZIP = "answer.zip"
#: Bytes read at a time while an answer streams (a multiple of 3, for base64).
_ANSWER_CHUNK = 3 * 256 * 1024
#: Imported once by the fork server, so every (replacement) worker starts with them loaded.
PRELOAD_MODULES = (
    "renderers.api",
    "renderers.readers.markdown",
    "renderers.readers.html",
    "renderers.writers.html.report",
    "renderers.writers.pdf",
    "renderers.writers.typst.writer",
    "renderers.writers.png",
    "renderers.writers.docx.writer",
    "renderers.writers.pptx.output",
    "renderers.writers.markdown",
)
_MAX_FILENAME = 120
#: Threads that parse and validate request bodies (off the event loop, a few at a time).
_PARSER_THREADS = 2
#: What a route's body check returns (Service.read_checked).
_Checked = TypeVar("_Checked")


# --- the job that runs in a worker process -------------------------------------------------


@dataclass(frozen=True)
class RenderJob:
    """One render, as sent to a worker process."""

    content: str
    out_dir: str
    format: str
    kwargs: dict[str, Any]


@dataclass
class JobOutcome:
    """What a worker answers: the files written, or an input error to show the client."""

    ok: bool
    paths: list[str] = field(default_factory=list)
    sources_used: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    code: ErrorCode = ErrorCode.INTERNAL
    where: str = ""


def warning_count(stats: dict[str, Any], warnings: list[str]) -> int:
    """``X-Warnings-Count``: how many warnings the render had (``stats["warnings"]``, which
    counts those a summary stands for), or the listed ones for a result without it."""
    return int(stats.get("warnings", len(warnings)))


def _sid_of(item: Any) -> int:
    return int(item["sid"]) if isinstance(item, dict) else int(item)


def request_refusal(exc: CodedError) -> tuple[str, str]:
    """``(field, message)`` of a render error as the request's refusal names them: the request
    field at fault, and a message that names it once, at the start.

    A native answer's error names ``answer.<path inside the answer>``, the agent tools'
    argument; a request carries the answer in ``content`` (``content_format`` names the
    provider), and the message already starts with the path, so the field is ``content``.
    """
    where = exc.field or "content"
    if where == "answer" or where.startswith("answer."):
        where = "content"
    message = str(exc)
    if message != where and not message.startswith((f"{where}:", f"{where} ")):
        message = f"{where}: {message}"
    return where, message


def render_job(job: RenderJob) -> JobOutcome:
    """Render ``job`` with :func:`renderers.api.render` (runs inside a worker process)."""
    from renderers.api import render

    hide = _directory_hider(job.out_dir)
    try:
        results = render(
            job.content, job.out_dir, name=_JOB_STEM, formats=[job.format], **job.kwargs
        )
    except CodedError as exc:
        where, message = request_refusal(exc)
        return JobOutcome(ok=False, error=hide(message), code=exc.code, where=where)
    result = results[0]
    paths = [str(p) for p in (getattr(result, "paths", None) or [result.path])]
    return JobOutcome(
        ok=True,
        paths=paths,
        sources_used=[_sid_of(item) for item in result.sources_used],
        warnings=[hide(str(w)) for w in result.warnings],
        diagnostics=[
            {key: hide(value) if isinstance(value, str) else value
             for key, value in d.to_dict().items()}
            for d in result.diagnostics
        ],
        stats=json.loads(json.dumps(dict(result.stats), default=str)),
    )


#: How a client's answer names the job's directory (the only directory its render may read).
JOB_DIR_NAME = "the request's directory"


def _directory_hider(job_dir: str) -> Callable[[str], str]:
    """A function writing the job's directory in a message as :data:`JOB_DIR_NAME`.

    The directory is a fresh temporary path per render: named in a warning or refusal (an
    image or ``csl`` file outside it is refused naming it) it showed clients the server's
    file system, and made two identical requests answer differently.
    """
    spellings = sorted({job_dir, os.path.realpath(job_dir)}, key=len, reverse=True)

    def hide(text: str) -> str:
        for spelling in spellings:
            text = text.replace(spelling, JOB_DIR_NAME)
        return text

    return hide


_WARMUP_DOC = "# Warm-up\n\nFonts and layout load once per worker.[[S:1]]\n"


#: Worker garbage-collector threshold for new objects (Python's default is 700). A layout
#: allocates millions of short-lived objects; collecting less often saves a few per cent.
_WORKER_GC_THRESHOLD = 50_000


def warm_worker(engines: tuple[PdfEngine, ...] = get_args(PdfEngine)) -> None:
    """Worker initializer: load the renderers and render a tiny PDF with each of ``engines``
    so the first job is warm.

    Then everything loaded so far (modules, fonts, caches) is moved out of the garbage
    collector's sight (:func:`gc.freeze`), so collections during a render scan only that
    render's objects.
    """
    try:
        from renderers.api import render

        with tempfile.TemporaryDirectory(prefix="citerender-warmup-") as tmp:
            for engine in engines:  # each PDF engine loads its fonts once
                render(_WARMUP_DOC, tmp, name="warmup", formats=["pdf"], pdf_engine=engine,
                       sources_pool=[{"sid": 1, "title": "Warm-up", "url": "https://example.org/"}])
    except Exception as exc:  # the worker still serves; the first job pays the cost instead
        print(f"citerender worker warm-up failed: {type(exc).__name__}: {exc}", file=sys.stderr)
    gc.collect()
    gc.freeze()
    gc.set_threshold(_WORKER_GC_THRESHOLD, *gc.get_threshold()[1:])


# --- HTTP helpers -----------------------------------------------------------------------------


async def _routing_error(request: Request, exc: Exception) -> Response:
    """No such route or method (404, 405): the same JSON error body as every other refusal."""
    assert isinstance(exc, HTTPException)
    where = f"{request.method} {request.url.path}"
    headers = dict(exc.headers) if exc.headers else None
    code = {404: ServiceCode.NOT_FOUND, 405: ServiceCode.METHOD_NOT_ALLOWED}.get(exc.status_code)
    return error_response(exc.status_code, f"{where}: {exc.detail}", "path",
                          code or ErrorCode.INVALID_ARGUMENT, headers=headers)


def problem(refused: RequestProblem) -> JSONResponse:
    """The answer to a refused body; the connection is closed when its rest was not read."""
    headers = {"Connection": "close"} if refused.close else None
    return error_response(refused.status, refused.message, refused.field,
                          refused.code or ErrorCode.INVALID_ARGUMENT, headers=headers)


#: The setting a refusal for memory names (``citerender serve``'s flag).
MEMORY_SETTING = "serve --max-worker-memory"


#: A qvalue as RFC 9110 §12.4.2 writes it: 0 to 1, at most three decimals.
_QVALUE = re.compile(r"0(\.\d{0,3})?|1(\.0{0,3})?")


def accept_quality(accept: str, media_type: str) -> float:
    """How much ``accept`` (an Accept header) wants ``media_type``: the q of the most specific
    range that matches it (``type/subtype``, then ``type/*``, then ``*/*``), 0 when none does.

    Written here rather than taken from a library: Starlette parses no Accept header, and
    Werkzeug (which does) is not a dependency of citerender, only of a test tool. Media type
    parameters other than ``q`` are ignored; a range with a malformed ``q`` is skipped.
    """
    kind, _, subtype = media_type.split(";", 1)[0].strip().lower().partition("/")
    specificity, quality = -1, 0.0
    for item in accept.split(","):
        media_range, *params = item.split(";")
        range_kind, slash, range_subtype = media_range.strip().lower().partition("/")
        if not slash or not range_kind or not range_subtype:
            continue
        if (range_kind, range_subtype) == (kind, subtype):
            rank = 2
        elif range_kind == kind and range_subtype == "*":
            rank = 1
        elif (range_kind, range_subtype) == ("*", "*"):
            rank = 0
        else:
            continue
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                value = value.strip()
                q = float(value) if _QVALUE.fullmatch(value) else -1.0
                break
        if q >= 0 and rank > specificity:
            specificity, quality = rank, q
    return quality


def prefers_json(accept: str, media_type: str) -> bool:
    """Whether a client sending ``accept`` wants the JSON envelope rather than the file of
    ``media_type``: only when it prefers ``application/json`` strictly; a tie (axios's
    ``application/json, text/plain, */*``), no Accept header or ``*/*`` get the file."""
    return accept_quality(accept, "application/json") > accept_quality(accept, media_type)


def download_names(stem: str, ext: str) -> tuple[str, str]:
    """``(ascii_filename, utf8_filename)`` for Content-Disposition; never a path."""
    cleaned = "".join(ch for ch in stem if unicodedata.category(ch)[0] != "C")
    cleaned = cleaned.replace("/", "_").replace("\\", "_").strip(" .") or "report"
    cleaned = cleaned[:_MAX_FILENAME]
    folded = unicodedata.normalize("NFKD", cleaned).encode("ascii", "ignore").decode("ascii")
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in folded).strip("._")
    while "__" in safe:
        safe = safe.replace("__", "_")
    return f"{safe or 'report'}{ext}", f"{cleaned}{ext}"


def content_disposition(stem: str, ext: str) -> str:
    """``attachment; filename="…"; filename*=UTF-8''…`` (RFC 6266 / RFC 5987)."""
    ascii_name, utf8_name = download_names(stem, ext)
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(utf8_name, safe='')}"


def write_zip_pages(
    target: BinaryIO, pages: Iterable[tuple[str, Callable[[], bytes]]], stem: str
) -> None:
    """A deterministic zip of PNG pages (``(file name, read its bytes)``) named
    ``STEM-N.png`` into ``target``; each page is read only when it is written, so one page at
    a time is in memory."""
    ascii_stem = download_names(stem, "")[0]
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as archive:
        for name, read in pages:
            suffix = name[len(_JOB_STEM):] if name.startswith(_JOB_STEM) else name
            info = zipfile.ZipInfo(f"{ascii_stem}{suffix}", date_time=(1980, 1, 1, 0, 0, 0))
            archive.writestr(info, read())


def handle_chunks(handle: BinaryIO) -> Iterator[bytes]:
    """The rest of the open file ``handle`` in chunks, closing it at the end; the file may
    be removed (or be an unnamed temporary file) while the answer streams."""
    with handle:
        while block := handle.read(_ANSWER_CHUNK):
            yield block


def _file_chunks(path: Path) -> Iterator[bytes]:
    """:func:`handle_chunks` of ``path``, opened now: the job's directory is removed before
    the answer is sent."""
    return handle_chunks(path.open("rb"))


def _base64_chunks(path: Path) -> Iterator[bytes]:
    """:func:`_file_chunks` of ``path`` as base64 (chunks a multiple of 3 bytes long encode
    to pieces that join into the base64 of the whole)."""
    return (base64.b64encode(block) for block in _file_chunks(path))


# --- the application ----------------------------------------------------------------------------


class ExportService:
    """Configuration, worker pool and temporary root of one running app."""

    def __init__(
        self,
        *,
        workers: int,
        max_body_bytes: int,
        body_timeout_s: float,
        render_timeout_s: float,
        queue_limit: int,
        job: Callable[[RenderJob], JobOutcome],
        warmup: bool,
        worker_memory_mib: int,
    ) -> None:
        self.workers = workers
        self.max_body_bytes = max_body_bytes
        self.body_timeout_s = body_timeout_s
        self.render_timeout_s = render_timeout_s
        self.queue_limit = queue_limit
        self.job = job
        self.warmup = warmup
        self.worker_memory_mib = worker_memory_mib
        self.pool: WorkerPool | None = None
        self.temp_root: Path | None = None
        self._parsers: ThreadPoolExecutor | None = None
        self._mean_job_s = 1.0

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Starlette) -> AsyncIterator[None]:
        """Create the temporary root, the parser threads and the worker pool; remove all three
        on shutdown (bounded: busy workers are killed, a running parse is abandoned)."""
        self.temp_root = Path(tempfile.mkdtemp(prefix="citerender-service-"))
        self._parsers = ThreadPoolExecutor(_PARSER_THREADS, thread_name_prefix="citerender-parse")
        self.pool = WorkerPool(
            self.workers,
            queue_limit=self.queue_limit,
            initializer=warm_worker if self.warmup else None,
            preload=PRELOAD_MODULES,
            memory_mib=self.worker_memory_mib,
        )
        try:
            await self.pool.start()
            yield
        finally:
            await self.pool.close()
            self._parsers.shutdown(wait=False, cancel_futures=True)
            shutil.rmtree(self.temp_root, ignore_errors=True)

    def scratch(self, name: str) -> Path:
        """The directory ``name`` under the temporary root, made (the root too) if missing: a
        /tmp cleaner (systemd-tmpfiles, after ten days unused) or an operator may remove the
        root while the service runs, which made every render answer 500 until a restart."""
        assert self.temp_root is not None
        directory = self.temp_root / name
        directory.mkdir(parents=True, exist_ok=True)
        return directory

    # -- routes --

    async def index(self, request: Request) -> Response:
        """The export page; its policy also admits the reports' own citation-preview script
        (by hash), which the live preview (a srcdoc frame: same policy) runs."""
        from renderers.writers.html.templating import preview_script_csp

        page = (templates_dir() / "service" / "index.html").read_text(encoding="utf-8")
        page = page.replace("script-src 'self'", f"script-src 'self' {preview_script_csp()}", 1)
        return HTMLResponse(page)

    async def asset(self, request: Request) -> Response:
        """``app.js`` and ``app.css`` of the export page."""
        name = request.path_params["name"]
        media = {"app.js": "text/javascript", "app.css": "text/css"}.get(name)
        if media is None:
            return error_response(404, f"no asset {name!r}", "path", ServiceCode.NOT_FOUND)
        return FileResponse(templates_dir() / "service" / name, media_type=media)

    async def healthz(self, request: Request) -> Response:
        """``{"status": "ok"|"degraded", "workers": {...}}``; 503 when no worker can take work.

        Dead idle workers are replaced first, so a probe also heals the pool; ``reason`` says
        what is missing when the pool is not at full strength.
        """
        if self.pool is None:
            return JSONResponse({"status": "starting"}, status_code=503)
        await self.pool.heal()
        health = self.pool.health()
        answer: dict[str, Any] = {"status": health.status, "workers": self.pool.stats().to_dict()}
        if health.reason:
            answer["reason"] = health.reason
        return JSONResponse(answer, status_code=503 if health.status == "unavailable" else 200)

    async def openapi(self, request: Request) -> Response:
        """The OpenAPI 3.1 description."""
        return JSONResponse(openapi_spec())

    async def docs(self, request: Request) -> Response:
        """A self-contained page documenting the API from the same schema."""
        return HTMLResponse(docs_page())

    async def read_checked(self, request: Request, check: Callable[[bytes], _Checked]) -> _Checked:
        """The body of ``request`` within the body bounds (size, deadline), then ``check``ed
        in a parser thread, off the event loop: what every route taking a request body does.
        Raises :class:`RequestProblem` (answer with :func:`problem`)."""
        assert self._parsers is not None
        body = await read_body(request, max_bytes=self.max_body_bytes,
                               timeout_s=self.body_timeout_s)
        return await asyncio.get_running_loop().run_in_executor(self._parsers, check, body)

    async def render(self, request: Request) -> Response:
        """``POST /render``: read the body, check it in a parser thread, render in a worker."""
        try:
            parsed = await self.read_checked(request, checked_request)
        except RequestProblem as refused:
            return problem(refused)
        return await self._render_payload(parsed, request)

    async def _render_payload(self, parsed: RenderRequest, request: Request) -> Response:
        fmt, kwargs = parsed.format, parsed.kwargs
        assert self.pool is not None and self.temp_root is not None
        job_dir = self.scratch(uuid.uuid4().hex)
        try:
            started = time.monotonic()
            on_worker = asyncio.Event()
            outcome = await unless_client_leaves(request.receive, self.pool.run(
                self.job, RenderJob(parsed.content, str(job_dir), fmt, kwargs),
                timeout=self.render_timeout_s, on_start=lambda _pid: on_worker.set(),
            ), started=on_worker)
            self._mean_job_s = 0.8 * self._mean_job_s + 0.2 * (time.monotonic() - started)
            if not outcome.ok:
                return error_response(HTTP_STATUS[outcome.code], outcome.error, outcome.where,
                                      outcome.code)
            return await self._answer(outcome, fmt, parsed.stem, request, job_dir)
        except ClientGone as exc:  # nobody reads the answer: say what happened in the log
            _log.info("client left a render after %.1f s: %s", time.monotonic() - started, exc)
            return Response(status_code=499)  # nginx's "client closed request"; never sent
        except PoolFull as exc:
            return self.busy(f"busy: {exc}; retry later")
        except JobTimeout as exc:
            return error_response(504, f"render timed out: {exc}", "", ServiceCode.TIME_LIMIT)
        except (MemoryExceeded, WorkerDied) as exc:
            if (refusal := memory_refusal(exc, MEMORY_SETTING)) is not None:
                return error_response(HTTP_STATUS[ErrorCode.LIMIT_EXCEEDED], refusal, "content",
                                      ErrorCode.LIMIT_EXCEEDED)
            return error_response(500, f"render failed: {exc}", "", ErrorCode.INTERNAL)
        except (JobRaised, HandOffFailed) as exc:
            return error_response(500, f"render failed: {exc}", "", ErrorCode.INTERNAL)
        except PoolError as exc:
            return error_response(503, f"unavailable: {exc}", "", ServiceCode.UNAVAILABLE,
                                  headers={"Retry-After": "1"})
        finally:
            shutil.rmtree(job_dir, ignore_errors=True)

    def busy(self, message: str, ahead: int | None = None) -> JSONResponse:
        """503 ``busy`` with a ``Retry-After`` of about the time the ``ahead`` renders in front
        take (default: a full queue)."""
        ahead = self.queue_limit + 1 if ahead is None else ahead
        retry = max(1, math.ceil(self._mean_job_s * ahead / self.workers))
        return error_response(503, message, "", ServiceCode.BUSY,
                              headers={"Retry-After": str(retry)})

    async def _answer(
        self, outcome: JobOutcome, fmt: str, stem: str, request: Request, job_dir: Path
    ) -> Response:
        """The file (or the JSON envelope holding it) streamed from the job's directory.

        Never read whole: a 1.4 MB request for 32 PNG pages at 600 dpi is a 245 MB zip,
        which built in memory and base64-encoded took this process (uncapped, unlike the
        workers) to 1.2 GB. Pages are zipped one at a time into the job's directory.
        """
        assert self.temp_root is not None
        root = self.temp_root.resolve()
        paths = [Path(p) for p in outcome.paths]
        if not paths or not all(p.resolve().is_relative_to(root) for p in paths):
            return error_response(500, "render failed: the renderer reported no file in its "
                                  "directory", "", ErrorCode.INTERNAL)
        if len(paths) > 1:
            answer, kind, ext = job_dir / _ANSWER_ZIP, "zip", ".zip"
            pages = [(p.name, p.read_bytes) for p in paths]
            await asyncio.to_thread(_write_zip_file, answer, pages, stem)
        else:
            answer, kind, ext = paths[0], fmt, EXTENSIONS[fmt]
        size = answer.stat().st_size
        ascii_name, _ = download_names(stem, ext)
        sources = ",".join(str(sid) for sid in outcome.sources_used)
        if prefers_json(request.headers.get("accept", ""), CONTENT_TYPES[kind]):
            envelope = bytes(JSONResponse({
                "ok": True,
                "format": fmt,
                "content_type": CONTENT_TYPES[kind],
                "filename": ascii_name,
                "sources_used": outcome.sources_used,
                "warnings": outcome.warnings,
                "diagnostics": outcome.diagnostics,
                "stats": outcome.stats,
            }).body)[:-1] + b',"content_base64":"'
            length = len(envelope) + 4 * math.ceil(size / 3) + 2
            return StreamingResponse(
                itertools.chain([envelope], _base64_chunks(answer), [b'"}']),
                media_type="application/json", headers={"Content-Length": str(length)})
        headers = {
            "Content-Disposition": content_disposition(stem, ext),
            "X-Sources-Used": sources,
            "X-Warnings-Count": str(warning_count(outcome.stats, outcome.warnings)),
            "Cache-Control": "no-store",
            "Content-Length": str(size),
        }
        return StreamingResponse(_file_chunks(answer), media_type=CONTENT_TYPES[kind],
                                 headers=headers)


def _write_zip_file(path: Path, pages: Sequence[tuple[str, Callable[[], bytes]]],
                    stem: str) -> None:
    with path.open("wb") as target:
        write_zip_pages(target, pages, stem)


def checked_request(body: bytes) -> RenderRequest:
    """The render request in ``body``, or :class:`RequestProblem` naming the bad field. Runs
    in a parser thread; every step is bounded by the body limit and the pool row limit (rows
    are counted before any is validated, then checked one at a time)."""
    return parse_render_request(parse_json_object(body))


def checked_job(body: bytes) -> tuple[RenderRequest, Any]:
    """A ``POST /jobs`` body: the render request, checked as :func:`checked_request` checks
    it, and its ``webhook`` field (None when absent; the jobs API checks it)."""
    payload = parse_json_object(body)
    webhook = payload.pop("webhook", None)
    return parse_render_request(payload), webhook


def create_app(
    *,
    workers: int | None = None,
    max_body_bytes: int = 10 * 1024 * 1024,
    body_timeout_s: float = 60,
    render_timeout_s: float = 60,
    queue_limit: int | None = None,
    job: Callable[[RenderJob], JobOutcome] = render_job,
    warmup: bool = True,
    worker_memory_mib: int | None = None,
    broker: str | None = None,
    store: str | None = None,
    webhook_hosts: Sequence[str] = (),
    job_backlog: int | None = None,
) -> Starlette:
    """The Starlette app. ``workers`` defaults to the core count, ``queue_limit`` to 2×workers.

    A body must be complete within ``body_timeout_s`` (408 after) and at most
    ``max_body_bytes`` long (413); a render may take ``render_timeout_s`` (504 after).

    ``job`` is the module-level function a worker runs per request (default
    :func:`render_job`); ``warmup`` renders a tiny PDF in each new worker first.
    ``worker_memory_mib`` caps each worker's memory (default:
    :func:`~renderers.process_memory.default_worker_memory_mib`); a render past it fails
    with 422 ``limit_exceeded``. ``broker``,
    ``store``, ``webhook_hosts`` and ``job_backlog`` (local jobs queued or running at once,
    default :data:`~renderers.service.jobs.MAX_LOCAL_JOBS`) configure the job routes
    (:mod:`renderers.service.jobs`).
    """
    from renderers.service.jobs import MAX_LOCAL_JOBS, JobsAPI, JobsConfig

    size = workers or os.cpu_count() or 1
    service = ExportService(
        workers=size,
        max_body_bytes=max_body_bytes,
        body_timeout_s=body_timeout_s,
        render_timeout_s=render_timeout_s,
        queue_limit=2 * size if queue_limit is None else queue_limit,
        job=job,
        warmup=warmup,
        worker_memory_mib=worker_memory_mib or default_worker_memory_mib(size),
    )
    routes = [
        Route("/", service.index, methods=["GET"]),
        Route("/static/{name}", service.asset, methods=["GET"]),
        Route("/favicon.ico", lambda request: Response(status_code=204), methods=["GET"]),
        Route("/healthz", service.healthz, methods=["GET"]),
        Route("/openapi.json", service.openapi, methods=["GET"]),
        Route("/docs", service.docs, methods=["GET"]),
        Route("/render", service.render, methods=["POST"]),
    ]
    backlog = MAX_LOCAL_JOBS if job_backlog is None else job_backlog
    jobs = JobsAPI(service, JobsConfig(broker, store, tuple(webhook_hosts), backlog))
    app = Starlette(
        routes=routes + jobs.routes(),
        lifespan=jobs.lifespan(service.lifespan),
        middleware=[Middleware(AnswerUnexpectedErrors)],
        exception_handlers={HTTPException: _routing_error},
    )
    app.state.service = service
    app.state.jobs = jobs
    return app


def serve(
    host: str = "127.0.0.1", port: int = 8000, workers: int | None = None, *,
    broker: str | None = None, store: str | None = None, webhook_hosts: Sequence[str] = (),
    worker_memory_mib: int | None = None,
) -> None:
    """Run the service with uvicorn until interrupted, within :class:`ServerLimits`.

    The settings are checked and ``host``:``port`` is bound before any worker starts: a port
    in use or an unknown host raises :class:`~renderers.service.server.ListenError`."""
    from renderers.service.server import listen, run

    app = create_app(workers=workers, broker=broker, store=store, webhook_hosts=webhook_hosts,
                     worker_memory_mib=worker_memory_mib)
    sockets = listen(host, port)
    try:
        run(app, sockets=sockets, limits=ServerLimits())
    finally:
        for sock in sockets:
            sock.close()


# --- API description ------------------------------------------------------------------------------


def openapi_spec() -> dict[str, Any]:
    """OpenAPI 3.1 document for the service, built from :data:`REQUEST_SCHEMA`."""
    error = {"content": {"application/json": {"schema": {
        "type": "object",
        "properties": {
            "error": {"type": "string", "description": "What was refused and what is accepted"},
            "field": {"type": "string",
                      "description": "The request field at fault; empty when none is"},
            "code": {"type": "string",
                     "enum": [str(c) for c in ErrorCode] + [str(c) for c in ServiceCode]},
        },
        "required": ["error", "field", "code"],
    }}}}
    files = {CONTENT_TYPES[k]: {"schema": {"type": "string", "format": "binary"}}
             for k in CONTENT_TYPES}
    envelope = {"type": "object", "properties": {
        "ok": {"type": "boolean"}, "format": {"type": "string"},
        "content_type": {"type": "string"}, "filename": {"type": "string"},
        "sources_used": {"type": "array", "items": {"type": "integer"}},
        "warnings": {"type": "array", "items": {"type": "string"}},
        "diagnostics": {"type": "array", "items": {"type": "object"}},
        "stats": {"type": "object"}, "content_base64": {"type": "string"},
    }}
    from renderers.service.jobs import job_openapi_paths

    return {
        "openapi": "3.1.0",
        "info": {"title": "citerender export service", "version": "1"},
        "paths": {
            **job_openapi_paths(error, REQUEST_SCHEMA),
            "/render": {"post": {
                "summary": "Render cited markdown or HTML to one file",
                "requestBody": {"required": True,
                                "content": {"application/json": {"schema": REQUEST_SCHEMA}}},
                "responses": {
                    "200": {
                        "description": "The file (Content-Disposition: attachment; "
                                       "X-Sources-Used: cited sids), or the JSON envelope "
                                       "when the Accept header prefers application/json "
                                       "to the file's type (q-values count; a tie gets the "
                                       "file)",
                        "content": {**files, "application/json": {"schema": envelope}},
                    },
                    "400": {"description": "Invalid JSON or field", **error},
                    "408": {"description": "The body did not arrive in time (time_limit)",
                            **error},
                    "413": {"description": "Body too large (too_large)", **error},
                    "415": {"description": "Not JSON (unsupported_media_type)", **error},
                    "422": {"description": "Content or pool refused by the renderer, or a render "
                                   "past the worker's memory cap", **error},
                    "500": {"description": "The worker failed (internal_error)", **error},
                    "503": {"description": "Queue full (busy) or the pool is not running "
                                           "(unavailable); Retry-After", **error},
                    "504": {"description": "Render time limit exceeded (time_limit)", **error},
                },
            }},
            "/healthz": {"get": {"summary": "Liveness and worker pool state",
                                 "responses": {
                                     "200": {"description": "ok or degraded (reason)"},
                                     "503": {"description": "No worker can take work (reason)"},
                                 }}},
            "/": {"get": {"summary": "The export page",
                          "responses": {"200": {"description": "HTML"}}}},
        },
    }


def docs_page() -> str:
    """HTML listing the endpoints and every request field (no external resources)."""
    rows = []
    required = set(REQUEST_SCHEMA["required"])
    for name, schema in REQUEST_SCHEMA["properties"].items():
        kind = schema.get("type") or " | ".join(
            str(alt.get("type") or json.dumps(alt.get("const"))) for alt in schema.get("anyOf", [])
        )
        enum = schema.get("enum")
        accepted = ", ".join(str(v) for v in enum) if enum else ""
        rows.append(
            f"<tr><td><code>{html.escape(name)}</code>{' *' if name in required else ''}</td>"
            f"<td>{html.escape(str(kind))}</td><td>{html.escape(accepted)}</td>"
            f"<td>{html.escape(schema.get('description', ''))}</td></tr>"
        )
    spec = html.escape(json.dumps(openapi_spec(), indent=2))
    return (
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<title>citerender API</title><link rel=\"stylesheet\" href=\"/static/app.css\"></head>"
        "<body class=\"docs\"><main><h1>citerender export service</h1>"
        "<p><code>POST /render</code> with a JSON body answers the file "
        "(<code>Content-Disposition: attachment</code>, <code>X-Sources-Used</code>); "
        "send <code>Accept: application/json</code> (preferred to the file's type) for a "
        "JSON envelope with the file in base64. <code>GET /healthz</code> reports the worker pool. "
        "Errors answer <code>{\"error\": …, \"field\": …, \"code\": …}</code> "
        "(<code>field</code> is empty when no field is at fault): "
        "400 bad field, 408 body too slow (<code>time_limit</code>), 413 too large "
        "(<code>too_large</code>), 415 not JSON (<code>unsupported_media_type</code>), "
        "422 refused content, 503 <code>busy</code> or "
        "<code>unavailable</code> (Retry-After), 504 <code>time_limit</code>.</p>"
        "<h2>Request fields</h2><table><thead><tr><th>field</th><th>type</th>"
        "<th>accepted</th><th>meaning</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table><h2>OpenAPI</h2><p><a href=\"/openapi.json\">/openapi.json</a></p>"
        f"<details><summary>Show the document</summary><pre>{spec}</pre></details>"
        "</main></body></html>"
    )
