"""Pandoc's heading attributes in markdown input (``## Results {#results .unlisted}``): the
grammar case by case from a fixture file (markdown-it-py's format: title, input, the blocks
read), and what the rest of the reader and the audit make of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it.utils import read_fixture_file

from citations.audit import audit as scanner_audit
from renderers.audit import audit
from renderers.document import (
    Block,
    BlockQuote,
    BulletList,
    Cite,
    CodeBlock,
    Heading,
    Inline,
    Paragraph,
    plain_text,
)
from renderers.readers.heading_attrs import escape_attribute_block, split_attributes
from renderers.readers.markdown import read_markdown
from tests.support.render import render_markdown

FIXTURES = Path(__file__).parent.parent / "fixtures" / "headings" / "attributes.md"
POOL = [{"sid": 1, "title": "Alpha", "url": "https://example.com/a"},
        {"sid": 2, "title": "Beta", "url": "https://example.com/b"}]


def _shown(children: tuple[Inline, ...]) -> str:
    """A heading's text, code spans in backticks and citations as ``[cite N]``."""
    parts = []
    for node in children:
        if isinstance(node, Cite):
            parts.append(f"[cite {','.join(map(str, node.sids))}]")
        elif type(node).__name__ == "Code":
            parts.append(f"`{plain_text((node,))}`")
        else:
            parts.append(plain_text((node,)))
    return json.dumps("".join(parts), ensure_ascii=False)


def _described(blocks: tuple[Block, ...], lead: str = "") -> list[str]:
    lines: list[str] = []
    for block in blocks:
        if isinstance(block, Heading):
            unlisted = "" if block.listed else " unlisted"
            lines.append(f"{lead}h{block.level} #{block.id}{unlisted} {_shown(block.children)}")
        elif isinstance(block, CodeBlock):
            lines.append(f"{lead}code {json.dumps(block.text, ensure_ascii=False)}")
        elif isinstance(block, Paragraph):
            lines.append(f"{lead}p {_shown(block.children)}")
        elif isinstance(block, BlockQuote):
            lines += _described(block.blocks, lead + "> ")
        elif isinstance(block, BulletList):
            for item in block.items:
                lines += _described(item.blocks, lead + "- ")
        else:
            lines.append(f"{lead}{type(block).__name__}")
    return lines


@pytest.mark.parametrize(
    ("line", "title", "source", "expected"),
    read_fixture_file(FIXTURES),
    ids=[case[1] for case in read_fixture_file(FIXTURES)],
)
def test_heading_attributes_fixture(line: int, title: str, source: str, expected: str) -> None:
    document = read_markdown(source)
    assert _described(document.blocks) == expected.splitlines(), f"{FIXTURES.name}:{line}"
    assert not [note for note in document.notes if "attribute" in note.message]


def test_a_link_to_a_given_id_leads_there() -> None:
    """``[see](#results)`` led nowhere while the block was heading text: a reader note."""
    document = read_markdown("## Results {#results}\n\nSee [the results](#results).\n")
    assert document.blocks[0] == Heading(2, document.blocks[0].children, "results", given=True)
    assert not document.notes
    dead = read_markdown("## Results {#results}\n\nSee [the results](#result).\n")
    assert [n.message for n in dead.notes] == [
        "markdown input, line 3: the link to '#result' leads nowhere: no heading or element "
        "has the id; its text is kept"]


def test_the_first_level_one_heading_gives_the_title_without_its_block() -> None:
    assert read_markdown("# Annual report {#top}\n\nText.\n").title == "Annual report"


def test_an_abstracts_heading_reads_its_block_too() -> None:
    document = read_markdown("---\ntitle: T\nabstract: |\n  ## Scope {#scope}\n\n  Text.\n---\n"
                             "\nBody [scope](#scope).\n")
    (heading,) = [b for b in document.abstract if isinstance(b, Heading)]
    assert (heading.id, plain_text(heading.children)) == ("scope", "Scope")
    assert not document.notes


def test_a_citation_inside_the_block_is_noted_and_the_audit_agrees() -> None:
    """A token in an attribute value is no text of the heading: the reader says it is
    dropped, and the audit that agrees with render lists it as not rendered."""
    source = '# T\n\n## Costs {#costs title="[[S:2]]"}\n\nText [[S:1]].\n'
    document = read_markdown(source)
    assert [n.message for n in document.notes] == [
        "markdown input, line 3: citation '[[S:2]]' inside the heading's attribute block "
        "'{#costs title=\"[[S:2]]\"}' is dropped, not cited"]
    report = audit(source, POOL)
    assert report.cited_sids == (1,)
    assert report.not_rendered_sids == (2,)


@pytest.mark.parametrize("block", ["{#results}", "{#results .unlisted}", "{-}", "{}"])
def test_the_audit_sees_no_text_or_token_in_a_block(block: str) -> None:
    """The block holds no token, so both audits agree with render: the heading's own
    citation counted once, nothing invalid, nothing left unrendered, coverage unchanged."""
    source = f"# T\n\n## Results [[S:1]] {block}\n\nText [[S:2]].\n"
    plain = source.replace(f" {block}", "")
    for report, without in ((audit(source, POOL), audit(plain, POOL)),
                            (scanner_audit(source, POOL), scanner_audit(plain, POOL))):
        assert report.cited_sids == (1, 2)
        assert not report.invalid_tokens and not report.not_rendered_sids
        assert report.coverage == without.coverage
        assert report.warnings == without.warnings


@pytest.mark.parametrize(
    "text", ["a {#x}", "a {#x .y k=v}", "a {}", "a {k=a{#x}", "b ## {-}", "結果{#結果}"])
def test_the_markdown_writer_keeps_text_that_reads_as_a_block(text: str) -> None:
    """A heading whose text ends as a block would (read from ``\\{#x}``) is written with the
    brace escaped, so it reads back as that text, here and in pandoc."""
    escaped = escape_attribute_block(text)
    assert split_attributes(escaped)[1] is None
    document = read_markdown(f"## {escaped}\n")
    (heading,) = document.blocks
    assert isinstance(heading, Heading) and plain_text(heading.children) == text
    written = render_markdown("md", f"## {escaped}\n", []).decode("utf-8")
    again = read_markdown(written).blocks
    assert [plain_text(b.children) for b in again if isinstance(b, Heading)] == [text]


def test_a_long_line_of_braces_reads_in_linear_time() -> None:
    """Each ``{`` is a place a block might start; a failed try stops where the block does
    (no backtracking), so a heading of 20,000 unclosed quotes and braces reads at once."""
    line = "## " + '{k="{' * 20_000 + "}"
    (heading,) = read_markdown(line + "\n").blocks
    assert isinstance(heading, Heading)


_PIECES = st.sampled_from(["{", "}", "#", ".", "-", "=", '"', "'", "\\", " ", "a", "x1", "結"])


@given(st.lists(_PIECES, max_size=30).map("".join))
def test_escaping_leaves_no_block_and_only_adds_backslashes(text: str) -> None:
    """Whatever a heading's text, the Markdown writer's escaping leaves no block at its end,
    and reading the escaped text as a heading never fails."""
    escaped = escape_attribute_block(text)
    assert split_attributes(escaped)[1] is None
    assert escaped.replace("\\", "") == text.replace("\\", "")  # backslashes added only
    assert len(escaped) - len(text) <= text.count("{")  # one at most before each brace
    read_markdown(f"## {escaped}\n")
