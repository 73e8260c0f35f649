"""The export page in a real headless Chromium: every button downloads a file we then open."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from renderers.service.app import create_app
from tests.helpers import chromium_browser, pdf_text

pytestmark = pytest.mark.browser

TITLE = "Renewables outlook 2025"


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """A real uvicorn server on a free loopback port, in a background thread."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(create_app(workers=2), log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


@pytest.fixture(scope="module")
def page(base_url: str) -> Iterator[Any]:
    with chromium_browser() as browser:
        context = browser.new_context(accept_downloads=True)
        browser_page = context.new_page()
        browser_page.goto(base_url + "/")
        yield browser_page
        context.close()


def _parts(path: Path, prefix: str) -> str:
    with zipfile.ZipFile(path) as archive:
        return "".join(archive.read(n).decode("utf-8") for n in sorted(archive.namelist())
                       if n.startswith(prefix) and n.endswith(".xml"))


def _check(fmt: str, path: Path) -> None:
    if fmt == "pdf":
        text = pdf_text(path)
        assert "Solar and wind together" in text
        assert "1, 3–5" in text, "the compressed multi-source citation is shown"
        assert "World Energy Outlook 2024" in text
    elif fmt == "docx":
        xml = _parts(path, "word/document")
        assert "Solar and wind together" in xml and "World Energy Outlook 2024" in xml
    elif fmt == "pptx":
        xml = _parts(path, "ppt/slides/slide")
        assert TITLE in xml and "Global Electricity Review 2024" in xml
    elif fmt == "png":
        with Image.open(path) as image:
            image.load()
            assert image.format == "PNG" and image.width > 200
    elif fmt == "html":
        text = path.read_text("utf-8")
        assert 'class="cite"' in text and "Solar and wind together" in text
    else:
        text = path.read_text("utf-8")
        assert "[^1]" in text and "Solar and wind together" in text


@pytest.mark.parametrize(
    ("fmt", "ext"),
    [("pdf", "pdf"), ("docx", "docx"), ("pptx", "pptx"), ("png", "png"), ("html", "html"),
     ("md", "md")],
)
def test_export_button_downloads_the_file(page: Any, tmp_path: Path, fmt: str, ext: str) -> None:
    from playwright.sync_api import expect

    with page.expect_download(timeout=60_000) as info:
        page.click(f"#export-{fmt}")
    download = info.value
    assert download.suggested_filename == f"{TITLE}.{ext}"
    target = tmp_path / download.suggested_filename
    download.save_as(target)
    _check(fmt, target)
    assert page.locator("#export-error").is_hidden()
    expect(page.locator("#export-status")).to_contain_text("sources cited: 5,2,1,3,4")


def test_preview_shows_clickable_citations(page: Any) -> None:
    frame = page.frame_locator("#preview")
    first = frame.locator("sup.cite a").first
    first.wait_for(timeout=30_000)
    href = first.get_attribute("href")
    assert href and href.startswith("#src-")
    target = frame.locator(href)
    assert target.count() == 1 and "Global Electricity Review 2024" in target.inner_text()
    first.click()
    # The click scrolls to the entry inside the preview; it must not navigate the frame away.
    deadline = time.monotonic() + 10
    while not any(f.url == f"about:srcdoc{href}" for f in page.frames):
        assert time.monotonic() < deadline, [f.url for f in page.frames]
        time.sleep(0.05)
    assert frame.locator(href).is_visible()
    assert frame.locator("sup.cite a").count() >= 5


def test_errors_are_shown(page: Any) -> None:
    from playwright.sync_api import expect

    pool = page.locator("#pool")
    saved = pool.input_value()
    try:
        pool.fill("[{not json")
        page.click("#export-pdf")
        page.locator("#export-error").wait_for(state="visible")
        assert "Sources pool" in page.locator("#export-error").inner_text()
        pool.fill('"/etc/passwd"')
        page.click("#export-pdf")
        expect(page.locator("#export-error")).to_contain_text("400: sources_pool")
    finally:
        pool.fill(saved)
    with page.expect_download(timeout=60_000) as info:
        page.click("#export-md")
    assert info.value.suggested_filename.endswith(".md")
    assert page.locator("#export-error").is_hidden()



