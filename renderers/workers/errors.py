"""Errors of the scale-out parts: a store or a broker that cannot be used, a bad setting.

Each is a :class:`renderers.errors.RenderError`, so the CLI reports it in one line; the
service answers 503 for the two ``…Unavailable`` errors (the request may succeed later) and
never shows a password from a URL (:func:`redact_url`).
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from citations.errors import ErrorCode
from renderers.errors import RenderError


class WorkerSetupError(RenderError):
    """A broker or store URL, or another worker setting, is not acceptable."""

    default_code = ErrorCode.INVALID_ARGUMENT
    default_field = "store"


class StoreUnavailable(RenderError):
    """The artifact store could not be read or written (unreachable, refused, full)."""

    default_code = ErrorCode.WRITE_FAILED
    default_field = "store"


class BrokerUnavailable(RenderError):
    """The broker (Redis) could not be reached, so no job can be queued or looked up."""

    default_field = "broker"


def no_store_advertised(remedy: str) -> StoreUnavailable:
    """The error of a service or batch given no ``--store`` when no worker advertises one."""
    return StoreUnavailable(
        f"no artifact store: {remedy}, or start a worker (a running worker advertises its "
        "--store in Redis every --advertise-interval seconds, so after a Redis restart it is "
        "back within one interval: retry then)"
    )


def redact_url(url: str) -> str:
    """``url`` without its password (``redis://:***@host:6379/0``), for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    netloc = f"{user}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
