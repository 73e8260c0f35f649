"""The HTML writer: a standalone HTML5 report (inline CSS, images as ``data:`` URIs).

The same markup feeds the PDF writer (WeasyPrint) and, through it, the PNG writer.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

from markupsafe import Markup, escape

from citations.links import safe_link
from citations.numbering import display_segments
from renderers.document import (
    Block,
    BlockQuote,
    BulletList,
    Cite,
    Code,
    CodeBlock,
    Document,
    Emph,
    Figure,
    FootnoteDef,
    FootnoteRef,
    Heading,
    Image,
    Inline,
    LineBreak,
    Link,
    ListItem,
    OrderedList,
    Paragraph,
    RawBlock,
    RawInline,
    SoftBreak,
    Strike,
    Strong,
    Styled,
    Table,
    TableCell,
    Text,
    ThematicBreak,
    iter_blocks,
    iter_inlines,
    plain_text,
)
from renderers.errors import UnsupportedNodeError
from renderers.options import RenderOptions
from renderers.resolve import ResolvedDocument
from renderers.sandbox import load_image
from renderers.text import HeadingIds
from renderers.writers import Artifact, WriteSource
from renderers.writers.html.templating import environment, report_css

NOTES_HEADING = "Notes"
NOTES_ID = "notes"
_LANGUAGE = re.compile(r"[^A-Za-z0-9_+.#-]")


def cite_markup(anchor: str, numbers: Iterable[int]) -> Markup:
    """``<sup class="cite" id="cite-K">`` with one ``<a href="#src-N">`` per displayed number."""
    pieces = display_segments(numbers)
    if not pieces:
        return Markup("")
    inner = "".join(
        str(escape(text)) if number is None else f'<a href="#src-{number}">{escape(text)}</a>'
        for text, number in pieces
    )
    return Markup(f'<sup class="cite" id="{escape(anchor)}">{inner}</sup>')


def image_alt_markup(alt: str) -> Markup:
    """What an image that is not loaded (remote, refused, broken) shows instead: its alt text."""
    return Markup(f'<span class="img-alt">[{escape(alt)}]</span>')


def text_direction(text: str) -> str:
    """``"rtl"`` when the first strongly directional character is right-to-left, else ``"auto"``.

    WeasyPrint ignores ``dir="auto"``, so right-to-left blocks get an explicit ``dir="rtl"``;
    browsers still resolve ``auto`` themselves.
    """
    for char in text:
        kind = unicodedata.bidirectional(char)
        if kind in ("R", "AL"):
            return "rtl"
        if kind == "L":
            return "auto"
    return "auto"


def document_title(rdoc: ResolvedDocument, options: RenderOptions) -> str:
    """``options.title``, else the document's title, else its first level-1 heading."""
    if options.title.strip():
        return options.title.strip()
    if rdoc.title.strip():
        return rdoc.title.strip()
    for block in rdoc.document.blocks:
        if isinstance(block, Heading) and block.level == 1:
            return plain_text(block.children).strip()
    return "Report"


def render_html(rdoc: ResolvedDocument, options: RenderOptions) -> str:
    """The standalone HTML5 report of ``rdoc``."""
    writer = _Writer(options, rdoc.document)
    body = writer.blocks(rdoc.document.blocks)
    notes = writer.notes()
    title = document_title(rdoc, options)
    has_h1 = any(isinstance(b, Heading) and b.level == 1 for b in rdoc.document.blocks)
    return render_page(
        body=body,
        title=title,
        options=options,
        show_title=not has_h1,
        notes=notes,
        rdoc=rdoc,
    )


def html_artifact(source: WriteSource) -> Artifact:
    """The HTML writer's artifact (for the writer registry; the PDF writer lays it out too)."""
    return Artifact.of_text(render_html(source.rdoc, source.options))


def render_page(
    *,
    body: Markup,
    title: str,
    options: RenderOptions,
    show_title: bool,
    rdoc: ResolvedDocument,
    notes: list[dict[str, object]] | None = None,
) -> str:
    """Fill ``report.html.j2`` (page shell, CSS, notes and the Sources section) around ``body``."""
    css = report_css(options.page_size)
    return environment().get_template("report.html.j2").render(
        lang="en",
        title=title,
        author=options.author,
        css=Markup(css.replace("</", "<\\/")),
        show_title=show_title,
        body=body,
        notes=notes or [],
        notes_heading=NOTES_HEADING,
        entries=rdoc.entries,
        sources_heading=rdoc.sources_heading,
    )


