"""Where a Sources entry's lines break, read in each format as laid out: the PDF through WeasyPrint
(the HTML) and through Typst, the DOCX and the PPTX through LibreOffice (converted to PDF), each
read back line by line (:func:`tests.helpers.pdf_lines`).

An entry is ``1. Title — label · date ↑``. Titles of every length from a little under a line to
a little over it put the end of a line at every place in the entry's last words: before the fix
a line could start with "·" or "—" (the break fell before the separator) and the back-link "↑"
could stand alone on a line (LibreOffice breaks before a slide's link whatever precedes it).
Each test also checks that the layout did break at the neighbouring places (just after a
separator, before the word the arrow keeps), so that it proves something about those breaks.

The same entries in Arabic on slides: LibreOffice lays a link field out left to right in a
right-to-left paragraph, and the back-link kept its space outside the link there; the arrow
stood alone on a line (3 times in 120 entries) and the dates, outside the link, broke at their
hyphens (10 pieces: "2024-" ending one line, "↑ 01-16" the next).

And in a right-to-left DOCX, where the dates' hyphens were Word's no-break hyphens: LibreOffice
Writer lays each out as a piece of its own, and in the left-to-right date of a right-to-left line
it cut 19 of 110 dates where the line was full ("2024-03-1", "↑ 6") and drew two entries' ends
over themselves ("2024‑- ·1 e1n‑1e6rg ↑y-agency0.org")."""

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
#: The Arabic titles' words after the first, for a right-to-left report; from six words to
#: sixteen, as Arabic words are narrow; the longest title fits a slide's line (a longer one,
#: a link LibreOffice wraps inside, would start the next line with the details' " — ").
ARABIC = ["الطاقة", "العالمية", "وآفاق", "التحول", "في", "أسواق", "الكهرباء", "والشبكات",
          "المرنة", "والاستثمار", "المستدام", "الطويل", "للمنطقة", "العربية", "ومستقبل",
          "الإمدادات", "النظيفة", "والمتجددة"]
ARABIC_ENTRIES = 110
#: A Sources entry's date, as the pool gives it (ISO).
DATE = re.compile(r"\d{4}-\d\d-\d\d")


