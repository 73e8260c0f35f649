"""A bidi control in a pool field (an override, an embedding or an isolate left open, a stray
closer) stays inside that field in every format's Sources. Open, U+202E in one title reversed
the rest of its entry in the Typst PDF ("gro.elpmaxe · 61-01-4202") and reached the HTML and
the Markdown as written, where the bidi algorithm runs it to the end of the line; a stray
U+2069 would close a writer's own isolate around the title. Each field is now balanced
(:func:`renderers.text.balanced_bidi`) where the entries are made: the default entry
(:func:`renderers.writers.common.entry_parts`), the preview and a CSL style's fields."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path
from typing import Any

import lxml.html
import pytest
from lxml import etree
from pypdf import PdfReader

from renderers.api import render
from renderers.text import balanced_bidi

RLO, PDF, RLI, PDI, LRE, FSI = "\u202e", "\u202c", "\u2067", "\u2069", "\u202a", "\u2068"
POOL: list[dict[str, Any]] = [
    {"sid": 1, "title": f"Evil {RLO}abc def", "url": "https://example.org/",
     "published_at": "2024-10-16"},
    {"sid": 2, "title": f"Next {RLI}title", "url": "https://next.example/",
     "published_at": "2023-01-02"},
    {"sid": 3, "title": f"Stray{PDI} closer{PDF}", "url": "https://third.example/"},
]
TEXT = "# Doc\n\nOne.[[S:1]] Two.[[S:2]] Three.[[S:3]]\n"
#: Each title as every format shows it: closed at its end, its stray closers dropped.
SHOWN = [f"Evil {RLO}abc def{PDF}", f"Next {RLI}title{PDI}", "Stray closer"]
CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f]")
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


@pytest.mark.parametrize(("text", "balanced"), [
    ("plain", "plain"),
    (f"a{RLO}b", f"a{RLO}b{PDF}"),
    (f"a{PDF}b{PDI}c", "abc"),  # closers of nothing the field opened
    (f"{RLI}x{RLO}y{PDI}z", f"{RLI}x{RLO}y{PDI}z"),  # the isolate's end closes the override
    (f"{RLO}x{RLI}y{PDF}z", f"{RLO}x{RLI}yz{PDI}{PDF}"),  # no PDF ends an override past an RLI
    (f"{LRE}{FSI}{FSI}a{PDI}", f"{LRE}{FSI}{FSI}a{PDI}{PDI}{PDF}"),
])
def test_a_field_closes_what_it_opens_and_only_that(text: str, balanced: str) -> None:
    assert balanced_bidi(text) == balanced
    assert balanced_bidi(balanced) == balanced


def test_balancing_is_linear_in_the_controls() -> None:
    """Closers are matched against a count of open isolates, not a search of the stack."""
    text = RLI + LRE * 50_000 + PDI * 50_000
    assert balanced_bidi(text) == RLI + LRE * 50_000 + PDI


def entry_titles_html(page: str) -> list[str]:
    tree = lxml.html.fromstring(page)
    items = tree.xpath("//ol[contains(@class,'sources-list')]/li")
    assert [li.get("data-title") for li in items] == SHOWN
    return ["".join(li.xpath("(a[@class='source-title'] | em)[1]")[0].itertext())
            for li in items]


def docx_entries(docx: bytes) -> list[str]:
    body = etree.fromstring(zipfile.ZipFile(io.BytesIO(docx)).read("word/document.xml"))
    texts = [re.sub(r"^\d+\.", "", "".join(p.itertext())) for p in body.iter(f"{W}p")]
    return [t for t in texts if t.startswith(("Evil", "Next", "Stray"))]  # "1." taken off


@pytest.mark.parametrize("csl", [None, "apa"])
def test_each_field_is_closed_in_html_markdown_and_docx(tmp_path: Path, csl: str | None) -> None:
    """The title's text in each format is the field balanced, and what follows it in the
    entry (its domain, its date, the next entry) holds no control of the pool's. The Markdown
    file writes each control as a character reference, which reads back as the control."""
    options = {"csl": csl} if csl else {}
    page, markdown, docx = render(TEXT, tmp_path, formats=["html", "md", "docx"],
                                  sources_pool=POOL, **options)
    assert entry_titles_html(page.path.read_text("utf-8")) == SHOWN
    sources = markdown.path.read_text("utf-8").split("Sources", 1)[1]
    for title in SHOWN:  # each control a character reference: the file shows it
        written = CONTROLS.sub(lambda m: f"&#x{ord(m.group(0)):X};", title)
        assert (f"[{written}](" if csl is None else f"*{written}*") in sources
    assert not CONTROLS.search(sources)
    for entry, title in zip(docx_entries(docx.path.read_bytes()), SHOWN, strict=True):
        assert entry.startswith(title) and not CONTROLS.search(entry[len(title):])


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["typst", "weasyprint"])
def test_the_rest_of_the_entry_reads_as_it_would_without_the_override_in_the_pdf(
    tmp_path: Path, engine: str
) -> None:
    """Read in visual order, only the title's own letters run backwards (the separators'
    no-break spaces read as spaces)."""
    (pdf,) = render(TEXT, tmp_path, formats="pdf", pdf_engine=engine, sources_pool=POOL)
    shown = CONTROLS.sub("", PdfReader(pdf.path).pages[-1].extract_text()).replace("\xa0", " ")
    assert "Evil fed cba — example.org · 2024-10-16" in shown
    assert "Next title — next.example · 2023-01-02" in shown
    assert "Stray closer — third.example" in shown
