"""No link in a PDF points anywhere but http, https, mailto or a place inside the document."""

from __future__ import annotations

from pathlib import Path

import pytest
from pypdf import PdfReader

from renderers import write_pdf

INPUTS = {
    "markdown": "[go](#) and [there](#missing) and [ok](https://example.org) and [sec](#part)\n\n"
                "# Part {#part}\n\nText.\n",
    "html": '<p><a href="#">go</a> <a href="#missing">there</a> <a href="">empty</a> '
            '<a href="https://example.org">ok</a></p>',
}


def _uris(path: Path) -> list[str]:
    uris: list[str] = []
    for page in PdfReader(str(path)).pages:
        for annot in page.get("/Annots") or []:
            action = annot.get_object().get("/A")
            if action is not None and action.get("/URI") is not None:
                uris.append(str(action["/URI"]))
    return uris


@pytest.mark.parametrize("kind", sorted(INPUTS))
def test_bare_and_dangling_fragments_never_become_file_links(tmp_path: Path, kind: str) -> None:
    result = write_pdf(INPUTS[kind], tmp_path / "out.pdf", content_format=kind)
    uris = _uris(result.path)
    assert uris, "the https link must survive"
    assert all(u.startswith(("https://", "http://", "mailto:")) for u in uris), uris
    assert str(tmp_path) not in result.path.read_bytes().decode("latin-1")
