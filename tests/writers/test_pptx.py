"""The PPTX writer, read back with python-pptx (and converted by LibreOffice Impress)."""

from __future__ import annotations

import base64
import io
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest
from pptx import Presentation
from pptx.oxml.ns import qn
from pptx.util import Emu, Inches

from citations.pool import SourcePool
from renderers.fonts import default_fonts
from renderers.options import RenderOptions
from renderers.readers.html import read_html
from renderers.readers.markdown import read_markdown
from renderers.resolve import ResolvedDocument, resolve
from renderers.writers.pptx.metrics import TextMetrics
from renderers.writers.pptx.model import EMU_PER_PT, Run
from renderers.writers.pptx.output import pptx_bytes
from renderers.writers.pptx.runs import with_backlink
from tests.helpers import convert_with_libreoffice, pdf_text
from tests.support.render import render_in_fresh_process

JUMP = "ppaction://hlinksldjump"
WORDS = ["grid", "storage", "solar", "wind", "demand", "prices", "capacity", "transmission",
         "market", "policy"]


def _png(width: int, height: int) -> str:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (width, height), (30, 90, 160)).save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode()


PNG_2x1 = _png(200, 100)


def pool_rows(count: int) -> list[dict[str, Any]]:
    """``count`` web sources, then an attachment and a row with a refused URL."""
    rows: list[dict[str, Any]] = [
        {"sid": i, "title": f"Report {i} on {WORDS[i % len(WORDS)]} markets",
         "url": f"https://www.site{i}.org/reports/{i}", "published_at": "2024-03-01"}
        for i in range(1, count + 1)
    ]
    rows.append({"sid": count + 1, "title": "Board memo", "artifact_path": "attachments/memo.pdf",
                 "physical_path": "attachments/memo.pdf", "mime": "application/pdf"})
    rows.append({"sid": count + 2, "title": "Sneaky", "url": "javascript:alert(1)"})
    return rows


def make_pool(count: int) -> SourcePool:
    return SourcePool.from_rows(pool_rows(count))


def long_text(n: int, cite_every: int = 7, sources: int = 20) -> str:
    words = []
    for i in range(n):
        words.append(WORDS[(i * 7) % len(WORDS)])
        if i % cite_every == cite_every - 1:
            words[-1] += f"[[S:{(i // cite_every) % sources + 1}]]"
    return " ".join(words) + "."


REPORT = f"""# Energy Storage Review

## Why storage now [[S:1]]

Battery prices fell 14% in 2023 [[S:1,2,3]] and **grid** *demand* `code [[S:9]]` grew [[S:4]].
Read [the IEA](https://www.iea.org/) or [bad](javascript:alert(1)) and [file](file:///etc/passwd).

- first level [[S:5]]
  - second level
    - third level [[S:6]]
- back to first

1. ordered one
2. ordered two

### Details below the slide level

{long_text(900)}

# Part two

## Deployment table

| Region | 2023 | 2024 |
|:--|--:|--:|
""" + "".join(f"| Region {i} [[S:{i % 20 + 1}]] | {i * 3} | {i * 5} |\n" for i in range(45)) + """

## Code

```python
print("[[S:1]] stays verbatim")
```

![A chart](data:image/png;base64,""" + PNG_2x1 + """)

![Remote](https://example.com/x.png)

## Memo

Internal memo [[S:21]] and a sneaky row [[S:22]].
"""


def render(content: str, pool: SourcePool, *, html: bool = False, **options: Any
           ) -> tuple[bytes, Any, ResolvedDocument]:
    document = read_html(content) if html else read_markdown(content)
    rdoc = resolve(document, pool)
    data = pptx_bytes(rdoc, RenderOptions(**options))
    return data, Presentation(io.BytesIO(data)), rdoc


@pytest.fixture(scope="module")
def report() -> tuple[bytes, Any, ResolvedDocument]:
    return render(REPORT, make_pool(20))


def slide_title(slide: Any) -> str:
    title = slide.shapes.title
    return title.text_frame.text if title is not None else ""


def slide_text(slide: Any) -> str:
    return "\n".join(s.text_frame.text for s in slide.shapes if s.has_text_frame)


def runs(slide: Any) -> list[Any]:
    """Every ``a:r`` element of a slide (text boxes and tables)."""
    return list(slide.element.iter(qn("a:r")))


