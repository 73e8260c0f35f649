"""The optional webhook of a job: a POST of the finished job's status to a URL the client gave.

A webhook makes the server open a connection to an address chosen by whoever sends a request,
so it is off unless the operator names the hosts it may reach (``--webhook-host HOST``, given
to the service, which checks the URL when the job is submitted, and to the workers, which
check it again before sending). Only ``http`` and ``https`` URLs without credentials are
accepted; redirects are not followed (a redirect could lead anywhere); each call has a short
time limit and a bounded number of attempts, and a webhook that fails never fails the job.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import socket
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

log = logging.getLogger("citerender.webhooks")

WEBHOOK_TIMEOUT_S = 5.0
WEBHOOK_ATTEMPTS = 3
MAX_URL = 2000


def webhook_budget_s() -> float:
    """How long :func:`send_webhook` takes at most: every attempt cut off at
    :data:`WEBHOOK_TIMEOUT_S`, and the pauses between them (the Celery webhook task's time
    limit is set above it)."""
    pauses = sum(_pause(attempt) for attempt in range(WEBHOOK_ATTEMPTS - 1))
    return WEBHOOK_ATTEMPTS * WEBHOOK_TIMEOUT_S + pauses


def _pause(attempt: int) -> float:
    """Seconds to wait after failed ``attempt`` (counted from 0) before the next one."""
    return 0.5 * (attempt + 1)


class WebhookRefused(ValueError):
    """The webhook URL is not allowed (message says why and what is accepted)."""


@dataclass(frozen=True)
class WebhookPolicy:
    """The hosts webhooks may reach (exact host names or IP addresses; none by default)."""

    hosts: frozenset[str] = frozenset()

    @classmethod
    def of(cls, hosts: Iterable[str]) -> WebhookPolicy:
        return cls(frozenset(h.strip().lower().strip("[]") for h in hosts if h.strip()))

    def check(self, url: object) -> str:
        """``url`` when a webhook may be sent there, else :class:`WebhookRefused`."""
        if not isinstance(url, str) or not url or len(url) > MAX_URL:
            raise WebhookRefused(f"webhook: expected an http(s) URL of at most {MAX_URL} chars")
        if not self.hosts:
            raise WebhookRefused(
                "webhook: this service sends no webhooks (the operator enables them for chosen "
                "hosts with --webhook-host HOST); poll the status_url instead"
            )
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise WebhookRefused(f"webhook: {url!r} is not a URL ({exc})") from None
        if parts.scheme not in ("http", "https"):
            raise WebhookRefused(f"webhook: {url!r}: accepted schemes are http and https")
        if parts.username is not None or parts.password is not None:
            raise WebhookRefused(f"webhook: {url!r}: credentials in the URL are not accepted")
        host = (parts.hostname or "").lower()
        if host not in self.hosts:
            raise WebhookRefused(
                f"webhook: host {host!r} is not allowed; accepted hosts: "
                f"{', '.join(sorted(self.hosts))}"
            )
        if port == 0:
            raise WebhookRefused(f"webhook: {url!r}: port 0 is not a port")
        return url


def send_webhook(
    url: str, body: dict[str, Any], policy: WebhookPolicy, stop: threading.Event | None = None,
) -> bool:
    """POST ``body`` as JSON to ``url`` (checked against ``policy``); whether a 2xx came back.

    ``stop``, once set (the service shutting down), ends the pause before the next attempt
    and begins none: the process exit waits for a webhook thread, so retries held a shutdown
    up to :func:`webhook_budget_s` past its bound, for a job whose files it removes. The
    attempt under way ends within its time limit."""
    pause = stop or threading.Event()
    try:
        policy.check(url)
    except WebhookRefused as exc:
        log.warning("webhook not sent: %s", exc)
        return False
    parts = urlsplit(url)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    data = json.dumps(body).encode("ascii")
    headers = {"Content-Type": "application/json", "User-Agent": "citerender-webhook",
               "X-Citerender-Job": str(body.get("id", ""))}
    connection_class = (http.client.HTTPSConnection if parts.scheme == "https"
                        else http.client.HTTPConnection)
    for attempt in range(WEBHOOK_ATTEMPTS):
        if pause.is_set():
            log.warning("webhook %s not sent again: the service is shutting down", url)
            return False
        connection = connection_class(parts.hostname or "", parts.port,
                                      timeout=WEBHOOK_TIMEOUT_S)
        cut = threading.Event()
        cutoff = threading.Timer(WEBHOOK_TIMEOUT_S, _cut_off, (connection, cut))
        cutoff.daemon = True
        cutoff.start()
        try:
            connection.request("POST", path, body=data, headers=headers)
            status = connection.getresponse().status
            if 200 <= status < 300:
                return True
            log.warning("webhook %s answered %s (attempt %d)", url, status, attempt + 1)
        except (OSError, http.client.HTTPException) as exc:
            # the socket's own timeout and the cut-off fall due together: one message for both
            timed_out = cut.is_set() or isinstance(exc, TimeoutError)
            reason = f"no answer within {WEBHOOK_TIMEOUT_S:g} s" if timed_out else exc
            log.warning("webhook %s failed: %s (attempt %d)", url, reason, attempt + 1)
        finally:
            cutoff.cancel()
            connection.close()
        if attempt + 1 < WEBHOOK_ATTEMPTS:
            pause.wait(_pause(attempt))
    return False


def _cut_off(connection: http.client.HTTPConnection, cut: threading.Event) -> None:
    """End an attempt at its time limit. The socket's timeout bounds each read, not the
    attempt: a receiver sending its answer a byte every few seconds held a webhook thread
    for hours. Shutting the socket down wakes the blocked read, which then fails."""
    cut.set()
    if connection.sock is not None:
        with contextlib.suppress(OSError):
            connection.sock.shutdown(socket.SHUT_RDWR)
