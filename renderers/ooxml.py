"""Determinism helpers shared by the DOCX and PPTX writers (zip packages of OOXML parts)."""

from __future__ import annotations

import datetime as dt
import io
import os
import zipfile
from typing import Any

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
    props: Any, *, title: str, author: str, generator: str = "citerender"
) -> None:
    """Set OOXML core properties to fixed, meaningful values (python-docx and python-pptx alike)."""
    stamp = build_timestamp().replace(tzinfo=None)
    props.title = title[:255]
    props.author = author or generator
    props.last_modified_by = author or generator
    props.comments = ""
    props.subject = ""
    props.keywords = ""
    props.category = ""
    props.revision = 1
    props.created = stamp
    props.modified = stamp
    props.last_printed = stamp


def normalize_zip(data: bytes) -> bytes:
    """Re-pack an OOXML zip with fixed timestamps, fixed permissions and a stable entry order.

    ``[Content_Types].xml`` stays first (some readers expect it); the rest are sorted by name.
    """
    stamp = build_timestamp().timetuple()[:6]
    with zipfile.ZipFile(io.BytesIO(data)) as source:
        names = source.namelist()
        ordered = sorted(names, key=lambda n: (n != "[Content_Types].xml", n))
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
            for name in ordered:
                info = zipfile.ZipInfo(name, date_time=stamp)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                info.create_system = 3
                target.writestr(info, source.read(name), compresslevel=6)
    return out.getvalue()
