"""Gemini answers: ``groundingMetadata`` with ``groundingChunks`` and ``groundingSupports``.

Shapes read: a ``generateContent`` response (``{"candidates": [{"content": {"parts": [...]},
"groundingMetadata": {...}}]}``, first candidate) or one candidate, in the REST API's camelCase
or the google-genai SDK's snake_case (``grounding_metadata``, ``grounding_supports`` …). The
text is the candidate's text parts in order (``thought`` parts left out), with code the model
ran and its output as code blocks between them; other parts are left out with a warning.

Offsets — what the documentation says (ai.google.dev/api/generate-content#Segment; Vertex AI
``GroundingSupport.segment``, cloud.google.com/vertex-ai/generative-ai/docs/reference/rest):
``startIndex`` is the "start index in the given Part, measured in bytes. Offset from the start
of the Part, inclusive, starting at zero"; ``endIndex`` the "end index in the given Part,
measured in bytes … exclusive"; ``partIndex`` "the index of a Part object within its parent
Content object". So offsets are **UTF-8 bytes** within one part: ``é`` counts 2, a CJK
character 3, an emoji 4. proto3 JSON leaves zero values out, so a missing ``startIndex`` or
``partIndex`` is 0. ``segment.text``, when given, must be the text those bytes hold; if it is
not, but the same numbers read as characters (or UTF-16 units) give it, those are used, with a
warning — some proxies re-count offsets. An offset inside a character raises
:class:`~citations.errors.AnswerError` naming the field.

Each support's citation goes at its segment's end and names ``groundingChunkIndices`` into
``groundingChunks`` (``web`` pages, ``retrievedContext`` documents, ``maps`` places);
``sid_map`` maps chunk index + 1 to the sid. A RAG Engine chunk's ``ragChunk.pageSpan``
(``firstPage``–``lastPage``, 1-indexed, inclusive) becomes its row's ``location``; chunks of one
file (one ``uri``) are one source, its pages merged (:mod:`citations.locations`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from citations.adapters.base import (
    AdaptedAnswer,
    Draft,
    MarkSet,
    OffsetUnit,
    TextOffsets,
    as_index,
    as_list,
    as_object,
    as_text,
    child,
    field_of,
    finish,
    first,
    marked_text,
    new_draft,
    settle,
)
from citations.errors import AnswerError
from citations.links import domain_of, host_name
from citations.locations import PageSet

GROUNDING = "Gemini response with groundingMetadata (groundingChunks + groundingSupports)"
_UNITS: tuple[OffsetUnit, ...] = ("utf8", "codepoints", "utf16")


def recognize(answer: object) -> str | None:
    """The shape ``answer`` has among Gemini's, or None."""
    if not isinstance(answer, Mapping):
        return None
    candidates = answer.get("candidates")
    if isinstance(candidates, list) and candidates and isinstance(candidates[0], Mapping):
        answer = candidates[0]
        if "content" not in answer and first(answer, "finishReason", "finish_reason"):
            return GROUNDING  # a candidate the model gave no content (blocked, cut short)
    elif first(answer, "promptFeedback", "prompt_feedback") is not None and not candidates:
        return GROUNDING  # a prompt blocked before any candidate
    content = answer.get("content")
    if isinstance(content, Mapping) and isinstance(content.get("parts"), list) and (
        "candidates" in answer or first(answer, "groundingMetadata", "grounding_metadata")
        is not None or "finishReason" in answer or "finish_reason" in answer
        or content.get("role") == "model"
    ):
        return GROUNDING
    return None


def from_gemini(answer: Any, pool: object = None) -> AdaptedAnswer:
    """A Gemini grounded answer as markdown with ``[[S:n]]`` tokens.

    Raises :class:`~citations.errors.AnswerError` naming the malformed field.
    """
    answer = as_object(answer, "")
    if recognize(answer) is None:
        raise AnswerError(
            "", "not a Gemini answer; accepted: a response with 'candidates' or one candidate "
                "with 'content.parts'",
        )
    path = ""
    if not answer.get("candidates") and "content" not in answer:
        feedback, feedback_path = field_of(answer, "", "promptFeedback", "prompt_feedback")
        reason = first(as_object(feedback, feedback_path), "blockReason", "block_reason")
        blocked = f": the prompt was blocked ({reason})" if reason else ""
        raise AnswerError(feedback_path, f"the response has no candidate{blocked}")
    if isinstance(answer.get("candidates"), list):
        answer, path = as_object(answer["candidates"][0], "candidates[0]"), "candidates[0]"
    reason = first(answer, "finishReason", "finish_reason")
    ended = f" (finishReason {reason})" if reason not in (None, "STOP") else ""
    if "content" not in answer:
        raise AnswerError(child(path, "content"), f"the candidate has no content{ended}")
    parts = as_list(
        as_object(answer["content"], child(path, "content")).get("parts"),
        child(path, "content.parts"),
    )
    texts: dict[int, str] = {}
    for i, part in enumerate(parts):
        part = as_object(part, child(child(path, "content.parts"), i))
        if isinstance(part.get("text"), str) and not part.get("thought"):
            texts[i] = part["text"]
    if not texts:
        raise AnswerError(child(path, "content.parts"), f"no text part in the candidate{ended}")
    draft = new_draft(pool)
    metadata, meta_path = field_of(answer, path, "groundingMetadata", "grounding_metadata")
    marks = {i: MarkSet() for i in texts}
    if metadata is not None:
        metadata = as_object(metadata, meta_path)
        add_chunks(draft, metadata, meta_path)
        add_supports(draft, metadata, meta_path, texts, marks)
        _unsupported_chunks_at_end(draft, meta_path, texts, marks)
    for i, part in enumerate(parts):
        if i in texts:
            draft.extend(marked_text(texts[i], marks[i]))
        else:
            _other_part(draft, part, child(child(path, "content.parts"), i))
    return finish(draft, "gemini", GROUNDING)


