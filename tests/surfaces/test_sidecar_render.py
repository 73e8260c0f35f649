"""``citerender render answer.json``: a sidecar answer renders as a readable cited document."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from renderers.api import render, render_file

POOL = [
    {"sid": 1, "title": "IEA World Energy Outlook", "url": "https://iea.org/weo"},
    {"sid": 2, "title": "IRENA statistics", "url": "https://irena.org/stats"},
]
ANSWER = {
    "summary": "Solar capacity grew 30 % in 2024.",
    "key_findings": ["Costs fell again.", "Storage doubled."],
    "_citations": [{"path": "/summary", "sids": [1]}, {"path": "/key_findings/1", "sids": [2]}],
}


def test_a_sidecar_file_renders_headings_citations_and_sources(tmp_path: Path) -> None:
    source = tmp_path / "answer.json"
    source.write_text(json.dumps(ANSWER), encoding="utf-8")
    results = render_file(source, tmp_path / "out", formats=("md", "html"), sources_pool=POOL)
    markdown = (tmp_path / "out" / "answer.md").read_text("utf-8")
    assert "# Summary" in markdown and "Solar capacity grew 30 % in 2024.[^1]" in markdown
    assert "- Storage doubled.[^2]" in markdown
    assert "[^1]: [IEA World Energy Outlook](https://iea.org/weo)" in markdown
    assert "_citations" not in markdown
    assert results[0].sources_used == [1, 2]
    html = (tmp_path / "out" / "answer.html").read_text("utf-8")
    assert "<h1" in html and 'href="#src-2"' in html


def test_a_sidecar_object_renders_through_the_api(tmp_path: Path) -> None:
    (result,) = render(ANSWER, tmp_path, name="a", formats=("md",), sources_pool=POOL)
    assert result.sources_used == [1, 2]


def test_a_malformed_sidecar_names_the_field(tmp_path: Path) -> None:
    bad = {"summary": "x", "_citations": [{"path": 7, "sids": [1]}]}
    with pytest.raises(Exception, match="_citations") as caught:
        render(bad, tmp_path, name="b", formats=("md",), sources_pool=POOL)
    assert getattr(caught.value, "field", "").startswith("answer")
