"""pandoc-crossref's other reference forms in every writer, read back from the file each one
made: a capitalised prefix (``@Fig:a``), a group worded as one ("Figures 1–3", "Figures 1, 3
and 5", "Figure 1 and Table 1") with each number linked to its figure, and ``@sec:`` as a
link showing the heading's title."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import lxml.html
import pytest
from lxml import etree
from pptx import Presentation

from renderers.document import Link, Paragraph, Text, plain_text
from renderers.readers.markdown import read_markdown
from tests.helpers import ROOT, internal_links
from tests.support.render import render_markdown

OPTIONS: dict[str, Any] = {"base_dir": ROOT / "samples"}
FIGURES = "".join(f"![{n}](assets/chart.png){{#fig:{n}}}\n\n" for n in "abcde")
MARKDOWN = (
    "# Method {#sec:method}\n\n" + FIGURES
    + "| a | b |\n|---|---|\n| 1 | 2 |\n\n: Costs {#tbl:costs}\n\n"
    "See [@fig:a; @fig:b; @fig:c], [@Fig:a; @fig:e; @fig:c] and [@fig:a; @Tbl:costs] in "
    "@sec:method.\n"
)
SHOWN = "See Figures 1–3, Figures 1, 3 and 5 and Figure 1 and Table 1 in Method."
#: Each link of the paragraph: what it shows and where it leads (a group: each number).
LINKS = [("1", "fig-1"), ("3", "fig-3"), ("1", "fig-1"), ("3", "fig-3"), ("5", "fig-5"),
         ("Figure 1", "fig-1"), ("Table 1", "tbl-1"), ("Method", "sec:method")]
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def test_html_words_a_group_once_and_links_each_number() -> None:
    root = lxml.html.document_fromstring(render_markdown("html", MARKDOWN, [], **OPTIONS))
    (paragraph,) = [p for p in root.xpath("//p") if p.text_content().startswith("See")]
    assert paragraph.text_content() == SHOWN
    assert [(a.text, a.get("href")) for a in paragraph.xpath(".//a")] == [
        (text, f"#{target}") for text, target in LINKS]
    assert root.xpath("//h1/@id") == ["sec:method"]


def test_markdown_writes_the_group_words_between_links_that_read_back() -> None:
    text = render_markdown("md", MARKDOWN, [], **OPTIONS).decode()
    assert ("See Figures [1](#fig-1)–[3](#fig-3), Figures [1](#fig-1), [3](#fig-3) and "
            "[5](#fig-5) and [Figure 1](#fig-1) and [Table 1](#tbl-1) in "
            "[Method](#sec:method).") in " ".join(text.split())
    again = read_markdown(text)
    (paragraph,) = [b for b in again.blocks if isinstance(b, Paragraph)
                    and isinstance(b.children[0], Text) and b.children[0].text.startswith("See")]
    links = [n for n in paragraph.children if isinstance(n, Link)]
    assert [(link.children, link.url) for link in links] == [
        ((Text(text),), f"#{target}") for text, target in LINKS]


def test_docx_links_each_number_of_a_group_to_its_bookmark() -> None:
    package = zipfile.ZipFile(io.BytesIO(render_markdown("docx", MARKDOWN, [], **OPTIONS)))
    body = etree.fromstring(package.read("word/document.xml"))
    (paragraph,) = [p for p in body.iter(f"{W}p") if "".join(p.itertext()).startswith("See")]
    assert "".join(paragraph.itertext()) == SHOWN
    links = [("".join(h.itertext()), h.get(f"{W}anchor"))
             for h in paragraph.iter(f"{W}hyperlink")]
    assert links[:-1] == [(text, target.replace("-", "_")) for text, target in LINKS[:-1]]
    marks = {mark.get(f"{W}name") for mark in body.iter(f"{W}bookmarkStart")}
    assert links[-1][0] == "Method" and links[-1][1] in marks  # the heading's bookmark


def test_pptx_jumps_from_each_number_of_a_group() -> None:
    deck = Presentation(io.BytesIO(render_markdown("pptx", MARKDOWN, [], **OPTIONS)))
    paragraphs = [para for slide in deck.slides for shape in slide.shapes
                  if shape.has_text_frame for para in shape.text_frame.paragraphs]
    (paragraph,) = [p for p in paragraphs if "".join(r.text for r in p.runs).startswith("See")]
    assert "".join(run.text for run in paragraph.runs) == SHOWN
    jumps = [run.text for run in paragraph.runs
             if run._r.xpath(".//a:hlinkClick[@action='ppaction://hlinksldjump']")]
    assert jumps == [text for text, _ in LINKS]


@pytest.mark.parametrize("engine", [pytest.param("weasyprint", marks=pytest.mark.slow), "typst"])
def test_pdf_links_each_number_of_a_group(engine: str) -> None:
    from pypdf import PdfReader

    pdf = render_markdown("pdf", MARKDOWN, [], pdf_engine=engine, **OPTIONS)
    text = "\n".join(page.extract_text() or "" for page in PdfReader(io.BytesIO(pdf)).pages)
    assert SHOWN in " ".join(text.split())
    shown = [link[0] for link in internal_links(pdf)]
    for word in ("1", "3", "5", "Figure 1", "Table 1", "Method"):
        assert word in shown, (word, shown)
    assert shown.count("3") == 2 and "Figures 1" not in shown  # numbers linked, not names


def test_a_german_group_and_a_japanese_one_use_their_words() -> None:
    group = FIGURES + "See [@fig:a; @fig:b; @fig:d].\n"
    html = render_markdown("html", "---\nlang: de\n---\n" + group, [], **OPTIONS).decode()
    root = lxml.html.document_fromstring(html)
    (paragraph,) = [p for p in root.xpath("//p") if p.text_content().startswith("See")]
    assert paragraph.text_content() == "See Abbildungen 1, 2 und 4."
    root = lxml.html.document_fromstring(
        render_markdown("html", "---\nlang: ja\n---\n" + group, [], **OPTIONS))
    (paragraph,) = [p for p in root.xpath("//p") if p.text_content().startswith("See")]
    assert paragraph.text_content() == "See 図1、2、4."


#: A group with unknown labels: the known references worded as one, each unknown one after
#: them as written, unlinked (pandoc-crossref would show a bold "¿fig:zz?" there).
UNKNOWN = FIGURES + "See [@fig:a; @fig:zz; @fig:b] and [Chart @fig:zz; -@fig:yy].\n"
UNKNOWN_SHOWN = "See Figures 1 and 2 and @fig:zz and Chart @fig:zz and -@fig:yy."


def test_a_group_with_unknown_labels_in_html_markdown_and_docx() -> None:
    root = lxml.html.document_fromstring(render_markdown("html", UNKNOWN, [], **OPTIONS))
    (paragraph,) = [p for p in root.xpath("//p") if p.text_content().startswith("See")]
    assert paragraph.text_content() == UNKNOWN_SHOWN
    assert [(a.text, a.get("href")) for a in paragraph.xpath(".//a")] == [
        ("1", "#fig-1"), ("2", "#fig-2")]
    text = render_markdown("md", UNKNOWN, [], **OPTIONS).decode()
    assert "See Figures [1](#fig-1) and [2](#fig-2) and \\@fig:zz and Chart \\@fig:zz and " \
        "-@fig:yy." in text  # "-@" starts no reference: no escape needed
    (again,) = [b for b in read_markdown(text).blocks if isinstance(b, Paragraph)
                and isinstance(b.children[0], Text) and b.children[0].text.startswith("See")]
    assert [n.url for n in again.children if isinstance(n, Link)] == ["#fig-1", "#fig-2"]
    assert plain_text(again.children) == UNKNOWN_SHOWN  # the unknown ones as text again
    package = zipfile.ZipFile(io.BytesIO(render_markdown("docx", UNKNOWN, [], **OPTIONS)))
    body = etree.fromstring(package.read("word/document.xml"))
    (see,) = [p for p in body.iter(f"{W}p") if "".join(p.itertext()).startswith("See")]
    assert "".join(see.itertext()) == UNKNOWN_SHOWN
    assert ["".join(h.itertext()) for h in see.iter(f"{W}hyperlink")] == ["1", "2"]


def test_a_group_with_unknown_labels_warns_once_per_label() -> None:
    from tests.support.render import resolve_rows

    rdoc = resolve_rows(read_markdown(UNKNOWN), [])
    assert [n.message for n in rdoc.notes] == [
        f"cross-reference to unknown label {label!r} kept as text"
        for label in ("fig:zz", "fig:yy")]
