"""SourcePool: loading, row mapping, errors, dedupe, merge, selectors, MIME eligibility."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tests.hypothesis_profiles  # noqa: F401  (loads the shared Hypothesis profile)
from citations.errors import DuplicateSidError, PoolError, SelectorError
from citations.model import Source
from citations.pool import SourcePool, dedupe_key, is_eligible_mime, parse_selector


def test_sample_pool_dedupes_tracking_link(sample_pool: list[dict[str, object]]) -> None:
    pool = SourcePool.from_rows(sample_pool)
    assert pool.sids == (1, 2, 3, 4, 5)
    assert pool.canonical_sid(4) == 1 and pool.canonical_sid(2) == 2
    assert pool.get(4) is not None
    assert pool.get(4).url == "HTTPS://WWW.IEA.ORG:443/reports/weo-2024/?utm_source=x#top"  # type: ignore[union-attr]
    assert pool.canonical_sid(99) == 99 and pool.get(99) is None and 99 not in pool


@pytest.mark.parametrize(
    ("layout", "suffix"),
    [
        (lambda rows: rows, ".json"),
        (lambda rows: {"sources_pool": rows, "other": 1}, ".json"),
        (lambda rows: {"sources": rows}, ".json"),
        (lambda rows: rows, ".yaml"),
        (lambda rows: {"sources": rows}, ".yml"),
    ],
)
def test_load_layouts(tmp_path: Path, sample_pool: list[dict[str, object]], layout, suffix) -> None:  # type: ignore[no-untyped-def]
    import yaml

    data = layout(sample_pool)
    path = tmp_path / f"pool{suffix}"
    path.write_text(json.dumps(data) if suffix == ".json" else yaml.safe_dump(data))
    pool = SourcePool.load(path)
    assert [s.title for s in pool] == [r["title"] for r in sample_pool]
    assert pool.origin == str(path)
    assert SourcePool.coerce(str(path)) == pool == SourcePool.coerce(path)


def test_row_mapping_aliases_and_extras() -> None:
    pool = SourcePool.from_rows([
        {"sid": "3", "title": "T", "link": "https://a.org/x", "snippet": "snip",
         "published": "2024-01-02", "mime_type": "text/html", "size": "120", "score": 0.5,
         "rn": "ef:rn:1", "hosted_uri": "s3://b/k", "key": "k", "provider": {"name": "x"}},
        {"sid": 4.0, "path": "docs/a.txt", "date": "2023", "url": "", "link": "kept-in-extra"},
    ])
    first, second = pool
    assert (first.sid, first.url, first.text, first.published_at) == (3, "https://a.org/x", "snip",
                                                                     "2024-01-02")
    assert (first.mime, first.size_bytes, first.relevance) == ("text/html", 120, 0.5)
    assert first.extra == {"rn": "ef:rn:1", "hosted_uri": "s3://b/k", "key": "k",
                           "provider": {"name": "x"}}
    assert second.sid == 4 and second.physical_path == "docs/a.txt" and second.date == "2023"
    assert second.url == "kept-in-extra" and second.extra == {}
    again = SourcePool.from_rows(pool.rows())
    assert again == pool


def test_canonical_field_wins_over_alias() -> None:
    (source,) = SourcePool.from_rows([{"sid": 1, "url": "https://a.org", "link": "https://b.org"}])
    assert source.url == "https://a.org" and source.extra == {"link": "https://b.org"}


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{"sid": "abc"}], r"pool\.json: row 0: sid 'abc' is not valid"),
        ([{"title": "x", "sid": 1}, {"sid": True}], r"row 1: sid True"),
        ([{"sid": 0}], r"row 0: sid 0"),
        ([{"sid": 2.5}], r"row 0: sid 2\.5"),
        ([{"title": "no sid"}], r"row 0: the row has no 'sid'"),
        (["text"], r"row 0 is str"),
        ([{"sid": 1, "title": ["x"]}], r"row 0: field 'title' is list"),
        ([{"sid": 1, "size_bytes": -3}], r"size_bytes -3"),
        ([{"sid": 1, "relevance": "high"}], r"relevance 'high'"),
    ],
)
def test_row_errors_name_file_and_row(rows: list[object], message: str) -> None:
    with pytest.raises(PoolError, match=message):
        SourcePool.from_rows(rows, origin="pool.json")


def test_bibliographic_fields_are_kept_as_given_and_cleaned() -> None:
    (source,) = SourcePool.from_rows([{
        "sid": 1, "journal": "Nature\x00", "volume": 30, "issue": "2", "pages": "5998-6008",
        "doi": "10.5555/3295222.3295349", "publisher_place": "London", "edition": None,
        "note": {"free": "form"},  # not a bibliographic field: kept as it is
        "publisher": {"name": "Penguin"},  # a shape the styles do not read: kept, not used
    }])
    assert source.extra == {
        "journal": "Nature\ufffd", "volume": 30, "issue": "2", "pages": "5998-6008",
        "doi": "10.5555/3295222.3295349", "publisher_place": "London", "edition": None,
        "note": {"free": "form"}, "publisher": {"name": "Penguin"},
    }


def test_duplicate_sid() -> None:
    same = {"sid": 2, "title": "A", "url": "https://a.org"}
    assert len(SourcePool.from_rows([same, dict(same)])) == 1
    with pytest.raises(DuplicateSidError, match=r"p\.json: rows 0 and 2 share sid 2"):
        SourcePool.from_rows([same, {"sid": 3}, {**same, "title": "B"}], origin="p.json")


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("bad.json", "{not json", r"bad\.json: not valid JSON \(line 1"),
        ("bad.yaml", "a: [1, 2", r"bad\.yaml: not valid YAML"),
        ("shape.json", '{"rows": []}', r"shape\.json: an object with rows but no rows"),
        ("shape2.json", '{"sources": {"a": 1}}', r"'sources' is dict, not a list"),
        ("scalar.json", "42", r"top level is a int"),
        ("empty.yaml", "", r"top level is empty"),
        ("row.json", "[1]", r"row\.json: row 0 is int"),
        ("latin.json", None, r"latin\.json: not valid UTF-8 \(invalid"),
    ],
)
def test_load_errors_are_one_line(
    tmp_path: Path, name: str, text: str | None, message: str
) -> None:
    path = tmp_path / name
    if text is None:
        path.write_bytes(b'[{"sid": 1, "title": "caf\xe9"}]')
    else:
        path.write_text(text)
    with pytest.raises(PoolError, match=message) as info:
        SourcePool.load(path)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32"])
def test_pool_file_with_a_utf16_or_utf32_mark_loads(tmp_path: Path, encoding: str) -> None:
    """Windows PowerShell 5's ``>`` saves a pool as UTF-16 LE with its byte-order mark."""
    path = tmp_path / "pool.json"
    path.write_bytes('[{"sid": 1, "title": "Café 漢字", "url": "https://a.org"}]'.encode(encoding))
    assert SourcePool.load(path).get(1).title == "Café 漢字"
    path.write_bytes("\ufeff- {sid: 1}".encode("utf-16-le")[:-1])  # a half character at the end
    with pytest.raises(PoolError, match=r"not valid UTF-16, although it opens with that "
                       r"byte-order mark \(truncated data\)"):
        SourcePool.load(path)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(PoolError, match=r"nope\.json: pool file not found"):
        SourcePool.load(tmp_path / "nope.json")
    with pytest.raises(PoolError, match="not a file"):
        SourcePool.load(tmp_path)


