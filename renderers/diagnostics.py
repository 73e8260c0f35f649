"""Diagnostics: what a render noticed but did not fail on, as data (pandoc's ``LogMessage``).

A :class:`Diagnostic` has a code from a closed set, a message a person can read on its own, and
where it happened (file, line, slide, page — whichever are known). ``RenderResult.warnings``
holds their messages (the text surfaces print), ``RenderResult.diagnostics`` the data.

Writers return the diagnostics they hold in their artifact. Code deep inside a writer (the
sandbox refusing an image) does not thread a list through every call: it calls :func:`report`,
and the pipeline gathers what was reported while a writer ran with :func:`collect` — the way
pandoc's ``report`` works inside its ``PandocMonad``. The scope is a context variable, so
concurrent renders in threads or tasks never see each other's diagnostics.

No input may cost unbounded output: an artifact lists at most :data:`MAX_PER_CODE` diagnostics
of one code, then one summary standing for the rest (:func:`capped`, clang's
``-ferror-limit``), and :func:`count` still says exactly how many were found.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

LOGGER = logging.getLogger(__name__)


class Code(StrEnum):
    """Every kind of diagnostic (a closed set: a new kind is added here, with its meaning)."""

    #: The reader kept something as text or read it leniently (an invalid token, a reversed range).
    READER_NOTE = "reader-note"
    #: Citations of sids that are not in the sources pool were dropped.
    UNKNOWN_SID = "unknown-sid"
    #: A cross-reference (``@fig:…``, ``[@tbl:…]``) names a label no figure or table defines;
    #: it is kept as the text the author wrote.
    UNKNOWN_LABEL = "unknown-label"
    #: Two figures or tables define the same label; references go to the first.
    DUPLICATE_LABEL = "duplicate-label"
    #: A numeric-dialect citation points past the end of the pool; left as text.
    NUMERIC_OUT_OF_RANGE = "numeric-out-of-range"
    #: An image is shown as its alt text: the sandbox refused it (remote, outside the allowed
    #: directories, too large a file), or its reader refused its source (``file:``,
    #: ``javascript:`` …) or found none.
    IMAGE_REFUSED = "image-refused"
    #: An image loaded but cannot be embedded (not a raster format, broken, too many pixels).
    IMAGE_UNREADABLE = "image-unreadable"
    #: The PDF layout asked for a resource (stylesheet, font, image) the sandbox refused.
    RESOURCE_REFUSED = "resource-refused"
    #: Content was shortened to fit (a code line longer than a whole slide holds; a table row
    #: as tall goes on in rows on the next slides).
    CONTENT_SHORTENED = "content-shortened"
    #: ``sources_used.json`` was unreadable: kept aside and started afresh.
    STORE_RECOVERED = "store-recovered"
    #: HTML input brings its own stylesheet, which the chosen PDF engine (Typst) cannot apply.
    STYLES_NOT_APPLIED = "styles-not-applied"
    #: The typesetter (Typst) warned about the layout; the output was still written.
    TYPESETTER_NOTE = "typesetter-note"
    #: A formula the drawing library (ziamath) cannot lay out is drawn as its TeX source in the
    #: picture the PDF, PNG and slides show (``$\\overline{}$``); its MathML and OMML are whole.
    MATH_NOT_DRAWN = "math-not-drawn"
    #: An option the caller gave is used by none of the formats written (``pages`` for a PDF):
    #: it changed nothing.
    OPTION_UNUSED = "option-unused"


@dataclass(frozen=True)
class Diagnostic:
    """One thing a render noticed. ``str()`` is the message, which names the place itself."""

    code: Code
    message: str
    file: str | None = None  # the input, pool or resource concerned
    line: int | None = None  # 1-based line of the input
    slide: int | None = None  # 1-based slide of a deck
    page: int | None = None  # 1-based page of a paginated output
    #: A summary :func:`capped` made: how many more of its code it stands for (its place is
    #: the first of them's); None for a diagnostic of its own.
    omitted: int | None = None

    def __post_init__(self) -> None:
        # The code's text ("reader-note", as ``to_dict`` writes it) is read as its member, so a
        # diagnostic rebuilt from JSON or from fixture source equals the original.
        if not isinstance(self.code, Code):
            object.__setattr__(self, "code", Code(self.code))

    def __str__(self) -> str:
        return self.message

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: code and message, and only the places that are known."""
        data = {key: value for key, value in asdict(self).items() if value is not None}
        data["code"] = str(self.code)
        return data


def messages(diagnostics: Iterable[Diagnostic]) -> tuple[str, ...]:
    """The messages of ``diagnostics``: the text warnings surfaces print."""
    return tuple(d.message for d in diagnostics)


