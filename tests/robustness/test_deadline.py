"""``limits.max_seconds``: a render in the caller's process stops at its deadline, names the
limit, and keeps what was already written (issue 13, item 4)."""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path

import pytest

from renderers.api import render
from renderers.deadline import REPEAT_S, Deadline, RenderTimeout
from renderers.errors import LimitError
from tests.support.cli import run_cli

POOL = [{"sid": 1, "title": "Source", "url": "https://e.example/"}]
#: A report WeasyPrint needs far more than a second to lay out (about 400 pages).
LONG_REPORT = "# Long\n\n" + "\n\n".join(
    f"Paragraph {i} " + "words " * 80 + "[[S:1]]" for i in range(2_500)
)
#: Upper bound for a loop that the deadline should stop much earlier.
GIVE_UP_S = 30.0


def busy(seconds: float) -> None:
    """Pure Python work for up to ``seconds``."""
    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        sum(range(1_000))


def test_a_busy_stage_is_interrupted_and_named() -> None:
    deadline = Deadline(0.3)
    started = time.monotonic()
    stopped = r"max_seconds=0.3 s \(stopped while spinning\)"
    with pytest.raises(RenderTimeout, match=stopped), deadline.armed("spinning"):
        busy(GIVE_UP_S)
    assert time.monotonic() - started < GIVE_UP_S / 2


def test_a_library_that_swallows_exceptions_is_interrupted_again() -> None:
    deadline = Deadline(0.2)
    swallowed = 0
    with pytest.raises(RenderTimeout), deadline.armed("swallowing"):
        ends = time.monotonic() + GIVE_UP_S
        while time.monotonic() < ends:
            try:
                busy(0.05)
            except Exception:  # what a careless library does; the interrupt is not one
                swallowed += 1
    assert swallowed == 0


@pytest.mark.slow
def test_a_stage_that_ends_in_time_leaves_nothing_pending() -> None:
    deadline = Deadline(0.5)
    with deadline.armed("quick"):
        busy(0.01)
    busy(0.5 + 3 * REPEAT_S)  # past the deadline: no interrupt may arrive now


def test_a_stage_that_starts_after_the_deadline_fails_at_once() -> None:
    deadline = Deadline(0.05)
    time.sleep(0.1)
    with pytest.raises(RenderTimeout, match="stopped while late"), deadline.armed("late"):
        pytest.fail("the stage ran")


@pytest.mark.slow
def test_a_render_stops_at_max_seconds_and_keeps_what_was_written(tmp_path: Path) -> None:
    render("# Earlier\n\nText [[S:1]].\n", tmp_path, name="report", sources_pool=POOL,
           formats=["md"])
    earlier = (tmp_path / "report.md").read_bytes()
    started = time.monotonic()
    stages = "reading the input|making the md|making the pdf"  # how far a loaded machine gets
    stopped = rf"limits.max_seconds=1 s \(stopped while ({stages})\)"
    with pytest.raises(LimitError, match=stopped) as caught:
        render(LONG_REPORT, tmp_path, sources_pool=POOL, formats=["md", "pdf"],
               limits={"max_seconds": 1})
    assert caught.value.field == "limits.max_seconds"
    assert time.monotonic() - started < GIVE_UP_S
    written = (tmp_path / "report.md").read_bytes()  # the earlier file, or all of the new one
    last_line = "[^1]: [Source](https://e.example/) — e.example\n".encode()
    assert written == earlier or written.endswith(last_line)
    assert not (tmp_path / "report.pdf").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp files
    # the next render in the same process is not disturbed by the earlier interrupt
    render("# Short\n\nText [[S:1]].\n", tmp_path, name="short", sources_pool=POOL,
           formats=["pdf"], limits={"max_seconds": 60})
    assert (tmp_path / "short.pdf").read_bytes().startswith(b"%PDF")


