"""Corrections of citeproc-py where it departs from the CSL 1.0.2 specification in ways the
bundled styles meet, installed once on its classes (:func:`install_fixes`).

* **Substitution.** A ``<substitute>`` child that renders must suppress every variable it
  rendered in the rest of the entry. citeproc-py suppressed only a variable the child names
  itself, not one rendered through a macro (``<text macro="title"/>``), so APA and Chicago
  printed an author-less web page's title twice ("*Grid page*. (2025). *Grid page*.").
* **Sort keys.** Keys are compared as plain text (CSL: formatting does not take part in
  sorting); citeproc-py compared them with their formatting, so an italic title (an author-less
  web page in APA) sorted after every name.
  Quotation marks a style puts around a title do not take part either (CSL: a key is the
  variable's value): an author-less report filed as "“Internal cost review”" came after every
  name in Chicago and Harvard. A name key follows ``demote-non-dropping-particle="sort-only"``
  (Harvard): "van Gogh, V." is printed so but filed under G, as citeproc-js files it.
* **Initials.** ``initialize-with`` turns given names into initials. citeproc-py took every
  given-name word that does not start with an upper-case letter for a particle and wrapped it in
  stray marks ("王, . 小明 ." in APA): a word in a script without letter case (Chinese,
  Japanese, Korean, Hebrew, Arabic) or written in lower case is now kept whole ("王, 小明"), and
  no mark stands without its initial. (citeproc-js keeps Chinese, Japanese and Korean given
  names whole too, but initialises Hebrew and Arabic ones.)
  citeproc-py also ignored ``initialize="false"`` (an inheritable name option), so Chicago,
  whose ``<name>`` elements set it, printed "J. Doe" for "Jane Doe"; now only the initials the
  name already has get the mark ("James T Kirk" → "James T. Kirk").
* **Punctuation at span ends.** citeproc-py drops a punctuation mark that repeats the one
  before it ("n.d." + "." → "n.d."), but cannot see the private marks that close citerender's
  spans (:mod:`renderers.styles.markup`): Chicago notes ended "n.d.." where the citation item's
  span closes between the two periods. :func:`merged_seams` drops such a repeat on the
  processor's output, and a period after a title's "?" or "!" (APA printed "*Why?*. (2024)").
* **Punctuation in quotes.** A locale with ``punctuation-in-quote="true"`` (en-US) puts a period
  or comma that follows a closing quote inside it (IEEE "“Wind report.” [Online]", Chicago
  "“Solar Costs,” 2024"); citeproc-py reads the option but never applies it.
  :class:`OutputFixes` does, on the processor's output, by the option and ``close-quote`` of
  the locale in use (:mod:`renderers.styles.locales`): none in German („…“.) or French.
* **Quotes inside quotes.** A title that holds a quotation and that a style puts in quotation
  marks (``quotes="true"``) gets the locale's inner quotes for its own: IEEE "“‘Net zero’ by
  2050,”", not "““Net zero” by 2050,”" (citeproc-js flips them so).
* **Title case.** ``text-case="title"`` capitalizes the lower-case words of an English title
  but its stop words, which stay lower-case unless they open or close the title or follow a
  colon. citeproc-py knew only the specification's short stop-word list and never
  capitalized a closing one; citeproc-js (and pandoc's citeproc) also keep lower-case the
  prepositions of its longer list and the particles of names in titles ("de", "von", "van",
  "et"), so Chicago printed "Éléments De Géométrie" where they print "Éléments de
  Géométrie". :func:`title_case` uses that list (:data:`STOP_WORDS`), capitalizes the first
  letter after opening punctuation ("(new)" → "(New)"), and leaves words with a capital
  letter, and a title in another language (the item's ``language``, else the locale in use:
  a German document's titles keep their case), as they are.
* **Ordinals.** The ordinal terms (``ordinal``, ``ordinal-00`` … ``ordinal-99``) are taken
  as a set from the first locale that defines any of them (CSL: redefining one replaces them
  all), a two-digit term before a one-digit one before ``ordinal``, each by its ``match``,
  and the variant of the gender of the term it qualifies (a day: the month's). citeproc-py
  looked each term up through every locale, so a German date read "3rd Februar" (en-US's
  ``ordinal-03`` before de-DE's ``ordinal``), and took the first gendered variant: "1ʳᵉ
  janvier".
* **Localized date delimiters.** A localized date format (``<locale><date form="text"
  delimiter=" ">``) joins its parts with its own delimiter. citeproc-py used the calling
  ``<date>``'s (usually none), so NLM/Vancouver wrote "cited 2025Jan5".

* **Page ranges.** ``page-range-format`` shortens the second page of a range (CSL appendix
  V). citeproc-py compared the two numbers digit by digit from the left whatever their
  lengths, so Vancouver's ``minimal`` printed "186:1–2" for pages 1–12, and applied the
  four-digit rule of ``chicago-15`` to ``chicago-16`` too. :func:`range_end` follows the
  appendix, and expands an abbreviated range first ("321-28" → "321–328" in APA).
* **Labels of empty variables.** A ``cs:label`` is rendered only when its variable is not
  empty; citeproc-py always printed the term, so Chicago wrote "BBC News, October 27, 2021.
  Edition." and every short note of a journal article ended ", edition".
* **Citation order.** Without a ``cs:sort`` in ``cs:citation`` the cites of a citation keep
  the order the author gave; citeproc-py put them in bibliography order, so Chicago's
  "[[S:1,3]]" read "(Nguyen et al. 2024; Vaswani 2017)". (With a sort, ties stay in
  bibliography order.)
* **Cite grouping.** With ``collapse="year"`` (APA, Chicago author-date, Harvard) the cites of
  one citation whose names read alike are grouped and the names printed once: "(Smith, 2024a,
  2024b)", not "(Smith, 2024a; Smith, 2024b)"; citeproc-py ignored ``collapse``.

Each is the specification's rule, not a per-style tweak; the tests of :mod:`renderers.styles`
show them on the bundled styles.

citeproc-py also looks every macro up with an XPath query over the whole style, each time it is
called: 500 citations in APA cost 14 CPU seconds, most of it in those queries. Within one
:func:`style_run` the macros are found by name in a dict, and what a macro renders is worked out
once, as is each item's sort key.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from citeproc import model as citeproc_model
from citeproc.model import (
    CitationStylesElement,
    Date,
    FormatNumber,
    Key,
    Label,
    Layout,
    Macro,
    Name,
    Names,
    Quoted,
    Substitute,
    TextCased,
    VariableError,
)
from citeproc.string import NoCase, join

from renderers.styles.catalog import CSL_NS
from renderers.styles.markup import CLOSINGS, strip_marks, unit_parts

_KEYS_WITH_FORMATTING = Key.sort_keys
_LABEL_PROCESS = Label.process
_NAME_PROCESS = Name.process
_QUOTE = Quoted.quote
_NAMES_RENDER = Names.render
#: Quotation marks a style may open a sort key with (``quotes="true"`` around a title).
_QUOTE_MARKS = "\"'“”‘’«»„‚‹›「」『』"

_CASE = TextCased.case
#: Words ``text-case="title"`` leaves in lower case inside a title: citeproc-js's skip words
#: (the CSL specification's stop words, more prepositions, and the particles "de", "d'",
#: "von", "van", "et", "c", "ca"), its one-word entries.
_STOP_WORDS = """
    a about above across afore after against along alongside amid amidst among amongst an and
    anenst apropos apud around as aside astride at athwart atop barring before behind below
    beneath beside besides between beyond but by c ca circa d' de despite down during et except
    for forenenst from given in inside into lest like modulo near next nor notwithstanding of
    off on onto or out over per plus pro qua sans since so than the through thru throughout
    thruout till to toward towards under underneath until unto up upon v v. van versus via
    vis-à-vis von vs vs. with within without yet
