"""The DOCX Title's letter spacing, read back from the produced styles.xml: kept for a Latin
title, dropped for a title whose letters join (LibreOffice drew an Arabic title torn apart, a
baseline stroke through it)."""

from __future__ import annotations

import io
import zipfile

import pytest
from lxml import etree

from tests.support.render import render_markdown

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def title_tracking(docx: bytes) -> str | None:
    """The ``w:spacing w:val`` of the Title style's run properties (None: no tracking)."""
    with zipfile.ZipFile(io.BytesIO(docx)) as package:
        styles = etree.fromstring(package.read("word/styles.xml"))
    title = next(style for style in styles.iter(f"{W}style")
                 if style.find(f"{W}name").get(f"{W}val") == "Title")
    tracking = title.find(f"{W}rPr/{W}spacing")
    return None if tracking is None else tracking.get(f"{W}val")


@pytest.mark.parametrize("title", [
    "هل تستحق المضخات الحرارية الاستثمار؟",  # Arabic
    "ऊर्जा संक्रमण रिपोर्ट",  # Devanagari
    "Heat pumps: تقرير",  # a Latin title with an Arabic word
])
def test_a_title_whose_letters_join_is_not_letter_spaced(title: str) -> None:
    docx = render_markdown("docx", f"# {title}\n\nBody text.\n", [])
    assert title_tracking(docx) is None


@pytest.mark.parametrize("title", ["Energy report", "日本語の報告書", "Ελληνικά"])
def test_other_titles_keep_the_template_tracking(title: str) -> None:
    docx = render_markdown("docx", f"# {title}\n\nBody text.\n", [])
    assert title_tracking(docx) == "5"


def test_a_front_matter_title_counts_too() -> None:
    markdown = "---\ntitle: الخلاصة\nlang: ar\n---\n\nنص.\n"
    assert title_tracking(render_markdown("docx", markdown, [])) is None
