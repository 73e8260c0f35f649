"""How the ``citerender`` command reports a failure: one line, an exit code, never a traceback.

Typed errors (:class:`citations.errors.CodedError`) choose the exit code by their ``code``
(``strict_failed`` → 1, everything else → 2) and the thing to name by their ``field``. Errors
without a code come from the libraries underneath while a named file was read (a pool nested
100,000 deep, a 5,000-digit number, bytes that are not UTF-8): they are that file's problem.
Anything else is a bug, still reported in one line (set ``CITERENDER_DEBUG=1`` for the
traceback).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import typer

from citations.errors import CodedError, ErrorCode

EXIT_OK, EXIT_PROBLEMS, EXIT_BAD_INPUT = 0, 1, 2
#: Exceptions that mean "this input cannot be read", whichever library raised them (and
#: ``yaml.YAMLError`` once a YAML pool has loaded yaml, see :func:`is_input_error`).
INPUT_ERRORS: tuple[type[BaseException], ...] = (
    CodedError,
    OSError,
    ValueError,  # bad JSON, bad UTF-8, a number too long to convert
    RecursionError,
    MemoryError,
)


class BadInput(Exception):
    """A user error already phrased for one line of output."""

    def __init__(self, where: str, message: str, code: int = EXIT_BAD_INPUT) -> None:
        super().__init__(message)
        self.where = where
        self.message = message
        self.code = code


#: A lone surrogate: a string holding one cannot be written as UTF-8.
_SURROGATE = re.compile("[\ud800-\udfff]")


def shown(text: str) -> str:
    """``text`` printable on any stream: undecodable file-name bytes become U+FFFD, and so does
    any other lone surrogate (a JSON key written ``"\\ud800"``), which no stream can encode."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)


def one_line(where: str, message: str) -> str:
    """``citerender: error: FILE: problem`` on a single line; a message that already starts
    with the file's name (``FILE: …``, ``FILE is not valid JSON …``) is not prefixed twice."""
    text = " ".join(shown(str(message)).split()) or "failed"
    where = printable_name(shown(where))
    if where and not text.startswith((f"{where}:", f"{where} ")):
        text = f"{where}: {text}"
    return f"citerender: error: {text}"


def printable_name(name: str) -> str:
    """``name`` with each unprintable character (a line break in a file name) escaped as
    Python writes it, so the name stays on its line and can still be told apart."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in name)


def is_input_error(exc: BaseException) -> bool:
    """Whether ``exc`` says an input is unreadable (yaml is imported only for YAML pools)."""
    if isinstance(exc, INPUT_ERRORS):
        return True
    yaml = sys.modules.get("yaml")
    return yaml is not None and isinstance(exc, yaml.YAMLError)


def describe(exc: BaseException) -> str:
    """A readable one-line description of ``exc``."""
    if isinstance(exc, CodedError):
        return str(exc) or type(exc).__name__
    if isinstance(exc, UnicodeDecodeError):
        return f"not valid UTF-8 (byte {exc.start}); save the file as UTF-8"
    if isinstance(exc, RecursionError):
        return "nested too deeply to read"
    if isinstance(exc, MemoryError):
        return "too large to read in the memory available"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    if is_input_error(exc):
        return str(exc) or type(exc).__name__
    return f"internal error ({type(exc).__name__}: {exc}); please report it"


def exit_code_for(exc: BaseException) -> int:
    """1 for a strict failure; 2 for every other error (bad input, and bugs)."""
    if isinstance(exc, CodedError) and exc.code is ErrorCode.STRICT_FAILED:
        return EXIT_PROBLEMS
    return EXIT_BAD_INPUT


def reraise_when_debugging(exc: BaseException) -> None:
    """Re-raise a bug (not an input error) when ``CITERENDER_DEBUG`` is set."""
    if os.environ.get("CITERENDER_DEBUG") and not is_input_error(exc):
        raise exc


@contextmanager
def reading(where: str) -> Iterator[None]:
    """Any error raised inside the block is ``where``'s problem: :class:`BadInput` about it
    (an empty file name given on the command line is named as ``''``)."""
    try:
        yield
    except (BadInput, typer.Exit):
        raise
    except Exception as exc:
        reraise_when_debugging(exc)
        raise BadInput(where or "''", describe(exc), exit_code_for(exc)) from exc


def fail(where: str, message: str, code: int = EXIT_BAD_INPUT) -> typer.Exit:
    """Print the one-line error and return the :class:`typer.Exit` to raise."""
    print(one_line(where, message), file=sys.stderr)
    return typer.Exit(code)
