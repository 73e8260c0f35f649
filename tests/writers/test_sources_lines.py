"""Where a Sources entry's lines break, read in each format as laid out: the PDF through WeasyPrint
(the HTML) and through Typst, the DOCX and the PPTX through LibreOffice (converted to PDF), each
read back line by line (:func:`tests.helpers.pdf_lines`).

An entry is ``1. Title — label · date ↑``. Titles of every length from a little under a line to
a little over it put the end of a line at every place in the entry's last words: before the fix
a line could start with "·" or "—" (the break fell before the separator) and the back-link "↑"
could stand alone on a line (LibreOffice breaks before a slide's link whatever precedes it).
Each test also checks that the layout did break at the neighbouring places (just after a
separator, before the word the arrow keeps), so that it proves something about those breaks."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from renderers.writers.common import BACKLINK_MARK
from tests.helpers import convert_all_with_libreoffice, pdf_lines
from tests.support.render import PoolRows, render_markdown

#: The titles' words after the first; a title has four of them to twelve.
WORDS = ["Global", "energy", "transition", "outlook", "for", "electricity", "markets", "and",
         "grid", "flexibility", "investment", "pathways"]
ENTRIES = 99
SEPARATORS = ("\u2014", "\u00b7")
#: A Sources entry's date, as the pool gives it (ISO).
DATE = re.compile(r"\d{4}-\d\d-\d\d")


def pool() -> PoolRows:
    """Sources whose titles lengthen a letter at a time (their first word, "Q" to
    "Qrrrrrrrrrr") and a word every eleven entries, each with a domain and a date (two
    separators): long enough to wrap on a page and on a slide."""
    rows: PoolRows = []
    for index in range(ENTRIES):
        first = "Q" + "r" * (index % 11)
        title = " ".join([first, *WORDS[: 4 + index // 11]])
        rows.append({"sid": index + 1, "title": title,
                     "url": f"https://www.energy-agency{index % 5}.org/r/{index}",
                     "published_at": f"2024-{index % 12 + 1:02d}-16", "source_type": "web"})
    return rows


def document() -> str:
    """Every source cited once, in order, so that each entry has its back-link."""
    claims = "\n\n".join(f"Claim {index} [[S:{index + 1}]]." for index in range(ENTRIES))
    return f"# Report\n\n{claims}\n"


def sources_lines(pdf: bytes) -> list[str]:
    """The lines of the PDF from the first entry's on (the Sources come last)."""
    lines = [text for _, _, text in pdf_lines(pdf)]
    first = next(i for i, line in enumerate(lines) if line.startswith("1. Q "))
    return lines[first:]


def assert_no_bad_break(lines: list[str]) -> None:
    """No line starts with a separator or is the back-link alone; and the entries did wrap
    right after a separator and carried the arrow's word to a new line, the places next to
    the bad ones."""
    for line in lines:
        assert not line.startswith(SEPARATORS), line
        assert line != BACKLINK_MARK and not line.startswith(BACKLINK_MARK), line
    assert any(line.endswith(SEPARATORS) for line in lines), lines
    assert any(DATE.fullmatch(line.removesuffix(BACKLINK_MARK).strip()) for line in lines), lines


@pytest.fixture(scope="module")
def office_pdfs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, bytes]]:
    """The DOCX and the PPTX as LibreOffice lays them out (one start for both)."""
    out = tmp_path_factory.mktemp("sources-lines")
    paths: list[Path] = []
    for fmt in ("docx", "pptx"):
        path = out / f"sources-{fmt}.{fmt}"  # LibreOffice names each PDF by its file's stem
        path.write_bytes(render_markdown(fmt, document(), pool()))  # type: ignore[arg-type]
        paths.append(path)
    pdfs = convert_all_with_libreoffice(paths, out)
    yield {path.suffix[1:]: pdf.read_bytes() for path, pdf in zip(paths, pdfs, strict=True)}


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_pdf_sources_lines_never_start_with_a_separator_or_the_back_link(engine: str) -> None:
    pdf = render_markdown("pdf", document(), pool(), pdf_engine=engine)
    assert_no_bad_break(sources_lines(pdf))


@pytest.mark.libreoffice
@pytest.mark.parametrize("fmt", ["docx", "pptx"])
def test_office_sources_lines_never_start_with_a_separator_or_the_back_link(
        office_pdfs: dict[str, bytes], fmt: str) -> None:
    assert_no_bad_break(sources_lines(office_pdfs[fmt]))


def test_markdown_keeps_plain_separators() -> None:
    # Markdown is read as text, by people and programs ("Title — domain · date"); the
    # renderer that shows it lays its footnotes out itself
    text = render_markdown("md", document(), pool()).decode("utf-8")
    assert "\u00a0" not in text
    assert ("[^1]: [Q Global energy transition outlook](https://www.energy-agency0.org/r/0)"
            " \u2014 energy-agency0.org \u00b7 2024-01-16\n") in text
