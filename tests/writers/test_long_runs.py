"""Very long unbroken runs: cut with ``<wbr>`` so WeasyPrint lays them out in linear time, with
every character kept (issue 13, item 4). The cost itself is checked under a time ceiling in
``tests/robustness/test_bounded_cost.py``."""

from __future__ import annotations

import re
import unicodedata

import lxml.html
import pytest

from renderers.writers.html.breaks import (
    LONGEST_RUN,
    RUN_CHUNK,
    break_long_runs,
    breakable,
    split_long_runs,
    wrappable,
)
from tests.support.render import render_markdown

POOL = [{"sid": 1, "title": "Source", "url": "https://e.example/"}]


def longest_run(text: str) -> int:
    return max((len(m.group(0)) for m in re.finditer(r"\S+", text)), default=0)


@pytest.mark.parametrize("text", ["", "short words", "x" * LONGEST_RUN, "a b " * 500])
def test_text_without_a_long_run_is_one_piece(text: str) -> None:
    assert split_long_runs(text) == [text]
    assert "<wbr>" not in breakable(text)


@pytest.mark.parametrize(
    "text",
    [
        "y" * 5_000,
        "before " + "z" * 1_001 + " between " + "q" * 250 + " after",
        "e\u0301" * 300,  # base letters with combining acute accents
        "👩\u200d💻" * 200,  # emoji joined with ZWJ
    ],
)
def test_long_runs_are_cut_every_chunk_and_nothing_is_lost(text: str) -> None:
    pieces = split_long_runs(text)
    assert "".join(pieces) == text
    assert len(pieces) > 1
    for piece in pieces:
        assert longest_run(piece) <= RUN_CHUNK + 2
        if piece is not pieces[0]:  # no piece starts with a mark that belongs to the one before
            assert not unicodedata.combining(piece[0]) and piece[0] != "\u200d"


def test_breakable_escapes_each_piece() -> None:
    markup = str(breakable("<&>" * 100))
    assert "<wbr>" in markup and "<&>" not in markup.replace("<wbr>", "")
    assert markup.replace("<wbr>", "") == "&lt;&amp;&gt;" * 100


def test_the_html_writer_cuts_text_code_and_source_titles() -> None:
    word = "w" * 1_000
    pool = [{"sid": 1, "title": "T" * 1_000, "url": "https://e.example/"}]
    markdown = f"# Title\n\nText {word} [[S:1]] and `{word}`.\n\n```\n{word}\n```\n"
    html = render_markdown("html", markdown, pool).decode()
    root = lxml.html.document_fromstring(html)
    for path in ("//main//p", "//pre//code", "//p//code", "//*[@class='source-title']"):
        (element,) = root.xpath(path)[:1]
        assert element.xpath(".//wbr"), path
        assert longest_run(element.text_content()) >= 1_000  # the text itself is unchanged


def test_author_html_gets_breaks_outside_style_and_script() -> None:
    root = lxml.html.fragment_fromstring(
        f"<div><style>{'s' * 500}</style><p>{'p' * 500}<b>{'b' * 500}</b>{'t' * 500}</p></div>"
    )
    break_long_runs(root)
    assert not root.xpath("//style//wbr")
    paragraph = root.xpath("//p")[0]
    assert paragraph.text_content() == "p" * 500 + "b" * 500 + "t" * 500
    assert len(paragraph.xpath(".//wbr")) == 3 * (500 // RUN_CHUNK)


def test_a_long_word_reaches_the_pdf_whole_and_inside_the_page() -> None:
    import pypdfium2 as pdfium

    word = "".join(chr(ord("a") + i % 26) for i in range(6_000))
    data = render_markdown("pdf", f"# T\n\nA {word} [[S:1]].\n\n```\n{word}\n```\n", POOL)
    document = pdfium.PdfDocument(data)
    try:
        text = ""
        for page in document:
            width = page.get_width()
            textpage = page.get_textpage()
            text += textpage.get_text_range()
            for index in range(textpage.count_chars()):
                left, _, right, _ = textpage.get_charbox(index)
                assert left >= 0 and right <= width, "a character was drawn off the page"
    finally:
        document.close()
    body = re.sub(r"Page \d+ of \d+", "", text).split("Sources")[0]
    letters = re.sub(r"[^a-z]", "", body)  # line ends and the superscript out
    assert letters == word * 2  # the paragraph's and the code block's, every letter


def test_a_long_word_in_running_text_may_wrap_anywhere() -> None:
    """The words the Typst writer makes breakable (LONG_WORD characters or more) sit in a span
    that may wrap anywhere; shorter words and the spaces between are left as they are."""
    word = "x" * 24 + "<"
    assert wrappable(f"a b {word} c") == f'a b <span class="long-word">{"x" * 24}&lt;</span> c'
    assert wrappable("x" * 24) == "x" * 24
    css = render_markdown("html", "# T\n", POOL).decode()
    assert ".long-word { overflow-wrap: anywhere; }" in css


def test_a_link_with_a_long_word_wraps_as_a_whole() -> None:
    """The link itself may wrap: a span inside it would give WeasyPrint a second box to link,
    and the PDF a second annotation for the same link."""
    url = "https://example.org/" + "segment/" * 6
    html = render_markdown("html", f"See [{url}]({url}) and [short](https://e.org/).\n", POOL)
    page = lxml.html.fromstring(html)
    long_link, short_link = page.xpath("//main//p/a")
    assert long_link.get("class") == "long-word" and not long_link.xpath(".//span")
    assert long_link.get("dir") == "ltr"  # it shows its own address: left to right in any line
    assert short_link.get("class") is None and short_link.get("dir") is None
