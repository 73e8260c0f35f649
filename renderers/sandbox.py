"""The resource sandbox: what a render may load (images, stylesheets, fonts) and from where.

Only ``data:`` URIs and local files inside the allowed directories (the input's base directory
and the output directory) load; ``http``, ``https``, ``ftp``, files outside (``../``, symlinks
pointing out, ``file:///etc/passwd``) are refused. Nothing here ever opens a network connection.
"""

from __future__ import annotations

import base64
import binascii
import io
import mimetypes
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, unquote_to_bytes, urlsplit

from renderers.diagnostics import Code, Diagnostic, collect, forward, report
from renderers.errors import ResourceError
from renderers.options import RenderOptions

#: Largest resource (decoded bytes) the sandbox hands out.
MAX_RESOURCE_BYTES = 32 * 1024 * 1024
#: Raster formats writers may embed, by Pillow format name.
IMAGE_FORMATS: frozenset[str] = frozenset({"PNG", "JPEG", "GIF", "WEBP", "BMP", "TIFF"})
#: What a warning about an image that is not loaded says is accepted.
IMAGE_FORMATS_ACCEPTED = "accepted: PNG, JPEG, GIF, WebP, BMP or TIFF images"
#: A Python object's repr (``<_io.BytesIO object at 0x7f…>``), which Pillow puts in some of its
#: messages: a warning holding one differs from run to run and is never printed once.
_OBJECT_REPR = re.compile(r"\s*<[^<>]* at 0x[0-9A-Fa-f]+>")


@dataclass(frozen=True)
class LoadedImage:
    """A verified raster image ready to embed."""

    data: bytes
    mime: str
    width: int
    height: int

    def data_uri(self) -> str:
        """The image as a ``data:`` URI (for standalone HTML)."""
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"


def shown_reference(reference: str) -> str:
    """``reference`` short enough for a one-line warning (a data: URI runs to megabytes);
    messages quote it with ``!r``, which escapes what is not printable."""
    return reference[:80] + ("…" if len(reference) > 80 else "")


def allowed_dirs(options: RenderOptions) -> tuple[Path, ...]:
    """The directories resources may come from: ``base_dir`` and ``out_dir`` (whichever are set),
    each once (``base_dir`` defaults to the output directory, so they are often the same)."""
    dirs: dict[str, Path] = {}
    for d in (options.base_dir, options.out_dir):
        if d is not None:
            dirs.setdefault(os.path.realpath(d), d)
    return tuple(dirs.values())


def decode_data_uri(uri: str) -> tuple[bytes, str]:
    """``data:[<mime>][;base64],<payload>`` → (bytes, mime). Raises :class:`ResourceError`."""
    header, sep, payload = uri[5:].partition(",")
    if not sep:
        raise ResourceError("malformed data: URI (no comma): accepted is data:[<mime>][;base64],…")
    params = [p.strip() for p in header.split(";")]
    mime = params[0].lower() or "text/plain"
    try:
        if "base64" in (p.lower() for p in params[1:]):
            data = base64.b64decode(unquote(payload), validate=False)
        else:
            data = unquote_to_bytes(payload)
    except (binascii.Error, ValueError) as exc:
        raise ResourceError(f"malformed data: URI payload ({exc})") from exc
    if len(data) > MAX_RESOURCE_BYTES:
        raise ResourceError(f"data: URI of {len(data)} bytes exceeds {MAX_RESOURCE_BYTES} bytes")
    return data, mime


