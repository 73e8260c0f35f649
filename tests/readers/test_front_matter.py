"""A markdown input's YAML front matter (pandoc's rule): read as metadata at the very top,
the author's text anywhere else or when it is not a YAML mapping, bounded against YAML bombs."""

from __future__ import annotations

import tracemalloc

import pytest

from citations.front_matter import front_matter
from renderers.document import Cite, Paragraph, ThematicBreak
from renderers.errors import LimitError
from renderers.options import Limits
from renderers.readers.markdown import read_markdown

BLOCK = """---
title: "Grid storage in 2025"
author: [Ana Ruiz, {name: Li Wei, affiliation: TU}]
date: 2025-03-01
lang: de
keywords: [storage, grid]
subtitle: ignored
unknown: {nested: [1, 2]}
---

Text.
"""


def test_the_keys_pandoc_reads_become_the_documents_metadata() -> None:
    document = read_markdown(BLOCK)
    assert document.title == "Grid storage in 2025"
    assert document.authors == ("Ana Ruiz", "Li Wei")
    assert document.date == "2025-03-01" and document.lang == "de"
    assert document.keywords == ("storage", "grid")
    assert document.description == ""  # subtitle is not a description
    assert document.notes == ()  # unknown keys are ignored silently, as pandoc ignores them
    assert document.blocks == read_markdown("Text.\n").blocks


@pytest.mark.parametrize(
    ("keys", "description"),
    [
        ("description: What the grid did\n", "What the grid did"),
        ("subject: What the grid did\n", "What the grid did"),  # pandoc's DOCX/PDF key
        ("description: First\nsubject: Second\n", "First"),
        ("abstract: A whole paragraph\n", ""),
    ],
)
def test_a_description_or_subject_is_the_documents_description(
    keys: str, description: str
) -> None:
    document = read_markdown(f"---\n{keys}---\n\nText.\n")
    assert document.description == description and document.notes == ()


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_windows_line_endings_a_bom_and_a_dot_close_are_read(newline: str) -> None:
    text = "\ufeff" + newline.join(["---", "title: T", "author: Ana", "...", "", "x [[S:0]]", ""])
    document = read_markdown(text)
    assert (document.title, document.authors) == ("T", ("Ana",))
    assert document.notes[0].line == 6  # later lines keep their numbers


def test_a_title_in_front_matter_wins_over_the_first_heading() -> None:
    assert read_markdown("---\ntitle: Meta\n---\n# Heading\n").title == "Meta"
    assert read_markdown("# Heading\n").title == "Heading"


def test_values_are_plain_text_never_markup() -> None:
    document = read_markdown('---\ntitle: "*bold* <script>x</script> [[S:1]]"\n---\n')
    assert document.title == "*bold* <script>x</script> [[S:1]]"
    assert document.blocks == ()


@pytest.mark.parametrize(
    "text",
    [
        "Intro.\n\n---\ntitle: T\n---\n",  # not at the top
        "\n---\ntitle: T\n---\n",  # not at the very start
        "---\n\ntitle: T\n---\n",  # a blank line after the opening rule
        "---\ntitle: T\n",  # never closed
        "---\nSome prose\n---\n",  # a setext heading between rules, not YAML's mapping
    ],
)
def test_a_block_that_is_not_front_matter_stays_the_authors_text(text: str) -> None:
    document = read_markdown(text)
    assert document.notes == () and document.authors == ()
    assert document.blocks  # a rule, then text, as before


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("---\ntitle: T\nauthor: [Ana\n---\nx\n", 3, "not YAML: while parsing a flow"),
        ("---\ntitle: a: b\n---\nx\n", 2, "not YAML: mapping values are not allowed here"),
        ("---\n- one\n- two\n---\nx\n", 2, "a list, not a YAML mapping"),
        # YAML's constructors raise ValueError here (an internal error before)
        ("---\ndate: 2024-02-30\n---\nx\n", 2, "day is out of range for month"),
        ("---\ntitle: " + "9" * 5_000 + "\n---\nx\n", 2, "a number too long to read"),
        ("---\ntitle: 2024-01-01 10:00:00+99:00\n---\nx\n", 2, "a value that cannot be read"),
    ],
)
def test_a_block_that_does_not_parse_is_text_with_a_note_naming_its_line(
    text: str, line: int, problem: str
) -> None:
    document = read_markdown(text)
    assert document.title == "" and document.blocks
    assert document.notes[0].line == line
    assert problem in document.warnings[0] and "kept as text" in document.warnings[0]


def test_a_value_that_is_not_text_is_ignored_with_a_note() -> None:
    document = read_markdown("---\ntitle: [a, b]\nauthor: Ana\n---\n")
    assert document.title == "" and document.authors == ("Ana",)
    assert "front matter title: not text; ignored" in document.warnings[0]


def _laughs(levels: int) -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, levels):
        prev, name = chr(ord("a") + level - 1), chr(ord("a") + level)
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "---\n" + "\n".join(lines) + "\ntitle: Laughs\n---\n\nBody.\n"


def test_a_billion_laughs_costs_bounded_memory_and_gives_a_note() -> None:
    text = _laughs(10)  # 9^10 = 3.5 billion strings once the aliases were walked
    tracemalloc.start()
    try:
        document = read_markdown(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20 * 1024 * 1024
    assert document.title == "" and document.notes[0].line == 3
    assert "found an alias (*name), which front matter does not expand" in document.warnings[0]


def test_an_anchor_without_an_alias_is_read() -> None:
    assert read_markdown("---\ntitle: &t Anchored\n---\n").title == "Anchored"


def test_front_matter_larger_than_the_limit_is_refused() -> None:
    text = "---\ntitle: T\nabstract: " + "x" * 2000 + "\n---\n"
    with pytest.raises(LimitError, match=r"limits\.max_front_matter_bytes"):
        read_markdown(text, limits=Limits(max_front_matter_bytes=1000))
    assert read_markdown(text).title == "T"
    found = front_matter(text, 1000)
    assert found is not None and not found.read and found.size > 1000


def test_a_long_document_between_two_rules_is_text_not_too_large_front_matter() -> None:
    """A document that opens with a rule and has another far below is prose, however long:
    only a block opening with a key is front matter too large to read."""
    text = "---\nThe findings [[S:1]] follow.\n\n" + "More prose. " * 200 + "\n\n---\n\nEnd.\n"
    document = read_markdown(text, limits=Limits(max_front_matter_bytes=1000))
    assert not document.warnings
    first, second = document.blocks[:2]
    assert isinstance(first, ThematicBreak) and isinstance(second, Paragraph)
    assert Cite((1,)) in second.children

