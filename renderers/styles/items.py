"""Pool rows → CSL-JSON items, the data a CSL processor formats.

Canonical fields map directly (``title``, ``url`` → ``URL``, ``published_at`` → ``issued``,
``fetched_at`` → ``accessed``, ``source_type`` → ``type``); the bibliographic fields of
:data:`citations.model.BIBLIOGRAPHIC_FIELDS` (container, collection, publisher and its place,
volume, issue, page, edition, DOI, ISBN, ISSN, language) and the names of
:data:`citations.model.NAME_FIELDS` come from the row's extra fields. Files and attachments are
``document`` items whose artifact path is their ``archive_location``. The pages a source is
cited at (its ``location``, :mod:`citations.locations`) are its ``page`` when the row gives none:
CSL has no bibliography variable for a pinpoint (``locator`` belongs to one citation, and a
row's location gathers all of them), so a style prints them where it prints an item's pages —
IEEE, APA, Chicago notes, Vancouver and Nature for a document; Chicago author-date and Harvard
print no pages for one, and show no location. Only http, https and
mailto URLs are passed on; a DOI is passed on bare (``10.5555/x``, from ``doi:…`` or
``https://doi.org/…`` too), and only when it is one, so the style prints it and
:mod:`renderers.styles.markup` links it to ``https://doi.org/…``. Titles, names and the other
fields of words get typographic apostrophes ("O’Brien"), as citeproc-js and pandoc print them.

Names are split as citeproc-js splits them: lower-case words that open a family name are its
non-dropping particle ("van Gogh" → "van" + "Gogh", "de la Vallée Poussin"), lower-case words
that close a given name its dropping particle ("Ludwig van"), so a style's
``demote-non-dropping-particle`` can file and print "Gogh, Vincent van" (Chicago) or
"van Gogh, V." (APA).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from citations.links import safe_link
from citations.locations import cited_pages, source_location
from citations.model import BIBLIOGRAPHIC_FIELDS, NAME_FIELDS, Source
from renderers.labels import ENGLISH
from renderers.resolve import file_name, source_title
from renderers.styles.markup import strip_marks, typographic_apostrophes
from renderers.text import balanced_bidi

#: ``source_type`` values (lower-cased) → CSL item types; anything else is a web page for a row
#: with a URL, else a document.
SOURCE_TYPES: dict[str, str] = {
    "web": "webpage", "webpage": "webpage", "http": "webpage", "mcp_resource": "webpage",
    "page": "webpage", "blog": "post-weblog", "post": "post-weblog",
    "news": "article-newspaper", "newspaper": "article-newspaper",
    "article": "article-journal", "journal": "article-journal", "paper": "article-journal",
    "magazine": "article-magazine", "book": "book", "chapter": "chapter", "report": "report",
    "thesis": "thesis", "dataset": "dataset", "software": "software", "patent": "patent",
    "standard": "standard", "legislation": "legislation", "file": "document",
    "attachment": "document", "document": "document", "pdf": "document",
}
#: A DOI as written in a pool: bare, ``doi:10.…``, or a doi.org URL.
_DOI = re.compile(r"(?:doi:\s*|https?://(?:dx\.)?doi\.org/)?(10\.\d{4,9}/\S+)", re.IGNORECASE)
_DATE = re.compile(r"^\s*(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?")
_MAX_FIELD = 1000
#: The bibliographic variables written in words, whose apostrophes are typographic (not a
#: DOI, ISBN, number or language tag).
_WORD_VARIABLES = frozenset({"container-title", "collection-title", "publisher",
                             "publisher-place"})
_MAX_NAMES = 50
#: A name part written in a script whose personal names put the family name first with no
#: space between the parts (Han, kana, Hangul). citeproc-js shows such a name as written,
#: 山田 + 太郎 → 山田太郎, in every style: never inverted, initialled or split by a comma.
_FAMILY_FIRST_PART = re.compile(
    "[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003ffff]+"
)


def item_id(sid: int) -> str:
    return f"s{sid}"


def csl_item(source: Source, title: str | None = None) -> dict[str, Any]:
    """The CSL-JSON item of ``source`` (its id is :func:`item_id` of the sid); ``title`` is
    its entry's (:attr:`renderers.resolve.SourceEntry.title`: a row without one is named in
    the document's words), by default the English one."""
    url = safe_link(source.url)
    kind = SOURCE_TYPES.get(source.source_type.strip().lower())
    item: dict[str, Any] = {
        "id": item_id(source.sid),
        "type": kind or ("webpage" if url else "document"),
        "title": _words(source_title(source, ENGLISH) if title is None else title),
    }
    if url:
        item["URL"] = url
    if not url and (source.artifact_path or source.physical_path):
        item["archive_location"] = _text(
            source.artifact_path.strip() or file_name(source.physical_path)
        )
    for key, value in (("issued", source.published_at), ("accessed", source.fetched_at)):
        parts = date_parts(value)
        if parts:
            item[key] = {"date-parts": [parts]}
    for variable, keys in NAME_FIELDS.items():
        names = _names(_first(source.extra, keys))
        if names:
            item[variable] = names
    for variable, keys in BIBLIOGRAPHIC_FIELDS.items():
        value = _first(source.extra, keys)
        text = _text(str(value)) if isinstance(value, str | int | float) else ""
        if variable in _WORD_VARIABLES:
            text = typographic_apostrophes(text)
        if variable == "DOI":
            text = doi(text)
        if text:
            item[variable] = text
    cited = cited_pages(source_location(source))
    if cited and "page" not in item:  # the pages it is cited at, when the row names no pages
        item["page"] = _text(cited)
    return item


