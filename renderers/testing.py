"""Golden-file testing for rendered reports: reviewable normal forms and a readable comparison.

Every output format is reduced to a small set of named *entries* that a reviewer can read in a
diff and that ignore what does not matter:

- DOCX / PPTX: every XML part of the package as canonical XML (C14N, indented), keyed by its
  part name, so zip entry order and compression do not matter; binary parts (images, fonts)
  as a ``NAME.sha256`` line.
- PDF: ``text.txt`` (the text of each page), ``links.txt`` (each page's URI links and internal
  jumps with their target anchor and page) and ``info.txt`` (page count, page sizes, metadata
  without the producer's version, outline).
- PNG: ``page.png``, the decoded pixels re-encoded losslessly; compared with a small per-pixel
  tolerance, so anti-aliasing noise across platforms does not fail a test.
- HTML and Markdown: the file as written.

:func:`assert_matches_golden` compares an artifact with ``GOLDEN_DIR/<artifact file name>/``
and raises :class:`AssertionError` with a unified diff; with ``update=True`` (or the environment
variable ``CITERENDER_UPDATE_GOLDEN=1``, which ``pytest --update-golden`` sets through the plugin
in :mod:`renderers.testing_plugin`) it writes the golden files instead.
"""

from __future__ import annotations

import ctypes
import difflib
import hashlib
import io
import os
import shutil
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Environment variable that turns every :func:`assert_matches_golden` into an update.
UPDATE_ENV = "CITERENDER_UPDATE_GOLDEN"
#: File suffix → format name understood by :func:`normalize_bytes`.
SUFFIX_FORMATS: dict[str, str] = {
    ".pdf": "pdf",
    ".png": "png",
    ".docx": "docx",
    ".pptx": "pptx",
    ".html": "html",
    ".htm": "html",
    ".md": "md",
    ".markdown": "md",
    ".json": "json",
}
#: Lines of unified diff shown per differing entry before the rest is summarized.
MAX_DIFF_LINES = 120
#: PDF metadata keys written to ``info.txt`` (the producer's version is left out on purpose).
PDF_METADATA_KEYS = ("Title", "Author", "Subject", "Keywords", "Creator", "CreationDate", "ModDate")
_PDFACTION_GOTO = 1
_PDFACTION_URI = 3

Normalized = dict[str, str | bytes]


@dataclass(frozen=True)
class PixelTolerance:
    """How far a PNG may drift from its golden image and still match.

    A pixel differs when any channel differs by more than ``channel`` (anti-aliasing and gamma
    noise stay below it); at most ``ratio`` of all pixels may differ. The default lets about 23
    pixels of an A4 page at 110 dpi differ: one changed digit in body text (~70 pixels) fails.
    """

    channel: int = 32
    ratio: float = 0.00002


# ---------------------------------------------------------------- normal forms


def normalize_artifact(path: str | os.PathLike[str]) -> Normalized:
    """The reviewable normal form of the artifact file ``path`` (format from its suffix)."""
    artifact = Path(path)
    return normalize_bytes(artifact.read_bytes(), format_of(artifact))


def format_of(path: Path) -> str:
    """The format name of ``path`` from its suffix, or :class:`ValueError` naming what is known."""
    fmt = SUFFIX_FORMATS.get(path.suffix.lower())
    if fmt is None:
        known = ", ".join(sorted(SUFFIX_FORMATS))
        raise ValueError(f"{path.name}: no golden normal form for {path.suffix!r}; known: {known}")
    return fmt


def normalize_bytes(data: bytes, fmt: str) -> Normalized:
    """The normal form of ``data`` in format ``fmt`` (pdf, png, docx, pptx, html, md, json)."""
    match fmt:
        case "docx" | "pptx":
            return normalize_ooxml(data)
        case "pdf":
            out: Normalized = {}
            out.update(normalize_pdf(data))
            return out
        case "png":
            return {"page.png": normalize_png(data)}
        case "html" | "md" | "json":
            return {f"document.{fmt}": data.decode("utf-8")}
        case _:
            raise ValueError(f"no golden normal form for format {fmt!r}")


def canonical_xml(data: bytes) -> str:
    """``data`` as canonical XML (inclusive C14N 1.0), indented two spaces per level.

    Only whitespace between elements is re-indented; the text of leaf elements (``w:t``,
    ``a:t``) is kept exactly.
    """
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
    root = etree.fromstring(data, parser)
    etree.indent(root, space="  ")
    return str(etree.tostring(root, method="c14n").decode("utf-8")) + "\n"


