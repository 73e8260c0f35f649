"""Running the installed ``citerender`` command in a real process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import ROOT

CITERENDER = ROOT / ".venv" / "bin" / "citerender"


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The installed console script in a real process (stdout is a pipe: not a tty)."""
    command = [str(CITERENDER)] if CITERENDER.exists() else [sys.executable, "-m", "renderers.cli"]
    env = {**os.environ, "COLUMNS": "120"}
    return subprocess.run(
        [*command, *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=env
    )
