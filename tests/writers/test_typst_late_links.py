"""Links to the document's own labels, set after Typst's layout (typst/late_links.py).

The Typst PDF links citations, note references, back-links and in-text anchor links to
placeholder positions and rewrites them afterwards (links to headings stay Typst's own). The
result must lead exactly where Typst's own label links lead, say the same alt text in a tagged
PDF, and stay a well-formed PDF.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import warnings
from collections import Counter

import pytest
from pypdf import PdfReader

from citations.pool import SourcePool
from renderers.options import PdfVariant, RenderOptions
from renderers.readers.markdown import read_markdown
from renderers.resolve import resolve
from renderers.testing import normalize_pdf
from renderers.writers.typst import writer as typst_writer
from renderers.writers.typst.late_links import (
    LateLinkError,
    Placement,
    prelude,
    resolve_late_links,
)
from renderers.writers.typst.markup import typst_source
from renderers.writers.typst.pdf_file import XrefTable

SOURCES = 14
POOL = SourcePool.from_rows(
    [{"sid": n, "title": f"Source number {n}", "url": f"https://example.org/{n}"}
     for n in range(1, SOURCES + 1)]
)
ALT_TEXT = re.compile(rb"/Contents\(([^)]*)\)")


def long_markdown() -> str:
    """Several pages: citations of every source on many pages, a note, an anchor link."""
    paragraphs = ["# Findings", "See [the method](#method) first.[^n]", "[^n]: A note."]
    for n in range(60):
        sid = n % SOURCES + 1
        paragraphs.append(
            f"Paragraph {n} reports a measured figure [[S:{sid}]] and compares it with an "
            f"earlier one [[S:{(sid % SOURCES) + 1},{((sid + 4) % SOURCES) + 1}]]. " * 3
        )
        if n == 30:
            paragraphs.append("## Method")
    return "\n\n".join(paragraphs)


def compiled(variant: PdfVariant | None, *, late_links: bool) -> bytes:
    rdoc = resolve(read_markdown(long_markdown()), POOL)
    options = RenderOptions(pdf_engine="typst", pdf_variant=variant)
    source = typst_source(rdoc, options, dated=True)
    stamp = dt.datetime(2024, 1, 2, tzinfo=dt.UTC)  # PDF/A requires a date
    pages, _ = typst_writer.compile_source(source, options, stamp=stamp, late_links=late_links)
    return pages[0]


@pytest.fixture(scope="module")
def pdfs() -> tuple[bytes, bytes]:
    """The default PDF with late links, and with Typst's own label links."""
    return compiled(None, late_links=True), compiled(None, late_links=False)


@pytest.mark.parametrize("variant", [None, "pdf/ua-1", "pdf/a-3b"])
def test_late_links_lead_where_typst_label_links_lead(variant: PdfVariant | None) -> None:
    late, label = compiled(variant, late_links=True), compiled(variant, late_links=False)
    assert normalize_pdf(late)["links.txt"] == normalize_pdf(label)["links.txt"]
    assert len(PdfReader(io.BytesIO(late)).pages) >= 4
    assert b"/XYZ -" not in late  # no placeholder is left
    # a tagged PDF's alt text of each link ("page 5", "Section, page 3") is Typst's own
    assert ALT_TEXT.findall(late) == ALT_TEXT.findall(label)
    assert (b"page 5" in ALT_TEXT.findall(late)) == (variant == "pdf/ua-1")


def test_every_citation_leads_to_its_entry(pdfs: tuple[bytes, bytes]) -> None:
    late, _ = pdfs
    reader = PdfReader(io.BytesIO(late))
    pages = {page.indirect_reference.idnum: index for index, page in enumerate(reader.pages)}
    reached: Counter[tuple[int, float]] = Counter()
    for page in reader.pages:
        for annotation in page.get("/Annots") or []:
            destination = annotation.get_object().get("/Dest")
            if destination is not None and not isinstance(destination, str):  # not a name
                destination = destination.get_object()
                reached[(pages[destination[0].idnum], float(destination[3]))] += 1
    # 60 paragraphs × 3 sentences × 3 numbers, each source cited 30 times or more: the 14
    # entries are the places reached that often, on the last pages, one place each
    entries = {place: count for place, count in reached.items() if count >= 30}
    assert len(entries) == SOURCES and sum(entries.values()) == 60 * 3 * 3
    assert min(page for page, _ in entries) >= len(reader.pages) - 2


def test_rewritten_cross_reference_table_is_exact(pdfs: tuple[bytes, bytes]) -> None:
    late, _ = pdfs
    table = XrefTable.read(late)
    used = [
        (first + index, offset)
        for first, entries in table.sections
        for index, (offset, _, kind) in enumerate(entries)
        if kind == b"n"
    ]
    assert used and all(late.startswith(b"%d 0 obj" % n, offset) for n, offset in used)
    start = int(re.search(rb"startxref\s+(\d+)", late[-64:]).group(1))  # type: ignore[union-attr]
    assert late.startswith(b"xref", start)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(PdfReader(io.BytesIO(late), strict=True).pages) >= 4


