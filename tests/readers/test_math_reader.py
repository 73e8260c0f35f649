"""Math in markdown: which dollars and backslashes start a formula, and what bad TeX becomes."""

from __future__ import annotations

import pytest

from renderers.document import Code, CodeBlock, Inline, Math, Paragraph, Text, iter_inlines
from renderers.errors import LimitError
from renderers.math.tex import MAX_GROUP_DEPTH, MAX_TEX_CHARS
from renderers.readers.markdown import read_markdown


def formulas(markdown: str) -> list[Math]:
    return [n for n in iter_inlines(read_markdown(markdown).blocks) if isinstance(n, Math)]


@pytest.mark.parametrize(
    "prose",
    [
        "It costs $5 and $10.",
        "$5 and $10 at the start of a paragraph",
        "Between $5-$10 per unit",
        "Prices: $5, $10, $15.",
        "A range of $ 5 to $ 10",
        "Pay $5 now and $10 later, or $15.50 in total",
        "Escaped \\$x\\$ is text",
        "Price 5$ and 6$",
    ],
)
def test_dollars_in_prose_are_never_math(prose: str) -> None:
    document = read_markdown(prose)
    assert formulas(prose) == []
    assert not document.warnings
    assert "$" in "".join(n.text for n in iter_inlines(document.blocks) if isinstance(n, Text))


def test_inline_formulas_by_dollars_and_parentheses() -> None:
    found = formulas("Energy $E = mc^2$, area \\(\\pi r^2\\) and $$\\frac{a}{b}$$ inline.")
    assert found == [Math("E = mc^2"), Math("\\pi r^2"), Math("\\frac{a}{b}", display=True)]


def test_a_formula_first_in_a_paragraph_ending_in_a_digit() -> None:
    # dollarmath alone reads "the character before" position 0 as the paragraph's last one
    assert formulas("$x$ costs $5") == [Math("x")]


def test_displayed_formulas_on_lines_of_their_own() -> None:
    document = read_markdown("$$\n\\int_0^1 x\\,dx\n$$\n\n\\[\na^2 + b^2\n\\]\n")
    assert document.blocks == (
        Paragraph((Math("\\int_0^1 x\\,dx", display=True),)),
        Paragraph((Math("a^2 + b^2", display=True),)),
    )


D = True  # display=True


@pytest.mark.parametrize(
    ("markdown", "children"),
    [
        # pandoc reads each $$…$$ of such a line as its own displayed formula
        ("$$x^2$$ $$y^2$$", (Math("x^2", D), Text(" "), Math("y^2", D))),
        ("$$a$$$$b$$", (Math("a", D), Math("b", D))),
        ("$$a$$ text $$b$$", (Math("a", D), Text(" text "), Math("b", D))),
        ("$$ a $$ $$ b $$", (Math("a", D), Text(" "), Math("b", D))),
        ("$$a$$ `$$` $$b$$", (Math("a", D), Text(" "), Code("$$"), Text(" "), Math("b", D))),
        ("$a$ $b$", (Math("a"), Text(" "), Math("b"))),
        # a backslash-escaped dollar is TeX's \$, not a closing delimiter
        ("$$x = \\$5$$", (Math("x = \\$5", D),)),
        ("$$a\\$$$ $$b$$", (Math("a\\$", D), Text(" "), Math("b", D))),
        ("\\$$a$$ $$b$$", (Text("$"), Math("a"), Text("$ "), Math("b", D))),
        ("`$$a$$ $$b$$`", (Code("$$a$$ $$b$$"),)),
        ("$$x^2$$", (Math("x^2", D),)),
    ],
)
def test_display_dollars_on_one_line(markdown: str, children: tuple[Inline, ...]) -> None:
    document = read_markdown(markdown)
    assert document.blocks == (Paragraph(children),)
    assert not document.warnings


