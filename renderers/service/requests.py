"""What a render request is: the JSON body of ``POST /render`` (and of ``POST /jobs``).

One home for reading and checking that body, so the synchronous route, the job routes and the
Celery task (which receives the same body through the broker) accept exactly the same requests
and name the same field when one is wrong. :func:`parse_render_request` is pure and runs anywhere,
workers included; the HTTP framing (size, deadline, media type, bounded JSON) is
:mod:`renderers.service.body`, used by both routes through ``Service.read_checked``.
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
from renderers.options import PARAMETERS
from renderers.tools import (
    INPUT_PROPERTIES,
    option_properties,
    render_kwargs,
    validation_problem,
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
    """A request the service refuses: the HTTP status, the message, the field and the code."""

    def __init__(self, status: int, message: str, field: str = "",
                 code: ErrorCode | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.field = field
        self.code = code


@dataclass(frozen=True)
class RenderRequest:
    """A checked render request: what to render, how, and the download name.

    ``payload`` is the body as received (it travels to remote workers unchanged and is parsed
    there again); ``kwargs`` are the keyword arguments for :func:`renderers.api.render`.
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
        raise RequestProblem(400, str(exc), exc.field, exc.code) from None


def parse_render_request(payload: dict[str, Any]) -> RenderRequest:
    """Check ``payload`` against :data:`REQUEST_SCHEMA`; RequestProblem (400) naming the field.
    An option the format does not use (``pages`` for a PDF) goes on to the render, which says
    so in its warnings. (The service checks a client's body with bounded work instead,
    :func:`renderers.service.body.request_problem`, then calls :func:`checked_render_request`.)
    """
    check_format(payload)
    problem = validation_problem(_REQUEST_VALIDATOR, payload)
    if problem is not None:
        where, message = problem
        raise RequestProblem(400, f"{where or 'body'}: {message}", where or "body")
    return checked_render_request(payload)


def checked_render_request(payload: dict[str, Any]) -> RenderRequest:
    """The request in ``payload``, whose fields have been checked against the schema already:
    checked again, the rows of a 10 MiB body took the schema validator 5 s more."""
    fmt = FORMAT_NAMES[payload["format"]]
    if "\x00" in payload["content"]:
        raise RequestProblem(400, "content: holds a NUL character", "content")
    kwargs = render_kwargs({k: v for k, v in payload.items() if k != "pages"}, "service")
    if fmt == "png":
        pages = payload.get("pages", [1])
        kwargs["pages"] = None if pages == "all" else tuple(pages)
    elif payload.get("pages") not in (None, "all"):  # given for nothing: the render says so
        kwargs["pages"] = tuple(payload["pages"])
    stem = payload.get("filename") or payload.get("title") or "report"
    return RenderRequest(payload, payload["content"], fmt, kwargs, stem)
