"""HTML input printed in its author's look (author CSS, renderers.writers.html.author_look): in a
right-to-left line, each left-to-right run that spans several inline boxes is held in a
``dir="ltr"`` span by the report's rule (renderers.writers.html.bidi), so that WeasyPrint sets
the mark after "English" where Typst (which goes through the document model) and Chromium put
it. The author's markup is kept: a link is never cut, a cut element keeps its attributes on
both halves and its ``id`` on the first; left-to-right pages are untouched.
"""

from __future__ import annotations

from pathlib import Path

import lxml.html
import pytest
from lxml.html import HtmlElement

from renderers.api import build_options, prepare
from renderers.pipeline import Session
from renderers.writers.html import author_look
from renderers.writers.html.bidi import hold_line_runs
from tests.helpers import pdf_lines
from tests.writers.test_rtl import (
    AUTHORED_LINES,
    AUTHORED_POOL,
    CITED_LOOKS,
    MARKED_POOL,
    PARAGRAPH_IN_DRAWN_ORDER,
    PICTURE,
    link_rects,
    mark_after,
    marked,
    squeezed,
)

#: The author's stylesheet every page here carries: the look the PDF keeps.
STYLE = "<style>p, li { color: #233; } .term { color: #a30; } #first { font-weight: 600; }</style>"

#: Lines of an author's page (each in a paragraph) and how each engine's PDF reads them from
#: the left, as Chromium lays them out: the mark after a run going into digits, across <b> and
#: <em>, after a link's text, in a cut element with classes and styles, in a list item.
AUTHOR_RUNS = {
    "نص English[[S:1]] 2024 نص": "صنEnglish12024صن",
    "نص <b>English</b>[[S:1]] نص": "صنEnglish1صن",
    "נוסח <em>more English</em>[[S:1]] 2024 נוסח": "חסונmoreEnglish12024חסונ",
    '<b class="term">نص <i>Eng</i>lish</b>[[S:1]] 2024 نص': "صنEnglish12024صن",
    'نص <a href="https://example.org/x">English</a>[[S:1]] نص': "صنEnglish1صن",
    'نص <span class="term" style="text-decoration: underline">نص English</span>[[S:1]] '
    "<strong>more, نص</strong> نص": "صنصن,English1moreصنصن",
    "نص <code>code</code> more[[S:1]] نص": "صنcodemore1صن",
    "نص English[[S:1]] 2024 نص Other[[S:2]] نص": "صنOther2صنEnglish12024صن",
    "نص <b>English[[S:1]] 2024</b> نص": "صنEnglish12024صن",
    "نص English[[S:1]][[S:2]] 2024 نص": "صنEnglish1,22024صن",
    # an image is one neutral at the line's level too (it ended the run there)
    f'نص more <img src="{PICTURE}" alt="box"> English[[S:1]] نص': "صنmoreEnglish1صن",
    # brackets around left-to-right text after right-to-left text take the line's side
    "نص (<b>English</b>)[[S:1]] more نص": "صن1more(English(صن",
}

#: Lines of an author's page with a European number after Arabic letters in another box, and
#: how each reads from the left (as the report's NUMBER_LINES): the digits read as Arabic ones
#: there, the sign on the line's side.
AUTHOR_NUMBERS = {
    "نص <b>عريض</b> 3.5% نص": "صن%3.5ضيرعصن",
    "نص <b>3.5%</b> نص": "صن%3.5صن",
    'نص <a href="https://example.org/x">رابط</a> 3+4 نص': "صن4+3طبارصن",
    "نص <code>كود</code>[[S:1]] 30° نص": "صن°301دوكصن",
    "نص <span><i>مائل</i></span><b>−3</b> نص": "صن3−لئامصن",
    "نص <b>English</b> 3.5% نص": "صنEnglish3.5%صن",
    # a left-to-right line: the Arabic words' run goes on into the number's box
    "English <b>عربي</b> 3+4 more": "English4+3يبرعmore",
    "English عربي <em>3.5%</em> more": "English3.5يبرع%more",
}
#: Every line of the author's above and how it reads.
AUTHOR_LINES = {**AUTHOR_RUNS, **AUTHOR_NUMBERS}


def page(line: str, *, block: str = "<p>{}</p>") -> str:
    """An author's page: a title, then ``line`` in ``block``."""
    return (f"<html><head><title>T</title>{STYLE}</head><body><h1>T</h1>"
            f"{block.format(line)}</body></html>")


def session(html: str, **options: str) -> Session:
    return Session(prepare(html, sources_pool=MARKED_POOL, options=build_options(**options)))


