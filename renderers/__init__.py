"""citerender's readers, document model and writers.

The public API (``write_pdf`` … ``render``) is imported lazily, so ``import renderers`` stays
cheap: writers and their libraries load only when a format is rendered.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from renderers.errors import (
    InputError,
    LimitError,
    OptionError,
    OutputPathError,
    OverwriteError,
    RenderError,
    ResourceError,
    StrictError,
    UnsupportedNodeError,
)

if TYPE_CHECKING:
    from renderers.api import (
        RenderResult,
        render,
        write_docx,
        write_html,
        write_markdown,
        write_pdf,
        write_png,
        write_pptx,
    )
    from renderers.options import FORMATS, Limits, RenderOptions

_LAZY: dict[str, str] = {
    "RenderResult": "renderers.api",
    "render": "renderers.api",
    "write_docx": "renderers.api",
    "write_html": "renderers.api",
    "write_markdown": "renderers.api",
    "write_pdf": "renderers.api",
    "write_png": "renderers.api",
    "write_pptx": "renderers.api",
    "FORMATS": "renderers.options",
    "Limits": "renderers.options",
    "RenderOptions": "renderers.options",
}

__all__ = [
    "FORMATS",
    "InputError",
    "LimitError",
    "Limits",
    "OptionError",
    "OutputPathError",
    "OverwriteError",
    "RenderError",
    "RenderOptions",
    "RenderResult",
    "ResourceError",
    "StrictError",
    "UnsupportedNodeError",
    "render",
    "write_docx",
    "write_html",
    "write_markdown",
    "write_pdf",
    "write_png",
    "write_pptx",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'renderers' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
