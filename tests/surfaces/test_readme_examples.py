"""The documentation's examples work as written: a newcomer copies them literally.

Every ``citerender …`` command in README.md's and docs/*.md's shell blocks and in the CLI's own
help examples uses only flags its subcommand has; every JSON a reader is told to send or paste
parses (a ``curl -d`` body, an MCP client config); and README.md's Python blocks either run here
as written, with the names they leave to the reader defined in a prelude, or are listed with the
reason they cannot (a provider's SDK, a live model).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main

from renderers import cli

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
MARKUP = re.compile(r"\[/?[a-z ]+\]")


def fenced(path: Path, lang: str) -> list[str]:
    return [body for found, body in FENCE.findall(path.read_text("utf-8")) if found == lang]


def commands() -> dict[tuple[str, ...], Any]:
    """Each (sub)command path, ``("pool", "add")``, with its click command."""
    found: dict[tuple[str, ...], Any] = {}

    def walk(command: Any, path: tuple[str, ...]) -> None:
        found[path] = command
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, (*path, name))

    walk(typer.main.get_command(cli.app), ())
    return found


def unfolded(text: str) -> str:
    """``text`` with the shell's line continuations removed: a backslash-newline outside single
    quotes, where the shell keeps it as two characters."""
    out, quote, i = [], "", 0
    while i < len(text):
        char = text[i]
        if char == "\\" and quote != "'":
            if text[i + 1:i + 2] != "\n":
                out.append(text[i:i + 2])
            i += 2
            continue
        if char in "'\"" and quote in ("", char):
            quote = "" if quote else char
        out.append(char)
        i += 1
    return "".join(out)


def shell_lines(text: str) -> Iterator[str]:
    """The commands of a shell block: continuation lines joined, a quoted argument that spans
    lines (a JSON body) kept whole."""
    held = ""
    for line in unfolded(text).splitlines():
        held = f"{held}\n{line}" if held else line
        try:
            shlex.split(held, comments=True)
        except ValueError:  # a quote still open: the command goes on
            continue
        if held.strip() and not held.lstrip().startswith("#"):
            yield held
        held = ""
    assert not held, f"unclosed quote in {held!r}"


def help_examples() -> Iterator[tuple[str, str]]:
    """(subcommand, command line) of each cyan example in the CLI's help epilogs."""
    for path, command in commands().items():
        for example in re.findall(r"\[cyan\](.*?)\[/cyan\]", command.epilog or "", re.DOTALL):
            yield " ".join(path) or "citerender", MARKUP.sub("", example)


def documented_commands() -> Iterator[tuple[str, str]]:
    for doc in DOCS:
        for block in fenced(doc, "sh"):
            for line in shell_lines(block):
                yield doc.name, line
    for where, line in help_examples():
        for joined in shell_lines(line):
            yield f"--help of {where}", joined


def citerender_argv(line: str) -> list[str] | None:
    words = shlex.split(line, comments=True)
    for start, word in enumerate(words):
        if word.endswith("citerender") and (start == 0 or words[start - 1] != "|"):
            return words[start + 1:]
    return None


def test_every_documented_command_uses_flags_its_subcommand_has() -> None:
    known = commands()
    wrong = []
    seen = 0
    for where, line in documented_commands():
        argv = citerender_argv(line)
        if argv is None:
            continue
        seen += 1
        path: tuple[str, ...] = ()
        while argv and (*path, argv[0]) in known:
            path, argv = (*path, argv[0]), argv[1:]
        assert path, f"{where}: {line!r} names no subcommand"
        params = known[path].params
        flags = {opt for param in params for opt in (*param.opts, *param.secondary_opts)}
        wrong += [f"{where}: {flag} in {line!r}" for flag in argv
                  if flag.startswith("-") and flag.split("=")[0] not in flags]
    assert seen >= 25  # the README's command table, the help examples and docs/scaling.md
    assert not wrong, wrong


def curl_bodies() -> Iterator[tuple[str, str]]:
    for where, line in documented_commands():
        if line.lstrip().startswith("curl"):
            words = shlex.split(line, comments=True)
            yield from ((where, words[i + 1]) for i, w in enumerate(words) if w in ("-d", "--data"))


