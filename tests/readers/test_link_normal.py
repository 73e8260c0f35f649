"""Link destinations are normalized as markdown-it does, in time linear in their length."""

from __future__ import annotations

import random

import pytest
from markdown_it.common.normalize_url import normalizeLink

from renderers.document import Image, iter_inlines
from renderers.readers.link_normal import CHUNK, PLAIN_TAIL, normalize_link
from renderers.readers.markdown import read_markdown

HEADS = ["https://example.com/", "HTTP://Exämple.com/a b/", "data:image/png;base64,", "//host/",
         "mailto:a@b", "", "relative/path%2"]
ODD = "é漢😀 \\\"<>[]{}|^`#?"
PLAIN = "abcXYZ019-._~!$&'()*+,;=:@/%2F%zz"


@pytest.mark.parametrize("seed", range(40))
def test_the_same_destination_as_markdown_it(seed: int) -> None:
    rng = random.Random(seed)
    length = rng.choice([10, CHUNK - 30, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK + 7, 3 * CHUNK])
    head = rng.choice(HEADS) + "".join(rng.choice(ODD + PLAIN) for _ in range(40))
    tail = "".join(rng.choice(PLAIN) for _ in range(length))
    url = head + tail
    assert PLAIN_TAIL.fullmatch(tail)
    assert normalize_link(url) == normalizeLink(url)
    assert normalize_link(f"  {url} \n") == normalizeLink(f"  {url} \n")


def test_a_long_odd_destination_is_fully_percent_encoded() -> None:
    url = "https://example.com/" + "é \\<" * 3 * CHUNK
    normal = normalize_link(url)
    assert normal.startswith("https://example.com/%C3%A9%20")
    assert all(ch.isascii() and ch not in ' <\\"' for ch in normal)


def test_a_two_megabyte_data_image_is_read_whole() -> None:
    uri = "data:image/png;base64," + "iVBORw0KGgo" * 200_000
    document = read_markdown(f"![a][r] ![b][r]\n\n[r]: {uri}\n")
    images = [n for n in iter_inlines(document.blocks) if isinstance(n, Image)]
    assert [image.src for image in images] == [uri, uri]
