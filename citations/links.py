"""Link vetting shared by readers and writers: only http, https and mailto reach an output."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from citations.model import Source

SAFE_SCHEMES: frozenset[str] = frozenset({"http", "https", "mailto"})
#: Control characters and spaces, which hide a scheme from a reader that looks for it by name
#: (``java\nscript:``). Only for reading a scheme: never strip them from a URL that is linked,
#: since the link would then go somewhere else (``…?q=solar panels`` → ``…?q=solarpanels``).
URL_IGNORED = re.compile(r"[\x00-\x20\x7f]+")
#: A host name: dot-separated labels of letters (any script), digits and inner hyphens.
_HOST = re.compile(r"(?=.{1,253}\Z)(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.)+[^\W\d_][\w-]{0,61}[^\W_]\Z")
#: WHATWG URL parsing: "C0 control or space" is stripped from both ends of the input, "ASCII tab
#: or newline" is removed anywhere, and other C0 controls, space and DEL are percent-encoded in
#: the userinfo, path, query and fragment (browsers do this; a link must go where they go).
_C0_OR_SPACE = "".join(map(chr, range(0x21)))
_TAB_OR_NEWLINE = str.maketrans("", "", "\t\n\r")
_TO_ENCODE = re.compile(r"[\x00-\x20\x7f]")
#: A scheme as WHATWG reads one: a letter, then letters, digits, ``+``, ``-`` and ``.``.
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
#: A percent-encoded control or space (``%20``, ``%0a``): a host holding one is no host.
_ENCODED_CONTROL = re.compile(r"%(?:[01][0-9A-Fa-f]|20|7[Ff])")


def safe_link(url: str, *, allow_fragment: bool = False) -> str:
    """The link to write for ``url``: http, https or mailto (``#frag`` if allowed), else ``""``.

    ``url`` is read as browsers read it (the WHATWG URL standard), so the link goes where the
    given URL goes: control characters and spaces at either end are stripped, tab, carriage
    return and line feed are removed anywhere, and any other space or control character in the
    path, query or fragment is percent-encoded (``?q=solar panels`` → ``?q=solar%20panels``).
    A scheme is read only from letters, digits, ``+``, ``-`` and ``.``, so ``java\x01script:``
    is no scheme and is refused. A URL whose host holds a space or a control character (also
    percent-encoded), or whose authority holds a backslash, is refused: browsers refuse such a
    host or read it otherwise than the label shown for it (``https://mybank.com .attacker.example``
    would have linked ``mybank.com.attacker.example``).
    """
    candidate = (url or "").strip(_C0_OR_SPACE).translate(_TAB_OR_NEWLINE)
    if not candidate:
        return ""
    if allow_fragment and candidate.startswith("#"):
        # A bare "#" names no place: PDF engines resolve it against the base URL, which
        # would put the output directory's file:// path into the document.
        return _encode(candidate) if len(candidate) > 1 else ""
    match = _SCHEME.match(candidate)
    if match is None or match.group(1).lower() not in SAFE_SCHEMES:
        return ""
    scheme = match.group(1).lower()
    rest = candidate[match.end() :]
    if scheme == "mailto":
        link = candidate[: match.end()] + _encode(rest)
    else:
        if not rest.startswith("//"):
            return ""
        end = len(rest)
        for mark in "/?#":
            found = rest.find(mark, 2)
            if found >= 0:
                end = min(end, found)
        userinfo, at, hostport = rest[2:end].rpartition("@")
        if not hostport or _bad_host(hostport) or "\\" in userinfo:
            return ""
        link = (candidate[: match.end()] + "//" + _encode(userinfo) + at + hostport
                + _encode(rest[end:]))
    try:
        parts = urlsplit(link)
    except ValueError:  # an unclosed IPv6 bracket, a bad port …
        return ""
    if scheme != "mailto" and not parts.netloc:
        return ""
    return link


def _bad_host(hostport: str) -> bool:
    """Whether browsers refuse ``hostport`` or read it otherwise than it is shown: it holds white
    space or a control character (also percent-encoded: the host parser decodes them) or a
    backslash, where browsers end the host (``https://evil.example\\@bank.example/``)."""
    return (
        "\\" in hostport
        or _ENCODED_CONTROL.search(hostport) is not None
        or any(c.isspace() or c < "\x21" or c == "\x7f" for c in hostport)
    )


def _encode(text: str) -> str:
    """``text`` with each space and control character percent-encoded."""
    if not _TO_ENCODE.search(text):
        return text
    return _TO_ENCODE.sub(lambda m: f"%{ord(m.group(0)):02X}", text)


def domain_of(url: str) -> str:
    """The host of ``url`` without ``www.`` (``""`` when there is none)."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return host[4:] if host.startswith("www.") else host


def source_domain(source: Source) -> str:
    """The domain a web source is shown under: the row's own ``domain`` when it is a host name,
    else the host of its URL (``""`` when neither gives one).

    A row may know its site better than its URL does: Gemini's grounding chunks link a Google
    redirect (``vertexaisearch.cloud.google.com/grounding-api-redirect/…``) and name the
    site beside it (``web.domain``, which the adapter keeps as the row's ``domain``).
    """
    return host_name(source.extra.get("domain")) or domain_of(safe_link(source.url))


def host_name(value: object) -> str:
    """``value`` as a domain when it is a host name (lower-cased, without ``www.``), else
    ``""``: ``"News.JP"`` → ``news.jp``; ``"Solar - Wikipedia"``, ``"localhost"`` → ``""``."""
    if not isinstance(value, str):
        return ""
    host = value.strip().rstrip(".").lower()
    if not _HOST.match(host):
        return ""
    return host[4:] if host.startswith("www.") else host