#: The most diagnostics of one code an artifact lists (clang stops at 20 errors too): 50,000
#: dead links are 20 notes and one saying how many more there were.
MAX_PER_CODE = 20

#: What a summary calls the diagnostics of each code it stands for ("and 12 more reader notes").
KINDS: dict[Code, str] = {
    Code.READER_NOTE: "reader notes",
    Code.UNKNOWN_SID: "unknown-sid notes",
    Code.UNKNOWN_LABEL: "references to unknown labels",
    Code.DUPLICATE_LABEL: "duplicate labels",
    Code.NUMERIC_OUT_OF_RANGE: "numeric citations out of range",
    Code.IMAGE_REFUSED: "refused images",
    Code.IMAGE_UNREADABLE: "unreadable images",
    Code.RESOURCE_REFUSED: "refused resources",
    Code.CONTENT_SHORTENED: "shortened contents",
    Code.STORE_RECOVERED: "store recoveries",
    Code.STYLES_NOT_APPLIED: "stylesheets not applied",
    Code.TYPESETTER_NOTE: "typesetter notes",
    Code.MATH_NOT_DRAWN: "formulas not drawn",
    Code.OPTION_UNUSED: "unused options",
}


def capped(
    diagnostics: Iterable[Diagnostic], limit: int = MAX_PER_CODE
) -> tuple[Diagnostic, ...]:
    """``diagnostics`` with at most ``limit`` of each code, in order, then for each code that
    had more one summary: "and K more <kind> (first at line L)", placed where the first left
    out was. Summaries already in ``diagnostics`` (a merge of capped lists) count what they
    stand for, so capping twice changes nothing and :func:`count` stays exact."""
    kept: list[Diagnostic] = []
    listed: Counter[Code] = Counter()
    left_out: dict[Code, tuple[Diagnostic, int]] = {}
    for diagnostic in diagnostics:
        code = diagnostic.code
        if diagnostic.omitted is None and listed[code] < limit:
            listed[code] += 1
            kept.append(diagnostic)
            continue
        first, more = left_out.get(code, (diagnostic, 0))
        left_out[code] = first, more + (diagnostic.omitted or 1)
    kept += (_summary(first, more) for first, more in left_out.values())
    return tuple(kept)


def _summary(first: Diagnostic, more: int) -> Diagnostic:
    """The note standing for ``more`` diagnostics of ``first``'s code, ``first`` leading them."""
    where = (f" (first at line {first.line})" if first.line is not None
             else f" (first on page {first.page})" if first.page is not None
             else f" (first on slide {first.slide})" if first.slide is not None else "")
    message = f"and {more:,} more {KINDS[first.code]}{where}"
    return Diagnostic(first.code, message, first.file, first.line, first.slide, first.page,
                      omitted=more)


def count(diagnostics: Iterable[Diagnostic]) -> int:
    """How many diagnostics ``diagnostics`` stands for, each summary counting what it left out."""
    return sum(d.omitted or 1 for d in diagnostics)


def summary(diagnostics: Iterable[Diagnostic]) -> str:
    """The messages of ``diagnostics`` (:func:`capped`) on one line, as a strict failure says
    them: 50,000 invalid tokens must not make a 5 MB exception message."""
    return "; ".join(messages(capped(diagnostics)))


def unique(diagnostics: Iterable[Diagnostic]) -> tuple[Diagnostic, ...]:
    """``diagnostics`` in order, each once (ten refusals of one image are one diagnostic)."""
    return tuple(dict.fromkeys(diagnostics))


_SCOPE: ContextVar[list[Diagnostic] | None] = ContextVar("citerender_diagnostics", default=None)


@contextmanager
def collect() -> Iterator[list[Diagnostic]]:
    """Gather what :func:`report` receives inside the block into the list this yields.

    Scopes nest: an inner scope keeps its diagnostics to itself (the pipeline forwards an
    intermediate's diagnostics explicitly with :func:`forward`).
    """
    found: list[Diagnostic] = []
    token = _SCOPE.set(found)
    try:
        yield found
    finally:
        _SCOPE.reset(token)


def report(diagnostic: Diagnostic) -> None:
    """Hand ``diagnostic`` to the enclosing :func:`collect` scope, or log it when there is none
    (a writer called directly, outside the pipeline)."""
    scope = _SCOPE.get()
    if scope is None:
        LOGGER.info("%s: %s", diagnostic.code, diagnostic.message)
    else:
        scope.append(diagnostic)


def forward(diagnostics: Iterable[Diagnostic]) -> None:
    """Report ``diagnostics`` again into the enclosing scope, if any (an intermediate reused by a
    second writer — the PDF a PNG is rasterized from — passes its diagnostics on)."""
    scope = _SCOPE.get()
    if scope is not None:
        scope.extend(diagnostics)
