"""Error types of the renderers. Messages say what was wrong, where, and what is accepted."""

from __future__ import annotations


class RenderError(Exception):
    """Base class of every error raised by :mod:`renderers`."""


class InputError(RenderError):
    """The content, its format or an option is not acceptable."""


class UnsupportedNodeError(RenderError):
    """A writer met a document node it does not handle (a bug, never silent)."""


class OutputPathError(RenderError):
    """An output name or path is refused (absolute, ``..``, NUL, reserved characters)."""


class ResourceError(RenderError):
    """A resource (image, stylesheet, font) was refused by the sandbox or is malformed."""


class LimitError(RenderError):
    """The input exceeds a configured limit (size, depth, citations, pages)."""


class StrictError(RenderError):
    """``strict=True`` and the input had unknown sids or invalid tokens."""


class OverwriteError(OutputPathError):
    """An output would replace a file the render reads (its input or its sources pool)."""
