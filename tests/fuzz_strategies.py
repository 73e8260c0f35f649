"""Hypothesis strategies for the fuzz tests: hostile citation text, markdown, HTML, IR documents.

Test modules import :mod:`hypothesis_profiles` first (profiles "ci" and "fuzz");
:func:`heavy` scales the example count down for expensive targets (PDF, DOCX, PPTX);
:func:`examples` gives a property test elsewhere its own count, scaled alike, and puts it in
``make fuzz``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from hypothesis import settings
from hypothesis import strategies as st

from citations.errors import CitationError
from renderers.document import (
    Block,
    BlockQuote,
    BulletList,
    Cite,
    Code,
    CodeBlock,
    Document,
    Emph,
    Figure,
    FootnoteDef,
    FootnoteRef,
    Heading,
    Image,
    Inline,
    LineBreak,
    Link,
    ListItem,
    OrderedList,
    Paragraph,
    RawBlock,
    RawInline,
    SoftBreak,
    Strike,
    Strong,
    Styled,
    Table,
    TableCell,
    Text,
    ThematicBreak,
)
from renderers.errors import RenderError
from tests.hypothesis_profiles import CI_EXAMPLES

#: The only exceptions any public entry point may raise on bad input.
DOCUMENTED_ERRORS: tuple[type[Exception], ...] = (RenderError, CitationError)


_Test = TypeVar("_Test", bound=Callable[..., Any])


def scaled_examples(ci: int, active: settings | None = None) -> int:
    """A test's example count under the ``active`` profile (the loaded one by default): ``ci``,
    its count under "ci", scaled as that profile scales "ci"'s (x33 under "fuzz"); at least 5."""
    active = active if active is not None else settings.default
    assert active is not None
    return max(5, ci * active.max_examples // CI_EXAMPLES)


def heavy(divisor: int = 6) -> settings:
    """Settings for expensive targets: the active profile's example count divided by ``divisor``."""
    return settings(max_examples=scaled_examples(CI_EXAMPLES // divisor))


def examples(ci: int, **options: Any) -> Callable[[_Test], _Test]:
    """Settings (``options`` besides the profile's) of a property test outside the fuzz
    modules, tuned to ``ci`` examples under "ci" and scaled with the active profile
    (:func:`scaled_examples`): the fast loop keeps its count, ``make fuzz`` runs more. The
    test is also marked ``fuzz``, which ``make fuzz`` selects, so that run reaches it."""

    def tuned(test: _Test) -> _Test:
        tuned_test: _Test = settings(max_examples=scaled_examples(ci), **options)(test)
        return pytest.mark.fuzz(tuned_test)

    return tuned


TOKEN_PIECES = [
    "[[S:1]]", "[[S:2,3]]", "[[S:1-3, 5]]", "[[s: 2 ]]", "[[S:5-2]]", "[[S:0]]", "[[S:-1]]",
    "[[S:1-1000000]]", "[[S:]]", "[[S:1,,2]]", "[[S:99]]", "[[S:4294967296]]", "[[USAGE:1,3]]",
    "[[usage:2]]", "\uff3b\uff3bS\uff1a1\uff3d\uff3d", "[[S:\u200b1]]", "[[S:1\u20132]]", "[S:1,3]",
    "[S1]", "[S1, S3]", "[1]", "[2, 3]", '<sup class="cite" data-sids="1,3">[S:1,3]</sup>',
    "<sup class='cite' data-sids='2'>[[S:2]]</sup>", '<sup class="cite" data-sids="x">?</sup>',
    "[[S:1", "S:1]]", "[[", "]]", "np.array([[1, 2], [3, 4]])",
]
MARKUP_PIECES = [
    "\n", "\n\n", " ", "*", "_", "**", "~~", "`", "``", "```\n", "```python\n", "~~~\n", "    ",
    "> ", "- ", "* ", "1. ", "- [ ] ", "# ", "## ", "---\n", "| a | b |\n|---|---|\n", "| ",
    "[x](https://example.org)", "[js](javascript:alert(1))", "<https://e.org>", "![i](ok.png)",
    "![r](http://127.0.0.1:9/x.png)", "[^1]", "[^1]: note\n", "<b>", "</b>", "<p>", "</p>",
    "<ul><li>", "</li></ul>", "<table><tr><td>", "</td></tr></table>", "<pre><code>",
    "</code></pre>", "<script>alert(1)</script>", '<img src="x" onerror="alert(1)">',
    '<a href="javascript:x">a</a>', "<br>", "&amp;", "&#0;", "&lt;", "\\", "\t", "\r\n", "\x00",
    "\x0b", "\u202e", "\ufeff", "\U0001f600", "\u0645\u0631\u062d\u0628\u0627", "\u4e2d\u6587",
]

token_text = st.lists(
    st.one_of(st.sampled_from(TOKEN_PIECES), st.sampled_from(MARKUP_PIECES), st.text(max_size=8)),
    max_size=30,
).map("".join)
"""Text dense in citation tokens, near-tokens and markup."""


def _html_document(parts: list[str]) -> str:
    return "<html><body>" + "".join(parts) + "</body></html>"


hostile_markdown = token_text
hostile_html = st.lists(
    st.one_of(st.sampled_from(TOKEN_PIECES), st.sampled_from(MARKUP_PIECES), st.text(max_size=8)),
    max_size=30,
).map(_html_document)

dialect_sets = st.sampled_from(
    [frozenset(), frozenset({"s_dialect"}), frozenset({"numeric"}),
     frozenset({"s_dialect", "numeric"})]
)

# ------------------------------------------------------------------ IR documents

#: IR text: any character the readers let through (they drop controls and lone surrogates).
_words = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufffe\uffff")
    | st.sampled_from("\t\n"),
    max_size=12,
)
_urls = st.sampled_from(["https://example.org/a", "mailto:a@example.org", "#sec", "javascript:x",
                         "file:///etc/passwd", "", "http://[broken", "https://e.org/\u00e9?q=1&x=<"])
_image_srcs = st.sampled_from(["ok.png", "missing.png", "../secret.png", "file:///etc/passwd",
                               "http://127.0.0.1:9/x.png", "data:image/png;base64,AAAA", ""])
_sids = st.lists(st.integers(min_value=1, max_value=6), min_size=1, max_size=4).map(tuple)
_labels = st.sampled_from(["1", "a", "note", "x y", "[^]"])

_leaf_inlines: st.SearchStrategy[Inline] = st.one_of(
    _words.map(Text),
    _words.map(Code),
    st.builds(Image, src=_image_srcs, alt=_words, title=_words),
    st.just(LineBreak()),
    st.just(SoftBreak()),
    _words.map(RawInline),
    _labels.map(FootnoteRef),
    _sids.map(Cite),
)


def _extend_inlines(children: st.SearchStrategy[Inline]) -> st.SearchStrategy[Inline]:
    kids = st.lists(children, max_size=3).map(tuple)
    return st.one_of(
        kids.map(Emph), kids.map(Strong), kids.map(Strike),
        kids.map(lambda c: Styled("sub", c)), kids.map(lambda c: Styled("abbr", c, "a <b>")),
        st.builds(Link, url=_urls, children=kids, title=_words),
    )


inlines: st.SearchStrategy[tuple[Inline, ...]] = st.lists(
    st.recursive(_leaf_inlines, _extend_inlines, max_leaves=8), max_size=6
).map(tuple)


_row = st.lists(inlines.map(TableCell), max_size=4).map(tuple)  # ragged rows on purpose
tables: st.SearchStrategy[Table] = st.builds(
    Table,
    header=_row,
    rows=st.lists(_row, max_size=4).map(tuple),
    aligns=st.lists(st.sampled_from(["left", "center", "right", "default"]), max_size=4).map(tuple),
    caption=inlines,
)


_leaf_blocks: st.SearchStrategy[Block] = st.one_of(
    st.builds(Heading, level=st.integers(1, 6), children=inlines, id=st.sampled_from(["", "x"])),
    inlines.map(Paragraph),
    st.builds(CodeBlock, text=_words, language=st.sampled_from(["", "python", "<x>"])),
    st.just(ThematicBreak()),
    st.builds(RawBlock, text=_words),
    st.builds(Figure, image=st.builds(Image, src=_image_srcs, alt=_words), caption=inlines),
    tables,
)


def _extend_blocks(children: st.SearchStrategy[Block]) -> st.SearchStrategy[Block]:
    blocks = st.lists(children, min_size=0, max_size=3).map(tuple)
    items = st.lists(
        st.builds(ListItem, blocks=blocks, checked=st.sampled_from([None, True, False])),
        min_size=1, max_size=3,
    ).map(tuple)
    return st.one_of(
        st.builds(BulletList, items=items, tight=st.booleans()),
        st.builds(OrderedList, items=items, start=st.integers(0, 10**9), tight=st.booleans()),
        blocks.map(BlockQuote),
        st.builds(FootnoteDef, label=_labels, blocks=blocks),
    )


documents: st.SearchStrategy[Document] = st.builds(
    Document,
    blocks=st.lists(st.recursive(_leaf_blocks, _extend_blocks, max_leaves=10), max_size=6)
    .map(tuple),
    title=_words,
    usage_sids=st.lists(st.integers(1, 8), max_size=2).map(tuple),
)
"""Arbitrary IR documents: ragged tables, unsafe URLs, unknown sids, deep-ish nesting."""

FUZZ_POOL: list[dict[str, Any]] = [
    {"sid": 1, "title": "Plain source", "url": "https://example.org/1"},
    {"sid": 2, "title": "<script>alert(2)</script> & co", "url": "javascript:alert(2)"},
    {"sid": 3, "title": "Same URL as 1", "url": "https://EXAMPLE.org/1?utm_source=x"},
    {"sid": 4, "title": "A file", "physical_path": "/etc/passwd", "artifact_path": "../x.pdf"},
    {"sid": 5, "title": "\u0645\u0635\u062f\u0631 \u4e2d\u6587 \U0001f600", "url": "https://e.org/5"},
]
