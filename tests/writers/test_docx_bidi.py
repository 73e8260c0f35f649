"""The stretches of one direction a DOCX run is cut into (``docx.bidi.direction_pieces``), each
marked ``w:rtl`` only when it reads right to left."""

from __future__ import annotations

from renderers.writers.docx.bidi import direction_pieces

LRM, RLM = "\u200e", "\u200f"


def test_left_to_right_text_is_one_piece() -> None:
    # the left-to-right entries' runs stay as they were, to the byte
    assert direction_pieces(" — iea.org · 2024-10-16", "ltr") == [
        (" — iea.org · 2024-10-16", "ltr")]
    assert direction_pieces("", "rtl") == []


def test_numbers_read_as_the_letters_before_them() -> None:
    # after Arabic letters a year ends the Arabic title; after a mark or Latin, it is Latin's
    assert direction_pieces("تقرير الطاقة 2024", "ltr") == [("تقرير الطاقة 2024", "rtl")]
    assert direction_pieces(f"{LRM}2024-10-16", "rtl") == [(f"{LRM}2024-10-16", "ltr")]
    assert direction_pieces("IEA 2024", "rtl") == [("IEA 2024", "ltr")]


def test_neutrals_take_both_sides_or_the_line() -> None:
    assert direction_pieces("تقرير Global Energy في", "rtl") == [
        ("تقرير ", "rtl"), ("Global Energy", "ltr"), (" في", "rtl")]
    assert direction_pieces(f"{RLM} — iea.org{LRM}{RLM} · ", "rtl") == [
        (f"{RLM} — ", "rtl"), (f"iea.org{LRM}", "ltr"), (f"{RLM} · ", "rtl")]
    assert direction_pieces(" — وزارة.مصر · ", "ltr") == [
        (" — ", "ltr"), ("وزارة.مصر", "rtl"), (" · ", "ltr")]


def test_a_combining_mark_stays_with_its_letter() -> None:
    assert direction_pieces("Café\u0301 عَ", "ltr") == [("Café\u0301 ", "ltr"), ("عَ", "rtl")]