def test_the_language_field_declares_the_documents_language(page: Any) -> None:
    """The page's Language field reaches the render: the preview declares it, and a value
    that is not a language tag is refused with the service's message."""
    from playwright.sync_api import expect

    lang = page.locator("#lang")
    try:
        lang.fill("fr")
        expect(page.frame_locator("#preview").locator("html")).to_have_attribute(
            "lang", "fr", timeout=30_000)
        lang.fill("english")
        page.click("#export-md")
        expect(page.locator("#export-error")).to_contain_text("lang")
        expect(page.locator("#export-error")).to_contain_text("BCP 47")
    finally:
        lang.fill("")
    expect(page.frame_locator("#preview").locator("html")).to_have_attribute(
        "lang", "en", timeout=30_000)


def test_preview_shows_citation_popovers_in_the_chosen_style(page: Any) -> None:
    """The live preview runs the report's own citation-preview script (admitted by the page's
    policy by hash) in the chosen CSL style."""
    from playwright.sync_api import expect

    frame = page.frame_locator("#preview")
    try:
        page.select_option("#csl", "apa")
        cite = frame.locator("span.cite a", has_text="Global Electricity Review 2024").first
        cite.wait_for(timeout=30_000)
        cite.hover()
        popover = frame.locator("#cite-popover")
        expect(popover).to_be_visible()
        expect(popover).to_contain_text("Global Electricity Review 2024")
        cite.focus()
        page.keyboard.press("Escape")
        expect(popover).to_be_hidden()
    finally:
        page.select_option("#csl", "")
    frame.locator("sup.cite a").first.wait_for(timeout=30_000)


def test_labels_stay_beside_their_controls_at_320px(page: Any) -> None:
    """On a phone-wide window each option's label sits on its control's line (a label left at
    the end of one line with its control on the next reads as labelling the wrong control),
    and nothing scrolls sideways."""
    size = page.viewport_size
    try:
        page.set_viewport_size({"width": 320, "height": 900})
        boxes = page.evaluate("""() => [...document.querySelectorAll('.row label')].map(l => {
            const a = l.getBoundingClientRect(), b = l.control.getBoundingClientRect();
            return [l.htmlFor, a.top + a.height / 2, b.top, b.bottom, b.right]; })""")
        assert len(boxes) == 7
        for name, label_middle, top, bottom, right in boxes:
            assert top <= label_middle <= bottom, f"the {name} label is off its control's line"
            assert right <= 320, f"{name} reaches past the window"
        assert page.evaluate("document.documentElement.scrollWidth") <= 320
    finally:
        page.set_viewport_size(size)


@contextlib.contextmanager
def fetch_replaced(page: Any, script: str, arg: object = None) -> Iterator[None]:
    """The page's ``fetch`` replaced by ``script`` (a function of ``arg`` that finds the real
    one as ``window.realFetch``) for the block, and put back after it."""
    page.evaluate("() => { window.realFetch = window.fetch; }")
    page.evaluate(script, arg)
    try:
        yield
    finally:
        page.evaluate("() => { window.fetch = window.realFetch; }")


#: Every request answered after ``ms`` milliseconds.
_SLOW_FETCH = """(ms) => { window.fetch = (...a) => new Promise(r => setTimeout(r, ms))
    .then(() => window.realFetch(...a)); }"""
#: Previews (HTML renders) answered after ``ms`` milliseconds, exports at once.
_DELAY_PREVIEWS = """(ms) => { window.fetch = (url, init) => JSON.parse(init.body).format === "html"
    ? new Promise(r => setTimeout(r, ms)).then(() => window.realFetch(url, init))
    : window.realFetch(url, init); }"""