def sources_slides(prs: Any) -> list[Any]:
    return [s for s in prs.slides if slide_title(s).startswith("Sources")]


# ---------------------------------------------------------------- citations and links


def test_citations_are_superscript_runs_with_display_numbers(report: Any) -> None:
    _, prs, _ = report
    slide = next(s for s in prs.slides if slide_title(s).startswith("Why storage now"))
    sup = [r for r in runs(slide) if r.find(qn("a:rPr")).get("baseline") in ("30000", "31000")]
    text = "".join(r.findtext(qn("a:t")) for r in sup)
    assert "1–3" in text and "4" in text and "5" in text
    assert all(int(r.find(qn("a:rPr")).get("baseline")) > 0 for r in sup)
    body = slide_text(slide)
    assert "[[S:" not in body.replace("code [[S:9]]", "")
    assert "code [[S:9]]" in body  # tokens inside code stay verbatim


def test_every_slide_jump_targets_the_sources_slide_holding_its_number(report: Any) -> None:
    _, prs, rdoc = report
    slides = list(prs.slides)
    by_part = {s.part: s for s in slides}
    jumps = 0
    for slide in slides:
        for r in runs(slide):
            link = r.find(qn("a:rPr")).find(qn("a:hlinkClick"))
            if link is None or link.get("action") != JUMP:
                continue
            target = by_part[slide.part.related_part(link.get(qn("r:id")))]
            text = r.findtext(qn("a:t"))
            if text.endswith("\u00a0↑"):
                continue  # backlink from an entry (its last word with it) to its first citation
            # a footer's link holds its label too ("[1] iea.org"): the number is its start
            found = re.match(r"\[?(\d+)\]?(?:\u00a0|$)", text.strip())
            assert found, text
            number = found.group(1)
            assert slide_title(target).startswith("Sources")
            assert re.search(rf"^{number}\. ", slide_text(target), re.M), number
            jumps += 1
    assert jumps >= len(rdoc.entries)


def test_every_sources_url_is_a_hyperlink_and_unsafe_links_are_absent(report: Any) -> None:
    data, prs, rdoc = report
    linked: dict[str, str] = {}
    for slide in sources_slides(prs):
        for r in runs(slide):
            link = r.find(qn("a:rPr")).find(qn("a:hlinkClick"))
            if link is not None and link.get("action") is None:
                linked[r.findtext(qn("a:t"))] = slide.part.target_ref(link.get(qn("r:id")))
    for entry in rdoc.entries:
        if entry.url:
            assert linked[entry.title] == entry.url
        else:
            assert entry.title not in linked
    assert "Board memo" in "".join(slide_text(s) for s in sources_slides(prs))
    assert "attachments/memo.pdf" in "".join(slide_text(s) for s in sources_slides(prs))
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        rels = "".join(package.read(n).decode() for n in package.namelist()
                       if n.endswith(".rels"))
    assert "javascript:" not in rels and "file:" not in rels
    assert 'Target="https://www.iea.org/"' in rels


def test_source_footer_lists_the_sources_of_each_slide(report: Any) -> None:
    _, prs, rdoc = report
    labels = {e.number: e.label for e in rdoc.entries}
    slide = next(s for s in prs.slides if slide_title(s).startswith("Why storage now"))
    footer = next(s for s in slide.shapes if s.name == "Sources").text_frame.text
    # a no-break space keeps each number on its label's line
    assert footer.startswith(f"[1]\u00a0{labels[1]} · [2]\u00a0{labels[2]}")
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", footer)}
    assert {1, 2, 3, 4, 5, 6} <= cited
    _, no_footer, _ = render("## A\n\nText [[S:1]].\n", make_pool(3), source_footer=False)
    assert all(s.name != "Sources" for sl in no_footer.slides for s in sl.shapes)


# ---------------------------------------------------------------- the slide model