def printed(line: str) -> HtmlElement:
    """The first paragraph of the page WeasyPrint lays out for ``line``."""
    root = lxml.html.document_fromstring(session(page(line)).print_html())
    return root.xpath("//main//p")[0]


def held(line: str) -> list[str]:
    return [span.text_content()
            for span in printed(line).xpath(".//span[@dir='ltr'][not(@class)]")]


def test_the_authors_look_holds_left_to_right_runs_as_the_report_does() -> None:
    """From the run's first letter to its last letter or digit, over the author's <b>, <em>,
    spans and links; not a run in one box, nor a run entering a link in its middle, nor a
    citation held apart, nor a left-to-right line."""
    assert held("نص English[[S:1]] 2024 نص") == ["English1 2024"]
    assert held("نص <b>English</b>[[S:1]] نص") == ["English1"]
    assert held('نص <a href="https://example.org/x">English</a>[[S:1]] نص') == ["English1"]
    assert held("نص English[[S:1]] 2024 نص Other[[S:2]] نص") == ["English1 2024", "Other2"]
    assert held("نص <b>English[[S:1]] 2024</b> نص") == ["English1 2024"]  # inside the <b>
    assert held("نص English نص") == []
    assert held('نص <a href="https://example.org/x">نص English</a>[[S:1]] نص') == []
    assert held("English text[[S:1]] then العربية[[S:2]].") == []
    # an isolate is neutral: "1, 2" joins no run and ends none
    assert held("نص English[[S:1]][[S:2]] 2024 نص") == ["English1, 2 2024"]
    assert held("نص English[[S:1]] <b>more<br>x</b> نص") == ["English1 morex"]
    assert held("نص <b>نص<br>English</b>[[S:1]] نص") == ["English1"]  # cut after the <br>


def test_a_cut_element_keeps_the_authors_attributes_on_both_halves() -> None:
    """An element the run starts inside is cut in two, each half with the author's class and
    style (so the CSS still applies), the id on the first half only; a link is held whole."""
    paragraph = printed('نص <b class="term" style="color: #06c" id="first">نص <i>Eng</i>lish</b>'
                        "[[S:1]] 2024 نص")
    first, second = paragraph.xpath(".//b")
    assert (first.text_content(), second.text_content()) == ("نص ", "English")
    assert dict(first.attrib) == {"class": "term", "style": "color: #06c", "id": "first"}
    assert dict(second.attrib) == {"class": "term", "style": "color: #06c"}
    assert second.getparent().get("dir") == "ltr" and second.find("i").text == "Eng"
    paragraph = printed('نص <a href="https://example.org/x" class="term">English</a>[[S:1]] نص')
    (link,) = paragraph.xpath(".//a[@class='term']")
    assert link.text == "English" and link.getparent().get("dir") == "ltr"


@pytest.mark.parametrize("line", [
    *AUTHOR_RUNS, "نص <b>English <span>نص Other</span> 2024</b> نص <em>x</em>",
    'نص <s>a <b id="q" class="c">نص b</b> c</s>[[S:1]] نص', "نص <b>English</b>",
    "<b>English</b> نص", "نص <del>x</del> نص", "نص <!-- note -->English<wbr>[[S:1]] x"])
def test_holding_keeps_the_lines_text_marks_and_elements(line: str) -> None:
    """Cutting and holding drops, repeats or moves nothing: the line shows the same text and
    marks in the same order, every element's attributes but a cut one's id survive, and no id
    is written twice."""
    container = lxml.html.fragment_fromstring(f'<p dir="rtl">{line}</p>', create_parent="div")
    paragraph = container[0]
    before = lxml.html.tostring(paragraph, encoding="unicode")

    def seen(element: HtmlElement) -> tuple[str, list[str], set[tuple[str, str]]]:
        attributes = {(e.tag, " ".join(f"{k}={v}" for k, v in sorted(e.attrib.items())
                                       if k != "id"))
                      for e in element.iter()
                      if isinstance(e.tag, str) and dict(e.attrib) != {"dir": "ltr"}}
        return element.text_content(), [e.tag for e in element.iter("a", "code")], attributes

    expected = seen(paragraph)
    ids = [e.get("id") for e in paragraph.iter() if e.get("id")]
    hold_line_runs(paragraph, "rtl")
    assert seen(paragraph) == expected, (before, lxml.html.tostring(paragraph))
    assert [e.get("id") for e in paragraph.iter() if e.get("id")] == ids


