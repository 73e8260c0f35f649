"""Link vetting shared by readers and writers: only http, https and mailto reach an output."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from citations.model import Source

SAFE_SCHEMES: frozenset[str] = frozenset({"http", "https", "mailto"})
#: Control characters and spaces, which browsers ignore inside a URL scheme (``java\nscript:``).
URL_IGNORED = re.compile(r"[\x00-\x20\x7f]+")
#: A host name: dot-separated labels of letters (any script), digits and inner hyphens.
_HOST = re.compile(r"(?=.{1,253}\Z)(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.)+[^\W\d_][\w-]{0,61}[^\W_]\Z")


def safe_link(url: str, *, allow_fragment: bool = False) -> str:
    """Return ``url`` if it may be linked (http, https, mailto; ``#frag`` if allowed), else ``""``.

    Control characters and white space that browsers ignore (``java\\nscript:``) are removed
    before the scheme is read, so they cannot smuggle a dangerous scheme through.
    """
    candidate = URL_IGNORED.sub("", url or "")
    if not candidate:
        return ""
    if allow_fragment and candidate.startswith("#"):
        # A bare "#" names no place: PDF engines resolve it against the base URL, which
        # would put the output directory's file:// path into the document.
        return candidate if len(candidate) > 1 else ""
    try:
        parts = urlsplit(candidate)
    except ValueError:
        return ""
    if parts.scheme.lower() not in SAFE_SCHEMES:
        return ""
    if parts.scheme.lower() != "mailto" and not parts.netloc:
        return ""
    return candidate


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
    return host_name(source.extra.get("domain")) or domain_of(source.url)


def host_name(value: object) -> str:
    """``value`` as a domain when it is a host name (lower-cased, without ``www.``), else
    ``""``: ``"News.JP"`` → ``news.jp``; ``"Solar - Wikipedia"``, ``"localhost"`` → ``""``."""
    if not isinstance(value, str):
        return ""
    host = value.strip().rstrip(".").lower()
    if not _HOST.match(host):
        return ""
    return host[4:] if host.startswith("www.") else host
