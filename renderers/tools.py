"""Agent tools: function-calling schemas and ``call_tool`` for citerender's writers.

``TOOL_SCHEMAS`` lists one ``{name, description, parameters}`` entry per tool in the shape
agent frameworks use (OpenAI/Anthropic function calling, MCP ``inputSchema``).
``call_tool(name, arguments, out_dir=…)`` validates the arguments against that schema, writes
inside ``out_dir`` only, and answers the envelope ``{ok, path, format, sources_used, stats,
warnings}`` or ``{ok: false, error: {code, message, where}}`` — it never raises for bad input.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from citations.adapters import PROVIDERS
from citations.errors import (
    AnswerError,
    CitationError,
    PoolError,
    SidecarError,
    TokenError,
    UnknownSidError,
)
from renderers.errors import (
    InputError,
    LimitError,
    OutputPathError,
    RenderError,
    ResourceError,
    StrictError,
)

# --- argument schemas (shared with the HTTP service) -------------------------------------

SOURCE_ROW_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "One source. Unknown fields are kept.",
    "properties": {
        "sid": {"type": "integer", "minimum": 1, "description": "Source id, cited as [[S:sid]]."},
        "title": {"type": "string"},
        "url": {"type": "string", "description": "http, https or mailto; others are not linked."},
        "text": {"type": "string", "description": "Snippet or extract."},
        "source_type": {"type": "string", "description": "e.g. web, file, rag."},
        "published_at": {"type": "string", "description": "ISO date."},
        "artifact_path": {"type": "string", "description": "Label for a file source."},
    },
}

SOURCES_POOL_SCHEMA: dict[str, Any] = {
    "description": (
        "The sources the content cites: a list of rows, or an object holding the list under "
        "'sources_pool' or 'sources'."
    ),
    "anyOf": [
        {"type": "array", "items": SOURCE_ROW_SCHEMA},
        {
            "type": "object",
            "properties": {
                "sources_pool": {"type": "array", "items": SOURCE_ROW_SCHEMA},
                "sources": {"type": "array", "items": SOURCE_ROW_SCHEMA},
            },
        },
    ],
}

COMMON_PROPERTIES: dict[str, dict[str, Any]] = {
    "content": {
        "type": "string",
        "description": (
            "The document as markdown or HTML. Cite sources with [[S:1]], [[S:1,3]] or "
            "[[S:2-4]] (HTML may use <sup class=\"cite\" data-sids=\"1,3\">); [[USAGE:5]] "
            "records a source as used without showing a citation."
        ),
    },
    "sources_pool": SOURCES_POOL_SCHEMA,
    "content_format": {
        "type": "string",
        "enum": ["markdown", "html"],
        "description": "Input format; detected from the content when omitted.",
    },
    "title": {"type": "string", "maxLength": 500, "description": "Document title."},
    "author": {"type": "string", "maxLength": 500, "description": "Author (document metadata)."},
    "numbering": {
        "type": "string",
        "enum": ["appearance", "sid"],
        "description": "appearance: first cited source is 1 (default); sid: the sid is the number.",
    },
    "strict": {
        "type": "boolean",
        "description": "Fail on unknown sids or invalid citation tokens instead of warning.",
    },
    "sources_heading": {
        "type": "string",
        "maxLength": 200,
        "description": "Heading of the Sources section (default 'Sources').",
    },
    "dialects": {
        "type": "array",
        "items": {"type": "string", "enum": ["s_dialect", "numeric"]},
        "uniqueItems": True,
        "description": (
            "Extra citation forms: s_dialect reads [S1] / [S1, S3]; numeric reads [1] as the "
            "first pool row."
        ),
    },
}

#: A provider's raw answer instead of ``content`` (write tools and the audit; not the service).
ANSWER_PROPERTIES: dict[str, dict[str, Any]] = {
    "answer": {
        "type": ["object", "array", "string"],
        "description": (
            "Instead of content: your model's raw cited response, as returned — an OpenAI "
            "Responses or Chat Completions object (url_citation annotations), an Anthropic "
            "Message (text blocks with citations), a Perplexity completion (citations / "
            "search_results), a Gemini response (groundingMetadata), a LangChain AIMessage or "
            "retrieval output, or a LlamaIndex Response (source_nodes); an object or its JSON "
            "string. Its citations become linked superscripts where the provider placed them "
            "and its sources the Sources section; sources_pool, when given, is merged (a known "
            "URL keeps its sid)."
        ),
    },
    "answer_format": {
        "type": "string",
        "enum": list(PROVIDERS),
        "description": "The provider of answer; detected from its shape when omitted.",
    },
}
_CONTENT_OR_ANSWER = "Give exactly one of 'content' (markdown or HTML) and 'answer'."

_PAGE_SIZE = {"type": "string", "enum": ["A4", "Letter"], "description": "Page size (A4 default)."}

FORMAT_PROPERTIES: dict[str, dict[str, dict[str, Any]]] = {
    "pdf": {
        "page_size": _PAGE_SIZE,
        "pdf_variant": {
            "type": "string",
            "enum": ["pdf/a-3b", "pdf/ua-1"],
            "description": "Archival or accessible PDF variant.",
        },
    },
    "png": {
        "page_size": _PAGE_SIZE,
        "dpi": {"type": "integer", "minimum": 10, "maximum": 600, "description": "Resolution."},
        "pages": {
            "type": "array",
            "items": {"type": "integer", "minimum": 1},
            "minItems": 1,
            "uniqueItems": True,
            "description": "1-based pages to render (default: every page, one PNG each).",
        },
    },
    "docx": {
        "page_size": _PAGE_SIZE,
        "docx_citations": {
            "type": "string",
            "enum": ["superscript", "footnotes"],
            "description": "Linked superscript numbers (default) or Word footnotes.",
        },
    },
    "pptx": {
        "slide_level": {
            "type": "integer",
            "minimum": 1,
            "maximum": 6,
            "description": "Heading level that starts a new slide (default 2).",
        },
        "slide_ratio": {"type": "string", "enum": ["16:9", "4:3"]},
        "source_footer": {
            "type": "boolean",
            "description": "Footer listing the sources cited on each slide (default true).",
        },
    },
    "html": {},
    "md": {},
}

EXTENSIONS: dict[str, str] = {
    "pdf": ".pdf", "png": ".png", "docx": ".docx", "pptx": ".pptx", "html": ".html", "md": ".md",
}

TOOL_FORMATS: dict[str, str] = {
    "write_pdf": "pdf",
    "write_png": "png",
    "write_docx": "docx",
    "write_pptx": "pptx",
    "write_html": "html",
    "write_markdown": "md",
}

_WHAT = {
    "pdf": "a paginated PDF report",
    "png": "PNG page images (one file per page: NAME-1.png, NAME-2.png … when several)",
    "docx": "a Word document",
    "pptx": "a PowerPoint deck (a slide per heading of the slide level)",
    "html": "a standalone HTML page",
    "md": "Markdown with [^n] footnotes",
}

_RESULT_NOTE = (
    " Every citation becomes a linked superscript number and a Sources section lists the "
    "cited sources. Returns {ok, path, format, sources_used, stats, warnings} or "
    "{ok: false, error: {code, message, where}}."
)


def _write_tool(name: str, fmt: str) -> dict[str, Any]:
    ext = EXTENSIONS[fmt]
    properties: dict[str, Any] = {
        "path": {
            "type": "string",
            "minLength": 1,
            "maxLength": 255,
            "description": (
                f"Output file name inside the output directory, e.g. 'report{ext}' or "
                f"'q3/report{ext}'. Absolute paths and '..' are refused. Default 'report{ext}'."
            ),
        },
        **COMMON_PROPERTIES,
        **ANSWER_PROPERTIES,
        **FORMAT_PROPERTIES[fmt],
    }
    return {
        "name": name,
        "description": (
            f"Render cited markdown or HTML — or a model's raw cited answer — to {_WHAT[fmt]}."
            f"{_RESULT_NOTE} {_CONTENT_OR_ANSWER}"
        ),
        "parameters": {
            "type": "object",
            "properties": properties,
            "additionalProperties": False,
        },
    }


AUDIT_SCHEMA: dict[str, Any] = {
    "name": "audit_citations",
    "description": (
        "Check the citations in markdown or HTML (or a model's raw cited answer) against a "
        "sources pool without rendering: unknown sids, invalid tokens, citations inside code, "
        "sources never cited, coverage. Returns {ok, format: 'audit', sources_used, stats, "
        f"warnings, audit}}. {_CONTENT_OR_ANSWER}"
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "content": COMMON_PROPERTIES["content"],
            **ANSWER_PROPERTIES,
            "sources_pool": SOURCES_POOL_SCHEMA,
            "content_format": COMMON_PROPERTIES["content_format"],
            "dialects": COMMON_PROPERTIES["dialects"],
        },
        "additionalProperties": False,
    },
}

TOOL_SCHEMAS: list[dict[str, Any]] = [
    *(_write_tool(name, fmt) for name, fmt in TOOL_FORMATS.items()),
    AUDIT_SCHEMA,
]

_SCHEMAS_BY_NAME = {schema["name"]: schema for schema in TOOL_SCHEMAS}
_VALIDATORS = {
    name: Draft202012Validator(schema["parameters"]) for name, schema in _SCHEMAS_BY_NAME.items()
}

# --- helpers shared with the HTTP service ---------------------------------------------------

_OPTION_NAMES = (
    "author", "sources_heading", "page_size", "pdf_variant", "dpi", "pages",
    "docx_citations", "slide_level", "slide_ratio", "source_footer",
)


def validation_problem(validator: Draft202012Validator, arguments: Any) -> tuple[str, str] | None:
    """``(where, message)`` for the most relevant schema violation, or None when valid."""
    error: ValidationError | None = best_match(validator.iter_errors(arguments))
    if error is None:
        return None
    where = ".".join(str(part) for part in error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = set(error.schema.get("properties", {}))
        extra = sorted(key for key in error.instance if key not in allowed)
        where = ".".join([*(str(p) for p in error.absolute_path), extra[0]]) if extra else where
        return where, (
            f"unknown field {extra[0] if extra else '?'!r}; accepted: {', '.join(sorted(allowed))}"
        )
    if error.validator == "required":
        missing = re.search(r"'([^']+)' is a required property", error.message)
        if missing:
            where = ".".join([*(str(p) for p in error.absolute_path), missing.group(1)])
    return where, error.message


def render_kwargs(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword arguments for ``renderers.api`` from validated tool/request arguments."""
    kwargs: dict[str, Any] = {
        "sources_pool": arguments.get("sources_pool"),
        "content_format": arguments.get("content_format"),
        "title": arguments.get("title"),
        "numbering": arguments.get("numbering", "appearance"),
        "strict": bool(arguments.get("strict", False)),
    }
    if arguments.get("dialects"):
        kwargs["dialects"] = list(arguments["dialects"])
    for option in _OPTION_NAMES:
        if arguments.get(option) is not None:
            value = arguments[option]
            kwargs[option] = tuple(value) if option == "pages" else value
    return kwargs


