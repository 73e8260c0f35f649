"""The table of contents in DOCX: a real Word TOC field, already filled with its entries.

Word and LibreOffice show a field's last result until it is updated, so the result is written
here: one paragraph per entry in the ``toc N`` style of its depth in the contents (as HTML and
PPTX nest them), each a hyperlink to the heading's bookmark. The field
(``TOC \\o "1-N" \\h \\z \\u``, N the deepest heading level listed) sits in a Table of Contents
content control (``w:sdt``), so *Update Table* regenerates the same entries from the heading
styles (indented by Word's own rule, by heading level) and adds page numbers, which only a
word processor can know.
"""

from __future__ import annotations

from collections.abc import Sequence

from lxml import etree

from renderers.labels import Labels
from renderers.text import is_rtl
from renderers.writers.contents import ContentsEntry
from renderers.writers.docx.links import add_hyperlink
from renderers.writers.docx.oxml import (
    XML_SPACE,
    Element,
    ParaProps,
    RunProps,
    add_paragraph,
    add_run,
    sub,
    w,
)
from renderers.writers.docx.styles import StyleBook


def toc_instruction(entries: Sequence[ContentsEntry]) -> str:
    """The field instruction listing the heading levels of ``entries``, as hyperlinks."""
    deepest = max((entry.level for entry in entries), default=1)
    return f' TOC \\o "1-{deepest}" \\h \\z \\u '


def add_contents(
    body: Element, entries: Sequence[ContentsEntry], styles: StyleBook, words: Labels
) -> None:
    """Append the contents of ``entries`` under their heading in ``words`` to ``body``
    (nothing when there are none)."""
    if not entries:
        return
    sdt = sub(body, "sdt")
    gallery = sub(sub(sub(sdt, "sdtPr"), "docPartObj"), "docPartGallery",
                  {"val": "Table of Contents"})
    sub(gallery.getparent(), "docPartUnique")
    content = sub(sdt, "sdtContent")
    heading = ParaProps(style=styles.get("TOC Heading"), bidi=is_rtl(words.contents))
    add_run(add_paragraph(content, heading), words.contents)
    for index, entry in enumerate(entries):
        rtl = entry.direction == "rtl"
        last = index == len(entries) - 1
        p = add_paragraph(content, ParaProps(style=styles.get(f"toc {entry.depth}"), bidi=rtl,
                                             space_after=240 if last else None))
        if index == 0:
            _field_char(p, "begin")
            instr = etree.SubElement(etree.SubElement(p, w("r")), w("instrText"))
            instr.text = toc_instruction(entries)
            instr.set(XML_SPACE, "preserve")
            _field_char(p, "separate")
        target = add_hyperlink(p, anchor=entry.anchor) if entry.anchor else p
        add_run(target, entry.text, RunProps(rtl=rtl))  # styled like Word's own entries
        if last:
            _field_char(p, "end")


def _field_char(p: Element, kind: str) -> None:
    sub(etree.SubElement(p, w("r")), "fldChar", {"fldCharType": kind})
