"""OpenAI answers: Responses ``output_text`` parts and Chat Completions messages with annotations.

Shapes read: a Responses object (``{"object": "response", "output": [...]}``) or one of its
``message`` output items, whose ``output_text`` parts carry ``annotations``; a Chat Completions
object (``{"choices": [{"message": …}]}``, first choice) or its ``message``, whose
``annotations`` hold ``{"type": "url_citation", "url_citation": {…}}``.

Offsets — what the documentation says and how it is read here:

- ``url_citation``: the API reference (platform.openai.com/docs/api-reference/responses/object,
  ``output_text.annotations``; /chat/object, ``message.annotations``) calls ``start_index``
  "the index of the first character of the URL citation in the message" and ``end_index`` "the
  index of the last character". The unit is *characters*; the service and the official Python
  SDK (``openai.types.responses.response_output_text.AnnotationURLCitation``) index Python
  strings, i.e. Unicode code points, and the documented examples have ``end_index - start_index``
  equal to the span's length, so ``end_index`` is exclusive. An emoji outside the BMP is one
  character here (two in a JavaScript string): offsets are never UTF-16 or bytes.
- ``file_citation`` (file search) and ``file_path`` carry one ``index``, "the position index in
  the message text where the file citation appears … by character index" (openai-python issue
  #2512, clarified in PR #2751): the citation is placed exactly there. A file-search marker
  the model wrote there itself, ``【4:0†source】`` (starting or ending at ``index``), is
  replaced by the token; one no annotation places stays as text, with a warning.
- ``container_file_citation`` has ``start_index``/``end_index`` like ``url_citation``.

Placement: the token goes at ``end_index`` (before white space that ends the span). Web search
answers usually render each citation themselves as an inline markdown link to the cited page,
``([example.com](https://example.com/…?utm_source=openai))``, and annotate exactly that link;
such a span is replaced by the token (with the space before it) unless
``keep_inline_links=True``, so a citation is not shown twice. Streaming: see
:mod:`citations.adapters.streams` (``response.output_text.annotation.added``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from citations.adapters.base import (
    AdaptedAnswer,
    Draft,
    MarkSet,
    TextOffsets,
    as_index,
    as_list,
    as_object,
    as_text,
    child,
    finish,
    marked_text,
    new_draft,
    settle,
)
from citations.errors import AnswerError
from citations.urls import normalize_url

RESPONSES = "OpenAI Responses output_text with url_citation annotations"
CHAT = "OpenAI Chat Completions message with url_citation annotations"

_LINK_TEXT = r"[^\[\]\n]{0,500}"
#: A URL character, or a parenthesized run of them: a link destination may hold balanced
#: parentheses one level deep, as CommonMark's may (``…/wiki/Solar_(disambiguation)?…``).
_URL_PIECE = r"(?:[^()\[\]\s]|\([^()\[\]\s]*\))"
_LINK_URL = rf"{_URL_PIECE}+"
#: Longest link destination taken for a cited link.
MAX_URL_CHARS = 2000
_INLINE_LINK = re.compile(
    rf"\(\[{_LINK_TEXT}\]\(({_LINK_URL})\)\)|\[{_LINK_TEXT}\]\(({_LINK_URL})\)"
)
#: Every prefix of an inline link (empty included): text that may still become one (a
#: destination's prefix may end inside an open parenthesis).
_LINK_PREFIX = re.compile(
    rf"\(?(?:\[{_LINK_TEXT}(?:\](?:\((?:{_URL_PIECE}*(?:\([^()\[\]\s]*)?(?:\)\)?)?)?)?)?)?"
)
#: Longest inline link (with its parentheses) looked for at the end of streamed text.
MAX_LINK_CHARS = 2510


def recognize(answer: object) -> str | None:
    """The shape ``answer`` has among OpenAI's, or None."""
    if not isinstance(answer, Mapping):
        return None
    if isinstance(answer.get("output"), list) and (
        answer.get("object") == "response" or any(_is_message(i) for i in answer["output"])
    ):
        return RESPONSES
    if _is_message(answer):
        return RESPONSES
    choices = answer.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
        message = choices[0].get("message")
        if isinstance(message, Mapping) and "content" in message:
            return CHAT
    if answer.get("role") == "assistant" and isinstance(answer.get("annotations"), list):
        return CHAT
    return None


def _is_message(item: object) -> bool:
    """A Responses ``message`` output item (its parts are ``output_text``/``refusal``)."""
    return (
        isinstance(item, Mapping)
        and item.get("type") == "message"
        and isinstance(item.get("content"), list)
        and any(isinstance(p, Mapping) and p.get("type") == "output_text" for p in item["content"])
    )


