"""Shared fixtures and hooks; helpers live in ``tests/helpers.py`` and ``tests/support/``.

``--update-golden`` and the ``update_golden`` fixture come from citerender's own pytest plugin
(:mod:`renderers.testing_plugin`, loaded through its entry point), as in any user's project.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

import tests.hypothesis_profiles  # noqa: F401  (registers the Hypothesis profiles)
from tests.helpers import RunningTest

pytest_plugins = ["pytester"]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Tell :mod:`tests.helpers` which test runs (set-up and teardown included), so a helper
    that starts LibreOffice or Chromium can demand the test's marker."""
    RunningTest.item = item
    try:
        return (yield)
    finally:
        RunningTest.item = None


@pytest.fixture(scope="session", autouse=True)
def _no_fsync() -> Iterator[None]:
    """Make ``os.fsync`` a no-op in the test process, module-scoped renders included.

    An fsync only matters when the machine crashes, which no test can check, and each artifact
    write (:func:`citations.atomic.write_atomic`) does two: about 9 ms a write on a 2-core VM's
    disk, the fast loop's largest wait. The tests of the fsync's order and of its failure set
    ``os.fsync`` themselves; fresh processes (CLI runs, services) still fsync.
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "fsync", _skip_fsync)
        yield


def _skip_fsync(fd: int) -> None:
    """:func:`os.fsync`'s stand-in: same signature, no disk flush."""


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
