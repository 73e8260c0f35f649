"""Author's-look path for HTML input to PDF/PNG: sanitized markup, citations rewritten in the DOM.

The author's ``<style>`` blocks, classes and style attributes survive sanitizing; every resource
they name still loads through the sandboxed fetcher at PDF time. Citations get exactly the markup
of :mod:`renderers.writers.html.report` and the Sources section comes from the same template
partial.
"""

from __future__ import annotations

import lxml.html
from lxml import etree
from lxml.html import HtmlElement
from markupsafe import Markup

from citations.codemap import CODE_ELEMENTS
from citations.pool import SourcePool
from citations.tokens import Token, parse_sid_spec, resolve_token_sids, scan
from renderers.document import Cite, Image, iter_inlines
from renderers.labels import Labels
from renderers.options import RenderOptions
from renderers.readers.context import is_cite_sup
from renderers.readers.html import ALIGNED_TAGS, html_alignment
from renderers.readers.sanitize import sanitize_html
from renderers.resolve import ResolvedDocument
from renderers.sandbox import load_image
from renderers.text import Direction, has_right_to_left, is_rtl, text_direction
from renderers.writers.common import (
    cite_direction,
    document_title,
    document_words,
    joined_runs,
    title_block,
    wrapping_cites,
)
from renderers.writers.html.bidi import hold_line_runs
from renderers.writers.html.breaks import break_long_runs
from renderers.writers.html.contents import (
    citations_in,
    insert_author_contents,
    is_citation,
    keep_out_sections,
    text_without_citations,
    title_heading,
)
from renderers.writers.html.images import image_fallback_markup
from renderers.writers.html.list_numbers import number_lists
from renderers.writers.html.report import (
    ReportWriter,
    render_page,
    unlink_missing_fragments,
)

#: Elements whose text stays verbatim (tokens inside are not citations): those the reader
#: shows as code, and those whose text it never reads.
VERBATIM_TAGS: frozenset[str] = CODE_ELEMENTS | {"script", "style", "textarea", "title"}
#: Marks the place of a citation met inside a link until the link is done.
_HELD = "data-held-citation"
#: Elements that get ``dir="rtl"`` when their text starts right-to-left (lists and tables too,
#: so that bullets and columns start on the right).
DIRECTED_TAGS: frozenset[str] = frozenset(
    {"p", "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "table", "td",
     "th", "dl", "dd", "dt", "figcaption", "caption"}
)


