"""Every render option, declared once: type, default, help, the formats that use it, and the
surfaces that do not offer it (with the reason).

:class:`RenderOptions` (what writers read), :class:`ReadingOptions` (how the input is read) and
:class:`Limits` declare each field with :func:`option`. :data:`PARAMETERS` walks them, and
everything else is generated from that walk: the API's coercion (:func:`build_options`), the
agent tool and MCP schemas (:meth:`Param.json_schema`), the HTTP service's request fields and the
``citerender render`` options (:mod:`renderers.cli_options`). Adding an option is adding one
field here; a test proves it reaches every surface or is excluded there with a written reason.
"""

from __future__ import annotations

import dataclasses
import os
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from citations.chars import clean_text
from citations.front_matter import MAX_FRONT_MATTER_BYTES
from renderers.diagnostics import Code, Diagnostic
from renderers.errors import OptionError, short_repr
from renderers.formats import FORMATS, Format, InputFormat
from renderers.language import MAX_TAG_LENGTH, normalize_tag

__all__ = [
    "FORMATS",
    "PARAMETERS",
    "SURFACES",
    "Limits",
    "OptionInfo",
    "OptionNaming",
    "Param",
    "ReadingOptions",
    "RenderOptions",
    "accepted_options",
    "build_options",
    "option_name",
    "read_options",
    "refuse_unused",
    "unused_option_notes",
    "unused_options",
]

Numbering = Literal["appearance", "sid"]
PageSize = Literal["A4", "Letter"]
PdfVariant = Literal["pdf/a-3b", "pdf/ua-1"]
PdfEngine = Literal["weasyprint", "typst"]
DocxCitations = Literal["superscript", "footnotes"]
CitationFormat = Literal["superscript", "brackets", "inline-links"]
SlideRatio = Literal["16:9", "4:3"]
Dialect = Literal["s_dialect", "numeric"]
#: Pygments styles offered for code blocks (light ones first, then dark); ``none``: plain code.
HighlightStyle = Literal[
    "default", "tango", "friendly", "emacs", "vs", "xcode", "solarized-light", "gruvbox-light",
    "bw", "monokai", "dracula", "one-dark", "nord", "github-dark", "solarized-dark", "zenburn",
    "none",
]
#: Where an option can be given: a keyword of ``render``/``write_*``, a ``citerender render``
#: flag, an agent tool argument, an MCP tool argument, a field of ``POST /render``.
Surface = Literal["api", "cli", "tool", "mcp", "service"]
SURFACES: tuple[Surface, ...] = get_args(Surface)
#: How a field's type is read, coerced and offered (derived from its annotation).
Kind = Literal["text", "flag", "integer", "choice", "choices", "pages", "path", "limits"]

#: Most pages one ``pages`` selection may name (a range such as ``1-999999`` is refused).
MAX_PAGE_SELECTION = 10_000
_REMOTE: tuple[Surface, ...] = ("tool", "mcp", "service")


@dataclass(frozen=True)
class OptionInfo:
    """What :func:`option` records about a field besides its type and default."""

    help: str
    formats: tuple[Format, ...] = FORMATS
    excluded: Mapping[Surface, str] = field(default_factory=dict)
    minimum: int | None = None
    maximum: int | None = None
    max_length: int | None = None
    aliases: Mapping[str, str] = field(default_factory=dict)
    must_exist: bool = False  # a path option naming a file that must exist where it is read
    cli_flags: tuple[str, ...] = ()  # default: --field-name
    metavar: str | None = None
    #: The help of the JSON form when it differs from the CLI's (a list, not ``1,3-5``).
    schema_help: str | None = None
    #: A text option's own rule: the stripped, non-empty text in its canonical form, or
    #: ValueError whose message says what is accepted (``lang``: a BCP 47 tag).
    normalize: Callable[[str], str] | None = None
    #: A valid value that is not the default, for documentation and the surface tests.
    example: str | None = None


