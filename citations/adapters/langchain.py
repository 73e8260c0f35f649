"""LangChain answers: AI messages with citation content blocks, and retrieval-chain outputs.

Shapes read:

- an ``AIMessage`` as a dict (``{"type": "ai", "content": …}``), in LangChain's serialized
  form (``{"lc": 1, "type": "constructor", "id": [… "AIMessage"], "kwargs": {…}}``) or the last
  AI message of a LangGraph state (``{"messages": [...]}``). Its ``text`` content blocks are
  concatenated; their ``annotations`` may be LangChain's standard ``citation`` blocks
  (``url``, ``title``, ``start_index``, ``end_index``, ``cited_text`` —
  reference.langchain.com/python/langchain-core/messages/content/Citation) or the provider's own
  ``url_citation`` annotations, and Anthropic-backed blocks keep Anthropic's ``citations``;
- a retrieval chain's output: ``{"answer" | "result": str, "context" | "source_documents":
  [Document]}``, optionally with ``"citations"``: source ids (``[0, 2]``, the ``CitedAnswer``
  of LangChain's "How to get a RAG application to add citations", ids counting the context
  documents from 0) or ``[{"source_id": 0, "quote": "…"}]`` (``QuotedAnswer``). The citation
  goes at the end of the answer; without ``citations``, the answer cites all its context
  documents there. Documents of one source — one URL, or one file (``metadata.source``, else
  ``file_path`` / ``path``: the path as given) — are one Sources entry, numbered where first
  retrieved; its text is its first cited document's, its ``location`` the pages of its cited
  documents (``metadata.page_label``, else ``metadata.page`` + 1: the PDF loaders count it
  from 0), ``"pages 2, 5"``.

Offsets: LangChain's ``Citation`` documents ``start_index``/``end_index`` as indices of the
*response text* (not the source) and passes providers' indices through unchanged; LangChain is
Python, so they are ``str`` indices — Unicode code points, end exclusive (as OpenAI's, whose
annotations LangChain carries). A citation without indices cites its whole text block (placed
at its end). Anthropic ``citations`` are read as :mod:`citations.adapters.anthropic` reads them;
a Gemini message's ``response_metadata.grounding_metadata`` (ChatGoogleGenerativeAI puts it there,
byte offsets into the text) as :mod:`citations.adapters.gemini` reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from citations.adapters import anthropic, gemini
from citations.adapters.base import (
    AdaptedAnswer,
    Chunk,
    Draft,
    MarkSet,
    TextOffsets,
    add_retrieved,
    as_index,
    as_list,
    as_object,
    as_text,
    child,
    cited_at_end,
    field_of,
    finish,
    marked_text,
    new_draft,
    settle,
)
from citations.adapters.openai import add_annotation
from citations.errors import AnswerError
from citations.links import domain_of
from citations.locations import PageSet
from citations.urls import normalize_path, normalize_url

MESSAGE = "LangChain AIMessage with citation content blocks"
RETRIEVAL = "LangChain retrieval output (answer + context documents)"
_AI_TYPES = ("ai", "AIMessage", "AIMessageChunk")
_ANSWER_KEYS = ("answer", "result", "output_text", "output")
_DOC_KEYS = ("context", "source_documents", "documents")


def recognize(answer: object) -> str | None:
    """The shape ``answer`` has among LangChain's, or None."""
    if not isinstance(answer, Mapping):
        return None
    if _message(answer) is not None:
        return MESSAGE
    if _answer_key(answer) and _docs_key(answer):
        return RETRIEVAL
    return None


