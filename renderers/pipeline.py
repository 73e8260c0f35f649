"""The render pipeline: decode → detect → read → resolve → write → record.

:func:`prepare` runs the first four stages once (bytes to text, the input format, the reader,
the citation pass); a :class:`Session` then hands the resolved document to any number of writers
(:mod:`renderers.writers`, through its registry), reusing what formats share — the HTML a PDF is
laid out from, the PDF a PNG is rasterized from — and writes and records each artifact:

* no output may replace a file the render read (the input, the pool): :class:`OverwriteError`;
* every file is written atomically and recorded in ``<out_dir>/sources_used.json``;
* PNG pages of an earlier, longer render of the same name are removed with their records in the
  same locked update, so the directory and the records hold exactly this render's pages;
* every diagnostic (reader, citation pass, writer, store) reaches :class:`RenderResult`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from citations.chars import clean_text, encoding_shown, text_encoding
from citations.locations import source_location
from renderers.deadline import Deadline
from renderers.diagnostics import Code, Diagnostic, capped, collect, count, forward, summary, unique
from renderers.document import Cite, iter_inlines, reading_blocks
from renderers.errors import (
    InputError,
    LimitError,
    OverwriteError,
    RenderError,
    ResourceError,
    StrictError,
)
from renderers.formats import ContentFormat
from renderers.options import PARAMS, RenderOptions, read_options
from renderers.outputs import relative_name, write_files
from renderers.readers.answers import NativeAnswer, read_answer
from renderers.sandbox import image_cache
from renderers.writers import Artifact, writer_for

if TYPE_CHECKING:
    from citations.pool import SourcePool
    from citations.store import ArtifactRecord
    from renderers.document import Document
    from renderers.resolve import ResolvedDocument

DIALECTS: frozenset[str] = frozenset({"s_dialect", "numeric"})
#: What every entry point takes: markdown/HTML text (or UTF-8 bytes), or a provider's raw
#: answer — a dict/list, an SDK object or its JSON (see :mod:`renderers.readers.answers`).
Content = str | bytes | Mapping[str, Any] | list[Any]

ResultCallback = Callable[["RenderResult"], None]


@dataclass
class RenderResult:
    """One written artifact (for PNG, every page file of it)."""

    path: Path
    format: str
    sources_used: list[int]
    warnings: list[str]  # the messages of ``diagnostics``, as surfaces print them
    stats: dict[str, Any]  # ``warnings``: how many ``diagnostics`` stands for (some summarized)
    paths: list[Path] = field(default_factory=list)
    #: What the render noticed, at most ``MAX_PER_CODE`` of a code and one summary of the rest
    #: (:func:`renderers.diagnostics.capped`).
    diagnostics: list[Diagnostic] = field(default_factory=list)

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


# ---------------------------------------------------------------- decode, detect, read, resolve


@dataclass(frozen=True)
class Prepared:
    """A read and resolved input, ready for any number of writers."""

    text: str
    content_format: ContentFormat
    rdoc: ResolvedDocument
    options: RenderOptions
    dialects: frozenset[str]
    diagnostics: tuple[Diagnostic, ...]
    citations: int
    parse_ms: float
    inputs: tuple[Path, ...] = ()  # files the render read: no output may replace them
    input_format: str = ""  # markdown, html, or the provider whose answer was adapted
    deadline: Deadline | None = None  # limits.max_seconds, counted from the start of reading

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(str(d) for d in self.diagnostics)


def decode_content(content: object, origin: str = "content") -> str:
    """``content`` as text; bytes must be UTF-8 (a BOM is dropped), or UTF-16/UTF-32 opening with
    their byte-order mark. Characters no output can carry (controls, lone surrogates) become
    U+FFFD (:func:`citations.chars.clean_text`)."""
    if isinstance(content, str):
        return clean_text(content.removeprefix("\ufeff"))
    if isinstance(content, bytes | bytearray | memoryview):
        raw = bytes(content)
        encoding = text_encoding(raw)
        try:
            return clean_text(raw.decode(encoding))
        except UnicodeDecodeError as exc:
            raise InputError(
                f"{origin} is not valid {encoding_shown(encoding)} (byte {exc.start}: "
                f"{raw[exc.start : exc.start + 1]!r}); save it as UTF-8"
            ) from exc
    raise InputError(f"{origin}: expected text (str) or UTF-8 bytes, got {type(content).__name__}")


def detect_content_format(value: str | None, text: str) -> ContentFormat:
    """The input format named by ``value``, or detected from ``text`` when none is named."""
    fmt = read_options(content_format=value or None).content_format
    if fmt is None:
        from renderers.readers.detect import detect_format

        return detect_format(text)
    if fmt not in ("markdown", "html"):  # a provider's answer is adapted before this stage
        raise InputError(f"{fmt} answers are JSON objects; this content is not one", field=
                         "content_format")
    return fmt


def _check_pool_rows(rows: int, options: RenderOptions, *, at_least: bool = False) -> None:
    """Refuse a pool of ``rows`` rows (``at_least``: counting stopped there) over the limit."""
    if rows > options.limits.max_pool_rows:
        count = f"at least {rows:,}" if at_least else f"{rows:,}"
        raise LimitError(
            f"sources pool has {count} rows; the limit is {options.limits.max_pool_rows:,} "
            "(limits.max_pool_rows)",
            field="sources_pool",
        )


def _dialects(value: Iterable[str] | str | None) -> frozenset[str]:
    return read_options(dialects=value).dialects


#: The diagnostics about the input's text: they name the input file when a file is rendered.
_ABOUT_THE_INPUT = frozenset({Code.READER_NOTE, Code.NUMERIC_OUT_OF_RANGE})


def _input_diagnostics(read: ReadDocument, rdoc: ResolvedDocument,
                       input_file: str | os.PathLike[str] | None) -> list[Diagnostic]:
    """What reading and resolving noticed, in order: the answer adapter's notes, the reader's
    and the citation and cross-reference passes' (``rdoc.notes``), the reader's diagnostics
    about content it kept, then the numeric dialect's. With ``input_file``, each note about the
    input's text names it as its ``file``. A provider's or sidecar answer is read as the
    markdown made from it, whose lines are not the answer's: its notes keep no ``line``."""
    found = [
        *(read.native.notes if read.native else ()),
        *rdoc.notes,
        *rdoc.document.diagnostics,
        *read.mapped,
    ]
    if input_file is None and read.native is None:
        return found
    place: dict[str, Any] = {"line": None} if read.native is not None else {}
    if input_file is not None:
        place["file"] = os.fspath(input_file)
    return [
        dataclasses.replace(d, **place) if d.code in _ABOUT_THE_INPUT else d for d in found
    ]


