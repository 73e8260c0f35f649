"""The rules every writer shares (renderers.writers.common), checked in every format's output.

One input goes through the HTML, PDF, DOCX, PPTX and Markdown writers; each test reads the files
back and checks that the format shows what the shared rule decides: the title, author notes that
cannot be taken for citations, the Sources entry, the fallback for a missing image, task boxes,
and that a source's server path never reaches any output.
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path
from typing import Any, get_args

import lxml.html
import pytest
from lxml import etree

from citations.pool import SourcePool
from renderers.document import (
    Document,
    FootnoteDef,
    FootnoteRef,
    Heading,
    Image,
    Inline,
    Paragraph,
    Text,
)
from renderers.labels import ENGLISH, LABELS
from renderers.options import PageSize, RenderOptions
from renderers.readers.markdown import read_markdown
from renderers.resolve import ResolvedDocument, SourceEntry, file_name, resolve, source_label
from renderers.writers.common import (
    BACKLINK_MARK,
    PAGE_SIZES,
    AuthorNotes,
    document_title,
    entry_parts,
    image_fallback,
    item_marker,
    note_marker,
)
from renderers.writers.docx.writer import docx_bytes
from renderers.writers.html.report import render_html
from renderers.writers.markdown import markdown_text
from renderers.writers.pdf import pdf_bytes
from renderers.writers.pptx.output import pptx_bytes
from tests.helpers import convert_with_libreoffice, pdf_lines

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"

POOL: list[dict[str, Any]] = [
    {"sid": 1, "title": "World Energy Outlook 2024", "url": "https://www.iea.org/reports/weo-2024",
     "published_at": "2024-10-16"},
    {"sid": 2, "title": "Renewable Capacity Statistics", "url": "https://www.irena.org/stats"},
    {"sid": 3, "title": "Tenant memo", "physical_path": "/srv/data/tenant42/uploads/q3-memo.pdf",
     "source_type": "file"},
    {"sid": 4, "physical_path": "C:\\Users\\ops\\secret\\board.xlsx", "source_type": "file"},
]

REPORT = """# Energy report

Claim one[[S:1]] with an author note.[^why] Claim two.[[S:2]] Again[^why] and more.[^how]
The memo[[S:3]] and the sheet[[S:4]].

- [x] done task
- [ ] open task

