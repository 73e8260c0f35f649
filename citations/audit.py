"""Audit a document's citations against a sources pool (``citerender audit``).

The report answers: which sources are cited (and numbered how), which sids are unknown, which
tokens are invalid, which citations sit in code or in markdown's raw HTML (not citations,
probably a mistake), which pool sources were never used, and how much of the prose carries a
citation.
"""

from __future__ import annotations

import bisect
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from citations.codemap import blanked, html_tags, line_starts, markdown_blocks
from citations.errors import SidecarError
from citations.front_matter import FrontMatter, abstract_source, front_matter, front_matter_span
from citations.grammar import MAX_SID, sid_in_range
from citations.numbering import plan_citations
from citations.pool import SourcePool
from citations.sidecar import (
    DEFAULT_POINTER,
    inline_citations,
    inside_pointer,
    iter_strings,
    load_structured,
    parse_pointer,
    resolve_pointer,
)
from citations.tokens import Token, resolve_token_sids, scan

#: Where a valid token stands that render's reader does not cite (``not_rendered_sids``).
NOT_RENDERED_PLACES = (
    "a link's URL, a formula, a link reference definition or a heading's attribute block"
)

@dataclass(frozen=True)
class InvalidToken:
    """A token that could not be read: its text, 1-based line and the reason."""

    text: str
    line: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """``{"text", "line", "reason"}``."""
        return {"text": self.text, "line": self.line, "reason": self.reason}


