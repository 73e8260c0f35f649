"""The public surface, pinned (httpx-style): ``renderers.__all__``, ``citations.__all__`` and
the names users import from each public module.

The package ``__all__`` lists are pinned exactly. A public module may gain names freely, but
removing or renaming a pinned one fails here on purpose: change the pin only together with a
note in the README that the import path changed.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

import citations
import renderers

ROOT = Path(__file__).resolve().parents[2]

RENDERERS_ALL = [
    "FORMATS", "InputError", "LimitError", "Limits", "OptionError", "OutputPathError",
    "OverwriteError", "RenderError", "RenderOptions", "RenderResult", "ResourceError",
    "StrictError", "UnsupportedNodeError",
    "render", "write_docx", "write_html", "write_markdown", "write_pdf", "write_png", "write_pptx",
]
CITATIONS_ALL = [
    "AnswerError", "CitationError", "DuplicateSidError", "ExtractorError", "PoolError",
    "RegistryError", "SelectorError", "SidecarError", "Source", "StoreError", "TokenError",
    "UnknownSidError",
]
RENDERER_ERRORS = [
    "InputError", "LimitError", "OptionError", "OutputPathError", "OverwriteError",
    "ResourceError", "StrictError", "UnsupportedNodeError",
]
IR_NODES = [
    "Text", "Emph", "Strong", "Strike", "Code", "Link", "Image", "LineBreak", "SoftBreak",
    "RawInline", "FootnoteRef", "Cite", "Math", "CrossRef", "Heading", "Paragraph", "ListItem",
    "BulletList", "OrderedList", "TableCell", "Table", "CodeBlock", "BlockQuote", "Figure",
    "ThematicBreak", "RawBlock", "FootnoteDef", "Document",
]
#: Public import path → the names users import from it (README, docs/architecture.md, samples).
PUBLIC_NAMES: dict[str, list[str]] = {
    "renderers": RENDERERS_ALL,
    "renderers.api": [
        "RenderResult", "Session", "available_formats", "open_session", "render", "render_file",
        "write_docx", "write_html", "write_markdown", "write_pdf", "write_png", "write_pptx",
    ],
    "renderers.options": ["FORMATS", "Limits", "RenderOptions"],
    "renderers.errors": ["RenderError", *RENDERER_ERRORS],
    "renderers.document": [*IR_NODES, "Block", "Inline", "iter_blocks", "iter_inlines",
                           "plain_text"],
    "renderers.tools": ["TOOL_SCHEMAS", "call_tool"],
    "renderers.testing": [
        "PixelTolerance", "UPDATE_ENV", "assert_matches_golden", "normalize_artifact",
        "normalize_bytes", "render_artifacts", "update_requested",
    ],
    "renderers.testing_plugin": ["update_golden", "pytest_addoption"],
    "renderers.cli": ["app", "main"],
    "renderers.mcp_server": ["build_server", "main"],
    "citations": CITATIONS_ALL,
    "citations.adapters": [
        "AdaptedAnswer", "adapt", "detect", "from_anthropic", "from_gemini", "from_langchain",
        "from_llamaindex", "from_openai", "from_perplexity",
    ],
    "citations.atomic": ["write_atomic"],
    "citations.audit": ["AuditReport", "InvalidToken", "audit"],
    "citations.chars": ["clean_text"],
    "citations.errors": [name for name in CITATIONS_ALL if name.endswith("Error")],
    "citations.extractors": ["aggregate_pools", "extract_sources", "find_extractor",
                             "register_extractor"],
    "citations.links": ["domain_of", "safe_link"],
    "citations.mdit_cite": ["cite_plugin"],
    "citations.model": ["Source"],
    "citations.numbering": ["CitationPlan", "format_numbers", "plan_citations"],
    "citations.pool": ["SourcePool"],
    "citations.registry": ["AsyncSourceRegistry", "SourceRegistry"],
    "citations.prompt": ["citation_guidelines", "sources_prompt_block"],
    "citations.sidecar": ["read_sidecar", "validate_sidecar"],
    "citations.store": ["STORE_NAME", "ArtifactRecord", "SourcesUsedStore"],
    "citations.streaming": ["StreamRewriter", "rewrite_stream"],
    "citations.tokens": ["Token", "citation_groups", "remap_tokens", "scan", "strip_tokens"],
    "citations.urls": ["normalize_url"],
}


def test_renderers_all_is_pinned_and_sorted() -> None:
    assert renderers.__all__ == RENDERERS_ALL
    assert renderers.__all__ == sorted(renderers.__all__)


def test_citations_all_is_pinned_and_sorted() -> None:
    assert citations.__all__ == CITATIONS_ALL
    assert citations.__all__ == sorted(citations.__all__)


def test_package_namespaces_show_exactly_all() -> None:
    """``dir(renderers)`` lists ``__all__`` (lazy names included); citations defines nothing
    public beyond ``__all__`` except its submodules."""
    assert dir(renderers) == sorted(renderers.__all__)
    own = {
        name for name, value in vars(citations).items()
        if not name.startswith("_") and getattr(value, "__module__", "").startswith("citations")
    }
    assert own == set(citations.__all__)


@pytest.mark.parametrize("path", sorted(PUBLIC_NAMES))
def test_public_import_path_keeps_its_names(path: str) -> None:
    module = importlib.import_module(path)
    missing = [name for name in PUBLIC_NAMES[path] if not hasattr(module, name)]
    assert not missing, f"{path} no longer exports {missing}"
    declared = getattr(module, "__all__", None)
    if declared is not None:
        assert set(declared) <= set(dir(module)), f"{path}.__all__ names a missing name"


def test_top_level_names_are_those_of_their_modules() -> None:
    from renderers import api, errors, options

    for name in RENDERERS_ALL:
        home = next(m for m in (api, options, errors) if hasattr(m, name))
        assert getattr(renderers, name) is getattr(home, name), name


def test_error_trees() -> None:
    from renderers.errors import RenderError

    for name in RENDERER_ERRORS:
        assert issubclass(getattr(renderers, name), RenderError), name
    for name in CITATIONS_ALL:
        if name.endswith("Error") and name != "CitationError":
            assert issubclass(getattr(citations, name), citations.CitationError), name


def test_every_error_class_the_readme_names_can_be_imported_from_the_package() -> None:
    """``from renderers import OverwriteError`` (and ``OptionError``) failed although the README
    tells callers to catch them."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([A-Z][A-Za-z]*Error)`", readme))
    assert {"OptionError", "OverwriteError"} <= named
    missing = [
        n for n in named - {"OSError"} if not hasattr(renderers, n) and not hasattr(citations, n)
    ]
    assert not missing, missing



