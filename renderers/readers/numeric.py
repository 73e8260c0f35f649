"""The numeric dialect: ``[2]`` means the pool's second source.

The mapping to sids happens before a reader runs (it needs the pool, which readers never see),
so the document model only ever holds sids: every ``[N]`` becomes ``[[S:sid]]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from citations.tokens import scan
from renderers.diagnostics import Code, Diagnostic

if TYPE_CHECKING:
    from citations.pool import SourcePool

DIALECT = "numeric"


def map_numeric_citations(
    text: str, content_format: Literal["markdown", "html"], pool: SourcePool
) -> tuple[str, list[Diagnostic]]:
    """Rewrite numeric-dialect citations (``[2]`` = the pool's 2nd source) as ``[[S:sid]]``.

    Citations inside code stay verbatim. An index beyond the pool is left as written (it reads
    as plain text) and reported.
    """
    pieces: list[str] = []
    diagnostics: list[Diagnostic] = []
    last = 0
    for token in scan(text, syntax=content_format, dialects=frozenset({DIALECT})):
        if token.form != DIALECT or token.inert or token.error or not token.sids:
            continue
        sources = [pool.by_index(index) for index in token.sids]
        if any(source is None for source in sources):
            diagnostics.append(
                Diagnostic(
                    Code.NUMERIC_OUT_OF_RANGE,
                    f"line {token.line}: numeric citation {token.text!r} points past the "
                    f"sources pool ({len(pool)} sources); left as text",
                    line=token.line,
                )
            )
            continue
        sids = ",".join(str(source.sid) for source in sources if source is not None)
        pieces += [text[last : token.start], f"[[S:{sids}]]"]
        last = token.end
    pieces.append(text[last:])
    return "".join(pieces), diagnostics
