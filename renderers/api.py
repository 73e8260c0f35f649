"""The Python API: ``write_pdf`` … ``write_markdown`` and ``render`` (ARCHITECTURE §3.4).

Pipeline: content → format detection → reader → (numeric dialect mapping) → citation pass →
writers. :func:`render` reads and resolves once for any number of formats; PNG reuses the PDF
bytes. Every artifact is written atomically and recorded in ``<out_dir>/sources_used.json``.
Writer modules are imported lazily, so a format that is not needed costs nothing.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import importlib.util
import inspect
import io
import os
import time
import zipfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from citations.chars import clean_text
from renderers.document import Cite, iter_inlines
from renderers.errors import (
    InputError,
    LimitError,
    OutputPathError,
    RenderError,
    StrictError,
)
from renderers.options import FORMATS, Limits, RenderOptions
from renderers.outputs import output_path, relative_name, validate_name, write_atomic

if TYPE_CHECKING:
    from citations.pool import SourcePool
    from renderers.resolve import ResolvedDocument

ContentFormat = Literal["markdown", "html"]
#: What every entry point takes: markdown/HTML text (or UTF-8 bytes), or a provider's raw
#: answer — a dict/list or its JSON (see :mod:`renderers.readers.answers`).
Content = str | bytes | Mapping[str, Any] | list[Any]

#: File extension of every output format.
EXTENSIONS: dict[str, str] = {
    "pdf": ".pdf",
    "png": ".png",
    "docx": ".docx",
    "pptx": ".pptx",
    "html": ".html",
    "md": ".md",
}
#: The writer modules each format needs (checked without importing them).
_FORMAT_MODULES: dict[str, tuple[str, ...]] = {
    "pdf": ("renderers.writers.html.report", "renderers.writers.pdf"),
    "png": ("renderers.writers.html.report", "renderers.writers.pdf", "renderers.writers.png"),
    "docx": ("renderers.writers.docx.writer",),
    "pptx": ("renderers.writers.pptx.output",),
    "html": ("renderers.writers.html.report",),
    "md": ("renderers.writers.markdown",),
}
_FORMAT_ALIASES = {"markdown": "md", "htm": "html", "jpeg": "png"}
_CONTENT_FORMATS: dict[str, ContentFormat] = {
    "markdown": "markdown",
    "md": "markdown",
    "html": "html",
    "htm": "html",
}
DIALECTS: frozenset[str] = frozenset({"s_dialect", "numeric"})
#: RenderOptions fields set by the API itself rather than through ``**options``.
_API_FIELDS = frozenset({"title", "numbering", "strict", "base_dir", "out_dir"})

ResultCallback = Callable[["RenderResult"], None]


@dataclass
class RenderResult:
    """One written artifact (for PNG, every page file of it)."""

    path: Path
    format: str
    sources_used: list[int]
    warnings: list[str]
    stats: dict[str, Any]
    paths: list[Path] = field(default_factory=list)

    def to_envelope(self) -> dict[str, Any]:
        """The agent-tool envelope ``{ok, path, format, sources_used, stats, warnings}``."""
        return {
            "ok": True,
            "path": str(self.path),
            "format": self.format,
            "sources_used": list(self.sources_used),
            "stats": dict(self.stats),
            "warnings": list(self.warnings),
        }


# ---------------------------------------------------------------- option handling


def accepted_options() -> list[str]:
    """Names accepted as ``**options`` (every RenderOptions field the API does not set itself)."""
    return sorted(f.name for f in dataclasses.fields(RenderOptions) if f.name not in _API_FIELDS)


def available_formats() -> tuple[str, ...]:
    """The output formats whose writer modules are installed, in canonical order."""
    return tuple(
        fmt
        for fmt in FORMATS
        if all(importlib.util.find_spec(module) is not None for module in _FORMAT_MODULES[fmt])
    )


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


# ---------------------------------------------------------------- reading once


@dataclass(frozen=True)
class Prepared:
    """A read and resolved input, ready for any number of writers."""

    text: str
    content_format: ContentFormat
    rdoc: ResolvedDocument
    options: RenderOptions
    dialects: frozenset[str]
    warnings: tuple[str, ...]
    citations: int
    parse_ms: float
    input_format: str = ""


def decode_content(content: object, origin: str = "content") -> str:
    """``content`` as text; bytes must be UTF-8 (a BOM is dropped). Characters no output can
    carry (controls, lone surrogates) become U+FFFD (:func:`citations.chars.clean_text`)."""
    if isinstance(content, str):
        return clean_text(content.removeprefix("\ufeff"))
    if isinstance(content, bytes | bytearray | memoryview):
        raw = bytes(content)
        try:
            return clean_text(raw.decode("utf-8-sig"))
        except UnicodeDecodeError as exc:
            raise InputError(
                f"{origin} is not valid UTF-8 (byte {exc.start}: "
                f"{raw[exc.start : exc.start + 1]!r}); save it as UTF-8"
            ) from exc
    raise InputError(f"{origin}: expected text (str) or UTF-8 bytes, got {type(content).__name__}")


def _content_format(value: str | None, text: str) -> ContentFormat:
    if value is None or value == "":
        from renderers.readers.detect import detect_format

        return detect_format(text)
    fmt = _CONTENT_FORMATS.get(str(value).strip().lower())
    if fmt is None:
        raise InputError(f"content_format={value!r}: accepted values are 'markdown', 'html'")
    return fmt


def _dialects(value: Iterable[str] | str | None) -> frozenset[str]:
    if not value:
        return frozenset()
    items = {value} if isinstance(value, str) else set(value)
    unknown = sorted(str(d) for d in items - DIALECTS)
    if unknown:
        raise InputError(
            f"dialect {unknown[0]!r} is not known; accepted: {', '.join(sorted(DIALECTS))}"
        )
    return frozenset(items)


def map_numeric_citations(
    text: str, content_format: ContentFormat, pool: SourcePool
) -> tuple[str, list[str]]:
    """Rewrite numeric-dialect citations (``[2]`` = the pool's 2nd source) as ``[[S:sid]]``.

    Citations inside code stay verbatim. An index beyond the pool is left as written (it reads
    as plain text) and reported.
    """
    from citations.tokens import scan

    pieces: list[str] = []
    warnings: list[str] = []
    last = 0
    for token in scan(text, syntax=content_format, dialects=frozenset({"numeric"})):
        if token.form != "numeric" or token.in_code or token.error or not token.sids:
            continue
        sources = [pool.by_index(index) for index in token.sids]
        missing = [i for i, s in zip(token.sids, sources, strict=True) if s is None]
        if missing:
            warnings.append(
                f"line {token.line}: numeric citation {token.text!r} points past the sources "
                f"pool ({len(pool)} sources); left as text"
            )
            continue
        sids = ",".join(str(s.sid) for s in sources if s is not None)
        pieces += [text[last : token.start], f"[[S:{sids}]]"]
        last = token.end
    pieces.append(text[last:])
    return "".join(pieces), warnings


def prepare(
    content: Content,
    *,
    sources_pool: Any = None,
    content_format: str | None = None,
    options: RenderOptions,
    dialects: Iterable[str] | str | None = None,
    origin: str = "content",
) -> Prepared:
    """Read and resolve ``content`` once: the shared first half of every render."""
    from citations.pool import SourcePool
    from renderers.readers.answers import read_answer
    from renderers.resolve import resolve

    started = time.perf_counter()
    native = read_answer(content, sources_pool, content_format, origin,
                         max_bytes=options.limits.max_content_bytes)
    if native is not None:  # a provider's raw answer: markdown with tokens plus its sources
        content, sources_pool, content_format = native.text, native.pool, "markdown"
    text = decode_content(content, origin)
    fmt = _content_format(content_format, text)
    chosen = _dialects(dialects)
    pool = SourcePool.coerce(sources_pool)
    if len(pool) > options.limits.max_pool_rows:
        raise LimitError(
            f"sources pool has {len(pool)} rows; the limit is {options.limits.max_pool_rows} "
            "(limits.max_pool_rows)"
        )
    extra: list[str] = []
    if "numeric" in chosen:
        text, extra = map_numeric_citations(text, fmt, pool)
        chosen = chosen - {"numeric"}
        if extra and options.strict:
            raise StrictError("; ".join(extra))
    if fmt == "markdown":
        from renderers.readers.markdown import read_markdown

        document = read_markdown(text, dialects=chosen, limits=options.limits)
    else:
        from renderers.readers.html import read_html

        document = read_html(text, dialects=chosen, limits=options.limits)
    if options.title:
        document = dataclasses.replace(document, title=options.title)
    rdoc = resolve(
        document,
        pool,
        numbering=options.numbering,
        strict=options.strict,
        sources_heading=options.sources_heading,
    )
    citations = sum(
        1 for node in iter_inlines(rdoc.document.blocks) if isinstance(node, Cite) and node.numbers
    )
    return Prepared(
        text=text,
        content_format=fmt,
        rdoc=rdoc,
        options=options,
        dialects=chosen,
        warnings=tuple(dict.fromkeys([*(native.warnings if native else ()), *rdoc.warnings,
                                      *extra])),
        citations=citations,
        parse_ms=(time.perf_counter() - started) * 1000,
        input_format=native.provider if native else fmt,
    )


# ---------------------------------------------------------------- writing many


def _writer(module: str) -> Any:
    """Import a writer module on first use, turning a missing one into a clear RenderError."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise RenderError(
            f"the writer {module} cannot be loaded ({exc}); available formats: "
            f"{', '.join(available_formats())}"
        ) from exc