#: A render that runs until it is cancelled (its request aborted).
_UNTIL_CANCELLED = """() => { window.fetch = (url, init) => new Promise((_, reject) =>
    init.signal.addEventListener("abort", () => reject(new DOMException("aborted",
                                                                         "AbortError")))); }"""


def test_a_keyboard_export_keeps_focus_and_exports_once(page: Any) -> None:
    """Enter on an export button while a (slow) render runs: focus stays on the button (a
    disabled button would drop it to the page's body), the button says it is busy, and a
    second Enter does not start a second export."""
    downloads: list[str] = []

    def count(download: Any) -> None:
        downloads.append(download.suggested_filename)

    page.on("download", count)
    with fetch_replaced(page, _SLOW_FETCH, 1500):
        try:
            page.focus("#export-md")
            page.keyboard.press("Enter")
            assert page.evaluate("document.activeElement.id") == "export-md"
            assert page.locator("#export-md").get_attribute("aria-disabled") == "true"
            page.keyboard.press("Enter")
            page.wait_for_function("() => !document.querySelector('#export-md[aria-disabled]')",
                                   timeout=60_000)
            page.wait_for_timeout(2_000)
            assert downloads == [f"{TITLE}.md"]
            assert page.evaluate("document.activeElement.id") == "export-md"
        finally:
            page.remove_listener("download", count)


def test_an_unreachable_service_is_named_and_the_export_can_be_retried(page: Any) -> None:
    from playwright.sync_api import expect

    page.route("**/render", lambda route: route.abort())
    try:
        page.click("#export-md")
        expect(page.locator("#export-error")).to_contain_text(
            "Could not reach the citerender service")
        assert page.locator("#export-md").get_attribute("aria-disabled") is None
    finally:
        page.unroute("**/render")
    with page.expect_download(timeout=60_000) as info:
        page.click("#export-md")
    assert info.value.suggested_filename == f"{TITLE}.md"
    assert page.locator("#export-error").is_hidden()


def test_a_too_large_pool_is_named_in_the_refusal(page: Any) -> None:
    """A pasted pool of 100,000 rows (11 MB) passes the body limit: the refusal says which
    field is large, not only that the request body is."""
    from playwright.sync_api import expect

    pool = page.locator("#pool")
    saved = pool.input_value()
    rows = ",".join(f'{{"sid": {i}, "title": "Source number {i}", '
                    f'"url": "https://example.org/{i}", "published_at": "2024-01-01"}}'
                    for i in range(1, 100_001))
    try:
        # Set without an input event: no preview render of it.
        page.evaluate("(rows) => { document.getElementById('pool').value = rows; }",
                      f"[{rows}]")
        page.click("#export-md")
        error = page.locator("#export-error")
        expect(error).to_contain_text("413: request body larger than")
        expect(error).to_contain_text(" and Sources pool 10.7 MB")
    finally:
        pool.fill(saved)


def test_a_refusal_whose_words_do_not_name_its_field_is_shown_with_it(page: Any) -> None:
    """The service's memory refusal names the setting, not the field (``content``) at fault:
    the page adds the refusal's ``field``."""
    from playwright.sync_api import expect

    refusal = {"error": "the render needed more than the 512 MiB a worker may use; raise "
               "serve --max-worker-memory", "field": "content", "code": "limit_exceeded"}
    page.route("**/render", lambda route: route.fulfill(status=422, json=refusal))
    try:
        page.click("#export-pdf")
        expect(page.locator("#export-error")).to_have_text(
            f"422: {refusal['error']} (field: content)")
    finally:
        page.unroute("**/render")


