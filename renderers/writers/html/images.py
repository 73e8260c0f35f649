"""Images of the HTML report, each embedded once however often it is shown (issue 13, item 3).

An ``<img>`` cannot point at bytes written elsewhere in the page, so an image shown 200 times as
200 ``data:`` URIs made a 1.4 MB picture a 288 MB file. The first image the report writes loads
every image of the document once (by reference) and counts them by content:

- an image shown once keeps the plain ``<img src="data:…">`` it always had;
- in the **standalone** report, an image shown more than once is one SVG ``<image>`` in a hidden
  ``<svg>`` (:meth:`EmbeddedImages.definitions`), and every use is an inline ``<svg role="img">``
  whose ``<use>`` draws it: browsers resolve ``<use>`` across the whole page;
- in the report written for **print**, WeasyPrint resolves ``<use>`` only inside one ``<svg>``,
  so every use is ``<img src="citerender-image:N">``, a URL the PDF writer's fetcher serves from
  :attr:`EmbeddedImages.resources` (WeasyPrint loads a URL once per render).

Either way the image's bytes count once against ``limits.max_image_bytes``.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from markupsafe import Markup, escape

from renderers.document import Block, Image, iter_inlines
from renderers.labels import Labels
from renderers.options import RenderOptions
from renderers.sandbox import LoadedImage, load_image
from renderers.text import HeadingIds, text_direction
from renderers.writers.common import ImageBytes, image_fallback

#: Which report the images are written into: a page for browsers, or HTML for WeasyPrint.
ImageTarget = Literal["standalone", "print"]

#: The scheme of the print report's shared images; only the writer's own table answers it.
PRINT_SCHEME = "citerender-image"

#: The look of a shared image's ``<svg>``: the report's rule for ``img``.
SHARED_IMAGE_CSS = "svg.img { max-width: 100%; height: auto; }\n"


def image_fallback_markup(image: Image, words: Labels) -> Markup:
    """What an image that is not loaded (remote, refused, broken) shows instead; in words
    that read right to left ("[صورة: …]"), in that direction wherever it stands."""
    text = image_fallback(image, words)
    attr = ' dir="rtl"' if text_direction(text) == "rtl" else ""
    return Markup(f'<span class="img-alt"{attr}>{escape(text)}</span>')


@dataclass(frozen=True)
class SharedImage:
    """An image shown more than once: its bytes, its number (1, 2 … in order of first use) and
    the id of its one definition in the standalone page."""

    loaded: LoadedImage
    number: int
    ident: str

    @property
    def print_url(self) -> str:
        return f"{PRINT_SCHEME}:{self.number}"


class EmbeddedImages:
    """The images one report writes: each loaded once, each shown image's markup, and what the
    page needs besides (definitions, CSS, the print fetcher's table)."""

    def __init__(
        self, blocks: tuple[Block, ...], options: RenderOptions, target: ImageTarget,
        ids: HeadingIds,
        words: Labels,
    ) -> None:
        self.blocks = blocks
        self.options = options
        self.words = words  # the fallback text's (renderers.labels)
        self.target = target
        self.ids = ids  # a shared image's definition takes an id no heading may take
        self.image_bytes = ImageBytes(options.limits.max_image_bytes)
        self._loaded: dict[str, _Embedded | None] = {}  # reference → image
        self._by_content: dict[bytes, LoadedImage] = {}  # digest → the one copy kept
        self._shared: dict[bytes, SharedImage] = {}  # digest → its definition
        self._counted = False

    def markup(self, image: Image) -> Markup:
        """``image`` as the report shows it (its fallback text when it is not loaded)."""
        embedded = self._load(image.src)
        if embedded is None:
            return image_fallback_markup(image, self.words)
        loaded = embedded.loaded
        shared = self._shared.get(embedded.digest)
        if shared is None:
            return img_markup(image, loaded.data_uri(), loaded)
        if self.target == "print":
            return img_markup(image, shared.print_url, loaded)
        return use_markup(image, shared)

    def definitions(self) -> Markup:
        """The hidden ``<svg>`` defining each shared image once (standalone only; else empty)."""
        if self.target != "standalone" or not self._shared:
            return Markup("")
        images = "".join(
            f'<image id="{shared.ident}" href="{shared.loaded.data_uri()}" '
            f'width="{shared.loaded.width}" height="{shared.loaded.height}"/>'
            for shared in self._shared.values()
        )
        return Markup(
            '<svg class="img-defs" width="0" height="0" style="position:absolute" '
            f'aria-hidden="true" focusable="false"><defs>{images}</defs></svg>'
        )

    def css(self) -> str:
        """The rules the shared images' ``<svg>`` need (none when no image is shared)."""
        return SHARED_IMAGE_CSS if self.target == "standalone" and self._shared else ""

    @property
    def resources(self) -> Mapping[str, LoadedImage]:
        """``citerender-image:N`` → the image, for the PDF writer's fetcher (print only)."""
        if self.target != "print":
            return {}
        return {shared.print_url: shared.loaded for shared in self._shared.values()}

    def _load(self, src: str) -> _Embedded | None:
        if not self._counted:
            self._counted = True
            self._count_uses()
        return self._embedded(src)

    def _count_uses(self) -> None:
        """Load every image of the document once and share those shown more than once."""
        uses: Counter[bytes] = Counter()
        for node in iter_inlines(self.blocks):
            if isinstance(node, Image) and (embedded := self._embedded(node.src)) is not None:
                uses[embedded.digest] += 1
        for digest, loaded in self._by_content.items():  # in order of first use
            if uses[digest] > 1:
                number = len(self._shared) + 1
                ident = self.ids.assign(f"image-{number}")
                self._shared[digest] = SharedImage(loaded, number, ident)

    def _embedded(self, src: str) -> _Embedded | None:
        """The image at ``src``, loaded on first request: its bytes counted (once per content)
        against the limit, and one copy kept of bytes that several references name."""
        reference = src.strip()
        if reference in self._loaded:
            return self._loaded[reference]
        loaded = load_image(reference, self.options)
        embedded = None
        if loaded is not None:
            digest = hashlib.sha256(loaded.data).digest()
            self.image_bytes.add(len(loaded.data), key=digest)
            embedded = _Embedded(self._by_content.setdefault(digest, loaded), digest)
        self._loaded[reference] = embedded
        return embedded


@dataclass(frozen=True)
class _Embedded:
    """A loaded image and its content key (the same bytes under two references are one)."""

    loaded: LoadedImage
    digest: bytes


def img_markup(image: Image, src: str, loaded: LoadedImage) -> Markup:
    """``<img>`` of ``image`` at ``src``, at its pixel size."""
    title_attr = f' title="{escape(image.title)}"' if image.title else ""
    return Markup(
        f'<img src="{escape(src)}" alt="{escape(image.alt)}"{title_attr} '
        f'width="{loaded.width}" height="{loaded.height}">'
    )


def use_markup(image: Image, shared: SharedImage) -> Markup:
    """An inline ``<svg>`` drawing the shared image: named by its alt text (hidden from
    assistive technology when the alt text is empty, as ``alt=""`` is), the title as tooltip."""
    width, height = shared.loaded.width, shared.loaded.height
    role = f'role="img" aria-label="{escape(image.alt)}"' if image.alt else 'aria-hidden="true"'
    title = f"<title>{escape(image.title)}</title>" if image.title else ""
    return Markup(
        f'<svg class="img" {role} viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}">{title}<use href="#{shared.ident}"/></svg>'
    )
