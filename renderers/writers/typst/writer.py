"""The Typst PDF engine (``pdf_engine="typst"``): the report's markup compiled by Typst.

Typst is confined: its project root is a fresh temporary directory that holds only the image
files we wrote there (each loaded and checked through :mod:`renderers.sandbox`), so it can read
nothing else; packages, too, could only come from that root, and the markup never imports one;
it sees no system fonts (only :func:`~renderers.writers.typst.fonts.report_fonts`) and no
``sys.inputs``; the markup it compiles carries the author's text only as escaped strings
(:mod:`renderers.writers.typst.escape`). PDF/A and PDF/UA come from Typst's own standards
support; the PDF is tagged for PDF/UA-1 only, as WeasyPrint's is (tags make the 50-page report
2.7 times larger). Dates come from ``SOURCE_DATE_EPOCH`` or are left out, so identical input
gives identical bytes. Links to our own labels are set after layout
(:mod:`~renderers.writers.typst.late_links`).

HTML input is laid out from the document model like markdown: Typst has no CSS, so an author's
stylesheet is not applied, and the artifact says so.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import tempfile
import threading
from functools import lru_cache
from pathlib import Path
from typing import Literal

import typst

from renderers.diagnostics import Code, Diagnostic
from renderers.errors import InputError, LimitError, RenderError
from renderers.fonts import CODE_FACES, block_class
from renderers.labels import Labels, labels_for
from renderers.language import DEFAULT_LANGUAGE, Language, has_script
from renderers.options import PdfVariant, RenderOptions
from renderers.resolve import ResolvedDocument
from renderers.templates import templates_dir
from renderers.text import beyond_ascii, needs_cjk, text_direction
from renderers.writers import Artifact, WriteSource
from renderers.writers.common import ADDED_SECTION_LEVEL
from renderers.writers.typst.escape import string_literal
from renderers.writers.typst.fonts import (
    OTHER_FACES,
    cjk_symbols_in,
    face_metrics,
    report_fonts,
)
from renderers.writers.typst.late_links import (
    POSITIONS_LABEL,
    parse_positions,
    positions_query,
    prelude,
    resolve_late_links,
)
from renderers.writers.typst.link_areas import merge_link_annotations
from renderers.writers.typst.markup import TypstSource, typst_source
from renderers.writers.typst.pdf_file import UnexpectedPdfError, declare_language, page_count

#: Typst's PDF standard for each :attr:`RenderOptions.pdf_variant`.
STANDARDS: dict[PdfVariant, Literal["a-3b", "ua-1"]] = {"pdf/a-3b": "a-3b", "pdf/ua-1": "ua-1"}
#: The main file's name inside the compile root.
MAIN = "report.typ"
#: Said when HTML input that brings its own CSS is laid out by Typst.
STYLES_NOT_APPLIED = (
    "pdf_engine='typst': the HTML input's own stylesheet is not applied (Typst has no CSS); it "
    "is laid out in the report's look, like markdown; use pdf_engine='weasyprint' to keep it"
)
_AUTHOR_STYLES = re.compile(r"<style\b|<link\b[^>]*\bstylesheet\b|\sstyle\s*=", re.IGNORECASE)
#: Every Typst string literal (its contents are the author's text, never code).
_STRING_LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"')
#: What could reach beyond the compile root: a module or package import, an include. Typst
#: fetches a missing ``@preview`` package from the network, so none may ever be compiled.
#: (``i(?<![\w-]i)`` is ``(?<![\w-])i`` written to start with a character: the scan then
#: skips ahead to each ``i`` or ``@``, 1.8 ms over the 50-page report instead of 6 ms.)
_REACHING_OUT = re.compile(r"i(?<![\w-]i)(?:mport|nclude)(?![\w-])|@preview|@local")


def has_author_styles(html: str) -> bool:
    """True when HTML input brings its own CSS (a ``<style>`` block, a stylesheet link or a
    ``style`` attribute): the look WeasyPrint keeps and Typst cannot."""
    return _AUTHOR_STYLES.search(html) is not None


@lru_cache(maxsize=1)
def report_template() -> str:
    """``templates/report.typ``: the page, the styles and the functions the markup calls."""
    return (templates_dir() / "report.typ").read_text(encoding="utf-8")


class _LayoutCache:
    """Bounds Typst's process-wide layout cache (comemo) to the last document compiled.

    The binding keeps every memoized layout result until it has gone unused for ten compiles
    (each compile ends with ``comemo::evict(10)``): a worker rendering 50-page reports holds
    about 60 MiB per report, 800 MiB after ten. Before each compile but the process's first,
    eleven compiles of an empty document (about 0.01 ms each, plus the eviction's walk over
    the cache) age the previous document's results out, so a long-lived process stays at the
    size of one document; a process that renders once pays nothing. The empty document's
    compiler is shared, and a compiler compiles one document at a time (another thread's
    compile of it raised "Already borrowed"): renders in threads take turns here.
    """

    EVICTIONS = 11

    def __init__(self) -> None:
        self.used = False
        self._empty: typst.Compiler | None = None
        self._turn = threading.Lock()

    def release(self) -> None:
        """Age out what earlier compiles left in the cache (nothing on the first call)."""
        with self._turn:
            if not self.used:
                self.used = True
                return
            if self._empty is None:
                no_fonts = typst.Fonts(include_system_fonts=False, include_embedded_fonts=False)
                self._empty = typst.Compiler(font_paths=no_fonts, sys_inputs={})
            for _ in range(self.EVICTIONS):
                self._empty.compile(input=b"", format="svg")


LAYOUT_CACHE = _LayoutCache()


def _timestamp(options: RenderOptions) -> dt.datetime | None:
    """The compile's timestamp: ``SOURCE_DATE_EPOCH``; unset, none (no dates are written) —
    except for PDF/A, which requires a date: then the fixed date every format falls back to."""
    archival = (options.pdf_variant or "").startswith("pdf/a")
    if not archival and not os.environ.get("SOURCE_DATE_EPOCH", "").strip():
        return None
    from renderers.writers.ooxml import build_timestamp  # zipfile & co. only when dated

    return build_timestamp()


#: Typst's refusal of a PDF standard's text that no font draws (the text it quotes).
_NO_GLYPH = re.compile(r"the text `(.{1,80}?)` could not be displayed with font")


def _message(item: typst.TypstWarning | typst.TypstError) -> str:
    return " ".join(str(getattr(item, "message", "") or item).split())


def rules_prelude(
    text: str, *, cjk: bool, symbols: str, language: Language = DEFAULT_LANGUAGE
) -> str:
    """The definitions ``report.typ`` takes from Python, so that each rule has one home:
    whether the CJK fonts are loaded and which regional face of them ``text`` in ``language``
    needs (:meth:`renderers.language.Language.cjk_face`), the scripts of ``text`` drawn in a
    face other than Noto Sans and its ``symbols`` drawn from the CJK face
    (:func:`script_faces`), the document's language and region
    (``text(lang:, region:)``: an ISO 639 code, an ISO 3166-1 alpha-2 code or none), the
    heading level of the sections the writers add
    (:data:`~renderers.writers.common.ADDED_SECTION_LEVEL`), the page footer in the
    language's words (:func:`page_footer`) and the faces code in some scripts is drawn in
    (:func:`code_faces`)."""
    face = language.cjk_face(text) if cjk else "SC"
    region = f'"{language.typst_region}"' if language.typst_region else "none"
    return (
        f"#let with-cjk = {'true' if cjk else 'false'}\n"
        f'#let cjk-region = "{face}"\n'
        f"{script_faces(text, cjk=cjk, symbols=symbols)}"
        f'#let doc-lang = "{language.typst_lang}"\n'
        f"#let doc-region = {region}\n"
        f"#let added-section-level = {ADDED_SECTION_LEVEL}\n"
        f"{page_footer(labels_for(language))}"
        f"{code_faces(text)}"
    )


def code_faces(text: str) -> str:
    """``code-first`` and ``code-after``: the faces of :data:`~renderers.fonts.CODE_FACES`
    for the scripts ``text`` has, ahead of the code font or after it, each for its script's
    blocks only. A document without those scripts names none: each face named ahead of the
    code font would have Typst shape every piece of code with it first."""
    lists: dict[bool, list[str]] = {True: [], False: []}
    for face in CODE_FACES:
        if has_script(text, face.script):
            name, covers = (string_literal(s) for s in (face.family, block_class(face.blocks)))
            lists[face.first].append(f"(name: {name}, covers: regex({covers})),")
    first, after = ("".join(lists[side]) for side in (True, False))
    return f"#let code-first = ({first})\n#let code-after = ({after})\n"


def script_faces(text: str, *, cjk: bool, symbols: str) -> str:
    """``script-faces``: each script of ``text`` that the report's fonts draw with a face other
    than Noto Sans or, in code, DejaVu Sans Mono (:data:`~renderers.writers.typst.fonts.
    OTHER_FACES`), as a run of its characters (a regex: from a letter of the script, which
    those faces lack, over the marks, spaces and punctuation of it, which a split would shape
    apart, to the last of them: a space at its end would leave the next word's text without its
    space; "·" is Han's too, but Noto Sans's) and the ascender and descender in em of its face
    in text and in code, from the font files; the family a word space after the script is
    drawn in (``spaces``), with ``spaced``, a regex finding such a space, and its direction;
    ``()`` in a document without any, which then has no rule to look for them
    (``deepen-scripts`` and ``script-spaces`` in the template). CJK: only when its fonts are
    loaded (``cjk``), and then also ``symbols``, those of ``text`` the body's stack draws from
    Noto Sans CJK (key ``cjk-symbols``: :func:`~renderers.writers.typst.fonts.cjk_symbols_in`,
    which the caller has read to decide ``cjk``), one at a time, with ``code: none``: code
    draws most of them in its own face."""
    entries = []
    for face in OTHER_FACES:
        metrics, code_metrics = face_metrics(face.text_file), face_metrics(face.code_file)
        if metrics is None or code_metrics is None:
            continue
        if not (cjk if face.key == "cjk" else has_script(text, face.key)):
            continue
        first = "".join(f"\\p{{sc={name}}}" for name in face.scripts)
        inner = "".join(f"\\p{{scx={name}}}" for name in face.scripts) + "\\p{Inherited}"
        run = string_literal(f"[{first}](?:[{inner}\\s]*[{inner}])?")
        spaced = string_literal(f"[{first}][{inner}]*\\s")
        covers = string_literal(f"[{first}\\p{{Inherited}}\\s]")
        languages = "".join(f"({string_literal(_script_class(script))}, {string_literal(lang)}),"
                            for script, lang in face.languages)
        spaces = ", ".join(f"{side}: {_space_family(name)}" for side, name in (
            ("text", face.text_space), ("code", face.code_space)))
        entries.append(f'(key: "{face.key}", run: {run}, text: {_metrics(metrics)}, '
                       f"code: {_metrics(code_metrics)}, spaces: ({spaces}), spaced: {spaced}, "
                       f"covers: {covers}, languages: ({languages}), "
                       f"rtl: {'true' if face.rtl else 'false'}),")
        if face.key == "cjk" and symbols:
            run = string_literal("[" + "".join(f"\\u{{{ord(c):x}}}" for c in symbols) + "]")
            entries.append(f'(key: "cjk-symbols", run: {run}, text: {_metrics(metrics)}, '
                           "code: none, spaces: none, rtl: false),")
    return f"#let script-faces = ({''.join(entries)})\n"


def _script_class(script: str) -> str:
    """A regex matching a character of ``script`` (its Unicode name)."""
    return "\\p{sc=" + script + "}"


def _space_family(name: str | None) -> str:
    """A :class:`~renderers.writers.typst.fonts.ScriptFace`'s space family as report.typ's
    value: a string, ``auto`` or ``none``."""
    return "none" if name is None else "auto" if name == "auto" else string_literal(name)


def _metrics(found: tuple[float, float]) -> str:
    """A face's ascender and descender as report.typ's dictionary."""
    return "(ascender: {}, descender: {})".format(*(round(value, 4) for value in found))


def page_footer(words: Labels) -> str:
    """``page-footer(page, pages)``, the footer's text for the page number and the number of
    pages (``Page 1 of 5``), and ``footer-dir``, its direction: right to left for words in a
    right-to-left script ("صفحة 1 من 5" starts at the right)."""
    pieces = {"page": "page", "pages": "[#pages]"}
    body = "; ".join(
        pieces[kind] if kind in pieces else string_literal(text)
        for kind, text in words.page_parts()
    )
    direction = text_direction(words.page) or "ltr"
    return f"#let page-footer(page, pages) = {{ {body} }}\n#let footer-dir = {direction}\n"


def compile_source(
    source: TypstSource,
    options: RenderOptions,
    *,
    stamp: dt.datetime | None,
    output: Literal["pdf", "png"] = "pdf",
    late_links: bool = True,
) -> tuple[list[bytes], list[Diagnostic]]:
    """Compile ``source`` in a fresh, confined root: the PDF (one item) or one PNG per page at
    ``options.dpi``, and Typst's warnings. ``late_links=False``: Typst sets every link itself."""
    refuse_reaching_out(source.text)
    scripts = beyond_ascii(source.text)  # every character the script checks below look for
    symbols = cjk_symbols_in(scripts)  # read once: it decides the fonts and lists the faces
    cjk = needs_cjk(scripts) or bool(symbols)
    tagged = options.pdf_variant == "pdf/ua-1"
    # Links to our labels are set after layout (late_links); a PNG has no links, so its
    # placeholders are left as they are (the cheaper layout either way).
    resolve_links = late_links and output == "pdf" and bool(source.link_targets)
    main = (
        f"{rules_prelude(scripts, cjk=cjk, symbols=symbols, language=source.language)}"
        f"{prelude(source.link_targets, late=late_links)}{report_template()}\n{source.text}"
        f"{positions_query() if resolve_links else ''}"
    )
    standard = STANDARDS.get(options.pdf_variant) if options.pdf_variant else None
    LAYOUT_CACHE.release()
    reported = ""
    with tempfile.TemporaryDirectory(prefix="citerender-typst-") as root:
        for name, data in source.images.items():
            (Path(root) / name).write_bytes(data)
        (Path(root) / MAIN).write_text(main, encoding="utf-8")
        compiler = typst.Compiler(input=str(Path(root) / MAIN), root=root,
                                  font_paths=report_fonts(cjk=cjk), sys_inputs={},
                                  package_path=root, package_cache_path=root)
        try:
            result, warnings = compiler.compile_with_warnings(
                format=output,
                ppi=float(options.dpi) if output == "png" else None,
                pdf_standards=[standard] if standard else [],
                pdf_tags=tagged,
                timestamp=stamp,
            )
            if resolve_links:  # answered from the compile just done (about 1 ms)
                reported = compiler.query(selector=f"<{POSITIONS_LABEL}>", field="value", one=True)
        except typst.TypstError as exc:
            missing = _NO_GLYPH.search(_message(exc)) if standard else None
            if missing is not None:  # the input's fault, not ours: say what is accepted
                raise InputError(
                    f"the text {missing.group(1)} has a character no font of the report draws, "
                    f"and {options.pdf_variant} forbids text without a glyph; accepted: text "
                    "the report's fonts draw (remove the character), or no pdf_variant"
                ) from exc
            raise RenderError(
                f"the Typst engine could not lay out the document: {_message(exc)}"
            ) from exc
    pages = result if isinstance(result, list) else [result] if result else []
    notes = [Diagnostic(Code.TYPESETTER_NOTE, f"Typst: {_message(w)}") for w in warnings]
    if resolve_links and pages:
        try:
            pages[0] = resolve_late_links(pages[0], parse_positions(reported))
        except UnexpectedPdfError as exc:  # a Typst that writes its PDF otherwise: slower, correct
            pages, notes = compile_source(source, options, stamp=stamp, output=output,
                                          late_links=False)
            notes.append(Diagnostic(Code.TYPESETTER_NOTE, f"Typst: links set by Typst ({exc})"))
            return pages, notes
    if output == "pdf" and pages:
        pages[0] = merge_link_annotations(pages[0])
        # a Typst that writes its PDF otherwise keeps its own /Lang (language and region)
        with contextlib.suppress(UnexpectedPdfError):
            pages[0] = declare_language(pages[0], source.language.tag)
    return pages, notes


