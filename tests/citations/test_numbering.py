"""Numbering, range display and the shared citation pass."""

from __future__ import annotations

import pytest

from citations.numbering import display_segments, format_numbers, plan_citations
from citations.pool import SourcePool
from renderers.document import Cite, Document, Emph, Paragraph, Text, iter_inlines
from renderers.errors import StrictError
from renderers.resolve import resolve


@pytest.fixture
def pool(sample_pool: list[dict[str, object]]) -> SourcePool:
    return SourcePool.from_rows(sample_pool)


@pytest.mark.parametrize(
    ("numbers", "expected"),
    [
        ([1], "1"),
        ([5, 1, 2, 3], "1–3, 5"),
        ([1, 2], "1, 2"),
        ([3, 3, 1], "1, 3"),
        ([1, 2, 3, 4, 7, 8, 10], "1–4, 7, 8, 10"),
        ([], ""),
    ],
)
def test_format_numbers_compresses_runs(numbers: list[int], expected: str) -> None:
    assert format_numbers(numbers) == expected


def test_display_segments_link_only_numbers() -> None:
    assert display_segments([1, 2, 3, 5]) == [
        ("1", 1), ("–", None), ("3", 3), (", ", None), ("5", 5),
    ]


def test_appearance_numbering_follows_first_citation(pool: SourcePool) -> None:
    plan = plan_citations([(3,), (1, 3), (2,)], pool)
    assert plan.numbers == {3: 1, 1: 2, 2: 3}
    assert plan.order == (3, 1, 2)
    assert [n for n, _ in plan.entries] == [1, 2, 3]
    assert [s.sid for _, s in plan.entries] == [3, 1, 2]


def test_deduped_sids_share_one_number(pool: SourcePool) -> None:
    # sid 4 is the same IEA report as sid 1 (tracking parameters, default port, fragment).
    plan = plan_citations([(4,), (2,), (1,)], pool)
    assert plan.numbers[4] == plan.numbers[1] == 1
    assert plan.numbers[2] == 2
    assert len(plan.entries) == 2


def test_sid_numbering_uses_the_sid(pool: SourcePool) -> None:
    plan = plan_citations([(3,), (2,), (4,)], pool, "sid")
    assert plan.numbers == {3: 3, 2: 2, 4: 1}


def test_unknown_sids_are_reported_not_numbered(pool: SourcePool) -> None:
    plan = plan_citations([(99, 1), (99,), (42,)], pool)
    assert plan.unknown_sids == (99, 42)
    assert plan.numbers == {1: 1}


def test_resolve_fills_cites_and_entries(pool: SourcePool) -> None:
    doc = Document(
        blocks=(
            Paragraph((Text("Solar"), Cite((2,)), Text(" and wind"), Cite((1, 2, 99)))),
            Paragraph((Emph((Text("memo"), Cite((5,)))),)),
        )
    )
    resolved = resolve(doc, pool)
    cites = [n for n in iter_inlines(resolved.document.blocks) if isinstance(n, Cite)]
    assert [(c.numbers, c.anchor) for c in cites] == [
        ((1,), "cite-1"), ((1, 2), "cite-2"), ((3,), "cite-3"),
    ]
    assert [(e.number, e.anchor, e.backlink) for e in resolved.entries] == [
        (1, "src-1", "cite-1"), (2, "src-2", "cite-2"), (3, "src-3", "cite-3"),
    ]
    memo = resolved.entries[2]
    assert memo.url == "" and memo.label == "attachments/memo.pdf"
    assert resolved.entries[1].label == "iea.org"
    assert any("99" in w for w in resolved.warnings)


def test_resolve_strict_rejects_unknown_sids(pool: SourcePool) -> None:
    doc = Document(blocks=(Paragraph((Text("x"), Cite((77,)))),))
    with pytest.raises(StrictError, match="77"):
        resolve(doc, pool, strict=True)


def test_unsafe_source_urls_are_not_linked() -> None:
    pool = SourcePool.from_rows([{"sid": 1, "title": "Bad", "url": "javascript:alert(1)"}])
    resolved = resolve(Document(blocks=(Paragraph((Cite((1,)),)),)), pool)
    assert resolved.entries[0].url == ""


def test_a_dropped_unknown_citation_leaves_no_stray_space(pool: SourcePool) -> None:
    doc = Document(
        blocks=(
            Paragraph((Text("Solar"), Cite((1,)), Text(" and wind "), Cite((99,)), Text("."))),
            Paragraph((Text("Gas "), Cite((98,)))),
            Paragraph((Text("Hydro "), Cite((97,)), Text(" grew"))),
        )
    )
    resolved = resolve(doc, pool)
    first, second, third = resolved.document.blocks
    assert isinstance(first, Paragraph) and isinstance(second, Paragraph)
    assert isinstance(third, Paragraph)
    assert first.children[-2:] == (Text(" and wind"), Text("."))
    assert second.children == (Text("Gas"),)
    assert "".join(n.text for n in third.children if isinstance(n, Text)) == "Hydro grew"
    assert [e.number for e in resolved.entries] == [1]
