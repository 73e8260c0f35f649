"""``citerender pool``: a persistent sources registry from the command line.

``pool add POOL TOOL_OUTPUT.json [--tool web_search]`` turns a tool's output into rows
(:func:`citations.extractors.extract_sources`) — or takes the sources of a provider's answer —
registers them (:class:`citations.registry.SourceRegistry`) and prints the sid map;
``pool show POOL [SELECTOR]`` prints the SOURCES POOL block a model is prompted with
(:func:`citations.prompt.sources_prompt_block`). Exit codes as for every command: 0 done, 2 bad
input (one line, no traceback).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from renderers.cli_errors import BadInput, fail, reading

POOL_EXAMPLES = """[bold]Examples[/bold]

  [cyan]citerender pool add conv/pool.json search.json --tool web_search[/cyan]
  [cyan]citerender pool add conv/timeline.json fetch.json --tool fetch --json[/cyan]
  [cyan]citerender pool add conv/pool.json answer.json[/cyan]     an OpenAI/Anthropic/… answer
  [cyan]citerender pool show conv/pool.json "so:sources_pool[1-5]"[/cyan]
"""

pool_app = typer.Typer(
    name="pool",
    help="A persistent sources pool: register tool outputs into it, show it as a prompt block.",
    no_args_is_help=True,
    rich_markup_mode="rich",
    epilog=POOL_EXAMPLES,
)


def _read_output(path: str) -> Any:
    """The tool output in ``path`` (``-`` = standard input): JSON when it is a ``.json`` file or
    starts with ``{`` or ``[``, else text. JSON that does not parse is a :class:`BadInput` saying
    so, with its line and column: read as text it only ever gave "no sources found"."""
    from citations.chars import encoding_shown, text_encoding
    from citations.json_keys import loads

    raw = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    encoding = text_encoding(raw)
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise BadInput(path, f"not valid {encoding_shown(encoding)} (byte {exc.start}); "
                       "save the file as UTF-8") from None
    stripped = text.strip()
    if stripped.startswith(("{", "[")) or path.lower().endswith(".json"):
        try:
            return loads(text)  # the whole text: line and column as in the file
        except json.JSONDecodeError as exc:
            raise BadInput(
                path, f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
                "accepted: a tool's JSON output, or plain text in a file not named .json"
            ) from None
    return text


def _rows(output: Any, tool: str | None, where: str) -> tuple[list[dict[str, Any]], str]:
    """Rows to register and where they came from (an extractor, or an answer's adapter)."""
    from citations.adapters import adapt, detect
    from citations.extractors import extract_sources

    if tool is None:
        found = detect(output)
        if found is not None and found.kind != "sidecar":
            adapted = adapt(output, provider=found.kind)
            return [s.to_dict() for s in adapted.sources], found.shape
        is_mcp = isinstance(output, dict) and ("content" in output or "structuredContent" in output)
        tool = "mcp" if is_mcp else "web_search"
    rows = extract_sources(tool, output)
    if not rows:
        raise BadInput(where, f"no sources found in the output of tool {tool!r}")
    return rows, f"tool {tool!r}"


@pool_app.command("add", epilog=POOL_EXAMPLES)
def add(
    pool: Annotated[Path, typer.Argument(metavar="POOL", help="Registry file (JSON; created).")],
    output: Annotated[
        str,
        typer.Argument(metavar="TOOL_OUTPUT", help="Tool output (JSON or text; - = stdin)."),
    ],
    tool: Annotated[
        str | None,
        typer.Option("--tool", metavar="NAME", help="Tool that produced the output (picks the "
                     "extractor; default: an answer's own sources, else web_search / mcp)."),
    ] = None,
    near: Annotated[
        bool, typer.Option("--near-duplicates", help="Report sources whose text matches one "
                           "already registered under another URL.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Register the sources in TOOL_OUTPUT into POOL and print the sid map."""
    from citations.registry import SourceRegistry

    try:
        with reading(output):
            data = _read_output(output)
            rows, origin = _rows(data, tool, output)
        with reading(str(pool)):
            result = SourceRegistry(pool, near_duplicates=near).register(rows)
    except BadInput as exc:
        raise fail(exc.where, exc.message, exc.code) from None
    if as_json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
        return
    added = set(result.added)
    print(f"{len(rows)} source(s) from {origin} → {pool}")
    for local, sid in result.sid_map.items():
        state = "new" if sid in added else "enriched" if sid in result.enriched else "known"
        print(f"  {local} → {sid} ({state})")
    for dup in result.near_duplicates:
        print(
            f"citerender: warning: {pool}: sid {dup.sid} reads like sid {dup.similar_to} "
            f"({dup.distance} of 64 bits apart) under another URL; kept apart",
            file=sys.stderr,
        )


@pool_app.command("show", epilog=POOL_EXAMPLES)
def show(
    pool: Annotated[Path, typer.Argument(metavar="POOL", help="Registry or any pool file.")],
    selector: Annotated[
        str | None,
        typer.Argument(metavar="SELECTOR", help='Which sources, e.g. "so:sources_pool[1-5]".'),
    ] = None,
    snippet: Annotated[
        int, typer.Option("--snippet-chars", min=0, max=100_000, help="Snippet under each line.")
    ] = 0,
) -> None:
    """Print POOL (or the SELECTOR's sources) as the SOURCES POOL prompt block."""
    from citations.pool import SourcePool
    from citations.prompt import sources_prompt_block

    try:
        with reading(str(pool)):
            sources = SourcePool.load(pool)
            sids = [s.sid for s in sources.select(selector)] if selector else None
    except BadInput as exc:
        raise fail(exc.where, exc.message, exc.code) from None
    print(sources_prompt_block(sources, sids=sids, snippet_chars=snippet), end="")
