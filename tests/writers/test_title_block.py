"""The title block: a front matter's subtitle, authors, date and abstract shown under the title
in every format, read back from the files a user opens (both PDF engines, HTML, DOCX, PPTX,
Markdown), in their order, with hostile text shown as written; the abstract is markdown, and
its citations are the document's first."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import docx
import pytest
from lxml import html as lxml_html
from pptx import Presentation

from renderers.document import (
    Cite,
    CrossRef,
    Emph,
    FootnoteRef,
    Paragraph,
    Text,
    iter_inlines,
    plain_text,
)
from renderers.errors import LimitError
from renderers.language import DEFAULT_LANGUAGE
from renderers.metadata import metadata_block, read_metadata
from renderers.options import Limits, RenderOptions
from renderers.readers.context import ReadContext
from renderers.readers.html import read_html
from renderers.readers.markdown import read_markdown
from tests.helpers import convert_all_with_libreoffice, pdf_text, require_client
from tests.support.render import render_markdown, resolve_rows, write_resolved
from tests.writers.test_pdf_links import links, text_under

ROWS = [{"sid": 1, "title": "A source", "url": "https://example.org/a"},
        {"sid": 2, "title": "Another source", "url": "https://example.org/b"}]
#: Hostile text: HTML, Typst markup and code, XML specials, a citation token (a subtitle is
#: not prose, so it cites nothing).
HOSTILE = '<b>x</b> & #set text(fill: red) ] $y$ "q" [[S:1]]'
ANSWER = f"""---
title: Grid Report
subtitle: '{HOSTILE.replace("'", "''")}'
author: [Ana Ruiz, {{name: Bo Li}}]
date: 1 May 2024
abstract: |
  We *study* queues
  and grids [[S:2]].

  Second paragraph & <i>more</i>.
---

# Intro

