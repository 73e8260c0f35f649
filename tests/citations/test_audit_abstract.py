"""The audit judges the front matter abstract as render reads it: its YAML value decoded (escapes,
``''``, folded and joined lines), the paragraphs and code render sees in it, each token named by
the front matter line it was typed on; and the abstract's paragraphs count in the coverage."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from citations.audit import audit as scanner_audit
from renderers import cli
from renderers.audit import audit
from renderers.document import Cite, Paragraph, reading_blocks, walk_inlines
from renderers.readers.markdown import read_markdown
from renderers.resolve import resolve
from tests.citations.test_audit_agrees_with_render import POOL, ROWS

BODY = "\n\nBody [[S:3]] and [[S:5]].\n\nUncited.\n"

#: ``(front matter, lines of its invalid tokens as typed)`` for each way YAML writes a string;
#: each abstract holds a token that reads otherwise as typed than as decoded.
FORMS = {
    "double-quoted, a \\u escape": ('abstract: "Sum [[S:\\u0031]] and [[S:0]]."', [2]),
    "double-quoted, \\x escapes make the brackets": ('abstract: "\\x5b\\x5bS:2]] opens [[S:0]]"',
                                                     [2]),
    "double-quoted, an escaped line break in a token": (
        'abstract: "Sum [[S:1,\\\n  2]]\n\n  Two [[S:0]]."', [5]),
    "single-quoted, '' escapes": ("abstract: 'It''s [[S:1]]; ''[[S:2]]''\n  and [[S:0]]'", [3]),
    "folded, a token over a line and more-indented code": (
        "abstract: >\n  Sum [[S:1,\n  2]] and [[S:\n  0]]\n\n\n      [[S:4]] code\n", [4]),
    "literal, indented past what markdown calls code": (
        "abstract: |\n      Para [[S:1]].\n\n      Two [[S:2]] and\n      [[S:0]].\n", [6]),
    "plain over several lines": ("abstract: Sum [[S:1,\n  2]] and\n  more [[S:0]]\n\n  Two.", [4]),
}


def _document(front: str) -> str:
    return f"---\n{front}\n---{BODY}"


def _render_coverage(text: str) -> float:
    """The share of paragraphs render reads (the abstract's and the body's) with a citation."""
    paragraphs = [block for block in reading_blocks(read_markdown(text))
                  if isinstance(block, Paragraph)]
    cited = [p for p in paragraphs if any(isinstance(n, Cite) for n in walk_inlines(p.children))]
    return round(len(cited) / len(paragraphs), 4)


@pytest.mark.parametrize(("front", "lines"), FORMS.values(), ids=FORMS.keys())
def test_render_and_the_audit_agree_on_each_scalar_form(front: str, lines: list[int]) -> None:
    text = _document(front)
    rdoc = resolve(read_markdown(text), POOL)
    noted = re.findall(r"line (\d+): invalid citation token '([^']*)'",
                       "\n".join(note.message for note in rdoc.notes))
    for report in (audit(text, ROWS), scanner_audit(text, ROWS)):
        assert report.numbers == dict(rdoc.plan.numbers)
        assert [token.text for token in report.invalid_tokens] == [t for _, t in noted]
        assert [token.line for token in report.invalid_tokens] == lines  # as typed
        assert [int(line) for line, _ in noted] == lines  # render's notes name them so too
        assert (report.not_rendered_sids, report.in_raw_html_sids) == ((), ())
        assert report.coverage == _render_coverage(text)
    in_code = audit(text, ROWS).in_code_sids
    assert in_code == ((4,) if "code" in front else ())


#: An abstract's markdown lines, each token typed once: lines YAML folds into one (a token's
#: column tells its line), a quote's and a list item's marks before a token, token warnings.
TYPED = ["Sum [[S:1]] and", "more [[S:0]] [[S:2,2]]", "", "> quoted [[S:3-2]]",
         "> and [[S:1,0]]", "", "- an item", "  with [[S:0,2]]", "", "1. [[S:x]]"]


def _typed_as(style: str) -> str:
    """The ``abstract`` key with :data:`TYPED` written in a YAML scalar ``style``."""
    if style in "|>":
        return f"abstract: {style}\n" + "".join(f"  {line}\n" if line else "\n" for line in TYPED)
    quote = {"double-quoted": '"', "single-quoted": "'", "plain": ""}[style]
    lines = [f"  {line}" if n and line else line for n, line in enumerate(TYPED)]
    return f"abstract: {quote}" + "\n".join(lines) + quote


@pytest.mark.parametrize("style", ["|", ">", "plain", "double-quoted", "single-quoted"])
def test_render_s_notes_name_the_line_the_audit_names(style: str) -> None:
    """Render reads the abstract decoded, its lines folded or not, and its notes name the line
    each token was typed on, as the audit does (the audit's mapping, one for both)."""
    text = _document(_typed_as(style))
    notes = "\n".join(note.message for note in read_markdown(text).notes)
    noted = sorted((int(line), token) for line, token in
                   re.findall(r"line (\d+): (?:invalid citation token )?'([^']*)'", notes))
    typed = text.splitlines()
    assert noted == sorted(
        (next(n for n, line in enumerate(typed, 1) if token in line), token)
        for token in ("[[S:0]]", "[[S:2,2]]", "[[S:3-2]]", "[[S:1,0]]", "[[S:0,2]]", "[[S:x]]"))
    for report in (audit(text, ROWS), scanner_audit(text, ROWS)):
        judged = [(token.line, token.text) for token in report.invalid_tokens] + [
            (int(line), token) for line, token in
            (re.match(r"line (\d+): (\S+):", w).groups() for w in report.warnings)]  # type: ignore[union-attr]
        assert sorted(judged) == noted


#: A token whose content line is no end of its typed line, on the second of two folded ones.
WITHIN_LINES = {
    "a table cell": 'abstract: "| h | h2 |\n\n  |---|---|\n\n  | x\n  | [[S:0]] |"',
    "a heading closed by #": 'abstract: "# Head\n  [[S:0]] ##"',
}


@pytest.mark.parametrize("front", WITHIN_LINES.values(), ids=WITHIN_LINES.keys())
def test_a_token_inside_a_folded_line_is_named_by_its_typed_line(front: str) -> None:
    text = _document(front)
    notes = "\n".join(note.message for note in read_markdown(text).notes)
    noted = re.findall(r"line (\d+): invalid", notes)
    typed = next(n for n, line in enumerate(text.splitlines(), 1) if "[[S:0]]" in line)
    assert [int(line) for line in noted] == [typed]
    assert [token.line for token in audit(text, ROWS).invalid_tokens] == [typed]


def test_the_reader_s_other_notes_on_the_abstract_name_typed_lines() -> None:
    """A link that leads nowhere, a refused image and a bad cite ``<sup>``, each on its own
    line of a quoted abstract whose blank lines are read as one break each."""
    front = ("abstract: \"One.\n\n\n  [x](#nowhere) ![i](javascript:x)\n\n\n"
             "  <sup class='cite' data-sids='0'>1</sup>\"")
    document = read_markdown(_document(front))
    lines = [(note.line, note.message.split(": ", 1)[1][:12])
             for note in (*document.notes, *document.diagnostics)]
    assert sorted(lines) == [(5, "image 'javas"), (5, "the link to "), (8, "invalid cita")]


def test_the_abstract_s_tokens_are_judged_decoded_and_the_title_s_stay_metadata() -> None:
    text = _document('title: "T [[S:2]]"\nabstract: "A [[S:\\u0031]] b."')
    report = audit(text, ROWS)
    assert report.cited_sids == (1, 3, 5) and report.invalid_tokens == ()
    assert report.in_raw_html_sids == (2,)  # the title's token: shown as typed, cites nothing
    assert read_markdown(text).title == "T [[S:2]]"


def test_a_front_matter_of_the_abstract_s_own_is_its_text() -> None:
    # render reads the abstract on its own, never as a document with front matter
    text = _document('abstract: "---\\nkey: [[S:1]]\\n---\\n\\nText [[S:2]]."')
    assert audit(text, ROWS).numbers == dict(resolve(read_markdown(text), POOL).plan.numbers)
    assert audit(text, ROWS).in_raw_html_sids == ()


def test_the_cli_audits_an_escaped_abstract_as_render_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "doc.md"
    path.write_text(_document('abstract: "Sum [[S:\\u0031]].\\n\\nMore."'), encoding="utf-8")
    (tmp_path / "doc.pool.json").write_text(json.dumps(ROWS), encoding="utf-8")
    result = CliRunner().invoke(cli.app, ["audit", str(path), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["cited_sids"] == [1, 3, 5] and report["invalid_tokens"] == []
    assert report["coverage"] == 0.5  # "Sum", not "More.", then the body's cited paragraph


def test_a_page_citerender_wrote_counts_its_abstract_as_the_markdown_did() -> None:
    """The HTML page is read back with its abstract (the title block's other lines and the
    word "Abstract" are the writer's): its audit covers what the markdown's covers."""
    from tests.support.render import render_markdown

    text = _document("subtitle: Sub\nabstract: |\n  Sum [[S:1]].\n\n  - item [[S:2]]\n\n  More.")
    page = render_markdown("html", text, ROWS).decode()
    written, read = audit(page, ROWS, content_format="html"), audit(text, ROWS)
    assert read.coverage == 0.6  # Sum, item and Body of Sum, item, More, Body and Uncited
    assert (written.coverage, written.numbers) == (read.coverage, read.numbers)


#: A value that opens a fence: YAML, never markdown (a subtitle's), or the abstract's own
#: markdown, which ends with it. Either way the body after the front matter is prose.
FENCES = {
    "a subtitle's": "subtitle: |\n  ```\n  x",
    "the abstract's": "abstract: |\n  Sum [[S:1]].\n\n  ```\n  [[S:2]]",
    "a quoted title's": 'title: "x\n\n  ```"',
}


@pytest.mark.parametrize("front", FENCES.values(), ids=FENCES.keys())
def test_a_fence_in_front_matter_never_runs_on_into_the_body(front: str) -> None:
    text = _document(front)
    numbers = dict(resolve(read_markdown(text), POOL).plan.numbers)
    assert 3 in numbers and 5 in numbers  # the body's citations
    for report in (audit(text, ROWS), scanner_audit(text, ROWS)):
        assert report.numbers == numbers and report.coverage == _render_coverage(text)
        assert report.in_code_sids == ((2,) if "[[S:2]]" in front else ())


def test_the_numeric_dialect_cites_the_body_after_a_fence_in_front_matter(
    tmp_path: Path,
) -> None:
    """Numeric citations are mapped to sids on the text before it is read, by the scanner:
    a fence-like line in a value hid the body's ``[2]`` as code, and the page cited nothing."""
    from renderers.api import write_html

    text = "---\ntitle: T\nsubtitle: |\n  ```\n---\n\nBody [2] and [3].\n"
    result = write_html(text, tmp_path / "doc.html", sources_pool=ROWS, dialects="numeric")
    page = (tmp_path / "doc.html").read_text(encoding="utf-8")
    assert re.findall(r'class="cite"[^>]*data-sids="(\d+)"', page) == ["2", "3"]
    assert result.sources_used == [2, 3]


def _yaml_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the front matter's YAML loader is given from now on, in order."""
    import citations.front_matter as front_matter_module

    reads: list[str] = []
    make = front_matter_module._no_alias_loader

    def counted() -> type:
        loader = make()

        class Counted(loader):  # type: ignore[misc, valid-type]
            def __init__(self, stream: str) -> None:
                reads.append(stream)
                super().__init__(stream)

        return Counted

    monkeypatch.setattr(front_matter_module, "_no_alias_loader", counted)
    return reads


@pytest.mark.parametrize("front", [FORMS["literal, indented past what markdown calls code"][0],
                                   "title: T [[S:1]]\nsubtitle: |\n  ```\n  x"])
def test_the_audit_parses_the_front_matter_once(
    front: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scan, the coverage units and the abstract all ask where the front matter is: one
    parse answers them (at the 64 KB limit a parse is 80 ms). The abstract's lines are found
    by one more read of the block, with marks, which is another text."""
    text = _document(front)
    expected = scanner_audit(text, ROWS).to_dict()
    reads = _yaml_reads(monkeypatch)
    assert scanner_audit(text, ROWS).to_dict() == expected
    assert reads.count(f"{front}") == 1
    assert len(reads) == (2 if "abstract" in front else 1)


@pytest.mark.parametrize("front", [*(form for form, _ in FORMS.values()), *FENCES.values()])
def test_a_scan_handed_the_front_matter_finds_what_it_finds_alone(front: str) -> None:
    from citations.front_matter import front_matter
    from citations.tokens import scan

    text = _document(front)
    assert scan(text, found=front_matter(text)) == scan(text)