def option(
    default: Any = dataclasses.MISSING,
    *,
    default_factory: Any = dataclasses.MISSING,
    help: str,
    formats: tuple[Format, ...] = FORMATS,
    excluded: Mapping[Surface, str] | None = None,
    remote: str | None = None,
    **info: Any,
) -> Any:
    """A dataclass field carrying its :class:`OptionInfo`.

    ``remote`` is the reason the tools, MCP and the service do not offer the option;
    ``excluded`` gives reasons per surface.
    """
    reasons = dict(excluded or {})
    if remote is not None:
        reasons.update(dict.fromkeys(_REMOTE, remote))
    meta = {"option": OptionInfo(help=help, formats=formats, excluded=reasons, **info)}
    if default_factory is not dataclasses.MISSING:
        return field(default_factory=default_factory, metadata=meta)
    return field(default=default, metadata=meta)


def _limit(default: int, help: str, *, maximum: int | None = None) -> Any:
    """A limit: a positive integer, bounded above only where a larger value would break
    something (``help`` then says so, as it is the text every surface shows)."""
    return option(default, help=help, minimum=1, maximum=maximum)


#: Largest ``max_seconds``: one week. The deadline is a timer thread, and a wait past about
#: 292 years overflows the platform's clock in that thread (a traceback, then no deadline);
#: no render needs more than a week, so a larger value is refused as the option it is.
MAX_SECONDS_LIMIT = 7 * 24 * 60 * 60


_HOST_FILES = "names a file on the host: a remote caller may not choose which host files are read"


def _template(fmt: Format, help: str) -> Any:
    """A reference package option (an existing file on the host, CLI and API only)."""
    return option(
        None, help=help, formats=(fmt,), remote=_HOST_FILES, must_exist=True, metavar="FILE"
    )


@dataclass(frozen=True)
class Limits:
    """Input limits; each fails fast with :class:`renderers.errors.LimitError`."""

    max_content_bytes: int = _limit(20 * 1024 * 1024, "Largest content, in UTF-8 bytes.")
    max_citations: int = _limit(200_000, "Most citation tokens in one document.")
    max_cited_sids: int = _limit(
        500_000,
        "Most sids all citations name together, ranges expanded ([[S:1-1000]] names 1000).",
    )
    max_nesting: int = _limit(64, "Deepest nesting of lists, quotes and emphasis.")
    max_table_rows: int = _limit(100_000, "Most rows in one table.")
    max_table_cells: int = _limit(
        100_000, "Most cells in one table (rows x columns, short rows padded)."
    )
    max_formulas: int = _limit(
        1_000, "Most math formulas ($…$, $$…$$) in one document (each is laid out once)."
    )
    max_front_matter_bytes: int = _limit(
        MAX_FRONT_MATTER_BYTES,
        "Largest metadata of an input, in UTF-8 bytes: a markdown input's YAML front matter, "
        "the content of an HTML input's <meta> tags read.",
    )
    max_pool_rows: int = _limit(200_000, "Most rows in the sources pool.")
    max_image_pixels: int = _limit(50_000_000, "Most pixels in one image.")
    max_pages: int = _limit(2_000, "Most pages (PDF, PNG) or slides (PPTX) in one output.")
    max_page_inches: int = _limit(
        100, "Longest side of a page in inches (author CSS may set @page size)."
    )
    max_raster_pixels: int = _limit(
        100_000_000, "Most pixels in one PNG page (width x height at the requested dpi)."
    )
    max_png_bytes: int = _limit(
        256 * 1024 * 1024,
        "Most bytes of PNG one output holds, all its pages together (counted as each page is "
        "encoded).",
    )
    max_image_bytes: int = _limit(
        100 * 1024 * 1024,
        "Most image bytes one output embeds (an image used many times counts once).",
    )
    max_seconds: int = _limit(
        300,
        "Longest one render may run, in seconds (reading, laying out, writing every format); "
        f"at most {MAX_SECONDS_LIMIT} (one week).",
        maximum=MAX_SECONDS_LIMIT,
    )


