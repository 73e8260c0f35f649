"""The DOCX writer: read the produced files back (python-docx, lxml) and through LibreOffice.

Most tests start from the IR fixture ``energy_report`` (no reader involved); the LibreOffice
tests and the HTML-input test go through a reader on purpose: they test the whole path.
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path
from typing import Any, cast

import docx
import pytest
from docx.shared import Inches
from lxml import etree
from PIL import Image as PILImage

from citations.pool import SourcePool
from renderers.document import Block, Document, Link, Paragraph, Text
from renderers.errors import InputError, UnsupportedNodeError
from renderers.options import RenderOptions
from renderers.readers.markdown import read_markdown
from renderers.resolve import resolve
from renderers.writers.docx.oxml import add_paragraph, added_after, last_child
from renderers.writers.docx.writer import docx_bytes
from renderers.writers.html.report import render_html
from tests.helpers import convert_with_libreoffice, pdf_text
from tests.support.ir import load_ir
from tests.support.render import (
    render_in_fresh_process,
    render_markdown,
    resolve_rows,
    write_resolved,
)

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
WP_DOCPR = "{http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing}docPr"
WP_EXTENT = "{http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing}extent"
HYPERLINK_RT = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink"
A4_TEXT_WIDTH_EMU = (11906 - 2 * 1440) * 635

#: The markdown of the IR fixture ``energy_report`` (tests/fixtures/ir/energy_report.py).
REPORT = """# Energy report