def test_title_section_and_content_slides(report: Any) -> None:
    _, prs, _ = report
    titles = [slide_title(s) for s in prs.slides]
    assert titles[0] == "Energy Storage Review"
    assert "Part two" in titles  # an h1 above the slide level: a section slide
    assert titles[1].startswith("Why storage now")
    bold = [r for r in runs(prs.slides[1]) if r.find(qn("a:rPr")).get("b") == "1"
            and r.findtext(qn("a:t")) == "Details below the slide level"]
    assert bold  # a heading below the slide level is a bold paragraph
    levels = {}
    for p in prs.slides[1].element.iter(qn("a:p")):
        text = "".join(t.text or "" for t in p.iter(qn("a:t")))
        ppr = p.find(qn("a:pPr"))
        levels[re.sub(r"[\d–, ]+$", "", text)] = (int(ppr.get("marL")),
                                              ppr.find(qn("a:buChar")) is not None
                                              or ppr.find(qn("a:buAutoNum")) is not None)
    assert levels["first level"][0] < levels["second level"][0] < levels["third level"][0]
    assert levels["first level"][1] and levels["ordered one"][1]


def test_long_section_continues_on_cont_slides(report: Any) -> None:
    _, prs, _ = report
    titles = [slide_title(s) for s in prs.slides]
    assert any(t.startswith("Why storage now") and t.endswith("(cont.)") for t in titles)
    words = " ".join(slide_text(s) for s in prs.slides if slide_title(s).startswith("Why"))
    assert len(re.findall(r"\b(?:grid|solar|wind)\b", words)) >= 200  # nothing dropped


def test_long_table_splits_with_header_repeated(report: Any) -> None:
    _, prs, _ = report
    tables = [sh.table for s in prs.slides for sh in s.shapes if sh.has_table]
    assert len(tables) >= 2
    for table in tables:
        assert [c.text for c in table.rows[0].cells] == ["Region", "2023", "2024"]
        assert all(r.find(qn("a:rPr")).get("b") == "1"
                   for c in table.rows[0].cells for r in c._tc.iter(qn("a:r"))
                   if r.find(qn("a:rPr")).get("baseline") is None)
    body = [r.cells[0].text for t in tables for r in list(t.rows)[1:]]
    assert [b.split(" ")[1] for b in body] == [str(i) for i in range(45)]


def _para_lines(metrics: TextMetrics, p: Any, width_pt: float, mono: str) -> tuple[int, float]:
    ppr = p.find(qn("a:pPr"))
    margin = int(ppr.get("marL", "0")) / EMU_PER_PT
    pieces: list[tuple[str, tuple[bool, bool, bool], bool]] = []
    size = int(p.find(qn("a:endParaRPr")).get("sz")) / 100
    for child in p:
        if child.tag == qn("a:br"):
            pieces.append(("\n", (False, False, False), False))
        elif child.tag == qn("a:r"):
            rpr = child.find(qn("a:rPr"))
            face = rpr.find(qn("a:latin")).get("typeface")
            style = (rpr.get("b") == "1", rpr.get("i") == "1", face == mono)
            link = rpr.find(qn("a:hlinkClick")) is not None
            pieces.append((child.findtext(qn("a:t")), style, link))
    lines = metrics.line_count(pieces, width_pt - margin, size)
    pitch = int(ppr.find(qn("a:lnSpc")).find(qn("a:spcPts")).get("val")) / 100
    before = int(ppr.find(qn("a:spcBef")).find(qn("a:spcPts")).get("val")) / 100
    return lines, before + lines * pitch


def test_no_text_frame_holds_more_lines_than_fit(report: Any) -> None:
    _, prs, _ = report
    metrics = TextMetrics(default_fonts())
    mono = default_fonts().mono
    checked = 0
    for slide in prs.slides:
        for shape in slide.shapes:
            assert shape.top + shape.height <= prs.slide_height
            frames: list[tuple[Any, float, float]] = []
            if shape.has_text_frame:
                body = shape.element.txBody
                bpr = body.find(qn("a:bodyPr"))
                # measured to fit; body text may shrink in a client that wraps to more lines
                autofit = "a:normAutofit" if shape.name.startswith("TextBox") else "a:noAutofit"
                assert bpr.find(qn(autofit)) is not None, shape.name
                ins_x = (int(bpr.get("lIns")) + int(bpr.get("rIns"))) / EMU_PER_PT
                ins_y = (int(bpr.get("tIns")) + int(bpr.get("bIns"))) / EMU_PER_PT
                frames.append((body, shape.width / EMU_PER_PT - ins_x,
                               shape.height / EMU_PER_PT - ins_y))
            if shape.has_table:
                table = shape.table
                for row in table.rows:
                    for c, cell in enumerate(row.cells):
                        width = table.columns[c].width / EMU_PER_PT
                        frames.append((cell._tc.txBody, width - 2 * cell.margin_left / EMU_PER_PT,
                                       row.height / EMU_PER_PT - 2 * cell.margin_top
                                       / EMU_PER_PT))
            for body, width, height in frames:
                used = sum(_para_lines(metrics, p, width, mono)[1]
                           for p in body.iter(qn("a:p")))
                assert used <= height + 0.5, (slide_title(slide), shape.name, used, height)
                checked += 1
    assert checked > 50


