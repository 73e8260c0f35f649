"""Tool outputs → canonical source rows, through a registry of tool-name patterns.

``extract_sources("web_search", output)`` returns rows numbered 1..n, ready for
``SourcePool.from_rows`` or ``pool.merge``. Patterns are shell-style globs matched against the
lower-cased tool name; the most recently registered matching extractor wins, so callers can
override the built-ins. Outputs may be Python objects, JSON text, or MCP ``CallToolResult``s
(dicts or pydantic models): a result's ``structuredContent`` or JSON text content is unwrapped
before a specific extractor sees it; results no specific extractor claims go to the generic
MCP extractor.
"""

from __future__ import annotations

import fnmatch
import html
import json
import mimetypes
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import quote, urlsplit

from citations import json_keys
from citations.errors import ExtractorError
from citations.pool import SourcePool

Row = dict[str, Any]
Extractor = Callable[[Any, Mapping[str, Any]], list[Row]]

_REGISTRY: list[tuple[tuple[str, ...], Extractor]] = []
_TAG = re.compile(r"<[^>]*>")
#: ``<title[^>]*>(.*?)</title>`` found in steps by :func:`_title` (one regex rescanned to the end
#: from every unclosed ``<title>``: 80 KB of them took 6 s).
_TITLE_OPEN = re.compile(r"<title", re.IGNORECASE)
_TITLE_CLOSE = re.compile(r"</title>", re.IGNORECASE)

URL_KEYS = ("url", "link", "href", "uri", "source_url", "sourceURL", "sourceUrl")
TITLE_KEYS = ("title", "name", "headline")
TEXT_KEYS = ("snippet", "description", "summary", "text", "content", "body", "extract")
DATE_KEYS = ("published_at", "published", "publishedDate", "published_date", "date", "page_age")
LIST_KEYS = ("results", "items", "organic", "organic_results", "data", "documents", "matches",
             "chunks", "hits", "sources", "pages", "search")


def register_extractor(*patterns: str) -> Callable[[Extractor], Extractor]:
    """Register ``fn(output, arguments) -> rows`` for tool names matching any glob pattern."""
    if not patterns:
        raise ValueError("register_extractor needs at least one tool-name pattern")
    lowered = tuple(p.lower() for p in patterns)

    def decorate(fn: Extractor) -> Extractor:
        _REGISTRY.append((lowered, fn))
        return fn

    return decorate


def find_extractor(tool_name: str) -> Extractor | None:
    """The extractor for ``tool_name`` (latest registration first), or None."""
    name = tool_name.lower()
    for patterns, fn in reversed(_REGISTRY):
        if any(fnmatch.fnmatchcase(name, p) for p in patterns):
            return fn
    return None


def extract_sources(
    tool_name: str, output: object, arguments: Mapping[str, Any] | None = None
) -> list[Row]:
    """Canonical rows (sids 1..n) from one tool call's ``output``; ``[]`` when none applies.

    ``arguments`` are the call's arguments (a fetch tool that returns bare text takes its URL
    from there). A matched extractor that cannot read the output raises ExtractorError.
    """
    args = dict(arguments or {})
    data = _decode(output, tool_name)
    extractor = find_extractor(tool_name)
    try:
        if isinstance(data, Mapping) and _is_call_tool_result(data):
            # MCP resources are sources whatever the tool is called; a specific extractor
            # reads the result's payload (structured content or text) beside them.
            if extractor is None or extractor is extract_mcp:
                rows = extract_mcp(data, args)
            else:
                payload = _unwrap_mcp(data)
                rows = _mcp_resource_rows(data)
                if payload is not None:
                    rows += extractor(payload, args)
        else:
            rows = extractor(data, args) if extractor is not None else []
    except ExtractorError:
        raise
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise ExtractorError(
            f"tool {tool_name!r}: output could not be read as sources ({exc}); accepted: "
            "the shapes documented in citations.extractors"
        ) from exc
    numbered: list[Row] = []
    for row in rows:
        if row.get("url") or row.get("physical_path") or row.get("artifact_path"):
            clean = {k: v for k, v in row.items() if v not in (None, "")}
            numbered.append({"sid": len(numbered) + 1, **clean, "tool": tool_name})
    return numbered


