"""The processor's marked output → IR inlines; URLs, DOIs and titles linked."""

from __future__ import annotations

from renderers.document import Emph, Link, Strong, Styled, Text
from renderers.styles.markup import (
    FORMATTER,
    closing,
    item_prefix,
    link_title,
    link_urls,
    opening,
    parse_marked,
)


def test_spans_become_nodes_and_the_number_span_the_marker() -> None:
    italic = FORMATTER.Italic("Journal " + FORMATTER.Bold("vol"))
    text = (f"{opening('number')}[3]{closing('number')} A. " + italic + " "
            + FORMATTER.Superscript("2") + FORMATTER.SmallCaps(" caps"))
    parsed = parse_marked(text)
    assert parsed.marker == "[3]"
    assert parsed.inlines == (
        Text(" A. "), Emph((Text("Journal "), Strong((Text("vol"),)))), Text(" "),
        Styled("sup", (Text("2"),)), Text(" caps"),
    )


def test_item_spans_link_to_their_entries() -> None:
    text = f"({item_prefix(2)}Smith, 2023{closing('item')}; {item_prefix(11)}IEA{closing('item')})"
    parsed = parse_marked(text, lambda n: f"#src-{n}")
    assert parsed.inlines == (
        Text("("), Link("#src-2", (Text("Smith, 2023"),)), Text("; "),
        Link("#src-11", (Text("IEA"),)), Text(")"),
    )
    assert parse_marked(text).inlines == (Text("(Smith, 2023; IEA)"),)


def test_input_cannot_forge_spans_and_unbalanced_marks_keep_the_words() -> None:
    assert FORMATTER.preformat(f"a{opening('i')}b{closing('i')}") == "ab"
    parsed = parse_marked(f"x{closing('b')}y{opening('i')}z")
    assert parsed.inlines == (Text("xyz"),) and parsed.marker is None


def test_urls_and_dois_are_linked_outside_existing_links() -> None:
    inlines = (Text("See https://a.org/x. Or doi:10.1000/xyz123."),
               Emph((Text("https://a.org/x"),)), Link("#src-1", (Text("https://a.org/x"),)))
    linked = link_urls(inlines, ("https://a.org/x",))
    assert linked == (
        Text("See "), Link("https://a.org/x", (Text("https://a.org/x"),)), Text(". Or doi:"),
        Link("https://doi.org/10.1000/xyz123", (Text("10.1000/xyz123"),)), Text("."),
        Emph((Link("https://a.org/x", (Text("https://a.org/x"),)),)),
        Link("#src-1", (Text("https://a.org/x"),)),
    )


def test_a_title_carries_the_link_when_no_url_is_printed() -> None:
    inlines = (Text("IEA. "), Emph((Text("World Energy Outlook"),)), Text(". 2024."))
    assert link_title(inlines, "World energy outlook", "https://iea.org") == (
        Text("IEA. "), Link("https://iea.org", (Emph((Text("World Energy Outlook"),)),)),
        Text(". 2024."),
    )
    quoted = (Text("IEA, “World Energy Outlook”, 2024."),)
    assert link_title(quoted, "World Energy Outlook", "https://iea.org")[1] == Link(
        "https://iea.org", (Text("World Energy Outlook"),))
    assert link_title(quoted, "World Energy Outlook", "javascript:x") == quoted
