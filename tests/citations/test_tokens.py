"""The citation token grammar, driven by the fixture files in ``tests/fixtures/tokens/``."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it.common.html_re import HTML_TAG_RE

import tests.hypothesis_profiles  # noqa: F401  (registers the Hypothesis profiles)
from citations.codemap import InlineHtml
from citations.streaming import StreamRewriter, rewrite_text
from citations.tokens import (
    MAX_RANGE,
    Token,
    citation_groups,
    format_token,
    match_at,
    parse_sid_spec,
    remap_tokens,
    scan,
    strip_tokens,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tokens"
_ESCAPE_RE = re.compile(r"\\u([0-9a-fA-F]{4})")
BOTH_DIALECTS = frozenset({"s_dialect", "numeric"})


@dataclass(frozen=True)
class Case:
    """One fixture case (input and expected without their final newline)."""

    title: str
    input: str
    expected: str
    line: int


def read_cases(path: Path) -> list[Case]:
    """The cases of a fixture file: ``title``, ``.``, input, ``.``, expected, ``.``."""
    lines = path.read_text(encoding="utf-8").split("\n")
    cases: list[Case] = []
    i = 0
    while i < len(lines) - 1:
        if not (lines[i].strip() and lines[i + 1] == "."):
            i += 1
            continue
        title, number, j = lines[i], i + 1, i + 2
        parts: list[list[str]] = [[], []]
        for part in parts:
            while lines[j] != ".":
                part.append(lines[j])
                j += 1
            j += 1
        given_text, expected = (_decode("\n".join(part)) for part in parts)
        cases.append(Case(title, given_text, expected, number))
        i = j
    return cases


def _decode(text: str) -> str:
    return _ESCAPE_RE.sub(lambda m: chr(int(m.group(1), 16)), text)


def _params(name: str) -> list[object]:
    cases = read_cases(FIXTURES / name)
    return [pytest.param(case, id=f"{name}:{case.line}:{case.title}") for case in cases]


def _sids(spec: str) -> tuple[int, ...]:
    if spec == "-":
        return ()
    sids: list[int] = []
    for part in spec.split(","):
        first, _, last = part.partition("-")
        sids += range(int(first), int(last or first) + 1)
    return tuple(sids)


def _check(tokens: list[Token], case: Case) -> None:
    expected = [] if case.expected == "(none)" else case.expected.split("\n")
    assert len(tokens) == len(expected), (case.title, tokens)
    for token, line in zip(tokens, expected, strict=True):
        head, _, warning = line.partition(" ~ ")
        head, _, reason = head.partition(" ! ")
        fields = head.split()
        kind, sids, form = fields[:3]
        flags = fields[3:]
        got = (token.kind, token.sids, token.form)
        assert got == (kind, _sids(sids), form), (case.title, token)
        assert token.in_code == ("code" in flags), (case.title, token)
        for flag in flags:
            if flag.startswith("@"):
                assert token.line == int(flag[1:]), (case.title, token)
        if reason:
            assert token.error is not None and reason in token.error, (case.title, token)
        else:
            assert token.error is None, (case.title, token)
        if warning:
            assert any(warning in w for w in token.warnings), (case.title, token)
        assert case.input[token.start : token.end] == token.text


@pytest.mark.parametrize("case", _params("forms.txt"))
def test_forms(case: Case) -> None:
    _check(scan(case.input), case)


@pytest.mark.parametrize("case", _params("code.txt"))
def test_markdown_code(case: Case) -> None:
    _check(scan(case.input, syntax="markdown"), case)


@pytest.mark.parametrize("case", _params("html.txt"))
def test_html(case: Case) -> None:
    _check(scan(case.input, syntax="html"), case)


@pytest.mark.parametrize("case", _params("dialects.txt"))
def test_dialects(case: Case) -> None:
    _check(scan(case.input, dialects=BOTH_DIALECTS), case)


@pytest.mark.parametrize("case", _params("strip.txt"))
def test_strip(case: Case) -> None:
    assert strip_tokens(case.input) == case.expected


@pytest.mark.parametrize("case", _params("stream.txt"))
def test_stream_fixture(case: Case) -> None:
    whole = StreamRewriter("html")
    assert whole.feed(case.input) + whole.flush() == case.expected
    by_char = StreamRewriter("html")
    assert "".join(by_char.feed(c) for c in case.input) + by_char.flush() == case.expected


def test_fixture_files_are_not_empty() -> None:
    counts = {path.name: len(read_cases(path)) for path in FIXTURES.glob("*.txt")}
    assert counts and all(counts.values()), counts
    assert sum(counts.values()) >= 70


def test_dialects_are_off_by_default() -> None:
    assert scan("Grew [S1] and [2, 3].") == []


def test_unknown_dialect_is_refused() -> None:
    with pytest.raises(ValueError, match="s_dialect"):
        scan("x", dialects=frozenset({"apa"}))


def test_match_at_reads_exactly_at_pos() -> None:
    text = "ab [[S:1,3]] [S:2] <sup class=\"cite\" data-sids=\"4\">4</sup>"
    token = match_at(text, 3)
    assert token is not None and (token.start, token.end, token.sids) == (3, 12, (1, 3))
    bare = match_at(text, 13)
    assert bare is not None and bare.form == "bare" and bare.sids == (2,)
    sup = match_at(text, text.index("<sup"))
    assert sup is not None and sup.form == "sup" and sup.end == len(text)
    assert match_at(text, 0) is None and match_at(text, len(text)) is None
    assert match_at(text, -1) is None


def test_a_sup_class_value_ends_with_its_tag() -> None:
    # The class check read a quoted value past the ">" ending the tag: with a '"' later in the
    # text, '<sup class="cite>[S:1]</sup>' was a token to the scanner but none alone, and the
    # audit and the markdown reader stopped on an AssertionError.
    text = 'A <sup class="cite>[S:1]</sup> " '
    assert [(t.form, t.sids) for t in scan(text)] == [("bare", (1,))]


def test_match_at_dialects() -> None:
    assert match_at("[S3]", 0) is None
    token = match_at("[S3]", 0, dialects=frozenset({"s_dialect"}))
    assert token is not None and token.sids == (3,)


def test_parse_sid_spec() -> None:
    assert parse_sid_spec("1, 3-5") == ((1, 3, 4, 5), None, ())
    assert parse_sid_spec("5-2")[0] == (2, 3, 4, 5)
    assert parse_sid_spec(f"1-{MAX_RANGE}")[1] is None
    assert parse_sid_spec(f"1-{MAX_RANGE + 1}")[1] is not None
    assert parse_sid_spec("S1, S:2")[0] == (1, 2)
    for bad in ("", "1,,3", "0", "-1", "abc", "1-", "99999999999999"):
        sids, error, _ = parse_sid_spec(bad)
        assert sids == () and error, bad


def test_a_digit_run_longer_than_the_largest_sid_is_too_large_without_int() -> None:
    # int() refuses more than 4,300 digits with a ValueError; the run is refused by its length
    sids, error, _ = parse_sid_spec("9" * 5000)
    assert sids == ()
    assert error == f"sid {'9' * 40}… (5000 digits) is too large (at most 2147483647)"
    assert parse_sid_spec("2-" + "9" * 5000)[1] == error
    assert parse_sid_spec("9" * 30)[1] == f"sid {'9' * 30} is too large (at most 2147483647)"
    assert parse_sid_spec("0" * 5000 + "7") == ((7,), None, ())
    assert parse_sid_spec("0" * 5000)[1] == "sid 0 is not valid: sids are positive integers"
    assert parse_sid_spec("2147483647")[0] == (2147483647,)
    assert parse_sid_spec("2147483648")[1] == "sid 2147483648 is too large (at most 2147483647)"


def test_format_token_round_trips() -> None:
    assert format_token([1, 2, 3, 7]) == "[[S:1-3,7]]"
    assert format_token([4], kind="usage") == "[[USAGE:4]]"
    assert scan(format_token([9, 2, 3, 4]))[0].sids == (9, 2, 3, 4)


def test_citation_groups_match_scan() -> None:
    text = "A [[S:1,3]] `[[S:2]]` [[USAGE:4]] [[S:0]] <sup class=\"cite\" data-sids=\"5\">x</sup>"
    assert citation_groups(text) == [(1, 3), (5,)]


def test_remap_keeps_form_and_reports_unmapped() -> None:
    text = (
        "A [[S:1, 3]] b [S:2] c <sup class='cite' data-sids='1,2'>[S:1,2]</sup> "
        "d ［［S：3］］ e [[S:2]]. `[[S:1]]` [[USAGE:1-3]]"
    )
    out, dropped = remap_tokens(text, {1: 10, 3: 11})
    assert dropped == [2]
    assert out == (
        "A [[S:10, 11]] b c <sup class='cite' data-sids='10'>[S:10]</sup> "
        "d ［［S：11］］ e. `[[S:1]]` [[USAGE:10,11]]"
    )


def test_remap_keeps_contiguous_ranges() -> None:
    assert remap_tokens("x [[S:2-4]] y", {2: 5, 3: 6, 4: 7}) == ("x [[S:5-7]] y", [])
    assert remap_tokens("x [[S:2-4]] y", {2: 7, 3: 6, 4: 5}) == ("x [[S:7,6,5]] y", [])


_TOKEN_SHAPES = st.sampled_from(
    [
        "[[S:{}]]",
        "[[USAGE:{}]]",
        "[S:{}]",
        "［［S：{}］］",
        "[\u200b[S:{}]]",
        '<sup class="cite" data-sids="{}">[S:{}]</sup>',
    ]
)
_PROSE = st.text(alphabet="ab .,\n`", max_size=8)


@st.composite
def _documents(draw: st.DrawFn) -> tuple[str, dict[int, int]]:
    sids = draw(st.lists(st.integers(1, 60), min_size=1, max_size=8, unique=True))
    size = len(sids)  # distinct targets (drawing a whole permutation of 1..199 is slow)
    targets = draw(st.lists(st.integers(1, 199), min_size=size, max_size=size, unique=True))
    mapping = dict(zip(sids, targets, strict=True))
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 6))):
        shape = draw(_TOKEN_SHAPES)
        chosen = draw(st.lists(st.sampled_from(sids), min_size=1, max_size=3, unique=True))
        spec = draw(st.sampled_from([",", ", "])).join(str(s) for s in chosen)
        parts.append(draw(_PROSE).replace("`", "") + shape.format(spec, spec))
    parts.append(draw(_PROSE).replace("`", ""))
    return "".join(parts), mapping


@given(_documents())
def test_remap_then_reverse_restores_the_text(doc: tuple[str, dict[int, int]]) -> None:
    text, mapping = doc
    remapped, dropped = remap_tokens(text, mapping)
    assert dropped == []
    reverse = {new: old for old, new in mapping.items()}
    restored, dropped_back = remap_tokens(remapped, reverse)
    assert dropped_back == []
    assert restored == text


@given(st.text(alphabet="[]［］S:1,-– \u200b<>sup\n`x", max_size=40))
def test_scan_never_crashes_and_offsets_hold(text: str) -> None:
    for token in scan(text):
        assert text[token.start : token.end] == token.text
        assert (token.error is None) == bool(token.sids) or token.kind == "usage"


@pytest.mark.parametrize("text", [">     [[S:1]]", "-     [[S:1]]", "   \t[[S:1]]"])
def test_indented_code_behind_a_container_prefix_is_code(text: str) -> None:
    (token,) = scan(text)
    assert token.in_code and token.sids == (1,)


def test_inline_raw_html_ends_where_markdown_its_tag_regex_ends() -> None:
    # The scanner finds a comment's end in linear time (markdown-it's regex is quadratic on
    # runs of "<!-- a --->"); on every short input it must agree with that regex exactly.
    pieces = ["<!--", "-", "-", ">", "a", "<", "!", " ", "--!>", "-->", "?", "]]>",
              "<![CDATA[", "<?", '"', "b=", "<a", "\n"]
    rng = random.Random(1)
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        finder = InlineHtml(text, 0, len(text))
        for i in (i for i, char in enumerate(text) if char == "<"):
            m = HTML_TAG_RE.match(text, i) if i + 2 < len(text) else None
            assert finder.end(i) == (m.end() if m else -1), (text, i)


def test_tokens_in_markdown_raw_html_markup_are_inert_everywhere() -> None:
    # The reader drops inline tags, comments and an HTML block's markup, and reads an HTML
    # block's text as HTML: no caller of the scanner may count, rewrite or strip a token in
    # markup, and every caller treats a token in an HTML block's text as a citation.
    text = (
        'a <!-- [[S:3]] --> [[S:1]] <i title="[[S:4]]">x</i>\n\n'
        '<div title="[[S:6]]">[[S:5]]<!-- [[S:7]] --><pre>[[S:8]]</pre></div>\n'
    )
    tokens = scan(text)
    assert [(t.sids, t.in_raw_html, t.in_code) for t in tokens] == [
        ((3,), True, False), ((1,), False, False), ((4,), True, False), ((6,), True, False),
        ((5,), False, False), ((7,), True, False), ((8,), False, True),
    ]
    assert citation_groups(text) == [(1,), (5,)]
    assert strip_tokens(text) == text.replace(" [[S:1]]", "").replace("[[S:5]]", "")
    sid_map = {1: 7, 5: 9, 3: 2, 4: 2, 6: 2, 7: 2, 8: 2}
    assert remap_tokens(text, sid_map)[0] == text.replace("S:1", "S:7").replace("S:5", "S:9")
    assert rewrite_text(text, "markdown")[0] == (
        text.replace("[[S:1]]", "^1^").replace("[[S:5]]", "^5^")
    )
