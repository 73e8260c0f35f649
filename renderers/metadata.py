"""A document's metadata: the keys of a markdown input's YAML front matter, the ``<meta>`` tags
of an HTML input's head, and the block the Markdown writer writes them back in.

Where the block is and whether it is front matter is :func:`citations.front_matter.front_matter`
(the scanner asks it too). The keys read are pandoc's: ``title``, ``author`` (a string, or a list
of strings or of mappings with a ``name``), ``date``, ``lang`` (a BCP 47 tag), ``dir`` (``ltr``
or ``rtl``: checked, the direction follows the language), ``keywords`` and ``description`` (or
``subject``: one line saying what the document is about, which goes where the formats keep one),
``subtitle`` (one line) and ``abstract``; any other key is ignored. Values are plain text, never
markup: a token or ``*emphasis*`` in a title is shown as written (the scanner reads front matter
as not prose, so nothing there cites), but for the abstract, which is markdown as pandoc reads
it (its source here; the markdown reader reads it into blocks, and its tokens cite). The
render options ``title``, ``author`` and ``lang`` win over the block's. Every writer shows the
title, subtitle, authors, date and abstract as a title block
(:func:`renderers.writers.common.title_block`).

HTML input says the same in its head (:func:`html_metadata`): ``<meta name="author">`` (one
author each, as the HTML writer writes them), ``keywords`` (comma-separated; the writer writes
one meta per keyword), ``description``,
``dcterms.date`` (the HTML writer's) or ``date``; its ``<title>`` and ``<html lang>`` the HTML
reader reads itself. A page does not show its ``<meta>`` tags, so they stay the file's metadata
and make no title block. ``<meta name="generator" content="citerender">`` marks a page
citerender wrote (:func:`is_own_page`), which the reader reads back as the report it shows, its
title block included.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any

from citations.chars import clean_text
from citations.front_matter import (
    AbstractSource,
    FrontMatter,
    abstract_markdown,
    abstract_source,
    blank_lines,
    front_matter,
)
from renderers.errors import LimitError
from renderers.language import Language, normalize_tag

if TYPE_CHECKING:
    import yaml

    from renderers.document import Block, Document
    from renderers.readers.context import ReadContext

__all__ = [
    "GENERATOR", "USAGE_META", "AbstractLines", "Metadata", "html_metadata", "is_own_page",
    "metadata_block", "read_metadata", "with_metadata",
]

#: The program the outputs name as their maker (the HTML ``generator`` meta, the PDF's).
GENERATOR = "citerender"
#: The ``<meta name>`` of the USAGE sids a page citerender wrote records (``3,7``): what
#: ``sources_used.json`` says of the page, its text has no token of them any more.
USAGE_META = "citerender-usage"


@dataclass(frozen=True)
class Metadata:
    """What a front matter block says (each "" or empty when it says nothing)."""

    title: str = ""
    authors: tuple[str, ...] = ()
    date: str = ""
    lang: str = ""
    keywords: tuple[str, ...] = ()
    description: str = ""
    subtitle: str = ""
    #: The abstract's markdown source ("" for none), the input line its text starts on, and
    #: where each of its lines was typed (None for none).
    abstract: str = ""
    abstract_line: int = 0
    abstract_lines: AbstractLines | None = field(default=None, compare=False, repr=False)
    #: Whether the input shows these as a title block (:attr:`Document.shows_metadata`).
    shown: bool = False


class AbstractLines:
    """Where the lines of the abstract as read (its YAML value decoded, lines folded) were
    typed: the audit's mapping (:class:`citations.front_matter.AbstractSource`), so a reader
    note names the line the audit names. Found when a note first asks: it reads the front
    matter again, with marks, which an abstract without notes never pays."""

    def __init__(self, text: str, found: FrontMatter) -> None:
        self._text, self._found = text, found

    @cached_property
    def _source(self) -> AbstractSource | None:
        return abstract_source(self._text, self._found)

    def typed_line(self, index: int, column: int = 0) -> int:
        """The input line of ``column`` in the abstract's 0-based line ``index`` (0: unknown)."""
        return self._source.typed_line(index, column) if self._source is not None else 0

    def text_line(self, index: int) -> str:
        """The abstract's 0-based line ``index`` as read."""
        return self._source.text_line(index) if self._source is not None else ""


