"""Link vetting shared by readers and writers: only http, https and mailto reach an output."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

SAFE_SCHEMES: frozenset[str] = frozenset({"http", "https", "mailto"})
#: Control characters and spaces, which browsers ignore inside a URL scheme (``java\nscript:``).
URL_IGNORED = re.compile(r"[\x00-\x20\x7f]+")


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