#: What a file the Packages table names ends in (else the name is a function's or a class's).
FILE_SUFFIXES = (".py", ".js", ".j2", ".typ", ".css")


def _package_rows() -> list[tuple[list[str], str]]:
    """docs/architecture.md's Packages table: each row's named paths and its job."""
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = doc.split("\n## Packages\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in table.splitlines():
        if line.startswith("| `"):
            cell, job = line[2:].split(" | ", 1)
            rows.append((re.findall(r"`([^`]+)`", cell), job))
    return rows


def test_every_module_has_a_row_in_the_architecture_page() -> None:
    """A module added without a row, or a row left naming a file that was moved, makes the page
    the guide keeps true lie. A row names files by path, its siblings by name (``png.py``) or
    from a parent (``html/images.py``); a package row (``renderers/math/``) names its modules in
    its text."""
    named: set[Path] = set()
    missing: list[str] = []
    for names, job in _package_rows():
        base = (ROOT / names[0]).parent
        for name in names:
            if name.endswith("/"):
                package = ROOT / name
                stems = {t.split(".")[0] for t in re.findall(r"`([\w.]+)", job)}
                named.update(f for f in package.rglob("*.py") if f.stem in stems)
                continue
            if Path(name).suffix not in FILE_SUFFIXES:
                continue  # a function beside the files (`svg.table_gaps`)
            found = next((c for c in (ROOT / name, base / name, base.parent / name) if c.exists()),
                         None)
            if found is None:
                missing.append(name)
            else:
                named.add(found)
    modules = {f for top in ("renderers", "citations") for f in (ROOT / top).rglob("*.py")
               if f.stem != "__init__" or f.parent.name == "writers"}
    assert not missing, f"rows name files that do not exist: {missing}"
    rowless = sorted(str(f.relative_to(ROOT)) for f in modules - named)
    assert not rowless, f"modules without a row in docs/architecture.md: {rowless}"


def test_every_runtime_dependency_says_why_in_the_readme() -> None:
    """The README's dependency table names each package pyproject.toml installs."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Dependencies and why each is there", 1)[1].split("\n## ", 1)[0]
    listed = {name.strip() for line in table.splitlines() if line.startswith("| ")
              for name in re.split(r"[,/]", line.split(" | ")[0].removeprefix("| "))}
    required = [re.split(r"[\[<>=!~; ]", dep, maxsplit=1)[0] for dep in project["dependencies"]]
    assert [dep for dep in required if dep not in listed] == []