def classify_error(exc: BaseException) -> tuple[str, str]:
    """``(code, where)`` for an error raised while rendering or auditing."""
    if isinstance(exc, OutputPathError):
        return "invalid_path", "path"
    if isinstance(exc, AnswerError):
        return "invalid_argument", ".".join(p for p in ("answer", exc.field) if p)
    if isinstance(exc, StrictError):
        return "strict_failed", "content"
    if isinstance(exc, LimitError):
        return "limit_exceeded", "content"
    if isinstance(exc, ResourceError):
        return "resource_refused", "content"
    if isinstance(exc, PoolError | SidecarError):
        return "invalid_sources_pool", "sources_pool"
    if isinstance(exc, TokenError | UnknownSidError):
        return "invalid_citation", "content"
    if isinstance(exc, InputError):
        named = re.match(r"\s*(\w+)\s*=", str(exc))
        return "invalid_input", named.group(1) if named else "content"
    if isinstance(exc, CitationError):
        return "invalid_input", "content"
    return "render_failed", ""


def _error(code: str, message: str, where: str) -> dict[str, Any]:
    return {"ok": False, "error": {"code": code, "message": message, "where": where}}


# --- call_tool --------------------------------------------------------------------------------


def output_name(fmt: str, name: str | None) -> str:
    """The checked output name (default ``report.<ext>``; the extension is added if missing)."""
    from renderers.outputs import validate_name

    ext = EXTENSIONS[fmt]
    name = validate_name(name or f"report{ext}")
    suffix = Path(name).suffix.lower()
    if suffix == "":
        return name + ext
    if suffix != ext:
        raise OutputPathError(f"path {name!r}: a {fmt} file must end with {ext}")
    return name


