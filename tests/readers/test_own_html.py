"""citerender's own HTML output read back as input: the page a web app stored, rendered again to
PDF, DOCX, Markdown or HTML, cites the same sources under the same numbers, lists the same
Sources and shows the same text as the markdown it was written from.

The sample reports are written to HTML once; each is then read back with either numbering
(the sids a citation records do not depend on it) and compared with the markdown's own
render. A user's page is not ours because of a class name: only the ``generator`` meta says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from citations.numbering import NumberingMode
from renderers.api import open_session, render
from renderers.audit import audit
from renderers.document import Cite, Emph, Text, iter_inlines, plain_text
from renderers.pipeline import Session
from renderers.readers.html import read_html, rebuilt_parts
from tests.helpers import convert_all_with_libreoffice, pdf_text
from tests.support.samples import SAMPLES, Sample

MARKDOWN = [sample for sample in SAMPLES if sample.input.suffix == ".md"]
MARKDOWN_IDS = [sample.name for sample in MARKDOWN]
NUMBERINGS: tuple[NumberingMode, ...] = ("appearance", "sid")

#: Footnotes (one citing a deduplicated source), task items, an aligned table, citations in a
#: link, an unknown sid and a USAGE tag: what the samples do not all show.
EXTRA = """---
title: Heat pumps in old homes
author: Ana Ruiz
---

Heat pumps work in older homes.[[S:2]][^cost] Radiators may need sizing.[[S:1,9]] Same
source as two.[[S:5]]

- [x] Survey radiators[[S:3]]
- [ ] Check insulation[^ins]

| A | B |
|:-:|--:|
| x[[S:1]] | y |

