"""URL and path normalization for dedupe keys."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tests.hypothesis_profiles  # noqa: F401  (loads the shared Hypothesis profile)
from citations.urls import normalize_path, normalize_url


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("HTTPS://WWW.IEA.ORG:443/reports/weo-2024/?utm_source=x#top",
         "https://www.iea.org/reports/weo-2024"),
        ("http://Example.com:80/A/b/", "http://example.com/A/b"),
        ("http://example.com:8080/", "http://example.com:8080"),
        ("https://example.com:80/x", "https://example.com:80/x"),
        ("http://example.com:443/x", "http://example.com:443/x"),
        ("https://x.org/p?b=2&utm_medium=m&a=1&gclid=zz&fbclid=f&UTM_Term=t", "https://x.org/p?b=2&a=1"),
        ("https://x.org/p?utm_source=only", "https://x.org/p"),
        ("https://x.org/p?a=%20b&&c=", "https://x.org/p?a=%20b&c="),
        ("https://x.org/Case/Kept", "https://x.org/Case/Kept"),
        ("https://user:PW@Host.org/", "https://user:PW@host.org"),
        ("http://[::1]:80/a", "http://[::1]/a"),
        ("http://[::1]:8000/a", "http://[::1]:8000/a"),
        ("  https://x.org/a\n  ", "https://x.org/a"),
        ("mailto:Someone@Example.com", "mailto:Someone@Example.com"),
        ("", ""),
    ],
)
def test_normalize_url(url: str, expected: str) -> None:
    assert normalize_url(url) == expected


def test_port_8080_is_not_port_80() -> None:
    assert normalize_url("http://a.com:8080/x") != normalize_url("http://a.com/x")
    assert normalize_url("http://a.com:80/x") == normalize_url("http://a.com/x")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("attachments/memo.pdf", "attachments/memo.pdf"),
        ("./attachments//memo.pdf", "attachments/memo.pdf"),
        ("a\\b\\C.txt", "a/b/C.txt"),
        ("/data/x/../y.txt", "/data/y.txt"),
        ("file:///data/My%20File.pdf", "/data/My File.pdf"),
        ("", ""),
        (".", ""),
    ],
)
def test_normalize_path(path: str, expected: str) -> None:
    assert normalize_path(path) == expected


_PIECES = st.sampled_from(
    ["http://", "https://", "HTTP://", "//", ":80", ":443", ":8080", "/", "?", "#", "&", "=", "@",
     "[", "]", "%", "utm_", "gclid=", "fbclid=", "a", "B", "0", ".", " ", "\t", "\x1b", "é"]
)


@given(st.one_of(st.text(), st.lists(_PIECES).map("".join)))
def test_normalize_url_is_idempotent(url: str) -> None:
    once = normalize_url(url)
    assert normalize_url(once) == once


@given(st.text())
def test_normalize_path_is_idempotent(path: str) -> None:
    once = normalize_path(path)
    assert normalize_path(once) == once


def test_normalize_path_folds_a_trailing_separator_after_control_characters() -> None:
    assert normalize_path("0\r/") == normalize_path(normalize_path("0\r/"))
