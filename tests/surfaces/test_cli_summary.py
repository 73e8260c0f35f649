"""The batch summary counts Sources entries, as the document lists them, not sids."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

POOL = [
    {"sid": 1, "title": "IEA WEO", "url": "https://www.iea.org/reports/weo-2024"},
    {"sid": 2, "title": "IEA WEO (tracking link)",
     "url": "HTTPS://WWW.IEA.ORG:443/reports/weo-2024/?utm_source=x"},
    {"sid": 3, "title": "IRENA", "url": "https://www.irena.org/stats"},
]


@pytest.mark.slow
def test_sources_cited_counts_deduplicated_entries(tmp_path: Path) -> None:
    (tmp_path / "pool.json").write_text(json.dumps(POOL), encoding="utf-8")
    (tmp_path / "a.md").write_text("One [[S:1]], same [[S:2]], other [[S:3]].\n", "utf-8")
    (tmp_path / "b.md").write_text("Only [[S:3]].\n", "utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "renderers.cli", "render", "a.md", "b.md", "--pool", "pool.json",
         "--to", "md", "--out", "out"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "COLUMNS": "160"},
    )
    assert result.returncode == 0, result.stderr
    rows = {line.split("│")[1].strip(): line.split("│")[3].strip()
            for line in result.stdout.splitlines() if line.startswith("│")}
    assert rows["a.md"] == "2"  # sids 1 and 2 are one source
    assert rows["b.md"] == "1"
    markdown = (tmp_path / "out" / "a.md").read_text("utf-8")
    assert markdown.count("[^1]:") == 1 and "[^3]:" not in markdown
