"""PPTX decks as LibreOffice Impress draws them (converted to PDF, read back with pypdfium2)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from citations.pool import SourcePool
from renderers.options import RenderOptions
from renderers.readers.markdown import read_markdown
from renderers.resolve import resolve
from renderers.writers.pptx.output import pptx_bytes
from tests.helpers import convert_with_libreoffice, pdf_lines

pytestmark = pytest.mark.libreoffice

TERMS = ["interconnection", "levelized", "merchant", "tariff", "storage", "capacity",
         "transmission", "regional", "assessment", "distribution", "flexibility", "procurement",
         "hydrogen", "electrolysis", "offshore", "decarbonization", "methodology",
         "international", "comparative"]


def _title(sid: int) -> str:
    """A source title of 15 to 22 words (long linked titles are what LibreOffice wraps apart)."""
    return " ".join(TERMS[(sid * 3 + k * 7) % len(TERMS)].capitalize()
                    for k in range(15 + sid % 8))


def _sentences(k: int, count: int) -> str:
    return " ".join(
        f"The {TERMS[(k + j) % len(TERMS)]} market grew by {j} per cent in the "
        f"{TERMS[(k * j) % len(TERMS)]} segment [[S:{(k + j) % 45 + 1}]]." for j in range(count)
    )


def _crowded_deck_markdown() -> str:
    parts = ["# Crowded deck", "## Long paragraphs", *(_sentences(k, 14) for k in range(6)),
             "## Bullets", "\n".join(f"- {_sentences(k, 9)}" for k in range(5)),
             "## Table", "| Region | Notes | Value |\n|:--|:--|--:|"]
    parts[-1] += "".join(
        f"\n| Region {i} [[S:{i % 45 + 1}]] | "
        f"{' '.join(TERMS[(i + j) % len(TERMS)] for j in range(6))} | {i * 3} |"
        for i in range(40)
    )
    parts += ["## Every source", " ".join(f"Claim {i} [[S:{i}]]." for i in range(1, 46))]
    return "\n\n".join(parts) + "\n"


def _convert(markdown: str, pool: SourcePool, tmp_path: Path) -> pdfium.PdfDocument:
    path = tmp_path / "deck.pptx"
    path.write_bytes(pptx_bytes(resolve(read_markdown(markdown), pool), RenderOptions()))
    return pdfium.PdfDocument(convert_with_libreoffice(path, tmp_path))


def _outside(pdf: pdfium.PdfDocument) -> list[str]:
    """Every character whose box leaves its page: ``slide N: 'c'``."""
    found: list[str] = []
    for number, page in enumerate(pdf, start=1):
        width, height = page.get_size()
        chars = page.get_textpage()
        for index in range(chars.count_chars()):
            left, bottom, right, top = chars.get_charbox(index)
            if left < -0.5 or bottom < -0.5 or right > width + 0.5 or top > height + 0.5:
                found.append(f"slide {number}: {chars.get_text_range(index, 1)!r}")
    return found


def test_no_character_is_drawn_outside_its_slide_in_libreoffice(tmp_path: Path) -> None:
    pool = SourcePool.from_rows([
        {"sid": i, "title": _title(i), "url": f"https://www.example{i}.org/reports/2024/{i}",
         "published_at": "2024-03-01"} for i in range(1, 46)
    ])
    pdf = _convert(_crowded_deck_markdown(), pool, tmp_path)
    outside = _outside(pdf)
    assert not outside, f"{len(outside)} characters outside their slide: {outside[:5]}"
    text = [page.get_textpage().get_text_range() for page in pdf]
    everything = "".join("".join(text).split())  # LibreOffice may break a long link anywhere
    for sid in (1, 17, 45):  # the Sources slides hold every title in full
        assert "".join(_title(sid).split()) in everything
    assert len(pdf) >= 12


def test_a_byline_too_long_for_the_cover_flows_after_it_in_libreoffice(tmp_path: Path) -> None:
    """200 authors ran off the cover (its subtitle box does not flow on): the byline now goes to
    the slides after the cover, as a too-long subtitle does, and every name is shown."""
    names = [f"Author{i} Surname{i}" for i in range(1, 201)]
    quoted = ", ".join(f'"{name}"' for name in names)
    markdown = f"---\ntitle: Many hands\nauthor: [{quoted}]\ndate: 2024-05-01\n---\n\nBody.\n"
    pdf = _convert(markdown, SourcePool.from_rows([]), tmp_path)
    outside = _outside(pdf)
    assert not outside, f"{len(outside)} characters outside their slide: {outside[:5]}"
    pages = ["".join(page.get_textpage().get_text_range().split()) for page in pdf]
    assert pages[0] == "Manyhands"
    shown = re.sub(r"Manyhands(\(cont\.\))?|\(cont\.\)", "", "".join(pages[1:-1]))
    assert shown.startswith(";".join("".join(name.split()) for name in names) + "·")
    assert pages[-1] == "ManyhandsBody."


def _wide_and_lopsided_tables() -> str:
    """A table of 60 short columns, then a short column beside a cell of 600 characters."""
    head = "| " + " | ".join(f"C{c}" for c in range(60)) + " |\n|" + "---|" * 60
    body = "".join("\n| " + " | ".join(f"{r}.{c}" for c in range(60)) + " |" for r in range(3))
    long = " ".join(TERMS[k % len(TERMS)] for k in range(60))
    return (f"# Tables\n\n## Sixty columns\n\n{head}{body}\n\n## Lopsided\n\n"
            f"| Name | Notes |\n|---|---|\n| shortword | {long} |\n")


def test_wide_tables_stay_on_the_slide_and_short_columns_keep_their_words(
    tmp_path: Path,
) -> None:
    """Sixty columns with full insets ran off the slide; a short column beside a long cell
    broke its word ("shortwor/d")."""
    pdf = _convert(_wide_and_lopsided_tables(), SourcePool.from_rows([]), tmp_path)
    outside = _outside(pdf)
    assert not outside, f"{len(outside)} characters outside their slide: {outside[:5]}"
    text = "\n".join(page.get_textpage().get_text_range() for page in pdf)
    assert "shortword" in text
    cells = "".join(text.split())  # sixty columns are narrow: their cells wrap
    assert "C0C1C2" in cells and "C57C58C59" in cells and "2.572.582.59" in cells


# ---------------------------------------------------------------- right to left

RTL_DECK = """# عرض الطاقة

