"""Helpers shared by test modules: real-client conversions and PDF text (import, don't copy)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def soffice_binary() -> str | None:
    """The LibreOffice binary, or None. In CI its absence fails the test instead of skipping."""
    found = shutil.which("soffice") or shutil.which("libreoffice")
    if found is None and IN_CI:
        pytest.fail("LibreOffice is required in CI (installed by .ci/run)")
    return found


def convert_with_libreoffice(path: Path, out_dir: Path, target: str = "pdf") -> Path:
    """Convert ``path`` with headless LibreOffice (own throw-away profile); return the result."""
    binary = soffice_binary()
    if binary is None:
        pytest.skip("LibreOffice is not installed (outside CI)")
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
                str(path),
            ],
            check=True,
            capture_output=True,
            timeout=180,
        )
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    result = out_dir / f"{path.stem}.{target}"
    assert result.exists(), f"LibreOffice produced no {target} for {path.name}"
    return result


def pdf_text(path: Path) -> str:
    """All text of a PDF, pages joined with form feeds (pypdf)."""
    from pypdf import PdfReader

    reader = PdfReader(str(path))
    return "\f".join(page.extract_text() or "" for page in reader.pages)


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
