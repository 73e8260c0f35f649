"""Prompt text built from a pool: the SOURCES POOL block, citation guidelines, the sources digest.

Only the fields meant for a model are shown: hosting fields (``rn``, ``hosted_uri``, ``key``)
and every other extra stay out, binary payloads appear as ``<base64>``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from citations.links import source_domain
from citations.model import Source
from citations.pool import SourcePool

GuidelineFormat = Literal["markdown", "html", "json", "yaml"]
ELLIPSIS = "…"
BINARY_PLACEHOLDER = "<base64>"

_SPACE = re.compile(r"\s+")
_BASE64 = re.compile(r"(?:data:[\w.+-]+/[\w.+-]+;base64,)?[A-Za-z0-9+/_-]{40,}={0,2}")
_TEXTUAL_MIMES = ("text/", "application/json", "application/xml", "application/yaml",
                  "application/x-yaml", "application/javascript", "application/xhtml+xml")


def truncate(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, ending in ``…`` when cut (at a word edge
    when one is close)."""
    if len(text) <= limit:
        return text
    if limit <= 1:
        return ELLIPSIS[:limit]
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= (limit - 1) * 0.8:
        cut = cut[:space]
    return cut.rstrip() + ELLIPSIS


def one_line(text: str) -> str:
    """White space (newlines included) collapsed to single spaces, ends stripped."""
    return _SPACE.sub(" ", text).strip()


def is_binary(source: Source) -> bool:
    """True when the source's text is a binary payload (base64) rather than readable text."""
    body = (source.content or source.text).strip()
    if not body:
        return False
    mime = source.mime.split(";", 1)[0].strip().lower()
    if mime and not mime.startswith(_TEXTUAL_MIMES):
        return True
    return _BASE64.fullmatch(body) is not None


def source_label(source: Source) -> str:
    """Where a source lives, as shown to a model: the domain, else the artifact path."""
    if source.url:
        return source_domain(source) or one_line(source.url)
    return source.artifact_path or source.physical_path or "(no location)"


def _body(source: Source) -> str:
    """The readable text of a source (``content`` preferred over ``text``), one line."""
    if is_binary(source):
        return BINARY_PLACEHOLDER
    return one_line(source.content or source.text)


def _selected(pool: SourcePool, sids: Iterable[int] | None) -> list[Source]:
    if sids is None:
        return list(pool)
    wanted = dict.fromkeys(sids)
    return [s for s in (pool.get(sid) for sid in wanted) if s is not None]


def sources_prompt_block(
    pool: SourcePool,
    *,
    sids: Iterable[int] | None = None,
    title_chars: int = 90,
    snippet_chars: int = 0,
    heading: str = "SOURCES POOL",
) -> str:
    """The SOURCES POOL block: a ``SOURCES POOL (N sources):`` header, then one
    ``[S:1] example.com | "Title…"`` line per source.

    File sources show their artifact path instead of a domain; with ``snippet_chars > 0``
    each line is followed by an indented snippet (binary payloads as ``<base64>``).
    ``sids`` limits (and orders) the sources shown.
    """
    chosen = _selected(pool, sids)
    count = f"{len(chosen)} source" + ("" if len(chosen) == 1 else "s")
    lines = [f"{heading} ({count}):"]
    for source in chosen:
        title = truncate(one_line(source.title), title_chars).replace('"', "'")
        line = f"[S:{source.sid}] {source_label(source)}"
        if title:
            line += f' | "{title}"'
        if source.date:
            line += f" | {source.date}"
        lines.append(line)
        if snippet_chars > 0:
            body = _body(source)
            if body:
                lines.append("    " + truncate(body, snippet_chars))
    if len(lines) == 1:
        lines.append("(empty: cite nothing)")
    return "\n".join(lines) + "\n"