def test_coerce_shapes(sample_pool: list[dict[str, object]]) -> None:
    pool = SourcePool.from_rows(sample_pool)
    assert SourcePool.coerce(pool) is pool
    assert len(SourcePool.coerce(None)) == 0
    assert SourcePool.coerce({"sources_pool": sample_pool}) == pool
    assert SourcePool.coerce(json.dumps(sample_pool)) == pool
    with pytest.raises(PoolError, match="sources_pool is int"):
        SourcePool.coerce(7)


def test_dedupe_key_kinds() -> None:
    assert dedupe_key(Source(1, url="HTTP://A.org:80/x/")) == "url:http://a.org/x"
    assert dedupe_key(Source(1, physical_path="./a//b.txt")) == "path:a/b.txt"
    assert dedupe_key(Source(1, title="x", text="y")) == dedupe_key(Source(9, title="x", text="y"))
    assert dedupe_key(Source(1, title="x")) != dedupe_key(Source(1, title="z"))


def test_by_index_and_select() -> None:
    pool = SourcePool.from_rows([{"sid": s, "title": f"t{s}"} for s in (2, 3, 5, 7, 10)])
    assert pool.by_index(1).sid == 2 and pool.by_index(5).sid == 10  # type: ignore[union-attr]
    assert pool.by_index(0) is None and pool.by_index(6) is None
    assert [s.sid for s in pool.select("so:sources_pool[1-5]")] == [2, 3, 5]
    assert [s.sid for s in pool.select("[10,3,7]")] == [10, 3, 7]
    assert [s.sid for s in pool.select("so:sources_pool[7, 1-3, 2]")] == [7, 2, 3]
    assert [s.sid for s in pool.select("sources_pool[5-3]")] == [3, 5]
    assert [s.sid for s in pool.select("so:sources_pool")] == [2, 3, 5, 7, 10]
    assert pool.select("[1-1000000000]") == list(pool)
    assert parse_selector("[1 – 3, 7]") == [(1, 3), (7, 7)]


