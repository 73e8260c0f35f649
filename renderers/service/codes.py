"""The error codes of the HTTP service and its jobs, beside the renderer's own, and the
refusal that carries one (:func:`error_response`).

A refusal's ``code`` says what happened. The renderer's codes (:class:`~citations.errors.ErrorCode`,
``invalid_argument`` … ``internal_error``) describe the request; these describe the service
and its jobs — the request may be fine and succeed later (``busy``, ``unavailable``), took too
long (``time_limit``), has a body too large or not JSON (``too_large``,
``unsupported_media_type``), or names no such thing (``not_found``). A job that failed carries
one of them as its ``error.code`` too.
"""

from __future__ import annotations

from enum import StrEnum

from starlette.responses import JSONResponse

from citations.chars import clean_text
from citations.errors import ErrorCode


class ServiceCode(StrEnum):
    """A service or job error that is not the renderer's (see the module doc)."""

    BUSY = "busy"  # 503: every worker busy and the queue (or the job backlog) full; retry later
    UNAVAILABLE = "unavailable"  # 503: the pool, the broker or the store cannot be used now
    TIME_LIMIT = "time_limit"  # 504 (408 for a body): ran past its time limit
    TOO_LARGE = "too_large"  # 413 (431 for its head): the request is larger than the service reads
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"  # 415: the body is not application/json
    NOT_FOUND = "not_found"  # 404: no such route, asset or job
    METHOD_NOT_ALLOWED = "method_not_allowed"  # 405
    NOT_READY = "not_ready"  # 409: the job has no artifact yet (queued, running or failed)
    GONE = "gone"  # 410: the job's artifact is no longer in the store
    WORKER_LOST = "worker_lost"  # a job whose renders kept stopping their worker process


def error_response(
    status: int,
    message: str,
    where: str,
    code: ErrorCode | ServiceCode,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    """Every refusal of the service: ``{"error", "field", "code"}``, always all three.

    ``field`` names the request field at fault, ``""`` when none is (the service is busy, a
    render ran out of time, a worker failed); ``code`` says what happened (an
    :class:`~citations.errors.ErrorCode` of the renderer or a :class:`ServiceCode`).
    """
    body = {"error": clean_text(message), "field": clean_text(where), "code": str(code)}
    return JSONResponse(body, status_code=status, headers=headers or None)
