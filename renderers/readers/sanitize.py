"""HTML sanitizing (nh3 with an explicit allow-list) and the URL policy for images."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from citations.chars import clean_text
from citations.codemap import DROPPED_WITH_CONTENT, SANITIZER_KEPT, dropped_elements
from citations.links import URL_IGNORED, safe_link
from renderers.readers.sanitize_process import clean_in_child, may_clean_long
from renderers.sandbox import shown_reference
from renderers.text import RESERVED_ANCHOR, HeadingIds, carried_link

if TYPE_CHECKING:
    import nh3

_DATA_IMAGE = re.compile(r"^data:image/[a-z0-9.+-]+[;,]", re.IGNORECASE)
_IMAGE_SCHEMES = frozenset({"http", "https"})


#: What an image may name to be embedded, as the warnings about refused images say it.
IMAGE_SOURCES_ACCEPTED = (
    "a path relative to the input (an image file under the base directory) or a data:image/… URI"
)


@lru_cache(maxsize=64)  # an image used many times is checked once (its string keeps its hash)
def safe_image_src(src: str) -> str:
    """``src`` if an image may name it (http(s), relative path, ``data:image/…``), else ``""``.

    The writers' sandboxed fetcher decides what actually loads; this only removes sources that
    are never acceptable (``javascript:``, ``file:``, ``data:`` that is not an image …).
    """
    return (src or "").strip() if image_src_refusal(src) is None else ""


def image_src_refusal(src: str) -> str | None:
    """Why an image may not name ``src`` (None: it may). The one rule: :func:`safe_image_src`
    applies it and the readers' warnings quote it, so the two never disagree."""
    probe = URL_IGNORED.sub("", (src or "").strip())  # browsers ignore these in a scheme
    if not probe:
        return "it has no source"
    if _DATA_IMAGE.match(probe):
        return None
    try:
        scheme = urlsplit(probe).scheme.lower()
    except ValueError:
        return "it is not a valid URL"
    if not scheme or scheme in _IMAGE_SCHEMES:
        return None
    if scheme == "data":
        return "a data: URI that is not an image is never loaded"
    return f"{scheme}: URLs are never loaded"


def refused_image_message(src: str, alt: str) -> str:
    """The warning for an image whose source :func:`safe_image_src` refused. Readers drop the
    source, so this is the last place that can name it (shortened, printable) for the author."""
    accepted = f"accepted: {IMAGE_SOURCES_ACCEPTED}"
    reference = (src or "").strip()
    if not reference:
        subject = f"the image {alt!r}" if alt else "an image"
        return f"{subject} has no source (its alt text is shown); {accepted}"
    reason = image_src_refusal(reference) or "refused"
    return (
        f"image {shown_reference(reference)!r} not loaded (its alt text is shown): {reason}; "
        f"{accepted}"
    )


# ---------------------------------------------------------------- HTML

