"""Every CommonMark 0.31.2 example reads without error and loses none of its visible text."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from renderers.document import Document
from renderers.readers.markdown import read_markdown
from renderers.text import document_text

SPEC = Path(__file__).resolve().parents[1] / "data" / "commonmark" / "commonmark-spec.json"
EXAMPLES: list[dict[str, Any]] = json.loads(SPEC.read_text(encoding="utf-8"))
_TAG = re.compile(r"<[^>]*>")
_SPACE = re.compile(r"\s+")


def squeeze(text: str) -> str:
    """``text`` without tags and without any white space (so layout cannot matter)."""
    return _SPACE.sub("", _TAG.sub("", text))


#: Elements whose text is never shown: a browser runs scripts and applies styles; a textarea
#: (a form control) is dropped with its text by the sanitizer, in HTML input and in markdown's
#: HTML blocks alike.
_UNSHOWN = frozenset({"script", "style", "textarea"})


class _Visible(HTMLParser):
    """The text a browser shows: data only (a tag's attributes, comments and CDATA are not,
    nor what :data:`_UNSHOWN` elements hold)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._unshown = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._unshown += tag in _UNSHOWN

    def handle_endtag(self, tag: str) -> None:
        self._unshown -= tag in _UNSHOWN and self._unshown > 0

    def handle_data(self, data: str) -> None:
        if not self._unshown:
            self.parts.append(data)


def visible(markup: str) -> str:
    """The visible text of rendered HTML: tags removed, entities decoded."""
    return squeeze(html.unescape(_TAG.sub("", markup)))


def browser_visible(markup: str) -> str:
    """What a browser shows of rendered HTML (parsed: a tag whose attribute holds ``<em>``, or
    CDATA, shows nothing), white space removed."""
    parser = _Visible()
    parser.feed(markup)
    parser.close()
    return _SPACE.sub("", "".join(parser.parts))


def test_spec_file_is_complete() -> None:
    assert len(EXAMPLES) == 652
    assert {e["example"] for e in EXAMPLES} == set(range(1, 653))


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: f"ex{e['example']}")
def test_example_keeps_its_visible_text(example: dict[str, Any]) -> None:
    document = read_markdown(example["markdown"])
    assert isinstance(document, Document)
    expected = (visible(example["html"]), browser_visible(example["html"]))
    text = document_text(document)
    # HTML blocks are read as HTML (entities decoded, tags gone): the model holds plain text
    candidates = (squeeze(text),)
    assert any(e in actual for e in expected for actual in candidates), (
        example["markdown"], candidates
    )


def test_the_check_notices_lost_text() -> None:
    document = read_markdown("alpha\n\nbeta\n")
    truncated = Document(document.blocks[:1])
    assert visible("<p>alpha</p>\n<p>beta</p>\n") not in squeeze(document_text(truncated))
