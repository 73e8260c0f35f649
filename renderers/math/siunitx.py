"""siunitx commands (``\\SI``, ``\\qty``, ``\\num``, ``\\si``, ``\\unit``, ranges, ``\\ang``, lists,
products, complex numbers) → plain TeX latex2mathml reads, set as siunitx sets them by default.

No maintained Python reader of siunitx exists (PyPI has unit libraries — pint, dsiunits, which
parse their own unit strings — and mplunitx, which writes siunitx-like TeX from Python calls), so
the commands agents write are expanded here, before latex2mathml sees the formula. What siunitx
does by default, and is done here: a number's exponent as ``× 10ⁿ``, digits in groups of three
(thin spaces) once a part has five or more, ``,`` read as the decimal marker and a lone ``.5``
given its zero; a thin space between number and unit (none before ``°``, ``′``, ``″``); units
upright (each symbol one run of text), joined by thin spaces, ``\\per`` as a negative power
(``m s⁻²``); a range repeating
its unit ("10 °C to 20 °C"), as lists ("1 m, 2 m and 3 m") and products ("2 m × 3 m") do;
a complex number's root an upright i after its digits ("3 + 4i", bracketed before a unit),
a polar one as "10∠45°". One choice differs: an uncertainty (``5 +- 0.1``) is written with
``±`` (siunitx's ``uncertainty-mode = separate``), bracketed before a unit or an exponent, as
readers expect, where siunitx's default writes the compact ``5.0(1)``.

Options in ``[…]`` are read past and ignored: they choose how a value is set (``per-mode``,
digit grouping, rounding), never which value or unit it is, so ignoring one shows the number
as written and the unit in the default form. A unit macro not in :data:`UNITS`,
:data:`PREFIXES` or :data:`ABBREVIATIONS`, and an argument that is not a number, are refused
by name. The work is one pass over the formula: each command reads its arguments once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from renderers.math.errors import MathError
from renderers.math.groups import braced_argument

#: siunitx prefix macros → their symbols (``\\micro`` the micro sign, set upright).
PREFIXES = {
    "quecto": "q", "ronto": "r", "yocto": "y", "zepto": "z", "atto": "a", "femto": "f",
    "pico": "p", "nano": "n", "micro": "µ", "milli": "m", "centi": "c", "deci": "d",
    "deca": "da", "deka": "da", "hecto": "h", "kilo": "k", "mega": "M", "giga": "G",
    "tera": "T", "peta": "P", "exa": "E", "zetta": "Z", "yotta": "Y", "ronna": "R",
    "quetta": "Q",
}
#: siunitx unit macros → their symbols: the SI base and named derived units, the units
#: accepted for use with the SI, and the others siunitx names.
UNITS = {
    # SI base units
    "ampere": "A", "candela": "cd", "kelvin": "K", "kilogram": "kg", "gram": "g",
    "metre": "m", "meter": "m", "mole": "mol", "second": "s",
    # named derived units
    "becquerel": "Bq", "celsius": "°C", "degreeCelsius": "°C", "coulomb": "C", "farad": "F",
    "gray": "Gy", "hertz": "Hz", "henry": "H", "joule": "J", "katal": "kat", "lumen": "lm",
    "lux": "lx", "newton": "N", "ohm": "Ω", "pascal": "Pa", "radian": "rad",
    "siemens": "S", "sievert": "Sv", "steradian": "sr", "tesla": "T", "volt": "V",
    "watt": "W", "weber": "Wb",
    # accepted for use with the SI, and others siunitx defines
    "astronomicalunit": "au", "bel": "B", "dalton": "Da", "day": "d", "decibel": "dB",
    "degree": "°", "arcminute": "′", "arcsecond": "″", "electronvolt": "eV",
    "hectare": "ha", "hour": "h", "litre": "L", "liter": "L", "minute": "min",
    "neper": "Np", "tonne": "t", "percent": "%", "angstrom": "Å", "bar": "bar",
    "barn": "b", "knot": "kn", "mmHg": "mmHg", "nauticalmile": "M", "atomicmassunit": "u",
    "bohr": "a_0", "clight": "c_0", "electronmass": "m_e", "elementarycharge": "e",
    "hartree": "E_h", "planckbar": "ħ", "byte": "B", "bit": "bit",
}
#: Units after which no space follows the number (``30°``, as siunitx sets angles).
UNSPACED = frozenset({"°", "′", "″"})
#: siunitx's abbreviations (``\\km``, ``\\MHz`` …) → prefix and unit symbol.
ABBREVIATIONS: dict[str, tuple[str, str]] = {
    **{f"{p}g": (s, "g") for p, s in (("f", "f"), ("p", "p"), ("n", "n"), ("u", "µ"),
                                      ("m", "m"), ("", ""), ("k", "k"))},
    **{f"{p}m": (s, "m") for p, s in (("p", "p"), ("n", "n"), ("u", "µ"), ("m", "m"),
                                      ("c", "c"), ("d", "d"), ("", ""), ("k", "k"))},
    **{f"{p}s": (s, "s") for p, s in (("a", "a"), ("f", "f"), ("p", "p"), ("n", "n"),
                                      ("u", "µ"), ("m", "m"), ("", ""))},
    **{f"{p}mol": (s, "mol") for p, s in (("f", "f"), ("p", "p"), ("n", "n"), ("u", "µ"),
                                          ("m", "m"), ("", ""), ("k", "k"))},
    **{f"{p}A": (s, "A") for p, s in (("p", "p"), ("n", "n"), ("u", "µ"), ("m", "m"),
                                      ("", ""), ("k", "k"))},
    **{f"{p}{u}": (s, "L") for p, s in (("u", "µ"), ("m", "m"), ("", ""), ("h", "h"))
       for u in ("l", "L")},
    **{f"{p}Hz": (s, "Hz") for p, s in (("m", "m"), ("", ""), ("k", "k"), ("M", "M"),
                                        ("G", "G"), ("T", "T"))},
    **{f"{p}N": (s, "N") for p, s in (("m", "m"), ("", ""), ("k", "k"), ("M", "M"))},
    **{f"{p}Pa": (s, "Pa") for p, s in (("", ""), ("k", "k"), ("M", "M"), ("G", "G"))},
    **{f"{p}ohm": (s, "Ω") for p, s in (("m", "m"), ("k", "k"), ("M", "M"))},
    **{f"{p}V": (s, "V") for p, s in (("p", "p"), ("n", "n"), ("u", "µ"), ("m", "m"),
                                      ("", ""), ("k", "k"))},
    **{f"{p}W": (s, "W") for p, s in (("n", "n"), ("u", "µ"), ("m", "m"), ("", ""),
                                      ("k", "k"), ("M", "M"), ("G", "G"))},
    **{f"{p}J": (s, "J") for p, s in (("u", "µ"), ("m", "m"), ("", ""), ("k", "k"))},
    **{f"{p}eV": (s, "eV") for p, s in (("m", "m"), ("", ""), ("k", "k"), ("M", "M"),
                                        ("G", "G"), ("T", "T"))},
    **{f"{p}F": (s, "F") for p, s in (("f", "f"), ("p", "p"), ("n", "n"), ("u", "µ"),
                                      ("m", "m"), ("", ""))},
    **{f"{p}H": (s, "H") for p, s in (("n", "n"), ("u", "µ"), ("m", "m"), ("", ""))},
    **{f"{p}C": (s, "C") for p, s in (("n", "n"), ("u", "µ"), ("m", "m"), ("", ""))},
    "kWh": ("k", "Wh"), "K": ("", "K"), "dB": ("", "dB"),
}
#: Powers written before a unit (``\\square\\metre``) and after it (``\\metre\\squared``).
PREFIX_POWERS = {"square": 2, "cubic": 3}
POSTFIX_POWERS = {"squared": 2, "cubed": 3}
#: TeX symbols agents put in a literal unit (``k\\Omega``, ``\\%``) → their characters;
#: ``\\mu`` there is the micro prefix (``\\mu m``).
SYMBOLS = {"Omega": "Ω", "ohm": "Ω", "circ": "°", "%": "%",
           "degree": "°", "AA": "Å", "hbar": "ħ", "$": "$"}
#: What a braced argument holds: a number, a unit, an angle, numbers apart by ``;`` (a list),
#: by ``x`` (a product), or a complex number.
Argument = Literal["number", "unit", "angle", "list", "product", "complex"]
#: The commands expanded, each with the arguments it reads in braces.
COMMANDS: dict[str, tuple[Argument, ...]] = {
    "SI": ("number", "unit"), "qty": ("number", "unit"), "num": ("number",),
    "si": ("unit",), "unit": ("unit",), "SIrange": ("number", "number", "unit"),
    "qtyrange": ("number", "number", "unit"), "numrange": ("number", "number"),
    "ang": ("angle",), "numlist": ("list",), "SIlist": ("list", "unit"),
    "qtylist": ("list", "unit"), "numproduct": ("product",), "qtyproduct": ("product", "unit"),
    "complexnum": ("complex",), "complexqty": ("complex", "unit"),
}
#: siunitx's default separators (``list-separator``, ``list-pair-separator`` and
#: ``list-final-separator``; ``range-phrase``), as text runs every format sets alike.
LIST_SEPARATOR = "\\text{, }"
LIST_LAST = "\\text{ and }"
RANGE_PHRASE = "\\text{ to }"
#: ``product-symbol`` and ``output-complex-root``, siunitx's defaults.
PRODUCT_SYMBOL = " \\times "
COMPLEX_ROOT = "\\mathrm{i}"
#: What a refused unit macro's message lists as accepted.
_ACCEPTED = ("prefixes \\quecto … \\quetta, units such as \\metre \\second \\kilogram "
             "\\newton \\ohm \\celsius \\percent, \\per, \\square/\\squared, \\cubic/\\cubed, "
             "\\tothe{n}, \\raiseto{n}, \\of{…}, abbreviations such as \\km \\MHz \\kPa")

_COMMAND = re.compile(r"\\(" + "|".join(sorted(COMMANDS, key=len, reverse=True)) + r")(?![A-Za-z])")
_NUMBER = re.compile(
    r"(?P<sign>[+-])?(?P<int>\d*)(?:[.,](?P<frac>\d*))?"
    r"(?:\((?P<compact>\d+(?:[.,]\d+)?)\))?"
    r"(?:(?:\+-|\\pm)(?P<unc>\d*(?:[.,]\d*)?))?"
    r"(?:[eEdD](?P<esign>[+-])?(?P<exp>\d+))?"
)
_COMPARATORS = {"<": "<", ">": ">", "<=": "\\le", ">=": "\\ge", "\\le": "\\le",
                "\\leq": "\\le", "\\ge": "\\ge", "\\geq": "\\ge", "\\approx": "\\approx",
                "\\sim": "\\sim", "\\ll": "\\ll", "\\gg": "\\gg"}
_COMPARATOR = re.compile(r"^(<=|>=|<|>|\\(?:leq?|geq?|approx|sim|ll|gg)(?![A-Za-z]))")
#: Spaces in a number, which siunitx ignores (``1\\,000``, ``1~000``), and ``{,}``, the
#: braced decimal comma of German TeX.
_IGNORED = re.compile(r"\s+|\\[,;: ]|~|\{(?=,\})|(?<=\{,)\}")
#: What a unit's text may not hold: latex2mathml copies ``\\text`` into the MathML as it is.
_NOT_TEXT = re.compile(r"[<&\\{}]")
_PRODUCT = re.compile(r"x|\\times(?![A-Za-z])")
_THIN = "\\,"


def expand(tex: str) -> str:
    """``tex`` with every siunitx command replaced by the TeX it stands for."""
    if "\\" not in tex:
        return tex
    out: list[str] = []
    pos = 0
    while (match := _COMMAND.search(tex, pos)) is not None:
        name = match.group(1)
        out.append(tex[pos : match.start()])
        index = _skip_options(tex, match.end(), name)
        arguments: list[str] = []
        pre_unit = ""
        for kind in COMMANDS[name]:
            if kind == "unit" and name == "SI":  # \SI{1}[\$]{}: a unit before the number
                pre_start = _skip_space(tex, index)
                if tex.startswith("[", pre_start):
                    pre_unit, index = _bracketed(tex, pre_start, name)
            argument, index = _braced(tex, index, name)
            arguments.append(argument)
        out.append("{" + _command(name, arguments, pre_unit) + "}")
        pos = index
    out.append(tex[pos:])
    return "".join(out)


def _command(name: str, arguments: list[str], pre_unit: str) -> str:
    """The TeX of one command from its arguments (read in the order of :data:`COMMANDS`)."""
    kinds = COMMANDS[name]
    first = kinds[0]
    if first == "angle":
        return _angle(arguments[0])
    if first == "unit":
        return _unit(arguments[0], name).tex
    unit = _unit(arguments[-1], name) if kinds[-1] == "unit" else Unit("", False)
    if first == "complex":
        return _complex(arguments[0], unit, name)
    if first == "list":  # list-units = repeat: each number with its unit
        items = [_number(item, name) for item in _split(arguments[0], ";", name)]
        return _listed([_quantity(item, unit) for item in items])
    if first == "product":  # product-units = repeat: each factor with its unit
        factors = _split(_IGNORED.sub("", arguments[0]), _PRODUCT, name)
        return PRODUCT_SYMBOL.join(_quantity(_number(factor, name), unit) for factor in factors)
    numbers = [_number(argument, name) for argument in arguments[: kinds.count("number")]]
    before = _unit(pre_unit, name).tex + _THIN if pre_unit.strip() else ""
    return RANGE_PHRASE.join(before + _quantity(number, unit) for number in numbers)


def _split(text: str, separator: str | re.Pattern[str], command: str) -> list[str]:
    """The items of a list (``;``) or product (``x``); an empty one refused by name."""
    items = separator.split(text) if isinstance(separator, re.Pattern) else text.split(separator)
    if not all(item.strip() for item in items):
        mark = "';'" if separator == ";" else "'x'"
        raise MathError(f"\\{command}{{{text.strip()}}}: an empty item (the items are numbers "
                        f"apart by {mark})")
    return items


def _listed(items: list[str]) -> str:
    """Items as siunitx lists them: "1", "1 and 2", "1, 2 and 3"."""
    if len(items) == 1:
        return items[0]
    return LIST_SEPARATOR.join(items[:-1]) + LIST_LAST + items[-1]


@dataclass(frozen=True)
class Number:
    """A number as TeX, and whether a unit after it needs brackets around it (a ``±``)."""

    tex: str
    bracket_for_unit: bool


@dataclass(frozen=True)
class Unit:
    """A unit as TeX, and whether it follows a number with no space (``°``)."""

    tex: str
    unspaced: bool


def _quantity(number: Number, unit: Unit) -> str:
    if not unit.tex:
        return number.tex
    shown = f"({number.tex})" if number.bracket_for_unit else number.tex
    return shown + ("" if unit.unspaced else _THIN) + unit.tex


def _number(text: str, command: str) -> Number:
    """A siunitx number (``-1.2e3``, ``5 +- 0.1``, ``1.23(4)``, ``< 5``, ``1 x 2``) as TeX."""
    source = _IGNORED.sub("", text)
    comparator = ""
    if (found := _COMPARATOR.match(source)) is not None:
        comparator = _COMPARATORS[found.group(1)] + " "
        source = source[found.end() :]
    factors = _PRODUCT.split(source)
    if len(factors) > 1:
        shown = PRODUCT_SYMBOL.join(_single(factor, text, command).tex for factor in factors)
        return Number(comparator + shown, False)
    single = _single(source, text, command)
    return Number(comparator + single.tex, single.bracket_for_unit)


def _single(source: str, text: str, command: str) -> Number:
    match = _NUMBER.fullmatch(source)
    if match is None or not (match.group("int") or match.group("frac") or match.group("exp")):
        raise MathError(
            f"\\{command}{{{text.strip()}}}: not a number siunitx reads (digits with '.' or ',', "
            f"an exponent 'e', an uncertainty '+-' or '(…)', a product 'x')"
        )
    sign = match.group("sign") or ""
    mantissa = ""
    if match.group("int") or match.group("frac"):
        mantissa = _digits(match.group("int"), match.group("frac"))
        if match.group("compact"):
            mantissa += f"({match.group('compact').replace(',', '.')})"
    uncertainty = match.group("unc")
    if uncertainty is not None and uncertainty.strip(".,"):
        whole, _, part = uncertainty.replace(",", ".").partition(".")
        mantissa = f"{mantissa} \\pm {_digits(whole, part or None)}"
    exponent = _power_of_ten(match.group("esign"), match.group("exp")) if match.group("exp") else ""
    if uncertainty and exponent:
        return Number(f"{sign}({mantissa})\\times {exponent}", False)
    if exponent:
        return Number(f"{sign}{mantissa}\\times {exponent}" if mantissa else sign + exponent,
                      False)
    return Number(sign + mantissa, uncertainty is not None and bool(uncertainty.strip(".,")))


def _power_of_ten(sign: str | None, digits: str) -> str:
    """An exponent ``e-05`` as ``10^{-5}``."""
    return f"10^{{{'-' if sign == '-' else ''}{digits.lstrip('0') or '0'}}}"


def _digits(whole: str | None, part: str | None) -> str:
    """Digits of a number's two parts, each grouped in threes (thin spaces) when it has five
    or more, as siunitx groups them; a missing integer part is 0."""
    whole = whole or "0"
    if len(whole) >= 5:
        head = len(whole) % 3 or 3
        whole = _THIN.join([whole[:head], *(whole[i : i + 3] for i in range(head, len(whole), 3))])
    if not part:
        return whole
    if len(part) >= 5:
        part = _THIN.join(part[i : i + 3] for i in range(0, len(part), 3))
    return f"{whole}.{part}"


def _angle(text: str) -> str:
    """``\\ang{30}`` → 30°, ``\\ang{1;2;3}`` → 1°2′3″ (an empty part left out)."""
    parts = text.split(";")
    if len(parts) > 3:
        raise MathError(f"\\ang{{{text.strip()}}}: an angle has at most three parts "
                        f"(degrees;minutes;seconds)")
    shown = [
        _number(part, "ang").tex + "{" + _upright(mark) + "}"
        for part, mark in zip(parts, ("°", "′", "″"), strict=False) if part.strip()
    ]
    if not shown:
        raise MathError("\\ang{}: the angle is empty")
    return "".join(shown)


#: Where a complex number's next part starts: a sign after a digit, decimal mark or root.
_COMPLEX_TERM = re.compile(r"(?<=[\d.,ij])(?=[+-])")
#: An imaginary part: the root before its digits (``i2``) or after them (``2i``).
_ROOTED = re.compile(r"[ij]([^ij]*)|([^ij]*)[ij]")
_ROOT = re.compile(r"[ij]")
_TRAILING_EXPONENT = re.compile(r"[eEdD](?P<sign>[+-])?(?P<digits>\d+)$")


def _complex(text: str, unit: Unit, command: str) -> str:
    """``\\complexnum``/``\\complexqty`` as siunitx sets them by default: ``1+2i`` as
    "1 + 2i" (the root upright after the number, a lone ``i`` without its 1), ``1:30`` as
    "1∠30°"; before a unit, both parts in brackets ("(1 + 2i) Ω"), as an exponent takes them."""
    source = _IGNORED.sub("", text)
    if not source:
        raise _not_complex(text, command)
    if ":" in source:
        magnitude, _, angle = source.partition(":")
        polar = (_single(magnitude, text, command).tex + "\\angle "
                 + _single(angle, text, command).tex + "{" + _upright("°") + "}")
        return _quantity(Number(polar, False), unit)
    exponent = ""
    if _ROOT.search(source) and (power := _TRAILING_EXPONENT.search(source)) is not None:
        exponent = _power_of_ten(power.group("sign"), power.group("digits"))
        source = source[: power.start()]
    real, imaginary = "", ""
    for term in _COMPLEX_TERM.split(source):
        body = term.lstrip("+-")
        root = _ROOTED.fullmatch(body)
        if root is not None and not imaginary:
            digits = root.group(1) or root.group(2) or ""
            shown = (_single(digits, text, command).tex if digits else "") + COMPLEX_ROOT
            imaginary = ("-" if term.startswith("-") else "+") + shown
        elif root is None and not real and not imaginary and not _ROOT.search(body):
            real = _single(term, text, command).tex
        else:  # two roots, a root inside the digits, two parts of one kind, a real after
            raise _not_complex(text, command)
    if not imaginary:
        if not real:
            raise _not_complex(text, command)
        return _quantity(Number(real, False), unit)
    sign, shown = imaginary[0], imaginary[1:]
    tex = f"{real} {sign} {shown}" if real else ("-" if sign == "-" else "") + shown
    if exponent:
        return _quantity(Number(f"({tex})\\times {exponent}" if real else
                                f"{tex}\\times {exponent}", False), unit)
    return _quantity(Number(tex, bool(real)), unit)


def _not_complex(text: str, command: str) -> MathError:
    return MathError(f"\\{command}{{{text.strip()}}}: not a complex number siunitx reads (a real "
                     f"and an imaginary part with i or j: '1+2i', '3-i', '2j', '1+2ie3'; or "
                     f"polar 'magnitude:angle' in degrees)")


@dataclass
class _Piece:
    """One unit being read: its symbol, power and qualifier."""

    symbol: str
    power: str = ""
    qualifier: str = ""


_UNIT_TOKEN = re.compile(
    r"\\([A-Za-z]+|[%$])|((?:[^\W\d_]|[°′″%])+)|(\^|_)|([./~*\s]+)|(\d+|[()\-+])|(\S)"
)


def _unit(text: str, command: str) -> Unit:
    """A siunitx unit, in the macro form (``\\kilo\\gram\\per\\second``) or the literal one
    (``kg.m/s^2``, ``kg*m``, ``kg~m``), as upright symbols joined by thin spaces."""
    reader = _UnitReader(text, command)
    index = 0
    while index < len(text):
        match = _UNIT_TOKEN.match(text, index)
        assert match is not None  # the last alternative matches any character
        index = reader.token(match)
    return reader.unit()


class _UnitReader:
    """The state of reading one unit argument: the pieces read, and the prefix, power and
    ``\\per`` waiting for the next unit."""

    def __init__(self, text: str, command: str) -> None:
        self.text = text
        self.command = command
        self.pieces: list[_Piece | str] = []  # a str is a literal "/" (or digits) as written
        self.prefix = ""
        self.pending = 1  # the power of the next unit (\\square, \\raiseto)
        self.per = False

    def token(self, match: re.Match[str]) -> int:
        """Take one token; the index after it (and after any argument it reads)."""
        macro, letters, script, separator, literal, other = match.groups()
        index = match.end()
        if macro is not None:
            return self.macro(macro, index)
        if letters is not None:
            self.add(letters)
        elif script is not None:
            value, index = _script_argument(self.text, index, self.command)
            last = self.last(script)
            if script == "^":
                last.power = value
            else:
                last.qualifier = value
        elif separator is not None:
            if "/" in separator:
                self.pieces.append("/")
        elif literal is not None:
            self.pieces.append(literal)
        else:
            raise MathError(f"\\{self.command}{{{self.text.strip()}}}: '{other}' cannot be "
                            f"part of a unit")
        return index

    def macro(self, name: str, index: int) -> int:
        if name in PREFIXES or name == "mu":
            self.prefix += PREFIXES.get(name, "µ")
        elif name in UNITS or name in ABBREVIATIONS or name in SYMBOLS:
            self.add(UNITS.get(name) or SYMBOLS.get(name) or "".join(ABBREVIATIONS[name]))
        elif name == "per":
            self.per = True
        elif name in PREFIX_POWERS:
            self.pending = PREFIX_POWERS[name]
        elif name in ("raiseto", "tothe", "of"):
            argument, index = _braced(self.text, index, name)
            if name == "raiseto":
                self.pending = _integer(argument, self.command)
            elif name == "tothe":
                self.raise_last(_integer(argument, self.command), name)
            else:
                self.last(name).qualifier = argument.strip()
        elif name in POSTFIX_POWERS:
            self.raise_last(POSTFIX_POWERS[name], name)
        else:
            raise MathError(f"\\{self.command}: unit \\{name} is not known (accepted: "
                            f"{_ACCEPTED})")
        return index

    def add(self, symbol: str) -> None:
        """A unit symbol, with the prefix, power and ``\\per`` read before it."""
        power = -self.pending if self.per else self.pending
        self.pieces.append(_Piece(self.prefix + symbol, _power(power)))
        self.prefix, self.pending, self.per = "", 1, False

    def raise_last(self, power: int, what: str) -> None:
        """``\\squared``, ``\\tothe{n}`` on the unit before (kept negative after ``\\per``)."""
        last = self.last(what)
        last.power = _power(-power if last.power.startswith("-") else power)

    def last(self, what: str) -> _Piece:
        last = self.pieces[-1] if self.pieces else None
        if not isinstance(last, _Piece):
            raise MathError(f"\\{self.command}: '{what}' follows no unit")
        return last

    def unit(self) -> Unit:
        if self.prefix or self.per or self.pending != 1:
            raise MathError(f"\\{self.command}{{{self.text.strip()}}}: a prefix, \\per or "
                            f"power with no unit after it")
        return _unit_tex(self.pieces)


def _unit_tex(pieces: list[_Piece | str]) -> Unit:
    shown: list[str] = []
    for index, piece in enumerate(pieces):
        if isinstance(piece, str):
            shown.append(piece)
            continue
        if index and not isinstance(pieces[index - 1], str):
            shown.append(_THIN)
        symbol, _, subscript = piece.symbol.partition("_")  # a_0, m_e: a constant's subscript
        tex = "{" + _upright(symbol) + "}"
        qualifier = piece.qualifier or subscript
        if qualifier:
            tex += "_{" + _upright(qualifier) + "}"
        if piece.power and piece.power != "1":
            tex += "^{" + piece.power + "}"
        shown.append(tex)
    first = pieces[0] if pieces else None
    unspaced = isinstance(first, _Piece) and first.symbol in UNSPACED and len(pieces) == 1
    return Unit("".join(shown), unspaced)


def _upright(symbol: str) -> str:
    """A unit symbol as upright text (``\\text``: one run that Word and LibreOffice set
    upright, where LibreOffice set ``\\mathrm`` letters in italics, one apart from the next);
    ``%``, which ``\\text`` reads as a comment, as ``\\%``."""
    if _NOT_TEXT.search(symbol):  # a qualifier (``\\of{…}``, ``_{…}``) is the writer's text
        raise MathError(f"unit qualifier '{symbol}' holds a command, brace, '<' or '&' (only "
                        f"plain text is read there)")
    return "\\%".join(f"\\text{{{part}}}" if part else "" for part in symbol.split("%"))


def _power(value: int) -> str:
    return "" if value == 1 else str(value)


def _integer(text: str, command: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise MathError(f"\\{command}: power '{text.strip()}' is not a whole number") from None


def _script_argument(text: str, index: int, command: str) -> tuple[str, int]:
    """What follows ``^`` or ``_`` in a literal unit: a braced group, a signed number or one
    character."""
    index = _skip_space(text, index)
    if text.startswith("{", index):
        argument, index = _braced(text, index, command)
        return argument.strip(), index
    match = re.compile(r"[+-]?\d+|[A-Za-z]").match(text, index)
    if match is None:
        raise MathError(f"\\{command}: '^' or '_' with nothing after it")
    return match.group(), match.end()


def _skip_space(tex: str, index: int) -> int:
    while index < len(tex) and tex[index].isspace():
        index += 1
    return index


def _skip_options(tex: str, index: int, command: str) -> int:
    """Past ``[options]`` after a command (ignored, see the module's description)."""
    start = _skip_space(tex, index)
    return _bracketed(tex, start, command)[1] if tex.startswith("[", start) else index


def _bracketed(tex: str, index: int, command: str) -> tuple[str, int]:
    """The text of ``[…]`` at ``index`` (braces inside it balanced) and the index after it."""
    depth = 0
    for end in range(index + 1, len(tex)):
        char = tex[end]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "]" and depth == 0:
            return tex[index + 1 : end], end + 1
    raise MathError(f"\\{command}: '[' with no ']'")


def _braced(tex: str, index: int, command: str) -> tuple[str, int]:
    """The text of the ``{…}`` argument at ``index`` and the index after it."""
    braces = "{…}" * len(COMMANDS.get(command, ("number",)))
    return braced_argument(
        tex, index, unclosed=f"\\{command}: '{{' with no '}}'",
        missing=f"\\{command} is missing an argument in braces (\\{command}{braces})")
