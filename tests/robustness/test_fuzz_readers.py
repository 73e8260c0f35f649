"""Fuzz both readers (and the byte decoder) on hostile markdown, HTML and raw bytes.

Properties: no exception except the documented error types; every link the reader keeps is
http, https, mailto or an in-document fragment; image sources never carry a script scheme;
every Cite holds positive sids.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tests.hypothesis_profiles  # noqa: F401  (registers the Hypothesis profiles)
from citations.chars import UNSAFE_CHARS, clean_text
from renderers.api import decode_content
from renderers.document import Cite, Document, Image, Link, iter_inlines
from renderers.errors import InputError
from renderers.readers.detect import detect_format
from renderers.readers.html import read_html
from renderers.readers.markdown import read_markdown
from tests.fuzz_strategies import DOCUMENTED_ERRORS, dialect_sets, hostile_html, hostile_markdown

#: Fuzz runs take seconds per property: `make test`, not `make test-fast`.
pytestmark = pytest.mark.slow

SAFE_PREFIXES = ("http://", "https://", "mailto:", "#")


def _check(document: Document) -> None:
    for node in iter_inlines(document.blocks):
        if isinstance(node, Link):
            assert node.url == "" or node.url.lower().startswith(SAFE_PREFIXES), node.url
        elif isinstance(node, Image):
            assert not node.src.lower().lstrip().startswith(("javascript:", "vbscript:")), node.src
        elif isinstance(node, Cite):
            assert node.sids and all(sid >= 1 for sid in node.sids)


@given(text=hostile_markdown, dialects=dialect_sets)
def test_fuzz_read_markdown(text: str, dialects: frozenset[str]) -> None:
    try:
        document = read_markdown(text, dialects=dialects)
    except DOCUMENTED_ERRORS:
        return
    _check(document)


@given(text=hostile_html, dialects=dialect_sets)
def test_fuzz_read_html(text: str, dialects: frozenset[str]) -> None:
    try:
        document = read_html(text, dialects=dialects)
    except DOCUMENTED_ERRORS:
        return
    _check(document)


@given(text=st.one_of(hostile_markdown, hostile_html))
def test_fuzz_detect_format_always_answers(text: str) -> None:
    assert detect_format(text) in ("markdown", "html")


@given(data=st.binary(max_size=64))
def test_fuzz_decode_content_accepts_utf8_or_names_the_byte(data: bytes) -> None:
    try:
        text = decode_content(data)
    except InputError as exc:
        assert "not valid UTF-8 (byte " in str(exc)
        return
    assert text == clean_text(data.decode("utf-8-sig"))
    assert not UNSAFE_CHARS.search(text)
