"""A DOCX link inside the document reaches its bookmark wherever the link stands: in the front
matter abstract, a body paragraph, a table cell or an author note, and whichever part holds the
place it names (a citation of the abstract, one of the body). Read from the package's XML,
and from the file LibreOffice makes of it."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Literal

import pytest
from lxml import etree

from tests.helpers import convert_all_with_libreoffice
from tests.support.render import render_markdown
from tests.writers.test_docx import W, part, text

ROWS = [{"sid": sid, "title": f"Source {sid}", "url": f"https://s{sid}.org"} for sid in (1, 2, 3)]

#: Citations in reading order: cite-1 and cite-2 (sid 1, again) in the abstract, cite-3 to
#: cite-5 (sid 2 again last) in the body. cite-2 and cite-5 are no source's first citation, so
#: no Sources entry links back to them: only the links below ask for their bookmarks.
LINKED = """---
title: Links
abstract: |
  Sum [[S:1]] and again [[S:1]]; see [the body's](#cite-5), [entry two](#src-2)
  and [the notes](#notes).
---

# Body

Text [[S:2]] and [[S:3]] and [[S:2]], after [the abstract's](#cite-2).

| where | what |
|---|---|
| [cell link](#cite-2) | x |

A note[^n].

[^n]: It points at [the abstract's too](#cite-2).
"""

#: Each link's text and the place it names, as the HTML writer's ids say it.
LINKS = {
    "the body's": "cite-5", "entry two": "src-2", "the notes": "notes",
    "the abstract's": "cite-2", "cell link": "cite-2", "the abstract's too": "cite-2",
}

Citations = Literal["sources", "footnotes"]


def _docx(citations: Citations) -> bytes:
    return render_markdown("docx", LINKED, ROWS, docx_citations=citations)


def _bookmarked(body: etree._Element) -> dict[str, str]:
    """Each bookmark's name → the text of the paragraph that holds it."""
    found = {}
    for paragraph in body.iter(f"{W}p"):
        for mark in paragraph.iter(f"{W}bookmarkStart"):
            found[mark.get(f"{W}name", "")] = text(paragraph)
    return found


@pytest.mark.parametrize("citations", ["sources", "footnotes"])
def test_every_in_document_link_reaches_a_bookmark(citations: Citations) -> None:
    body = part(_docx(citations))
    marks = _bookmarked(body)
    anchors = {text(link): link.get(f"{W}anchor", "") for link in body.iter(f"{W}hyperlink")}
    for shown in LINKS:
        assert anchors.get(shown), f"{shown!r} is no link"
        assert anchors[shown] in marks, f"{shown!r} leads to {anchors[shown]!r}, no bookmark"
    # the citations themselves hold the bookmarks: the abstract's second, the body's last
    assert marks[anchors["the abstract's"]].startswith("Sum ")
    assert marks[anchors["the body's"]].startswith("Text ")
    assert marks[anchors["the notes"]] == "Notes"
    if citations == "sources":  # the Sources entry of sid 2
        assert marks[anchors["entry two"]].startswith("2.Source 2")
    else:  # no Sources list: sid 2 is shown in the footnote of its first citation
        assert anchors["entry two"] == "cite_3" and marks["cite_3"].startswith("Text ")
    every = [link.get(f"{W}anchor") for link in body.iter(f"{W}hyperlink")]
    assert all(anchor in marks for anchor in every if anchor)


@pytest.mark.libreoffice
def test_libreoffice_reads_each_link_to_a_bookmark_it_holds(tmp_path: Path) -> None:
    paths = []
    for citations in ("sources", "footnotes"):
        paths.append(tmp_path / f"links-{citations}.docx")
        paths[-1].write_bytes(_docx(citations))  # type: ignore[arg-type]
    for odt in convert_all_with_libreoffice(paths, tmp_path, "odt"):
        with zipfile.ZipFile(odt) as package:
            content = etree.fromstring(package.read("content.xml"))
        ns = {"text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
              "xlink": "http://www.w3.org/1999/xlink"}
        marks = set(content.xpath("//text:bookmark-start/@text:name | //text:bookmark/@text:name",
                                  namespaces=ns))
        links = {"".join(a.itertext()): a.get(f"{{{ns['xlink']}}}href", "")
                 for a in content.xpath("//text:a", namespaces=ns)}
        for shown in LINKS:
            href = links.get(shown, "")
            assert href.startswith("#") and href[1:] in marks, (odt.name, shown, href)


class _CountingSet(set[str]):
    """A set that counts the membership tests made of it."""

    tests = 0

    def __contains__(self, item: object) -> bool:
        type(self).tests += 1
        return super().__contains__(item)


def test_bookmark_names_of_one_base_are_found_without_searching_again() -> None:
    """Ids with no letter Word allows (Arabic headings' ids) all become ``bm``: each name was
    searched for from ``bm_2`` on, 4,000 headings' bookmarks took 3.3 s. The names are the
    same, one test each (a name taken meanwhile is passed over)."""
    from renderers.writers.docx.links import Bookmarks

    bookmarks = Bookmarks()
    bookmarks._names = _CountingSet()
    assert bookmarks.name_for("bm_3") == "bm_3"
    names = [bookmarks.name_for(ident) for ident in ["نص", "عربي", "!", "كلمة", "مقالة"] * 400]
    assert names[:4] == ["bm", "bm_2", "bm_4", "bm_5"]
    assert len(set(names)) == len(names) and all(len(name) <= 40 for name in names)
    assert _CountingSet.tests <= 2 * len(names) + 2


def test_bookmarks_differ_by_more_than_case() -> None:
    """Word matches a bookmark name ignoring case: the ids ``Intro`` and ``intro`` were the
    bookmarks ``Intro`` and ``intro``, one bookmark to Word, so a link to either could land on
    the first. Each heading's link reaches its own bookmark."""
    root = part(render_markdown("docx", "# T\n\n## A {#Intro}\n\n## B {#intro}\n\n"
                                "[a](#Intro) [b](#intro)\n", []))
    starts = list(root.iter(f"{W}bookmarkStart"))
    names = [start.get(f"{W}name") for start in starts]
    assert len({name.lower() for name in names}) == len(names), names
    marked = {start.get(f"{W}name"): text(start.getparent()) for start in starts}
    links = {text(link): link.get(f"{W}anchor") for link in root.iter(f"{W}hyperlink")}
    assert marked[links["a"]] == "A" and marked[links["b"]] == "B"
