"""Where a heading's attribute block starts (:mod:`citations.attribute_block`): the grammar the
reader and the scanner share. Case by case from a fixture file (markdown-it-py's format: title,
input, what both audits report), the walk against the grammar written as one regex, and lines
built to make a try-from-every-brace reading quadratic."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it.utils import read_fixture_file

import tests.hypothesis_profiles  # noqa: F401  (registers the Hypothesis profiles)
from citations.attribute_block import ATTRIBUTE, attribute_block_start, block_starts
from citations.audit import AuditReport
from citations.audit import audit as scanner_audit
from citations.pool import SourcePool
from citations.tokens import scan
from renderers.audit import audit
from renderers.document import Heading, plain_text
from renderers.readers.heading_attrs import escape_attribute_block
from renderers.readers.markdown import read_markdown
from renderers.resolve import resolve
from tests.fuzz_strategies import examples

FIXTURES = Path(__file__).parent.parent / "fixtures" / "headings" / "attribute_tokens.md"
ROWS = [{"sid": sid, "title": f"Source {sid}", "url": f"https://s{sid}.org"} for sid in range(1, 6)]

#: A letter, as ``re`` cannot say it: a word character that is no number and no underscore
#: (``[^\W\d_]`` takes ``²`` and ``Ⅻ``, numbers that are no digits; the walk asks ``isalpha``).
_NOT_LETTERS = "".join(re.escape(chr(code)) for code in range(0x20000)
                       if unicodedata.category(chr(code)) in ("Nl", "No"))
_LETTER = rf"[^\W\d_{_NOT_LETTERS}]"
#: The grammar as one regex, tried from each unescaped ``{`` (the reader's reading before the
#: walk, which took 33 s on 20,000 ``{k=``): the oracle the walk must agree with.
_ATTRIBUTE = ATTRIBUTE.replace(r"[^\W\d_]", _LETTER)
_BLOCK = re.compile(rf"\{{[ \t]*+(?:{_ATTRIBUTE}[ \t]*+)*+\}}[ \t]*+\Z")


def _oracle(line: str) -> int | None:
    stripped = line.rstrip(" \t")
    for start in (i for i, char in enumerate(stripped) if char == "{"):
        backslashes = len(stripped[:start]) - len(stripped[:start].rstrip("\\"))
        if backslashes % 2 == 0 and _BLOCK.match(stripped, start):
            return start
    return None


def _summary(report: AuditReport) -> str:
    parts = [("cited", report.cited_sids), ("in code", report.in_code_sids),
             ("in raw HTML", report.in_raw_html_sids),
             ("not rendered", report.not_rendered_sids)]
    said = [f"{name} {', '.join(map(str, sids))}" for name, sids in parts if sids]
    said += [f"invalid {token.text}" for token in report.invalid_tokens]
    return "; ".join(said)


@pytest.mark.parametrize(
    ("line", "title", "source", "expected"),
    read_fixture_file(FIXTURES),
    ids=[case[1] for case in read_fixture_file(FIXTURES)],
)
def test_both_audits_read_tokens_in_heading_blocks_as_render(
    line: int, title: str, source: str, expected: str
) -> None:
    where = f"{FIXTURES.name}:{line}"
    numbers = dict(resolve(read_markdown(source), SourcePool.from_rows(ROWS)).plan.numbers)
    for report in (scanner_audit(source, ROWS), audit(source, ROWS)):
        assert _summary(report) == expected.strip(), where
        assert report.numbers == numbers, where


@pytest.mark.parametrize(
    ("line", "start"),
    [("Results {#results}", 8), ("Results{#r .c k=\"v}\"}  ", 7), ("a {#x} {#y}", 7),
     ("b {{#z}", 3), ("a \\{#x}", None), ("b \\\\{#y}", 4), ("{}", 0), ("a {#x} ##", None),
     ("a {k=v\\}", None), ("a {k=a{#x}", 2), ("結果{#結果}", 2), ("", None), ("}", None)],
)
def test_where_the_block_starts(line: str, start: int | None) -> None:
    assert attribute_block_start(line) == start == _oracle(line)


_PIECES = st.sampled_from(["{", "}", "#", ".", "-", "=", '"', "'", "\\", " ", "\t", "a", "x1",
                           "k=", "結", "{#a", "{k=", '"{', "}}", "\u00a0", "_", ":", "²", "Ⅻ"])


@examples(500)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_the_walk_reads_as_the_grammar_does(line: str) -> None:
    """Every try shares what earlier ones learnt, and still finds the block the regex finds."""
    assert attribute_block_start(line) == _oracle(line)


@pytest.mark.parametrize(
    ("line", "start"),
    [
        ("{k=" * 20_000 + " x}", None),  # each try read the one bare value to its end
        ("{k=" * 20_000 + " " * 20_000 + "x}", None),  # and the spaces after it
        ('{k="{' * 20_000 + "}", 99_995),  # the last "{}"
        ("{#a " * 20_000 + "x}", None),
        ('{k="' * 20_000 + "x}", 79_996),  # the last: an open quote is read bare
        ("{a=b=" * 20_000 + " x}", None),
        ("{k=" * 20_000 + "}", 0),
        ("x {" + "k=v " * 20_000 + "}", 2),
    ],
    ids=["bare", "bare-spaces", "quotes", "ids", "open-quote", "equals", "block", "long-block"],
)
def test_lines_built_against_a_try_from_every_brace_read_at_once(
    line: str, start: int | None
) -> None:
    """Linear in the line, for the reader and for the scanner alike."""
    assert attribute_block_start(line) == start
    (heading,) = read_markdown(f"## {line}\n").blocks
    assert isinstance(heading, Heading)
    assert (plain_text(heading.children) == line.strip()) is (start is None)
    tokens = scan(f"## {line} [[S:1]]\n\n## A {{k=[[S:2]]}}\n")
    assert [(token.sids, token.in_heading_attributes) for token in tokens] == [
        ((1,), False), ((2,), True)]


def _escaped_one_at_a_time(text: str) -> str:
    """The Markdown writer's escaping as it was: the first block's brace escaped, then the
    next block looked for again from the start (quadratic: 8 s for 4,000 ``{k=``)."""
    for _ in range(text.count("{")):
        start = attribute_block_start(text)
        if start is None:
            break
        text = f"{text[:start]}\\{text[start:]}"
    return text


@examples(500)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_all_block_starts_at_once_escape_as_one_at_a_time(text: str) -> None:
    starts = block_starts(text)
    assert starts[:1] == ([] if (first := attribute_block_start(text)) is None else [first])
    assert escape_attribute_block(text) == _escaped_one_at_a_time(text)


def test_a_heading_of_nested_blocks_is_escaped_at_once() -> None:
    """Each ``{`` of ``{k={k=…}`` starts a block: the writer escapes all 20,000 in one walk."""
    text = "{k=" * 20_000 + "}"
    escaped = escape_attribute_block(text)
    assert escaped == "\\{k=" * 20_000 + "}"
    assert attribute_block_start(escaped) is None
