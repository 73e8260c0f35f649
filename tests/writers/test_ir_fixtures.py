"""The IR fixtures writer tests start from (pandoc's ``.native`` way), and their printer."""

from __future__ import annotations

from pathlib import Path

import pytest

import renderers.document as ir
from renderers.document import Document, Paragraph, Text
from renderers.readers.markdown import read_markdown
from tests.support.ir import fixture_names, fixture_source, load_ir, main, native


@pytest.mark.parametrize("name", fixture_names())
def test_every_fixture_is_a_document_that_prints_back_to_itself(name: str) -> None:
    document = load_ir(name)
    assert isinstance(document, Document) and document.blocks
    assert eval(native(document), vars(ir)) == document


def test_printed_source_fits_the_line_width_and_omits_defaults() -> None:
    text = native(load_ir("energy_report"))
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "checked=None" not in text and "Heading(2, (Text('Details'),), id='details')" in text
    assert native(Paragraph((Text("a"),))) == "Paragraph((Text('a'),))"


def test_the_command_prints_a_fixture_module_for_a_markdown_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "note.md"
    source.write_text("# Note\n\nA claim.[[S:2]]\n\n- [x] done\n", encoding="utf-8")
    assert main([str(source)]) == 0
    module: dict[str, object] = {}
    exec(capsys.readouterr().out, module)
    assert module["DOCUMENT"] == read_markdown(source.read_text(encoding="utf-8"))
    assert fixture_source(read_markdown("x\n"), "x.md").startswith('"""IR fixture made from x.md')


def test_an_unknown_fixture_names_the_known_ones() -> None:
    with pytest.raises(LookupError, match="energy_report"):
        load_ir("no-such-fixture")