@pytest.mark.parametrize("selector", ["", "[]", "[1,,2]", "[a]", "so:sources_pool[1-", "[0]",
                                      "so:other[1]", "[1]x"])
def test_bad_selectors(selector: str) -> None:
    with pytest.raises(SelectorError):
        parse_selector(selector)


def test_mime_eligibility() -> None:
    assert all(is_eligible_mime(m) for m in ("text/plain", "TEXT/HTML; charset=utf-8",
                                             "image/png", "application/pdf"))
    assert not any(is_eligible_mime(m) for m in ("application/zip", "", None, "video/mp4",
                                                  "application/pdfx"))
    pool = SourcePool.from_rows([
        {"sid": 1, "physical_path": "a.pdf", "mime": "application/pdf"},
        {"sid": 2, "physical_path": "b.zip", "mime": "application/zip"},
        {"sid": 3, "url": "https://a.org", "mime": "text/html"},
    ])
    assert [s.sid for s in pool.eligible_files()] == [1]


def test_merge_appends_and_maps(sample_pool: list[dict[str, object]]) -> None:
    pool = SourcePool.from_rows(sample_pool)
    merged, mapping = pool.merge([
        {"sid": 1, "title": "dup of 1", "url": "https://www.iea.org/reports/weo-2024/#x"},
        {"sid": 2, "title": "new", "url": "https://new.org/a"},
        {"sid": 3, "title": "memo again", "physical_path": "./attachments/memo.pdf"},
        {"sid": 4, "title": "new 2", "url": "https://new.org/a/?utm_campaign=z"},
    ])
    assert mapping == {1: 1, 2: 6, 3: 5, 4: 6}
    assert merged.sids == (1, 2, 3, 4, 5, 6)
    assert merged.get(6).title == "new"  # type: ignore[union-attr]
    assert all(merged.get(s) == pool.get(s) for s in pool.sids)
    assert pool.sids == (1, 2, 3, 4, 5)  # the original pool is unchanged
    assert merged.canonical_sid(4) == 1


