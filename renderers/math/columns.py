"""An ``array``'s column specification (its preamble) → the letters latex2mathml (3.81) reads.

latex2mathml reads only ``l``, ``c``, ``r`` and ``|``: the array package's ``@{…}``, ``p{2cm}``
and ``*{3}{c}`` reached the formula as cell text ("@cc@") or failed it. Here a specification
becomes those letters:

- ``l``/``c``/``r`` stay; ``p{…}``, ``m{…}`` and ``b{…}`` (paragraph columns, top, middle or
  bottom) are read as ``l``: their width is dropped, their text set left as TeX sets it;
- ``*{n}{…}`` is expanded, at most :data:`MAX_COLUMNS` columns in all;
- ``|`` is taken out and counted at its place, before the first column, between two or
  after the last (``||`` counts two, more are read as two), and so is arydshln's ``:`` (a
  dashed rule; ``::`` two): :func:`array_columns` returns the rules at each edge, which
  :mod:`renderers.math.rules` puts on the table (latex2mathml's own ``columnlines`` counted
  an outer bar as the line after the first column);
- ``@{…}``, ``!{…}``, ``>{…}`` and ``<{…}`` that hold only spaces (``@{}``, ``@{\\,}``,
  ``!{\\quad}``) are **dropped**: they change only the space around a column, which the
  drawing sets as an ``array``'s. Ones holding anything else (``@{,}``, ``>{\\displaystyle}``)
  put material in every row that the table would lose, and are refused by name.
"""

from __future__ import annotations

import re

from renderers.math.errors import MathError
from renderers.math.groups import closing_bracket
from renderers.math.rules import Edge

#: Most columns one specification may expand to (``*{1000000}{c}`` is refused, not built).
MAX_COLUMNS = 64
#: What a specification may hold, for the refusal naming what it does not.
ACCEPTED = ("l, c, r, |, :, p{…}, m{…}, b{…}, *{n}{…}, and @{…}, !{…}, >{…}, <{…} holding only "
            "spaces")
_PARAGRAPH = frozenset("pmb")
_INSERTS = frozenset("@!><")
#: The spaces an inserted ``@{…}`` may hold: TeX's named spaces, kerns and skips with their
#: lengths, ``\\hspace{…}`` and ``\\hfill``.
_ONLY_SPACES = re.compile(
    r"(?:\s|\\[,:;! ]|\\(?:quad|qquad|enspace|thinspace|negthinspace|hfill|hfil)(?![A-Za-z])"
    r"|\\(?:hspace\*?|mspace)\s*\{\s*-?[\d.]+\s*[a-z]{2}\s*\}"
    r"|\\(?:hskip|kern|mkern|mskip)\s*-?[\d.]+\s*[a-z]{2}"
    r"|\\tabcolsep|\\arraycolsep)*"
)
_POSITION = re.compile(r"\s*\[\s*[tbc]\s*\]")
_SPECIFICATION = re.compile(r"\s*\{")


def array_columns(body: str) -> tuple[str, tuple[Edge, ...]]:
    """``body`` of an ``array`` (its placement ``[t]`` and specification first) with the
    specification as latex2mathml reads it (letters only) and the placement dropped, and the
    rules the specification draws at each of the columns' edges, left to right; raises
    :class:`MathError` naming what it cannot read."""
    position = _POSITION.match(body)
    start = position.end() if position else 0
    opening = _SPECIFICATION.match(body, start)
    if opening is None:
        raise MathError("array: no column specification (accepted: \\begin{array}{cc} …)")
    end = closing_bracket(body, opening.end() - 1)
    if end is None:
        raise MathError("array: the column specification's '{' has no closing brace")
    columns = _expanded(body[opening.end() : end], [0])
    letters = columns.replace("|", "").replace(":", "")
    if not letters:
        raise MathError("array: the column specification has no column (accepted: l, c, r …)")
    rules = tuple(Edge(min(len(bars), 2), bool(bars) and set(bars) == {":"})
                  for bars in re.split("[lcr]", columns))
    return "{" + letters + "}" + body[end + 1 :], rules


def _expanded(spec: str, count: list[int]) -> str:
    """``spec`` as letters and bars (``count`` holds the columns so far, bounded)."""
    out: list[str] = []
    index = 0
    while index < len(spec):
        char = spec[index]
        index += 1
        if char.isspace():
            continue
        if char in "lcr" or char in _PARAGRAPH:
            count[0] += 1
            if count[0] > MAX_COLUMNS:
                raise MathError(f"array: more than {MAX_COLUMNS} columns")
            out.append("l" if char in _PARAGRAPH else char)
            if char in _PARAGRAPH:
                _, index = _argument(spec, index, char)
        elif char in "|:":
            out.append(char)
        elif char in _INSERTS:
            inserted, index = _argument(spec, index, char)
            if not _ONLY_SPACES.fullmatch(inserted):
                raise MathError(f"array: the column specification's '{char}{{{inserted}}}' "
                                "puts material in each row, which is not supported (accepted: "
                                f"{ACCEPTED})")
        elif char == "*":
            times, index = _argument(spec, index, char)
            repeated, index = _argument(spec, index, char)
            if not times.strip().isdigit():
                raise MathError(f"array: '*{{{times}}}' repeats a column a number of times; "
                                f"'{times}' is no number")
            for _ in range(int(times)):  # each round adds a column or fails: bounded
                before = count[0]
                out.append(_expanded(repeated, count))
                if count[0] == before:  # ``*{n}{|}``: rules only, read once
                    break
        else:
            raise MathError(f"array: the column specification's '{char}' cannot be read "
                            f"(accepted: {ACCEPTED})")
    return "".join(out)


def _argument(spec: str, index: int, command: str) -> tuple[str, int]:
    """The ``{…}`` argument of the specification's ``command`` at ``index``, and the index
    past it."""
    while index < len(spec) and spec[index].isspace():
        index += 1
    end = closing_bracket(spec, index) if spec.startswith("{", index) else None
    if end is None:
        raise MathError(f"array: the column specification's '{command}' takes a {{…}} argument")
    return spec[index + 1 : end], end + 1
