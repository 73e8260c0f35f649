"""The SOURCES POOL prompt block, citation guidelines and the budgeted digest."""

from __future__ import annotations

import pytest

from citations.pool import SourcePool
from citations.prompt import (
    BINARY_PLACEHOLDER,
    allocate,
    citation_guidelines,
    sources_digest,
    sources_prompt_block,
    truncate,
)

PNG_B64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


@pytest.fixture
def pool() -> SourcePool:
    return SourcePool.from_rows([
        {"sid": 1, "title": "World Energy Outlook 2024", "url": "https://www.iea.org/reports/weo",
         "published_at": "2024-10-16", "text": "Solar leads.", "rn": "ef:tenant:rn:secret",
         "hosted_uri": "s3://bucket/secret", "key": "secret-key"},
        {"sid": 2, "title": "A \"quoted\"\ntitle " + "very long " * 20, "url": "https://b.org/x"},
        {"sid": 5, "title": "Chart", "artifact_path": "attachments/chart.png",
         "physical_path": "/srv/x/chart.png", "mime": "image/png", "text": PNG_B64},
        {"sid": 6, "title": "Memo", "artifact_path": "attachments/memo.txt", "mime": "text/plain",
         "content": "Full memo text.", "text": "short"},
    ])


def test_prompt_block_lines(pool: SourcePool) -> None:
    block = sources_prompt_block(pool, snippet_chars=40)
    lines = block.splitlines()
    assert lines[0] == "SOURCES POOL (4 sources):"
    assert lines[1] == '[S:1] iea.org | "World Energy Outlook 2024" | 2024-10-16'
    assert lines[2] == "    Solar leads."
    assert lines[3].startswith("[S:2] b.org | \"A 'quoted' title very long")
    assert lines[3].endswith('…"') and len(lines[3]) < 120
    assert lines[4] == '[S:5] attachments/chart.png | "Chart"'
    assert lines[5] == f"    {BINARY_PLACEHOLDER}"
    assert lines[6] == '[S:6] attachments/memo.txt | "Memo"'
    assert lines[7] == "    Full memo text."
    for secret in ("ef:tenant", "s3://", "secret-key", "/srv/x", PNG_B64[:20]):
        assert secret not in block


def test_prompt_block_selection_and_empty(pool: SourcePool) -> None:
    block = sources_prompt_block(pool, sids=[6, 1, 99])
    assert [line[:5] for line in block.splitlines()[1:]] == ["[S:6]", "[S:1]"]
    assert "Solar" not in block
    assert "empty" in sources_prompt_block(SourcePool())


def test_truncate() -> None:
    assert truncate("short", 10) == "short"
    assert truncate("alpha beta gamma delta", 12) == "alpha beta…"
    assert len(truncate("x" * 50, 10)) == 10 and truncate("x" * 50, 10).endswith("…")


@pytest.mark.parametrize(
    ("fmt", "needles"),
    [
        ("markdown", ["[[S:1]]", "[[S:1,3]]", "[[S:2-4]]", "[[USAGE:", "code"]),
        ("html", ['<sup class="cite" data-sids="1,3">[S:1,3]</sup>', "<pre>"]),
        ("json", ['"_citations"', '"path"', '"sids": [1, 3]', "RFC 6901"]),
        ("yaml", ["_citations:", "- path: /summary", "sids: [1, 3]"]),
    ],
)
def test_guidelines(fmt: str, needles: list[str]) -> None:
    text = citation_guidelines(fmt)  # type: ignore[arg-type]
    for needle in needles:
        assert needle in text


def test_guidelines_unknown_format() -> None:
    with pytest.raises(ValueError, match="accepted formats are 'markdown', 'html', 'json'"):
        citation_guidelines("docx")  # type: ignore[arg-type]


def test_allocate_redistributes_unused_share() -> None:
    assert allocate({1: 10, 2: 1000, 3: 1000}, 300) == {1: 10, 2: 145, 3: 145}
    assert allocate({1: 10, 2: 20}, 300) == {1: 10, 2: 20}
    assert allocate({4: 100, 2: 100, 3: 100}, 100) == {2: 34, 3: 33, 4: 33}
    assert allocate({}, 100) == {}
    assert sum(allocate({i: 1000 for i in range(1, 8)}, 500).values()) == 500


def test_digest_prefers_content_and_respects_budget(pool: SourcePool) -> None:
    rich = SourcePool.from_rows([
        {"sid": 1, "title": "A", "url": "https://a.org", "content": "alpha " * 100, "text": "x"},
        {"sid": 2, "title": "B", "url": "https://b.org", "text": "beta"},
        {"sid": 3, "title": "C", "url": "https://c.org", "text": "gamma " * 100},
    ])
    digest = sources_digest(rich, 204)
    assert digest.allocations[2] == 4
    assert digest.allocations[1] <= 100 and digest.allocations[3] <= 100
    assert sum(digest.allocations.values()) <= 204
    assert "alpha alpha" in digest.text and "\nx\n" not in digest.text
    assert digest.text.startswith("[S:1] A (a.org)\nalpha")
    assert digest.sid_map == {1: 1, 2: 2, 3: 3}
    assert sources_digest(rich, 204) == digest


def test_digest_renumbers_and_hides_binary(pool: SourcePool) -> None:
    digest = sources_digest(pool, 1000, sids=[6, 5], renumber=True)
    assert digest.sid_map == {1: 6, 2: 5}
    assert digest.text.startswith("[S:1] Memo (attachments/memo.txt)\nFull memo text.")
    assert f"[S:2] Chart (attachments/chart.png)\n{BINARY_PLACEHOLDER}" in digest.text
    assert digest.allocations == {6: 15, 5: 0}
