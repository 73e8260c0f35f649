"""Limits on what a small input expands to: cited sids, table cells, raster pixels, page size.

Each test feeds the shape of a reported attack at a small scale with a low configured limit and
checks the limit error names the limit, or that the output stays proportional to the input.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from renderers.api import render
from renderers.document import Table
from renderers.errors import LimitError
from renderers.options import Limits
from renderers.readers.html import read_html
from renderers.readers.markdown import read_markdown

POOL: list[dict[str, Any]] = [
    {"sid": n, "title": f"Source {n}", "url": f"https://example.org/{n}"} for n in range(1, 1001)
]


# ------------------------------------------------------------------ cited sids (ranges)


@pytest.mark.parametrize("reader", [read_markdown, read_html])
def test_ranges_are_counted_against_max_cited_sids(reader: Any) -> None:
    content = "Claim [[S:1-1000]] " * 11
    with pytest.raises(LimitError, match=r"more than 10000 sids .*limits\.max_cited_sids"):
        reader(content, limits=Limits(max_cited_sids=10_000))
    assert len(reader("Claim [[S:1-1000]] " * 10, limits=Limits(max_cited_sids=10_000)).blocks)


def test_markdown_counts_citations_while_parsing() -> None:
    """The sid limit fires during parsing: nesting past its limit later in the same input is
    only found after the parse, so the citation limit must be the one reported."""
    content = "Claim [[S:1-1000]] " * 20 + "\n\n" + "> " * 200 + "deep"
    with pytest.raises(LimitError, match=r"limits\.max_cited_sids"):
        read_markdown(content, limits=Limits(max_cited_sids=10_000))
    with pytest.raises(LimitError, match=r"limits\.max_citations"):
        read_markdown("x [[S:1]] " * 50 + "\n\n" + "> " * 200 + "deep",
                      limits=Limits(max_citations=20))


def test_markdown_output_references_every_number_of_a_run(tmp_path: Path) -> None:
    """A footnote definition no reference names drops out of rendered Markdown, so a run is
    one reference per number (bounded by ``max_cited_sids``), never ``[^1]–[^1000]``."""
    (result,) = render("Claim [[S:1-1000]] and [[S:1,2,5]].", tmp_path, name="r",
                       formats=("md",), sources_pool=POOL)
    text = result.path.read_text("utf-8")
    body = text.split("\n\n")[0]
    assert "\u2013" not in body
    assert len(re.findall(r"\[\^\d+\]", body)) == 1000 + 3  # the run's numbers, then 1, 2, 5
    assert text.count("[^500]: [Source 500](") == 1 and "[^500]" in body


# ------------------------------------------------------------------ page size and raster pixels

HUGE_PAGE = "<html><head><style>@page{size:200in 200in}</style></head><body><p>x</p></body></html>"


def test_author_css_page_size_is_refused_before_rasterizing(tmp_path: Path) -> None:
    with pytest.raises(LimitError, match=r"page 1 is 200 × 200 inches.*limits\.max_page_inches"):
        render(HUGE_PAGE, tmp_path, name="big", formats=("png",), content_format="html")
    assert not list(tmp_path.glob("*.png"))


@pytest.mark.slow
def test_png_bytes_are_counted_as_pages_are_encoded(tmp_path: Path) -> None:
    """Many pages at a high dpi: the render stops at the first page past ``max_png_bytes``
    and writes nothing; under the limit every page is written."""
    content = "".join(f"## Part {i}\n\n" + "Solar and wind grew again. " * 300 + "\n\n"
                      for i in range(6))
    (result,) = render(content, tmp_path, name="ok", formats=("png",), dpi=100)
    sizes = [path.stat().st_size for path in result.paths]
    assert len(sizes) >= 4
    limit = sum(sizes[:2]) + 1
    with pytest.raises(LimitError, match=rf"the first 3 of {len(sizes)} PNG pages are already "
                       r"[\d,]+ bytes; the limit is [\d,]+ \(limits\.max_png_bytes\)"):
        render(content, tmp_path, name="big", formats=("png",), dpi=100,
               limits={"max_png_bytes": limit})
    assert not list(tmp_path.glob("big*"))


def test_raster_pixels_are_refused_before_rasterizing(tmp_path: Path) -> None:
    page = HUGE_PAGE.replace("200in 200in", "40in 40in")
    with pytest.raises(LimitError, match=r"page 1 would be 576,000,000 pixels at 600 dpi.*"
                       r"limits\.max_raster_pixels"):
        render(page, tmp_path, name="big", formats=("png",), content_format="html", dpi=600,
               limits={"max_raster_pixels": 10_000_000})
    (result,) = render(page, tmp_path, name="ok", formats=("png",), content_format="html",
                       dpi=10)
    assert result.paths[0].read_bytes()[16:24] == (400).to_bytes(4, "big") * 2  # IHDR size


# ------------------------------------------------------------------ table cells


@pytest.mark.slow
def test_a_wide_markdown_table_is_refused_before_parsing() -> None:
    columns = 5_000
    table = "|" + " a |" * columns + "\n|" + " - |" * columns + "\n" + "| x |\n" * 300
    with pytest.raises(LimitError, match=r"301 rows × 5000 columns .*limits\.max_table_cells"):
        read_markdown(table, limits=Limits(max_table_cells=1_000_000))
    (small,) = read_markdown(table[: table.index("| x |")] + "| x |\n" * 3).blocks
    assert isinstance(small, Table) and len(small.rows) == 3 and len(small.rows[0]) == columns


def test_a_wide_html_table_is_refused_while_reading() -> None:
    table = "<table><tr>" + "<td>a</td>" * 5_000 + "</tr>" + "<tr><td>x</td></tr>" * 300
    with pytest.raises(LimitError, match=r"5000 columns .*limits\.max_table_cells"):
        read_html(table + "</table>", limits=Limits(max_table_cells=1_000_000))
    (small,) = read_html(table[: -len("<tr><td>x</td></tr>") * 297] + "</table>").blocks
    assert isinstance(small, Table) and len(small.rows) == 4 and len(small.rows[3]) == 5_000


def test_a_pool_list_is_counted_before_its_rows_are_read(tmp_path: Path) -> None:
    """Rows past the limit are never read: an invalid row after it would fail differently."""
    rows: list[Any] = [*POOL[:5], "not a row"]
    with pytest.raises(LimitError, match=r"6 rows; the limit is 5 \(limits\.max_pool_rows\)"):
        render("x", tmp_path, name="p", formats=("md",), sources_pool=rows,
               limits={"max_pool_rows": 5})


@pytest.mark.parametrize("shape", ["json-text", "json-file", "yaml-file", "json-object-text"])
def test_pool_text_and_files_are_counted_while_parsing(tmp_path: Path, shape: str) -> None:
    """A pool over the limit is refused before it is read whole: the parse stops at the first row
    past the limit (a bad row after it would otherwise be reported instead)."""
    rows = [{"sid": i, "title": f"Source {i}"} for i in range(1, 8)]
    text = json.dumps([*rows, {"sid": "not a number"}])
    pool: Any = text
    if shape == "json-object-text":
        pool = json.dumps({"sources_pool": json.loads(text)})
    elif shape == "json-file":
        pool = tmp_path / "pool.json"
        pool.write_text(text, encoding="utf-8")
    elif shape == "yaml-file":
        pool = tmp_path / "pool.yaml"
        pool.write_text(yaml.safe_dump(json.loads(text)), encoding="utf-8")
    refused = r"(at least 6|8) rows; the limit is 5 \(limits\.max_pool_rows\)"
    with pytest.raises(LimitError, match=refused) as caught:
        render("x", tmp_path, name="p", formats=("md",), sources_pool=pool,
               limits={"max_pool_rows": 5})
    assert caught.value.field == "sources_pool"


@pytest.mark.slow
def test_pdf_layout_stops_at_the_first_page_past_max_pages(tmp_path: Path) -> None:
    """WeasyPrint would lay out every page before the count could be checked; the layout is
    stopped when it announces page ``max_pages + 1``."""
    import logging

    announced: list[int] = []

    class Recorder(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            if "Creating layout - Page" in str(record.msg) and isinstance(record.args, tuple):
                announced.append(int(record.args[0]))
            return True

    long_report = "# Long\n\n" + "\n\n".join(
        f"Paragraph {i} " + "words " * 80 + "[[S:1]]" for i in range(400)
    )
    progress = logging.getLogger("weasyprint.progress")
    recorder = Recorder()
    progress.filters.insert(0, recorder)
    try:
        # its text needs at least 13 pages, which the estimate before layout lets through
        with pytest.raises(LimitError, match=r"more than 20 pages; the limit is 20") as caught:
            render(long_report, tmp_path, formats=("pdf",), sources_pool=POOL,
                   limits={"max_pages": 20})
    finally:
        progress.removeFilter(recorder)
    assert caught.value.field == "content"
    assert max(announced) == 21  # of about 60 pages, 21 were started
    assert not (tmp_path / "report.pdf").exists()


def test_a_report_whose_text_needs_too_many_pages_is_refused_before_layout(
    tmp_path: Path,
) -> None:
    from renderers.writers.pdf import MAX_CHARS_PER_PAGE

    text = "\n\n".join("word " * 100 for _ in range(3 * MAX_CHARS_PER_PAGE // 500 + 10))
    with pytest.raises(LimitError, match=r"need at least 3 pages; the limit is 2"):
        render(text, tmp_path, formats=("pdf",), sources_pool=POOL, limits={"max_pages": 2})
    render(text, tmp_path, name="fits", formats=("pdf",), sources_pool=POOL,
           limits={"max_pages": 200})
    assert (tmp_path / "fits.pdf").exists()
