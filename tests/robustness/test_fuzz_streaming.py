"""Fuzz the streaming rewriter on hostile text split at random points.

Properties: no exception; for every split the concatenated output equals the output of the
unsplit text, which is the batch rewrite (code spans and blocks included), and the sids it
reports are the same.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tests.hypothesis_profiles  # noqa: F401  (registers the Hypothesis profiles)
from citations.streaming import StreamRewriter, rewrite_text
from tests.fuzz_strategies import dialect_sets, token_text

#: Fuzz runs take seconds per property: `make test`, not `make test-fast`.
pytestmark = pytest.mark.slow


def _chunks(text: str, cuts: list[int]) -> list[str]:
    points = sorted({min(max(c, 0), len(text)) for c in cuts})
    edges = [0, *points, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(edges)]


def _run(
    chunks: list[str], render: str, dialects: frozenset[str]
) -> tuple[str, list[int], list[int]]:
    """Output, cited sids and USAGE sids of streaming ``chunks``."""
    rewriter = StreamRewriter(render, dialects=dialects)  # type: ignore[arg-type]
    out = "".join(rewriter.feed(chunk) for chunk in chunks) + rewriter.flush()
    return out, list(rewriter.cited_sids), list(rewriter.usage_sids)


@given(
    text=token_text,
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
    render=st.sampled_from(["markdown", "html"]),
    dialects=dialect_sets,
)
def test_fuzz_stream_split_anywhere_equals_whole(
    text: str, cuts: list[int], render: str, dialects: frozenset[str]
) -> None:
    whole = _run([text], render, dialects)
    assert whole[0] == rewrite_text(text, render, dialects=dialects)[0]  # type: ignore[arg-type]
    assert _run(_chunks(text, cuts), render, dialects) == whole
    assert _run(list(text), render, dialects) == whole  # one character at a time
