"""Citation-side regexes and parsers that rescanned to the end of long runs (quadratic time,
minutes on the inputs below, uninterruptible inside one C call): each case must now finish at
once with the same answer the old code gave on short inputs."""

from __future__ import annotations

from citations.audit import audit
from citations.extractors import extract_sources
from citations.pool import SourcePool, dedupe_key
from citations.tokens import scan
from citations.urls import normalize_url
from tests.helpers import at_sizes

RUN = 400_000
POOL = [{"sid": 1, "title": "A", "url": "https://a.example/"}]


def same(actual: str, expected: str) -> bool:
    """``actual == expected``, kept out of pytest's diff (slow on strings this long)."""
    return actual == expected


def test_pool_url_with_long_runs_of_spaces() -> None:
    # End-anchored strips: 40,000 spaces inside one pool URL took 20-46 s.
    spaces = " " * RUN
    assert same(normalize_url("\x01https://A.example" + spaces + "b"),
                "https://a.example" + spaces + "b")
    assert same(normalize_url("\x01http://a.example/p" + " /" * RUN + "x/ "),
                "http://a.example/p" + " /" * RUN + "x")
    assert same(normalize_url("\x01http://a.example/?q=1" + spaces + "x"),
                "http://a.example?q=1" + spaces + "x")
    assert normalize_url("\x01HTTP://A.example:" + spaces + "\x00") == "http://a.example"
    assert normalize_url(spaces + "\x00http://A.example/x//" + spaces) == "http://a.example/x"
    pool = SourcePool.coerce([{"sid": 1, "title": "t", "url": " https://A" + spaces + "b/"}])
    source = pool.get(1)
    assert source is not None
    assert same(dedupe_key(source), "url:https://a" + spaces + "b")


def test_extractor_titles_and_tags_without_closing() -> None:
    # 80 KB of unclosed "<title>" (or of "<" without ">") took 6-16 s.
    unclosed = "<title>" * (RUN // 7)
    page = "<TITLE lang=en>A &amp; <b>B</b></title>" + unclosed
    (row,) = extract_sources("web_fetch", [{"url": "https://a/", "content": page}])
    assert row["title"] == "A & B"
    (row,) = extract_sources("web_fetch", [{"url": "https://a/", "content": unclosed}])
    assert "title" not in row  # no title found: the empty field is dropped
    (row,) = extract_sources("http_request", [{"url": "https://a/", "body": "<title x" * RUN}])
    assert row["title"] == "https://a/"
    result = {"url": "https://a/", "title": "<b>x</b>" + "<" * RUN}
    (row,) = extract_sources("web_search", {"results": [result]})
    assert same(row["title"], "x" + "<" * RUN)


def test_html_scan_with_unclosed_declarations_and_tags() -> None:
    # Tag branches of the HTML skip regex: 80,000 chars of "<!" without ">" took 3.7-10 s.
    for filler in ("<!" * (RUN // 2), "<a " * (RUN // 3), "<?" * (RUN // 2)):
        text = "<p>x [[S:1]]</p>" + filler + " [[S:1]]"
        assert [t.start for t in scan(text, syntax="html")] == [5, len(text) - 7]
    text = "<p>x [[S:1]]</p>" + "<!" * (RUN // 2) + " [[S:2]]"
    report = audit(text, [*POOL, {"sid": 2, "title": "B"}], content_format="html")
    assert report.cited_sids == (1, 2)
    text = "<p>[[S:1]]</p><!-- [[S:1]]" + "<a" * (RUN // 2)  # an unclosed comment runs to the end
    assert [t.start for t in scan(text, syntax="html")] == [3]


def test_html_coverage_with_unclosed_tags() -> None:
    # The audit's coverage parsed HTML with html.parser, which rescans each unclosed tag to the
    # end: 80 KB of "<a " took 90 s, of "<p " 93 s, of "<!--" 5.6 s, of '<sup class="cite" '
    # 8.5 s.
    for unit in ("<a ", "<p ", "<!--", '<sup class="cite" '):
        text = "<ul><li>x [[S:1]]<li>y</ul><p>z</p>" + unit * (RUN // len(unit))
        report = audit(text, POOL, content_format="html")
        assert report.cited_sids == (1,) and report.coverage == 0.3333


def test_sup_class_with_many_cite_words_and_no_closing_quote() -> None:
    # Each "cite" in an unclosed class value looked for the closing quote to the end: 100 KB
    # of "cite " took 1.8 s.
    for quote in "\"'":
        text = f"<sup class={quote}" + "cite " * (RUN // 5) + "[[S:1]]"
        assert [t.sids for t in scan(text, syntax="text")] == [(1,)]


def test_fetched_page_text_with_unclosed_and_deeply_nested_tags() -> None:
    # The text of a fetched page went through html.parser, which rescans every unclosed tag:
    # 30 KB of "<a " in a web_fetch result took 13 s. Deep nesting must stay cheap too (nh3's
    # html5ever took 100 s on 100,000 "<div>").
    head = "<html><body><p>Solar grew.</p>"
    for filler in ("<a " * RUN, "<div>" * (RUN // 5), "<title>" * (RUN // 7), "<!--" * RUN):
        (row,) = extract_sources("web_fetch", {"url": "https://e.org/r", "html": head + filler})
        assert row["content"].startswith("Solar grew.")
        assert "<" not in row["content"]


@at_sizes(40_000, RUN)
def test_markdown_raw_html_scan_with_unclosed_comments_and_tags(size: int) -> None:
    # Finding markdown's raw HTML (whose tokens render does not cite) with markdown-it's own
    # tag regex: its comment pattern runs past "-->" after "---", so 40 KB of "<!-- a --->"
    # take 2 s in markdown-it; unclosed "<code>" searched "</code>" to the end each time.
    # Each size is 1 more than a multiple of 3, as the last case needs.
    pool = [*POOL, {"sid": 2, "title": "B"}]
    # unit → the sids cited, then those in raw HTML, when a final "-->" closes the first "<!--"
    closing = {
        "<!-- a ---> ": ((1,), (2,)), "<!-- ": ((1,), (2,)), "<!---": ((1,), (2,)),
        "<!---->-->": ((1, 2), ()), "<![CDATA[ ": ((1, 2), ()), "<? ": ((1, 2), ()),
        "<a ": ((1, 2), ()), '<span title="': ((1, 2), ()), "<code>": ((1, 2), ()),
    }
    for unit, closed in closing.items():
        text = "x [[S:1]] " + unit * (size // len(unit)) + " [[S:2]]"
        report = audit(text, pool)
        assert (report.cited_sids, report.in_raw_html_sids) == ((1, 2), ()), unit
        report = audit(text + " -->", pool)
        assert (report.cited_sids, report.in_raw_html_sids) == closed, unit
    report = audit("x <!--" + "-" * size + "> [[S:1]]", POOL)  # 3k+1 dashes: not a comment
    assert report.cited_sids == (1,)
