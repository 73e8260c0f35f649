"""DOCX tables sized by their content, and Sources dates and back-links that never break.

Read back from the produced file (the grid, each cell's width, the no-break hyphens) and
through LibreOffice's PDF, where equal columns broke "PagedAttention" and a plain hyphen broke
"2022-04-/04".
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from renderers.writers.common import ColumnNeed, column_widths
from tests.helpers import convert_with_libreoffice, pdf_lines
from tests.support.render import render_markdown

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
#: A4 less two one-inch margins, in twips: the default template's text width.
TEXT_WIDTH = 11906 - 2 * 1440

NOTES = (
    "Uses PagedAttention to page the KV cache in fixed blocks; see "
    "https://docs.vllm.ai/en/latest/design/kernel/paged_attention.html for the kernel design "
    "and published benchmarks."
)
ANSWER = f"""# Serving engines

| Engine | Batching | Memory | Notes |
|---|---|---|---|
| vLLM | continuous | PagedAttention | {NOTES}[[S:1]] |
| TGI | continuous | flash | Text Generation Inference supports tensor parallelism and \
quantization (bitsandbytes, GPTQ, AWQ).[[S:2]] |
| TensorRT-LLM | in-flight | paged KV | Highest single-GPU throughput in NVIDIA's own \
measurements, but needs an engine compiled per model and GPU. |

| # | Engine | Year | License | Memory | Notes |
|---|---|---|---|---|---|
| 1 | vLLM | 2023 | Apache | PagedAttention | {NOTES} |
| 2 | TGI | 2022 | Apache | flash | Supports tensor parallelism. |

Key | Value
--- | ---
a | one line of a few words

Every source once:{"".join(f"[[S:{n}]]" for n in range(1, 25))}
"""


def _pool() -> list[dict[str, Any]]:
    """Sources whose titles grow a word at a time, so that some date falls at a line's end."""
    words = ["Solar", "wind", "storage", "grid", "market", "review", "outlook", "capacity",
             "prices", "demand"]
    return [
        {"sid": n, "title": " ".join(words[: 1 + n % 10]) + f" report {n} " + "x" * (n % 7),
         "url": f"https://example.org/{n}", "source_type": "web",
         "published_at": f"20{10 + n}-0{1 + n % 9}-1{n % 10}", "text": "Text."}
        for n in range(1, 25)
    ]


@pytest.fixture(scope="module")
def data() -> bytes:
    return render_markdown("docx", ANSWER, _pool())


def _body(data: bytes) -> etree._Element:
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        return etree.fromstring(package.read("word/document.xml"))


def _grid(table: etree._Element) -> list[int]:
    return [int(col.get(f"{W}w", "0")) for col in table.iter(f"{W}gridCol")]


def test_columns_follow_their_content_within_the_text_width(data: bytes) -> None:
    long, wide, short = _body(data).iter(f"{W}tbl")
    widths = _grid(long)
    assert sum(widths) == TEXT_WIDTH
    assert long.find(f"{W}tblPr/{W}tblLayout").get(f"{W}type") == "fixed"
    assert long.find(f"{W}tblPr/{W}tblW").get(f"{W}w") == str(TEXT_WIDTH)
    for row in long.iter(f"{W}tr"):  # every cell as wide as its grid column
        assert [int(w.get(f"{W}w")) for w in row.iter(f"{W}tcW")] == widths
    engine, batching, memory, notes = widths
    assert notes == max(widths) and notes > TEXT_WIDTH / 3
    # a short column holds its longest word: "PagedAttention" at 11 pt is about 1,600 twips
    assert memory > 1700 and batching > 1200 and engine > 1500
    # six columns: the short ones give the long words room (equal shares broke them)
    number, _, year, _, memory, notes = _grid(wide)
    assert memory > 1700 and notes == max(_grid(wide)) and number < year < 1200
    # a table whose cells all fit on one line: shares follow the lines' lengths
    first, second = _grid(short)
    assert first + second == TEXT_WIDTH and second > 3 * first


