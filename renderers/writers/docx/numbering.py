"""List numbering definitions in ``numbering.xml``."""

from __future__ import annotations

from typing import Literal

from lxml import etree

from renderers.writers.common import task_box
from renderers.writers.docx.oxml import Element, sub, w

#: A Word list's marks: bullets, numbers, or a task's box (open or done) in their place.
ListKind = Literal["bullet", "decimal", "task-open", "task-done"]
_TASK_KINDS: dict[bool, ListKind] = {False: "task-open", True: "task-done"}

#: Twips per level of list and block-quote indentation.
INDENT_STEP = 720
LIST_HANGING = 360
_BULLETS = ("\u2022", "\u25e6", "\u25aa")
#: The face of the bullets (as the slides' ``buFont``).
BULLET_FONT = "Arial"


class Numbering:
    """List definitions in ``numbering.xml``: one abstract definition per kind, one num per list.

    Every list gets its own ``w:num`` with a ``w:startOverride`` so that numbering restarts for
    each list (Word continues numbers across nums of one abstract definition without it).
    """

    def __init__(self, numbering: Element) -> None:
        self._root = numbering
        self._abstract: dict[ListKind, int] = {}
        abstract_ids = [
            int(e.get(w("abstractNumId"), "0")) for e in numbering.iter(w("abstractNum"))
        ]
        num_ids = [int(e.get(w("numId"), "0")) for e in numbering.iter(w("num"))]
        self._next_abstract = max(abstract_ids, default=-1) + 1
        self._next_num = max(num_ids, default=0) + 1

    def new_list(self, kind: ListKind, level: int, start: int = 1) -> int:
        """A fresh ``numId`` for a list of ``kind`` at ``level`` (0–8) starting at ``start``."""
        abstract_id = self._abstract.get(kind)
        if abstract_id is None:
            abstract_id = self._add_abstract(kind)
        num_id = self._next_num
        self._next_num += 1
        num = sub(self._root, "num", {"numId": str(num_id)})
        sub(num, "abstractNumId", {"val": str(abstract_id)})
        override = sub(num, "lvlOverride", {"ilvl": str(level)})
        sub(override, "startOverride", {"val": str(max(start, 0))})
        return num_id

    def _add_abstract(self, kind: ListKind) -> int:
        abstract_id = self._next_abstract
        self._next_abstract += 1
        self._abstract[kind] = abstract_id
        node = etree.Element(w("abstractNum"))
        node.set(w("abstractNumId"), str(abstract_id))
        sub(node, "multiLevelType", {"val": "multilevel"})
        for level in range(9):
            lvl = sub(node, "lvl", {"ilvl": str(level)})
            sub(lvl, "start", {"val": "1"})
            if kind in _TASK_KINDS.values():
                sub(lvl, "numFmt", {"val": "bullet"})
                sub(lvl, "lvlText", {"val": task_box(kind == "task-done")})
            elif kind == "bullet":
                sub(lvl, "numFmt", {"val": "bullet"})
                sub(lvl, "lvlText", {"val": _BULLETS[level % len(_BULLETS)]})
            else:
                # decimal at every level, as the PDF's and the slides' nested lists: "7." of
                # the input stays 7., not "g." (nor "0." then "i." for a list from 0)
                sub(lvl, "numFmt", {"val": "decimal"})
                sub(lvl, "lvlText", {"val": f"%{level + 1}."})
            sub(lvl, "lvlJc", {"val": "left"})
            ppr = sub(lvl, "pPr")
            sub(ppr, "ind", {"left": str(list_indent(level)), "hanging": str(LIST_HANGING)})
            if kind == "bullet":
                # a named face that has the marks (the slides' bullet font): with none,
                # LibreOffice drew no "▪" (levels 3, 6 …), leaving those items unmarked
                rpr = sub(lvl, "rPr")
                sub(rpr, "rFonts", {"ascii": BULLET_FONT, "hAnsi": BULLET_FONT})
        existing = list(self._root.iter(w("abstractNum")))
        if existing:
            existing[-1].addnext(node)
        else:
            first_num = self._root.find(w("num"))
            if first_num is not None:
                first_num.addprevious(node)
            else:
                self._root.append(node)
        return abstract_id


def item_kind(checked: bool | None, kind: ListKind) -> ListKind:
    """The marks of an item of a ``kind`` list: a task's box in place of the bullet or number
    (the rule of :func:`~renderers.writers.common.item_marker`), else the list's own."""
    return kind if checked is None else _TASK_KINDS[checked]


def list_indent(level: int) -> int:
    """Left indent (twips) of list text at ``level``."""
    return INDENT_STEP * (level + 1)
