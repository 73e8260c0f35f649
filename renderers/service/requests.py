"""What a render request is: the JSON body of ``POST /render`` (and of ``POST /jobs``).

One home for checking that body, so the synchronous route, the job routes, the batch CLI and
a worker given a body it cannot trust accept exactly the same requests and refuse the others
with the same words (:func:`parse_render_request`, pure, bounded and run anywhere). A body is
checked once: a worker only builds what a producer of its version checked
(:func:`checked_render_request`, :func:`renderers.workers.execute.job_request`); checked again,
the schema validator read every pool row a second time (4 s for 190,000 rows). The HTTP
framing (size, deadline, media type, bounded JSON) is :mod:`renderers.service.body`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from typing import Any

from jsonschema import Draft202012Validator

from citations.errors import ErrorCode
from renderers.errors import OptionError
from renderers.formats import FORMAT_NAMES, normalize_format
from renderers.options import PARAMETERS, Limits
from renderers.service.codes import ServiceCode
from renderers.tools import (
    INPUT_PROPERTIES,
    arguments_problem,
    option_properties,
    render_kwargs,
)

_options = option_properties("service")
_options["pages"] = {
    "description": 'PNG pages: a list of 1-based page numbers or "all" (default [1]).',
    "anyOf": [{k: v for k, v in _options["pages"].items() if k != "description"},
              {"const": "all"}],
}

REQUEST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "format": {
            "type": "string",
            "enum": sorted(FORMAT_NAMES),
            "description": "Output format: pdf, png, docx, pptx, html or md ('markdown', 'htm').",
        },
        "filename": {
            "type": "string",
            "maxLength": 200,
            "description": "Download name without extension (default: the title, else 'report').",
        },
        **INPUT_PROPERTIES,
        "content": {**INPUT_PROPERTIES["content"], "minLength": 1},
        **_options,
    },
    "required": ["content", "format"],
    "additionalProperties": False,
}
_REQUEST_VALIDATOR = Draft202012Validator(REQUEST_SCHEMA)
#: What an option left out means, so a request that spells out a default has the same key.
_SERVICE_DEFAULTS = {p.name: p.default for p in PARAMETERS if p.offered_on("service")}


class RequestProblem(Exception):
    """A request refused, from its framing to its fields: the HTTP status, the message, the
    field it names and the code (``invalid_argument`` when None), the same on every surface
    (an HTTP answer, a failed job's error, the batch CLI's line).

    ``close`` asks for the connection to be closed after the answer (the rest of the body
    was not read, so the connection cannot carry another request).
    """

    def __init__(
        self, status: int, message: str, field: str = "body", *, close: bool = False,
        code: ErrorCode | ServiceCode | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.field = field
        self.close = close
        self.code = code


@dataclass(frozen=True)
class RenderRequest:
    """A checked render request: what to render, how, and the download name.

    ``payload`` is the body as received and checked (it travels to workers unchanged, and
    they build it again, checking it only when no producer of their version did); ``kwargs`` are
    the keyword arguments for :func:`renderers.api.render`.
    """

    payload: dict[str, Any]
    content: str
    format: str
    kwargs: dict[str, Any]
    stem: str

    def job_key(self) -> str:
        """The request's identity: SHA-256 of its canonical form and the citerender version.

        Two requests with the same content, pool, options, format and download name get the
        same key, so a repeat can be answered with the finished result: output is
        byte-identical for the same input and version. JSON member order and format aliases
        (``markdown``/``md``) do not change the key; the version does, since output may.
        """
        canonical = {
            "citerender": _version(),
            "content": self.content,
            "format": self.format,
            "stem": self.stem,
            "options": {**_SERVICE_DEFAULTS, **self.kwargs},
        }
        text = json.dumps(canonical, sort_keys=True, ensure_ascii=True, separators=(",", ":"),
                          default=repr)
        return hashlib.sha256(text.encode("ascii")).hexdigest()


@cache
def _version() -> str:
    try:
        return metadata.version("citerender")
    except metadata.PackageNotFoundError:
        return "unknown"


def check_format(payload: dict[str, Any]) -> None:
    """Refuse an unknown ``format`` with the formats table's own message (``jpg`` → ask for
    ``png``) before the schema's generic one."""
    try:
        if "format" in payload:
            normalize_format(payload["format"])
    except OptionError as exc:
        raise RequestProblem(400, str(exc), exc.field, code=exc.code) from None


def parse_render_request(
    payload: dict[str, Any], *, max_pool_rows: int = Limits().max_pool_rows,
) -> RenderRequest:
    """The request in ``payload`` once checked, with work and memory bounded; else
    :class:`RequestProblem` naming the field.

    The check is the tools' own (:func:`renderers.tools.arguments_problem`: rows counted,
    fields validated against :data:`REQUEST_SCHEMA` with the rows set aside, then each row by
    the pool loader itself, stopping at the first bad one), answered with its HTTP status —
    400 for a field the schema refuses, 422 ``limit_exceeded`` for too many rows and
    ``invalid_sources_pool`` for a bad row, named by its position and field
    (``sources_pool.2.sid``). An option the format does not use (``pages`` for a PDF) goes on
    to the render, which says so in its warnings.
    """
    check_format(payload)
    problem = arguments_problem(payload, _REQUEST_VALIDATOR, max_pool_rows=max_pool_rows)
    if isinstance(problem, OptionError):  # the schema's refusal; its message names no field
        where = problem.field or "body"
        raise RequestProblem(400, f"{where}: {problem}", where)
    if problem is not None:
        raise RequestProblem(422, str(problem), problem.field, code=problem.code)
    if "\x00" in payload["content"]:
        raise RequestProblem(400, "content: holds a NUL character", "content")
    return checked_render_request(payload)


def checked_render_request(payload: dict[str, Any]) -> RenderRequest:
    """The request in ``payload``, which :func:`parse_render_request` accepted already (a
    worker's body, checked by the service or batch that queued it): built, not checked."""
    fmt = FORMAT_NAMES[payload["format"]]
    kwargs = render_kwargs({k: v for k, v in payload.items() if k != "pages"}, "service")
    if fmt == "png":
        pages = payload.get("pages", [1])
        kwargs["pages"] = None if pages == "all" else tuple(pages)
    elif payload.get("pages") not in (None, "all"):  # given for nothing: the render says so
        kwargs["pages"] = tuple(payload["pages"])
    stem = payload.get("filename") or payload.get("title") or "report"
    return RenderRequest(payload, payload["content"], fmt, kwargs, stem)
