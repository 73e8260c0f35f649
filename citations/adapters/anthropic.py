"""Anthropic answers: Messages API content blocks whose ``citations`` point into sources.

Shapes read: a Message (``{"type": "message", "role": "assistant", "content": [blocks]}``) or
its bare ``content`` list. ``text`` blocks are concatenated in order (Claude splits its answer
into blocks exactly where citations apply); ``web_search_tool_result`` blocks name the pages a
search returned; other blocks (thinking, tool use) carry no answer text.

Offsets — what the documentation says (platform.claude.com/docs/en/build-with-claude/citations,
"How citations work"; /agents-and-tools/tool-use/web-search-tool;
/build-with-claude/search-results):

- A citation carries no offset into the answer: it belongs to the ``text`` block it is attached
  to, and the block is the cited span. The token goes right after the block's text (before white
  space that ends the block).
- Offsets inside citations point into the *source*: ``char_location`` —
  ``start_char_index`` 0-indexed, ``end_char_index`` exclusive, counted in characters of the
  plain-text document; ``page_location`` — ``start_page_number`` 1-indexed,
  ``end_page_number`` exclusive (PDF pages); ``content_block_location`` and
  ``search_result_location`` — ``start_block_index``/``end_block_index`` 0-indexed, end
  exclusive, over the document's (or search result's) content blocks. All are validated; the
  pages become the source row's ``location`` (every page the document is cited at, merged:
  ``"pages 3–4, 7"`` — :mod:`citations.locations`), while character and block offsets count
  into the API's copy of the text, which a reader does not have, and are not kept;
  ``cited_text`` becomes the row's text.
- ``web_search_result_location`` names a page by ``url``/``title`` with the ``cited_text``;
  the ``page_age`` of the matching search result becomes its date.

One source per document (``document_index``), per search result (``source``) and per URL.
Streaming: ``citations_delta`` events (see :mod:`citations.adapters.streams`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from citations.adapters.base import (
    AdaptedAnswer,
    Draft,
    as_index,
    as_list,
    as_object,
    as_text,
    child,
    cited_at_end,
    finish,
    new_draft,
)
from citations.errors import AnswerError
from citations.links import safe_link
from citations.locations import PageSet

MESSAGE = "Anthropic Messages content blocks with citations"


def recognize(answer: object) -> str | None:
    """The shape ``answer`` has among Anthropic's, or None."""
    blocks: object = None
    if isinstance(answer, Mapping) and (
        answer.get("type") == "message" or answer.get("role") == "assistant"
    ):
        blocks = answer.get("content")
    elif isinstance(answer, list):
        blocks = answer
    if not isinstance(blocks, list) or not blocks:
        return None
    if not all(isinstance(b, Mapping) and isinstance(b.get("type"), str) for b in blocks):
        return None
    if any(b["type"] == "text" for b in blocks) and not any(
        b["type"] == "output_text" for b in blocks
    ):
        return MESSAGE
    return None


def from_anthropic(answer: Any, pool: object = None) -> AdaptedAnswer:
    """An Anthropic Message (or its content blocks) as markdown with ``[[S:n]]`` tokens.

    ``pool`` receives the cited pages and documents (a URL it holds keeps its sid). Raises
    :class:`~citations.errors.AnswerError` naming the malformed field.
    """
    if recognize(answer) is None:
        raise AnswerError(
            "",
            "not an Anthropic answer; accepted: a Message ({'type': 'message', 'content': "
            "[blocks]}) or its content blocks, with at least one text block",
        )
    if isinstance(answer, Mapping):
        blocks, path = answer["content"], "content"
    else:
        blocks, path = answer, ""
    draft = new_draft(pool)
    for i, block in enumerate(blocks):
        read_block(draft, block, child(path, i) if path else f"[{i}]")
    return finish(draft, "anthropic", MESSAGE)


def read_block(draft: Draft, block: Mapping[str, Any], path: str) -> None:
    """Add one content block: a text block's pieces, a search result's sources."""
    kind = block.get("type")
    if kind != "text":
        draft.paragraph_break()  # the answer resumes after a tool call or its result
    if kind == "web_search_tool_result":
        add_search_results(draft, block, path)
    elif kind == "text":
        text = as_text(block.get("text"), child(path, "text"))
        numbers = cited_sources(draft, block, path)
        draft.extend(cited_at_end(text, numbers))