@dataclass(frozen=True)
class ReadDocument:
    """What the reading stages produce (:func:`read_document`), before citations are numbered:
    the document model and what it was read from."""

    #: The decoded text (a provider's answer: its markdown), before numeric citations were
    #: mapped to sids: what the author wrote.
    written: str
    #: The text the reader read (numeric citations mapped to sids).
    text: str
    content_format: ContentFormat
    #: The dialects asked for, and those the reader read with (numeric ones are mapped first).
    requested_dialects: frozenset[str]
    dialects: frozenset[str]
    document: Document
    pool: SourcePool
    native: NativeAnswer | None
    mapped: list[Diagnostic]
    sources_pool: Any  # as given, or the pool a provider's answer carried


def read_document(
    content: Content,
    sources_pool: Any,
    content_format: str | None,
    options: RenderOptions,
    dialects: Iterable[str] | str | None,
    origin: str,
) -> ReadDocument:
    """The reading stages of :func:`prepare`: adapt, decode, detect, read. The audit reads
    with them too (:mod:`renderers.audit`), so it counts the citations render will number."""
    from citations.pool import SourcePool
    from citations.pool_text import TooManyRows

    native = read_answer(content, sources_pool, content_format, origin,
                         max_bytes=options.limits.max_content_bytes)
    if native is not None:  # a provider's raw answer: markdown with tokens plus its sources
        if native.warnings and options.strict:  # citations the answer's adapter could not place
            raise StrictError(summary(native.notes))
        content, sources_pool, content_format = native.text, native.pool, "markdown"
    written = text = decode_content(content, origin)
    fmt = detect_content_format(content_format, text)
    requested = chosen = _dialects(dialects)
    # A list of rows is counted before any row is read; a pool given another way after.
    if isinstance(sources_pool, list | tuple):
        _check_pool_rows(len(sources_pool), options)
    try:  # text and files are counted while they are parsed
        pool = SourcePool.coerce(sources_pool, max_rows=options.limits.max_pool_rows)
    except TooManyRows as exc:
        _check_pool_rows(exc.rows, options, at_least=True)
        raise
    _check_pool_rows(len(pool), options)
    mapped: list[Diagnostic] = []
    if "numeric" in chosen:
        from renderers.readers.numeric import map_numeric_citations

        text, mapped = map_numeric_citations(text, fmt, pool)
        chosen = chosen - {"numeric"}
        if mapped and options.strict:
            raise StrictError(summary(mapped))
    if fmt == "markdown":
        from renderers.readers.markdown import read_markdown

        document = read_markdown(text, dialects=chosen, limits=options.limits)
    else:
        from renderers.readers.html import read_html

        document = read_html(text, dialects=chosen, limits=options.limits)
    if options.title:
        document = dataclasses.replace(document, title=options.title)
    return ReadDocument(written, text, fmt, requested, chosen, document, pool, native, mapped,
                        sources_pool)