@pytest.mark.slow  # many PDF renders; the HTML tests check the same runs fast
@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_pdf_sets_marks_after_left_to_right_text_in_an_authors_right_to_left_line(
    engine: str,
) -> None:
    """WeasyPrint read "نص English¹ 2024 نص" as "2024 ¹English" on the author's page, and
    "3.5%" after <b>عريض</b> where the others read "%3.5"; now both engines read each line as
    Chromium lays it out (:data:`AUTHOR_LINES`)."""
    for line, expected in AUTHOR_LINES.items():
        pdf = session(page(line), pdf_engine=engine).artifact("pdf").data
        shown = [squeezed(text) for _, _, text in pdf_lines(pdf)]
        assert expected in shown, (engine, line, shown)
    pdf = session(page("بند English[[S:1]] 2024 بند", block="<ul><li>{}</li></ul>"),
                  pdf_engine=engine).artifact("pdf").data
    assert "دنبEnglish12024دنب•" in [squeezed(text) for _, _, text in pdf_lines(pdf)]


@pytest.mark.parametrize("line", [
    "نص English[[S:1]] 2024 نص", "نص <b>English</b>[[S:1]] نص",
    "نص <em>نص English</em>[[S:1]] 2024 نص",
    'نص <a href="https://example.org/x">English</a>[[S:1]] نص',
    f'نص more <img src="{PICTURE}" alt="box"> English[[S:1]] نص'])
def test_weasyprint_sets_the_mark_after_the_authors_word_where_typst_does(line: str) -> None:
    """The raised "1" stands right after the "h" it follows in both engines, at Typst's place
    within 0.05 pt (WeasyPrint drew it left of the word; after an image, 90 pt left)."""
    ends = {engine: mark_after(session(page(line), pdf_engine=engine).artifact("pdf").data, "h")
            for engine in ("weasyprint", "typst")}
    for word, mark in ends.values():
        assert 0 <= mark - word < 3, (line, ends)
    assert abs(ends["weasyprint"][1] - ends["typst"][1]) < 0.05, (line, ends)


