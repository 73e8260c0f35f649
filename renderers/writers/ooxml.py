"""Determinism helpers shared by the DOCX and PPTX writers (zip packages of OOXML parts)."""

from __future__ import annotations

import datetime as dt
import io
import os
import zipfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from citations.chars import UNSAFE_CHARS
from renderers.errors import OptionError

T = TypeVar("T")

#: Bounds on a reference DOCX/PPTX (a template users hand us): its size on disk, how many
#: parts it may hold, and how large any one part and all parts together may unpack to.
#: python-docx and python-pptx read every part into memory and copy media into the output,
#: so without them a 1.5 MB zip bomb costs gigabytes.
MAX_REFERENCE_BYTES = 50 * 1024 * 1024
MAX_REFERENCE_PARTS = 2_000
MAX_REFERENCE_PART_BYTES = 64 * 1024 * 1024
MAX_REFERENCE_TOTAL_BYTES = 160 * 1024 * 1024

#: Zip entry timestamp used when SOURCE_DATE_EPOCH is not set (zip cannot store dates before 1980).
DEFAULT_EPOCH = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)


def build_timestamp() -> dt.datetime:
    """The date every format writes: ``SOURCE_DATE_EPOCH`` when set, else a fixed date."""
    raw = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if raw:
        try:
            stamp = dt.datetime.fromtimestamp(int(raw), tz=dt.UTC)
        except (ValueError, OverflowError, OSError):
            return DEFAULT_EPOCH
        return max(stamp, dt.datetime(1980, 1, 1, tzinfo=dt.UTC))
    return DEFAULT_EPOCH


def apply_core_properties(
    props: Any,
    *,
    title: str,
    author: str,
    keywords: tuple[str, ...] = (),
    subject: str = "",
    generator: str = "citerender",
) -> None:
    """Set OOXML core properties to fixed, meaningful values (python-docx and python-pptx alike).
    The dates are the build's (:func:`build_timestamp`), never a front matter ``date``: they
    say when the file was made, and keep identical input byte-identical."""
    stamp = build_timestamp().replace(tzinfo=None)
    props.title = title[:255]
    props.author = (author or generator)[:255]
    props.last_modified_by = (author or generator)[:255]
    props.comments = ""
    props.subject = subject[:255]
    props.keywords = ", ".join(keywords)[:255]
    props.category = ""
    props.revision = 1
    props.created = stamp
    props.modified = stamp
    props.last_printed = stamp


class PackageCollector:
    """Stands in for python-docx's and python-pptx's zip writer (``write(pack_uri, blob)``).

    Their package writers compress every member as they go; collecting the members instead
    lets :func:`write_package` compress each one exactly once, in a deterministic order.
    """

    def __init__(self) -> None:
        self.members: dict[str, bytes] = {}

    def write(self, pack_uri: Any, blob: bytes) -> None:
        """Keep ``blob`` under the member name of ``pack_uri`` (a PackURI: ``/ppt/x.xml``)."""
        self.members[str(pack_uri.membername)] = blob

    def close(self) -> None:
        """Nothing to flush (the zip is written by :func:`write_package`)."""

    def __enter__(self) -> PackageCollector:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_RELS_NS = "http://schemas.openxmlformats.org/package/2006/relationships"
_ATTR_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\n": "&#10;",
                 "\r": "&#13;", "\t": "&#9;"}
_ATTR_TABLE = str.maketrans(_ATTR_ESCAPES)


def attribute_text(value: str) -> str:
    """``value`` for a double-quoted XML attribute: ``& < > "`` and line breaks and tabs
    escaped (a parser would fold them into spaces), characters XML forbids removed."""
    return UNSAFE_CHARS.sub("", value).translate(_ATTR_TABLE)


def relationships_xml(rels: Iterable[tuple[str, str, str, bool]]) -> bytes:
    """A ``.rels`` part for (rId, type, target, external) relationships, in numeric rId order.

    The same bytes python-pptx writes, without building an element tree per relationship
    (a 300-slide deck has thousands of them).
    """
    def number(rid: str) -> int:
        return int(rid[3:]) if rid.startswith("rId") and rid[3:].isdigit() else 0

    items = "".join(
        f'<Relationship Id="{attribute_text(rid)}" Type="{attribute_text(kind)}" '
        f'Target="{attribute_text(target)}"'
        + (' TargetMode="External"/>' if external else "/>")
        for rid, kind, target, external in sorted(rels, key=lambda r: (number(r[0]), r[0]))
    )
    return (
        "<?xml version='1.0' encoding='UTF-8' standalone='yes'?>\n"
        f'<Relationships xmlns="{_RELS_NS}">{items}</Relationships>'
    ).encode()