def aggregate_pools(
    parent: object, children: Iterable[object]
) -> tuple[SourcePool, list[dict[int, int]]]:
    """Merge sub-agent pools into ``parent`` in order; return the pool and one sid map per child.

    Existing sids never change; each map turns a child's sids into the parent's (apply it to
    the child's text with :func:`citations.tokens.remap_tokens`).
    """
    pool = SourcePool.coerce(parent)
    maps: list[dict[int, int]] = []
    for child in children:
        pool, mapping = pool.merge(SourcePool.coerce(child))
        maps.append(mapping)
    return pool, maps


# -- helpers -----------------------------------------------------------------------------------


def _decode(output: object, tool_name: str) -> object:
    """Output as plain data: JSON text parsed, pydantic models dumped."""
    dump = getattr(output, "model_dump", None)
    if callable(dump):
        return dump(by_alias=True, exclude_none=True)
    if isinstance(output, bytes):
        output = output.decode("utf-8", errors="replace")
    if isinstance(output, str):
        stripped = output.strip()
        if stripped.startswith(("{", "[")):
            try:
                return json_keys.loads(stripped)
            except json_keys.DuplicateKeyError as exc:
                raise ExtractorError(f"tool {tool_name!r}: output {exc}") from exc
            except json.JSONDecodeError as exc:
                raise ExtractorError(
                    f"tool {tool_name!r}: output looks like JSON but is not ({exc.msg} at line "
                    f"{exc.lineno}); accepted: JSON, a mapping, a list, or text"
                ) from exc
    return output


def _is_call_tool_result(data: object) -> bool:
    return isinstance(data, Mapping) and (
        isinstance(data.get("content"), list) or "structuredContent" in data
    )


def _unwrap_mcp(data: object) -> object:
    """The payload of an MCP result: structuredContent, else its JSON (or plain) text content
    (``None`` when it has neither — only resources)."""
    if not _is_call_tool_result(data):
        return data
    assert isinstance(data, Mapping)
    structured = data.get("structuredContent")
    if structured is not None:
        return structured
    texts = [i.get("text", "") for i in data.get("content", []) if _item_type(i) == "text"]
    if not texts:
        return None
    joined = "\n".join(str(t) for t in texts).strip()
    if joined.startswith(("{", "[")):
        try:
            return json.loads(joined)
        except json.JSONDecodeError:
            return joined
    return joined


def _mcp_resource_rows(data: Mapping[str, Any]) -> list[Row]:
    """Rows for the ``resource`` and ``resource_link`` items of an MCP result."""
    rows: list[Row] = []
    for item in data.get("content", []):
        kind = _item_type(item)
        if kind == "resource_link":
            rows.append(_resource_row(item, item))
        elif kind == "resource" and isinstance(item.get("resource"), Mapping):
            rows.append(_resource_row(item["resource"], item))
    return rows


def _with_metadata(item: Mapping[str, Any]) -> dict[str, Any]:
    """``item`` with the fields of a nested ``metadata`` or ``document`` object folded in (the
    item's own fields win): firecrawl, LangChain and RAG chunks keep titles and URLs there."""
    merged: dict[str, Any] = {}
    for key in ("document", "metadata"):
        nested = item.get(key)
        if isinstance(nested, Mapping):
            merged.update(nested)
    merged.update((k, v) for k, v in item.items() if v not in (None, "", [], {}))
    return merged


#: Elements whose content a reader of the page never sees.
_HIDDEN = frozenset({"script", "style", "noscript", "template", "head", "title"})
#: Elements that begin and end a line of the page's text.
_BREAKS = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6",
                     "section", "article", "blockquote", "pre", "table", "ul", "ol"})


