"""Numbers past Python's 4,300-digit int() limit, and structured input nested past the recursion
limit, are the project's own errors naming the file and field, never a raw ValueError or
RecursionError telling the caller to call ``sys.set_int_max_str_digits()``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citations.errors import PoolError, SidecarError
from citations.grammar import read_digits
from citations.pool import SourcePool
from citations.sidecar import load_structured, resolve_pointer
from renderers import cli

HUGE = "9" * 5000
PYTHON_ADVICE = "set_int_max_str_digits"


def test_read_digits_counts_significant_digits_before_int() -> None:
    assert read_digits("007") == 7
    assert read_digits("000") == 0
    assert read_digits("0" * 6000 + "12") == 12
    assert read_digits(HUGE) is None
    assert read_digits("123", max_digits=2) is None


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"sid": HUGE, "title": "A"}, "sid"),
        ({"sid": "+" + HUGE, "title": "A"}, "sid"),
        ({"sid": 1, "title": "A", "size_bytes": HUGE}, "size_bytes"),
        ({"sid": 1, "title": "A", "size": f" {HUGE} "}, "size_bytes"),
    ],
)
def test_a_huge_digit_string_in_a_row_is_a_pool_error_naming_the_field(
    row: dict[str, object], field: str
) -> None:
    with pytest.raises(PoolError) as info:
        SourcePool.coerce([row])
    message = str(info.value)
    assert message.startswith(f"sources_pool: row 0: {field} is a number too long to read")
    assert "5,000 digits" in message
    assert PYTHON_ADVICE not in message and HUGE not in message


def test_a_superscript_size_is_refused_not_a_raw_value_error() -> None:
    with pytest.raises(PoolError, match="size_bytes '²' is not valid"):
        SourcePool.coerce([{"sid": 1, "title": "A", "size_bytes": "²"}])


def test_digit_strings_within_the_bound_still_load() -> None:
    pool = SourcePool.coerce([{"sid": "0007", "title": "A", "size_bytes": " 12 "}])
    assert [(s.sid, s.size_bytes) for s in pool] == [(7, 12)]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pool.json", f'[{{"sid": {HUGE}, "title": "A"}}]'),
        ("pool.yaml", f"- sid: {HUGE}\n  title: A\n"),
        ("pool.yaml", f"- sid: 1\n  title: A\n  relevance: {HUGE}\n"),
    ],
)
def test_a_huge_number_in_a_pool_file_is_a_pool_error_naming_the_file(
    tmp_path: Path, name: str, text: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PoolError) as info:
        SourcePool.load(path)
    message = str(info.value)
    assert message.startswith(f"{path}: a number too long to read (more than 4,300 digits)")
    assert PYTHON_ADVICE not in message


def test_an_impossible_yaml_date_in_a_pool_is_a_pool_error(tmp_path: Path) -> None:
    path = tmp_path / "pool.yaml"
    path.write_text("- sid: 1\n  title: A\n  published: 2024-13-45\n", encoding="utf-8")
    with pytest.raises(PoolError, match=r"pool\.yaml: a value that cannot be read \(month"):
        SourcePool.load(path)


def test_the_cli_names_the_pool_file_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "doc.md").write_text("Hi [[S:1]]\n", encoding="utf-8")
    pool = tmp_path / "pool.json"
    pool.write_text(json.dumps([{"sid": HUGE, "title": "A"}]), encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["render", str(tmp_path / "doc.md"), "--pool", str(pool),
                  "--to", "md", "--out", str(tmp_path / "o")])
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"citerender: error: {pool}: row 0: sid is a number too long")
    assert PYTHON_ADVICE not in lines[0] and "Traceback" not in lines[0]


# ---------------------------------------------------------------- sidecar and structured answers


def test_a_huge_pointer_index_is_a_sidecar_error_naming_the_pointer() -> None:
    with pytest.raises(SidecarError) as info:
        resolve_pointer({"a": ["x"]}, "/a/" + HUGE)
    message = str(info.value)
    assert message.startswith("JSON Pointer '/a/999")
    assert "an index of 5,000 digits is out of range" in message
    assert PYTHON_ADVICE not in message and len(message) < 300


def test_an_index_of_nineteen_digits_is_out_of_range() -> None:
    with pytest.raises(SidecarError, match="an index of 19 digits is out of range"):
        resolve_pointer({"a": ["x"]}, "/a/1234567890123456789")


@pytest.mark.parametrize(
    ("fmt", "content", "problem"),
    [
        ("json", '{"n": ' + HUGE + "}", "not valid JSON: a number too long to read"),
        ("yaml", f"n: {HUGE}\n", "not valid YAML: a number too long to read"),
        ("json", "[" * 5000 + "]" * 5000, "JSON nested too deeply to read; accepted:"),
        ("yaml", "a: " + "[" * 1000 + "]" * 1000 + "\n", "YAML nested too deeply to read"),
        ("yaml", "a: 2024-13-45\n", "not valid YAML: a value that cannot be read (month"),
    ],
)
def test_structured_content_that_cannot_be_read_is_a_sidecar_error(
    fmt: str, content: str, problem: str
) -> None:
    with pytest.raises(SidecarError) as info:
        load_structured(content, fmt, name="doc." + fmt)  # type: ignore[arg-type]
    message = str(info.value)
    assert message.startswith(f"doc.{fmt}: {problem}")
    assert PYTHON_ADVICE not in message