def _resolved(read: ReadDocument, options: RenderOptions) -> ResolvedDocument:
    """The citation pass over what :func:`read_document` read, a citation style, then the
    check of links to the writers' own ids (a note style's ``cnote-K`` exist only after it)."""
    from renderers.resolve import check_links, resolve

    rdoc = resolve(
        read.document,
        read.pool,
        numbering=options.numbering,
        strict=options.strict,
        sources_heading=options.sources_heading,
        lang=options.lang,
        links=False,
    )
    if options.csl or options.citation_format != "superscript":
        from renderers.styles import apply_style

        rdoc = apply_style(rdoc, options)
    return check_links(rdoc, strict=options.strict)


def prepare(
    content: Content,
    *,
    sources_pool: Any = None,
    content_format: str | None = None,
    options: RenderOptions,
    dialects: Iterable[str] | str | None = None,
    origin: str = "content",
    input_file: str | os.PathLike[str] | None = None,
) -> Prepared:
    """Read and resolve ``content`` once: the shared first half of every render.

    ``input_file`` is the file ``content`` came from, if any; it, a pool given as a path and
    the files the writers read (:func:`files_read`) are protected from being replaced by an
    output.
    """
    from citations.pool import SourcePool

    started = time.perf_counter()
    deadline = Deadline(options.limits.max_seconds)
    with deadline.armed("reading the input"):
        read = read_document(content, sources_pool, content_format, options, dialects, origin)
        rdoc = _resolved(read, options)
    native = read.native
    citations = sum(
        1 for node in iter_inlines(reading_blocks(rdoc.document))
        if isinstance(node, Cite) and node.numbers
    )
    files = (input_file, SourcePool.file_of(read.sources_pool))
    return Prepared(
        text=read.text,
        content_format=read.content_format,
        rdoc=rdoc,
        options=options,
        dialects=read.dialects,
        diagnostics=unique(_input_diagnostics(read, rdoc, input_file)),
        citations=citations,
        parse_ms=(time.perf_counter() - started) * 1000,
        input_format=native.provider if native else read.content_format,
        inputs=(*(Path(f) for f in files if f is not None), *files_read(rdoc, options)),
        deadline=deadline,
    )


def files_read(rdoc: ResolvedDocument, options: RenderOptions) -> list[Path]:
    """The files the writers read besides the content and the pool: the reference DOCX/PPTX,
    a ``.csl`` file and the document's images (as the sandbox finds them; a reference it
    refuses is read by no one). An output named like one of them must not replace it: a PNG
    of ``chart.md`` written next to ``chart.png`` would otherwise become the next render's
    chart."""
    from renderers.document import Image
    from renderers.sandbox import Sandbox, allowed_dirs

    files = [p for p in (options.reference_docx, options.reference_pptx) if p is not None]
    references = {
        node.src for node in iter_inlines(reading_blocks(rdoc.document))
        if isinstance(node, Image) and node.src and node.src[:5].lower() != "data:"
    }
    if options.csl:
        from renderers.styles.catalog import style_file

        csl = style_file(options.csl)
        if csl is not None:
            references.add(csl)
    sandbox = Sandbox(allowed_dirs(options))
    for reference in sorted(references):
        with contextlib.suppress(ResourceError):
            files.append(sandbox.resolve(reference))
    return files


# ---------------------------------------------------------------- write and record


