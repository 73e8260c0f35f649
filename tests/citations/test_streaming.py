"""StreamRewriter: any chunking of any input gives exactly the unsplit output."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tests.hypothesis_profiles  # noqa: F401  (registers the Hypothesis profiles)
from citations.streaming import StreamRewriter, render_html, render_markdown, rewrite_text
from citations.tokens import Token

_PIECES = st.sampled_from(
    [
        "[[S:1]]", "[[S:1,3]]", "[[ s : 2-4 ]]", "[[USAGE:5]]", "[[S:0]]", "[[S:abc]]",
        "［［S：6］］", "[\u200b[S:7\u200b]]", "[S:8]", "[S:9](x)", "[[S:1", "[[", "[S", "<sup",
        '<sup class="cite" data-sids="2">[S:2]</sup>', "<sup>x</sup>", "```", "```py\n",
        "~~~\n", "\n```\n", "`", "``", "    ", "\n    ", "- ", "> ",
        "np.array([[1, 2], [3, 4]])", "[S1]", "[2, 3]", " ", "  ",
        "\n", "\n\n", "word", ".", ",", "(", "]", "]]", "：", "\u200b",
    ]
)


@st.composite
def _stream(draw: st.DrawFn) -> tuple[str, list[str]]:
    text = "".join(draw(st.lists(_PIECES, max_size=25)))
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=10)))
    bounds = [0, *cuts, len(text)]
    return text, [text[a:b] for a, b in pairwise(bounds)]


def _run(chunks: list[str], **kwargs: object) -> tuple[str, StreamRewriter]:
    rewriter = StreamRewriter("html", **kwargs)  # type: ignore[arg-type]
    out = "".join(rewriter.feed(chunk) for chunk in chunks)
    return out + rewriter.flush(), rewriter


@given(_stream(), st.sampled_from([frozenset(), frozenset({"s_dialect", "numeric"})]))
def test_streaming_equals_unsplit(stream: tuple[str, list[str]], dialects: frozenset[str]) -> None:
    text, chunks = stream
    whole, expected = _run([text], dialects=dialects)
    split, seen = _run(chunks, dialects=dialects)
    assert split == whole == rewrite_text(text, "html", dialects=dialects)[0]
    assert seen.cited_sids == expected.cited_sids
    assert seen.usage_sids == expected.usage_sids
    assert [t.text for t in seen.invalid_tokens] == [t.text for t in expected.invalid_tokens]


@given(_stream())
def test_one_character_chunks(stream: tuple[str, list[str]]) -> None:
    text, _ = stream
    assert _run(list(text))[0] == _run([text])[0]


def test_nothing_is_lost_without_tokens() -> None:
    text = "plain [text] with <b>tags</b> and `code` [[S:1"
    assert _run([text[:7], text[7:]])[0] == text


def test_a_section_is_released_when_the_next_one_starts() -> None:
    rewriter = StreamRewriter("html")
    assert rewriter.feed("Grew [[S:1") == ""
    assert rewriter.feed(",3]] fast.\n\n") == ""  # the next block may still be a lazy line
    released = rewriter.feed("Next [[S:2")
    assert released == 'Grew <sup class="cite" data-sids="1,3">[S:1,3]</sup> fast.\n\n'
    assert rewriter.feed("]]") + rewriter.flush() == (
        'Next <sup class="cite" data-sids="2">[S:2]</sup>'
    )
    assert rewriter.cited_sids == [1, 3, 2]


def test_a_token_in_a_code_span_is_never_rewritten_even_when_it_closes_late() -> None:
    text = "Run `x = [[S:1]]\nprint(x)` now [[S:2]].\n\nDone [[S:3]]."
    whole = rewrite_text(text, "html")[0]
    assert "`x = [[S:1]]\nprint(x)`" in whole
    for size in (1, 3, 7):
        chunks = [text[i : i + size] for i in range(0, len(text), size)]
        assert _run(chunks)[0] == whole
    _, rewriter = _run([text])
    assert rewriter.cited_sids == [2, 3]


def test_an_open_fence_holds_its_section_until_it_closes() -> None:
    rewriter = StreamRewriter("html")
    assert rewriter.feed("```\n[[S:1]]\n\nstill code [[S:2]]\n\n") == ""
    assert rewriter.feed("```\n\nAfter [[S:3]].").startswith("```\n[[S:1]]")
    assert rewriter.flush().startswith("After <sup")
    assert rewriter.cited_sids == [3]


def test_records_sids_and_invalid_tokens() -> None:
    out, rewriter = _run(["A [[S:2]] [[USAGE:4,5]] [[S:0]] [[S:2,3]]\n"])
    assert rewriter.cited_sids == [2, 3]
    assert rewriter.usage_sids == [4, 5]
    assert [(t.text, t.line, t.start) for t in rewriter.invalid_tokens] == [("[[S:0]]", 1, 24)]
    assert "[[S:0]]" in out and "USAGE" not in out


def test_markdown_renderer_and_custom_callable() -> None:
    out, _ = _run(["x [[S:1,3]]."])
    token = Token("cite", (1, 3), 0, 9, "[[S:1,3]]", 1, "bracket")
    assert render_markdown(token) == "^1,3^"
    assert render_html(token) in out
    custom = StreamRewriter(lambda t: f"[{len(t.sids)}]")
    assert custom.feed("a [[S:1-3]] b") + custom.flush() == "a [3] b"


def test_code_fence_is_untouched_until_closed() -> None:
    text = "````md\n[[S:1]]\n```\n[[S:2]]\n````\n[[S:3]]"
    out, rewriter = _run([text])
    assert out.startswith("````md\n[[S:1]]\n```\n[[S:2]]\n````\n<sup")
    assert rewriter.cited_sids == [3]


def test_unknown_renderer_is_refused() -> None:
    with pytest.raises(ValueError, match="markdown"):
        StreamRewriter("latex")  # type: ignore[arg-type]
