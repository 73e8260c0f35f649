"""Reader regexes on input that made them backtrack for minutes (ReDoS): a regex runs in one C
call the render deadline cannot interrupt, so each case here would hang on the old patterns
and must now finish at once with the same answer."""

from __future__ import annotations

import pytest

from renderers.document import CodeBlock, Paragraph, Table, Text
from renderers.errors import LimitError
from renderers.options import Limits
from renderers.readers.context import ReadContext
from renderers.readers.detect import detect_format
from renderers.readers.html import read_html
from renderers.readers.markdown import _check_table_shapes, read_markdown
from renderers.readers.sanitize import sanitize_css, sanitize_html, visible_length
from renderers.text import document_text
from tests.helpers import at_sizes


def test_detect_after_many_comments() -> None:
    # Exponential in the comments before: 30 took 386 s.
    assert detect_format("<!---->" * 40 + "<div><p>x</p></div>") == "html"
    assert detect_format("<!---->" * 40 + "x\n") == "markdown"
    assert detect_format("<!---->" * 40 + "\n<!DOCTYPE html><p>x</p>") == "html"


def test_detect_with_unclosed_block_tags() -> None:
    # Quadratic: 100,000 "<p " took 77 s.
    assert detect_format("<div>x</div>" + "<p " * 400_000) == "html"


def test_markdown_line_of_spaces_before_a_dash() -> None:
    # Quadratic per line in the table pre-check: 32,000 spaces took 14 s.
    document = read_markdown("| a | b |\n| --- | --- |\n| 1 | 2 |\n\n" + " " * 200_000 + "-\n")
    table, code = document.blocks
    assert isinstance(table, Table)
    assert table.header[1].children == (Text(text="b"),)
    assert isinstance(code, CodeBlock)


def test_markdown_many_delimiter_rows_in_one_paragraph() -> None:
    # Quadratic: each delimiter row searched to the paragraph's end (10,000 rows of 200
    # characters took 11 s). The late wide row must still be measured against its own rows.
    text = ("-|-\n" + "x" * 200 + "\n") * 40_000 + "-" + "|-" * 999 + "\n" + "y\n" * 1_100
    context = ReadContext("markdown input", Limits(max_table_cells=1_000_000))
    with pytest.raises(LimitError, match=r"a table of 1101 rows × 1000 columns"):
        _check_table_shapes(text, context)


@at_sizes(4_000, 40_000)
def test_markdown_comments_ending_in_three_dashes(size: int) -> None:
    # markdown-it's comment pattern runs past a "-->" after "---": every "<!--" of
    # "<!-- a --->" repeated scanned to the end, 88 KB took 8.4 s to read.
    document = read_markdown("x [[S:1]] " + "<!-- a --->" * size + " [[S:2]]")
    (paragraph,) = document.blocks
    assert isinstance(paragraph, Paragraph)
    cited = [node.sids for node in paragraph.children if hasattr(node, "sids")]
    assert cited == [(1,), (2,)]


def test_html_image_scan_after_an_unclosed_tag() -> None:
    # Quadratic if every later "<img" were scanned to the end again (3,000 took 0.2 s): the
    # scan naming refused image sources stops at the tag that runs to the end of the input.
    document = read_html("<img alt=x>" + '<img a="' * 100_001)
    (diagnostic,) = document.diagnostics
    assert "the image 'x' has no source" in diagnostic.message


def test_css_long_identifier() -> None:
    # Quadratic: 40,000 "a" took 121 s.
    css = "b{background:\\75rl(http://e.example/x.png)}" + "a" * 200_000
    assert sanitize_css(css) == "b{background:none}" + "a" * 200_000


def test_css_many_unclosed_urls() -> None:
    # Quadratic: 20,000 "url(" took 20 s.
    css = "x{background:url(javascript:alert(1))}" + "url(" * 150_000
    assert sanitize_css(css) == "x{background:none)}" + "url(" * 150_000


def test_style_block_with_a_long_identifier() -> None:
    # The author's-look path: 20,000 "a" in a <style> took 32 s.
    html = "<style>@\\69mport url(http://e.example/x.css);" + "a" * 200_000 + "{}</style>"
    assert sanitize_html(html, keep_styles=True) == "<style>" + "a" * 200_000 + "{}</style>"


def test_visible_length_of_unclosed_comments() -> None:
    # Quadratic: 20,000 "<!--" took 12 s; read_html measures dropped text with it.
    document = read_html("<p>Hello</p>" + "<!--" * 200_000)
    assert document.blocks == (Paragraph(children=(Text(text="Hello"),)),)
    assert "removed 800000 characters" in document.warnings[0]


def test_visible_length_of_unclosed_scripts() -> None:
    # Quadratic: 20,000 "<script>" took 26 s.
    assert visible_length("<script>" * 150_000 + "visible<!-- x -->") == 7


def test_unclosed_container_tags_are_counted_in_linear_time() -> None:
    """The raw-nesting pre-check looks for container tags; 40,000 unclosed ``<div `` (none of
    which can end) made each attempt scan to the end of the text."""
    document = read_html("<p>Hello</p>" + "<div " * 200_000)
    assert document_text(document).startswith("Hello")