#: Elements kept (their attributes are listed below; anything else is unwrapped, text kept):
#: the scanner's module is their home, so the audit reads a token as the reader does.
_TAGS = SANITIZER_KEPT
#: The heading elements (one home: the reader, its note lines and the allow-lists).
HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
#: Elements removed together with everything inside them (their one home is the scanner's
#: module: a token inside them is no citation for the audit either).
_DROP_WITH_CONTENT = DROPPED_WITH_CONTENT
_ATTRIBUTES: dict[str, set[str]] = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title", "width", "height"},
    "sup": {"class", "data-sids"},
    "code": {"class"},
    "pre": {"class"},
    "ol": {"start", "reversed", "type"},
    "li": {"value"},
    "th": {"align", "colspan", "rowspan", "scope", "style"},
    "td": {"align", "colspan", "rowspan", "style"},
    "col": {"span", "align"},
    "colgroup": {"span", "align"},
    "time": {"datetime"},
    "del": {"datetime"},
    "ins": {"datetime"},
    "abbr": {"title"},
    "bdo": {"dir"},
    # Alignment: ``align``, or a ``style`` of which the cleaner keeps only ``text-align``.
    **{
        tag: {"align", "style"}
        for tag in ("p", "div", "center", "figure", *sorted(HEADINGS))
    },
    # Every element keeps its id: the document's own links (``href="#id"``) lead to it (a
    # heading by its id, any other element by an ``Anchor`` the reader puts in its place).
    "*": {"id"},
}
_STYLED_ATTRIBUTES = frozenset({"class", "id", "style"})
_URL_SCHEMES = frozenset({"http", "https", "mailto", "data"})
_STYLE_BLOCK = re.compile(r"(<style\b[^>]*>)(.*?)(</style\s*>)", re.IGNORECASE | re.DOTALL)
_CSS_IMPORT = re.compile(r"@import\b[^;]*;?", re.IGNORECASE)
#: Possessive, and the unquoted form as chunks ending in a non-blank: ``[^)]*?\s*\)`` rescanned
#: the blanks from every character (quadratic: ``url(a`` + 40,000 spaces + ``b)`` took 4 s).
_CSS_URL = re.compile(
    r"url\(\s*+(?:\"([^\"]*+)\"\s*+\)|'([^']*+)'\s*+\)|((?:\s*+[^)\s])*+)\s*+\))", re.IGNORECASE
)
_CSS_ESCAPE = re.compile(r"\\[0-9a-fA-F]{1,6}\s?|\\.")
#: An at-keyword or a function name spelled with at least one CSS escape (``@\69mport``,
#: ``\75rl(``): decoded before filtering, or the escapes would hide it from the filters.
#: The name starts where an identifier does (a match inside one would have started earlier),
#: and its part before the first escape is plain name characters: otherwise every position of a
#: long identifier rescanned it to its end (quadratic: 40,000 ``a`` took 121 s).
_ESCAPED_NAME = re.compile(
    r"(?P<at>@?)(?<![\w-])(?P<name>[\w-]*+"
    r"\\(?:[0-9a-fA-F]{1,6}\s?|[^\n0-9a-fA-F])(?:[\w-]|\\[0-9a-fA-F]{1,6}\s?|\\[^\n0-9a-fA-F])*+)"
    r"(?P<call>\(?)"
)


def sanitize_html(html: str, *, keep_styles: bool = False, keep_classes: bool = False) -> str:
    """Sanitize untrusted HTML with nh3 and an explicit allow-list; returns an HTML fragment.

    Removed: scripts, ``on*`` handlers, iframes/objects/embeds, forms and their controls,
    ``<base>``, ``<link>``, ``<meta>``, comments, and every link that is not http, https, mailto
    or ``#fragment``. Images keep ``src`` when it is http(s), a relative path or a ``data:image``
    URI. ``<sup class="cite" data-sids="…">`` is kept; ``<title>`` is kept for the title.

    With ``keep_styles`` (the author's-look path) ``<style>`` blocks and the ``class``, ``id``
    and ``style`` attributes are kept too; in the CSS, ``@import`` rules are removed and every
    ``url(…)`` that is not a ``data:`` URI or a relative path becomes ``none``; an ``id`` the
    given-id rule refuses (:meth:`~renderers.text.HeadingIds.can_keep`: white space only, over
    200 characters) goes, as the reader refuses it, so that a link to it leads nowhere in the
    author's look too (the reader's note says so). Without it only
    ``text-align`` survives, on table cells, paragraphs, divisions, headings and figures, and
    of a heading's classes only ``unlisted`` (pandoc's: the heading and its section stay out of
    the contents), which the reader honours.

    With ``keep_classes`` (citerender's own HTML read back) every element keeps its ``class``
    and a ``<span class="cite">`` its ``data-sids``: they say which parts the writer made.
    """
    # nh3 decodes a character reference such as &#1; or &#xFFFF; to the character, which the
    # input's own cleaning never saw: no XML writer could carry it (citations.chars)
    if may_clean_long(html):  # then only a process the deadline can kill may run nh3
        cleaned = clean_in_child(html, keep_styles=keep_styles, keep_classes=keep_classes)
    else:
        cleaned = _cleaner(keep_styles, keep_classes).clean(html)
    cleaned = clean_text(cleaned)
    if keep_styles:
        cleaned = _STYLE_BLOCK.sub(
            lambda m: m.group(1) + sanitize_css(m.group(2)) + m.group(3), cleaned
        )
    return cleaned


