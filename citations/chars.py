"""Characters no output format can carry, replaced at the input boundary.

XML (DOCX, PPTX, the HTML WeasyPrint lays out) refuses C0 control characters other than tab,
line feed and carriage return, and U+FFFE/U+FFFF; UTF-8 cannot encode lone surrogates. Content
and pool fields pass through :func:`clean_text` once, so no writer ever meets them.
"""

from __future__ import annotations

import re

#: What :func:`clean_text` replaces: C0 controls but tab/LF/CR, lone surrogates, U+FFFE, U+FFFF.
UNSAFE_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
REPLACEMENT = "\ufffd"


def clean_text(text: str) -> str:
    """``text`` with every unsafe character replaced by U+FFFD (unchanged when there is none)."""
    return UNSAFE_CHARS.sub(REPLACEMENT, text)
