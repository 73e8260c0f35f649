"""The Python API: ``write_pdf`` … ``write_markdown`` and ``render`` (ARCHITECTURE §3.4).

A facade over :mod:`renderers.pipeline` (decode → detect → read → resolve → write → record):
options are validated here, the input is read and resolved once for any number of formats, and
each artifact is written, recorded in ``<out_dir>/sources_used.json`` and returned as a
:class:`RenderResult`. Writer modules are imported lazily, so a format that is not needed costs
nothing.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from renderers import writers
from renderers.errors import InputError, OverwriteError
from renderers.options import FORMATS, Limits, RenderOptions
from renderers.outputs import output_path, validate_name
from renderers.pipeline import (
    DIALECTS,
    ContentFormat,
    Prepared,
    RenderResult,
    ResultCallback,
    Session,
    decode_content,
    page_paths,
    prepare,
    write_all,
)

__all__ = [
    "DIALECTS",
    "EXTENSIONS",
    "ContentFormat",
    "OverwriteError",
    "Prepared",
    "RenderResult",
    "ResultCallback",
    "Session",
    "accepted_options",
    "available_formats",
    "build_options",
    "content_format_for",
    "decode_content",
    "normalize_formats",
    "open_session",
    "page_paths",
    "prepare",
    "render",
    "render_file",
    "write_docx",
    "write_html",
    "write_markdown",
    "write_pdf",
    "write_png",
    "write_pptx",
]

#: File extension of every output format.
EXTENSIONS: dict[str, str] = {
    "pdf": ".pdf",
    "png": ".png",
    "docx": ".docx",
    "pptx": ".pptx",
    "html": ".html",
    "md": ".md",
}
_FORMAT_ALIASES = {"markdown": "md", "htm": "html", "jpeg": "png"}
#: RenderOptions fields set by the API itself rather than through ``**options``.
_API_FIELDS = frozenset({"title", "numbering", "strict", "base_dir", "out_dir"})


# ---------------------------------------------------------------- option handling


def accepted_options() -> list[str]:
    """Names accepted as ``**options`` (every RenderOptions field the API does not set itself)."""
    return sorted(f.name for f in dataclasses.fields(RenderOptions) if f.name not in _API_FIELDS)


def available_formats() -> tuple[str, ...]:
    """The output formats whose writer modules are installed, in canonical order."""
    return writers.available_formats()


def normalize_formats(formats: str | Iterable[str]) -> tuple[str, ...]:
    """Canonical, de-duplicated formats; ``"all"`` means every available format.

    Accepts a comma-separated string or an iterable; raises :class:`InputError` on unknown names.
    """
    items = formats.split(",") if isinstance(formats, str) else list(formats)
    out: list[str] = []
    for raw in items:
        if not isinstance(raw, str):
            raise InputError(f"format {raw!r}: expected a string; accepted: {', '.join(FORMATS)}")
        name = raw.strip().lower().lstrip(".")
        if not name:
            continue
        if name == "all":
            out.extend(available_formats())
            continue
        name = _FORMAT_ALIASES.get(name, name)
        if name not in FORMATS:
            raise InputError(
                f"format {raw!r} is not known; accepted: {', '.join(FORMATS)} or 'all'"
            )
        out.append(name)
    unique = tuple(dict.fromkeys(out))
    if not unique:
        raise InputError(f"no output format given; accepted: {', '.join(FORMATS)} or 'all'")
    return unique


def build_options(
    *,
    title: str | None = None,
    numbering: str = "appearance",
    strict: bool = False,
    base_dir: str | os.PathLike[str] | None = None,
    out_dir: str | os.PathLike[str] | None = None,
    **options: Any,
) -> RenderOptions:
    """Validated :class:`RenderOptions` from API arguments; unknown options are refused."""
    accepted = accepted_options()
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise InputError(f"unknown option {unknown[0]!r}; accepted options: {', '.join(accepted)}")
    if title is not None and not isinstance(title, str):
        raise InputError(f"title={title!r}: expected a string")
    if not isinstance(numbering, str):
        raise InputError(f"numbering={numbering!r}: accepted values are 'appearance', 'sid'")
    values = {name: _coerce_option(name, value) for name, value in options.items()}
    return RenderOptions(
        title=(title or "").strip(),
        numbering=numbering,  # type: ignore[arg-type]
        strict=bool(strict),
        base_dir=Path(base_dir).resolve() if base_dir is not None else None,
        out_dir=Path(out_dir).resolve() if out_dir is not None else None,
        **values,
    ).validate()


def _coerce_option(name: str, value: Any) -> Any:
    """Bring an option value into the type RenderOptions expects, or raise InputError."""
    if name in ("dpi", "slide_level"):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(f"{name}={value!r}: expected an integer")
        return value
    if name == "source_footer":
        if not isinstance(value, bool):
            raise InputError(f"{name}={value!r}: expected true or false")
        return value
    if name in ("reference_docx", "reference_pptx"):
        if value is None:
            return None
        if not isinstance(value, str | os.PathLike):
            raise InputError(f"{name}={value!r}: expected a file path")
        path = Path(value)
        if not path.is_file():
            raise InputError(f"{name}={str(path)!r}: no such file")
        return path
    if name == "pages":
        return _coerce_pages(value)
    if name == "page_size" and isinstance(value, str):
        return {"a4": "A4", "letter": "Letter"}.get(value.strip().lower(), value)
    if name == "limits":
        if isinstance(value, Limits):
            return value
        if isinstance(value, Mapping):
            try:
                return Limits(**value)
            except TypeError as exc:
                known = ", ".join(f.name for f in dataclasses.fields(Limits))
                raise InputError(f"limits={dict(value)!r}: accepted keys are {known}") from exc
        raise InputError(f"limits={value!r}: expected a Limits or a mapping")
    if name in ("author", "sources_heading") and not isinstance(value, str):
        raise InputError(f"{name}={value!r}: expected a string")
    return value


def _coerce_pages(value: Any) -> tuple[int, ...] | None:
    if value is None:
        return None
    items = [value] if isinstance(value, int) else value
    if isinstance(items, str | bytes) or not isinstance(items, Iterable):
        raise InputError(f"pages={value!r}: expected a list of 1-based page numbers")
    pages = tuple(items)
    if not pages or any(isinstance(p, bool) or not isinstance(p, int) or p < 1 for p in pages):
        raise InputError(f"pages={value!r}: expected a non-empty list of 1-based page numbers")
    return pages


# ---------------------------------------------------------------- public entry points


def _stem(name: str) -> str:
    clean = validate_name(name)
    for ext in EXTENSIONS.values():
        if clean.lower().endswith(ext) and len(clean) > len(ext):
            return clean[: -len(ext)]
    return clean


def open_session(
    content: str | bytes,
    out_dir: Path,
    *,
    sources_pool: Any = None,
    content_format: str | None = None,
    title: str | None = None,
    numbering: str = "appearance",
    strict: bool = False,
    base_dir: str | os.PathLike[str] | None = None,
    dialects: Iterable[str] | str | None = None,
    origin: str = "content",
    input_file: str | os.PathLike[str] | None = None,
    **options: Any,
) -> Session:
    """Validate the options, read and resolve ``content`` once, ready to write into ``out_dir``.

    ``base_dir`` (where local images may load from) defaults to ``out_dir``. ``input_file`` is
    the file ``content`` was read from: no output may replace it (nor a pool given as a path).
    """
    opts = build_options(
        title=title,
        numbering=numbering,
        strict=strict,
        base_dir=base_dir if base_dir is not None else out_dir,
        out_dir=out_dir,
        **options,
    )
    prepared = prepare(
        content,
        sources_pool=sources_pool,
        content_format=content_format,
        options=opts,
        dialects=dialects,
        origin=origin,
        input_file=input_file,
    )
    return Session(prepared)


def render(
    content: str | bytes,
    out_dir: str | os.PathLike[str],
    *,
    name: str = "report",
    formats: str | Iterable[str] = ("pdf",),
    sources_pool: Any = None,
    content_format: str | None = None,
    title: str | None = None,
    numbering: str = "appearance",
    strict: bool = False,
    base_dir: str | os.PathLike[str] | None = None,
    dialects: Iterable[str] | str | None = None,
    on_result: ResultCallback | None = None,
    origin: str = "content",
    input_file: str | os.PathLike[str] | None = None,
    **options: Any,
) -> list[RenderResult]:
    """Render ``content`` to every format in ``formats`` as ``out_dir/NAME.<ext>``.

    The input is read and resolved once; PNG reuses the PDF. ``base_dir`` (default: the output
    directory) is where local images may load from. ``on_result`` is called after each format
    is written. An output that would replace ``input_file`` (the file ``content`` came from) or
    a pool given as a path raises :class:`OverwriteError` before anything is written. Extra
    keyword ``options`` map onto :class:`RenderOptions` fields.
    """
    fmts = normalize_formats(formats)
    root = Path(out_dir)
    stem = _stem(name)
    targets = {fmt: output_path(root, stem + EXTENSIONS[fmt]) for fmt in fmts}
    session = open_session(
        content,
        root,
        sources_pool=sources_pool,
        content_format=content_format,
        title=title,
        numbering=numbering,
        strict=strict,
        base_dir=base_dir,
        dialects=dialects,
        origin=origin,
        input_file=input_file,
        **options,
    )
    return write_all(session, targets, root.resolve(), Path(stem).name, on_result)


def content_format_for(path: Path) -> ContentFormat | None:
    """The input format implied by a file extension (``None``: detect from the content)."""
    suffix = path.suffix.lower()
    if suffix in (".html", ".htm", ".xhtml"):
        return "html"
    if suffix in (".md", ".markdown", ".mdown", ".mkd", ".txt"):
        return "markdown"
    return None


def render_file(
    path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    name: str | None = None,
    content_format: str | None = None,
    base_dir: str | os.PathLike[str] | None = None,
    **kwargs: Any,
) -> list[RenderResult]:
    """Render the file ``path``: images load from its directory, outputs are named after it."""
    source = Path(path)
    data = source.read_bytes()
    return render(
        data,
        out_dir,
        name=name or source.stem,
        content_format=content_format or content_format_for(source),
        base_dir=base_dir if base_dir is not None else source.resolve().parent,
        origin=str(source),
        input_file=source,
        **kwargs,
    )


class WriteFunction(Protocol):
    """The signature shared by ``write_pdf`` … ``write_markdown``."""

    def __call__(
        self,
        content: str | bytes,
        path: str | os.PathLike[str],
        *,
        sources_pool: Any = None,
        content_format: str | None = None,
        title: str | None = None,
        numbering: str = "appearance",
        strict: bool = False,
        base_dir: str | os.PathLike[str] | None = None,
        dialects: Iterable[str] | str | None = None,
        **options: Any,
    ) -> RenderResult: ...


#: What ``help(write_pdf)`` and IDEs show: the protocol's parameters (without ``self``).
_WRITE_SIGNATURE = inspect.signature(WriteFunction.__call__).replace(
    parameters=list(inspect.signature(WriteFunction.__call__).parameters.values())[1:]
)


def _writer_for(fmt: str, name: str, summary: str) -> WriteFunction:
    """A ``write_<format>(content, path, …)`` function: one file at ``path``, recorded beside it.

    ``base_dir`` (where local images may load from) defaults to the directory of ``path``; extra
    keyword ``options`` map onto :class:`RenderOptions` fields.
    """

    def write(content: str | bytes, path: str | os.PathLike[str], **kwargs: Any) -> RenderResult:
        target = Path(path)
        validate_name(target.name)
        root = target.parent.resolve()
        session = open_session(content, root, **kwargs)
        (result,) = write_all(session, {fmt: root / target.name}, root, Path(target.name).stem)
        return result

    write.__signature__ = _WRITE_SIGNATURE  # type: ignore[attr-defined]

    write.__name__ = write.__qualname__ = name
    write.__doc__ = f"{summary}\n\n{_writer_for.__doc__}"
    return write


write_pdf = _writer_for(
    "pdf", "write_pdf", "Write a PDF with linked superscript citations and a Sources section."
)
write_png = _writer_for(
    "png", "write_png", "Write PNG page images: ``path`` for one page, ``STEM-1.png`` … for more."
)
write_docx = _writer_for(
    "docx", "write_docx", "Write a Word document with linked superscript citations or footnotes."
)
write_pptx = _writer_for(
    "pptx", "write_pptx", "Write a slide deck whose citations jump to paginated Sources slides."
)
write_html = _writer_for("html", "write_html", "Write a standalone HTML report.")
write_markdown = _writer_for(
    "md", "write_markdown", "Write normalized Markdown with ``[^N]`` citation footnotes."
)