def doi_link(source: Source) -> str:
    """``https://doi.org/…`` for the row's DOI, else ``""``."""
    value = _first(source.extra, BIBLIOGRAPHIC_FIELDS["DOI"])
    found = doi(str(value)) if isinstance(value, str) else ""
    return f"https://doi.org/{found}" if found else ""


def doi(value: str) -> str:
    """The bare DOI ``value`` names (``doi:10.1/x``, ``https://doi.org/10.1/x`` → ``10.1/x``),
    else ``""``."""
    match = _DOI.fullmatch(value.strip())
    return match.group(1) if match else ""


def date_parts(value: str) -> list[int]:
    """``2024-10-16T…`` → ``[2024, 10, 16]``; ``2024-10`` → ``[2024, 10]``; else ``[]``."""
    match = _DATE.match(value or "")
    if not match:
        return []
    parts = [int(p) for p in match.groups() if p is not None]
    if len(parts) > 1 and not 1 <= parts[1] <= 12:
        return parts[:1]
    if len(parts) > 2 and not 1 <= parts[2] <= 31:
        return parts[:2]
    return parts


def _text(value: str) -> str:
    """A field as the style gets it: on one line, bounded, its bidi controls balanced once
    bounded (:func:`~renderers.text.balanced_bidi`: an override in a title reverses nothing
    the style writes after it)."""
    return balanced_bidi(strip_marks(" ".join(value.split()))[:_MAX_FIELD])


def _words(value: str) -> str:
    """A field of words (a title, a name): :func:`_text` with typographic apostrophes."""
    return typographic_apostrophes(_text(value))


def _first(extra: dict[str, Any], keys: Iterable[str]) -> Any:
    return next((extra[k] for k in keys if extra.get(k) not in (None, "", [])), None)


def _names(value: Any) -> list[dict[str, str]]:
    """Authors as CSL names: ``"Family, Given"`` is split, a mapping with ``family``/``given``
    or ``literal`` is kept, any other string (an organisation, a full name) is a literal name.
    A string holding several names separated by ``;`` gives several."""
    raw = value.split(";") if isinstance(value, str) else value
    if not isinstance(raw, list | tuple):
        return []
    names: list[dict[str, str]] = []
    for entry in raw[:_MAX_NAMES]:
        if isinstance(entry, dict):
            kept = {k: _words(str(v)) for k, v in entry.items()
                    if k in _NAME_PARTS and isinstance(v, str) and v.strip()}
            if "literal" in kept:
                names.append({"literal": kept["literal"]})
            elif kept:
                names.append(_family_first(_particles(kept)))
        elif isinstance(entry, str) and entry.strip():
            family, comma, given = entry.partition(",")
            if comma and family.strip() and given.strip() and "," not in given:
                name = {"family": _words(family), "given": _words(given)}
                names.append(_family_first(_particles(name)))
            else:
                names.append({"literal": _words(entry)})
    return names


_NAME_PARTS = ("family", "given", "literal", "non-dropping-particle", "dropping-particle",
               "suffix")


def _particles(name: dict[str, str]) -> dict[str, str]:
    """``name`` with the particles citeproc-js finds split off (unless the name gives them):
    the lower-case words opening the family name ("de la Vallée Poussin") are its
    non-dropping particle, those closing the given name ("Ludwig van") its dropping particle.
    A part made only of lower-case words (or of one word) is left whole."""
    name = dict(name)
    if "non-dropping-particle" not in name:
        particle, rest = _split_particle(name.get("family", "").split(), leading=True)
        if particle:
            name["non-dropping-particle"], name["family"] = particle, rest
    if "dropping-particle" not in name:
        particle, rest = _split_particle(name.get("given", "").split(), leading=False)
        if particle:
            name["dropping-particle"], name["given"] = particle, rest
    return name


def _split_particle(words: list[str], *, leading: bool) -> tuple[str, str]:
    """The lower-case words at the start (``leading``) or end of ``words`` and the others,
    when both are there; else ``("", "")``."""
    ordered = words if leading else words[::-1]
    count = 0
    while count < len(ordered) and _is_particle(ordered[count]):
        count += 1
    if not count or count == len(ordered):
        return "", ""
    particle, rest = ordered[:count], ordered[count:]
    if not leading:
        particle, rest = particle[::-1], rest[::-1]
    return " ".join(particle), " ".join(rest)


def _is_particle(word: str) -> bool:
    """A word written in lower case: its first letter has case and is lower-case ("van",
    "de", "d'", "von"); a word in a script without case (王, כהן) never is."""
    return word[0].islower()


def _family_first(name: dict[str, str]) -> dict[str, str]:
    """A CJK name (both parts in :data:`_FAMILY_FIRST_PART`) as the literal its script writes,
    family then given name with no space; any other name as it is."""
    family, given = name.get("family", ""), name.get("given", "")
    if _FAMILY_FIRST_PART.fullmatch(family) and _FAMILY_FIRST_PART.fullmatch(given):
        return {"literal": family + given}
    return name
