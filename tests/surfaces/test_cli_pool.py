"""``citerender pool add`` / ``pool show``: tool outputs and answers into a registry."""

from __future__ import annotations

import codecs
import json
import shutil
from pathlib import Path

import pytest

from citations.pool import SourcePool
from tests.support.cli import run_cli

pytestmark = pytest.mark.slow  # every test starts the command in a fresh process

ANSWERS = Path(__file__).resolve().parent.parent / "fixtures" / "answers"
SEARCH = {"results": [
    {"title": "Renewables 2024", "url": "https://www.iea.org/reports/renewables-2024",
     "snippet": "Record additions.", "published_date": "2024-10-09"},
    {"title": "Statistics", "link": "https://www.irena.org/Data", "snippet": "Capacity data."},
]}


def test_add_prints_the_sid_map_and_show_prints_the_prompt_block(tmp_path: Path) -> None:
    (tmp_path / "search.json").write_text(json.dumps(SEARCH), encoding="utf-8")
    first = run_cli("pool", "add", "conv/pool.json", "search.json", "--tool", "web_search",
                    cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines() == [
        "2 source(s) from tool 'web_search' → conv/pool.json", "  1 → 1 (new)", "  2 → 2 (new)"]
    again = {"results": [{"title": "Other", "url": "https://www.irena.org/Data/",
                          "published": "2024-07-01"},
                         {"title": "New", "url": "https://ember-energy.org/"}]}
    (tmp_path / "again.json").write_text(json.dumps(again), encoding="utf-8")
    second = run_cli("pool", "add", "conv/pool.json", "again.json", "--json", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout) == {"sid_map": {"1": 2, "2": 3}, "added": [3],
                                         "enriched": [2], "near_duplicates": []}
    pool = SourcePool.load(tmp_path / "conv" / "pool.json")
    assert pool.get(2).title == "Statistics" and pool.get(2).published_at == "2024-07-01"  # type: ignore[union-attr]
    shown = run_cli("pool", "show", "conv/pool.json", "so:sources_pool[2-3]", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == (
        'SOURCES POOL (2 sources):\n[S:2] irena.org | "Statistics" | 2024-07-01\n'
        '[S:3] ember-energy.org | "New"\n'
    )


def test_add_takes_a_provider_answer_and_mcp_results(tmp_path: Path) -> None:
    shutil.copy(ANSWERS / "anthropic-web-search.json", tmp_path / "answer.json")
    done = run_cli("pool", "add", "timeline.json", "answer.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        "3 source(s) from Anthropic Messages content blocks with citations → timeline.json")
    mcp = {"content": [{"type": "resource_link", "uri": "https://ember-energy.org/report",
                        "name": "Ember report"}], "isError": False}
    (tmp_path / "mcp.json").write_text(json.dumps(mcp), encoding="utf-8")
    done = run_cli("pool", "add", "timeline.json", "mcp.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "1 → 4 (new)" in done.stdout
    data = json.loads((tmp_path / "timeline.json").read_text("utf-8"))
    assert [row["sid"] for row in data["sources_pool"]] == [1, 2, 3, 4]


def test_near_duplicates_are_warned_about(tmp_path: Path) -> None:
    text = ("Heat pump sales in Europe fell by about twenty one percent in 2024 as subsidy "
            "cuts in Germany and weaker gas prices slowed the market across fourteen countries")
    results = {"results": [{"title": "A", "url": "https://a.org", "snippet": text},
                           {"title": "B", "url": "https://b.org", "snippet": text + "."}]}
    (tmp_path / "dups.json").write_text(json.dumps(results), encoding="utf-8")
    done = run_cli("pool", "add", "pool.json", "dups.json", "--near-duplicates", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert ("citerender: warning: pool.json: sid 2 reads like sid 1 (0 of 64 bits apart) under "
            "another URL; kept apart") in done.stderr
    assert len(SourcePool.load(tmp_path / "pool.json")) == 2


def test_errors_are_one_line(tmp_path: Path) -> None:
    (tmp_path / "pool.json").write_text("{oops", encoding="utf-8")
    (tmp_path / "search.json").write_text(json.dumps(SEARCH), encoding="utf-8")
    (tmp_path / "empty.json").write_text("[]", encoding="utf-8")
    cases = [
        (("pool", "add", "pool.json", "search.json"), "pool.json: not valid JSON"),
        (("pool", "add", "new.json", "missing.json"), "missing.json: No such file"),
        (("pool", "add", "new.json", "empty.json"), "empty.json: no sources found"),
        (("pool", "show", "absent.json"), "absent.json: pool file not found"),
    ]
    for args, message in cases:
        done = run_cli(*args, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stdout)
        assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    assert (tmp_path / "pool.json").read_text("utf-8") == "{oops"


@pytest.mark.parametrize(
    ("text", "where"),
    [("nope, not json\n", "line 1, column 1"), ('\n{"results": [1,\n', "line 3, column 1"),
     ('{"a": ', "line 1, column 7")],
)
def test_add_says_a_json_file_is_not_valid_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, where: str
) -> None:
    """Invalid JSON was read as plain text (or not at all) and reported as "no sources found"."""
    from renderers import cli

    (tmp_path / "bad.json").write_text(text, encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["pool", "add", str(tmp_path / "reg.json"), str(tmp_path / "bad.json")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"bad.json: not valid JSON ({where}: Expecting value)" in err
    assert "no sources found" not in err and not (tmp_path / "reg.json").exists()


def test_add_reads_a_tool_output_saved_as_utf16(tmp_path: Path) -> None:
    """Windows PowerShell 5's ``>`` saves UTF-16 LE with its byte-order mark."""
    (tmp_path / "search.json").write_bytes(json.dumps(SEARCH, ensure_ascii=False).encode("utf-16"))
    added = run_cli("pool", "add", "pool.json", "search.json", "--tool", "web_search", cwd=tmp_path)
    assert added.returncode == 0, added.stderr
    assert SourcePool.load(tmp_path / "pool.json").get(1).title == "Renewables 2024"  # type: ignore[union-attr]
    (tmp_path / "broken.json").write_bytes(codecs.BOM_UTF16_LE + b"\x00\xd8")
    broken = run_cli("pool", "add", "pool.json", "broken.json", cwd=tmp_path)
    assert broken.returncode == 2
    assert broken.stderr.strip() == (
        "citerender: error: broken.json: not valid UTF-16, although it opens with that "
        "byte-order mark (byte 2); save the file as UTF-8")
