"""citations.links.safe_link reads a URL as browsers do (WHATWG): a link goes where its URL goes."""

from __future__ import annotations

import pytest

from citations.links import safe_link, source_domain
from citations.model import Source


@pytest.mark.parametrize(
    ("url", "link"),
    [
        ("https://www.google.com/search?q=solar panels",
         "https://www.google.com/search?q=solar%20panels"),
        ("https://example.org/a b/c?d e#f g", "https://example.org/a%20b/c?d%20e#f%20g"),
        # C0 controls and spaces at either end are stripped, tab/CR/LF removed anywhere
        ("  \x01https://example.org/x \n", "https://example.org/x"),
        ("https://exa\tmple.org/pa\r\nth", "https://example.org/path"),
        # other controls are percent-encoded, never dropped
        ("https://example.org/a\x01b\x7f", "https://example.org/a%01b%7F"),
        ("https://user name@example.org/", "https://user%20name@example.org/"),
        ("mailto:jane doe@example.org", "mailto:jane%20doe@example.org"),
        ("HTTPS://Example.org/", "HTTPS://Example.org/"),
        ("https://example.org/already%20encoded", "https://example.org/already%20encoded"),
    ],
)
def test_spaces_and_controls_are_encoded_not_removed(url: str, link: str) -> None:
    assert safe_link(url) == link


@pytest.mark.parametrize(
    "url",
    [
        "https://mybank.com .attacker.example/login",  # was linked as mybank.com.attacker.example
        "https://mybank.com\x01.attacker.example/",
        "https://mybank.com%20.attacker.example/",
        "https://mybank.com\u3000.attacker.example/",
        "https://attacker.example\\@mybank.com/",  # browsers end the host at the backslash
        "https://mybank.com\\.attacker.example/",
        "java script:alert(1)",
        "java\x01script:alert(1)",
        "java\nscript:alert(1)",
        " javascript:alert(1)",
        "https:example.org",
        "https://",
        "https://[::1/",
    ],
)
def test_a_url_browsers_would_read_otherwise_is_not_linked(url: str) -> None:
    assert safe_link(url) == ""
    assert safe_link(url, allow_fragment=True) == ""


def test_fragments_follow_the_same_rules() -> None:
    assert safe_link(" #sec-1 ", allow_fragment=True) == "#sec-1"
    assert safe_link("#a b", allow_fragment=True) == "#a%20b"
    assert safe_link("#", allow_fragment=True) == ""
    assert safe_link("#sec-1") == ""


def test_the_domain_shown_is_the_host_of_the_link() -> None:
    assert source_domain(Source(sid=1, url="  https://www.example.org/a b")) == "example.org"
    assert source_domain(Source(sid=2, url="https://mybank.com .attacker.example/")) == ""
