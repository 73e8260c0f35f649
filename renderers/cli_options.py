"""The ``citerender render`` options, generated from the option spec (:mod:`renderers.options`).

Every option the spec offers to the CLI becomes one typer option (``--field-name`` unless the
spec names its flags), grouped in help panels by the formats that use it; every field of
:class:`~renderers.options.Limits` becomes a ``--max-…`` option. :func:`api_kwargs` turns the
values given on the command line back into keyword arguments of
:func:`renderers.api.render_file`,
:func:`flag_for` names the flag of an option an error points at, and :func:`flag_typed` is how
the command line names an option in the API's ``option-unused`` notes.
"""

from __future__ import annotations

import inspect
from collections.abc import Container, Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from renderers.formats import FORMATS
from renderers.options import LIMIT_PARAMETERS, PARAMETERS, Param, ReadingOptions

LIMITS_PANEL = "Limits"


def flags(param: Param) -> tuple[str, ...]:
    """The command-line flags of ``param`` (``--page-size``, or the spec's own)."""
    return param.info.cli_flags or ("--" + param.name.replace("_", "-"),)


def negative_flag(param: Param) -> str | None:
    """``--no-source-footer`` for a flag on by default (how it is turned off), else None."""
    if param.kind == "flag" and param.default is True:
        return "--no-" + flags(param)[0].removeprefix("--")
    return None


def flag_for(field: str, value: object = None) -> str | None:
    """The flag of the option an error's ``field`` names (``limits.max_pages`` → --max-pages),
    as the user typed it: ``value`` False for a flag on by default was given as its ``--no-``
    form, and a message naming ``--source-footer`` would point at a flag nobody typed."""
    name = field.removeprefix("limits.")
    for param in (*PARAMETERS, *LIMIT_PARAMETERS):
        if param.name == name and param.offered_on("cli"):
            negative = negative_flag(param)
            return negative if negative and value is False else flags(param)[0]
    return None


def flag_typed(name: str, value: object) -> str:
    """The command line's :data:`~renderers.options.OptionNaming`: the flag as typed
    (``--no-source-footer``, ``--pages``), which the API's notes then name rather than the
    option (``source_footer``) nobody typed here; an option with no flag keeps its name."""
    return flag_for(name, value) or name


def _panel(param: Param) -> str | None:
    if param.owner is ReadingOptions:
        return "Reading"
    if len(param.info.formats) == len(FORMATS):
        return "Document"
    if len(param.info.formats) == 1:
        return f"{param.info.formats[0].upper()} output"
    return "Document"


def _help(param: Param) -> str:
    text = param.help
    if len(param.info.formats) < len(FORMATS):
        text += f" [dim]({', '.join(param.info.formats)})[/dim]"
    if param.kind == "choices":
        text += f" Comma-separated: {', '.join(param.choices)}."
    low, high = param.info.minimum, param.info.maximum
    if param.kind == "integer" and low is not None:
        text += f" [dim][{low}..{high}][/dim]" if high is not None else f" [dim][>={low}][/dim]"
    return text


def _metavar(param: Param) -> str | None:
    """The spec's metavar; a choice shows its values and aliases (``<A4|Letter>``)."""
    if param.info.metavar:
        return param.info.metavar
    if param.kind == "choice":
        return "<" + "|".join((*param.choices, *param.info.aliases)) + ">"
    return None


def typer_option(param: Param, panel: str | None = None) -> Any:
    """The ``typer.Option`` for ``param`` (``Annotated`` metadata).

    Ranges and choices are not given to click: the spec checks them (``check_options`` in
    :mod:`renderers.cli`), so a bad value is refused in the spec's own words, as ``--pages``
    and every other surface refuse it (``--dpi: dpi=5: accepted range is 10..600``)."""
    names = flags(param)
    negative = negative_flag(param)
    if negative:
        names = (f"{names[0]}/{negative}", *names[1:])
    extra: dict[str, Any] = {}
    metavar = _metavar(param)
    if metavar:
        extra["metavar"] = metavar
    return typer.Option(*names, help=_help(param), rich_help_panel=panel or _panel(param), **extra)


def _python_type(param: Param) -> Any:
    if param.kind == "choice":  # checked by the spec; the metavar shows the values
        return str | None if param.optional else str
    return {
        "flag": bool,
        "integer": int,
        "path": Path | None,
    }.get(param.kind, str | None)


def _default(param: Param) -> Any:
    if param.kind in ("flag", "integer"):
        return param.default
    if param.kind == "choice" and not param.optional:
        return param.default
    if param.kind == "text" and param.default:
        return param.default
    return None  # not given: the API's default applies


def parameters() -> list[inspect.Parameter]:
    """Keyword parameters of the render command: the spec's CLI options, then the limits."""
    out = []
    for param in PARAMETERS:
        if param.offered_on("cli") and param.kind != "limits":
            annotation = Annotated[_python_type(param), typer_option(param)]  # type: ignore[valid-type]
            out.append(
                inspect.Parameter(
                    param.name,
                    inspect.Parameter.KEYWORD_ONLY,
                    default=_default(param),
                    annotation=annotation,
                )
            )
    if PARAMETERS_BY_NAME["limits"].offered_on("cli"):
        for param in LIMIT_PARAMETERS:
            annotation = Annotated[int, typer_option(param, LIMITS_PANEL)]
            out.append(
                inspect.Parameter(
                    param.name,
                    inspect.Parameter.KEYWORD_ONLY,
                    default=param.default,
                    annotation=annotation,
                )
            )
    return out


PARAMETERS_BY_NAME: dict[str, Param] = {p.name: p for p in PARAMETERS}


def given_options(context: typer.Context) -> set[str]:
    """The parameters of the running command set on its command line (or from the
    environment), not filled in by click from their defaults."""
    sources = {name: context.get_parameter_source(name) for name in context.params}
    return {
        name for name, source in sources.items()
        if source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")
    }


def api_kwargs(values: Mapping[str, Any], given: Container[str]) -> dict[str, Any]:
    """Keyword arguments of the API from the parsed render options: those in ``given``
    (:func:`given_options`); the others are the API's defaults, which a render must not mistake
    for the caller's choice (``--dpi``'s 110 with ``--to pdf``)."""
    kwargs: dict[str, Any] = {}
    for param in PARAMETERS:
        value = values.get(param.name)
        if (param.offered_on("cli") and param.kind != "limits" and value is not None
                and param.name in given):
            kwargs[param.name] = value
    limits = {p.name: values[p.name] for p in LIMIT_PARAMETERS if values.get(p.name) is not None}
    if limits and PARAMETERS_BY_NAME["limits"].offered_on("cli"):
        kwargs["limits"] = limits
    return kwargs