def _unwrap(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """LangChain's serialized form ``{"lc": 1, "type": "constructor", "kwargs": {…}}`` → kwargs
    (with the class name as its type)."""
    if obj.get("lc") == 1 and obj.get("type") == "constructor" and isinstance(
        obj.get("kwargs"), Mapping
    ):
        ident = obj.get("id")
        name = ident[-1] if isinstance(ident, list) and ident else ""
        return {"type": name, **obj["kwargs"]}
    return obj


def _message(obj: Mapping[str, Any]) -> tuple[Mapping[str, Any], str] | None:
    """The AI message ``obj`` is (or, for a LangGraph state, ends with) and its path."""
    unwrapped = _unwrap(obj)
    if unwrapped.get("type") in _AI_TYPES and "content" in unwrapped:
        return unwrapped, ""
    messages = obj.get("messages")
    if isinstance(messages, list):
        for i in range(len(messages) - 1, -1, -1):
            item = messages[i]
            if isinstance(item, Mapping):
                found = _unwrap(item)
                if found.get("type") in _AI_TYPES and "content" in found:
                    return found, child("messages", i)
    return None


def _answer_key(obj: Mapping[str, Any]) -> str | None:
    return next((k for k in _ANSWER_KEYS if isinstance(obj.get(k), str)), None)


def _docs_key(obj: Mapping[str, Any]) -> str | None:
    for key in _DOC_KEYS:
        docs = obj.get(key)
        if isinstance(docs, list) and all(
            isinstance(d, Mapping) and "page_content" in _unwrap(d) for d in docs
        ):
            return key
    return None


def from_langchain(answer: Any, pool: object = None) -> AdaptedAnswer:
    """A LangChain AI message or retrieval output as markdown with ``[[S:n]]`` tokens.

    Raises :class:`~citations.errors.AnswerError` naming the malformed field.
    """
    answer = as_object(answer, "")
    draft = new_draft(pool)
    found = _message(answer)
    if found is not None:
        message, path = found
        _read_message(draft, message, path)
        return finish(draft, "langchain", MESSAGE)
    text_key, docs_key = _answer_key(answer), _docs_key(answer)
    if text_key is None or docs_key is None:
        raise AnswerError(
            "", "not a LangChain answer; accepted: an AIMessage (dict or serialized), a "
                "LangGraph state with messages, or {'answer': str, 'context': [Document]}",
        )
    _read_retrieval(draft, answer, text_key, docs_key)
    return finish(draft, "langchain", RETRIEVAL)


def _read_message(draft: Draft, message: Mapping[str, Any], path: str) -> None:
    content = message.get("content")
    content_path = child(path, "content")
    if isinstance(content, str):
        if not _grounded(draft, message, path, content):
            draft.text(content)
        return
    for i, block in enumerate(as_list(content, content_path)):
        where = child(content_path, i)
        if isinstance(block, str):
            draft.text(block)
            continue
        block = as_object(block, where)
        if block.get("type") not in ("text", "output_text"):
            draft.paragraph_break()
            continue
        text = as_text(block.get("text"), child(where, "text"))
        if block.get("citations"):
            draft.extend(cited_at_end(text, anthropic.cited_sources(draft, block, where)))
            continue
        marks = MarkSet()
        offsets = TextOffsets(text)
        annotations = as_list(block.get("annotations") or [], child(where, "annotations"))
        for k, annotation in enumerate(annotations):
            _annotate(draft, marks, offsets, annotation, child(child(where, "annotations"), k))
        draft.extend(marked_text(text, marks))


def _grounded(draft: Draft, message: Mapping[str, Any], path: str, text: str) -> bool:
    """Read ``text`` with the Gemini grounding that ChatGoogleGenerativeAI leaves in
    ``response_metadata.grounding_metadata`` (UTF-8 byte offsets into the text, as Gemini's);
    False when there is none."""
    metadata_of, metadata_path = field_of(message, path, "response_metadata")
    if not isinstance(metadata_of, Mapping):
        return False
    grounding, grounding_path = field_of(metadata_of, metadata_path, "grounding_metadata",
                                         "groundingMetadata")
    if grounding is None:
        return False
    grounding = as_object(grounding, grounding_path)
    marks = {0: MarkSet()}
    gemini.add_chunks(draft, grounding, grounding_path)
    gemini.add_supports(draft, grounding, grounding_path, {0: text}, marks)
    draft.extend(marked_text(text, marks[0]))
    return True


def _annotate(
    draft: Draft, marks: MarkSet, offsets: TextOffsets, annotation: object, path: str
) -> None:
    annotation = as_object(annotation, path)
    if annotation.get("type") != "citation":
        add_annotation(draft, marks, offsets, annotation, path, keep_inline_links=True)
        return
    url = as_text(annotation.get("url"), child(path, "url"), optional=True)
    title = as_text(annotation.get("title"), child(path, "title"), optional=True)
    cited = as_text(annotation.get("cited_text"), child(path, "cited_text"), optional=True)
    row: dict[str, Any] = {"url": url, "title": title or domain_of(url), "text": cited,
                           "source_type": "web" if url else "document"}
    identity = None
    if not url:
        name = title or cited or "untitled"
        row["title"] = title or "Cited document"
        identity = f"document:{name}"
    number = draft.collector.add(row, path, identity=identity)
    text = offsets.text
    if "end_index" in annotation and annotation["end_index"] is not None:
        end_path = child(path, "end_index")
        end = offsets.index(as_index(annotation["end_index"], end_path), "codepoints", end_path)
        start_path = child(path, "start_index")
        start_value = annotation.get("start_index")
        start = 0 if start_value is None else offsets.index(
            as_index(start_value, start_path), "codepoints", start_path
        )
        if start > end:
            raise AnswerError(start_path, f"{start} is after end_index {end}")
        marks.add(settle(text, start, end), number)
    else:
        marks.add(settle(text, 0, len(text)), number)


def _read_retrieval(draft: Draft, answer: Mapping[str, Any], text_key: str, docs_key: str) -> None:
    docs = answer[docs_key]
    chunks = [_document_chunk(_unwrap(doc), child(docs_key, i), i) for i, doc in enumerate(docs)]
    cited = _cited_ids(answer, len(docs))
    add_retrieved(draft.collector, chunks, list(dict.fromkeys(i + 1 for i in cited)))
    refs = draft.collector.refs
    numbers = list(dict.fromkeys(refs[i + 1] for i in cited))
    draft.extend(cited_at_end(answer[text_key], numbers))


def _cited_ids(answer: Mapping[str, Any], count: int) -> list[int]:
    """The 0-based ids of the context documents the answer cites (all when it names none)."""
    if "citations" not in answer:
        return list(range(count))
    ids: list[int] = []
    for j, item in enumerate(as_list(answer["citations"], "citations")):
        where = child("citations", j)
        if isinstance(item, Mapping):
            value, where = item.get("source_id"), child(where, "source_id")
        else:
            value = item
        index = as_index(value, where)
        if index >= count:
            raise AnswerError(where, f"{index} names no context document ({count} given, from 0)")
        ids.append(index)
    return ids


def _document_chunk(doc: Mapping[str, Any], path: str, index: int) -> Chunk:
    """A LangChain ``Document`` (context document ``index``, from 0) as a chunk of its source:
    a web page (``source``/``url`` is http(s)) or a file shown by its name (never its full
    path); documents of one URL or one file path are one source."""
    content = as_text(doc.get("page_content"), child(path, "page_content"))
    meta = doc.get("metadata") or {}
    meta = as_object(meta, child(path, "metadata"))
    location = next(
        (v for k in ("url", "source", "file_path", "path") if isinstance(v := meta.get(k), str)
         and v.strip()), "",
    )
    row: dict[str, Any] = {"content": content, "source_type": "document"}
    name = location.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    identity = f"document:{index}"
    if location.startswith(("http://", "https://")):
        row["url"] = location
        row["source_type"] = "web"
        identity = "url:" + normalize_url(location)
    elif location:
        row["artifact_path"] = name
        identity = "file:" + normalize_path(location)
    title = meta.get("title")
    row["title"] = title if isinstance(title, str) and title else name or domain_of(location)
    for key in ("published_at", "date", "published"):
        if isinstance(meta.get(key), str):
            row["published_at"] = meta[key]
            break
    return Chunk(index + 1, row, path, identity, _document_page(doc))


def _document_page(doc: Mapping[str, Any]) -> PageSet:
    """The page a ``Document`` is from: ``metadata.page_label`` (the page's own label, as
    recent PDF loaders set it), else ``metadata.page`` — counted from 0 by LangChain's PDF
    loaders (PyPDFLoader, PyMuPDFLoader, PDFPlumberLoader), so page 0 is page 1."""
    pages = PageSet()
    meta = doc.get("metadata")
    if not isinstance(meta, Mapping):
        return pages
    label, page = meta.get("page_label"), meta.get("page")
    if label not in (None, ""):
        pages.add_page(label)
    elif isinstance(page, int) and not isinstance(page, bool) and page >= 0:
        pages.add(page + 1, page + 1)
    return pages
