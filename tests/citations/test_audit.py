"""The citation audit: exact JSON keys, problems found, numbering and coverage."""

from __future__ import annotations

import json

import pytest

from citations.audit import audit
from citations.pool import SourcePool
from citations.tokens import parse_sid_spec
from renderers.document import Cite, iter_inlines
from renderers.readers.html import read_html
from renderers.readers.markdown import read_markdown

KEYS = {
    "cited_sids", "unknown_sids", "usage_sids", "in_code_sids", "in_raw_html_sids",
    "not_rendered_sids", "orphaned_sids", "invalid_tokens", "numbers", "coverage", "contiguous",
    "ok",
}

MARKDOWN = """# Energy [[S:1]]

Solar grew [[S:3]] while [[S:99]] is unknown.

A paragraph without a citation. [[USAGE:5]]

- item cites [[S:4]]
- item with `[[S:2]]` in code only
  continued

```
[[S:6]]
```

Bad [[S:abc]] and [[S:5-2]].
"""


@pytest.fixture
def pool(sample_pool: list[dict[str, object]]) -> SourcePool:
    rows = [*sample_pool, {"sid": 6, "title": "Six", "url": "https://six.org/"},
            {"sid": 7, "title": "Seven", "url": "https://seven.org/"}]
    return SourcePool.from_rows(rows)


def test_markdown_report(pool: SourcePool) -> None:
    report = audit(MARKDOWN, pool)
    data = report.to_dict()
    assert set(data) == KEYS
    assert json.loads(json.dumps(data)) == data
    assert data["cited_sids"] == [1, 3, 4, 2, 5]
    assert data["unknown_sids"] == [99]
    assert data["usage_sids"] == [5]
    assert data["in_code_sids"] == [2, 6]
    # sid 4 is a duplicate of sid 1 (same normalized URL): it shares number 1
    assert data["numbers"] == {"1": 1, "3": 2, "4": 1, "2": 3, "5": 4}
    assert data["orphaned_sids"] == [6, 7]
    assert data["invalid_tokens"] == [
        {"text": "[[S:abc]]", "line": 15,
         "reason": "'abc' is not a sid or a range (expected e.g. 1, 3-5)"},
    ]
    # prose units: 3 paragraphs + 2 list items; cited: "Solar…", item 1, "Bad…"
    assert data["coverage"] == 0.6
    assert data["ok"] is False


def test_clean_document_is_ok(pool: SourcePool) -> None:
    report = audit("One [[S:1]].\n\nTwo [[S:2,3]].\n", pool)
    assert report.ok and report.to_dict()["coverage"] == 1.0
    assert report.numbers == {1: 1, 2: 2, 3: 3}
    assert "OK" in report.format_text()


def test_each_problem_alone_fails(pool: SourcePool) -> None:
    assert not audit("x [[S:42]]", pool).ok
    assert not audit("x [[S:1,,2]]", pool).ok
    assert not audit("x `[[S:1]]`", pool).ok


def test_html_report(pool: SourcePool) -> None:
    html = (
        "<h1>T</h1><p>A <sup class='cite' data-sids='2'>[S:2]</sup></p><p>No cite</p>"
        "<ul><li>item [[S:3]]<li>plain</ul><pre>[[S:1]]</pre><p><code>[S:7]</code></p>"
    )
    data = audit(html, pool, content_format="html").to_dict()
    assert data["cited_sids"] == [2, 3]
    assert data["in_code_sids"] == [1, 7]
    assert data["coverage"] == 0.4  # 3 paragraphs + 2 items, 2 cited
    assert data["ok"] is False


@pytest.mark.parametrize(
    ("content_format", "text"),
    [
        ("html", '<p>Claim <sup class="cite" data-sids="{}">x</sup> end.</p>'),
        ("markdown", 'Claim <sup class="cite" data-sids="{}">x</sup> end.\n'),
    ],
)
def test_a_sup_longer_than_1024_characters_is_invalid_as_the_render_says(
    pool: SourcePool, content_format: str, text: str
) -> None:
    # The scanner bounded a tag's attributes at 1,024 characters: the audit said OK while the
    # render read the tag and warned that the sid is too large.
    huge = "9" * 5000
    document = text.format(huge)
    reader = read_html if content_format == "html" else read_markdown
    (warning,) = reader(document).warnings
    report = audit(document, pool, content_format=content_format)
    (token,) = report.invalid_tokens
    _, reason, _ = parse_sid_spec(huge)
    assert reason is not None and reason.startswith("sid 9999") and "too large" in reason
    assert reason in warning and token.reason.endswith(reason)
    assert token.text.startswith('<sup class="cite" data-sids="9999') and token.line == 1
    assert not report.ok