def test_keyboard_focus_is_visible_on_every_control(page: Any) -> None:
    """Tab from the top reaches every control, each labelled and drawn with a focus ring
    (the preview frame too: focus inside it rings the frame)."""
    page.focus(".docs-link")
    seen: list[str] = []
    for _ in range(20):
        page.keyboard.press("Tab")
        # Into the sandboxed preview (a frame of its own origin) the focus moves asynchronously:
        # for a moment the page's active element is its body (1 run in 4 or so read it so).
        page.wait_for_function("() => document.activeElement !== document.body", timeout=5_000)
        focused = page.evaluate("""() => { const e = document.activeElement;
            const s = getComputedStyle(e);
            const name = e.labels?.[0]?.innerText || e.title || e.innerText;
            return [e.id || e.tagName, s.outlineStyle, name.trim()]; }""")
        ident, outline, name = focused
        if ident == "preview":  # the ring is drawn once the frame's focus event has run
            page.wait_for_function("() => document.getElementById('preview').matches('.focused')")
            outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
        assert outline != "none", f"{ident} has no visible focus ring"
        assert name, f"{ident} has no label"
        seen.append(ident)
        if ident == "preview":
            break
    assert seen[-1] == "preview"
    assert {"title", "lang", "content", "pool", "pdf-engine", "export-pdf"} <= set(seen)


def test_a_preview_finishing_after_a_refused_export_leaves_the_refusal(page: Any) -> None:
    """An edit starts a preview; an export is refused while that preview is still on its way.
    The preview's success, arriving last, must not erase the export's refusal."""
    from playwright.sync_api import expect

    refusal = {"error": "sources_pool: row 3 has no title", "field": "sources_pool"}

    def refuse_exports(route: Any) -> None:
        if json.loads(route.request.post_data or "{}").get("format") == "html":
            route.continue_()
        else:
            route.fulfill(status=400, json=refusal)

    title = page.locator("#title")
    page.route("**/render", refuse_exports)
    try:
        with fetch_replaced(page, _DELAY_PREVIEWS, 1500):
            title.fill(TITLE + " (draft)")
            page.click("#export-pdf")
            error = page.locator("#export-error")
            expect(error).to_have_text(f"400: {refusal['error']}")
            expect(page.locator("#preview-status")).to_have_text("updating…")
            expect(page.locator("#preview-status")).to_have_text("", timeout=30_000)
            expect(page.frame_locator("#preview").locator("h1").first).to_contain_text("(draft)")
            expect(error).to_have_text(f"400: {refusal['error']}")
    finally:
        page.unroute("**/render")
        title.fill(TITLE)


def test_an_export_leaves_a_failed_previews_message(page: Any) -> None:
    """The reverse: an export, starting or succeeding, does not clear the preview's failure;
    the next good preview does."""
    from playwright.sync_api import expect

    def refuse_previews(route: Any) -> None:
        if json.loads(route.request.post_data or "{}").get("format") == "html":
            route.fulfill(status=400, json={"error": "lang: not a BCP 47 tag", "field": "lang"})
        else:
            route.continue_()

    title, preview_error = page.locator("#title"), page.locator("#preview-error")
    page.route("**/render", refuse_previews)
    try:
        title.fill(TITLE + " (draft)")
        expect(preview_error).to_have_text("400: lang: not a BCP 47 tag")
        with page.expect_download(timeout=60_000) as info:
            page.click("#export-md")
        assert info.value.suggested_filename == f"{TITLE} (draft).md"
        expect(page.locator("#export-status")).to_contain_text("Downloaded")
        expect(preview_error).to_have_text("400: lang: not a BCP 47 tag")
        assert page.locator("#preview-status").inner_text() == "preview failed"
    finally:
        page.unroute("**/render")
        title.fill(TITLE)
    expect(preview_error).to_be_hidden(timeout=30_000)


def _busy_workers(base_url: str) -> int:
    with urllib.request.urlopen(base_url + "/healthz", timeout=10) as answer:
        return int(json.load(answer)["workers"]["busy"])


