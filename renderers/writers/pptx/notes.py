"""Speaker notes: the blocks of a ``::: notes`` div as paragraphs of a slide's notes page, and
the notes page itself.

A notes page holds plain paragraphs (no measuring: PowerPoint and LibreOffice scroll the notes
pane), so every block becomes paragraphs here: text with its emphasis, links and citations
(numbers linked to the Sources slide, as on the slides), list items with bullets or numbers,
code in the monospace font, a table row by row, an image as its description; a figure's,
table's or listing's caption as on the slides ("Figure 1:" and the caption in italics).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pptx.opc.constants import CONTENT_TYPE as CT
from pptx.opc.constants import RELATIONSHIP_TYPE as RT
from pptx.opc.package import Part
from pptx.opc.packuri import PackURI
from pptx.oxml.ns import nsdecls, qn

from renderers.document import (
    Block,
    BlockQuote,
    BulletList,
    CodeBlock,
    Figure,
    FootnoteDef,
    Heading,
    Inline,
    OrderedList,
    Paragraph,
    RawBlock,
    SpeakerNotes,
    Table,
    ThematicBreak,
)
from renderers.errors import UnsupportedNodeError
from renderers.writers.common import image_fallback, item_marker
from renderers.writers.pptx.math import caption_runs
from renderers.writers.pptx.model import BULLETS, Para, Run
from renderers.writers.pptx.runs import InlineRuns, clean, italicized

#: Font size of speaker notes (points): what PowerPoint's notes master uses.
NOTES_SIZE = 12.0


def notes_paras(blocks: Sequence[Block], inlines: InlineRuns, level: int = 0) -> list[Para]:
    """The paragraphs of a notes page for ``blocks``."""
    paras: list[Para] = []
    for block in blocks:
        paras += _block_paras(block, inlines, level)
    return paras


def _para(runs: Sequence[Run], level: int = 0) -> Para:
    return Para(tuple(runs) or (Run(" "),), size=NOTES_SIZE, level=level, space_before=0.0)


def _block_paras(block: Block, inlines: InlineRuns, level: int) -> list[Para]:
    match block:
        case Paragraph(children):
            return [_para(inlines.para(children), level)]
        case Heading(children=children):
            return [_para([dataclasses.replace(r, bold=True) for r in inlines.para(children)],
                          level)]
        case BulletList() | OrderedList():
            return _list_paras(block, inlines, level)
        case CodeBlock(text, _, caption, label, number):
            return [*_caption_paras(caption, label, number, inlines, level),
                    *_code_paras(text, level)]
        case RawBlock(text):
            return _code_paras(text, level)
        case SpeakerNotes(inner):
            return notes_paras(inner, inlines, level)
        case BlockQuote(inner):
            return [dataclasses.replace(p, runs=italicized(p.runs, True))
                    for p in notes_paras(inner, inlines, level)]
        case Table(header, rows, _, caption, label, number):
            paras = [_para(_joined([inlines.para(cell.children) for cell in row]), level)
                     for row in (header, *rows) if row]
            return paras + _caption_paras(caption, label, number, inlines, level)
        case Figure(image, caption, label, number):
            if caption:
                return _caption_paras(caption, label, number, inlines, level)
            fallback = Run(clean(image_fallback(image, inlines.words)))
            return [_para((*caption_runs(label, number, inlines.words), fallback), level)]
        case ThematicBreak() | FootnoteDef():
            return []
        case _:
            raise UnsupportedNodeError(f"pptx notes: block node {type(block).__name__}")


def _caption_paras(
    caption: tuple[Inline, ...], label: str, number: int, inlines: InlineRuns, level: int
) -> list[Para]:
    """A figure's, table's or listing's caption as the slides show it: "Figure 1:" (which
    holds the anchor references jump to: the slide of these notes) before the italic
    caption; nothing for an unnumbered block without one."""
    runs = (*caption_runs(label, number, inlines.words),
            *(inlines.para(caption, italic=True) if caption else ()))
    return [_para(runs, level)] if runs else []


def _code_paras(text: str, level: int) -> list[Para]:
    """Code line by line, in the monospace font."""
    return [_para([Run(clean(line) or " ", code=True)], level)
            for line in text.rstrip("\n").split("\n")]


def _list_paras(block: BulletList | OrderedList, inlines: InlineRuns, level: int) -> list[Para]:
    """Each item's paragraphs one level in, the first with the item's bullet or number."""
    paras: list[Para] = []
    for index, item in enumerate(block.items):
        inner = notes_paras(item.blocks, inlines, level + 1)
        if not item.blocks or not isinstance(item.blocks[0], Paragraph):
            inner.insert(0, _para((), level + 1))
        listed = "" if isinstance(block, OrderedList) else BULLETS[level % len(BULLETS)]
        bullet = item_marker(item.checked, listed)  # a task's box in place of its bullet
        if isinstance(block, OrderedList) and not bullet:
            inner[0] = dataclasses.replace(inner[0], number=block.start + index)
        else:
            inner[0] = dataclasses.replace(inner[0], bullet=bullet)
        paras += inner
    return paras


def _joined(cells: Sequence[tuple[Run, ...]]) -> list[Run]:
    """A table row's cells on one line, separated by `` | ``."""
    runs: list[Run] = []
    for index, cell in enumerate(cells):
        if index:
            runs.append(Run(" | "))
        runs += cell
    return runs