def test_a_long_valid_sup_is_cited_as_the_render_cites_it(pool: SourcePool) -> None:
    html = f'<p>Claim <sup class="cite {"x" * 2000}" data-sids="2">2</sup>.</p>'
    blocks = read_html(html).blocks
    assert [n.sids for n in iter_inlines(blocks) if isinstance(n, Cite)] == [(2,)]
    report = audit(html, pool, content_format="html")
    assert report.cited_sids == (2,) and report.ok


def test_html_coverage_places_tags_by_their_offsets(pool: SourcePool) -> None:
    # html.parser counted lines at LF only while the offsets counted CR too: a lone CR shifted
    # every later paragraph (coverage 0.0); and "<![x" made it raise an AssertionError.
    html = "<p>a\rb</p>\n<p>x</p>\n<p>y [[S:1]]</p>"
    assert audit(html, pool, content_format="html").coverage == 0.3333
    html = "<![x]><p>a [[S:1]]</p><ul><li>b<li/><li>c [[S:2]]</ul><script><p>x</script>"
    assert audit(html, pool, content_format="html").coverage == round(2 / 4, 4)


def test_html_comments_end_where_browsers_end_them(pool: SourcePool) -> None:
    # "<!-->" and "<!--->" are empty comments and "--!>" closes one (HTML5): the scanner ran
    # each to the next "-->" or to the end, so the audit missed citations the render cites.
    html = ("<p>a [[S:1]]</p><!--><p>b [[S:2]]</p><!---><p>c [[S:3]]</p>"
            "<!-- x --!><p>d [[S:4]]</p><!-- [[S:6]] -->")
    cited = [n.sids for n in iter_inlines(read_html(html).blocks) if isinstance(n, Cite)]
    assert cited == [(1,), (2,), (3,), (4,)]
    assert audit(html, pool, content_format="html").cited_sids == (1, 2, 3, 4)


def _rendered_sids(markdown: str) -> list[int]:
    """The sids the markdown reader cites, first appearance order, each once."""
    cites = [n for n in iter_inlines(read_markdown(markdown).blocks) if isinstance(n, Cite)]
    return list(dict.fromkeys(sid for cite in cites for sid in cite.sids))


@pytest.mark.parametrize(
    ("markdown", "cited", "in_raw_html"),
    [
        # an inline comment is dropped, a block comment too, an attribute dropped
        ('a <!-- [[S:3]] --> b [[S:1]]\n\n<!-- [[S:4]] -->\n\nc <span title="[[S:5]]">x</span>\n',
         [1], [3, 4, 5]),
        # CommonMark (markdown-it): "--!>" does not close a comment, the "-->" does
        ("a <!-- x --!> [[S:3]] --> b [[S:1]]\n", [1], [3]),
        # markdown-it's comment runs past a "-->" that ends a run of three dashes
        ("a <!-- x ---> [[S:3]] --> b [[S:1]]\n", [1], [3]),
        ("a <!-----> [[S:1]] b\n", [1], []),  # not a comment in markdown-it, ...
        ("a <!-----> [[S:1]] --> b [[S:2]]\n", [2], [1]),  # ... but the start of this one
        # an HTML block is read as HTML: its text and its citation sup cite, its tags'
        # attributes and comments do not; its <pre> is code
        ('<div>\n<sup class="cite" data-sids="2">[S:2]</sup> [[S:3]]\n</div>\n\nb [[S:1]]\n',
         [2, 3, 1], []),
        ('<div title="[[S:4]]">\n<!-- [[S:5]] --> a [[S:2]]\n</div>\n\nb [[S:1]]\n',
         [2, 1], [4, 5]),
        # the markdown between an HTML block that opens <details> and the one closing it
        ("<details>\n<summary>Why [[S:3]]</summary>\n\nProse [[S:2]].\n\n</details>\n",
         [3, 2], []),
        ("a <?php [[S:2]] ?> b [[S:1]] <![CDATA[ [[S:3]] ]]> <!X [[S:4]]>\n", [1], [2, 3, 4]),
        # a citation sup in a paragraph is a citation, the tags around it are not
        ('a <b><sup class="cite" data-sids="2">[S:2]</sup></b> <i title="[[S:3]]">[[S:1]]</i>\n',
         [2, 1], [3]),
        # not raw HTML: an autolink-less "<", an escaped "<", a "<" in a code span
        ("a < [[S:1]] > b \\<!-- [[S:2]] --> `<!--` [[S:3]] `-->`\n", [1, 2, 3], []),
        ("> quote <!-- [[S:3]]\n> --> [[S:1]]\n- item <em title='[[S:4]]'>[[S:2]]</em>\n",
         [1, 2], [3, 4]),
    ],
)
def test_markdown_raw_html_cites_what_the_render_cites(
    markdown: str, cited: list[int], in_raw_html: list[int]
) -> None:
    # Tokens in raw HTML counted as cited: the audit said sids 3-5 were cited where the
    # render cites 1 only (comments and attributes are dropped; an HTML block's text cites).
    pool = SourcePool.from_rows(
        [{"sid": s, "title": f"S{s}", "url": f"https://s{s}.org/"} for s in range(1, 6)]
    )
    assert _rendered_sids(markdown) == cited
    report = audit(markdown, pool)
    assert list(report.cited_sids) == cited
    assert list(report.in_raw_html_sids) == in_raw_html
    assert report.to_dict()["in_raw_html_sids"] == in_raw_html
    assert report.ok is not in_raw_html
    if in_raw_html:
        assert "Tokens inside raw HTML or front matter (not citations" in report.format_text()