def from_openai(
    answer: Any, pool: object = None, *, keep_inline_links: bool = False
) -> AdaptedAnswer:
    """An OpenAI Responses or Chat Completions answer as markdown with ``[[S:n]]`` tokens.

    ``pool`` (a pool, rows or a path) receives the cited URLs: a URL it already holds keeps its
    sid. Raises :class:`~citations.errors.AnswerError` naming the malformed field.
    """
    answer = as_object(answer, "")
    shape = recognize(answer)
    draft = new_draft(pool)
    if shape == RESPONSES:
        if isinstance(answer.get("output"), list):
            _read_responses(draft, answer["output"], "output", keep_inline_links)
        else:
            _read_responses(draft, [answer], "", keep_inline_links)
    elif shape == CHAT:
        _read_chat(draft, answer, keep_inline_links)
    else:
        raise AnswerError(
            "",
            "not an OpenAI answer; accepted: a Responses object ({'output': [message items]}), "
            "an output message item, a Chat Completions object ({'choices': [...]}) or its "
            "message",
        )
    return finish(draft, "openai", shape)


def _read_responses(draft: Draft, items: list[Any], base: str, keep: bool) -> None:
    wrote = False
    refusal: tuple[str, object] | None = None
    for i, item in enumerate(items):
        item_path = child(base, i) if base else ""
        if not isinstance(item, Mapping) or item.get("type") != "message":
            continue
        parts = as_list(item.get("content"), child(item_path, "content"))
        texts = []
        for j, part in enumerate(parts):
            part = as_object(part, child(child(item_path, "content"), j))
            if part.get("type") == "output_text":
                texts.append((child(child(item_path, "content"), j), part))
            elif part.get("type") == "refusal" and refusal is None:
                refusal = (child(child(item_path, "content"), j), part.get("refusal"))
        if not texts:
            continue
        draft.paragraph_break()
        wrote = True
        for part_path, part in texts:
            text = as_text(part.get("text"), child(part_path, "text"))
            annotations = as_list(part.get("annotations", []), child(part_path, "annotations"))
            marks = MarkSet()
            offsets = TextOffsets(text)
            for k, annotation in enumerate(annotations):
                add_annotation(
                    draft, marks, offsets, annotation, child(child(part_path, "annotations"), k),
                    keep,
                )
            stray_file_markers(draft, text, marks, child(part_path, "text"))
            draft.extend(marked_text(text, marks))
    if not wrote:
        if refusal is not None:
            raise AnswerError(refusal[0], f"the model refused: {refusal[1]!r}")
        raise AnswerError(base or "content", "no message with output_text in the response")


def _read_chat(draft: Draft, answer: Mapping[str, Any], keep: bool) -> None:
    if "choices" in answer:
        choices = as_list(answer["choices"], "choices")
        choice = as_object(choices[0], "choices[0]")
        path = "choices[0].message"
        message = as_object(choice.get("message"), path)
    else:
        path, message = "", answer
    if message.get("content") is None:
        if isinstance(message.get("refusal"), str):
            raise AnswerError(child(path, "refusal"), f"the model refused: {message['refusal']!r}")
        if message.get("tool_calls"):
            raise AnswerError(child(path, "content"), "no text: the message calls tools (answer "
                              "them and render the final assistant message)")
    text = as_text(message.get("content"), child(path, "content"))
    annotations = as_list(message.get("annotations") or [], child(path, "annotations"))
    marks = MarkSet()
    offsets = TextOffsets(text)
    for k, annotation in enumerate(annotations):
        where = child(child(path, "annotations"), k)
        add_annotation(draft, marks, offsets, annotation, where, keep)
    stray_file_markers(draft, text, marks, child(path, "content"))
    draft.extend(marked_text(text, marks))


def add_annotation(
    draft: Draft,
    marks: MarkSet,
    offsets: TextOffsets,
    annotation: object,
    path: str,
    keep_inline_links: bool,
) -> int | None:
    """Name the source of one annotation and mark where its citation goes (returned; None when
    the annotation is no citation)."""
    annotation = as_object(annotation, path)
    kind = annotation.get("type")
    fields, fpath = annotation, path
    if isinstance(annotation.get("url_citation"), Mapping):  # Chat Completions nests them
        fields, fpath = annotation["url_citation"], child(path, "url_citation")
    text, base = offsets.text, offsets.base
    if kind == "url_citation":
        url = as_text(fields.get("url"), child(fpath, "url"))
        if not url.strip():
            raise AnswerError(child(fpath, "url"), "empty URL; a url_citation names its page")
        start, end = _span(offsets, fields, fpath)
        number = draft.collector.add(
            {"url": url, "title": as_text(fields.get("title"), child(fpath, "title"),
                                          optional=True), "source_type": "web"},
            fpath,
        )
        cut = None if keep_inline_links else _inline_link_cut(text, start, end, url, base)
        return marks.add(end if cut is not None else settle(text, start, end, base), number, cut)
    elif kind in ("file_citation", "container_file_citation"):
        file_id = as_text(fields.get("file_id"), child(fpath, "file_id"))
        name = as_text(fields.get("filename"), child(fpath, "filename"), optional=True)
        row = {"title": name or file_id, "artifact_path": name or file_id, "source_type": "file",
               "file_id": file_id}
        number = draft.collector.add(row, fpath, identity=f"file:{file_id}")
        if kind == "file_citation":
            index = as_index(fields.get("index"), child(fpath, "index"))
            position = offsets.index(index, "codepoints", child(fpath, "index"))
            marker = _file_marker_at(text, position, base)
            if marker is not None:
                return marks.add(marker[1], number, marker[0])
            return marks.add(position, number)
        start, end = _span(offsets, fields, fpath)
        return marks.add(settle(text, start, end, base), number)
    if kind != "file_path":  # file_path links a file the model generated: not a citation
        draft.warnings.append(f"{path}: annotation type {kind!r} is not a citation; skipped")
    return None


