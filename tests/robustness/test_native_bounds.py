"""Calls into native code the deadline cannot interrupt, bounded before they are made: a run of
combining marks is cut after :data:`~renderers.text.MOST_MARKS` for both PDF engines (Pango
took 52 s and Typst 27 s and 12 GB over a letter under 80,000 acute accents, each in one call).
The renders themselves run in :mod:`tests.robustness.test_bounded_cost` (``long-mark-run``)."""

from __future__ import annotations

import re
import unicodedata
from unittest.mock import patch

from renderers.readers.crossref_rules import _nfc
from renderers.text import (
    JOINERS,
    MARK_CODE_POINTS,
    MOST_MARKS,
    _long_mark_run,
    cut_long_mark_runs,
    extends_cluster,
)
from renderers.writers.html.breaks import RUN_CHUNK, split_long_runs
from renderers.writers.typst.escape import text_markup

ACUTE = "\u0301"
ZALGO = "Before x" + ACUTE * 1_000 + "y after, caf\u00e9 e\u0301 \U0001f469\u200d\U0001f4bb."


def longest_mark_run(text: str) -> int:
    longest = run = 0
    for char in text:
        run = run + 1 if extends_cluster(char) else 0
        longest = max(longest, run)
    return longest


def test_a_long_run_of_marks_is_cut_after_the_most_marks_and_nothing_is_lost() -> None:
    pieces = cut_long_mark_runs(ZALGO)
    assert "".join(pieces) == ZALGO
    assert len(pieces) == 1_000 // MOST_MARKS + 1
    assert all(longest_mark_run(piece) <= MOST_MARKS for piece in pieces)


def test_every_combining_mark_lies_where_the_mark_table_looks() -> None:
    """The table of marks is built from MARK_CODE_POINTS alone; no character of nonzero
    combining class in this Python's Unicode lies outside it."""
    outside = [code for code in range(0x110000) if code not in MARK_CODE_POINTS
               and unicodedata.combining(chr(code))]
    assert outside == []
    assert all(ord(joiner) in MARK_CODE_POINTS for joiner in JOINERS)
    last_mark = "\U0001e94a"  # ADLAM NUKTA, the highest mark: a run of it is still cut
    assert len(cut_long_mark_runs("x" + last_mark * (MOST_MARKS + 1))) == 2
    first_mark = "\u0300"
    assert len(cut_long_mark_runs("x" + first_mark * (MOST_MARKS + 1))) == 2
    assert len(cut_long_mark_runs("x" + "\u200d" * (MOST_MARKS + 1))) == 2


def test_text_without_a_long_run_beyond_u0300_never_builds_the_table_of_marks() -> None:
    """The table (10 ms of CPU) is built only for text that may hold a long run of marks: a
    run of more than MOST_MARKS characters from U+0300 on. CJK text may; it stays whole."""
    _long_mark_run.cache_clear()
    assert cut_long_mark_runs("caf\u00e9 \u00b7 \u201cquoted\u201d \u2014 e\u0301") == [
        "caf\u00e9 \u00b7 \u201cquoted\u201d \u2014 e\u0301"]
    assert _long_mark_run.cache_info().currsize == 0
    han = "\u4e2d\u6587" * MOST_MARKS
    assert cut_long_mark_runs(han) == [han]


def test_ordinary_text_is_one_piece() -> None:
    for text in ("plain ASCII", "caf\u00e9 e\u0301\u0302 \u0928\u093f\u0902",
                 "\U0001f469\u200d\U0001f4bb", "x" + ACUTE * MOST_MARKS):
        assert cut_long_mark_runs(text) == [text]


def test_weasyprint_gets_no_cluster_longer_than_a_chunk_and_the_most_marks() -> None:
    """Each piece is a text box of its own, laid out by its own Pango call."""
    pieces = split_long_runs("a" + ACUTE * 10_000)
    assert "".join(pieces) == "a" + ACUTE * 10_000
    assert max(map(len, pieces)) <= RUN_CHUNK + MOST_MARKS


def test_typst_gets_no_string_with_more_than_the_most_marks_in_a_row() -> None:
    markup = text_markup(ZALGO)
    strings = re.findall(r'"((?:[^"\\]|\\.)*)"', markup)
    assert max(longest_mark_run(s) for s in strings) <= MOST_MARKS
    shown = "".join(s.replace('\\"', '"') for s in strings)
    assert shown.count(ACUTE) == ZALGO.count(ACUTE)  # every mark still drawn
    assert "y after, caf\u00e9" in shown  # the text after the marks is left as it was


def test_a_label_is_normalised_a_bounded_run_of_marks_at_a_time() -> None:
    """CPython orders a run of marks of different classes in quadratic time (40,000 pairs: 5 s
    in one call); a label's run is normalised MOST_MARKS marks at a time."""
    assert _nfc("fig:cafe\u0301") == "fig:caf\u00e9"
    short = "fig:a\u0301\u0316"  # reordered and composed, as before
    assert _nfc(short) == unicodedata.normalize("NFC", short) == "fig:\u00e1\u0316"
    calls: list[int] = []
    real = unicodedata.normalize

    def counting(form: str, text: str) -> str:
        calls.append(len(text))
        return real(form, text)

    with patch.object(unicodedata, "normalize", counting):
        _nfc("fig:a" + "\u0301\u0316" * 1_000)
    assert max(calls) <= MOST_MARKS + len("fig:a")