Intro with **bold**, *italic*, ~~strike~~ and `code [[S:1]]`. Solar alpha[[S:1]] and wind \
beta[[S:1-3, 5]]. See [IEA](https://www.iea.org/) and [evil](javascript:alert(1)) and \
[details below](#details).

## Details

- one[[S:2]]
- two
  - nested
  - [x] done
- [ ] todo

3. three
4. four

Interlude paragraph.

1. again
2. more

| Region | Share |
|:--|--:|
| Europe[[S:3]] | 42 |
| Asia | 17 |

```python
x = "[[S:1]]"
    indented
```

> quoted wisdom[[S:2]]

---

Line one\\
line two[^n]

[^n]: An author footnote about storage.
"""


def render(md: str, pool: list[dict[str, Any]], **options: Any) -> bytes:
    """Markdown through the reader and the citation pass into the DOCX writer."""
    return render_markdown("docx", md, pool, **options)


def render_report(pool: list[dict[str, Any]], **options: Any) -> bytes:
    """The IR fixture ``energy_report`` written as DOCX (no reader involved)."""
    rdoc = resolve_rows(load_ir("energy_report"), pool)
    return write_resolved("docx", rdoc, RenderOptions(**options))


def part(data: bytes, name: str = "word/document.xml") -> etree._Element:
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        return etree.fromstring(package.read(name))


def rels(data: bytes, name: str = "word/_rels/document.xml.rels") -> dict[str, dict[str, str]]:
    root = part(data, name)
    return {r.get("Id", ""): dict(r.attrib) for r in root}


def text(element: etree._Element) -> str:
    """The text of ``element`` as Word shows it: a no-break hyphen is a hyphen."""
    return "".join("-" if t.tag == f"{W}noBreakHyphen" else t.text or ""
                   for t in element.iter(f"{W}t", f"{W}noBreakHyphen"))


def paragraphs(data: bytes) -> list[etree._Element]:
    return list(part(data).iter(f"{W}p"))


def page_size(document: Any) -> tuple[int, int]:
    section = document.sections[0]
    return (section.page_width.twips, section.page_height.twips)


def style_of(p: etree._Element) -> str:
    found = p.find(f"{W}pPr/{W}pStyle")
    return found.get(f"{W}val", "") if found is not None else ""


@pytest.fixture
def report(sample_pool: list[dict[str, Any]]) -> bytes:
    return render_report(sample_pool)


def test_citations_are_superscript_links_to_existing_bookmarks(report: bytes) -> None:
    body = part(report)
    bookmarks = {b.get(f"{W}name") for b in body.iter(f"{W}bookmarkStart")}
    cites = [
        (text(h), h.get(f"{W}anchor"))
        for h in body.iter(f"{W}hyperlink")
        if (h.get(f"{W}anchor") or "").startswith("src_")
    ]
    # [[S:1]] → 1; [[S:1-3, 5]] → 1–4 (sid 4 dedupes to 1); then 2, 3 (table), 2 (quote)
    assert cites == [("1", "src_1"), ("1", "src_1"), ("4", "src_4"), ("2", "src_2"),
                     ("3", "src_3"), ("2", "src_2")]
    for link in body.iter(f"{W}hyperlink"):
        if link.get(f"{W}anchor"):
            assert link.get(f"{W}anchor") in bookmarks
    for link in body.iter(f"{W}hyperlink"):
        if (link.get(f"{W}anchor") or "").startswith("src_"):
            for run in link.iter(f"{W}r"):
                assert run.find(f"{W}rPr/{W}vertAlign").get(f"{W}val") == "superscript"
    en_dash = [r for r in body.iter(f"{W}r") if text(r) == "\u2013"]
    assert en_dash and en_dash[0].find(f"{W}rPr/{W}vertAlign") is not None
    for name in bookmarks:
        assert re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,39}", name or ""), name


def test_sources_section_links_titles_and_back_to_text(report: bytes) -> None:
    paras = paragraphs(report)
    heading = next(i for i, p in enumerate(paras) if text(p) == "Sources")
    assert style_of(paras[heading]) == "Heading2"  # a peer of the top sections, as HTML's <h2>
    entries = paras[heading + 1 :]
    assert [next(p.iter(f"{W}t")).text for p in entries] == ["1.", "2.", "3.", "4."]
    relationships = rels(report)
    expected = {
        "World Energy Outlook 2024": "https://www.iea.org/reports/weo-2024",
        "Renewable Capacity Statistics": "https://www.irena.org/Publications/2024/Mar/stats",
        "Lazard LCOE+": "https://www.lazard.com/research-insights/lcoe/",
    }
    for entry in entries[:3]:
        link = next(h for h in entry.iter(f"{W}hyperlink") if h.get(R_ID))
        rel = relationships[link.get(R_ID, "")]
        assert rel["Type"] == HYPERLINK_RT and rel["TargetMode"] == "External"
        assert rel["Target"] == expected[text(link)]
        back = [h.get(f"{W}anchor") for h in entry.iter(f"{W}hyperlink") if h.get(f"{W}anchor")]
        assert back and back[0].startswith("cite_")
    # the date on one line (no-break hyphens), the back-link and each separator joined to the
    # word before it (no-break spaces)
    assert text(entries[0]) == ("1.World Energy Outlook 2024\u00a0\u2014 iea.org\u00a0\u00b7 "
                                "2024-10-16\u00a0\u2191")
    assert len(list(entries[0].iter(f"{W}noBreakHyphen"))) == 2
    assert text(entries[3]) == "4.Board memo\u00a0\u2014 attachments/memo.pdf\u00a0\u2191"
    assert not any(h.get(R_ID) for h in entries[3].iter(f"{W}hyperlink"))
    names = [b.get(f"{W}name") for e in entries for b in e.iter(f"{W}bookmarkStart")]
    assert names == ["src_1", "src_2", "src_3", "src_4"]


def test_lists_use_word_numbering_with_start_overrides(report: bytes) -> None:
    numbering = part(report, "word/numbering.xml")
    starts = {
        n.get(f"{W}numId"): n.find(f"{W}lvlOverride/{W}startOverride").get(f"{W}val")
        for n in numbering.iter(f"{W}num")
        if n.find(f"{W}lvlOverride") is not None
    }
    items = {}
    for p in paragraphs(report):
        num = p.find(f"{W}pPr/{W}numPr")
        if num is not None:
            items[text(p)] = (num.find(f"{W}numId").get(f"{W}val"),
                              num.find(f"{W}ilvl").get(f"{W}val"))
    assert items["one2"][1] == "0" and items["nested"][1] == "1"
    assert items["one2"][0] == items["two"][0] != items["nested"][0]
    # a task item is numbered by a list of its boxes, in place of the bullet (the item's text
    # has no box of its own)
    assert items["done"][1] == items["nested"][1] and items["done"][0] != items["nested"][0]
    assert "todo" in items and items["todo"][0] != items["done"][0]
    assert starts[items["three"][0]] == "3"
    assert starts[items["again"][0]] == "1"
    assert items["again"][0] != items["three"][0]
    formats = {lvl.find(f"{W}numFmt").get(f"{W}val")
               for lvl in numbering.iter(f"{W}lvl") if lvl.get(f"{W}ilvl") == "0"}
    assert {"bullet", "decimal"} <= formats


def test_a_table_of_many_columns_leaves_room_for_text_in_every_cell() -> None:
    """Sixty columns on a page are 150 twips each; two 80-twip cell margins left no room, and
    Word and LibreOffice drew an empty grid. The margins shrink with the narrowest column."""
    from renderers.readers.markdown import read_markdown

    header = "|" + "|".join(f"h{i}" for i in range(60)) + "|\n|" + "---|" * 60 + "\n"
    row = "|" + "|".join(f"c{i}" for i in range(60)) + "|\n"
    data = docx_bytes(resolve(read_markdown(header + row), SourcePool.from_rows([])),
                      RenderOptions())
    table = docx.Document(io.BytesIO(data)).tables[0]
    margin = int(table._tbl.find(f"{W}tblPr/{W}tblCellMar/{W}left").get(f"{W}w"))
    widths = [int(col.get(f"{W}w")) for col in table._tbl.find(f"{W}tblGrid")]
    assert len(widths) == 60 and 2 * margin < min(widths)
    assert [c.text for c in table.rows[1].cells][:3] == ["c0", "c1", "c2"]


def test_table_has_header_cells_and_alignment(report: bytes) -> None:
    document = docx.Document(io.BytesIO(report))
    table = document.tables[0]
    assert [[c.text for c in row.cells] for row in table.rows] == [
        ["Region", "Share"], ["Europe3", "42"], ["Asia", "17"]]
    first_row = table._tbl.tr_lst[0]
    assert first_row.find(f"{W}trPr/{W}tblHeader") is not None
    assert table._tbl.find(f"{W}tblPr/{W}tblBorders/{W}insideH") is not None
    share = table._tbl.tr_lst[1].tc_lst[1].find(f"{W}p/{W}pPr/{W}jc")
    assert share is not None and share.get(f"{W}val") == "right"


def test_code_is_verbatim_monospace_and_unsafe_links_are_dropped(report: bytes) -> None:
    body = part(report)
    paragraphs = list(body.iter(f"{W}p"))
    code = next(i for i, p in enumerate(paragraphs) if "indented" in text(p))
    first, second = paragraphs[code - 1:code + 1]  # a paragraph per line
    assert (text(first), text(second)) == ('x = "[[S:1]]"', "    indented")
    assert first.find(f"{W}r/{W}rPr/{W}rFonts").get(f"{W}ascii") == "Consolas"
    cells = [first.getparent(), second.getparent()]  # a row each, of one shaded box
    assert [c.tag for c in cells] == [f"{W}tc"] * 2 and cells[0].getparent().getparent() is \
        cells[1].getparent().getparent()
    assert all(c.find(f"{W}tcPr/{W}shd") is not None for c in cells)
    assert any(text(r) == "code [[S:1]]" for r in body.iter(f"{W}r"))
    assert all("javascript" not in r["Target"] for r in rels(report).values())
    assert "evil" in text(body) and all("evil" not in text(h) for h in body.iter(f"{W}hyperlink"))
    internal = next(h for h in body.iter(f"{W}hyperlink") if text(h) == "details below")
    heading = next(p for p in body.iter(f"{W}p") if text(p) == "Details")
    assert style_of(heading) == "Heading2"
    mark = heading.find(f"{W}bookmarkStart").get(f"{W}name")
    assert internal.get(f"{W}anchor") == mark


def test_title_quote_rule_and_author_footnote(report: bytes) -> None:
    paras = paragraphs(report)
    titled = [p for p in paras if text(p) == "Energy report"]
    assert len(titled) == 1 and style_of(titled[0]) == "Title"
    quote = next(p for p in paras if text(p).startswith("quoted wisdom"))
    assert quote.find(f"{W}pPr/{W}pBdr/{W}left") is not None
    assert int(quote.find(f"{W}pPr/{W}ind").get(f"{W}left")) > 0
    assert any(p.find(f"{W}pPr/{W}pBdr/{W}bottom") is not None and not text(p) for p in paras)
    line = next(p for p in paras if text(p).startswith("Line one"))
    assert line.find(f".//{W}br") is not None
    # the author note: a superscript letter linked to the Notes list, which links back
    assert text(line).endswith("line twoa")
    reference = next(h for h in line.iter(f"{W}hyperlink") if text(h) == "a")
    assert reference.find(f".//{W}vertAlign").get(f"{W}val") == "superscript"
    assert reference.find(f".//{W}color") is None  # not a citation's colour
    notes_at = next(i for i, p in enumerate(paras) if text(p) == "Notes")
    note = paras[notes_at + 1]
    marks = [b.get(f"{W}name") for b in note.iter(f"{W}bookmarkStart")]
    assert marks == [reference.get(f"{W}anchor")]
    assert text(note) == "a.An author footnote about storage.\u00a0\u2191"
    back = next(h for h in note.iter(f"{W}hyperlink") if h.get(f"{W}anchor"))
    first_ref = [b.get(f"{W}name") for b in line.iter(f"{W}bookmarkStart")]
    assert [back.get(f"{W}anchor")] == first_ref
    assert text(paras[notes_at + 2]) == "Sources"


def test_core_properties_page_size_and_no_leftovers(report: bytes,
                                                    sample_pool: list[dict[str, Any]]) -> None:
    document = docx.Document(io.BytesIO(report))
    assert document.core_properties.title == "Energy report"
    assert document.core_properties.author == "citerender"
    assert page_size(document) == (11906, 16838)
    with zipfile.ZipFile(io.BytesIO(report)) as package:
        assert "docProps/thumbnail.jpeg" not in package.namelist()
        for name in package.namelist():
            assert b"python-docx" not in package.read(name), name
    letter = docx.Document(io.BytesIO(render_report(sample_pool, page_size="Letter",
                                                    author="Ada", title="Custom")))
    assert page_size(letter) == (12240, 15840)
    assert letter.core_properties.author == "Ada"
    assert letter.core_properties.title == "Custom"
    styles = [cast(Any, p.style).name for p in letter.paragraphs[:3]]
    # an explicit title keeps the h1 as a heading; the author option is the title block's
    assert styles == ["Title", "Author", "Heading 1"]
    assert letter.paragraphs[1].text == "Ada"


def test_deterministic_in_process_and_dated_by_source_date_epoch(
    report: bytes, sample_pool: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert render_report(sample_pool) == report
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    dated = render_report(sample_pool)
    assert dated == render_report(sample_pool) and dated != report
    core = docx.Document(io.BytesIO(dated)).core_properties
    assert core.created is not None and core.created.year == 2023
    assert core.modified == core.created


@pytest.mark.slow
def test_identical_bytes_in_a_fresh_process(
    sample_pool: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    assert render_in_fresh_process("docx", REPORT, sample_pool) == render(REPORT, sample_pool)


def test_reference_docx_keeps_styles_margins_and_header(
    tmp_path: Path, sample_pool: list[dict[str, Any]],
) -> None:
    template = docx.Document()
    template.styles["Normal"].font.name = "Liberation Serif"
    template.sections[0].left_margin = Inches(2)
    template.sections[0].header.paragraphs[0].text = "ACME Confidential"
    heading4 = template.styles["Heading 4"].element
    heading4.getparent().remove(heading4)
    template.add_paragraph("TEMPLATE BODY")
    reference = tmp_path / "reference.docx"
    template.save(str(reference))
    data = render("# Memo\n\nBody[[S:1]].\n\n#### Deep heading\n", sample_pool,
                  reference_docx=reference)
    out = docx.Document(io.BytesIO(data))
    assert out.sections[0].left_margin == Inches(2)
    assert out.sections[0].header.paragraphs[0].text == "ACME Confidential"
    assert out.styles["Normal"].font.name == "Liberation Serif"
    texts = [p.text for p in out.paragraphs]
    assert "TEMPLATE BODY" not in texts and "Body1." in texts
    deep = out.paragraphs[texts.index("Deep heading")]
    assert cast(Any, deep.style).name.lower() == "heading 4"
    assert page_size(out) == (12240, 15840)  # the template's Letter page, not A4
    with pytest.raises(InputError, match="reference_docx"):
        render("x", sample_pool, reference_docx=tmp_path / "missing.docx")


def test_reference_docx_with_its_own_footnotes_part(
    tmp_path: Path, sample_pool: list[dict[str, Any]],
) -> None:
    reference = tmp_path / "with-notes.docx"
    reference.write_bytes(render("Old body[[S:1]]\n", sample_pool, docx_citations="footnotes"))
    assert "World Energy Outlook" in text(part(reference.read_bytes(), "word/footnotes.xml"))
    data = render("> - quoted item[[S:2]]\n", sample_pool, reference_docx=reference,
                  docx_citations="footnotes")
    notes = part(data, "word/footnotes.xml")
    assert "World Energy Outlook" not in text(notes)
    ids = [n.get(f"{W}id") for n in notes]
    assert len(ids) == len(set(ids)) and {"-1", "0"} <= set(ids)
    reference_ids = [r.get(f"{W}id") for r in part(data).iter(f"{W}footnoteReference")]
    assert len(reference_ids) == 1 and reference_ids[0] in ids
    assert "Renewable Capacity Statistics" in text(notes)
    item = next(p for p in part(data).iter(f"{W}p") if text(p).startswith("quoted item"))
    assert item.find(f"{W}pPr/{W}numPr") is not None
    assert item.find(f"{W}pPr/{W}pBdr/{W}left") is not None
    assert int(item.find(f"{W}pPr/{W}ind").get(f"{W}left")) == 720 + 720  # quote + list level


def test_footnotes_option(sample_pool: list[dict[str, Any]]) -> None:
    data = render_report(sample_pool, docx_citations="footnotes")
    body = part(data)
    references = list(body.iter(f"{W}footnoteReference"))
    assert len(references) == 5  # five citations (the author note is in the Notes list)
    assert "Sources" not in [text(p) for p in body.iter(f"{W}p")]
    assert not [h for h in body.iter(f"{W}hyperlink") if h.get(f"{W}anchor", "").startswith("src")]
    notes = {n.get(f"{W}id"): n for n in part(data, "word/footnotes.xml")}
    assert notes["-1"].get(f"{W}type") == "separator"
    second = notes[references[1].get(f"{W}id")]
    lines = [text(p) for p in second.iter(f"{W}p")]
    # each footnote line is the source's Sources entry: linked title, label · date
    assert lines[0].strip() == ("World Energy Outlook 2024\u00a0\u2014 iea.org\u00a0\u00b7 "
                                "2024-10-16")
    title_link = next(h for h in second.iter(f"{W}hyperlink") if h.get(R_ID))
    assert text(title_link) == "World Energy Outlook 2024"
    assert len(lines) == 4 and lines[3] == "Board memo\u00a0\u2014 attachments/memo.pdf"
    note_rels = rels(data, "word/_rels/footnotes.xml.rels")
    assert {r["Target"] for r in note_rels.values()} >= {"https://www.iea.org/reports/weo-2024"}


def test_images_are_embedded_scaled_with_alt_text(
    tmp_path: Path, sample_pool: list[dict[str, Any]],
) -> None:
    PILImage.new("RGB", (1600, 800), (200, 30, 30)).save(tmp_path / "chart.png")
    md = "# Pics\n\n![A wide chart](chart.png)\n\nText ![Missing one](nope.png) end\n"
    data = render(md, sample_pool, base_dir=tmp_path)
    body = part(data)
    doc_pr = body.find(f".//{WP_DOCPR}")
    assert doc_pr is not None and doc_pr.get("descr") == "A wide chart"
    extent = body.find(f".//{WP_EXTENT}")
    cx, cy = int(extent.get("cx")), int(extent.get("cy"))
    assert cx == A4_TEXT_WIDTH_EMU and abs(cy * 2 - cx) <= 2
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        assert any(n.startswith("word/media/") for n in package.namelist())
    missing = next(r for r in body.iter(f"{W}r") if text(r) == "[Image: Missing one]")
    assert missing.find(f"{W}rPr/{W}i") is not None


def test_html_input(sample_pool: list[dict[str, Any]]) -> None:
    from renderers.readers.html import read_html

    html = ('<h1>Brief</h1><p>Hydro<sup class="cite" data-sids="3">[S:3]</sup> and '
            '<a href="https://example.org/a">a link</a>.</p><ul><li>point</li></ul>')
    rdoc = resolve(read_html(html), SourcePool.from_rows(sample_pool))
    body = part(docx_bytes(rdoc, RenderOptions()))
    anchors = [(text(h), h.get(f"{W}anchor")) for h in body.iter(f"{W}hyperlink")
               if h.get(f"{W}anchor")]
    assert ("1", "src_1") in anchors
    assert any(p.find(f"{W}pPr/{W}numPr") is not None for p in body.iter(f"{W}p"))


def test_writer_refuses_unsafe_links_itself(sample_pool: list[dict[str, Any]]) -> None:
    links = tuple(
        Link(url, (Text(f"link{i}"),))
        for i, url in enumerate(("javascript:alert(1)", "java\nscript:x", "data:text/html,x",
                                 "file:///etc/passwd", "#nowhere", "https://ok.example/"))
    )
    rdoc = resolve(Document(blocks=(Paragraph(links),)), SourcePool.from_rows(sample_pool))
    data = docx_bytes(rdoc, RenderOptions())
    assert [r["Target"] for r in rels(data).values() if r["Type"] == HYPERLINK_RT] == [
        "https://ok.example/"]
    linked = [text(h) for h in part(data).iter(f"{W}hyperlink")]
    assert linked == ["link5"]
    assert "link0link1link2link3link4" in text(part(data))


def test_unsupported_node_raises(sample_pool: list[dict[str, Any]]) -> None:
    bogus = cast(Block, object())
    document = Document(blocks=(Paragraph((Text("ok"),)), bogus))
    rdoc = resolve(document, SourcePool.from_rows(sample_pool))
    with pytest.raises(UnsupportedNodeError):
        docx_bytes(rdoc, RenderOptions())


@pytest.mark.libreoffice
def test_libreoffice_shows_body_numbers_and_sources(
    sample_pool: list[dict[str, Any]], tmp_path: Path
) -> None:
    path = tmp_path / "report.docx"
    path.write_bytes(render(REPORT, sample_pool))  # markdown → reader → writer → LibreOffice
    pdf = pdf_text(convert_with_libreoffice(path, tmp_path))
    flat = " ".join(pdf.split())
    assert "Intro with bold" in flat and "quoted wisdom" in flat
    assert "alpha1" in flat.replace(" ", "") and "beta1\u20134" in flat.replace(" ", "")
    for title in ("World Energy Outlook 2024", "Renewable Capacity Statistics",
                  "Lazard LCOE+", "Board memo"):
        assert title in flat
    assert 'x = "[[S:1]]"' in pdf


@pytest.mark.libreoffice
def test_libreoffice_shows_footnotes_at_page_bottom(
    sample_pool: list[dict[str, Any]], tmp_path: Path,
) -> None:
    from pypdf import PdfReader

    path = tmp_path / "notes.docx"
    path.write_bytes(render(REPORT, sample_pool, docx_citations="footnotes"))
    pdf = convert_with_libreoffice(path, tmp_path)
    positions: list[tuple[str, float]] = []
    for page in PdfReader(str(pdf)).pages:
        page.extract_text(visitor_text=lambda t, cm, tm, *_: positions.append((t, tm[5])))
    footnote_y = [y for t, y in positions if "Lazard LCOE+" in t]
    body_y = [y for t, y in positions if "Intro with" in t]
    assert footnote_y and body_y and max(footnote_y) < 200 < min(body_y)  # bottom of an A4 page
    flat = " ".join(pdf_text(pdf).split())
    assert "World Energy Outlook 2024 \u2014 iea.org \u00b7 2024-10-16" in flat
    uris = {
        str(annotation.get_object().get("/A", {}).get("/URI"))
        for page in PdfReader(str(pdf)).pages
        for annotation in page.get("/Annots") or []
    }
    assert "https://www.iea.org/reports/weo-2024" in uris  # the footnote's title is a link
    assert "Notes a. An author footnote about storage. \u2191" in flat
    odt = convert_with_libreoffice(path, tmp_path, "odt")
    with zipfile.ZipFile(odt) as package:
        content = package.read("content.xml").decode()
    assert content.count('text:note-class="footnote"') == 5


def _boxed(paragraph: Any) -> bool:
    ppr = paragraph._p.pPr
    return ppr is not None and ppr.find(W + "pBdr") is not None


def _blocks(data: bytes) -> list[tuple[str, str]]:
    """The body's blocks as (kind, text): "table" for a table (its text), "box" for a
    bordered paragraph, "p" for another."""
    shown = []
    for block in docx.Document(io.BytesIO(data)).element.body:
        if block.tag == W + "tbl":
            shown.append(("table", text(block)))
        elif block.tag == W + "p":
            bordered = block.find(f"{W}pPr/{W}pBdr") is not None
            shown.append(("box" if bordered else "p", text(block)))
    return shown


def test_code_blocks_in_a_row_stay_separate_boxes() -> None:
    """Each code block is a table of its own, and two tables with nothing between them are
    one in Word and LibreOffice: a one-point paragraph follows each block. Its lines, a row
    each, stay one box."""
    markdown = ("```python\ndef f():\n    return 1\n```\n\n```yaml\nkey: value\n```\n\n"
                "```unknownlang\nplain text\n```\n\nText.\n\n```\none\ntwo\nthree\n```\n")
    data = render_markdown("docx", markdown, [])
    assert _blocks(data) == [
        ("table", "def f():    return 1"), ("p", ""), ("table", "key: value"), ("p", ""),
        ("table", "plain text"), ("p", ""), ("p", "Text."), ("table", "onetwothree"), ("p", "")]
    body = docx.Document(io.BytesIO(data)).element.body
    gap = body.find(W + "tbl").getnext().find(f"{W}pPr/{W}spacing")
    assert gap.get(W + "line") == "20" and gap.get(W + "lineRule") == "exact"
    assert gap.get(W + "before") == "0" and gap.get(W + "after") is None  # the style's below


def test_block_quotes_in_a_row_keep_their_own_bars() -> None:
    """Two quotes in a row were one bar in Word and LibreOffice (adjacent paragraphs with the
    same borders and indent are drawn as one frame); a quote of two paragraphs keeps one bar."""
    markdown = "> First quote.\n>\n> Its second paragraph.\n\n> Another quote.\n\nText.\n"
    paragraphs = docx.Document(io.BytesIO(render_markdown("docx", markdown, []))).paragraphs
    shown = [(p.text, _boxed(p)) for p in paragraphs]
    assert shown[:5] == [("First quote.", True), ("Its second paragraph.", True), ("", False),
                         ("Another quote.", True), ("Text.", False)], shown


def test_a_block_is_marked_by_the_last_child_before_it_not_by_a_count() -> None:
    """The writer marks where each block starts by the body's last child (lxml counts children
    by walking them all: a count before every block made 16,000 blocks take 5 s more); what
    was added after the mark is every child after it, or every child of an empty body."""
    body = etree.Element("body")
    assert last_child(body) is None
    first = add_paragraph(body)
    assert list(added_after(body, None)) == [first]
    mark = last_child(body)
    added = [add_paragraph(body), add_paragraph(body)]
    assert mark is first and list(added_after(body, mark)) == added
    markdown = "> Quote.\n\n> Quote.\n\n" + "".join(f"<a id=\"a{n}\"></a>\n\n```\ncode {n}\n```\n\n"
                                                 f"[to {n}](#a{n})\n\n" for n in range(3))
    data = render_markdown("docx", markdown, [])
    assert _blocks(data)[:6] == [("box", "Quote."), ("p", ""), ("box", "Quote."),
                                 ("table", "code 0"), ("p", ""), ("p", "to 0")]
    line = docx.Document(io.BytesIO(data)).element.body.find(f"{W}tbl/{W}tr/{W}tc/{W}p")
    xml = etree.tostring(line).decode()
    assert 'w:name="a0"' in xml  # the anchor's bookmark opens the code block's first line


@pytest.mark.parametrize("toc", [False, True])
def test_notes_and_sources_are_peers_of_the_top_sections(toc: bool) -> None:
    # Sources was the only Heading 1, under the Title, with every section a Heading 2: in
    # Word's navigation pane it outranked them all. HTML and the PDF outline make it an h2.
    content = ("# Report\n\n## Findings\n\nA claim.[[S:1]][^n]\n\n### Detail\n\nMore.\n\n"
               "[^n]: A note.\n")
    data = docx_bytes(resolve(read_markdown(content), SourcePool.from_rows(
        [{"sid": 1, "title": "Source one", "url": "https://one.org/"}])), RenderOptions(toc=toc))
    styles = {p.text: p.style.name for p in docx.Document(io.BytesIO(data)).paragraphs}
    assert styles["Report"] == "Title" and styles["Findings"] == "Heading 2"
    assert styles["Notes"] == styles["Sources"] == "Heading 2"
    assert "Heading 1" not in styles.values()
    html = render_html(resolve(read_markdown(content), SourcePool.from_rows(
        [{"sid": 1, "title": "Source one", "url": "https://one.org/"}])), RenderOptions())
    assert "<h2>Sources</h2>" in html and "<h2>Notes</h2>" in html  # the same rule