def page_paths(target: Path, count: int) -> list[Path]:
    """``STEM.png`` for one page; ``STEM-1.png``, ``STEM-2.png`` … for more."""
    if count == 1:
        return [target]
    return [target.with_name(f"{target.stem}-{i}{target.suffix}") for i in range(1, count + 1)]


def refuse_overwriting(outputs: Iterable[Path], inputs: Sequence[Path]) -> None:
    """Raise :class:`OverwriteError` when writing any of ``outputs`` would replace an input.

    Compared as files (``os.path.samefile``), so another spelling of the same path, a symbolic
    link or a hard link to the input is caught too.
    """
    existing = [path for path in inputs if path.exists()]
    for output in outputs:
        if not output.exists():
            continue
        for source in existing:
            if os.path.samefile(output, source):
                raise OverwriteError(
                    f"output {str(output)!r} would replace the input file {str(source)!r}; "
                    "accepted: an output directory or name that differs from every input"
                )


def _stale_pages(
    out_dir: Path, target: Path, artifact_name: str, inputs: Sequence[Path]
) -> Callable[[ArtifactRecord], bool]:
    """Which existing records (and files) a PNG render of ``target`` supersedes: the PNG pages
    of the same artifact named ``STEM.png`` or ``STEM-N.png`` beside it — never an input."""
    folder = PurePosixPath(relative_name(out_dir, target)).parent
    page = re.compile(rf"{re.escape(target.stem)}(?:-[0-9]+)?{re.escape(target.suffix)}")
    protected = {relative_name(out_dir, p) for p in inputs if p.resolve().is_relative_to(out_dir)}

    def stale(record: ArtifactRecord) -> bool:
        name = PurePosixPath(record.filename)
        return (
            record.format == "png"
            and record.artifact_name == artifact_name
            and name.parent == folder
            and page.fullmatch(name.name) is not None
            and record.filename not in protected
        )

    return stale