def _looks_like_html(text: str) -> bool:
    head = text.lstrip()[:512].lower()
    return head.startswith(("<!doctype html", "<html", "<head", "<body")) or (
        head.startswith("<") and "</" in text
        and _TAG.search(text, 0, text.rfind(">") + 1) is not None  # bounded: see _strip_tags
        and ("<body" in text.lower() or "<p" in text.lower() or "<div" in text.lower())
    )


def page_text(html_text: str) -> str:
    """The text of a fetched HTML page (what a reader sees), white space tidied per line.

    Parsed by libxml2 through lxml, whose work grows with the input: Python's ``html.parser``
    rescans every unclosed tag to the end of the input (30 KB of ``<a `` in a tool's output
    took 13 s), and nh3's html5ever grows with the square of the nesting depth (100,000
    ``<div>`` took 100 s); libxml2 took 0.03 s on each, measured. It stops nesting at 256
    levels and reads on.
    """
    from lxml import etree  # only tools that fetch pages need it
    from lxml import html as lxml_html

    parser = lxml_html.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True)
    try:
        root = lxml_html.document_fromstring(html_text.encode("utf-8", "replace"), parser)
    except etree.ParserError:  # nothing but white space or comments
        return ""
    for hidden in list(root.iter(*_HIDDEN)):
        hidden.drop_tree()  # its tail is text that follows it, and stays
    for block in root.iter(*_BREAKS):
        block.text = "\n" + (block.text or "")
        block.tail = "\n" + (block.tail or "")
    lines = (" ".join(line.split()) for line in root.text_content().splitlines())
    return "\n".join(line for line in lines if line)


def _readable(body: str) -> str:
    """``body`` as stored in a row: a raw HTML page becomes its text, anything else stays."""
    return page_text(body) if _looks_like_html(body) else body


def _item_type(item: object) -> str:
    return str(item.get("type", "")) if isinstance(item, Mapping) else ""


def _first(item: Mapping[str, Any], keys: Iterable[str]) -> Any:
    for key in keys:
        value = item.get(key)
        if value not in (None, "", [], {}):
            return value
    return None


def _text(value: object) -> str:
    """A readable one-string form of a field (HTML tags and entities removed)."""
    if value is None:
        return ""
    if isinstance(value, list):
        return " ".join(_text(v) for v in value)
    if isinstance(value, Mapping):
        return _text(_first(value, TEXT_KEYS))
    return html.unescape(_strip_tags(str(value))).strip()


def _strip_tags(text: str) -> str:
    """``_TAG.sub("", text)``, its scan bounded by the last ``>`` (no tag starts after it)."""
    end = text.rfind(">") + 1  # unbounded, 80,000 "<" without ">" took 11 s
    return _TAG.sub("", text[:end]) + text[end:] if end else text


def _title(text: str) -> str | None:
    """What ``<title[^>]*>(.*?)</title>`` (case-insensitive, DOTALL) captures first, or None.

    Only the first ``<title`` can match: a later one ends its tag at the same ``>`` or later.
    """
    opener = _TITLE_OPEN.search(text)
    if opener is None:
        return None
    gt = text.find(">", opener.end())
    if gt < 0:
        return None
    closer = _TITLE_CLOSE.search(text, gt + 1)
    return None if closer is None else text[gt + 1 : closer.start()]


def _items(data: object) -> list[Mapping[str, Any]]:
    """The result objects inside a search-like payload (list, or a list under a known key)."""
    if isinstance(data, list):
        return [d for d in data if isinstance(d, Mapping)]
    if isinstance(data, Mapping):
        for key in LIST_KEYS:
            value = data.get(key)
            if isinstance(value, list):
                return _items(value)
            if isinstance(value, Mapping):
                nested = _items(value)
                if nested:
                    return nested
        if "web" in data:
            return _items(data["web"])
        return [data]
    return []


def _web_row(item: Mapping[str, Any], source_type: str = "web") -> Row:
    item = _with_metadata(item)
    url = _first(item, URL_KEYS)
    return {
        "title": _text(_first(item, TITLE_KEYS)),
        "url": str(url) if url else "",
        "text": _text(_first(item, TEXT_KEYS)),
        "published_at": str(_first(item, DATE_KEYS) or ""),
        "relevance": _number(_first(item, ("score", "relevance"))),
        "source_type": source_type,
    }


