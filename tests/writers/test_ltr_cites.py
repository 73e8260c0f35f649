"""A citation after a right-to-left phrase in a left-to-right line stays with its sentence.

Its digits after Arabic letters are Arabic numbers (UAX #9, W2) that joined the phrase's run:
the "1" stood left of the phrase, between it and the English word before it, and "1, 2"
read "2 ,1". Held apart (:func:`~renderers.writers.common.cite_direction`'s ``before``) it
sits right of the phrase, in order, in every format: a Word footnote's reference too. What
comes before is read in its line: after a hard break, as the engines read it (all but
LibreOffice Impress start the bidi algorithm again there), and once a render.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from citations.pool import SourcePool
from renderers.api import build_options, prepare
from renderers.document import Block, Cite, Paragraph, Text
from renderers.pipeline import Session
from renderers.readers.markdown import read_markdown
from renderers.resolve import resolve
from renderers.text import Direction
from renderers.writers.common import cite_direction, preceding_directions
from renderers.writers.typst.markup import typst_source
from tests.helpers import convert_all_with_libreoffice

POOL = SourcePool.from_rows([
    {"sid": 1, "title": "IEA", "url": "https://iea.org/a"},
    {"sid": 2, "title": "IRENA", "url": "https://irena.org/b"},
])
PHRASE = "ارتفعت المبيعات"
SAID = f"The minister said {PHRASE} [[S:1]]. The next claim follows [[S:2]]."
QUOTED = "Quoted: «انخفضت التكلفة» [[S:1,2]] and more text."
#: The mirror: after Latin letters in an Arabic line the marks stay Latin text (W7).
MIRROR = "قال الوزير Sales rose sharply [[S:1]]. ثم جاءت الجملة [[S:2]]."


def rendered(fmt: str, line: str, **options: Any) -> bytes:
    return Session(prepare(f"# T\n\n{line}\n", sources_pool=POOL,
                           options=build_options(**options))).artifact(fmt).data


def test_cite_direction_holds_a_run_after_text_reading_against_its_line() -> None:
    one = Cite(sids=(1,), numbers=(1,), anchor="cite-1")
    assert cite_direction([one], "ltr") is None  # digits alone read either way
    assert cite_direction([one], "ltr", "rtl") == "ltr"
    assert cite_direction([one], "ltr", "ltr") is None
    assert cite_direction([one], "rtl", "ltr") is None  # the mirror: "English¹" as it was
    assert cite_direction([one], "rtl") is None


def test_preceding_directions_reads_the_last_strong_character_before_each_run() -> None:
    doc = resolve(read_markdown(f"{SAID}\n\n{MIRROR}\n\nعربي **English** [[S:1]]\n"),
                  POOL).document
    found = preceding_directions(doc.blocks)
    anchors = [node.anchor for block in doc.blocks if isinstance(block, Paragraph)
               for node in block.children if isinstance(node, Cite)]
    # said: after the Arabic phrase; the next claim: after English; mirror: after Latin
    # (against its Arabic line), then after Arabic; the last after bold English
    assert found == {anchors[0]: "rtl", anchors[2]: "ltr", anchors[4]: "ltr"}
    assert preceding_directions((Paragraph((Text("plain"),)),)) == {}


def test_html_holds_the_marks_after_an_arabic_phrase_in_their_direction() -> None:
    html = rendered("html", f"{SAID}\n\n{QUOTED}").decode()
    assert ('<sup class="cite" id="cite-1" data-sids="1" dir="ltr">' in html)
    assert '<sup class="cite" id="cite-2" data-sids="2">' in html  # after English: as it was
    assert '<sup class="cite" id="cite-3" data-sids="1,2" dir="ltr">' in html
    mirror = rendered("html", MIRROR).decode()
    assert 'dir="ltr"><a href="#src-1">' not in mirror


def test_typst_holds_the_marks_after_an_arabic_phrase_in_a_box() -> None:
    options = build_options(pdf_engine="typst")
    rdoc = resolve(read_markdown(f"{SAID}\n\n{QUOTED}\n"), POOL)
    text = typst_source(rdoc, options).text
    assert text.count("#cite-run(ltr, [#cite-mark(") == 2, text
    assert '#cite-mark("cite-2", (("src-2", "2"),))' in text  # after English: as it was


def test_typst_holds_such_marks_in_an_abstract_too() -> None:
    """The Typst writer reads the directions only in a document with right-to-left text; an
    abstract's counts (front matter), not only the body's."""
    options = build_options(pdf_engine="typst")
    rdoc = resolve(read_markdown(f"---\nabstract: |\n  {SAID}\n---\n\nPlain body.\n"), POOL)
    text = typst_source(rdoc, options).text
    assert text.count("#cite-run(ltr, [#cite-mark(") == 1, text


def mark_position(pdf: bytes, phrase: str, after: str) -> tuple[float, float, float]:
    """On the first page holding ``phrase``: the right edge of its characters (on their first
    line), the left edge of the first raised "1" on that line, and the left edge of
    ``after``'s first letter right of the phrase, in points."""
    import pypdfium2 as pdfium

    letters = set(phrase.replace(" ", ""))
    for page in pdfium.PdfDocument(pdf):
        textpage = page.get_textpage()
        boxes = [(textpage.get_text_range(n, 1), textpage.get_charbox(n))
                 for n in range(textpage.count_chars())]
        if any(char in letters for char, _ in boxes):
            break
    arabic = [box for char, box in boxes if char in letters]
    top = arabic[0][3]
    on_line = [(char, box) for char, box in boxes if abs(box[3] - top) < 8
               or (box[1] < top and box[3] > arabic[0][1])]
    right = max(box[2] for char, box in on_line if char in letters)
    height = arabic[0][3] - arabic[0][1]
    mark = min(box[0] for char, box in on_line
               if char == "1" and box[3] - box[1] < 0.9 * height)
    follow = min(box[0] for char, box in on_line if char == after[0] and box[0] > right)
    return right, mark, follow


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_pdf_sets_the_mark_right_of_the_arabic_phrase(engine: str) -> None:
    """Both engines drew the "1" left of the phrase (between it and "said"), and the Typst
    group "2 ,1"; now each mark is right of the phrase and left of what follows."""
    pdf = rendered("pdf", f"{SAID}\n\n{QUOTED}", pdf_engine=engine)
    right, mark, follow = mark_position(pdf, PHRASE, "The")
    assert right <= mark < follow, (right, mark, follow)
    from tests.helpers import pdf_lines

    lines = [text.replace(" ", "") for _, _, text in pdf_lines(pdf)]
    quoted = next(line for line in lines if line.startswith("Quoted"))
    assert "1,2andmore" in quoted, quoted


