"""The one table of output formats and their aliases, used by the API, CLI, tools and service.

Aliases: ``markdown`` means ``md`` and ``htm`` means ``html``. ``jpg``/``jpeg`` are refused
everywhere with a hint: citerender writes page images as PNG only, and a caller that asks for a
JPEG and silently gets PNG bytes has been misled (the service used to do exactly that).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from renderers.errors import OptionError, short_repr

Format = Literal["pdf", "png", "docx", "pptx", "html", "md"]
ContentFormat = Literal["markdown", "html"]
#: What an input may be: text the readers parse, or a provider's raw answer, which
#: :mod:`renderers.readers.answers` adapts to markdown first (``citations.adapters.PROVIDERS``).
InputFormat = Literal[
    "markdown", "html", "sidecar",
    "openai", "anthropic", "perplexity", "gemini", "langchain", "llamaindex",
]


@dataclass(frozen=True)
class OutputFormat:
    """One output format: its file extension, media type, aliases and writer modules."""

    name: Format
    extension: str
    media_type: str
    summary: str  # what a tool description says the format is
    modules: tuple[str, ...]  # writer modules it needs (checked without importing them)
    aliases: tuple[str, ...] = ()


OUTPUT_FORMATS: tuple[OutputFormat, ...] = (
    OutputFormat(
        "pdf", ".pdf", "application/pdf", "a paginated PDF report",
        ("renderers.writers.html.report", "renderers.writers.pdf"),
    ),
    OutputFormat(
        "png", ".png", "image/png",
        "PNG page images (one file per page: NAME-1.png, NAME-2.png … when several)",
        ("renderers.writers.html.report", "renderers.writers.pdf", "renderers.writers.png"),
    ),
    OutputFormat(
        "docx", ".docx",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "a Word document", ("renderers.writers.docx.writer",),
    ),
    OutputFormat(
        "pptx", ".pptx",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "a PowerPoint deck (a slide per heading of the slide level)",
        ("renderers.writers.pptx.output",),
    ),
    OutputFormat(
        "html", ".html", "text/html; charset=utf-8", "a standalone HTML page",
        ("renderers.writers.html.report",), aliases=("htm",),
    ),
    OutputFormat(
        "md", ".md", "text/markdown; charset=utf-8", "Markdown with [^n] footnotes",
        ("renderers.writers.markdown",), aliases=("markdown",),
    ),
)  # fmt: skip

BY_NAME: dict[str, OutputFormat] = {f.name: f for f in OUTPUT_FORMATS}
FORMATS: tuple[Format, ...] = get_args(Format)
#: Every name a caller may use for a format (canonical names and aliases) → the format.
FORMAT_NAMES: dict[str, Format] = {
    **{f.name: f.name for f in OUTPUT_FORMATS},
    **{alias: f.name for f in OUTPUT_FORMATS for alias in f.aliases},
}
EXTENSIONS: dict[str, str] = {f.name: f.extension for f in OUTPUT_FORMATS}
#: Names people try that citerender does not produce → what to ask for instead.
NOT_PRODUCED: dict[str, str] = {
    "jpg": "page images are written as PNG: ask for 'png'",
    "jpeg": "page images are written as PNG: ask for 'png'",
}


def accepted_formats() -> str:
    """``pdf, png, docx, pptx, html, md (aliases: htm, markdown)`` for error messages."""
    aliases = sorted(alias for f in OUTPUT_FORMATS for alias in f.aliases)
    return f"{', '.join(FORMATS)} (aliases: {', '.join(aliases)})"


def available_formats() -> tuple[Format, ...]:
    """The output formats whose writer modules are installed, in canonical order."""
    return tuple(
        f.name
        for f in OUTPUT_FORMATS
        if all(importlib.util.find_spec(module) is not None for module in f.modules)
    )


def normalize_format(raw: object, *, field: str = "format") -> Format:
    """The canonical name of one output format, or :class:`OptionError` naming ``field``."""
    if not isinstance(raw, str):
        raise OptionError(
            f"format {short_repr(raw)}: expected a format name; accepted: {accepted_formats()}",
            field=field,
        )
    name = raw.strip().lower().lstrip(".")
    if name in FORMAT_NAMES:
        return FORMAT_NAMES[name]
    hint = NOT_PRODUCED.get(name)
    raise OptionError(
        f"format {short_repr(raw)} is not "
        + (f"produced ({hint})" if hint else "known")
        + f"; accepted: {accepted_formats()}",
        field=field,
    )


def _format_items(formats: object, field: str) -> Sequence[object]:
    """The names ``formats`` holds: a comma-separated string split, an iterable listed.

    Anything else is refused here with :class:`OptionError` naming ``field``; iterating it
    would raise a bare ``TypeError`` (``'NoneType' object is not iterable``) that names
    neither the option nor what it accepts. Bytes are refused too: they iterate as numbers.
    """
    if isinstance(formats, str):
        return formats.split(",")
    if isinstance(formats, Iterable) and not isinstance(formats, bytes | bytearray):
        return list(formats)
    raise OptionError(
        f"{field}={short_repr(formats)}: expected a comma-separated string or a list of format "
        f"names; accepted: {accepted_formats()} or 'all'",
        field=field,
    )


def normalize_formats(
    formats: str | Iterable[str], *, field: str = "formats"
) -> tuple[Format, ...]:
    """Canonical, de-duplicated formats; ``"all"`` means every available format.

    Accepts a comma-separated string or an iterable; raises :class:`OptionError` on unknown
    names and on anything else (``None``, a number), which callers reach through the API.
    """
    items = _format_items(formats, field)
    out: list[Format] = []
    for raw in items:
        if isinstance(raw, str) and not raw.strip():
            continue
        if isinstance(raw, str) and raw.strip().lower() == "all":
            out.extend(available_formats())
            continue
        out.append(normalize_format(raw, field=field))
    unique = tuple(dict.fromkeys(out))
    if not unique:
        raise OptionError(
            f"no output format given; accepted: {accepted_formats()} or 'all'", field=field
        )
    return unique
