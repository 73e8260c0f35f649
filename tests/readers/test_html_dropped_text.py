"""HTML whose markup makes the sanitizer swallow the rest is reported, never silently lost."""

from __future__ import annotations

from pathlib import Path

from renderers import write_html
from renderers.readers.html import read_html

SWALLOWING = (
    "<p>Before the trap.[[S:1]]</p><math><mtext><table><mglyph><style>"
    + "<p>Findings that the reader must see, with their citation.[[S:2]]</p>" * 4
    + "<h2>Conclusion</h2><p>Final words.</p>"
)
POOL = [{"sid": 1, "title": "A", "url": "https://a.org"},
        {"sid": 2, "title": "B", "url": "https://b.org"}]


def test_swallowed_content_is_a_warning_in_the_result(tmp_path: Path) -> None:
    result = write_html(SWALLOWING, tmp_path / "r.html", sources_pool=POOL, content_format="html")
    assert any("sanitizer removed" in w for w in result.warnings), result.warnings
    assert "Before the trap." in result.path.read_text("utf-8")


def test_scripts_styles_and_comments_are_not_reported() -> None:
    html = ("<p>Visible text.</p><script>var secret = 'not text';</script>"
            "<style>p { color: red }</style><!-- a long comment that nobody reads anyway -->"
            "<form><input value='typed'><button>Send the form now</button></form>")
    assert read_html(html).warnings == ()
