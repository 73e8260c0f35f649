"""How the export service is served: uvicorn settings that bound slow clients and shutdown.

uvicorn bounds the idle time between requests, but not the time a head may take to arrive: a
client sending one byte every second holds its connection forever. Nor does it bound a head's
size, only that of a head still arriving (h11's incomplete-event limit): a whole head that
arrived in one read went through at any size. :class:`HeadDeadlineProtocol` closes a
connection whose request head is not complete within :attr:`ServerLimits.header_timeout_s` of
the connection opening or of the previous response (the body has its own deadline in the app,
:func:`renderers.service.body.read_body`), and refuses a head past
:attr:`ServerLimits.max_header_bytes` however it arrived (431). It also answers uvicorn's own
refusals (a request it cannot read, one past the connection limit) as JSON, in the shape of
every refusal. A connection closed while the client is still sending (a refusal of the head, a
413 or 408 of the body, anything answered before the body was read) is closed gently
(:meth:`HeadDeadlineProtocol.close_gently`): closed at once, the unread bytes made the kernel
reset it, and a client still sending lost the refusal to ECONNRESET. Such a connection has
been answered, so it leaves the count of :attr:`ServerLimits.max_connections` at once: refused
clients lingering there made good ones answer 503 (``bench/refusal_bench.py``: 150 clients
sending 8 MiB bodies, refused 413, and 20 small renders arriving in the same second, on a busy
2-core machine: a median 7 of the 20 renders answered over 12 rounds, now 20 of 20 in 17
of 18). Lingering connections have their own budget instead,
:attr:`ServerLimits.max_lingering`: when it is full, the oldest is closed at once (a reset,
as before the gentle close), so any number of refused clients costs at most that many
connections for at most :attr:`ServerLimits.linger_s` each, and never a good client's slot.
Shutdown gives in-flight requests :attr:`ServerLimits.graceful_shutdown_s`, then cancels them,
stops the workers and removes the service's temporary root. Connections still lingering then
get what remains of the same :attr:`ServerLimits.graceful_shutdown_s` (and of their own
:attr:`ServerLimits.linger_s`) to finish, and are closed with their timers
(:meth:`LingeringCloses.settle`): left to the process's exit, a client still sending its
refused body lost the answer to a reset, and nothing bounded or logged that close.

:class:`AnswerUnexpectedErrors` turns an exception that escapes a route into a JSON 500 the
connection survives (Starlette re-raises it after answering, and uvicorn then drops the
client's keep-alive connection).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import shutil
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import h11
import uvicorn
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from citations.errors import ErrorCode
from renderers.service.codes import ServiceCode, error_response

_log = logging.getLogger("citerender.service")
#: How often a shutdown looks whether the lingering connections have ended.
_SETTLE_POLL_S = 0.05


@dataclass(frozen=True)
class ServerLimits:
    """Connection-level bounds of the running service (documented in docs/security.md)."""

    #: A request line and headers must be complete this long after the connection opened
    #: or the previous response ended.
    header_timeout_s: float = 10.0
    #: An idle keep-alive connection is closed after this long.
    keep_alive_s: int = 5
    #: Open connections plus running requests; beyond it a request answers 503 ``busy``. A
    #: connection refused and closing gently no longer counts (see :attr:`max_lingering`).
    max_connections: int = 100
    #: Connections answered with a refusal and still dropping what their client sends
    #: (:meth:`HeadDeadlineProtocol.close_gently`); past it the oldest is closed at once.
    max_lingering: int = 100
    #: How long a connection closed with the request still arriving reads (and drops) what
    #: the client sends after the answer (:meth:`HeadDeadlineProtocol.close_gently`).
    #: Measured on 127.0.0.1, a body refused by its Content-Length drains in 6-28 ms (8 MiB)
    #: or 30-41 ms (64 MiB), so this leaves a client on a slower link time to finish and read
    #: the refusal; one that sends for longer costs a lingering slot for this long, and no
    #: memory.
    linger_s: float = 2.0
    #: Size of a request head, its request line and header lines (larger answers 431).
    max_header_bytes: int = 16 * 1024
    #: At shutdown, in-flight requests get this long before they are cancelled.
    graceful_shutdown_s: int = 10


def head_bytes(request: h11.Request) -> int:
    """The size of ``request``'s head as h11 read it: the request line and one
    ``name: value`` line per header, each ending in CRLF, then the blank line (whitespace h11
    dropped around a value is not counted)."""
    line = len(request.method) + len(request.target) + len(request.http_version) + 9
    fields = sum(len(name) + len(value) + 4 for name, value in request.headers.raw_items())
    return line + fields + 2


class _BoundedHeads(h11.Connection):
    """h11's server side, refusing a request head past ``max_head_bytes`` however it arrived
    (h11 bounds only a head still arriving), and keeping the refusal it raises last, so the
    answer can say what was refused (uvicorn's handler is told no more than that the request
    was invalid)."""

    def __init__(self, max_head_bytes: int) -> None:
        super().__init__(h11.SERVER, max_incomplete_event_size=max_head_bytes)
        self.max_head_bytes = max_head_bytes
        self.refused: h11.RemoteProtocolError | None = None

    def next_event(self) -> Any:
        try:
            event = super().next_event()
            if isinstance(event, h11.Request) and head_bytes(event) > self.max_head_bytes:
                raise h11.RemoteProtocolError("request head too large", error_status_hint=431)
        except h11.RemoteProtocolError as exc:
            self.refused = exc
            raise
        return event


class LingeringCloses:
    """One server's connections closing gently (:meth:`HeadDeadlineProtocol.close_gently`),
    oldest first, at most ``limit``: a newcomer past it closes the oldest at once."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"max_lingering={limit}: must be 1 or more")
        self.limit = limit
        self._closing: dict[HeadDeadlineProtocol, None] = {}  # insertion order: oldest first

    def __len__(self) -> int:
        return len(self._closing)

    def add(self, protocol: HeadDeadlineProtocol) -> None:
        """Count ``protocol`` as lingering, closing the oldest ones past the limit."""
        while len(self._closing) >= self.limit:
            oldest = next(iter(self._closing))
            self.discard(oldest)
            oldest.cut_off()
        self._closing[protocol] = None

    def discard(self, protocol: HeadDeadlineProtocol) -> None:
        """``protocol`` no longer lingers (it closed)."""
        self._closing.pop(protocol, None)

    async def settle(self, within_s: float) -> int:
        """At shutdown: let the lingering connections end for at most ``within_s`` seconds
        (each also ends at its own ``linger_s``), then close the rest at once; how many were
        closed so. No new ones arrive: the server no longer accepts connections."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within_s
        while self._closing and loop.time() < deadline:
            await asyncio.sleep(min(_SETTLE_POLL_S, max(0.0, deadline - loop.time())))
        left = list(self._closing)
        for protocol in left:
            protocol.cut_off()
        await asyncio.sleep(0)  # their transports close on the next turn of the loop
        return len(left)


class HeadDeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for every request head, whose own refusals
    (a request it cannot read, one past ``limit_concurrency``) answer in the shape of every
    refusal of the service (:func:`~renderers.service.codes.error_response`), not as text."""

    header_timeout_s = ServerLimits.header_timeout_s
    linger_s = ServerLimits.linger_s
    #: The server's lingering connections (:func:`head_deadline_protocol` gives each server
    #: its own).
    lingering: ClassVar[LingeringCloses] = LingeringCloses(ServerLimits.max_lingering)
    _head_timer: asyncio.TimerHandle | None = None
    _linger_timer: asyncio.TimerHandle | None = None
    _draining = False
    _socket: asyncio.Transport

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conn = _BoundedHeads(self.config.h11_max_incomplete_event_size
                                  or ServerLimits.max_header_bytes)
        # uvicorn answers past limit_concurrency with a text/plain 503: checked here instead.
        self.max_connections, self.limit_concurrency = self.limit_concurrency, None
        self.app = self._within_limit(self.app)

    def _within_limit(self, app: ASGIApp) -> ASGIApp:
        """``app``, or a 503 ``busy`` when uvicorn's own limit is reached: as many open
        connections, or requests running besides this one."""

        async def limited(scope: Scope, receive: Receive, send: Send) -> None:
            limit = self.max_connections
            if limit is not None and (len(self.connections) >= limit
                                      or len(self.tasks) - 1 >= limit):
                _log.warning("Exceeded concurrency limit.")
                refusal = error_response(
                    503, f"busy: the service holds its most connections and requests ({limit})"
                    "; retry later", "", ServiceCode.BUSY,
                    headers={"Retry-After": "1", "Connection": "close"})
                await refusal(scope, receive, send)
                return
            await app(scope, receive, send)

        return limited

    def send_400_response(self, msg: str) -> None:
        """A request h11 cannot read, as JSON, then close (gently: :meth:`close_gently`): 431
        ``too_large`` for a head (or a chunk's header line) past
        :attr:`ServerLimits.max_header_bytes`, else 400 (a malformed request line, header or
        chunk)."""
        conn = self.conn
        code: ErrorCode | ServiceCode
        if (isinstance(conn, _BoundedHeads) and conn.refused is not None
                and conn.refused.error_status_hint == 431):
            status, reason, code = 431, b"Request Header Fields Too Large", ServiceCode.TOO_LARGE
            message = (f"request: the head (request line and headers) is larger than "
                       f"{conn.max_head_bytes} bytes; accepted: at most {conn.max_head_bytes}")
        else:
            status, reason, code = 400, b"Bad Request", ErrorCode.INVALID_ARGUMENT
            message = ("request: not a readable HTTP/1.1 request (a malformed request line, "
                       "header or chunk); accepted: HTTP/1.1")
        body = bytes(error_response(status, message, "", code).body)
        headers = [(b"content-type", b"application/json"), (b"connection", b"close"),
                   (b"content-length", str(len(body)).encode("ascii"))]
        for event in (h11.Response(status_code=status, headers=headers, reason=reason),
                      h11.Data(data=body), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event) or b"")
        self.transport.close()  # gently: the rest of the head may still be arriving

    def close_gently(self) -> None:
        """Close the connection so that the client reads what was written to it.

        Closed with bytes of the request unread (a body answered 413 or 408 before it was
        read, a head refused), the kernel resets the connection, and a client still sending
        (as most HTTP clients send a whole body before they read) saw ECONNRESET, not the
        answer. So while the request is still arriving, the answer is followed by a
        half-close (FIN), and what the client sends is read and dropped until it closes too,
        or for :attr:`ServerLimits.linger_s` at most. Every close of the connection comes here
        (:class:`_GentleClose`). Answered, the connection leaves the server's connection count
        for :attr:`lingering` (see the module doc).
        """
        transport = self._socket
        if transport.is_closing() or self._draining:
            return
        if self.conn.their_state not in (h11.SEND_BODY, h11.ERROR) or not (
            transport.can_write_eof()
        ):
            transport.close()  # nothing more is coming from the client, or no half-close
            return
        transport.write_eof()
        self._draining = True
        self.connections.discard(self)
        self.lingering.add(self)
        transport.resume_reading()  # paused by uvicorn while a body was left unread
        self._linger_timer = self.loop.call_later(self.linger_s, self.cut_off)

    def cut_off(self) -> None:
        """Stop lingering: close now, whatever the client still sends (the kernel resets the
        connection if bytes of it are unread) or has not read (an answer still buffered is
        dropped: a close would wait for a client that never reads)."""
        self.lingering.discard(self)
        if self._linger_timer is not None:
            self._linger_timer.cancel()
            self._linger_timer = None
        self._socket.abort()

    def data_received(self, data: bytes) -> None:
        """Bytes of the request being read, or dropped while closing (:meth:`close_gently`)."""
        if not self._draining:
            super().data_received(data)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Start the head deadline with the connection, and route its closes through
        :meth:`close_gently`."""
        self._socket = transport
        super().connection_made(_GentleClose(transport, self))  # type: ignore[arg-type]
        self._arm_head_deadline()

    def on_response_complete(self) -> None:
        """A kept-alive connection's next head has the same deadline, from now."""
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_head_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        """Stop the timers with the connection; it no longer lingers."""
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        if self._linger_timer is not None:
            self._linger_timer.cancel()
            self._linger_timer = None
        self.lingering.discard(self)
        super().connection_lost(exc)

    def _arm_head_deadline(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
        self._head_timer = self.loop.call_later(self.header_timeout_s, self._head_deadline_passed)

    def _head_deadline_passed(self) -> None:
        self._head_timer = None
        if self.transport.is_closing():
            return
        if self.cycle is not None and not self.cycle.response_complete:
            return  # a request is being served: its head arrived in time
        _log.info("closing a connection whose request head did not arrive within %g s",
                  self.header_timeout_s)
        self.transport.close()


class _GentleClose:
    """A connection's transport whose :meth:`close` is its protocol's
    :meth:`~HeadDeadlineProtocol.close_gently`: uvicorn closes the transport itself once an
    answer asking to close is written (a 413, a 408), and that close is where the unread
    request made the kernel reset the connection."""

    def __init__(self, transport: asyncio.Transport, protocol: HeadDeadlineProtocol) -> None:
        self._transport = transport
        self._protocol = protocol

    def close(self) -> None:
        self._protocol.close_gently()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class _Server(uvicorn.Server):
    """uvicorn's server, whose shutdown also ends the lingering connections (module doc)."""

    def __init__(self, config: uvicorn.Config, lingering: LingeringCloses) -> None:
        super().__init__(config)
        self.lingering = lingering

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's shutdown, then :meth:`LingeringCloses.settle` within what remains of the
        graceful period (nothing after a second signal), so the bound of a shutdown is the
        same with refused clients lingering as without."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (self.config.timeout_graceful_shutdown or 0)
        await super().shutdown(sockets=sockets)
        within = 0.0 if self.force_exit else max(0.0, deadline - loop.time())
        if closed := await self.lingering.settle(within):  # among uvicorn's shutdown lines
            logging.getLogger("uvicorn.error").info(
                "closed %d refused connections still lingering at shutdown", closed)


def head_deadline_protocol(limits: ServerLimits) -> type[HeadDeadlineProtocol]:
    """:class:`HeadDeadlineProtocol` for one server: ``limits``' head deadline, and its own
    budget of lingering connections (uvicorn takes a class)."""
    return type("HeadDeadlineProtocol", (HeadDeadlineProtocol,),
                {"header_timeout_s": limits.header_timeout_s, "linger_s": limits.linger_s,
                 "lingering": LingeringCloses(limits.max_lingering)})


class AnswerUnexpectedErrors:
    """ASGI middleware: an exception escaping the app becomes a logged JSON 500.

    Without it Starlette answers 500 and re-raises, and uvicorn closes the connection, so one
    failing request costs the client its keep-alive connection. A response already started
    cannot be repaired; that exception propagates.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Run the app; answer 500 for an exception raised before the response started."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as exc:
            if started:
                raise
            _log.exception("unexpected error answering %s %s", scope["method"], scope["path"])
            response = error_response(
                500, f"internal error ({type(exc).__name__}); the service logged it", "",
                ErrorCode.INTERNAL)
            await response(scope, receive, send)


class ListenError(OSError):
    """The service cannot listen on the host and port it was given (in use, no such address)."""


def listen(host: str, port: int) -> list[socket.socket]:
    """Listening sockets for ``host``:``port``, bound before anything else starts.

    uvicorn binds only after the app's startup (the worker processes) and answers a failure
    with a logged ``[Errno 98]`` among its INFO lines and exit status 3; binding first lets
    the caller refuse in one line, before any worker starts. Every address ``host`` resolves
    to is bound, as uvicorn's own ``create_server`` does (``localhost``: IPv4 and IPv6).
    """
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        found = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ListenError(
            getattr(exc, "errno", None) or 0,
            f"{where}: cannot listen: no such host or interface ({reason}); accepted: a "
            "local address or host name (--host 127.0.0.1, 0.0.0.0, ::1)",
        ) from None
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(found):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:  # the IPv4 address, if any, has its own socket
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(2048)
            sock.set_inheritable(True)
    except OSError as exc:
        for sock in sockets:
            sock.close()
        hint = "; another process holds the port (choose another --port)" if (
            exc.errno == errno.EADDRINUSE) else ""
        raise ListenError(exc.errno or 0,
                          f"{where}: cannot listen: {exc.strerror or exc}{hint}") from None
    return sockets


def run(
    app: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    sockets: Sequence[socket.socket] | None = None,
    limits: ServerLimits = ServerLimits(),
    log_level: str = "info",
) -> None:
    """Serve ``app`` with uvicorn within ``limits`` until SIGINT/SIGTERM.

    ``sockets`` serves already-bound listening sockets instead of ``host``/``port``. The
    service's temporary root is removed on the way out even when a second signal forced the
    exit past the app's own shutdown.
    """
    protocol = head_deadline_protocol(limits)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        http=protocol,
        timeout_keep_alive=limits.keep_alive_s,
        limit_concurrency=limits.max_connections,
        h11_max_incomplete_event_size=limits.max_header_bytes,
        timeout_graceful_shutdown=limits.graceful_shutdown_s,
        lifespan="on",
        log_level=log_level,
    )
    if sockets is not None:  # uvicorn announces only the addresses it bound itself
        for sock in sockets:
            address, bound_port = sock.getsockname()[:2]
            shown = f"[{address}]" if ":" in address else address
            logging.getLogger("uvicorn.error").info(
                "citerender serving on http://%s:%d (Press CTRL+C to quit)", shown, bound_port
            )
    try:
        _Server(config, protocol.lingering).run(
            sockets=list(sockets) if sockets is not None else None)
    finally:
        service = getattr(getattr(app, "state", None), "service", None)
        temp_root = getattr(service, "temp_root", None)
        if temp_root is not None:
            shutil.rmtree(temp_root, ignore_errors=True)