Text [[S:1]].
"""
#: What the block shows, in its order (a PDF's text has the citation's number elsewhere).
BLOCK = ["Grid Report", HOSTILE, "Ana Ruiz; Bo Li", "1 May 2024", "Abstract",
         "We study queues and grids", "Second paragraph & more.", "Intro"]
#: The block with the abstract's citation, number 1, in its line (HTML, DOCX).
CITED = [*BLOCK[:5], "We study queues and grids 1.", *BLOCK[6:]]


def squashed(text: str) -> str:
    return " ".join(text.split())


def assert_in_order(text: str, parts: list[str]) -> None:
    at = 0
    for part in parts:
        found = text.find(part, at)
        assert found >= 0, f"{part!r} not after offset {at} in {text[:400]!r}"
        at = found + len(part)


def test_front_matter_subtitle_is_plain_text_and_the_abstract_markdown() -> None:
    document = read_markdown(ANSWER)
    assert document.subtitle == HOSTILE
    first, second = document.abstract
    assert isinstance(first, Paragraph) and isinstance(second, Paragraph)
    assert first.children[1] == Emph((Text("study"),))
    assert [node.sids for node in first.children if isinstance(node, Cite)] == [(2,)]
    assert plain_text(second.children) == "Second paragraph & more."
    assert document.shows_metadata and document.notes == ()
    folded = read_markdown("---\nabstract: >\n  One\n  line.\n\n  Two.\n---\n\nText.\n")
    assert [plain_text(p.children) for p in folded.abstract  # type: ignore[attr-defined]
            ] == ["One line. Two."]  # folded: no blank line left, one paragraph
    number = read_markdown("---\nabstract: 42\n---\n\nText.\n")
    assert number.abstract == (Paragraph((Text("42"),)),)
    listed = read_markdown("---\nabstract: [a, b]\nsubtitle: {a: 1}\n---\n\nText.\n")
    assert (listed.abstract, listed.subtitle) == ((), "")
    assert [n.message.split(": ", 1)[1] for n in listed.notes] == [
        "front matter subtitle: not text; ignored", "front matter abstract: not text; ignored"]


def test_the_abstract_s_citations_come_first_and_a_subtitle_s_token_cites_nothing() -> None:
    rdoc = resolve_rows(read_markdown(ANSWER), ROWS)
    assert [(entry.number, entry.sid) for entry in rdoc.entries] == [(1, 2), (2, 1)]
    html = write_resolved("html", rdoc, RenderOptions()).decode()
    assert html.count('class="cite"') == 2  # the abstract's and the body's
    assert_in_order(html, ['<header class="title-block">', 'id="cite-1" data-sids="2"',
                           '<a href="#src-1">1</a>', "</header>", 'id="cite-2" data-sids="1"'])


def test_a_bad_token_in_the_abstract_is_noted_at_its_front_matter_line() -> None:
    text = "---\ntitle: T\nabstract: |\n  One.\n\n  Bad [[S:0]] and [[S:7]].\n---\n\nText.\n"
    rdoc = resolve_rows(read_markdown(text), ROWS)
    messages = [note.message for note in rdoc.notes]
    assert any(m.startswith("markdown input, line 6: invalid citation") for m in messages)
    assert any("unknown sids not in the sources pool: 7" in m for m in messages)


def test_html_shows_the_block_under_the_title_escaped() -> None:
    page = render_markdown("html", ANSWER, ROWS).decode()
    root = lxml_html.fromstring(page)
    main = root.xpath("//main")[0]
    header = main.xpath("header[@class='title-block']")[0]
    assert main.index(header) == 1 and main[0].get("class") == "doc-title"
    assert [p.get("class") for p in header.xpath(".//p")] == [
        "subtitle", "author", "date", "abstract-title", None, None]
    assert [squashed(p.text_content()) for p in header.xpath(".//p")] == CITED[1:-1]
    assert header.xpath(".//div[@class='abstract']/p/em")[0].text == "study"
    assert header.xpath(".//div[@class='abstract']//sup[@class='cite']/a/@href") == ["#src-1"]
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt; &amp; #set" in page
    assert ".title-block .subtitle" in page  # its stylesheet comes with it


def test_a_document_without_a_block_has_no_block_nor_its_stylesheet() -> None:
    page = render_markdown("html", "---\ntitle: T\nkeywords: [a]\n---\n\nText.\n", ROWS).decode()
    assert "title-block" not in page


def test_the_block_follows_the_heading_that_shows_the_title() -> None:
    text = "---\ntitle: Intro\nsubtitle: Sub\n---\n\nLede.\n\n# Intro\n\nBody.\n\n## Part\n\nM.\n"
    page = render_markdown("html", text, ROWS, toc=True).decode()
    assert_in_order(page, ["Lede.", 'id="intro"', '<header class="title-block">', "Sub",
                           "</header>", "Body.", 'id="contents"', 'id="part"'])


@pytest.fixture(params=["weasyprint", "typst"])
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_pdf_shows_the_block_in_order(engine: str, tmp_path: Path) -> None:
    path = tmp_path / "out.pdf"
    path.write_bytes(render_markdown("pdf", ANSWER, ROWS, pdf_engine=engine))
    text = squashed(pdf_text(path))
    assert_in_order(text, BLOCK)
    assert text.startswith("Grid Report " + HOSTILE)
    # the abstract's citation is number 1, the first link, to its Sources entry
    cites = [(target, text_under(path, page, rect)) for page, rect, target in links(path)
             if text_under(path, page, rect).isdigit()]
    assert [number for _, number in cites] == ["1", "2"]
    if engine == "weasyprint":  # Typst links to explicit destinations, not named ones
        assert [target for target, _ in cites] == ["src-1", "src-2"]


def test_the_abstract_heading_is_in_the_document_s_language(engine: str, tmp_path: Path) -> None:
    path = tmp_path / "out.pdf"
    path.write_bytes(render_markdown("pdf", "---\nlang: de\nabstract: Kurz.\n---\n\n# T\n\nA.\n",
                                     ROWS, pdf_engine=engine))
    assert_in_order(squashed(pdf_text(path)), ["T", "Zusammenfassung", "Kurz.", "A."])


def test_docx_paragraphs_in_pandoc_s_styles() -> None:
    document = docx.Document(io.BytesIO(render_markdown("docx", ANSWER, ROWS)))
    shown = [(p.style.name, p.text) for p in document.paragraphs[:8]]  # type: ignore[union-attr]
    assert shown == list(zip(
        ["Title", "Subtitle", "Author", "Date", "Abstract Title", "Abstract", "Abstract",
         "Heading 1"], CITED, strict=True))


def test_pptx_cover_subtitle_and_abstract_slide() -> None:
    deck = Presentation(io.BytesIO(render_markdown("pptx", ANSWER, ROWS)))
    cover, abstract = list(deck.slides)[:2]
    texts = [shape.text_frame.text for shape in cover.shapes if shape.has_text_frame]
    assert texts == ["Grid Report", f"{HOSTILE}\nAna Ruiz; Bo Li · 1 May 2024"]
    assert abstract.shapes.title.text == "Abstract"
    body = " ".join(s.text_frame.text for s in abstract.shapes if s.has_text_frame)
    assert_in_order(squashed(body), BLOCK[4:7])


def test_docx_and_pptx_draw_the_abstract_s_emphasis_and_citation() -> None:
    document = docx.Document(io.BytesIO(render_markdown("docx", ANSWER, ROWS)))
    first = document.paragraphs[5]
    assert [run.text for run in first.runs if run.italic] == ["study"]
    assert "w:vertAlign" in first._p.xml and 'w:anchor="src_1"' in first._p.xml
    deck = Presentation(io.BytesIO(render_markdown("pptx", ANSWER, ROWS)))
    slide = list(deck.slides)[1]
    runs = [run for shape in slide.shapes if shape.has_text_frame and shape != slide.shapes.title
            for p in shape.text_frame.paragraphs for run in p.runs]
    assert [run.text for run in runs if run.font.italic] == ["study"]
    assert any(run.text == "1" and run.font._rPr.get("baseline") for run in runs)


#: An abstract of every kind of block, and of what has no place in it: each format draws it.
HOSTILE_ABSTRACT = """---
title: Hostile
abstract: |
  # A heading [[S:1]]

  ::: notes
  Speaker only [[S:2]]
  :::

  | a | b |
  |---|---|
  | 1 [[S:2]] | 2 |

  ```python
  x = "[[S:1]]"
  ```

  - item *one*
    - nested [[S:1]]

  > quoted $x^2$, ^[not a note] and a note[^n]

  <div>raw <b>html</b></div>

  Bad [[S:0]], see @tbl:t.