@pytest.mark.parametrize("line", [
    "An English line with a mark[[S:1]] and <b>bold</b> 2024 text.",
    "نص عربي فقط[[S:1]] نص <b>عربي</b>.",  # right to left, no run of several boxes
])
def test_a_page_without_a_run_to_hold_is_printed_as_before(
    line: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A left-to-right page (and a right-to-left one with nothing to hold) gives WeasyPrint
    the same page, and the PDF the same bytes, as without the pass."""
    html = page(f'<span class="term" id="k">{line}</span> <i>more</i>')
    made = session(html)
    pdf = made.artifact("pdf").data
    monkeypatch.setattr(author_look, "_hold_line_runs", lambda root: None)
    before = session(html)
    assert made.print_html() == before.print_html()
    assert pdf == before.artifact("pdf").data


@pytest.mark.browser
def test_chromium_lays_out_the_authors_page_and_its_html_output_alike(tmp_path: Path) -> None:
    """The referee: Chromium reads the page WeasyPrint gets (its spans change nothing of the
    bidi algorithm's order) and the standalone HTML output of the same input as the PDFs
    read them."""
    from tests.helpers import chromium_browser

    with chromium_browser() as browser:
        view = browser.new_page(viewport={"width": 1200, "height": 900})
        for n, (line, expected) in enumerate(AUTHOR_LINES.items()):
            made = session(page(line))
            for name, text in (("print", made.print_html()),
                               ("html", made.artifact("html").data.decode())):
                path = tmp_path / f"{name}-{n}.html"
                path.write_text(text, encoding="utf-8")
                view.goto(path.as_uri())
                assert squeezed(view.evaluate(PARAGRAPH_IN_DRAWN_ORDER)) == expected, (name, line)


def test_a_held_run_keeps_a_letters_combining_accent() -> None:
    """A combining mark reads as the letter before it (UAX #9 W1): the run ends after the
    accent of "café" written with U+0301, in the report and in the author's look (it ended
    between the two, the accent outside the span)."""
    line = "نص English[[S:1]] cafe\u0301 نص"
    report = lxml.html.document_fromstring(
        session(f"# T\n\n{line}\n").artifact("html").data.decode())
    for root in (report, printed(line)):
        (span,) = root.xpath("//main//p//span[@dir='ltr'][not(@class)]")
        assert span.text_content() == "English1 cafe\u0301", span.text_content()


#: The same lines in markdown (the report's reading) and in an author's HTML: a picture, a
#: formula (as the report writes one) and a link showing only neutrals outside the run.
BOTH_READINGS = [
    (f"نص more ![box]({PICTURE}) English[[S:1]] نص",
     f'نص more <img src="{PICTURE}" alt="box"> English[[S:1]] نص'),
    (f"نص **more ![صورة]({PICTURE}) English**[[S:1]] نص",
     f'نص <b>more <img src="{PICTURE}" alt="صورة"> English</b>[[S:1]] نص'),
    ("نص **نص $y$ English**[[S:1]] نص",
     f'نص <b>نص <span class="math"><img class="math-svg" src="{PICTURE}" alt="y"></span> '
     "English</b>[[S:1]] نص"),
    ('نص ["English"](https://example.org/x)[[S:1]] نص',
     'نص <a href="https://example.org/x">"English"</a>[[S:1]] نص'),
    ("نص English[[S:1]] [more text.](https://example.org/x) نص",
     'نص English[[S:1]] <a href="https://example.org/x">more text.</a> نص'),
    ("نص [نص English](https://example.org/x)[[S:1]] نص",
     'نص <a href="https://example.org/x">نص English</a>[[S:1]] نص'),
    ("نص (**English**)[[S:1]] more (x) نص", "نص (<b>English</b>)[[S:1]] more (x) نص"),
]


@pytest.mark.parametrize(("markdown", "html"), BOTH_READINGS)
def test_the_report_and_the_authors_look_hold_the_same_runs(markdown: str, html: str) -> None:
    """One rule, two readings: a picture or an inline formula is one neutral wherever it
    stands (the report read an image's alt text and a formula's TeX inside emphasis, the
    author's reading one neutral there; both ended the run at the line's level), and a link
    showing only neutrals outside the run is held whole in both."""
    report = lxml.html.document_fromstring(marked("html", markdown).decode())
    spans = report.xpath("//main//p//span[@dir='ltr'][not(@class)]")
    assert [squeezed(span.text_content()) for span in spans] == [squeezed(t) for t in held(html)]


@pytest.mark.parametrize("line", [
    'نص <a href="https://example.org/x">"English"</a>[[S:1]] نص',
    'نص English[[S:1]] <a href="https://example.org/x">more text.</a> نص'])
def test_the_authors_link_is_held_whole_as_one_link(line: str) -> None:
    """The author's link the run enters or leaves past neutrals is held whole: one ``<a>``,
    one annotation in WeasyPrint's PDF, the mark right after its word in both engines."""
    (link,) = printed(line).xpath(".//a[@href='https://example.org/x']")
    assert link.getparent().get("dir") == "ltr"
    pdfs = {engine: session(page(line), pdf_engine=engine).artifact("pdf").data
            for engine in ("weasyprint", "typst")}
    assert len(link_rects(pdfs["weasyprint"], "https://example.org/x")) == 1
    for engine, pdf in pdfs.items():
        word, mark = mark_after(pdf, "h")
        assert 0 <= mark - word < 8, (engine, word, mark)


def authored_page(look: str, line: str, **options: str) -> Session:
    """The author's page of a line of :data:`~tests.writers.test_rtl.AUTHORED_LINES` (its
    ``**`` as ``<b>``), its citations in ``look``."""
    html = page(line.replace("**", "<b>", 1).replace("**", "</b>", 1))
    return Session(prepare(html, sources_pool=AUTHORED_POOL,
                           options=build_options(**CITED_LOOKS[look][0], **options)))


def test_the_authors_look_reads_a_citation_as_the_report_does() -> None:
    """A citation not held apart reads as the text it shows (it read as a digit), one held
    apart as one neutral: the same spans as the report's."""

    def held(line: str, direction: str) -> list[str]:
        root = lxml.html.document_fromstring(authored_page("author-date", line).print_html())
        return [squeezed(span.text_content())
                for span in root.xpath(f"//main//p//span[@dir='{direction}'][not(@class)]")]

    lines = list(AUTHORED_LINES["author-date"])
    assert held(lines[0], "ltr") == ["Englishwords"]  # "(مؤلف, 2024)" was inside
    assert held(lines[1], "rtl") == ["عربيكلمات"]
    # after Arabic words "(Smith, 2020)" is held apart too, a neutral inside the Arabic run
    assert held(lines[2], "rtl") == ["عربيكلمات(Smith,2020(عربي"]


@pytest.mark.slow  # many PDF renders; the HTML tests check the same runs fast
@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
@pytest.mark.parametrize("look", list(AUTHORED_LINES))
def test_pdf_sets_a_citation_after_a_run_on_the_authors_page_as_chromium_does(
    engine: str, look: str,
) -> None:
    """The author's page of each line of :data:`AUTHORED_LINES` reads as the report's."""
    for line, expected in AUTHORED_LINES[look].items():
        pdf = authored_page(look, line, pdf_engine=engine).artifact("pdf").data
        shown = [squeezed(text) for _, _, text in pdf_lines(pdf)]
        assert expected in shown, (engine, line, shown)