def cited_sources(draft: Draft, block: Mapping[str, Any], path: str) -> list[int]:
    """The local sources a text block's ``citations`` name, in order, each once."""
    citations = as_list(block.get("citations") or [], child(path, "citations"))
    numbers: list[int] = []
    for k, citation in enumerate(citations):
        number = add_citation(draft, citation, child(child(path, "citations"), k))
        if number is not None and number not in numbers:
            numbers.append(number)
    return numbers


def add_search_results(draft: Draft, block: Mapping[str, Any], path: str) -> None:
    """Name every page of a ``web_search_tool_result`` (an error result gives a warning)."""
    content = block.get("content")
    if isinstance(content, Mapping):
        code = content.get("error_code", "unknown")
        draft.warnings.append(f"{path}: the web search failed ({code}); no results")
        return
    for j, result in enumerate(as_list(content, child(path, "content"))):
        where = child(child(path, "content"), j)
        result = as_object(result, where)
        if result.get("type") != "web_search_result":
            continue
        url = as_text(result.get("url"), child(where, "url"))
        draft.collector.add(
            {
                "url": url,
                "title": as_text(result.get("title"), child(where, "title"), optional=True),
                "published_at": as_text(result.get("page_age"), child(where, "page_age"),
                                        optional=True),
                "source_type": "web",
            },
            where,
        )


def add_citation(draft: Draft, citation: object, path: str) -> int | None:
    """Name the source of one citation; return its local number (None: not a citation)."""
    citation = as_object(citation, path)
    kind = citation.get("type")
    cited = as_text(citation.get("cited_text"), child(path, "cited_text"), optional=True)
    title = as_text(
        citation.get("title", citation.get("document_title")),
        child(path, "title" if "title" in citation else "document_title"),
        optional=True,
    )
    if kind == "web_search_result_location":
        url = as_text(citation.get("url"), child(path, "url"))
        return draft.collector.add(
            {"url": url, "title": title, "text": cited, "source_type": "web"}, path
        )
    if kind in ("char_location", "page_location", "content_block_location"):
        index = as_index(citation.get("document_index"), child(path, "document_index"))
        row = {
            "title": title or f"Document {index + 1}",
            "text": cited,
            "source_type": "document",
            "document_index": index,
        }
        return draft.collector.add(row, path, identity=f"document:{index}",
                                   pages=_pages(citation, kind, path))
    if kind == "search_result_location":
        source = as_text(citation.get("source"), child(path, "source"))
        row = {
            "title": title or source,
            "text": cited,
            "source_type": "search_result",
        }
        _pages(citation, kind, path)  # validated; blocks are no location a reader can use
        if safe_link(source) and source.startswith(("http://", "https://")):
            row["url"] = source
        else:
            row["artifact_path"] = source
        return draft.collector.add(row, path, identity=f"search_result:{source}")
    draft.warnings.append(f"{path}: citation type {kind!r} is not known; skipped")
    return None


_RANGES: dict[str, tuple[str, str, str, int]] = {
    "char_location": ("start_char_index", "end_char_index", "characters", 0),
    "page_location": ("start_page_number", "end_page_number", "pages", 1),
    "content_block_location": ("start_block_index", "end_block_index", "blocks", 0),
    "search_result_location": ("start_block_index", "end_block_index", "blocks", 0),
}


def _pages(citation: Mapping[str, Any], kind: str, path: str) -> PageSet:
    """The pages a citation points at (none but for ``page_location``), its exclusive range
    validated whatever its unit."""
    start_name, end_name, unit, lowest = _RANGES[kind]
    start = as_index(citation.get(start_name), child(path, start_name))
    end = as_index(citation.get(end_name), child(path, end_name))
    if start < lowest:
        raise AnswerError(child(path, start_name), f"{start} is below {lowest} ({unit} count "
                          f"from {lowest})")
    if end <= start and not (kind == "char_location" and end == start):
        raise AnswerError(child(path, end_name), f"{end} is not after {start_name} {start} "
                          "(the end is exclusive)")
    pages = PageSet()
    if unit == "pages":
        pages.add(start, end - 1)
    return pages
