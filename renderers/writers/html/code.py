"""Code blocks in the HTML report: plain, or highlighted (:mod:`renderers.writers.highlight`).

Each line is a ``span.code-line`` (its wrapped part hangs in, as in the Typst PDF). A highlighted
block is ``<pre class="hl">`` with one ``<span class="hl-K">`` per token run,
where ``K`` is Pygments' short name of the token kind (``k`` keyword, ``s2`` string …), so a
reader's own stylesheet can restyle it as it would Pygments' HTML. The rules for the kinds a
report uses, and the block's background and text colour, are collected while writing and
written once into the page's stylesheet (:meth:`CodeBlocks.css`).
"""

from __future__ import annotations

import re

from markupsafe import Markup

from renderers.text import split_runs_at_long_words
from renderers.writers.common import code_hang
from renderers.writers.highlight import HighlightedCode, Highlighter, TokenLook
from renderers.writers.html.breaks import breakable, wrappable

_LANGUAGE = re.compile(r"[^A-Za-z0-9_+.#-]")
#: Only in reports with a code listing: its caption above the code (pandoc-crossref's
#: "Listing 1: …"), kept with it; a long listing runs on to the next page as plain code does.
LISTING_CSS = (
    "figure.listing{margin:0 0 .8em;text-align:start;break-inside:auto}"
    "figure.listing>figcaption{margin:0 0 .3em;break-after:avoid}"
    "figure.listing>pre{margin:0}"
)


class CodeBlocks:
    """Writes the code blocks of one report and remembers the styles they need."""

    def __init__(self, style: str) -> None:
        self.highlight = Highlighter(style)
        self.looks: dict[str, TokenLook] = {}
        self.colors: tuple[str, str] | None = None  # (background, foreground) when highlighted
        self.has_listing = False

    def block(self, text: str, language: str) -> Markup:
        """``<pre><code>`` of ``text``: coloured when its language has a lexer."""
        cls = _LANGUAGE.sub("", language)
        cls_attr = f' class="language-{cls}"' if cls else ""
        highlighted = self.highlight(text, language)
        if highlighted is None:
            lines = text.split("\n")
            return Markup(f'<pre dir="ltr"><code{cls_attr}>'
                          f'{_lines(lines, [wrappable(line) for line in lines])}</code></pre>')
        self.colors = (highlighted.background, highlighted.foreground)
        self.looks.update(highlighted.looks())
        return Markup(
            f'<pre class="hl" dir="ltr"><code{cls_attr}>{_spans(highlighted)}</code></pre>'
        )

    def listing(self, code: Markup, caption: Markup, ident: Markup) -> Markup:
        """A code listing: ``code`` (:meth:`block`) under its ``<figcaption>``, in a
        ``<figure>`` with the ``id`` attribute ``ident`` references lead to."""
        self.has_listing = True
        return Markup(f'<figure class="listing"{ident}>{caption}{code}</figure>')

    def css(self) -> str:
        """The stylesheet rules of the listings and highlighted blocks written so far ("" when
        none)."""
        listing = LISTING_CSS + "\n" if self.has_listing else ""
        if self.colors is None:
            return listing
        background, foreground = self.colors
        rules = [f"pre.hl {{ background: #{background}; color: #{foreground}; }}"]
        for kind in sorted(self.looks):
            declarations = _declarations(self.looks[kind], foreground)
            if kind and declarations:
                rules.append(f".hl-{kind} {{ {declarations} }}")
        return listing + "\n".join(rules) + "\n"


def _spans(code: HighlightedCode) -> Markup:
    """The lines of ``code``: a span per token run whose kind has a look of its own. A long word
    of a line (counted across its runs, :func:`renderers.text.split_runs_at_long_words`) sits in
    one span that may wrap anywhere, as in a plain block."""
    looks = code.looks().items()
    plain = {"", *(kind for kind, look in looks if not _declarations(look, code.foreground))}
    lines = []
    for line in code.lines:
        parts: list[Markup] = []
        word: list[Markup] = []
        for text, kind, in_long_word in split_runs_at_long_words([(s.text, s.kind) for s in line]):
            run = (breakable(text) if kind in plain
                   else Markup(f'<span class="hl-{kind}">{breakable(text)}</span>'))
            if in_long_word:
                word.append(run)
                continue
            if word:
                parts.append(_long_word(word))
                word = []
            parts.append(run)
        if word:
            parts.append(_long_word(word))
        lines.append(Markup("").join(parts))
    return _lines(["".join(s.text for s in line) for line in code.lines], lines)


def _lines(texts: list[str], lines: list[Markup]) -> Markup:
    """The lines of a block (``texts``, marked up as ``lines``), each a ``span.code-line`` that
    report.css sets as a block whose wrapped part hangs in by ``--hang`` characters
    (:func:`~renderers.writers.common.code_hang`), as Typst's ``code-line`` does. Each line's
    newline stays inside its span: the text of the block is the code as written, and a
    newline between two blocks would add an empty line."""
    last = len(lines) - 1
    return Markup("").join(
        Markup('<span class="code-line" style="--hang:%d">%s%s</span>')
        % (code_hang(text), line, "\n" if index < last else "")
        for index, (text, line) in enumerate(zip(texts, lines, strict=True))
    )


def _long_word(runs: list[Markup]) -> Markup:
    """The runs of one long word, with a break opportunity between each two (where Typst's
    boxes break too): WeasyPrint lays out ``overflow-wrap: anywhere`` across nested spans
    unreliably (a chain of calls wrapped once, then ran off the page)."""
    return Markup('<span class="long-word">%s</span>') % Markup("<wbr>").join(runs)


def _declarations(look: TokenLook, foreground: str) -> str:
    """CSS declarations of ``look`` (the block's own text colour is not repeated)."""
    parts = []
    if look.color != foreground:
        parts.append(f"color: #{look.color}")
    if look.bold:
        parts.append("font-weight: bold")
    if look.italic:
        parts.append("font-style: italic")
    if look.underline:
        parts.append("text-decoration: underline")
    return "; ".join(parts)