#: The marker file search writes for a citation, ``【4:0†source】`` (message 4, result 0).
FILE_MARKER = re.compile(r"【[^【】\n]{0,200}†[^【】\n]{0,200}】")
MAX_MARKER_CHARS = 403


def marker_hold(text: str, stop: int) -> int:
    """Where a file-search marker ending ``text[:stop]`` starts, whole or begun (an annotation
    may still replace it), else ``stop``: streamed text before it can be released."""
    start = text.rfind("【", max(stop - MAX_MARKER_CHARS, 0), stop)
    return start if start >= 0 and "】" not in text[start : stop - 1] else stop


def _file_marker_at(text: str, position: int, base: int = 0) -> tuple[int, int] | None:
    """The span of a file-search marker starting or ending at ``position``, else None: it is
    the model's own rendering of the citation there, replaced by the token."""
    if position < base:
        return None  # streamed: text before the kept tail has been released
    found = FILE_MARKER.match(text, position - base)
    if found is not None:
        return position, position + len(found.group())
    start = text.rfind("【", max(position - base - MAX_MARKER_CHARS, 0), position - base)
    if start >= 0:
        found = FILE_MARKER.fullmatch(text, start, position - base)
        if found is not None:
            return start + base, position
    return None


def stray_file_markers(draft: Draft, text: str, marks: MarkSet, path: str) -> None:
    """Warn about each file-search marker no annotation replaces (it stays as text)."""
    cuts = {(m.cut_from, m.position) for m in marks.by_position.values()}
    for found in FILE_MARKER.finditer(text):
        if found.span() not in cuts:
            draft.warnings.append(
                f"{path}: {found.group()} is a file-search citation marker that no "
                "file_citation annotation places; left as text"
            )


def _span(offsets: TextOffsets, fields: Mapping[str, Any], path: str) -> tuple[int, int]:
    start_path, end_path = child(path, "start_index"), child(path, "end_index")
    start = offsets.index(as_index(fields.get("start_index"), start_path), "codepoints", start_path)
    end = offsets.index(as_index(fields.get("end_index"), end_path), "codepoints", end_path)
    if start > end:
        raise AnswerError(start_path, f"{start} is after end_index {end}")
    return start, end


def _inline_link_cut(text: str, start: int, end: int, url: str, base: int = 0) -> int | None:
    """Where removed text starts when ``text[start:end]`` is an inline link to ``url`` (the
    space before it goes too), else None (``text`` starts at index ``base``)."""
    if (start <= base and start > 0) or start == end:
        return None  # a streamed link is never released before its annotation arrives
    found = _INLINE_LINK.fullmatch(text, start - base, end - base)
    if found is None:
        return None
    target = found.group(1) or found.group(2)
    if len(target) > MAX_URL_CHARS or normalize_url(target) != normalize_url(url):
        return None
    return start - 1 if start > 0 and text[start - 1 - base] == " " else start


def link_hold(text: str, stop: int) -> int:
    """Where text that may still become an inline link ends ``text[:stop]`` (with the space
    before it), else ``stop``: streamed text before this point can be released.

    Such a tail holds exactly one ``[`` (link text and URL hold none), so only the last ``[``
    of the line — or a ``(`` just before it, or one ending the text — can start it.
    """
    low = max(text.rfind("\n", 0, stop) + 1, stop - MAX_LINK_CHARS)
    bracket = text.rfind("[", low, stop)
    candidates = []
    if bracket >= 0:
        if bracket > low and text[bracket - 1] == "(":
            candidates.append(bracket - 1)
        candidates.append(bracket)
    if stop > low and text[stop - 1] == "(":
        candidates.append(stop - 1)
    for position in candidates:
        if _LINK_PREFIX.fullmatch(text, position, stop):
            return position - 1 if position > 0 and text[position - 1] == " " else position
    return stop
