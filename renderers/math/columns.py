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
- ``>{\\displaystyle}`` (or another math style) before a column sets each of its cells in
  that style: :func:`array_columns` returns each column's style, which
  :mod:`renderers.math.normalise` puts at the start of its cells;
- ``@{…}``, ``!{…}``, ``>{…}`` and ``<{…}`` that hold only spaces (``@{}``, ``@{\\,}``,
  ``!{\\quad}``) are **dropped**: they change only the space around a column, which the
  drawing sets as an ``array``'s; but an ``@{…}`` before the first column or after the last
  (inside an outer rule) takes the place of the space TeX leaves there (``\\arraycolsep``),
  so its width is returned as that side's margin (``@{}``: none), which the drawing keeps.
  Ones holding anything else (``@{,}``, ``>{\\displaystyle}``) put material in every row
  that the table would lose, and are refused by name.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from renderers.math.errors import MathError
from renderers.math.groups import closing_bracket
from renderers.math.rules import Edge

#: Most columns one specification may expand to (``*{1000000}{c}`` is refused, not built).
MAX_COLUMNS = 64
#: What a specification may hold, for the refusal naming what it does not.
ACCEPTED = ("l, c, r, |, :, p{…}, m{…}, b{…}, *{n}{…}, >{\\displaystyle} (or another math "
            "style), and @{…}, !{…}, >{…}, <{…} holding only spaces")
#: A math style a ``>{…}`` may set for a column's cells.
_STYLE = re.compile(r"\s*\\(displaystyle|textstyle|scriptstyle|scriptscriptstyle)\s*")
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
#: One space of :data:`_ONLY_SPACES` with its width: a named one, or a length and its unit.
_SPACE = re.compile(
    r"\\(?P<named>[,:;! ]|quad|qquad|enspace|thinspace|negthinspace|tabcolsep|arraycolsep)"
    r"(?![A-Za-z])|(?P<sign>-?)(?P<number>\d+\.?\d*|\.\d+)\s*(?P<unit>[a-z]{2})")
#: The widths of TeX's named spaces and of its units, in em at 10 pt (``\\ `` is Computer
#: Modern's word space; ``ex`` its x-height; ``mu`` an 18th of the math em).
_NAMED = {",": 3 / 18, ":": 4 / 18, ";": 5 / 18, "!": -3 / 18, " ": 0.333, "quad": 1.0,
          "qquad": 2.0, "enspace": 0.5, "thinspace": 1 / 6, "negthinspace": -1 / 6,
          "tabcolsep": 0.6, "arraycolsep": 0.5}
_UNITS = {"em": 1.0, "ex": 0.431, "mu": 1 / 18, "pt": 0.1, "bp": 0.1004, "pc": 1.2,
          "mm": 0.2845, "cm": 2.845, "in": 7.227}
_POSITION = re.compile(r"\s*\[\s*[tbc]\s*\]")
_SPECIFICATION = re.compile(r"\s*\{")


class ArrayColumns(NamedTuple):
    """What an ``array``'s specification says, read by :func:`array_columns`."""

    #: The body with the specification as latex2mathml reads it (letters only).
    body: str
    #: The rules at each of the columns' edges, left to right.
    rules: tuple[Edge, ...]
    #: The space an ``@{…}`` puts before the first column and after the last (em; None: none
    #: there, TeX's ``\\arraycolsep``).
    margins: tuple[float | None, float | None]
    #: Each column's math style from a ``>{…}`` (``displaystyle``), or None.
    styles: tuple[str | None, ...]


def array_columns(body: str) -> ArrayColumns:
    """``body`` of an ``array`` (its placement ``[t]`` and specification first) read: see
    :class:`ArrayColumns` (the placement dropped); raises :class:`MathError` naming what it
    cannot read."""
    position = _POSITION.match(body)
    start = position.end() if position else 0
    opening = _SPECIFICATION.match(body, start)
    if opening is None:
        raise MathError("array: no column specification (accepted: \\begin{array}{cc} …)")
    end = closing_bracket(body, opening.end() - 1)
    if end is None:
        raise MathError("array: the column specification's '{' has no closing brace")
    widths: list[float] = []
    set_styles: list[str] = []
    columns = _expanded(body[opening.end() : end], [0], widths, set_styles)
    styles: list[str | None] = []
    style: str | None = None
    taken = 0
    for char in columns:
        if char == ">":
            style, taken = set_styles[taken], taken + 1
        elif char in "lcr":
            styles.append(style)
            style = None
    letters = re.sub("[^lcr]", "", columns)
    if not letters:
        raise MathError("array: the column specification has no column (accepted: l, c, r …)")
    between = re.split("[lcr]", columns)
    rules = tuple(Edge(min(len(bars), 2), bool(bars) and set(bars) == {":"})
                  for bars in (re.sub("[@>]", "", group) for group in between))
    # an @{…} between an outer rule and the column (``|@{}c``): one outside it changes no
    # space the drawing has
    inner = re.split("[|:]", between[0])[-1].count("@")
    before = between[0].count("@")
    outer = between[-1].count("@")
    after = re.split("[|:]", between[-1])[0].count("@")
    start = len(widths) - outer
    margins = (sum(widths[before - inner : before]) if inner else None,
               sum(widths[start : start + after]) if after else None)
    return ArrayColumns("{" + letters + "}" + body[end + 1 :], rules, margins, tuple(styles))


def _space_width(spaces: str) -> float:
    """How wide (em) the spaces of an inserted ``@{…}`` are (``\\hfill`` none)."""
    width = 0.0
    for found in _SPACE.finditer(spaces):
        if found.group("named") is not None:
            width += _NAMED[found.group("named")]
        elif found.group("unit") in _UNITS:
            sign = -1.0 if found.group("sign") else 1.0
            width += sign * float(found.group("number")) * _UNITS[found.group("unit")]
    return width


def _expanded(spec: str, count: list[int], widths: list[float], styles: list[str]) -> str:
    """``spec`` as letters, bars, ``@`` for each inserted ``@{…}``, whose width is added to
    ``widths``, and ``>`` for each ``>{…}`` setting a style, added to ``styles`` (``count``
    holds the columns so far, bounded)."""
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
            style = _STYLE.fullmatch(inserted) if char == ">" else None
            if style is not None:
                out.append(">")
                styles.append(style.group(1))
            elif not _ONLY_SPACES.fullmatch(inserted):
                raise MathError(f"array: the column specification's '{char}{{{inserted}}}' "
                                "puts material in each row, which is not supported (accepted: "
                                f"{ACCEPTED})")
            if char == "@":
                out.append("@")
                widths.append(_space_width(inserted))
        elif char == "*":
            times, index = _argument(spec, index, char)
            repeated, index = _argument(spec, index, char)
            if not times.strip().isdigit():
                raise MathError(f"array: '*{{{times}}}' repeats a column a number of times; "
                                f"'{times}' is no number")
            for _ in range(int(times)):  # each round adds a column or fails: bounded
                before = count[0]
                out.append(_expanded(repeated, count, widths, styles))
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