@dataclass(frozen=True)
class ReadingOptions:
    """How the input is read: keyword arguments of ``render``/``write_*`` beside the options."""

    content_format: InputFormat | None = option(
        None,
        help=(
            "Input format (default: detected from the content): markdown, html, or the "
            "provider of a raw answer (openai, anthropic, perplexity, gemini, langchain, "
            "llamaindex)."
        ),
        aliases={"md": "markdown", "htm": "html"},
        cli_flags=("--from", "-f"),
    )
    dialects: frozenset[Dialect] = option(
        frozenset(),
        help=(
            "Extra citation forms: s_dialect reads [S1] and [S1, S3]; numeric reads [1] as the "
            "pool's first source."
        ),
        metavar="LIST",
    )


@dataclass(frozen=True)
class RenderOptions:
    """Everything a writer may read. :meth:`validate` re-checks every field against the spec."""

    title: str = option(
        "",
        help="Document title (default: the input's own, a markdown front matter title: or an "
        "HTML <title>, else the first heading).",
        max_length=500,
    )
    author: str = option(
        "",
        help=(
            "Author, written to the document's metadata and shown under the title (default: "
            "the input's own, a markdown front matter author: or an HTML "
            "<meta name=\"author\">, which stays metadata only)."
        ),
        max_length=500,
    )
    lang: str = option(
        "",
        help=(
            "Language of the document, a BCP 47 tag (ar, ja, zh-Hant, pt-BR …), declared in "
            "every format that declares one, choosing the regional CJK face and a CSL style's "
            "locale (default: the input's own, an HTML <html lang> or a markdown front "
            "matter lang:, else detected from the text's "
            "dominant script, which leaves a style in its default locale)."
        ),
        max_length=MAX_TAG_LENGTH,
        normalize=normalize_tag,
        example="zh-Hant",
        metavar="TAG",
    )
    numbering: Numbering = option(
        "appearance",
        help="Citation numbers: appearance (the first cited source is 1) or sid.",
    )
    strict: bool = option(
        False, help="Unknown sids or invalid citation tokens fail instead of warning."
    )
    csl: str = option(
        "",
        help=(
            "Citation style (CSL) of the Sources entries and in-text citations: ieee, apa, "
            "chicago-author-date, chicago-note, vancouver, nature, harvard, or a .csl file "
            "inside the base directory (default: the numeric superscript look)."
        ),
        max_length=1000,
        metavar="STYLE",
    )
    citation_format: CitationFormat = option(
        "superscript",
        help=(
            "How citations show in the text: superscript numbers, brackets ([1], [2, 3]) or "
            "inline-links (the source's title as a link). With an author-date csl style, "
            "superscript and brackets give way to its (IEA, 2025); a note style makes notes."
        ),
    )
    sources_heading: str = option(
        "",
        help=(
            "Heading of the Sources section (default or blank: the word of the document's "
            "declared language: Sources in English or when none is declared, Quellen in German "
            "…)."
        ),
        max_length=200,
        example="References",
    )
    page_size: PageSize = option("A4", help="Page size.", formats=("pdf", "png", "docx", "html"))
    highlight_style: HighlightStyle = option(
        "default",
        help=(
            "Colours of fenced code that names its language (a Pygments style; pygments is "
            "another name for default); none shows code plain."
        ),
        formats=("pdf", "png", "html", "docx", "pptx"),
        aliases={"pygments": "default", "off": "none"},
    )
    toc: bool = option(
        False,
        help=(
            "A linked table of contents after the title (with page numbers in PDF, a Word "
            "TOC field in DOCX, an agenda slide in PPTX)."
        ),
        formats=("pdf", "png", "html", "docx", "pptx"),
    )
    base_dir: Path | None = option(
        None,
        help="Directory local images may load from (default: the input file's directory).",
        remote=(
            "a remote caller may not choose which host directory is readable; local images "
            "load from the output directory only"
        ),
        metavar="DIR",
    )
    out_dir: Path | None = option(
        None,
        help="Directory the outputs are written to.",
        excluded={
            "cli": "given by --out DIR, which every command that writes shares",
            "tool": "fixed by the host (call_tool's out_dir); 'path' is relative to it",
            "mcp": "fixed when the server starts (--out DIR); 'path' is relative to it",
            "service": "every request renders into its own temporary directory",
        },
    )
    pdf_variant: PdfVariant | None = option(
        None,
        help="Archival (pdf/a-3b) or accessible (pdf/ua-1) PDF.",
        formats=("pdf",),
    )
    pdf_engine: PdfEngine = option(
        "weasyprint",
        help="Typesetter of PDF and PNG: weasyprint (keeps an HTML input's own CSS) or typst "
        "(many times faster; HTML input takes the report's look).",
        formats=("pdf", "png"),
    )
    dpi: int = option(
        110, help="PNG resolution in dots per inch.", formats=("png",), minimum=10, maximum=600
    )
    pages: tuple[int, ...] | None = option(
        None,
        help="1-based pages to rasterize, e.g. 1,3-5 (default: every page, one PNG each).",
        formats=("png",),
        metavar="LIST",
        schema_help=(
            "1-based pages to rasterize, a list of page numbers such as [1, 3, 4, 5] "
            "(default: every page, one PNG each)."
        ),
    )
    docx_citations: DocxCitations = option(
        "superscript",
        help="Citations as linked superscript numbers or as Word footnotes.",
        formats=("docx",),
    )
    reference_docx: Path | None = _template(
        "docx", "DOCX whose styles, page setup and headers are used."
    )
    slide_level: int = option(
        2, help="Heading level that starts a new slide.", formats=("pptx",), minimum=1, maximum=6
    )
    slide_ratio: SlideRatio = option("16:9", help="Slide shape.", formats=("pptx",))
    source_footer: bool = option(
        True, help="A footer on each slide naming the sources it cites.", formats=("pptx",)
    )
    reference_pptx: Path | None = _template(
        "pptx", "PPTX or POTX whose masters and layouts are used."
    )
    limits: Limits = option(
        default_factory=Limits,
        help="Input and output limits; each fails fast with a limit error.",
        remote=(
            "set by whoever runs the renderer (the host, the service operator); a caller may "
            "not raise its own limits"
        ),
    )

    def validate(self) -> RenderOptions:
        """These options re-checked against the spec, or :class:`OptionError` naming the field.
        Their values only: whether a file option's file exists depends on the formats written
        (:func:`build_options`), and the writer that reads it says so too."""
        return build_options(formats=(),
                             **{f.name: getattr(self, f.name) for f in dataclasses.fields(self)})


