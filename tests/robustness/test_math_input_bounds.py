"""Markdown math at scale: the ``$$`` searches stay linear in the document.

No test asserts a time (:func:`tests.helpers.at_sizes`): the fast size checks the answers and
would take seconds on a quadratic pass, the full size took minutes before its fix.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tests.hypothesis_profiles  # noqa: F401  (registers the Hypothesis profiles)
from renderers.document import BlockQuote, BulletList, Math, iter_inlines
from renderers.options import Limits
from renderers.readers import math_rules
from renderers.readers.markdown import read_markdown
from tests.fuzz_strategies import examples
from tests.helpers import at_sizes


def _formulas(markdown: str) -> list[Math]:
    document = read_markdown(markdown, limits=Limits(max_formulas=100_000))
    return [node for node in iter_inlines(document.blocks) if isinstance(node, Math)]


@at_sizes(1_000, 20_000)
def test_list_items_opening_dollars_never_closed(size: int) -> None:
    # dollarmath's block rule searched each "- $$ a" item's lines for a closing "$$" up to a
    # blank line, here the document's end: 20,000 such items took 130 s to read (now 9 s).
    document = read_markdown("- $$ a\n- b\n" * size + "\n$$\nx\n$$\n")
    listing, *rest = document.blocks
    assert isinstance(listing, BulletList) and len(listing.items) == 2 * size
    after = [(m.tex, m.display) for m in iter_inlines(tuple(rest)) if isinstance(m, Math)]
    assert after == [("x", True)]


@at_sizes(1_000, 20_000)
def test_quoted_items_opening_dollars_before_a_quoted_blank(size: int) -> None:
    # In a quote a line '>' is blank to the search though not to the document's line index:
    # each item's search stopped there, one read of the quote per item without the memo
    # (49 s before, 90 s with the line index alone, now 7 s).
    markdown = "> - $$ a\n" * size + ">\n> b $$\n"
    (quote,) = read_markdown(markdown).blocks
    assert isinstance(quote, BlockQuote)
    assert _formulas(markdown) == []


@at_sizes(1_000, 20_000)
def test_formulas_over_lines_that_look_like_items(size: int) -> None:
    # Each formula keeps its '+ b' line (math_lines) and the line index is built once.
    markdown = "Text $$ a\n+ b\n$$ {#eq:x}\n\n" * size
    found = _formulas(markdown)
    assert len(found) == size and {m.tex for m in found} == {"a\n+ b"}


#: Lines of lists, quotes and blank-looking lines around ``$$``: where the searches' shortcuts
#: could disagree with dollarmath's own search.
LINE_PIECES = st.sampled_from([
    "$$", "$$ a", "a $$", "- ", "+ ", "1. ", "> ", ">", "  ", "\t", "\u00a0", "a", "b $$.",
    "$$ {#eq:x}", "\\$$", "# ", "---", "```",
])


@examples(60)
@given(st.lists(st.lists(LINE_PIECES, max_size=4).map("".join), max_size=10).map("\n".join))
def test_fuzz_closing_search_agrees_with_dollarmaths(markdown: str) -> None:
    """The block rule's shortcut (:func:`renderers.readers.math_rules._closing_line`) reads
    every document as dollarmath's unbounded search does."""
    fast = read_markdown(markdown, limits=Limits(max_formulas=100_000))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(math_rules, "_closing_line", lambda state, start, end: start)
        slow = read_markdown(markdown, limits=Limits(max_formulas=100_000))
    assert fast.blocks == slow.blocks
