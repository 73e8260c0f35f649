"""``citerender render answer.json``: a sidecar answer renders as a readable cited document."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from renderers import cli
from renderers.api import render, render_file
from renderers.errors import StrictError

POOL = [
    {"sid": 1, "title": "IEA World Energy Outlook", "url": "https://iea.org/weo"},
    {"sid": 2, "title": "IRENA statistics", "url": "https://irena.org/stats"},
]
ANSWER = {
    "summary": "Solar capacity grew 30 % in 2024.",
    "key_findings": ["Costs fell again.", "Storage doubled."],
    "_citations": [{"path": "/summary", "sids": [1]}, {"path": "/key_findings/1", "sids": [2]}],
}


def test_a_sidecar_file_renders_headings_citations_and_sources(tmp_path: Path) -> None:
    source = tmp_path / "answer.json"
    source.write_text(json.dumps(ANSWER), encoding="utf-8")
    results = render_file(source, tmp_path / "out", formats=("md", "html"), sources_pool=POOL)
    markdown = (tmp_path / "out" / "answer.md").read_text("utf-8")
    assert "# Summary" in markdown and "Solar capacity grew 30 % in 2024.[^1]" in markdown
    assert "- Storage doubled.[^2]" in markdown
    assert "[^1]: [IEA World Energy Outlook](https://iea.org/weo)" in markdown
    assert "_citations" not in markdown
    assert results[0].sources_used == [1, 2]
    html = (tmp_path / "out" / "answer.html").read_text("utf-8")
    assert "<h1" in html and 'href="#src-2"' in html


def test_a_sidecar_object_renders_through_the_api(tmp_path: Path) -> None:
    (result,) = render(ANSWER, tmp_path, name="a", formats=("md",), sources_pool=POOL)
    assert result.sources_used == [1, 2]


def test_a_malformed_entry_is_skipped_with_a_warning_and_the_others_are_cited(
    tmp_path: Path,
) -> None:
    """A bad entry failed the whole render (without --strict) while the audit listed it as an
    invalid token and counted the good entries: render now cites what the audit counts."""
    from renderers.audit import audit

    bad = {"summary": "x", "more": "y",
           "_citations": [{"path": 7, "sids": [1]}, {"path": "/summary", "sids": [0]},
                          {"path": "/more", "sids": [2]}]}
    (result,) = render(bad, tmp_path, name="b", formats=("md",), sources_pool=POOL)
    assert result.warnings == [
        "/_citations/0: 'path' is 7, not a JSON Pointer string; skipped",
        "/summary: 'sids' is [0], not a non-empty list of positive integers; skipped",
    ]
    assert result.sources_used == [2]
    report = audit(json.dumps(bad), POOL, content_format="json")
    assert list(report.cited_sids) == result.sources_used
    assert [t.text for t in report.invalid_tokens] == ["/_citations/0", "/summary"]
    with pytest.raises(StrictError, match="'sids' is \\[0\\]"):
        render(bad, tmp_path / "strict", name="b", formats=("md",), sources_pool=POOL,
               strict=True)


def test_an_entry_with_a_sid_no_token_can_name_is_skipped_and_the_others_cited(
    tmp_path: Path,
) -> None:
    """A sid past 2147483647 was merged into the string's token, which the token grammar then
    refused as a whole: the string's sound citations were kept as text while the audit counted
    them (and the huge sid as unknown)."""
    from renderers.audit import audit

    answer = {"summary": "Solar grew.",
              "_citations": [{"path": "/summary", "sids": [1]},
                             {"path": "/summary", "sids": [2, 10**29]}]}
    (result,) = render(answer, tmp_path, name="b", formats=("md",), sources_pool=POOL)
    assert result.warnings == [
        f"/summary: 'sids' holds {10**29}, past the largest sid (2147483647); skipped"]
    assert result.sources_used == [1]
    assert "Solar grew.[^1]" in (tmp_path / "b.md").read_text("utf-8")
    report = audit(json.dumps(answer), POOL, content_format="json")
    assert list(report.cited_sids) == [1] and report.unknown_sids == ()
    assert [t.text for t in report.invalid_tokens] == ["/summary"]


NAMES_NOTHING = (
    "/summry: the pointer names nothing (JSON Pointer '/summry': no member 'summry' at "
    "'/summry'); skipped"
)
NOT_A_LIST = "/_citations: the sidecar is a str, not a list of entries; skipped"


def test_sidecar_problems_are_warnings_in_the_audits_words(tmp_path: Path) -> None:
    bad = {"summary": "Solar grew.", "_citations": [{"path": "/summry", "sids": [1]}]}
    (result,) = render(bad, tmp_path, name="a", formats=("md",), sources_pool=POOL)
    assert result.warnings == [NAMES_NOTHING]
    assert result.sources_used == []
    (result,) = render({"_citations": "nope", "a": "x"}, tmp_path, name="b", formats=("md",))
    assert result.warnings == [NOT_A_LIST]
    assert (tmp_path / "b.md").read_text("utf-8") == "# A\n\nx\n"


@pytest.mark.parametrize(
    ("answer", "warning"),
    [
        (
            {"summary": "Solar grew.", "_citations": [{"path": "/summry", "sids": [1]}]},
            NAMES_NOTHING,
        ),
        ({"_citations": "nope", "a": "x"}, NOT_A_LIST),
        (
            {"a": "x", "_citations": [{"path": "/a", "sids": [0]}]},
            "/a: 'sids' is [0], not a non-empty list of positive integers; skipped",
        ),
    ],
)
def test_cli_strict_fails_on_a_sidecar_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], answer: object, warning: str
) -> None:
    (tmp_path / "ans.json").write_text(json.dumps(answer), encoding="utf-8")
    (tmp_path / "pool.json").write_text(json.dumps(POOL), encoding="utf-8")
    args = ["render", str(tmp_path / "ans.json"), "--pool", str(tmp_path / "pool.json")]
    for extra, code in (([], 0), (["--strict"], 1)):
        with pytest.raises(SystemExit) as exit_info:
            cli.main([*args, "--to", "md", "--out", str(tmp_path / "out"), *extra])
        assert exit_info.value.code == code
        err = capsys.readouterr().err
        assert f"ans.json: {warning}\n" in err
        assert err.count("ans.json") == 1  # the file is named once
    assert "_citations" not in (tmp_path / "out" / "ans.md").read_text("utf-8")


def test_the_api_in_strict_mode_refuses_an_answer_with_a_misplaced_citation(
    tmp_path: Path,
) -> None:
    answer = {"summary": "Solar grew.", "_citations": [{"path": "/summry", "sids": [1]}]}
    with pytest.raises(StrictError, match="/summry: the pointer names nothing"):
        render(json.dumps(answer), tmp_path, name="a", formats="md", sources_pool=POOL,
               strict=True)
    assert not list(tmp_path.iterdir())


def test_from_sidecar_on_text_says_what_a_sidecar_answer_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--from sidecar`` on a markdown file listed the providers' answers (OpenAI … LlamaIndex)
    as what is accepted, not the sidecar form that was asked for, and named the file twice."""
    (tmp_path / "x.md").write_text("# Hi\n\nText [[S:1]].\n", encoding="utf-8")
    (tmp_path / "pool.json").write_text(json.dumps(POOL), encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["render", str(tmp_path / "x.md"), "--from", "sidecar", "--pool",
                  str(tmp_path / "pool.json"), "--to", "md", "--out", str(tmp_path / "out")])
    assert exit_info.value.code == 2
    (line,) = [x for x in capsys.readouterr().err.splitlines() if "error:" in x]
    assert line.count("x.md") == 1
    assert "x.md is not valid JSON (line 1, column 1" in line
    assert '"_citations"' in line and "OpenAI" not in line


