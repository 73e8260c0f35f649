"""Native LLM answers as input: the decode/detect step that runs before any reader.

A provider's raw response — OpenAI, Anthropic, Perplexity, Gemini, LangChain or LlamaIndex, as
an object, an SDK object, or JSON text or bytes — becomes markdown with ``[[S:n]]`` tokens, its
sources merged into the given pool (:mod:`citations.adapters`). Everything else passes through
untouched: markdown and HTML text, and JSON answers with a ``_citations`` sidecar (those belong
to the structured-answer reader). This is the only place the renderers call the adapters; the
CLI, the agent tools and the Python API all go through it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citations.chars import text_encoding
from citations.errors import AnswerError
from renderers.diagnostics import Code, Diagnostic
from renderers.errors import LimitError

if TYPE_CHECKING:
    from citations.adapters import AdaptedAnswer, Detection
    from citations.pool import SourcePool

#: Formats that are not a provider's answer (the adapters are imported only for the others).
_TEXT_FORMATS = frozenset({"markdown", "md", "html", "htm", "json", "yaml"})


@dataclass(frozen=True)
class NativeAnswer:
    """A native answer ready for the markdown reader."""

    text: str
    pool: SourcePool
    adapted: AdaptedAnswer

    @property
    def provider(self) -> str:
        return self.adapted.provider

    @property
    def warnings(self) -> tuple[str, ...]:
        return self.adapted.warnings

    @property
    def notes(self) -> tuple[Diagnostic, ...]:
        """The adapter's warnings as ``reader-note`` diagnostics (citations it could not place,
        sidecar entries skipped): an answer is JSON, so no line is known."""
        return tuple(Diagnostic(Code.READER_NOTE, warning) for warning in self.warnings)

    def describe(self) -> str:
        """One line: ``OpenAI Responses … (3 citations, 2 sources)``."""
        return self.adapted.describe()


def _looks_like_json(content: str | bytes) -> bool:
    """True when ``content`` starts (after a BOM and white space) with ``{`` or ``[``."""
    if isinstance(content, bytes):
        return content[:64].removeprefix(b"\xef\xbb\xbf").lstrip()[:1] in (b"{", b"[")
    return content[:64].removeprefix("\ufeff").lstrip()[:1] in ("{", "[")


def _may_be_answer(content: object) -> bool:
    """Text, a mapping or list, or an SDK object (pydantic model, dataclass)."""
    return isinstance(content, str | bytes | bytearray | memoryview | Mapping | list | tuple) or (
        callable(getattr(content, "model_dump", None))
        or (dataclasses.is_dataclass(content) and not isinstance(content, type))
    )


def read_answer(
    content: Any,
    sources_pool: Any,
    content_format: str | None,
    origin: str = "content",
    *,
    max_bytes: int | None = None,
) -> NativeAnswer | None:
    """``content`` adapted when it is a native answer (detected, or named by
    ``content_format``), else None — markdown/HTML text and sidecar answers go on as they are.

    A forced provider whose shape does not fit, or a malformed answer, raises
    :class:`~citations.errors.AnswerError` naming the field (no field: an object that is no
    known answer). JSON text longer than ``max_bytes`` raises :class:`LimitError` before it is
    parsed.
    """
    fmt = (content_format or "").strip().lower() or None
    if fmt in _TEXT_FORMATS or not _may_be_answer(content):
        return None  # text formats; a number, None …: the text decoder names what is accepted
    if isinstance(content, bytes | bytearray | memoryview):
        encoding = text_encoding(bytes(content))
        if encoding != "utf-8-sig":  # UTF-16/32 by its byte-order mark: read as its text
            try:
                content = bytes(content).decode(encoding)
            except UnicodeDecodeError:
                return None  # the text decoder names the byte
    text = isinstance(content, str | bytes | bytearray | memoryview)
    raw = (content if isinstance(content, str) else bytes(content)) if text else ""
    named = _named_structured(origin) if fmt is None and text else None
    if named == "yaml":
        return _yaml_file(raw, sources_pool, origin, max_bytes)
    if fmt is None and text and not _looks_like_json(raw) and named is None:
        return None
    from citations.adapters import ACCEPTED, PROVIDERS, adapt, detect, parse_answer
    from citations.adapters.detect import SIDECAR_ACCEPTED
    from citations.json_keys import DuplicateKeyError
    from citations.pool import SourcePool

    if fmt is not None and fmt not in PROVIDERS and fmt != "sidecar":
        return None  # an unknown name: the readers refuse it with their message
    data = content
    if text:
        if max_bytes is not None and len(raw) > max_bytes:
            raise LimitError(
                f"{origin}: the answer is larger than {max_bytes} bytes (limits.max_content_bytes)"
            )
        try:
            # --from sidecar names the one form accepted, not the providers' answers
            accepted = (SIDECAR_ACCEPTED if fmt == "sidecar"
                        else f"{ACCEPTED}; or {SIDECAR_ACCEPTED}" if named else ACCEPTED)
            data = parse_answer(raw, origin, accepted=accepted)
        except AnswerError as exc:
            if fmt is None and named is None and not isinstance(exc.__cause__, DuplicateKeyError):
                return None  # text that merely starts with a bracket (not a .json file)
            raise  # JSON naming a key twice is JSON, not prose: refused, not shown as text
    if fmt == "sidecar" or (fmt is None and (found := detect(data)) and found.kind == "sidecar"):
        return _sidecar_answer(data, sources_pool, origin)
    if fmt is None:
        found = detect(data)
        if found is None and _has_sidecar_member(data):
            return _sidecar_answer(data, sources_pool, origin)
        if found is None:
            if text:
                return None
            raise AnswerError(
                "", f"{origin} is a {type(content).__name__} that is not a recognized answer; "
                f"accepted: markdown or HTML text, or {ACCEPTED}"
            )
        fmt = found.kind
    adapted = adapt(data, SourcePool.coerce(sources_pool), provider=fmt)
    return NativeAnswer(adapted.content, adapted.pool, adapted)


def _named_structured(origin: str) -> str | None:
    """``"json"``/``"yaml"`` when ``origin`` names a ``.json``/``.yaml``/``.yml`` file, which
    the audit reads as a structured answer (:func:`citations.audit.structured_format`), so the
    render does too: such a file that does not parse is refused as the audit refuses it,
    instead of being shown as markdown text."""
    from citations.audit import structured_format

    return structured_format(origin, "")


def _yaml_file(
    raw: str | bytes, sources_pool: Any, origin: str, max_bytes: int | None
) -> NativeAnswer | None:
    """A ``.yaml`` file with a ``_citations`` sidecar as the answer it is (the audit's reading;
    it was shown as YAML text, none of its citations cited); None for other YAML (markdown)."""
    from citations.errors import SidecarError
    from citations.sidecar import load_structured

    if max_bytes is not None and len(raw) > max_bytes:
        return None  # the text decoder refuses it, naming the limit
    try:
        text = raw if isinstance(raw, str) else raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None  # the text decoder names the byte
    try:
        data = load_structured(text, "yaml", name=origin)
    except SidecarError as exc:
        raise AnswerError("", str(exc)) from exc
    return _sidecar_answer(data, sources_pool, origin) if _has_sidecar_member(data) else None


def _has_sidecar_member(data: Any) -> bool:
    """Whether ``data`` is a JSON object with a ``_citations`` member that detection refused
    (not a list): the audit reads such a file as a sidecar answer with a bad sidecar, so the
    render does too — and warns — instead of showing the raw JSON as if all were well."""
    from citations.sidecar import DEFAULT_POINTER, parse_pointer

    return isinstance(data, Mapping) and parse_pointer(DEFAULT_POINTER)[0] in data


def _sidecar_answer(data: Any, sources_pool: Any, origin: str) -> NativeAnswer:
    """A JSON answer with a ``_citations`` sidecar as a readable document: keys as headings,
    each cited string followed by its citations (:mod:`citations.structured`).

    Each sidecar problem the audit reports (an entry that is not an object, a pointer naming
    nothing or a non-string, sids that are not positive integers, a sidecar that is not a
    list) becomes a warning in the audit's words and the entry is skipped, as an invalid token
    in markdown is: ``--strict`` fails on it, otherwise the sound entries are cited.
    """
    from citations.adapters import AdaptedAnswer
    from citations.adapters.detect import SIDECAR
    from citations.errors import SidecarError
    from citations.pool import SourcePool
    from citations.structured import read_structured

    try:
        answer = read_structured(data)
    except SidecarError as exc:
        raise AnswerError("", f"{origin}: {exc}") from exc  # names the file once
    pool = SourcePool.coerce(sources_pool)
    adapted = AdaptedAnswer(
        content=answer.markdown, pool=pool, sid_map={sid: sid for sid in answer.sids},
        provider="sidecar", shape=SIDECAR, citations=answer.citations,  # type: ignore[arg-type]
        warnings=tuple(f"{problem}; skipped" for problem in answer.problems),
    )
    return NativeAnswer(answer.markdown, pool, adapted)


def sniff_file(path: Path, forced: str | None = None) -> Detection | None:
    """What the input file ``path`` is when it is a native answer (for the CLI's info line and
    to waive the pool requirement); None for markdown, HTML and sidecar answers.

    ``forced`` (``--from``) names a provider: the file must then parse as JSON.
    """
    if forced is None:
        with path.open("rb") as handle:
            if not _looks_like_json(handle.read(64)):
                return None  # markdown or HTML: not read twice, the adapters not imported
    from citations.adapters import PROVIDERS, Detection, detect, parse_answer

    if forced is not None and forced not in PROVIDERS:
        return None
    data = path.read_bytes()
    try:
        parsed = parse_answer(data, str(path))
    except AnswerError:
        if forced is None:
            return None
        raise
    found = detect(parsed)
    if forced is not None:
        if found is not None and found.kind == forced:
            return found
        return Detection(forced, f"{forced} answer (forced with --from)")  # type: ignore[arg-type]
    return None if found is None or found.kind == "sidecar" else found