def refuse_reaching_out(markup: str) -> None:
    """Refuse markup whose code (outside string literals) imports or includes anything.

    The writer never writes such markup — the author's text is always inside string literals —
    so this is the second line of defence: Typst's compile root holds only our files, but a
    package import would make Typst download it.
    """
    if _REACHING_OUT.search(markup) is None:  # none even in the text: no literal to skip
        return
    found = _REACHING_OUT.search(_STRING_LITERAL.sub('""', markup))
    if found is not None:
        raise RenderError(
            f"the Typst markup would reach beyond its root ({found.group(0)!r}); refused"
        )


def typst_pdf(
    rdoc: ResolvedDocument, options: RenderOptions
) -> tuple[bytes, int, list[Diagnostic]]:
    """The PDF of ``rdoc`` through Typst, its page count and Typst's warnings; the page
    limit applies."""
    stamp = _timestamp(options)
    source = typst_source(rdoc, options, dated=stamp is not None)
    pages, notes = compile_source(source, options, stamp=stamp)
    if not pages:
        raise RenderError("the Typst engine produced no PDF")
    count = page_count(pages[0])
    if count > options.limits.max_pages:
        raise LimitError(
            f"the document lays out to {count} pages; the limit is "
            f"{options.limits.max_pages} (limits.max_pages)"
        )
    return pages[0], count, notes


def pdf_artifact(source: WriteSource) -> Artifact:
    """The Typst engine's PDF writer: the PDF, its pages, Typst's warnings, and a warning when
    HTML input brings a stylesheet that Typst cannot apply."""
    pdf, count, notes = typst_pdf(source.rdoc, source.options)
    html = source.html_input()
    if html is not None and has_author_styles(html):
        notes.insert(0, Diagnostic(Code.STYLES_NOT_APPLIED, STYLES_NOT_APPLIED))
    return Artifact((pdf,), stats={"pages": count}, diagnostics=tuple(notes))