def test_a_yaml_sidecar_file_renders_what_the_audit_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The audit read ``answer.yaml`` as a sidecar answer (1 cited, OK) while render showed
    the YAML as markdown text citing nothing."""
    (tmp_path / "answer.yaml").write_text(
        "summary: Solar grew.\n_citations:\n  - path: /summary\n    sids: [2]\n", "utf-8")
    (tmp_path / "pool.json").write_text(json.dumps(POOL), encoding="utf-8")
    args = [str(tmp_path / "answer.yaml"), "--pool", str(tmp_path / "pool.json")]
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["render", *args, "--to", "md", "--out", str(tmp_path / "out")])
    assert exit_info.value.code == 0
    markdown = (tmp_path / "out" / "answer.md").read_text("utf-8")
    assert markdown.startswith("# Summary\n\nSolar grew.[^1]\n") and "_citations" not in markdown
    record = json.loads((tmp_path / "out" / "sources_used.json").read_text("utf-8"))
    capsys.readouterr()
    with pytest.raises(SystemExit):
        cli.main(["audit", *args, "--json"])
    assert json.loads(capsys.readouterr().out)["cited_sids"] == record[0]["sids"] == [2]


@pytest.mark.parametrize(("name", "text", "problem"), [
    ("answer.json", '{"_citations": [{"path": "/a", "sids": [1]}], "a": "x"',
     "answer.json is not valid JSON"),
    ("answer.json", '{"a": ' + "[" * 3000 + "]" * 3000 + "}", "answer.json nests too deeply"),
    ("answer.yaml", "_citations: []\n? [a]\n: b\n", "not valid YAML"),
])
def test_a_json_or_yaml_file_that_does_not_parse_is_refused_as_the_audit_refuses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, problem: str
) -> None:
    """Render showed such a file as markdown text (no warning) while the audit refused it."""
    (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "pool.json").write_text(json.dumps(POOL), encoding="utf-8")
    args = [str(tmp_path / name), "--pool", str(tmp_path / "pool.json")]
    for command in (["render", *args, "--to", "md", "--out", str(tmp_path / "out")],
                    ["audit", *args]):
        with pytest.raises(SystemExit) as exit_info:
            cli.main(command)
        assert exit_info.value.code == 2
        assert name in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["render", *args, "--to", "md", "--out", str(tmp_path / "out")])
    assert problem in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("name", "text"), [
    ("answer.yaml", "_citations: []\n? [a]\n: b\n"),
    ("answer.yaml", "summary: x\nsummary: y\n_citations: []\n"),
    ("answer.json", '{"summary": "x", "summary": "y", "_citations": []}'),
])
def test_the_audit_names_a_structured_file_that_does_not_parse_as_render_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str
) -> None:
    """The audit said ``answer.yaml: <content>: not valid YAML``: the file is named, once."""
    (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "pool.json").write_text(json.dumps(POOL), encoding="utf-8")
    args = [str(tmp_path / name), "--pool", str(tmp_path / "pool.json")]
    errors = []
    for command in (["render", *args, "--to", "md", "--out", str(tmp_path / "out")],
                    ["audit", *args]):
        with pytest.raises(SystemExit):
            cli.main(command)
        errors.append(capsys.readouterr().err)
    assert "<content>" not in errors[1]
    assert errors[1] == errors[0]
    assert errors[1].startswith(f"citerender: error: {tmp_path / name}: ")
