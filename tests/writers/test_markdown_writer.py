"""The Markdown writer: footnote citations, the Sources section, escaping that round-trips.

The writer tests start from the IR (the fixture ``every_node`` or documents built here); the
round-trip tests go through the markdown reader on purpose, since reading the output back is
what they prove.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import unquote

import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from citations.pool import SourcePool
from renderers.diagnostics import Code as DiagnosticCode
from renderers.diagnostics import collect
from renderers.document import (
    Block,
    BlockQuote,
    BulletList,
    Cite,
    Code,
    CodeBlock,
    Document,
    Emph,
    Figure,
    FootnoteDef,
    FootnoteRef,
    Heading,
    Image,
    Inline,
    Link,
    ListItem,
    Math,
    OrderedList,
    Paragraph,
    RawBlock,
    SoftBreak,
    Strike,
    Strong,
    Table,
    TableCell,
    Text,
    iter_inlines,
    plain_text,
)
from renderers.errors import UnsupportedNodeError
from renderers.math.mathml import mathml_markup
from renderers.math.tex import parse_tex
from renderers.options import RenderOptions
from renderers.readers.markdown import read_markdown
from renderers.resolve import resolve
from renderers.writers.markdown import code_span, escape_text, markdown_text
from tests.fuzz_strategies import examples
from tests.support.ir import load_ir

SAMPLES = Path(__file__).resolve().parents[2] / "samples"

POOL_ROWS = [
    {
        "sid": 1,
        "title": "World Energy Outlook 2024",
        "url": "https://www.iea.org/reports/weo-2024",
        "published_at": "2024-10-16",
    },
    {
        "sid": 2,
        "title": "Renewable Capacity *Statistics* [2024]",
        "url": "https://www.irena.org/stats?a=1&b=2",
    },
    {"sid": 3, "title": "Lazard LCOE+", "url": "https://www.lazard.com/lcoe/"},
    {
        "sid": 4,
        "title": "IEA WEO (tracking link)",
        "url": "https://www.iea.org/reports/weo-2024?utm_source=x",
    },
    {
        "sid": 5,
        "title": "Board memo",
        "artifact_path": "attachments/memo.pdf",
        "physical_path": "attachments/memo.pdf",
        "mime": "application/pdf",
        "published_at": "2024-11-04",
    },
    {"sid": 6, "title": "Ember review", "url": "https://ember-energy.org/review"},
]


@pytest.fixture(scope="module")
def pool() -> SourcePool:
    return SourcePool.from_rows(POOL_ROWS)


def md_of(source: str, pool: SourcePool, **options: object) -> str:
    opts = RenderOptions(**options)  # type: ignore[arg-type]
    rdoc = resolve(read_markdown(source), pool, sources_heading=opts.sources_heading)
    return markdown_text(rdoc, opts)


def md_of_document(
    document: Document, pool: SourcePool, *, numbering: str = "appearance", **options: object
) -> str:
    opts = RenderOptions(**options)  # type: ignore[arg-type]
    rdoc = resolve(document, pool, numbering=numbering,  # type: ignore[arg-type]
                   sources_heading=opts.sources_heading)
    return markdown_text(rdoc, opts)


def para(*children: Inline) -> Paragraph:
    return Paragraph(children)


def test_every_node_of_the_ir_renders(pool: SourcePool) -> None:
    out = md_of_document(load_ir("every_node"), pool)
    lines = out.splitlines()
    assert lines[0] == "# Energy report"
    assert "Plain *emph* **strong** ~~gone~~ `x < y` first[^1]" in lines
    # citation (3, 1, 2, 5): sorted, a run compressed; the unknown sid 99 leaves nothing
    assert "many[^1][^2][^3][^4] unknown\\<span onclick=x>raw\\</span>[^a]" in lines
    link = next(line for line in lines if line.startswith("[a link](https://example.org/a?b=1"))
    assert link.endswith(' "Title")bad link\\')  # the refused link leaves its text
    # raw HTML is shown as text, as every writer shows it: fenced, never live
    assert "javascript" not in out and "```html\n<script>alert(1)</script>\n```" in out
    items = lines.index("- tight item")
    assert lines[items : items + 3] == ["- tight item", "- [x] done", "- [ ] todo"]
    assert "4. loose item" in lines and "| :--- | ---: |" in lines and "| a | 1[^3] |" in lines
    assert "```python\nx = [[S:1]]\n<b>not bold</b>\n```" in out
    assert "> quoted[^2]" in lines and "العربية مرحبا بالعالم[^1]" in lines
    assert "[^a]: An author note." in lines  # notes are lettered, citations numbered
    sources = out.split("\n## Sources\n\n")[1]
    assert [line.split(":")[0] for line in sources.splitlines()] == [
        "[^1]", "[^2]", "[^3]", "[^4]"]
    assert sources.splitlines()[3] == "[^4]: Board memo — attachments/memo.pdf · 2024-11-04"


# ---------------------------------------------------------------- citations and Sources


def test_citations_become_one_footnote_reference_per_displayed_number(pool: SourcePool) -> None:
    doc = Document((para(Text("Solar grew."), Cite((3,)), Text(" Wind too."), Cite((1, 3)),
                         Text(" All."), Cite((1, 3, 4, 5))),))
    out = md_of_document(doc, pool)
    # appearance numbering: 3→1, 1→2, 4 dedupes with 1 (→2), 5→3; a run of three is compressed
    assert "Solar grew.[^1] Wind too.[^1][^2] All.[^1][^2][^3]" in out


def test_sources_section_lists_each_entry_once_with_url_or_label(pool: SourcePool) -> None:
    cited = (Text("A"), Cite((2,)), Text(" b"), Cite((1,)), Text(" c"), Cite((5,)), Text(" d"))
    out = md_of_document(Document((para(*cited, Cite((2,))),)), pool)
    head, sources = out.split("\n## Sources\n\n")
    assert "A[^1] b[^2] c[^3] d[^1]" in head
    lines = sources.strip().splitlines()
    assert lines == [
        r"[^1]: [Renewable Capacity \*Statistics\* \[2024\]](https://www.irena.org/stats?a=1\&b=2)"
        " — irena.org",
        "[^2]: [World Energy Outlook 2024](https://www.iea.org/reports/weo-2024) — iea.org"
        " · 2024-10-16",
        "[^3]: Board memo — attachments/memo.pdf · 2024-11-04",
    ]


def test_sources_heading_is_configurable_and_absent_without_citations(pool: SourcePool) -> None:
    cited = Document((para(Text("x"), Cite((3,))),))
    assert "## Quellen\n\n[^1]: [Lazard" in md_of_document(cited, pool, sources_heading="Quellen")
    out = md_of_document(Document((para(Text("No citations here.")),)), pool)
    assert "Sources" not in out and out == "No citations here.\n"


def test_unknown_sids_render_nothing(pool: SourcePool) -> None:
    doc = Document((para(Text("Known"), Cite((1,)), Text(" unknown"), Cite((99,)), Text(" end.")),))
    out = md_of_document(doc, pool)
    assert "Known[^1] unknown end." in out
    assert "[^2]" not in out


def test_numbering_by_sid(pool: SourcePool) -> None:
    doc = Document((para(Text("x"), Cite((6,)), Text(" y"), Cite((3,))),))
    out = md_of_document(doc, pool, numbering="sid")
    assert "x[^6] y[^3]" in out
    assert "[^3]: [Lazard LCOE+]" in out and "[^6]: [Ember review]" in out


def test_author_notes_are_lettered_and_never_clash_with_citations(pool: SourcePool) -> None:
    source = (
        "Cited[[S:1]] and noted[^1] and again[^a] and[^gone].\n\n[^a]: Author a.\n\n"
        "[^1]: Author one.\n\n[^spare]: Never referenced.\n"
    )
    out = md_of(source, pool)
    # letters by first reference, the unreferenced note last; citations keep their numbers
    assert "Cited[^1] and noted[^a] and again[^b] and\\[^gone\\]." in out
    assert "[^b]: Author a." in out and "[^a]: Author one." in out
    assert "[^c]: Never referenced." in out
    reread = read_markdown(out)
    labels = [b.label for b in reread.blocks if isinstance(b, FootnoteDef)]
    assert sorted(labels) == ["1", "a", "b", "c"]


def test_cite_inside_link_is_moved_after_the_link(pool: SourcePool) -> None:
    doc = Document((Paragraph((Link("https://a.org/", (Text("see"), Cite((1,)))), Text("."))),))
    out = md_of_document(doc, pool)
    assert "[see](https://a.org/)[^1]." in out
    spaced = Document((Paragraph((Link("https://a.org/", (Text("see "), Cite((1,)))),)),))
    assert "[see](https://a.org/)[^1]" in md_of_document(spaced, pool)  # no space kept inside


def test_text_after_a_reference_cannot_become_a_link_or_definition(pool: SourcePool) -> None:
    doc = Document(
        (
            Paragraph(
                (Cite((1,)), Text(": defined")),
            ),
            Paragraph(
                (Cite((1,)), Text("(x)")),
            ),
        )
    )
    out = md_of_document(doc, pool)
    assert "[^1]\\: defined" in out and "[^1]\\(x)" in out
    reread = read_markdown(out)
    assert not any(
        isinstance(n, Link) for b in reread.blocks if isinstance(b, Paragraph) for n in b.children
    )


def test_title_is_added_unless_a_level_one_heading_shows_it(pool: SourcePool) -> None:
    body = para(Text("Body."))
    titled = md_of_document(Document((body,)), pool, title="Report")
    assert titled.startswith("# Report\n\nBody.")
    own = Document((Heading(1, (Text("Own"),)), body), title="Own")
    assert md_of_document(own, pool).startswith("# Own\n\nBody.")
    assert md_of_document(own, pool, title="Own").startswith("# Own\n\nBody.")
    # an explicit title that no heading shows is added, as in every other format
    assert md_of_document(own, pool, title="Report").startswith("# Report\n\n# Own\n")


# ---------------------------------------------------------------- code


def test_code_is_verbatim_with_long_enough_fences(pool: SourcePool) -> None:
    code = "x = np.array([[1, 2], [3, 4]])  # [[S:1]]\n```\nnested fence\n````"
    doc = Document((CodeBlock(code, "python"), Paragraph((Code("a `` b [[S:2]]"),))))
    out = md_of_document(doc, pool)
    assert "`````python\n" + code + "\n`````" in out
    assert "```a `` b [[S:2]]```" in out
    reread = read_markdown(out)
    assert reread.blocks[0] == CodeBlock(code, "python")
    assert reread.blocks[1] == Paragraph((Code("a `` b [[S:2]]"),))
    assert "[^" not in out  # tokens inside code are not citations


@pytest.mark.parametrize("text", ["`", "``x", "x`", " a ", "  ", "a|b", "[[S:1]]"])
def test_code_span_round_trips(text: str) -> None:
    reread = read_markdown(f"before {code_span(text)} after\n")
    codes = [n for n in reread.blocks[0].children if isinstance(n, Code)]  # type: ignore[union-attr]
    assert codes == [Code(text)]


# ---------------------------------------------------------------- escaping


@pytest.mark.parametrize(
    "text",
    [
        "# not a heading",
        "- not a list",
        "+ not a list",
        "1. not a list",
        "2) nor this",
        "> not a quote",
        "=====",
        "---",
        "*not emphasis*",
        "_nor this_",
        "~~not struck~~",
        "`not code`",
        "[not](a link)",
        "![not](an image)",
        "<b>not html</b>",
        "&amp; stays literal",
        "a | b | c",
        "[[S:1]] is literal text",
        "［［S：1］］ full-width literal",
        "[^1] not a footnote",
        "back\\slash",
        "C# and F#",
    ],
)
def test_text_escaping_round_trips(text: str, pool: SourcePool) -> None:
    doc = Document((Paragraph((Text(text),)), Paragraph((Text("x"), SoftBreak(), Text(text)))))
    out = md_of_document(doc, pool)
    reread = read_markdown(out)
    assert [plain_text(b.children) for b in reread.blocks if isinstance(b, Paragraph)] == [
        text,
        f"x {text}",
    ]
    assert not any(isinstance(n, Cite) for b in reread.blocks for n in getattr(b, "children", ()))


@examples(150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet="ab1. #*_`[]<>&;|~!:-+=()\\^S$", min_size=1, max_size=40))
def test_any_text_round_trips(text: str, pool: SourcePool) -> None:
    doc = Document((Paragraph((Text(text),)),))
    reread = read_markdown(md_of_document(doc, pool))
    expected = text.strip(" ")
    got = "".join(plain_text(b.children) for b in reread.blocks if isinstance(b, Paragraph))
    assert got == expected
    assert not reread.warnings


def test_escape_text_only_escapes_block_syntax_at_line_start() -> None:
    assert escape_text("# x", line_start=True) == "\\# x"
    assert escape_text("# x", line_start=False) == "# x"
    assert escape_text("2024. x", line_start=True) == "2024\\. x"
    assert escape_text("a*b", line_start=False) == "a\\*b"


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("见@fig:cap", "见\\@fig:cap"),  # the reader would take it: escaped
        ("ב@tbl-a and @fig:b", "ב\\@tbl-a and \\@fig:b"),
        ("see@fig:cap and café@fig:x", "see@fig:cap and café@fig:x"),  # e-mail-like: as is
    ],
)
def test_an_at_is_escaped_exactly_where_it_would_start_a_reference(
    text: str, written: str, pool: SourcePool
) -> None:
    assert escape_text(text, line_start=False) == written
    reread = read_markdown(md_of_document(Document((Paragraph((Text(text),)),)), pool))
    (paragraph,) = reread.blocks
    assert isinstance(paragraph, Paragraph) and paragraph.children == (Text(text),)


def test_a_cjk_reference_becomes_a_link_in_markdown() -> None:
    markdown = "![容量图](a.png){#fig:cap}\n\n见@fig:cap。如[@fig:cap]所示。\n"
    rdoc = resolve(read_markdown(markdown), SourcePool.from_rows([]))
    text = markdown_text(rdoc, RenderOptions())
    assert "见[Figure 1](#fig-1)。如[Figure 1](#fig-1)所示。" in text and "@" not in text


# ---------------------------------------------------------------- every construct round-trips

EVERYTHING = """# Heading *one*

