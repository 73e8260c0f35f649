"""nh3's cleaning moved to a child process when it may run long, so ``max_seconds`` can stop it.

Why: nh3 0.3.8 (html5ever's serializer inside it) writes each ``&`` and each character
U+0080–U+00BF (whose UTF-8 starts with byte 0xC2: no-break space, ©, «, °, ·) of a text node or
attribute value in time proportional to the rest of that node. Measured here: one paragraph of
200,000 no-break spaces took 0.59 s, 1 MB of C code with ``&&`` in one ``<pre>`` 3.2 s, and the
20 MiB ``limits.max_content_bytes`` allows would take about 25 minutes. That is one call into
native code, which the deadline's interrupt (:mod:`renderers.deadline`) cannot reach, and the
nodes' lengths are known only after nh3's own parse (stray end tags join the text around them
into one node), so no scan of the input can say the call will be short. A bound that holds for
any parse can: the work is at most (``&`` and 0xC2 bytes) × (characters), and an input under
:data:`IN_PROCESS_WORK` (about 0.2 s at the worst rate measured, 0.015 ns a unit) is cleaned in
the render's own process, as before. Over it, the same cleaner runs in a child process the
render waits for in short slices: the deadline's interrupt lands between two slices and kills
the child. What the child returns is byte for byte what the call in process returns.

Two more shapes are quadratic in html5ever's parse, before any output. Each attribute of a tag
is checked against the tag's earlier ones (160,000 attributes on one ``<p>``, 1.2 MB, took
5.7 s; the 20 MiB limit allows about 2.6 million, some 25 minutes), and each ``<html>`` tag
after the first adds its attributes to the root element at a cost of the attributes already
there (40,000 ``<html a1>`` tags, 0.5 MB, took 30 s). Every attribute but a tag's first starts
right after white space, ``/`` or a closing quote, inside a tag: a run of text cannot hold
one, and a tag goes on past a ``>`` only inside a quoted value, which ends at the first quote
of the next stretch between two ``>``. So the separators (white space, ``/``, quotes) after the
first ``<`` or quote of each such stretch bound every tag's attributes together, and the work
is at most their square, plus ``<html>`` tags × them; the text of a document, its prose, is not
counted (:func:`_attribute_slots`).

The substitution that would avoid the slow characters altogether (private-use stand-ins through
nh3, restored after) was measured and refused: an input holding a stand-in defeats it, and it
adds a rewriting layer to the sanitizer. The cure is upstream (html5ever rewrote its escaping in
pull #740); when an nh3 release is linear here, measure again and lower :data:`ESCAPE_NS`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from renderers.errors import RenderError

#: The longest nh3's cleaning may be expected to take in the render's own process (the worst
#: rates below, measured with nh3 0.3.8 on one core), in nanoseconds.
IN_PROCESS_NS = 225_000_000
#: Nanoseconds per (``&`` and 0xC2 bytes) × characters: writing them out.
ESCAPE_NS = 0.015
#: Nanoseconds per (attribute slots)²: each attribute checked against its tag's earlier ones.
ATTRIBUTE_NS = 0.25
#: Nanoseconds per ``<html>`` tags × attribute slots: each merged into the root element.
HTML_MERGE_NS = 20.0
#: How long one wait for the child lasts: the deadline's interrupt is delivered between two.
POLL_S = 0.05
#: The directory the ``renderers`` and ``citations`` packages are in, for the child's imports.
_PACKAGES_ROOT = str(Path(__file__).resolve().parents[2])
_PR_SET_PDEATHSIG = 1
#: The text of each stretch between two ``>`` before its first ``<`` or quote: no attribute is in
#: it (see the module's docstring).
_TEXT_BEFORE_MARKUP = re.compile(rb">[^<\"'>]++")
#: What may come right before an attribute: HTML's white space, ``/`` and the two quotes.
_SEPARATORS = (b" ", b"\t", b"\n", b"\r", b"\f", b"/", b'"', b"'")
#: An ``<html>`` start tag (HTML's tag names are ASCII case-insensitive).
_HTML_TAG = re.compile(rb"<html[\t\n\f\r />]", re.IGNORECASE)
_EXCEPTION_LINE = re.compile(r"[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)\b")


def may_clean_long(html: str) -> bool:
    """Whether nh3's cleaning of ``html`` could take more than :data:`IN_PROCESS_NS`: each
    estimate is an upper bound of the work that shape of input makes (module docstring)."""
    # n characters hold at most n / 8 ``<html a>`` tags and n / 2 attributes
    if len(html) ** 2 * max(ESCAPE_NS, ATTRIBUTE_NS, HTML_MERGE_NS / 16) <= IN_PROCESS_NS:
        return False  # at most 13,000 characters: no shape can be slow
    data = html.encode("utf-8", "surrogatepass")
    # each slow character costs at most the length of the node it is in, at most the input's
    # (character references only shorten what they stand for)
    escapes = (data.count(b"&") + data.count(b"\xc2")) * len(html) * ESCAPE_NS
    if escapes > IN_PROCESS_NS:
        return True
    slots = _attribute_slots(data)
    html_tags = len(_HTML_TAG.findall(data)) if slots else 0
    return escapes + slots**2 * ATTRIBUTE_NS + html_tags * slots * HTML_MERGE_NS > IN_PROCESS_NS


def _attribute_slots(data: bytes) -> int:
    """At least as many as the attributes of every tag of ``data`` together: its separators,
    without those in text (counted only when the separators of the whole input could matter)."""
    total = sum(data.count(separator) for separator in _SEPARATORS)
    if total**2 * ATTRIBUTE_NS <= IN_PROCESS_NS / 2:
        return total
    markup = _TEXT_BEFORE_MARKUP.sub(b">", b">" + data)  # the first stretch too
    return sum(markup.count(separator) for separator in _SEPARATORS)


def clean_in_child(html: str, *, keep_styles: bool, keep_classes: bool) -> str:
    """``_cleaner(keep_styles, keep_classes).clean(html)``, run by a child process that is
    killed when the render is interrupted (or the caller's thread is stopped otherwise)."""
    command = [
        sys.executable,
        "-I",  # neither the caller's environment nor its working directory chooses the code
        "-c",
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "from renderers.readers.sanitize_process import serve; serve()",
        _PACKAGES_ROOT,
        str(os.getpid()),
        "styles" if keep_styles else "-",
        "classes" if keep_classes else "-",
    ]
    with tempfile.TemporaryFile() as source:
        # A file, not a pipe: ``communicate`` retried after a timeout stops writing its input
        # (Python 3.11 registers the pipe only on the first call), and the child would wait.
        source.write(html.encode("utf-8", "surrogatepass"))
        source.seek(0)
        child = subprocess.Popen(
            command, stdin=source, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        try:
            out, err = _wait(child)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
    if child.returncode != 0:
        raise RenderError(
            f"the HTML sanitizer's process stopped with status {child.returncode}: "
            f"{_exception_line(err.decode('utf-8', 'replace'))}"
        )
    return out.decode("utf-8", "surrogatepass")


def _exception_line(stderr: str) -> str:
    """The line of a traceback that names the exception (notes and context may follow it)."""
    lines = stderr.strip().splitlines()
    named = [line for line in lines if _EXCEPTION_LINE.match(line)]
    return (named or lines or ["no message"])[-1]


def _wait(child: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
    """The child's output, waited for in slices of :data:`POLL_S` (a wait without a timeout
    blocks in C, where the deadline's interrupt would not land until the child ended)."""
    while True:
        try:
            return child.communicate(timeout=POLL_S)
        except subprocess.TimeoutExpired:
            continue


def serve() -> None:
    """The child: clean standard input with the cleaner ``sys.argv`` names, to standard output.
    It dies with its parent (a service worker killed at its hard timeout leaves no orphan
    spending the rest of a long cleaning)."""
    parent, styles, classes = int(sys.argv[2]), sys.argv[3] == "styles", sys.argv[4] == "classes"
    if sys.platform == "linux":
        import ctypes
        import signal

        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the line above took effect
        raise SystemExit(1)
    from renderers.readers.sanitize import _cleaner

    html = sys.stdin.buffer.read().decode("utf-8", "surrogatepass")
    sys.stdout.buffer.write(_cleaner(styles, classes).clean(html).encode("utf-8", "surrogatepass"))