@lru_cache(maxsize=4)
def _cleaner(keep_styles: bool, keep_classes: bool = False) -> nh3.Cleaner:
    """The configured nh3 cleaner (built once: handing nh3 the allow-lists cost 0.14 ms a
    call, paid by every HTML block of a markdown answer). nh3 is imported here: the image
    policy this module also holds is all that markdown without HTML needs."""
    import nh3

    from renderers.document import UNLISTED

    tags = set(_TAGS)
    attributes = {tag: set(names) for tag, names in _ATTRIBUTES.items()}
    # A heading's ``class`` narrowed to ``unlisted`` (nh3 keeps only the listed classes, the
    # attribute itself with them); the paths that keep every class need no narrowing.
    classes: dict[str, set[str]] | None = {tag: {UNLISTED} for tag in HEADINGS}
    if keep_styles:
        tags.add("style")
        attributes["*"] = set(_STYLED_ATTRIBUTES)
        classes = None
    if keep_classes:
        attributes["*"] |= {"class"}
        attributes["span"] = {"data-sids"}
        classes = None
    return nh3.Cleaner(
        tags=tags,
        clean_content_tags=set(_DROP_WITH_CONTENT) | (set() if keep_styles else {"style"}),
        attributes=attributes,
        allowed_classes=classes,
        attribute_filter=_filter_styled_attribute if keep_styles else _filter_attribute,
        strip_comments=True,
        link_rel=None,
        url_schemes=set(_URL_SCHEMES),
        filter_style_properties=None if keep_styles else {"text-align"},
    )


def read_link(href: str) -> str:
    """The link a reader keeps for ``href`` (markdown's destination, HTML's ``href``), or ""
    when it is refused: :func:`citations.links.safe_link`'s, an in-document one leading where
    its id is read (:func:`renderers.text.carried_link`)."""
    return carried_link(safe_link(href, allow_fragment=True))


def _filter_attribute(tag: str, name: str, value: str) -> str | None:
    """Per-attribute policy nh3 cannot express with schemes alone."""
    if name == "href":
        return read_link(value) or None
    if name == "src":
        return safe_image_src(value) or None
    if name == "id" and RESERVED_ANCHOR.match(value):  # would hijack a writer's anchor
        return None
    if name == "style":
        return sanitize_css(value)
    return value


def _filter_styled_attribute(tag: str, name: str, value: str) -> str | None:
    """:func:`_filter_attribute`, and an ``id`` no element may keep dropped: the reader keeps
    it to name it in its note on the heading, the author's look has no use for it. The id is
    judged as the reader reads it (:func:`clean_text`: a form feed is U+FFFD, which it keeps)."""
    if name == "id" and not HeadingIds.can_keep(clean_text(value)):
        return None
    return _filter_attribute(tag, name, value)


def sanitize_css(css: str) -> str:
    """CSS without ``@import`` rules and without ``url(…)`` other than ``data:`` or relative.

    At-keywords and function names written with escapes are decoded first, so ``@\69mport``
    and ``\75rl(`` meet the same filters as ``@import`` and ``url(``.
    """
    css = _ESCAPED_NAME.sub(_decode_name, css)
    css = _CSS_IMPORT.sub("", css)
    # No url(…) ends after the last ")"; trying there rescanned to the end from every "url("
    # (quadratic: 20,000 "url(" took 20 s).
    end = css.rfind(")") + 1
    return _CSS_URL.sub(_css_url, css[:end]) + css[end:]


def _decode_name(match: re.Match[str]) -> str:
    """The at-keyword or function name of ``match`` without its escapes (other idents stay)."""
    if not (match.group("at") or match.group("call")):
        return match.group(0)  # a selector or value: escapes there are the author's business
    name = _CSS_ESCAPE.sub(_css_unescape, match.group("name"))
    return match.group("at") + name + match.group("call")


