"""A wrapped code line hangs in by its own indentation plus four characters, in every layout
that wraps code: both PDF engines (text positions read back from the PDF) and the HTML (the
``--hang`` of each line's span). WeasyPrint and the HTML had started the wrapped part at the
block's left edge, where it read as a new statement, shallower than the line it belongs to."""

from __future__ import annotations

import re

import pytest

from renderers.api import build_options, prepare
from renderers.pipeline import Session
from renderers.writers.common import CODE_CONTINUATION, code_hang
from tests.helpers import pdf_lines
from tests.support.render import render_markdown

CALL = ("result = client.generate(model=\"llama-2-7b\", temperature=0.2, max_tokens=512, "
        "stream=False, stop=None, seed=42, top_p=0.95)")
INDENTED = ("        print(out.outputs[0].text, out.outputs[0].text, out.outputs[0].text, "
            "out.outputs[0].text, out.outputs[0].text)")
MARKDOWN = f"# Code\n\n```python\n{CALL}\nfor out in outs:\n{INDENTED}\n```\n"


def test_code_hang_counts_indentation_and_tabs() -> None:
    assert code_hang("x = 1") == CODE_CONTINUATION
    assert code_hang("    return x") == 4 + CODE_CONTINUATION
    assert code_hang("\treturn x") == 8 + CODE_CONTINUATION


@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_the_wrapped_part_of_a_code_line_hangs_in(engine: str) -> None:
    lines = pdf_lines(render_markdown("pdf", MARKDOWN, [], pdf_engine=engine))
    code = [line for line in lines if line[2] and not line[2].startswith(("Code", "Page"))]
    first = next(i for i, line in enumerate(code) if line[2].startswith("result ="))
    loop = next(i for i, line in enumerate(code) if line[2] == "for out in outs:")
    assert loop - first == 2, "the long call wrapped once"
    left, right, text = code[loop]
    advance = (right - left) / len(text)  # one monospace character, measured
    edge = code[first][0]
    assert code[loop][0] == pytest.approx(edge, abs=0.5)  # a line of its own: at the edge
    assert code[first + 1][0] == pytest.approx(edge + 4 * advance, abs=0.5)
    assert code[loop + 1][2].startswith("print(")  # indented 8 (Typst draws those spaces)
    assert code[loop + 2][0] == pytest.approx(edge + 12 * advance, abs=0.5)


def test_every_html_code_line_carries_its_hang_and_the_code_as_written() -> None:
    html = render_markdown("html", MARKDOWN, []).decode()
    block = re.search(r'<code class="language-python">(.*?)</code>', html, re.S)
    assert block is not None
    hangs = re.findall(r'<span class="code-line" style="--hang:(\d+)">', block.group(1))
    assert hangs == ["4", "4", "12"]
    text = re.sub(r"<[^>]+>", "", block.group(1)).replace("&#34;", '"')
    assert text == f"{CALL}\nfor out in outs:\n{INDENTED}"
    assert "pre > code > span.code-line {" in html and "calc(var(--hang) * -1ch)" in html


def test_an_authors_own_line_number_spans_stay_in_their_line() -> None:
    """An HTML page laid out in its author's look keeps its own markup: a highlighter's
    line-number span (Chroma's ``span.ln``) stays inline, not on a line of its own."""
    page = ('<html><head><style>h1 { color: navy; }</style></head><body><h1>T</h1>'
            '<pre><code><span class="ln">1</span> x = 1\n<span class="ln">2</span> y = 2'
            '</code></pre></body></html>')
    session = Session(prepare(page, sources_pool=[], options=build_options()))
    assert "<span class=\"ln\">1</span>" in session.print_html()  # the author's look
    lines = [text for _, _, text in pdf_lines(session.artifact("pdf").data)]
    assert "1 x = 1" in lines and "2 y = 2" in lines