def normalize_ooxml(data: bytes) -> Normalized:
    """Every part of an OOXML package: XML parts canonical, binary parts as a SHA-256 line."""
    out: Normalized = {}
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        for name in sorted(package.namelist()):
            if name.endswith("/"):
                continue
            raw = package.read(name)
            if name.endswith((".xml", ".rels")):
                out[name] = canonical_xml(raw)
            else:
                digest = hashlib.sha256(raw).hexdigest()
                out[f"{name}.sha256"] = f"{digest}  {len(raw)} bytes\n"
    return out


def normalize_png(data: bytes) -> bytes:
    """The pixels of a PNG re-encoded losslessly at maximum compression (metadata dropped)."""
    from PIL import Image  # imported here: the pytest plugin loads this module in every run

    with Image.open(io.BytesIO(data)) as image:
        pixels = image.convert("RGBA") if image.mode not in ("RGB", "RGBA", "L") else image.copy()
    buffer = io.BytesIO()
    pixels.save(buffer, "PNG", optimize=True)
    return buffer.getvalue()


def normalize_pdf(data: bytes) -> dict[str, str]:
    """``text.txt``, ``links.txt`` and ``info.txt`` of a PDF (read with pypdfium2)."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(data)
    try:
        names = _named_destinations(document)
        texts: list[str] = []
        links: list[str] = []
        sizes: list[str] = []
        for index in range(len(document)):
            page = document[index]
            try:
                texts.append(f"=== page {index + 1} ===\n{_page_text(page)}")
                links.extend(
                    f"page {index + 1}: {link}" for link in _page_links(document, page, names)
                )
                width, height = page.get_size()
                sizes.append(f"page {index + 1}: {width:.1f} x {height:.1f} pt")
            finally:
                page.close()
        metadata = document.get_metadata_dict()
        info = [f"pages: {len(document)}", *sizes]
        info += [f"{key}: {metadata.get(key, '')}" for key in PDF_METADATA_KEYS]
        info.append("outline:")
        info += [
            f"{'  ' * (item.level + 1)}{item.get_title()} -> page {_bookmark_page(item)}"
            for item in document.get_toc()
        ]
    finally:
        document.close()
    return {
        "text.txt": "\n".join(texts) + "\n",
        "links.txt": "\n".join(links) + "\n" if links else "",
        "info.txt": "\n".join(info) + "\n",
    }


def _page_text(page: Any) -> str:
    """The text of one PDF page: unified line ends, no trailing spaces."""
    textpage = page.get_textpage()
    try:
        raw = str(textpage.get_text_range())
    finally:
        textpage.close()
    lines = raw.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).strip("\n")


_Location = tuple[int, float | None, float | None]


def _dest_location(document: Any, dest: Any) -> _Location:
    """(page index, x, y) of a pdfium destination (x/y None when the destination has none)."""
    import pypdfium2.raw as raw

    has_x, has_y, has_zoom = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    x, y, zoom = ctypes.c_float(), ctypes.c_float(), ctypes.c_float()
    raw.FPDFDest_GetLocationInPage(
        dest, *(ctypes.byref(v) for v in (has_x, has_y, has_zoom, x, y, zoom))
    )
    return (
        int(raw.FPDFDest_GetDestPageIndex(document.raw, dest)),
        round(x.value, 1) if has_x.value else None,
        round(y.value, 1) if has_y.value else None,
    )


def _named_destinations(document: Any) -> dict[_Location, str]:
    """Location → name of the document's named destinations (anchors such as ``src-3``)."""
    import pypdfium2.raw as raw

    names: dict[_Location, str] = {}
    for index in range(raw.FPDF_CountNamedDests(document.raw)):
        size = ctypes.c_long(0)
        raw.FPDF_GetNamedDest(document.raw, index, None, ctypes.byref(size))
        buffer = ctypes.create_string_buffer(max(size.value, 2))
        dest = raw.FPDF_GetNamedDest(document.raw, index, buffer, ctypes.byref(size))
        if dest:
            name = buffer.raw[: size.value].decode("utf-16-le", "replace").rstrip("\x00")
            location = _dest_location(document, dest)
            names[location] = min(name, names.get(location, name))
    return names