"""
STOP_WORDS: frozenset[str] = frozenset(_STOP_WORDS.split())
#: A word's opening punctuation, its body, and its closing punctuation.
_WORD_PARTS = re.compile(r"^(\W*)(.*?)(\W*)$", re.DOTALL)
_MACRO_BY_XPATH = CitationStylesElement.get_macro
_MACRO_CALLS_VARIABLE = Macro.calls_variable
#: A punctuation mark, the spans closing after it, and the same mark again (citeproc-py's seam
#: punctuation).
_REPEATED_ACROSS_SPANS = re.compile(f"([.,;:!?])([{CLOSINGS}]+)\\1")
#: A period after a question or exclamation mark, with only the ends of spans between them,
#: that ends a sentence (not the "?." of a URL's query).
_PERIOD_AFTER_MARK = re.compile(f"([!?])([{CLOSINGS}]*)\\.(?![\\w.])")
#: An ordinal term's name: ``ordinal`` or ``ordinal-`` and two digits.
_ORDINAL_TERM = re.compile(r"ordinal(?:-(\d\d))?")
#: A given name's words (with the period of an abbreviation) and the hyphens between them.
_GIVEN_TOKENS = re.compile(r"[^\s.\-]+\.?|-")


@dataclass
class _Run:
    """What one style run looks up again and again: macros by name, and per macro whether it
    calls a variable and which variables its ``cs:text`` elements render."""

    macros: dict[str, Any]
    calls_variable: dict[str, bool] = field(default_factory=dict)
    variables: dict[str, tuple[str, ...]] = field(default_factory=dict)
    sort_keys: dict[tuple[str, str], Any] = field(default_factory=dict)
    inner_quotes: tuple[tuple[str, str], ...] | None = None  # the locale's, once looked up


_RUN: ContextVar[_Run | None] = ContextVar("citerender_csl_run", default=None)


@contextmanager
def style_run(root: Any) -> Iterator[None]:
    """Within this block, macros of the style ``root`` are looked up by name."""
    macros: dict[str, Any] = {}
    for macro in root.iterfind(f"{{{CSL_NS}}}macro"):
        macros.setdefault(macro.get("name"), macro)
    token = _RUN.set(_Run(macros))
    try:
        yield
    finally:
        _RUN.reset(token)


def _get_macro(self: CitationStylesElement, name: str) -> Any:
    run = _RUN.get()
    found = run.macros.get(name) if run is not None else None
    return found if found is not None else _MACRO_BY_XPATH(self, name)


def _macro_calls_variable(self: Macro) -> bool:
    run = _RUN.get()
    name = self.get("name")
    if run is None or name is None:
        return bool(_MACRO_CALLS_VARIABLE(self))
    if name not in run.calls_variable:
        run.calls_variable[name] = bool(_MACRO_CALLS_VARIABLE(self))
    return run.calls_variable[name]


def _rendered_variables(element: Any, seen: set[str]) -> Iterator[str]:
    """The variables ``element`` renders through ``cs:text``, following macros."""
    for node in element.iter(f"{{{CSL_NS}}}text"):
        variable = node.get("variable")
        if variable:
            yield variable
        macro = node.get("macro")
        if macro and macro not in seen:
            seen.add(macro)
            yield from _macro_variables(node, macro, seen)


def _macro_variables(node: Any, name: str, seen: set[str]) -> tuple[str, ...]:
    run = _RUN.get()
    if run is not None and name in run.variables:
        return run.variables[name]
    try:
        found = node.get_macro(name)
    except (IndexError, KeyError, AttributeError):
        return ()
    variables = tuple(_rendered_variables(found, seen))
    if run is not None:
        run.variables[name] = variables
    return variables


def _substitute_render(self: Substitute, item: Any, context: Any = None, **kwargs: Any) -> Any:
    """``Substitute.render`` as the CSL specification wants it: the first child that renders
    wins, and every variable it rendered (macros followed) is suppressed in the rest of the
    entry. citeproc-py suppressed only a variable the child names itself."""
    for child in self.getchildren():
        try:
            if isinstance(child, Names) and child.name is None:
                names = self.xpath_search("./parent::cs:names[1]")[0]
                text = child.render(item, names_context=names, context=context, **kwargs)
            else:
                text = child.render(item, context=context, **kwargs)
        except VariableError:
            continue
        if text:
            _repress(child, item, str(text), context)
            return text
    return None


def _repress(child: Any, item: Any, shown: str, context: Any) -> None:
    layout = context.get_layout()
    if child.get("variable"):
        for variable in child.get("variable").split():
            layout.repressed.setdefault(child.tag, []).append(variable)
    text_tag = f"{{{CSL_NS}}}text"
    for variable in set(_rendered_variables(child, set())):
        try:
            value = item.reference[variable.replace("-", "_")]
        except (VariableError, KeyError, AttributeError):
            continue
        if str(value) and str(value).casefold() in shown.casefold():
            layout.repressed.setdefault(text_tag, []).append(variable)




def given_initials(given: str, mark: str, *, hyphenate: bool, initialize: bool = True) -> str:
    """``given`` as initials, each followed by ``mark`` ("Jean-Paul" → "J.-P." with ``". "``).

    Only a word that starts with an upper-case letter has an initial: a lower-case word (a
    particle) and a word in a script without letter case are kept whole. Without
    ``initialize`` (``initialize="false"``) every word is kept whole but the initials the name
    already has ("James T Kirk" → "James T. Kirk"). A hyphen between two initials is kept when
    ``hyphenate`` (``initialize-with-hyphen``), between whole words always.
    """
    out = ""
    previous: bool | None = None  # whether the word before was an initial (None: no word yet)
    hyphen = False
    for token in _GIVEN_TOKENS.findall(given):
        if token == "-":
            hyphen = previous is not None
            continue
        initial = token[0].isupper() and (initialize or len(token.rstrip(".")) == 1)
        if previous is not None:
            keep_hyphen = hyphen and (hyphenate or not (initial and previous))
            out = _joined(out, previous and initial, keep_hyphen)
        out += token[0] + mark if initial else token
        previous, hyphen = initial, False
    return " ".join(out.split())


def _joined(out: str, initials: bool, hyphen: bool) -> str:
    """``out`` ready for the next word: a hyphen, nothing between two ``initials`` (the mark
    is their spacing) or one space."""
    if hyphen:
        return out.rstrip() + "-"
    return out if initials else out.rstrip() + " "


def _initialize(self: Name, given: Any, mark: Any, context: Any) -> str:
    """``Name.initialize`` by :func:`given_initials`, honouring ``initialize="false"``."""
    hyphenate = bool(self.get_option("initialize-with-hyphen", context))
    initialize = str(self.get_option("initialize", context)).lower() != "false"
    start, inner, end = unit_parts(str(given))  # a name in a unit span keeps it
    return start + given_initials(inner, str(mark), hyphenate=hyphenate,
                                  initialize=initialize) + end


@dataclass(frozen=True)
class OutputFixes:
    """The corrections made on the processor's output text, for one style."""

    close_quote: str  # the locale's closing quote when punctuation goes inside it, else ""

    @classmethod
    def of(cls, root: Any) -> OutputFixes:
        """The corrections for the style ``root`` (its locales already chosen)."""
        inside = str(root.get_locale_option("punctuation-in-quote") or "").lower() == "true"
        return cls(str(root.get_single_term("close-quote")) if inside else "")

    def apply(self, rendered: object) -> str:
        text = merged_seams(str(rendered))
        return punctuation_in_quotes(text, self.close_quote) if self.close_quote else text


