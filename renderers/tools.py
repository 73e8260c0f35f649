"""Agent tools: function-calling schemas and ``call_tool`` for citerender's writers.

``TOOL_SCHEMAS`` lists one ``{name, description, parameters}`` entry per tool in the shape
agent frameworks use (OpenAI/Anthropic function calling, MCP ``inputSchema``); the option
properties are generated from the option spec (:mod:`renderers.options`), so a tool offers
exactly the options its format uses. ``call_tool(name, arguments, out_dir=…)`` accepts the
arguments as a mapping or as JSON text (as LLM APIs deliver ``tool_call.function.arguments``),
validates them against the schema, writes inside ``out_dir`` only, and answers the envelope
``{ok, path, format, sources_used, stats, warnings}`` or ``{ok: false, error: {code, message,
where}}``. It never raises: ``code`` is an :class:`~renderers.errors.ErrorCode` taken from the
error itself, ``where`` the field at fault.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from citations import json_keys
from citations.chars import clean_text
from citations.errors import CodedError, ErrorCode, PoolError
from citations.pool import ROW_SCHEMA, source_from_row
from renderers.errors import LimitError, OptionError, OutputPathError, short_repr
from renderers.formats import BY_NAME, EXTENSIONS, Format
from renderers.options import PARAMETERS, PARAMS, Limits, ReadingOptions, Surface, refuse_unused
from renderers.process_memory import current_cap_mib, memory_exceeded

# --- argument schemas (shared with the HTTP service) -------------------------------------

#: One pool row: the pool loader's own schema (:data:`citations.pool.ROW_SCHEMA`), so a tool
#: or request never refuses a row the loader reads (``"sid": "3"``).
SOURCE_ROW_SCHEMA: dict[str, Any] = ROW_SCHEMA

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

#: The inputs every tool takes besides its options.
INPUT_PROPERTIES: dict[str, dict[str, Any]] = {
    "content": {
        "type": "string",
        "description": (
            "The document as markdown or HTML. Cite sources with [[S:1]], [[S:1,3]] or "
            "[[S:2-4]] (HTML may use <sup class=\"cite\" data-sids=\"1,3\">); [[USAGE:5]] "
            "records a source as used without showing a citation."
        ),
    },
    "sources_pool": SOURCES_POOL_SCHEMA,
}
#: A provider's raw answer instead of ``content`` (the write tools and the audit).
ANSWER_PROPERTIES: dict[str, dict[str, Any]] = {
    "answer": {
        "type": ["object", "array", "string"],
        "description": (
            "Instead of content: your model's raw cited response, as returned — an OpenAI "
            "Responses or Chat Completions object (url_citation annotations), an Anthropic "
            "Message (text blocks with citations), a Perplexity completion (citations / "
            "search_results), a Gemini response (groundingMetadata), a LangChain AIMessage or "
            "retrieval output, or a LlamaIndex Response (source_nodes); or the list of a "
            "streamed answer's events or chat.completion chunks, or a conversation's messages "
            "(its last assistant message is the answer); an object, a list or its JSON "
            "string. Its citations become linked superscripts where the provider placed them "
            "and its sources the Sources section; sources_pool, when given, is merged (a known "
            "URL keeps its sid). content_format may name the provider (detected otherwise)."
        ),
    },
}
_CONTENT_OR_ANSWER = "Give exactly one of 'content' (markdown or HTML) and 'answer'."


def option_properties(
    surface: Surface, fmt: Format | None = None, *, reading_only: bool = False
) -> dict[str, dict[str, Any]]:
    """JSON Schema properties of the options ``surface`` offers (for ``fmt``, or for any format).

    Without ``fmt`` an option used by only some formats says which in its description.
    """
    properties: dict[str, dict[str, Any]] = {}
    for param in PARAMETERS:
        if not param.offered_on(surface) or (reading_only and param.owner is not ReadingOptions):
            continue
        if fmt is not None and not param.used_by(fmt):
            continue
        schema = param.json_schema()
        if fmt is None and len(param.info.formats) < len(EXTENSIONS):
            schema["description"] += f" ({', '.join(param.info.formats)} only)"
        properties[param.name] = schema
    return properties


TOOL_FORMATS: dict[str, Format] = {
    "write_pdf": "pdf",
    "write_png": "png",
    "write_docx": "docx",
    "write_pptx": "pptx",
    "write_html": "html",
    "write_markdown": "md",
}

_RESULT_NOTE = (
    " Every citation becomes a linked superscript number and a Sources section lists the "
    "cited sources. Returns {ok, path, format, sources_used, stats, warnings} or "
    "{ok: false, error: {code, message, where}}."
)


def _write_tool(name: str, fmt: Format, surface: Surface) -> dict[str, Any]:
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
        **INPUT_PROPERTIES,
        **ANSWER_PROPERTIES,
        **option_properties(surface, fmt),
    }
    return {
        "name": name,
        "description": (
            f"Render cited markdown or HTML — or a model's raw cited answer — to "
            f"{BY_NAME[fmt].summary}.{_RESULT_NOTE} {_CONTENT_OR_ANSWER}"
        ),
        "parameters": {
            "type": "object",
            "properties": properties,
            "additionalProperties": False,
        },
    }


def _audit_tool(surface: Surface) -> dict[str, Any]:
    return {
        "name": "audit_citations",
        "description": (
            "Check the citations in markdown or HTML (or a model's raw cited answer) against a "
            "sources pool without rendering, numbered as a render numbers them: unknown sids, "
            "invalid tokens, citations inside code or where a render would not cite them, "
            "sources never cited, coverage. Returns {ok, format: 'audit', sources_used, "
            f"stats, warnings, audit}}. {_CONTENT_OR_ANSWER}"
        ),
        "parameters": {
            "type": "object",
            "properties": {**INPUT_PROPERTIES, **ANSWER_PROPERTIES,
                           **option_properties(surface, reading_only=True)},
            "additionalProperties": False,
        },
    }


def tool_schemas(surface: Surface = "tool") -> list[dict[str, Any]]:
    """The tool schemas as ``surface`` (``tool`` or ``mcp``) offers them."""
    return [
        *(_write_tool(name, fmt, surface) for name, fmt in TOOL_FORMATS.items()),
        _audit_tool(surface),
    ]


TOOL_SCHEMAS: list[dict[str, Any]] = tool_schemas("tool")

_SCHEMAS_BY_NAME = {schema["name"]: schema for schema in TOOL_SCHEMAS}
_VALIDATORS = {
    name: Draft202012Validator(schema["parameters"]) for name, schema in _SCHEMAS_BY_NAME.items()
}

# --- helpers shared with the HTTP service ---------------------------------------------------


def validation_problem(validator: Draft202012Validator, arguments: Any) -> tuple[str, str] | None:
    """``(where, message)`` for the most relevant schema violation, or None when valid."""
    error: ValidationError | None = best_match(validator.iter_errors(arguments))
    if error is None:
        return None
    path = [str(part) for part in error.absolute_path]
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = set(error.schema.get("properties", {}))
        extra = sorted(str(key) for key in error.instance if key not in allowed)
        first = extra[0] if extra else "?"
        return ".".join([*path, first]), (
            f"unknown field {short_repr(first)}; accepted: {', '.join(sorted(allowed))}"
        )
    if error.validator == "required" and isinstance(error.validator_value, list):
        missing = [k for k in error.validator_value if k not in (error.instance or {})]
        if missing:
            return ".".join([*path, str(missing[0])]), f"{missing[0]!r} is required"
    return ".".join(path), f"{_what_is_wrong(error)}; accepted: {accepted_values(error.schema)}"


def arguments_problem(
    arguments: Mapping[str, Any], validator: Draft202012Validator, *, max_pool_rows: int
) -> CodedError | None:
    """The first problem with tool arguments or a request body, with work and memory bounded;
    the one rule the tools (:func:`call_tool`, the MCP server) and the HTTP service share.

    Pool rows are counted first (more than ``max_pool_rows`` is :class:`LimitError`,
    ``limit_exceeded``, before any row is looked at), then the other fields are validated
    against the schema with the rows set aside (:class:`OptionError`, ``invalid_argument``;
    its message does not repeat the field), then the rows one at a time by the pool loader
    itself (:func:`pool_row_problem`: :class:`PoolError`, ``invalid_sources_pool``, naming the
    row by its position, ``sources_pool.2``, and its field, ``sources_pool.2.sid``), stopping
    at the first bad one. So every surface accepts exactly the rows a render reads (``"sid":
    "3"`` too), and a schema validator never holds an error for every bad row at once
    (gigabytes for 200,000 of them).
    """
    row_lists = pool_row_lists(arguments)
    total = sum(len(rows) for _, rows in row_lists)
    if total > max_pool_rows:
        return LimitError(
            f"sources_pool: {total} rows; accepted: at most {max_pool_rows} rows "
            "(limits.max_pool_rows)",
            field="sources_pool",
        )
    fields = arguments
    if row_lists:
        pool = arguments["sources_pool"]
        fields = {**arguments, "sources_pool": [] if isinstance(pool, list) else {
            key: [] if isinstance(value, list) else value for key, value in pool.items()
        }}
    problem = validation_problem(validator, fields)
    if problem is not None:
        where, message = problem
        return OptionError(message, field=where)
    for where, rows in row_lists:
        for index, row in enumerate(rows):
            if (refused := pool_row_problem(row, f"{where}.{index}")) is not None:
                return refused
    return None


def pool_row_lists(arguments: Mapping[str, Any]) -> list[tuple[str, list[Any]]]:
    """``(field path, rows)`` for each list of pool rows in the ``sources_pool`` argument: a
    list of rows, or an object holding the list under ``sources_pool`` or ``sources``
    (:data:`SOURCES_POOL_SCHEMA`)."""
    pool = arguments.get("sources_pool")
    if isinstance(pool, list):
        return [("sources_pool", pool)]
    if isinstance(pool, dict):
        return [
            (f"sources_pool.{key}", pool[key])
            for key in ("sources_pool", "sources")
            if isinstance(pool.get(key), list)
        ]
    return []


def pool_row_problem(row: Any, where: str) -> PoolError | None:
    """The pool loader's refusal of the row at ``where`` (``sources_pool.2``), or None: a
    :class:`PoolError` (``invalid_sources_pool``) whose message starts with ``where`` and
    whose ``field`` names the row's field at fault (``sources_pool.2.sid``)."""
    if not isinstance(row, dict):
        return PoolError(
            f"{where}: {short_repr(row)} is not a row; accepted: an object with a 'sid' field",
            field=where,
        )
    try:
        source_from_row(row, where)
    except PoolError as refused:
        refused.field = f"{where}.{refused.row_field}" if refused.row_field else where
        return refused
    return None