class Session:
    """Writers over one :class:`Prepared` input, sharing the HTML and PDF between formats."""

    def __init__(self, prepared: Prepared) -> None:
        self.prepared = prepared
        self._html: str | None = None
        self._print_html: str | None = None
        self._pdf: bytes | None = None

    @property
    def options(self) -> RenderOptions:
        return self.prepared.options

    def html(self) -> str:
        """The standalone HTML report (the IR through the HTML writer)."""
        if self._html is None:
            report = _writer("renderers.writers.html.report")
            self._html = report.render_html(self.prepared.rdoc, self.options)
        return self._html

    def print_html(self) -> str:
        """The HTML WeasyPrint lays out: the report, or the author's own look for HTML input."""
        if self._print_html is None:
            if self.prepared.content_format == "html":
                module = _writer("renderers.writers.html.author_look")
                self._print_html = module.render_html_input(
                    self.prepared.text,
                    self.prepared.rdoc,
                    self.options,
                    dialects=self.prepared.dialects,
                )
            else:
                self._print_html = self.html()
        return self._print_html

    def pdf(self) -> bytes:
        """The PDF, laid out once however many formats need it."""
        if self._pdf is None:
            self._pdf = _writer("renderers.writers.pdf").pdf_bytes(self.print_html(), self.options)
        return self._pdf

    def produce(self, fmt: str) -> list[bytes]:
        """The bytes of ``fmt`` (a list: PNG gives one item per page)."""
        rdoc, options = self.prepared.rdoc, self.options
        match fmt:
            case "pdf":
                return [self.pdf()]
            case "png":
                return list(_writer("renderers.writers.png").png_pages(self.pdf(), options))
            case "html":
                return [self.html().encode("utf-8")]
            case "md":
                markdown = _writer("renderers.writers.markdown")
                return [markdown.markdown_text(rdoc, options).encode("utf-8")]
            case "docx":
                return [_writer("renderers.writers.docx.writer").docx_bytes(rdoc, options)]
            case "pptx":
                return [_writer("renderers.writers.pptx.output").pptx_bytes(rdoc, options)]
            case _:
                raise InputError(f"format {fmt!r} is not known; accepted: {', '.join(FORMATS)}")

    def write(self, fmt: str, target: Path, out_dir: Path, artifact_name: str) -> RenderResult:
        """Produce ``fmt``, write it to ``target`` (PNG pages next to it) and record it."""
        from citations.store import ArtifactRecord, SourcesUsedStore

        started = time.perf_counter()
        blobs = self.produce(fmt)
        if not blobs:
            raise RenderError(f"the {fmt} writer produced nothing for {target.name}")
        paths = page_paths(target, len(blobs)) if fmt == "png" else [target]
        plan = self.prepared.rdoc.plan
        records = []
        for path, data in zip(paths, blobs, strict=True):
            try:
                write_atomic(path, data)
            except OSError as exc:
                raise OutputPathError(
                    f"{path.parent}: cannot write {path.name} ({exc.strerror or exc}); "
                    "accepted: a writable output directory"
                ) from exc
            records.append(
                ArtifactRecord(
                    artifact_name=artifact_name,
                    filename=relative_name(out_dir, path),
                    format=fmt,
                    sids=list(plan.order),
                    numbers={str(sid): n for sid, n in plan.numbers.items()},
                    usage_sids=list(self.prepared.rdoc.usage_sids),
                    unknown_sids=list(plan.unknown_sids),
                    sha256=hashlib.sha256(data).hexdigest(),
                )
            )
        store_warnings = SourcesUsedStore(out_dir).record_many(records)
        elapsed = self.prepared.parse_ms + (time.perf_counter() - started) * 1000
        return RenderResult(
            path=paths[0],
            paths=paths,
            format=fmt,
            sources_used=list(plan.order),
            warnings=[*self.prepared.warnings, *store_warnings],
            stats=self._stats(fmt, blobs, elapsed),
        )

    def _stats(self, fmt: str, blobs: list[bytes], elapsed_ms: float) -> dict[str, Any]:
        stats: dict[str, Any] = {}
        if fmt == "pdf":
            stats["pages"] = pdf_page_count(blobs[0])
        elif fmt == "png":
            stats["pages"] = len(blobs)
        elif fmt == "pptx":
            stats["slides"] = pptx_slide_count(blobs[0])
        stats["bytes"] = sum(len(b) for b in blobs)
        stats["citations"] = self.prepared.citations
        stats["sources"] = len(self.prepared.rdoc.entries)
        stats["input_format"] = self.prepared.input_format
        stats["elapsed_ms"] = round(elapsed_ms, 1)
        return stats


