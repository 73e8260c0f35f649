"""The one Jinja2 environment every HTML writer uses (templates from :mod:`renderers.templates`)."""

from __future__ import annotations

import base64
import hashlib
from functools import lru_cache

import jinja2

from renderers.options import PageSize
from renderers.templates import templates_dir
from renderers.writers.common import page_dimensions
from renderers.writers.html.breaks import breakable
from renderers.writers.html.list_numbers import li_value_style


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The shared environment: autoescaping, strict undefined variables, no caching surprises."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,
    )
    env.globals["li_value_style"] = li_value_style
    env.filters["breakable"] = breakable
    return env


@lru_cache(maxsize=4)
def report_css(page_size: PageSize = "A4") -> str:
    """The print stylesheet with its page size set (``A4`` or ``Letter``)."""
    size = page_dimensions(page_size).css
    css = stylesheet("report.css")
    return css.replace("/*PAGE_SIZE*/A4", size)


#: The id of the citation-preview script every report carries (templates/preview.html.j2).
PREVIEW_SCRIPT_ID = "citation-previews"


@lru_cache(maxsize=1)
def preview_script_csp() -> str:
    """The Content-Security-Policy source (``'sha256-…'``) that lets the citation-preview
    script run where a policy forbids inline scripts (the export page's live preview)."""
    html = environment().get_template("preview.html.j2").render()
    body = html.split(f'<script id="{PREVIEW_SCRIPT_ID}">', 1)[1].split("</script>", 1)[0]
    digest = base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode("ascii")
    return f"'sha256-{digest}'"
@lru_cache(maxsize=4)
def stylesheet(name: str) -> str:
    """The stylesheet ``templates/<name>`` (report.css; contents.css when a render has a
    table of contents)."""
    return (templates_dir() / name).read_text(encoding="utf-8")
