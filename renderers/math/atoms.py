"""TeX's spaces around operators, relations and punctuation in the drawing (ziamath), which
spaces an operator by where it sits in its row alone: the minus of ``x=-a`` or ``(-a)`` took a
binary operator's spaces, a comma 6/18 em after it, each relation of ``:=`` its own.

TeX gives each atom of a list a class and spaces it by its neighbours' (TeXbook, Appendix G).
:func:`tex_atoms` follows the rules that decide a binary operator's class: one that is first
in its list, or follows a binary operator, large operator, relation, opening bracket or
punctuation, is an ordinary symbol (rule 5), as is one followed by a relation, closing bracket
or punctuation, or last (rule 6 and the list's end). It writes the spaces TeX then puts around
it (4/18 em a side for a binary operator, none for an ordinary symbol), around a relation
(5/18 em beside an operand, none beside another relation), after punctuation (3/18 em) and
beside a function name (3/18 em, outside its scripts) on the operator itself, in em of the
glyphs (``renderers.math.svg`` converts them to ziamath's em). A change of style
(``\\displaystyle``) is no atom: the list goes on through it. ziamath puts no space around an
operator in a script, as TeX does not.
"""

from __future__ import annotations

import enum
import unicodedata
from collections.abc import Iterator
from functools import lru_cache
from itertools import pairwise

from renderers.math.tex import MathNode


class Atom(enum.Enum):
    """TeX's classes of the atoms that decide a binary operator's (Inner spaces a following
    binary operator as Ord does, so it is Ord here)."""

    ORD = "ord"
    OP = "op"
    BIN = "bin"
    REL = "rel"
    OPEN = "open"
    CLOSE = "close"
    PUNCT = "punct"


#: The characters TeX (plain, LaTeX, latexsym, amssymb) sets as binary operators, as
#: latex2mathml writes them (``\\cdot`` as ·, ``\\setminus`` as ⧵, ``\\ast`` as ``*``).
_BINARY = frozenset("+−±∓·×÷*∗∘∙•⋅∧∨∩∪⊎⊓⊔⊕⊖⊗⊘⊙⊚⊛⊝∖⧵⋆⋄△▽◁▷◃▹⊴⊵◯†‡≀⨿⊞⊟⊠⊡⋉⋊⋋⋌⋎⋏⋒⋓∔⋇⊼⊻⌆⊺⬝")
#: The characters TeX sets as relations that ziamath's operator dictionary lacks, which it
#: drew unspaced (``A\\subset B`` as A⊂B); arrows are relations by their Unicode block
#: (:data:`_ARROW_BLOCKS`), those with text over them spaced as their arrow
#: (:mod:`renderers.math.arrows` reads the spaces written here).
_UNLISTED_RELATIONS = frozenset("⊂⊊⊋⊧⊩⟂⋈⨝⌣⌢≊≜≕∽≗≓≒⋘⋙⪷⪸⪇⪈⋑⊸⋔≬")
_OPENING = frozenset("([{⟨⌈⌊⟪⟦")
_CLOSING = frozenset(")]}⟩⌉⌋⟫⟧!?")
_PUNCTUATION = frozenset(",;")
#: Bars latex2mathml writes alike for ``|`` (Ord in TeX) and ``\\lvert``/``\\rvert``: one
#: where a list or an operand starts opens (so ``|-a|`` and ``x=|-a|`` take a sign), as
#: ``\\lvert`` would.
_BARS = frozenset("|‖")
#: After these (or first in its list) a binary operator is an ordinary symbol (rule 5).
_NO_LEFT_OPERAND = frozenset({Atom.BIN, Atom.OP, Atom.REL, Atom.OPEN, Atom.PUNCT})
#: Before these (or last in its list) a binary operator is an ordinary symbol (rule 6).
_NO_RIGHT_OPERAND = frozenset({Atom.REL, Atom.CLOSE, Atom.PUNCT})
#: TeX's thin space between these and a large operator or function name (TeXbook, Chapter 18);
#: between two, the first sets it (a large operator's is in ziamath's dictionary).
_THIN_BEFORE_OP = frozenset({Atom.ORD, Atom.CLOSE})
_THIN_AFTER_OP = frozenset({Atom.ORD, Atom.OP})
_THIN = "thinmathspace"
#: TeX's thick space between these and a relation (none beside a bracket, punctuation or
#: another relation).
_THICK_BEFORE_REL = frozenset({Atom.ORD, Atom.OP, Atom.CLOSE})
_THICK_AFTER_REL = frozenset({Atom.ORD, Atom.OP, Atom.OPEN})
_THICK = "thickmathspace"
_MEDIUM = ("mediummathspace", "mediummathspace")
_NONE = ("0em", "0em")

#: Elements whose children are one list of atoms, as an ``mrow``'s (an inferred row in MathML).
LISTS = frozenset({"math", "mrow", "mtd", "mstyle", "msqrt", "mpadded", "mphantom", "menclose",
                   "merror"})
