"""URL and file-path normalization used for dedupe keys (never for the links themselves)."""

from __future__ import annotations

import posixpath
import re
from urllib.parse import unquote, urlsplit

#: Default ports dropped by :func:`normalize_url`; any other port is kept.
DEFAULT_PORTS: dict[str, int] = {"http": 80, "https": 443}

#: Query parameters that only track clicks and never change the resource.
TRACKING_PARAMS: frozenset[str] = frozenset({"gclid", "fbclid"})
TRACKING_PREFIXES: tuple[str, ...] = ("utm_",)

#: Characters that URL parsers silently drop (WHATWG): tab, carriage return, line feed.
_IGNORED = re.compile(r"[\t\r\n]")
#: Control characters and white space (what ``[\x00-\x20\s]`` matches), stripped at either end
#: with str.strip: end-anchored regexes rescanned a run from each of its positions (a 40,000-char
#: run of spaces inside a pool URL took 20 s).
_SPACE = "".join(map(chr, range(0x21))) + (
    "\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
#: Plain http(s) URLs (printable ASCII, a DNS-style host) take a fast path.
_SIMPLE = re.compile(
    r"(?P<scheme>https?)://(?P<host>[A-Za-z0-9.-]+)(?::(?P<port>[0-9]{1,9}))?"
    r"(?P<path>/[!-\"$-\x3e@-~]*)?(?:\?(?P<query>[!-\"$-~]*))?(?:#[!-~]*)?",
    re.IGNORECASE,
)
_PLAIN_QUERY = re.compile(r"[^&\s]+(?:&[^&\s]+)*")
#: Trailing slashes (and the white space around them) folded off a path.
_TRAILING = "/" + _SPACE
#: An empty port separator or white space at the end of a host.
_HOST_TAIL = ":" + _SPACE


def _normalize_netloc(netloc: str, scheme: str) -> str:
    """Lower-case the host, drop an empty or default port; user info is kept verbatim."""
    userinfo, at, hostport = netloc.rpartition("@")
    hostport = hostport.rstrip(_HOST_TAIL)  # was [:\s]+$: 40,000 spaces took 20 s
    if hostport.startswith("["):
        close = hostport.find("]")
        host, rest = (hostport, "") if close < 0 else (hostport[: close + 1], hostport[close + 1 :])
        port = rest[1:] if rest.startswith(":") else None
        if rest and port is None:
            host = hostport  # not "[v6]:port": leave the whole thing alone
    else:
        host, colon, port_text = hostport.partition(":")
        if not colon:
            host, port = hostport, None
        else:
            port = port_text
    host = host.lower().rstrip(_HOST_TAIL)
    if port is not None:
        port = port.strip()
        if port == "":
            port = None
        elif port.isascii() and port.isdigit():
            number = int(port)
            port = None if DEFAULT_PORTS.get(scheme) == number else str(number)
    hostport = host if port is None else f"{host}:{port}"
    return f"{userinfo}{at}{hostport}"


def _filter_query(query: str) -> str:
    """``query`` without empty pieces and tracking parameters (others keep order and encoding)."""
    lowered = query.lower()
    if (
        "utm" not in lowered
        and "clid" not in lowered
        and "%" not in query
        and _PLAIN_QUERY.fullmatch(query)
    ):
        return query  # no empty piece and no name that could be a tracking parameter
    kept: list[str] = []
    for piece in query.split("&"):
        if not piece.strip():
            continue
        name = piece.partition("=")[0]
        if "%" in name:
            name = unquote(name)
        name = name.strip().lower()
        if name not in TRACKING_PARAMS and not name.startswith(TRACKING_PREFIXES):
            kept.append(piece)
    return "&".join(kept)


def _normalize_simple(match: re.Match[str]) -> str:
    """Fast path of :func:`normalize_url` for plain ``http(s)://host[:port]/path?query`` URLs."""
    scheme, host, port, path, query = match.group("scheme", "host", "port", "path", "query")
    scheme = scheme.lower()
    out = scheme + "://" + host.lower()
    if port and DEFAULT_PORTS[scheme] != int(port):
        out += ":" + str(int(port))
    if path:
        out += path.rstrip("/")
    if query:
        query = _filter_query(query)
        if query:
            out += "?" + query
    return out


def normalize_url(url: str) -> str:
    """The dedupe form of ``url``; idempotent: ``normalize_url(normalize_url(u))`` is unchanged.

    Scheme and host are lower-cased, default ports (80 for http, 443 for https) dropped while
    other ports are kept, the fragment is dropped, ``utm_*``/``gclid``/``fbclid`` query
    parameters are removed (the others keep their order and encoding), trailing slashes of the
    path are folded and the path keeps its case. Text that cannot be parsed as a URL comes back
    stripped of surrounding white space.
    """
    if url and url.isascii() and url.isprintable() and url[0] != " " and url[-1] != " ":
        text = url  # nothing to strip: no control characters, no edge spaces
    else:
        text = _IGNORED.sub("", url or "").strip(_SPACE)  # was ^\s+|\s+$: 40,000 spaces took 20 s
    simple = _SIMPLE.fullmatch(text)
    if simple is not None:
        return _normalize_simple(simple)
    return _normalize_general(text)


def _normalize_general(text: str) -> str:
    """:func:`normalize_url` for any text (already stripped of tabs, newlines and edges)."""
    try:
        parts = urlsplit(text)
    except ValueError:
        return text
    scheme = parts.scheme.lower()
    query = _filter_query(parts.query).rstrip(_SPACE)  # was [\s]+$: quadratic in a run
    path = parts.path.rstrip(_TRAILING)  # was [/\s]+$: quadratic in a run
    out = f"{scheme}:" if scheme else ""
    after_scheme = text[len(parts.scheme) + 1 :] if scheme else text
    if parts.netloc or after_scheme.lstrip().startswith("//"):
        out += "//" + _normalize_netloc(parts.netloc, scheme)
        if path and not path.startswith("/"):
            path = "/" + path
    out += path
    if query:
        out += "?" + query
    return out.strip(_SPACE)


def normalize_path(path: str) -> str:
    """The dedupe form of a ``physical_path``: posix separators, ``.``/``..`` folded, case kept.

    ``file://`` URLs are reduced to their path; an empty path gives ``""``. Idempotent: the
    folding is repeated until nothing changes (folding ``0\\r/`` exposes a trailing CR).
    """
    text = _normalize_path_once(path or "")
    while (again := _normalize_path_once(text)) != text:
        text = again
    return text


def _normalize_path_once(path: str) -> str:
    """One folding pass of :func:`normalize_path`."""
    text = path.strip()
    if text.lower().startswith("file://"):
        text = unquote(urlsplit(text).path)
    text = text.replace("\\", "/")
    if not text:
        return ""
    folded = posixpath.normpath(text)
    if folded.startswith("//"):  # posix keeps a leading "//"; one root is enough here
        folded = "/" + folded.lstrip("/")
    return "" if folded == "." else folded
