"""Provider answers through every surface: every format shows the exact superscripts and Sources;
the CLI says which shape it read; tools take the raw object; bad answers name their field."""

from __future__ import annotations

import json
import re
import shutil
import unicodedata
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pytest
from PIL import Image
from pypdf import PdfReader

from citations.audit import audit
from citations.tokens import citation_groups
from renderers import render, write_pdf
from renderers.tools import TOOL_SCHEMAS, call_tool
from tests.helpers import convert_all_with_libreoffice, pdf_text
from tests.support.cli import run_cli

ANSWERS = Path(__file__).resolve().parent.parent / "fixtures" / "answers"
EXPECTED: dict[str, dict[str, Any]] = json.loads((ANSWERS / "expected.json").read_text("utf-8"))
NAMES = sorted(EXPECTED)


def load(name: str) -> Any:
    return json.loads((ANSWERS / name).read_text("utf-8"))


def numbers(name: str) -> list[list[str]]:
    """The display numbers of each superscript, e.g. ``[["1"], ["2", "3"]]``."""
    return [label.split(", ") for label in EXPECTED[name]["superscripts"]]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every fixture answer rendered to every format (one read per answer)."""
    root = tmp_path_factory.mktemp("answers")
    for name in NAMES:
        render(load(name), root, name=Path(name).stem, formats="all")
    return {name: root / Path(name).stem for name in NAMES}


class _Cites(HTMLParser):
    """Superscript labels and Sources titles of the HTML report."""

    def __init__(self) -> None:
        super().__init__()
        self.sups: list[str] = []
        self.titles: list[str] = []
        self._sup = 0
        self._title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if tag == "sup" and "cite" in classes:
            self._sup += 1
            self.sups.append("")
        elif "source-title" in classes:
            self._title = True
            self.titles.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "sup" and self._sup:
            self._sup -= 1
        elif tag in ("a", "span") and self._title:
            self._title = False

    def handle_data(self, data: str) -> None:
        if self._sup:
            self.sups[-1] += data
        elif self._title:
            self.titles[-1] += data


@pytest.mark.parametrize("name", NAMES)
def test_html_superscripts_and_sources(name: str, rendered: dict[str, Path]) -> None:
    parser = _Cites()
    parser.feed(rendered[name].with_suffix(".html").read_text("utf-8"))
    assert parser.sups == EXPECTED[name]["superscripts"]
    assert parser.titles == EXPECTED[name]["sources"]


@pytest.mark.parametrize("name", NAMES)
def test_markdown_footnotes_and_definitions(name: str, rendered: dict[str, Path]) -> None:
    text = rendered[name].with_suffix(".md").read_text("utf-8")
    refs = re.findall(r"((?:\[\^\d+\])+)(?!:)", text)
    assert [re.findall(r"\d+", ref) for ref in refs] == numbers(name)
    definitions = re.findall(r"^\[\^(\d+)\]: (.+?)(?: — .*)?$", text, re.M)
    linked = re.compile(r"^\[(.*)\]\(<?[^\s>]*>?\)$")  # [Title](url): the shared entry rule
    titles = [linked.sub(r"\1", d[1]).replace("\\", "") for d in definitions]
    assert [int(d[0]) for d in definitions] == list(range(1, len(titles) + 1))
    assert titles == EXPECTED[name]["sources"]
    assert "[[S:" not in text


def pdf_superscripts(path: Path) -> list[tuple[str, str]]:
    """``(destination, text under the link)`` of every superscript link, in page order."""
    reader = PdfReader(str(path))
    document = pdfium.PdfDocument(str(path))
    found: list[tuple[str, str]] = []
    for index, page in enumerate(reader.pages):
        textpage = document[index].get_textpage()
        for annotation in page.get("/Annots", []):
            link = annotation.get_object()
            destination = str(link.get("/Dest", ""))
            if destination.startswith("src-"):
                x0, y0, x1, y1 = (float(v) for v in link["/Rect"])
                found.append((destination, textpage.get_text_bounded(x0, y0, x1, y1).strip()))
    document.close()
    return found


@pytest.mark.parametrize("name", NAMES)
def test_pdf_superscripts_link_to_their_sources(name: str, rendered: dict[str, Path]) -> None:
    pdf = rendered[name].with_suffix(".pdf")
    flat = [n for group in numbers(name) for n in group]
    assert pdf_superscripts(pdf) == [(f"src-{n}", n) for n in flat]
    text = pdf_text(pdf)
    positions = [text.index(title) for title in EXPECTED[name]["sources"]]
    assert positions == sorted(positions) and text.index("Sources") < positions[0]
    assert "[[S:" not in text


@pytest.mark.parametrize("name", NAMES)
def test_png_pages_and_provenance(name: str, rendered: dict[str, Path]) -> None:
    png = rendered[name].with_suffix(".png")
    with Image.open(png) as image:
        assert image.width > 500 and image.height > 500
    records = json.loads((png.parent / "sources_used.json").read_text("utf-8"))
    cited = list(dict.fromkeys(
        s for group in citation_groups(EXPECTED[name]["content"]) for s in group))
    stem = rendered[name].name
    mine = {r["format"]: r for r in records if r["artifact_name"] == stem}
    assert set(mine) == {"pdf", "png", "docx", "pptx", "html", "md"}
    assert all(record["sids"] == cited for record in mine.values())


def _plain(text: str) -> str:
    """Text without white space, emoji or variation selectors (PDF text extraction reorders
    glyphs drawn from a fallback emoji font)."""
    return "".join(
        c for c in text if not c.isspace() and unicodedata.category(c) not in ("So", "Mn", "Cf")
    )


def _anchored(name: str) -> list[str]:
    """For each citation, the few characters before its token followed by its numbers."""
    content = EXPECTED[name]["content"]
    out = []
    for match, label in zip(re.finditer(r"\[\[S:[^\]]*\]\]", content),
                            EXPECTED[name]["superscripts"], strict=True):
        before = _plain(re.sub(r"\[\[S:[^\]]*\]\]", "", content[: match.start()]))[-6:]
        out.append(before + label.replace(" ", ""))
    return out


@pytest.fixture(scope="module")
def office_pdfs(rendered: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every DOCX and PPTX converted to PDF by LibreOffice in one run."""
    out = tmp_path_factory.mktemp("office")
    for fmt in ("docx", "pptx"):
        (out / fmt).mkdir()
        files = [path.with_suffix(f".{fmt}") for path in rendered.values()]
        convert_all_with_libreoffice(files, out / fmt)
    return out


