"""JSON and YAML from outside name each key once: a key given twice is refused, naming where."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citations.errors import ErrorCode, FrontMatterError, PoolError, SidecarError
from citations.front_matter import front_matter
from citations.json_keys import DuplicateKeyError, loads
from citations.pool import SourcePool
from citations.sidecar import load_structured
from tests.helpers import at_sizes


@pytest.mark.parametrize(
    ("text", "where", "line", "column"),
    [
        ('{"format": "pdf", "format": "docx"}', "format", 1, 19),
        ('{"options": {"dpi": 1,\n   "format": 2,\n "format": 3}}', "options.format", 3, 2),
        ('{"a": [{"b": 1}, {"b": 2, "c": {"d": 1, "\\u0064": 2}}]}', "a.1.c.d", 1, 41),
        ('{"s": "a\\"b{[", "k": {"s": 1, "s": 2}}', "k.s", 1, 31),
        ('[{"x": 1}, [], {"y": {"z": 1}, "y": 0}]', "2.y", 1, 32),
        ('{"a": {"a": {"a": 1}}, "a": 2}', "a", 1, 24),
    ],
)
def test_a_key_given_twice_is_named_by_path_line_and_column(
    text: str, where: str, line: int, column: int
) -> None:
    with pytest.raises(DuplicateKeyError) as refused:
        loads(text)
    assert (refused.value.where, refused.value.line, refused.value.column) == (where, line, column)
    assert str(refused.value).startswith(f"{where}: the key ")
    assert "appears twice in one object" in str(refused.value)


def test_a_megabyte_key_given_twice_makes_a_short_message() -> None:
    """The key and every part of its path are quoted by their head and length: a 1 MB key
    repeated made a 2 MB message (and a 1 MB ``where``) on every surface."""
    key = "k" * 1_000_000
    for text, where in [
        (f'{{"{key}": 1, "{key}": 2}}', "k" * 60 + "…"),
        (f'{{"a": {{"{key}": {{"b": 1, "b": 2}}}}}}', f"a.{'k' * 60}….b"),
    ]:
        with pytest.raises(DuplicateKeyError) as refused:
            loads(text)
        assert refused.value.where == where
        assert len(str(refused.value)) < 300
        assert refused.value.key in (key, "b")  # the data keeps the whole key
    with pytest.raises(SidecarError) as yaml_refused:
        load_structured(f"? {key}\n: 1\n? {key}\n: 2\n", "yaml", name="a.yaml")
    assert "(1,000,000 characters) appears twice" in str(yaml_refused.value)
    assert len(str(yaml_refused.value)) < 300


def test_the_same_key_in_different_objects_is_fine() -> None:
    text = '{"a": {"k": 1}, "b": {"k": 2}, "k": [{"k": 3}, {"k": 4}]}'
    assert loads(text) == json.loads(text)
    assert loads(text.encode("utf-16")) == json.loads(text)


@at_sizes(10_000, 100_000)
def test_many_keys_are_read_and_the_repeat_found(size: int) -> None:
    """The hook is one dict per object and the scan runs once, after the parse stopped."""
    keys = ", ".join(f'"k{i}": {{"v": [{i}]}}' for i in range(size))
    assert len(loads("{" + keys + "}")) == size
    with pytest.raises(DuplicateKeyError) as refused:
        loads("{" + keys + f', "k{size - 1}": 0}}')
    assert refused.value.where == f"k{size - 1}"


def test_a_pool_file_naming_a_key_twice_is_a_pool_error(tmp_path: Path) -> None:
    pool = tmp_path / "pool.json"
    pool.write_text('[\n  {"sid": 1, "title": "A",\n   "title": "B"}\n]\n', encoding="utf-8")
    with pytest.raises(PoolError) as refused:
        SourcePool.load(pool)
    message = str(refused.value)
    assert message.startswith(f"{pool}: 0.title: the key 'title' appears twice")
    assert "(line 3, column 4)" in message


def test_pool_text_naming_a_key_twice_is_refused_when_rows_are_counted() -> None:
    text = '{"sources_pool": [{"sid": 1, "sid": 2, "title": "x"}]}'
    with pytest.raises(PoolError, match=r"sources_pool\.0\.sid: the key 'sid' appears twice"):
        SourcePool.coerce(text, max_rows=10)


def test_a_sidecar_answer_naming_a_key_twice_is_refused() -> None:
    answer = '{"answer": "x", "_citations": [{"sids": [1], "sids": [2], "pointer": "/answer"}]}'
    with pytest.raises(SidecarError, match=r"answer\.json: _citations\.0\.sids: the key"):
        load_structured(answer, "json", name="answer.json")


# ---------------------------------------------------------------- YAML


def test_a_yaml_pool_file_naming_a_key_twice_is_a_pool_error(tmp_path: Path) -> None:
    pool = tmp_path / "pool.yaml"
    pool.write_text("sources:\n  - sid: 1\n    title: A\n    url: https://a.example/\n"
                    "    title: B\n", encoding="utf-8")
    with pytest.raises(PoolError) as refused:
        SourcePool.load(pool)
    assert str(refused.value) == (
        f"{pool}: sources.0.title: the key 'title' appears twice in one object (line 5, "
        "column 5); accepted: each key once per object"
    )


def test_a_yaml_sidecar_answer_naming_a_key_twice_is_refused() -> None:
    answer = "answer: x\n_citations:\n  - path: /answer\n    sids: [1]\n    sids: [2]\n"
    with pytest.raises(SidecarError, match=r"^answer\.yaml: _citations\.0\.sids: the key 'sids' "
                                           r"appears twice in one object \(line 5, column 5\)"):
        load_structured(answer, "yaml", name="answer.yaml")


def test_yaml_merge_keys_and_equal_keys_of_different_mappings_are_not_repeats() -> None:
    """``<<`` brings keys a mapping may override (YAML's merge); keys repeat across mappings."""
    text = ("base: &base {title: A, url: 'https://a.example/'}\n"
            "more: &more {<<: *base, note: n}\n"
            "rows:\n  - {<<: *more, title: B, sid: 1}\n  - {<<: [*base, *more], sid: 2}\n"
            "  - {sid: 3, title: C}\n")
    data = load_structured(text, "yaml")
    assert [row["title"] for row in data["rows"]] == ["B", "A", "C"]
    assert data["rows"][0]["note"] == "n"


def test_yaml_keys_equal_once_read_are_repeats() -> None:
    """``1`` and ``0x1`` are the same integer key, as a reader of the mapping sees it."""
    with pytest.raises(SidecarError, match=r"^y: x.1: the key '1' appears twice .*line 2, col"):
        load_structured("x: {1: a,\n     0x1: b}\n", "yaml", name="y")


def test_front_matter_naming_a_key_twice_is_refused_at_its_input_line() -> None:
    text = "---\ntitle: A\nauthor: X\ntitle: B\n---\n\nText [[S:1]].\n"
    with pytest.raises(FrontMatterError) as refused:
        front_matter(text)
    assert str(refused.value) == (
        "front matter: title: the key 'title' appears twice in one object (line 4, column 1); "
        "accepted: each key once per object"
    )
    assert (refused.value.code, refused.value.field) == (ErrorCode.INVALID_INPUT, "content")
    assert front_matter("---\ntitle: A\nmeta: {title: B}\n---\n\nText.\n").read
