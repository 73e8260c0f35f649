"""One way for tests to call a writer, and the same render repeated in a fresh interpreter.

The writers' entry points differ (text for HTML and Markdown, bytes for the rest; PDF goes
through the HTML writer, or through Typst with ``pdf_engine="typst"``); :func:`write_resolved`
hides that, so a test that compares bytes or a child process that re-renders does not repeat it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any, Literal

import pytest

from citations.pool import SourcePool
from renderers.document import Document
from renderers.options import RenderOptions
from renderers.resolve import ResolvedDocument
from tests.helpers import ROOT, require_marker

WriterFormat = Literal["html", "md", "docx", "pptx", "pdf"]
PoolRows = list[dict[str, Any]]

#: A hash seed the parent run (random per process unless set) almost surely does not use.
CHILD_HASH_SEED = "12345"
_CHILD = textwrap.dedent(
    """
    import json, sys
    from tests.support.render import render_markdown

    job = json.loads(sys.stdin.read())
    data = render_markdown(job["format"], job["markdown"], job["pool"], **job["options"])
    sys.stdout.buffer.write(data)
    """
)


def write_resolved(fmt: WriterFormat, rdoc: ResolvedDocument, options: RenderOptions) -> bytes:
    """The bytes the writer for ``fmt`` makes of ``rdoc``."""
    match fmt:
        case "html":
            from renderers.writers.html.report import render_html

            return render_html(rdoc, options).encode("utf-8")
        case "md":
            from renderers.writers.markdown import markdown_text

            return markdown_text(rdoc, options).encode("utf-8")
        case "docx":
            from renderers.writers.docx.writer import docx_bytes

            return docx_bytes(rdoc, options)
        case "pptx":
            from renderers.writers.pptx.output import pptx_bytes

            return pptx_bytes(rdoc, options)
        case "pdf" if options.pdf_engine == "typst":
            from renderers.writers.typst.writer import typst_pdf

            return typst_pdf(rdoc, options)[0]
        case "pdf":
            from renderers.writers.html.report import print_report
            from renderers.writers.pdf import report_pdf_bytes

            return report_pdf_bytes(print_report(rdoc, options), options)


def resolve_rows(
    document: Document, pool_rows: PoolRows, **resolve_options: Any
) -> ResolvedDocument:
    """``document`` after the citation pass against ``pool_rows``."""
    from renderers.resolve import resolve

    return resolve(document, SourcePool.from_rows(pool_rows), **resolve_options)


def render_markdown(fmt: WriterFormat, markdown: str, pool_rows: PoolRows, **options: Any) -> bytes:
    """Read ``markdown``, resolve it against ``pool_rows`` and write it as ``fmt``."""
    from renderers.readers.markdown import read_markdown

    rdoc = resolve_rows(read_markdown(markdown), pool_rows)
    return write_resolved(fmt, rdoc, RenderOptions(**options))


def render_in_fresh_process(
    fmt: WriterFormat, markdown: str, pool_rows: PoolRows, **options: Any
) -> bytes:
    """:func:`render_markdown` in a new interpreter: another hash seed, no SOURCE_DATE_EPOCH.

    Starting an interpreter and importing the writers takes seconds, so the running test must be
    marked ``slow``.
    """
    require_marker("slow", "renders in a fresh Python process")
    job = {"format": fmt, "markdown": markdown, "pool": pool_rows, "options": options}
    env = {**os.environ, "PYTHONHASHSEED": CHILD_HASH_SEED, "PYTHONPATH": str(ROOT)}
    env.pop("SOURCE_DATE_EPOCH", None)
    child = subprocess.run(
        [sys.executable, "-c", _CHILD],
        input=json.dumps(job).encode("utf-8"),
        capture_output=True,
        cwd=ROOT,
        env=env,
        timeout=300,
        check=False,
    )
    if child.returncode != 0:
        pytest.fail(f"the {fmt} render process failed:\n{child.stderr.decode()[-3000:]}")
    return child.stdout
