"""pytest plugin for golden-file tests: ``--update-golden`` and the ``update_golden`` fixture.

Registered through the ``pytest11`` entry point (name ``citerender``), so every pytest run in an
environment where citerender is installed has the option that
:func:`renderers.testing.assert_matches_golden` names in its failure message.
``--update-golden`` sets ``CITERENDER_UPDATE_GOLDEN=1`` for the run, so every
``assert_matches_golden`` call that does not pass ``update=`` itself writes the golden files
instead of comparing (subprocesses the tests start inherit it); the previous value is put back
when the run ends. Disable the plugin with ``-p no:citerender``.
"""

from __future__ import annotations

import os

import pytest

from renderers.testing import UPDATE_ENV, update_requested

OPTION = "--update-golden"
_PREVIOUS = pytest.StashKey[str | None]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--update-golden`` to a ``citerender`` option group."""
    group = parser.getgroup("citerender", "citerender golden files")
    group.addoption(
        OPTION,
        action="store_true",
        default=False,
        help="write golden files from the current output instead of comparing them "
        f"(sets {UPDATE_ENV}=1 for the run; review the diff before committing)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Turn ``--update-golden`` into the environment variable the golden helpers read."""
    if config.getoption(OPTION, default=False):
        config.stash[_PREVIOUS] = os.environ.get(UPDATE_ENV)
        os.environ[UPDATE_ENV] = "1"


def pytest_unconfigure(config: pytest.Config) -> None:
    """Put the environment variable back as it was before the run."""
    if _PREVIOUS not in config.stash:
        return
    previous = config.stash[_PREVIOUS]
    if previous is None:
        os.environ.pop(UPDATE_ENV, None)
    else:
        os.environ[UPDATE_ENV] = previous


@pytest.fixture
def update_golden() -> bool:
    """Whether this run writes golden files (``--update-golden`` or the environment variable)."""
    return update_requested()