class Session:
    """The writers over one :class:`Prepared` input (a :class:`renderers.writers.WriteSource`).

    Each format's artifact is made once and cached: the PDF writer reuses the HTML report, the
    PNG writer the PDF. Whatever a writer reports while it runs joins its artifact's diagnostics.
    """

    def __init__(self, prepared: Prepared) -> None:
        self.prepared = prepared
        self._artifacts: dict[str, Artifact] = {}
        self._print_html: tuple[str, tuple[Diagnostic, ...]] | None = None

    @property
    def rdoc(self) -> ResolvedDocument:
        return self.prepared.rdoc

    @property
    def options(self) -> RenderOptions:
        return self.prepared.options

    def artifact(self, fmt: str) -> Artifact:
        """The artifact of ``fmt``, made on first request by its registered writer."""
        made = self._artifacts.get(fmt)
        if made is None:
            writer = writer_for(fmt, self.options.pdf_engine)
            with collect() as reported, self._armed(f"making the {fmt}"), image_cache():
                made = writer(self)
            made = self._artifacts[fmt] = made.with_diagnostics(reported)
        forward(made.diagnostics)
        return made

    def _armed(self, stage: str) -> contextlib.AbstractContextManager[None]:
        """``limits.max_seconds`` over ``stage`` (nothing when the session has no deadline)."""
        deadline = self.prepared.deadline
        return deadline.armed(stage) if deadline is not None else contextlib.nullcontext()

    @property
    def authors_look(self) -> bool:
        """HTML input in its author's own look; not a page citerender wrote, whose look is the
        report's (its stylesheet is the writer's): that is laid out as the report again."""
        return self.prepared.content_format == "html" and not self.rdoc.document.own_page

    def print_html(self) -> str:
        """The author's own look of HTML input, which WeasyPrint lays out for it (the report
        itself is written for print by :func:`renderers.writers.pdf.laid_out_html`)."""
        if not self.authors_look:
            raise ValueError("print_html: only HTML input with its own look has one")
        if self._print_html is None:
            from renderers.writers.html.author_look import render_html_input

            with collect() as reported:
                html = render_html_input(
                    self.prepared.text, self.rdoc, self.options, dialects=self.prepared.dialects
                )
            self._print_html = html, unique(reported)
        html, diagnostics = self._print_html
        forward(diagnostics)
        return html

    def html_input(self) -> str | None:
        """The HTML input's text when it has its author's own look (:attr:`authors_look`),
        else None."""
        return self.prepared.text if self.authors_look else None

    def write(self, fmt: str, target: Path, out_dir: Path, artifact_name: str) -> RenderResult:
        """Make ``fmt``, write it to ``target`` (PNG pages next to it) and record it."""
        from citations.store import ArtifactRecord, SourcesUsedStore

        started = time.perf_counter()
        artifact = self.artifact(fmt)
        if not artifact.blobs:
            raise RenderError(f"the {fmt} writer produced nothing for {target.name}")
        paths = page_paths(target, len(artifact.blobs)) if fmt == "png" else [target]
        store = SourcesUsedStore(out_dir)
        inputs = self.prepared.inputs
        refuse_overwriting([*paths, store.path], inputs)
        store_notes = store.check()  # before the artifact: a bad store must not orphan it
        plan = artifact.sources or self.rdoc.plan
        records = []
        for path, data in zip(paths, artifact.blobs, strict=True):
            records.append(
                ArtifactRecord(
                    artifact_name=artifact_name,
                    filename=relative_name(out_dir, path),
                    format=fmt,
                    sids=list(plan.order),
                    numbers={str(sid): n for sid, n in plan.numbers.items()},
                    usage_sids=list(self.rdoc.usage_sids),
                    unknown_sids=list(plan.unknown_sids),
                    sha256=hashlib.sha256(data).hexdigest(),
                    extra=self._record_extra(fmt),
                )
            )
        supersedes = _stale_pages(out_dir, target, artifact_name, inputs) if fmt == "png" else None
        store_notes += store.record_many(
            records, supersedes=supersedes, write=lambda: write_files(paths, artifact.blobs)
        )
        diagnostics = capped(unique([
            *self.prepared.diagnostics,
            *artifact.diagnostics,
            *(Diagnostic(Code.STORE_RECOVERED, note, file=str(store.path)) for note in store_notes),
        ]))
        elapsed = self.prepared.parse_ms + (time.perf_counter() - started) * 1000
        return RenderResult(
            path=paths[0],
            paths=paths,
            format=fmt,
            sources_used=list(plan.order),
            warnings=[str(d) for d in diagnostics],
            diagnostics=list(diagnostics),
            stats=self._stats(artifact, elapsed, len(plan.entries), count(diagnostics)),
        )

    def _record_extra(self, fmt: str) -> dict[str, Any]:
        """What a record carries beyond the contract keys (ARCHITECTURE §3.4a), only where it
        differs from the default look, so default records keep their shape: the citation style
        (``style``, ``citation_format``), the PDF engine that typeset a PDF or PNG
        (``engine``), and where in its sources the artifact cites them (``locations``: sid →
        the Sources entry's location, ``"pages 3–4, 7"``, for the sources that have one)."""
        record: dict[str, Any] = {}
        locations = {str(entry.sid): where for entry in self.rdoc.entries
                     if (where := source_location(entry.source))}
        if locations:
            record["locations"] = locations
        if self.rdoc.style:
            record["style"] = self.rdoc.style
        if self.options.citation_format != "superscript":
            record["citation_format"] = self.options.citation_format
        engine = PARAMS["pdf_engine"]
        if engine.used_by(fmt) and self.options.pdf_engine != engine.default:
            record["engine"] = self.options.pdf_engine
        return record

    def _stats(self, artifact: Artifact, elapsed_ms: float, sources: int,
               warnings: int) -> dict[str, Any]:
        """The writer's own counts, then what every artifact reports (``sources``: how many
        it lists; ``warnings``: how many diagnostics it has, those a summary stands for
        included)."""
        return {
            **artifact.stats,
            "bytes": sum(len(blob) for blob in artifact.blobs),
            "citations": self.prepared.citations,
            "sources": sources,
            "warnings": warnings,
            "input_format": self.prepared.input_format,
            "elapsed_ms": round(elapsed_ms, 1),
        }


def write_all(
    session: Session,
    targets: Mapping[str, Path],
    out_dir: Path,
    artifact_name: str,
    on_result: ResultCallback | None = None,
) -> list[RenderResult]:
    """Write every format in ``targets`` (format → path inside ``out_dir``), in order.

    Every target is checked against the inputs before anything is written.
    """
    refuse_overwriting(targets.values(), session.prepared.inputs)
    results: list[RenderResult] = []
    for fmt, target in targets.items():
        result = session.write(fmt, target, out_dir, artifact_name)
        if on_result is not None:
            on_result(result)
        results.append(result)
    return results