def test_the_shared_rule() -> None:
    # all on one line: proportional
    assert column_widths([ColumnNeed(10, 5), ColumnNeed(30, 5)], 80, 2) == [20.0, 60.0]
    # wrapping: each keeps its word, the long column takes the rest (its preference capped)
    widths = column_widths([ColumnNeed(20, 20), ColumnNeed(400, 30)], 100, 2)
    assert widths == [20.0, 80.0]
    # a word longer than an equal share is held to one
    widths = column_widths([ColumnNeed(300, 300), ColumnNeed(300, 10)], 100, 2)
    assert widths[0] >= 50 and sum(widths) == pytest.approx(100)
    # not even the floors fit: equal shares
    assert column_widths([ColumnNeed(5, 5)] * 4, 10, 4) == [2.5] * 4


def test_sources_dates_hold_no_break_hyphens(data: bytes) -> None:
    entries = [p for p in _body(data).iter(f"{W}p")
               if any(t.text and t.text.startswith("20") for t in p.iter(f"{W}t"))
               and p.find(f".//{W}noBreakHyphen") is not None]
    assert len(entries) == 24
    for entry in entries:
        assert len(list(entry.iter(f"{W}noBreakHyphen"))) == 2
        back = [t.text for h in entry.iter(f"{W}hyperlink") if h.get(f"{W}anchor")
                for t in h.iter(f"{W}t")]
        assert back == ["\u00a0\u2191"]


@pytest.mark.libreoffice
def test_libreoffice_keeps_words_dates_and_back_links_whole(data: bytes, tmp_path: Path) -> None:
    path = tmp_path / "tables.docx"
    path.write_bytes(data)
    lines = [text.strip() for _, _, text in
             pdf_lines(convert_with_libreoffice(path, tmp_path).read_bytes())]
    joined = "\n".join(lines)
    for word in ("PagedAttention", "continuous", "TensorRT-LLM", "in-flight"):
        assert re.search(rf"(^|\s){re.escape(word)}(\s|$)", joined, re.M), (word, joined)
    assert not re.search("PagedAttentio(?!n)", joined), joined
    dates = re.findall(r"20\d\d-\d\d-\d\d", joined)
    assert len(dates) == 24, joined  # none broken at a hyphen
    assert "\u2191" not in lines  # no back-link alone on a line
    assert not any(line.startswith("\u2191") for line in lines)


def _runs(entry: etree._Element) -> list[tuple[str, bool]]:
    """Each run of ``entry`` as its text and whether it is marked right to left (``w:rtl``)."""
    return [("".join(t.text or "" for t in r.iter(f"{W}t")), r.find(f"{W}rPr/{W}rtl") is not None)
            for r in entry.iter(f"{W}r")]


def _arabic_entry(title: str, **row: str) -> etree._Element:
    """The Sources entry of an Arabic report citing one source titled ``title``."""
    pool = [{"sid": 1, "title": title, "url": "https://example.org/a", "source_type": "web",
             "published_at": "2024-10-16", "text": "نص.", **row}]
    body = _body(render_markdown("docx", "# تقرير\n\nنص عربي.[[S:1]]\n", pool))
    return next(p for p in body.iter(f"{W}p")
                if p.find(f".//{W}bookmarkStart[@{W}name='src_1']") is not None)


def test_a_right_to_left_entry_holds_its_date_left_to_right_and_whole() -> None:
    """The date follows a LEFT-TO-RIGHT MARK (its hyphens then read between its digits, not
    "16-10-2024"), in a run not marked ``w:rtl`` (which would make its hyphens right to left in
    Word), each hyphen followed by a WORD JOINER: Word's no-break hyphen LibreOffice cut or
    garbled in a right-to-left line (``test_sources_lines`` reads them through LibreOffice)."""
    entry = _arabic_entry("تقرير الطاقة")
    assert entry.find(f".//{W}noBreakHyphen") is None
    runs = _runs(entry)
    date = next(index for index, (text, _) in enumerate(runs) if "2024" in text)
    assert runs[date] == ("\u200e2024-\u206010-\u206016", False)
    assert runs[date + 1] == ("\u200f", True)  # the closing mark, then the back-link
    assert ("\u200f\u00a0\u00b7 ", True) in runs and ("example.org\u200e", False) in runs


def test_a_right_to_left_entry_marks_only_its_right_to_left_text_rtl() -> None:
    # w:rtl makes a run's spaces right to left in Word: "Global Energy" would read "Energy
    # Global"; and a run without it should hold no Arabic letters (ECMA-376 §17.3.2.30)
    runs = _runs(_arabic_entry("تقرير Global Energy للعام 2024"))
    assert runs[1:4] == [("تقرير ", True), ("Global Energy", False), (" للعام 2024", True)]
