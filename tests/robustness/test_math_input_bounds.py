"""Markdown math at scale: the ``$$`` searches stay linear in the document.

No test asserts a time (:func:`tests.helpers.at_sizes`): the fast size checks the answers and
would take seconds on a quadratic pass, the full size took minutes before its fix.
"""

from __future__ import annotations

from renderers.document import BlockQuote, BulletList, Math, iter_inlines
from renderers.options import Limits
from renderers.readers.markdown import read_markdown
from tests.helpers import at_sizes


def _formulas(markdown: str) -> list[Math]:
    document = read_markdown(markdown, limits=Limits(max_formulas=100_000))
    return [node for node in iter_inlines(document.blocks) if isinstance(node, Math)]


@at_sizes(2_000, 20_000)
def test_list_items_opening_dollars_never_closed(size: int) -> None:
    # dollarmath's block rule searched each "- $$ a" item's lines for a closing "$$" up to a
    # blank line, here the document's end: 20,000 such items took over 300 s to read.
    document = read_markdown("- $$ a\n- b\n" * size + "\n$$\nx\n$$\n")
    listing, *rest = document.blocks
    assert isinstance(listing, BulletList) and len(listing.items) == 2 * size
    after = [(m.tex, m.display) for m in iter_inlines(tuple(rest)) if isinstance(m, Math)]
    assert after == [("x", True)]


@at_sizes(2_000, 20_000)
def test_quoted_items_opening_dollars_before_a_quoted_blank(size: int) -> None:
    # In a quote a line '>' is blank to the search though not to the document's line index:
    # each item's search stopped there, one read of the quote per item without the memo.
    markdown = "> - $$ a\n" * size + ">\n> b $$\n"
    (quote,) = read_markdown(markdown).blocks
    assert isinstance(quote, BlockQuote)
    assert _formulas(markdown) == []


@at_sizes(2_000, 20_000)
def test_formulas_over_lines_that_look_like_items(size: int) -> None:
    # Each formula keeps its '+ b' line (math_lines) and the line index is built once.
    markdown = "Text $$ a\n+ b\n$$ {#eq:x}\n\n" * size
    found = _formulas(markdown)
    assert len(found) == size and {m.tex for m in found} == {"a\n+ b"}
