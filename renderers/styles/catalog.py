"""Which CSL styles exist and how one is loaded: a bundled name or a ``.csl`` file.

A style file is untrusted input. It is read through the resource sandbox (inside the base or
output directory, like images), bounded in size, parsed without entities, DTDs or network, and
must be a CSL 1.0 ``<style>``; a dependent style is accepted when its parent is bundled. Every
refusal is an :class:`~renderers.errors.OptionError` naming the ``csl`` option and what is
accepted.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from lxml import etree

from renderers.errors import OptionError, ResourceError
from renderers.options import RenderOptions
from renderers.sandbox import Sandbox, allowed_dirs

CSL_NS = "http://purl.org/net/xbiblio/csl"
#: The locale of a style that names none (CSL's ``default-locale`` default).
DEFAULT_LOCALE = "en-US"
#: Largest style file read (the largest bundled style, Chicago notes, is about 240 KB).
MAX_STYLE_BYTES = 2 * 1024 * 1024

#: Bundled name → its file in ``templates/csl/`` (see the README there for origin and licence).
BUNDLED: dict[str, str] = {
    "ieee": "ieee.csl",
    "apa": "apa.csl",
    "chicago-author-date": "chicago-author-date.csl",
    "chicago-note": "chicago-notes-bibliography.csl",
    "vancouver": "vancouver-nlm.csl",
    "nature": "nature.csl",
    "harvard": "harvard-cite-them-right.csl",
}

StyleClass = Literal["in-text", "note"]


@dataclass(frozen=True)
class CslStyle:
    """A loaded style: its name as recorded, its CSL id and title, the independent style's
    XML that the processor reads (a dependent style's parent), and its default locale (a
    dependent style's own overrides its parent's, as the CSL specification says)."""

    name: str
    id: str
    title: str
    style_class: StyleClass
    numeric: bool
    xml: bytes
    default_locale: str = DEFAULT_LOCALE

    @property
    def is_note(self) -> bool:
        return self.style_class == "note"

    @property
    def is_author_date(self) -> bool:
        """An in-text style whose citations are words ("(IEA, 2025)"), not numbers."""
        return self.style_class == "in-text" and not self.numeric


def styles_dir() -> Path:
    from renderers.templates import templates_dir

    return templates_dir() / "csl"


class _Refused(Exception):
    """Why a style was refused; :func:`load_style` adds the option's name and what is
    accepted, which names the directories the render may read."""


def _accepted(roots: tuple[str, ...]) -> str:
    """What ``csl`` accepts, naming the readable directories as the sandbox's refusal does
    (its real paths), so that the reason and the accepted clause name one directory in the
    same words, and a service that hides the path hides both alike."""
    where = ", ".join(roots) if roots else "the base or output directory"
    return f"accepted: one of {', '.join(BUNDLED)}, or a .csl file inside {where}"


def style_file(value: str) -> str | None:
    """The file path ``value`` names, or None when it names a bundled style or no file (the
    one rule telling a style's name from its file, for loading and for protecting the file)."""
    name = value.strip()
    if name.casefold() in BUNDLED or not name.lower().endswith(".csl"):
        return None
    return name


def load_style(value: str, options: RenderOptions) -> CslStyle:
    """The style ``value`` names: a bundled name (case-insensitive) or a ``.csl`` file path."""
    sandbox = Sandbox(allowed_dirs(options))
    try:
        return _load(value, sandbox)
    except _Refused as exc:
        raise OptionError(f"csl={value!r}: {exc}; {_accepted(sandbox.roots)}", field="csl") from exc


def _load(value: str, sandbox: Sandbox) -> CslStyle:
    name = style_file(value)
    if name is None:
        if value.strip().casefold() in BUNDLED:
            return _bundled(value.strip().casefold())
        raise _Refused("not a bundled style name, and not a path ending in .csl")
    try:
        path = sandbox.resolve(name)
        size = path.stat().st_size
    except (ResourceError, OSError) as exc:
        raise _Refused(f"the file cannot be read ({exc})") from exc
    if size > MAX_STYLE_BYTES:
        raise _Refused(f"{size} bytes; a style file may have at most {MAX_STYLE_BYTES}")
    return _parse(path.read_bytes(), path.name)


@lru_cache(maxsize=len(BUNDLED))
def _bundled(name: str) -> CslStyle:
    data = (styles_dir() / BUNDLED[name]).read_bytes()
    return _parse(data, name)


@lru_cache(maxsize=1)
def _bundled_by_id() -> dict[str, bytes]:
    """Every bundled independent style's XML by its CSL id (parents of dependent styles)."""
    found: dict[str, bytes] = {}
    for path in sorted(styles_dir().glob("*.csl")):
        data = path.read_bytes()
        root = _safe_root(data, path.name)
        if _parent_id(root) is None:
            found[_info(root, "id")] = data
    return found


def _safe_root(data: bytes, shown: str) -> etree._Element:
    """The root of ``data`` parsed as untrusted XML: no DTD, no entities, no network."""
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        raise _Refused(f"{shown} declares a DTD or entities, which a style never needs")
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
        remove_comments=True,
    )
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise _Refused(f"{shown} is not well-formed XML ({exc})") from exc
    if root.tag != f"{{{CSL_NS}}}style":
        raise _Refused(f"{shown} is not a CSL style (its root is not <style> in {CSL_NS})")
    return root


def _info(root: etree._Element, field: str) -> str:
    found = root.find(f"{{{CSL_NS}}}info/{{{CSL_NS}}}{field}")
    return " ".join((found.text or "").split()) if found is not None else ""


def _parent_id(root: etree._Element) -> str | None:
    for link in root.iterfind(f"{{{CSL_NS}}}info/{{{CSL_NS}}}link"):
        if link.get("rel") == "independent-parent":
            return link.get("href", "")
    return None


def _parse(data: bytes, name: str) -> CslStyle:
    root = _safe_root(data, name)
    category = root.find(f"{{{CSL_NS}}}info/{{{CSL_NS}}}category[@citation-format]")
    citation_format = category.get("citation-format", "") if category is not None else ""
    parent = _parent_id(root)
    if parent is not None:
        parent_xml = _bundled_by_id().get(parent)
        if parent_xml is None:
            raise _Refused(f"{name} is a dependent style whose parent {parent} is not "
                           "bundled; give the parent style's own file")
        independent = _safe_root(parent_xml, parent)
    else:
        parent_xml, independent = data, root
    if independent.find(f"{{{CSL_NS}}}citation") is None:
        raise _Refused(f"{name} has no <citation> element")
    style_class = independent.get("class", "")
    if style_class not in ("in-text", "note"):
        raise _Refused(f"{name}: class={style_class!r} is neither 'in-text' nor 'note'")
    if not citation_format:
        numeric = any(
            node.get("variable") == "citation-number"
            for node in independent.iter(f"{{{CSL_NS}}}text")
            if _in_citation(node)
        )
    else:
        numeric = citation_format in ("numeric", "label")
    return CslStyle(
        name=name,
        id=_info(root, "id"),
        title=_info(root, "title"),
        style_class="note" if style_class == "note" else "in-text",
        numeric=numeric,
        xml=parent_xml,
        default_locale=(root.get("default-locale") or independent.get("default-locale")
                        or DEFAULT_LOCALE),
    )


def _in_citation(node: etree._Element) -> bool:
    return any(a.tag == f"{{{CSL_NS}}}citation" for a in node.iterancestors())
