"""The style pass on a whole document: in-text forms, notes, entries, order and the record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from renderers.api import render
from renderers.document import Cite, Emph, Link, Text, iter_inlines, plain_text
from renderers.options import build_options
from renderers.pipeline import prepare
from renderers.resolve import ResolvedDocument

DATA = Path(__file__).resolve().parent / "data"
CONTENT = (DATA / "styled.md").read_text("utf-8")
POOL: list[dict[str, Any]] = json.loads((DATA / "styled-pool.json").read_text("utf-8"))


def styled(**options: Any) -> ResolvedDocument:
    return prepare(CONTENT, sources_pool=POOL, options=build_options(**options)).rdoc


def cites(rdoc: ResolvedDocument) -> list[Cite]:
    return [n for n in iter_inlines(rdoc.document.blocks) if isinstance(n, Cite)]


def shown(inlines: tuple[Any, ...]) -> str:
    return plain_text(inlines)


def test_the_default_look_is_untouched() -> None:
    rdoc = styled()
    assert rdoc.style == "" and all(not c.children and not c.note for c in cites(rdoc))
    assert all(e.formatted == () and e.marker is None for e in rdoc.entries)


def test_author_date_citations_link_each_source_to_its_entry() -> None:
    rdoc = styled(csl="apa")
    first, pair, memo, again, _ = cites(rdoc)
    assert first.children == (Text("("), Link("#src-1", (Text("IEA, 2024"),)), Text(")"))
    assert pair.children[0] == Text(" "), "set off from the word before it"
    assert [n.url for n in pair.children if isinstance(n, Link)] == ["#src-3", "#src-2"]
    assert shown(pair.children) == " (Global Electricity Review 2024, 2024; Smith & Doe, 2024)"
    assert shown(memo.children) == "(Internal Cost Review, 2025)"
    assert again.children == first.children


def test_author_date_entries_are_alphabetical_unnumbered_and_keep_italics_and_links() -> None:
    rdoc = styled(csl="apa")
    assert [e.number for e in rdoc.entries] == [3, 1, 4, 2]
    assert all(e.marker == "" for e in rdoc.entries)
    iea = next(e for e in rdoc.entries if e.number == 1)
    assert Emph((Text("World Energy Outlook 2024"),)) in iea.formatted
    assert Link("https://www.iea.org/reports/world-energy-outlook-2024",
                (Text("https://www.iea.org/reports/world-energy-outlook-2024"),)) in iea.formatted
    # an author-less page is titled once (citeproc-py printed its title twice: fixes.py)
    ember = shown(next(e for e in rdoc.entries if e.number == 3).formatted)
    assert ember.count("Global Electricity Review 2024") == 1, ember


@pytest.mark.parametrize(("name", "marker"), [("ieee", "[1]"), ("vancouver", "1."),
                                              ("nature", "1.")])
def test_numeric_styles_keep_superscripts_and_give_entries_their_marker(
    name: str, marker: str
) -> None:
    rdoc = styled(csl=name)
    assert all(not c.children for c in cites(rdoc))
    assert [e.number for e in rdoc.entries] == [1, 2, 3, 4]
    assert rdoc.entries[0].marker == marker
    assert not shown(rdoc.entries[0].formatted).startswith(marker)


def test_vancouver_dates_keep_their_delimiter() -> None:
    entry = styled(csl="vancouver").entries[0]
    assert "[cited 2025 Jan 5]" in shown(entry.formatted)


def test_numbering_by_sid_shows_the_sid_in_the_marker() -> None:
    pool = [dict(row, sid=row["sid"] * 10) for row in POOL]
    content = CONTENT.replace("S:2,3", "S:20,30").replace("S:1", "S:10").replace("S:4", "S:40")
    rdoc = prepare(content, sources_pool=pool,
                   options=build_options(csl="ieee", numbering="sid")).rdoc
    assert [e.marker for e in rdoc.entries] == ["[10]", "[20]", "[30]", "[40]"]


def test_note_styles_number_notes_and_shorten_repeats() -> None:
    rdoc = styled(csl="chicago-note")
    notes = cites(rdoc)
    assert [c.note for c in notes] == [1, 2, 3, 4, 5]
    first, _, memo, subsequent, again = (shown(c.children) for c in notes)
    assert first.startswith("IEA, World Energy Outlook 2024 (International Energy Agency, 2024)")
    assert Emph((Text("World Energy Outlook 2024"),)) in notes[0].children  # a report's title
    # later notes are short; CMOS 18 uses the short form, not "Ibid.", for a repeat too
    assert subsequent == again == "IEA, World Energy Outlook 2024."
    assert "attachments/cost-review.pdf" in memo
    # Chicago leaves private documents out of its bibliography: the note stands as the entry
    review = next(e for e in rdoc.entries if e.number == 4)
    assert "Internal Cost Review" in shown(review.formatted)


def test_brackets_and_inline_links_are_independent_of_the_style() -> None:
    bracketed = cites(styled(citation_format="brackets"))
    assert bracketed[1].children == (
        Text(" "), Text("["), Link("#src-2", (Text("2"),)), Text(", "),
        Link("#src-3", (Text("3"),)), Text("]"))
    linked = cites(styled(csl="apa", citation_format="inline-links"))
    assert linked[0].children == (
        Text("("), Link("https://www.iea.org/reports/world-energy-outlook-2024",
                        (Text("World Energy Outlook 2024"),)), Text(")"))
    assert Link("#src-4", (Text("Internal cost review"),)) in linked[2].children


def test_the_style_is_recorded_in_sources_used(tmp_path: Path) -> None:
    render(CONTENT, tmp_path, formats=["md"], sources_pool=POOL, csl="harvard",
           citation_format="inline-links")
    render(CONTENT, tmp_path, name="plain", formats=["md"], sources_pool=POOL)
    records = {r["filename"]: r for r in json.loads((tmp_path / "sources_used.json").read_text())}
    assert records["report.md"]["style"] == "harvard"
    assert records["report.md"]["citation_format"] == "inline-links"
    assert "style" not in records["plain.md"] and "citation_format" not in records["plain.md"]


def test_a_title_with_an_apostrophe_still_carries_the_link() -> None:
    # Nature prints no URL for a journal article: its title links to the source, found in the
    # entry though the style prints the apostrophe typographic ("Europe’s", as citeproc-js).
    pool = [{"sid": 1, "title": "Europe's grid", "url": "https://example.org/grid",
             "source_type": "article", "author": "O'Brien, Patrick", "journal": "Energy",
             "volume": 9, "pages": "1-9", "published_at": "2024"}]
    rdoc = prepare("Grid [[S:1]].\n", sources_pool=pool, options=build_options(csl="nature")).rdoc
    entry = rdoc.entries[0].formatted
    assert shown(entry).startswith("O’Brien, P. Europe’s grid.")
    assert Link("https://example.org/grid", (Text("Europe’s grid"),)) in entry