def punctuation_in_quotes(text: str, close_quote: str) -> str:
    """``text`` with a period or comma that follows ``close_quote`` (span ends between them
    allowed) moved inside it. A period after a quotation ending in ".", "?" or "!", and a comma
    after one ending in "?" or "!", is dropped (the quotation's own mark stands for it)."""
    closings = f"[{CLOSINGS}]*"
    finder = re.compile(f"({re.escape(close_quote)})({closings})([.,])")

    def moved(match: re.Match[str]) -> str:
        quote, ends, mark = match.groups()
        last = text[: match.start()].rstrip(CLOSINGS)[-1:]  # the quotation's last character
        if last in ("?", "!") or (mark == "." and last == "."):
            return quote + ends
        return mark + quote + ends

    return finder.sub(moved, text)


def merged_seams(text: str) -> str:
    """``text`` (the processor's output) without a punctuation mark that repeats the one before
    it with only the ends of spans between them ("n.d.", end of span, "." → "n.d.", end of
    span), and without a period after a title's own "?" or "!" (APA's "*What is solar
    power?*. (2024)" → "*What is solar power?* (2024)", as citeproc-js writes it)."""
    return _PERIOD_AFTER_MARK.sub(r"\1\2", _REPEATED_ACROSS_SPANS.sub(r"\1\2", text))