---

# Body

Body [[S:1]] with a note[^n].

[^n]: The note.

| c |
|---|
| d |

: Cells {#tbl:t}
"""


@pytest.mark.parametrize(("fmt", "pdf_engine"), [
    ("html", "weasyprint"), ("docx", "weasyprint"), ("pptx", "weasyprint"), ("md", "weasyprint"),
    ("pdf", "weasyprint"), ("pdf", "typst"),
])
def test_an_abstract_of_any_blocks_is_drawn_and_noted(fmt: str, pdf_engine: str) -> None:
    document = read_markdown(HOSTILE_ABSTRACT)
    assert [note.message.split(": ", 1)[1].split(":")[0] for note in document.notes] == [
        "invalid citation token '[[S",
        "speaker notes in the front matter abstract are left out",
    ]
    assert render_markdown(fmt, HOSTILE_ABSTRACT, ROWS,  # type: ignore[arg-type]
                           pdf_engine=pdf_engine)
    rdoc = resolve_rows(document, ROWS)
    assert [(entry.number, entry.sid) for entry in rdoc.entries] == [(1, 1), (2, 2)]
    assert [n.number for n in iter_inlines(rdoc.document.abstract)
            if isinstance(n, CrossRef)] == [1]


def test_the_abstract_s_nesting_is_bounded() -> None:
    deep = "---\nabstract: |\n  " + "> " * 300 + "x\n---\n\nText.\n"
    with pytest.raises(LimitError, match="nest"):
        read_markdown(deep)


def test_pptx_subtitle_too_long_for_the_cover_gets_a_slide_of_its_own() -> None:
    """The cover's subtitle box does not flow on: a longer subtitle (here one 3,000-letter
    word) is the first slide after the cover, flowed over as many slides as it needs, and the
    byline stays on the cover."""
    word = "W" * 3000
    answer = f"---\ntitle: Long\nsubtitle: {word}\nauthor: Ana Ruiz\n---\n\nBody.\n"
    slides = list(Presentation(io.BytesIO(render_markdown("pptx", answer, ROWS))).slides)
    cover = [s.text_frame.text for s in slides[0].shapes if s.has_text_frame]
    assert cover == ["Long", "Ana Ruiz"]
    shown = "".join(s.text_frame.text for slide in slides[1:] for s in slide.shapes
                    if s.has_text_frame and s != slide.shapes.title)
    assert shown.count("W") == len(word)
    assert slides[1].shapes.title.text == "Long"


def test_pptx_byline_too_long_for_the_cover_follows_it_and_a_short_subtitle_stays() -> None:
    """The byline follows the subtitle's rule: 200 authors go to the slides after the cover,
    flowed as body text; a subtitle that fits on its own stays on the cover."""
    authors = ", ".join(f"Author{i} Surname{i}" for i in range(1, 201))
    answer = f"---\ntitle: Long\nsubtitle: Short\nauthor: '{authors}'\n---\n\nBody.\n"
    slides = list(Presentation(io.BytesIO(render_markdown("pptx", answer, ROWS))).slides)
    cover = [s.text_frame.text for s in slides[0].shapes if s.has_text_frame]
    assert cover == ["Long", "Short"]
    shown = " ".join(s.text_frame.text for slide in slides[1:-1] for s in slide.shapes
                     if s.has_text_frame and s != slide.shapes.title)
    assert squashed(shown).replace("(cont.) ", "") == authors
    assert slides[1].shapes.title.text == "Long" and len(slides) > 3


@pytest.mark.slow
@pytest.mark.libreoffice
def test_office_files_show_the_block_in_libreoffice(tmp_path: Path) -> None:
    paths = []
    for fmt in ("docx", "pptx"):
        paths.append(tmp_path / f"answer-{fmt}.{fmt}")
        paths[-1].write_bytes(render_markdown(fmt, ANSWER, ROWS))  # type: ignore[arg-type]
    word, deck = (squashed(pdf_text(pdf)) for pdf in convert_all_with_libreoffice(paths, tmp_path))
    assert_in_order(word, BLOCK)
    assert_in_order(deck, ["Grid Report", HOSTILE, "Ana Ruiz; Bo Li · 1 May 2024", *BLOCK[4:]])


def test_markdown_keeps_subtitle_and_abstract_for_citerender_and_pandoc() -> None:
    markdown = render_markdown("md", ANSWER, ROWS).decode()
    # the abstract as markdown, its citation the first footnote, as the body writes them
    assert ("abstract: |\n  We *study* queues\n  and grids [^1].\n\n  Second paragraph & more.\n"
            in markdown)
    assert "Text [^2]." in markdown and "[^1]: [Another source]" in markdown
    again = read_markdown(markdown)
    assert again.subtitle == HOSTILE
    assert [plain_text(p.children) for p in again.abstract  # type: ignore[attr-defined]
            ] == ["We study queues and grids .", "Second paragraph & more."]
    assert [n.label for n in iter_inlines(again.abstract) if isinstance(n, FootnoteRef)] == ["1"]
    require_client(shutil.which("pandoc") is not None, "pandoc is not installed")
    meta = json.loads(subprocess.run(
        ["pandoc", "--from", "markdown", "--to", "json"], input=markdown,
        capture_output=True, text=True, check=True).stdout)["meta"]
    assert meta["subtitle"]["t"] == "MetaInlines"
    paragraphs = meta["abstract"]["c"]
    assert [block["t"] for block in paragraphs] == ["Para", "Para"]
    assert [node["t"] for node in paragraphs[0]["c"]].count("Note") == 1  # the Sources entry
    # the title is declared, not a first heading: pandoc shows its block only under a title
    page = subprocess.run(["pandoc", "-s", "--from", "markdown", "--to", "html"],
                          input=markdown, capture_output=True, text=True, check=True).stdout
    header = page[page.index('<header id="title-block-header">'):page.index("</header>")]
    assert_in_order(header, ['class="title">Grid Report', 'class="subtitle"', "Ana Ruiz",
                             "Bo Li", "1 May 2024", "Abstract", "<em>study</em>",
                             'href="#fn1"', "Second paragraph"])
    assert page.count("Grid Report") == 2  # <title> and the header's, no heading


@pytest.mark.parametrize("abstract", [
    "---\n\n...\n\na: b # c", "- item\n\n\"q\" \\ é 😀", "[[S:1]] <b>x</b>",
    "  indented\nlast",
])
def test_the_markdown_block_reads_back_any_abstract(abstract: str) -> None:
    block = metadata_block(DEFAULT_LANGUAGE, subtitle="s: x", abstract=abstract)
    context = ReadContext("markdown input", Limits())
    metadata, _ = read_metadata(block + "\nText.\n", context)
    assert (metadata.subtitle, metadata.abstract, context.notes) == ("s: x", abstract, [])


def test_the_author_option_is_shown_and_an_html_head_is_not() -> None:
    page = "<html><head><meta name='author' content='Head Author'><meta name='date' " \
           "content='2020'><title>T</title></head><body><h1>T</h1><p>A.</p></body></html>"
    rdoc = resolve_rows(read_html(page), ROWS)
    quiet = write_resolved("html", rdoc, RenderOptions()).decode()
    assert "title-block" not in quiet and 'content="Head Author"' in quiet
    given = write_resolved("html", rdoc, RenderOptions(author="Ed")).decode()
    assert re.search(r'<p class="author" dir="auto">Ed</p>', given)
    assert "2020</p>" not in given


def test_an_author_s_look_page_gets_the_block_under_its_title_heading() -> None:
    from renderers.writers.html.author_look import render_html_input

    page = ("<html><head><title>Page T</title><style>p { color: #333 }</style></head><body>"
            "<p>Before.</p><h1>Page T</h1><p>Lede.</p><h2>Sec</h2><p>B.</p></body></html>")
    rdoc = resolve_rows(read_html(page), ROWS)
    html = render_html_input(page, rdoc, RenderOptions(author="Ed <x>", toc=True))
    assert_in_order(html, ["Before.", ">Page T</h1>", '<header class="title-block">',
                           "Ed &lt;x&gt;", "</header>", "Lede.", 'id="contents"', "B."])
    untitled = "<html><body><style>p { color: red }</style><p>A.</p><h2>S</h2></body></html>"
    html = render_html_input(untitled, resolve_rows(read_html(untitled), ROWS),
                             RenderOptions(author="Ed", toc=True))
    assert_in_order(html, ['<main class="report"', '<header class="title-block">', "Ed",
                           'id="contents"', "A."])


#: An abstract with a heading of its own, linked to from the body.
HEADED_ABSTRACT = """---
title: Energy Report
abstract: |
  ## Key findings

  Solar grows fast [[S:1]].
