"""The table of contents of the HTML report (and, laid out by WeasyPrint, of the PDF).

A ``<nav role="doc-toc">`` of nested lists of links to the headings' ids. In print each link
ends in a dot leader and the page number of its target (``target-counter``,
``templates/contents.css``, which the page adds only when it has contents); browsers, which
have neither, show the links alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import lxml.html
from lxml.html import HtmlElement
from markupsafe import Markup, escape

from renderers.document import UNLISTED
from renderers.labels import Labels
from renderers.text import HeadingIds
from renderers.writers.common import ADDED_SECTION_LEVEL, CONTENTS_ID, DocumentTitle
from renderers.writers.contents import (
    ContentsEntry,
    contents_entries,
    in_kept_out_sections,
)
from renderers.writers.html.templating import heading_dir


def contents_markup(entries: Sequence[ContentsEntry], words: Labels) -> Markup:
    """The contents list of ``entries`` under its heading in ``words`` ("" when there are
    none)."""
    if not entries:
        return Markup("")
    out = [
        f'<nav id="{CONTENTS_ID}" class="toc" role="doc-toc" dir="auto">',
        f'<h{ADDED_SECTION_LEVEL} class="toc-title"{heading_dir(words.contents)}>'
        f"{escape(words.contents)}"
        f"</h{ADDED_SECTION_LEVEL}>",
    ]
    depth = 0
    for entry in entries:
        if entry.depth > depth:
            out.append('<ul class="toc-list">' * (entry.depth - depth))
        else:
            out.append("</li>" + "</ul></li>" * (depth - entry.depth))
        depth = entry.depth
        rtl = ' dir="rtl"' if entry.direction == "rtl" else ""
        out.append(f'<li{rtl}><a href="#{escape(entry.anchor)}">{escape(entry.text)}</a>')
    out.append("</li></ul>" * depth)
    out.append("</nav>")
    return Markup("\n".join(out))


def insert_author_contents(
    root: HtmlElement,
    title: DocumentTitle,
    back_matter: Sequence[tuple[str, str]],
    words: Labels,
) -> str:
    """The contents of an author's HTML (on its way to the PDF): every heading except the one
    that shows the title and those kept out (``class="unlisted"``, after
    :func:`keep_out_sections`), under its text without citation numbers, each given an id when
    it has none. The list goes right after that heading and the paragraphs under it, and "" is
    returned; without one, its markup is returned for the page to put after the title it adds."""
    used = {element.get("id") for element in root.iter() if element.get("id")}
    ids = HeadingIds()
    for taken in sorted(used):
        ids.reserve(taken)
    ids.reserve(CONTENTS_ID)
    shows_title = title_heading(root, title)
    headings: list[tuple[int, str, str]] = []
    for heading in root.iter(*_HEADINGS):
        text = text_without_citations(heading)
        if heading is shows_title or _kept_out(heading):
            continue
        if not heading.get("id"):
            heading.set("id", ids.assign(text))
        headings.append((int(heading.tag[1]), text, heading.get("id")))
    markup = contents_markup(contents_entries(headings, back_matter), words)
    if shows_title is None or not markup:
        return str(markup)
    parent = shows_title.getparent()
    at = parent.index(shows_title) + 1
    while at < len(parent) and parent[at].tag == "p":  # its byline or lede stays with it
        at += 1  # (as renderers.writers.contents.contents_position places it)
    for offset, element in enumerate(lxml.html.fragments_fromstring(str(markup))):
        parent.insert(at + offset, element)
    return ""


_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
#: The elements whose headings start no section and are in none, as the readers' lists and
#: quotes (a heading there is no block of the body).
_NESTING = frozenset({"li", "blockquote"})


def keep_out_sections(root: HtmlElement, title: DocumentTitle) -> None:
    """Give every heading of an author's HTML inside a section its author kept out
    (``class="unlisted"``, pandoc's) that class too, which keeps it out of the contents and
    the PDF outline (report.css), as :func:`~renderers.writers.contents.body_outline` does for
    every other writer; the heading that shows the title keeps out only itself."""
    shows_title = title_heading(root, title)
    headings = [heading for heading in root.iter(*_HEADINGS)
                if not any(above.tag in _NESTING for above in heading.iterancestors())]
    inside = in_kept_out_sections(
        (int(h.tag[1]), _kept_out(h) and h is not shows_title) for h in headings)
    for heading, hidden in zip(headings, inside, strict=True):
        if hidden and not _kept_out(heading):
            heading.set("class", " ".join([*(heading.get("class") or "").split(), UNLISTED]))


def _kept_out(heading: HtmlElement) -> bool:
    return UNLISTED in (heading.get("class") or "").split()


def title_heading(root: HtmlElement, title: DocumentTitle) -> HtmlElement | None:
    """The ``<h1>`` of an author's HTML that shows the title: the first whose text (without
    citation numbers) is the title; None when the page adds the title itself."""
    if title.added or not title.text:
        return None
    return next((h for h in root.iter("h1") if text_without_citations(h) == title.text), None)


def citations_in(element: HtmlElement) -> list[HtmlElement]:
    """The citation superscripts (``<sup class="cite">``) inside ``element``."""
    return [s for s in element.iter("sup") if is_citation(s)]


def is_citation(element: HtmlElement) -> bool:
    """Whether ``element`` is a citation the report writer wrote: of class ``cite`` (with
    ``cite-joined`` or ``cite-wraps`` beside it, or not)."""
    return "cite" in (element.get("class") or "").split()


def text_without_citations(element: HtmlElement) -> str:
    """``element``'s text on one line, its citation superscripts left out (outline labels,
    contents entries)."""
    # without its tail: the text after the element (a heading's next line) is no part of it
    copy = lxml.html.fragment_fromstring(
        lxml.html.tostring(element, encoding="unicode", with_tail=False))
    for sup in citations_in(copy):
        sup.drop_tree()
    return " ".join(copy.text_content().split())
