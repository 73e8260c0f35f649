"""citeproc-py driven once per render: the Sources entries and the citations of one document
in a CSL style, as IR inlines.

Items are registered in Sources-number order first, so a numeric style's ``citation-number`` is
the entry's rank; then each citation of the document in order, so that note styles know which
citation comes first, which is a repeat and which is *ibid.* Every citation item carries an
item span (:func:`renderers.styles.markup.item_prefix`) so that each cited source in
"(IEA, 2025; Smith and Doe, 2023)" links to its own entry.

citeproc-py's departures from the CSL specification that the bundled styles meet are corrected
in :mod:`renderers.styles.fixes`; it ignores ``display="left-margin"``, so the bibliography's
``citation-number`` is wrapped in a number span here and becomes the entry's marker (else a
numeric entry reads ``[1]IEA…``).

citeproc-py does not disambiguate cites at all. With a style's
``disambiguate-add-year-suffix``, works of the same authors whose citations read alike get
year suffixes here (:func:`_add_year_suffixes`: "Smith, 2024a", "Smith, 2024b", lettered in
bibliography order, as CSL says); the other methods (adding names or given names) are not
done. Cites of the same names are grouped by :mod:`renderers.styles.fixes` ("Smith, 2024a,
2024b"); cited numbers are not collapsed within a CSL citation, and
``subsequent-author-substitute`` is not done.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from citeproc import Citation, CitationItem, CitationStylesBibliography, CitationStylesStyle
from citeproc.source.json import CiteProcJSON

from renderers.document import Cite, Inline, Text
from renderers.errors import OptionError
from renderers.resolve import SourceEntry, entry_target
from renderers.styles.bidi import (
    cite_base,
    entry_base,
    isolate_units,
    mark_units,
    own_base,
)
from renderers.styles.catalog import CSL_NS, CslStyle
from renderers.styles.fixes import OutputFixes, install_fixes, style_run
from renderers.styles.items import csl_item, doi_link
from renderers.styles.markup import (
    FORMATTER,
    closing,
    item_prefix,
    link_title,
    link_urls,
    opening,
    parse_marked,
    strip_marks,
)


@dataclass(frozen=True)
class StyledEntry:
    """One Sources entry in the style: its inlines and its marker (``[1]``, ``1.``; ``""``
    for a style whose bibliography is not numbered)."""

    inlines: tuple[Inline, ...]
    marker: str


@dataclass(frozen=True)
class StyledDocument:
    """What the style made of one document."""

    entries: dict[int, StyledEntry]  # entry number → entry
    order: tuple[int, ...]  # entry numbers in the style's bibliography order
    citations: dict[str, tuple[Inline, ...]]  # cite anchor → the citation (or note) text


def format_document(
    style: CslStyle,
    entries: Sequence[SourceEntry],
    cites: Sequence[Cite],
    locale: str | None = None,
) -> StyledDocument:
    """Format ``entries`` and ``cites`` in ``style`` and the CSL ``locale`` (its terms, dates
    and quotes; :func:`renderers.styles.locales.csl_locale`; None: the style's default). A
    style the processor cannot run is an :class:`OptionError` naming ``csl``."""
    try:
        return _format(style, entries, cites, locale or style.default_locale)
    except OptionError:
        raise
    except (RecursionError, ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
        raise OptionError(
            f"csl={style.name!r}: the CSL processor could not apply this style "
            f"({type(exc).__name__}: {exc}); accepted: a valid CSL 1.0 style",
            field="csl",
        ) from exc


def _format(
    style: CslStyle, entries: Sequence[SourceEntry], cites: Sequence[Cite], locale: str
) -> StyledDocument:
    install_fixes()
    processor = CitationStylesStyle(io.BytesIO(style.xml), locale=locale, validate=False)
    # citeproc-py reads the language of an item without one (whether English title case
    # applies) from ``default-locale``: the locale in use, as in citeproc-js.
    processor.root.set("default-locale", locale)
    with style_run(processor.root):
        return _format_in_run(processor, style, entries, cites)


def _format_in_run(
    processor: CitationStylesStyle,
    style: CslStyle,
    entries: Sequence[SourceEntry],
    cites: Sequence[Cite],
) -> StyledDocument:
    _mark_numbers(processor)
    by_number = {entry.number: entry for entry in entries}
    items = [_item(entry) for entry in entries]
    data = CiteProcJSON(items)
    bibliography = CitationStylesBibliography(processor, data, FORMATTER)
    fixes = OutputFixes.of(processor.root)  # the formatter is set: terms can be read
    bibliography.register(Citation([CitationItem(_key(n)) for n in sorted(by_number)]))
    citations = [(cite.anchor, _citation(cite)) for cite in cites]
    for _, citation in citations:
        bibliography.register(citation)
    if processor.has_bibliography():
        bibliography.sort()
    _add_year_suffixes(processor, fixes, bibliography, items)
    link = None if style.is_note else entry_target
    # A citation that does not depend on its position (no position test in the style's
    # citation) reads the same wherever it stands: each set of sources is formatted once.
    positional = _uses_position(processor)
    known: dict[tuple[int, ...], tuple[Inline, ...]] = {}
    texts: dict[str, tuple[Inline, ...]] = {}
    shown = citations if style.is_note or style.is_author_date else []  # numeric: numbers
    direction = entries[0].direction if entries else "ltr"  # the document's
    for cite, (anchor, citation) in zip(cites, shown, strict=False):
        if positional or cite.numbers not in known:
            text = fixes.apply(bibliography.cite(citation, _unknown))
            base = own_base if style.is_note else cite_base
            text = isolate_units(text, base(text, direction))
            known[cite.numbers] = parse_marked(text, link).inlines
        texts[anchor] = known[cite.numbers]
    if style.is_note:
        urls = tuple(e.url for e in entries)
        texts = {anchor: link_urls(inlines, urls) for anchor, inlines in texts.items()}
    order = tuple(_number(item.key) for item in bibliography.items)
    styled = {
        number: _entry(processor, fixes, item, by_number[number])
        for number, item in zip(order, bibliography.items, strict=True)
    }
    return StyledDocument(entries=styled, order=order, citations=texts)


def _add_year_suffixes(
    processor: CitationStylesStyle,
    fixes: OutputFixes,
    bibliography: CitationStylesBibliography,
    items: Sequence[dict[str, Any]],
) -> None:
    """Give the works whose citations would read alike a year suffix ("2024a", "2024b"), when
    the style's citation asks for one: works of the same names and year (only those are
    rendered to compare), lettered in bibliography order (CSL 1.0.2, Disambiguation)."""
    citation = processor.root.find(f"{{{CSL_NS}}}citation")
    if citation is None or citation.get("disambiguate-add-year-suffix") != "true":
        return
    by_id = {item["id"]: item for item in items}
    candidates: dict[str, list[CitationItem]] = {}
    for cited in bibliography.items:
        candidates.setdefault(_names_and_year(by_id[cited.key]), []).append(cited)
    for group in candidates.values():
        alike: dict[str, list[CitationItem]] = {}
        for cited in group if len(group) > 1 else ():
            alone = Citation([CitationItem(cited.key)])
            alone.bibliography = cited.bibliography
            text = fixes.apply(processor.render_citation(alone, [], _unknown) or "")
            alike.setdefault(strip_marks(text), []).append(cited)
        for same in alike.values():
            for index, cited in enumerate(same if len(same) > 1 else ()):
                cited.reference["year_suffix"] = year_suffix(index)


def _names_and_year(item: dict[str, Any]) -> str:
    """What two items whose citations read alike share: their names and year, and without
    names the title that stands for them."""
    names = [item.get(variable) for variable in ("author", "editor", "translator")]
    year = (item.get("issued", {}).get("date-parts") or [[None]])[0][0]
    title = "" if any(names) else item.get("title", "")
    return strip_marks(json.dumps([names, year, title], sort_keys=True, ensure_ascii=False))


def year_suffix(index: int) -> str:
    """The ``index``-th year suffix (from 0): a … z, then aa, ab … (as citeproc-js)."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return letters


