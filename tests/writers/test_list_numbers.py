"""Ordered-list numbers in the PDF: ``start`` and sid-numbered Sources survive WeasyPrint (and
the Typst engine).

WeasyPrint ignores ``<ol start>`` and ``<li value>``; these tests read the numbers back from the
PDF's text (and, for the browser, from Chromium's own print of the same HTML).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import lxml.html
import pytest

from renderers.api import render
from renderers.writers.html.list_numbers import li_value_style, number_lists, ol_start_style
from tests.helpers import pdf_lines

START_2 = ol_start_style(-2)
POOL = [
    {"sid": 2, "title": "Second source", "url": "https://two.example/"},
    {"sid": 5, "title": "Fifth source", "url": "https://five.example/"},
]


def numbered_lines(path: Path) -> list[str]:
    """Lines of the PDF as drawn that start with a list number: number and first word."""
    lines = (text for _, _, text in pdf_lines(path.read_bytes()))
    return [m.group(0) for line in lines if (m := re.match(r"\d+\. [^\W\d]+", line))]


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_a_markdown_list_keeps_its_start_and_sid_numbers_show_in_the_sources(
    tmp_path: Path, engine: str
) -> None:
    markdown = "# Items\n\n3. three [[S:5]]\n4. four [[S:2]]\n"
    render(markdown, tmp_path, sources_pool=POOL, formats=["pdf"], numbering="sid",
           pdf_engine=engine)
    lines = numbered_lines(tmp_path / "report.pdf")
    assert lines[:2] == ["3. three", "4. four"]
    assert lines[2:] == ["2. Second", "5. Fifth"]


def test_author_html_keeps_start_and_value(tmp_path: Path) -> None:
    html = (
        "<html><head><style>li { color: #222 }</style></head><body><h1>T</h1>"
        '<ol start="3"><li>x [[S:2]]</li><li value="7">y</li><li>z</li></ol>'
        '<ol start="99999999999999999999"><li>huge</li></ol></body></html>'
    )
    render(html, tmp_path, sources_pool=POOL, formats=["pdf"])
    lines = numbered_lines(tmp_path / "report.pdf")
    assert lines[:4] == ["3. x", "7. y", "8. z", "1. huge"]


@pytest.mark.parametrize(
    ("markup", "expected"),
    [
        ('<ol start="4"><li>a</li></ol>', ol_start_style(4)),
        ('<ol start=" -2 " style="color: red"><li>a</li></ol>', "color: red; " + START_2),
        ('<ol start="x"><li>a</li></ol>', None),
        ('<ol><li value="12">a</li></ol>', None),
    ],
)
def test_number_lists_restates_only_short_integers(markup: str, expected: Any) -> None:
    root = lxml.html.fragment_fromstring(markup, create_parent="div")
    number_lists(root)
    assert root[0].get("style") == expected


def test_item_value_declarations() -> None:
    assert li_value_style(5) == "counter-set: list-item 5; counter-increment: list-item 0"


@pytest.mark.browser
def test_chromium_prints_the_same_numbers(tmp_path: Path) -> None:
    from tests.helpers import chromium_browser

    markdown = "# Items\n\n3. three [[S:5]]\n4. four [[S:2]]\n"
    render(markdown, tmp_path, sources_pool=POOL, formats=["html"], numbering="sid")
    with chromium_browser() as browser:
        page = browser.new_page()
        page.goto((tmp_path / "report.html").as_uri())
        (tmp_path / "chromium.pdf").write_bytes(page.pdf())
    lines = numbered_lines(tmp_path / "chromium.pdf")
    assert lines == ["3. three", "4. four", "2. Second", "5. Fifth"]
