"""The Markdown writer keeps every heading id the author gave (``## Results {#res}``, HTML's
``<h2 id="res">``), linked or not: ``report.md#res`` from outside still lands after md → md,
for pandoc's ``markdown`` and ``gfm`` readers and for citerender reading it back. A plain
heading where every reader makes that id from its text, else ``<h2 id="res">``, since gfm
shows an attribute block as text."""

from __future__ import annotations

from pathlib import Path

import pytest

from renderers.api import render
from renderers.document import Heading
from renderers.readers.markdown import read_markdown
from renderers.writers.markdown_ids import IdText, PandocIds
from tests.writers.test_markdown_writer import _pandoc_ids_land


def _heading_ids(markdown: str) -> list[str]:
    return [block.id for block in read_markdown(markdown).blocks if isinstance(block, Heading)]


def _markdown(source: str, out: Path, content_format: str = "markdown") -> str:
    (result,) = render(source, out, formats="md", sources_pool=[],
                       content_format=content_format)
    assert not result.warnings
    return result.path.read_text("utf-8")


@pytest.mark.parametrize(("heading", "ident", "plain"), [
    ("## Results {#res}", "res", False),
    ("## Results {#results}", "results", True),  # every reader's own id: nothing to add
    ("## e.g. x {#e.g.-x}", "e.g.-x", False),  # gfm and citerender: eg-x
    ("## Café {#café}", "café", True),
    ("## 結果 {#結果}", "結果", True),
    ("## \ufb01sh {#\ufb01sh}", "\ufb01sh", False),  # citerender reads "ﬁ" as "fi" (NFKC)
    ("## Tail - {#tail-}", "tail-", False),
    ("## Intro\n\n## Intro {#intro-1}", "intro-1", True),  # every reader counts it so
    ("# Annual report {#top}", "top", False),  # the title's heading too
])
def test_a_given_id_survives_md_to_md_for_pandoc_and_citerender(
    tmp_path: Path, heading: str, ident: str, plain: bool
) -> None:
    source = f"# Report\n\n{heading}\n\nText, and no link to it.\n"
    written = _markdown(source, tmp_path / "one")
    level = heading.split("\n")[-1].split(" ")[0]
    assert (f'<h{len(level)} id="{ident}">' not in written) is plain, written
    assert "{#" not in written
    rewritten = _markdown(written, tmp_path / "two")
    assert rewritten == written  # read back, the output is its own fixed point
    assert ident in _heading_ids(written)
    found = _pandoc_ids_land(written)
    for dialect, (ids, _) in found.items():
        assert ident in ids, (dialect, ids)


def test_html_input_ids_are_kept_and_a_plain_heading_where_readers_agree(
    tmp_path: Path
) -> None:
    """``1-intro`` is ``intro`` to pandoc's ``markdown``: kept as HTML; a heading without an
    id keeps the one its readers make."""
    page = ('<h1 id="top">Report</h1><h2 id="res">Results</h2><p>Text.</p>'
            '<h2 id="summary">Summary</h2><h2 id="1-intro">1. Intro</h2><h2>1. Made</h2>')
    written = _markdown(page, tmp_path, content_format="html")
    assert written == ('<h1 id="top">\n\nReport\n\n</h1>\n\n<h2 id="res">\n\nResults\n\n</h2>'
                       '\n\nText.\n\n## Summary\n\n<h2 id="1-intro">\n\n1\\. Intro\n\n</h2>\n\n'
                       "## 1. Made\n")
    assert _heading_ids(written) == ["top", "res", "summary", "1-intro", "1-made"]
    for ids, _ in _pandoc_ids_land(written).values():
        assert {"top", "res", "summary", "1-intro"} <= set(ids)


def test_an_id_taken_twice_is_kept_only_where_the_author_gave_it(tmp_path: Path) -> None:
    """The second ``{#x}`` was given ``x-1`` by the reader (the first kept ``x``): an id
    made, not given, so left to the readers."""
    written = _markdown("# R\n\n## A {#x}\n\n## B {#x}\n", tmp_path)
    assert written == '# R\n\n<h2 id="x">\n\nA\n\n</h2>\n\n## B\n'


def test_citerenders_own_page_read_back_keeps_given_ids_not_made_ones(tmp_path: Path) -> None:
    """Every heading of citerender's HTML page has an id: read back, one the reader makes
    of its text again (``1-intro``) is taken for made, so html → md writes what md → md
    does; an id the author gave (``res``) is kept."""
    source = "# Report\n\n## 1. Intro\n\nText.\n\n## Results {#res}\n\nMore.\n"
    (page,) = render(source, tmp_path / "page", formats="html", sources_pool=[])
    back = _markdown(page.path.read_text("utf-8"), tmp_path / "back", content_format="html")
    direct = _markdown(source, tmp_path / "direct")
    assert "## 1. Intro" in back and '<h2 id="res">\n\nResults\n\n</h2>' in back
    assert back.split("## 1. Intro")[1] == direct.split("## 1. Intro")[1]


def test_citerenders_id_is_counted_as_its_reader_counts_it() -> None:
    """``ours``: citerender's reader folds "ﬁ" to "fi" (NFKC) and never takes a writers'
    own id (a heading "Sources" is ``sources-1`` to it), where pandoc's readers keep both."""
    ids = PandocIds()
    found = []
    for text in ("\ufb01sh", "fish", "Sources"):
        shown = IdText()
        shown.text(text)
        auto = ids.next(shown)
        ids.add(auto)
        found.append((auto.markdown, auto.gfm, auto.ours))
    assert found == [("\ufb01sh", "\ufb01sh", "fish"), ("fish", "fish", "fish-1"),
                     ("sources", "sources", "sources-1")]