---

# Introduction

Body [[S:2]], see [the findings](#key-findings).

## Details

More.
"""


def test_an_abstract_s_heading_is_no_section_in_the_pdf_outline_or_contents(
    engine: str, tmp_path: Path
) -> None:
    """The abstract's heading was a PDF bookmark (both engines): it is drawn as a bold line
    inside the abstract, out of the outline and the contents, and a link to it still leads
    there."""
    from pypdf import PdfReader

    from tests.helpers import outline_titles

    path = tmp_path / "out.pdf"
    path.write_bytes(render_markdown("pdf", HEADED_ABSTRACT, ROWS, pdf_engine=engine, toc=True))
    assert outline_titles(PdfReader(str(path))) == [
        "Energy Report", "Introduction", "Details", "Sources"]
    text = squashed(pdf_text(path))
    assert_in_order(text, ["Abstract", "Key findings", "Solar grows fast", "Contents",
                           "Introduction", "Details", "Sources", "Introduction", "Body"])
    contents = text[text.index("Contents"):text.index("Body")]
    assert "Key findings" not in contents
    assert any(text_under(path, page, rect) == "the findings" for page, rect, _ in links(path))


def test_an_abstract_s_heading_is_no_section_in_html_docx_or_pptx() -> None:
    """Nor a Word heading (the navigation pane), a slide of its own, or an HTML heading; its
    id stays a place links lead to (DOCX and Typst had no place for an abstract's anchor)."""
    page = render_markdown("html", HEADED_ABSTRACT, ROWS, toc=True).decode()
    abstract = page[page.index('<div class="abstract">'):page.index("</header>")]
    assert "<h2" not in abstract and 'id="key-findings"' in abstract
    assert "<strong>Key findings</strong>" in abstract
    assert '<a href="#key-findings">the findings</a>' in page
    document = docx.Document(io.BytesIO(render_markdown("docx", HEADED_ABSTRACT, ROWS)))
    shown = [(p.style.name, p.text) for p in document.paragraphs[:4]]  # type: ignore[union-attr]
    assert shown[2] == ("Abstract", "Key findings")
    assert not [p.text for p in document.paragraphs
                if p.style.name.startswith("Heading") and "Key" in p.text]  # type: ignore[union-attr]
    xml = document.element.xml  # the link to it leads to its bookmark
    assert 'w:name="key_findings"' in xml and 'w:anchor="key_findings"' in xml
    deck = Presentation(io.BytesIO(render_markdown("pptx", HEADED_ABSTRACT, ROWS)))
    titles = [slide.shapes.title.text for slide in deck.slides if slide.shapes.title]
    assert titles == ["Energy Report", "Abstract", "Introduction", "Introduction", "Details",
                      "Sources"]
