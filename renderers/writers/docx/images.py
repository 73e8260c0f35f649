"""Pictures in a Word document: the bytes Word can embed and the ``wp:inline`` that shows them."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

from docx.image.exceptions import UnrecognizedImageError
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.oxml.shape import CT_Inline
from docx.shared import Emu

from renderers.document import Image
from renderers.writers.docx.oxml import Element

if TYPE_CHECKING:
    from renderers.sandbox import LoadedImage

EMU_PER_PX = 9525  # at 96 dpi
_DOCX_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/bmp", "image/tiff"})


def embeddable(loaded: LoadedImage) -> bytes | None:
    """Image bytes Word can embed: PNG/JPEG/GIF/BMP/TIFF as they are, others re-encoded as PNG."""
    if loaded.mime in _DOCX_IMAGE_TYPES:
        return loaded.data
    from PIL import Image as PILImage

    try:
        with PILImage.open(io.BytesIO(loaded.data)) as picture:
            out = io.BytesIO()
            picture.save(out, format="PNG")
    except (OSError, ValueError):
        return None
    return out.getvalue()


class Pictures:
    """Adds image parts to a document and builds their inline drawings (unique shape ids)."""

    def __init__(self, document_part: Any) -> None:
        self._part = document_part
        self._shape_id = 0

    def inline(self, loaded: LoadedImage, image: Image, max_width: int) -> Element | None:
        """The ``wp:inline`` of ``loaded`` at its pixel size (96 dpi), scaled down to
        ``max_width`` EMU; None when Word could not show it."""
        data = embeddable(loaded)
        if data is None:
            return None
        try:
            image_part = self._part.package.get_or_add_image_part(io.BytesIO(data))
        except UnrecognizedImageError:
            return None
        rid = self._part.relate_to(image_part, RT.IMAGE)
        cx = loaded.width * EMU_PER_PX
        cy = loaded.height * EMU_PER_PX
        if cx > max_width:
            cx, cy = max_width, int(cy * max_width / cx)
        self._shape_id += 1
        name = image_part.filename
        inline = CT_Inline.new_pic_inline(self._shape_id, rid, name, Emu(cx), Emu(cy))
        doc_pr = inline.docPr
        doc_pr.set("descr", image.alt or image.title)
        if image.title:
            doc_pr.set("title", image.title)
        return inline