def _write(fmt: str, arguments: Mapping[str, Any], out_dir: Path) -> dict[str, Any]:
    from renderers.api import render

    name = output_name(fmt, arguments.get("path"))
    out_dir.mkdir(parents=True, exist_ok=True)
    # render() confines NAME to out_dir (symbolic links resolved) and records the artifact
    # in out_dir/sources_used.json; local images load from out_dir only.
    kwargs = render_kwargs(arguments)
    if "answer" in arguments:
        kwargs["content_format"] = arguments.get("answer_format")
    (result,) = render(_input(arguments), out_dir, name=name, formats=[fmt], **kwargs)
    envelope: dict[str, Any] = result.to_envelope()
    if len(result.paths) > 1:
        envelope["paths"] = [str(p) for p in result.paths]
    return envelope


def _audit(arguments: Mapping[str, Any]) -> dict[str, Any]:
    from citations.audit import audit
    from renderers.readers.detect import detect_format

    content = _input(arguments)
    if "answer" in arguments:
        fmt = arguments.get("answer_format") or ""
    else:
        fmt = arguments.get("content_format") or detect_format(content)
    report = audit(
        content,
        arguments.get("sources_pool") or [],
        content_format=fmt,
        dialects=frozenset(arguments.get("dialects") or ()),
    )
    data: dict[str, Any] = report.to_dict()
    warnings = [f"unknown sid {sid}" for sid in data.get("unknown_sids", [])]
    warnings += [
        f"line {tok.get('line')}: invalid citation {tok.get('text')!r}: {tok.get('reason')}"
        for tok in data.get("invalid_tokens", [])
    ]
    warnings += [f"sid {sid} cited inside code" for sid in data.get("in_code_sids", [])]
    return {
        "ok": True,
        "path": None,
        "format": "audit",
        "sources_used": list(data.get("cited_sids", [])),
        "stats": {
            "cited": len(data.get("cited_sids", [])),
            "orphaned": len(data.get("orphaned_sids", [])),
            "coverage": data.get("coverage"),
            "clean": bool(data.get("ok")),
        },
        "warnings": warnings,
        "audit": data,
    }