def _render_single_date(
    self: Date, date: Any, show_parts: Any = None, context: Any = None
) -> Any:
    """``Date.render_single_date`` joining a localized format's parts with its own delimiter."""
    parts = self.parts(date, show_parts, context) if context != self else self.parts(
        date, show_parts
    )
    if not parts:
        return None
    own = not self.is_locale_date() or self.get("delimiter") is not None
    return (self if own or context is None else context).join(parts)


def _to_ordinal(number: int, context: Any) -> str:
    """citeproc-py's ``to_ordinal`` by :func:`ordinal_suffix` over the style's locales."""
    terms = _ordinal_terms(context.get_root().locales)
    qualified = "month-01" if context.tag.endswith(("}date", "}date-part")) else (
        context.get("variable") or "")
    gender = next((t.get("gender") for t in _locale_terms(context.get_root().locales)
                   if t.get("name") == qualified and t.get("form") is None), None)
    return f"{number}{ordinal_suffix(number, terms, gender)}"


def _locale_terms(locales: Any) -> Iterator[Any]:
    """The ``cs:term`` elements of ``locales``, in their order."""
    for locale in locales:
        yield from locale.iterfind(f"{{{CSL_NS}}}terms/{{{CSL_NS}}}term")


def _ordinal_terms(locales: Any) -> list[Any]:
    """The ordinal terms of the first of ``locales`` that defines any."""
    for locale in locales:
        found = [t for t in _locale_terms((locale,))
                 if _ORDINAL_TERM.fullmatch(t.get("name", "")) and t.get("form") is None]
        if found:
            return found
    return []


