"""LlamaIndex answers: a query engine's ``Response`` with its ``source_nodes``.

Shape read: ``{"response": str, "source_nodes": [{"node": {...}, "score": 0.8}], "metadata":
{...}}`` — a ``Response`` as a dict (``dataclasses.asdict`` or the object itself; nodes as
``NodeWithScore.model_dump()``). A node's text is ``node.text`` (or ``text_resource.text``),
its metadata the reader's (``file_name``, ``url``, ``title``, ``page_label`` …).

Numbering: ``CitationQueryEngine`` splits the retrieved nodes into chunks whose text starts
``"Source N:\\n"`` (N from 1, in ``source_nodes`` order) and the model cites them as ``[N]``
(llama_index.core.query_engine.citation_query_engine, ``_create_citation_nodes``). The number is
read from that prefix (else the node's position, from 1), the prefix is dropped from the row's
text, and the ``[N]`` markers become tokens (:mod:`citations.adapters.markers`). A response
without any marker — a plain query engine's — cites all its source nodes at its end.

Sources: nodes of one file (the same ``file_path`` and ``file_name``) or of one URL are one
source, numbered where first retrieved — CitationQueryEngine cuts one PDF into several "Source
N" chunks, and a reader looks for the PDF once in the Sources. Its row (text, score, node id)
is its first cited node's, so the text shown backs a claim.

Offsets: none in the answer (markers are found in the text). A cited node's page — the PDF
reader's ``page_label`` (the page's own label, 1-based unless the PDF names its pages), else
``page`` — goes into its source's ``location`` (``"page 4"``; nodes of one file cited at several
pages give ``"pages 3–4, 7"``, in the order first cited, :mod:`citations.locations`). Its
``start_char_idx`` / ``end_char_idx`` count into the node's source text, which the reader does
not have, and are not kept.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from citations.adapters.base import (
    AdaptedAnswer,
    Chunk,
    add_retrieved,
    as_list,
    as_object,
    as_text,
    child,
    cited_at_end,
    finish,
    new_draft,
    renumbered,
)
from citations.adapters.markers import replace_markers
from citations.errors import AnswerError
from citations.locations import PageSet
from citations.urls import normalize_path, normalize_url

RESPONSE = "LlamaIndex Response with source_nodes"
_SOURCE_PREFIX = re.compile(r"\A\s*Source\s+(\d{1,4})\s*:\s*\n?")


def recognize(answer: object) -> str | None:
    """The shape ``answer`` has among LlamaIndex's, or None."""
    if (
        isinstance(answer, Mapping)
        and isinstance(answer.get("source_nodes"), list)
        and isinstance(answer.get("response"), str)
    ):
        return RESPONSE
    return None


def from_llamaindex(answer: Any, pool: object = None) -> AdaptedAnswer:
    """A LlamaIndex ``Response`` as markdown with ``[[S:n]]`` tokens.

    ``sid_map`` maps each "Source N" number to its sid. Raises
    :class:`~citations.errors.AnswerError` naming the malformed field.
    """
    answer = as_object(answer, "")
    if recognize(answer) is None:
        raise AnswerError(
            "", "not a LlamaIndex answer; accepted: {'response': str, 'source_nodes': [...]}"
        )
    draft = new_draft(pool)
    chunks: list[Chunk] = []
    for i, item in enumerate(as_list(answer["source_nodes"], "source_nodes")):
        where = child("source_nodes", i)
        chunks.append(_node_chunk(as_object(item, where), where, i + 1))
    text = as_text(answer["response"], "response")
    numbers: dict[int, int] = {}  # "Source N" → the first node numbered N
    for chunk in chunks:
        numbers.setdefault(chunk.ref, chunk.ref)
    urls = {chunk.ref: chunk.row.get("url") for chunk in reversed(chunks)}
    pieces = replace_markers(draft, text, numbers, "response", url_of=urls.get)
    cited = list(dict.fromkeys(n for p in pieces if not isinstance(p, str) for n in p))
    add_retrieved(draft.collector, chunks, cited or list(numbers))
    refs = draft.collector.refs
    if cited:
        draft.extend(renumbered(pieces, refs))
    else:
        draft.extend(cited_at_end(text, list(dict.fromkeys(refs.values()))))
    return finish(draft, "llamaindex", RESPONSE)


def _node_chunk(item: Mapping[str, Any], path: str, position: int) -> Chunk:
    """One ``NodeWithScore`` as a chunk of its source: the page at its URL, else the file its
    ``file_path`` and ``file_name`` name (nodes of one file are one source), else itself."""
    node, node_path = item, path
    if isinstance(item.get("node"), Mapping):
        node, node_path = item["node"], child(path, "node")
    text = node.get("text")
    text_path = child(node_path, "text")
    if text is None and isinstance(node.get("text_resource"), Mapping):
        text, text_path = node["text_resource"].get("text"), child(node_path, "text_resource.text")
    text = as_text(text, text_path, optional=True)
    number = position
    prefix = _SOURCE_PREFIX.match(text)
    if prefix is not None:
        number, text = int(prefix.group(1)), text[prefix.end() :].strip()
    meta = as_object(node.get("metadata") or {}, child(node_path, "metadata"))

    def meta_text(*names: str) -> str:
        return next((v for n in names if isinstance(v := meta.get(n), str) and v), "")

    url = meta_text("url", "source_url", "link", "source")
    file_path = meta_text("file_path")
    name = meta_text("file_name", "filename") or file_path.replace("\\", "/").rsplit("/", 1)[-1]
    row: dict[str, Any] = {"text": text, "source_type": "document"}
    identity = f"node:{number}"
    if url.startswith(("http://", "https://")):
        row["url"], row["source_type"] = url, "web"
        identity = "url:" + normalize_url(url)
    elif name:
        row["artifact_path"] = name
        identity = f"file:{normalize_path(file_path)}\x00{name}"
    row["title"] = meta_text("title", "document_title") or name or url or f"Source {number}"
    pages = PageSet()
    pages.add_page(meta.get("page_label", meta.get("page")))
    score = item.get("score")
    if isinstance(score, int | float) and not isinstance(score, bool):
        row["relevance"] = float(score)
    node_id = node.get("id_", node.get("node_id"))
    if isinstance(node_id, str):
        row["node_id"] = node_id
    return Chunk(number, row, path, identity, pages)