def wide_table(columns: int, rows: int = 3) -> str:
    """A table of ``columns`` short columns: ``C0 …`` over cells ``row.column``."""
    head = "| " + " | ".join(f"C{c}" for c in range(columns)) + " |"
    rule = "|" + "---|" * columns
    body = ["| " + " | ".join(f"{r}.{c}" for c in range(columns)) + " |" for r in range(rows)]
    return "\n".join([head, rule, *body])


def table_frames(prs: Any) -> list[Any]:
    return [shape for slide in prs.slides for shape in slide.shapes if shape.has_table]


def test_sixty_columns_fit_the_slide_with_narrower_cell_margins() -> None:
    """Two 0.1-inch insets were wider than a sixtieth of the slide: LibreOffice widened every
    column and the table ran off the slide. The insets shrink with the columns instead."""
    _, prs, _ = render(f"# Wide\n\n## Sixty columns\n\n{wide_table(60)}\n", make_pool(1))
    frames = table_frames(prs)
    assert frames
    header = [f"C{c}" for c in range(60)]
    body: list[str] = []
    for frame in frames:
        table = frame.table
        widths = [column.width for column in table.columns]
        assert len(widths) == 60
        assert sum(widths) <= frame.width and frame.left + frame.width <= prs.slide_width
        for row in table.rows:
            for cell, width in zip(row.cells, widths, strict=True):
                assert cell.margin_left == cell.margin_right < Inches(0.1)
                assert 4 * cell.margin_left <= width + 1  # the text keeps half the column
        assert [cell.text for cell in table.rows[0].cells] == header
        body += [cell.text for row in list(table.rows)[1:] for cell in row.cells]
    assert body == [f"{r}.{c}" for r in range(3) for c in range(60)]


def test_a_short_column_beside_a_long_cell_keeps_its_word_whole() -> None:
    """The short column got exactly its word's width, which the wrapper (filling 97 % of a
    line) broke as "shortwor/d"; every column now holds its widest word unbroken."""
    markdown = ("# Lopsided\n\n## Table\n\n| Name | Description |\n|---|---|\n"
                f"| shortword | {long_text(90, sources=1)} |\n| Identifier | brief |\n")
    _, prs, _ = render(markdown, make_pool(1))
    table = table_frames(prs)[0].table
    metrics, mono = TextMetrics(default_fonts()), default_fonts().mono
    assert len(table.rows[1].cells[1].text) > 600
    for row in table.rows:
        cell = row.cells[0]
        width = (table.columns[0].width - cell.margin_left - cell.margin_right) / EMU_PER_PT
        paragraph = cell._tc.txBody.find(qn("a:p"))
        assert _para_lines(metrics, paragraph, width, mono)[0] == 1, cell.text


def test_images_are_placed_inside_the_content_area_or_show_alt_text(report: Any) -> None:
    _, prs, _ = report
    pictures = [(s, sh) for s in prs.slides for sh in s.shapes if sh.shape_type == 13]
    assert len(pictures) == 1
    _, pic = pictures[0]
    assert pic.left >= 0 and pic.left + pic.width <= prs.slide_width
    assert pic.element.find(qn("p:nvPicPr")).find(qn("p:cNvPr")).get("descr") == "A chart"
    assert abs(pic.width / pic.height - 2.0) < 0.01  # aspect ratio kept
    assert any("[Image: Remote]" in slide_text(s) for s in prs.slides)