@pytest.mark.slow
@pytest.mark.parametrize("late", ["before", "during"])
def test_the_typst_compile_is_bounded_by_max_seconds_before_and_after(
    late: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Typst's compile cannot be interrupted: a deadline passed before it starts stops the
    render without compiling, and one passed while it runs stops the render as it returns,
    before anything is written."""
    import typst

    from renderers.writers.typst import markup, writer

    real_source, real_compiler = markup.typst_source, typst.Compiler
    compiled: list[float] = []  # when each compile returned

    def slow_source(*args: object, **kwargs: object) -> object:
        busy(GIVE_UP_S)  # Python work: the deadline passes here
        return real_source(*args, **kwargs)  # type: ignore[arg-type]

    class SlowCompiler:  # what a compile longer than the deadline looks like from Python
        def __init__(self, **kwargs: object) -> None:
            self.real = real_compiler(**kwargs)

        def compile_with_warnings(self, **kwargs: object) -> object:
            result = self.real.compile_with_warnings(**kwargs)
            compiled.append(time.monotonic() + 1.5)
            time.sleep(1.5)  # in C, like Typst: the interrupt waits until it returns
            return result

        def query(self, **kwargs: object) -> object:
            return self.real.query(**kwargs)

    if late == "before":
        monkeypatch.setattr(writer, "typst_source", slow_source)
    else:
        monkeypatch.setattr(writer.typst, "Compiler", SlowCompiler)
    started = time.monotonic()
    with pytest.raises(RenderTimeout, match=r"max_seconds=1 s \(stopped while making the pdf"):
        render("# T\n\nText [[S:1]].\n", tmp_path, sources_pool=POOL, formats=["pdf"],
               pdf_engine="typst", limits={"max_seconds": 1})
    stopped = time.monotonic()
    assert stopped - started < GIVE_UP_S / 2
    assert len(compiled) == (0 if late == "before" else 1)  # never started, or ran once
    if compiled:
        assert stopped - compiled[0] < 1.0  # at once when the compile returned
    assert not list(tmp_path.iterdir())


@pytest.mark.slow
def test_the_cli_reports_the_limit_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "long.md").write_text(LONG_REPORT, encoding="utf-8")
    (tmp_path / "long.pool.json").write_text(
        '[{"sid": 1, "title": "Source", "url": "https://e.example/"}]', encoding="utf-8"
    )
    done = run_cli("render", "long.md", "--max-seconds", "1", "-t", "pdf", "--out", "out",
                   cwd=tmp_path)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "longer than limits.max_seconds=1 s" in done.stderr


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_an_interrupt_lost_in_a_finalizer_prints_nothing_and_comes_again(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Python cannot raise out of ``__del__``; it would print the interrupt as a traceback."""
    import gc

    class Slow:
        def __del__(self) -> None:
            busy(0.4)  # the deadline passes in here

    deadline = Deadline(0.1)
    with pytest.raises(RenderTimeout), deadline.armed("finalizing"):
        Slow()
        gc.collect()
        busy(GIVE_UP_S)
    assert "Traceback" not in capsys.readouterr().err


def test_an_interrupt_that_lands_while_the_stage_is_disarmed_stops_the_repeats(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An interrupt may land in the stage's own clean-up, before it has disarmed (here: in
    the timer's cancel, as a repeat fired just then). The stage still fails with the
    limit, and is disarmed: no interrupt may reach the thread afterwards, where in a
    long-lived process (the MCP server, a batch) the next call would be hit every 0.2 s."""
    from renderers import deadline as deadline_module

    here = threading.get_ident()
    landed: list[bool] = []
    real_cancel = threading.Timer.cancel

    def cancel_hit_by_the_interrupt(timer: threading.Timer) -> None:
        real_cancel(timer)
        if threading.get_ident() == here and not landed:
            landed.append(True)
            raise deadline_module._Interrupt

    monkeypatch.setattr(threading.Timer, "cancel", cancel_hit_by_the_interrupt)
    deadline = Deadline(0.05)
    swallowing = contextlib.suppress(BaseException)  # a library swallowing everything
    with pytest.raises(RenderTimeout), deadline.armed("swallowed"), swallowing:
        busy(GIVE_UP_S)
    assert landed
    stray = 0
    for _ in range(int(3 * REPEAT_S / 0.05)):
        try:
            busy(0.05)
        except deadline_module._Interrupt:
            stray += 1
    assert stray == 0, f"{stray} interrupts reached the thread after the stage ended"