def ordinal_suffix(number: int, terms: list[Any], gender: str | None = None) -> str:
    """The suffix of ``number`` among one locale's ordinal ``terms`` (elements with ``name``,
    ``match``, ``gender-form`` and text): the first of ``ordinal-10`` … ``ordinal-99``,
    ``ordinal-00`` … ``ordinal-09`` and ``ordinal`` that matches (CSL's defaults: the last two
    digits, the last digit), in its ``gender`` variant, else its neuter one."""

    def digits(name: str) -> str:
        return _ORDINAL_TERM.fullmatch(name).group(1) or ""  # type: ignore[union-attr]

    def matches(name: str, match: str | None) -> bool:
        given = digits(name)
        if not given:
            return True
        if match == "whole-number":
            return number == int(given)
        if given[0] != "0" or match == "last-two-digits":
            return number % 100 == int(given)
        return number % 10 == int(given)

    def rank(name: str) -> tuple[int, str]:
        given = digits(name)
        return (2 if not given else 1 if given[0] == "0" else 0), name

    for name in sorted({str(t.get("name")) for t in terms}, key=rank):
        variants = [t for t in terms if t.get("name") == name and matches(name, t.get("match"))]
        for wanted in (gender, None) if gender else (None,):
            chosen = next((t for t in variants if t.get("gender-form") == wanted), None)
            if chosen is not None:
                return str(chosen.text or "")
    return ""