def _what_is_wrong(error: ValidationError) -> str:
    """The refused value in a few words, never the whole of a huge one."""
    value, rule = error.instance, error.validator
    if rule in ("minLength", "pattern") and value == "":
        return "blank text"
    if rule in ("maxLength", "minLength") and isinstance(value, str):
        return f"a string of {len(value):,} characters"
    if rule in ("maxItems", "minItems") and isinstance(value, list):
        return f"a list of {len(value):,} items"
    if rule == "type":
        return f"{short_repr(value)} is {_json_kind(value)}"
    if rule in ("anyOf", "oneOf", "enum", "const") or len(error.message) > 300:
        return f"{short_repr(value)} is not valid"
    return error.message


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "null" if value is None else type(value).__name__


_KINDS = {"string": "a string", "integer": "an integer", "number": "a number",
          "boolean": "true or false", "array": "a list", "object": "an object", "null": "null"}
_PLURALS = {"a string": "strings", "an integer": "integers", "a number": "numbers",
            "an object": "objects", "a list": "lists"}


def accepted_values(schema: Any) -> str:
    """What ``schema`` accepts, in words (``a string of at most 500 characters``, ``a list of
    integers of 1 or more, or "all"``): the end of every schema refusal's message, so each says
    what would have been accepted whatever the field."""
    if not isinstance(schema, dict):
        return "any value"
    if "const" in schema:
        return json.dumps(schema["const"])
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(value) for value in schema["enum"])
    alternatives = schema.get("anyOf") or schema.get("oneOf")
    if alternatives:
        return ", or ".join(accepted_values(alternative) for alternative in alternatives)
    kinds = schema.get("type")
    if isinstance(kinds, list):
        return " or ".join(accepted_values({**schema, "type": kind}) for kind in kinds)
    if kinds == "string":
        return "a string" + _bounds(schema.get("minLength"), schema.get("maxLength"),
                                    "characters")
    if kinds in ("integer", "number"):
        return _KINDS[kinds] + _range(schema.get("minimum"), schema.get("maximum"))
    if kinds == "array":
        items = _plural(accepted_values(schema["items"])) if "items" in schema else ""
        text = f"a list of {items}" if items else "a list"
        count = _bounds(schema.get("minItems"), schema.get("maxItems"), "items")
        count = count.removeprefix(" of ").strip()
        notes = [note for note in (count, "no repeats" if schema.get("uniqueItems") else "")
                 if note]
        return text + (f" ({', '.join(notes)})" if notes else "")
    if kinds == "object":
        keys = list(schema.get("properties", {}))
        if keys and len(keys) <= 4 and schema.get("additionalProperties") is not False:
            return "an object holding " + " or ".join(repr(key) for key in keys)
        return "an object"
    return _KINDS.get(str(kinds), "any value")


