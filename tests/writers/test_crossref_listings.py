"""pandoc-crossref's code listings and custom prefixes, read back from the file each writer
made: a listing's caption ("Listing 1: …") stands above its code, ``@lst:`` names and links
it in every format, and ``[Chart @fig:a]`` shows the author's word for the kind."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import lxml.html
import pytest
from lxml import etree
from pptx import Presentation

from renderers.crossref import number_crossrefs
from renderers.document import CodeBlock, CrossRef, Link, Paragraph, Text, plain_text
from renderers.labels import LABELS
from renderers.options import RenderOptions
from renderers.readers.html import read_html
from renderers.readers.markdown import read_markdown
from tests.helpers import ROOT, convert_with_libreoffice, internal_links, pdf_lines
from tests.support.render import render_markdown, resolve_rows, write_resolved

OPTIONS = {"base_dir": ROOT / "samples"}
#: pandoc-crossref's three ways to caption and label a listing, and a listing's references.
MARKDOWN = """\
See @lst:hello, [@lst:hello; @lst:main] and [Snippet @lst:tail].

Listing: Say hello {#lst:hello}

```python
print("hello")
```

```{#lst:main .haskell caption="The main function"}
main = putStrLn "hi"
```

```sh
echo done
```

: The tail {#lst:tail}
"""
SHOWN = "See Listing 1, Listings 1 and 2 and Snippet 3."
LINKS = [("Listing 1", "lst-1"), ("1", "lst-1"), ("2", "lst-2"), ("Snippet 3", "lst-3")]
CAPTIONS = ["Listing 1: Say hello", "Listing 2: The main function", "Listing 3: The tail"]
CODE = ['print("hello")', 'main = putStrLn "hi"', "echo done"]
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def numbered(markdown: str) -> tuple[object, ...]:
    blocks, notes = number_crossrefs(read_markdown(markdown).blocks)
    assert not notes
    return blocks


# ---------------------------------------------------------------- reading


def test_each_form_of_caption_and_label_makes_a_numbered_listing() -> None:
    blocks = numbered(MARKDOWN)
    listings = [b for b in blocks if isinstance(b, CodeBlock)]
    assert [(b.language, plain_text(b.caption), b.label, b.number) for b in listings] == [
        ("python", "Say hello", "lst:hello", 1), ("haskell", "The main function", "lst:main", 2),
        ("sh", "The tail", "lst:tail", 3)]
    assert [type(b).__name__ for b in blocks] == ["Paragraph", *["CodeBlock"] * 3]  # captions


def test_a_fence_id_labels_and_a_caption_paragraph_captions() -> None:
    (code,) = numbered("Listing: Shell\n\n``` sh {#lst:a .bash}\nls\n```\n\nSee @lst:a.\n")[:1]
    assert code == CodeBlock("ls", "sh", (Text("Shell"),), "lst:a", 1)
    (plain,) = numbered("``` {.python}\nx = 1\n```\n")
    assert plain == CodeBlock("x = 1", "python")  # the first class names the language
    # a caption without a label captions, unnumbered; one not next to code stays a paragraph
    first, second = numbered("Listing: Loose\n\n```\nx\n```\n")[0], numbered("Listing: Alone\n")[0]
    assert first == CodeBlock("x", "", (Text("Loose"),))
    assert isinstance(second, Paragraph)


def test_a_custom_prefix_replaces_the_name_and_groups_only_with_its_own() -> None:
    figures = "".join(f"![{n}](a.png){{#fig:{n}}}\n\n" for n in "abc")
    (see, *_) = numbered("See [Chart @fig:a], [Chart -@fig:b] and [A @fig:a; A @fig:b; B "
                         "@fig:c; @fig:a].\n\n" + figures)
    assert isinstance(see, Paragraph)
    refs = [node for node in see.children if isinstance(node, CrossRef)]
    words = LABELS["en"]
    assert "".join(n.lead(words) + n.shown(words) if isinstance(n, CrossRef) else
                   n.text if isinstance(n, Text) else "" for n in see.children) == (
        "See Chart 1, Chart 2 and A 1 and 2, B 3 and Figure 1.")
    assert [ref.prefix for ref in refs] == ["Chart", "Chart", "A", "A", "B", ""]


#: Unknown references with and without the author's prefix, and what each stays.
UNKNOWN = "See [Chart @fig:zz], [Chart -@fig:zz], [-@fig:zz] and [A @fig:zz; @fig:yy].\n"
UNKNOWN_SHOWN = "See [Chart @fig:zz], [Chart -@fig:zz], -@fig:zz and A @fig:zz and @fig:yy."


def test_an_unknown_prefixed_reference_stays_as_written_with_a_warning() -> None:
    resolved = resolve_rows(read_markdown(UNKNOWN), [])
    assert [(n.code.value, n.message) for n in resolved.notes] == [
        ("unknown-label", f"cross-reference to unknown label {label!r} kept as text")
        for label in ("fig:zz", "fig:yy")]
    root = lxml.html.document_fromstring(write_resolved("html", resolved, RenderOptions()))
    (see,) = root.xpath("//p")
    assert see.text_content() == UNKNOWN_SHOWN and see.xpath(".//a") == []
    text = write_resolved("md", resolved, RenderOptions()).decode()
    assert "\\[Chart \\@fig:zz\\], \\[Chart -@fig:zz\\]" in text
    (again,) = read_markdown(text).blocks
    assert isinstance(again, Paragraph) and plain_text(again.children) == UNKNOWN_SHOWN


def test_a_group_inside_a_link_is_read_as_the_link() -> None:
    (see,) = read_markdown("[see [@lst:a; -@lst:b] and [Code @lst:a]](https://e.org/)\n").blocks
    assert isinstance(see, Paragraph)
    (link,) = see.children
    assert isinstance(link, Link) and link.url == "https://e.org/"
    assert [type(n).__name__ for n in link.children] == [
        "Text", "CrossRef", "CrossRef", "Text", "CrossRef"]
    assert [n.form for n in link.children if isinstance(n, CrossRef)] == [
        "name", "number", "name"]


@pytest.mark.parametrize(("lang", "shown"), [
    ("de", "Listing 1"), ("ru", "Листинг 1"), ("ja", "リスト1"), ("ar", "شيفرة 1"),
    ("zh-Hans", "代码1")])
def test_the_listing_word_in_the_documents_language(lang: str, shown: str) -> None:
    root = lxml.html.document_fromstring(render_markdown(
        "html", "Listing: Hi {#lst:a}\n\n```\nx\n```\n\nSee @lst:a.\n", [], lang=lang))
    assert root.xpath("//p//a/text()") == [shown]
    caption = root.xpath("//figure[@id='lst-1']/figcaption")[0].text_content()
    assert caption.startswith(LABELS[lang].caption_lead("lst", 1))


# ---------------------------------------------------------------- every format


def test_html_sets_the_caption_above_the_code_and_links_each_reference() -> None:
    root = lxml.html.document_fromstring(render_markdown("html", MARKDOWN, [], **OPTIONS))
    figures = root.xpath("//figure[@class='listing']")
    assert [f.get("id") for f in figures] == ["lst-1", "lst-2", "lst-3"]
    assert [[c.tag for c in f] for f in figures] == [["figcaption", "pre"]] * 3
    assert [f[0].text_content() for f in figures] == CAPTIONS
    assert [f[1].text_content() for f in figures] == CODE
    (see,) = [p for p in root.xpath("//p") if p.text_content().startswith("See")]
    assert see.text_content() == SHOWN
    assert [(a.text, a.get("href")) for a in see.xpath(".//a")] == [
        (text, f"#{anchor}") for text, anchor in LINKS]
    # the author's prefix reads back as the link it shows, not as a "Listing 3" to renumber
    assert see.xpath(".//a")[-1].get("class") == "xref-number"


def test_markdown_writes_caption_and_anchor_above_the_fence_and_reads_back() -> None:
    text = render_markdown("md", MARKDOWN, [], **OPTIONS).decode()
    assert ('<a id="lst-2"></a>**Listing 2:** The main function\n\n```haskell\n'
            'main = putStrLn "hi"\n```') in text
    again = read_markdown(text)
    (see,) = [b for b in again.blocks if isinstance(b, Paragraph)
              and plain_text(b.children).startswith("See")]
    assert [(plain_text(n.children), n.url) for n in see.children if isinstance(n, Link)] == [
        (shown, f"#{anchor}") for shown, anchor in LINKS]
    assert [b.text for b in again.blocks if isinstance(b, CodeBlock)] == CODE


def test_an_html_page_citerender_wrote_reads_back_as_the_same_listings() -> None:
    page = read_html(render_markdown("html", MARKDOWN, [], **OPTIONS).decode())
    assert page.notes == ()
    listings = [b for b in page.blocks if isinstance(b, CodeBlock)]
    assert [(b.label, plain_text(b.caption), b.text) for b in listings] == [
        (f"lst:{n}", caption.split(": ", 1)[1], code)
        for n, (caption, code) in enumerate(zip(CAPTIONS, CODE, strict=True), start=1)]
    resolved = resolve_rows(page, [])
    assert resolved.notes == ()
    root = lxml.html.document_fromstring(write_resolved("html", resolved, RenderOptions()))
    figures = root.xpath("//figure[@class='listing']")
    assert [(f.get("id"), f[0].text_content()) for f in figures] == [
        (f"lst-{n}", caption) for n, caption in enumerate(CAPTIONS, start=1)]
    (see,) = [p for p in root.xpath("//p") if p.text_content().startswith("See")]
    assert see.text_content() == SHOWN
    assert [(a.text, a.get("href")) for a in see.xpath(".//a")] == [
        (text, f"#{anchor}") for text, anchor in LINKS]
    text = write_resolved("md", resolved, RenderOptions()).decode()
    for n, caption in enumerate(CAPTIONS, start=1):
        label, words = caption.split(" ", 2)[1:]
        assert f'<a id="lst-{n}"></a>**Listing {label}** {words}' in text
    assert "[Listing 1](#lst-1)" in text and "[Snippet 3](#lst-3)" in text


def test_an_authors_captioned_code_figure_reads_as_an_unnumbered_listing() -> None:
    (code,) = read_html('<figure><pre><code class="language-sh">ls</code></pre>'
                        "<figcaption>Run it</figcaption></figure>").blocks
    assert code == CodeBlock("ls", "sh", (Text("Run it"),))  # no number: not citerender's page


#: Listings as pandoc-crossref writes them in HTML (a ``div.listing`` labelled by its id, its
#: caption led by its number, pandoc's highlighted code in a ``div.sourceCode``; its links show
#: the number alone, the name before them) and as many sites do (a ``<figure>`` of a ``<pre>``).
PANDOC_PAGE = """\
<p>See lst.&nbsp;<a href="#lst:hello">1</a>, <a href="#lst:run">Listing 2</a> and
<a href="#lst:hello">the code</a>.</p>
<div id="lst:hello" class="listing python"><p>Listing 1: Say <em>hello</em></p>
<div class="sourceCode" id="cb1"><pre class="sourceCode python"><code class="sourceCode python">\
<span id="cb1-1"><a href="#cb1-1" aria-hidden="true" tabindex="-1"></a>print("hello")</span>\
</code></pre></div></div>
<figure id="lst:run"><figcaption>Run it</figcaption><pre><code class="language-sh">ls</code></pre>
</figure>
"""
PANDOC_SHOWN = "See lst.\u00a01, Listing 2 and the code."


def test_pandoc_crossref_s_html_listings_read_as_labelled_listings() -> None:
    page = read_html(PANDOC_PAGE)
    assert page.notes == ()
    listings = [b for b in page.blocks if isinstance(b, CodeBlock)]
    assert [(b.label, plain_text(b.caption), b.language, b.text) for b in listings] == [
        ("lst:hello", "Say hello", "python", 'print("hello")'), ("lst:run", "Run it", "sh", "ls")]
    (see,) = [b for b in page.blocks if isinstance(b, Paragraph)
              and plain_text(b.children).startswith("See")]
    refs = [(n.label, n.form, n.prefix) for n in see.children if isinstance(n, CrossRef)]
    assert refs == [("lst:hello", "number", ""), ("lst:run", "name", "Listing")]
    (link,) = [n for n in see.children if isinstance(n, Link)]
    assert link.url == "#lst:hello"  # the author's words stay a link to the listing


def test_pandoc_crossref_s_html_listings_to_html_and_markdown() -> None:
    resolved = resolve_rows(read_html(PANDOC_PAGE), [])
    assert resolved.notes == ()
    root = lxml.html.document_fromstring(write_resolved("html", resolved, RenderOptions()))
    figures = root.xpath("//figure[@class='listing']")
    assert [(f.get("id"), f[0].text_content(), f[1].text_content()) for f in figures] == [
        ("lst-1", "Listing 1: Say hello", 'print("hello")'), ("lst-2", "Listing 2: Run it", "ls")]
    (see,) = [p for p in root.xpath("//p") if p.text_content().startswith("See")]
    assert see.text_content() == PANDOC_SHOWN
    assert [(a.text, a.get("href")) for a in see.xpath(".//a")] == [
        ("1", "#lst-1"), ("Listing 2", "#lst-2"), ("the code", "#lst:hello")]
    assert root.xpath("//*[@id='lst:hello']")  # where the author's own link leads
    text = write_resolved("md", resolved, RenderOptions()).decode()
    assert '<a id="lst-1"></a>**Listing 1:** Say *hello*\n\n```python\nprint("hello")\n```' in text
    assert "See lst.\u00a0[1](#lst-1), [Listing 2](#lst-2) and [the code](#lst:hello)." in text
    again = read_markdown(text)
    assert again.notes == ()
    assert [b.text for b in again.blocks if isinstance(b, CodeBlock)] == ['print("hello")', "ls"]


def test_a_markdown_reference_to_an_html_block_s_listing_resolves() -> None:
    resolved = resolve_rows(read_markdown(
        'See @lst:a.\n\n<div id="lst:a"><p>Listing 1: Hi</p><pre>x</pre></div>\n'), [])
    assert resolved.notes == ()
    text = write_resolved("md", resolved, RenderOptions()).decode()
    assert "See [Listing 1](#lst-1)." in text and "**Listing 1:** Hi\n\n```\nx\n```" in text


@pytest.mark.parametrize("html", [
    '<div id="x"><p>Not a caption</p><pre>ls</pre></div>',  # no listing label
    '<div id="lst:x"><p>One</p><p>Two</p><pre>ls</pre></div>',  # two paragraphs
    '<div id="lst:x"><pre>ls</pre>and text</div>',  # text beside the code
])
def test_a_division_that_is_no_listing_stays_its_blocks(html: str) -> None:
    blocks = read_html(html).blocks
    assert [type(b).__name__ for b in blocks][-1] in ("CodeBlock", "Paragraph")
    assert not any(isinstance(b, CodeBlock) and (b.label or b.caption) for b in blocks)


def test_docx_captions_each_listing_above_its_code_inside_the_bookmark() -> None:
    package = zipfile.ZipFile(io.BytesIO(render_markdown("docx", MARKDOWN, [], **OPTIONS)))
    body = etree.fromstring(package.read("word/document.xml"))
    texts = ["".join(p.itertext()) for p in body.iter(f"{W}p")]
    for caption, code in zip(CAPTIONS, CODE, strict=True):
        at = texts.index(caption)
        assert texts[at + 1] == code  # the caption right above its code
    captions = [p for p in body.iter(f"{W}p") if "".join(p.itertext()) in CAPTIONS]
    assert [p.find(f"{W}pPr/{W}keepNext") is not None for p in captions] == [True] * 3
    assert [[m.get(f"{W}name") for m in p.iter(f"{W}bookmarkStart")] for p in captions] == [
        ["lst_1"], ["lst_2"], ["lst_3"]]
    (see,) = [p for p in body.iter(f"{W}p") if "".join(p.itertext()).startswith("See")]
    assert "".join(see.itertext()) == SHOWN
    assert [("".join(h.itertext()), h.get(f"{W}anchor")) for h in see.iter(f"{W}hyperlink")] == [
        (text, anchor.replace("-", "_")) for text, anchor in LINKS]


def test_pptx_captions_the_code_and_jumps_to_it() -> None:
    deck = Presentation(io.BytesIO(render_markdown("pptx", MARKDOWN, [], **OPTIONS)))
    paragraphs = ["".join(r.text for r in para.runs) for slide in deck.slides
                  for shape in slide.shapes if shape.has_text_frame
                  for para in shape.text_frame.paragraphs]
    for caption, code in zip(CAPTIONS, CODE, strict=True):
        assert paragraphs[paragraphs.index(caption) + 1] == code
    runs = [run for slide in deck.slides for shape in slide.shapes if shape.has_text_frame
            for para in shape.text_frame.paragraphs for run in para.runs]
    jumps = [run.text for run in runs
             if run._r.xpath(".//a:hlinkClick[@action='ppaction://hlinksldjump']")]
    assert jumps == [text for text, _ in LINKS]


NOTES_DECK = """# Deck

## Slide

See @lst:c.

::: notes
Say @fig:a, @tbl:t and @lst:c.

![A chart](assets/chart.png){#fig:a}

| a | b |
|---|---|
| 1 | 2 |

: Costs {#tbl:t}

Listing: The code {#lst:c}

```python
x = 1
```

Listing: Unlabelled

```
y
```
:::
"""


def test_speaker_notes_caption_listings_as_figures_and_tables_with_their_numbers() -> None:
    deck = Presentation(io.BytesIO(render_markdown("pptx", NOTES_DECK, [], **OPTIONS)))
    (slide,) = [s for s in deck.slides if s.has_notes_slide]
    notes = slide.notes_slide
    assert notes.notes_text_frame.text.split("\n") == [
        "Say Figure 1, Table 1 and Listing 1.", "Figure 1: A chart", "a | b", "1 | 2",
        "Table 1: Costs", "Listing 1: The code", "x = 1", "Unlabelled", "y"]
    leads = [para.runs[0] for para in notes.notes_text_frame.paragraphs[1:]
             if para.runs[0].text.endswith(":")]
    assert [(run.text, run.font.bold) for run in leads] == [
        ("Figure 1:", True), ("Table 1:", True), ("Listing 1:", True)]
    # the references, in the notes and on the slide, jump to the slide whose notes hold them
    rel = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
    for part, runs in ((notes.part, notes.notes_text_frame.paragraphs[0].runs),
                       (slide.part, [r for shape in slide.shapes if shape.has_text_frame
                                     for para in shape.text_frame.paragraphs for r in para.runs])):
        jumps = [(run.text, part.rels[link.get(rel)].target_part) for run in runs
                 for link in run._r.xpath(".//a:hlinkClick[@action='ppaction://hlinksldjump']")]
        assert jumps and all(target is slide.part for _, target in jumps)
        assert {text for text, _ in jumps} <= {"Figure 1", "Table 1", "Listing 1"}


#: Enough prose that the second and third listings start on page 2.
LONG = MARKDOWN.replace("```{#lst:main", "Filler text.\n\n" * 45 + "```{#lst:main")


@pytest.mark.parametrize("engine", [pytest.param("weasyprint", marks=pytest.mark.slow),
                                    pytest.param("typst", marks=pytest.mark.slow)])
def test_pdf_sets_captions_above_the_code_and_links_to_their_pages(engine: str) -> None:
    pdf = render_markdown("pdf", LONG, [], pdf_engine=engine, **OPTIONS)
    lines = [line[2] for line in pdf_lines(pdf)]
    assert SHOWN in lines
    for caption, code in zip(CAPTIONS, CODE, strict=True):
        assert lines[lines.index(caption) + 1] == code
    assert [(shown, page) for shown, page, _ in internal_links(pdf)] == [
        ("Listing 1", 0), ("1", 0), ("2", 1), ("Snippet 3", 1)]


@pytest.mark.libreoffice
def test_libreoffice_shows_the_docx_captions_above_the_code(tmp_path: Path) -> None:
    path = tmp_path / "listings.docx"
    path.write_bytes(render_markdown("docx", MARKDOWN, [], **OPTIONS))
    lines = [line[2] for line in pdf_lines(convert_with_libreoffice(path, tmp_path).read_bytes())]
    assert SHOWN in lines
    for caption, code in zip(CAPTIONS, CODE, strict=True):
        assert lines[lines.index(caption) + 1] == code
