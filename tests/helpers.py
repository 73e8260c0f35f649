"""Real clients for tests (LibreOffice, Chromium, PDF text) and the markers they demand.

Every use of a real client goes through this module, which fails a test that lacks the
client's marker (``libreoffice``, ``browser``; a fresh render process demands ``slow``), so
``make test-fast`` (``-m "not slow and not libreoffice and not browser"``) cannot drift into
running them. ``tests/conftest.py`` tells this module which test is running.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]


class RunningTest:
    """The test item pytest is running in this process (set by ``tests/conftest.py``)."""

    item: pytest.Item | None = None


def require_marker(marker: str, what: str) -> None:
    """Fail the running test unless it (its class or module) is marked ``marker``."""
    item = RunningTest.item
    if item is not None and item.get_closest_marker(marker) is None:
        pytest.fail(
            f"{item.nodeid} {what} but is not marked @pytest.mark.{marker}; mark it so that "
            "`make test-fast` leaves it out",
            pytrace=False,
        )


def require_client(available: bool, why: str) -> None:
    """Skip when a real client is missing, except in CI, where its absence fails the test."""
    if not available:
        if IN_CI:
            pytest.fail(f"{why} (required in CI, installed by .ci/system-deps)")
        pytest.skip(why)


def soffice_binary() -> str | None:
    """The LibreOffice binary, or None."""
    return shutil.which("soffice") or shutil.which("libreoffice")


def convert_with_libreoffice(path: Path, out_dir: Path, target: str = "pdf") -> Path:
    """Convert ``path`` with headless LibreOffice (own throw-away profile); return the result."""
    require_marker("libreoffice", "runs LibreOffice")
    binary = soffice_binary()
    require_client(binary is not None, "LibreOffice is not installed")
    assert binary is not None
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


@contextmanager
def chromium_browser() -> Iterator[Any]:
    """A headless Chromium (playwright ``Browser``) for the running test; closed afterwards."""
    require_marker("browser", "drives Chromium")
    require_client(
        Path(CHROMIUM).exists() or shutil.which("chromium") is not None,
        f"Chromium is not installed at {CHROMIUM}",
    )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - depends on the environment
        require_client(False, "the playwright package is not installed")
        raise
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def pdf_text(path: Path) -> str:
    """All text of a PDF, pages joined with form feeds (pypdf)."""
    from pypdf import PdfReader

    reader = PdfReader(str(path))
    return "\f".join(page.extract_text() or "" for page in reader.pages)
