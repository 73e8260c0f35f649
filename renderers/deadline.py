"""``limits.max_seconds``: the longest a render may run, enforced inside the rendering thread.

The HTTP service kills a worker process that overruns its render timeout. A library call, the
CLI and the MCP server render in the caller's own process, where killing is not an option, so
the render is interrupted instead: a timer thread raises an interrupt in the rendering thread
(``PyThreadState_SetAsyncExc``), which Python delivers at the next bytecode, and the stage that
was interrupted raises :class:`RenderTimeout`. WeasyPrint, python-docx and python-pptx spend
their time in Python, and every C call they make (a Pango line, a pdfium page) is itself bounded
by the other limits, so the interrupt arrives within a fraction of a second of the deadline.

The interrupt is armed only while a stage reads or lays out (:meth:`Deadline.armed`), never while
an artifact or ``sources_used.json`` is being written, so a timeout can cost the render but
never a file already written. Time spent while disarmed still counts: the next stage that arms
the deadline fails at once when it has passed.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from renderers.errors import LimitError


class RenderTimeout(LimitError):
    """The render ran past ``limits.max_seconds`` (raised by :class:`Deadline`)."""

    default_field = "limits.max_seconds"


class _Interrupt(BaseException):
    """What the timer raises in the rendering thread: a ``BaseException``, like
    ``KeyboardInterrupt``, so that no library's ``except Exception`` swallows it."""


def _quiet_lost_interrupts(previous: Callable[[Any], object]) -> Callable[[Any], object]:
    """An ``unraisablehook`` that drops interrupts delivered where Python cannot raise (a
    finalizer, a garbage-collector callback), which it would otherwise print as a traceback;
    the timer interrupts again (:data:`REPEAT_S`)."""

    def hook(unraisable: Any) -> None:
        if not isinstance(unraisable.exc_value, _Interrupt):
            previous(unraisable)

    hook.quiets_interrupts = True  # type: ignore[attr-defined]
    return hook


def _install_quiet_hook() -> None:
    if not getattr(sys.unraisablehook, "quiets_interrupts", False):
        sys.unraisablehook = _quiet_lost_interrupts(sys.unraisablehook)


def _raise_in(thread_id: int, exception: type[BaseException] | None) -> None:
    """Schedule ``exception`` in the thread ``thread_id`` (None cancels a pending one).

    ctypes is imported here, when a deadline fires, not by every render (1.5 ms, measured)."""
    import ctypes

    target = ctypes.py_object(exception) if exception is not None else None
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), target)


#: Seconds between repeated interrupts of a thread that has not stopped yet.
REPEAT_S = 0.2


class _Arming:
    """One armed stage: the thread to interrupt, and whether the interrupt was sent."""

    def __init__(self, thread_id: int) -> None:
        self.thread_id = thread_id
        self.lock = threading.Lock()
        self.armed = True
        self.fired = False

    def fire(self) -> None:
        """Interrupt the thread, and again every :data:`REPEAT_S` until it is disarmed (an
        interrupt delivered inside a ``finally`` or a broad ``except`` may be lost)."""
        with self.lock:
            if not self.armed:
                return
            self.fired = True
            _raise_in(self.thread_id, _Interrupt)
            again = threading.Timer(REPEAT_S, self.fire)
            again.daemon = True
            again.start()

    def disarm(self) -> bool:
        """Stop the interrupt; cancel it when it was sent but not yet delivered. True if sent."""
        with self.lock:
            self.armed = False
            if self.fired:
                _raise_in(self.thread_id, None)
            return self.fired


class Deadline:
    """``seconds`` from now (``time.monotonic``), shared by every stage of one render."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.ends = time.monotonic() + seconds
        self._active = threading.local()  # a stage armed in this thread: nested ones reuse it

    def error(self, stage: str) -> RenderTimeout:
        return RenderTimeout(
            f"the render took longer than limits.max_seconds={self.seconds:g} s "
            f"(stopped while {stage}); raise the limit or shorten the input"
        )

    def check(self, stage: str) -> None:
        """Raise :class:`RenderTimeout` when the deadline has passed."""
        if time.monotonic() >= self.ends:
            raise self.error(stage)

    @contextmanager
    def armed(self, stage: str) -> Iterator[None]:
        """Run the ``with`` body under the deadline: interrupted with :class:`RenderTimeout`
        (naming ``stage``) when it passes."""
        if getattr(self._active, "stage", None) is not None:
            yield  # already armed by the stage that contains this one
            return
        self.check(stage)
        _install_quiet_hook()
        self._active.stage = stage
        arming = _Arming(threading.get_ident())
        timer = threading.Timer(max(0.0, self.ends - time.monotonic()), arming.fire)
        timer.daemon = True
        timer.start()
        try:
            try:
                yield
            finally:
                sent = _stop(timer, arming)
                self._active.stage = None
        except _Interrupt:
            raise self.error(stage) from None
        if sent:
            raise self.error(stage)


def _stop(timer: threading.Timer, arming: _Arming) -> bool:
    """Cancel ``timer`` and disarm ``arming``; whether an interrupt was sent.

    An interrupt may land here, before :meth:`_Arming.disarm` holds its lock (a repeat firing
    just as the stage ends): then it stops again, or the repeats, never disarmed, would hit
    the thread every :data:`REPEAT_S` for as long as it lives (the next call of a long-lived
    process). Both steps may run twice; another interrupt could only come a repeat later.
    """
    try:
        timer.cancel()
        return arming.disarm()
    except _Interrupt:
        timer.cancel()
        arming.disarm()
        return True
