"""The heading ids pandoc's markdown and gfm readers give the Markdown output's headings: the
rules of :mod:`renderers.writers.markdown_ids`, and pandoc itself when it is installed."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from renderers.writers.markdown_ids import IdText, PandocIds, gfm_id, markdown_id

#: (heading text, pandoc markdown's id, gfm's id), each the first heading of its text
FIRST_IDS = [
    ("Sources", "sources", "sources"),
    ("Fig 1", "fig-1", "fig-1"),
    ("1. Leading digits", "leading-digits", "1-leading-digits"),
    ("Ünïcödé — dash – x", "ünïcödé-dash-x", "ünïcödé--dash--x"),
    ("a_b-c.d e/f (g) * star", "a_b-c.d-ef-g-star", "a_b-cd-ef-g--star"),
    ("Émoji 😀 ok", "émoji-ok", "émoji--ok"),
    ("a  b   c", "a-b-c", "a-b-c"),
    ("日本語 見出し", "日本語-見出し", "日本語-見出し"),
    ("a\u034fb combining", "ab-combining", "a\u034fb-combining"),
    ("Ⅻ roman", "roman", "ⅻ-roman"),
    ("?!", "section", ""),
]


@pytest.mark.parametrize(("text", "markdown", "gfm"), FIRST_IDS)
def test_a_first_heading_gets_each_readers_id(text: str, markdown: str, gfm: str) -> None:
    assert (markdown_id(text), gfm_id(text)) == (markdown, gfm)


def _ids_of(headings: list[IdText]) -> list[tuple[str, str]]:
    ids = PandocIds()
    out = []
    for text in headings:
        auto = ids.next(text)
        ids.add(auto)
        out.append((auto.markdown, auto.gfm))
    return out


def _text(text: str) -> IdText:
    ids = IdText()
    ids.text(text)
    return ids


def test_repeated_headings_are_counted_as_each_reader_counts_them() -> None:
    """markdown takes the first free suffix; gfm counts the headings of one id and may give
    an id twice (``a-1`` below), which the writer then writes as HTML."""
    texts = ["a", "a 1", "a", "a", "", ""]
    assert _ids_of([_text(t) for t in texts]) == [
        ("a", "a"), ("a-1", "a-1"), ("a-2", "a-1"), ("a-3", "a-2"),
        ("section", ""), ("section-1", "-1"),
    ]
    ids = PandocIds()
    for text in ("a", "a 1"):
        ids.add(ids.next(_text(text)))
    assert ids.next(_text("a")).gfm_taken


def test_dashes_in_text_footnote_labels_and_code_are_read_as_each_reader_reads_them() -> None:
    """``--`` in text is a dash for markdown (``smart``), not in code; a footnote reference's
    label is part of markdown's id only."""
    heading = IdText()
    heading.text("Hello--there ")
    heading.text("a--b", smart=False)
    heading.label("1")
    assert _ids_of([heading]) == [("hellothere-a--b1", "hello--there-a--b")]


@pytest.mark.skipif(not shutil.which("pandoc"), reason="pandoc is not installed")
@pytest.mark.parametrize("dialect", ["markdown", "gfm"])
def test_the_ids_are_the_ones_pandoc_gives(dialect: str) -> None:
    texts = [text for text, _, _ in FIRST_IDS] + ["a", "a 1", "a", "a", "Fig 1", "fig-1",
                                                  "Hello--there", "a...b -- c"]
    markdown = "\n\n".join("## " + re.sub(r"([*_\\])", r"\\\1", t) for t in texts) + "\n"
    page = subprocess.run(["pandoc", "-f", dialect, "-t", "html"], input=markdown,
                          capture_output=True, text=True, check=True).stdout
    found = re.findall(r'<h2(?: id="([^"]*)")?', page)
    expected = [ids[0] if dialect == "markdown" else ids[1]
                for ids in _ids_of([_text(t) for t in texts])]
    assert found == expected