def page_paths(target: Path, count: int) -> list[Path]:
    """``STEM.png`` for one page; ``STEM-1.png``, ``STEM-2.png`` … for more."""
    if count == 1:
        return [target]
    return [target.with_name(f"{target.stem}-{i}{target.suffix}") for i in range(1, count + 1)]


def pdf_page_count(pdf: bytes) -> int:
    """Pages of a PDF (pypdfium2 reads only the page tree)."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf)
    try:
        return len(document)
    finally:
        document.close()


def pptx_slide_count(pptx: bytes) -> int:
    """Slides of a PPTX package (slide parts in the zip)."""
    with zipfile.ZipFile(io.BytesIO(pptx)) as package:
        return sum(
            1
            for name in package.namelist()
            if name.startswith("ppt/slides/slide") and name.endswith(".xml")
        )


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
    **options: Any,
) -> Session:
    """Validate the options, read and resolve ``content`` once, ready to write into ``out_dir``.

    ``base_dir`` (where local images may load from) defaults to ``out_dir``.
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
    )
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
    **options: Any,
) -> list[RenderResult]:
    """Render ``content`` to every format in ``formats`` as ``out_dir/NAME.<ext>``.

    The input is read and resolved once; PNG reuses the PDF. ``base_dir`` (default: the output
    directory) is where local images may load from. ``on_result`` is called after each format
    is written. Extra keyword ``options`` map onto :class:`RenderOptions` fields.
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
        **options,
    )
    artifact_name = Path(stem).name
    results: list[RenderResult] = []
    for fmt in fmts:
        result = session.write(fmt, targets[fmt], root.resolve(), artifact_name)
        if on_result is not None:
            on_result(result)
        results.append(result)
    return results


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
    keyword ``options`` map onto :class:`RenderOptions` fields.
    """

    def write(content: Content, path: str | os.PathLike[str], **kwargs: Any) -> RenderResult:
        target = Path(path)
        validate_name(target.name)
        root = target.parent.resolve()
        session = open_session(content, root, **kwargs)
        return session.write(fmt, root / target.name, root, Path(target.name).stem)

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
