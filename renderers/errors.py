"""Error types of the renderers. Messages say what was wrong, where, and what is accepted.

Like :mod:`citations.errors`, every error carries ``code`` (an :class:`ErrorCode`) and
``field`` (the input field at fault); surfaces map those, never the message::

    RenderError                      internal_error   (a bug unless a subclass says otherwise)
    ├── InputError                   invalid_input    content
    │   └── OptionError              invalid_argument the option named by ``field``
    ├── UnsupportedNodeError         internal_error
    ├── OutputPathError              invalid_path     path
    ├── ResourceError                resource_refused content
    ├── LimitError                   limit_exceeded   content (or sources_pool …)
    └── StrictError                  strict_failed    content
"""

from __future__ import annotations

from citations.errors import CodedError, ErrorCode

__all__ = [
    "ErrorCode",
    "InputError",
    "LimitError",
    "OptionError",
    "OutputPathError",
    "RenderError",
    "ResourceError",
    "StrictError",
    "UnsupportedNodeError",
    "short_repr",
]


def short_repr(value: object, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters, for messages that quote hostile input."""
    try:
        text = repr(value)
    except Exception:  # a 5,000-digit integer, a failing __repr__
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


class RenderError(CodedError):
    """Base class of every error raised by :mod:`renderers`."""

    default_code = ErrorCode.INTERNAL
    default_field = ""


class InputError(RenderError):
    """The content, its format or an option is not acceptable."""

    default_code = ErrorCode.INVALID_INPUT
    default_field = "content"


class OptionError(InputError):
    """An option or argument value is not accepted; ``field`` names the option."""

    default_code = ErrorCode.INVALID_ARGUMENT

    def __init__(self, message: str, *, field: str, code: ErrorCode | None = None) -> None:
        super().__init__(message, field=field, code=code)


class UnsupportedNodeError(RenderError):
    """A writer met a document node it does not handle (a bug, never silent)."""


class OutputPathError(RenderError):
    """An output name or path is refused (absolute, ``..``, NUL, reserved characters)."""

    default_code = ErrorCode.INVALID_PATH
    default_field = "path"


class ResourceError(RenderError):
    """A resource (image, stylesheet, font) was refused by the sandbox or is malformed."""

    default_code = ErrorCode.RESOURCE_REFUSED
    default_field = "content"


class LimitError(RenderError):
    """The input exceeds a configured limit (size, depth, citations, pages)."""

    default_code = ErrorCode.LIMIT_EXCEEDED
    default_field = "content"


class StrictError(RenderError):
    """``strict=True`` and the input had unknown sids or invalid tokens."""

    default_code = ErrorCode.STRICT_FAILED
    default_field = "content"


class OverwriteError(OutputPathError):
    """An output would replace a file the render reads (its input or its sources pool)."""
