"""Citation previews in a real headless Chromium: hover, click, Tab and Escape, small screens."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from renderers.api import render
from tests.helpers import chromium_browser

pytestmark = pytest.mark.browser

DATA = Path(__file__).resolve().parent / "data"
POOL: list[dict[str, Any]] = json.loads((DATA / "styled-pool.json").read_text("utf-8"))
CONTENT = (DATA / "styled.md").read_text("utf-8")
FILLER = "\n\n".join(f"Paragraph {n} of background that pushes the text down." for n in range(40))


def _html(out: Path, content: str, **options: Any) -> str:
    (result,) = render(content, out, formats=["html"], sources_pool=POOL, **options)
    return Path(result.path).as_uri()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium_browser() as launched:
        yield launched


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    out = tmp_path_factory.mktemp("previews")
    return {
        "default": _html(out / "default", CONTENT),
        "apa": _html(out / "apa", CONTENT, csl="apa"),
        "note": _html(out / "note", CONTENT, csl="chicago-note"),
        "long": _html(out / "long", FILLER + "\n\nThe last claim [[S:3]].\n\n" + FILLER),
    }


def _page(browser: Any, url: str, width: int = 1000, height: int = 700) -> Any:
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(url)
    return page


def test_hovering_a_superscript_shows_its_source_and_escape_dismisses_it(
    browser: Any, reports: dict[str, str]
) -> None:
    from playwright.sync_api import expect

    page = _page(browser, reports["default"])
    link = page.locator("sup.cite a").first
    popover = page.locator("#cite-popover")
    expect(popover).to_be_hidden()
    link.hover()
    expect(popover).to_be_visible()
    text = popover.inner_text()
    for part in ("World Energy Outlook 2024", "iea.org", "2024-10-16", "three quarters"):
        assert part in text, text
    assert popover.get_attribute("role") == "tooltip"
    assert link.get_attribute("aria-describedby") == "cite-popover"
    page.keyboard.press("Escape")
    expect(popover).to_be_hidden()
    assert link.get_attribute("aria-describedby") is None
    page.close()


def test_tabbing_reaches_each_author_date_citation_and_clicking_follows_it(
    browser: Any, reports: dict[str, str]
) -> None:
    from playwright.sync_api import expect

    page = _page(browser, reports["apa"])
    popover = page.locator("#cite-popover")
    page.keyboard.press("Tab")
    expect(popover).to_be_visible()
    assert page.evaluate("document.activeElement.textContent") == "IEA, 2024"
    assert "World Energy Outlook 2024" in popover.inner_text()
    page.keyboard.press("Tab")
    expect(popover).to_contain_text("Global Electricity Review 2024")
    expect(popover).to_contain_text("ember-energy.org")
    page.keyboard.press("Tab")
    expect(popover).to_contain_text("Solar module prices in 2024")
    page.keyboard.press("Escape")
    expect(popover).to_be_hidden()
    page.locator("span.cite a", has_text="Internal Cost Review").click()
    assert page.evaluate("location.hash") == "#src-4"
    expect(popover).to_contain_text("attachments/cost-review.pdf")
    page.close()


def test_a_note_reference_previews_its_note(browser: Any, reports: dict[str, str]) -> None:
    from playwright.sync_api import expect

    page = _page(browser, reports["note"])
    page.locator("sup.cite a").nth(3).hover()
    expect(page.locator("#cite-popover")).to_have_text("IEA, World Energy Outlook 2024.")
    page.close()


def test_on_a_small_screen_the_preview_never_covers_the_citation(
    browser: Any, reports: dict[str, str]
) -> None:
    from playwright.sync_api import expect

    page = _page(browser, reports["long"], width=360, height=640)
    popover = page.locator("#cite-popover")
    link = page.locator("sup.cite a").first
    link.focus()
    expect(popover).to_be_visible()
    assert "sheet" in (popover.get_attribute("class") or "")
    sheet, cited = popover.bounding_box(), link.bounding_box()
    assert sheet is not None and cited is not None
    assert sheet["y"] + sheet["height"] == pytest.approx(640, abs=1), "a sheet at the bottom"
    assert sheet["width"] == pytest.approx(360, abs=1)
    assert cited["y"] + cited["height"] <= sheet["y"], (cited, sheet)
    assert cited["y"] >= 0
    page.close()