# ---------------------------------------------------------------- the notes page


@dataclass(frozen=True)
class NotesLayout:
    """What every notes page takes from the notes master: the ``idx`` of its body placeholder
    (the notes text inherits place and style through it) and the box of the slide picture,
    fitted to the slide's shape (the default master's box is 4:3, most decks 16:9)."""

    body_idx: str
    slide_box: tuple[int, int, int, int] | None

    @classmethod
    def of(cls, prs_part: Part, slide_width: int, slide_height: int) -> NotesLayout:
        """The layout of the deck's notes master (created when the deck has none)."""
        master = prs_part.notes_master_part  # type: ignore[attr-defined]
        body_idx, box = "1", None
        for ph in master._element.iter(qn("p:ph")):
            kind = ph.get("type")
            if kind == "body":
                body_idx = str(ph.get("idx", "1"))
            elif kind == "sldImg":
                box = _fitted(ph.getparent().getparent().getparent(), slide_width, slide_height)
        return cls(body_idx, box)


def _fitted(shape: Any, width: int, height: int) -> tuple[int, int, int, int] | None:
    """The largest box of the slide's shape, centred in ``shape``'s box."""
    off, ext = shape.find(f".//{qn('a:off')}"), shape.find(f".//{qn('a:ext')}")
    if off is None or ext is None or width <= 0 or height <= 0:
        return None
    x, y, cx, cy = (int(v) for v in (off.get("x"), off.get("y"), ext.get("cx"), ext.get("cy")))
    scale = min(cx / width, cy / height)
    fit_w, fit_h = round(width * scale), round(height * scale)
    return x + (cx - fit_w) // 2, y + (cy - fit_h) // 2, fit_w, fit_h


def ensure_notes_master_listed(prs_part: Part) -> None:
    """List the notes master in ``presentation.xml`` (``p:notesMasterIdLst``), which python-pptx
    leaves out when it creates one; PowerPoint and Keynote look for it there."""
    root = prs_part._element  # type: ignore[attr-defined]
    if root.find(qn("p:notesMasterIdLst")) is not None:
        return
    rid = next(rid for rid, rel in prs_part.rels.items() if rel.reltype == RT.NOTES_MASTER)
    listed = root.makeelement(qn("p:notesMasterIdLst"), {})
    entry = listed.makeelement(qn("p:notesMasterId"), {qn("r:id"): rid})
    listed.append(entry)
    root.find(qn("p:sldMasterIdLst")).addnext(listed)


def add_notes_page(number: int, slide: Part, master: Part) -> Part:
    """An empty notes page (``notesSlideN``) for ``slide``, related both ways and to the notes
    master; its XML is set by :func:`notes_page_xml`."""
    part = Part(PackURI(f"/ppt/notesSlides/notesSlide{number}.xml"), CT.PML_NOTES_SLIDE,
                slide.package, b"")
    part.rels._add_relationship(RT.NOTES_MASTER, master)
    part.rels._add_relationship(RT.SLIDE, slide)
    slide.rels._add_relationship(RT.NOTES_SLIDE, part)
    return part


def notes_page_xml(paragraphs: Sequence[str], layout: NotesLayout) -> bytes:
    """A notes page: the slide picture, then the notes placeholder holding ``paragraphs``."""
    picture = ""
    if layout.slide_box is not None:
        x, y, cx, cy = layout.slide_box
        picture = f'<a:xfrm><a:off x="{x}" y="{y}"/><a:ext cx="{cx}" cy="{cy}"/></a:xfrm>'
    return (
        "<?xml version='1.0' encoding='UTF-8' standalone='yes'?>\n"
        f'<p:notes {nsdecls("a", "p", "r")}><p:cSld><p:spTree><p:nvGrpSpPr>'
        '<p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>'
        '<p:sp><p:nvSpPr><p:cNvPr id="2" name="Slide Image Placeholder 1"/><p:cNvSpPr>'
        '<a:spLocks noGrp="1" noRot="1" noChangeAspect="1"/></p:cNvSpPr><p:nvPr>'
        f'<p:ph type="sldImg"/></p:nvPr></p:nvSpPr><p:spPr>{picture}</p:spPr></p:sp>'
        '<p:sp><p:nvSpPr><p:cNvPr id="3" name="Notes Placeholder 2"/><p:cNvSpPr>'
        '<a:spLocks noGrp="1"/></p:cNvSpPr><p:nvPr>'
        f'<p:ph type="body" idx="{layout.body_idx}"/></p:nvPr></p:nvSpPr><p:spPr/>'
        "<p:txBody><a:bodyPr/><a:lstStyle/>"
        f'{"".join(paragraphs)}</p:txBody></p:sp></p:spTree></p:cSld>'
        "<p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:notes>"
    ).encode()