@pytest.mark.libreoffice
@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["docx", "pptx"])
@pytest.mark.parametrize("name", NAMES)
def test_office_formats_in_libreoffice(name: str, fmt: str, office_pdfs: Path) -> None:
    text = pdf_text(office_pdfs / fmt / f"{Path(name).stem}.pdf")
    plain = _plain(text)
    cursor = 0
    for anchor in _anchored(name):  # each superscript right after its words, in order
        found = plain.find(anchor, cursor)
        assert found >= 0, (anchor, plain)
        cursor = found + len(anchor)
    sources = text.rpartition("Sources")[2]
    positions = [sources.find(title) for title in EXPECTED[name]["sources"]]
    assert -1 not in positions and positions == sorted(positions), (positions, sources)


def test_write_pdf_takes_the_native_object_and_merges_the_pool(tmp_path: Path) -> None:
    pool = [{"sid": 9, "title": "EIA (already known)",
             "url": "https://www.eia.gov/todayinenergy/detail.php?id=64586"}]
    result = write_pdf(load("perplexity-sonar.json"), tmp_path / "battery.pdf", sources_pool=pool)
    assert result.sources_used == [9, 10, 11, 12]
    assert result.stats["input_format"] == "perplexity"
    assert "EIA (already known)" in pdf_text(result.path)


def test_forced_format_and_malformed_answer_in_the_api(tmp_path: Path) -> None:
    from citations.errors import AnswerError

    with pytest.raises(AnswerError, match="not an OpenAI answer"):
        render(load("gemini-vertex-rag.json"), tmp_path, content_format="openai", formats="md")
    with pytest.raises(AnswerError, match="not a recognized answer"):
        render({"foo": 1}, tmp_path, formats="md")
    markdown = render('["not", "an answer"] stays markdown', tmp_path, name="m", formats="md")
    assert markdown[0].stats["input_format"] == "markdown"


def test_audit_reads_native_answers() -> None:
    report = audit(load("perplexity-reasoning.json"), None)
    assert report.cited_sids == (1, 2) and report.unknown_sids == () and report.ok
    text = (ANSWERS / "openai-chat.json").read_text("utf-8")
    assert audit(text, [], content_format="openai").cited_sids == (1, 2, 3)


# -- the command line -----------------------------------------------------------------------