def _case(self: TextCased, text: Any, language: str | None = None) -> Any:
    """``TextCased.case`` with ``text-case="title"`` done by :func:`title_case`; citeproc-py's
    own rule for the other cases and for non-English text (``language`` is the item's, else the
    locale in use: citeproc-py passes None where no title case applies)."""
    if self.get("text-case") != "title" or str(language or "").lower() != "en":
        return _CASE(self, text, language)
    return title_case(text)


def title_case(text: Any) -> str:
    """An English title in title case: each lower-case word capitalized (its first letter after
    any opening punctuation) but :data:`STOP_WORDS`, which are capitalized only as the first or
    last word or after a colon; words with a capital letter (and no-case spans) are left
    alone."""
    words = list(text.words())
    out: list[str] = []
    after_colon = True  # the first word is capitalized
    for index, word in enumerate(words):
        plain = str(word)
        lead, body, tail = _WORD_PARTS.match(plain).groups()  # type: ignore[union-attr]
        edge = after_colon or index == len(words) - 1
        if not isinstance(word, NoCase) and body and plain.islower():
            if body in STOP_WORDS and not edge:
                plain = plain.lower()
            else:
                plain = lead + body[0].upper() + body[1:] + tail
        out.append(plain)
        after_colon = plain.endswith(":")
    return " ".join(out)


def _plain_sort_keys(self: Key, items: Any, context: Any) -> list[Any]:
    """``Key.sort_keys`` without formatting: text keys compared as their words. Within a
    style run each item's key is worked out once (a citation sorts its items each time)."""
    run = _RUN.get()
    if run is None:
        return _plain(_KEYS_WITH_FORMATTING(self, items, context))
    where = self.getroottree().getpath(self)
    missing = [item for item in items if (where, item.key) not in run.sort_keys]
    if missing:
        computed = _plain(_KEYS_WITH_FORMATTING(self, missing, context))
        for item, key in zip(missing, computed, strict=True):
            run.sort_keys[(where, item.key)] = key
    return [run.sort_keys[(where, item.key)] for item in items]


def _plain(keys: list[Any]) -> list[Any]:
    return [strip_marks(str(k)).lstrip(_QUOTE_MARKS) if isinstance(k, str | list) else k
            for k in keys]


def _quote(self: Quoted, string: Any) -> Any:
    """``Quoted.quote`` giving the quotation marks inside the quoted text the locale's inner
    quotes (an apostrophe, which may be the inner closing quote, is left alone)."""
    if str(self.get("quotes", "false")).lower() == "true":
        for mark, replacement in _inner_quotes(self):
            string = string.replace(mark, replacement)
    return _QUOTE(self, string)


def _inner_quotes(element: Quoted) -> tuple[tuple[str, str], ...]:
    """The locale's opening and closing quotes, each with its inner quote (once a run)."""
    run = _RUN.get()
    if run is not None and run.inner_quotes is not None:
        return run.inner_quotes
    pairs = []
    for outer, inner in (("open-quote", "open-inner-quote"), ("close-quote", "close-inner-quote")):
        mark, replacement = (str(element.get_single_term(name=n) or "") for n in (outer, inner))
        if mark and replacement and mark != replacement:
            pairs.append((mark, replacement))
    if run is not None:
        run.inner_quotes = tuple(pairs)
    return tuple(pairs)


def _name_process(
    self: Name, item: Any, variable: Any, context: Any = None, sort_options: Any = None,
    **kwargs: Any,
) -> Any:
    """``Name.process`` demoting a non-dropping particle in a sort key when the style says
    ``sort-only`` (citeproc-py demoted it only in a variable's key, not a macro's)."""
    if sort_options is not None and "demote-non-dropping-particle" not in sort_options:
        demote = str(self.get_option("demote-non-dropping-particle", context)).lower()
        if demote == "sort-only":
            sort_options = {**sort_options, "demote-non-dropping-particle": "display-and-sort"}
    return _NAME_PROCESS(self, item, variable, context, sort_options, **kwargs)


