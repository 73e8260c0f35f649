"""The audit reads JSON/YAML answers' sidecars, checks contiguity, and counts real coverage."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from citations.audit import audit, structured_format

POOL = [
    {"sid": 1, "title": "IEA", "url": "https://iea.org/a"},
    {"sid": 2, "title": "IRENA", "url": "https://irena.org/b"},
    {"sid": 3, "title": "Lazard", "url": "https://lazard.com/c"},
]

ANSWER = {
    "summary": "Solar grew 30 %.",
    "sections": [{"title": "Costs", "body": "PV is cheapest."}, {"body": "Storage [[S:2]]."}],
    "_citations": [
        {"path": "/summary", "sids": [1, 99]},
        {"path": "/sections/0/body", "sids": [3]},
        {"path": "/nowhere/0", "sids": [1]},
        {"path": "/sections", "sids": [1]},
        {"path": 5, "sids": [1]},
        {"path": "/sections/0/title", "sids": ["2"]},
        "just text",
    ],
}


def test_a_sidecar_answer_reports_unknown_sids_and_every_bad_entry() -> None:
    report = audit(json.dumps(ANSWER), POOL, content_format="json")
    data = report.to_dict()
    assert data["unknown_sids"] == [99]
    assert data["cited_sids"] == [1, 3, 2]
    bad = {t["text"]: t["reason"] for t in data["invalid_tokens"]}
    assert set(bad) == {"/nowhere/0", "/sections", "/_citations/4", "/sections/0/title",
                        "/_citations/6"}
    assert "names nothing" in bad["/nowhere/0"]
    assert "not a string" in bad["/sections"]
    assert "positive integers" in bad["/sections/0/title"]
    assert data["ok"] is False
    assert data["contiguous"] is True


def test_a_sound_yaml_answer_is_ok_and_lists_orphans() -> None:
    text = "summary: Solar grew.\n_citations:\n  - path: /summary\n    sids: [2]\n"
    report = audit(text, POOL, content_format="yaml")
    assert report.ok and report.cited_sids == (2,) and report.orphaned_sids == (1, 3)
    assert report.coverage == 1.0


def test_structured_answers_are_recognized_by_extension_or_content() -> None:
    assert structured_format("a.json", "") == "json"
    assert structured_format("a.YML", "") == "yaml"
    assert structured_format("answer", '{"a": 1}') == "json"
    assert structured_format("notes.md", "# Title") is None
    assert structured_format("x", "{not json") is None


def test_a_paragraph_citing_only_unknown_sids_is_not_covered() -> None:
    text = "First claim [[S:1]].\n\nSecond claim [[S:42]].\n"
    assert audit(text, POOL).coverage == 0.5


def test_contiguous_is_in_the_json_report() -> None:
    data = audit("A [[S:3]] and [[S:1]].", POOL).to_dict()
    assert data["contiguous"] is True
    assert data["numbers"] == {"3": 1, "1": 2}


def test_cli_audit_of_a_json_answer_exits_1_with_the_problems(tmp_path: Path) -> None:
    answer = tmp_path / "answer.json"
    answer.write_text(json.dumps(ANSWER))
    pool = tmp_path / "pool.json"
    pool.write_text(json.dumps(POOL))
    done = subprocess.run(
        [sys.executable, "-m", "renderers.cli", "audit", str(answer), "--pool", str(pool),
         "--json"],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    assert data["unknown_sids"] == [99]
    assert len(data["invalid_tokens"]) == 5