@pytest.mark.slow
def test_cli_renders_an_answer_and_says_which_shape(tmp_path: Path) -> None:
    shutil.copy(ANSWERS / "anthropic-web-search.json", tmp_path / "answer.json")
    done = run_cli("render", "answer.json", "--to", "md", "--out", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    info = [line for line in done.stderr.splitlines() if "info:" in line]
    assert info == ["citerender: info: answer.json: read as Anthropic Messages content blocks "
                    "with citations"]
    text = (tmp_path / "out" / "answer.md").read_text("utf-8")
    assert "2024[^1][^2], while" in text and "rebound 🔥[^3]" in text


@pytest.mark.slow
def test_cli_from_forces_a_provider(tmp_path: Path) -> None:
    shutil.copy(ANSWERS / "openai-chat.json", tmp_path / "answer.json")
    done = run_cli("render", "answer.json", "--from", "anthropic", "--to", "md", cwd=tmp_path)
    assert done.returncode == 2
    assert "citerender: error: answer.json: not an Anthropic answer" in done.stderr
    assert "Traceback" not in done.stderr
    done = run_cli("render", "answer.json", "--from", "openai", "--to", "md", cwd=tmp_path)
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_cli_malformed_answer_names_the_field(tmp_path: Path) -> None:
    answer = load("openai-responses.json")
    message = answer["output"][1]
    message["content"].insert(0, {"type": "refusal", "refusal": ""})
    message["content"][1]["annotations"][2]["end_index"] = 5000
    (tmp_path / "answer.json").write_text(json.dumps(answer), encoding="utf-8")
    done = run_cli("render", "answer.json", "--to", "pdf", cwd=tmp_path)
    assert done.returncode == 2
    length = len(message["content"][1]["text"])  # characters: 🌍 counts 1
    assert done.stderr.strip().splitlines()[-1] == (
        "citerender: error: answer.json: output[1].content[1].annotations[2].end_index: 5000 "
        f"is beyond the text ({length} characters)"
    )


@pytest.mark.slow
def test_cli_audit_of_an_answer(tmp_path: Path) -> None:
    shutil.copy(ANSWERS / "gemini-google-search.json", tmp_path / "answer.json")
    done = run_cli("audit", "answer.json", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["cited_sids"] == [1, 2, 3, 4] and report["ok"] is True


# -- agent tools ----------------------------------------------------------------------------


def test_tool_schemas_offer_answer() -> None:
    for schema in TOOL_SCHEMAS:
        properties = schema["parameters"]["properties"]
        assert "answer" in properties and "raw" in properties["answer"]["description"]
        assert "answer" in schema["description"]


def test_write_pdf_tool_with_a_raw_response(tmp_path: Path) -> None:
    result = call_tool("write_pdf", {"answer": load("gemini-vertex-rag.json"),
                                     "path": "werk.pdf"}, out_dir=tmp_path)
    assert result["ok"], result
    assert result["sources_used"] == [1, 2] and result["stats"]["input_format"] == "gemini"
    as_string = call_tool("write_markdown", {
        "answer": (ANSWERS / "llamaindex-response.json").read_text("utf-8"),
        "content_format": "llamaindex", "path": "uba.md"}, out_dir=tmp_path)
    assert as_string["ok"], as_string
    assert "📉[^1][^2]" in (tmp_path / "uba.md").read_text("utf-8")
    audited = call_tool("audit_citations", {"answer": load("openai-chat.json")}, out_dir=tmp_path)
    assert audited["ok"] and audited["sources_used"] == [1, 2, 3]


@pytest.mark.parametrize(
    ("arguments", "where"),
    [
        ({"answer": {"output": [{"type": "message", "content": [{"type": "output_text",
          "text": "Hi.", "annotations": [{"type": "url_citation", "start_index": 0,
                                          "end_index": 9, "url": "https://a.org"}]}]}]}},
         "answer.output[0].content[0].annotations[0].end_index"),
        ({"answer": {"hello": 1}}, "answer"),
        ({"answer": "{not json"}, "answer"),
        ({"answer": {"candidates": []}, "content": "x"}, "answer"),
    ],
)
def test_bad_answers_are_invalid_argument(
    tmp_path: Path, arguments: dict[str, Any], where: str
) -> None:
    result = call_tool("write_pdf", arguments, out_dir=tmp_path)
    assert result["ok"] is False
    assert result["error"]["code"] == "invalid_argument"
    assert result["error"]["where"] == where


def test_answer_size_limit(tmp_path: Path) -> None:
    from renderers.errors import LimitError

    text = (ANSWERS / "openai-chat.json").read_text("utf-8")
    with pytest.raises(LimitError, match="larger than 500 bytes"):
        render(text, tmp_path, formats="md", limits={"max_content_bytes": 500})