@pytest.mark.parametrize("alt", ['"', "'", "it's \"quoted\" & <b>"])
def test_picture_descriptions_keep_quotes(alt: str) -> None:
    """Found by the writer fuzz: an alt text of one double quote made a picture attribute
    that closed early, and python-pptx (and PowerPoint) could not open the deck."""
    markdown = "".join(f"&#{ord(ch)};" for ch in alt)  # every character, exactly
    _, prs, _ = render(f"## A\n\n![{markdown}](data:image/png;base64,{PNG_2x1})\n",
                          make_pool(1))
    descriptions = [sh.element.find(qn("p:nvPicPr")).find(qn("p:cNvPr")).get("descr")
                    for slide in prs.slides for sh in slide.shapes if sh.shape_type == 13]
    assert descriptions == [alt]


def test_three_hundred_sources_paginate_over_several_slides() -> None:
    body = "\n\n".join(f"## Slide {k}\n\n" + " ".join(f"claim [[S:{k * 10 + j + 1}]]"
                                                       for j in range(10)) for k in range(30))
    _, prs, _ = render(body, make_pool(300))
    slides = sources_slides(prs)
    assert len(slides) >= 5
    assert slide_title(slides[1]) == "Sources (cont.)"
    numbers = [int(n) for s in slides for n in re.findall(r"^(\d+)\. ", slide_text(s), re.M)]
    assert numbers == list(range(1, 301))
    for slide in slides:
        box = next(sh for sh in slide.shapes if sh.has_text_frame and sh != slide.shapes.title)
        assert box.top + box.height <= prs.slide_height


# ---------------------------------------------------------------- options and determinism


def test_ratio_option() -> None:
    _, wide, _ = render("## A\n\nText.\n", make_pool(1))
    _, narrow, _ = render("## A\n\nText.\n", make_pool(1), slide_ratio="4:3")
    assert (wide.slide_width, wide.slide_height) == (Emu(12192000), Emu(6858000))
    assert (narrow.slide_width, narrow.slide_height) == (Emu(9144000), Emu(6858000))
    shape = next(s for s in narrow.slides[0].shapes if s.has_text_frame)
    assert shape.left + shape.width <= narrow.slide_width


def test_reference_pptx_uses_the_template_masters_and_drops_its_slides(tmp_path: Path) -> None:
    template = Presentation()
    from pptx.oxml.shapes.autoshape import CT_Shape

    master = template.slide_masters[0]
    marker = CT_Shape.new_textbox_sp(99, "Marker", 0, 0, 2000000, 300000)
    marker.txBody.p_lst[0].add_r().text = "ACME CONFIDENTIAL"
    master.shapes._spTree.append(marker)
    title_only = next(lay for lay in template.slide_layouts if lay.name == "Title Only")
    title_only.name = "ACME Heading"  # found by its placeholders, not its name
    next(ph for ph in title_only.placeholders if ph.placeholder_format.idx == 0).top = Emu(200000)
    for _ in range(2):
        old = template.slides.add_slide(template.slide_layouts[1])
        old.shapes.title.text = "OLD SLIDE"
    path = tmp_path / "acme.pptx"
    template.save(str(path))
    data, prs, _ = render("## Hello\n\nWorld [[S:1]].\n", make_pool(2), reference_pptx=path)
    assert all("OLD SLIDE" not in slide_text(s) for s in prs.slides)
    assert [slide_title(s) for s in prs.slides] == ["Hello", "Sources"]
    assert prs.slides[0].slide_layout.name == "ACME Heading"
    assert any(getattr(sh, "text", "") == "ACME CONFIDENTIAL"
               for sh in prs.slides[0].slide_layout.slide_master.shapes)
    assert prs.slides[0].shapes.title.top == Emu(200000)  # the template's title position
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        slide_parts = [n for n in package.namelist() if re.match(r"ppt/slides/slide\d+\.xml$", n)]
        assert len(slide_parts) == 2
        assert b"OLD SLIDE" not in b"".join(package.read(n) for n in package.namelist())


def test_bad_reference_pptx_is_an_input_error(tmp_path: Path) -> None:
    from renderers.errors import InputError

    bad = tmp_path / "bad.pptx"
    bad.write_text("not a zip")
    with pytest.raises(InputError, match=r"bad\.pptx"):
        render("## A\n", make_pool(1), reference_pptx=bad)