def read_metadata(text: str, context: ReadContext) -> tuple[Metadata, str]:
    """``(metadata, text)``: the front matter of ``text`` and ``text`` with the block's lines
    left blank (every later line keeps its number). A block that is not front matter stays the
    author's text, with a reader note naming its line and why, unless it is prose between two
    rules; one larger than ``limits.max_front_matter_bytes`` is refused (LimitError) when it opens
    with a key, and is text (without a note) when it does not."""
    limit = context.limits.max_front_matter_bytes
    found = front_matter(text, limit)
    if found is None:
        return Metadata(), text
    if found.too_large:
        raise LimitError(
            f"{context.input_name}: front matter of {found.size} bytes is larger than {limit} "
            "bytes (limits.max_front_matter_bytes)"
        )
    if found.fields is None:
        if found.problem and found.size <= limit:
            context.warn(found.line, f"front matter {found.problem}; kept as text")
        return Metadata(), text
    metadata = _metadata(found.fields, context)
    if metadata.abstract:
        metadata = dataclasses.replace(metadata, abstract_line=found.abstract_line or 1,
                                       abstract_lines=AbstractLines(text, found))
    return metadata, blank_lines(text, found.end)


def _metadata(fields: Mapping[str, Any], context: ReadContext) -> Metadata:
    def ignored(key: str, why: str) -> None:
        context.warn(1, f"front matter {key}: {why}; ignored")

    def text(key: str) -> str:
        """The value of ``key`` as one line ("" when absent, or not text: noted)."""
        value = _text(fields.get(key))
        if value is None:
            ignored(key, "not text")
        return value or ""

    title, date = text("title"), text("date")
    lang = _text(fields.get("lang")) or ""
    if lang:
        try:
            lang = normalize_tag(lang)
        except ValueError as exc:
            ignored("lang", f"{lang!r} is {exc}")
            lang = ""
    elif "lang" in fields:
        ignored("lang", "not a language tag")
    description = text("description" if "description" in fields else "subject")
    subtitle = text("subtitle")
    abstract = _markdown(fields.get("abstract"))
    if abstract is None:
        ignored("abstract", "not text")
    direction = fields.get("dir", "ltr")
    if direction not in ("ltr", "rtl"):
        ignored("dir", "accepted values are ltr and rtl")
    return Metadata(
        title=title,
        authors=_texts(fields.get("author"), lambda: ignored("author", "not text")),
        date=date,
        lang=lang,
        keywords=_texts(fields.get("keywords"), lambda: ignored("keywords", "not text")),
        description=description,
        subtitle=subtitle,
        abstract=abstract or "",
        shown=True,
    )