A [linked claim [[S:2]] with [[S:3]]](https://example.org) here.[[USAGE:4]]

[^cost]: Running costs depend on tariffs.[[S:4]]
[^ins]: Loft first.[[S:5]]
"""
EXTRA_POOL = [
    {"sid": 1, "title": "One", "url": "https://one.org/a"},
    {"sid": 2, "title": "Two", "url": "https://two.org/b"},
    {"sid": 3, "title": "Three", "url": "https://three.org/c"},
    {"sid": 4, "title": "Four", "url": "https://four.org/d"},
    {"sid": 5, "title": "Five, the same page as two", "url": "https://two.org/b"},
]


def session(content: str, sample: Sample, out: Path, numbering: NumberingMode,
            **options: Any) -> Session:
    """``content`` read against ``sample``'s pool with its options (format detected)."""
    return open_session(content, out, sources_pool=str(sample.pool), base_dir=sample.input.parent,
                        numbering=numbering, **{**sample.options, **options})


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Each markdown sample's standalone HTML, as a web app stores it."""
    out = tmp_path_factory.mktemp("own-html")
    return {
        sample.name: session(sample.input.read_text("utf-8"), sample, out, "appearance")
        .artifact("html").text()
        for sample in MARKDOWN
    }


def citations(rdoc_session: Session) -> list[tuple[tuple[int, ...], tuple[int, ...], bool]]:
    """Each shown citation: the sids its numbers stand for, its numbers, whether joined."""
    plan = rdoc_session.rdoc.plan
    return [
        (plan.linked_sids(node.sids), node.numbers, node.joined)
        for node in iter_inlines(rdoc_session.rdoc.document.blocks)
        if isinstance(node, Cite) and node.numbers
    ]


def shown_markdown(text: str) -> str:
    """Markdown output as read: white space and quote marks collapsed (the HTML has no soft
    line breaks), and without the ``lang`` the page declares (the HTML page always says its
    language; the markdown may have left it to be detected)."""
    text = re.sub(r"^---\n((?:.*\n)*?)---\n", lambda m: _without_lang(m.group(1)), text)
    return " ".join(re.sub(r"(?m)^(?:> ?)+", "", text).split())


def _without_lang(front: str) -> str:
    kept = "".join(line for line in front.splitlines(keepends=True)
                   if not line.startswith("lang:"))
    return f"---\n{kept}---\n" if kept else ""


def shown_html(text: str) -> str:
    """HTML output without its stylesheet and script, white space collapsed."""
    text = re.sub(r"<style>.*?</style>|<script[^>]*>.*?</script>", "", text, flags=re.S)
    return " ".join(text.split())


def pair(
    sample: Sample, html: str, out: Path, numbering: NumberingMode
) -> tuple[Session, Session]:
    """The sample's markdown and its HTML, each read and resolved with ``numbering``."""
    direct = session(sample.input.read_text("utf-8"), sample, out / "direct", numbering)
    back = session(html, sample, out / "back", numbering)
    return direct, back


@pytest.mark.slow
@pytest.mark.parametrize("numbering", NUMBERINGS)
@pytest.mark.parametrize("sample", MARKDOWN, ids=MARKDOWN_IDS)
def test_the_html_cites_what_the_markdown_cites(
    sample: Sample, numbering: NumberingMode, written: dict[str, str], tmp_path: Path
) -> None:
    direct, back = pair(sample, written[sample.name], tmp_path, numbering)
    assert citations(back) == citations(direct)
    assert back.rdoc.plan.order == direct.rdoc.plan.order
    assert back.rdoc.plan.numbers == direct.rdoc.plan.numbers
    assert [(e.number, e.sid, e.title, e.url) for e in back.rdoc.entries] == [
        (e.number, e.sid, e.title, e.url) for e in direct.rdoc.entries]
    assert back.rdoc.usage_sids == direct.rdoc.usage_sids
    assert back.rdoc.title == direct.rdoc.title
    assert back.rdoc.document.authors == direct.rdoc.document.authors
    assert back.rdoc.document.own_page and not back.authors_look  # laid out as the report
    assert back.html_input() is None  # its stylesheet is the report's: Typst does not warn
    assert back.rdoc.notes == ()  # nothing the reader had to warn about


@pytest.mark.parametrize("sample", MARKDOWN, ids=MARKDOWN_IDS)
def test_markdown_and_html_written_again_show_the_same(
    sample: Sample, written: dict[str, str], tmp_path: Path
) -> None:
    direct, back = pair(sample, written[sample.name], tmp_path, "appearance")
    assert shown_markdown(back.artifact("md").text()) == shown_markdown(
        direct.artifact("md").text())
    assert shown_html(back.artifact("html").text()) == shown_html(direct.artifact("html").text())


@pytest.mark.parametrize(
    "options",
    [{}, {"csl": "apa"}, {"csl": "chicago-note", "toc": True}, {"citation_format": "brackets"}],
    ids=["superscript", "apa", "chicago-note-toc", "brackets"],
)
@pytest.mark.parametrize("numbering", NUMBERINGS)
def test_notes_tasks_links_and_styles_come_back(
    options: dict[str, Any], numbering: NumberingMode, tmp_path: Path
) -> None:
    """Author notes are notes again, task items tasks, a style's citations citations; the
    page written again is the page read."""
    direct = open_session(EXTRA, tmp_path, sources_pool=EXTRA_POOL, numbering=numbering,
                          content_format="markdown", **options)
    html = direct.artifact("html").text()
    back = open_session(html, tmp_path, sources_pool=EXTRA_POOL, numbering=numbering,
                        **options)
    assert citations(back) == citations(direct)
    assert back.rdoc.usage_sids == direct.rdoc.usage_sids == (4,)
    assert shown_html(back.artifact("html").text()) == shown_html(html)
    assert shown_markdown(back.artifact("md").text()) == shown_markdown(
        direct.artifact("md").text())


def test_a_citation_records_the_sids_its_numbers_stand_for(tmp_path: Path) -> None:
    """Written order kept (appearance numbering), unknown sids left out, a merged citation
    (out of a link) and a deduplicated source's own sid."""
    html = open_session(EXTRA, tmp_path, sources_pool=EXTRA_POOL,
                        content_format="markdown").artifact("html").text()
    assert re.findall(r'<sup class="cite" id="cite-\d+" data-sids="([\d,]*)"', html) == [
        "2", "1", "5", "3", "1", "2,3", "4", "5"]


def test_the_generated_parts_are_not_content(written: dict[str, str]) -> None:
    document = read_html(written["research-report"])
    text = json.dumps([repr(block) for block in document.blocks], ensure_ascii=False)
    assert "\u2191" not in text  # back-link arrows
    assert "src-" not in text and "iea.org" not in text  # the Sources list
    assert document.own_page


def test_a_users_page_keeps_its_own_sources_section() -> None:
    """Without the generator meta, a ``section.sources`` (and the rest) is the author's."""
    page = (
        '<html><head><meta name="generator" content="Hugo"></head><body>'
        '<p>Claim.<sup class="cite" data-sids="1">1</sup></p>'
        '<section id="sources" class="sources"><h2>Sources</h2>'
        "<ol><li>Our own reading list <a class=\"backlink\" href=\"#x\">\u2191</a></li></ol>"
        '</section><h1 class="doc-title">Not a title</h1></body></html>'
    )
    document = read_html(page)
    text = json.dumps([repr(block) for block in document.blocks], ensure_ascii=False)
    assert "Our own reading list" in text and "\u2191" in text and "Not a title" in text
    assert not document.own_page


def test_a_pasted_generator_meta_is_only_trusted_for_what_the_writer_makes() -> None:
    """A page that says citerender wrote it still loses nothing of its own: classes the writer
    never uses stay text, and script or style text never reaches the document."""
    page = (
        '<html><head><meta name="generator" content="citerender">'
        "<style>p{color:red}</style></head><body>"
        '<p class="lead">Kept <span class="cite" data-sids="2">(Two)</span>.</p>'
        "<script>alert(1)</script></body></html>"
    )
    document = read_html(page)
    assert [n.sids for n in iter_inlines(document.blocks) if isinstance(n, Cite)] == [(2,)]
    text = json.dumps([repr(block) for block in document.blocks], ensure_ascii=False)
    assert "Kept" in text and "color" not in text and "alert" not in text


@pytest.mark.parametrize("part", ['<header class="sources">', '<header class="toc">',
                                  '<div class="sources">'])
def test_a_part_the_writer_never_makes_is_read_and_audited(part: str, tmp_path: Path) -> None:
    """Only the parts the writer makes are left out, the same ones by the reader and the audit:
    a crafted ``<header class="sources">`` is the author's, its tokens checked by both."""
    tag = part[1:part.index(" ")]
    page = ('<html><head><meta name="generator" content="citerender"></head><body>'
            f"<p>Before [[S:1]].</p>{part}<p>Inside [[S:2]] and [[S:x]].</p></{tag}></body></html>")
    pool = [{"sid": n, "title": f"T{n}", "url": f"https://e.org/{n}"} for n in (1, 2)]
    (result,) = render(page, tmp_path, sources_pool=pool, formats=["md"])
    assert any("[[S:x]]" in warning for warning in result.warnings)
    assert "Inside [^2]" in (tmp_path / "report.md").read_text("utf-8")
    report = audit(page, pool)
    assert list(report.cited_sids) == used(tmp_path / "report.md")[0][1] == [1, 2]
    assert [token.text for token in report.invalid_tokens] == ["[[S:x]]"]
    assert rebuilt_parts(page) == []


@pytest.mark.parametrize("part", ['<section class="sources"><h2>Sources</h2>',
                                  '<header class="title-block"><p class="subtitle">S</p>'])
def test_text_that_ran_into_a_rebuilt_part_is_not_left_out_silently(part: str) -> None:
    """A pasted page whose Sources section (or title block) is never closed holds the
    author's text after it, which the reader leaves out with the part: a note says so."""
    page = ('<html><head><meta name="generator" content="citerender"></head><body>'
            f"<p>Before [[S:1]].</p>{part}<p>The author's text [[S:2]].</p></body></html>")
    document = read_html(page)
    assert "author's text" not in json.dumps([repr(b) for b in document.blocks])
    (note,) = document.notes
    assert "never writes there, left out with the part" in note.message


def test_an_invalid_usage_meta_or_citation_is_quoted_briefly() -> None:
    """A pasted page's USAGE meta of 10 kB, or a citation with 100,000 characters of text,
    is named by its first 80 characters in the note, not copied whole into it."""
    page = ('<html><head><meta name="generator" content="citerender">'
            f'<meta name="citerender-usage" content="-1, {",".join(["2"] * 5000)}"></head>'
            f'<body><p>x<sup class="cite" data-sids="0">{"y" * 100_000}</sup></p></body></html>')
    document = read_html(page)
    assert len(document.notes) == 2
    assert all(len(note.message) < 200 and "…" in note.message for note in document.notes)
    assert document.usage_sids == ()


@pytest.mark.parametrize("sample", MARKDOWN, ids=MARKDOWN_IDS)
def test_the_audit_of_the_html_counts_what_its_render_cites(
    sample: Sample, written: dict[str, str], tmp_path: Path
) -> None:
    """The same citations and numbers as render of either input; the markdown's audit counts
    speaker notes too, which no HTML shows (PPTX only)."""
    html_audit = audit(written[sample.name], str(sample.pool))
    assert not html_audit.invalid_tokens
    plan = session(sample.input.read_text("utf-8"), sample, tmp_path, "appearance").rdoc.plan
    assert html_audit.cited_sids == plan.order
    assert html_audit.numbers == plan.numbers
    markdown_audit = audit(sample.input.read_text("utf-8"), str(sample.pool))
    assert html_audit.usage_sids == markdown_audit.usage_sids
    if "::: notes" not in sample.input.read_text("utf-8"):
        assert html_audit.cited_sids == markdown_audit.cited_sids
        assert html_audit.orphaned_sids == markdown_audit.orphaned_sids


def test_the_audit_leaves_the_rebuilt_parts_out_of_its_coverage(written: dict[str, str]) -> None:
    """The Sources list's entries are no paragraphs of the author's: uncited, they would lower
    the coverage of every page read back."""
    page = written["engineering-note"]  # with its contents
    parts = [page[start:end] for start, end in rebuilt_parts(page)]
    assert [part[:40] for part in parts] == [
        '<nav id="contents" class="toc" role="doc', '<section id="sources" class="sources" di']
    assert all(part.endswith(("</nav>", "</section>")) for part in parts)
    assert "src-1" in parts[1] and "Why forecast dispatch" not in parts[1]


def rendered_pair(sample: Sample, html: str, out: Path, formats: tuple[str, ...]
                  ) -> Iterator[tuple[Path, Path]]:
    """``formats`` of the sample rendered from its markdown and from its HTML, file by file,
    each with its ``sources_used.json`` next to it."""
    for name, content in (("direct", sample.input.read_text("utf-8")), ("back", html)):
        render(content, out / name, name="r", formats=formats, sources_pool=str(sample.pool),
               base_dir=sample.input.parent, **sample.options)
    for fmt in formats:
        yield out / "direct" / f"r.{fmt}", out / "back" / f"r.{fmt}"


def used(path: Path) -> list[tuple[str, list[int], dict[str, int], list[int]]]:
    """The records of ``sources_used.json`` next to ``path``: format, sids, numbers, usage."""
    records = json.loads((path.parent / "sources_used.json").read_text("utf-8"))
    return sorted((r["format"], r["sids"], r["numbers"], r["usage_sids"]) for r in records)


@pytest.mark.slow
@pytest.mark.parametrize("sample", MARKDOWN, ids=MARKDOWN_IDS)
def test_the_pdf_of_the_html_reads_as_the_pdf_of_the_markdown(
    sample: Sample, written: dict[str, str], tmp_path: Path
) -> None:
    (direct, back), = rendered_pair(sample, written[sample.name], tmp_path, ("pdf",))
    assert " ".join(pdf_text(back).split()) == " ".join(pdf_text(direct).split())
    assert used(back) == used(direct)


@pytest.mark.slow
@pytest.mark.libreoffice
def test_the_docx_of_the_html_reads_as_the_docx_of_the_markdown(
    written: dict[str, str], tmp_path: Path
) -> None:
    sample = next(s for s in MARKDOWN if s.name == "research-report")
    (direct, back), = rendered_pair(sample, written[sample.name], tmp_path, ("docx",))
    (tmp_path / "d").mkdir()
    (tmp_path / "b").mkdir()
    shown_direct, = convert_all_with_libreoffice([direct], tmp_path / "d")
    shown_back, = convert_all_with_libreoffice([back], tmp_path / "b")
    text = " ".join(pdf_text(shown_back).split())
    assert text == " ".join(pdf_text(shown_direct).split())
    assert "Sources" in text and "iea.org" in text
    assert used(back) == used(direct)


def test_the_title_block_comes_back_as_the_documents_metadata(tmp_path: Path) -> None:
    """A front matter's subtitle, authors, date and abstract shown under the title are read
    back as metadata, not as body text: the page written again is the page read, and its
    Markdown declares them as the markdown's did. The abstract comes back as blocks, its
    emphasis and citations (the document's first) too."""
    text = ("---\ntitle: Grid Report\nsubtitle: A look at queues\nauthor: [Ana Ruiz, Bo Li]\n"
            "date: 2024-05-01\nabstract: |\n  We *study* queues.[[S:3]]\n\n  Second paragraph."
            "[[S:2]]\n---\n\n# Intro\n\nText.[[S:1]]\n")
    direct = open_session(text, tmp_path, sources_pool=EXTRA_POOL, content_format="markdown")
    html = direct.artifact("html").text()
    back = open_session(html, tmp_path, sources_pool=EXTRA_POOL)
    document = back.rdoc.document
    assert (document.subtitle, document.authors, document.date) == (
        "A look at queues", ("Ana Ruiz", "Bo Li"), "2024-05-01")
    assert [plain_text(p.children) for p in document.abstract  # type: ignore[attr-defined]
            ] == ["We study queues.", "Second paragraph."]
    assert Emph((Text("study"),)) in document.abstract[0].children  # type: ignore[attr-defined]
    assert [n.numbers for n in iter_inlines(document.abstract) if isinstance(n, Cite)] == [
        (1,), (2,)]
    assert [e.sid for e in back.rdoc.entries] == [e.sid for e in direct.rdoc.entries] == [3, 2, 1]
    assert shown_html(back.artifact("html").text()) == shown_html(html)
    assert shown_markdown(back.artifact("md").text()) == shown_markdown(
        direct.artifact("md").text())
    report = audit(html, EXTRA_POOL).to_dict()
    assert (report["coverage"], report["cited_sids"], report["in_raw_html_sids"]) == (
        1.0, [3, 2, 1], [])


@pytest.mark.slow
@pytest.mark.parametrize("generator", [True, False], ids=["own-page", "generator-meta-gone"])
def test_a_written_page_laid_out_again_has_no_link_to_nowhere(
    generator: bool, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The page laid out again, as the report (its own) or in its author's look (its generator
    meta gone): the old Sources list's and notes' links lead to what the new page has, or are
    text; WeasyPrint finds an anchor for every link it draws."""
    html = open_session(EXTRA, tmp_path / "first", sources_pool=EXTRA_POOL,
                        content_format="markdown").artifact("html").text()
    if not generator:
        html = html.replace('<meta name="generator" content="citerender">', "")
    with caplog.at_level("WARNING", logger="weasyprint"):
        again = open_session(html, tmp_path / "again", sources_pool=EXTRA_POOL)
        assert again.authors_look is not generator
        pdf = again.write("pdf", tmp_path / "again.pdf", tmp_path, "again").path
    assert "No anchor" not in caplog.text
    text = " ".join(pdf_text(pdf).split())
    assert "Running costs depend on tariffs." in text and "Sources" in text