def test_output_is_byte_identical_and_dated_by_source_date_epoch(
    report: Any, monkeypatch: Any
) -> None:
    data, _, _ = report
    again, _, _ = render(REPORT, make_pool(20))
    assert again == data
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    dated, _, _ = render(REPORT, make_pool(20))
    with zipfile.ZipFile(io.BytesIO(dated)) as package:
        core = package.read("docProps/core.xml").decode()
        assert "2023-11-14T22:13:20Z" in core
        assert "docProps/thumbnail.jpeg" not in package.namelist()


@pytest.mark.slow
def test_output_is_byte_identical_in_a_fresh_process(report: Any, monkeypatch: Any) -> None:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    data, _, _ = report
    assert render_in_fresh_process("pptx", REPORT, pool_rows(20)) == data


def test_html_input() -> None:
    html = ("<h1>Briefing</h1><h2>Findings</h2><p>Prices fell"
            "<sup class=\"cite\" data-sids=\"2,3\">[S:2,3]</sup> and rose [[S:1]].</p>"
            "<script>alert(1)</script><p><a href=\"javascript:alert(1)\">x</a></p>")
    data, prs, _ = render(html, make_pool(3), html=True)
    assert [slide_title(s) for s in prs.slides] == ["Briefing", "Findings", "Sources"]
    sup = "".join(r.findtext(qn("a:t")) for r in runs(prs.slides[1])
                  if r.find(qn("a:rPr")).get("baseline"))
    assert sup == "1, 23"
    assert "alert" not in " ".join(slide_text(s) for s in prs.slides)
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        assert not any(b"javascript" in package.read(n) for n in package.namelist())


# ---------------------------------------------------------------- real client


@pytest.mark.libreoffice
def test_libreoffice_impress_shows_titles_citations_and_sources(report: Any, tmp_path: Path
                                                                ) -> None:
    data, prs, rdoc = report
    path = tmp_path / "deck.pptx"
    path.write_bytes(data)
    pdf = convert_with_libreoffice(path, tmp_path)
    text = pdf_text(pdf)
    squashed = re.sub(r"\s+", " ", text)
    pages = text.split("\f")
    assert len(pages) == len(prs.slides)
    for slide in prs.slides:
        title = re.sub(r"\s+", " ", slide_title(slide)).strip()
        if title:
            wanted = title.split(" (cont.)")[0].rstrip("0123456789 ").lower()
            assert wanted in squashed.lower()  # a layout may show titles in capitals
    for entry in rdoc.entries:
        assert entry.title in squashed
    assert "1–3" in squashed or "1-3" in squashed
    assert re.search(r"\[1\] site1\.org", squashed)


def test_a_short_line_under_the_title_becomes_the_title_slide_subtitle() -> None:
    content = "# Battery Storage\n\n*Offsite · January 2025*\n\n## Why now\n\nPrices fell.[[S:1]]\n"
    _, prs, _ = render(content, make_pool(2))
    cover = prs.slides[0]
    assert "Battery Storage" in slide_text(cover)
    assert "Offsite · January 2025" in slide_text(cover)
    assert all("Offsite" not in slide_text(s) for s in list(prs.slides)[1:])
    assert slide_title(prs.slides[1]) == "Why now"


def test_a_cited_line_under_the_title_stays_in_the_body() -> None:
    content = "# Battery Storage\n\nPrices fell.[[S:1]]\n\n## Why now\n\nMore.[[S:2]]\n"
    _, prs, _ = render(content, make_pool(2))
    assert "Prices fell" not in slide_text(prs.slides[0])
    assert any("Prices fell" in slide_text(s) for s in list(prs.slides)[1:])


def test_a_title_option_that_differs_from_the_first_heading_keeps_that_heading() -> None:
    content = "# Chapter one\n\nShort line.\n\n## Why now\n\nPrices fell.[[S:1]]\n"
    _, prs, _ = render(content, make_pool(1), title="Quarterly deck")
    assert "Quarterly deck" in slide_text(prs.slides[0])
    assert any("Chapter one" in slide_text(s) for s in list(prs.slides)[1:])


