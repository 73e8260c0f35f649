"""The persistent source registry: stable sids, enrichment, many writers, async, near duplicates."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
from pathlib import Path
from typing import Any

import pytest

from citations.errors import RegistryError
from citations.neardup import MAX_DISTANCE, SimHashIndex, hamming, simhash
from citations.pool import SourcePool
from citations.registry import AsyncSourceRegistry, NearDuplicate, SourceRegistry

ARTICLE = (
    "The International Energy Agency reports that global renewable capacity additions reached "
    "a record level in 2024, led by solar photovoltaics in China, the European Union, the "
    "United States and India. Wind additions recovered after two slower years, while "
    "hydropower stayed flat. Grid connection queues and permitting remain the main obstacles "
    "in most advanced economies, and financing costs weigh on projects in emerging markets. "
    "The agency expects capacity to grow by another quarter over the next two years."
)


def test_register_assigns_sids_and_writes_a_loadable_pool(tmp_path: Path) -> None:
    registry = SourceRegistry(tmp_path / "pool.json")
    result = registry.register([
        {"url": "https://www.iea.org/reports/renewables-2024?utm_source=x", "title": "IEA"},
        {"sid": 7, "link": "https://irena.org/stats", "snippet": "Capacity statistics"},
        {"title": "Site visit notes", "text": "Handwritten notes."},
    ])
    assert result.sid_map == {1: 1, 7: 2, 3: 3} and result.added == (1, 2, 3)
    pool = SourcePool.load(tmp_path / "pool.json")
    assert [s.sid for s in pool] == [1, 2, 3]
    assert pool.get(2).text == "Capacity statistics"  # type: ignore[union-attr]
    assert json.loads((tmp_path / "pool.json").read_text("utf-8"))[0]["sid"] == 1


def test_a_known_source_keeps_its_sid_and_gains_missing_fields_only(tmp_path: Path) -> None:
    registry = SourceRegistry(tmp_path / "pool.json")
    registry.register([{"url": "https://www.iea.org/reports/weo", "title": "WEO"},
                       {"url": "https://b.org", "title": "B"}])
    result = registry.register([
        {"sid": 4, "url": "https://WWW.iea.org/reports/weo/#summary", "title": "Other title",
         "published_at": "2024-10-16", "text": "Outlook", "publisher": "IEA"},
        {"sid": 5, "url": "https://b.org"},
    ])
    assert result.sid_map == {4: 1, 5: 2} and result.added == () and result.enriched == (1,)
    weo = registry.get(1)
    assert weo is not None
    assert (weo.title, weo.published_at, weo.text, weo.extra) == (
        "WEO", "2024-10-16", "Outlook", {"publisher": "IEA"})
    assert weo.url == "https://www.iea.org/reports/weo"  # the first spelling stays
    mtime = (tmp_path / "pool.json").stat().st_mtime_ns
    assert registry.register([{"url": "https://b.org"}]).enriched == ()
    assert (tmp_path / "pool.json").stat().st_mtime_ns == mtime  # nothing new: nothing written


def test_timeline_keeps_its_other_keys(tmp_path: Path) -> None:
    path = tmp_path / "timeline.json"
    timeline = {"conversation": "c-42", "events": [{"role": "user", "text": "Solar?"}],
                "sources_pool": [{"sid": 3, "url": "https://a.org", "title": "A"}],
                "notes": {"ü": "ok"}}
    path.write_text(json.dumps(timeline), encoding="utf-8")
    result = SourceRegistry(path).register([{"url": "https://c.org", "title": "C"}])
    assert result.sid_map == {1: 4}
    data = json.loads(path.read_text("utf-8"))
    assert list(data) == ["conversation", "events", "sources_pool", "notes"]
    assert data["events"] == timeline["events"] and data["notes"] == {"ü": "ok"}
    assert [row["sid"] for row in data["sources_pool"]] == [3, 4]
    fresh = tmp_path / "new" / "timeline.json"
    SourceRegistry(fresh).register([{"url": "https://d.org"}])
    assert json.loads(fresh.read_text("utf-8")) == {
        "sources_pool": [{"sid": 1, "url": "https://d.org"}]}


def test_lookups(tmp_path: Path) -> None:
    registry = SourceRegistry(tmp_path / "pool.json")
    registry.register([{"url": "https://a.org/x/", "title": "A"},
                       {"physical_path": "/data/report.pdf", "title": "Report"}])
    assert registry.find_by_key("https://A.org/x?utm_medium=mail").title == "A"  # type: ignore[union-attr]
    assert registry.find_by_key("url:https://a.org/x").sid == 1  # type: ignore[union-attr]
    assert registry.find_by_key("/data/./report.pdf").sid == 2  # type: ignore[union-attr]
    assert registry.find_by_key("https://nowhere.org") is None
    assert [s.sid for s in registry.iter_all()] == [1, 2] and len(registry) == 2
    assert registry.pool().get(2).title == "Report"  # type: ignore[union-attr]


def test_other_writers_are_seen_and_duplicates_in_the_file_map_to_the_lowest(
    tmp_path: Path,
) -> None:
    path = tmp_path / "pool.json"
    path.write_text(json.dumps([{"sid": 2, "url": "https://a.org"},
                                {"sid": 5, "url": "https://a.org/"}]), encoding="utf-8")
    first, second = SourceRegistry(path), SourceRegistry(path)
    assert first.register([{"url": "https://a.org"}]).sid_map == {1: 2}
    second.register([{"url": "https://new.org"}])
    assert first.register([{"url": "https://new.org"}]).sid_map == {1: 6}
    assert first.find_by_key("https://new.org") is not None


def test_bad_files_and_rows_are_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "pool.json"
    path.write_text("[{broken", encoding="utf-8")
    with pytest.raises(RegistryError, match=r"not valid JSON.*left untouched"):
        SourceRegistry(path).register([{"url": "https://a.org"}])
    assert path.read_text("utf-8") == "[{broken"
    with pytest.raises(RegistryError, match="JSON file"):
        SourceRegistry(tmp_path / "pool.yaml")
    with pytest.raises(RegistryError, match="share sid 1"):
        SourceRegistry(tmp_path / "ok.json").register([
            {"sid": 1, "url": "https://a.org"}, {"sid": 1, "url": "https://b.org"}])
    with pytest.raises(RegistryError, match="row 1 is str"):
        SourceRegistry(tmp_path / "ok.json").register(["https://a.org"])  # type: ignore[list-item]


def _worker(path: str, worker: int, count: int, queue: Any) -> None:
    registry = SourceRegistry(path)
    seen: dict[str, int] = {}
    for i in range(count):
        url = f"https://site{i % 50}.example.org/page/{i}" if i % 4 == 0 else (
            f"https://w{worker}.example.org/{i}")
        row: dict[str, Any] = {"url": url}
        if i % 8 == 0:
            row["title"] = f"Page {i}"  # shared URLs: the first title wins, the rest enrich
        seen[url] = registry.register([row]).sid_map[1]
    queue.put(seen)


@pytest.mark.slow
def test_many_processes_lose_nothing(tmp_path: Path) -> None:
    """8 processes × 200 single registrations; shared URLs collide on purpose."""
    path = str(tmp_path / "pool.json")
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    processes = [context.Process(target=_worker, args=(path, w, 200, queue)) for w in range(8)]
    for process in processes:
        process.start()
    results = [queue.get(timeout=600) for _ in processes]
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    pool = SourcePool.load(path)
    urls = {url: sid for seen in results for url, sid in seen.items()}
    assert len(pool) == len(urls) == 8 * 150 + 50  # 150 own URLs each, 50 shared
    assert list(pool.sids) == list(range(1, len(pool) + 1))
    for seen in results:  # every process was told the sid the file holds
        for url, sid in seen.items():
            assert pool.get(sid).url == url  # type: ignore[union-attr]
    assert all(pool.get(urls[f"https://site{i % 50}.example.org/page/{i}"]).title  # type: ignore[union-attr]
               == f"Page {i}" for i in range(0, 200, 8))


def test_async_interface(tmp_path: Path) -> None:
    async def scenario() -> list[int]:
        registry = AsyncSourceRegistry(tmp_path / "pool.json")
        results = await asyncio.gather(*(
            registry.register([{"url": f"https://a{i}.org"}, {"url": "https://shared.org"}])
            for i in range(10)
        ))
        assert len({r.sid_map[2] for r in results}) == 1
        found = await registry.find_by_key("https://shared.org")
        assert found is not None and (await registry.get(found.sid)) == found
        return [source.sid async for source in registry.iter_all()]

    assert asyncio.run(scenario()) == list(range(1, 12))


def test_near_duplicates_are_reported_never_merged(tmp_path: Path) -> None:
    registry = SourceRegistry(tmp_path / "pool.json", near_duplicates=True)
    registry.register([{"url": "https://www.iea.org/renewables", "text": ARTICLE},
                       {"url": "https://other.org", "text": "An unrelated short snippet."}])
    mirrored = ARTICLE.replace("main obstacles", "main hurdles")
    result = registry.register([
        {"url": "https://mirror.example.net/iea-renewables", "content": mirrored},
        {"url": "https://copy.example.net/", "text": ARTICLE.upper()},
        {"url": "https://fresh.org", "text": "Completely different: hydrogen valleys in Spain "
         "attract electrolyser makers and ammonia exporters alike this year."},
    ])
    assert result.added == (3, 4, 5)
    pairs = {(n.sid, n.similar_to) for n in result.near_duplicates}
    assert pairs == {(3, 1), (4, 1), (4, 3)}
    assert all(isinstance(n, NearDuplicate) and n.distance <= MAX_DISTANCE
               for n in result.near_duplicates)
    assert len(registry) == 5  # reported, not merged
    plain = SourceRegistry(tmp_path / "plain.json")
    assert plain.register([{"url": "https://x.org", "text": ARTICLE},
                           {"url": "https://y.org", "text": ARTICLE}]).near_duplicates == ()


def test_simhash_distances() -> None:
    base = simhash(ARTICLE)
    assert base is not None
    assert simhash(ARTICLE.lower()) == base  # case and spacing are not features
    assert simhash("Too short to tell.") is None
    edited = simhash(ARTICLE.replace("record", "new"))
    unrelated = simhash("Offshore wind auctions in Japan awarded 1.8 GW to three consortia led "
                        "by Mitsubishi, with grid access and port capacity as constraints.")
    assert edited is not None and unrelated is not None
    assert hamming(base, edited) <= MAX_DISTANCE < hamming(base, unrelated)
    index = SimHashIndex()
    index.add(1, base)
    index.add(2, unrelated)
    assert index.near(edited) == [(1, hamming(base, edited))]
    assert index.near(base ^ 0b111111) == []  # six bits away: beyond MAX_DISTANCE


def test_no_sid_past_what_a_token_can_cite_is_given(tmp_path: Path) -> None:
    path = tmp_path / "pool.json"
    path.write_text(json.dumps([{"sid": 2147483647, "title": "max"}]), encoding="utf-8")
    with pytest.raises(RegistryError, match="accepted: an integer from 1 to 2147483647"):
        SourceRegistry(path).register([{"url": "https://example.org/new", "title": "new"}])