## العربية

نمت الطاقة الشمسية بسرعة كبيرة جدا في المنطقة [[S:1]] ثم تباطأت.

English paragraph grows [[S:2]] then slows.

- بند أول في القائمة الطويلة [[S:3]] مع نص
- second item in English [[S:2]]

| المنطقة | القيمة | ملاحظة |
|---|--:|:--|
| تونس [[S:4]] | 12 | يسار |

## עברית

האנרגיה הסולארית צמחה מהר מאוד באזור [[S:5]] ואז האטה.
"""
RTL_POOL = SourcePool.from_rows([
    {"sid": 1, "title": "تقرير الطاقة المتجددة في المنطقة العربية 2024", "url": "https://a.org/1"},
    {"sid": 2, "title": "Energy report", "url": "https://b.org/2"},
    {"sid": 3, "title": "تقرير القائمة", "url": "https://c.org/3"},
    {"sid": 4, "title": "تقرير الجدول", "url": "https://d.org/4"},
    {"sid": 5, "title": "דוח האנרגיה", "url": "https://e.org/5"},
])
Box = tuple[float, float, float, float]  # left, bottom, right, top (PDF points)


class PageChars:
    """The characters of one PDF page in text order, with their boxes."""

    def __init__(self, page: pdfium.PdfPage) -> None:
        chars = page.get_textpage()
        self.width = page.get_size()[0]
        self.text = chars.get_text_range()
        self.boxes: list[Box] = [chars.get_charbox(i) for i in range(chars.count_chars())]

    def word(self, word: str) -> Box:
        """The box around ``word`` (its first occurrence, characters in logical order)."""
        start = self.text.index(word)
        boxes = [b for b, ch in zip(self.boxes[start:start + len(word)], word, strict=True)
                 if not ch.isspace()]
        return (min(b[0] for b in boxes), min(b[1] for b in boxes),
                max(b[2] for b in boxes), max(b[3] for b in boxes))

    def raised_number(self, number: str, near: Box) -> Box:
        """The box of citation ``number`` raised above the line of ``near``."""
        middle = (near[1] + near[3]) / 2
        found = [
            b for i, b in enumerate(self.boxes)
            if self.text[i] == number and (b[1] + b[3]) / 2 > middle and b[1] < near[3] + 6
            and abs(b[0] - near[0]) < 400
        ]
        assert len(found) == 1, f"citation {number} near {near}: {found}"
        return found[0]


def test_right_to_left_paragraphs_items_and_cells_in_libreoffice(tmp_path: Path) -> None:
    from pptx import Presentation

    path = tmp_path / "deck.pptx"
    path.write_bytes(pptx_bytes(resolve(read_markdown(RTL_DECK), RTL_POOL), RenderOptions()))
    marked = {"".join(t.text or "" for t in p.iter(f"{A}t")): p.find(f"{A}pPr").get("rtl")
              for slide in Presentation(str(path)).slides
              for p in slide.element.iter(f"{A}p")}
    rtl_texts = [t for t, flag in marked.items() if flag == "1"]
    assert any(t.startswith("نمت الطاقة") for t in rtl_texts)
    assert any(t.startswith("بند أول") for t in rtl_texts)  # a list item
    assert any(t.startswith("تونس") for t in rtl_texts)  # a table cell
    assert any(t.startswith("האנרגיה") for t in rtl_texts)
    assert any(t.startswith("1. تقرير الطاقة") for t in rtl_texts)  # a Sources entry
    # an Arabic deck's Sources read right to left, its English entry too (the document's
    # direction); its English paragraph and item stay left to right
    assert any(t.startswith("2. Energy") for t in rtl_texts)
    assert not any(t.startswith(("English", "second item")) for t in rtl_texts)

    pdf = pdfium.PdfDocument(convert_with_libreoffice(path, tmp_path))
    assert not _outside(pdf)  # the Arabic title with a year stays whole on its Sources slide
    arabic, hebrew = PageChars(pdf[1]), PageChars(pdf[2])
    for page, first, before, after, number in ((arabic, "نمت", "المنطقة", "ثم", "1"),
                                               (hebrew, "האנרגיה", "באזור", "ואז", "5")):
        word, following = page.word(before), page.word(after)
        marker = page.raised_number(number, word)
        # read right to left: the word, then its citation number, then the next word
        assert following[2] <= marker[0] + 1 and marker[2] <= word[0] + 1, (
            f"citation {number} is not between {before!r} and {after!r}")
        assert page.word(first)[2] > page.width * 0.9, "the paragraph does not start at the right"
    english, english_next = arabic.word("grows"), arabic.word("then")
    marker = arabic.raised_number("2", english)
    assert english[2] <= marker[0] + 1 and marker[2] <= english_next[0] + 1
    assert arabic.word("English")[0] < arabic.width * 0.1  # left-to-right text stays left
    item = arabic.word("بند أول")
    assert item[2] > arabic.width * 0.85 and item[0] > arabic.width * 0.5
    cell = arabic.word("تونس")
    table_left, table_right = 36.0, arabic.width - 36.0
    columns = [c for c in _column_edges(path) if c[0] - 1 <= cell[0] and cell[2] <= c[1] + 1]
    assert columns, f"the cell {cell} lies in no column"
    left, right = columns[0]
    assert table_left <= left and right <= table_right
    assert right - cell[2] < cell[0] - left, "the cell's text does not start at the right"
    # a column aligned left (":--") is physically left, as DOCX, HTML and PDF show it
    note = arabic.word("يسار")
    columns = [c for c in _column_edges(path) if c[0] - 1 <= note[0] and note[2] <= c[1] + 1]
    assert columns, f"the cell {note} lies in no column"
    left, right = columns[0]
    assert note[0] - left < 12 < right - note[2], "the left column's text is not at the left"


A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"


def _column_edges(path: Path) -> list[tuple[float, float]]:
    """Column spans (points) of the deck's first table, in both the order written and mirrored
    (PowerPoint puts the first column of a right-to-left table at the right)."""
    from pptx import Presentation

    frame = next(shape for slide in Presentation(str(path)).slides for shape in slide.shapes
                 if shape.has_table)
    left, width = frame.left / 12700, frame.width / 12700
    widths = [col.width / 12700 for col in frame.table.columns]
    spans: list[tuple[float, float]] = []
    for order in (widths, widths[::-1]):
        x = left
        for w in order:
            spans.append((x, x + w))
            x += w
    assert abs(x - (left + width)) < 1
    return spans


def _shown_words(pdf: Path, page: int) -> list[str]:
    """The words pdftotext finds on ``page`` (1-based), each as it is shown: left to right."""
    shown = subprocess.run(
        ["pdftotext", "-bbox", "-f", str(page), "-l", str(page), str(pdf), "-"],
        check=True, capture_output=True, text=True,
    ).stdout
    return re.findall(r"<word [^>]*>([^<]*)</word>", shown)


def test_cont_reads_cont_after_a_right_to_left_title_and_paragraph(tmp_path: Path) -> None:
    arabic = " ".join(f"نمت الطاقة الشمسية في المنطقة رقم {k} بسرعة كبيرة." for k in range(80))
    path = tmp_path / "deck.pptx"
    path.write_bytes(pptx_bytes(resolve(read_markdown(f"## الطاقة\n\n{arabic}\n"), RTL_POOL),
                                RenderOptions()))
    words = _shown_words(convert_with_libreoffice(path, tmp_path), 2)
    # the continued title and the remainder of the split paragraph: "(cont.)" each, whole
    # (bare, the marker took the Arabic direction and showed as ").", "cont", "(")
    assert words.count("(cont.)") == 2, words[:12]
    assert "cont" not in words


@pytest.mark.parametrize("host", ["s", "source", "longersource"])
def test_libreoffice_keeps_each_number_with_its_label_in_a_wrapped_footer(
    host: str, tmp_path: Path
) -> None:
    """A slide's footer of two lines: each "[N]" is followed on its line by its label. With a
    space, a no-break space or a figure space between them, LibreOffice ended the first line
    with a bare "[9]" (or "[7]", "[12]": wherever a label did not fit the line's end)."""
    pool = SourcePool.from_rows([{"sid": n, "title": f"Source {n}",
                                  "url": f"https://{host}{n}.example"} for n in range(1, 15)])
    path = tmp_path / "footer.pptx"
    markdown = "# Energy report\n\nShort English text[[S:1-14]] here.\n"
    path.write_bytes(pptx_bytes(resolve(read_markdown(markdown), pool), RenderOptions()))
    lines = [text.replace("\u00a0", " ") for _, _, text in
             pdf_lines(convert_with_libreoffice(path, tmp_path).read_bytes())
             if re.search(r"\.example · ", text)]
    assert len(lines) == 2, lines
    shown = set()
    for line in lines:
        for number in re.finditer(r"\[(\d+)\]", line):
            label = f" {host}{number.group(1)}.example"
            assert line[number.end():].startswith(label), (number.group(0), line)
            shown.add(int(number.group(1)))
    assert shown == set(range(1, len(shown) + 1)) and len(shown) >= 12, lines
