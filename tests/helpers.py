"""Helpers shared by test modules: real-client conversions and PDF text (import, don't copy)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def soffice_binary() -> str | None:
    """The LibreOffice binary, or None. In CI its absence fails the test instead of skipping."""
    found = shutil.which("soffice") or shutil.which("libreoffice")
    if found is None and IN_CI:
        pytest.fail("LibreOffice is required in CI (installed by .ci/run)")
    return found


def convert_with_libreoffice(path: Path, out_dir: Path, target: str = "pdf") -> Path:
    """Convert ``path`` with headless LibreOffice (own throw-away profile); return the result."""
    binary = soffice_binary()
    if binary is None:
        pytest.skip("LibreOffice is not installed (outside CI)")
    profile = Path(tempfile.gettempdir()) / f"lo-profile-{uuid.uuid4().hex}"
    try:
        subprocess.run(
            [
                binary,
                f"-env:UserInstallation=file://{profile}",
                "--headless",
                "--norestore",
                "--convert-to",
                target,
                "--outdir",
                str(out_dir),
                str(path),
            ],
            check=True,
            capture_output=True,
            timeout=180,
        )
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    result = out_dir / f"{path.stem}.{target}"
    assert result.exists(), f"LibreOffice produced no {target} for {path.name}"
    return result


def pdf_text(path: Path) -> str:
    """All text of a PDF, pages joined with form feeds (pypdf)."""
    from pypdf import PdfReader

    reader = PdfReader(str(path))
    return "\f".join(page.extract_text() or "" for page in reader.pages)
