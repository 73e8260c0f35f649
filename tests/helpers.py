"""Real clients for tests (LibreOffice, Chromium, PDF text) and the markers they demand.

Every use of a real client goes through this module, which fails a test that lacks the
client's marker (``libreoffice``, ``browser``; a fresh render process demands ``slow``), so
``make test-fast`` (``-m "not slow and not libreoffice and not browser"``) cannot drift into
running them. ``tests/conftest.py`` tells this module which test is running.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]


class RunningTest:
    """The test item pytest is running in this process (set by ``tests/conftest.py``)."""

    item: pytest.Item | None = None


def require_marker(marker: str, what: str) -> None:
    """Fail the running test unless it (its class or module) is marked ``marker``."""
    item = RunningTest.item
    if item is not None and item.get_closest_marker(marker) is None:
        pytest.fail(
            f"{item.nodeid} {what} but is not marked @pytest.mark.{marker}; mark it so that "
            "`make test-fast` leaves it out",
            pytrace=False,
        )


def require_client(available: bool, why: str) -> None:
    """Skip when a real client is missing, except in CI, where its absence fails the test."""
    if not available:
        if IN_CI:
            pytest.fail(f"{why} (required in CI, installed by .ci/system-deps)")
        pytest.skip(why)


def at_sizes(fast: int, full: int) -> pytest.MarkDecorator:
    """Parametrize ``size``: ``fast`` in the fast loop, ``full`` marked ``slow``.

    For the tests that feed a huge input to show a pass stays linear (no test asserts a time):
    ``fast`` checks the same answers and still takes seconds if the pass turns quadratic,
    ``full`` is the scale at which the quadratic pass took minutes, run by ``make test``.
    """
    return pytest.mark.parametrize(
        "size", [fast, pytest.param(full, marks=pytest.mark.slow)], ids=[f"{fast:_}", f"{full:_}"]
    )


def soffice_binary() -> str | None:
    """The LibreOffice binary, or None."""
    return shutil.which("soffice") or shutil.which("libreoffice")


def convert_with_libreoffice(path: Path, out_dir: Path, target: str = "pdf") -> Path:
    """Convert ``path`` with headless LibreOffice (own throw-away profile); return the result."""
    return convert_all_with_libreoffice([path], out_dir, target)[0]


def convert_all_with_libreoffice(
    paths: list[Path], out_dir: Path, target: str = "pdf", *, timeout: float = 600
) -> list[Path]:
    """Convert several files in one LibreOffice start (it costs seconds); return the results."""
    require_marker("libreoffice", "runs LibreOffice")
    binary = soffice_binary()
    require_client(binary is not None, "LibreOffice is not installed")
    assert binary is not None
    profile = Path(tempfile.gettempdir()) / f"lo-profile-{uuid.uuid4().hex}"
    try:
        subprocess.run(
            [
                binary,
                f"-env:UserInstallation=file://{profile}",
                "--headless",
                "--norestore",
                "--convert-to",
                target,
                "--outdir",
                str(out_dir),
                *(str(path) for path in paths),
            ],
            check=True,
            capture_output=True,
            timeout=max(180.0, timeout if len(paths) > 1 else 180.0),
        )
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    results = [out_dir / f"{path.stem}.{target}" for path in paths]
    for path, result in zip(paths, results, strict=True):
        assert result.exists(), f"LibreOffice produced no {target} for {path.name}"
    return results


@contextmanager
def chromium_browser() -> Iterator[Any]:
    """A headless Chromium (playwright ``Browser``) for the running test; closed afterwards."""
    require_marker("browser", "drives Chromium")
    require_client(
        Path(CHROMIUM).exists() or shutil.which("chromium") is not None,
        f"Chromium is not installed at {CHROMIUM}",
    )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - depends on the environment
        require_client(False, "the playwright package is not installed")
        raise
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def pdf_text(path: Path) -> str:
    """All text of a PDF, pages joined with form feeds (pypdf)."""
    from pypdf import PdfReader

    reader = PdfReader(str(path))
    return "\f".join(page.extract_text() or "" for page in reader.pages)


def _link_annotations(pdf: Path | bytes) -> Iterator[tuple[Any, Any, str]]:
    """Each link annotation of a PDF with its reader (pypdf) and the text under its rectangle
    (pdfium, which reads what is drawn there)."""
    import io

    import pypdfium2 as pdfium
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(pdf) if isinstance(pdf, bytes) else pdf)
    document = pdfium.PdfDocument(pdf if isinstance(pdf, bytes) else str(pdf))
    try:
        for index, page in enumerate(reader.pages):
            textpage = document[index].get_textpage()
            for ref in page.get("/Annots") or []:
                annot = ref.get_object()
                if annot.get("/Subtype") != "/Link":
                    continue
                x1, y1, x2, y2 = (float(v) for v in annot["/Rect"])
                shown = textpage.get_text_bounded(
                    min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2)).strip()
                yield reader, annot, shown
    finally:
        document.close()


def internal_links(pdf: Path | bytes) -> list[tuple[str, int, float]]:
    """Each internal link annotation of a PDF: the text under its rectangle, and the page and
    top of its destination (a named or an explicit destination)."""
    found = []
    for reader, annot, shown in _link_annotations(pdf):
        if annot.get("/A") is not None:
            continue
        dest = annot["/Dest"]
        if isinstance(dest, str):
            named = reader.named_destinations[dest]
            target = reader.get_destination_page_number(named)
            top = float(named.top if named.top is not None else "nan")
        else:
            target, top = reader.get_page_number(dest[0].get_object()), float(dest[3])
        assert target is not None, f"a link to no page: {dest!r}"
        found.append((shown, target, top))
    return found


def uri_links(pdf: Path | bytes) -> list[tuple[str, str]]:
    """Each link annotation of a PDF: the text under its rectangle and its URI ("" for a link
    inside the document)."""
    found = []
    for _, annot, shown in _link_annotations(pdf):
        action = annot.get("/A")
        found.append((shown, str(action.get_object().get("/URI") or "") if action else ""))
    return found


def outline_titles(reader: Any) -> list[str]:
    """Every outline (bookmark) entry's title of a pypdf ``PdfReader``, nested ones included,
    in document order."""
    titles: list[str] = []

    def walk(items: list[Any]) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item)
            else:
                titles.append(item.title)

    walk(reader.outline)
    return titles


def pdf_lines(data: bytes) -> list[tuple[float, float, str]]:
    """The text lines of every page as drawn, read with pypdfium2 character boxes.

    Characters (spaces included) of normal size form lines by their vertical centre; smaller
    ones (superscripts) join the line they overlap most. Each line is read left to right by the
    characters' advance boxes: the visual order, whatever order the PDF's content stream uses
    (WeasyPrint draws raised citation numbers after the line). Each line is
    ``(left, right, text)`` in points, top to bottom, pages in order.
    """
    import statistics

    import pypdfium2 as pdfium

    Box = tuple[float, float, float, float, str]
    lines: list[tuple[float, float, str]] = []
    for page in pdfium.PdfDocument(data):
        textpage = page.get_textpage()
        chars: list[Box] = []
        for index in range(textpage.count_chars()):
            char = textpage.get_text_range(index, 1)
            left, bottom, right, top = textpage.get_charbox(index, loose=True)
            if char not in ("\r", "\n", ""):
                chars.append((left, bottom, right, top, char))
        if not chars:
            continue
        usual = statistics.median(c[3] - c[1] for c in chars if c[3] > c[1])
        rows: list[list[Box]] = []
        centres: list[float] = []
        small: list[Box] = []
        for box in sorted(chars, key=lambda c: -(c[1] + c[3])):
            centre = (box[1] + box[3]) / 2
            if box[3] - box[1] < 0.8 * usual:
                small.append(box)
            elif centres and abs(centre - centres[-1]) < 0.5 * usual:
                rows[-1].append(box)
            else:
                rows.append([box])
                centres.append(centre)
        for box in small:
            def overlap(row: list[Box], box: Box = box) -> float:
                return min(box[3], max(c[3] for c in row)) - max(box[1], min(c[1] for c in row))
            best = max(rows, key=overlap, default=None)
            if best is not None and overlap(best) >= 0:
                best.append(box)
            else:
                rows.append([box])
        rows.sort(key=lambda row: -max(c[3] for c in row))
        for row in rows:
            row.sort(key=lambda c: (c[0], c[2]))
            text = " ".join("".join(c[4] for c in row).split())
            if text:
                lines.append((row[0][0], max(c[2] for c in row), text))
    return lines


def without_preview_script(html: str) -> str:
    """``html`` without citerender's own citation-preview script (exactly as the template writes
    it, so any other script, or a changed copy of it, stays for the test to find)."""
    from renderers.writers.html.templating import environment

    own = environment().get_template("preview.html.j2").render().strip()
    assert html.count(own) <= 1, "the preview script appears more than once"
    return html.replace(own, "")


def pool_rows_validated(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many pool rows each JSON schema validation is given from now on (the
    ``sources_pool`` list of the instance validated): where a check runs twice, it shows."""
    from jsonschema import Draft202012Validator

    seen: list[int] = []
    iter_errors = Draft202012Validator.iter_errors

    def counting(validator: Draft202012Validator, instance: Any, *args: Any) -> Any:
        if isinstance(instance, dict) and isinstance(instance.get("sources_pool"), list):
            seen.append(len(instance["sources_pool"]))
        return iter_errors(validator, instance, *args)

    monkeypatch.setattr(Draft202012Validator, "iter_errors", counting)
    return seen
