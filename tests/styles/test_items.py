"""Pool rows → CSL-JSON items."""

from __future__ import annotations

from citations.model import Source
from renderers.styles.items import csl_item, date_parts, doi
from renderers.styles.markup import opening


def test_a_web_source_maps_its_fields() -> None:
    source = Source(
        sid=7, title="  World   Energy Outlook ", url="https://www.iea.org/x",
        published_at="2024-10-16T08:00:00Z", fetched_at="2025-01-05", source_type="report",
        extra={"author": "IEA", "publisher": "International Energy Agency",
               "site_name": "IEA Reports"},
    )
    assert csl_item(source) == {
        "id": "s7", "type": "report", "title": "World Energy Outlook",
        "URL": "https://www.iea.org/x",
        "issued": {"date-parts": [[2024, 10, 16]]}, "accessed": {"date-parts": [[2025, 1, 5]]},
        "author": [{"literal": "IEA"}], "publisher": "International Energy Agency",
        "container-title": "IEA Reports",
    }


def test_attachments_are_documents_with_their_artifact_path_and_no_host_path() -> None:
    item = csl_item(Source(sid=2, title="Memo", physical_path="/srv/tenant/memo.pdf",
                           source_type="attachment"))
    assert item["type"] == "document" and item["archive_location"] == "memo.pdf"
    assert "/srv" not in str(item)
    item = csl_item(Source(sid=3, artifact_path="files/a.pdf"))
    assert item == {"id": "s3", "type": "document", "title": "files/a.pdf",
                    "archive_location": "files/a.pdf"}


def test_names_unsafe_links_and_private_use_marks() -> None:
    item = csl_item(Source(
        sid=1, title=f"Evil {opening('i')}title", url="javascript:alert(1)",
        extra={"authors": ["Smith, Jane", {"family": "Doe", "given": "J."}, "OECD", 5]},
    ))
    assert "URL" not in item and item["type"] == "document"
    assert item["title"] == "Evil title"
    assert item["author"] == [{"family": "Smith", "given": "Jane"},
                              {"family": "Doe", "given": "J."}, {"literal": "OECD"}]
    assert csl_item(Source(sid=1, extra={"author": "Ng, A.; Lee, B."}))["author"] == [
        {"family": "Ng", "given": "A."}, {"family": "Lee", "given": "B."}]


def test_date_parts() -> None:
    assert date_parts("2024-10-16") == [2024, 10, 16]
    assert date_parts("2024-10") == [2024, 10]
    assert date_parts("2024") == [2024]
    assert date_parts("2024-13-01") == [2024]
    assert date_parts("2024-02-40") == [2024, 2]
    assert date_parts("yesterday") == [] and date_parts("") == []


def test_bibliographic_fields_map_to_their_csl_variables() -> None:
    item = csl_item(Source(sid=1, title="Attention is all you need", source_type="article", extra={
        "journal": "NeurIPS", "volume": 30, "issue": "2", "pages": "5998-6008",
        "doi": "https://doi.org/10.5555/3295222.3295349", "edition": "2",
        "publisher": "Curran", "publisher_place": "Red Hook, NY", "series": "Advances",
        "collection_number": 30, "isbn": "978-1-5108-6096-4", "issn": "1049-5258",
        "language": "en-US", "editor": ["Guyon, Isabelle"], "translators": "Doe, Jane",
    }))
    assert item == {
        "id": "s1", "type": "article-journal", "title": "Attention is all you need",
        "container-title": "NeurIPS", "volume": "30", "issue": "2", "page": "5998-6008",
        "DOI": "10.5555/3295222.3295349", "edition": "2", "publisher": "Curran",
        "publisher-place": "Red Hook, NY", "collection-title": "Advances",
        "collection-number": "30", "ISBN": "978-1-5108-6096-4", "ISSN": "1049-5258",
        "language": "en-US", "editor": [{"family": "Guyon", "given": "Isabelle"}],
        "translator": [{"family": "Doe", "given": "Jane"}],
    }


def test_dois_are_passed_on_bare_and_only_when_they_are_dois() -> None:
    assert [doi(value) for value in (
        "10.5555/x.y", "doi:10.5555/x.y", "DOI: 10.5555/x.y", "https://doi.org/10.5555/x.y",
        "http://dx.doi.org/10.5555/x.y", "javascript:alert(1)", "not a doi", "10.12/x",
    )] == ["10.5555/x.y"] * 5 + ["", "", ""]
    assert "DOI" not in csl_item(Source(sid=1, extra={"doi": "javascript:alert(1)"}))


def test_lower_case_particles_are_split_off_names_as_citeproc_js_does() -> None:
    authors = csl_item(Source(sid=1, extra={"authors": [
        "van Gogh, Vincent", "de la Vallée Poussin, Charles", "Beethoven, Ludwig van",
        {"family": "van der Berg", "given": "Anna"},
        {"family": "Gogh", "given": "Vincent", "non-dropping-particle": "van"},
        "hooks, bell", "di Caprio, leonardo", "王, 小明", "International Energy Agency",
        {"literal": "van Gogh Museum"},
    ]}))["author"]
    assert authors == [
        {"family": "Gogh", "given": "Vincent", "non-dropping-particle": "van"},
        {"family": "Vallée Poussin", "given": "Charles", "non-dropping-particle": "de la"},
        {"family": "Beethoven", "given": "Ludwig", "dropping-particle": "van"},
        {"family": "Berg", "given": "Anna", "non-dropping-particle": "van der"},
        {"family": "Gogh", "given": "Vincent", "non-dropping-particle": "van"},
        {"family": "hooks", "given": "bell"},  # a single lower-case word is the name itself
        {"family": "Caprio", "given": "leonardo", "non-dropping-particle": "di"},
        {"literal": "王小明"},
        {"literal": "International Energy Agency"},  # organisations stay literal
        {"literal": "van Gogh Museum"},
    ]


def test_words_get_typographic_apostrophes_and_identifiers_keep_theirs() -> None:
    item = csl_item(Source(sid=1, title="Europe's plan", extra={
        "author": ["O'Brien, Patrick", {"literal": "Women's Institute"}],
        "journal": "Nature's Review", "doi": "10.1000/a'b", "publisher": "Penguin's"}))
    assert item["title"] == "Europe’s plan"
    assert item["author"] == [{"family": "O’Brien", "given": "Patrick"},
                              {"literal": "Women’s Institute"}]
    assert item["container-title"] == "Nature’s Review" and item["publisher"] == "Penguin’s"
    assert item["DOI"] == "10.1000/a'b"
    assert csl_item(Source(sid=2, title="'Quoted' title"))["title"] == "'Quoted' title"