def test_every_documented_request_body_and_config_is_json() -> None:
    """The serve help's curl body held a backslash-newline inside single quotes, which the shell
    keeps: the service answered 400 'the body is not valid JSON'."""
    bodies = list(curl_bodies())
    assert {where for where, _ in bodies} >= {"README.md", "--help of serve"}
    configs = [("README.md", block) for block in fenced(ROOT / "README.md", "json")]
    broken = []
    for where, text in bodies + configs:
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            broken.append(f"{where}: {exc} in {text!r}")
    assert not broken, broken


# ---------------------------------------------------------------- README.md's Python blocks

POOL = [{"sid": 1, "title": "Lazard LCOE+", "url": "https://www.lazard.com/"},
        {"sid": 2, "title": "10-Q", "url": "https://sec.gov/x"}]
SEARCH = {"results": [{"url": "https://www.iea.org/reports/weo", "title": "WEO 2024",
                       "content": "Solar grew."}]}

#: First line of a block → the names it leaves to the reader, as Python run before it.
RUN = {
    "from renderers import write_pdf, render": (
        "markdown = '# Q3\\n\\nRevenue grew.[[S:2]]\\n'\nrows = POOL\n"),
    "from renderers.tools import TOOL_SCHEMAS, call_tool": (
        "from types import SimpleNamespace as NS\n"
        "tool_call = NS(function=NS(name='write_markdown', arguments='{\"content\": \"x\"}'))\n"),
    "from citations.tokens import scan, remap_tokens, strip_tokens": (
        "text = 'Solar is cheapest.[[S:1]]'\n"),
    "from citations.pool import SourcePool": (
        "import yaml\nPath('sources.yaml').write_text(yaml.safe_dump(POOL))\n"
        "subagent_rows = [{'sid': 1, 'url': 'https://irena.org/x', 'title': 'IRENA'}]\n"),
    "from citations.streaming import StreamRewriter\nrw = StreamRewriter(\"html\")": (
        "sent = []\nsend = sent.append\nllm_stream = ['Solar [[S:', '1]] grew.']\n"),
    "from citations.extractors import extract_sources": (
        "search_output = SEARCH\nPath('conv').mkdir()\n"),
}
#: First line of a block → why it is not run here.
NOT_RUN = {
    "from openai import OpenAI": "calls the OpenAI or Perplexity API (recorded answers: "
                                 "tests/fixtures/answers)",
    "import anthropic": "calls the Anthropic API",
    "from google import genai": "calls the Gemini API",
    "from renderers import write_pdf\n\nai_message": "needs a LangChain model and chain",
    "from llama_index.core": "needs a LlamaIndex index",
    "rw = StreamRewriter(\"html\", sources_pool": "streams from a live provider",
    "from pathlib import Path\nfrom renderers.testing": "a test module of the reader's own "
                                                        "(tests/surfaces/test_pytest_plugin.py)",
}


def python_blocks() -> list[str]:
    return fenced(ROOT / "README.md", "python")


def key(block: str, table: dict[str, str]) -> str | None:
    return next((first for first in table if block.startswith(first)), None)


def test_every_python_block_is_run_or_says_why_not() -> None:
    unclassified = [block.splitlines()[0] for block in python_blocks()
                    if key(block, RUN) is None and key(block, NOT_RUN) is None]
    assert not unclassified, unclassified


#: Blocks that render PDF and PNG (seconds): run by ``make test``, not the fast loop.
SLOW = {"from renderers import write_pdf, render"}


@pytest.mark.parametrize("first", [
    pytest.param(first, id=first.split("\n")[0][:40],
                 marks=[pytest.mark.slow] if first in SLOW else [])
    for first in RUN
])
def test_a_python_block_runs_as_written(
    first: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (block,) = [block for block in python_blocks() if block.startswith(first)]
    monkeypatch.chdir(tmp_path)
    Path("pool.json").write_text(json.dumps(POOL), encoding="utf-8")
    names: dict[str, Any] = {"POOL": POOL, "SEARCH": SEARCH, "Path": Path}
    exec(compile(RUN[first], "<prelude>", "exec"), names)
    exec(compile(block, "README.md", "exec"), names)
    envelope = names.get("result")
    if first.startswith("from renderers import write_pdf"):
        assert envelope.to_envelope()["ok"] is True
        assert [r.path.name for r in names["results"]] == [
            "report.pdf", "report.png", "report.docx", "report.md"]
    if "sent" in names:
        assert "".join(names["sent"]).startswith('Solar <sup class="cite" data-sids="1">')
