"""TeX as agents write it → TeX that latex2mathml (3.81) reads as they meant it.

latex2mathml knows a handful of table environments (the matrix family, ``array``, ``cases``,
``split``, ``align``/``align*``); any other ``\\begin{…}`` it reads as a plain group, so the
``&`` of ``aligned`` reached the MathML raw (a refusal) and the rows of ``gather`` were run
into one line. Here every environment is either rewritten to one it reads as a table (the
:data:`REWRITES`), unwrapped (``equation``: no table inside), kept (:data:`NATIVE`) or refused
by name. A few commands are rewritten too (:func:`normalise`), each for a slip of the converter
noted where it is fixed. The result is only ever handed to latex2mathml: the source a reader
quotes and the annotation of the MathML stay as written.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from renderers.math import intertext, siunitx
from renderers.math.columns import array_columns
from renderers.math.errors import MathError
from renderers.math.groups import BEGIN_OR_END, closing_bracket, table_marks
from renderers.math.mhchem import expand as expand_chemistry
from renderers.math.rules import marked, row_rules

#: Environments latex2mathml itself reads as tables (a starred matrix is read as its plain form).
NATIVE = frozenset({
    "matrix", "pmatrix", "bmatrix", "Bmatrix", "vmatrix", "Vmatrix", "smallmatrix", "array",
    "cases", "split", "align", "align*",
    *(f"{name}*" for name in ("matrix", "pmatrix", "bmatrix", "Bmatrix", "vmatrix", "Vmatrix")),
})
#: Environments other than ``array`` whose ``\hline``s are drawn (:mod:`renderers.math.rules`).
RULED = frozenset(name for name in NATIVE if name.endswith(("matrix", "matrix*")))
#: Environments that only mark a displayed formula: their body is the formula.
UNWRAPPED = frozenset({"equation", "equation*", "displaymath", "math"})


@dataclass(frozen=True)
class Rewrite:
    """How an environment is written for latex2mathml: what replaces ``\\begin{…}`` and
    ``\\end{…}``, whether each cell is set in display style (what the environment does in TeX
    and an ``array`` does not), and the argument it takes that nothing here needs."""

    begin: str
    end: str
    display_cells: bool = False
    argument: re.Pattern[str] | None = None


_POSITION = re.compile(r"^\s*\[[tbc]\]")  # ``aligned[t]``: placement in the line
_COLUMNS = re.compile(r"^\s*\{\s*\d+\s*\}")  # ``alignedat{2}``: pairs of columns
_ALIGN_STAR = Rewrite(r"\begin{align*}", r"\end{align*}", argument=_POSITION)
_CENTRED = Rewrite(r"\begin{array}{c}", r"\end{array}", display_cells=True, argument=_POSITION)

#: Environments rewritten to one latex2mathml reads as a table. Numbered forms lose their row
#: numbers: a displayed formula is one equation, numbered as a whole when labelled
#: (``$$…$$ {#eq:a}``, as pandoc-crossref numbers it); ``align`` too (:func:`_rewritten`).
REWRITES: dict[str, Rewrite] = {
    "aligned": _ALIGN_STAR,
    "alignedat": Rewrite(r"\begin{align*}", r"\end{align*}", argument=_COLUMNS),
    "alignat": Rewrite(r"\begin{align*}", r"\end{align*}", argument=_COLUMNS),
    "alignat*": Rewrite(r"\begin{align*}", r"\end{align*}", argument=_COLUMNS),
    "flalign": _ALIGN_STAR,
    "flalign*": _ALIGN_STAR,
    "eqnarray": Rewrite(r"\begin{array}{rcl}", r"\end{array}", display_cells=True),
    "eqnarray*": Rewrite(r"\begin{array}{rcl}", r"\end{array}", display_cells=True),
    "gather": _CENTRED,
    "gather*": _CENTRED,
    "gathered": _CENTRED,
    "multline": _CENTRED,
    "multline*": _CENTRED,
    "dcases": Rewrite(r"\begin{cases}", r"\end{cases}", display_cells=True),
    "dcases*": Rewrite(r"\begin{cases}", r"\end{cases}", display_cells=True),
    "rcases": Rewrite(r"\left.\begin{array}{ll}", r"\end{array}\right\}"),
    "drcases": Rewrite(r"\left.\begin{array}{ll}", r"\end{array}\right\}", display_cells=True),
}
#: Every environment a formula may hold, for the refusal that names the others.
SUPPORTED = NATIVE | UNWRAPPED | frozenset(REWRITES)

#: The supported environments as a refusal lists them (starred forms and synonyms left out).
_SHOWN = ", ".join(sorted(
    name for name in NATIVE | UNWRAPPED | frozenset(REWRITES)
    if not name.endswith("*") and name not in ("math", "displaymath", "drcases")
))
_END = re.compile(r"\\end\s*\{([^{}]*)\}")
_BEGIN = re.compile(r"\\begin\s*\{([^{}]*)\}")
#: ``\\[4pt]``: extra space after a row, which latex2mathml shows as the text "[4pt]".
_ROW_SPACE = re.compile(
    r"(?<!\\)((?:\\\\)*\\\\)\s*\[\s*-?[\d.]+\s*(?:pt|mm|cm|em|ex|in|bp|pc|mu)\s*\]"
)
#: ``\\label{…}``: a name for TeX's cross-references, which a lone formula has no use for.
_LABEL = re.compile(r"\\label\s*\{[^{}]*\}")
#: ``\\tag{…}``: latex2mathml sets the tag right against the formula (a quad parts them here)
#: and copies a ``$…$`` inside it (``\\tag*{$\\star$}``) as text.
_TAG = re.compile(r"\\tag(\*?)\s*\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}")
#: ``\\arg``: not an operator name of latex2mathml until ziamath, once imported, declares it,
#: so a formula would read one way before the first drawing in a process and another after.
_ARG = re.compile(r"\\arg(?![A-Za-z])")
#: ``\\operatorname*{…}`` (limits below, as ``\\max``) and ``\\operatorname`` with a space in it
#: (``arg\\,max``), which latex2mathml read as an empty operator and the letters apart.
_OPERATOR_NAME = re.compile(r"\\operatorname(\*?)\s*\{([^{}]*)\}(\s*[_^])?")
_OPERATOR_SPACE = re.compile(r"\\[,:; ]|\\!|~")
#: ``\\mathrm{d}``: latex2mathml drops the upright style of a single letter in braces
#: (``\\mathrm d`` and ``\\mathrm{dx}`` keep it).
_UPRIGHT_LETTER = re.compile(r"\\mathrm\s*\{\s*([A-Za-z])\s*\}")
#: ``\\sim``: latex2mathml gives an identifier "~" (a raised tilde, no spacing), not "∼".
_SIM = re.compile(r"\\sim(?![A-Za-z])")
#: amsmath's ``\\implies``, ``\\impliedby`` and ``\\iff`` are a long double arrow with a thick
#: space on each side besides the relation's; latex2mathml drops those spaces.
_SPACED_ARROW = re.compile(r"\\(implies|impliedby|iff)(?![A-Za-z])")
_SPACED_ARROWS = {"implies": r"\;\Longrightarrow\;", "impliedby": r"\;\Longleftarrow\;",
                  "iff": r"\;\Longleftrightarrow\;"}
#: amsmath's ``\\colon`` (``f\\colon A\\to B``): a colon 2 mu after what precedes it and 6 mu
#: before what follows (punctuation taking back its own thin space); latex2mathml writes it
#: as ``:``, a relation with 5 mu a side. Here a braced colon (an ordinary symbol, spaced by
#: nothing) between those spaces, in em (browsers read no ``mu``); ``a:b`` keeps the relation.
_COLON = re.compile(r"\\colon(?![A-Za-z])")
#: An unescaped ``&`` that ends an environment's last row (``a&\\end{matrix}``). latex2mathml
#: drops a table's last row whenever that row's last cell is empty, a cleanup meant for the
#: empty row a trailing ``\\\\`` opens, so the row's other cells were lost with it.
_TRAILING_CELL = re.compile(r"(?<!\\)((?:\\\\)*&)(\s*\\end\s*\{)")
#: ``\\bmod``: latex2mathml gives a bare ``mod`` operator, drawn with no space around it; TeX
#: sets it between two 5 mu spaces (``\\;``). ``\\pmod{n}``: latex2mathml's ``mod`` is an
#: identifier the drawing sets apart from its bracket; TeX writes "(mod n)" after a quad.
_BMOD = re.compile(r"\\bmod(?![A-Za-z])")
_PMOD = re.compile(r"\\pmod(?![A-Za-z])\s*")
_MODULO = r"\text{mod}"
_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|\S")
#: ``\\lim\\nolimits_{x}``: latex2mathml drops ``\\nolimits``, so the limit went below like
#: ``\\lim_{x}``'s. In braces, as TeX reads ``{\\lim}_{x}``, the operator takes its script
#: beside it (:func:`renderers.math.tex.parse_tex` marks such a base as not moving its limits);
#: the thin space TeX sets after an operator before a symbol (``\\lim_x f``) is written out.
_NOLIMITS = re.compile(r"(\\operatorname\s*\{[^{}]*\}|\\[A-Za-z]+|\\.)\s*\\nolimits(?![A-Za-z])")
_NO_NUMBER = re.compile(r"\\(?:notag|nonumber)(?![A-Za-z])")
#: LaTeX's accents of text (``\\text{caf\\'e}``, ``\\"o``): latex2mathml shows them as written,
#: backslash and all; each is the letter with its combining mark, composed (é, ö).
_TEXT_ACCENT = re.compile(r"""\\(['"`^~=.])\s*(?:\{\s*([A-Za-z])\s*\}|([A-Za-z]))""")
_COMBINING = {"'": "\u0301", '"': "\u0308", "`": "\u0300", "^": "\u0302", "~": "\u0303",
              "=": "\u0304", ".": "\u0307"}
#: Each control sequence, read left to right as TeX reads them: a backslash and the letters
#: after it, or the one character after it.
_CONTROL_SEQUENCE = re.compile(r"\\(?:[A-Za-z]+|.)", re.DOTALL)
#: The control symbols latex2mathml reads (spaces, escaped specials, a new row). After any
#: other character (``\\1``, ``\\@``, ``\\*``) it showed the backslash itself as a letter.
_CONTROL_SYMBOLS = frozenset("\\,:;>! \t\n{}|%&_#$")


def normalise(tex: str) -> str:
    """``tex`` rewritten for latex2mathml; raises :class:`MathError` naming an environment
    it cannot show."""
    tex = expand_chemistry(tex)  # mhchem's \ce and \pu, before anything reads the TeX
    tex = siunitx.expand(tex)  # siunitx's \SI, \qty, \num …
    tex = _environments(tex)
    tex = _ROW_SPACE.sub(r"\1", tex)
    tex = _LABEL.sub("", tex)
    tex = _TAG.sub(_tag, tex)
    tex = _ARG.sub(r"\\operatorname{arg}", tex)
    tex = _OPERATOR_NAME.sub(_operator_name, tex)
    tex = _nolimits(tex) if "\\nolimits" in tex else tex
    tex = _BMOD.sub(lambda _: rf"\;{_MODULO}\;", tex)
    tex = _modulo(tex) if "\\pmod" in tex else tex
    tex = _UPRIGHT_LETTER.sub(r"{\\mathrm \1}", tex)
    tex = _SIM.sub(r"\\thicksim", tex)
    tex = _SPACED_ARROW.sub(lambda found: _SPACED_ARROWS[found.group(1)], tex)
    tex = _COLON.sub(r"\\hspace{0.1111em}{:}\\hspace{0.3333em}", tex)
    tex = _TEXT_ACCENT.sub(_accented, tex) if "\\" in tex else tex
    _refuse_stray_control_symbol(tex)
    return _TRAILING_CELL.sub(r"\1{}\2", tex) if "&" in tex else tex


def _accented(match: re.Match[str]) -> str:
    letter = match.group(2) or match.group(3)
    return unicodedata.normalize("NFC", letter + _COMBINING[match.group(1)])


def _refuse_stray_control_symbol(tex: str) -> None:
    """A backslash before a character that starts no command latex2mathml reads is refused
    by name: drawn, it was a stray backslash beside the character."""
    for found in _CONTROL_SEQUENCE.findall(tex):
        if len(found) == 2 and found[1] not in _CONTROL_SYMBOLS:
            raise MathError(f"'{found}' is no TeX command (accepted: a command such as \\alpha, "
                            "a control symbol such as \\, or \\%, or \\backslash for the sign)")


def _tag(match: re.Match[str]) -> str:
    """A tag inside an environment's row (``align``: the row's own mark) as text after a quad:
    "(x)" (``\\tag*``: "x"), a ``$…$`` in it as math. A tag of the whole formula is not met
    here: :func:`margin_tag` takes it to the right margin first."""
    pieces = _tag_pieces(match)
    shown = "".join(
        f"{{{piece}}}" if index % 2 else (f"\\text{{{piece}}}" if piece else "")
        for index, piece in enumerate(pieces)
    )
    return f"\\qquad {shown}"


def _tag_pieces(match: re.Match[str]) -> list[str]:
    """A tag's text and ``$…$`` math in turn (text first), in parentheses unless starred."""
    pieces = match.group(2).split("$")
    if len(pieces) % 2 == 0:  # an odd number of dollars: all of it is text
        pieces = [match.group(2)]
    if not match.group(1):
        pieces = ["(" + pieces[0], *pieces[1:-1], pieces[-1] + ")"] if len(pieces) > 1 else [
            f"({pieces[0]})"]
    return pieces


def margin_tag(tex: str) -> tuple[str, tuple[str, ...]]:
    """``tex`` without the ``\\tag`` of the whole formula (one outside every environment),
    and that tag's pieces (:func:`_tag_pieces`), which writers set at the right margin as
    amsmath does; ``(tex, ())`` when there is none. Tags inside an environment stay in their
    rows (:func:`_tag`)."""
    if "\\tag" not in tex:
        return tex, ()
    for match in _TAG.finditer(tex):
        depth = 0
        for edge in BEGIN_OR_END.finditer(tex, 0, match.start()):
            if edge.group(2).strip() not in UNWRAPPED:  # ``equation``'s tag is the formula's
                depth += 1 if edge.group(1) == "begin" else -1
        if depth == 0:
            return tex[: match.start()] + tex[match.end() :], tuple(_tag_pieces(match))
    return tex, ()


def _nolimits(tex: str) -> str:
    """Each operator followed by ``\\nolimits`` in braces, its scripts after it, then a thin
    space when a symbol follows (TeX's space between an operator and an ordinary symbol)."""
    out: list[str] = []
    pos = 0
    while (match := _NOLIMITS.search(tex, pos)) is not None:
        out.append(tex[pos : match.start()] + "{" + match.group(1) + "}")
        pos = _past_scripts(tex, match.end())
        out.append(tex[match.end() : pos])
        following = tex[pos:].lstrip()[:1]
        if following.isalnum() or following == "\\":
            out.append("\\,")
    out.append(tex[pos:])
    return "".join(out)


def _past_scripts(tex: str, index: int) -> int:
    """The index past the ``_…``/``^…`` scripts starting at ``index`` (spaces skipped)."""
    while True:
        start = index
        while start < len(tex) and tex[start].isspace():
            start += 1
        if start >= len(tex) or tex[start] not in "_^":
            return index
        start += 1
        while start < len(tex) and tex[start].isspace():
            start += 1
        if tex.startswith("{", start):
            end = closing_bracket(tex, start)
            index = len(tex) if end is None else end + 1
        else:
            token = _TOKEN.match(tex, start)
            index = start + (len(token.group()) if token else 0)


def _modulo(tex: str) -> str:
    """Each ``\\pmod{n}`` (or ``\\pmod n``) as TeX sets it: a quad, then "(mod n)"."""
    out: list[str] = []
    pos = 0
    while (match := _PMOD.search(tex, pos)) is not None:
        start = match.end()
        if tex.startswith("{", start):
            end = closing_bracket(tex, start)
            if end is None:
                raise MathError("\\pmod: a '{' has no closing brace")
            argument, after = tex[start + 1 : end], end + 1
        else:
            token = _TOKEN.match(tex, start)
            argument = token.group() if token else ""
            after = start + len(argument)
        out.append(tex[pos : match.start()])
        out.append(rf"\quad({_MODULO}\;{{{argument}}})")
        pos = after
    out.append(tex[pos:])
    return "".join(out)


def _operator_name(match: re.Match[str]) -> str:
    """An operator name with its spaces as one thin space character, and ``\\limits`` when
    starred and followed by a script (``\\limits`` alone leaves an empty script behind)."""
    name = _OPERATOR_SPACE.sub("\u2009", match.group(2))
    script = match.group(3) or ""
    limits = "\\limits" if match.group(1) and script else ""
    return f"\\operatorname{{{name}}}{limits}{script}"


def _environments(tex: str) -> str:
    """``tex`` with every environment rewritten, unwrapped or kept (innermost first)."""
    out: list[str] = []
    pos = 0
    while (begin := _BEGIN.search(tex, pos)) is not None:
        name = begin.group(1).strip()
        end = _matching_end(tex, begin.end(), name)
        if name not in SUPPORTED:
            raise MathError(f"environment '{name}' is not supported (supported: {_SHOWN})")
        if end is None:
            raise MathError(f"\\begin{{{name}}} has no \\end{{{name}}}")
        body = _environments(tex[begin.end() : end.start()])
        out.append(_unopened(tex[pos : begin.start()]))
        out.append(_rewritten(name, begin.group(0), body, end.group(0)))
        pos = end.end()
    out.append(_unopened(tex[pos:]))
    return "".join(out)


def _unopened(text: str) -> str:
    """``text`` (outside every environment) when it holds no ``\\end{…}``."""
    if (end := _END.search(text)) is not None:
        name = end.group(1).strip()
        raise MathError(f"\\end{{{name}}} has no \\begin{{{name}}}")
    return text


def _matching_end(tex: str, start: int, name: str) -> re.Match[str] | None:
    """The ``\\end{name}`` closing an environment whose body starts at ``start``."""
    depth = 0
    for match in BEGIN_OR_END.finditer(tex, start):
        if match.group(2).strip() != name:
            continue
        if match.group(1) == "begin":
            depth += 1
        elif depth == 0:
            return match
        else:
            depth -= 1
    return None


def _rewritten(name: str, begin: str, body: str, end: str) -> str:
    if name in intertext.HOSTS:
        body = intertext.text_rows(body)
    if name in UNWRAPPED:
        return "{" + body + "}"
    if name == "align":  # one formula, one number (its label's): rows are not numbered
        return r"\begin{align*}" + body + r"\end{align*}"
    if name == "array":  # the array package's preamble (``@{}cc``, ``*{3}{c}``) as c, l, r
        body, columns, margins, styles = array_columns(body)
        spec_end = body.index("}") + 1
        rest, rows = row_rules(body[spec_end:])
        if any(styles):
            rest = _styled_cells(rest, lambda column: styles[column] if column < len(styles)
                                 else None)
        return begin + body[:spec_end] + marked(columns, rows, margins) + rest + end
    if name in RULED:  # ``\hline`` in a matrix
        body, rows = row_rules(body)
        return begin + marked((), rows) + body + end
    rewrite = REWRITES.get(name)
    if rewrite is None:
        return begin + body + end
    if rewrite.argument is not None:
        body = rewrite.argument.sub("", body, count=1)
    if rewrite.display_cells:
        body = _styled_cells(body, lambda _: "displaystyle", unnumbered=True)
    return rewrite.begin + body + rewrite.end


def _styled_cells(body: str, style: Callable[[int], str | None], *,
                  unnumbered: bool = False) -> str:
    """``body`` with each cell's content set in its column's ``style`` (``{\\displaystyle
    …}``: what an environment rewritten to an ``array`` does to each cell, or an array's
    ``>{\\displaystyle}`` to one column's), and when ``unnumbered``, ``\\notag``/
    ``\\nonumber`` dropped (the rewritten table has no numbers to drop, and latex2mathml reads
    them inside a group as unknown commands)."""
    cells: list[str] = []
    breaks: list[str] = []
    start = 0
    for index, depth in table_marks(body):
        if depth:
            continue
        if body.startswith("\\\\", index):
            cells.append(body[start:index])
            breaks.append("\\\\")
            start = index + 2
        elif body[index] == "&":
            cells.append(body[start:index])
            breaks.append("&")
            start = index + 1
    cells.append(body[start:])
    parts: list[str] = []
    column = 0
    for cell, separator in zip(cells, [*breaks, ""], strict=True):
        content = _NO_NUMBER.sub("", cell) if unnumbered else cell
        shown = style(column)
        parts.append(f"{{\\{shown} {content}}}" if shown and content.strip() else content)
        parts.append(separator)
        column = column + 1 if separator == "&" else 0
    return "".join(parts)
