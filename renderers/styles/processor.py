"""citeproc-py driven once per render: the Sources entries and the citations of one document
in a CSL style, as IR inlines.

Items are registered in Sources-number order first, so a numeric style's ``citation-number`` is
the entry's rank; then each citation of the document in order, so that note styles know which
citation comes first, which is a repeat and which is *ibid.* Every citation item carries an
item span (:func:`renderers.styles.markup.item_prefix`) so that each cited source in
"(IEA, 2025; Smith and Doe, 2023)" links to its own entry.

Two of citeproc-py's gaps are closed here rather than worked around by hand-formatting:

* it suppresses a substituted variable only when the ``<substitute>`` child names the variable
  itself, not when it calls a macro (``<text macro="title"/>``), so APA and Chicago printed an
  untitled-author web page's title twice; :func:`_repress_substituted` suppresses every
  variable the substituting element renders, macros followed, as the CSL specification says;
* it ignores ``display="left-margin"``, so a numeric entry came out as ``[1]IEA…``; the
  bibliography's ``citation-number`` is wrapped in a number span and becomes the entry's marker.

What citeproc-py does not do at all, and so citerender does not either: year-suffix
disambiguation ("2024a"), collapsing of cited numbers within a CSL citation, and
``subsequent-author-substitute``.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from citeproc import Citation, CitationItem, CitationStylesBibliography, CitationStylesStyle
from citeproc.model import Names, Substitute, VariableError
from citeproc.source.json import CiteProcJSON

from renderers.document import Cite, Inline, Text
from renderers.errors import OptionError
from renderers.resolve import SourceEntry, entry_target
from renderers.styles.catalog import CSL_NS, CslStyle
from renderers.styles.items import csl_item
from renderers.styles.markup import (
    FORMATTER,
    closing,
    item_prefix,
    link_title,
    link_urls,
    opening,
    parse_marked,
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
    style: CslStyle, entries: Sequence[SourceEntry], cites: Sequence[Cite]
) -> StyledDocument:
    """Format ``entries`` and ``cites`` in ``style``; a style the processor cannot run is an
    :class:`OptionError` naming ``csl``."""
    try:
        return _format(style, entries, cites)
    except OptionError:
        raise
    except (RecursionError, ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
        raise OptionError(
            f"csl={style.name!r}: the CSL processor could not apply this style "
            f"({type(exc).__name__}: {exc}); accepted: a valid CSL 1.0 style",
            field="csl",
        ) from exc


def _format(
    style: CslStyle, entries: Sequence[SourceEntry], cites: Sequence[Cite]
) -> StyledDocument:
    _install_substitute_fix()
    processor = CitationStylesStyle(io.BytesIO(style.xml), validate=False)
    _mark_numbers(processor)
    by_number = {entry.number: entry for entry in entries}
    data = CiteProcJSON([_item(entry) for entry in entries])
    bibliography = CitationStylesBibliography(processor, data, FORMATTER)
    bibliography.register(Citation([CitationItem(_key(n)) for n in sorted(by_number)]))
    citations = [(cite.anchor, _citation(cite)) for cite in cites]
    for _, citation in citations:
        bibliography.register(citation)
    if processor.has_bibliography():
        bibliography.sort()
    link = None if style.is_note else entry_target
    texts = {
        anchor: parse_marked(str(bibliography.cite(citation, _unknown)), link).inlines
        for anchor, citation in citations
    }
    if style.is_note:
        urls = tuple(e.url for e in entries)
        texts = {anchor: link_urls(inlines, urls) for anchor, inlines in texts.items()}
    order = tuple(_number(item.key) for item in bibliography.items)
    styled = {
        number: _entry(processor, item, by_number[number])
        for number, item in zip(order, bibliography.items, strict=True)
    }
    return StyledDocument(entries=styled, order=order, citations=texts)


def _key(number: int) -> str:
    return f"n{number}"


def _number(key: str) -> int:
    return int(key[1:])


def _item(entry: SourceEntry) -> dict[str, Any]:
    return {**csl_item(entry.source), "id": _key(entry.number)}


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
        text = str(processor.render_citation(alone, [], _unknown) or "")
        return StyledEntry(_linked(parse_marked(text).inlines, entry), "")
    parsed = parse_marked(str(rendered[0]))
    marker = parsed.marker or ""
    if marker:  # the style's number is the entry's rank; the display number may differ (sid)
        marker = marker.replace(str(item.number), str(entry.number), 1)
    return StyledEntry(_linked(_trim(parsed.inlines), entry), marker)


def _linked(inlines: tuple[Inline, ...], entry: SourceEntry) -> tuple[Inline, ...]:
    linked = link_urls(inlines, (entry.url,))
    if entry.url and linked == inlines:  # the style prints no URL: the title carries it
        linked = link_title(inlines, entry.title, entry.url)
    return linked


def _trim(inlines: tuple[Inline, ...]) -> tuple[Inline, ...]:
    """Drop the white space the removed number span leaves at the start."""
    if inlines and isinstance(inlines[0], Text):
        head = inlines[0].text.lstrip()
        return ((Text(head),) if head else ()) + inlines[1:]
    return inlines


def _mark_numbers(processor: CitationStylesStyle) -> None:
    """Wrap the bibliography's ``citation-number`` in a number span (the entry's marker)."""
    bibliography = processor.root.find(f"{{{CSL_NS}}}bibliography")
    if bibliography is None:
        return
    for node in bibliography.iter(f"{{{CSL_NS}}}text"):
        if node.get("variable") == "citation-number":
            node.set("prefix", opening("number") + node.get("prefix", ""))
            node.set("suffix", node.get("suffix", "") + closing("number"))


# ---------------------------------------------------------------- citeproc-py's substitute gap


def _rendered_variables(element: Any, seen: set[str]) -> Iterator[str]:
    """The variables ``element`` renders through ``cs:text``, following macros."""
    for node in element.iter(f"{{{CSL_NS}}}text"):
        variable = node.get("variable")
        if variable:
            yield variable
        macro = node.get("macro")
        if macro and macro not in seen:
            seen.add(macro)
            try:
                found = node.get_macro(macro)
            except (IndexError, KeyError, AttributeError):
                continue
            yield from _rendered_variables(found, seen)


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


def _install_substitute_fix() -> None:
    if Substitute.render is not _substitute_render:
        Substitute.render = _substitute_render