def test_a_citation_in_the_opening_heading_shows_on_the_cover() -> None:
    _, prs, _ = render("# Title claim [[S:3]]\n\n## Next\n\nBody.[[S:1]]\n", make_pool(3))
    cover = prs.slides[0]
    assert re.sub(r"\s+", " ", slide_text(cover)).strip() == "Title claim 1"
    mark = next(r for r in runs(cover) if r.findtext(qn("a:t")) == "1")
    assert mark.find(qn("a:rPr")).get("baseline") is not None  # superscript
    assert mark.find(qn("a:rPr")).find(qn("a:hlinkClick")) is not None  # jumps to Sources


def test_the_footer_names_a_source_without_a_url_by_its_title() -> None:
    pool = SourcePool.coerce([{"sid": 1, "title": "Internal memo"},
                              {"sid": 2, "title": "Web page", "url": "https://example.org/a"}])
    _, prs, _ = render("## Claims\n\nOne.[[S:1]] Two.[[S:2]]\n", pool)
    footer = next(s for s in prs.slides[0].shapes if s.name == "Sources").text_frame.text
    assert footer == "[1]\u00a0Internal memo · [2]\u00a0example.org"


def test_an_image_whose_alt_cites_a_source_is_a_picture_with_its_caption() -> None:
    content = f"## Chart\n\n![Output [[S:1]]](data:image/png;base64,{PNG_2x1})\n"
    _, prs, _ = render(content, make_pool(1))
    slide = prs.slides[0]
    assert [s for s in slide.shapes if s.shape_type == 13]  # a picture, not its alt text
    assert "[Image" not in slide_text(slide)
    assert re.search(r"Output\s*1", slide_text(slide))


# ---------------------------------------------------------------- the writers' shared rules


def test_author_notes_are_lettered_on_a_notes_slide_before_the_sources() -> None:
    text = ("## Notes here\n\nClaim[^x] and a cited one [[S:1]], then[^y] and[^x].\n\n"
            "[^y]: Second.\n\n[^x]: First.\n\n[^z]: Nobody cites this.\n")
    _, prs, _ = render(text, make_pool(2))
    slides = list(prs.slides)
    titles = [slide_title(s) for s in slides]
    assert titles[-2:] == ["Notes", "Sources"]
    body = slides[titles.index("Notes here")]
    raised = [(r.findtext(qn("a:t")), r.find(qn("a:rPr")).find(qn("a:hlinkClick")))
              for r in runs(body) if r.find(qn("a:rPr")).get("baseline")]
    assert [t for t, _ in raised] == ["a", "1", "b", "a"]  # letters, and the citation a number
    notes = slides[titles.index("Notes")]
    for _, link in [raised[0], raised[2]]:  # a reference jumps to the Notes slide
        assert link.get("action") == JUMP
        assert body.part.related_part(link.get(qn("r:id"))) is notes.part
    assert slide_text(notes).splitlines()[1:] == [
        "a. First.\u00a0↑", "b. Second.\u00a0↑", "c. Nobody cites this."]
    # the note's last word is in the back-link's run: LibreOffice breaks before a link, never
    # inside it, so the arrow cannot start a line alone
    back = next(r for r in runs(notes) if r.findtext(qn("a:t")) == "First.\u00a0↑")
    link = back.find(qn("a:rPr")).find(qn("a:hlinkClick"))
    assert notes.part.related_part(link.get(qn("r:id"))) is body.part


def test_the_back_link_takes_the_last_plain_word_into_its_link() -> None:
    # LibreOffice breaks a line before a link whatever precedes it: the word goes with the arrow
    details = Run(" \u2014 iea.org\u00a0\u00b7 2024-10-16", italic=True)
    assert with_backlink([Run("Title", url="https://a.example"), details], "cite-1", rtl=False) == (
        Run("Title", url="https://a.example"), Run(" \u2014 iea.org\u00a0\u00b7 ", italic=True),
        Run("2024-10-16\u00a0\u2191", italic=True, target="cite-1"))
    assert with_backlink([Run("Memo")], "n", rtl=False) == (Run("Memo\u00a0\u2191", target="n"),)
    # no word of its own to take: after a link, a citation, a trailing space
    for last in (Run("Title", url="https://a.example"), Run("3", cite=3), Run("note ")):
        assert with_backlink([last], "n", rtl=False) == (last, Run("\u00a0\u2191", target="n"))
    # right to left: the same, the link's text in a right-to-left embedding (LibreOffice lays
    # a link out left to right, the arrow right of its word)
    rtl = Run(" \u2014 iea.org\u200e\u200f\u00a0\u00b7 2024-10-16\u200f")
    assert with_backlink([rtl], "n", rtl=True) == (
        Run(" \u2014 iea.org\u200e\u200f\u00a0\u00b7 "),
        Run("\u202b2024-10-16\u200f\u00a0\u2191\u202c", target="n"))
    title = Run("\u062a\u0642\u0631\u064a\u0631", url="https://a.example")
    assert with_backlink([title], "n", rtl=True) == (
        title, Run("\u202b\u00a0\u2191\u202c", target="n"))