class _CiteRewriter:
    """Replaces citations in DOM order; ``cite-K`` anchors count like the citation pass."""

    def __init__(
        self, rdoc: ResolvedDocument, dialects: frozenset[str], pool: SourcePool | None,
        writer: ReportWriter,
    ) -> None:
        self.plan = rdoc.plan
        self.dialects = dialects
        self.pool = pool
        self.count = 0
        self.writer = writer  # writes citations a style filled (renderers.styles)
        cites = [node for node in iter_inlines(rdoc.document.blocks) if isinstance(node, Cite)]
        self.styled = {node.anchor: node for node in cites if node.children or node.note}
        #: Citations right after another (the citation pass decides: ``Cite.joined``), whose
        #: superscript opens with the separator so that the pair reads ``¹,²``, never ``¹²``.
        self.joined = {node.anchor for node in cites if node.joined}
        #: Citations in a run long enough to wrap after its separators (:func:`cite_wraps`).
        self.wrapping = wrapping_cites(rdoc.document.blocks)
        #: Each citation written, by anchor: :func:`_hold_citations` gives it its direction
        #: once the lines have theirs.
        self.written: dict[str, Cite] = {}
        #: The sids of the citations met in the link being walked (None outside links).
        self.held: list[int] | None = None

    def sup(self, sids: tuple[int, ...], tail: str | None) -> HtmlElement:
        if self.held is not None:  # in a link: one citation after it (see :meth:`link`)
            self.held += sids
            placeholder = lxml.html.fragment_fromstring("<span></span>")
            placeholder.set(_HELD, "")
            placeholder.tail = tail
            return placeholder
        self.count += 1
        anchor = f"cite-{self.count}"
        styled = self.styled.get(anchor)
        cite = styled or Cite(sids, self.plan.numbers_for(sids), anchor,
                              joined=anchor in self.joined)
        self.written[anchor] = cite
        # the report writer's own markup (data-sids too), its note listed for a note style
        markup = self.writer.cite(cite, None, wraps=anchor in self.wrapping)
        # every sid unknown: nothing shows, an empty span keeps the text that follows
        element = lxml.html.fragment_fromstring(str(markup) or "<span></span>")
        element.tail = tail
        return element

    def split(self, text: str) -> tuple[str, list[HtmlElement]]:
        """``text`` up to the first token, then one element per citation (tails = text after)."""
        tokens: list[Token] = [
            t for t in scan(text, syntax="text", dialects=self.dialects)
            if t.error is None and not t.in_code
        ]
        if not tokens:
            return text, []
        lead = text[: tokens[0].start]
        elements: list[HtmlElement] = []
        for index, token in enumerate(tokens):
            end = tokens[index + 1].start if index + 1 < len(tokens) else len(text)
            after = text[token.end : end]
            if token.kind == "usage":  # never rendered: its text disappears
                if elements:
                    elements[-1].tail = (elements[-1].tail or "") + after
                else:
                    lead += after
                continue
            sids = token.sids
            if self.pool is not None:
                sids, _ = resolve_token_sids(token, self.pool)  # numeric dialect: pool indices
            elements.append(self.sup(sids, after))
        return lead, elements

    def walk(self, element: HtmlElement) -> None:
        """Rewrite ``element``'s text, children and their tails, in document order."""
        if element.text:
            element.text, new = self.split(element.text)
            for offset, node in enumerate(new):
                element.insert(offset, node)
        for child in list(element):
            if not isinstance(child.tag, str):  # comments, processing instructions
                self._tail(element, child)
                continue
            tag = child.tag.lower()
            if child.get("id") in self.written:  # a citation this walk wrote (data-sids too)
                self._tail(element, child)
                continue
            if tag == "sup" and is_cite_sup(attributes := dict(child.attrib)):
                sids, error, _ = parse_sid_spec(attributes["data-sids"])
                if error is None:
                    replacement = self.sup(sids, child.tail)
                    element.replace(child, replacement)
                    self._tail(element, replacement)
                    continue
            elif tag == "a" and child.get("href") and self.held is None:
                self.link(element, child)
                continue
            elif tag not in VERBATIM_TAGS:
                self.walk(child)
            self._tail(element, child)

    def link(self, parent: HtmlElement, link: HtmlElement) -> None:
        """A link whose citations follow it as one, as the citation pass sets them
        (:func:`renderers.resolve.resolve`): so the ``cite-K`` anchors count alike, and no
        citation's own link stands inside the link."""
        self.held = []
        try:
            self.walk(link)
        finally:
            held, self.held = self.held, None
        placeholders = [node for node in link.iter() if node.get(_HELD) is not None]
        if not placeholders:
            self._tail(parent, link)
            return
        for node in placeholders:
            node.drop_tree()  # the text after the token stays
        if len(link):
            link[-1].tail = (link[-1].tail or "").rstrip()
        else:
            link.text = (link.text or "").rstrip()
        cite = self.sup(tuple(dict.fromkeys(held)), link.tail)
        link.tail = None
        link.addnext(cite)
        self._tail(parent, cite)

    def _tail(self, parent: HtmlElement, child: HtmlElement) -> None:
        if not child.tail:
            return
        child.tail, new = self.split(child.tail)
        position = parent.index(child)
        for offset, node in enumerate(new, start=1):
            parent.insert(position + offset, node)


def _drop_refused_images(root: HtmlElement, options: RenderOptions, words: Labels) -> None:
    """Images the sandbox will not load show the fallback text, as in the report writer."""
    for image in list(root.iter("img")):
        if load_image(image.get("src") or "", options) is not None:
            continue
        node = Image(image.get("src") or "", image.get("alt") or "", image.get("title") or "")
        span = lxml.html.fragment_fromstring(str(image_fallback_markup(node, words)))
        span.tail = image.tail
        image.getparent().replace(image, span)


