"""citeproc-py's departures from CSL that :mod:`renderers.styles.fixes` corrects, seen in the
files a render writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from renderers.api import render
from renderers.styles.fixes import given_initials

#: Authors in scripts without letter case, and a lower-case given name.
UNCASED_POOL: list[dict[str, Any]] = [
    {"sid": 1, "title": "风能报告", "url": "https://example.cn/wind", "author": "王, 小明",
     "published_at": "2023"},
    {"sid": 2, "title": "太阳能成本", "url": "https://example.cn/solar",
     "authors": [{"family": "李", "given": "华"}], "published_at": "2022"},
    {"sid": 3, "title": "דו\"ח אנרגיה", "url": "https://example.co.il/x", "author": "כהן, דוד",
     "published_at": "2021"},
    {"sid": 4, "title": "Mixed names", "url": "https://example.com/m", "published_at": "2019",
     "authors": [{"family": "Da Silva", "given": "jean-luc"},
                 {"family": "Smith", "given": "John Paul"}]},
]
UNCASED_TEXT = "Wind.[[S:1]] Sun.[[S:2]] Energy.[[S:3]] Names.[[S:4]]\n"


def rendered_md(tmp_path: Path, content: str, pool: list[dict[str, Any]], csl: str) -> str:
    render(content, tmp_path, name=csl, formats=["md"], sources_pool=pool, csl=csl)
    return (tmp_path / f"{csl}.md").read_text("utf-8")


@pytest.mark.parametrize(
    ("given", "mark", "hyphenate", "expected"),
    [
        ("John Paul", ". ", True, "J. P."),
        ("John Paul", ".", True, "J.P."),
        ("John Paul", "", False, "JP"),
        ("Jean-Paul", ". ", True, "J.-P."),
        ("Jean-Paul", "", False, "JP"),
        ("J.R.R.", ". ", True, "J. R. R."),
        ("Ludwig van", ". ", True, "L. van"),
        ("jean-luc", ". ", True, "jean-luc"),
        ("jean-luc", "", False, "jean-luc"),
        ("小明", ". ", True, "小明"),
        ("דוד", ". ", True, "דוד"),
        ("John 小", ". ", True, "J. 小"),
    ],
)
def test_given_initials(given: str, mark: str, hyphenate: bool, expected: str) -> None:
    assert given_initials(given, mark, hyphenate=hyphenate) == expected


@pytest.mark.parametrize(
    ("csl", "entries"),
    [
        ("apa", ["王, 小明. (2023).", "李, 华. (2022).", "כהן, דוד. (2021).",
                 "Da Silva, jean-luc, & Smith, J. P. (2019)."]),
        ("ieee", ["小明 王, “风能报告", "华 李, “太阳能成本", "דוד כהן, “דו\"ח",
                  "jean-luc Da Silva and J. P. Smith, “Mixed names"]),
        ("harvard", ["王, 小明 (2023)", "李, 华 (2022)", "כהן, דוד (2021)"]),
        ("nature", ["王, 小明. 风能报告.", "李, 华. 太阳能成本.", "כהן, דוד. דו\"ח"]),
        ("vancouver", ["王 小明. 风能报告", "李 华. 太阳能成本", "Da Silva jean-luc, Smith JP."]),
    ],
)
def test_names_without_letter_case_are_not_initialised(
    tmp_path: Path, csl: str, entries: list[str]
) -> None:
    text = rendered_md(tmp_path, UNCASED_TEXT, UNCASED_POOL, csl)
    for entry in entries:
        assert entry in text, text
    assert ". 小明" not in text and " . " not in text, text