def test_double_dollars_in_a_code_block_stay_code() -> None:
    document = read_markdown("```\n$$a$$ $$b$$\n```\n")
    assert document.blocks == (CodeBlock("$$a$$ $$b$$"),)


def test_escaped_brackets_in_prose_stay_brackets() -> None:
    document = read_markdown("See \\[1\\] and\n\n\\[2\\] on a line of its own\n")
    assert formulas("See \\[1\\] and\n\n\\[2\\] on a line of its own\n") == []
    assert [b.children for b in document.blocks] == [
        (Text("See [1] and"),), (Text("[2] on a line of its own"),)
    ]


@pytest.mark.parametrize(
    ("markdown", "shown", "reason"),
    [
        ("Bad $\\frac{a}{$ here", "$\\frac{a}{$", "latex2mathml"),
        ("Unknown $\\foo{x}$ here", "$\\foo{x}$", "unknown command \\foo"),
        ("Link $\\href{javascript:alert(1)}$ here", "$\\href{javascript:alert(1)}$", ""),
    ],
)
def test_tex_that_is_not_math_shows_its_source_as_code(
    markdown: str, shown: str, reason: str
) -> None:
    document = read_markdown(markdown)
    paragraph = document.blocks[0]
    assert isinstance(paragraph, Paragraph) and Code(shown) in paragraph.children
    assert len(document.warnings) == 1 and "shown as code" in document.warnings[0]
    assert reason in document.warnings[0] and "line 1" in document.warnings[0]


def test_a_displayed_formula_that_is_not_math_is_a_code_block() -> None:
    document = read_markdown("Text\n\n$$\n\\frac{\n$$\n")
    assert document.blocks[1] == CodeBlock("\\frac{")
    assert "line 3" in document.warnings[0]