def pool(rtl: bool = False) -> PoolRows:
    """Sources whose titles lengthen a letter at a time (their first word, "Q" to
    "Qrrrrrrrrrr"; in Arabic "ت" to "تقققققققققق") and a word every eleven entries, each with a
    domain and a date (two separators): long enough to wrap on a page and on a slide."""
    rows: PoolRows = []
    for index in range(ARABIC_ENTRIES if rtl else ENTRIES):
        if rtl:
            title = " ".join(["ت" + "ق" * (index % 11), *ARABIC[: 6 + index // 11]])
        else:
            title = " ".join(["Q" + "r" * (index % 11), *WORDS[: 4 + index // 11]])
        rows.append({"sid": index + 1, "title": title,
                     "url": f"https://www.energy-agency{index % 5}.org/r/{index}",
                     "published_at": f"2024-{index % 12 + 1:02d}-16", "source_type": "web"})
    return rows


def document(rtl: bool = False) -> str:
    """Every source cited once, in order, so that each entry has its back-link; in Arabic the
    report, and so its Sources, reads right to left."""
    if rtl:
        claims = "\n\n".join(f"ادعاء {index} [[S:{index + 1}]]." for index in range(ARABIC_ENTRIES))
        return f"# تقرير\n\n{claims}\n"
    claims = "\n\n".join(f"Claim {index} [[S:{index + 1}]]." for index in range(ENTRIES))
    return f"# Report\n\n{claims}\n"


def sources_lines(pdf: bytes, rtl: bool = False) -> list[str]:
    """The lines of the PDF from the first entry's on (the Sources come last), each read left
    to right as drawn: a right-to-left entry's first line ends with its number (".1")."""
    lines = [text for _, _, text in pdf_lines(pdf)]
    if rtl:
        first = next(i for i, line in enumerate(lines) if re.search(r"(?<![\d.])\.1$", line))
    else:
        first = next(i for i, line in enumerate(lines) if line.startswith("1. Q "))
    return [line for line in lines[first:] if not line.startswith("Sources")]


def assert_no_bad_break(lines: list[str]) -> None:
    """No line starts with a separator or is the back-link alone; and the entries did wrap
    right after a separator and carried the arrow's word to a new line, the places next to
    the bad ones."""
    for line in lines:
        assert not line.startswith(SEPARATORS), line
        assert line != BACKLINK_MARK and not line.startswith(BACKLINK_MARK), line
    assert any(line.endswith(SEPARATORS) for line in lines), lines
    assert any(DATE.fullmatch(line.removesuffix(BACKLINK_MARK).strip()) for line in lines), lines


def assert_no_bad_break_rtl(lines: list[str]) -> None:
    """Read as drawn, a right-to-left entry ends at the left: no line ends (starts, in reading
    order) with a separator, every arrow starts its line, followed by a whole date in its
    order ("↑ 2024-10-16", not "↑ 16" or "16-10-2024 ↑"), and no date is cut at a hyphen
    ("2024-" ending a line). And the layout did break next to those places: a line ends
    with a separator, another holds the arrow and its date alone."""
    for line in lines:
        assert not line.endswith(SEPARATORS), line
        if BACKLINK_MARK in line:
            assert re.match(rf"{BACKLINK_MARK} {DATE.pattern}( |$)", line), line
        for number in re.findall(r"[\d-]*\d[\d-]*", line):
            assert "-" not in number or DATE.fullmatch(number), line
    assert sum(BACKLINK_MARK in line for line in lines) == ARABIC_ENTRIES
    assert any(line.startswith(SEPARATORS) for line in lines), lines
    assert any(re.fullmatch(rf"{BACKLINK_MARK} {DATE.pattern}", line) for line in lines), lines


#: What a line of a right-to-left entry may hold besides Arabic words, read as drawn: the
#: marker (".12"), a separator, the arrow, a date, a domain (or its halves, broken at its
#: hyphen). Characters of two of them drawn over each other ("e1n‑1e6rg") match none.
RTL_TOKEN = re.compile(rf"\.\d+|[{''.join(SEPARATORS)}{BACKLINK_MARK}]|{DATE.pattern}"
                       r"|(?:energy-)?(?:agency\d\.org)?")


def assert_read_whole(lines: list[str]) -> None:
    """Every line of right-to-left entries holds only whole parts: no characters of one part
    drawn among another's."""
    for line in lines:
        tokens = re.sub(r"[\u0600-\u06ff]+", " ", line).split()
        assert all(RTL_TOKEN.fullmatch(token) for token in tokens), line


#: The files LibreOffice lays out, by name: their format and whether the report is Arabic.
OFFICE_FILES: dict[str, tuple[str, bool]] = {
    "docx": ("docx", False), "pptx": ("pptx", False), "pptx-rtl": ("pptx", True),
    "docx-rtl": ("docx", True)}


@pytest.fixture(scope="module")
def office_pdfs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, bytes]]:
    """The DOCX and the PPTXs as LibreOffice lays them out (one start for all)."""
    out = tmp_path_factory.mktemp("sources-lines")
    paths: list[Path] = []
    for name, (fmt, rtl) in OFFICE_FILES.items():
        path = out / f"sources-{name}.{fmt}"  # LibreOffice names each PDF by its file's stem
        path.write_bytes(render_markdown(fmt, document(rtl), pool(rtl)))  # type: ignore[arg-type]
        paths.append(path)
    pdfs = convert_all_with_libreoffice(paths, out)
    yield {name: pdf.read_bytes() for name, pdf in zip(OFFICE_FILES, pdfs, strict=True)}


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_pdf_sources_lines_never_start_with_a_separator_or_the_back_link(engine: str) -> None:
    pdf = render_markdown("pdf", document(), pool(), pdf_engine=engine)
    assert_no_bad_break(sources_lines(pdf))


@pytest.mark.libreoffice
@pytest.mark.parametrize("fmt", ["docx", "pptx"])
def test_office_sources_lines_never_start_with_a_separator_or_the_back_link(
        office_pdfs: dict[str, bytes], fmt: str) -> None:
    assert_no_bad_break(sources_lines(office_pdfs[fmt]))


@pytest.mark.libreoffice
def test_right_to_left_slide_keeps_the_back_link_with_its_date(
        office_pdfs: dict[str, bytes]) -> None:
    # the arrow in the link with the entry's last word, in a right-to-left embedding
    # (renderers.writers.pptx.runs.with_backlink): never alone, left of the date it ends
    assert_no_bad_break_rtl(sources_lines(office_pdfs["pptx-rtl"], rtl=True))


@pytest.mark.libreoffice
def test_right_to_left_docx_keeps_each_date_whole(office_pdfs: dict[str, bytes]) -> None:
    # a date's hyphens each a hyphen-minus and a word joiner, not Word's no-break hyphen
    # (renderers.writers.docx.oxml._dated_text): each date whole, the arrow left of it
    lines = sources_lines(office_pdfs["docx-rtl"], rtl=True)
    assert_no_bad_break_rtl(lines)
    assert_read_whole(lines)


def test_markdown_keeps_plain_separators() -> None:
    # Markdown is read as text, by people and programs ("Title — domain · date"); the
    # renderer that shows it lays its footnotes out itself
    text = render_markdown("md", document(), pool()).decode("utf-8")
    assert "\u00a0" not in text
    assert ("[^1]: [Q Global energy transition outlook](https://www.energy-agency0.org/r/0)"
            " \u2014 energy-agency0.org \u00b7 2024-01-16\n") in text
