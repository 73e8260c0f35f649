"""Word footnotes: the ``footnotes.xml`` part, reference runs and the note's own mark."""

from __future__ import annotations

from typing import Any

from docx.opc.constants import CONTENT_TYPE as CT
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.packuri import PackURI
from docx.opc.part import PartFactory, XmlPart
from docx.oxml.parser import parse_xml
from lxml import etree

from renderers.writers.docx.links import Relations
from renderers.writers.docx.oxml import R_NS, W_NS, Element, RunProps, add_run, run_props, sub, w

# A footnotes part found in a reference document must be editable XML, not an opaque blob.
PartFactory.part_type_for.setdefault(CT.WML_FOOTNOTES, XmlPart)

_FOOTNOTES_XML = (
    f'<w:footnotes xmlns:w="{W_NS}" xmlns:r="{R_NS}">'
    '<w:footnote w:type="separator" w:id="-1"><w:p><w:pPr><w:spacing w:after="0" w:line="240" '
    'w:lineRule="auto"/></w:pPr><w:r><w:separator/></w:r></w:p></w:footnote>'
    '<w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:pPr><w:spacing w:after="0" '
    'w:line="240" w:lineRule="auto"/></w:pPr><w:r><w:continuationSeparator/></w:r></w:p>'
    "</w:footnote></w:footnotes>"
)


class Footnotes:
    """The document's ``footnotes.xml`` part, created on first use.

    A footnotes part inherited from a reference document keeps its separators; its other
    footnotes belonged to the discarded body and are removed.
    """

    def __init__(self, document_part: Any) -> None:
        self._document_part = document_part
        self._part: XmlPart | None = None
        self._next_id = 1
        self.relations: Relations | None = None

    @property
    def part(self) -> XmlPart:
        """The footnotes part (created and related to the document part when missing)."""
        if self._part is None:
            self._part = self._find_or_create()
            self.relations = Relations(self._part)
        return self._part

    def _find_or_create(self) -> XmlPart:
        for rel in self._document_part.rels.values():
            if rel.reltype == RT.FOOTNOTES and not rel.is_external:
                part = rel.target_part
                if isinstance(part, XmlPart):
                    root = part.element
                    for note in list(root.iter(w("footnote"))):
                        if note.get(w("type"), "normal") == "normal":
                            root.remove(note)
                    ids = [int(n.get(w("id"), "0")) for n in root.iter(w("footnote"))]
                    self._next_id = max([0, *ids]) + 1
                    return part
        element = parse_xml(_FOOTNOTES_XML)
        package = self._document_part.package
        part = XmlPart(PackURI("/word/footnotes.xml"), CT.WML_FOOTNOTES, element, package)
        self._document_part.relate_to(part, RT.FOOTNOTES)
        return part

    @property
    def written(self) -> bool:
        """Whether the document has a footnotes part (one was added or inherited in use)."""
        return self._part is not None

    def add(self) -> tuple[int, Element]:
        """A new, empty ``w:footnote``; returns ``(id, element)``."""
        root = self.part.element
        fid = self._next_id
        self._next_id += 1
        note = sub(root, "footnote", {"id": str(fid)})
        return fid, note


def add_footnote_reference(parent: Element, fid: int, style: str) -> Element:
    """Append the superscript reference run of footnote ``fid`` in the body."""
    run = etree.SubElement(parent, w("r"))
    run_props(run, RunProps(style=style, superscript=True))
    sub(run, "footnoteReference", {"id": str(fid)})
    return run


def insert_footnote_mark(p: Element, style: str) -> None:
    """Start paragraph ``p`` with the footnote's own number mark (``w:footnoteRef``) and a space."""
    holder = etree.Element(w("p"))
    run = etree.SubElement(holder, w("r"))
    run_props(run, RunProps(style=style, superscript=True))
    sub(run, "footnoteRef")
    add_run(holder, " ")
    position = 1 if len(p) and p[0].tag == w("pPr") else 0
    for offset, child in enumerate(list(holder)):
        p.insert(position + offset, child)