class Sandbox:
    """Resolves resource references to files inside the allowed directories (after symlinks)."""

    def __init__(self, allowed_dirs: Sequence[Path]) -> None:
        self.roots: tuple[str, ...] = tuple(
            dict.fromkeys(os.path.realpath(d) for d in allowed_dirs)
        )

    def contains(self, path: str) -> bool:
        """True if the real path of ``path`` lies inside one of the allowed directories."""
        real = os.path.realpath(path)
        return any(real == root or real.startswith(root.rstrip(os.sep) + os.sep)
                   for root in self.roots)

    def resolve(self, reference: str) -> Path:
        """The real path a ``file:`` URL, absolute or relative path designates; refused → error.

        Relative paths are tried against each allowed directory in turn.
        """
        if not self.roots:
            raise ResourceError(
                f"refused {reference!r}: no base or output directory is set, only data: URIs load"
            )
        parts = urlsplit(reference)
        scheme = parts.scheme.lower()
        if scheme == "file":
            if parts.netloc not in ("", "localhost"):
                raise ResourceError(f"refused {reference!r}: remote file: URLs are not loaded")
            from urllib.request import url2pathname  # imported here: it pulls in http, ssl

            candidates = [url2pathname(parts.path)]
        elif scheme and len(scheme) > 1:  # a one-letter "scheme" is a Windows drive
            raise ResourceError(
                f"refused {reference!r}: only data: URIs and files under the base directory load"
            )
        else:
            raw = unquote(reference.split("?", 1)[0].split("#", 1)[0])
            if os.path.isabs(raw):
                candidates = [raw]
            else:
                candidates = [os.path.join(root, raw) for root in self.roots]
        for candidate in candidates:
            if self.contains(candidate) and os.path.isfile(candidate):
                return Path(os.path.realpath(candidate))
        raise ResourceError(
            f"refused {reference!r}: not a file inside {', '.join(self.roots)}"
        )

    def read(self, reference: str) -> tuple[bytes, str]:
        """The bytes and guessed MIME type of a local resource (``data:`` or an allowed file)."""
        if reference[:5].lower() == "data:":
            return decode_data_uri(reference)
        path = self.resolve(reference)
        size = path.stat().st_size
        if size > MAX_RESOURCE_BYTES:
            raise ResourceError(f"refused {reference!r}: {size} bytes exceeds {MAX_RESOURCE_BYTES}")
        mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        return path.read_bytes(), mime

    def load_resource(self, reference: str, max_image_pixels: int) -> tuple[bytes, str]:
        """:meth:`read`, refusing raster images of more than ``max_image_pixels`` pixels: what a
        layout engine's resource loader may hand out."""
        data, mime = self.read(reference)
        check_pixels(data, max_image_pixels, reference)
        return data, mime


def check_pixels(data: bytes, max_pixels: int, reference: str) -> None:
    """Refuse raster images whose declared size exceeds ``max_pixels`` (decompression bombs)."""
    from PIL import Image as PILImage  # imported when an image is loaded, not by every render

    try:
        with PILImage.open(io.BytesIO(data)) as image:
            width, height = image.size
    except PILImage.DecompressionBombError as exc:
        raise ResourceError(f"refused {shown_reference(reference)!r}: {exc}") from exc
    except (OSError, ValueError):
        return  # not a raster image Pillow knows (CSS, font, SVG …): no pixel limit applies
    if width * height > max_pixels:
        raise ResourceError(
            f"refused {shown_reference(reference)!r}: {width}×{height} pixels exceeds the limit "
            f"of {max_pixels}"
        )


#: Images already loaded by the artifact being written (see :func:`image_cache`), by reference,
#: the directories it may resolve in and the pixel limit.
_CacheKey = tuple[str, tuple[Path, ...], int]
_CACHE: ContextVar[dict[_CacheKey, LoadedImage | Diagnostic] | None] = ContextVar(
    "citerender_image_cache", default=None
)


@contextmanager
def image_cache() -> Iterator[None]:
    """Within the ``with`` body, an image used again is not read or decoded again: one image
    used a thousand times costs one load, not a thousand (nested bodies share the cache). A
    file is read once per artifact; a file changed while it is written is not seen."""
    if _CACHE.get() is not None:
        yield
        return
    token = _CACHE.set({})
    try:
        yield
    finally:
        _CACHE.reset(token)


