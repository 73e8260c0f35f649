"""Pool rows → CSL-JSON items."""

from __future__ import annotations

from citations.model import Source
from renderers.styles.items import csl_item, date_parts
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
