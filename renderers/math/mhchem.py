"""mhchem's ``\\ce{…}`` (chemical formulas and equations) and ``\\pu{…}`` (physical units) →
plain TeX that latex2mathml reads, so every format draws chemistry through the one math path.

No maintained Python implementation of mhchem exists (its parser is JavaScript, for MathJax
and KaTeX), so this module reads the common part of its grammar, the part answers about
chemistry use: formulas with counts (``H2O``), coefficients (``2``, ``1/2``), charges (``SO4^2-``,
``Fe^{3+}``, ``OH-``), states (``(aq)``), isotopes (``^{14}_{6}C``), hydrates (``CuSO4.5H2O``),
bonds (``-`` ``=`` ``#``, ``\\bond{…}`` but its dashed kinds), a radical's electron dot,
arrows with text above and below (``->[\\Delta]``), ``+``, precipitate ``v`` and gas ``^``,
``$…$`` math, Greek letters, and units (``\\pu{123 kJ/mol}``).
Element symbols are set upright (``\\mathrm``), a charge is a superscript after the count
(``\\mathrm{SO}_{4}^{2-}``: stacked, as in chemistry books) and an arrow is a long arrow
with its text set over and under it. Anything else is refused by name, as an
unsupported environment is. One pass over the source: the work is linear in its length (a
nested ``\\ce`` is read again once per level, and levels are bounded by the group depth).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from renderers.math.errors import MathError
from renderers.math.groups import braced_argument, closing_bracket

Command = Literal["ce", "pu"]

#: What ``\\ce`` reads, as its refusal lists it.
CE_ACCEPTED = (
    "formulas H2O, SO4^2-, [Cu(NH3)4]^2+, coefficients 2 and 1/2, states (s) (l) (g) (aq), "
    "isotopes ^{14}_{6}C, hydrates . and *, bonds - = # and \\bond{…}, arrows -> <- <-> <--> "
    "<=> <=>> <<=> with [above][below], +, v, ^, $…$ math, \\text{…}, Greek letters"
)
#: What ``\\pu`` reads, as its refusal lists it.
PU_ACCEPTED = "a number (1.2e3, 5 +- 0.1) and units kJ/mol, kJ*mol-1, m s^-2, °C, \\mu m"

#: ``\\ce`` in a text argument, which latex2mathml would show as its TeX.
_IN_TEXT = re.compile(r"\\(?:text(?!style)[a-z]*|mbox|hbox)\s*\{[^{}]*\\(ce|pu)(?![A-Za-z])")
_TOKEN = re.compile(r"\\(?:[A-Za-z]+|.)|[^\\]+", re.DOTALL)
#: Commands kept inside ``\\ce`` and ``\\pu`` as they are: Greek letters and a few symbols.
GREEK = frozenset({
    "alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta",
    "vartheta", "iota", "kappa", "lambda", "mu", "nu", "xi", "pi", "rho", "sigma", "tau",
    "upsilon", "phi", "varphi", "chi", "psi", "omega", "Gamma", "Delta", "Theta", "Lambda",
    "Xi", "Pi", "Sigma", "Upsilon", "Phi", "Psi", "Omega",
})
SYMBOLS = frozenset({"pm", "mp", "cdot", "times", "circ", "bullet", "degree", "prime", "%"})
#: Commands whose braced argument is text inside ``\\ce`` (agents write ``->[\\text{heat}]``).
TEXT_COMMANDS = frozenset({"text", "textrm", "mathrm", "mbox"})

#: Arrows, longest first (``<=>>`` before ``<=>``), and the TeX each becomes: the long arrow
#: mhchem draws; an equilibrium lying to one side (``<=>>``) as the arrow pair with a short
#: arrow back (⥂, ⥄), the one character that says so in every format.
ARROWS: dict[str, str] = {
    "<=>>": "⥂", "<<=>": "⥄", "<-->": r"\rightleftarrows", "<=>": r"\rightleftharpoons",
    "<->": r"\longleftrightarrow", "->": r"\longrightarrow", "<-": r"\longleftarrow",
    "→": r"\longrightarrow", "⟶": r"\longrightarrow", "←": r"\longleftarrow",
    "↔": r"\longleftrightarrow", "⇌": r"\rightleftharpoons", "⇄": r"\rightleftarrows",
}
_ARROW = re.compile("|".join(re.escape(arrow) for arrow in ARROWS))
#: ``\\bond{…}``'s keys → the TeX mhchem writes for them (a dotted bond as middle dots).
BONDS = {"-": "{-}", "1": "{-}", "=": "{=}", "2": "{=}", "#": r"{\equiv}", "3": r"{\equiv}",
         "...": r"{\cdot}{\cdot}{\cdot}", "....": r"{\cdot}{\cdot}{\cdot}{\cdot}",
         "->": r"{\rightarrow}", "<-": r"{\leftarrow}", "<": "{<}", ">": "{>}"}
#: mhchem's dashed bonds, refused: each is drawn with a triple dash (``\\tripledash``, the
#: dashed ones stacked over solid lines), a character the PDF's math font (STIX Two Math)
#: lacks, so no form would look the same in every format.
DASHED_BONDS = frozenset({"~", "~-", "~=", "~--", "-~-"})
#: Words that are operators on their own (a space on each side), and what they become.
#: (An arrow in braces: LibreOffice reads a bare one ending a formula as lacking an operand.)
OPERATORS = {"+": "+", "=": "=", "v": r"\,{\downarrow}", "^": r"\,{\uparrow}", ".": r"\cdot",
             "*": r"\cdot", "·": r"\cdot", "-": "-"}
_COEFFICIENT = re.compile(r"\(?(\d+)/(\d+)\)?|\d+(?:[.,]\d+)?")
#: A letter counting the water of a hydrate (``CuSO4.xH2O``), set in italic as a number.
_HYDRATE_LETTER = re.compile(r"[a-z](?=[A-Z(])")
_PRESCRIPT = re.compile(r"(?:\^(\{[^{}]*\}|\d+)(?:_(\{[^{}]*\}|\d+))?"
                        r"|_(\{[^{}]*\}|\d+)\^(\{[^{}]*\}|\d+))(?=[A-Z])")
_SIGNS = re.compile(r"\d*[+-]+|\d+|[IVX]+|[+-]?[IVX]+")
_CHARGE = re.compile(r"\d*[+-]+")
_ROMAN = re.compile(r"[+-]?[IVX]+")
#: A charge holding mhchem's electron dot (``^{.-}``, ``^{(2.)-}``), and that dot: a ``.``
#: not between digits (``^{2.5+}`` holds a decimal), which mhchem sets as a bullet.
_RADICAL_CHARGE = re.compile(r"[\d()+-]*\.[\d.()+-]*")
_ELECTRON_DOT = re.compile(r"(?<!\d)\.|\.(?!\d)")
_STATE = re.compile(r"\((?:s|l|g|aq|cr|sln|ads)\)")
_NUMBER = re.compile(r"([+-]?(?:\d+(?:[.,]\d*)?|[.,]\d+))(?:[eE]([+-]?\d+))?")
_UNIT_POWER = re.compile(r"\^?(\{[+-]?\d+\}|[+-]?\d+)")


@dataclass
class _Atom:
    """One piece of a formula: a base (letters, a bracket, Greek, math) and its scripts."""

    base: str
    letters: bool = False
    sub: str = ""
    sup: str = ""

    def tex(self) -> str:
        base = rf"\mathrm{{{self.base}}}" if self.letters else self.base
        sub = f"_{{{self.sub}}}" if self.sub else ""
        sup = self.sup
        if _CHARGE.fullmatch(sup):  # a plus as text: LibreOffice reads an operator "+" as
            sup = sup.replace("+", r"\text{+}")  # lacking its right operand and marks it "¿"
        sup = f"^{{{sup}}}" if sup else ""
        return base + sub + sup


def expand(tex: str) -> str:
    """``tex`` with every ``\\ce{…}`` and ``\\pu{…}`` written as plain TeX; raises
    :class:`MathError` naming what it cannot read."""
    if "\\ce" not in tex and "\\pu" not in tex:
        return tex
    if (inside := _IN_TEXT.search(tex)) is not None:
        raise MathError(f"\\{inside.group(1)} inside \\text is not supported (write it after"
                        " the text: \\text{mass of }\\ce{H2O})")
    out: list[str] = []
    pos = 0
    for token in _TOKEN.finditer(tex):
        if token.start() < pos or token.group() not in ("\\ce", "\\pu"):
            continue
        command: Command = "ce" if token.group() == "\\ce" else "pu"
        body, end = _argument(tex, token.end(), command)
        out.append(tex[pos : token.start()])
        out.append("{" + (chemistry(body) if command == "ce" else units(body)) + "}")
        pos = end
    out.append(tex[pos:])
    return "".join(out)


def _argument(tex: str, start: int, command: Command) -> tuple[str, int]:
    """The braced argument of ``\\ce``/``\\pu`` after ``start`` and the index past it."""
    return braced_argument(tex, start,
                           missing=f"\\{command} takes its formula in braces (\\{command}{{…}})",
                           unclosed=f"\\{command}{{ has no closing brace")


def _refuse(piece: str) -> MathError:
    return MathError(f"\\ce: {piece!r} is not supported (supported: {CE_ACCEPTED})")


# --- \ce -------------------------------------------------------------------------------------


def chemistry(body: str) -> str:
    """The TeX of a ``\\ce`` body: words apart by spaces, arrows and operators between them."""
    pieces: list[str] = []
    joined = True  # whether the next word follows an operator (no space to add)
    index = 0
    while index < len(body):
        if body[index].isspace():
            index += 1
            continue
        arrow = _ARROW.match(body, index)
        if arrow is not None:
            tex, index = _arrow(body, arrow)
            pieces.append(f" {tex} ")
            joined = True
            continue
        end = _word_end(body, index)
        word = body[index:end]
        index = end
        if word in OPERATORS and (pieces or word not in "v^"):
            pieces.append(f" {OPERATORS[word]} ")
            joined = True
            continue
        if not joined:
            pieces.append(r"\,")
        pieces.append(_word(word))
        joined = False
    if not pieces:
        raise MathError("\\ce{} holds no formula")
    return "".join(pieces).strip()


def _word_end(body: str, index: int) -> int:
    """Where the word starting at ``index`` ends: a space or an arrow outside braces and ``$``."""
    while index < len(body):
        char = body[index]
        if char.isspace() or _ARROW.match(body, index):
            return index
        if char == "\\":
            index += 2
            continue
        if char == "{":
            end = closing_bracket(body, index)
            if end is None:
                raise MathError("\\ce: a '{' has no closing brace")
            index = end
        elif char == "$":
            end = body.find("$", index + 1)
            if end < 0:
                raise MathError("\\ce: a '$' has no closing '$'")
            index = end
        index += 1
    return index


def _arrow(body: str, match: re.Match[str]) -> tuple[str, int]:
    """An arrow with its optional ``[above][below]`` text, and the index past it."""
    labels: list[str] = []
    index = match.end()
    while len(labels) < 2 and index < len(body) and body[index] == "[":
        end = closing_bracket(body, index, "[", "]")
        if end is None:
            raise MathError("\\ce: an arrow's '[' has no closing ']'")
        labels.append(_label(body[index + 1 : end]))
        index = end + 1
    above, below = [*labels, "", ""][:2]
    tex = ARROWS[match.group()]
    # Text set over and under the long arrow rather than by ``\xrightarrow``: latex2mathml
    # gives that a negative padded height, which clips the text in the drawing, and the
    # drawing library stretches neither arrow.
    if below:
        tex = rf"\underset{{{below}}}{{{tex}}}"
    if above:
        tex = rf"\overset{{{above}}}{{{tex}}}"
    return tex, index


def _label(text: str) -> str:
    """The text over or under an arrow: ``{…}`` as text, anything else read as ``\\ce``."""
    text = text.strip()
    if not text:
        return ""
    if text.startswith("{") and closing_bracket(text, 0) == len(text) - 1:
        return _text(text[1:-1])
    return chemistry(text)


def _text(text: str) -> str:
    """``\\text{…}`` of plain words (latex2mathml copies text unescaped: no markup characters)."""
    if any(char in text for char in "<>&\\{}$%"):
        raise _refuse("{" + text + "}")
    return rf"\text{{{text}}}"


def _word(word: str) -> str:
    """One word: a coefficient, a prescript (isotope) and a formula, or a state."""
    if _STATE.fullmatch(word):
        return rf"\mathrm{{{word}}}"
    out = ""
    coefficient = _COEFFICIENT.match(word)
    if coefficient is not None:
        out = _coefficient(coefficient)
        word = word[coefficient.end():]
        if word:
            out += r"\,"
    prescript = _PRESCRIPT.match(word)
    if prescript is not None:
        top, bottom = (prescript.group(1), prescript.group(2) or "") if prescript.group(1) else (
            prescript.group(4), prescript.group(3))
        out += _prescript(_unbraced(top), _unbraced(bottom))
        word = word[prescript.end():]
    return out + (_formula(word) if word else "")


def _coefficient(match: re.Match[str]) -> str:
    if match.re is _COEFFICIENT and match.group(1):
        return rf"\tfrac{{{match.group(1)}}}{{{match.group(2)}}}"
    return match.group().replace(",", "{,}")


def _unbraced(script: str) -> str:
    return script[1:-1].strip() if script.startswith("{") else script


def _prescript(top: str, bottom: str) -> str:
    """Mass and atomic numbers before a symbol, right-aligned as in ``{}^{14}_{\\ 6}C``."""
    width = max(len(top), len(bottom))
    top = rf"\phantom{{{'0' * (width - len(top))}}}{top}" if 0 < len(top) < width else top
    bottom = (rf"\phantom{{{'0' * (width - len(bottom))}}}{bottom}"
              if 0 < len(bottom) < width else bottom)
    return "{}" + (f"^{{{top}}}" if top else "") + (f"_{{{bottom}}}" if bottom else "")


def _formula(word: str) -> str:
    """A formula as atoms: runs of letters upright, counts as subscripts, charges after them."""
    atoms: list[_Atom] = []
    index = 0
    while index < len(word):
        char = word[index]
        last = atoms[-1] if atoms else None
        if char.isalpha() or char == "°":
            end = index + 1
            while end < len(word) and (word[end].isalpha() or word[end] == "°"):
                end += 1
            if last is not None and last.letters and not last.sub and not last.sup:
                last.base += word[index:end]
            else:
                atoms.append(_Atom(word[index:end], letters=True))
            index = end
        elif char.isdigit():
            end = index + 1
            while end < len(word) and word[end].isdigit():
                end += 1
            if last is not None and not last.sub:  # ``Fe^{III}2``: a count after a charge
                last.sub = word[index:end]
            else:
                atoms.append(_Atom(word[index:end]))
            index = end
        elif char in "_^":
            script, index = _script(word, index + 1, char)
            if last is None:  # a script on nothing: ``^\circ``
                last = _Atom("{}")
                atoms.append(last)
            if char == "_":
                last.sub = script
            else:
                last.sup = script
        elif char in "+-" and last is not None and _ends_charge(word, index + 1):
            last.sup += "-" if char == "-" else "+"
            index += 1
        elif char == "+" and last is None:  # ``\ce{+H2O}`` over an arrow: "+ H2O"
            atoms.append(_Atom("+"))
            index += 1
        elif char in "-=#":
            atoms.append(_Atom({"-": "{-}", "=": "{=}", "#": r"{\equiv}"}[char]))
            index += 1
        elif char in ".*·":
            atoms.append(_Atom(r"\cdot "))
            index += 1
            count = _COEFFICIENT.match(word, index) or _HYDRATE_LETTER.match(word, index)
            if count is not None:
                atoms.append(_Atom(_coefficient(count) + r"\,"))
                index = count.end()
        elif char in "()[]":
            atoms.append(_Atom(char))
            index += 1
        elif char == ",":
            atoms.append(_Atom("{,}"))
            index += 1
        elif char == "$":
            end = word.index("$", index + 1)
            atoms.append(_Atom("{" + expand(word[index + 1 : end]) + "}"))
            index = end + 1
        elif char == "{":
            end = closing_bracket(word, index) or len(word) - 1
            atoms.append(_Atom(_text(word[index + 1 : end])))
            index = end + 1
        elif char == "\\":
            tex, index = _command(word, index)
            atoms.append(_Atom(tex))
        else:
            raise _refuse(char)
    return "".join(atom.tex() for atom in atoms)


def _ends_charge(word: str, index: int) -> bool:
    """Whether a ``+``/``-`` ending at ``index`` is a charge: it ends the word, or a state
    follows (``Cl-(aq)``), or another sign or bracket does."""
    rest = word[index:]
    return not rest or bool(_STATE.match(rest)) or rest[0] in "+-)]"


def _script(word: str, index: int, mark: str) -> tuple[str, int]:
    """A sub- or superscript after ``_``/``^`` and the index past it: ``{…}`` as math (Roman
    oxidation states upright), or a count and sign (``2-``), or one character."""
    if index >= len(word):
        raise _refuse(word)
    if word[index] == "{":
        end = closing_bracket(word, index)
        if end is None:
            raise MathError("\\ce: a '{' has no closing brace")
        content = word[index + 1 : end].strip()
        if _ROMAN.fullmatch(content):
            return rf"\mathrm{{{content}}}", end + 1
        if mark == "^" and _RADICAL_CHARGE.fullmatch(content):  # ``OCO^{.-}``: a radical
            content = _ELECTRON_DOT.sub(r"\\bullet ", content).replace("+", r"\text{+}")
        return expand(content), end + 1
    if mark == "^" and (signs := _SIGNS.match(word, index)) is not None:
        content = signs.group()
        return (rf"\mathrm{{{content}}}" if _ROMAN.fullmatch(content) else content), signs.end()
    if word[index] == "\\":
        return _command(word, index)
    if word[index].isalnum():
        return word[index], index + 1
    raise _refuse(word)


def _command(word: str, index: int) -> tuple[str, int]:
    """A command inside ``\\ce``: a Greek letter or symbol, or a nested ``\\ce``/``\\pu``."""
    match = _TOKEN.match(word, index)
    assert match is not None  # a backslash always starts a token
    name = match.group()[1:]
    if name in ("ce", "pu"):
        body, end = _argument(word, match.end(), "ce" if name == "ce" else "pu")
        return "{" + (chemistry(body) if name == "ce" else units(body)) + "}", end
    if name in TEXT_COMMANDS:  # ``->[\text{heat}]``: text, as mhchem's own ``{heat}``
        refusal = str(_refuse("\\" + name + " without its {…}"))
        text, end = braced_argument(word, match.end(), missing=refusal, unclosed=refusal)
        return _text(text), end
    if name == "bond":
        return _bond(word, match.end())
    if name in GREEK:
        return rf"\{name} ", match.end()
    if name in SYMBOLS:
        return (r"{}^{\circ}" if name == "degree" else rf"\{name} "), match.end()
    raise _refuse("\\" + name)


def _bond(word: str, index: int) -> tuple[str, int]:
    """``\\bond{…}`` at ``index`` (after the command) as mhchem draws it, and the index past it."""
    accepted = " ".join(BONDS)
    key, end = braced_argument(word, index, missing=f"\\ce: \\bond takes its kind in braces "
                               f"(\\bond{{=}}; kinds: {accepted})",
                               unclosed="\\ce: \\bond{ has no closing brace")
    key = key.strip()
    if key in DASHED_BONDS:
        raise MathError(f"\\ce: \\bond{{{key}}} is not supported: a dashed bond is drawn with a "
                        f"triple dash the PDF's math font lacks (kinds drawn: {accepted})")
    if key not in BONDS:
        raise MathError(f"\\ce: \\bond{{{key}}} is not a bond mhchem draws (kinds: {accepted})")
    return BONDS[key], end


# --- \pu -------------------------------------------------------------------------------------


def units(body: str) -> str:
    """The TeX of a ``\\pu`` body: a number (its exponent as ``× 10^n``) then upright units."""
    text = body.strip()
    out: list[str] = []
    number = _NUMBER.match(text)
    if number is not None:
        out.append(_number(number))
        text = text[number.end():].lstrip()
        for sign in ("+-", r"\pm", "±"):
            if text.startswith(sign):
                uncertainty = _NUMBER.match(text[len(sign):].lstrip())
                if uncertainty is None:
                    raise _refuse_unit(text)
                out.append(r" \pm " + _number(uncertainty))
                text = text[len(sign):].lstrip()[uncertainty.end():].lstrip()
    if text:
        if out:
            out.append(r"\,")
        out.append(_units(text))
    if not out:
        raise MathError("\\pu{} holds no quantity")
    return "".join(out)


def _refuse_unit(piece: str) -> MathError:
    return MathError(f"\\pu: {piece!r} is not supported (supported: {PU_ACCEPTED})")


def _number(match: re.Match[str]) -> str:
    mantissa = match.group(1).replace(",", "{,}")
    exponent = match.group(2)
    if exponent is None:
        return mantissa
    return rf"{mantissa}\times 10^{{{exponent}}}"


_UNIT_WORD = re.compile(r"(?:\\[A-Za-z]+\s*|[^\W\d_]|[°%Å'])+")


def _units(text: str) -> str:
    """Units apart by spaces, ``*`` or ``.`` (a product) or ``/``, each with its power."""
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char.isspace():
            index += 1
            if out and out[-1] not in (r"\cdot ", "/"):
                out.append(r"\,")
            continue
        if char in "*.·":
            _drop_space(out)
            out.append(r"\cdot ")
            index += 1
            continue
        if char == "/":
            _drop_space(out)
            out.append("/")
            index += 1
            continue
        word = _UNIT_WORD.match(text, index)
        if word is None:
            raise _refuse_unit(text[index:])
        index = word.end()
        unit = _unit(word.group())
        power = _UNIT_POWER.match(text, index)
        if power is not None:
            unit += f"^{{{_unbraced(power.group(1))}}}"
            index = power.end()
        out.append(unit)
    _drop_space(out)
    return "".join(out)


def _drop_space(out: list[str]) -> None:
    if out and out[-1] == r"\,":
        out.pop()


def _unit(word: str) -> str:
    """One unit upright: ``°C`` with a degree sign, ``\\mu`` and ``\\Omega`` as letters."""
    pieces: list[str] = []
    for token in _TOKEN.finditer(word):
        text = token.group().strip()
        if text.startswith("\\"):
            name = text[1:]
            if name not in GREEK and name not in ("degree", "%"):
                raise _refuse_unit(text)
            pieces.append(r"{}^{\circ}" if name == "degree" else (r"\%" if name == "%" else text
                                                                   + " "))
        else:
            pieces.append(text.replace("%", r"\%"))
    return rf"\mathrm{{{''.join(pieces)}}}"
