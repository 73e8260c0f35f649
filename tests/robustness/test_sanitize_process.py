"""HTML whose cleaning by nh3 may run long is cleaned in a child process the deadline can kill
(:mod:`renderers.readers.sanitize_process`): same bytes, stopped at ``max_seconds``, no orphan."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from renderers.api import render_file
from renderers.deadline import RenderTimeout
from renderers.errors import RenderError
from renderers.readers import sanitize_process
from renderers.readers.sanitize import sanitize_html
from tests.helpers import ROOT

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")

POOL = [{"sid": 1, "title": "Source", "url": "https://e.example/"}]
#: Cleaned in process in about 33 s here (one text node of 1.5 million no-break spaces).
SLOW_PARAGRAPH = "<p>" + "\xa0" * 1_500_000 + "</p>"
#: Inputs with every kind of slow character, in text and in kept attributes.
SAMPLES = [
    '<p class="x" id="a\xa0b">caf\xe9 \xa0 &amp; \xa9 \xab\xbb <b>&lt;b&gt;</b> \U0001f600</p>',
    '<h2 class="unlisted">T</h2><a href="https://e.example/?a=1&amp;b=2">x\xb7y</a>'
    "<style>p { color: red; background: url(http://e.example/x.png) }</style>"
    '<script>alert(1)</script><img src="data:image/png;base64,AAAA" onerror="x">'
    '<span class="cite" data-sids="1,3">[1]</span><p style="text-align: center">c</p>',
]


def children_of(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


@pytest.mark.parametrize("sample", SAMPLES)
@pytest.mark.parametrize(
    ("keep_styles", "keep_classes"), [(False, False), (True, False), (False, True)]
)
def test_the_child_cleans_to_the_same_bytes(
    sample: str, keep_styles: bool, keep_classes: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    in_process = sanitize_html(sample, keep_styles=keep_styles, keep_classes=keep_classes)
    monkeypatch.setattr(sanitize_process, "IN_PROCESS_NS", 0)  # every input goes out
    assert sanitize_process.may_clean_long(sample)
    out_of_process = sanitize_html(sample, keep_styles=keep_styles, keep_classes=keep_classes)
    assert out_of_process == in_process


def test_only_inputs_with_many_slow_characters_leave_the_process() -> None:
    long_plain = "<p>" + "word " * 1_000_000 + "</p>"  # 5 MB, not one & or 0xC2 byte
    assert not sanitize_process.may_clean_long(long_plain)
    assert not sanitize_process.may_clean_long("<p>" + "&amp; \xa0 " * 5_000 + "</p>")
    assert sanitize_process.may_clean_long(SLOW_PARAGRAPH)
    assert sanitize_process.may_clean_long("<pre>" + "a && b\n" * 50_000 + "</pre>")


def test_many_attributes_leave_the_process_and_prose_stays() -> None:
    """html5ever checks each attribute against its tag's earlier ones (160,000 on one tag: 5.7 s)
    and merges each ``<html>`` tag's into the root (40,000 tags: 30 s), before any output."""
    one_tag = "<p " + " ".join(f"a{i}" for i in range(40_000)) + ">x</p>"
    assert sanitize_process.may_clean_long(one_tag)
    assert sanitize_process.may_clean_long(one_tag.replace("<p ", "</p ") + "x")  # end tags too
    assert sanitize_process.may_clean_long("<p " + "".join(f'a{i}=""' for i in range(40_000)) + ">")
    assert sanitize_process.may_clean_long("<p " + "/".join(f"a{i}" for i in range(40_000)) + ">")
    assert sanitize_process.may_clean_long("<p>x</p>" + "<HTML a>" * 5_000)
    # a quoted value may carry a tag past ">": what follows its closing quote still counts
    assert sanitize_process.may_clean_long(
        "<p " + " ".join(f'a{i} b{i}=">"' for i in range(20_000)) + ">x</p>"
    )
    # text is no tag: its white space, however much, is not counted
    assert not sanitize_process.may_clean_long("<p>" + "word " * 1_000_000 + "</p>")
    assert not sanitize_process.may_clean_long(
        "<p class='x'>" + "A sentence of words, <b>some bold</b>.\n" * 20_000 + "</p>"
    )
    assert not sanitize_process.may_clean_long("<p>x</p>" + "<html a>" * 1_000)


def test_a_failing_child_is_a_render_error_that_says_so() -> None:
    """A lone surrogate (which the input's own cleaning never lets through) fails in nh3."""
    with pytest.raises(RenderError, match=r"process stopped with status 1: UnicodeEncodeError"):
        sanitize_process.clean_in_child("<p>\ud800</p>", keep_styles=False, keep_classes=False)


@pytest.mark.slow
def test_a_render_stops_at_max_seconds_while_nh3_cleans(tmp_path: Path) -> None:
    """In process this input held the render for about 33 s, past any deadline: nh3 is one
    call into native code. Now the render stops at its deadline and kills the child."""
    source = tmp_path / "in.html"
    source.write_text(f"<html><body><h1>T</h1>{SLOW_PARAGRAPH}</body></html>", encoding="utf-8")
    earlier = set(children_of(os.getpid()))  # a session fixture's server, say
    started = time.monotonic()
    with pytest.raises(RenderTimeout, match=r"max_seconds=2 s \(stopped while reading"):
        render_file(source, tmp_path / "out", sources_pool=POOL, formats=["md"],
                    limits={"max_seconds": 2})
    assert time.monotonic() - started < 10
    assert set(children_of(os.getpid())) <= earlier  # the child killed and reaped
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


@pytest.mark.slow
def test_the_child_dies_with_its_parent(tmp_path: Path) -> None:
    """A service worker killed at its hard timeout must not leave nh3 running for minutes."""
    script = (
        "import sys; from renderers.readers.sanitize_process import clean_in_child; "
        "clean_in_child(sys.stdin.read(), keep_styles=False, keep_classes=False)"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdin=subprocess.PIPE,
                              text=True, encoding="utf-8")
    assert parent.stdin is not None
    parent.stdin.write(SLOW_PARAGRAPH)
    parent.stdin.close()
    ends = time.monotonic() + 20
    while not children_of(parent.pid) and time.monotonic() < ends:
        time.sleep(0.05)
    [child] = children_of(parent.pid)
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    while Path(f"/proc/{child}").exists() and time.monotonic() < ends:
        time.sleep(0.05)
    assert not Path(f"/proc/{child}").exists()
