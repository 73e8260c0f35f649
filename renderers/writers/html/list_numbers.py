"""Ordered-list numbers that WeasyPrint keeps: ``start`` and ``value`` restated as CSS counters.

WeasyPrint (70) ignores ``<ol start>`` and ``<li value>`` and numbers every list from 1, so a
list that starts at 3 and a Sources list numbered by sid would print wrong numbers in the PDF.
The same numbers are therefore also written as ``list-item`` counter declarations, which
WeasyPrint and browsers both honour. ``value`` pairs ``counter-set`` with a zero increment:
WeasyPrint applies ``counter-set`` before the implicit increment and browsers after it, and an
explicit ``counter-increment`` removes the implicit one in both.
"""

from __future__ import annotations

import re

from lxml.html import HtmlElement

#: A list number an author may write: at most nine digits (no 5,000-digit integer parsing).
_NUMBER = re.compile(r"\s*([+-]?\d{1,9})\s*")


def ol_start_style(start: int) -> str:
    """Declarations that make an ordered list's first item ``start``."""
    return f"counter-reset: list-item {int(start) - 1}"


def li_value_style(value: int) -> str:
    """Declarations that give a list item the number ``value``."""
    return f"counter-set: list-item {int(value)}; counter-increment: list-item 0"


def _append_style(element: HtmlElement, declarations: str) -> None:
    existing = (element.get("style") or "").strip().rstrip(";")
    element.set("style", f"{existing}; {declarations}" if existing else declarations)


def number_lists(root: HtmlElement) -> None:
    """Restate every ``<ol start>`` and ``<li value>`` under ``root`` as counter declarations
    (author HTML on its way to WeasyPrint); numbers that are not short integers are left alone,
    as browsers ignore them too."""
    for element in root.iter("ol", "li"):
        attribute = "start" if element.tag == "ol" else "value"
        match = _NUMBER.fullmatch(element.get(attribute) or "")
        if match is None:
            continue
        number = int(match.group(1))
        style = ol_start_style if element.tag == "ol" else li_value_style
        _append_style(element, style(number))