@dataclass(frozen=True)
class AuditReport:
    """The outcome of :func:`audit`; ``to_dict()`` is the ``citerender audit --json`` output."""

    cited_sids: tuple[int, ...]
    unknown_sids: tuple[int, ...]
    usage_sids: tuple[int, ...]
    in_code_sids: tuple[int, ...]
    orphaned_sids: tuple[int, ...]
    invalid_tokens: tuple[InvalidToken, ...]
    numbers: dict[int, int]
    coverage: float
    warnings: tuple[str, ...] = field(default=())
    #: Sids of tokens inside raw HTML or YAML front matter, which render does not cite:
    #: markdown's tags (their attribute values) and comments, and elements the sanitizer
    #: removes with their content (``<svg>``, ``<button>`` …, in HTML input too) are dropped,
    #: front matter is metadata (a title keeps its token as written).
    in_raw_html_sids: tuple[int, ...] = field(default=())
    #: Sids of valid tokens that render's reader does not cite where they stand (inside a
    #: link's URL, a formula, a link reference definition or a heading's attribute block:
    #: :data:`NOT_RENDERED_PLACES`). The scanner reads a heading's attribute block itself
    #: (:mod:`citations.attribute_block`), so those are listed by every audit; the others are
    #: known only when the audit is given render's citations (``cited_groups``, as
    #: :mod:`renderers.audit` gives them).
    not_rendered_sids: tuple[int, ...] = field(default=())

    @property
    def contiguous(self) -> bool:
        """True when the display numbers run 1..N without a gap (always so for appearance
        numbering of a sound document; a gap means a number points at nothing)."""
        shown = sorted(set(self.numbers.values()))
        return shown == list(range(1, len(shown) + 1))
    @property
    def ok(self) -> bool:
        """False when there are unknown sids, invalid tokens, or tokens render does not cite
        (in code, in raw HTML, or elsewhere render reads no citation)."""
        return not (
            self.unknown_sids or self.invalid_tokens or self.in_code_sids
            or self.in_raw_html_sids or self.not_rendered_sids
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON report, with exactly the keys of the audit contract."""
        return {
            "cited_sids": list(self.cited_sids),
            "unknown_sids": list(self.unknown_sids),
            "usage_sids": list(self.usage_sids),
            "in_code_sids": list(self.in_code_sids),
            "in_raw_html_sids": list(self.in_raw_html_sids),
            "not_rendered_sids": list(self.not_rendered_sids),
            "orphaned_sids": list(self.orphaned_sids),
            "invalid_tokens": [t.to_dict() for t in self.invalid_tokens],
            "numbers": {str(sid): n for sid, n in self.numbers.items()},
            "coverage": self.coverage,
            "contiguous": self.contiguous,
            "ok": self.ok,
        }

    def format_text(self) -> str:
        """A short human-readable report."""
        lines = [
            f"{len(self.cited_sids)} cited, {len(self.unknown_sids)} unknown, "
            f"{len(self.usage_sids)} usage-only, {len(self.in_code_sids)} in code, "
            f"{len(self.in_raw_html_sids)} in raw HTML, "
            f"{len(self.not_rendered_sids)} not rendered, "
            f"{len(self.orphaned_sids)} orphaned; coverage {self.coverage:.0%} of paragraphs "
            "and list items",
        ]
        if self.numbers:
            lines.append(
                "Numbers: " + ", ".join(f"S{sid}→{n}" for sid, n in self.numbers.items())
            )
        if self.unknown_sids:
            lines.append("Unknown sids (not in the pool): " + _join(self.unknown_sids))
        for token in self.invalid_tokens:
            lines.append(f"Invalid token on line {token.line}: {token.text} — {token.reason}")
        if self.in_code_sids:
            lines.append("Tokens inside code (not citations): " + _join(self.in_code_sids))
        if self.in_raw_html_sids:
            lines.append(
                "Tokens inside raw HTML or front matter (not citations: tags, comments and what "
                "the sanitizer removes with its content, such as <svg>, are dropped, front "
                "matter is metadata): "
                + _join(self.in_raw_html_sids)
            )
        if self.not_rendered_sids:
            lines.append(
                f"Tokens render does not cite where they stand (in {NOT_RENDERED_PLACES}): "
                + _join(self.not_rendered_sids)
            )
        if self.orphaned_sids:
            lines.append("Never cited: " + _join(self.orphaned_sids))
        if not self.contiguous:
            lines.append("Display numbers have gaps: " + _join(sorted(set(self.numbers.values()))))
        lines += [f"Warning: {w}" for w in self.warnings]
        lines.append("OK" if self.ok else "PROBLEMS FOUND")
        return "\n".join(lines)


def _join(sids: Iterable[int]) -> str:
    return ", ".join(str(s) for s in sids)


def _unique(values: Iterable[int]) -> tuple[int, ...]:
    return tuple(dict.fromkeys(values))


def audit(
    content: object,
    pool: object,
    *,
    content_format: str = "markdown",
    dialects: frozenset[str] = frozenset(),
    cited_groups: Sequence[Sequence[int]] | None = None,
    code_groups: Sequence[Sequence[int]] = (),
    recorded_usage: Sequence[int] = (),
    name: str = "<content>",
) -> AuditReport:
    """Audit ``content`` (markdown, HTML, or a JSON/YAML answer with a ``_citations`` sidecar)
    against ``pool`` (anything :meth:`SourcePool.coerce` accepts).

    ``cited_groups``: the sids of each citation of markdown or HTML ``content`` in the order
    render numbers them, from render's own reader (:func:`renderers.audit.audit` passes them):
    the report then counts and numbers exactly those, and lists the valid tokens that are not
    among them as ``not_rendered_sids``. Without them, every valid token outside code and raw
    HTML counts, in text order (the scanner's view: no document model is built).
    ``code_groups``: the sids of each valid token render's reader left verbatim in code; with
    ``cited_groups`` they settle where the scanner's guess of HTML's code (a regular reading
    of misnested markup: ``<td><code>x</td>``) differs from the parse the reader reads.
    ``recorded_usage``: USAGE sids the content records other than as tokens (a page citerender
    wrote keeps them in its head: :data:`renderers.metadata.USAGE_META`).
    ``name``: what a JSON/YAML answer's parse errors call it (the file's name, as render says).

    ``content`` may also be a provider's native answer (a dict/list, or its JSON text with
    ``content_format`` naming the provider): it is adapted first (:mod:`citations.adapters`),
    and its sources are merged into ``pool``.

    ``numbers`` use appearance numbering; sids sharing a source share a number. A pool source is
    *orphaned* when neither it nor a duplicate of it is cited or named in a USAGE tag.
    """
    if content_format in ("json", "yaml") and isinstance(content, str):
        structured: Literal["json", "yaml"] = "json" if content_format == "json" else "yaml"
        return audit_structured(content, pool, content_format=structured, name=name)
    if not isinstance(content, str) or content_format not in ("markdown", "html"):
        from citations.adapters import PROVIDERS, adapt

        if isinstance(content, str) and content_format not in PROVIDERS:
            raise ValueError(
                f"content_format={content_format!r}: accepted values are 'markdown', 'html', "
                f"'json', 'yaml' or a provider ({', '.join(PROVIDERS)})"
            )
        provider = content_format if content_format in PROVIDERS else None
        adapted = adapt(content, pool, provider=provider)
        content, pool, content_format = adapted.content, adapted.pool, "markdown"
    if content_format not in ("markdown", "html"):
        raise ValueError(
            f"content_format={content_format!r}: accepted values are 'markdown', 'html', "
            "'json', 'yaml'"
        )
    sources = SourcePool.coerce(pool)
    syntax: Literal["markdown", "html"] = "html" if content_format == "html" else "markdown"
    tokens, units = (_markdown_reading(content, dialects) if syntax == "markdown"
                     else (scan(content, syntax="html", dialects=dialects), _html_units(content)))
    usage: list[int] = list(recorded_usage)
    in_code: list[tuple[tuple[int, ...], int]] = []  # (sids, position), as token_groups
    in_raw_html: list[int] = []
    invalid: list[InvalidToken] = []
    warnings: list[str] = []
    token_groups: list[tuple[tuple[int, ...], int]] = []  # (sids, position) of valid citations
    code_cites: list[tuple[tuple[int, ...], int]] = []  # valid citations the scanner finds in code
    # tokens in a heading's attribute block: render does not cite them, which the scanner
    # knows alone (not raw HTML: the block is the author's markdown, and no tag is dropped)
    in_blocks: list[tuple[tuple[int, ...], int]] = []
    for token in tokens:
        if token.in_heading_attributes:
            in_blocks.append((token.sids, token.start))
            continue
        if token.in_code:
            if cited_groups is not None and token.kind == "cite" and token.valid and token.sids:
                code_cites.append((token.sids, token.start))
            else:
                in_code.append((token.sids, token.start))
            continue
        if token.in_raw_html:
            in_raw_html += token.sids
            continue
        if token.error is not None:
            invalid.append(InvalidToken(token.text, token.line, token.error))
            continue
        warnings += [f"line {token.line}: {token.text}: {w}" for w in token.warnings]
        sids, missing = resolve_token_sids(token, sources)
        if missing:
            invalid.append(
                InvalidToken(
                    token.text,
                    token.line,
                    f"index {_join(missing)} is beyond the pool ({len(sources)} sources)",
                )
            )
        if token.kind == "usage":
            usage += sids
        elif sids:
            token_groups.append((sids, token.start))
    not_rendered: _Found = in_blocks
    groups: list[tuple[int, ...]]
    if cited_groups is None:
        groups = [sids for sids, _ in token_groups]
        placed = token_groups
    else:
        groups = [tuple(group) for group in cited_groups]
        placed, coded, uncited = _match_rendered(
            token_groups, code_cites, groups, [tuple(group) for group in code_groups]
        )
        in_code = sorted([*in_code, *coded], key=lambda found: found[1])
        not_rendered = sorted([*in_blocks, *uncited], key=lambda found: found[1])
    cite_positions = [at for sids, at in placed if any(s in sources for s in sids)]
    plan = plan_citations(groups, sources, "appearance")
    used = {sources.canonical_sid(s) for s in (*plan.order, *usage) if s in sources}
    orphaned = tuple(s for s in sources.sids if sources.canonical_sid(s) not in used)
    return AuditReport(
        cited_sids=plan.order,
        unknown_sids=_unique(
            (*plan.unknown_sids, *(s for s in usage if s not in sources))
        ),
        usage_sids=_unique(usage),
        in_code_sids=_unique(sid for sids, _ in in_code for sid in sids),
        orphaned_sids=orphaned,
        invalid_tokens=tuple(invalid),
        numbers=dict(plan.numbers),
        coverage=_coverage(units, cite_positions),
        warnings=tuple(warnings),
        in_raw_html_sids=_unique(in_raw_html),
        not_rendered_sids=_unique(sid for sids, _ in not_rendered for sid in sids),
    )


_Found = list[tuple[tuple[int, ...], int]]  # (sids, position) of scanned tokens


def _match_rendered(
    token_groups: _Found, code_cites: _Found,
    rendered: list[tuple[int, ...]], rendered_code: list[tuple[int, ...]],
) -> tuple[_Found, _Found, _Found]:
    """``(placed, in_code, not_rendered)``: the scanned citations that render cites (matched
    by their sids, as many times as render cites them; they place the coverage), those it
    leaves in code, and the others. The scanner's own reading wins where render
    agrees with it; a token it read as text that render holds in code is in code, and one it
    read in code that render cites is a citation."""
    cited, code = Counter(rendered), Counter(rendered_code)

    def take(left: Counter[tuple[int, ...]], found: _Found) -> tuple[_Found, _Found]:
        taken: _Found = []
        rest: _Found = []
        for sids, at in found:
            if left[sids] > 0:
                left[sids] -= 1
                taken.append((sids, at))
            else:
                rest.append((sids, at))
        return taken, rest

    placed, text_left = take(cited, token_groups)
    in_code, code_left = take(code, code_cites)
    placed_late, still_code = take(cited, code_left)
    coded_late, not_rendered = take(code, text_left)
    return (
        sorted([*placed, *placed_late], key=lambda found: found[1]),
        [*in_code, *still_code, *coded_late],
        not_rendered,
    )


def audit_structured(
    content: str,
    pool: object,
    *,
    content_format: Literal["json", "yaml"] = "json",
    pointer: str = DEFAULT_POINTER,
    name: str = "<content>",
) -> AuditReport:
    """Audit a JSON/YAML answer whose citations live in a ``_citations`` sidecar (``name``:
    what a parse error calls it).

    Every bad sidecar entry (not an object, a pointer that names nothing or a non-string, sids
    that are not positive integers) becomes an invalid token whose text is its JSON Pointer.
    Inline ``[[S:n]]`` tokens in strings count as citations. Coverage is the share of strings
    outside the sidecar that some entry or inline token cites.
    """
    sources = SourcePool.coerce(pool)
    try:
        document = load_structured(content, content_format, name=name)
    except SidecarError as exc:
        raise ValueError(str(exc)) from exc
    invalid: list[InvalidToken] = []
    groups: list[tuple[int, ...]] = []
    cited_paths: set[str] = set()
    for path, sids, problem in sidecar_entries(document, pointer):
        if problem:
            invalid.append(InvalidToken(path, 0, problem))
            continue
        groups.append(sids)
        if any(s in sources for s in sids):
            cited_paths.add(path)
    for citation in inline_citations(document, skip=pointer):
        groups.append(citation.sids)
        if any(s in sources for s in citation.sids):
            cited_paths.add(citation.path)
    strings = [path for path, _ in iter_strings(document) if not inside_pointer(path, pointer)]
    plan = plan_citations(groups, sources, "appearance")
    used = {sources.canonical_sid(s) for s in plan.order if s in sources}
    coverage = round(len(cited_paths & set(strings)) / len(strings), 4) if strings else 0.0
    return AuditReport(
        cited_sids=plan.order,
        unknown_sids=tuple(plan.unknown_sids),
        usage_sids=(),
        in_code_sids=(),
        orphaned_sids=tuple(s for s in sources.sids if sources.canonical_sid(s) not in used),
        invalid_tokens=tuple(invalid),
        numbers=dict(plan.numbers),
        coverage=coverage,
    )


def sidecar_entries(
    document: object, pointer: str
) -> Iterable[tuple[str, tuple[int, ...], str]]:
    """``(pointer, sids, problem)`` for each sidecar entry; ``problem`` is ``""`` when sound.

    Unlike :func:`citations.sidecar.read_sidecar` this never stops at the first bad entry: an
    audit lists them all.
    """
    try:
        entries = resolve_pointer(document, pointer)
    except SidecarError:
        return
    if not isinstance(entries, list):
        yield pointer, (), f"the sidecar is a {type(entries).__name__}, not a list of entries"
        return
    for index, entry in enumerate(entries):
        where = f"{pointer}/{index}"
        if not isinstance(entry, dict):
            yield where, (), "entry is not an object with 'path' and 'sids'"
            continue
        path, sids = entry.get("path"), entry.get("sids")
        if not isinstance(path, str):
            yield where, (), f"'path' is {path!r}, not a JSON Pointer string"
            continue
        if not isinstance(sids, list) or not sids or any(
            isinstance(s, bool) or not isinstance(s, int) or s <= 0 for s in sids
        ):
            yield path, (), f"'sids' is {sids!r}, not a non-empty list of positive integers"
            continue
        too_large = next((s for s in sids if not sid_in_range(s)), None)
        if too_large is not None:  # no token could name it: render would keep it as text
            yield path, (), f"'sids' holds {too_large}, past the largest sid ({MAX_SID})"
            continue
        try:
            parse_pointer(path)
            target = resolve_pointer(document, path)
        except SidecarError as exc:
            yield path, (), f"the pointer names nothing ({exc})"
            continue
        if not isinstance(target, str):
            yield path, (), f"the pointer names a {type(target).__name__}, not a string"
            continue
        yield path, tuple(dict.fromkeys(sids)), ""


def structured_format(name: str, text: str) -> Literal["json", "yaml"] | None:
    """``"json"``/``"yaml"`` when a file is a structured answer (by extension, else a JSON
    object at the top), ``None`` for prose (markdown or HTML)."""
    suffix = name.lower().rsplit(".", 1)[-1] if "." in name else ""
    if suffix == "json":
        return "json"
    if suffix in ("yaml", "yml"):
        return "yaml"
    if text.lstrip().startswith("{"):
        try:
            return "json" if isinstance(json.loads(text), dict) else None
        except (ValueError, RecursionError):
            return None
    return None


# --------------------------------------------------------------------------------------------
# Coverage: share of prose units (paragraphs outside lists, and list items) with a citation.


def _markdown_reading(
    content: str, dialects: frozenset[str]
) -> tuple[list[Token], list[tuple[int, int]]]:
    """The tokens and the prose units of markdown ``content`` as render reads them: the front
    matter abstract's first, from its decoded value (:func:`abstract_source`: YAML escapes
    and folded lines as the reader meets them, each token named by the line it was typed on;
    offsets below 0, ahead of the body's), then the body's. The abstract is read on its own,
    as the reader reads it: a fence left open there ends with it. The front matter is parsed
    once, here, and handed to each (80 ms a parse at the 64 KB limit)."""
    found = front_matter(content)
    tokens = scan(content, syntax="markdown", dialects=dialects, found=found)
    units = _markdown_units(content, found)
    abstract = abstract_source(content, found)
    if abstract is None:
        return tokens, units
    # led by a line break: a ``---`` block opening the abstract is no front matter of its own
    text = "\n" + abstract.text
    base = -len(text)
    own = [replace(token, start=token.start + base, end=token.end + base,
                   line=abstract.line_at(token.start - 1))
           for token in scan(text, syntax="markdown", dialects=dialects)]
    start, end = abstract.span
    body = [token for token in tokens if not start <= token.start < end]
    own_units = [(first + base, last + base) for first, last in _markdown_units(text)]
    return [*own, *body], [*own_units, *units]


def _coverage(units: list[tuple[int, int]], cite_positions: list[int]) -> float:
    if not units:
        return 0.0
    units.sort()
    starts = [start for start, _ in units]
    covered: set[int] = set()
    for pos in cite_positions:
        index = bisect.bisect_right(starts, pos) - 1
        while index >= 0:  # nested spans: the innermost holding ``pos`` starts last
            if units[index][0] <= pos < units[index][1]:
                covered.add(index)
                break
            index -= 1
    return round(len(covered) / len(units), 4)


def _markdown_units(content: str, found: FrontMatter | None = None) -> list[tuple[int, int]]:
    """Offset spans of the list items and of the paragraphs outside list items; the front
    matter is metadata, none of them (its blank-line-separated values read as paragraphs: the
    abstract's are counted from its decoded text, :func:`_markdown_reading`). ``found``: its
    front matter, when already read."""
    front = front_matter_span(content, found)
    after = front[1] if front is not None else 0
    if after:  # no markdown: a fence there would run on over the body's paragraphs
        content = blanked(content, [(0, after)])
    starts = [*line_starts(content), len(content)]

    def offset(line: int) -> int:
        return starts[min(line, len(starts) - 1)]

    units: list[tuple[int, int]] = []
    item_depth = 0
    for tok in markdown_blocks(content):
        if tok.type == "list_item_open":
            item_depth += 1
            if tok.map is not None:
                units.append((offset(tok.map[0]), offset(tok.map[1])))
        elif tok.type == "list_item_close":
            item_depth -= 1
        elif tok.type == "paragraph_open" and item_depth == 0 and tok.map is not None:
            units.append((offset(tok.map[0]), offset(tok.map[1])))
    return [unit for unit in units if unit[0] >= after]


class _Units:
    """Collects the offset spans of ``<li>`` elements and of ``<p>`` outside list items, from
    the tags :func:`~citations.codemap.html_tags` finds (as the scanner sees markup)."""

    _CLOSES_P = frozenset({
        "address", "article", "aside", "blockquote", "div", "dl", "fieldset", "footer", "form",
        "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p",
        "pre", "section", "table", "ul", "body", "html", "td", "th",
    })

    def __init__(self, length: int) -> None:
        self._length = length
        self.units: list[tuple[int, int]] = []
        self._open_p: int | None = None
        self._items: list[tuple[int, int]] = []  # (start, list depth) of open <li>
        self._depth = 0  # open <ul>/<ol>

    def _close_p(self, end: int) -> None:
        if self._open_p is not None:
            self.units.append((self._open_p, end))
            self._open_p = None

    def start(self, tag: str, here: int) -> None:
        """A start tag at offset ``here``."""
        if tag in self._CLOSES_P:
            self._close_p(here)
        if tag in ("ul", "ol"):
            self._depth += 1
        elif tag == "li":
            self._close_items(here, self._depth)
            self._items.append((here, self._depth))
        elif tag == "p" and not self._items:
            self._open_p = here

    def end(self, tag: str, here: int) -> None:
        """An end tag at offset ``here``."""
        if tag == "p" or tag in self._CLOSES_P:
            self._close_p(here)
        if tag == "li":
            self._close_items(here, self._depth)
        elif tag in ("ul", "ol") and self._depth:
            self._close_items(here, self._depth)
            self._depth -= 1

    def _close_items(self, end: int, depth: int) -> None:
        """Close the open list items at ``depth`` or deeper (``</li>`` is optional in HTML)."""
        while self._items and self._items[-1][1] >= depth:
            self.units.append((self._items.pop()[0], end))

    def finish(self) -> list[tuple[int, int]]:
        self._close_p(self._length)
        self._close_items(self._length, 0)
        return self.units


def _html_units(content: str) -> list[tuple[int, int]]:
    units = _Units(len(content))
    for tag in html_tags(content):
        if tag.kind != "end":
            units.start(tag.name, tag.start)
        if tag.kind != "start":
            units.end(tag.name, tag.start)
    return units.finish()
