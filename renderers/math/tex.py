"""TeX → a checked MathML tree: the one place TeX is parsed.

The TeX is first rewritten where latex2mathml would misread what agents write
(:mod:`renderers.math.normalise`: environments, ``\\operatorname*``, ``\\tag`` …); latex2mathml
does the parsing; its output is then rebuilt as a small frozen tree of allow-listed
MathML elements and attributes (``\\href`` gives an ``href`` attribute, ``\\color`` a colour:
only what a writer can show safely is kept), so every writer (MathML, OMML, SVG, linear text)
starts from the same vetted tree. Work is bounded before the converter runs (source length,
brace depth) and after (tree size). Anything latex2mathml cannot read, and a command it does not
know (it would otherwise print ``\\foo`` as an identifier), is a :class:`MathError`; readers keep
the source in code style with a warning.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from functools import lru_cache

from renderers.math.errors import MathError
from renderers.math.intertext import MARK
from renderers.math.normalise import margin_tag, normalise

#: Longest TeX source of one formula, in characters.
MAX_TEX_CHARS = 4000
#: Deepest nesting of ``{…}`` groups and ``\begin…\end`` environments in one formula.
MAX_GROUP_DEPTH = 24
#: Most MathML elements one formula may become.
MAX_NODES = 4000

MATHML_NS = "http://www.w3.org/1998/Math/MathML"

#: MathML elements kept as they are; an element outside this set is replaced by its children.
ELEMENTS = frozenset({
    "mrow", "mi", "mn", "mo", "mtext", "mspace", "ms", "msub", "msup", "msubsup", "mfrac",
    "msqrt", "mroot", "munder", "mover", "munderover", "mtable", "mtr", "mtd", "mstyle",
    "mpadded", "mphantom", "menclose", "mmultiscripts", "mprescripts", "none",
})
#: Attributes kept (with values matching :data:`_VALUE`); colours match :data:`_COLOUR`.
ATTRIBUTES = frozenset({
    "mathvariant", "stretchy", "fence", "form", "accent", "accentunder", "movablelimits",
    "largeop", "symmetric", "minsize", "maxsize", "linethickness", "columnalign", "rowalign",
    "width", "height", "depth", "lspace", "rspace", "separator", "columnspacing", "rowspacing",
    "columnlines", "rowlines", "frame", "notation", "scriptlevel", "displaystyle",
})
COLOUR_ATTRIBUTES = frozenset({"mathcolor", "mathbackground"})
_VALUE = re.compile(r"^[A-Za-z0-9 .%+\-]{0,64}$")
_COLOUR = re.compile(r"^(?:#[0-9A-Fa-f]{3,8}|[A-Za-z]{1,20})$")
_UNKNOWN_COMMAND = re.compile(r"^\\[A-Za-z]+")
#: One arrow (the Arrows, Supplemental Arrows-A and -B blocks): latex2mathml writes the long
#: ones (``\\longrightarrow`` ⟶, ``\\implies`` ⟹, ``\\mapsto``'s kin) as identifiers, which
#: browsers, Word and the drawing set unspaced, where TeX spaces a relation.
ARROW = re.compile(r"[\u2190-\u21ff\u27f0-\u27ff\u2900-\u297f]")
#: A text-mode argument holding ``<`` or ``&``: latex2mathml copies such text into the MathML
#: unescaped, where ``\text{<b>x</b>}`` becomes elements (their text lost, and ziamath fails
#: on the empty ``mtext`` they leave) and ``\text{</mtext><mi>x}`` rewrites the formula.
_MARKUP_IN_TEXT = re.compile(r"\\(?:text(?!style)[a-z]*|mbox|hbox|fbox)\s*\{[^{}]*[<&]")
#: MathML elements that hold only text (an element inside one came from text, not TeX).
_TOKENS = frozenset({"mi", "mn", "mo", "mtext", "ms"})
#: The space between the columns of ``cases`` (amsmath's ``\\quad``).
CASES_GAP = "1em"
#: Scripts beside a base (``\\lim\\nolimits`` keeps its limit here).
_SCRIPTED = frozenset({"msub", "msup", "msubsup"})
#: Delimiters after ``\\bigl``, ``\\Bigr`` …, which latex2mathml copies as their source
#: (``\\biggl\\{`` showed "\\{"; ``\\Bigl\\langle`` was refused as an unknown command).
SIZED_DELIMITERS = {
    "\\{": "{", "\\}": "}", "\\lbrace": "{", "\\rbrace": "}", "\\langle": "⟨",
    "\\rangle": "⟩", "\\lvert": "|", "\\rvert": "|", "\\vert": "|", "\\lVert": "‖",
    "\\rVert": "‖", "\\Vert": "‖", "\\|": "‖", "\\lfloor": "⌊", "\\rfloor": "⌋",
    "\\lceil": "⌈", "\\rceil": "⌉", "\\lbrack": "[", "\\rbrack": "]", "\\backslash": "∖",
}
_ENVIRONMENT = re.compile(r"\\(begin|end)\s*\{")


@dataclass(frozen=True)
class MathNode:
    """One MathML element: its tag, kept attributes, children and (for token elements) text."""

    tag: str
    attrs: tuple[tuple[str, str], ...] = ()
    children: tuple[MathNode, ...] = ()
    text: str = ""

    def attr(self, name: str, default: str = "") -> str:
        """The value of attribute ``name`` (``default`` when absent)."""
        return next((value for key, value in self.attrs if key == name), default)


@dataclass(frozen=True)
class Formula:
    """A parsed formula: the source, whether it is displayed, and its MathML content (an
    ``mrow`` standing for the ``<math>`` element). ``tag``: a displayed formula's own
    ``\\tag{x}`` as the text writers set at the right margin, "(x)" ("" for none); ``root``
    does not hold it."""

    tex: str
    display: bool
    root: MathNode
    tag: str = ""


def check_bounds(tex: str) -> None:
    """Refuse a formula too long or too deeply nested to convert within bounded work."""
    if len(tex) > MAX_TEX_CHARS:
        raise MathError(f"formula longer than {MAX_TEX_CHARS} characters")
    depth = deepest = 0
    escaped = False
    for char in tex:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "{":
            depth += 1
            deepest = max(deepest, depth)
        elif char == "}":
            depth -= 1
    environments = 0
    for match in _ENVIRONMENT.finditer(tex):
        environments += 1 if match.group(1) == "begin" else -1
        deepest = max(deepest, environments + depth)
    if deepest > MAX_GROUP_DEPTH:
        raise MathError(f"groups nested deeper than {MAX_GROUP_DEPTH} levels")


@lru_cache(maxsize=1024)
def parse_tex(tex: str, display: bool = False) -> Formula:
    """The checked MathML tree of ``tex``; raises :class:`MathError` for TeX that is not math."""
    source = tex.strip()
    if not source:
        raise MathError("empty formula")
    check_bounds(source)
    if _MARKUP_IN_TEXT.search(source):
        raise MathError("text in the formula holds '<' or '&', which would be read as markup")
    from latex2mathml.converter import convert

    body, tag = margin_tag(source) if display else (source, ())
    rewritten = normalise(body)
    try:
        markup = convert(rewritten, display="block" if display else "inline")
        element = ET.fromstring(markup)
    except RecursionError as exc:
        raise MathError(f"groups nested deeper than {MAX_GROUP_DEPTH} levels") from exc
    except Exception as exc:  # latex2mathml raises many kinds (IndexError, its own …)
        detail = str(exc).strip() or type(exc).__name__
        raise MathError(f"not TeX math latex2mathml can read ({detail})") from exc
    budget = [MAX_NODES]
    children = _children(element, budget, 0)
    root = MathNode("mrow", children=children)
    from renderers.math import rules

    if rules.MARK in rewritten:  # a table with ``|`` in its columns or ``\\hline``
        root = rules.ruled(root)
    if MARK in rewritten:  # a text row between aligned rows (``\\intertext``)
        from renderers.math.spans import spanned

        root = spanned(root)
    from renderers.math.arrows import marked_up_arrows

    root = marked_up_arrows(root)
    if not _shows_something(root):  # ``\frac{}{}``, ``\mathrm{}``: a drawing of no size
        raise MathError("the formula shows nothing")
    return Formula(tex=source, display=display, root=root, tag=_tag_text(tag))


def _tag_text(pieces: tuple[str, ...]) -> str:
    """A margin tag's text: its text pieces as written, its ``$…$`` pieces as a line of
    Unicode (:mod:`renderers.math.linear`; the source when not math)."""
    if not pieces:
        return ""
    from renderers.math.linear import tex_line  # imports this module

    return "".join(
        (tex_line(piece) or piece) if index % 2 else piece for index, piece in enumerate(pieces)
    )


def _shows_something(node: MathNode) -> bool:
    """Whether ``node`` holds a character or a radical to draw (a space is none): ziamath
    gives a formula of neither a size it cannot draw (``\\quad``, ``{}``, ``\\boxed{}``)."""
    return (
        bool(node.text.strip())
        or node.tag in ("msqrt", "mroot")
        or any(_shows_something(child) for child in node.children)
    )


def shown_tex(tex: str) -> str:
    """A formula's source as a warning quotes it (one longer than 60 characters shortened)."""
    return repr(tex if len(tex) <= 60 else tex[:59] + "…")