![Remote picture](https://example.org/chart.png)

[^why]: The first note.

[^how]: The second note.

[^spare]: Nobody references this note.
"""


def resolved(text: str = REPORT) -> ResolvedDocument:
    return resolve(read_markdown(text), SourcePool.from_rows(POOL))


@pytest.fixture(scope="module")
def rdoc() -> ResolvedDocument:
    return resolved()


@pytest.fixture(scope="module")
def html(rdoc: ResolvedDocument) -> str:
    return render_html(rdoc, RenderOptions())


@pytest.fixture(scope="module")
def docx_data(rdoc: ResolvedDocument) -> bytes:
    return docx_bytes(rdoc, RenderOptions())


@pytest.fixture(scope="module")
def pdf_data(html: str) -> bytes:
    return pdf_bytes(html, RenderOptions())


def docx_paragraphs(data: bytes) -> list[str]:
    """Each paragraph's text as a reader sees it: a no-break hyphen or space as a plain one
    (the DOCX keeps Sources dates and back-links from breaking with them)."""
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        root = etree.fromstring(package.read("word/document.xml"))
    return ["".join("-" if t.tag == f"{W}noBreakHyphen" else t.text or ""
                    for t in p.iter(f"{W}t", f"{W}noBreakHyphen")).replace("\u00a0", " ")
            for p in root.iter(f"{W}p")]


def pdf_words(data: bytes) -> str:
    """The PDF's text as drawn, line by line (superscripts where they are shown)."""
    return "\n".join(text for _, _, text in pdf_lines(data))


# ---------------------------------------------------------------- the rules themselves


def test_note_markers_are_letters_in_the_css_lower_alpha_series() -> None:
    assert [note_marker(n) for n in (1, 2, 26, 27, 28, 52, 53, 702, 703)] == [
        "a", "b", "z", "aa", "ab", "az", "ba", "zz", "aaa"]
    with pytest.raises(ValueError, match="numbered from 1"):
        note_marker(0)


def test_notes_are_numbered_by_first_reference_then_inside_notes_then_unreferenced() -> None:
    def note(label: str, *inlines: Inline) -> FootnoteDef:
        return FootnoteDef(label, (Paragraph(inlines),))

    document = Document((
        Paragraph((Text("Text"), FootnoteRef("b"), FootnoteRef("a"), FootnoteRef("b"))),
        note("d", Text("D.")),
        note("a", Text("A refers to"), FootnoteRef("c")),
        note("b", Text("B.")),
        note("c", Text("C.")),
        note("a", Text("A again: the first definition wins.")),
    ))
    notes = AuthorNotes(document.blocks)
    assert [(n.label, n.marker, n.referenced) for n in notes] == [
        ("b", "a", True), ("a", "b", True), ("c", "c", True), ("d", "d", False)]
    first = notes.get("a")
    assert first is not None and first.anchor == "fn-2"
    assert first.blocks == (Paragraph((Text("A refers to"), FootnoteRef("c"))),)
    assert notes.get("missing") is None


def test_title_rule() -> None:
    opening = read_markdown("# Own title\n\nBody.\n")
    plain = read_markdown("Body only.\n")
    title = document_title(opening, RenderOptions())
    assert title.text == "Own title" and title.heading is opening.blocks[0] and not title.added
    given = document_title(opening, RenderOptions(title="Given"))
    assert given.text == "Given" and given.heading is None and given.added
    same = document_title(opening, RenderOptions(title="  Own   title "))
    assert same.heading is opening.blocks[0] and not same.added
    untitled = document_title(plain, RenderOptions())
    assert untitled.text == "" and not untitled.added
    # metadata that needs a title names the report in the document's words
    assert untitled.page_title(ENGLISH) == "Report"
    assert untitled.page_title(LABELS["de"]) == "Bericht"
    assert title.page_title(LABELS["de"]) == "Own title"
    later = Document((Paragraph((Text("Lead."),)), Heading(1, (Text("Later"),))))
    assert document_title(later, RenderOptions()).heading is later.blocks[1]


def test_entry_parts_and_image_fallback() -> None:
    rdoc = resolved("a[[S:1]] b[[S:3]]\n")
    web, memo = (entry_parts(entry) for entry in rdoc.entries)
    assert (web.marker, web.title, web.details_run()) == (
        "1.", "World Energy Outlook 2024", "\u00a0\u2014 iea.org\u00a0\u00b7 2024-10-16")
    assert [d.kind for d in web.details] == ["label", "date"] and web.backlink == "cite-1"
    assert (memo.title, memo.details_run(), memo.url) == (
        "Tenant memo", "\u00a0\u2014 q3-memo.pdf", "")
    same = SourceEntry(1, 9, rdoc.entries[0].source, "iea.org", "", "iea.org", "", "src-1", "")
    assert entry_parts(same).details == ()  # a label that only repeats the title is left out
    assert image_fallback(Image("x.png", alt="  A  chart "), ENGLISH) == "[Image: A chart]"
    assert image_fallback(Image("/srv/x.png", title="Titled"), ENGLISH) == "[Image: Titled]"
    assert image_fallback(Image("/srv/x.png"), ENGLISH) == "[Image]"
    assert image_fallback(Image("/srv/x.png", title="Titel"), LABELS["de"]) == "[Bild: Titel]"
    assert (item_marker(True, "\u2022"), item_marker(False, ""), item_marker(None, "\u2022")) == (
        "\u2612", "\u2610", "\u2022")  # a task's box replaces the bullet or number


def test_every_page_size_has_dimensions() -> None:
    assert set(PAGE_SIZES) == set(get_args(PageSize))
    assert (PAGE_SIZES["A4"].width_twips, PAGE_SIZES["Letter"].css) == (11906, "letter")


# ---------------------------------------------------------------- a server path never shows


def test_a_physical_path_never_reaches_a_label() -> None:
    rows = SourcePool.from_rows(POOL)
    assert source_label(rows.get(3)) == "q3-memo.pdf"  # type: ignore[arg-type]
    assert source_label(rows.get(4)) == "board.xlsx"  # type: ignore[arg-type]
    with_artifact = SourcePool.from_rows(
        [{"sid": 1, "artifact_path": "attachments/memo.pdf", "physical_path": "/srv/x/memo.pdf"}])
    assert source_label(with_artifact.get(1)) == "attachments/memo.pdf"  # type: ignore[arg-type]
    assert file_name("/srv/data/") == "data" and file_name("") == ""


def test_a_row_that_names_its_domain_is_shown_under_it() -> None:
    # Gemini links a Google redirect and names the site beside it: the label is the site's,
    # in every format (they all take the label from source_label).
    redirect = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AAA"
    pool = SourcePool.from_rows([
        {"sid": 1, "title": "Wind in Spain", "url": redirect, "domain": "www.REE.es"},
        {"sid": 2, "title": "Other", "url": redirect, "domain": "not a host"},
        {"sid": 3, "title": "No URL", "domain": "ree.es", "artifact_path": "a/memo.pdf"},
    ])
    labels = [source_label(pool.get(sid)) for sid in (1, 2, 3)]  # type: ignore[arg-type]
    assert labels == ["ree.es", "vertexaisearch.cloud.google.com", "a/memo.pdf"]
    document = resolve(read_markdown("Wind[[S:1]]."), pool)
    assert "[^1]: [Wind in Spain](" + redirect + ") — ree.es" in markdown_text(
        document, RenderOptions())


def _assert_no_server_path(text: str, where: str) -> None:
    assert "/srv/" not in text and "tenant42" not in text, where
    assert "Users" not in text and "secret" not in text, where
    assert "q3-memo.pdf" in text and "board.xlsx" in text, where


def test_an_entry_shows_the_day_not_the_clock_and_says_when_it_was_only_accessed() -> None:
    pool = SourcePool.from_rows([
        {"sid": 1, "title": "Crawled", "url": "https://a.example",
         "fetched_at": "2024-09-30T10:00:00Z"},
        {"sid": 2, "title": "Dated", "url": "https://b.example",
         "published_at": "2024-10-16 08:00:00+02:00", "fetched_at": "2025-01-05"},
        {"sid": 3, "title": "Loose", "url": "https://c.example", "published_at": "March 2024"},
    ])
    document = resolve(read_markdown("A[[S:1]] b[[S:2]] c[[S:3]]."), pool)
    assert [entry.date for entry in document.entries] == [
        "accessed 2024-09-30", "2024-10-16", "March 2024"]
    text = markdown_text(document, RenderOptions())
    assert "a.example · accessed 2024-09-30\n" in text and "T10:00" not in text


def test_no_format_shows_a_physical_path(
    rdoc: ResolvedDocument, html: str, docx_data: bytes, pdf_data: bytes
) -> None:
    from renderers.writers.pptx.output import pptx_bytes

    _assert_no_server_path(html, "html")
    _assert_no_server_path(markdown_text(rdoc, RenderOptions()), "md")
    _assert_no_server_path(pdf_words(pdf_data), "pdf")
    for name, data in (("docx", docx_data), ("pptx", pptx_bytes(rdoc, RenderOptions()))):
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            xml = "".join(package.read(n).decode() for n in package.namelist()
                          if n.endswith(".xml") or n.endswith(".rels"))
        _assert_no_server_path(xml, name)


# ---------------------------------------------------------------- notes are not citations


def test_html_notes_are_letters_citations_numbers(html: str) -> None:
    root = lxml.html.document_fromstring(html)
    cites = [s.text_content() for s in root.find_class("cite")]
    notes = [s.text_content() for s in root.find_class("fnref")]
    assert cites == ["1", "2", "3", "4"] and notes == ["a", "a", "b"]
    listed = root.get_element_by_id("notes").find_class("notes-list")[0]
    texts = [" ".join(li.text_content().split()) for li in listed.iter("li")]
    assert texts == [f"a. The first note. {BACKLINK_MARK}", f"b. The second note. {BACKLINK_MARK}",
                     "c. Nobody references this note."]
    second_ref = root.xpath("//sup[@class='fnref']")[1]
    assert second_ref.get("id") == "fnref-1-2"
    assert second_ref.find("a").get("href") == "#fn-1"


def test_pdf_notes_are_letters_citations_numbers(pdf_data: bytes) -> None:
    text = " ".join(pdf_words(pdf_data).split())
    assert "Claim one1 with an author note.a Claim two.2 Againa and more.b" in text
    assert "Notes a. The first note." in text and "c. Nobody references this note." in text


def test_markdown_notes_are_letters_citations_numbers(rdoc: ResolvedDocument) -> None:
    out = markdown_text(rdoc, RenderOptions())
    assert "Claim one[^1] with an author note.[^a] Claim two.[^2] Again[^a] and more.[^b]" in out
    assert "[^a]: The first note." in out and "[^c]: Nobody references this note." in out


@pytest.mark.libreoffice
def test_docx_notes_are_letters_citations_numbers_in_libreoffice(
    docx_data: bytes, tmp_path: Path
) -> None:
    path = tmp_path / "notes.docx"
    path.write_bytes(docx_data)
    text = " ".join(pdf_words(convert_with_libreoffice(path, tmp_path).read_bytes()).split())
    assert "Claim one1 with an author note.a Claim two.2 Againa and more.b" in text
    assert f"Notes a. The first note. {BACKLINK_MARK} b. The second note. {BACKLINK_MARK}" in text
    assert "c. Nobody references this note." in text


# ---------------------------------------------------------------- entries, title, images, tasks


def test_the_sources_entry_is_the_same_in_every_format(
    rdoc: ResolvedDocument, html: str, docx_data: bytes, pdf_data: bytes
) -> None:
    # each separator and the back-link after a no-break space: none of them starts a line
    entry = ("World Energy Outlook 2024\u00a0\u2014 iea.org\u00a0\u00b7 2024-10-16\u00a0"
             f"{BACKLINK_MARK}")
    root = lxml.html.document_fromstring(html)
    first = root.get_element_by_id("src-1")
    assert first.text_content().strip() == entry
    read = " ".join(entry.split())  # as docx_paragraphs and pdf_words read no-break spaces
    assert f"1.{read}" in docx_paragraphs(docx_data)
    assert read in " ".join(pdf_words(pdf_data).split())
    md = markdown_text(rdoc, RenderOptions())  # plain text, as programs read it
    assert ("[^1]: [World Energy Outlook 2024](https://www.iea.org/reports/weo-2024) \u2014 "
            "iea.org \u00b7 2024-10-16") in md


def test_an_explicit_title_is_shown_once_in_every_format() -> None:
    rdoc = resolved("# Own heading\n\nBody.[[S:1]]\n")
    options = RenderOptions(title="Quarterly review")
    root = lxml.html.document_fromstring(render_html(rdoc, options))
    assert [h.text_content() for h in root.iter("h1")] == ["Quarterly review", "Own heading"]
    assert root.find(".//title").text == "Quarterly review"
    paragraphs = docx_paragraphs(docx_bytes(rdoc, options))
    assert paragraphs[:2] == ["Quarterly review", "Own heading"]
    assert markdown_text(rdoc, options).startswith("# Quarterly review\n\n# Own heading\n")
    matching = RenderOptions(title="Own heading")
    root = lxml.html.document_fromstring(render_html(rdoc, matching))
    assert [h.text_content() for h in root.iter("h1")] == ["Own heading"]
    assert docx_paragraphs(docx_bytes(rdoc, matching)).count("Own heading") == 1


def test_a_missing_image_and_task_boxes_look_the_same_everywhere(
    rdoc: ResolvedDocument, html: str, docx_data: bytes, pdf_data: bytes
) -> None:
    fallback = "[Image: Remote picture]"  # nothing is fetched while rendering
    root = lxml.html.document_fromstring(html)
    assert root.find_class("img-alt")[0].text_content() == fallback
    assert "example.org" not in html
    paragraphs = docx_paragraphs(docx_data)
    assert fallback in paragraphs
    refused = Document((Paragraph((Image("file:///srv/data/x.png", alt="Refused"),)),))
    out = markdown_text(resolve(refused, SourcePool.from_rows(POOL)), RenderOptions())
    assert out == "\\[Image: Refused\\]\n" and "/srv/" not in out
    boxes = [span.text_content() for span in root.find_class("task-box")]
    assert boxes == ["\u2612", "\u2610"]
    assert "done task" in paragraphs and "open task" in paragraphs  # the box is the list mark
    text = pdf_words(pdf_data)
    assert fallback in text and re.search("\u2612\\s*done task", text)


def test_an_empty_note_still_has_its_letter_everywhere() -> None:
    rdoc = resolve(Document((Paragraph((Text("Text"), FootnoteRef("e"))), FootnoteDef("e", ()))),
                   SourcePool.from_rows(POOL))
    root = lxml.html.document_fromstring(render_html(rdoc, RenderOptions()))
    listed = root.get_element_by_id("notes").find_class("notes-list")[0]
    assert " ".join(listed.text_content().split()) == f"a. {BACKLINK_MARK}"
    assert f"a. {BACKLINK_MARK}" in docx_paragraphs(docx_bytes(rdoc, RenderOptions()))
    assert "Text[^a]" in markdown_text(rdoc, RenderOptions())


def test_a_note_referenced_only_by_itself_renders_everywhere() -> None:
    rdoc = resolve(Document((FootnoteDef("x", (Paragraph((Text("Self"), FootnoteRef("x"))),)),)),
                   SourcePool.from_rows(POOL))
    assert f"a.Selfa {BACKLINK_MARK}" in docx_paragraphs(docx_bytes(rdoc, RenderOptions()))
    root = lxml.html.document_fromstring(render_html(rdoc, RenderOptions()))
    assert root.get_element_by_id("fnref-1").find("a").get("href") == "#fn-1"
    assert markdown_text(rdoc, RenderOptions()) == "[^a]: Self[^a]\n"


def docx_list_marks(data: bytes) -> dict[str, str]:
    """Each list paragraph's text → the mark its Word numbering level draws (``%1.`` for a
    number)."""
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        root = etree.fromstring(package.read("word/document.xml"))
        numbering = etree.fromstring(package.read("word/numbering.xml"))
    abstract = {a.get(f"{W}abstractNumId"): a for a in numbering.iter(f"{W}abstractNum")}
    nums = {n.get(f"{W}numId"): abstract[n.find(f"{W}abstractNumId").get(f"{W}val")]
            for n in numbering.iter(f"{W}num")}
    marks: dict[str, str] = {}
    for p in root.iter(f"{W}p"):
        num_pr = p.find(f"{W}pPr/{W}numPr")
        if num_pr is None:
            continue
        level = num_pr.find(f"{W}ilvl").get(f"{W}val")
        definition = nums[num_pr.find(f"{W}numId").get(f"{W}val")]
        lvl = next(x for x in definition.iter(f"{W}lvl") if x.get(f"{W}ilvl") == level)
        text = "".join(t.text or "" for t in p.iter(f"{W}t"))
        marks[text] = lvl.find(f"{W}lvlText").get(f"{W}val")
    return marks


TASKS = """# Tasks

- [ ] open task
- [x] done task
- plain bullet

1. first step
2. [x] second step
3. third step
"""


def test_a_task_item_shows_its_box_instead_of_a_bullet_or_number_in_docx() -> None:
    data = docx_bytes(resolved(TASKS), RenderOptions())
    assert docx_list_marks(data) == {
        "open task": "\u2610", "done task": "\u2612", "plain bullet": "\u2022",
        "first step": "%1.", "second step": "\u2612", "third step": "%1.",
    }
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        numbering = etree.fromstring(package.read("word/numbering.xml"))
    starts = [o.get(f"{W}val") for o in numbering.iter(f"{W}startOverride")]
    assert "3" in starts, "the item after a task keeps counting it: 3., as HTML shows"


@pytest.mark.libreoffice
def test_task_items_show_one_mark_in_docx_and_pptx_in_libreoffice(tmp_path: Path) -> None:
    rdoc = resolved(TASKS)
    docx = tmp_path / "tasks.docx"
    docx.write_bytes(docx_bytes(rdoc, RenderOptions()))
    pptx = tmp_path / "deck" / "tasks.pptx"
    pptx.parent.mkdir()
    pptx.write_bytes(pptx_bytes(rdoc, RenderOptions()))
    for path in (docx, pptx):
        # spaces left out: the gap between a mark and the text is the client's to draw
        lines = ["".join(text.split()) for _, _, text in
                 pdf_lines(convert_with_libreoffice(path, path.parent).read_bytes())]
        assert "\u2610opentask" in lines and "\u2612donetask" in lines, (path.name, lines)
        assert "\u2612secondstep" in lines and "3.thirdstep" in lines, (path.name, lines)
        assert "\u2022plainbullet" in lines, (path.name, lines)


def test_heading_ids_take_the_smallest_free_counter_in_linear_time() -> None:
    """Ids of repeated headings are ``h``, ``h-1``, ``h-2`` … skipping taken ones; the search
    restarted at ``h-1`` for each heading (20,000 headings ``# h``: 27 s of a render)."""
    from renderers.text import HeadingIds

    ids = HeadingIds()
    ids.reserve("h-2")
    assert [ids.assign("h") for _ in range(4)] == ["h", "h-1", "h-3", "h-4"]
    assert ids.take("h-5", "x") == "h-5" and ids.assign("h") == "h-6"
    assert ids.assign("sources") == "sources-1"  # a writer's own anchor is never handed out
    many = HeadingIds()
    assert [many.assign("h") for _ in range(50_000)][-1] == "h-49999"
