"""``\\intertext{…}`` and ``\\shortintertext{…}``: a line of text between the rows of an
aligned display, the alignment carrying on across it (amsmath's meaning).

latex2mathml does not know the commands. Before converting, each becomes a row of its own
holding its text behind an invisible mark (:func:`text_rows`, for the environments of
:data:`HOSTS`); after converting, :mod:`renderers.math.spans` turns each marked row into one
cell spanning the table's columns.
"""

from __future__ import annotations

import re

from renderers.math.errors import MathError
from renderers.math.groups import braced_argument

#: Environments whose rows may hold an ``\\intertext`` (the align family, rewritten or not).
HOSTS = frozenset({"align", "align*", "aligned", "alignat", "alignat*", "alignedat",
                   "flalign", "flalign*"})
#: The invisible separator (U+2063) that marks a text row's first text (until
#: :func:`renderers.math.spans.spanned`).
MARK = "\u2063"
_COMMAND = re.compile(r"\\(?:short)?intertext(?![A-Za-z])\s*")
_ROW_END = re.compile(r"(?:\\\\|\\cr)\s*$")
_ROW_START = re.compile(r"\s*\\\\")


def text_rows(body: str) -> str:
    """``body`` (of an environment in :data:`HOSTS`) with each ``\\intertext{…}`` a row of
    its own: its text marked, ``$…$`` in it as math."""
    out: list[str] = []
    pos = 0
    while (match := _COMMAND.search(body, pos)) is not None:
        before = body[pos : match.start()]
        text, pos = _argument(body, match.end(), match.group().strip())
        previous = (out[-1] if out else "") + before
        ended = not previous.strip() or _ROW_END.search(previous) is not None
        out.append(before + ("" if ended else "\\\\ "))
        out.append(_marked(text) + ("" if _ROW_START.match(body, pos) else "\\\\ "))
    out.append(body[pos:])
    return "".join(out)


def _marked(text: str) -> str:
    """The text of an ``\\intertext`` as TeX: text pieces in ``\\text``, ``$…$`` as math."""
    if "<" in text or "&" in text:  # \\text is copied into the MathML as it is
        raise MathError("text in the formula holds '<' or '&', which would be read as markup")
    pieces = text.split("$")
    if len(pieces) % 2 == 0:  # an odd number of dollars: all of it is text
        pieces = [text]
    shown = "".join(
        f"{{{piece}}}" if index % 2 else (f"\\text{{{piece}}}" if piece else "")
        for index, piece in enumerate(pieces)
    )
    return f"\\text{{{MARK}}}{shown}"


def _argument(tex: str, index: int, command: str) -> tuple[str, int]:
    """The braced argument at ``index`` and the index after it."""
    return braced_argument(tex, index,
                           missing=f"{command} needs its text in braces ({command}{{…}})",
                           unclosed=f"{command}: '{{' with no '}}'")
