"""Fuzz the citation grammar: scan, parse, strip, remap and audit on hostile text.

Properties: no exception except the documented error types; tokens are ordered, do not
overlap and point at their own text; a valid token never holds more sids than the grammar
allows and a range is never expanded past its limit.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tests.hypothesis_profiles  # noqa: F401  (registers the Hypothesis profiles)
from citations.audit import audit
from citations.pool import SourcePool
from citations.tokens import (
    MAX_RANGE,
    MAX_SIDS_PER_TOKEN,
    match_at,
    parse_sid_spec,
    remap_tokens,
    scan,
    strip_tokens,
)
from tests.fuzz_strategies import DOCUMENTED_ERRORS, FUZZ_POOL, dialect_sets, heavy, token_text

#: Fuzz runs take seconds per property: `make test`, not `make test-fast`.
pytestmark = pytest.mark.slow

SYNTAXES = st.sampled_from(["markdown", "html", "text"])
POOL = SourcePool.from_rows(FUZZ_POOL)


@given(text=token_text, syntax=SYNTAXES, dialects=dialect_sets)
def test_fuzz_scan_tokens_are_ordered_and_exact(
    text: str, syntax: str, dialects: frozenset[str]
) -> None:
    tokens = scan(text, syntax=syntax, dialects=dialects)  # type: ignore[arg-type]
    end = 0
    for token in tokens:
        assert end <= token.start < token.end <= len(text)
        assert text[token.start : token.end] == token.text
        assert 1 <= token.line <= text.count("\n", 0, token.start) + text.count("\r") + 1
        if token.error is None:
            assert token.sids and all(sid >= 1 for sid in token.sids)
            assert len(token.sids) <= MAX_SIDS_PER_TOKEN
        else:
            assert token.sids == ()
        end = token.end


@given(text=token_text, pos=st.integers(min_value=-2, max_value=64), dialects=dialect_sets)
def test_fuzz_match_at_reads_exactly_at_pos(text: str, pos: int, dialects: frozenset[str]) -> None:
    token = match_at(text, pos, dialects=dialects)
    if token is not None:
        assert token.start == pos and text[pos : token.end] == token.text


@given(spec=st.text(alphabet="0123456789,-–—; sS:\u200b\uff11", max_size=40))
def test_fuzz_parse_sid_spec_never_expands_a_wide_range(spec: str) -> None:
    sids, error, warnings = parse_sid_spec(spec)
    if error is None:
        assert sids and all(sid >= 1 for sid in sids)
        assert len(sids) <= MAX_SIDS_PER_TOKEN
    else:
        assert sids == ()
    assert all(isinstance(w, str) for w in warnings)
    assert MAX_RANGE == 1000


@given(text=token_text, syntax=SYNTAXES)
def test_fuzz_strip_and_remap_only_raise_documented_errors(text: str, syntax: str) -> None:
    try:
        stripped = strip_tokens(text, syntax=syntax)  # type: ignore[arg-type]
        assert isinstance(stripped, str)
        remapped, dropped = remap_tokens(text, {1: 7, 2: 2, 3: 1})
        assert isinstance(remapped, str) and all(isinstance(s, int) for s in dropped)
    except DOCUMENTED_ERRORS:
        pass


@given(text=token_text, content_format=st.sampled_from(["markdown", "html"]))
def test_fuzz_audit_reports_without_crashing(text: str, content_format: str) -> None:
    try:
        report = audit(text, POOL, content_format=content_format)  # type: ignore[arg-type]
    except DOCUMENTED_ERRORS:
        return
    data = report.to_dict()
    assert set(data.get("cited_sids", [])) <= set(POOL.sids)
    assert isinstance(report.format_text(), str)


@heavy(3)
@given(text=token_text, content_format=st.sampled_from(["markdown", "html"]),
       dialects=dialect_sets)
def test_fuzz_render_audit_reports_without_crashing(
    text: str, content_format: str, dialects: frozenset[str]
) -> None:
    """The audit every surface runs reads the text as render does: on any text it reports, or
    raises a documented error, and counts no token twice (cited and not rendered)."""
    from renderers.audit import audit as render_audit

    try:
        report = render_audit(text, FUZZ_POOL, content_format=content_format, dialects=dialects)
    except DOCUMENTED_ERRORS:
        return
    assert set(report.cited_sids) <= set(POOL.sids) | set(report.unknown_sids)
    assert report.numbers.keys() <= set(report.cited_sids)
    assert isinstance(report.format_text(), str)