def _key(number: int) -> str:
    return f"n{number}"


def _number(key: str) -> int:
    return int(key[1:])


def _item(entry: SourceEntry) -> dict[str, Any]:
    item = mark_units(csl_item(entry.source, entry.title), entry.direction)
    return {**item, "id": _key(entry.number)}


def _citation(cite: Cite) -> Citation:
    return Citation([
        CitationItem(_key(n), prefix=item_prefix(n), suffix=closing("item"))
        for n in cite.numbers
    ])


def _unknown(item: CitationItem) -> str:
    """citeproc-py's callback for an item missing from the data (never: every number is)."""
    return ""


def _entry(
    processor: CitationStylesStyle,
    fixes: OutputFixes,
    item: CitationItem,
    entry: SourceEntry,
) -> StyledEntry:
    """The bibliography entry of ``item``. A note style may leave a source out of its
    bibliography (Chicago omits private documents); the style's first note for it alone then
    stands as its entry."""
    rendered = processor.render_bibliography([item]) if processor.has_bibliography() else []
    if not rendered:
        alone = Citation([CitationItem(item.key)])
        alone.bibliography = item.bibliography
        text = _isolated(fixes.apply(processor.render_citation(alone, [], _unknown) or ""),
                         entry)
        return StyledEntry(_linked(parse_marked(text).inlines, entry), "")
    parsed = parse_marked(_isolated(fixes.apply(rendered[0]), entry))
    marker = parsed.marker or ""
    if marker:  # the style's number is the entry's rank; the display number may differ (sid)
        marker = marker.replace(str(item.number), str(entry.number), 1)
    return StyledEntry(_linked(_trim(parsed.inlines), entry), marker)