Paragraph with *emph*, **strong**, ~~strike~~, `code`, a [link](https://example.org/a_(b) "T"),
an autolink <https://example.org/x>, and a hard\\
break.[[S:1]]

## Lists

- tight one[[S:2]]
- tight two
  - nested
    1. deep

3. start at three
4. four

* [ ] open task
* [x] done task

- loose item

  second paragraph

> A quote[[S:3]]
>
> > nested quote

```js
const a = "[[S:1]]";
```

    indented code

| Left | Center | Right |
|:-----|:------:|------:|
| a `|` b | **c** | 1[[S:5]] |
| d | | e |

![Alt text](assets/chart.png "Chart title")

***

Footnote[^a].

[^a]: Author note with *emphasis*.
"""


def _strip_citations(blocks: tuple[Block, ...]) -> tuple[Block, ...]:
    """Blocks without Cite nodes and numeric footnotes (the writer's own), texts merged."""
    out: list[Block] = []
    for block in blocks:
        if isinstance(block, FootnoteDef) and block.label.isdigit():
            continue
        if isinstance(block, Heading) and plain_text(block.children) == "Sources":
            continue
        out.append(_map_block(block))
    return tuple(out)


def _clean(inlines: tuple[Inline, ...]) -> tuple[Inline, ...]:
    out: list[Inline] = []
    for node in inlines:
        if isinstance(node, Cite) or (isinstance(node, FootnoteRef) and node.label.isdigit()):
            continue
        if isinstance(node, Emph | Strong | Strike | Link):
            node = dataclasses.replace(node, children=_clean(node.children))
        if out and isinstance(out[-1], Text) and isinstance(node, Text):
            out[-1] = Text(out[-1].text + node.text)
        else:
            out.append(node)
    return tuple(out)


def _map_block(block: Block) -> Block:
    match block:
        case Heading() | Paragraph():
            return dataclasses.replace(block, children=_clean(block.children))
        case BulletList(items) | OrderedList(items):
            return dataclasses.replace(
                block, items=tuple(ListItem(_strip_citations(i.blocks), i.checked) for i in items)
            )
        case Table(header, rows, aligns, caption):
            return Table(
                tuple(TableCell(_clean(c.children)) for c in header),
                tuple(tuple(TableCell(_clean(c.children)) for c in r) for r in rows),
                aligns,
                _clean(caption),
            )
        case BlockQuote(inner):
            return BlockQuote(_strip_citations(inner))
        case FootnoteDef(label, inner):
            return FootnoteDef(label, _strip_citations(inner))
        case Figure(image, caption):  # the image's bytes are embedded: compared apart
            return Figure(dataclasses.replace(image, src=""), _clean(caption))
        case _:
            return block


def test_every_construct_round_trips(pool: SourcePool) -> None:
    original = read_markdown(EVERYTHING)
    out = markdown_text(resolve(original, pool), RenderOptions(base_dir=SAMPLES))
    reread = read_markdown(out)
    assert _strip_citations(reread.blocks) == _strip_citations(original.blocks)
    (figure,) = [b for b in reread.blocks if isinstance(b, Figure)]
    assert figure.image.src == "data:image/png;base64," + base64.b64encode(
        (SAMPLES / "assets" / "chart.png").read_bytes()).decode()


def test_output_is_deterministic(pool: SourcePool) -> None:
    assert md_of(EVERYTHING, pool) == md_of(EVERYTHING, pool)


# ---------------------------------------------------------------- safety and failures


def test_unsafe_links_and_images_are_not_emitted(pool: SourcePool) -> None:
    doc = Document(
        (
            Paragraph(
                (
                    Link("javascript:alert(1)", (Text("click"),)),
                    Text(" "),
                    Image("file:///etc/passwd", alt="secret"),
                    Text(" "),
                    Image("https://example.org/i.png", alt="remote"),
                )
            ),
            RawBlock("<script>alert(1)</script>"),
        )
    )
    out = md_of_document(doc, pool)
    assert "javascript" not in out and "file:" not in out
    # never loaded, so never shown: a reader's viewer would fetch a remote image (and any
    # tracking it carries), as the HTML report never lets it
    assert "click \\[Image: secret\\] \\[Image: remote\\]" in out
    assert "```html\n<script>alert(1)</script>\n```" in out
    assert read_markdown(out).blocks[1] == CodeBlock("<script>alert(1)</script>", "html")


def test_lists_next_to_each_other_stay_separate(pool: SourcePool) -> None:
    item = ListItem((Paragraph((Text("x"),)),))
    doc = Document(
        (
            BulletList((item,)),
            BulletList((item,)),
            OrderedList((item,)),
            OrderedList((item,), start=5),
        )
    )
    reread = read_markdown(md_of_document(doc, pool))
    assert [type(b).__name__ for b in reread.blocks] == [
        "BulletList",
        "BulletList",
        "OrderedList",
        "OrderedList",
    ]
    assert reread.blocks[3].start == 5  # type: ignore[union-attr]


def test_unsupported_node_fails_loudly(pool: SourcePool) -> None:
    @dataclasses.dataclass(frozen=True)
    class Alien:
        text: str = "?"

    doc = Document((Paragraph((Alien(),)),))  # type: ignore[arg-type]
    with pytest.raises(UnsupportedNodeError, match="Alien"):
        md_of_document(doc, pool)
    with pytest.raises(UnsupportedNodeError):
        md_of_document(Document((Alien(),)), pool)  # type: ignore[arg-type]


def test_every_source_of_a_range_is_referenced_so_none_drops_out(pool: SourcePool) -> None:
    """A footnote definition no reference names is left out of the rendered footnotes: a run
    written as [^1]–[^3] lost source 2 from the Sources a reader sees."""
    out = md_of_document(Document((Paragraph((Text("All"), Cite((1, 2, 3)))),)), pool)
    assert "All[^1][^2][^3]" in out
    referenced = set(re.findall(r"\[\^(\d+)\](?!:)", out))
    defined = set(re.findall(r"^\[\^(\d+)\]:", out, re.MULTILINE))
    assert defined == referenced == {"1", "2", "3"}


def test_a_figure_whose_caption_cites_keeps_the_citation(pool: SourcePool) -> None:
    doc = read_markdown("![Output by region [[S:2]]](assets/chart.png)\n")
    out = md_of_document(doc, pool, base_dir=SAMPLES)
    assert out.startswith("![Output by region][image-1]\n\nOutput by region [^1]")


def test_images_are_embedded_through_the_sandbox_so_the_file_stands_alone(
    pool: SourcePool, tmp_path: Path
) -> None:
    """A path relative to the input broke once the Markdown was written elsewhere, and a path
    outside the base directory was written out as given: every image is loaded through the
    sandbox and embedded once, or shown as its alt text with a warning."""
    (tmp_path / "outside.png").write_bytes((SAMPLES / "assets" / "chart.png").read_bytes())
    doc = read_markdown("![a](assets/chart.png) ![b](assets/chart.png) ![c](../outside.png) "
                        f"![d]({tmp_path / 'outside.png'}) ![e](/etc/hostname)\n")
    with collect() as warnings:
        out = md_of_document(doc, pool, base_dir=SAMPLES)
    assert out.startswith("![a][image-1] ![b][image-1] \\[Image: c\\] \\[Image: d\\] "
                          "\\[Image: e\\]")
    assert out.count("data:image/png;base64,") == 1
    assert "outside" not in out and "/etc" not in out
    assert len(warnings) == 3 and all(w.code == DiagnosticCode.IMAGE_REFUSED for w in warnings)


def test_a_link_around_a_citation_alone_is_not_written_empty(pool: SourcePool) -> None:
    out = md_of_document(read_markdown("See [[[S:1]]](https://example.com) now.\n"), pool)
    assert "See [^1] now." in out and "[](" not in out


def _pandoc_formulas(markdown: str) -> list[tuple[str, bool]]:
    """The formulas pandoc reads in ``markdown`` (TeX, displayed), in order."""
    tree = json.loads(subprocess.run(
        ["pandoc", "-f", "markdown", "-t", "json"], input=markdown, capture_output=True,
        text=True, check=True).stdout)
    found: list[tuple[str, bool]] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if node.get("t") == "Math":
                kind, tex = node["c"]
                found.append((tex, kind["t"] == "DisplayMath"))
            else:
                walk(node.get("c"))
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(tree["blocks"])
    return found


@pytest.mark.parametrize("display", [False, True])
@pytest.mark.parametrize(
    ("tex", "written"),
    [("x\\", "x\\backslash"), ("a \\\\", "a \\\\"), ("a \\\\\\", "a \\\\\\backslash"),
     ("x^2", "x^2")],
)
def test_a_formula_ending_in_a_backslash_reads_back_as_the_same_formula(
    tex: str, written: str, display: bool, pool: SourcePool
) -> None:
    text = md_of_document(Document((para(Text("Then "), Math(tex, display), Text(" so.")),)),
                          pool)
    again = [n for n in iter_inlines(read_markdown(text).blocks) if isinstance(n, Math)]
    assert again == [Math(written, display)]
    drawn = mathml_markup(parse_tex(tex, display), annotate=False)
    assert mathml_markup(parse_tex(written, display), annotate=False) == drawn
    if shutil.which("pandoc"):
        assert _pandoc_formulas(text) == [(written, display)]


def test_a_link_that_leads_nowhere_is_written_as_its_text(tmp_path: Path) -> None:
    """A link to ``#fig-3`` (no figure 3) or ``#nowhere`` gets the dead-link note and every
    writer shows its text only; the Markdown keeps the text and drops the link too, by the
    same rule (``ResolvedDocument.dead_links``), while links to places the document has stay.
    Read back, the Markdown has no link left to note."""
    from renderers.api import render

    source = ("# Title\n\nSee [there](#fig-3), [gone](#nowhere), [up](#title), [chart](#fig-1)"
              " and [*both*](#fn-9).[[S:1]]\n\n![Chart](https://example.com/c.png){#fig:one}\n")
    markdown, html = render(source, tmp_path, formats="md,html", sources_pool=POOL_ROWS)
    noted = [d.message for d in markdown.diagnostics if "leads nowhere" in d.message]
    assert [note.split("'")[1] for note in noted] == ["#nowhere", "#fig-3", "#fn-9"]
    written = markdown.path.read_text("utf-8")
    assert "See there, gone, [up](#title), [chart](#fig-1) and *both*.[^1]" in written
    page = html.path.read_text("utf-8")
    assert "See there, gone, " in page and '<a href="#title">up</a>' in page
    assert not [n for n in read_markdown(written).notes if "leads nowhere" in n.message]


def _pandoc_ids_and_links(markdown: str, dialect: str) -> tuple[list[str], list[str]]:
    """The ids of pandoc's HTML of ``markdown`` and the in-page links it holds (percent escapes
    decoded, as a browser matches ``#%E7%B5%90`` with ``id="結"``)."""
    page = subprocess.run(["pandoc", "-f", dialect, "-t", "html"], input=markdown,
                          capture_output=True, text=True, check=True).stdout
    return (re.findall(r'\bid="([^"]*)"', page),
            [unquote(link) for link in re.findall(r'href="#([^"]*)"', page)])


def _pandoc_ids_land(markdown: str) -> dict[str, tuple[list[str], list[str]]]:
    """For each of pandoc's readers (``markdown``, ``gfm``; none when pandoc is missing): the
    ids and in-page links of its HTML of ``markdown``, each id once and each link landing."""
    if not shutil.which("pandoc"):
        return {}
    found = {}
    for dialect in ("markdown", "gfm"):
        ids, links = _pandoc_ids_and_links(markdown, dialect)
        assert len(ids) == len(set(ids)), (dialect, ids)
        assert set(links) <= set(ids), (dialect, set(links) - set(ids))
        found[dialect] = (ids, links)
    return found


@pytest.mark.parametrize("heading", ["Sources", "Quellen"])
def test_links_to_the_writers_own_places_lead_there_in_the_markdown(
    tmp_path: Path, heading: str
) -> None:
    """``#src-2``, ``#cite-1``, ``#fn-1``, ``#fnref-1`` and ``#sources`` led nowhere in the
    Markdown (pandoc's HTML of it had no such id): each place a link names gets its
    ``<a id>``; ``#notes`` and ``#contents``, sections Markdown has none of, are their text."""
    from renderers.api import render

    source = ("# Title\n\nSolar [[S:1]] and wind [[S:2]].[^n]\n\n"
              "See [entry](#src-2), [citation](#cite-1), [note](#fn-1), [back](#fnref-1),\n"
              "[all](#sources), [notes](#notes), [toc](#contents), [chart](#fig-1).\n\n"
              "![Chart](https://example.com/c.png){#fig:one}\n\n[^n]: A note.\n")
    (result,) = render(source, tmp_path, formats="md", sources_pool=POOL_ROWS,
                       sources_heading=heading)
    written = result.path.read_text("utf-8")
    assert "Solar <a id=\"cite-1\"></a>[^1] and wind [^2].<a id=\"fnref-1\"></a>[^a]" in written
    assert '[^a]: <a id="fn-1"></a>A note.' in written
    assert '[^2]: <a id="src-2"></a>[Renewable Capacity' in written
    assert "[all](#sources), notes, toc, [chart](#fig-1)." in written
    # none for what no link names (src-1, cite-2); pandoc names a "Sources" heading itself
    assert written.count("<a id=") == (5 if heading == "Sources" else 6)
    assert (f'## <a id="sources"></a>{heading}' in written) is (heading == "Quellen")
    for _, links in _pandoc_ids_land(written).values():
        assert {"src-2", "cite-1", "fn-1", "fnref-1", "sources"} <= set(links)
    assert not [n for n in read_markdown(written).notes if "leads nowhere" in n.message]
    # read back and written again (citations are notes then): every link still leads somewhere
    again, page = render(written, tmp_path / "again", formats="md,html", sources_pool=[])
    assert not [d for d in again.diagnostics if "leads nowhere" in d.message]
    html_ids = re.findall(r'\bid="([^"]*)"', page.path.read_text("utf-8"))
    assert len(html_ids) == len(set(html_ids))
    assert {"src-2", "cite-1", "fn-1", "fnref-1", "sources", "fig-1"} <= set(html_ids)
    rewritten = again.path.read_text("utf-8")
    # the Sources heading's anchor only where the heading's own id is another
    assert (f'## <a id="sources"></a>{heading}' in rewritten) is (heading == "Quellen")
    _pandoc_ids_land(rewritten)


def test_markdown_without_links_to_the_writers_places_has_no_anchors(tmp_path: Path) -> None:
    """The anchors are written only for the places a link names: other output is unchanged."""
    from renderers.api import render

    source = "# Title\n\nSolar [[S:1]].[^n] See [up](#title).\n\n[^n]: A note.\n"
    (result,) = render(source, tmp_path, formats="md", sources_pool=POOL_ROWS)
    assert "<a id=" not in result.path.read_text("utf-8")


def _sources_place(page: str) -> str:
    """The text of the heading pandoc's HTML has ``id="sources"`` in (or on)."""
    heading = next(h for h in re.findall(r"<h\d[^>]*>.*?</h\d>", page, re.S)
                   if 'id="sources"' in h)
    return re.sub(r"<[^>]+>", "", heading).strip()


@pytest.mark.parametrize(("source", "heading"), [
    # a link to the Sources list: the heading read back is no longer the writer's own
    ("# Title\n\nSolar [[S:1]]. See [all](#sources).\n", "Sources"),
    # an author's own "Sources" heading came first, and took the id the list needs
    ("# Title\n\n## Sources\n\nMine.\n\nSolar [[S:1]]. See [all](#sources).\n", "Sources"),
    ("# Title\n\n## Sources\n\nMine.\n\nSolar [[S:1]].\n", "Sources"),
    ("# Title\n\n## Quellen\n\nMine.\n\nSolar [[S:1]]. See [all](#sources).\n", "Quellen"),
])
def test_every_id_is_unique_and_sources_leads_to_the_list_read_back_any_number_of_times(
    tmp_path: Path, source: str, heading: str
) -> None:
    """Read back and written again, ``## <a id="sources"></a>Sources`` had the id twice
    (pandoc names the heading so too), and an author's own heading "Sources" took the id
    before the list's heading: ``#sources`` led there. A heading's anchor that is its id in
    both readers is left out, and a heading whose id would clash is written as HTML. (Read
    back without a link to it, the list is a heading like any other.)"""
    from renderers.api import render

    text, outputs = source, []
    for round_ in range(3):  # md → md → md, the first with the pool
        (result,) = render(text, tmp_path / str(round_), formats="md", sources_heading=heading,
                           sources_pool=POOL_ROWS if round_ == 0 else [])
        text = result.path.read_text("utf-8")
        outputs.append(text)
        assert not [d for d in result.diagnostics if "leads nowhere" in d.message]
        for dialect, (_, links) in _pandoc_ids_land(text).items():
            page = subprocess.run(["pandoc", "-f", dialect, "-t", "html"], input=text,
                                  capture_output=True, text=True, check=True).stdout
            if "sources" in links or round_ == 0:  # the list's, after the author's text
                assert _sources_place(page) == heading
                assert page.index('id="sources"') > page.index("Solar")
    assert outputs[1] == outputs[2]  # read back, the output is its own fixed point
    if "Mine" in source and heading == "Sources":
        assert '<h2 id="sources-1">\n\nSources\n\n</h2>\n\nMine.' in outputs[0]
        assert outputs[0].count("## Sources") == 1
    assert 'id="sources"></a>Sources' not in "".join(outputs)


def test_a_heading_whose_id_is_a_figures_is_written_as_html(tmp_path: Path) -> None:
    """"Fig 1" is the heading ``fig-1`` for pandoc, and figure 1's caption anchor too: the
    heading keeps its own id (``fig-1-1``, which links name) as HTML, and reads back so."""
    from renderers.api import render

    source = ("# T\n\n## Fig *1*\n\nSee [the chart](#fig-1) and [the part](#fig-1-1).[[S:1]]\n\n"
              "![Chart](https://example.com/c.png){#fig:one}\n")
    (result,) = render(source, tmp_path, formats="md", sources_pool=POOL_ROWS)
    written = result.path.read_text("utf-8")
    assert '<h2 id="fig-1-1">\n\nFig *1*\n\n</h2>' in written
    assert '<a id="fig-1"></a>**Figure 1:** Chart' in written
    heading = read_markdown(written).blocks[1]
    assert isinstance(heading, Heading) and heading.id == "fig-1-1"
    assert heading.children == (Text("Fig "), Emph((Text("1"),)))
    _pandoc_ids_land(written)


def test_headings_gfm_would_give_one_id_are_told_apart(pool: SourcePool) -> None:
    """gfm counts "a", "a 1", "a" as ``a``, ``a-1``, ``a-1``: the third is written as HTML."""
    written = md_of("# T\n\n## a\n\n## a 1\n\n## a\n\nText [[S:1]].\n", pool)
    assert written.startswith('# T\n\n## a\n\n## a 1\n\n<h2 id="a-2">\n\na\n\n</h2>\n\nText')
    if shutil.which("pandoc"):
        ids, _ = _pandoc_ids_and_links(written, "gfm")
        assert len(ids) == len(set(ids))


def test_a_heading_carrying_an_authors_anchor_of_its_own_id_is_written_as_html(
    tmp_path: Path,
) -> None:
    """``<section id="costs"><h2>Costs</h2>`` gave ``## <a id="costs"></a>Costs``: the id
    twice for pandoc (its own for the heading, and the anchor). The anchor stays, since readers
    without heading ids need it; the heading, as HTML, is named by neither reader."""
    from renderers.api import render

    source = ('<h1>Report</h1><p><a href="#costs">Costs</a></p>'
              '<section id="costs"><h2>Costs</h2><p>Text.<sup class="cite" data-sids="1">'
              "[S:1]</sup></p></section>")
    (result,) = render(source, tmp_path, formats="md", sources_pool=POOL_ROWS,
                       content_format="html")
    written = result.path.read_text("utf-8")
    assert '<h2 id="costs-1">\n\n<a id="costs"></a>Costs\n\n</h2>' in written
    for ids, _ in _pandoc_ids_land(written).values():
        assert "costs" in ids


#: ``(input, its format, the id a link names, how the Markdown heading carries it)``: a
#: heading's id that neither reader makes from its text, or only one does. An author's anchor
#: in a heading stays its leading anchor; a heading's own id is kept by writing it as HTML.
GIVEN_IDS = {
    "an HTML heading's id": ('<h2 id="custom">Title</h2>', "html", "custom",
                             '<h2 id="custom">\n\nTitle\n\n</h2>'),
    "an anchor in an HTML heading": ('<h2><a id="custom"></a>Title</h2>', "html", "custom",
                                     '## <a id="custom"></a>Title'),
    "an anchor in a markdown heading": ('## <a id="custom"></a>Title', "markdown", "custom",
                                        '## <a id="custom"></a>Title'),
    "a list mark opening the text": ('<h2 id="custom">- a &amp; b</h2>', "html", "custom",
                                     '<h2 id="custom">\n\n\\- a & b\n\n</h2>'),
    # the reader's id is gfm's, not pandoc markdown's ("intro"): an anchor would repeat it
    "a reader's id that is gfm's only": ("## 1. Intro", "markdown", "1-intro",
                                         '<h2 id="1-intro">\n\n1\\. Intro\n\n</h2>'),
    "an HTML id that is gfm's only": ('<h2 id="1-intro">1. Intro</h2>', "html", "1-intro",
                                      '<h2 id="1-intro">\n\n1\\. Intro\n\n</h2>'),
}


@pytest.mark.parametrize(("heading", "content_format", "ident", "written"), GIVEN_IDS.values(),
                         ids=GIVEN_IDS.keys())
def test_a_link_to_a_heading_s_own_id_lands_in_the_markdown(
    tmp_path: Path, heading: str, content_format: str, ident: str, written: str
) -> None:
    """``<h2 id="custom">Title</h2>`` was written ``## Title``, whose id is ``title`` for
    pandoc: the document's ``[see](#custom)`` led nowhere. A heading whose id a link names
    and a reader makes otherwise is written as HTML with it (an author's anchor in it stays a
    leading ``<a id>``); read back and written again, the output is its own fixed point."""
    from renderers.api import render

    link = (f'<p><a href="#{ident}">see</a> it.<sup class="cite" data-sids="1">[S:1]</sup></p>'
            if content_format == "html" else f"\n\n[see](#{ident}) it.[[S:1]]\n")
    text, outputs = heading + link, []
    for round_ in range(3):  # the input, then md → md → md
        (result,) = render(text, tmp_path / str(round_), formats="md",
                           content_format=content_format if round_ == 0 else "markdown",
                           sources_pool=POOL_ROWS if round_ == 0 else [])
        text = result.path.read_text("utf-8")
        outputs.append(text)
        assert text.startswith(written + "\n\n"), text
        assert not [d for d in result.diagnostics if "leads nowhere" in d.message]
        for dialect, (_, links) in _pandoc_ids_land(text).items():
            assert ident in links
            page = subprocess.run(["pandoc", "-f", dialect, "-t", "html"], input=text,
                                  capture_output=True, text=True, check=True).stdout
            assert "<li>" not in page  # the heading's text is no list in its HTML tags
    assert outputs[1] == outputs[2]


def test_a_heading_s_made_id_no_link_names_is_left_to_the_readers(tmp_path: Path) -> None:
    """An id the reader made from the text is kept only for the document's links, as the
    writers' own places are: other headings keep their bytes (``1-intro`` is ``intro`` to
    pandoc's ``markdown``). An id the author gave is kept (test_markdown_given_ids)."""
    from renderers.api import render

    (result,) = render("## 1. Intro\n\nText.\n", tmp_path, formats="md")
    assert result.path.read_text("utf-8") == "## 1. Intro\n\nText.\n"
    (given,) = render('<h2 id="custom">Title</h2><p>Text.</p>', tmp_path / "html",
                      formats="md", content_format="html")
    assert given.path.read_text("utf-8") == '<h2 id="custom">\n\nTitle\n\n</h2>\n\nText.\n'


def test_a_chain_of_clashing_heading_ids_is_settled_in_a_few_writings(
    pool: SourcePool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Heading k's own id (``<h2 id="h1">H0</h2>``) is the id readers give heading k+1
    (``## H1``), and an anchor takes the first's: each writing found one more heading to write
    as HTML, whose id clashed with the next, so 300 such headings took 301 writings (each the
    whole document; 10,000 took hours). After a few writings, the ids headings written as
    HTML may name are kept clear of, so the chain is settled at once."""
    import renderers.writers.markdown as markdown_writer
    from renderers.writers.markdown import SETTLING_WRITING

    writings = []
    one_writing = markdown_writer._markdown_pass

    def counted(*args: object, **kwargs: object) -> str:
        writings.append(1)
        return one_writing(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(markdown_writer, "_markdown_pass", counted)
    source = "".join(f'<h2 id="h{k + 1}">H{k}</h2>\n\n' for k in range(40))
    written = md_of(source + 'End <a id="h0"></a>.\n', pool)
    assert len(writings) <= SETTLING_WRITING + 2
    assert written.count("<h2 id=") == 40  # each heading's id is the next one's in the readers
    if shutil.which("pandoc"):
        for dialect in ("markdown", "gfm"):
            ids, _ = _pandoc_ids_and_links(written, dialect)
            assert len(ids) == len(set(ids)) == 41


def test_gfm_ids_are_made_from_the_text_as_gfm_reads_it_composed(pool: SourcePool) -> None:
    """pandoc's ``gfm`` reader composes its input (NFC) before it makes ids: "é" typed as
    ``e`` and a combining acute is the heading "é" to it, so it counted "é", "é", "é 1" as
    ``é``, ``é-1``, ``é-1`` while the writer counted two different texts and wrote all three
    as Markdown."""
    source = "# T\n\n## \u00e9\n\n## e\u0301\n\n## \u00e9 1\n\nText [[S:1]].\n"
    written = md_of(source, pool)
    assert written.count("<h2 id=") == 1 and "\n\n\u00e9 1\n\n</h2>" in written
    if shutil.which("pandoc"):
        ids, _ = _pandoc_ids_and_links(written, "gfm")
        assert len(ids) == len(set(ids)), ids


@pytest.mark.parametrize("text", ["-", "+ 1", "> 2", "#", "1.", "2) 3", "=", "***"])
def test_a_heading_written_as_html_keeps_text_a_line_start_would_read_as_block_syntax(
    pool: SourcePool, text: str
) -> None:
    """A heading as HTML holds its text as a paragraph, at the start of a line: "-" there
    was an empty list item and "1." an ordered list, "#" a heading of its own, so the
    heading read back had lost its text. It is escaped as any line's start is."""
    heading = f"## {escape_text(text, line_start=True)}\n\n"
    written = md_of(f'Intro <a id="section"></a>.\n\n{heading}Text [[S:1]].\n', pool)
    assert "<h2 id=" in written  # its id is the anchor's
    read = read_markdown(written).blocks[1]
    assert isinstance(read, Heading) and plain_text(read.children) == text


@pytest.mark.parametrize(("heading", "ident", "written"), [
    ("1. Introduction", "1-introduction",
     "<h2 id=\"1-introduction\">\n\n1\\. Introduction\n\n</h2>"),
    ("Remarks[^n]", "remarks", "<h2 id=\"remarks\">\n\nRemarks[^a]\n\n</h2>"),  # markdown: remarksa
    ("e.g. this", "eg-this", "<h2 id=\"eg-this\">\n\ne.g. this\n\n</h2>"),  # gfm drops the dot
    ("Costs (2024)", "costs-2024", "## Costs (2024)"),  # the id both readers give: Markdown
])
def test_a_linked_heading_whose_id_the_readers_would_not_give_it_is_written_as_html(
    pool: SourcePool, heading: str, ident: str, written: str
) -> None:
    """A link to a heading leads to its id; written as ``## 1. Introduction`` the heading
    was ``introduction`` to pandoc's markdown reader, and the link led nowhere."""
    source = f"# T\n\nSee [it](#{ident}).\n\n## {heading}\n\nText [[S:1]].\n\n[^n]: A note.\n"
    text = md_of(source, pool)
    assert written in text and f"[it](#{ident})" in text
    _pandoc_ids_land(text)


def test_the_place_of_a_note_referenced_twice_is_its_first_reference(pool: SourcePool) -> None:
    """pandoc's readers copy a note into every reference of it: ``<a id="src-1">`` in the
    definition of a source cited twice was in pandoc's HTML twice. A note referenced more
    than once has its place's anchor at its first reference, as Word's footnotes have it."""
    source = ("# T\n\nSolar [[S:1]] and wind [[S:2]], solar again [[S:1]].[^n] More.[^n]\n\n"
              "See [entry](#src-1), [other](#src-2) and [note](#fn-1).\n\n[^n]: A note.\n")
    written = md_of(source, pool)
    assert 'Solar <a id="src-1"></a>[^1] and wind [^2]' in written
    assert '[^2]: <a id="src-2"></a>' in written  # cited once: its entry
    assert '<a id="fn-1"></a>[^a] More.[^a]' in written and "[^a]: A note." in written
    assert written.count('id="src-1"') == written.count('id="fn-1"') == 1
    _pandoc_ids_land(written)


@pytest.mark.parametrize("ident", ["notes", "contents", "citation-notes"])
def test_a_link_to_an_authors_heading_named_as_a_section_markdown_lacks_leads_there(
    pool: SourcePool, ident: str
) -> None:
    """Markdown has no Notes or Contents section, so a link to ``#notes`` was written as its
    text even where the author's own heading "Notes" has that id (the HTML leads there)."""
    title = ident.replace("-", " ").capitalize()
    for place in (f"## {title}\n\n", f'<a id="{ident}"></a>Here.\n\n'):
        written = md_of(f"# T\n\nSee [it](#{ident}).\n\n{place}x [[S:1]]\n", pool)
        assert f"See [it](#{ident})." in written
        if shutil.which("pandoc"):
            for dialect in ("markdown", "gfm"):
                ids, links = _pandoc_ids_and_links(written, dialect)
                assert ident in links and set(links) <= set(ids)
    assert "See it." in md_of(f"# T\n\nSee [it](#{ident}).\n\nx [[S:1]]\n", pool)


#: Headings and places whose ids meet: repeated texts, texts no letter or a footnote label
#: leads, marks, ids of the writers' own form, anchors and HTML headings taking ids the
#: readers give, links to headings and to the writers' places, a source cited twice.
ID_PIECES = [
    "## A\n\n", "## A 1\n\n", "## a-1\n\n", "## Sources\n\n", "## Fig 1\n\n", "## 1. A\n\n",
    "## --\n\n", "## x...y\n\n", "## e\u0301\n\n", "## \u00e9 1\n\n", "## \U0001f600\n\n",
    "## !!\n\n", "## A[^f]\n\n", "## `x`\n\n", "## $x$\n\n", "## notes\n\n", "## e.g. b\n\n",
    "### \\-\n\n", '<h2 id="a">B</h2>\n\n', '<h2 id="section">A</h2>\n\n',
    '<h2 id="a-1">\u00e9</h2>\n\n', '## <a id="a"></a>A\n\n', '## <a id="sources"></a>S\n\n',
    'See [x](#a) [[S:1]] <a id="section"></a>\n\n', "See [x](#a-1), [y](#src-1) [[S:2]].\n\n",
    "See [x](#1-a), [y](#fn-1), [z](#sources), [w](#notes) [[S:1]].[^f]\n\n",
    # ids the author gave, kept though no link names them
    "## A {#b}\n\n", "## B {#a-1}\n\n", "## A {#a}\n\n", "## \ufb01 {#\ufb01}\n\n",
    "## S {#sources}\n\n", '<h2 id="1-a">C</h2>\n\n',
]


@pytest.mark.slow
@examples(25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pieces=st.lists(st.sampled_from(ID_PIECES), min_size=1, max_size=14))
def test_every_id_is_unique_and_every_link_lands_read_back_any_number_of_times(
    pieces: list[str], pool: SourcePool
) -> None:
    if not shutil.which("pandoc"):
        pytest.skip("pandoc is not installed")
    text = "".join(pieces) + "[^f]: A note.\n\nEnd [[S:1]].\n"
    outputs = [md_of(text, pool)]
    outputs.append(md_of(outputs[0], pool))
    outputs.append(md_of(outputs[1], pool))
    assert outputs[1] == outputs[2]  # its own fixed point from the first reading back
    given = {block.id for block in read_markdown(text).blocks
             if isinstance(block, Heading) and block.given}
    for written in outputs[:2]:
        for ids, _ in _pandoc_ids_land(written).values():
            assert given <= set(ids)
        assert given <= {block.id for block in read_markdown(written).blocks
                         if isinstance(block, Heading)}


def _pandoc_heading_texts(markdown: str, dialect: str) -> list[str]:
    """The text of each heading pandoc's ``dialect`` reader finds in ``markdown``."""
    listed = json.loads(subprocess.run(
        ["pandoc", "-f", dialect, "-t", "json"], input=markdown, capture_output=True, text=True,
        check=True).stdout)
    return ["".join(" " if inline["t"] == "Space" else inline["c"] for inline in block["c"][2])
            for block in listed["blocks"] if block["t"] == "Header"]


@pytest.mark.parametrize("text", ["C#", "a ##", "C##", "F# and C#", "#", "x\\#", "a \\"])
def test_a_heading_ending_in_a_hash_keeps_it_for_every_reader(
    text: str, pool: SourcePool
) -> None:
    """pandoc's ``markdown`` reads a heading's trailing ``#``s as closing marks with or without
    a space before them (``## C#`` was "C" there), CommonMark only after a space: the writer
    escapes the last one, so citerender, gfm and pandoc's markdown all read the text."""
    written = md_of_document(Document((Heading(2, (Text(text),)), para(Text("p")))), pool)
    (heading,) = [b for b in read_markdown(written).blocks if isinstance(b, Heading)]
    assert plain_text(heading.children) == text
    if shutil.which("pandoc"):
        for dialect in ("markdown-smart", "gfm"):
            assert _pandoc_heading_texts(written, dialect) == [text], (dialect, written)