def _css_unescape(match: re.Match[str]) -> str:
    """One CSS escape decoded (CSS Syntax §4.3.7): hex digits name a code point, else the
    escaped character stands for itself; a null or out-of-range code point is U+FFFD."""
    body = match.group(0)[1:].rstrip(" \t\n\r\f") if len(match.group(0)) > 2 else match.group(0)[1:]
    if re.fullmatch(r"[0-9a-fA-F]{1,6}", body):
        code = int(body, 16)
        return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else "\ufffd"
    return body


def _css_url(match: re.Match[str]) -> str:
    target = next((g for g in match.groups() if g is not None), "")
    plain = _CSS_ESCAPE.sub("_", target).strip()  # escapes could hide a scheme: refuse them
    if plain != target.strip():
        return "none"
    probe = URL_IGNORED.sub("", plain).lower()
    if probe.startswith("data:") or (
        probe and not _has_scheme(probe) and not probe.startswith("//")
    ):
        return match.group(0)
    return "none"


def _has_scheme(url: str) -> bool:
    try:
        return bool(urlsplit(url).scheme)
    except ValueError:
        return True


#: Closed script and style elements and comments: text a reader never sees, on either side.
_HIDDEN = re.compile(
    r"<(script|style)\b[^>]*>.*?</\1\s*>|<!--.*?-->", re.IGNORECASE | re.DOTALL
)
#: Where :data:`_HIDDEN` may match. Tried only there, and never again for an opening whose end
#: is already known to be missing: ``_HIDDEN.sub`` searched to the end from every unclosed
#: opening (quadratic: 20,000 ``<!--`` took 12 s, 20,000 ``<script>`` 26 s).
_HIDDEN_START = re.compile(r"<(?:(script|style)\b|!--)", re.IGNORECASE)
_ANY_TAG = re.compile(r"<[^>]*>")
_BLANK = re.compile(r"\s+")


def visible_length(html: str) -> int:
    """Characters of text in ``html`` outside tags, closed scripts/styles and comments.

    Deliberately naive: an element the HTML parser reads as raw text because it is never
    closed (``<math><mtext><table><mglyph><style>`` …) still counts here, which is the point —
    comparing this before and after sanitizing shows text that vanished.
    """
    text = without_hidden(html)
    # No tag ends after the last ">"; trying there rescanned to the end from every "<"
    # (quadratic: 100,000 "<" took 7 s).
    end = text.rfind(">") + 1
    text = _ANY_TAG.sub(" ", text[:end]) + text[end:]
    return len(_BLANK.sub("", text))


def without_hidden(html: str) -> str:
    """``_HIDDEN.sub(" ", html)``, in time linear in ``html``.

    An opening :data:`_HIDDEN` cannot close has no end after any later opening of the same
    kind either (``\\1`` compares lowercased letters, ``İ`` as ``i``), so each kind is searched
    for to the end of ``html`` at most once.
    """
    parts: list[str] = []
    kept = pos = 0
    unclosed: set[str] = set()
    while (start := _HIDDEN_START.search(html, pos)) is not None:
        pos = start.start() + 1
        kind = (start.group(1) or "").replace("\u0130", "i").lower()
        if kind in unclosed:
            continue
        hidden = _HIDDEN.match(html, start.start())
        if hidden is None:
            unclosed.add(kind)
            continue
        parts += (html[kept : hidden.start()], " ")
        kept = pos = hidden.end()
    parts.append(html[kept:])
    return "".join(parts)


def dropped_text(before: str, after: str) -> int:
    """How many visible characters sanitizing removed (0 when it removed none)."""
    return max(0, visible_length(before) - visible_length(after))


def dropped_at(html: str) -> int:
    """Where text the sanitizer removes starts: the offset of the first element it drops with
    its content that holds visible text (a closed script or style holds none, nor an icon),
    or -1."""
    return next(
        (start for start, end in dropped_elements(html) if visible_length(html[start:end])), -1
    )