def _unsupported_chunks_at_end(
    draft: Draft, path: str, texts: dict[int, str], marks: dict[int, MarkSet]
) -> None:
    """Cite every grounding chunk at the end of the answer when no support places any (the
    answer used them but does not say where), with a warning; they were listed nowhere."""
    numbers = list(dict.fromkeys(draft.collector.refs.values()))
    if not numbers or any(m.by_position for m in marks.values()):
        return
    last = max(texts)
    for number in numbers:
        marks[last].add(settle(texts[last], 0, len(texts[last])), number)
    count = len(numbers)
    draft.warnings.append(
        f"{path}: no groundingSupports place the {count} grounding chunk{'s' * (count != 1)}; "
        "cited at the end of the answer"
    )


def _other_part(draft: Draft, part: Mapping[str, Any], path: str) -> None:
    """A part that is not answer text: code the model ran and its output become code blocks
    (the text around them refers to them); a thought is not part of the answer; any other
    part (an image, a function call) is left out with a warning."""
    code, code_path = field_of(part, path, "executableCode", "executable_code")
    result, result_path = field_of(part, path, "codeExecutionResult", "code_execution_result")
    if code is not None:
        code = as_object(code, code_path)
        language = as_text(code.get("language"), child(code_path, "language"), optional=True)
        body = as_text(code.get("code"), child(code_path, "code"))
        _code_block(draft, body, "python" if language.upper() in ("", "PYTHON") else language)
    elif result is not None:
        result = as_object(result, result_path)
        output = as_text(result.get("output"), child(result_path, "output"), optional=True)
        _code_block(draft, output, "text")
    elif not part.get("thought"):
        kind = next((k for k in part if k not in ("thought", "thoughtSignature",
                                                 "thought_signature")), "empty")
        draft.warnings.append(f"{path}: {kind} is not answer text; left out")


def _code_block(draft: Draft, body: str, language: str) -> None:
    """``body`` as a fenced code block of its own (a fence longer than any backtick run in it)."""
    fence = "`" * max([3, *(len(run) + 1 for run in re.findall(r"`{3,}", body))])
    draft.paragraph_break()
    draft.text(f"{fence}{language.lower()}\n{body.rstrip(chr(10))}\n{fence}")
    draft.paragraph_break()


def add_chunks(draft: Draft, metadata: Mapping[str, Any], path: str) -> None:
    """Name the sources of ``groundingChunks`` (the answer's own numbers: chunk index + 1)."""
    chunks, chunks_path = field_of(metadata, path, "groundingChunks", "grounding_chunks")
    for i, chunk in enumerate(as_list(chunks or [], chunks_path)):
        where = child(chunks_path, i)
        chunk = as_object(chunk, where)
        web, web_path = field_of(chunk, where, "web")
        retrieved, retrieved_path = field_of(chunk, where, "retrievedContext", "retrieved_context")
        place, place_path = field_of(chunk, where, "maps")
        pages = PageSet()
        identity = None  # the row's dedupe key: its URL, else its content
        if web is not None:
            web = as_object(web, web_path)
            uri = as_text(web.get("uri"), child(web_path, "uri"))
            title = as_text(web.get("title"), child(web_path, "title"), optional=True)
            row = {"url": uri, "title": title or domain_of(uri), "source_type": "web"}
            # The uri is usually Google's grounding redirect: the site is named beside it, in
            # ``domain`` or else in the title (which Google Search grounding sets to the
            # site's domain), and the Sources entry shows that (citations.links.source_domain).
            domain = host_name(web.get("domain")) or host_name(title)
            if domain:
                row["domain"] = domain
        elif retrieved is not None:
            retrieved = as_object(retrieved, retrieved_path)
            uri = as_text(retrieved.get("uri"), child(retrieved_path, "uri"), optional=True)
            title = as_text(retrieved.get("title"), child(retrieved_path, "title"), optional=True)
            row = {"title": title or uri, "text": as_text(retrieved.get("text"),
                   child(retrieved_path, "text"), optional=True), "source_type": "retrieval"}
            if uri.startswith(("http://", "https://")):
                row["url"] = uri
            elif uri:
                row["artifact_path"] = uri
                identity = f"file:{uri}"  # chunks of one file (gs://…) are one source
            pages = _rag_pages(retrieved, retrieved_path)
        elif place is not None:
            place = as_object(place, place_path)
            uri = as_text(place.get("uri"), child(place_path, "uri"))
            row = {"url": uri, "title": as_text(place.get("title"), child(place_path, "title"),
                                                optional=True), "source_type": "place"}
        else:
            raise AnswerError(where, "a grounding chunk holds 'web', 'retrievedContext' or 'maps'")
        draft.collector.add(row, where, ref=i + 1, pages=pages, identity=identity)


