"""The bidi pass's bracket pairs and sides (renderers/writers/html/bidi.py) against a plain
reading of UAX #9 kept here: BD16's stack read character by character, and each pair's
contents read again for rule N0. The pass finds brackets by searching the line's codes and
takes N0's counts once a line (62 nested pairs around 100,000 characters cost it the line's
length once per level before); these tests hold it to the same pairs and sides."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import tests.hypothesis_profiles  # noqa: F401  (profiles before strategies)
from renderers.text import Direction
from renderers.writers.html.bidi import Bracket, _bracket, _bracket_pairs, _sides
from tests.fuzz_strategies import examples

#: A line's codes before the W rules: strong classes (R, A, L), numbers (E, and N: Arabic),
#: terminators (T), neutrals (n), objects that end the paragraph (|), and brackets of four
#: kinds, U+2329 and U+3009 the same (canonical equivalents), U+298D–U+2990 crossed.
CODES = "RANLETn|" + "()[]{}" + "\u2329\u3009\u3008\u232a" + "\u298d\u298e\u298f\u2990"
DEPTH = 63


def reference_pairs(line: str) -> list[tuple[int, int]]:
    """BD16 as written: each opening bracket pushed (past 63 open, pairing stops until the
    paragraph ends), each closing one pairs with the nearest open one of its kind and closes
    those above it; an object starts a new paragraph."""
    pairs = []
    stack: list[tuple[str, int]] = []
    stopped = False
    for at, code in enumerate(line):
        if code == "|":
            stack, stopped = [], False
            continue
        kind = _bracket(code) if code not in "RANLETn" else None
        if not isinstance(kind, Bracket) or stopped:
            continue
        if not kind.closes:
            if len(stack) == DEPTH:
                stack, stopped = [], True
            else:
                stack = [*stack, (kind.opening, at)]
            continue
        for depth in reversed(range(len(stack))):
            if stack[depth][0] == kind.opening:
                pairs.append((stack[depth][1], at))
                stack = stack[:depth]
                break
    return sorted(pairs)


def reference_sides(line: str, direction: Direction) -> str:
    """The W rules character by character, then N0 pair by pair, each pair's contents read
    again: the line's side when they hold it (a number counting as right to left), else the
    side of the strong character before the pair (or the line's) when they hold the other."""
    sos = "L" if direction == "ltr" else "R"
    out, last = [], sos
    for code in line:
        if code == "|":
            last = sos
            out.append(code)
        elif code not in "RANLETn":
            out.append("n")  # a bracket: neutral to the W rules
        elif code in "ET" and last == "L":
            out.append("L")  # W7
        elif code in "ET" and last == "A":
            out.append("N" if code == "E" else "n")  # W2
        else:
            out.append("E" if code == "T" else code)  # W5
            last = code if code in "RAL" else last

    def side(code: str) -> str | None:
        return "L" if code == "L" else "R" if code in "RANE" else None

    for opening, closing in reference_pairs(line):
        inside = {side(code) for code in out[opening + 1:closing]} - {None}
        if sos in inside:
            out[opening] = out[closing] = sos
        elif inside:
            before = sos
            for code in reversed(out[:opening]):
                if code == "|":
                    break
                if side(code):
                    before = side(code) or sos
                    break
            out[opening] = out[closing] = before
    return "".join(out)


lines = st.one_of(
    st.text(alphabet=CODES, max_size=60),
    # deep nesting around some contents, past the 63 levels BD16 pairs
    st.builds(lambda depth, inner, close: "(" * depth + inner + ")" * close,
              st.integers(0, 70), st.text(alphabet="RALEn([)]|", max_size=12),
              st.integers(0, 70)),
)


@examples(150)
@given(line=lines)
def test_the_pair_finder_pairs_as_bd16_reads_the_line(line: str) -> None:
    assert _bracket_pairs(line) == reference_pairs(line)


@examples(150)
@given(line=lines, direction=st.sampled_from(["ltr", "rtl"]))
def test_numbers_and_pairs_take_the_sides_the_rules_give_them(
    line: str, direction: Direction
) -> None:
    assert _sides(line, direction) == reference_sides(line, direction)


def test_62_nested_pairs_take_the_line_side_around_mixed_contents() -> None:
    """The case that read the line once per level: each pair holds Arabic, so each takes the
    line's side; a 64th level is past BD16's stack and leaves every bracket after it neutral."""
    line = "(" * 62 + "AALLn" * 200 + ")" * 62
    assert _sides(line, "rtl") == "R" * 62 + "AALLn" * 200 + "R" * 62
    deeper = "(" * 64 + "AL" + ")" * 64
    assert _bracket_pairs(deeper) == []
    assert _sides(deeper, "rtl") == "n" * 64 + "AL" + "n" * 64