def tex_error(tex: str, display: bool = False) -> str | None:
    """Why ``tex`` cannot be shown as math, or None when it can."""
    try:
        parse_tex(tex, display)
    except MathError as exc:
        return str(exc)
    return None


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def _children(element: ET.Element, budget: list[int], depth: int) -> tuple[MathNode, ...]:
    out: list[MathNode] = []
    for child in element:
        out.extend(_node(child, budget, depth + 1))
    return tuple(out)


def _node(element: ET.Element, budget: list[int], depth: int) -> tuple[MathNode, ...]:
    budget[0] -= 1
    if budget[0] < 0:
        raise MathError(f"formula of more than {MAX_NODES} parts")
    if depth > 4 * MAX_GROUP_DEPTH:
        raise MathError(f"groups nested deeper than {MAX_GROUP_DEPTH} levels")
    tag = _local(element.tag)
    if tag in _TOKENS and len(element):
        raise MathError("text in the formula holds markup")
    children = _children(element, budget, depth)
    if tag not in ELEMENTS:
        return children
    text = (element.text or "") if not children else ""
    if tag == "mo":
        text = SIZED_DELIMITERS.get(text, text)
    if tag == "mi" and ARROW.fullmatch(text):
        tag = "mo"  # latex2mathml's \\longrightarrow, \\implies …: an operator, spaced as one
    if tag in ("mi", "mo") and _UNKNOWN_COMMAND.match(text):
        raise MathError(f"unknown command {_UNKNOWN_COMMAND.match(text).group()}")  # type: ignore[union-attr]
    if (tag == "mtext" and not text) or (tag == "mtable" and not children):
        return (MathNode("mrow"),)  # ziamath fails on an empty text or table (``\\text{}``)
    attrs = tuple(sorted(
        (name, value) for name, value in element.attrib.items()
        if (name in ATTRIBUTES and _VALUE.match(value))
        or (name in COLOUR_ATTRIBUTES and _COLOUR.match(value))
    ))
    if tag == "mrow" and any(child.tag == "mtable" for child in children):
        children = _cases_spaced(children)
    if tag in _SCRIPTED and children and _braced_operator(children[0]):
        children = (_fixed_limits(children[0]), *children[1:])
    return (MathNode(tag, attrs, children, text),)