def _rag_pages(retrieved: Mapping[str, Any], path: str) -> PageSet:
    """The pages of a RAG Engine chunk: ``ragChunk.pageSpan`` ``firstPage``–``lastPage``,
    1-indexed and inclusive (Vertex AI's ``RagChunk.PageSpan``); none when it is not given."""
    pages = PageSet()
    chunk, chunk_path = field_of(retrieved, path, "ragChunk", "rag_chunk")
    if not isinstance(chunk, Mapping):
        return pages
    span, span_path = field_of(chunk, chunk_path, "pageSpan", "page_span")
    if span is None:
        return pages
    span = as_object(span, span_path)
    first_value, first_path = field_of(span, span_path, "firstPage", "first_page")
    last_value, last_path = field_of(span, span_path, "lastPage", "last_page")
    first = as_index(first_value, first_path)
    last = first if last_value is None else as_index(last_value, last_path)
    if first < 1:
        raise AnswerError(first_path, f"{first} is below 1 (pages count from 1)")
    if last < first:
        raise AnswerError(last_path, f"{last} is before firstPage {first} (both inclusive)")
    pages.add(first, last)
    return pages


def add_supports(
    draft: Draft,
    metadata: Mapping[str, Any],
    path: str,
    texts: dict[int, str],
    marks: dict[int, MarkSet],
) -> None:
    """Mark each support's citation at its segment's end in ``texts`` (by part index)."""
    supports, supports_path = field_of(metadata, path, "groundingSupports", "grounding_supports")
    refs = draft.collector.refs
    offsets = {i: TextOffsets(text) for i, text in texts.items()}
    for k, support in enumerate(as_list(supports or [], supports_path)):
        where = child(supports_path, k)
        support = as_object(support, where)
        segment, seg_path = field_of(support, where, "segment")
        segment = as_object(segment, seg_path)
        part_value, part_path = field_of(segment, seg_path, "partIndex", "part_index")
        part = as_index(part_value or 0, part_path)
        if part not in texts:
            raise AnswerError(part_path, f"{part} names no text part of the candidate")
        start_value, start_path = field_of(segment, seg_path, "startIndex", "start_index")
        end_value, end_path = field_of(segment, seg_path, "endIndex", "end_index")
        start = as_index(start_value or 0, start_path)
        end = as_index(end_value, end_path)
        if start > end:
            raise AnswerError(start_path, f"{start} is after endIndex {end}")
        expected = segment.get("text")
        begin, stop = _segment(draft, offsets[part], start, end, start_path, end_path,
                               expected if isinstance(expected, str) else None, seg_path)
        indices, indices_path = field_of(
            support, where, "groundingChunkIndices", "grounding_chunk_indices"
        )
        for j, index in enumerate(as_list(indices or [], indices_path)):
            index = as_index(index, child(indices_path, j))
            if index + 1 not in refs:
                raise AnswerError(
                    child(indices_path, j), f"{index} names no grounding chunk ({len(refs)} given)"
                )
            marks[part].add(settle(texts[part], begin, stop), refs[index + 1])


def _segment(
    draft: Draft,
    offsets: TextOffsets,
    start: int,
    end: int,
    start_path: str,
    end_path: str,
    expected: str | None,
    seg_path: str,
) -> tuple[int, int]:
    """The ``str`` span of a segment's byte offsets (checked against ``segment.text``)."""
    try:
        span = (offsets.index(start, "utf8", start_path), offsets.index(end, "utf8", end_path))
    except AnswerError:
        if expected is None:
            raise
        span = None
    if expected is None or (span and offsets.text[span[0] : span[1]] == expected):
        assert span is not None
        return span
    for unit in _UNITS[1:]:
        try:
            other = (offsets.index(start, unit, start_path), offsets.index(end, unit, end_path))
        except AnswerError:
            continue
        if offsets.text[other[0] : other[1]] == expected:
            draft.warnings.append(
                f"{seg_path}: offsets match segment.text only when read as {unit} "
                "(the API counts UTF-8 bytes); read that way"
            )
            return other
    if span is None:
        offsets.index(start, "utf8", start_path)
        offsets.index(end, "utf8", end_path)
    draft.warnings.append(f"{seg_path}: segment.text differs from the text at its offsets")
    assert span is not None
    return span