def test_with_rows_changes_details_never_identity(sample_pool: list[dict[str, object]]) -> None:
    pool = SourcePool.from_rows(sample_pool)
    held = pool.get(2)
    assert held is not None
    changed = pool.with_rows([Source(**{**held.__dict__, "extra": {"location": "page 4"}})])
    assert changed.get(2).extra == {"location": "page 4"}  # type: ignore[union-attr]
    assert changed.sids == pool.sids and changed.key_of(2) == pool.key_of(2)
    assert pool.get(2) == held  # the original pool is unchanged
    with pytest.raises(PoolError, match="sid 2 would change its identity"):
        pool.with_rows([Source(**{**held.__dict__, "url": "https://other.org/"})])
    with pytest.raises(PoolError, match="sid 99 is not in the pool"):
        pool.with_rows([Source(sid=99, title="x")])


_ROW = st.fixed_dictionaries({
    "title": st.text(max_size=5),
    "url": st.sampled_from(["", "https://a.org/x", "HTTPS://A.ORG/x/", "https://b.org",
                            "https://b.org:8443/", "http://c.org/?utm_source=1"]),
    "physical_path": st.sampled_from(["", "f/a.txt", "./f/a.txt", "g.pdf"]),
})


@pytest.mark.slow
@given(
    st.lists(_ROW, max_size=12).map(lambda rows: [{**r, "sid": i + 1} for i, r in enumerate(rows)]),
    st.lists(_ROW, max_size=12),
    st.integers(min_value=0, max_value=50),
)
def test_merge_never_changes_or_reuses_sids(base_rows, new_rows, offset) -> None:  # type: ignore[no-untyped-def]
    base = SourcePool.from_rows([{**r, "sid": r["sid"] * 3 + offset} for r in base_rows])
    other = SourcePool.from_rows([{**r, "sid": i + 1} for i, r in enumerate(new_rows)])
    merged, mapping = base.merge(other)
    for source in base:
        assert merged.get(source.sid) == source
    assert set(mapping) == set(other.sids)
    fresh = [sid for sid in merged.sids if sid not in base]
    assert all(sid > max(base.sids, default=0) for sid in fresh)
    for old, new in mapping.items():
        assert dedupe_key(merged.get(new)) == dedupe_key(other.get(old))  # type: ignore[arg-type]
        if new not in base:
            first = other.get(other.canonical_sid(old))
            assert merged.get(new).title == first.title  # type: ignore[union-attr]
    again, again_map = merged.merge(other)
    assert again == merged and again_map == mapping


@pytest.mark.parametrize(
    "sid", [3_000_000_000, 2**31, 10**30, 1e30, "3000000000", "9" * 4000],
    ids=["3e9", "2^31", "10^30", "float", "text", "4000-digits"],
)
def test_a_sid_no_token_can_cite_is_refused_naming_the_row_and_the_range(sid: object) -> None:
    """``[[S:3000000000]]`` is invalid (at most 2147483647), yet the row loaded and was
    reported orphaned: the pool and the token grammar now share one rule."""
    rows = [{"sid": 1, "title": "fine"}, {"sid": sid, "title": "big"}]
    with pytest.raises(PoolError) as caught:
        SourcePool.coerce(rows)
    message = str(caught.value)
    assert "row 1" in message and "accepted: an integer from 1 to 2147483647" in message
    assert len(message) < 300
    assert caught.value.row_field == "sid"  # type: ignore[attr-defined]


def test_the_largest_sid_a_token_can_cite_loads_and_is_cited() -> None:
    from citations.tokens import parse_sid_spec

    pool = SourcePool.coerce([{"sid": 2147483647, "title": "max"}])
    assert list(pool.sids) == [2147483647]
    assert parse_sid_spec("2147483647")[0] == (2147483647,)
    with pytest.raises(PoolError, match="accepted: an integer from 1 to 2147483647"):
        pool.merge([{"sid": 1, "title": "next", "url": "https://example.org/next"}])