def range_end(first: str, last: str, range_format: str | None) -> str:
    """The second number of the page range ``first``–``last`` in ``range_format`` (CSL
    appendix V: expanded 321–328, minimal 321–8, minimal-two 321–28, chicago-15/16 by the
    first page). An abbreviated ``last`` ("28" after "321") is expanded first; a range whose
    ends are not both plain numbers keeps ``last`` as written."""
    if not (first.isdecimal() and last.isdecimal() and first.isascii() and last.isascii()):
        return last
    if len(last) < len(first):
        expanded = first[: len(first) - len(last)] + last
        last = expanded if int(expanded) > int(first) else last
    if len(last) != len(first):
        return last
    changed = len(last) - next(
        (i for i, (a, b) in enumerate(zip(first, last, strict=True)) if a != b), len(last)
    )
    style = _chicago_range(int(first), changed, len(first), range_format)
    if style == "minimal":
        return last[-max(changed, 1):]
    if style == "minimal-two":
        return last[-max(changed, 2):]
    return last


def _chicago_range(first: int, changed: int, digits: int, range_format: str | None) -> str:
    """``range_format``, or for a Chicago format the simple format its rule picks for a
    range from ``first`` whose last ``changed`` of ``digits`` digits change."""
    if range_format not in ("chicago", "chicago-15", "chicago-16"):
        return range_format or "expanded"
    if first < 100 or first % 100 == 0:
        return "expanded"
    if range_format != "chicago-16" and digits == 4 and changed >= 3:
        return "expanded"  # 1496–1504 (Chicago 15th edition)
    return "minimal" if first % 100 < 10 else "minimal-two"


def _format_last_page(self: FormatNumber, first: str, last: str) -> str:
    """``FormatNumber._format_last_page`` by :func:`range_end`."""
    return range_end(first, last, self.get_root().get_option("page-range-format"))


def _label_process(
    self: Label, item: Any, variable: str | None = None, *args: Any, **kwargs: Any
) -> Any:
    """``Label.process`` rendering nothing for an empty variable of its own (a name label
    is given its variable by ``cs:names``, a locator label is left to citeproc-py)."""
    own = self.get("variable")
    if variable is None and own and own != "locator":
        try:
            value = item.reference[own.replace("-", "_")]
        except VariableError:
            return None
        if not str(value).strip():
            return None
    return _LABEL_PROCESS(self, item, variable, *args, **kwargs)


def _render_citation(self: Layout, citation: Any, callback: Any) -> Any:
    """``Layout.render_citation`` keeping the cites in the order given unless the citation
    has its own ``cs:sort`` (ties then in bibliography order, as citeproc-js breaks them:
    "2024a, 2024b"); with ``collapse`` by year, the cites of the same names grouped
    (:func:`_grouped_by_names`)."""
    good = [cite for cite in citation.cites if not cite.is_bad()]
    bad = [cite for cite in citation.cites if cite.is_bad()]
    if self.getparent().sort is not None:
        keys = citation.bibliography.keys
        good.sort(key=lambda cite: keys.index(cite.key))
        good = self.getparent().sort.sort(good, self)
    rendered: list[tuple[Any, Any]] = []
    for item in good:
        self.repressed = {}
        try:
            output = self.render_children(item)
        except VariableError:
            continue
        if output is not None:
            rendered.append((item, output))
            self.getparent().cites.append(item)
    if str(self.getparent().get("collapse", "")).startswith("year") and len(rendered) > 1:
        out = _grouped_by_names(self, rendered)
    else:
        out = [_affixed(item, output) for item, output in rendered]
    out.extend(callback(item) or f"{item.key}?" for item in bad)
    return self.format(self.wrap(self.join(out)))