@pytest.mark.browser
def test_chromium_sets_the_marks_right_of_the_arabic_phrase(tmp_path: Path) -> None:
    from tests.helpers import chromium_browser

    path = tmp_path / "said.html"
    path.write_bytes(rendered("html", f"{SAID}\n\n{QUOTED}"))
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(path.as_uri())
        boxes = page.evaluate(
            "() => [...document.querySelectorAll('main p')].map(p => {"
            " const r = document.createRange(); const t = p.firstChild;"
            " const i = t.data.indexOf('\u0627'); r.setStart(t, i);"
            " r.setEnd(t, t.data.lastIndexOf(' ')); const a = r.getBoundingClientRect();"
            " const s = p.querySelector('sup.cite').getBoundingClientRect();"
            " return [a.right, s.left, s.right, p.querySelector('sup.cite').textContent]; })")
    for phrase_right, left, _, _ in boxes:
        assert left >= phrase_right - 0.5, boxes
    assert boxes[1][3] == "1, 2"


@pytest.mark.libreoffice
def test_libreoffice_sets_the_marks_right_of_the_arabic_phrase(tmp_path: Path) -> None:
    """DOCX and PPTX hold the marks between direction marks (no isolates there)."""
    paths = []
    for fmt in ("docx", "pptx"):
        path = tmp_path / f"said.{fmt}"
        path.write_bytes(rendered(fmt, SAID))
        paths.append(path)
    for pdf in convert_all_with_libreoffice(paths, tmp_path):
        right, mark, follow = mark_position(pdf.read_bytes(), PHRASE, "The")
        assert right <= mark < follow, (pdf.name, right, mark, follow)


# ---------------------------------------------------------------- DOCX footnotes

