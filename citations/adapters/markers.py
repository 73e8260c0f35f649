"""Numbered citation markers written into an answer's text: ``[1]``, ``[1][2]``, ``[1, 3]``.

Perplexity and LlamaIndex's CitationQueryEngine write their citations this way, numbering the
sources they list from 1. A run of adjacent markers is one citation; markers inside code, in
link syntax (``[1](…)``, ``[1]: …``) or after ``]`` (a reference link ``[text][1]``) are text.
The space before a marker goes with it, so the token hangs on the last word (``claim [1].``
becomes ``claim[[S:…]].``).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

from citations.adapters.base import Draft, Piece, settle
from citations.codemap import markdown_code_spans
from citations.urls import normalize_url

_GROUP = r"\[\s{0,2}\d{1,4}(?:\s{0,2},\s{0,2}\d{1,4}){0,50}\s{0,2}\]"
#: A marker the model made a link to its source, ``[1](https://…)`` (a URL may hold balanced
#: parentheses one level deep, as a CommonMark destination may). A run of them takes no
#: lookahead: one that fails at the run's end would be retried from every marker (quadratic).
_LINKED = r"\[\d{1,4}\]\((?:[^()\[\]\s]|\([^()\[\]\s]*\)){1,2000}\)"
_RUN = re.compile(rf"(?<![\]!\\])(?:(?:{_LINKED})+|(?:{_GROUP})+(?![(\[:]))")
_GROUP_RE = re.compile(_GROUP)
_LINKED_RE = re.compile(r"\[(\d{1,4})\]\((.*?)\)(?=\[|$)")


def replace_markers(
    draft: Draft,
    text: str,
    refs: dict[int, int],
    path: str,
    url_of: Callable[[int], str | None] | None = None,
) -> list[Piece]:
    """``text`` with each run of markers turned into a citation of the sources ``refs`` gives
    for its numbers (the answer's numbers → local numbers, or any numbers ``url_of`` knows:
    default, the collector's). A number ``refs`` lacks stays as text, with a warning naming
    ``path``. A run of linked markers, ``[1](url)``, is a citation when every link goes to its
    source's URL, and stays a link otherwise."""
    code = sorted(markdown_code_spans(text)) if _RUN.search(text) else []
    starts = [start for start, _ in code]
    pieces: list[Piece] = []
    cursor = 0
    for run in _RUN.finditer(text):
        start, end = run.span()
        index = bisect.bisect_right(starts, start) - 1
        if index >= 0 and code[index][0] <= start < code[index][1]:
            continue
        numbers: list[int] = []
        unknown: list[str] = []
        if run.group().endswith(")"):
            numbers = _linked_sources(url_of or draft.collector.url_of, run.group(), refs)
            if not numbers:
                continue
        for group in [] if numbers else _GROUP_RE.finditer(run.group()):
            values = [int(v) for v in re.findall(r"\d+", group.group())]
            missing = [v for v in values if v not in refs]
            if missing:
                unknown.append(group.group())
                draft.warnings.append(
                    f"{path}: marker {group.group()} names no listed source "
                    f"({len(refs)} listed); left as text"
                )
                continue
            numbers += [refs[v] for v in values if refs[v] not in numbers]
        if not numbers:
            continue
        cut = start
        before = text[cursor:cut]
        if len(before) >= 2 and before[-1] in " \t\u00a0" and not before[-2].isspace():
            cut -= 1
        moved = ""
        inside = settle(text, cursor, cut)
        if text[inside:cut].strip() == "|":  # after a row's closing pipe: into its last cell
            cut, moved = inside, text[inside:cut].rstrip()
        if cut > cursor:
            pieces.append(text[cursor:cut])
        pieces.append(tuple(numbers))
        if moved:
            pieces.append(moved)
        if unknown:
            pieces.append("".join(unknown))
        cursor = end
    if cursor < len(text):
        pieces.append(text[cursor:])
    return pieces


def _linked_sources(
    url_of: Callable[[int], str | None], run: str, refs: dict[int, int]
) -> list[int]:
    """The local sources a run of linked markers cites, or ``[]`` when a link goes elsewhere
    than its number's source (then it is the model's own link, kept)."""
    numbers: list[int] = []
    for found in _LINKED_RE.finditer(run):
        number = refs.get(int(found.group(1)))
        if number is None:
            return []
        url = url_of(number)
        if url is None or normalize_url(url) != normalize_url(found.group(2)):
            return []
        if number not in numbers:
            numbers.append(number)
    return numbers