#: Elements whose children continue the list they sit in: latex2mathml wraps what follows
#: ``\\displaystyle`` or ``\\color`` in an ``mstyle``, but a change of style or colour is no
#: atom in TeX (``a\\displaystyle -b`` keeps a binary minus; ``a{\\displaystyle -b}``, a
#: group, comes in an ``mrow`` and starts a list).
_TRANSPARENT = frozenset({"mstyle"})
#: Elements that embellish their first child: an operator with scripts or limits keeps the
#: operator's class in its list (``\\sum_i``, ``\\overset{!}{=}``).
_EMBELLISHING = frozenset({"msub", "msup", "msubsup", "munder", "mover", "munderover"})
#: Unicode's arrow blocks: TeX sets arrows as relations.
_ARROW_BLOCKS = ((0x2190, 0x21FF), (0x27F0, 0x27FF), (0x2900, 0x297F))


def tex_atoms(node: MathNode, *, continued: bool = False) -> MathNode:
    """``node`` with each operator and punctuation spaced by its TeX class in its list; an
    operator with spaces of its own (``lspace``/``rspace``) keeps them. ``continued``: ``node``
    is an element whose children continue the list around it, which spaces them."""
    is_list = node.tag in LISTS
    skip = 0 if is_list or node.tag not in _EMBELLISHING else 1
    children = tuple(
        tex_atoms(child, continued=child.tag in _TRANSPARENT and index >= skip)
        for index, child in enumerate(node.children))
    if is_list and not continued:
        children = _spaced_list(children)
    elif not is_list:  # each child is a list of its own, but an embellished operator's
        children = children[:skip] + tuple(
            part for child in children[skip:] for part in _spaced_list((child,)))
    if children == node.children:
        return node
    return MathNode(node.tag, node.attrs, children, node.text)


def _spaced_list(children: tuple[MathNode, ...]) -> tuple[MathNode, ...]:
    """The atoms of one list (with those of the elements that continue it, :data:`_TRANSPARENT`)
    with TeX's spaces (:func:`_spaces`) by rules 5 and 6."""
    items = _items(children)
    atoms: list[int] = []  # indices of the items that are atoms (not spaces)
    classes: dict[int, Atom] = {}
    for index, item in enumerate(items):
        if item.tag == "mspace":
            continue
        previous = classes[atoms[-1]] if atoms else None
        atom = _atom_class(item, previous)
        if atom is Atom.BIN and (previous is None or previous in _NO_LEFT_OPERAND):
            atom = Atom.ORD
        if atom in _NO_RIGHT_OPERAND and previous is Atom.BIN:
            classes[atoms[-1]] = Atom.ORD
        atoms.append(index)
        classes[index] = atom
    if atoms and classes[atoms[-1]] is Atom.BIN:
        classes[atoms[-1]] = Atom.ORD
    before = {later: classes[index] for index, later in pairwise(atoms)}
    after = {index: classes[later] for index, later in pairwise(atoms)}
    spaced = (_spaced(item, classes[index], before.get(index), after.get(index))
              if index in classes else (item,) for index, item in enumerate(items))
    return _rebuilt(children, spaced)


def _items(children: tuple[MathNode, ...]) -> list[MathNode]:
    """The items of a list in order, those of :data:`_TRANSPARENT` elements in their place."""
    return [item for child in children
            for item in (_items(child.children) if child.tag in _TRANSPARENT else (child,))]


def _rebuilt(children: tuple[MathNode, ...],
             spaced: Iterator[tuple[MathNode, ...]]) -> tuple[MathNode, ...]:
    """``children`` with each item of :func:`_items` replaced by the next nodes of ``spaced``."""
    rebuilt: list[MathNode] = []
    for child in children:
        if child.tag not in _TRANSPARENT:
            rebuilt.extend(next(spaced))
            continue
        inner = _rebuilt(child.children, spaced)
        rebuilt.append(child if inner == child.children
                       else MathNode(child.tag, child.attrs, inner, child.text))
    return tuple(rebuilt)


def _spaced(node: MathNode, atom: Atom, previous: Atom | None,
            following: Atom | None) -> tuple[MathNode, ...]:
    """``node`` (or the operator it embellishes) with the spaces TeX puts around it as an
    ``atom`` between ``previous`` and ``following`` (None: first, last in its list), if
    :func:`_spaces` has them, as an ``mo`` (latex2mathml writes ``\\pm``, ``\\sin``, ``:`` and
    the long arrows as ``mi``). A function name's spaces are set outside its scripts, as
    spaces of their own (``\\sin^2 x``, ``\\lim_n a``: ziamath set none there)."""
    if node.tag in _EMBELLISHING and node.children:
        core = node.children[0]
        if atom is Atom.OP and _function_name(core.text.strip()) and not _own_spaces(core):
            left, right = _spaces(core.text.strip(), atom, previous, following) or _NONE
            bare = _with_spaces(core, _NONE)
            scripted = MathNode(node.tag, node.attrs, (bare, *node.children[1:]), node.text)
            return (*_space(left), scripted, *_space(right))
        (spaced_core,) = _spaced(core, atom, previous, following)
        if spaced_core is core:
            return (node,)
        return (MathNode(node.tag, node.attrs, (spaced_core, *node.children[1:]), node.text),)
    if node.tag not in ("mo", "mi") or _own_spaces(node):
        return (node,)
    spaces = _spaces(node.text.strip(), atom, previous, following)
    return (node,) if spaces is None else (_with_spaces(node, spaces),)


