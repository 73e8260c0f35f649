"""Safe output names and atomic writes: nothing lands outside the output directory, and a crash
never leaves a half-written file under its final name."""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from citations.atomic import write_atomic as write_atomic  # re-exported: the artifact writer
from renderers.errors import OutputPathError

#: Characters refused in any output name component (reserved on Windows, or path separators).
RESERVED_CHARACTERS = '<>:"|?*\\'
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
#: Unicode categories refused in names: controls (C0 and C1), format characters (bidi
#: overrides such as U+202E that make ``gpj.exe`` read as ``exe.jpg``, zero-width joiners),
#: lone surrogates, and the line and paragraph separators U+2028/U+2029.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
#: Device names Windows reserves in every directory; it reads the superscript digits ¹ ² ³
#: as 1 2 3 in ``COM¹`` and ``LPT²``.
_SURROGATE = re.compile("[\ud800-\udfff]")  # a lone surrogate, or a non-UTF-8 file name
_WINDOWS_RESERVED = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
    | {f"{port}{digit}" for port in ("COM", "LPT") for digit in "123456789¹²³"}
)
#: Names of the provenance files an artifact must never replace.
_PROVENANCE_NAMES = ("sources_used.json",)
MAX_COMPONENT_LENGTH = 255


def validate_name(name: str) -> str:
    """Check an output name (``report.pdf`` or ``reports/q1.pdf``) and return it in posix form.

    Refused, with :class:`OutputPathError` naming the problem: empty names, absolute paths, ``..``
    or ``.`` components, NUL and other control characters, the reserved characters
    ``< > : " | ? * \\``, Windows device names (``CON``, ``nul.txt`` …) and components ending in a
    dot or a space.
    """
    if not isinstance(name, str):
        raise OutputPathError(f"output name {name!r}: expected a string such as 'report.pdf'")
    if not name or not name.strip():
        raise OutputPathError("output name is empty: give a file name such as 'report.pdf'")
    if _SURROGATE.search(name):
        raise OutputPathError(
            f"output name {name!a}: not valid UTF-8 (a lone surrogate or a file name in "
            "another encoding); give a UTF-8 name"
        )
    if _CONTROL.search(name):
        raise OutputPathError(f"output name {name!r}: NUL and control characters are not allowed")
    odd = next((c for c in name if unicodedata.category(c) in _REFUSED_CATEGORIES), None)
    if odd is not None:
        raise OutputPathError(
            f"output name {name!r}: character U+{ord(odd):04X} "
            f"({unicodedata.name(odd, 'unnamed')}) is not allowed; accepted: printable "
            "characters without controls, bidi overrides or line separators"
        )
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        raise OutputPathError(
            f"output name {name!r}: absolute paths are refused; give a name relative to the "
            "output directory"
        )
    bad = sorted({c for c in name if c in RESERVED_CHARACTERS})
    if bad:
        listed = " ".join(bad)
        raise OutputPathError(
            f"output name {name!r}: reserved characters {listed} are not allowed "
            f"(refused: {' '.join(RESERVED_CHARACTERS)})"
        )
    parts = name.split("/")
    for part in parts:
        _check_component(name, part)
    return str(PurePosixPath(*parts))


def _check_component(name: str, part: str) -> None:
    if part in ("", "."):
        raise OutputPathError(f"output name {name!r}: empty or '.' path components are refused")
    if part == "..":
        raise OutputPathError(
            f"output name {name!r}: '..' is refused; outputs stay inside the output directory"
        )
    if part.endswith((".", " ")):
        raise OutputPathError(
            f"output name {name!r}: a name may not end with a dot or a space ({part!r})"
        )
    if part.split(".", 1)[0].upper().rstrip() in _WINDOWS_RESERVED:
        raise OutputPathError(
            f"output name {name!r}: {part!r} is a reserved device name on Windows"
        )
    if part.lower().startswith(_PROVENANCE_NAMES):
        raise OutputPathError(
            f"output name {name!r}: {part!r} starts as the provenance file's name does "
            f"({_PROVENANCE_NAMES[0]!r}: its own, its lock's and its copies'); choose another"
        )
    if len(part.encode("utf-8")) > MAX_COMPONENT_LENGTH:
        raise OutputPathError(
            f"output name {name!r}: a path component is longer than {MAX_COMPONENT_LENGTH} bytes"
        )


def output_path(out_dir: str | os.PathLike[str], name: str) -> Path:
    """The absolute path of ``name`` inside ``out_dir``, after :func:`validate_name`.

    The directories are resolved (symbolic links followed) and must stay inside the resolved
    output directory; otherwise :class:`OutputPathError` is raised. The last component is never
    followed: a link planted at the artifact's name is replaced by the artifact (an atomic
    rename replaces the link itself), so it cannot steer the write anywhere else.
    """
    clean = validate_name(name)
    root = Path(out_dir).resolve()
    relative = PurePosixPath(clean)
    parent = (root / relative.parent).resolve()
    if not parent.is_relative_to(root):
        raise OutputPathError(
            f"output name {name!r} resolves outside the output directory {str(root)!r}"
        )
    return parent / relative.name


def relative_name(out_dir: str | os.PathLike[str], path: str | os.PathLike[str]) -> str:
    """``path`` relative to ``out_dir`` in posix form (the ``filename`` key of records)."""
    root = Path(out_dir).resolve()
    given = Path(path)
    target = given.parent.resolve() / given.name  # the artifact's own name, never a link's target
    try:
        return target.relative_to(root).as_posix()
    except ValueError as exc:
        raise OutputPathError(
            f"{str(target)!r} is not inside the output directory {str(root)!r}"
        ) from exc


def write_files(paths: Sequence[Path], blobs: Sequence[bytes]) -> None:
    """Write each of ``blobs`` to its path atomically: an artifact's files, under the store's
    lock with their records (:meth:`citations.store.SourcesUsedStore.record_many`), by a
    render and by a broker batch fetching a job's files alike."""
    for path, data in zip(paths, blobs, strict=True):
        try:
            write_atomic(path, data)
        except OSError as exc:
            raise OutputPathError(
                f"{path.parent}: cannot write {path.name} ({exc.strerror or exc}); "
                "accepted: a writable output directory"
            ) from exc
