"""A sidecar answer as markdown: keys as headings, citations after the strings they support."""

from __future__ import annotations

import pytest

from citations.errors import SidecarError
from citations.structured import read_structured, structured_markdown

ANSWER = {
    "summary": "Solar grew 30 %.",
    "key_findings": ["Costs fell.", "Storage *doubled*."],
    "sections": [{"title": "Costs", "body": "PV is cheapest."}],
    "confidence": 0.8,
    "_citations": [
        {"path": "/summary", "sids": [1, 3]},
        {"path": "/key_findings/1", "sids": [2]},
        {"path": "/sections/0/body", "sids": [2, 4, 5, 6]},
    ],
}


def test_keys_become_headings_and_citations_follow_their_strings() -> None:
    text = structured_markdown(ANSWER)
    assert text.startswith("# Summary\n\nSolar grew 30 %.[[S:1,3]]\n\n# Key findings\n\n")
    assert "- Costs fell.\n- Storage *doubled*.[[S:2]]" in text
    assert "## Body\n\nPV is cheapest.[[S:2,4-6]]" in text
    assert "# Confidence\n\n0.8" in text
    assert "_citations" not in text and "path" not in text


def test_keys_are_escaped_and_strings_stay_markdown() -> None:
    text = structured_markdown({"a*b [x](y)": "*emphasis*"})
    assert text == "# A\\*b \\[x\\]\\(y\\)\n\n*emphasis*\n"


def test_a_malformed_sidecar_or_deep_nesting_is_refused() -> None:
    with pytest.raises(SidecarError):
        structured_markdown({"a": "x", "_citations": [{"path": 3, "sids": [1]}]})
    deep: object = "leaf"
    for _ in range(200):
        deep = {"k": deep}
    with pytest.raises(SidecarError, match="nests deeper"):
        structured_markdown(deep)


def test_entries_the_audit_reports_are_left_out_and_listed_in_its_words() -> None:
    answer = read_structured(
        {
            "summary": "Solar grew.",
            "n": 5,
            "_citations": [
                {"path": "/summry", "sids": [1]},
                {"path": "/n", "sids": [2]},
                {"path": "/summary", "sids": [3]},
            ],
        }
    )
    assert answer.markdown == "# Summary\n\nSolar grew.[[S:3]]\n\n# N\n\n5\n"
    assert answer.sids == (3,)
    assert answer.problems == (
        "/summry: the pointer names nothing (JSON Pointer '/summry': no member 'summry' at "
        "'/summry')",
        "/n: the pointer names a int, not a string",
    )


def test_a_sidecar_that_is_not_a_list_is_a_problem_not_an_error() -> None:
    answer = read_structured({"_citations": "nope", "a": "x"})
    assert answer.markdown == "# A\n\nx\n"
    assert answer.problems == ("/_citations: the sidecar is a str, not a list of entries",)
    with pytest.raises(SidecarError, match="is a str"):
        structured_markdown({"_citations": "nope", "a": "x"})


def test_a_malformed_entry_is_a_problem_and_the_sound_entries_are_placed() -> None:
    """A bad entry raised and nothing was rendered, while the audit listed it as an invalid
    token and counted the others: it is skipped, as an invalid token in markdown is."""
    answer = read_structured({"a": "x", "b": "y", "c": "z", "_citations": [
        {"path": 3, "sids": [1]}, {"path": "/a", "sids": [0]}, "nope", {"path": "/b", "sids": [2]},
    ]})
    assert answer.markdown == "# A\n\nx\n\n# B\n\ny[[S:2]]\n\n# C\n\nz\n"
    assert answer.sids == (2,)
    assert answer.problems == (
        "/_citations/0: 'path' is 3, not a JSON Pointer string",
        "/a: 'sids' is [0], not a non-empty list of positive integers",
        "/_citations/2: entry is not an object with 'path' and 'sids'",
    )
    with pytest.raises(SidecarError, match="'path' must be"):  # the strict reading still raises
        structured_markdown({"a": "x", "_citations": [{"path": 3, "sids": [1]}]})


def test_read_sidecar_refuses_a_sid_no_token_can_name() -> None:
    from citations.errors import SidecarError
    from citations.sidecar import read_sidecar

    with pytest.raises(SidecarError, match="past the largest sid"):
        read_sidecar({"a": "x", "_citations": [{"path": "/a", "sids": [2**31]}]})
    assert read_sidecar({"a": "x", "_citations": [{"path": "/a", "sids": [2**31 - 1]}]})