def test_markup_lists_each_link_target_once_in_order() -> None:
    rdoc = resolve(read_markdown(long_markdown()), POOL)
    source = typst_source(rdoc, RenderOptions(pdf_engine="typst"))
    # the text's links (not the one to the heading "Method"), then the back-links: the note's
    # to its reference, each entry's to the first citation of its source (one citation may be
    # the first of several)
    backlinks = tuple(dict.fromkeys(entry.backlink for entry in rdoc.entries))
    assert all(backlinks) and source.link_targets[-len(backlinks) - 1 :] == ("fnref-1", *backlinks)
    assert source.link_targets[:2] == ("fn-1", "src-1")
    expected = 1 + SOURCES + 1 + len(backlinks)
    assert len(source.link_targets) == len(set(source.link_targets)) == expected
    defined = prelude(source.link_targets, late=True)
    assert '"src-1": (page: 1, x: -2pt, y: 0pt)' in defined
    assert prelude(source.link_targets, late=False).endswith("#let late-dests = (:)\n")


def test_a_pdf_without_placeholders_is_refused(pdfs: tuple[bytes, bytes]) -> None:
    """A Typst release that wrote its destinations otherwise would leave links on page 1."""
    _, label = pdfs
    assert resolve_late_links(label, []) == label
    with pytest.raises(LateLinkError, match="none of the placeholder"):
        resolve_late_links(label, [Placement(1, 10.0, 10.0)])


def test_an_unrecognized_pdf_is_compiled_again_with_typst_label_links(
    pdfs: tuple[bytes, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    late, _ = pdfs

    def unrecognized(pdf: bytes, placements: object) -> bytes:
        raise LateLinkError("the Typst engine's PDF holds none of the placeholder destinations")

    monkeypatch.setattr(typst_writer, "resolve_late_links", unrecognized)
    rdoc = resolve(read_markdown(long_markdown()), POOL)
    pages, notes = typst_writer.compile_source(
        typst_source(rdoc, RenderOptions(pdf_engine="typst")), RenderOptions(pdf_engine="typst"),
        stamp=None,
    )
    assert normalize_pdf(pages[0])["links.txt"] == normalize_pdf(late)["links.txt"]
    assert [note.message for note in notes] == [
        "Typst: links set by Typst (the Typst engine's PDF holds none of the placeholder "
        "destinations)"
    ]


@pytest.mark.parametrize("csl", ["", "apa"])
def test_a_back_link_leads_to_the_top_of_the_citations_line(csl: str) -> None:
    """The destination of a Sources entry's back-link is the top of the line holding its
    citation: a heading's (a viewer showed it cut: the destination lay 10 pt above the
    baseline, below the top of a 20 pt heading's capitals) and a paragraph's. WeasyPrint's
    lands at the raised number's top, at the capitals' height. A citation a CSL style writes
    out ("(Source number 1, n.d.)") too: its anchor lay on the baseline, 6 pt below the top of
    a level-2 heading's line."""
    import pypdfium2 as pdfium

    from renderers.styles.apply import apply_style

    markdown = "# Energy outlook[[S:1]]\n\n## Storage costs[[S:2]]\n\nBatteries fell.[[S:3]]\n"
    options = RenderOptions(pdf_engine="typst", csl=csl)
    rdoc = apply_style(resolve(read_markdown(markdown), POOL), options)
    pdf, _, _ = typst_writer.typst_pdf(rdoc, options)
    reader = PdfReader(io.BytesIO(pdf))
    height = float(reader.pages[0].mediabox.top)
    links = [annotation.get_object() for annotation in reader.pages[0].get("/Annots") or []]
    back_links = [  # the entries' back-links, in order: the links leading up the page
        height - float(link["/Dest"].get_object()[3]) for link in links
        if "/Dest" in link and float(link["/Dest"].get_object()[3]) > float(link["/Rect"][3])
    ]
    textpage = pdfium.PdfDocument(pdf)[0].get_textpage()
    text = textpage.get_text_range()
    sizes = {"Energy": 1.9 * 10.5, "Storage": 1.45 * 10.5, "Batteries": 10.5}
    assert len(back_links) == 3, back_links
    for destination, (word, size) in zip(back_links, sizes.items(), strict=True):
        capital = height - textpage.get_charbox(text.index(word))[3]  # the top of its capital
        top_of_line = capital - (1.069 - 0.714) * size  # Noto Sans: ascender, capitals
        assert abs(destination - top_of_line) < 1, (word, destination, capital)


def test_a_link_to_a_notes_reference_leads_there() -> None:
    """``[back](#fnref-1)`` was plain text in the Typst PDF (WeasyPrint's leads to the
    note's first reference, which Typst labels for the note's back-link too)."""
    text = "Solar [[S:1]].[^n] See [the note](#fn-1) and [back](#fnref-1).\n\n[^n]: A note.\n"
    options = RenderOptions(pdf_engine="typst")
    source = typst_source(resolve(read_markdown(text), POOL), options)
    assert '#link(to-label("fnref-1"))[#"back";]' in source.text
    pages, _ = typst_writer.compile_source(source, options, stamp=None)
    links = [annot.get_object() for page in PdfReader(io.BytesIO(pages[0])).pages
             for annot in page.get("/Annots") or []]
    # the citation, the note reference, the two links, the note's back-link, the entry's
    # URL and its back-link
    assert len(links) == 7 and all("/Dest" in link or "/A" in link for link in links)