def _cases_spaced(children: tuple[MathNode, ...]) -> tuple[MathNode, ...]:
    """A ``cases`` table (:func:`_is_cases`) with amsmath's quad between its columns:
    latex2mathml gives none, and the drawing's default of 0.3 em ran each value into its
    condition. A gap of its own also keeps the drawing's ``array`` margins off it, as amsmath
    sets none (``@{}l@{\\quad}l@{}``)."""
    out = list(children)
    for index, child in enumerate(children):
        if (child.tag == "mtable" and not child.attr("columnspacing")
                and _is_cases(children[index - 1] if index else None, children[index + 1 :])):
            attrs = tuple(sorted((*child.attrs, ("columnspacing", CASES_GAP))))
            out[index] = MathNode("mtable", attrs, child.children, child.text)
    return tuple(out)


def _is_cases(before: MathNode | None, after: tuple[MathNode, ...]) -> bool:
    """Whether a table between ``before`` and ``after`` in its row is amsmath's ``cases``:
    latex2mathml writes ``cases`` (and ``dcases``, rewritten to it) as an opening brace and the
    table, with no closing fence, where ``\\left\\{\\begin{array}…\\right.`` has an empty one and
    keeps an ``array``'s spaces; ``rcases`` is rewritten to an empty opening fence, the table
    and a closing brace (an ``array`` written so reads as ``rcases``)."""
    if before is None or before.tag != "mo" or before.attr("form") != "prefix":
        return False
    if before.text == "{":
        return not after
    return (not before.text and len(after) == 1 and after[0].tag == "mo"
            and after[0].text == "}")


def _braced_operator(base: MathNode) -> bool:
    """A script's base that is one operator in braces (``{\\lim}_x``, ``\\lim\\nolimits_x``
    as :mod:`~renderers.math.normalise` writes it)."""
    return base.tag == "mrow" and len(base.children) == 1 and base.children[0].tag == "mo"


def _fixed_limits(base: MathNode) -> MathNode:
    """The braced operator marked to keep its scripts beside it, as TeX sets a braced one:
    browsers and the drawing would otherwise move them below in a displayed formula."""
    (operator,) = base.children
    attrs = tuple(sorted({**dict(operator.attrs), "movablelimits": "false"}.items()))
    return MathNode("mrow", base.attrs, (MathNode("mo", attrs, (), operator.text),))
