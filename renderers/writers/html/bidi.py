"""Left-to-right text that ends in citation marks, in a right-to-left line: held in a span.

WeasyPrint sets the inline boxes of a right-to-left line from the right, one after the other,
and leaves the bidi algorithm to Pango inside each box's text. Text such as "中文摘要" and
the superscript after it are two boxes, so the superscript stood at the left of the Chinese
words, where the bidi algorithm (and Chromium, and Typst) puts it at their right end: its
digits take the direction of the letters before them (UAX #9, rule W7). In a span with
``dir="ltr"`` WeasyPrint sets the two left to right. A browser isolates such a span, which
changes nothing when the span holds the whole left-to-right run: from its first letter after
the line's last right-to-left character before it, to marks after which the line reads right
to left again or ends (a letter or a digit there would have been part of the run).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from renderers.document import Cite, FootnoteRef, Inline, Text, plain_text

#: The bidi classes of right-to-left letters and of Arabic digits (which end a run too).
_RIGHT_TO_LEFT = frozenset({"R", "AL", "AN"})


@dataclass(frozen=True)
class HeldRun:
    """Text whose ``tail`` and the marks and plain left-to-right text after it (``rest``,
    ending in marks) are held left to right; ``head`` before them reads with the line."""

    head: str
    tail: str
    rest: tuple[tuple[Inline, ...], ...]


def held_ltr_runs(
    runs: Sequence[tuple[Inline, ...]],
) -> list[tuple[Inline, ...] | HeldRun]:
    """``runs`` (:func:`~renderers.writers.common.joined_runs` of a right-to-left line) with
    each left-to-right run that starts in a text and ends in marks, over further marks and
    texts without right-to-left characters, as one :class:`HeldRun`."""
    out: list[tuple[Inline, ...] | HeldRun] = []
    rtl_before = True  # the line starts right to left
    index = 0
    while index < len(runs):
        run = runs[index]
        text = run[0].text if len(run) == 1 and isinstance(run[0], Text) else ""
        start = _ltr_tail(text, rtl_before=rtl_before)
        end = _run_end(runs, index + 1) if start is not None else None
        if start is not None and end is not None:
            out.append(HeldRun(text[:start], text[start:], tuple(runs[index + 1:end])))
            index, rtl_before = end, False
            continue
        out.append(run)
        if not _is_mark(run):  # a mark's digits read as the text before them (W2, W7)
            rtl_before = _reads_rtl(plain_text(run), rtl_before)
        index += 1
    return out


def _run_end(runs: Sequence[tuple[Inline, ...]], start: int) -> int | None:
    """The end (exclusive) of the marks and left-to-right texts from ``start`` after which
    the line leaves the run: after the last mark followed by right-to-left text or nothing;
    None when there is no such mark."""
    end = None
    index = start
    while index < len(runs) and (_is_mark(runs[index]) or _is_ltr_text(runs[index])):
        if _is_mark(runs[index]) and _ends_run(runs[index + 1:]):
            end = index + 1
        index += 1
    return end


def _is_ltr_text(run: tuple[Inline, ...]) -> bool:
    """Whether ``run`` is plain text without a right-to-left character."""
    return (len(run) == 1 and isinstance(run[0], Text)
            and not any(unicodedata.bidirectional(c) in _RIGHT_TO_LEFT for c in run[0].text))


def _is_mark(run: tuple[Inline, ...]) -> bool:
    return all(isinstance(node, Cite | FootnoteRef) for node in run)


def _reads_rtl(text: str, rtl_before: bool) -> bool:
    """Whether the line reads right to left after ``text`` (by its last letter or Arabic
    digit), given whether it did before."""
    for char in reversed(text):
        kind = unicodedata.bidirectional(char)
        if kind in _RIGHT_TO_LEFT or kind == "L":
            return kind != "L"
    return rtl_before


def _ltr_tail(text: str, *, rtl_before: bool) -> int | None:
    """Where the left-to-right run that ends ``text`` starts: its first left-to-right letter
    after the last right-to-left character (or, with none, when the line before it read right
    to left); None when it ends in no such run or the run began before it."""
    classes = [unicodedata.bidirectional(char) for char in text]
    last = max((n for n, kind in enumerate(classes) if kind in _RIGHT_TO_LEFT), default=None)
    if last is None and not rtl_before:
        return None
    first = 0 if last is None else last + 1
    return next((n for n in range(first, len(text)) if classes[n] == "L"), None)


def _ends_run(after: Iterable[tuple[Inline, ...]]) -> bool:
    """Whether the line after the marks leaves their left-to-right run: its first letter or
    digit reads right to left, or it has none. A mark there (digits) would join the run."""
    for run in after:
        if _is_mark(run):
            return False
        for char in plain_text(run):
            kind = unicodedata.bidirectional(char)
            if kind in _RIGHT_TO_LEFT:
                return True
            if kind in ("L", "EN"):
                return False
    return True