def test_cite_direction_reads_a_note_reference_as_one_number() -> None:
    """A Word footnote shows its own number whatever the citation cites: held after Arabic
    letters in an English line like a "1"; in an Arabic line only when joined ("1, 2")."""
    group = Cite(sids=(1, 2), numbers=(1, 2), anchor="cite-1")
    joined = Cite(sids=(3,), numbers=(3,), anchor="cite-2", joined=True)
    assert cite_direction([group], "ltr", "rtl", notes=True) == "ltr"
    assert cite_direction([group], "ltr", notes=True) is None
    assert cite_direction([group], "rtl", notes=True) is None  # shows "1", not "1, 2"
    assert cite_direction([group], "rtl", "ltr", notes=True) is None
    assert cite_direction([group, joined], "rtl", notes=True) == "ltr"


def document_xml(docx: bytes) -> str:
    import io
    import zipfile

    return zipfile.ZipFile(io.BytesIO(docx)).read("word/document.xml").decode()


def test_docx_holds_a_footnote_after_an_arabic_phrase_between_marks() -> None:
    """Footnote mode held only joined references: the one after the phrase had no mark, so a
    reader that reads its number as digits joins it to the phrase (W2)."""
    xml = document_xml(rendered("docx", SAID, docx_citations="footnotes"))
    lrm = "<w:r><w:t>\u200e</w:t></w:r>"
    reference = '<w:footnoteReference w:id="{}"/></w:r>'
    assert lrm + "<w:r><w:rPr>" in xml.split(reference.format(1))[0][-200:]
    assert xml.split(reference.format(1))[1].startswith("<w:r><w:t>\u200e\u200e</w:t></w:r>")
    # after English words: as it was
    assert not xml.split(reference.format(2))[1].startswith("<w:r><w:t>\u200e")
    mirror = document_xml(rendered("docx", MIRROR, docx_citations="footnotes"))
    assert "\u200e" not in mirror.split("<w:body>")[1].split("<w:sectPr")[0]


@pytest.mark.libreoffice
def test_libreoffice_sets_a_footnote_right_of_the_arabic_phrase(tmp_path: Path) -> None:
    """LibreOffice reads the reference as a neutral (it stood right of the phrase without the
    marks too); the marks keep it there."""
    path = tmp_path / "said.docx"
    path.write_bytes(rendered("docx", SAID, docx_citations="footnotes"))
    (pdf,) = convert_all_with_libreoffice([path], tmp_path)
    right, mark, follow = mark_position(pdf.read_bytes(), PHRASE, "The")
    assert right <= mark < follow, (right, mark, follow)


# ---------------------------------------------------------------- a line break

#: The group opens the line after a hard break that ends an Arabic phrase; in the Arabic
#: paragraph, after one that ends English words.
BROKEN = f"The minister said {PHRASE}\\\n[[S:1,2]] and more text."
BROKEN_MIRROR = "قال الوزير Sales rose\\\n[[S:1,2]] ثم جاءت الجملة."


def test_preceding_directions_starts_again_after_a_line_break() -> None:
    """Chromium, WeasyPrint, Typst and LibreOffice Writer read the bidi algorithm afresh after
    a hard break; LibreOffice Impress reads on (``across_breaks``)."""
    doc = resolve(read_markdown(f"{BROKEN}\n\n{BROKEN_MIRROR}\n\n"
                                f"*English {PHRASE}\\\n*[[S:1]]\n"), POOL).document
    anchors = [node.anchor for block in doc.blocks if isinstance(block, Paragraph)
               for node in block.children if isinstance(node, Cite)]
    assert preceding_directions(doc.blocks) == {}
    assert preceding_directions(doc.blocks, across_breaks=True) == {
        anchors[0]: "rtl", anchors[1]: "ltr", anchors[2]: "rtl"}


def test_a_citation_opening_the_line_after_a_break_is_read_in_its_line() -> None:
    """HTML, Typst and DOCX no longer hold it for the line before; PPTX still does."""
    html = rendered("html", BROKEN).decode()
    assert '<sup class="cite" id="cite-1" data-sids="1,2">' in html
    options = build_options(pdf_engine="typst")
    text = typst_source(resolve(read_markdown(f"{BROKEN}\n"), POOL), options).text
    assert "#cite-run(" not in text, text
    assert "\u200e" not in document_xml(rendered("docx", BROKEN, citation_format="brackets"))
    import io
    import zipfile

    deck = zipfile.ZipFile(io.BytesIO(rendered("pptx", BROKEN)))
    slides = "".join(deck.read(name).decode() for name in deck.namelist()
                     if name.startswith("ppt/slides/slide"))
    assert "<a:t>\u200e</a:t>" in slides