@dataclass
class _Footnotes:
    """Author footnotes: numbered by first reference, rendered as a Notes list."""

    defs: dict[str, FootnoteDef] = field(default_factory=dict)
    numbers: dict[str, int] = field(default_factory=dict)
    refs: dict[str, list[str]] = field(default_factory=dict)

    def collect(self, blocks: tuple[Block, ...]) -> None:
        for block in iter_blocks(blocks):
            if isinstance(block, FootnoteDef):
                self.defs.setdefault(block.label, block)

    def reference(self, label: str) -> tuple[int, str] | None:
        """Number and a fresh anchor for a reference to ``label``; None when undefined."""
        if label not in self.defs:
            return None
        number = self.numbers.setdefault(label, len(self.numbers) + 1)
        anchors = self.refs.setdefault(label, [])
        anchor = f"fnref-{number}" + (f"-{len(anchors) + 1}" if anchors else "")
        anchors.append(anchor)
        return number, anchor


class _Writer:
    """Walks the IR once; every node kind has a branch, anything else is an error."""

    def __init__(self, options: RenderOptions, document: Document) -> None:
        self.options = options
        self.ids = HeadingIds()
        self.footnotes = _Footnotes()
        self.footnotes.collect(document.blocks)
        if self.footnotes.defs:
            self.ids.assign(NOTES_ID)  # the Notes section's own id: no heading may take it

    # ------------------------------------------------------------------ blocks

    def blocks(self, blocks: Iterable[Block], *, tight: bool = False) -> Markup:
        return Markup("\n").join(self.block(b, tight=tight) for b in blocks)

    def block(self, block: Block, *, tight: bool = False) -> Markup:
        match block:
            case Heading(level, children, given_id):
                level = min(max(level, 1), 6)
                label = plain_text(children)  # no citation numbers
                ident = self.ids.assign(given_id or label)
                direction = text_direction(label)
                cited = any(isinstance(n, Cite) for n in iter_inlines((Paragraph(children),)))
                outline = f' data-outline="{escape(label)}"' if cited else ""  # PDF outline entry
                return Markup(
                    f'<h{level} id="{escape(ident)}" dir="{direction}"{outline}>'
                    f"{self.inlines(children)}</h{level}>"
                )
            case Paragraph(children):
                if tight:
                    return self.inlines(children)
                return Markup(
                    f'<p dir="{text_direction(plain_text(children))}">'
                    f"{self.inlines(children)}</p>"
                )
            case BulletList(items, list_tight):
                return Markup(f"<ul>\n{self.items(items, list_tight)}\n</ul>")
            case OrderedList(items, start, list_tight):
                start_attr = f' start="{int(start)}"' if start != 1 else ""
                return Markup(f"<ol{start_attr}>\n{self.items(items, list_tight)}\n</ol>")
            case Table():
                return self.table(block)
            case CodeBlock(text, language):
                cls = _LANGUAGE.sub("", language)
                cls_attr = f' class="language-{cls}"' if cls else ""
                return Markup(f'<pre dir="ltr"><code{cls_attr}>{escape(text)}</code></pre>')
            case BlockQuote(inner):
                return Markup(f'<blockquote dir="auto">\n{self.blocks(inner)}\n</blockquote>')
            case Figure(image, caption):
                cap = (
                    Markup(f"<figcaption>{self.inlines(caption)}</figcaption>") if caption else ""
                )
                return Markup(f"<figure>{self.image(image)}{cap}</figure>")
            case ThematicBreak():
                return Markup("<hr>")
            case RawBlock(text, _):
                return Markup(f'<pre class="raw" dir="ltr">{escape(text)}</pre>')
            case FootnoteDef():
                return Markup("")  # rendered in the Notes list
            case _:
                raise UnsupportedNodeError(f"HTML writer: unsupported block {type(block).__name__}")

    def items(self, items: tuple[ListItem, ...], tight: bool) -> Markup:
        out: list[str] = []
        for item in items:
            content = self.blocks(item.blocks, tight=tight)
            if item.checked is None:
                out.append(f"<li>{content}</li>")
            else:
                box = "\u2611" if item.checked else "\u2610"
                state = "checked" if item.checked else "unchecked"
                out.append(
                    f'<li class="task {state}"><span class="task-box" aria-hidden="true">'
                    f"{box}</span>{content}</li>"
                )
        return Markup("\n".join(out))

    def table(self, table: Table) -> Markup:
        def row(cells: tuple[TableCell, ...], tag: str) -> str:
            parts = []
            for index, cell in enumerate(cells):
                align = table.aligns[index] if index < len(table.aligns) else "default"
                cls = f' class="al-{align}"' if align != "default" else ""
                parts.append(f"<{tag}{cls}>{self.inlines(cell.children)}</{tag}>")
            return "<tr>" + "".join(parts) + "</tr>"

        parts = ["<table>"]
        if table.caption:
            parts.append(f"<caption>{self.inlines(table.caption)}</caption>")
        if table.header:
            parts.append(f"<thead>{row(table.header, 'th')}</thead>")
        parts.append("<tbody>")
        parts.extend(row(r, "td") for r in table.rows)
        parts.append("</tbody></table>")
        return Markup("\n".join(parts))

    # ------------------------------------------------------------------ inlines

    def inlines(self, nodes: Iterable[Inline]) -> Markup:
        return Markup("").join(self.inline(n) for n in nodes)

    def inline(self, node: Inline) -> Markup:
        match node:
            case Text(text):
                return escape(text)
            case Emph(children):
                return Markup(f"<em>{self.inlines(children)}</em>")
            case Strong(children):
                return Markup(f"<strong>{self.inlines(children)}</strong>")
            case Strike(children):
                return Markup(f"<del>{self.inlines(children)}</del>")
            case Styled(style, children, title):
                attrs = f' title="{escape(title)}"' if title else ""
                return Markup(f"<{style}{attrs}>{self.inlines(children)}</{style}>")
            case Code(text):
                return Markup(f"<code>{escape(text)}</code>")
            case Link(url, children, title):
                return self.link(url, children, title)
            case Image():
                return self.image(node)
            case LineBreak():
                return Markup("<br>\n")
            case SoftBreak():
                return Markup("\n")
            case RawInline(text, _):
                return Markup(f'<span class="raw">{escape(text)}</span>')
            case FootnoteRef(label):
                ref = self.footnotes.reference(label)
                if ref is None:
                    return escape(f"[^{label}]")
                number, anchor = ref
                return Markup(
                    f'<sup class="fnref" id="{anchor}"><a href="#fn-{number}">{number}</a></sup>'
                )
            case Cite(_, numbers, anchor):
                return cite_markup(anchor, numbers)
            case _:
                raise UnsupportedNodeError(f"HTML writer: unsupported inline {type(node).__name__}")

    def link(self, url: str, children: tuple[Inline, ...], title: str) -> Markup:
        """A link; citations inside it follow the link (an ``<a>`` cannot contain ``<a>``)."""
        text = [c for c in children if not isinstance(c, Cite)]
        cites = self.inlines(c for c in children if isinstance(c, Cite))
        href = safe_link(url, allow_fragment=True)
        if not href:
            return self.inlines(text) + cites
        title_attr = f' title="{escape(title)}"' if title else ""
        return Markup(f'<a href="{escape(href)}"{title_attr}>{self.inlines(text)}</a>') + cites

    def image(self, image: Image) -> Markup:
        loaded = load_image(image.src, self.options)
        alt = image.alt or image.title or "image"
        if loaded is None:
            return image_alt_markup(alt)
        title_attr = f' title="{escape(image.title)}"' if image.title else ""
        return Markup(
            f'<img src="{loaded.data_uri()}" alt="{escape(image.alt)}"{title_attr} '
            f'width="{loaded.width}" height="{loaded.height}">'
        )

    # ------------------------------------------------------------------ helpers

    def notes(self) -> list[dict[str, object]]:
        """The Notes list: referenced footnotes in reference order, then unreferenced ones."""
        for label in self.footnotes.defs:
            self.footnotes.numbers.setdefault(label, len(self.footnotes.numbers) + 1)
        ordered = sorted(self.footnotes.numbers.items(), key=lambda kv: kv[1])
        notes: list[dict[str, object]] = []
        for label, number in ordered:
            definition = self.footnotes.defs[label]
            refs = self.footnotes.refs.get(label, [])
            notes.append(
                {
                    "id": f"fn-{number}",
                    "number": number,
                    "body": self.blocks(definition.blocks, tight=len(definition.blocks) == 1),
                    "backref": refs[0] if refs else "",
                }
            )
        return notes