def _plural(accepted: str) -> str:
    """``an integer of 1 or more`` → ``integers of 1 or more``; other phrases as they are
    (``one of "a", "b"`` → ``items that are one of "a", "b"``)."""
    for single, plural in _PLURALS.items():
        if accepted == single or accepted.startswith(f"{single} "):
            return plural + accepted[len(single):]
    return f"items that are {accepted}"


def _bounds(low: int | None, high: int | None, unit: str) -> str:
    if low and high is not None:
        return f" of {low:,} to {high:,} {unit}"
    if high is not None:
        return f" of at most {high:,} {unit}"
    if low:
        return f" of at least {low:,} {unit}"
    return ""


def _range(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f" from {low:g} to {high:g}"
    if low is not None:
        return f" of {low:g} or more"
    if high is not None:
        return f" of {high:g} or less"
    return ""


def render_kwargs(arguments: Mapping[str, Any], surface: Surface = "tool") -> dict[str, Any]:
    """Keyword arguments for ``renderers.api`` from validated tool/request arguments.

    Every option ``surface`` offers is passed through as given; the API coerces and checks it.
    """
    kwargs: dict[str, Any] = {"sources_pool": arguments.get("sources_pool")}
    for param in PARAMETERS:
        if param.offered_on(surface) and arguments.get(param.name) is not None:
            kwargs[param.name] = arguments[param.name]
    return kwargs


def error_envelope(exc: BaseException) -> dict[str, Any]:
    """``{ok: false, error: {code, message, where}}`` from an error's own code and field.

    Errors without a code are bugs (``internal_error``), except an operating-system error
    (the output directory cannot be written) and the two an input can cause in any library
    underneath: nesting too deep for the interpreter, and memory exhaustion.
    """
    if isinstance(exc, CodedError):
        return _error(exc.code, str(exc), exc.field)
    if isinstance(exc, OSError):  # the output directory cannot be created or written
        return _error(ErrorCode.WRITE_FAILED, f"cannot write the output ({exc})", "path")
    if isinstance(exc, MemoryError) and (cap := current_cap_mib()) is not None:
        # a render process under a memory cap (the MCP server's): the cap is what ran out
        return _error(ErrorCode.LIMIT_EXCEEDED, memory_exceeded(cap, "--max-worker-memory"),
                      "content")
    if isinstance(exc, RecursionError | MemoryError):
        return _error(
            ErrorCode.LIMIT_EXCEEDED,
            f"the input nests too deeply or is too large to process ({type(exc).__name__})",
            "",
        )
    return _error(ErrorCode.INTERNAL, f"{type(exc).__name__}: {short_repr(str(exc), 300)}", "")


def _error(code: ErrorCode, message: str, where: str) -> dict[str, Any]:
    # Messages may quote the input; a lone surrogate there would break every JSON encoder.
    return {
        "ok": False,
        "error": {"code": str(code), "message": clean_text(message), "where": clean_text(where)},
    }


# --- call_tool --------------------------------------------------------------------------------


def output_name(fmt: Format, name: str | None) -> str:
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


def tool_arguments(arguments: object) -> dict[str, Any]:
    """The arguments as a dict: a mapping, JSON text of an object, or None (no arguments).

    An argument whose value is null is left out: every tool argument is optional and LLMs
    often send null for one they do not use, which means what leaving it out means. Anything
    else raises :class:`OptionError` (``invalid_argument``) naming ``arguments`` (JSON text
    naming a key twice: ``arguments.`` and that key's path).
    """
    if arguments is None:
        return {}
    if isinstance(arguments, str | bytes | bytearray):
        try:
            arguments = json_keys.loads(arguments)
        except json_keys.DuplicateKeyError as exc:
            where = f"arguments.{exc.where}"
            raise OptionError(f"{where}: {exc.reason}", field=where) from None
        except (ValueError, RecursionError) as exc:  # bad JSON, bad UTF-8, 5,000-digit numbers
            reason = "nests too deeply" if isinstance(exc, RecursionError) else str(exc)
            raise OptionError(
                f"arguments are not valid JSON ({short_repr(reason, 200)}); expected a JSON "
                "object such as {\"content\": \"…\"}",
                field="arguments",
            ) from None
    if not isinstance(arguments, Mapping):
        raise OptionError(
            f"arguments must be an object (a mapping or its JSON text), not "
            f"{type(arguments).__name__}",
            field="arguments",
        )
    return {key: value for key, value in arguments.items() if value is not None}


def _write(fmt: Format, arguments: Mapping[str, Any], out_dir: Path) -> dict[str, Any]:
    from renderers.api import render

    name = output_name(fmt, arguments.get("path"))
    out_dir.mkdir(parents=True, exist_ok=True)
    # render() confines NAME to out_dir (symbolic links resolved) and records the artifact
    # in out_dir/sources_used.json; local images load from out_dir only.
    (result,) = render(
        _input(arguments), out_dir, name=name, formats=[fmt], **render_kwargs(arguments)
    )
    envelope: dict[str, Any] = result.to_envelope()
    if len(result.paths) > 1:
        envelope["paths"] = [str(p) for p in result.paths]
    return envelope


def _audit(arguments: Mapping[str, Any]) -> dict[str, Any]:
    from citations.audit import NOT_RENDERED_PLACES
    from renderers.audit import audit
    from renderers.options import read_options

    reading = read_options(arguments.get("content_format"), arguments.get("dialects"))
    report = audit(
        _input(arguments),
        arguments.get("sources_pool") or [],
        content_format=reading.content_format,
        dialects=reading.dialects,
    )
    data: dict[str, Any] = report.to_dict()
    warnings = [f"unknown sid {sid}" for sid in data.get("unknown_sids", [])]
    warnings += [
        f"line {tok.get('line')}: invalid citation {tok.get('text')!r}: {tok.get('reason')}"
        for tok in data.get("invalid_tokens", [])
    ]
    warnings += [f"sid {sid} cited inside code" for sid in data.get("in_code_sids", [])]
    warnings += [
        f"sid {sid} cited inside raw HTML (not a citation)"
        for sid in data.get("in_raw_html_sids", [])
    ]
    warnings += [
        f"sid {sid} is not cited where it stands ({NOT_RENDERED_PLACES})"
        for sid in data.get("not_rendered_sids", [])
    ]
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
    """The document: ``content``, or the raw ``answer`` (its JSON string parsed)."""
    if "answer" not in arguments:
        return arguments["content"]
    answer = arguments["answer"]
    if isinstance(answer, str):
        from citations.adapters import parse_answer

        return parse_answer(answer, "answer")
    return answer


def call_tool(name: object, arguments: object, *, out_dir: str | Path) -> dict[str, Any]:
    """Run tool ``name`` with ``arguments`` (a mapping or JSON text); files are written inside
    ``out_dir`` only. Always answers an envelope, never raises."""
    try:
        return _call(name, arguments, Path(out_dir))
    except Exception as exc:
        return error_envelope(exc)


def unknown_tool_message(name: object) -> str:
    """What a tool call naming no tool is told, on every surface: the tools there are."""
    return f"no tool {short_repr(name)}; tools: {', '.join(_SCHEMAS_BY_NAME)}"


def _call(name: object, arguments: object, out_dir: Path) -> dict[str, Any]:
    if not isinstance(name, str) or name not in _VALIDATORS:
        return _error(ErrorCode.UNKNOWN_TOOL, unknown_tool_message(name), "name")
    args = tool_arguments(arguments)
    if name in TOOL_FORMATS:  # the spec's words (``pages`` is PNG's), not "unknown field"
        refuse_unused({key: value for key, value in args.items()
                       if key in PARAMS and PARAMS[key].offered_on("tool")}, (TOOL_FORMATS[name],))
    problem = arguments_problem(args, _VALIDATORS[name], max_pool_rows=Limits().max_pool_rows)
    if problem is not None:  # a bad pool row: invalid_sources_pool, as the HTTP service says
        return error_envelope(problem)
    if ("content" in args) == ("answer" in args):
        where = "content" if "answer" not in args else "answer"
        return _error(ErrorCode.INVALID_ARGUMENT, _CONTENT_OR_ANSWER, where)
    if "\x00" in args.get("content", ""):
        return _error(ErrorCode.INVALID_ARGUMENT, "content holds a NUL character", "content")
    if name == "audit_citations":
        return _audit(args)
    return _write(TOOL_FORMATS[name], args, out_dir)