def test_the_authors_look_starts_again_after_a_br() -> None:
    import lxml.html

    page = ("<html><head><title>T</title></head><body><h1>T</h1>"
            f"<p>The minister said {PHRASE}<br>[[S:1,2]] and more text.</p></body></html>")
    html = Session(prepare(page, sources_pool=POOL, options=build_options())).print_html()
    (cite,) = lxml.html.document_fromstring(html).xpath("//main//sup[@class='cite']")
    assert cite.get("dir") is None


def broken_lines(pdf: bytes) -> list[str]:
    """The lines of ``pdf`` (read from the left, spaces dropped) with the marks "1, 2" or
    "2, 1": the English one's and the Arabic one's after their breaks."""
    from tests.helpers import pdf_lines

    lines = [text.replace(" ", "") for _, _, text in pdf_lines(pdf)]
    found = [line for line in lines if "1,2" in line or "2,1" in line]
    assert len(found) == 2, lines
    return found


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_pdf_sets_the_group_after_a_break_in_order(engine: str) -> None:
    pdf = rendered("pdf", f"{BROKEN}\n\n{BROKEN_MIRROR}", pdf_engine=engine)
    lines = broken_lines(pdf)
    assert lines[0].startswith("1,2andmore"), lines
    assert lines[1].endswith("1,2"), lines  # at the right end: the Arabic line's start


@pytest.mark.libreoffice
def test_libreoffice_sets_the_group_after_a_break_in_order(tmp_path: Path) -> None:
    paths = []
    for fmt in ("docx", "pptx"):
        path = tmp_path / f"broken.{fmt}"
        path.write_bytes(rendered(fmt, f"{BROKEN}\n\n{BROKEN_MIRROR}"))
        paths.append(path)
    for pdf in convert_all_with_libreoffice(paths, tmp_path):
        lines = broken_lines(pdf.read_bytes())
        assert lines[0].startswith("1,2andmore"), (pdf.name, lines)
        assert lines[1].endswith("1,2"), (pdf.name, lines)


@pytest.mark.browser
def test_chromium_sets_the_group_after_a_break_in_order(tmp_path: Path) -> None:
    from tests.helpers import chromium_browser

    path = tmp_path / "broken.html"
    path.write_bytes(rendered("html", BROKEN))
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(path.as_uri())
        boxes = page.evaluate(
            "() => { const s = document.querySelector('main p sup.cite');"
            " const a = [...s.querySelectorAll('a')].map(a => a.getBoundingClientRect().left);"
            " const t = document.createRange(); const n = s.nextSibling;"
            " t.setStart(n, 1); t.setEnd(n, 4);"
            " return [a, t.getBoundingClientRect().left]; }")
    (one, two), following = boxes
    assert one < two < following, boxes


# ---------------------------------------------------------------- read once a render

def test_the_formats_of_one_render_read_the_directions_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """HTML, DOCX and Typst each walked the document's lines (about 3 ms of the 50-page bench
    report each); PPTX reads across breaks and on its own."""
    import gc

    from renderers.writers import common

    calls: list[int] = []
    reading = common.preceding_directions

    def counted(blocks: tuple[Block, ...], *, across_breaks: bool = False) -> dict[str, Direction]:
        calls.append(len(blocks))
        return reading(blocks, across_breaks=across_breaks)

    monkeypatch.setattr(common, "preceding_directions", counted)
    session = Session(prepare(f"# T\n\n{SAID}\n", sources_pool=POOL,
                              options=build_options(pdf_engine="typst")))
    session.artifact("html")
    session.artifact("docx")
    typst_source(session.rdoc, session.options)  # the Typst PDF's source
    assert len(calls) == 1
    key = id(session.rdoc.document)
    assert key in common._PRECEDING
    del session
    gc.collect()
    assert key not in common._PRECEDING  # kept only while its document lives