def load_image(src: str, options: RenderOptions) -> LoadedImage | None:
    """Load an image for embedding, or None when it is remote, refused, broken or too large.

    ``src`` may be a ``data:`` URI, a ``file:`` URL, or a path relative to ``options.base_dir``
    (then ``options.out_dir``). The bytes must be a raster image Pillow recognizes
    (PNG, JPEG, GIF, WebP, BMP, TIFF) within ``options.limits.max_image_pixels``. Every image
    not loaded is reported (:func:`renderers.diagnostics.report`): the writer shows its alt
    text instead, and the render's warnings say why. An empty ``src`` is not reported again:
    its reader already named the source it refused (or that there was none).
    """
    reference = src.strip()
    if not reference:
        return None
    cache = _CACHE.get()
    key = (reference, allowed_dirs(options), options.limits.max_image_pixels)
    if cache is not None and key in cache:
        known = cache[key]
        if isinstance(known, Diagnostic):
            report(known)
            return None
        return known
    with collect() as reported:
        loaded = _load_image(reference, options)
    forward(reported)
    if cache is not None and (loaded is not None or reported):
        cache[key] = loaded if loaded is not None else reported[0]
    return loaded


def _load_image(reference: str, options: RenderOptions) -> LoadedImage | None:
    shown = shown_reference(reference)
    sandbox = Sandbox(allowed_dirs(options))
    try:
        data, _ = sandbox.read(reference)
    except ResourceError as exc:  # the sandbox's message names the reference
        message = f"image not loaded (its alt text is shown): {exc}"
        report(Diagnostic(Code.IMAGE_REFUSED, message, file=shown))
        return None
    except OSError as exc:
        _not_loaded(Code.IMAGE_REFUSED, shown, exc.strerror or str(exc))
        return None
    from PIL import Image as PILImage

    try:
        with PILImage.open(io.BytesIO(data)) as image:
            fmt, (width, height) = image.format, image.size
            if fmt not in IMAGE_FORMATS:
                _not_loaded(Code.IMAGE_UNREADABLE, shown,
                            f"{fmt} images are not embedded; {IMAGE_FORMATS_ACCEPTED}")
                return None
            if width * height > options.limits.max_image_pixels:
                _not_loaded(
                    Code.IMAGE_UNREADABLE,
                    shown,
                    f"{width}×{height} pixels exceeds the limit of "
                    f"{options.limits.max_image_pixels} (limits.max_image_pixels)",
                )
                return None
            image.verify()
    except PILImage.DecompressionBombError as exc:
        _not_loaded(Code.IMAGE_UNREADABLE, shown, _pillow_reason(exc))
        return None
    except PILImage.UnidentifiedImageError:
        _not_loaded(Code.IMAGE_UNREADABLE, shown,
                    f"not a readable image (unknown format); {IMAGE_FORMATS_ACCEPTED}")
        return None
    except (OSError, ValueError, SyntaxError) as exc:
        _not_loaded(Code.IMAGE_UNREADABLE, shown,
                    f"not a readable image ({_pillow_reason(exc)}); {IMAGE_FORMATS_ACCEPTED}")
        return None
    mime = PILImage.MIME.get(fmt or "", "application/octet-stream")
    return LoadedImage(data=data, mime=mime, width=width, height=height)


def _pillow_reason(exc: BaseException) -> str:
    """Pillow's message for ``exc`` without object reprs, so one image gives one warning text
    in every run and every format (``cannot identify image file <_io.BytesIO object at 0x…>``
    became a new warning each time)."""
    return _OBJECT_REPR.sub("", str(exc)).strip() or type(exc).__name__


def _not_loaded(code: Code, shown: str, reason: str) -> None:
    message = f"image {shown!r} not loaded (its alt text is shown): {reason}"
    report(Diagnostic(code, message, file=shown))