# ---------------------------------------------------------------- the walk


@dataclass(frozen=True)
class Param:
    """One declared option, as every surface sees it."""

    name: str
    owner: type
    default: Any
    info: OptionInfo
    kind: Kind
    choices: tuple[str, ...] = ()
    optional: bool = False

    @property
    def help(self) -> str:
        return self.info.help

    def exclusion(self, surface: Surface) -> str | None:
        """Why ``surface`` does not offer this option, or None when it does."""
        return self.info.excluded.get(surface)

    def offered_on(self, surface: Surface) -> bool:
        return surface not in self.info.excluded

    def used_by(self, fmt: str) -> bool:
        return fmt in self.info.formats

    def used_in(self, formats: Iterable[str] | None) -> bool:
        """Whether a render of ``formats`` uses this option; None: formats not known yet, any
        may be written."""
        return formats is None or any(self.used_by(fmt) for fmt in formats)

    def json_schema(self) -> dict[str, Any]:
        """The JSON Schema of this option as agent tools and the service accept it."""
        schema: dict[str, Any]
        match self.kind:
            case "text":
                schema = {"type": "string"}
                if self.info.max_length is not None:
                    schema["maxLength"] = self.info.max_length
            case "flag":
                schema = {"type": "boolean"}
            case "integer":
                schema = {"type": "integer"}
                if self.info.minimum is not None:
                    schema["minimum"] = self.info.minimum
                if self.info.maximum is not None:
                    schema["maximum"] = self.info.maximum
            case "choice":
                schema = {"type": "string", "enum": list(self.choices)}
            case "choices":
                schema = {
                    "type": "array",
                    "items": {"type": "string", "enum": list(self.choices)},
                    "uniqueItems": True,
                }
            case "pages":
                schema = {
                    "type": "array",
                    "items": {"type": "integer", "minimum": 1},
                    "minItems": 1,
                    "maxItems": MAX_PAGE_SELECTION,
                    "uniqueItems": True,
                }
            case _:
                raise TypeError(f"option {self.name} ({self.kind}) has no JSON form")
        return {**schema, "description": self.info.schema_help or self.help}


