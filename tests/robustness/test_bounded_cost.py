"""Bounded cost: every input of issue 13 rendered in a child process under a memory cap and a
time ceiling (issue 13, "Must show"). The cases live in :mod:`tests.robustness.bounded_cases`.

A case passes when its child finishes within :data:`CEILING_S`, inside its address-space cap
(``RLIMIT_AS``: what the imports mapped plus ``HEADROOM``), with each format either rendered or
refused with a typed error, never a crash or a ``MemoryError``, and writes at most
:data:`MAX_OUTPUT_BYTES`. The ceilings are generous on purpose (a loaded CI machine): they catch
minutes and gigabytes, the failures issue 13 reported, not a regression of a few percent.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import ROOT
from tests.robustness.bounded_cases import CASES, reference_image_uri

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc (Linux)"),
]

CEILING_S = 150
MAX_OUTPUT_BYTES = 20 * 1024 * 1024
#: What each case must end in, format by format: "ok", or the error class and code.
EXPECTED: dict[str, dict[str, str]] = {
    "ranges-expanded": dict.fromkeys(("md", "html", "docx"), "LimitError:limit_exceeded"),
    "ranges-compressed": dict.fromkeys(("md", "html", "docx", "pptx"), "ok"),
    "reference-images": dict.fromkeys(("md", "docx", "pptx", "html", "pdf"), "ok"),
    "long-code-line": {"pdf": "ok"},
    "long-title": {"pdf": "ok"},
    "long-pre-html": {"pdf": "ok"},
    "huge-page": {"png": "LimitError:limit_exceeded"},
    "brackets": dict.fromkeys(("md", "html", "pdf"), "ok"),
    "long-integer-sid": {"md": "PoolError:invalid_sources_pool"},
    "deep-nesting": dict.fromkeys(("md", "html"), "LimitError:limit_exceeded"),
    "deep-html": dict.fromkeys(("md", "pdf"), "LimitError:limit_exceeded"),
    "yaml-alias-bomb": {"md": "PoolError:invalid_sources_pool"},
    "wide-table": dict.fromkeys(("md", "docx", "html"), "LimitError:limit_exceeded"),
    "wide-table-allowed": dict.fromkeys(("md", "docx", "html"), "ok"),
    "million-tokens": {"md": "LimitError:limit_exceeded"},
    "million-row-pool": {"md": "LimitError:limit_exceeded"},
    "many-pages": {"pdf": "LimitError:limit_exceeded"},
    "swallowing-html": dict.fromkeys(("html", "pdf"), "ok"),
    "zip-bomb-reference": {"docx": "OptionError:invalid_argument"},
    "css-escapes": {"pdf": "ok"},
    "unclosed-cite-sups": {"md": "ok"},
    "long-list": {"md": "ok"},
    "many-attributes": {"md": "RenderTimeout:limit_exceeded"},
    "many-html-tags": {"md": "RenderTimeout:limit_exceeded"},
    "long-mark-run": {"pdf": "ok"},
    "long-mark-run-typst": {"pdf": "ok"},
}


#: Cases whose every output must stay near one copy of what it embeds: the most bytes any
#: format may write, as a function of the case's input.
MAX_FORMAT_BYTES: dict[str, Callable[[], int]] = {
    # an image shown 200 times is written once, in every format
    "reference-images": lambda: 2 * len(reference_image_uri()),
}


def test_every_case_has_an_expectation() -> None:
    assert set(EXPECTED) == set(CASES)
    for name, case in CASES.items():
        assert set(EXPECTED[name]) == set(case.formats), name


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_input_costs_bounded_time_memory_and_output(name: str, tmp_path: Path) -> None:
    try:
        child = subprocess.run(
            [sys.executable, "-m", "tests.robustness.bounded_cases", name, str(tmp_path / "out")],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=CEILING_S,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{CASES[name].item}: still running after {CEILING_S} s")
    assert child.returncode == 0, f"{CASES[name].item}: the child failed:\n{child.stderr[-3000:]}"
    report = json.loads(child.stdout.strip().splitlines()[-1])
    assert report["results"] == EXPECTED[name], CASES[name].item
    assert report["bytes"] <= MAX_OUTPUT_BYTES, f"{CASES[name].item}: wrote {report['bytes']:,}"
    if name in MAX_FORMAT_BYTES:
        most = MAX_FORMAT_BYTES[name]()
        assert all(size < most for size in report["sizes"].values()), (CASES[name].item, most,
                                                                       report["sizes"])