_GUIDELINES: dict[str, str] = {
    "markdown": """\
CITATIONS (markdown):
- Cite the SOURCES POOL right after each claim that relies on it: [[S:1]].
- Several sources: [[S:1,3]]; a range: [[S:2-4]]; mixed: [[S:1, 3-5]].
- Use only sids listed in the SOURCES POOL; never invent one.
- Never put citations inside code spans or code blocks; they are left as code there.
- Sources you relied on without citing a sentence: [[USAGE:2,5]] anywhere (it is not shown).
- Do not write a Sources or References section: it is generated from the citations.
""",
    "html": """\
CITATIONS (HTML):
- Cite the SOURCES POOL right after each claim with a superscript:
  <sup class="cite" data-sids="1">[S:1]</sup>
- Several sources: <sup class="cite" data-sids="1,3">[S:1,3]</sup>; ranges as 2-4.
- Use only sids listed in the SOURCES POOL; never invent one.
- Never put citations inside <pre> or <code>; they are left as code there.
- Sources you relied on without citing a sentence: [[USAGE:2,5]] anywhere (it is not shown).
- Do not write a Sources or References section: it is generated from the citations.
""",
    "json": """\
CITATIONS (JSON):
- Do not put citation tokens inside string values.
- Add one top-level key "_citations": a list of {"path": <JSON Pointer>, "sids": [..]}, where
  the path (RFC 6901, e.g. "/sections/0/summary") points at the string the sources support.
- Example: {"summary": "...", "_citations": [{"path": "/summary", "sids": [1, 3]}]}
- Use only sids listed in the SOURCES POOL; every path must point at an existing string.
""",
    "yaml": """\
CITATIONS (YAML):
- Do not put citation tokens inside string values.
- Add one top-level key _citations: a list of {path: <JSON Pointer>, sids: [..]}, where the
  path (RFC 6901, e.g. /sections/0/summary) points at the string the sources support.
- Example:
    summary: ...
    _citations:
      - path: /summary
        sids: [1, 3]
- Use only sids listed in the SOURCES POOL; every path must point at an existing string.
""",
}


def citation_guidelines(fmt: GuidelineFormat) -> str:
    """Instructions for a model on how to cite in output format ``fmt``."""
    try:
        return _GUIDELINES[fmt]
    except KeyError:
        accepted = ", ".join(repr(k) for k in _GUIDELINES)
        message = f"citation guidelines for {fmt!r}: accepted formats are {accepted}"
        raise ValueError(message) from None


@dataclass(frozen=True)
class Digest:
    """A budgeted digest of a pool's texts for a generator prompt.

    ``sid_map`` maps the numbers shown in ``text`` to pool sids (the identity unless the digest
    was renumbered; feed it to :func:`citations.tokens.remap_tokens` to turn the generator's
    citations back into pool sids); ``allocations`` maps each sid to the excerpt characters it
    received.
    """

    text: str
    sid_map: dict[int, int]
    allocations: dict[int, int]


def allocate(lengths: dict[int, int], budget: int) -> dict[int, int]:
    """Split ``budget`` characters between sources of the given ``lengths``, fairly.

    Every source gets an equal share; a source shorter than its share takes only what it needs
    and the rest is shared among the others (water-filling). Deterministic; ties go to the
    lower sid.
    """
    shares: dict[int, int] = {}
    remaining = max(budget, 0)
    ordered = sorted(lengths.items(), key=lambda kv: (kv[1], kv[0]))
    for position, (sid, length) in enumerate(ordered):
        share, extra = divmod(remaining, len(ordered) - position)
        if length <= share:
            shares[sid] = length
            remaining -= length
            continue
        for index, (rest_sid, _length) in enumerate(sorted(ordered[position:])):
            shares[rest_sid] = share + (1 if index < extra else 0)
        break
    return shares


def sources_digest(
    pool: SourcePool,
    budget_chars: int,
    *,
    sids: Iterable[int] | None = None,
    renumber: bool = False,
) -> Digest:
    """A digest of the sources' texts (``content`` preferred over ``text``) within a budget.

    ``budget_chars`` bounds the excerpt characters in total; each source's header line is not
    counted. With ``renumber=True`` sources are shown as 1..n and ``sid_map`` maps back.
    """
    sources = _selected(pool, sids)
    bodies = {s.sid: _body(s) for s in sources}
    readable = {sid: len(b) for sid, b in bodies.items() if b and b != BINARY_PLACEHOLDER}
    shares = allocate(readable, budget_chars)
    blocks: list[str] = []
    sid_map: dict[int, int] = {}
    allocations: dict[int, int] = {}
    for index, source in enumerate(sources, start=1):
        number = index if renumber else source.sid
        sid_map[number] = source.sid
        header = f"[S:{number}] {truncate(one_line(source.title), 120) or '(untitled)'}"
        header += f" ({source_label(source)})"
        body = bodies[source.sid]
        excerpt = truncate(body, shares[source.sid]) if source.sid in shares else body
        allocations[source.sid] = len(excerpt) if source.sid in shares else 0
        blocks.append(header + ("\n" + excerpt if excerpt else ""))
    return Digest("\n\n".join(blocks) + ("\n" if blocks else ""), sid_map, allocations)