def _affixed(item: Any, text: Any) -> Any:
    return item.get("prefix", "") + text + item.get("suffix", "")


def _grouped_by_names(layout: Layout, rendered: list[tuple[Any, Any]]) -> list[Any]:
    """The cites of a citation with ``collapse="year"``: those whose names read alike grouped
    where the first of them stands, each after the first without its names ("Smith, 2024a,
    2024b"; CSL 1.0.2, Cite Grouping and Cite Collapsing), joined by ``cite-group-delimiter``.
    Only cites whose items share their names are rendered again, without them."""
    delimiter = layout.getparent().get("cite-group-delimiter", ", ")
    keys = [_names_key(item) for item, _ in rendered]
    shared = {key for key in keys if key is not None and keys.count(key) > 1}
    groups: dict[str, list[Any]] = {}
    slots: list[list[Any]] = []
    for (item, output), key in zip(rendered, keys, strict=True):
        names = ""
        if key in shared:
            alone = _without_names(layout, item)
            text = str(output)
            if alone and text.endswith(str(alone)) and len(text) > len(str(alone)):
                names = text[: -len(str(alone))]
        if names and names in groups:
            groups[names].append(_affixed(item, alone))
            continue
        slot = [_affixed(item, output)]
        slots.append(slot)
        if names:
            groups[names] = slot
    return [slot[0] if len(slot) == 1 else join(slot, delimiter) for slot in slots]


def _names_key(item: Any) -> str | None:
    """The names of a cite's item (author, editor, translator) as one key; None without."""
    parts = []
    for role in ("author", "editor", "translator"):
        names = item.reference.get(role) or ()
        parts.append([sorted((str(k), strip_marks(str(v))) for k, v in name.items())
                      for name in names])
    return repr(parts) if any(parts) else None


_WITHOUT_NAMES: ContextVar[list[bool] | None] = ContextVar("citerender_csl_no_names",
                                                           default=None)


def _without_names(layout: Layout, item: Any) -> Any:
    """The cite of ``item`` with its first ``cs:names`` left out (citeproc-js's
    suppress-author), or None."""
    token = _WITHOUT_NAMES.set([True])
    layout.repressed = {}
    try:
        return layout.render_children(item)
    except VariableError:
        return None
    finally:
        _WITHOUT_NAMES.reset(token)


def _names_render(self: Names, *args: Any, **kwargs: Any) -> Any:
    """``Names.render``, nothing for the first names of a cite rendered without them."""
    pending = _WITHOUT_NAMES.get()
    if pending and pending[0]:
        pending[0] = False
        return None
    return _NAMES_RENDER(self, *args, **kwargs)


#: Each correction: the class or module it replaces an attribute of, the attribute, and the
#: replacement.
_PATCHES: tuple[tuple[Any, str, Any], ...] = (
    (Key, "sort_keys", _plain_sort_keys),
    (CitationStylesElement, "get_macro", _get_macro),
    (Macro, "calls_variable", _macro_calls_variable),
    (Substitute, "render", _substitute_render),
    (Name, "initialize", _initialize),
    (TextCased, "case", _case),
    (Date, "render_single_date", _render_single_date),
    (FormatNumber, "_format_last_page", _format_last_page),
    (Quoted, "quote", _quote),
    (Name, "process", _name_process),
    (Label, "process", _label_process),
    (Names, "render", _names_render),
    (Layout, "render_citation", _render_citation),
    (citeproc_model, "to_ordinal", _to_ordinal),
)


def install_fixes() -> None:
    """Install the corrections (idempotent)."""
    for owner, name, replacement in _PATCHES:
        if getattr(owner, name) is not replacement:
            setattr(owner, name, replacement)
    # ``initialize`` is an inheritable name option: looked up on the name, then its citation or
    # bibliography, then the style, like ``initialize-with``; CSL's default is "true".
    CitationStylesElement._default_options.setdefault("initialize", "true")
