"""The audit numbers what render numbers (``renderers.audit``): same sources, same numbers.

A generated document mixes the places a citation-looking token can stand — prose, emphasis,
code, raw HTML, links and their URLs, autolinks, footnotes, formulas, tables, headings,
reference definitions, unclosed ``<sup class="cite">`` — and the audit's numbers must equal the
citation pass's for every mix. Render is the judge: the audit reads with the same stages.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

import tests.hypothesis_profiles  # noqa: F401  (registers the Hypothesis profiles)
from citations.audit import audit as scanner_audit
from citations.pool import SourcePool
from citations.streaming import rewrite_text
from renderers import cli
from renderers.audit import audit
from renderers.readers.html import read_html
from renderers.readers.markdown import read_markdown
from renderers.resolve import resolve
from tests.fuzz_strategies import examples
from tests.helpers import pdf_text

ROWS = [{"sid": sid, "title": f"Source {sid}", "url": f"https://s{sid}.org"} for sid in range(1, 7)]
POOL = SourcePool.from_rows(ROWS)

#: HTML blocks of markdown and the markdown between them; ``{n}`` and ``{m}`` become sids.
RAW_HTML_BLOCK_PIECES = [
    "\n\n<div>\n[[S:{n}]] <!-- [[S:{m}]] -->\n</div>\n\n",
    "\n\n<details>\n<summary>Why [[S:{n}]]</summary>\n\n", "\n\n</details>\n\n",
    '\n\n<table><tr><td title="[[S:{m}]]">[[S:{n}]]</td></tr></table>\n\n',
    '\n\n<p align="center"><img src="a.png" alt="[[S:{m}]]"> [[S:{n}]]</p>\n\n',
    "\n\n<pre>\n[[S:{n}]]\n</pre>\n\n", "\n\n<div><code>[[S:{n}]]\n\n",
    '\n\n<ul><li><sup class="cite" data-sids="{n}">[S:{m}]</sup> <b>[[S:{m}]]\n\n',
    "\n\n<div>\n\n", "\n\n</div>\n\n", "x [[S:{n}]]",
    # a token over a line break (read as one line), in elements the sanitizer drops with
    # their content (a breakout tag ends <svg>), in elements shown as code
    "\n\n<div>[[S:\n{n}]] [[S:{m},\n  {n}]]</div>\n\n", "\n\n<p>a <svg><g>[[S:{n}]]</g></svg>\n\n",
    '\n\n<div><math><sup class="cite" data-sids="{n}">x</sup>[[S:{m}]]</math></div>\n\n',
    "\n\n<div><button>[[S:{n}]]</button><select>[[S:\n{m}]]</select></div>\n\n",
    "\n\n<div><svg><p>[[S:{n}]]</p></svg></div>\n\n",
    "\n\n<div><samp>[[S:{n}]]</samp> <tt>[[S:\n{m}]]</tt> <kbd>[[S:{m}]]</kbd></div>\n\n",
    "\n\n<div><p><samp>[[S:{n}]]</p><p>[[S:{m}]]</p></div>\n\n",
    # markup the sanitizer removes inside a token: the token is whole again
    "\n\n<p>[[S:<font>{n}</font>]] [[S:<!-- x -->{m}]] [[S:&#x3{n};]]</p>\n\n",
]

#: Headings ending in a pandoc attribute block (ATX and setext, in a quote, after closing
#: ``#``s, next to code and raw HTML) and ones that only look as if they did: a token in a block
#: is no citation (the reader takes the block off), one in the heading's text is.
HEADING_PIECES = [
    "\n\n## H [[S:{n}]] {{#h}}\n\n", '\n\n## H {{#h title="[[S:{n}]]"}}\n\n',
    "\n\n## H [[S:{m}]] {{.unlisted k=[[S:{n}]]}}\n\n", "\n\n# H ## {{-}}\n\n",
    "\n\n### {{k='[[S:{n}]]' -}}   \n\n", "\n\nT [[S:{m}]] {{t=\"[[S:{n}]]\"}}\n===\n\n",
    "\n\nTwo [[S:{m}]]\nlines {{#x k=[[S:{n},{m}]]}}\n---\n\n", "\n\n> ## Q {{t=[[S:{n}]]}}\n\n",
    '\n\n## `c` {{t="`[[S:{n}]]`"}}\n\n', '\n\n## a `[[S:{m}]] {{t="c`"}}\n\n',
    '\n\n## <b>x</b> {{t="<i>[[S:{n}]]</i>"}}\n\n', "\n\n## H [[USAGE:{n}]] {{t=[[S:0]]}}\n\n",
    # not blocks: the token is heading text and cites
    "\n\n## H \\{{t=[[S:{n}]]}}\n\n", "\n\n## H {{t=[[S:{n}]]}} x\n\n",
    "\n\n## H {{[[S:{n}]]}}\n\n", "\n\n## H {{#h}} ##\n\n", "\n\nP {{t=[[S:{n}]]}}\n\n",
    "\n\n```\n## C {{t=[[S:{n}]]}}\n```\n\n",
    # hostile blocks: escaped and unclosed quotes, a brace in a bare value, an id beyond ASCII,
    # tabs, a NUL, CRLF, character references, headings in a list and a quote in a list
    '\n\n## H {{k="a\\"[[S:{n}]]" #x}}\n\n', "\n\n## H {{k=a\\}}[[S:{n}]] #x}}\n\n",
    '\n\n## H {{k="[[S:{n}]]}}\n\n', "\n\n## H {{#ü k=[[S:{n}]]}}\n\n",
    "\n\n## H\t{{\tk=[[S:{n}]]\t}}\t\n\n", "\n\n- ## L {{k=[[S:{n}]]}}\n\n",
    "\n\n1. > ## Q {{k=[[S:{n}]]}}\n\n", "\n\n## H {{k=\x00[[S:{n}]]}}\n\n",
    "\n\n## H {{k=[[S:{n}]] }}\r\n\r\n", '\n\n## H {{k="&#x5b;[[S:{n}]]"}}\n\n',
    # not blocks: an emoji in an id, a block not closed, then a backslash, NBSP or a closing #,
    # a "block" inside a link's destination, a heading line inside an HTML block or a table
    "\n\n## H {{#a😀 k=[[S:{n}]]}}\n\n", "\n\n## H {{k=[[S:{n}]]\n\n",
    "\n\n## H {{k=[[S:{n}]]}}\\\n\n", "\n\n## H {{k=[[S:{n}]]}}\u00a0\n\n",
    "\n\n## H {{k=[[S:{n}]]}} #\n\n", "\n\n## H [x]({{k=[[S:{n}]]}})\n\n",
    "\n\n<div>\n## H {{k=[[S:{n}]]}}\n</div>\n\n", "\n\n| a |\n|---|\n| ## H {{k=[[S:{n}]]}} |\n\n",
]

#: Markdown pieces; ``{n}`` and ``{m}`` become sids 1-6.
MARKDOWN_PIECES = [
    "[[S:{n}]]", "[[S:{n},{m}]]", "[[S:{n}-{m}]]", "[[USAGE:{n}]]", "`[[S:{n}]]`", " word ",
    "*a [[S:{n}]]*", "**[[S:{n}]]**", "~~[[S:{n}]]~~", "\\[[S:{n}]]", "[[S:{n}]",
    "[t]([[S:{n}]])", "[t](https://x.org/[[S:{n}]])", "<https://x.org/[[S:{n}]]>",
    '<sup class="cite" data-sids="{n}">x</sup>', '<sup class="cite" data-sids="{n}">',
    "<!-- [[S:{n}]] -->", "<b>[[S:{n}]]</b>", '<a href="[[S:{n}]]">x</a>',
    "<code>[[S:{n}]]</code>", "![alt [[S:{n}]]](https://img.org/a.png)", "[^f]", "[^g]",
    "\n\n[^f]: note [[S:{n}]]\n\n", "\n\n[^g]: other [[S:{n}]]\n\n", "$x$", "$$\n[[S:{n}]]\n$$",
    "\n\n```\n[[S:{n}]]\n```\n\n", "\n\n    [[S:{n}]]\n\n", "\n\n> q [[S:{n}]]\n\n",
    "\n\n- item [[S:{n}]]\n", "\n\n| a | b |\n|---|---|\n| [[S:{n}]] | x |\n\n",
    "\n\n# H [[S:{n}]]\n\n", "[ref]", "\n\n[ref]: [[S:{n}]]\n\n", "\n", "\n\n", "<", "*", "[",
    "]", "(", ")", "`", "\\", "{{", "}}", *RAW_HTML_BLOCK_PIECES, *HEADING_PIECES,
]
HTML_PIECES = [
    "<p>a [[S:{n}]]</p>", '<sup class="cite" data-sids="{n},{m}">[{n}]</sup>', "[S:{n}]",
    "<code>[[S:{n}]]</code>", "<pre>[[S:{n}]]</pre>", '<a href="[[S:{n}]]">x</a>',
    "<!-- [[S:{n}]] -->", "<ul><li>[[S:{n}]]</li></ul>", "<script>[[S:{n}]]</script>",
    "<h2>T [[S:{n}]]</h2>", "<table><tr><td>[[S:{n}]]</td></tr></table>", " x ", "<p>", "</p>",
    "[[S:\n{n}]]", "<p>[[S:{n},\n  {m}]]</p>", "<pre>[[S:\n{n}]]</pre>", "<svg>[[S:{n}]]</svg>",
    "<svg><text>[[S:{n}]]</text><b>[[S:{m}]]</b></svg>", "<math><mi>[[S:{n}]]</mi></math>",
    '<math><sup class="cite" data-sids="{n}">x</sup></math>', "<button>[[S:{n}]]</button>",
    "<select><option>[[S:{n}]]</option></select>", "<template>[[S:{n}]]</template>",
    "<object>[[S:{n}]]</object>", "<samp>[[S:{n}]]</samp>", "<tt>[[S:{n}]]</tt>",
    "<kbd>[[S:{n}]]</kbd>", "<embed src=x>", "<p><samp>[[S:{n}]]</p>", "<button>",
    "<select>[[S:{n}]]<select>", "[[S:<font>{n}</font>]]", "[[S:{n}<!-- x -->,{m}]]",
    "[[S:&#x3{n};]]",
    # text standing in a list, a table or a definition list outside its items and cells
    "<ul>a [[S:{n}]]<li>b</li>c <b>[[S:{m}]]</b></ul>", "<ol><li>b</li>[[S:{n}]]</ol>",
    "<table>a [[S:{n}]]<tr><td>b</td></tr></table>", "<dl>a [[S:{n}]]<dt>t</dt></dl>",
]

sids = st.integers(min_value=1, max_value=6)


def documents(pieces: list[str]) -> st.SearchStrategy[str]:
    piece = st.tuples(st.sampled_from(pieces), sids, sids).map(
        lambda p: p[0].format(n=p[1], m=p[2])
    )
    return st.lists(piece, min_size=1, max_size=8).map("".join)


def render_numbers(text: str, content_format: str) -> dict[int, int]:
    read = read_markdown if content_format == "markdown" else read_html
    return dict(resolve(read(text), POOL).plan.numbers)


@pytest.mark.slow
@examples(300)
@given(text=documents(MARKDOWN_PIECES))
def test_markdown_audit_numbers_what_render_numbers(text: str) -> None:
    report = audit(text, ROWS, content_format="markdown")
    assert report.numbers == render_numbers(text, "markdown")
    assert set(report.cited_sids) == set(report.numbers)


@pytest.mark.slow
@examples(300)
@given(text=documents(RAW_HTML_BLOCK_PIECES))
def test_the_scanner_alone_numbers_html_blocks_as_render_does(text: str) -> None:
    # An HTML block's text cites, its markup and its code do not: the scanner (no document
    # model) and render agree on every mix, wrappers left open or closed by later blocks.
    report = scanner_audit(text, ROWS)
    assert report.numbers == render_numbers(text, "markdown")
    assert audit(text, ROWS).not_rendered_sids == ()


#: What the scanner alone reads as render does, headings' attribute blocks mixed in.
SCANNER_PIECES = [
    *HEADING_PIECES, "[[S:{n}]]", " word ", "`[[S:{n}]]`", "<b>[[S:{n}]]</b>", "{{", "}}", "\n",
    "\n\n- item [[S:{n}]]\n", "\n\n    [[S:{n}]]\n\n", "\n\n> q [[S:{n}]]\n\n",
]


@pytest.mark.slow
@examples(300)
@given(text=documents(SCANNER_PIECES))
def test_the_scanner_alone_reads_heading_attribute_blocks_as_render_does(text: str) -> None:
    # A token in a block is no citation for render, for the audit given its citations and
    # for the scanner alone, which lists it as not rendered: the two audits agree.
    alone, agreed = scanner_audit(text, ROWS), audit(text, ROWS)
    assert alone.numbers == agreed.numbers == render_numbers(text, "markdown")
    assert alone.not_rendered_sids == agreed.not_rendered_sids
    assert (alone.in_code_sids, alone.invalid_tokens) == (agreed.in_code_sids,
                                                          agreed.invalid_tokens)
    assert alone.to_dict() == agreed.to_dict()


@pytest.mark.parametrize("element", ["svg", "button", "select", "math", "template"])
@pytest.mark.parametrize("content_format", ["markdown", "html"])
def test_tokens_in_what_the_sanitizer_drops_are_reported_as_raw_html(
    element: str, content_format: str
) -> None:
    # These elements go with their content: the scanner knows it as render does.
    text = f"<div><{element}>[[S:2]]</{element}> [[S:1]]</div>\n"
    for report in (scanner_audit(text, ROWS, content_format=content_format),
                   audit(text, ROWS, content_format=content_format)):
        assert report.cited_sids == (1,) and report.in_raw_html_sids == (2,)
        assert report.not_rendered_sids == () and not report.ok
    assert render_numbers(text, content_format) == {1: 1}


@pytest.mark.parametrize("content_format", ["markdown", "html"])
def test_a_tag_that_ends_svg_starts_what_is_read(content_format: str) -> None:
    # "<svg><p>" is an empty <svg> and a paragraph: the sanitizer keeps that paragraph
    text = '<div><svg><p>[[S:2]]</p><sup class="cite" data-sids="3">x</sup></svg></div>\n'
    assert render_numbers(text, content_format) == {2: 1, 3: 2}
    assert scanner_audit(text, ROWS, content_format=content_format).numbers == {2: 1, 3: 2}


@pytest.mark.parametrize("content_format", ["markdown", "html"])
def test_samp_and_tt_are_code_for_the_scanner_as_for_the_reader(content_format: str) -> None:
    text = "<div><samp>[[S:2]]</samp> <tt>[[S:3]]</tt> <kbd>[[S:4]]</kbd> [[S:1]]</div>\n"
    for report in (scanner_audit(text, ROWS, content_format=content_format),
                   audit(text, ROWS, content_format=content_format)):
        assert report.in_code_sids == (2, 3) and report.cited_sids == (4, 1)


@pytest.mark.parametrize("content_format", ["markdown", "html"])
def test_a_token_over_a_line_break_in_html_text_is_one_citation(content_format: str) -> None:
    # The reader collapses HTML text's white space, as a browser shows it: "[[S: 1]]"
    text = "<div>\nA [[S:\n1]] and [[S:2,\n     3]], <code>[[S:\n4]]</code>.\n</div>\n"
    assert render_numbers(text, content_format) == {1: 1, 2: 2, 3: 3}
    for report in (scanner_audit(text, ROWS, content_format=content_format),
                   audit(text, ROWS, content_format=content_format)):
        assert report.numbers == {1: 1, 2: 2, 3: 3} and report.ok
    if content_format == "markdown":  # the streaming rewriter reads them as citations too
        assert rewrite_text(text)[0].count("^") == 4
    # in a markdown paragraph a line break still ends a token, for both
    assert render_numbers("A [[S:\n1]].\n", "markdown") == {}
    assert scanner_audit("A [[S:\n1]].\n", ROWS).cited_sids == ()


@pytest.mark.parametrize("content_format", ["markdown", "html"])
def test_a_token_the_sanitizer_makes_whole_again_cites_for_the_audit_too(
    content_format: str
) -> None:
    # The sanitizer unwraps <font> and drops comments, and the reader decodes references:
    # the reader reads [[S:1]], [[S:2,3]] and [[S:4]]. A kept <span> splits its token's text
    # (the reader reads no token there, so nothing cites); both name it invalid.
    text = ("<p>A [[S:<font>1</font>]] b [[S:2<!-- x -->,<FONT color=red>3</FONT>]] "
            "c [[S:&#52;]] d [[S:<span>5</span>]].</p>\n")
    assert render_numbers(text, content_format) == {1: 1, 2: 2, 3: 3, 4: 4}
    for report in (scanner_audit(text, ROWS, content_format=content_format),
                   audit(text, ROWS, content_format=content_format)):
        assert report.numbers == {1: 1, 2: 2, 3: 3, 4: 4}
        assert report.not_rendered_sids == ()
        (invalid,) = report.invalid_tokens
        assert invalid.text == "[[S:<span>5</span>]]"
    if content_format == "html":
        assert audit(text, ROWS, content_format="html").coverage == 1.0


@pytest.mark.parametrize(
    "html",
    ["<ul>Intro [[S:3]]<li>a [[S:1]]</li>then [[S:2]]</ul>",
     "<ol start=\"2\">Intro [[S:3]]<li>a [[S:1]]</li><li value=\"9\">b</li>then [[S:2]]</ol>",
     "<table>Intro [[S:3]]<tr><td>a [[S:1]]</td></tr>then [[S:2]]</table>",
     "<dl>Intro [[S:3]]<dt>a [[S:1]]</dt><dd>b</dd>then [[S:2]]</dl>"],
    ids=["ul", "ol", "table", "dl"],
)
def test_text_outside_a_lists_items_cites_as_a_browser_shows_it(
    html: str, tmp_path: Path
) -> None:
    """A browser shows text standing in ``<ul>`` outside any ``<li>`` (a table's moves before
    it): render kept it as text, its tokens uncited, while the audit counted them as not
    rendered. The PDF's Sources list numbers the three in the order they stand."""
    # a table's stray text all stands before it (the HTML parser's "foster parenting")
    numbers = {3: 1, 2: 2, 1: 3} if html.startswith("<table>") else {3: 1, 1: 2, 2: 3}
    assert render_numbers(html, "html") == numbers
    report = audit(html, ROWS, content_format="html")
    assert report.numbers == numbers and report.not_rendered_sids == ()
    page = tmp_path / "list.html"
    page.write_text(html, encoding="utf-8")
    (tmp_path / "pool.json").write_text(json.dumps(ROWS), encoding="utf-8")
    result = CliRunner().invoke(cli.app, [
        "render", str(page), "--pool", str(tmp_path / "pool.json"), "--to", "pdf,md",
        "--out", str(tmp_path / "out"),
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    words = " ".join(pdf_text(tmp_path / "out" / "list.pdf").split())
    body = [word for word in words.split(" Sources ")[0].split() if word != "b"]
    table = html.startswith("<table>")
    assert body == (["Intro", "then", "a"] if table else ["Intro", "a", "then"])
    cited = sorted(numbers, key=numbers.__getitem__)
    assert " ↑ ".join(f"Source {sid} — s{sid}.org" for sid in cited) in words
    written = (tmp_path / "out" / "list.md").read_text(encoding="utf-8")
    assert written.startswith("Intro [^1]") and f"then [^{numbers[2]}]" in written


@pytest.mark.parametrize("content_format", ["markdown", "html"])
def test_a_token_markup_splits_is_invalid_for_render_as_for_the_audit(
    content_format: str, tmp_path: Path
) -> None:
    """A tag the sanitizer keeps splits the token's text: the audit named it invalid while
    render kept it as text without a word, so ``--strict`` passed it."""
    text = ("<p>A [[S:<span>2</span>]] b\n[[S:1<b>,</b>3]] c [[S:<font>4</font>]] d [x] "
            "[[S:5]]</p>\n")
    read = read_html(text) if content_format == "html" else read_markdown(text)
    report = audit(text, ROWS, content_format=content_format)
    assert [(t.text, t.reason) for t in report.invalid_tokens] == [
        ("[[S:<span>2</span>]]", "split by markup (<span>)"),
        ("[[S:1<b>,</b>3]]", "split by markup (<b>)"),
    ]
    name = "HTML input" if content_format == "html" else "markdown input"
    lines = (1, 2) if content_format == "html" else (1, 1)  # an HTML block's notes: its line
    assert [note.message for note in read.notes] == [
        f"{name}, line {lines[0]}: invalid citation token '[[S:<span>2</span>]]': split by "
        "markup (<span>); kept as text",
        f"{name}, line {lines[1]}: invalid citation token '[[S:1<b>,</b>3]]': split by markup "
        "(<b>); kept as text",
    ]
    assert render_numbers(text, content_format) == report.numbers == {4: 1, 5: 2}
    page = tmp_path / ("split.html" if content_format == "html" else "split.md")
    page.write_text(text, encoding="utf-8")
    (tmp_path / "pool.json").write_text(json.dumps(ROWS), encoding="utf-8")
    command = ["render", str(page), "--pool", str(tmp_path / "pool.json"), "--to", "pdf"]
    result = CliRunner().invoke(cli.app, [*command, "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "split by markup (<span>); kept as text" in result.stderr
    words = " ".join(pdf_text(tmp_path / "out" / page.with_suffix(".pdf").name).split())
    assert words.startswith("A [[S:2]] b [[S:1,3]] c")
    strict = CliRunner().invoke(cli.app, [*command, "--out", str(tmp_path / "strict"), "--strict"])
    assert strict.exit_code == 1 and "split by markup (<b>)" in strict.stderr
    assert not (tmp_path / "strict").exists()


@pytest.mark.parametrize("space", [" ", "\u00a0", "\u3000"], ids=["space", "nbsp", "ideographic"])
@pytest.mark.parametrize("content_format", ["markdown", "html"])
def test_a_white_space_run_past_the_grammar_is_an_invalid_token_for_both(
    space: str, content_format: str
) -> None:
    # Up to 64 in a row before the colon are a token; more look intended but are not one:
    # both say so with an invalid-token note. HTML text's spaces (not the no-break or
    # ideographic ones) are one space to the reader, so there they cite.
    tokens = (f"[[S{space * 64}:1]]", f"[[S{space * 65}:2]]", f"[[{space * 200}S:3]]")
    text = f"A {tokens[0]} b {tokens[1]} c {tokens[2]}."
    text = f"<p>{text}</p>\n" if content_format == "html" else f"{text}\n"
    collapsed = content_format == "html" and space == " "
    cited = {1: 1, 2: 2, 3: 3} if collapsed else {1: 1}
    assert render_numbers(text, content_format) == cited
    read = read_html(text) if content_format == "html" else read_markdown(text)
    report = audit(text, ROWS, content_format=content_format)
    assert report.numbers == cited
    if collapsed:
        assert report.ok and read.notes == ()
        return
    assert [token.text for token in report.invalid_tokens] == list(tokens[1:])
    assert [token.reason for token in report.invalid_tokens] == [
        "65 white space characters in a row before its colon (at most 64)",
        "200 white space characters in a row before its colon (at most 64)"]
    assert [note.message.split(": invalid citation token ")[1][:3] for note in read.notes] == [
        "'[[", "'[["]


MISNESTED_CODE = [
    # (HTML, what render leaves in code): the parser's reading of misnested markup
    ("<p><code>[[S:1]]</p></code>[[S:2]]", (1,)),
    ("<pre><code>x</pre>[[S:3]]</code>", (3,)),  # the <code> goes on after the <pre>
    ("<code><pre>x</code>[[S:3]]</pre>", (3,)),
    ("<pre><code>[[S:4]]</pre>[[S:5]]</code>[[S:6]]", (4, 5)),
    ("<code>[[S:1]]<pre>[[S:2]]</code>[[S:3]]", (1, 2, 3)),
    ("<table><tr><td><code>[[S:1]]</td><td>[[S:2]]</td></tr></table>[[S:3]]", (1,)),
    ("<code><p>[[S:4]]</p></code>[[S:5]]", ()),  # blocks in code: read as blocks
    ("<samp>[[S:1]]<p>[[S:2]]</samp>[[S:3]]", ()),  # "</samp>" inside the <p> is ignored
    ("<p><b><code>[[S:1]]</b>[[S:2]]</code>[[S:3]]</p>", (1, 2)),
]


@pytest.mark.parametrize(("text", "in_code"), MISNESTED_CODE)
@pytest.mark.parametrize("content_format", ["markdown", "html"])
def test_misnested_code_is_where_render_reads_it(
    text: str, in_code: tuple[int, ...], content_format: str
) -> None:
    # The scanner reads code elements by their tags; render reads the parser's tree. Where
    # the two differ the audit says what render does: each token cited or in code. (In an
    # HTML block of markdown a <pre> is read apart: some of these are cited there.)
    text = f"<div>{text}</div>\n" if content_format == "markdown" else text
    numbers = render_numbers(text, content_format)
    report = audit(text, ROWS, content_format=content_format)
    assert report.numbers == numbers and report.not_rendered_sids == ()
    assert set(numbers).isdisjoint(report.in_code_sids)
    assert set(numbers) | set(report.in_code_sids) == set(map(int, re.findall(r"\d", text)))
    if content_format == "html":
        assert report.in_code_sids == in_code


def test_an_invalid_token_over_a_line_break_has_its_line_in_audit_and_render() -> None:
    text = "<p>First line\nthen [[S:\n0]] here</p>"
    (invalid,) = scanner_audit(text, ROWS, content_format="html").invalid_tokens
    assert (invalid.text, invalid.line) == ("[[S: 0]]", 2)
    (note,) = read_html(text).notes
    assert note.message.startswith("HTML input, line 2: invalid citation token '[[S: 0]]'")


@examples(150)
@given(text=documents(HTML_PIECES))
def test_html_audit_numbers_what_render_numbers(text: str) -> None:
    report = audit(text, ROWS, content_format="html")
    assert report.numbers == render_numbers(text, "html")
    assert report.not_rendered_sids == ()  # the scanner alone knows what render cites
    assert scanner_audit(text, ROWS, content_format="html").numbers == report.numbers


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        # A footnote is shown at the end: its citations are numbered after the body's, notes
        # in the order they are first referenced.
        ("A[^f] B [[S:1]] C[^g]\n\n[^g]: g [[S:3]]\n\n[^f]: f [[S:2]]\n", {1: 1, 2: 2, 3: 3}),
        ("[^f]: f [[S:2]]\n\nA[^f] B [[S:1]]\n", {1: 1, 2: 2}),
        # An unclosed citation sup is still a citation.
        ('A <sup class="cite" data-sids="3">x B [[S:1]]', {3: 1, 1: 2}),
        # A link whose target is a citation cites after its text.
        ("See [the study]([[S:2]]), then [[S:1]].", {2: 1, 1: 2}),
        ("A [ref] and [[S:1]].\n\n[ref]: [[S:2]]\n", {2: 1, 1: 2}),
    ],
)
def test_the_places_where_text_order_is_not_render_order(
    text: str, numbers: dict[int, int]
) -> None:
    assert audit(text, ROWS).numbers == numbers == render_numbers(text, "markdown")


@pytest.mark.parametrize(
    "text",
    [
        "Read <https://x.org/[[S:2]]> and [[S:1]].",
        "Read [it](https://x.org/[[S:2]]) and [[S:1]].",
        "A formula $$\n[[S:2]]\n$$ and [[S:1]].",
        "A reference never used and [[S:1]].\n\n[ref]: [[S:2]]\n",
    ],
)
def test_tokens_render_does_not_cite_are_reported(text: str) -> None:
    report = audit(text, ROWS)
    assert report.cited_sids == (1,) and report.not_rendered_sids == (2,)
    assert not report.ok and report.to_dict()["not_rendered_sids"] == [2]
    assert "Tokens render does not cite where they stand" in report.format_text()
    assert scanner_audit(text, ROWS).not_rendered_sids == ()  # the scanner alone cannot tell


@pytest.mark.parametrize(
    "text",
    [
        '## Costs {#costs title="[[S:2]]"}\n\nText [[S:1]].\n',
        "Costs {k=[[S:2]]}\n-----\n\nText [[S:1]].\n",
        "> ### Costs ## {.unlisted k='[[S:2]]'}\n\nText [[S:1]].\n",
    ],
    ids=["atx", "setext", "quoted-closing-hashes"],
)
def test_a_token_in_a_heading_attribute_block_is_not_rendered_for_both_audits(
    text: str,
) -> None:
    """The scanner reads the block as the reader does, so it needs no render to tell: both
    audits list the token as not rendered (not as raw HTML: the block is markdown, no tag)."""
    for report in (audit(text, ROWS), scanner_audit(text, ROWS)):
        assert report.cited_sids == (1,) and report.not_rendered_sids == (2,)
        assert report.in_raw_html_sids == () and not report.ok
        assert "a heading's attribute block): 2" in report.format_text()
    assert render_numbers(text, "markdown") == {1: 1}


def test_the_cli_audit_lists_a_token_in_a_heading_attribute_block(tmp_path: Path) -> None:
    text = ('# Report\n\n## Costs [[S:1]] {#costs .unlisted title="[[S:2]]"}\n\n'
            "See [the costs](#costs) [[S:3]].\n")
    (tmp_path / "doc.md").write_text(text, encoding="utf-8")
    (tmp_path / "doc.pool.json").write_text(json.dumps(ROWS), encoding="utf-8")
    result = CliRunner().invoke(cli.app, ["audit", str(tmp_path / "doc.md")])
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("2 cited, 0 unknown, 0 usage-only, 0 in code, 0 in raw HTML, "
                               "1 not rendered, 4 orphaned")
    assert "Numbers: S1→1, S3→2" in lines
    assert ("Tokens render does not cite where they stand (in a link's URL, a formula, a link "
            "reference definition or a heading's attribute block): 2") in lines
    assert lines[-1] == "PROBLEMS FOUND"
    as_json = CliRunner().invoke(cli.app, ["audit", str(tmp_path / "doc.md"), "--json"])
    assert json.loads(as_json.stdout)["not_rendered_sids"] == [2]
    assert json.loads(as_json.stdout) == scanner_audit(text, ROWS).to_dict()


def test_the_cli_and_the_tool_audit_as_render_numbers(tmp_path: Path) -> None:
    from renderers.tools import call_tool

    text = "A[^f] B [[S:1]] <https://x.org/[[S:4]]>\n\n[^f]: f [[S:2]]\n"
    (tmp_path / "doc.md").write_text(text, encoding="utf-8")
    (tmp_path / "doc.pool.json").write_text(json.dumps(ROWS), encoding="utf-8")
    result = CliRunner().invoke(cli.app, ["audit", str(tmp_path / "doc.md"), "--json"])
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert report["numbers"] == {"1": 1, "2": 2} and report["not_rendered_sids"] == [4]
    answer = call_tool("audit_citations", {"content": text, "sources_pool": ROWS},
                       out_dir=tmp_path)
    assert answer["audit"]["numbers"] == {"1": 1, "2": 2}
    assert any("sid 4 is not cited where it stands" in w for w in answer["warnings"])


#: Leading blocks: front matter (its tokens are metadata, never citations, but in its abstract,
#: which is markdown) and blocks that are not front matter (a rule, then text: their tokens cite
#: as any prose does).
FRONT_MATTER_PIECES = [
    "---\ntitle: T [[S:{n}]]\nabstract: |\n  Sum [[S:{m}]] `[[S:{n}]]`.\n\n  Two [[S:{n}]].\n---\n",
    '---\nabstract: "One [[S:{m}]] <i title=\'[[S:{n}]]\'>x</i>"\nauthor: "[[S:{n}]]"\n---\n',
    # the abstract as YAML decodes it: escapes, '' and folded or escaped line breaks
    '---\nabstract: "Esc [[S:\\u003{m}]] [[S:{n},\\\n  {m}]] \\x5b\\x5bS:{n}]]"\n---\n',
    "---\nabstract: >\n  Fold [[S:{n},\n  {m}]]\n\n      [[S:{m}]] code\n---\n",
    "---\nabstract: |\n      Para [[S:{n}]]\n\n      not code [[S:{m}]]\n---\n",
    "---\nabstract: 'Q''s [[S:{m}]]'\n---\n",
    '---\ntitle: "Report [[S:{n}]]"\nauthor: [[S:{m}]]\n---\n',
    "---\r\ntitle: T [[S:{n}]]\r\n...\r\n",
    "---\nkeywords: [\"`[[S:{n}]]`\", '<sup class=\"cite\" data-sids=\"{m}\">x</sup>']\n---\n",
    "---\nNot YAML: [[S:{n}]]: x\n---\n",  # does not parse: the author's text
    "---\nJust prose [[S:{n}]]\n---\n",  # a setext heading between rules
    "\n---\ntitle: [[S:{n}]]\n---\n",  # not at the top
    # odd but valid forms: a BOM, CR or tab line breaks and indents, tags, a flow mapping, a
    # complex key, chomping and indentation indicators, a comment after the header, YAML's
    # own line breaks (\N \L \P), a fence left open in the abstract, one token alone
    "\ufeff---\nabstract: |\n  A [[S:{n}]]\n---\n",
    "---\rabstract: |\r  A [[S:{n}]]\r\r  B [[S:{m}]]\r---\r",
    "---\r\nabstract: >\r\n  A [[S:{n},\r\n  {m}]]\r\n---\r\n",
    "---\nabstract: |\n\tTab [[S:{n}]]\n---\n",
    '---\nabstract: "A\\t[[S:{n}]]\\N[[S:{m}]]\\L[[S:{n}]]\\P x"\n---\n',
    "---\nabstract: !!str A [[S:{n}]]\n---\n",
    "---\nabstract: !custom A [[S:{n}]]\n---\n",  # an unknown tag: not YAML to safe_load
    "---\nabstract: &a A [[S:{n}]]\ntitle: *a\n---\n",  # an alias: refused, the author's text
    "---\nabstract: |\n  ```\n  [[S:{n}]]\n  ---\n---\n",
    "---\nabstract: |-\n  A [[S:{n}]]\n\n\n---\n",
    "---\nabstract: |2\n    indented [[S:{n}]]\n  A [[S:{m}]]\n---\n",
    "---\nabstract: |  # c [[S:{m}]]\n  A [[S:{n}]]\n---\n",
    '---\n{{abstract: "A\n  [[S:{n}]]", title: T}}\n---\n',
    "---\n? abstract\n: A\n  B [[S:{n}]]\n---\n",
    "---\nabstract: plain\n  continued [[S:{n}]]\n  # not a comment [[S:{m}]]\n---\n",
    "---\nabstract:\n  - A [[S:{n}]]\n---\n",  # a list: no abstract, metadata
    "---\nabstract: [[S:{n}]]\n---\n",
]


@pytest.mark.slow
@examples(200)
@given(
    head=st.tuples(st.sampled_from(FRONT_MATTER_PIECES), sids, sids).map(
        lambda p: p[0].format(n=p[1], m=p[2])
    ),
    text=documents(MARKDOWN_PIECES),
)
def test_front_matter_tokens_are_numbered_as_render_numbers_them(head: str, text: str) -> None:
    document = head + text
    numbers = render_numbers(document, "markdown")
    assert audit(document, ROWS).numbers == numbers
    assert scanner_audit(head + "\n", ROWS).numbers == render_numbers(head + "\n", "markdown")


def test_a_token_in_front_matter_is_reported_as_not_a_citation() -> None:
    text = '---\ntitle: "Report [[S:2]]"\n---\n\nBody [[S:1]].\n'
    for report in (audit(text, ROWS), scanner_audit(text, ROWS)):
        assert report.cited_sids == (1,) and report.in_raw_html_sids == (2,)
        assert "front matter" in report.format_text() and not report.ok
    assert read_markdown(text).title == "Report [[S:2]]"  # the title shows it as written


def test_a_token_in_the_front_matter_abstract_is_a_citation_and_the_first() -> None:
    text = ('---\ntitle: "Report [[S:3]]"\nabstract: |\n  Sum [[S:2]] and `[[S:4]]`.\n---\n\n'
            "Body [[S:1]].\n")
    for report in (audit(text, ROWS), scanner_audit(text, ROWS)):
        assert report.cited_sids == (2, 1) and report.numbers == {2: 1, 1: 2}
        assert (report.in_raw_html_sids, report.in_code_sids) == ((3,), (4,))


@pytest.mark.parametrize("newline", ["\r", "\r\n", "\n"], ids=["cr", "crlf", "lf"])
@pytest.mark.parametrize("content_format", ["markdown", "html"])
def test_a_tokens_line_is_renders_with_any_line_break(newline: str, content_format: str) -> None:
    """A bare CR ends a line for both readers (markdown-it's and the HTML parser's line
    breaks): the audit named every token of a CR-only file line 1, and a front matter
    abstract's by its own line, so a body's came before it."""
    lines = ["---", "abstract: |", "  A [[S:0]]", "---", "", "Body", "B [[S:x]] [[S:1]]"]
    if content_format == "html":
        lines = ["<p>A", "[[S:0]]</p>", "", "<p>Body", "B [[S:x]] [[S:1]]</p>"]
    text = newline.join(lines) + newline
    read = read_html(text) if content_format == "html" else read_markdown(text)
    rendered = [int(re.findall(r"line (\d+)", note.message)[0]) for note in read.notes]
    for report in (audit(text, ROWS, content_format=content_format),
                   scanner_audit(text, ROWS, content_format=content_format)):
        assert [token.line for token in report.invalid_tokens] == rendered
    assert rendered == ([3, 7] if content_format == "markdown" else [2, 5])


def test_the_property_tests_run_as_many_examples_as_the_profile_asks() -> None:
    """Each property test's count is tuned to the "ci" profile (the default, and the fast loop:
    the same counts as before) and scaled with the profile loaded, so ``make fuzz`` (profile
    "fuzz", ``-k fuzz``) runs each 33 times as many; it selects them by the name ``fuzz``."""
    from hypothesis import settings
    from hypothesis import strategies as st

    from tests.fuzz_strategies import scaled_examples

    ci, fuzz = settings.get_profile("ci"), settings.get_profile("fuzz")
    assert [scaled_examples(n, ci) for n in (300, 150, 25)] == [300, 150, 25]
    assert [scaled_examples(n, fuzz) for n in (300, 150, 25)] == [10_000, 5_000, 833]
    calls: list[int] = []

    @examples(7)
    @given(st.integers())
    def probe(number: int) -> None:
        calls.append(number)

    probe()
    assert len(calls) == scaled_examples(7)
    for test in (probe, test_markdown_audit_numbers_what_render_numbers,
                 test_html_audit_numbers_what_render_numbers):
        # the marker make fuzz's -k fuzz matches besides the test's own name
        assert any(mark.name == "fuzz" for mark in getattr(test, "pytestmark", ()))