def _set_outline_labels(root: HtmlElement) -> None:
    """Give headings that hold citations an outline label without the citation numbers
    (runs after the rewrite: every citation is then a ``<sup class="cite">``)."""

    for heading in root.iter("h1", "h2", "h3", "h4", "h5", "h6"):
        if citations_in(heading):
            heading.set("data-outline", text_without_citations(heading))


def _hold_citations(root: HtmlElement, written: dict[str, Cite]) -> None:
    """``dir`` on each citation whose direction is not its line's (:func:`cite_direction`), as
    the report writer sets it, the space before it moved outside; a citation and the
    superscripts joined to it (:func:`joined_runs`) get one ``span.cite-run`` around them all.
    After :func:`_set_directions`, which gives the lines theirs. A citation after text reading
    against its line is held too (:func:`cite_direction`'s ``before``:
    :func:`_preceding_directions`)."""
    preceding = _preceding_directions(root)
    done: set[str] = set()
    for element in list(root.iter("sup", "span")):
        anchor = element.get("id") or ""
        if anchor in done or anchor not in written or not is_citation(element):
            continue
        elements = [element]  # the citations that follow it with no text between
        while not elements[-1].tail and (after := elements[-1].getnext()) is not None \
                and is_citation(after) and after.get("id") in written:
            elements.append(after)
        run = next(joined_runs(written[e.get("id")] for e in elements))
        elements = elements[: len(run)]
        done.update(e.get("id") for e in elements)
        direction = cite_direction([written[e.get("id")] for e in elements],
                                   _line_direction(element), preceding.get(anchor))
        if direction is None:
            continue
        held = element
        if len(elements) > 1:
            held = lxml.html.Element("span", {"class": "cite-run"})
            element.addprevious(held)
            held.tail, elements[-1].tail = elements[-1].tail, None
            held.extend(elements)
        held.set("dir", direction)
        text = element.text or ""
        element.text = text.lstrip()
        space = text[: len(text) - len(element.text)]
        previous, parent = held.getprevious(), held.getparent()
        if not space or parent is None:
            continue
        if previous is not None:
            previous.tail = (previous.tail or "") + space
        else:
            parent.text = (parent.text or "") + space


def _preceding_directions(root: HtmlElement) -> dict[str, Direction]:
    """Each citation's id → the direction of the last strong character before it in its line
    (the author's reading of :func:`~renderers.writers.common.preceding_directions`): one
    walk, not recursive (nesting may be deep), each block a line of its own and read afresh
    after a ``<br>`` (as the browsers' bidi algorithm is), a citation's content and verbatim
    text neutral."""
    found: dict[str, Direction] = {}
    if not has_right_to_left(root.text_content()):
        return found
    last: Direction | None = None
    walk = etree.iterwalk(root, events=("start", "end", "comment"))
    for event, element in walk:
        if event == "start":
            if is_citation(element) or element.tag in VERBATIM_TAGS:
                if last is not None and is_citation(element):
                    found[element.get("id") or ""] = last
                walk.skip_subtree()
                continue
            if element.tag in DIRECTED_TAGS or element.tag == "br":
                last = None
            last = text_direction((element.text or "")[::-1]) or last
            continue
        if event == "end" and element.tag in DIRECTED_TAGS:
            last = None
        last = text_direction((element.tail or "")[::-1]) or last
    return found


def _line_direction(element: HtmlElement) -> Direction:
    """The direction ``element``'s line is laid out in: its nearest ``dir`` (:func:`_own_dir`),
    else left to right."""
    for ancestor in element.iterancestors():
        if found := _own_dir(ancestor):
            return found
    return "ltr"


def _own_dir(element: HtmlElement) -> Direction | None:
    """The direction ``element``'s ``dir`` sets (``auto`` by the text, as browsers decide it);
    None without one, or an ``auto`` over text with no strong character."""
    match (element.get("dir") or "").lower():
        case "rtl":
            return "rtl"
        case "ltr":
            return "ltr"
        case "auto":
            return text_direction(_direction_text(element))
    return None


