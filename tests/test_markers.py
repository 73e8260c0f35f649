"""The suite's markers cannot drift: a test that starts a real client must carry its marker.

``make test-fast`` deselects ``slow``, ``libreoffice`` and ``browser``. LibreOffice, Chromium
and fresh render processes are started only through ``tests/helpers.py`` and
``tests/support/render.py``, which fail an unmarked test before starting anything.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers import RunningTest, chromium_browser, convert_with_libreoffice, require_marker
from tests.support.render import render_in_fresh_process

TESTS = Path(__file__).resolve().parent
#: Ways of starting a real client that must stay inside the helper modules (a fake ``soffice``
#: on PATH, as the system-deps test writes one, starts nothing and is fine).
CLIENT_STARTS = re.compile(r"--convert-to|--headless|sync_playwright|chromium\.launch")
HELPER_MODULES = {TESTS / "helpers.py", Path(__file__).resolve()}


def test_the_running_test_is_known_to_the_helpers(request: pytest.FixtureRequest) -> None:
    assert RunningTest.item is request.node


def test_libreoffice_without_the_marker_fails_before_starting(tmp_path: Path) -> None:
    with pytest.raises(pytest.fail.Exception, match=r"not marked @pytest\.mark\.libreoffice"):
        convert_with_libreoffice(tmp_path / "missing.docx", tmp_path)


def test_chromium_without_the_marker_fails_before_starting() -> None:
    with pytest.raises(pytest.fail.Exception, match=r"not marked @pytest\.mark\.browser"), \
            chromium_browser():
        pass  # pragma: no cover - never reached


def test_a_fresh_render_process_without_slow_fails_before_starting() -> None:
    with pytest.raises(pytest.fail.Exception, match=r"not marked @pytest\.mark\.slow"):
        render_in_fresh_process("md", "x\n", [])


def test_a_marked_test_passes_the_check(request: pytest.FixtureRequest) -> None:
    request.node.add_marker(pytest.mark.libreoffice)
    require_marker("libreoffice", "runs LibreOffice")  # does not fail


def test_real_clients_start_only_in_the_helpers() -> None:
    offenders = [
        f"{path.relative_to(TESTS)}:{number}: {line.strip()}"
        for path in sorted(TESTS.rglob("*.py"))
        if path not in HELPER_MODULES
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if CLIENT_STARTS.search(line)
    ]
    assert not offenders, "start LibreOffice/Chromium through tests/helpers.py:\n" + "\n".join(
        offenders
    )