def _number(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


# -- the generic MCP extractor -------------------------------------------------------------------


@register_extractor("mcp__*", "mcp_*", "mcp.*")
def extract_mcp(data: object, args: Mapping[str, Any]) -> list[Row]:
    """MCP ``CallToolResult`` content: ``resource`` and ``resource_link`` items, JSON text items
    and ``structuredContent`` holding objects with a URL."""
    if not _is_call_tool_result(data):
        return [_web_row(i, "mcp") for i in _items(data) if _first(i, URL_KEYS)]
    assert isinstance(data, Mapping)
    rows: list[Row] = _mcp_resource_rows(data)
    for item in data.get("content", []):
        if _item_type(item) == "text":
            text = str(item.get("text", "")).strip()
            if text.startswith(("{", "[")):
                try:
                    payload = json.loads(text)
                except json.JSONDecodeError:
                    continue
                rows += [_web_row(i, "mcp") for i in _items(payload) if _first(i, URL_KEYS)]
    structured = data.get("structuredContent")
    if structured is not None:
        rows += [_web_row(i, "mcp") for i in _items(structured) if _first(i, URL_KEYS)]
    return rows


def _resource_row(resource: Mapping[str, Any], item: Mapping[str, Any]) -> Row:
    """A row from an MCP resource (embedded: text or base64 blob) or resource link."""
    uri = str(resource.get("uri", ""))
    scheme = urlsplit(uri).scheme.lower()
    row: Row = {
        "title": str(_first(item, ("title", "name")) or _first(resource, ("title", "name")) or uri),
        "mime": str(resource.get("mimeType") or item.get("mimeType") or ""),
        "text": str(resource.get("text") or item.get("description") or ""),
        "source_type": "mcp_resource",
        "size_bytes": item.get("size") if isinstance(item.get("size"), int) else None,
    }
    blob = resource.get("blob")
    if isinstance(blob, str) and blob:
        row["text"] = blob
        row["size_bytes"] = len(blob) * 3 // 4 - blob.count("=")
    if scheme in ("http", "https"):
        row["url"] = uri
    else:
        row["physical_path"] = uri
        row["artifact_path"] = uri.split("://", 1)[-1] if scheme else uri
    return row


# -- specific extractors (registered after the MCP one, so they win; among them later wins) ----


@register_extractor("*search*", "*serp*", "*google*", "*bing*", "*tavily*", "*duckduckgo*", "*ddg*")
def extract_web_search(data: object, args: Mapping[str, Any]) -> list[Row]:
    """Web search results: a list (or ``results``/``items``/``organic``…) of {title, link|url,
    snippet}."""
    return [_web_row(item) for item in _items(data)]


@register_extractor("*fetch*", "*scrape*", "*crawl*", "*browse*", "*read_url*", "*get_page*",
                    "*webpage*")
def extract_web_fetch(data: object, args: Mapping[str, Any]) -> list[Row]:
    """Fetched pages: {url, title, content|markdown|text} (or a list of them); bare text takes
    its URL from the call's arguments."""
    if isinstance(data, str):
        url = str(args.get("url") or args.get("link") or "")
        title = _title(data)
        return [{"url": url, "title": _text(title) if title is not None else "",
                 "content": _readable(data), "source_type": "web"}]
    rows = []
    for item in _items(data):
        row = _web_row(item)
        body = str(_first(_with_metadata(item), ("content", "markdown", "text", "body", "html"))
                   or "")
        row["text"] = ""
        row["content"] = _readable(body)
        if not row["url"]:
            row["url"] = str(args.get("url") or "")
        if not row["title"]:
            title = _title(body)
            row["title"] = _text(title) if title is not None else ""
        rows.append(row)
    return rows


@register_extractor("*http*", "*request*", "*curl*", "*api_call*")
def extract_http_response(data: object, args: Mapping[str, Any]) -> list[Row]:
    """HTTP client responses: {url, status|status_code, body|text|content, headers|content_type}.

    Responses with status 400 or above are not sources and give no row.
    """
    rows = []
    for item in _items(data):
        status = item.get("status", item.get("status_code"))
        if isinstance(status, int) and status >= 400:
            continue
        headers = item.get("headers")
        lowered: dict[str, Any] = {}
        if isinstance(headers, Mapping):
            lowered = {str(k).lower(): v for k, v in headers.items()}
        mime = str(item.get("content_type") or lowered.get("content-type") or "")
        body = item.get("body", item.get("text", item.get("content", "")))
        body = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
        url = str(_first(item, URL_KEYS) or args.get("url") or "")
        title = _title(body)
        rows.append({
            "url": url,
            "title": _text(title) if title is not None else url,
            "content": _readable(body),
            "mime": mime.split(";", 1)[0].strip(),
            "source_type": "http",
            "status": status,
        })
    return rows


@register_extractor("*rag*", "*retriev*", "*vector*", "*knowledge*", "*kb_*", "*docs_search*",
                    "*search_docs*", "*query_docs*", "*file_search*", "*semantic*")
def extract_rag(data: object, args: Mapping[str, Any]) -> list[Row]:
    """RAG query results: {path|file_path|source|metadata.source, page, start_line/end_line |
    lines, text|content|page_content, score} → file rows keyed by physical path."""
    rows = []
    for item in _items(data):
        merged = _with_metadata(item)
        path = _first(merged, ("physical_path", "path", "file_path", "filepath", "source", "file",
                               "filename"))
        if path is None:
            url = _first(merged, URL_KEYS)
            if url:
                rows.append(_web_row(merged, "rag"))
            continue
        path = str(path)
        if urlsplit(path).scheme in ("http", "https"):
            rows.append({**_web_row({**merged, "url": path}, "rag")})
            continue
        page = _first(merged, ("page", "page_number", "page_no"))
        if not isinstance(page, str | int) or isinstance(page, bool):
            page = None  # a row's page is text or a number (citations.model.BIBLIOGRAPHIC_FIELDS)
        lines = merged.get("lines") or merged.get("line_range")
        start = merged.get("start_line", lines[0] if isinstance(lines, list) and lines else None)
        end = merged.get("end_line", lines[-1] if isinstance(lines, list) and lines else None)
        name = path.replace("\\", "/").rsplit("/", 1)[-1]
        title = _text(_first(merged, TITLE_KEYS)) or name
        if page is not None:
            title += f", p. {page}"
        rows.append({
            "title": title,
            "physical_path": path,
            "artifact_path": str(merged.get("artifact_path") or path),
            "text": _text(_first(merged, ("text", "content", "page_content", "chunk", "snippet"))),
            "mime": str(merged.get("mime") or mimetypes.guess_type(name)[0] or ""),
            "relevance": _number(_first(merged, ("score", "relevance", "similarity"))),
            "source_type": "file",
            "page": page,
            "line_start": start,
            "line_end": end,
        })
    return rows


@register_extractor("*wikipedia*", "*wiki_*", "wiki*")
def extract_wikipedia(data: object, args: Mapping[str, Any]) -> list[Row]:
    """Wikipedia search (MediaWiki ``query.search`` or a list of {title, snippet, pageid}) and
    page summaries ({title, extract, content_urls})."""
    lang = str(args.get("lang") or args.get("language") or "en")
    if isinstance(data, Mapping) and isinstance(data.get("query"), Mapping):
        data = data["query"].get("search", [])
    rows = []
    for item in _items(data):
        row = _web_row(item, "wikipedia")
        urls = item.get("content_urls")
        if not row["url"] and isinstance(urls, Mapping):
            row["url"] = str((urls.get("desktop") or {}).get("page") or "")
        if not row["url"] and row["title"]:
            slug = quote(row["title"].replace(" ", "_"), safe="_()',-.:")
            row["url"] = f"https://{lang}.wikipedia.org/wiki/{slug}"
        row["published_at"] = str(item.get("timestamp") or row["published_at"])
        rows.append(row)
    return rows
