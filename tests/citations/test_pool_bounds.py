"""Pools whose size on disk hides unbounded work are refused early, with the reason named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citations.errors import PoolError
from citations.pool import MAX_EXTRA_DEPTH, SourcePool, dedupe_key, source_from_row
from citations.prompt import sources_prompt_block


def _alias_bomb(levels: int = 9) -> str:
    leaf = ",".join(['"lol"'] * 9)
    lines = ["- sid: 1", "  title: bomb", f"  extra0: &a0 [{leaf}]"]
    for level in range(1, levels):
        refs = ",".join(f"*a{level - 1}" for _ in range(9))
        lines.append(f"  extra{level}: &a{level} [{refs}]")
    return "\n".join(lines) + "\n"


def test_a_yaml_alias_chain_is_refused_before_it_expands(tmp_path: Path) -> None:
    text = _alias_bomb()
    assert len(text.encode()) < 1000
    path = tmp_path / "pool.yaml"
    path.write_text(text)
    with pytest.raises(PoolError, match="aliases expand"):
        SourcePool.load(path)


def test_a_self_referencing_yaml_alias_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "pool.yaml"
    path.write_text("- &row\n  sid: 1\n  loop: *row\n")
    with pytest.raises(PoolError, match=r"refers to itself|nests"):
        SourcePool.load(path)


def test_anchors_shared_by_a_few_fields_still_load(tmp_path: Path) -> None:
    path = tmp_path / "pool.yaml"
    rows = ["- sid: 1\n  title: A\n  publisher: &iea International Energy Agency"]
    rows += [f"- sid: {i}\n  title: T{i}\n  publisher: *iea" for i in range(2, 200)]
    path.write_text("\n".join(rows) + "\n")
    pool = SourcePool.load(path)
    assert len(pool) == 199
    row = pool.get(150)
    assert row is not None and row.extra["publisher"] == "International Energy Agency"


def test_an_unknown_field_nested_hundreds_deep_is_refused_naming_the_field() -> None:
    deep: object = []
    for _ in range(900):
        deep = [deep]
    with pytest.raises(PoolError, match=r"row 0: field 'meta' nests deeper than"):
        SourcePool.coerce([{"sid": 1, "title": "x", "meta": deep}])


def test_unknown_fields_within_the_depth_bound_are_kept() -> None:
    value: object = "leaf"
    for _ in range(MAX_EXTRA_DEPTH - 1):
        value = {"k": value}
    source = source_from_row({"sid": 1, "meta": value}, "row")
    assert source.extra["meta"] == value


@pytest.mark.parametrize("text", ["[" * 100_000, '{"a":' * 100_000])
def test_json_nested_too_deeply_is_a_pool_error(text: str) -> None:
    with pytest.raises(PoolError, match="sources_pool"):
        SourcePool.coerce(text)


def test_the_content_fingerprint_ignores_unknown_fields() -> None:
    a = source_from_row({"sid": 1, "title": "Same", "text": "body", "meta": {"x": 1}}, "a")
    b = source_from_row({"sid": 2, "title": "Same", "text": "body", "meta": [[["other"]]]}, "b")
    c = source_from_row({"sid": 3, "title": "Other", "text": "body"}, "c")
    assert dedupe_key(a) == dedupe_key(b) != dedupe_key(c)


def test_merge_refuses_files_of_a_type_that_cannot_be_attached() -> None:
    base = SourcePool.coerce([{"sid": 1, "title": "Web", "url": "https://example.org/a"}])
    incoming = [
        {"sid": 1, "title": "Memo", "artifact_path": "memo.pdf", "mime": "application/pdf",
         "source_type": "file"},
        {"sid": 2, "title": "Installer", "artifact_path": "setup.exe",
         "mime": "application/x-msdownload", "source_type": "file"},
        {"sid": 3, "title": "Archive", "artifact_path": "data.zip", "source_type": "attachment"},
        {"sid": 4, "title": "Notes", "artifact_path": "notes.txt", "source_type": "file"},
    ]
    merged, mapping = base.merge(incoming)
    assert [s.title for s in merged] == ["Web", "Memo", "Notes"]
    assert mapping == {1: 2, 4: 3}
    assert len(merged.warnings) == 2
    assert "setup.exe" in merged.warnings[0] and "application/x-msdownload" in merged.warnings[0]
    assert "data.zip" in merged.warnings[1] and "application/zip" in merged.warnings[1]
    again, _ = merged.merge([])
    assert again.warnings == ()


def test_prompt_block_header_counts_the_sources_shown() -> None:
    pool = SourcePool.coerce([{"sid": i, "title": f"T{i}", "url": f"https://e.org/{i}"}
                              for i in (1, 2, 3)])
    assert sources_prompt_block(pool).splitlines()[0] == "SOURCES POOL (3 sources):"
    assert sources_prompt_block(pool, sids=[2]).splitlines()[0] == "SOURCES POOL (1 source):"
    assert json.dumps(sources_prompt_block(SourcePool())).startswith('"SOURCES POOL (0 sources):')


def test_a_yaml_answers_alias_chain_is_refused_before_it_expands() -> None:
    """A YAML sidecar answer was loaded with ``safe_load``, which keeps aliases shared: the
    audit then walked 9^9 strings (no answer within minutes). The pool's bound applies."""
    from citations.audit import audit_structured
    from citations.errors import SidecarError
    from citations.sidecar import load_structured

    leaf = ",".join(['"lol"'] * 9)
    lines = ["_citations: []", f"a0: &a0 [{leaf}]"]
    lines += [f"a{n}: &a{n} [{','.join([f'*a{n - 1}'] * 9)}]" for n in range(1, 9)]
    with pytest.raises(SidecarError, match=r"answer\.yaml: YAML aliases expand"):
        load_structured("\n".join(lines), "yaml", name="answer.yaml")
    with pytest.raises(ValueError, match="aliases expand"):
        audit_structured("\n".join(lines), [], content_format="yaml")
    shared = "_citations: [{path: /b, sids: [1]}]\na: &t Text\nb: *t\n"
    assert list(audit_structured(shared, [{"sid": 1}], content_format="yaml").cited_sids) == [1]