def test_sources_entries_and_image_fallbacks_follow_the_shared_rules() -> None:
    _, prs, _ = render("## S\n\nSee [[S:1]].\n\n![](https://example.com/x.png)\n", make_pool(1))
    entry = slide_text(sources_slides(prs)[0]).splitlines()[1]
    assert entry == "1. Report 1 on storage markets\u00a0— site1.org\u00a0· 2024-03-01\u00a0↑"
    assert "[Image]" in slide_text(prs.slides[0])


@pytest.mark.parametrize("toc", [False, True])
def test_text_before_the_first_heading_is_shown_under_the_documents_title(toc: bool) -> None:
    # An answer without headings, or a lede before the first section, had slides without a
    # title: they read as broken and were unnamed in the outline and the slide sorter.
    answer = " ".join(f"Heat pumps deliver {k} units of heat per unit.[[S:1]]" for k in range(60))
    content = f"# Should we recommend heat pumps?\n\n{answer}\n\n- Radiators\n- Insulation\n"
    _, prs, _ = render(content, make_pool(1), toc=toc)
    slides = list(prs.slides)
    assert all(slide_title(s).strip() for s in slides), [slide_title(s) for s in slides]
    body = [s for s in slides if "Heat pumps deliver 0" in slide_text(s)]
    assert [slide_title(s) for s in body] == ["Should we recommend heat pumps?"]
    rest = [slide_title(s) for s in slides if "Radiators" in slide_text(s)]
    assert rest and rest[0].startswith("Should we recommend heat pumps?")
    lede = ("# Briefing\n\nA lede that cites its figures, longer than a byline.[[S:1]]\n\n"
            "## Power\n\nX.\n")
    titles = [slide_title(s) for s in render(lede, make_pool(1), toc=toc)[1].slides]
    assert titles[:1] == ["Briefing"] and "Briefing" in titles[1:] and "Power" in titles


def test_a_task_box_is_followed_by_a_space_and_sits_where_a_bullet_does() -> None:
    """The box (about 0.9 em wide) hangs far enough that a space's width parts it from its
    text; the box itself starts where a plain item's bullet does."""
    from fontTools.ttLib import TTFont

    from renderers.fonts import font_index

    face = TTFont(font_index()["dejavusans.ttf"])
    em = face["head"].unitsPerEm
    box_width, space_width = (face["hmtx"][face.getBestCmap()[ord(ch)]][0] / em
                              for ch in ("\u2610", " "))
    _, deck, _ = render("# T\n\n## Tasks\n\n- [ ] open task\n- [x] done task\n- plain item\n",
                        make_pool(1))
    found: dict[str, tuple[float, float, float]] = {}
    for slide in deck.slides:
        for shape in slide.shapes:
            if not shape.has_text_frame:
                continue
            for para in shape.text_frame.paragraphs:
                ppr = para._p.pPr
                bullet = ppr.find(qn("a:buChar")) if ppr is not None else None
                if bullet is None:
                    continue
                size = para.runs[0].font.size.pt
                found[para.text] = (int(ppr.get("marL")) / EMU_PER_PT,
                                    int(ppr.get("indent")) / EMU_PER_PT, size)
                assert bullet.get("char") in {"\u2610", "\u2612", "\u2022"}
    assert set(found) == {"open task", "done task", "plain item"}
    plain_margin, plain_indent, _ = found["plain item"]
    for task in ("open task", "done task"):
        margin, indent, size = found[task]
        assert -indent >= (box_width + space_width) * size  # the box, then a space
        assert margin + indent == pytest.approx(plain_margin + plain_indent)  # box at the bullet