def _text(value: object) -> str | None:
    """A scalar as one line of plain text ("" for none), None for a list or mapping."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.date):  # YAML reads 2025-03-01 as a date
        return value.isoformat()
    if isinstance(value, str | int | float):
        return _line(str(value))
    return None


def _markdown(value: object) -> str | None:
    """A string as markdown source (a ``|`` block keeps the author's blank lines, so its
    paragraphs; a folded one has made them single line breaks; the audit reads the same:
    :func:`abstract_markdown`), another scalar as its one line of text; None for a list or
    mapping."""
    return abstract_markdown(value) if isinstance(value, str) else _text(value)


def _line(text: str) -> str:
    """``text`` as one line, its runs of white space one space each (a value is plain text).

    YAML escapes (``"\\ud800"``, ``"\\0"``) make characters that the content's own decoding
    already replaced, so they are replaced here too (:func:`citations.chars.clean_text`)."""
    return " ".join(clean_text(text).split())


def _texts(value: object, problem: Any) -> tuple[str, ...]:
    """A string, or a list of strings and of mappings with a ``name`` (pandoc's authors)."""
    items = value if isinstance(value, list) else [value]
    found: list[str] = []
    for item in items:
        if isinstance(item, Mapping):
            item = item.get("name")
        text = _text(item)
        if text is None:
            problem()
        elif text:
            found.append(text)
    return tuple(found)


#: The ``<meta name>`` values :func:`html_metadata` reads (HTML's names are case-insensitive).
HTML_META_NAMES = frozenset({"author", "keywords", "description", "dcterms.date", "date"})


def html_metadata(
    metas: Iterable[tuple[str, str]], lang: str, context: ReadContext, *, own: bool = False
) -> Metadata:
    """What an HTML head says, from its ``(name, content)`` pairs (``<meta>`` tags in order,
    entities decoded): each ``author`` an author, the ``keywords`` split at commas (HTML's
    rule: :func:`_keywords`), the first ``description``, the first ``dcterms.date``, else the
    first ``date``; ``lang`` is its ``<html lang>``. ``own``: a page citerender wrote. Tags
    past ``limits.max_front_matter_bytes`` of content together are left out, with a reader
    note."""
    found: dict[str, list[str]] = {name: [] for name in HTML_META_NAMES}
    size = 0
    for name, content in metas:
        name = name.strip().lower()
        if name not in found:
            continue
        size += len(content.encode("utf-8", "surrogatepass"))
        if size > context.limits.max_front_matter_bytes:
            # The page itself is already within max_content_bytes: its metadata past the
            # limit is left out with a note, not a reason to refuse the page.
            context.warn(0, f"<meta> tags past {context.limits.max_front_matter_bytes} bytes "
                            "of content (limits.max_front_matter_bytes) ignored")
            break
        found[name] += [text] if (text := _line(content)) else []
    dates = found["dcterms.date"] or found["date"]
    return Metadata(
        authors=tuple(found["author"]),
        date=dates[0] if dates else "",
        lang=lang,
        keywords=_keywords(found["keywords"], own=own),
        description=next(iter(found["description"]), ""),
    )


def _keywords(contents: list[str], *, own: bool) -> tuple[str, ...]:
    """The keywords of a head's ``keywords`` metas' ``contents``, each once. HTML splits each
    at commas and has no way to escape one; the HTML writer writes a meta per keyword, so on
    its own page with several metas each is one keyword and ``"a, b"`` comes back whole. A lone
    meta is split (as a page written before that held the whole list): a document's only
    keyword holding a comma comes back as several."""
    if own and len(contents) > 1:
        return tuple(dict.fromkeys(contents))
    pieces = (_line(piece) for content in contents for piece in content.split(","))
    return tuple(dict.fromkeys(piece for piece in pieces if piece))


def is_own_page(metas: Iterable[tuple[str, str]]) -> bool:
    """Whether an HTML head's ``(name, content)`` pairs name citerender as its ``generator``:
    the page is a report citerender wrote (its Sources list, notes and back-links are the
    writer's, not the author's)."""
    return any(name.strip().lower() == "generator" and content.strip() == GENERATOR
               for name, content in metas)


def with_metadata(
    document: Document, metadata: Metadata, abstract: tuple[Block, ...] = ()
) -> Document:
    """``document`` with what its front matter or head says (its title over the first
    heading's), and ``abstract``: the blocks the reader read :attr:`Metadata.abstract` into."""
    return dataclasses.replace(
        document,
        title=metadata.title or document.title,
        lang=metadata.lang,
        authors=metadata.authors,
        date=metadata.date,
        keywords=metadata.keywords,
        description=metadata.description,
        subtitle=metadata.subtitle,
        abstract=abstract,
        shows_metadata=metadata.shown,
    )


def metadata_block(
    language: Language,
    *,
    title: str = "",
    authors: tuple[str, ...] = (),
    date: str = "",
    keywords: tuple[str, ...] = (),
    description: str = "",
    subtitle: str = "",
    abstract: str = "",
) -> str:
    """Pandoc's YAML metadata block of what is given: ``title``, ``subtitle``, ``author`` (one
    string, or a list), ``date``, ``abstract`` (markdown, as a ``|`` block), ``keywords``,
    ``description``, a declared ``language`` (``lang``, and ``dir: rtl`` for a right-to-left
    one, as pandoc writes ``<html dir>`` from it); "" when there is nothing to say. Every value
    is a YAML string (``no`` is Norwegian, 2025-03-01 a date's text)."""
    fields: dict[str, Any] = {}
    if title:
        fields["title"] = title
    if subtitle:
        fields["subtitle"] = subtitle
    if authors:
        fields["author"] = authors[0] if len(authors) == 1 else list(authors)
    if date:
        fields["date"] = date
    if abstract:
        fields["abstract"] = _Literal(abstract.strip("\n") + "\n")
    if keywords:
        fields["keywords"] = list(keywords)
    if description:
        fields["description"] = description
    if language.declared:
        fields["lang"] = language.tag
        if language.right_to_left:
            fields["dir"] = "rtl"
    if not fields:
        return ""
    import yaml  # only a Markdown output with metadata pays for it

    body = yaml.dump(fields, Dumper=_dumper(), allow_unicode=True, sort_keys=False,
                     width=2**31 - 1)
    return f"---\n{body}---\n"


class _Literal(str):
    """A value written as a YAML ``|`` block, its line breaks as they are."""


@lru_cache(maxsize=1)
def _dumper() -> type[yaml.SafeDumper]:
    """``safe_dump``'s representers, and :class:`_Literal` as a ``|`` block (made on first
    use: PyYAML is imported only by documents that have metadata)."""
    import yaml

    class LiteralDumper(yaml.SafeDumper):
        pass

    LiteralDumper.add_representer(
        _Literal, lambda dumper, value: dumper.represent_scalar("tag:yaml.org,2002:str", value,
                                                                style="|"))
    return LiteralDumper
