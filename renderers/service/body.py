"""Reading and checking request bodies within fixed bounds of size, time, depth and work.

The event loop only collects bytes (:func:`read_body`: a size limit, and a deadline so a
client trickling bytes is cut off). Everything that costs CPU — decoding, JSON parsing,
the check of the request's fields — runs in a parser thread (:func:`parse_json_object`, then
:func:`renderers.service.requests.parse_render_request`), and anything that would make a
parser, the schema validator or the pickling of the job recurse or grow without bound is
refused before it gets there:
nesting deeper than :data:`MAX_DEPTH`, integers longer than :data:`MAX_INT_DIGITS`, numbers
JSON cannot carry (NaN, infinities), lone surrogates, and more pool rows than the renderer's
own limit. An object naming a key twice is refused too (:mod:`citations.json_keys`): which
value was meant is the client's bug to fix. Every refusal is a
:class:`~renderers.service.requests.RequestProblem` naming the field, never a 500.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import Iterator
from itertools import accumulate
from typing import Any

from starlette.requests import ClientDisconnect, Request

from citations import json_keys
from renderers.service.codes import ServiceCode
from renderers.service.requests import RequestProblem

#: Arrays and objects nested in one body, the body itself counting as 1. The renderer takes
#: pool rows' unknown fields 32 deep (``citations.pool.MAX_EXTRA_DEPTH``); this leaves room
#: for that and stays far below the recursion the JSON parser and pickle would hit.
MAX_DEPTH = 64
#: Digits of one JSON integer (beyond 128-bit values; Python refuses 4,300 with a ValueError).
MAX_INT_DIGITS = 40

#: A string literal. An unterminated one runs to the end of the body, so the pattern matches
#: wherever a quote starts and a scan never restarts inside a string (which on a body of
#: escaped quotes would be quadratic).
_STRING = rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)'
_STRINGS = re.compile(_STRING, re.DOTALL)
_TOKENS = re.compile(_STRING + rb"(\s*:)?|[\[\]{},]", re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = tuple(1 if b in b"[{" else -1 for b in range(256))
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


async def read_body(request: Request, *, max_bytes: int, timeout_s: float) -> bytes:
    """The JSON body, at most ``max_bytes`` long and fully arrived within ``timeout_s``.

    413 for a body over the limit (by its Content-Length or while streaming), 415 for another
    media type, 408 for a body still arriving at the deadline, 400 for a client that went
    away mid-body.
    """
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > max_bytes):
        raise _too_large(max_bytes)
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media != "application/json":
        raise RequestProblem(
            415, "Content-Type must be application/json", close=True,
            code=ServiceCode.UNSUPPORTED_MEDIA_TYPE,
        )
    body = bytearray()
    try:
        async with asyncio.timeout(timeout_s):
            async for chunk in request.stream():
                body += chunk
                if len(body) > max_bytes:
                    raise _too_large(max_bytes)
    except TimeoutError:
        raise RequestProblem(
            408, f"the body did not arrive within {timeout_s:g} s", close=True,
            code=ServiceCode.TIME_LIMIT,
        ) from None
    except ClientDisconnect:
        raise RequestProblem(400, "the client closed the connection mid-body") from None
    return bytes(body)


def _too_large(max_bytes: int) -> RequestProblem:
    return RequestProblem(
        413, f"request body larger than {max_bytes} bytes", close=True, code=ServiceCode.TOO_LARGE
    )


class _Refused:
    """Stands in for a JSON value the service does not accept, until its field is named."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


class _NumberHooks:
    """``json.loads`` hooks that turn numbers the service refuses into :class:`_Refused`."""

    def __init__(self) -> None:
        self.refused = 0

    def _refuse(self, reason: str) -> _Refused:
        self.refused += 1
        return _Refused(reason)

    def parse_int(self, text: str) -> int | _Refused:
        digits = len(text) - text.startswith("-")
        if digits > MAX_INT_DIGITS:
            return self._refuse(
                f"an integer of {digits} digits; accepted: integers of at most "
                f"{MAX_INT_DIGITS} digits"
            )
        return int(text)

    def parse_float(self, text: str) -> float | _Refused:
        value = float(text)
        if math.isfinite(value):
            return value
        return self._refuse(f"the number {text[:20]} overflows; accepted: finite numbers")

    def parse_constant(self, name: str) -> _Refused:
        return self._refuse(f"{name} is not a JSON number; accepted: finite numbers")


