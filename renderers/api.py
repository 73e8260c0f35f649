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
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from renderers.errors import OptionError, OverwriteError
from renderers.formats import EXTENSIONS, available_formats, normalize_formats
from renderers.options import (
    OptionNaming,
    accepted_options,
    build_options,
    option_name,
    unused_option_notes,
)
from renderers.outputs import output_path, validate_name
from renderers.pipeline import (
    DIALECTS,
    Content,
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

# ---------------------------------------------------------------- public entry points


def _stem(name: str) -> str:
    clean = validate_name(name)
    for ext in EXTENSIONS.values():
        if clean.lower().endswith(ext) and len(clean) > len(ext):
            return clean[: -len(ext)]
    return clean


def open_session(
    content: Content,
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
    formats: Iterable[str] | None = None,
    option_naming: OptionNaming = option_name,
    **options: Any,
) -> Session:
    """Validate the options, read and resolve ``content`` once, ready to write into ``out_dir``.

    ``base_dir`` (where local images may load from) defaults to ``out_dir``. ``input_file`` is
    the file ``content`` was read from: no output may replace it (nor a pool given as a path).
    ``formats``, when known, are the formats the session will write: an option given that
    none of them uses (``pages`` without PNG) is said in each result's diagnostics, and a
    reference file only they would read need not exist (``reference_docx`` for ``md``).
    ``option_naming`` is how those diagnostics name the option: its own name by default, the
    flag as typed for the command line (``--no-source-footer``), which passes its own.
    """
    formats = tuple(formats) if formats is not None else None
    opts = build_options(
        formats=formats,
        title=title,
        numbering=numbering,
        strict=strict,
        base_dir=base_dir if base_dir is not None else out_dir,
        out_dir=out_dir,
        **options,
    )
    unused = unused_option_notes(options, formats, option_naming) if formats is not None else ()
    prepared = prepare(
        content,
        sources_pool=sources_pool,
        content_format=content_format,
        options=opts,
        dialects=dialects,
        origin=origin,
        input_file=input_file,
    )
    if unused:
        prepared = dataclasses.replace(prepared, diagnostics=(*prepared.diagnostics, *unused))
    return Session(prepared)


def render(
    content: Content,
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
    option_naming: OptionNaming = option_name,
    **options: Any,
) -> list[RenderResult]:
    """Render ``content`` to every format in ``formats`` as ``out_dir/NAME.<ext>``.

    The input is read and resolved once; PNG reuses the PDF. ``base_dir`` (default: the output
    directory) is where local images may load from. ``on_result`` is called after each format
    is written. An output that would replace ``input_file`` (the file ``content`` came from) or
    a pool given as a path raises :class:`OverwriteError` before anything is written. Extra
    keyword ``options`` map onto :class:`RenderOptions` fields; one that none of ``formats``
    uses (``pages`` without PNG) is said in the results' diagnostics, named as
    ``option_naming`` names it (default: the option's name).
    """
    fmts = normalize_formats(formats)
    root = Path(out_dir)
    stem = _stem(name)
    targets: dict[str, Path] = {fmt: output_path(root, stem + EXTENSIONS[fmt]) for fmt in fmts}
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
        formats=fmts,
        option_naming=option_naming,
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
        content: Content,
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
    keyword ``options`` map onto :class:`RenderOptions` fields (one this format does not use,
    ``pages`` for a PDF, is said in the result's diagnostics).
    """

    def write(content: Content, path: str | os.PathLike[str], **kwargs: Any) -> RenderResult:
        target = Path(path)
        validate_name(target.name)
        root = target.parent.resolve()
        if "formats" in kwargs:  # the function's name says the format
            raise OptionError(f"{name}() writes {fmt} only; use render(formats=...) for others",
                              field="formats")
        session = open_session(content, root, formats=(fmt,), **kwargs)
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