def _isolated(text: str, entry: SourceEntry) -> str:
    """The entry's ``text`` with its names and titles that read against it isolated."""
    return isolate_units(text, entry_base(text, entry.direction))


def _linked(inlines: tuple[Inline, ...], entry: SourceEntry) -> tuple[Inline, ...]:
    linked = link_urls(inlines, (entry.url,))
    target = entry.url or doi_link(entry.source)
    if target and linked == inlines:  # the style prints no URL or DOI: the title carries it
        linked = link_title(inlines, entry.title, target)
    return linked


def _trim(inlines: tuple[Inline, ...]) -> tuple[Inline, ...]:
    """Drop the white space the removed number span leaves at the start."""
    if inlines and isinstance(inlines[0], Text):
        head = inlines[0].text.lstrip()
        return ((Text(head),) if head else ()) + inlines[1:]
    return inlines


def _uses_position(processor: CitationStylesStyle) -> bool:
    """Whether the style's citation tests a citation's position (first, subsequent, ibid)."""
    citation = processor.root.find(f"{{{CSL_NS}}}citation")
    macros = {m.get("name"): m for m in processor.root.iterfind(f"{{{CSL_NS}}}macro")}
    pending, seen = [citation], set()
    while pending:
        element = pending.pop()
        if element is None:
            continue
        for node in element.iter():
            if node.get("position") is not None:
                return True
            name = node.get("macro")
            if name and name not in seen:
                seen.add(name)
                pending.append(macros.get(name))
    return False


def _mark_numbers(processor: CitationStylesStyle) -> None:
    """Wrap the bibliography's ``citation-number`` in a number span (the entry's marker)."""
    bibliography = processor.root.find(f"{{{CSL_NS}}}bibliography")
    if bibliography is None:
        return
    for node in bibliography.iter(f"{{{CSL_NS}}}text"):
        if node.get("variable") == "citation-number":
            node.set("prefix", opening("number") + node.get("prefix", ""))
            node.set("suffix", node.get("suffix", "") + closing("number"))