def _input(arguments: Mapping[str, Any]) -> Any:
    """The document to render: ``content``, or the native ``answer`` (its JSON string parsed)."""
    if "answer" not in arguments:
        return arguments["content"]
    answer = arguments["answer"]
    if isinstance(answer, str):
        from citations.adapters import parse_answer

        return parse_answer(answer, "answer")
    return answer


def call_tool(
    name: str, arguments: Mapping[str, Any] | None, *, out_dir: str | Path
) -> dict[str, Any]:
    """Run tool ``name`` with ``arguments``; files are written inside ``out_dir`` only."""
    validator = _VALIDATORS.get(name)
    if validator is None:
        known = ", ".join(_SCHEMAS_BY_NAME)
        return _error("unknown_tool", f"no tool {name!r}; tools: {known}", "name")
    arguments = dict(arguments or {})
    problem = validation_problem(validator, arguments)
    if problem is not None:
        where, message = problem
        return _error("invalid_argument", message, where)
    if ("content" in arguments) == ("answer" in arguments):
        where = "content" if "answer" not in arguments else "answer"
        return _error("invalid_argument", _CONTENT_OR_ANSWER, where)
    if "\x00" in arguments.get("content", ""):
        return _error("invalid_argument", "content holds a NUL character", "content")
    try:
        if name == "audit_citations":
            return _audit(arguments)
        return _write(TOOL_FORMATS[name], arguments, Path(out_dir))
    except (RenderError, CitationError) as exc:
        code, where = classify_error(exc)
        return _error(code, str(exc), where)