def _own_spaces(node: MathNode) -> bool:
    return bool(node.attr("lspace").strip() or node.attr("rspace").strip())


def _with_spaces(node: MathNode, spaces: tuple[str, str]) -> MathNode:
    """The operator ``node`` as an ``mo`` with the spaces (left, right)."""
    attrs = tuple((key, value) for key, value in node.attrs if key not in ("lspace", "rspace"))
    return MathNode("mo", (*attrs, ("lspace", spaces[0]), ("rspace", spaces[1])), (), node.text)


def _space(width: str) -> tuple[MathNode, ...]:
    """A space of ``width`` beside an atom (none for no width)."""
    return () if width == "0em" else (MathNode("mspace", (("width", width),)),)


def _spaces(text: str, atom: Atom, previous: Atom | None,
            following: Atom | None) -> tuple[str, str] | None:
    """TeX's spaces (left, right) around the operator ``text`` as an ``atom`` between
    ``previous`` and ``following``: a binary operator's 4/18 em a side, none as an ordinary
    symbol; a relation's 5/18 em beside an operand or opening bracket (none beside another
    relation, which TeX sets against it, ``:=``, nor at the ends of its list); punctuation's
    3/18 em after; a function name's (``\\sin``) 3/18 em beside an operand or operator (a
    relation's or binary operator's own space is on their side). None: the operator's spaces
    are ziamath's (its dictionary's)."""
    if text in _BINARY:
        return _MEDIUM if atom is Atom.BIN else _NONE
    if atom is Atom.REL:
        return (_THICK if previous in _THICK_BEFORE_REL else "0em",
                _THICK if following in _THICK_AFTER_REL else "0em")
    if text in _PUNCTUATION:
        return ("0em", "0em" if following is None else _THIN)
    if atom is Atom.OP and _function_name(text):
        return (_THIN if previous in _THIN_BEFORE_OP else "0em",
                _THIN if following in _THIN_AFTER_OP else "0em")
    return None


def _atom_class(node: MathNode, previous: Atom | None) -> Atom:
    """TeX's class of ``node`` in its list after an atom of class ``previous`` (None: first)."""
    if node.tag in _EMBELLISHING and node.children:
        return _atom_class(node.children[0], previous)
    if node.tag not in ("mo", "mi"):
        return Atom.ORD
    text = node.text.strip()
    if node.attr("fence") == "true" and node.attr("form") in ("prefix", "postfix"):
        return Atom.OPEN if node.attr("form") == "prefix" else Atom.CLOSE
    if text in _BINARY:
        return Atom.BIN
    if text in _PUNCTUATION:
        return Atom.PUNCT
    if text in _OPENING or (text in _BARS and (previous is None or previous in _NO_LEFT_OPERAND)):
        return Atom.OPEN
    if text in _CLOSING:
        return Atom.CLOSE
    relations, large = _dictionary_classes()
    if text in relations or text in _UNLISTED_RELATIONS or (len(text) == 1 and _is_arrow(text)):
        return Atom.REL
    if text in large or _function_name(text):
        return Atom.OP  # ∑, ∫, \lim
    return Atom.ORD


def _function_name(text: str) -> bool:
    """A name set upright as an operator (``\\sin``, ``\\operatorname{sgn}``): latex2mathml
    writes its letters as one ``mi`` or ``mo`` (and ``\\mathrm{ab}`` a letter each), with a
    space between the words of ``\\limsup`` and ``\\operatorname{arg\\,max}``."""
    letters = "".join(text.split())
    return len(letters) > 1 and letters.isalpha()


def _is_arrow(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in _ARROW_BLOCKS) or (
        unicodedata.name(char, "").endswith(" ARROW"))


@lru_cache(maxsize=1)
def _dictionary_classes() -> tuple[frozenset[str], frozenset[str]]:
    """The relations (spaced as ``=`` on both sides, in whichever units the dictionary holds
    its spaces) and large operators of ziamath's operator dictionary."""
    from ziamath import operators

    table = operators.operators
    relation = table[("=", "infix")]["lspace"]
    relations = frozenset(name for (name, form), params in table.items()
                          if form == "infix" and params.get("lspace") == relation
                          and params.get("rspace") == relation)
    large = frozenset(name for (name, _), params in table.items()
                      if "true" in (params.get("largeop"), params.get("movablelimits")))
    return relations, large - _BINARY