def _goto(document: Any, dest: Any, names: Mapping[_Location, str]) -> str:
    location = _dest_location(document, dest)
    name = names.get(location)
    target = f"page {location[0] + 1}"
    return f"goto #{name} ({target})" if name else f"goto {target}"


def _page_links(document: Any, page: Any, names: Mapping[_Location, str]) -> list[str]:
    """Each link of ``page``: ``uri URL``, or ``goto #anchor (page N)`` for an internal jump."""
    import pypdfium2.raw as raw

    found: list[str] = []
    position = ctypes.c_int(0)
    link = raw.FPDF_LINK()
    while raw.FPDFLink_Enumerate(page.raw, ctypes.byref(position), ctypes.byref(link)):
        dest = raw.FPDFLink_GetDest(document.raw, link)
        if dest:
            found.append(_goto(document, dest, names))
            continue
        action = raw.FPDFLink_GetAction(link)
        kind = raw.FPDFAction_GetType(action) if action else 0
        if kind == _PDFACTION_URI:
            size = raw.FPDFAction_GetURIPath(document.raw, action, None, 0)
            buffer = ctypes.create_string_buffer(size)
            raw.FPDFAction_GetURIPath(document.raw, action, buffer, size)
            found.append(f"uri {buffer.value.decode('utf-8', 'replace')}")
        elif kind == _PDFACTION_GOTO and (target := raw.FPDFAction_GetDest(document.raw, action)):
            found.append(_goto(document, target, names))
        else:
            found.append(f"action {kind}")
    return found


def _bookmark_page(item: Any) -> int | str:
    dest = item.get_dest()
    index = dest.get_index() if dest is not None else None
    return "?" if index is None else int(index) + 1


# ---------------------------------------------------------------- comparison


def update_requested(update: bool | None = None) -> bool:
    """``update`` when given, else whether ``CITERENDER_UPDATE_GOLDEN`` is set to a true value."""
    if update is not None:
        return update
    return os.environ.get(UPDATE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def assert_matches_golden(
    artifact: str | os.PathLike[str],
    golden_dir: str | os.PathLike[str],
    *,
    update: bool | None = None,
    tolerance: PixelTolerance | None = None,
) -> None:
    """Compare ``artifact`` with its golden files in ``golden_dir/<artifact file name>/``.

    Raises :class:`AssertionError` listing missing or unexpected entries and a unified diff of
    each differing text entry (PNG: how many pixels differ and where). With ``update`` (or
    ``CITERENDER_UPDATE_GOLDEN=1``) the golden files are written instead; a PNG that still
    matches within ``tolerance`` is left alone so updates do not churn images.
    """
    path = Path(artifact)
    target = Path(golden_dir) / path.name
    actual = normalize_artifact(path)
    if update_requested(update):
        write_golden(target, actual, tolerance=tolerance)
        return
    if not target.is_dir():
        raise AssertionError(
            f"no golden files for {path.name} in {target.parent}; create them with "
            f"`pytest --update-golden` or {UPDATE_ENV}=1"
        )
    problems = compare_entries(read_golden(target), actual, where=target, tolerance=tolerance)
    if problems:
        raise AssertionError(
            f"{path.name} differs from its golden files in {target} "
            f"(update them with `pytest --update-golden` or {UPDATE_ENV}=1 and review the diff):"
            "\n\n" + "\n\n".join(problems)
        )


def read_golden(directory: Path) -> Normalized:
    """The golden entries stored under ``directory`` (PNG as bytes, everything else as text)."""
    entries: Normalized = {}
    for file in sorted(p for p in directory.rglob("*") if p.is_file()):
        name = file.relative_to(directory).as_posix()
        if file.suffix.lower() == ".png":
            entries[name] = file.read_bytes()
        else:
            entries[name] = file.read_bytes().decode("utf-8")
    return entries


def write_golden(
    directory: Path, entries: Mapping[str, str | bytes], *, tolerance: PixelTolerance | None = None
) -> None:
    """Make ``directory`` hold exactly ``entries``; unchanged files (and matching PNGs) stay."""
    previous = read_golden(directory) if directory.is_dir() else {}
    for stale in sorted(set(previous) - set(entries)):
        (directory / stale).unlink()
    for name, value in entries.items():
        old = previous.get(name)
        if old == value or (
            isinstance(old, bytes)
            and isinstance(value, bytes)
            and not compare_png(old, value, tolerance or PixelTolerance())
        ):
            continue
        file = directory / name
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(value if isinstance(value, bytes) else value.encode("utf-8"))
    _remove_empty_dirs(directory)


def _remove_empty_dirs(directory: Path) -> None:
    for sub in sorted((p for p in directory.rglob("*") if p.is_dir()), reverse=True):
        if not any(sub.iterdir()):
            sub.rmdir()
    if directory.is_dir() and not any(directory.iterdir()):
        shutil.rmtree(directory)


def compare_entries(
    expected: Mapping[str, str | bytes],
    actual: Mapping[str, str | bytes],
    *,
    where: Path | str = "golden",
    tolerance: PixelTolerance | None = None,
) -> list[str]:
    """Human-readable descriptions of every difference between two normal forms (empty: equal)."""
    problems: list[str] = []
    missing = sorted(set(expected) - set(actual))
    extra = sorted(set(actual) - set(expected))
    if missing:
        problems.append("entries in the golden files but not in the output: " + ", ".join(missing))
    if extra:
        problems.append("entries in the output but not in the golden files: " + ", ".join(extra))
    for name in sorted(set(expected) & set(actual)):
        old, new = expected[name], actual[name]
        if isinstance(old, bytes) and isinstance(new, bytes):
            problem = compare_png(old, new, tolerance or PixelTolerance())
            if problem:
                problems.append(f"{name}: {problem}")
        elif isinstance(old, str) and isinstance(new, str):
            if old != new:
                problems.append(text_diff(old, new, f"{where}/{name}", f"actual/{name}"))
        else:
            problems.append(f"{name}: golden and output are of different kinds (text vs image)")
    return problems


def text_diff(old: str, new: str, old_name: str, new_name: str) -> str:
    """A unified diff of two texts, cut after :data:`MAX_DIFF_LINES` lines."""
    lines = list(
        difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), old_name, new_name, n=2
        )
    )
    shown = [line if line.endswith("\n") else line + "\n" for line in lines[:MAX_DIFF_LINES]]
    if len(lines) > MAX_DIFF_LINES:
        shown.append(f"… {len(lines) - MAX_DIFF_LINES} more diff lines\n")
    if not lines:  # only line-ending differences
        shown = [f"--- {old_name}\n+++ {new_name}\n(line endings or a final newline differ)\n"]
    return "".join(shown).rstrip("\n")


