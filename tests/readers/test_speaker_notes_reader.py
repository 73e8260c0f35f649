"""``::: notes`` divs (pandoc's speaker notes) read into :class:`SpeakerNotes`, and the two
views the citation pass makes of a document that holds them (issue 18, item 5)."""

from __future__ import annotations

import pytest

from citations.pool import SourcePool
from renderers.document import BulletList, Paragraph, SpeakerNotes, Text, iter_inlines
from renderers.errors import StrictError
from renderers.readers.markdown import read_markdown
from renderers.resolve import resolve
from renderers.speaker_notes import planning_order, without_speaker_notes
from tests.helpers import at_sizes

POOL = SourcePool.from_rows([{"sid": s, "title": f"S{s}", "url": f"https://s{s}.example/"}
                             for s in (1, 2, 3)])
DECK = """# Deck

## One

Claim.[[S:3]]

::: notes
Say why.[[S:2]] Then **pause**.

- a point
:::

## Two

Other claim.[[S:1]][[S:2]]
"""


@pytest.mark.parametrize("fence", ["::: notes", "::: {.notes}", "::: .notes", ":::: notes"])
def test_pandoc_notes_divs_become_speaker_notes(fence: str) -> None:
    closing = ":" * fence.index(" ")
    document = read_markdown(f"Text.\n\n{fence}\nSpoken only.\n{closing}\n\nAfter.\n")
    assert [type(b).__name__ for b in document.blocks] == ["Paragraph", "SpeakerNotes",
                                                            "Paragraph"]
    assert document.blocks[1] == SpeakerNotes((Paragraph(document.blocks[1].blocks[0].children),))


@pytest.mark.parametrize("text", [
    "Intro.\n\n::: notes\nSay this.\n\n## Next\n\nBody [[S:1]].\n",  # never closed
    "- item\n\n  ::: notes\n  say\n\n- next [[S:1]]\n\n:::\n",  # closed outside its item
    "> ::: notes\n> say\n\nBody [[S:1]].\n\n:::\n",  # closed outside its quote
])
def test_a_notes_div_without_its_closing_fence_is_text_as_pandoc_reads_it(text: str) -> None:
    """markdown-it's container closed it at the end of the document or item, so the rest of
    the answer (headings, citations) vanished from every format but the deck, silently."""
    document = read_markdown(text)
    rdoc = resolve(document, POOL)
    assert not any(isinstance(b, SpeakerNotes) for b in document.blocks)
    assert "::: notes" in " ".join(n.text for n in iter_inlines(document.blocks)
                                   if isinstance(n, Text))
    assert rdoc.plan.order == (1,)


@at_sizes(2_000, 20_000)
def test_many_unclosed_notes_fences_are_each_a_paragraph(size: int) -> None:
    document = read_markdown("::: notes\nx\n\n" * size)
    assert len(document.blocks) == size


def test_other_divs_stay_text_as_before() -> None:
    document = read_markdown("::: warning\nCareful.\n:::\n")
    assert not any(isinstance(b, SpeakerNotes) for b in document.blocks)


def test_notes_keep_their_blocks() -> None:
    notes = read_markdown(DECK).blocks[3]
    assert isinstance(notes, SpeakerNotes)
    assert isinstance(notes.blocks[0], Paragraph) and isinstance(notes.blocks[1], BulletList)


def test_the_shown_document_has_no_notes_and_cites_only_the_body() -> None:
    rdoc = resolve(read_markdown(DECK), POOL)
    assert not any(isinstance(b, SpeakerNotes) for b in rdoc.document.blocks)
    assert rdoc.plan.order == (3, 1, 2)
    assert [e.sid for e in rdoc.entries] == [3, 1, 2]


def test_the_speaker_view_numbers_the_notes_after_the_body() -> None:
    """sid 2 is first cited in the notes but keeps the number the body gives it."""
    rdoc = resolve(read_markdown(DECK), POOL)
    view = rdoc.with_speaker_notes
    assert view.plan.numbers == rdoc.plan.numbers == {3: 1, 1: 2, 2: 3}
    notes = next(b for b in view.document.blocks if isinstance(b, SpeakerNotes))
    cite = notes.blocks[0].children[1]  # type: ignore[attr-defined]
    assert cite.numbers == (3,) and cite.anchor


def test_a_source_cited_only_in_notes_is_numbered_last_in_the_speaker_view() -> None:
    rdoc = resolve(read_markdown("## A\n\nX.[[S:3]]\n\n::: notes\nY.[[S:1]]\n:::\n\nZ.[[S:2]]\n"),
                   POOL)
    assert rdoc.plan.order == (3, 2)
    assert rdoc.with_speaker_notes.plan.order == (3, 2, 1)
    assert rdoc.with_speaker_notes.plan.numbers[1] == 3


def test_a_document_without_notes_has_one_view() -> None:
    rdoc = resolve(read_markdown("Text.[[S:1]]\n"), POOL)
    assert rdoc.speaker_view is None and rdoc.with_speaker_notes is rdoc


def test_unknown_sids_in_notes_are_reported_and_strict_refuses_them() -> None:
    text = "Body.[[S:1]]\n\n::: notes\nSee [[S:99]].\n:::\n"
    assert any("99" in w for w in resolve(read_markdown(text), POOL).warnings)
    with pytest.raises(StrictError, match="99"):
        resolve(read_markdown(text), POOL, strict=True)


def test_notes_nested_in_lists_and_quotes_are_found_and_removed() -> None:
    document = read_markdown("- item\n\n  ::: notes\n  Nested.[[S:2]]\n  :::\n\n> quote[[S:1]]\n")
    assert [c.sids for c in planning_order(document.blocks)] == [(1,), (2,)]
    assert "Nested" not in repr(without_speaker_notes(document.blocks))
