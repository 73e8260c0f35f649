"""Shared fixtures and hooks; helpers live in ``tests/helpers.py`` and ``tests/support/``.

``--update-golden`` and the ``update_golden`` fixture come from citerender's own pytest plugin
(:mod:`renderers.testing_plugin`, loaded through its entry point), as in any user's project.
"""

from __future__ import annotations

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
