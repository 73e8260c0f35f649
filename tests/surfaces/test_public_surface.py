"""The public surface, pinned (httpx-style): ``renderers.__all__``, ``citations.__all__`` and
the names users import from each public module.

The package ``__all__`` lists are pinned exactly. A public module may gain names freely, but
removing or renaming a pinned one fails here on purpose: change the pin only together with a
note in the README that the import path changed.
"""

from __future__ import annotations

import importlib

import pytest

import citations
import renderers

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
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([A-Z][A-Za-z]*Error)`", readme))
    assert {"OptionError", "OverwriteError"} <= named
    missing = [
        n for n in named - {"OSError"} if not hasattr(renderers, n) and not hasattr(citations, n)
    ]
    assert not missing, missing