def _kind_of(annotation: Any) -> tuple[Kind, tuple[str, ...], bool]:
    """``(kind, choices, optional)`` of a field annotation."""
    optional = False
    if get_origin(annotation) in (Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        optional = len(members) < len(get_args(annotation))
        if len(members) == 1:
            annotation = members[0]
    origin, args = get_origin(annotation), get_args(annotation)
    simple: dict[Any, Kind] = {
        bool: "flag",
        int: "integer",
        str: "text",
        Path: "path",
        Limits: "limits",
    }
    if annotation in simple:
        return simple[annotation], (), optional
    if origin is Literal:
        return "choice", tuple(str(a) for a in args), optional
    if origin is tuple and args == (int, Ellipsis):
        return "pages", (), optional
    if origin is frozenset and get_origin(args[0]) is Literal:
        return "choices", tuple(str(a) for a in get_args(args[0])), optional
    raise TypeError(f"option type {annotation!r} has no coercion rule")


def _walk(cls: type) -> tuple[Param, ...]:
    hints = get_type_hints(cls)
    params = []
    for f in dataclasses.fields(cls):
        info = f.metadata.get("option") or OptionInfo(help="")
        kind, choices, optional = _kind_of(hints[f.name])
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        params.append(Param(f.name, cls, default, info, kind, choices, optional))
    return tuple(params)


#: Every option of a render, in declaration order: reading options, then RenderOptions fields.
PARAMETERS: tuple[Param, ...] = (*_walk(ReadingOptions), *_walk(RenderOptions))
PARAMS: dict[str, Param] = {p.name: p for p in PARAMETERS}
#: The fields of :class:`Limits` (each a ``--max-…`` flag of the CLI).
LIMIT_PARAMETERS: tuple[Param, ...] = _walk(Limits)
#: RenderOptions fields the API takes as named parameters rather than through ``**options``.
_API_NAMED = frozenset({"title", "numbering", "strict", "base_dir", "out_dir"})


# ---------------------------------------------------------------- coercion (the API's checks)


def _refuse(param: Param, value: object, accepted: str) -> OptionError:
    return OptionError(f"{param.name}={short_repr(value)}: {accepted}", field=param.name)


def coerce(param: Param, value: Any) -> Any:
    """``value`` in the type the option declares, or :class:`OptionError` saying what is
    accepted. None means the default (or no value, for an optional option)."""
    if value is None:
        return None if param.optional else param.default
    match param.kind:
        case "text":
            return _text(param, value)
        case "flag":
            if not isinstance(value, bool):
                raise _refuse(param, value, "expected true or false")
            return value
        case "integer":
            return _integer(param, value)
        case "choice":
            return _choice(param, value)
        case "choices":
            items = value.split(",") if isinstance(value, str) else value
            if not isinstance(items, Iterable):
                raise _refuse(param, value, f"expected a list of: {', '.join(param.choices)}")
            return frozenset(_choice(param, item) for item in items if item != "")
        case "pages":
            return _pages(param, value)
        case "path":
            return _path(param, value)
        case _:
            return _limits(value)


def _text(param: Param, value: Any) -> str:
    if not isinstance(value, str):
        raise _refuse(param, value, "expected a string")
    text = clean_text(value).strip()
    if param.info.normalize is not None and text:
        try:
            return param.info.normalize(text)
        except ValueError as exc:
            raise _refuse(param, value, str(exc)) from None
    if param.info.max_length is not None and len(text) > param.info.max_length:
        raise _refuse(
            param, value, f"{len(text)} characters; accepted: at most {param.info.max_length}"
        )
    return text


def _integer(param: Param, value: Any) -> int:
    low, high = param.info.minimum, param.info.maximum
    accepted = (
        f"accepted range is {low}..{high}" if low is not None and high is not None
        else f"accepted: an integer of at least {low}" if low is not None
        else "accepted: an integer"
    )  # fmt: skip
    if isinstance(value, bool) or not isinstance(value, int):
        raise _refuse(param, value, f"expected an integer; {accepted}")
    if (low is not None and value < low) or (high is not None and value > high):
        raise _refuse(param, value, accepted)
    return value


def _choice(param: Param, value: Any) -> str:
    accepted = "accepted values are " + ", ".join(repr(c) for c in param.choices)
    if not isinstance(value, str):
        raise _refuse(param, value, accepted)
    if value in param.choices:
        return value
    folded = value.strip().casefold()
    for choice in param.choices:
        if choice.casefold() == folded:
            return choice
    for alias, choice in param.info.aliases.items():
        if alias.casefold() == folded:
            return choice
    raise _refuse(param, value, accepted)


def _pages(param: Param, value: Any) -> tuple[int, ...]:
    accepted = "expected 1-based page numbers such as [1, 3] or '1,3-5'"
    if isinstance(value, str):
        value = _page_list(param, value, accepted)
    items = [value] if isinstance(value, int) else value
    if isinstance(items, bytes) or not isinstance(items, Iterable):
        raise _refuse(param, value, accepted)
    pages: list[int] = []
    for page in items:
        if isinstance(page, bool) or not isinstance(page, int) or page < 1:
            raise _refuse(param, value, accepted)
        pages.append(page)
        if len(pages) > MAX_PAGE_SELECTION:
            raise _refuse(param, value, f"at most {MAX_PAGE_SELECTION} pages may be named")
    if not pages:
        raise _refuse(param, value, accepted)
    return tuple(pages)


def _page_list(param: Param, text: str, accepted: str) -> list[int]:
    """``"1,3-5"`` → ``[1, 3, 4, 5]`` (ranges bounded by :data:`MAX_PAGE_SELECTION`)."""
    pages: list[int] = []
    for item in text.split(","):
        first, dash, last = item.strip().partition("-")
        if not (first.isdecimal() and (not dash or last.isdecimal())) or len(item) > 12:
            raise _refuse(param, text, accepted)
        low, high = int(first), int(last) if dash else int(first)
        if high < low or len(pages) + high - low >= MAX_PAGE_SELECTION:
            raise _refuse(param, text, f"{accepted}; at most {MAX_PAGE_SELECTION} pages")
        pages.extend(range(low, high + 1))
    return pages


def _path(param: Param, value: Any) -> Path:
    if not isinstance(value, str | os.PathLike) or (isinstance(value, str) and not value):
        raise _refuse(param, value, "expected a file path")
    try:
        return Path(value).resolve()
    except (OSError, ValueError) as exc:  # NUL bytes, unencodable names, loops
        raise _refuse(param, value, f"not a usable path ({exc})") from exc


def _check_exists(param: Param, value: Any, path: Path) -> None:
    """:class:`OptionError` unless ``path``, ``value`` as coerced, names an existing file."""
    try:
        found = path.is_file()
    except (OSError, ValueError) as exc:  # a name too long for the system
        raise _refuse(param, value, f"not a usable path ({exc})") from exc
    if not found:
        raise _refuse(param, str(value), "no such file")


def _limits(value: Any) -> Limits:
    accepted = "accepted keys are " + ", ".join(p.name for p in LIMIT_PARAMETERS)
    if isinstance(value, Limits):
        value = {f.name: getattr(value, f.name) for f in dataclasses.fields(Limits)}
    if not isinstance(value, Mapping):
        raise OptionError(
            f"limits={short_repr(value)}: expected a Limits or a mapping; {accepted}",
            field="limits",
        )
    known = {p.name: p for p in LIMIT_PARAMETERS}
    unknown = sorted(str(key) for key in value if key not in known)
    if unknown:
        raise OptionError(f"limits: unknown key {unknown[0]!r}; {accepted}", field="limits")
    checked = {}
    for key, raw in value.items():
        try:
            checked[key] = coerce(known[key], raw)
        except OptionError as exc:
            raise OptionError(f"limits.{exc}", field=f"limits.{key}") from None
    return Limits(**checked)


def accepted_options() -> list[str]:
    """Names accepted as ``**options`` (every RenderOptions field the API does not name)."""
    return sorted(
        p.name for p in PARAMETERS if p.owner is RenderOptions and p.name not in _API_NAMED
    )


def build_options(*, formats: Iterable[str] | None = None, **values: Any) -> RenderOptions:
    """Validated :class:`RenderOptions` from keyword values; unknown names are refused.

    ``formats``: those the options are for (None: not known yet, any may be written). A file
    option (``reference_docx``) must name an existing file when one of them reads it; for a
    render that writes none of its formats the file is not read, and the option gets the
    ``option-unused`` note (:func:`unused_options`) rather than an error.
    """
    fields = {p.name: p for p in PARAMETERS if p.owner is RenderOptions}
    unknown = sorted(name for name in values if name not in fields)
    if unknown:
        raise OptionError(
            f"unknown option {unknown[0]!r}; accepted options: {', '.join(sorted(fields))}",
            field=unknown[0],
        )
    writes = None if formats is None else tuple(formats)
    coerced = {name: coerce(fields[name], value) for name, value in values.items()}
    for name, value in values.items():
        param = fields[name]
        if param.info.must_exist and coerced[name] is not None and param.used_in(writes):
            _check_exists(param, value, coerced[name])
    return RenderOptions(**coerced)


#: How a surface names an option its caller set, from the option's name and the value given:
#: the command line says the flag typed (``--no-source-footer``: ``cli_options.flag_typed``,
#: handed to the API as ``option_naming``), the API, the HTTP service and the tools the
#: option's name (:func:`option_name`). The words around the name are :func:`unused_options`'s
#: alone, so every surface says the same sentence.
OptionNaming = Callable[[str, object], str]


def option_name(name: str, value: object) -> str:
    """The option's own name (``source_footer``), whatever its value."""
    return name


def unused_options(given: Mapping[str, object], formats: Iterable[str],
                   naming: OptionNaming = option_name) -> tuple[tuple[str, str], ...]:
    """``(name, message)`` for each option in ``given`` (name → the value given) that none of
    ``formats`` uses, the message naming it as ``naming`` does.

    Such an option changes nothing (``--pages 2 --to pdf`` rasterizes nothing), so the caller
    is told rather than left to believe it took effect. ``given`` holds only the options the
    caller set — a keyword that is not None, a flag on the command line, a field in a body —
    so a surface's own defaults never count. One set of options kept for a document and
    rendered to some of its formats is a normal use: a render says so and goes on
    (:data:`renderers.diagnostics.Code.OPTION_UNUSED`); a tool, whose schema each format
    narrows, refuses (:func:`refuse_unused`).
    """
    writes = tuple(formats)
    return tuple(
        (param.name, f"{naming(param.name, given[param.name])} applies to "
                     f"{', '.join(param.info.formats)} output only, "
                     f"and this render writes {', '.join(writes)}")
        for param in PARAMETERS
        if param.name in given and not param.used_in(writes)
    )


def unused_option_notes(options: Mapping[str, Any], formats: Iterable[str],
                        naming: OptionNaming = option_name) -> tuple[Diagnostic, ...]:
    """The ``option-unused`` diagnostics a render of ``formats`` gives for the keyword
    ``options`` its caller set (those not None), each option named as ``naming`` does."""
    given = {name: value for name, value in options.items() if value is not None}
    return tuple(Diagnostic(Code.OPTION_UNUSED, message)
                 for _, message in unused_options(given, formats, naming))


def refuse_unused(given: Mapping[str, object], formats: Iterable[str]) -> None:
    """:class:`OptionError` for the first of :func:`unused_options` (a tool's argument)."""
    for name, message in unused_options(given, formats):
        used = PARAMS[name].info.formats
        raise OptionError(f"{message}; leave it out or ask for "
                          f"{used[0] if len(used) == 1 else 'one of those'}", field=name)


def read_options(content_format: object = None, dialects: object = None) -> ReadingOptions:
    """Validated :class:`ReadingOptions` (``content_format`` None: detect from the content)."""
    return ReadingOptions(
        content_format=coerce(PARAMS["content_format"], content_format),
        dialects=coerce(PARAMS["dialects"], dialects),
    )