def test_a_running_export_can_be_cancelled_and_the_next_export_works(
    page: Any, base_url: str
) -> None:
    """A long PDF render is cancelled from the page: the button comes back, the page says
    "cancelled", the file never downloads (not even once the service, which renders on after
    the client has gone, finishes it), and the next export downloads normally."""
    from playwright.sync_api import expect

    downloads: list[str] = []

    def count(download: Any) -> None:
        downloads.append(download.suggested_filename)

    long_doc = "\n\n".join(f"## Part {i}\n\n" + "Solar and wind grew again.[[S:1]] " * 10
                           for i in range(12))
    content = page.locator("#content")
    saved = content.input_value()
    page.on("download", count)
    try:
        # Set without an input event: no preview render of it.
        page.evaluate("(text) => { document.getElementById('content').value = text; }",
                      long_doc)
        with page.expect_request("**/render"):
            page.click("#export-pdf")
        cancel = page.locator("#export-cancel")
        expect(cancel).to_be_visible()
        deadline = time.monotonic() + 10
        while not _busy_workers(base_url):  # cancel once a worker is rendering it
            assert time.monotonic() < deadline, "the render never started"
            time.sleep(0.05)
        cancel.click()
        expect(page.locator("#export-status")).to_have_text("PDF export cancelled")
        expect(cancel).to_be_hidden()
        assert page.locator("#export-error").is_hidden()
        assert page.locator("button[aria-disabled]").count() == 0
        page.evaluate("(text) => { document.getElementById('content').value = text; }", saved)
        with page.expect_download(timeout=60_000) as info:
            page.click("#export-md")
        assert info.value.suggested_filename == f"{TITLE}.md"
        deadline = time.monotonic() + 60
        while _busy_workers(base_url):
            assert time.monotonic() < deadline, "the abandoned render never finished"
            time.sleep(0.1)
        page.wait_for_timeout(300)
        assert downloads == [f"{TITLE}.md"]
    finally:
        page.remove_listener("download", count)
        content.fill(saved)


def test_the_cancel_control_is_reached_and_pressed_from_the_keyboard(page: Any) -> None:
    """Tab from the first, busy export button reaches Cancel (the other busy buttons leave the
    tab order); Enter on it cancels and puts focus back on the export button (focus on the
    hidden Cancel would fall to the body). Escape cancels too. After each cancel, all export
    buttons are back in the tab order."""
    from playwright.sync_api import expect

    status = page.locator("#export-status")
    # A render that runs until cancelled (the real one is cancelled in the test above).
    with fetch_replaced(page, _UNTIL_CANCELLED):
        page.focus("#export-pdf")
        page.keyboard.press("Enter")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == "export-cancel"
        page.keyboard.press("Enter")
        expect(status).to_have_text("PDF export cancelled")
        assert page.evaluate("document.activeElement.id") == "export-pdf"
        page.keyboard.press("Enter")
        expect(status).to_have_text("Rendering PDF…")
        page.keyboard.press("Escape")
        expect(status).to_have_text("PDF export cancelled")
        expect(page.locator("#export-cancel")).to_be_hidden()
        assert page.locator("#export-pdf").get_attribute("aria-disabled") is None
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == "export-docx"


@pytest.mark.parametrize("width", [320, 1280])
def test_the_page_does_not_move_when_an_export_starts(page: Any, width: int) -> None:
    """Cancel keeps its place while hidden, so what follows the exports (the refusal box, on a
    phone the preview) stays where it was when Cancel appears; hidden, it is not in the tab
    order (Tab from the last export button does not reach it)."""
    from playwright.sync_api import expect

    size = page.viewport_size
    page.set_viewport_size({"width": width, "height": 900})
    try:
        with fetch_replaced(page, _UNTIL_CANCELLED):
            page.focus("#export-md")
            page.keyboard.press("Tab")
            assert page.evaluate("document.activeElement.id") != "export-cancel"
            idle = page.locator(".progress").bounding_box()
            page.click("#export-pdf")
            expect(page.locator("#export-cancel")).to_be_visible()
            busy = page.locator(".progress").bounding_box()
            assert busy is not None and idle is not None
            assert busy["y"] == idle["y"] and busy["height"] == idle["height"], (idle, busy)
            page.keyboard.press("Escape")
            expect(page.locator("#export-cancel")).to_be_hidden()
    finally:
        page.set_viewport_size(size)