def parse_json_object(body: bytes) -> dict[str, Any]:
    """The body as a JSON object, or :class:`RequestProblem` (400) naming what is wrong where.

    Runs in a parser thread: the cost is a few linear passes over at most the body limit.
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RequestProblem(
            400, f"body: not UTF-8 at byte {exc.start}; accepted: a UTF-8 JSON object"
        ) from None
    _refuse_deep_nesting(body)
    hooks = _NumberHooks()
    try:
        payload = json_keys.loads(
            text,
            parse_int=hooks.parse_int,
            parse_float=hooks.parse_float,
            parse_constant=hooks.parse_constant,
        )
    except json.JSONDecodeError as exc:
        raise RequestProblem(400, f"the body is not valid JSON: {exc}") from None
    except json_keys.DuplicateKeyError as exc:  # which of the two values was meant?
        where = _printable(exc.where)
        raise RequestProblem(400, f"{where}: {_printable(exc.reason)}", where) from None
    except (RecursionError, ValueError) as exc:  # bounded above; kept as a last line
        raise RequestProblem(400, f"the body could not be read as JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise RequestProblem(400, "the body must be a JSON object")
    if hooks.refused or _SURROGATE_ESCAPE.search(text):
        _refuse_bad_values(payload)
    return payload


def _refuse_deep_nesting(body: bytes) -> None:
    """:class:`RequestProblem` when arrays and objects nest deeper than :data:`MAX_DEPTH`.

    Counted on the bytes with string literals blanked out (they may hold brackets), before
    the JSON parser, which recurses once per level, ever sees the body.
    """
    brackets = _STRINGS.sub(b'""', body).translate(None, _NOT_BRACKETS)
    if max(accumulate(map(_STEP.__getitem__, brackets)), default=0) <= MAX_DEPTH:
        return
    where = _deepest_field(body)
    raise RequestProblem(
        400,
        f"{where}: nests deeper than {MAX_DEPTH} levels of arrays and objects; accepted: "
        f"at most {MAX_DEPTH} levels in a body",
        where,
    )


def _deepest_field(body: bytes) -> str:
    """The field holding the first container that opens past :data:`MAX_DEPTH`."""
    stack: list[list[Any]] = []  # per open container: [is_object, current key or index]
    for match in _TOKENS.finditer(body):
        first = match.group()[:1]
        if first == b'"':
            if match.group(1) and stack and stack[-1][0]:
                stack[-1][1] = _decode_key(match.group()[: match.start(1) - match.start()])
        elif first in (b"[", b"{"):
            if len(stack) >= MAX_DEPTH:
                return _field_path([entry[1] for entry in stack])
            stack.append([first == b"{", None if first == b"{" else 0])
        elif first in (b"]", b"}"):
            if stack:
                stack.pop()
        elif stack and not stack[-1][0]:  # a comma between array items
            stack[-1][1] += 1
    return "body"


def _decode_key(token: bytes) -> str:
    try:
        key = json.loads(token)
    except ValueError:
        return _printable(token.decode("utf-8", "replace"))
    return _printable(key) if isinstance(key, str) else "?"


def _field_path(parts: list[Any]) -> str:
    """A short field path: at most the first four steps, ending at a named field."""
    kept = [str(part) for part in parts[:4] if part is not None]
    while kept and kept[-1].isdigit():
        kept.pop()
    return ".".join(kept) or "body"


def _printable(text: str) -> str:
    """``text`` with lone surrogates written as ``\\udXXX`` escapes (safe in any answer)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _walk(payload: dict[str, Any]) -> Iterator[tuple[list[str], Any, bool]]:
    """Every ``(path, value, is_key)`` in document order (depth is bounded by now)."""
    stack: list[tuple[list[str], Any]] = [([], payload)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            children = list(value.items())
            for key, _ in children:
                yield [*path, key], key, True
            stack.extend(([*path, key], child) for key, child in reversed(children))
        elif isinstance(value, list):
            stack.extend(([*path, str(i)], child) for i, child in reversed(list(enumerate(value))))
        else:
            yield path, value, False


def _refuse_bad_values(payload: dict[str, Any]) -> None:
    """:class:`RequestProblem` for the first refused number or lone surrogate, by field."""
    for path, value, is_key in _walk(payload):
        where = ".".join(_printable(part) for part in path) or "body"
        if isinstance(value, _Refused):
            raise RequestProblem(400, f"{where}: {value.reason}", where)
        if isinstance(value, str) and (found := _SURROGATE.search(value)):
            what = "its name holds" if is_key else "holds"
            raise RequestProblem(
                400,
                f"{where}: {what} a lone surrogate (U+{ord(found.group()):04X}); accepted: "
                "Unicode text (surrogate escapes only in pairs)",
                where,
            )