def compare_png(old: bytes, new: bytes, tolerance: PixelTolerance) -> str | None:
    """``None`` when two PNGs match within ``tolerance``, else what differs."""
    from PIL import Image, ImageChops

    with Image.open(io.BytesIO(old)) as first, Image.open(io.BytesIO(new)) as second:
        if first.size != second.size:
            return f"image size {second.size} differs from the golden {first.size}"
        a, b = first.convert("RGBA"), second.convert("RGBA")
    diff = ImageChops.difference(a, b)
    over = [band.point(lambda v: 255 if v > tolerance.channel else 0) for band in diff.split()]
    mask = over[0]
    for band in over[1:]:
        mask = ImageChops.lighter(mask, band)
    differing = mask.histogram()[255]
    total = a.size[0] * a.size[1]
    if differing <= tolerance.ratio * total:
        return None
    return (
        f"{differing} of {total} pixels differ by more than {tolerance.channel} "
        f"(allowed {int(tolerance.ratio * total)}), within the box {mask.getbbox()}"
    )


def golden_paths(results: Iterable[Any]) -> list[Path]:
    """Every file of some :class:`renderers.api.RenderResult` objects (PNG pages included)."""
    paths: list[Path] = []
    for result in results:
        paths.extend(Path(p) for p in (result.paths or [result.path]))
    return paths


def render_artifacts(
    input_path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    sources_pool: Any,
    formats: str | Iterable[str] = "all",
    **options: Any,
) -> list[Path]:
    """Render the report file ``input_path`` into ``out_dir`` and return every file written.

    A thin wrapper over :func:`renderers.api.render_file` for golden tests: one path per
    artifact (each PNG page separately), ready for :func:`assert_matches_golden`.
    """
    from renderers.api import render_file

    results = render_file(
        input_path, out_dir, sources_pool=sources_pool, formats=formats, **options
    )
    return golden_paths(results)