def test_a_sup_right_after_another_tag_is_cited_as_the_render_cites_it(pool: SourcePool) -> None:
    # Touching spans were merged, so a <sup class="cite"> right after "<p>" or "</em>" no
    # longer started a span of its own and was skipped as tag text: the audit missed it.
    html = ('<p><sup class="cite" data-sids="2">2</sup> opens.</p>'
            '<ul><li><em>x</em><sup class="cite" data-sids="3">3</sup></li></ul>'
            '<table><tr><td><sup class="cite" data-sids="4">4</sup></td></tr></table>')
    cited = [n.sids for n in iter_inlines(read_html(html).blocks) if isinstance(n, Cite)]
    assert cited == [(2,), (3,), (4,)]
    assert audit(html, pool, content_format="html").cited_sids == (2, 3, 4)


def test_numeric_dialect_maps_pool_indices(pool: SourcePool) -> None:
    report = audit("Claim [2] and [9].", pool, dialects=frozenset({"numeric"}))
    assert report.cited_sids == (2,)
    assert report.invalid_tokens[0].reason.startswith("index 9 is beyond the pool")


def test_text_report_names_problems(pool: SourcePool) -> None:
    text = audit(MARKDOWN, pool).format_text()
    assert "Unknown sids (not in the pool): 99" in text
    assert "Invalid token on line 15: [[S:abc]]" in text
    assert "Tokens inside code (not citations): 2, 6" in text
    assert "PROBLEMS FOUND" in text


def test_bad_format_is_refused(pool: SourcePool) -> None:
    with pytest.raises(ValueError, match="markdown"):
        audit("x", pool, content_format="docx")  # type: ignore[arg-type]


def test_the_abstract_s_paragraphs_count_in_the_coverage_other_values_none(
    pool: SourcePool,
) -> None:
    """Front matter is metadata: a value's blank-line-separated lines (the subtitle's) are no
    paragraphs. The abstract is prose, read as render reads it: its two paragraphs (one
    cited), a folded value's as the reader unfolds it, and the body's one cited paragraph."""
    text = ("---\ntitle: T\nsubtitle: |\n  Not\n\n  prose\nabstract: |\n  First [[S:2]].\n\n"
            "  Second.\n---\n\nBody [[S:1]].\n")
    assert audit(text, pool).to_dict()["coverage"] == 0.6667
    # folded, one blank line is a line break: "One [[S:2]].\nTwo." is one paragraph
    folded = "---\nabstract: >\n  One\n  [[S:2]].\n\n  Two.\n\n\n  Three.\n---\n\nBody.\n"
    assert len(read_markdown(folded).abstract) == 2
    assert audit(folded, pool).to_dict()["coverage"] == 0.3333