def write_package(members: Mapping[str, bytes]) -> bytes:
    """Zip OOXML ``members`` (name → bytes) with fixed timestamps, permissions and order.

    ``[Content_Types].xml`` comes first (some readers expect it); the rest are sorted by name.
    """
    stamp = build_timestamp().timetuple()[:6]
    ordered = sorted(members, key=lambda n: (n != "[Content_Types].xml", n))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for name in ordered:
            info = zipfile.ZipInfo(name, date_time=stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            info.create_system = 3
            target.writestr(info, members[name], compresslevel=6)
    return out.getvalue()


def normalize_zip(data: bytes) -> bytes:
    """Re-pack an existing OOXML zip as :func:`write_package` writes it (same bytes)."""
    with zipfile.ZipFile(io.BytesIO(data)) as source:
        return write_package({name: source.read(name) for name in source.namelist()})


#: ``<!DOCTYPE`` as an XML part may encode it (OOXML parts are UTF-8 or UTF-16).
_DOCTYPES = tuple("<!DOCTYPE".encode(codec) for codec in ("utf-8", "utf-16-le", "utf-16-be"))
_DOCTYPE_OVERLAP = max(len(needle) for needle in _DOCTYPES) - 1


def _declares_dtd(package: zipfile.ZipFile, member: zipfile.ZipInfo) -> bool:
    """Whether the XML part ``member`` declares a DTD. OOXML forbids one (ECMA-376 Part 2),
    and python-docx and python-pptx drop it when they write a part again but keep its entity
    references (``&b;``), so the package they wrote would not be XML. Read in 1 MiB chunks;
    media (an SVG may carry a DOCTYPE) is copied as it is and not looked at."""
    if not member.filename.endswith((".xml", ".rels")):
        return False
    tail = b""
    with package.open(member) as handle:
        while chunk := handle.read(1 << 20):
            window = tail + chunk
            if any(needle in window for needle in _DOCTYPES):
                return True
            tail = window[-_DOCTYPE_OVERLAP:]
    return False


def open_reference(path: Path, option: str, kind: str, opener: Callable[[str], T]) -> T:
    """Open the reference package ``path`` (the value of ``option``) with ``opener`` after
    checking its bounds; any failure becomes an :class:`OptionError` naming the option.

    Zip entries cannot unpack past their declared size (``zipfile`` stops there and the CRC
    check fails), so the declared sizes bound what the libraries will read.
    """
    name = f"{option} {str(path)!r}"
    accepted = (
        f"accepted: a {kind} of at most {MAX_REFERENCE_BYTES // 2**20} MB whose parts unpack "
        f"to at most {MAX_REFERENCE_PART_BYTES // 2**20} MB each and declare no DTD"
    )

    def refuse(problem: str) -> OptionError:
        return OptionError(f"{name} {problem}; {accepted}", field=option)

    try:
        size = path.stat().st_size
        if size > MAX_REFERENCE_BYTES:
            raise refuse(f"is {size:,} bytes")
        with zipfile.ZipFile(path) as package:
            members = package.infolist()
            if len(members) > MAX_REFERENCE_PARTS:
                raise refuse(f"holds {len(members):,} parts")
            largest = max(members, key=lambda m: m.file_size, default=None)
            if largest is not None and largest.file_size > MAX_REFERENCE_PART_BYTES:
                raise refuse(
                    f"has part {largest.filename!r}, which unpacks to {largest.file_size:,} bytes"
                )
            if sum(m.file_size for m in members) > MAX_REFERENCE_TOTAL_BYTES:
                raise refuse(f"unpacks to more than {MAX_REFERENCE_TOTAL_BYTES // 2**20} MB in all")
            declaring = next((m for m in members if _declares_dtd(package, m)), None)
            if declaring is not None:
                raise refuse(
                    f"has part {declaring.filename!r}, which declares a DTD (<!DOCTYPE>); "
                    "Office documents may not hold one"
                )
    except OptionError:
        raise
    except (OSError, zipfile.BadZipFile, ValueError, EOFError) as exc:
        raise refuse(f"is not a readable {kind} ({exc})") from exc
    try:
        return opener(str(path))
    except MemoryError:
        raise
    except Exception as exc:  # the libraries raise a dozen types for broken packages
        raise refuse(f"could not be opened as a {kind} ({type(exc).__name__}: {exc})") from exc
