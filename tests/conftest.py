"""Shared fixtures and real-client helpers for the test suite."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

import tests.hypothesis_profiles  # noqa: F401  (registers the Hypothesis profiles)

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


@pytest.fixture
def sample_pool() -> list[dict[str, object]]:
    """A small realistic pool: web sources, a duplicate URL and a file attachment."""
    return [
        {"sid": 1, "title": "World Energy Outlook 2024", "url": "https://www.iea.org/reports/weo-2024",
         "published_at": "2024-10-16", "source_type": "web"},
        {"sid": 2, "title": "Renewable Capacity Statistics", "url": "https://www.irena.org/Publications/2024/Mar/stats",
         "source_type": "web"},
        {"sid": 3, "title": "Lazard LCOE+", "url": "https://www.lazard.com/research-insights/lcoe/",
         "source_type": "web", "published_at": "2024-06-11"},
        {"sid": 4, "title": "IEA WEO (tracking link)", "url": "HTTPS://WWW.IEA.ORG:443/reports/weo-2024/?utm_source=x#top",
         "source_type": "web"},
        {"sid": 5, "title": "Board memo", "artifact_path": "attachments/memo.pdf",
         "physical_path": "attachments/memo.pdf", "mime": "application/pdf", "source_type": "file"},
    ]


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--update-golden``: rewrite tests/golden/ from the current output instead of comparing."""
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="regenerate the golden files in tests/golden/ (review the diff before committing)",
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    """Whether this run regenerates golden files (``--update-golden``)."""
    return bool(request.config.getoption("--update-golden"))