def test_bounds_are_warnings_not_crashes() -> None:
    long = "x+" * (MAX_TEX_CHARS // 2 + 1)
    deep = "{" * (MAX_GROUP_DEPTH + 1) + "x" + "}" * (MAX_GROUP_DEPTH + 1)
    chained = "\\sqrt" * 2000 + "x"
    document = read_markdown(f"${long}x$\n\n${deep}$\n\n${chained}$\n")
    assert formulas(f"${long}x$") == [] and formulas(f"${deep}$") == []
    assert any("longer than" in w for w in document.warnings)
    assert any("nested deeper" in w for w in document.warnings)
    assert len(document.warnings) >= 2


def test_unclosed_delimiters_in_bulk_read_as_text() -> None:
    text = "\\(" * 20_000 + " and $a " * 5_000
    document = read_markdown(text)
    assert formulas(text) == [] and not document.warnings


def test_content_size_limit_still_applies_to_math() -> None:
    from renderers.options import Limits

    with pytest.raises(LimitError):
        read_markdown("$x$ " * 100, limits=Limits(max_content_bytes=100))


def test_the_number_of_formulas_is_bounded() -> None:
    from renderers.options import Limits

    with pytest.raises(LimitError, match=r"more than 3 math formulas .*limits\.max_formulas"):
        read_markdown("$a$ $b$\n\n$$\nc\n$$\n\n\\(d\\)\n", limits=Limits(max_formulas=3))
    assert len(formulas("$a$ $b$ $c$")) == 3


@pytest.mark.parametrize(
    ("markdown", "tex"),
    [
        ("$$\na \\\\\n+ b\n$$ {#eq:x}\n", "a \\\\\n+ b"),  # a labelled formula (pandoc-crossref)
        ("$$\na\n# b\n> c\n1. d\n---\n$$.\n", "a\n# b\n> c\n1. d\n---"),  # closed by "$$."
        ("Hence\n$$\nx\n- y\n$$ {#eq:x}\n", "x\n- y"),  # opened after a line of text
        ("- item\n  $$\n  a\n  + b\n  $$ {#eq:x}\n", "a\n+ b"),  # in a list item
        ("> $$\n> a\n> + b\n> $$ {#eq:x}\n", "a\n+ b"),  # in a block quote
    ],
)
def test_lines_inside_a_displayed_formula_start_no_block(markdown: str, tex: str) -> None:
    """A line of a ``$$ … $$`` that looks like a list item, heading, quote or rule stays in the
    formula (pandoc reads it whole), and a setext underline inside it makes no heading."""
    document = read_markdown(markdown)
    assert [(math.tex, math.display) for math in formulas(markdown)] == [(tex, True)]
    assert not document.warnings


@pytest.mark.parametrize(
    "markdown",
    [
        "$$ a\n+ b\n",  # never closed: the list is a list
        "Price \\$$\n+ item\n",  # escaped
        "a $$x$$ b\n+ item\n",  # closed on its own line
        "Title\n---\n\n$$\nx\n$$\n",
    ],
)
def test_blocks_after_closed_or_unclosed_dollars_still_start(markdown: str) -> None:
    blocks = read_markdown(markdown).blocks
    assert {type(block).__name__ for block in blocks} & {"BulletList", "Heading"}


@pytest.mark.parametrize(
    ("markdown", "items"),
    [
        ("- $$ a\n- b\n- $$ c\n", ["$$ a", "b", "$$ c"]),
        ("1. x $$ a\n2. b $$\n", ["x $$ a", "b $$"]),
        ("- $$ a\n  + b\n- $$ c\n", ["$$ a", "$$ c"]),  # the nested list stays a list
    ],
)
def test_a_list_marker_left_of_the_item_ends_it_inside_dollars(
    markdown: str, items: list[str]
) -> None:
    """The next item's marker ends an item even inside a ``$$`` of its paragraph, as pandoc
    reads it (the items were one formula); a marker inside the item's text stays held."""
    document = read_markdown(markdown)
    (listing,) = document.blocks
    assert [
        "".join(n.text for n in iter_inlines(item.blocks[:1]) if isinstance(n, Text))
        for item in listing.items  # type: ignore[attr-defined]
    ] == items
    assert formulas(markdown) == []


def test_many_list_items_before_a_formula() -> None:
    """Each item's paragraph asks the document's line index whether a ``$$`` lies ahead before
    a blank line, and the list stays a list of 5,000 items."""
    items = "+ c\n" * 5_000
    document = read_markdown(items + "$$\nx\n$$\n")
    assert len(document.blocks[0].items) == 5_000  # type: ignore[attr-defined]


def _cells(markdown: str) -> list[tuple[str, ...]]:
    from renderers.document import Table

    table = next(block for block in read_markdown(markdown).blocks if isinstance(block, Table))
    return [tuple(",".join(
        f"math:{n.tex}" if isinstance(n, Math) else f"text:{n.text}" if isinstance(n, Text)
        else type(n).__name__ for n in iter_inlines((Paragraph(cell.children),))
    ) for cell in row) for row in table.rows]


@pytest.mark.parametrize(
    ("row", "cells"),
    [
        ("| abs | $|x|$ |", ("text:abs", "math:|x|")),
        ("| norm | $\\|v\\|$ |", ("text:norm", "math:\\|v\\|")),  # the backslashes kept
        ("| $$|x|$$ | \\(|y|\\) |", ("math:|x|", "math:|y|")),
        ("| $5 | $10 |", ("text:$5", "text:$10")),  # prices split as before
        ("| $5|$10 |", ("text:$5", "text:$10")),
    ],
)
def test_a_pipe_inside_a_formula_in_a_table_cell_is_the_formula_s(
    row: str, cells: tuple[str, ...]
) -> None:
    """As pandoc reads a cell's inlines, a formula takes its pipes with it; markdown-it split
    the row at them (``$|x|$`` three cells, ``$\\|v\\|$`` unescaped to ``|v|``)."""
    assert _cells(f"| a | b |\n|---|---|\n{row}\n") == [cells]