def _hold_line_runs(root: HtmlElement) -> None:
    """Each run of a line that reads against it and spans several boxes held in a span of its
    direction (:func:`~renderers.writers.html.bidi.hold_line_runs`), as the report writer
    holds them: every element's own content, in its direction by :func:`_line_direction`'s
    rule, verbatim elements left out; a page without right-to-left text is left alone. After
    :func:`_hold_citations`: a citation held apart is then a neutral object. Parents first,
    so that what a held span holds reads in its direction and stays as it is."""
    if not has_right_to_left(root.text_content()):
        return
    stack = [(root, _own_dir(root) or "ltr")]
    while stack:
        element, direction = stack.pop()
        hold_line_runs(element, direction)
        stack += [(child, _own_dir(child) or direction) for child in reversed(element)
                  if isinstance(child.tag, str) and child.tag not in VERBATIM_TAGS]


def _set_directions(root: HtmlElement) -> None:
    """Explicit ``dir="rtl"`` on right-to-left blocks (WeasyPrint ignores ``dir="auto"``)."""
    for element in root.iter(*DIRECTED_TAGS):
        if element.get("dir") is None and is_rtl(_direction_text(element)):
            element.set("dir", "rtl")


def _set_alignments(root: HtmlElement) -> None:
    """The report's ``al-*`` class on blocks the author aligned with ``align`` (the markdown
    report's rule, :func:`~renderers.readers.html.html_alignment`): WeasyPrint ignores the
    attribute, a browser centres them. A ``text-align`` in their style still wins."""
    for element in root.iter(*ALIGNED_TAGS):
        align = html_alignment(element.attrib)
        if element.get("align") is not None and align != "default":
            element.set("class", " ".join([*element.get("class", "").split(), f"al-{align}"]))


def _direction_text(element: HtmlElement) -> str:
    """The text ``dir="auto"`` looks at: descendants with their own ``dir`` and verbatim
    elements (code, scripts) do not count."""
    parts = [element.text or ""]
    for child in element:
        tag = child.tag.lower() if isinstance(child.tag, str) else ""
        if tag and child.get("dir") is None and tag not in VERBATIM_TAGS:
            parts.append(_direction_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


def render_html_input(
    html: str,
    rdoc: ResolvedDocument,
    options: RenderOptions,
    *,
    dialects: frozenset[str] = frozenset(),
    pool: SourcePool | None = None,
) -> str:
    """A printable HTML document of the author's own (sanitized) markup, for WeasyPrint.

    ``rdoc`` is the same input read through :func:`renderers.readers.html.read_html` and resolved;
    it supplies the numbering plan, the Sources entries and the title. ``dialects`` must be the
    ones the reader used; the ``numeric`` dialect also needs the ``pool`` (indices → sids).
    """
    clean = sanitize_html(html, keep_styles=True)
    container = lxml.html.fragment_fromstring(clean, create_parent="div")
    for title in container.findall(".//title"):  # the page shell writes the one <title>
        title.drop_tree()
    words = document_words(rdoc, options)
    writer = ReportWriter(options, rdoc, words)
    rewriter = _CiteRewriter(rdoc, dialects, pool, writer)
    rewriter.walk(container)
    _set_outline_labels(container)
    _drop_refused_images(container, options, words)
    _set_directions(container)
    _set_alignments(container)
    _hold_citations(container, rewriter.written)
    _hold_line_runs(container)
    number_lists(container)
    title = document_title(rdoc.document, options)
    keep_out_sections(container, title)
    toc = ""
    if options.toc:
        back = [(rdoc.sources_heading, "sources")] if rdoc.entries else []
        toc = insert_author_contents(container, title, back, words)
    shown = title_block(rdoc.document, options, words)
    if shown:  # right after the heading that shows the title, else above the body
        header = lxml.html.fragment_fromstring(str(writer.title_block(shown)))
        heading = title_heading(container, title)
        if heading is not None:
            heading.addnext(header)
        else:  # the contents the page would put under the title go under the block
            for offset, element in enumerate(lxml.html.fragments_fromstring(toc) if toc else []):
                container.insert(offset, element)
            container.insert(0, header)
            toc = ""
    break_long_runs(container)
    parts = [Markup.escape(container.text or "")]
    parts += [Markup(lxml.html.tostring(c, encoding="unicode")) for c in container]
    page = render_page(body=Markup("").join(parts), title=title, options=options, rdoc=rdoc,
                       toc=toc, cite_notes=writer.cite_notes)
    return unlink_missing_fragments(page.html)  # the reader kept such a link's text only
