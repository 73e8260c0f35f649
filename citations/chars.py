"""Characters no output format can carry, replaced at the input boundary.

XML (DOCX, PPTX, the HTML WeasyPrint lays out) refuses C0 control characters other than tab,
line feed and carriage return, and U+FFFE/U+FFFF; UTF-8 cannot encode lone surrogates. Content
and pool fields pass through :func:`clean_text` once, so no writer ever meets them.
"""

from __future__ import annotations

import codecs
import re

#: What :func:`clean_text` replaces: C0 controls but tab/LF/CR, lone surrogates, U+FFFE, U+FFFF.
UNSAFE_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
REPLACEMENT = "\ufffd"


def clean_text(text: str) -> str:
    """``text`` with every unsafe character replaced by U+FFFD (unchanged when there is none)."""
    return UNSAFE_CHARS.sub(REPLACEMENT, text)


#: Byte-order marks that name an encoding other than UTF-8 beyond doubt, longest first (UTF-32
#: LE's starts with UTF-16 LE's). Windows PowerShell 5's ``>`` and ``Out-File`` write UTF-16 LE
#: with its mark, so a file an agent saved there arrives so.
_OTHER_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
)


def text_encoding(raw: bytes) -> str:
    """The codec an input file is read with: the UTF-16 or UTF-32 its byte-order mark names,
    else UTF-8 (``utf-8-sig``: its own mark, if any, dropped)."""
    return next((name for bom, name in _OTHER_BOMS if raw.startswith(bom)), "utf-8-sig")


def encoding_shown(encoding: str) -> str:
    """How an error names what :func:`text_encoding` chose: "UTF-8", or "UTF-16, although it
    opens with that byte-order mark"."""
    if encoding == "utf-8-sig":
        return "UTF-8"
    return f"{encoding.upper()}, although it opens with that byte-order mark"
