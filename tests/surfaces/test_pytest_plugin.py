"""citerender's pytest plugin, as a user's project meets it: ``--update-golden`` and its fixture.

Each test builds a throw-away project with ``pytester`` (pytest's own fixture for testing
plugins) whose test compares a report with golden files through ``assert_matches_golden``.
"""

from __future__ import annotations

import pytest

from renderers import testing, testing_plugin

USER_TEST = """
from pathlib import Path

from renderers.testing import assert_matches_golden

GOLDEN = Path(__file__).parent / "golden"


def test_weekly_report(tmp_path):
    report = tmp_path / "weekly.md"
    report.write_text(Path(__file__).with_name("content.txt").read_text(), encoding="utf-8")
    assert_matches_golden(report, GOLDEN)


def test_fixture(update_golden):
    print("update_golden =", update_golden)
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.delenv(testing.UPDATE_ENV, raising=False)
    pytester.makepyfile(test_report=USER_TEST)
    pytester.path.joinpath("content.txt").write_text("# Weekly\n\nSolar grew.[^1]\n")
    return pytester


def golden_text(project: pytest.Pytester) -> str:
    return project.path.joinpath("golden", "weekly.md", "document.md").read_text()


def test_a_missing_golden_file_fails_naming_the_option(project: pytest.Pytester) -> None:
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*no golden files for weekly.md*`pytest --update-golden`*"])
    assert not project.path.joinpath("golden").exists()


def test_update_golden_writes_then_a_change_fails_with_a_diff(project: pytest.Pytester) -> None:
    project.runpytest("--update-golden", "-s").assert_outcomes(passed=2)
    assert golden_text(project) == "# Weekly\n\nSolar grew.[^1]\n"
    project.runpytest().assert_outcomes(passed=2)  # unchanged output matches

    project.path.joinpath("content.txt").write_text("# Weekly\n\nWind grew.[^1]\n")
    failed = project.runpytest()
    failed.assert_outcomes(passed=1, failed=1)
    failed.stdout.fnmatch_lines([
        "*weekly.md differs from its golden files*`pytest --update-golden`*",
        "*-Solar grew.*",
        "*+Wind grew.*",
    ])
    project.runpytest("--update-golden").assert_outcomes(passed=2)
    assert golden_text(project) == "# Weekly\n\nWind grew.[^1]\n"


def test_the_fixture_reports_the_option_and_the_environment_is_restored(
    project: pytest.Pytester,
) -> None:
    project.runpytest("-s", "-k", "fixture").stdout.fnmatch_lines(["*update_golden = False*"])
    project.runpytest("-s", "-k", "fixture", "--update-golden").stdout.fnmatch_lines(
        ["*update_golden = True*"]
    )
    assert not testing.update_requested()  # the run's CITERENDER_UPDATE_GOLDEN=1 was undone


def test_the_plugin_sets_the_variable_the_helpers_read() -> None:
    assert testing_plugin.UPDATE_ENV is testing.UPDATE_ENV  # imported, not a second copy


@pytest.mark.slow
def test_a_fresh_pytest_finds_the_plugin_through_its_entry_point(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess("--update-golden", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert golden_text(project).startswith("# Weekly")
    help_text = project.runpytest_subprocess("--help").stdout.str()
    assert "--update-golden" in help_text and "citerender golden files" in help_text
