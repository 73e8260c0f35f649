"""The slide model: frozen values saying what goes on which slide, measured in points and EMU.

The layout (:mod:`.layout`) builds a :class:`Deck` from a resolved document; the drawing
(:mod:`.output`) turns it into slide XML. Nothing here imports python-pptx or measures text: this
is the vocabulary both sides share, with the sizes and spacings the measurements assume.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from renderers.document import Alignment
from renderers.fonts import FontChoice
from renderers.writers.common import TASK_BOXES
from renderers.writers.pptx.code import CodeRun

EMU_PER_PT = 12700
#: Exact line spacing written into every paragraph, as a multiple of the font size.
LINE_FACTOR = 1.2
#: Text frame insets (points) written into every text box and table cell (a table of narrow
#: columns has less at the sides: :func:`.tables.table_inset`).
INSET_X = 7.2
INSET_Y = 3.6

BODY_SIZE = 18.0
SUBHEAD_SIZE = 20.0
CODE_SIZE = 13.0
CODE_MIN_LINES = 3  # a code block split across slides keeps at least this many lines per part
CAPTION_SIZE = 14.0
SOURCES_SIZE = 14.0
FOOTER_SIZE = 10.0
TITLE_SIZES = (30.0, 26.0, 22.0, 20.0)
COVER_SIZES = (40.0, 34.0, 28.0, 24.0)
SUBTITLE_SIZE = 20.0
FOOTER_MAX_LINES = 2
LEVEL_INDENT = 24.0  # points per list/quote level
HANGING = 18.0  # bullet hanging indent (points)
#: An auto-number's widths in em (Arial's digits; its period and the gap after it): a list
#: numbered past 9 hangs its numbers further, or "10." ran into its item's text.
DIGIT_EM = 0.556
NUMBER_TAIL_EM = 0.58
#: A task box's hanging indent, in em of its paragraph's size: the box (about 0.9 em wide in
#: the fonts that draw it) and a space after it, as report.css gives ``.task-box`` 1.3 em.
TASK_HANGING_EM = 1.3
ITEM_GAP = 8.0  # vertical gap between items on a slide (points)
BULLETS = ("•", "–", "◦")


def pt_to_emu(points: float) -> int:
    """Points → EMU, rounded up so a measured height is never shortened."""
    return math.ceil(points * EMU_PER_PT - 1e-6)


#: A run's measured style: (bold, italic, monospace).
Style = tuple[bool, bool, bool]


@dataclass(frozen=True)
class Box:
    """A rectangle in EMU."""

    left: int
    top: int
    width: int
    height: int

    @property
    def bottom(self) -> int:
        return self.top + self.height

    @property
    def width_pt(self) -> float:
        return self.width / EMU_PER_PT

    @property
    def height_pt(self) -> float:
        return self.height / EMU_PER_PT


@dataclass(frozen=True)
class Geometry:
    """Slide size and the boxes the model fills (from the defaults or a reference deck)."""

    width: int
    height: int
    title: Box  # content slides' title
    content: Box  # content area (footer excluded)
    footer: Box
    cover_title: Box
    cover_subtitle: Box
    section_title: Box

    @classmethod
    def default(cls, ratio: str = "16:9", *, footer: bool = True) -> Geometry:
        """The built-in layout: 13.333×7.5 in (16:9) or 10×7.5 in (4:3)."""
        width_pt = 960.0 if ratio == "16:9" else 720.0
        return cls.from_boxes(
            width=pt_to_emu(width_pt),
            height=pt_to_emu(540.0),
            title=_box(36, 16, width_pt - 72, 80),
            body=_box(36, 104, width_pt - 72, 540 - 104 - 12),
            cover_title=_box(48, 130, width_pt - 96, 170),
            cover_subtitle=_box(48, 310, width_pt - 96, 90),
            section_title=_box(48, 170, width_pt - 96, 200),
            footer=footer,
        )

    @classmethod
    def from_boxes(
        cls,
        *,
        width: int,
        height: int,
        title: Box,
        body: Box,
        cover_title: Box,
        cover_subtitle: Box,
        section_title: Box,
        footer: bool,
    ) -> Geometry:
        """Split ``body`` into the content box and (when wanted) a footer strip below it."""
        footer_h = pt_to_emu(FOOTER_MAX_LINES * FOOTER_SIZE * LINE_FACTOR + 2 * INSET_Y)
        gap = pt_to_emu(6)
        bottom = min(body.bottom, height - pt_to_emu(8))
        if footer:
            content_h = bottom - footer_h - gap - body.top
            foot = Box(body.left, bottom - footer_h, body.width, footer_h)
        else:
            content_h = bottom - body.top
            foot = Box(body.left, bottom, body.width, 0)
        content = Box(body.left, body.top, body.width, max(content_h, pt_to_emu(120)))
        return cls(width, height, title, content, foot, cover_title, cover_subtitle,
                   section_title)


def _box(left: float, top: float, width: float, height: float) -> Box:
    return Box(pt_to_emu(left), pt_to_emu(top), pt_to_emu(width), pt_to_emu(height))


@dataclass(frozen=True)
class Run:
    """A styled piece of text. ``cite`` is a source number (links to its Sources slide),
    ``target`` an internal anchor (slide jump), ``url`` an external link (already vetted by
    ``safe_link``), ``defines`` an anchor id that lives here (a citation's ``cite-K``),
    ``spans`` the numbers the dash of a range (``1–4``) stands for (the footer lists them)."""

    text: str
    bold: bool = False
    italic: bool = False
    strike: bool = False
    code: bool = False
    superscript: bool = False
    url: str = ""
    target: str = ""
    cite: int = 0
    defines: str = ""
    spans: tuple[int, ...] = ()

    @property
    def style(self) -> Style:
        return (self.bold, self.italic, self.code)

    def with_text(self, text: str) -> Run:
        """This run with other text (``dataclasses.replace`` without its per-call overhead)."""
        if text == self.text:
            return self
        return Run(text, self.bold, self.italic, self.strike, self.code, self.superscript,
                   self.url, self.target, self.cite, self.defines, self.spans)


@dataclass(frozen=True)
class Para:
    """One paragraph: runs, indent level, bullet (a character, or ``number`` for ordered lists)."""

    runs: tuple[Run, ...]
    size: float = BODY_SIZE
    level: int = 0
    bullet: str = ""
    number: int = 0
    digits: int = 1  # of the largest number of its list
    space_before: float = 6.0
    align: Alignment = "default"  # physical; "default": the start of its text's direction
    keep_with_next: bool = False  # a heading, or a paragraph ending in ":", never ends a slide
    rtl: bool | None = None  # right to left; None: decided from its text when drawn

    @property
    def hanging(self) -> float:
        """How far the bullet hangs left of the text (points): a task's box is wider than a
        bullet and is followed by a space, so it hangs further (its text moves right; the box
        stays where a bullet would be)."""
        if self.bullet in TASK_BOXES.values():
            return max(HANGING, TASK_HANGING_EM * self.size)
        if self.number and self.digits > 1:
            return max(HANGING, (self.digits * DIGIT_EM + NUMBER_TAIL_EM) * self.size)
        return HANGING if (self.bullet or self.number) else 0.0

    @property
    def margin_left(self) -> float:
        """Left margin in points (text start)."""
        return self.level * LEVEL_INDENT + max(0.0, self.hanging - HANGING)

    @property
    def indent(self) -> float:
        """First-line indent in points (negative = hanging bullet)."""
        return -self.hanging


@dataclass(frozen=True)
class TextItem:
    """A text box of paragraphs; ``top`` is the offset (EMU) inside the content box."""

    paras: tuple[Para, ...]
    top: int
    height: int


@dataclass(frozen=True)
class CodeItem:
    """A code box; ``colors`` holds each line's coloured runs and ``fill`` the style's
    background when the block is highlighted; ``hangs`` how far (points) each line's wrapped
    part hangs in."""

    lines: tuple[str, ...]
    language: str
    top: int
    height: int
    size: float = CODE_SIZE
    colors: tuple[tuple[CodeRun, ...], ...] = ()
    fill: str = ""
    hangs: tuple[float, ...] = ()


@dataclass(frozen=True)
class TableItem:
    """A PowerPoint table; ``header`` is repeated on every continuation slide."""

    header: tuple[tuple[Run, ...], ...]
    rows: tuple[tuple[tuple[Run, ...], ...], ...]
    aligns: tuple[Alignment, ...]
    col_widths: tuple[int, ...]
    row_heights: tuple[int, ...]  # header first when there is one
    size: float
    inset: float  # points each side of a cell's text (narrower than INSET_X in narrow columns)
    top: int
    height: int
    rtl: bool = False  # columns run right to left (the table reads right to left)


@dataclass(frozen=True)
class Picture:
    """Image bytes as the sandboxed loader returned them."""

    data: bytes
    mime: str
    width: int  # pixels
    height: int


@dataclass(frozen=True)
class PictureItem:
    picture: Picture
    alt: str
    left: int  # offset inside the content box (centred)
    top: int
    width: int
    height: int


Item = TextItem | CodeItem | TableItem | PictureItem
SlideKind = Literal["title", "section", "content", "sources"]


@dataclass(frozen=True)
class Slide:
    """One slide: its title runs (and chosen size), items, a cover's subtitle lines, footer
    runs, the anchors it holds and its speaker notes."""

    kind: SlideKind
    title: tuple[Run, ...]
    title_size: float
    items: tuple[Item, ...] = ()
    subtitle: tuple[str, ...] = ()
    footer: tuple[Run, ...] = ()
    anchors: tuple[str, ...] = ()
    notes: tuple[Para, ...] = ()  # the speaker notes on its notes page
    footer_rtl: bool = False  # the footer reads right to left, as the slide does


@dataclass(frozen=True)
class Deck:
    """The whole slide model."""

    geometry: Geometry
    fonts: FontChoice
    slides: tuple[Slide, ...]
    anchors: Mapping[str, int]  # anchor id ("src-3", heading id, "cite-2") → slide index
    title: str
    warnings: tuple[str, ...] = field(default=())
    #: The document's language, a BCP 47 tag (:func:`renderers.language.language_for`): every
    #: run's ``lang``.
    lang: str = "en"


ImageLoader = Callable[[str], Picture | None]
