"""Shared fixtures and the ``--update-golden`` option; helpers live in ``tests/helpers.py``."""

from __future__ import annotations

import pytest

import tests.hypothesis_profiles  # noqa: F401  (registers the Hypothesis profiles)


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
