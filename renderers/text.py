"""Text helpers over the IR: the visible text of a document, its direction, heading ids and the
words too long for a line."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence
from functools import cache
from typing import Literal, TypeVar
from urllib.parse import unquote

from citations.chars import clean_text
from renderers.document import (
    Block,
    BlockQuote,
    BulletList,
    CodeBlock,
    Document,
    Figure,
    FootnoteDef,
    Heading,
    OrderedList,
    Paragraph,
    RawBlock,
    Table,
    ThematicBreak,
    plain_text,
)

_NOT_SLUG = re.compile(r"[^\w\- ]+")
_DASHES = re.compile(r"[\s\-]+")
#: The most characters an id the author gives may have. Pandoc keeps any id as written (white
#: space too, ``{id="a b"}`` and ``<h2 id="a b">``), and so does citerender up to this bound:
#: each writer repeats an id (anchor, bookmark, outline destination, every link to it), so a
#: 100,000-character id would put megabytes in every format.
MAX_GIVEN_ID = 200
#: What an id must be for a heading or an element to keep it (:meth:`HeadingIds.can_keep`),
#: in words: the one rule of the readers' notes on an id and on a link to one.
GIVEN_ID_RULE = f"an id is 1 to {MAX_GIVEN_ID} characters, not all of them white space"
#: Anchors that writers generate themselves; neither a heading nor author HTML takes one.
RESERVED_ANCHOR = re.compile(r"^(?:sources|(?:cite|cnote|src|fn|fnref|fig|tbl|eq|lst)-\d+)$")


def link_target(href: str) -> str:
    """The id an in-document link leads to (``#fn1`` → ``fn1``, percent escapes decoded), or
    "" for a link elsewhere: the one rule of the readers (which ids are places, which links lead
    nowhere) and the writers (which links to drop: :attr:`ResolvedDocument.dead_links`).
    A character no writer can carry is U+FFFD, as in the id it names (the input's ids pass
    :func:`citations.chars.clean_text`): ``#a%0Cb`` leads to ``<p id="a&#12;b">``."""
    return clean_text(unquote(href[1:])) if href.startswith("#") and len(href) > 1 else ""


#: A percent escape of a character :func:`citations.chars.clean_text` replaces (a C0 control
#: other than tab, line feed and carriage return; U+FFFE, U+FFFF).
_UNCARRIED_ESCAPE = re.compile(r"%(?:0[0-8BCEFbcef]|1[0-9A-Fa-f]|[Ee][Ff]%[Bb][Ff]%[Bb][EeFf])")


def carried_link(url: str) -> str:
    """``url`` with each percent escape in an in-document link (``#…``) of a character no
    writer can carry written as U+FFFD's: every writer then writes a link that leads where
    :func:`link_target` says, to the id whose character was replaced the same way."""
    if not url.startswith("#"):
        return url
    return _UNCARRIED_ESCAPE.sub("%EF%BF%BD", url)


#: Length from which a word (a run without white space) may not fit on a line: such a word may
#: break anywhere, as CSS ``overflow-wrap: anywhere`` lets it, in every paginated writer.
LONG_WORD = 25
_LONG_WORD = re.compile(rf"\S{{{LONG_WORD},}}")


def split_long_words(text: str) -> Iterator[tuple[str, bool]]:
    """``text`` as consecutive pieces, each with whether it is a word of LONG_WORD characters
    or more (the other pieces hold the short words and the white space between)."""
    last = 0
    for word in _LONG_WORD.finditer(text):
        if word.start() > last:
            yield text[last : word.start()], False
        yield word.group(0), True
        last = word.end()
    if last < len(text):
        yield text[last:], False


_Tag = TypeVar("_Tag")


def split_runs_at_long_words(
    runs: Sequence[tuple[str, _Tag]],
) -> list[tuple[str, _Tag, bool]]:
    """``runs`` (text, tag) of one line cut where its long words start and end, each piece with
    whether it lies in a long word. A word is counted over the whole line, not per run: a
    highlighted line splits ``obj.m0().m1()…`` or minified JSON into many short runs, which
    together are one word too long for a line and must wrap like any other."""
    line = "".join(text for text, _ in runs)
    cuts = sorted({offset for word in _LONG_WORD.finditer(line) for offset in word.span()})
    inside = {word.start() for word in _LONG_WORD.finditer(line)}  # the starts of long words
    pieces: list[tuple[str, _Tag, bool]] = []
    start, next_cut, in_word = 0, 0, False
    for text, tag in runs:
        end = start + len(text)
        left = start
        while left < end:
            while next_cut < len(cuts) and cuts[next_cut] <= left:
                in_word = cuts[next_cut] in inside  # a cut starts a word or ends one
                next_cut += 1
            right = min(end, cuts[next_cut]) if next_cut < len(cuts) else end
            pieces.append((line[left:right], tag, in_word))
            left = right
        start = end
    return pieces


#: The most combining marks and joiners the PDF engines shape with the character they follow;
#: the rest are shaped as the next cluster. Pango and Typst lay one cluster out in one call into
#: native code, in time (and, in Typst, memory) growing faster than its length: a letter under
#: 80,000 acute accents took Pango 52 s and Typst 27 s and 12 GB, where the deadline cannot
#: interrupt them. No writing system needs more: Unicode's stream-safe text has at most 30
#: (UAX #15).
MOST_MARKS = 30
#: Characters that join the character before them besides combining marks (a break must not
#: precede them).
JOINERS = frozenset("\u200c\u200d\ufe0e\ufe0f")


def extends_cluster(char: str) -> bool:
    """Whether ``char`` belongs to the character before it: a combining mark or a joiner."""
    return char in JOINERS or unicodedata.combining(char) != 0


#: Where Unicode puts every character of nonzero combining class: from U+0300 (the first
#: combining diacritic) to the end of plane 1. Asking ``unicodedata`` about these 130,000 code
#: points takes 10 ms; about all 1.1 million took 74 ms of every render with non-ASCII text, an
#: eighth of the Typst engine's Python side. A test checks the rest of Unicode has none, and
#: that the joiners lie here too.
MARK_CODE_POINTS = range(0x0300, 0x20000)
#: A run of more than MOST_MARKS characters of MARK_CODE_POINTS: where a long run of marks may
#: be. Text without one (all text but CJK, Thai and the absurd) never builds the table of marks.
#: The class is written as what it leaves out, which compiles in 0.05 ms (listing its 130,000
#: code points took 2 ms: the compiler sets a flag for each one in the BMP).
_MAYBE_MARK_RUN = re.compile(
    f"[^\\x00-{chr(MARK_CODE_POINTS.start - 1)}{chr(MARK_CODE_POINTS.stop)}-\\U0010ffff]"
    f"{{{MOST_MARKS + 1},}}"
)


@cache
def _long_mark_run() -> re.Pattern[str]:
    """A run of more than MOST_MARKS characters :func:`extends_cluster` accepts (built once,
    when first needed: it lists every combining mark)."""
    marks = sorted({*map(ord, JOINERS), *(code for code in MARK_CODE_POINTS
                                         if unicodedata.combining(chr(code)))})
    ranges: list[tuple[int, int]] = []
    for code in marks:
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1] = (ranges[-1][0], code)
        else:
            ranges.append((code, code))
    members = "".join(
        re.escape(chr(a)) + ("-" + re.escape(chr(b)) if b > a else "") for a, b in ranges
    )
    return re.compile(f"[{members}]{{{MOST_MARKS + 1},}}")


def cut_long_mark_runs(text: str) -> list[str]:
    """``text`` in pieces, cut after every MOST_MARKS marks of a longer run of them (one piece
    when there is none, as in all text but the absurd)."""
    if text.isascii() or _MAYBE_MARK_RUN.search(text) is None:
        return [text]
    pieces: list[str] = []
    start = 0
    for run in _long_mark_run().finditer(text):
        for cut in range(run.start() + MOST_MARKS, run.end(), MOST_MARKS):
            pieces.append(text[start:cut])
            start = cut
    pieces.append(text[start:])
    return pieces


def has_long_word(text: str) -> bool:
    """Whether ``text`` holds a word of LONG_WORD characters or more."""
    return _LONG_WORD.search(text) is not None


#: The regional faces of Noto Sans CJK: a Han character takes the glyph shapes its region
#: writes (Japanese 直, 骨 differ from Chinese ones). Both PDF engines name
#: ``Noto Sans CJK <region>`` and ``Noto Sans Mono CJK <region>``.
CjkRegion = Literal["SC", "TC", "JP", "KR"]
#: Characters only the CJK collections draw: CJK scripts and symbols, kana, Hangul, full-width
#: forms, enclosed alphanumerics and ideographs beyond the BMP (a regex class).
CJK_CLASS = (
    "[\u2460-\u24ff\u2e80-\ua4cf\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"
    "\U00020000-\U0003ffff]"
)
#: A character that may be CJK: none below U+1100 is, nor any from U+2000 to U+245F
#: (punctuation, currency, letterlike symbols, arrows, mathematical operators), neither in
#: CJK_CLASS nor in the language detection's Han, kana and Hangul (a test checks both). Text
#: without one, as most Latin text (its quotes, dashes and bullets included), never compiles
#: those classes: their 40,000-odd BMP code points take 1.2 ms each, this class 0.4 ms.
_MAYBE_CJK = re.compile("[^\x00-\u10ff\u2000-\u245f]")


def may_have_cjk(text: str) -> bool:
    """Whether ``text`` has a character the CJK classes might hold (:data:`_MAYBE_CJK`)."""
    return _MAYBE_CJK.search(text) is not None


@cache
def _cjk_run() -> re.Pattern[str]:
    """A run of CJK_CLASS, for searches: a repeated class compiles in half the time of a single
    one (no table for a fast scan to its first character, which the short texts searched do
    not need). Compiled for the first text :func:`may_have_cjk` lets through."""
    return re.compile(CJK_CLASS + "+")
#: The characters of kana and of Hangul (one home: the language detection counts them too).
KANA_CHARS = "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f"
HANGUL_CHARS = "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"


@cache
def kana_and_hangul() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A character of kana, and one of Hangul: compiled the first time CJK text is looked at
    (Hangul's class alone takes a millisecond to compile)."""
    return re.compile(f"[{KANA_CHARS}]"), re.compile(f"[{HANGUL_CHARS}]")


_ASCII_RUN = re.compile(r"[\x00-\x7f]+")


def beyond_ascii(text: str) -> str:
    """``text`` without its ASCII characters: all that a question about a script other than
    Latin (CJK, Arabic, Hebrew, Devanagari …) needs to look at. One pass over a long text
    instead of one per script (0.4 ms for a 50-page report's Typst markup, where each script's
    search took 1.5–2.5 ms)."""
    return _ASCII_RUN.sub("", text)


def needs_cjk(text: str) -> bool:
    """Whether ``text`` has a character only the CJK collections draw."""
    return may_have_cjk(text) and _cjk_run().search(text) is not None


def cjk_region(text: str) -> CjkRegion:
    """The Noto Sans CJK face for ``text``: Japanese (JP) when it has kana and no Hangul, Korean
    (KR) when it has Hangul and no kana, else Simplified Chinese (SC) — a document with both
    (the multilingual sample's Chinese, Japanese and Korean sections) keeps the default, as one
    face serves the whole document. The rule for a document that declares no CJK language
    (:meth:`renderers.language.Language.cjk_face`); Han characters never tell Traditional
    Chinese (TC), which must be declared (``lang="zh-Hant"``)."""
    kana_char, hangul_char = kana_and_hangul()
    kana = kana_char.search(text) is not None
    hangul = hangul_char.search(text) is not None
    if kana != hangul:
        return "JP" if kana else "KR"
    return "SC"


Direction = Literal["ltr", "rtl"]
#: LEFT-TO-RIGHT and RIGHT-TO-LEFT MARKS: invisible, strongly directional characters that
#: writers without isolates (DOCX, PPTX) place where a neutral must take a side.
LRM = "\u200e"
RLM = "\u200f"


def text_direction(text: str) -> Direction | None:
    """The direction of ``text`` by its first strongly directional character, as ``dir="auto"``
    decides (Unicode bidi rules P2–P3): ``"rtl"`` for Hebrew, Arabic and the other right-to-left
    scripts, ``"ltr"`` for the rest, None when ``text`` has no strong character at all.

    This is the one rule every writer uses to mark right-to-left paragraphs, list items, table
    cells and Sources entries. What an isolate holds (LRI, RLI or FSI … PDI: a CSL entry's
    Arabic name in English, :mod:`renderers.styles.bidi`) is skipped, as P2 skips it.
    """
    depth = 0  # of the isolates open
    for char in text:
        kind = unicodedata.bidirectional(char)
        if kind in ("R", "AL"):
            if not depth:
                return "rtl"
        elif kind == "L":
            if not depth:
                return "ltr"
        elif kind in _ISOLATE_STEPS:
            depth = max(0, depth + _ISOLATE_STEPS[kind])
    return None


#: How an isolate initiator (LRI, RLI, FSI) or its end (PDI) changes how many are open.
_ISOLATE_STEPS = {"LRI": 1, "RLI": 1, "FSI": 1, "PDI": -1}


#: Characters of the right-to-left scripts (Hebrew, Arabic, Syriac, Thaana, N'Ko … and their
#: presentation forms, the RLM, and the historic right-to-left planes).
_RIGHT_TO_LEFT = re.compile(
    "[\u0590-\u08ff\u200f\ufb1d-\ufdff\ufe70-\ufefc\U00010800-\U00010fff"
    "\U0001e800-\U0001efff]"
)


def has_right_to_left(text: str) -> bool:
    """Whether ``text`` holds any right-to-left character (anywhere, unlike
    :func:`text_direction`, which looks at the first strong one)."""
    return _RIGHT_TO_LEFT.search(text) is not None


def closing_marks(text: str) -> str:
    """The marks that end ``text`` as a part of a right-to-left line read part by part: a
    left-to-right mark after left-to-right text (its final "?" or ")" stays at its end), then
    a right-to-left mark, so that what follows takes the line's direction."""
    return (LRM if text_direction(text) == "ltr" else "") + RLM


#: The mark of each direction (:data:`LRM`, :data:`RLM`).
MARKS: dict[Direction, str] = {"ltr": LRM, "rtl": RLM}
#: LEFT-TO-RIGHT and RIGHT-TO-LEFT ISOLATE, which POP DIRECTIONAL ISOLATE ends: text between
#: them reads in its own direction, one neutral object to the line around it.
ISOLATES: dict[Direction, str] = {"ltr": "\u2066", "rtl": "\u2067"}
POP_ISOLATE = "\u2069"
#: The explicit embeddings and overrides (LRE, RLE, LRO, RLO), which POP DIRECTIONAL
#: FORMATTING ends, and the isolate initiators (LRI, RLI, FSI), which POP_ISOLATE ends.
_EMBEDDINGS = frozenset("\u202a\u202b\u202d\u202e")
POP_FORMATTING = "\u202c"
_ISOLATE_STARTS = frozenset("\u2066\u2067\u2068")
#: Every bidi control that reorders what follows it (those above and their ends).
BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")


def balanced_bidi(text: str) -> str:
    """``text`` (one field of untrusted data: a source's title, label, date) as a part that
    leaves the text around it alone: every embedding, override or isolate it opens is closed
    at its end, and a closer that closes nothing it opened is dropped (it would end a writer's
    own isolate around the field, or an embedding before it). Unchanged without such controls.

    Pairs are matched as the bidi algorithm matches them (UAX #9, X6a–X7): a POP DIRECTIONAL
    ISOLATE closes the last isolate open and whatever was opened inside it; a POP DIRECTIONAL
    FORMATTING closes the last embedding or override, and nothing inside an isolate that was
    opened after it. The algorithm ends them all at a paragraph's end, so without this a
    right-to-left override in the title of one entry reversed the rest of the entry (Typst)."""
    if BIDI_CONTROLS.search(text) is None:
        return text
    out: list[str] = []
    opened: list[str] = []
    isolates = 0  # of ``opened`` (linear: a run of closers does not search it)
    for char in text:
        if char in _EMBEDDINGS:
            opened.append(char)
        elif char in _ISOLATE_STARTS:
            opened.append(char)
            isolates += 1
        elif char == POP_FORMATTING:
            if not opened or opened[-1] not in _EMBEDDINGS:
                continue
            opened.pop()
        elif char == POP_ISOLATE:
            if not isolates:
                continue
            while opened.pop() not in _ISOLATE_STARTS:
                pass
            isolates -= 1
        out.append(char)
    out.extend(POP_ISOLATE if c in _ISOLATE_STARTS else POP_FORMATTING for c in reversed(opened))
    return "".join(out)


def enclosing_marks(inner: Direction, outer: Direction,
                    before: Direction | None = None) -> tuple[str, str]:
    """The marks around text that reads ``inner`` inside a line that reads ``outer``, for
    writers without isolates: ``inner``'s mark before it and after it (its leading and final
    neutrals, a quotation mark or a full stop, stay at its ends), then ``outer``'s, so that what
    follows takes the line's direction. After text reading ``before``, that same ``inner``
    against the line, ``outer``'s mark leads too: else the text joined that run and stood at
    its far end (in an Arabic line, "1, 2" after "heat pumps" stood between the Latin words
    and the Arabic before them), where HTML's and Typst's isolate sets it after the run in the
    line's order."""
    lead = MARKS[outer] if before == inner != outer else ""
    return lead + MARKS[inner], MARKS[inner] + MARKS[outer]


def is_rtl(text: str) -> bool:
    """Whether ``text`` starts (by its first strong character) right-to-left."""
    return text_direction(text) == "rtl"


def blocks_direction(blocks: tuple[Block, ...]) -> Direction | None:
    """The direction of a container (list, list item, quote, table) by its first strong
    character, in document order; code and raw blocks are skipped, because writers always set
    them left-to-right (and ``dir="auto"`` skips elements that carry their own ``dir``)."""
    for block in blocks:
        if found := _block_direction(block):
            return found
    return None


def _block_direction(block: Block) -> Direction | None:
    match block:
        case Heading(children=children) | Paragraph(children):
            return text_direction(plain_text(children))
        case BulletList(items) | OrderedList(items):
            return next((d for item in items if (d := blocks_direction(item.blocks))), None)
        case Table(header, rows, _, caption):
            cells = (plain_text(cell.children) for row in (header, *rows) for cell in row)
            texts = (plain_text(caption), *cells)
            return next((d for text in texts if (d := text_direction(text))), None)
        case BlockQuote(inner) | FootnoteDef(_, inner):
            return blocks_direction(inner)
        case Figure(_, caption):
            return text_direction(plain_text(caption))
        case CodeBlock() | RawBlock() | ThematicBreak():
            return None
    return None


def document_text(document: Document) -> str:
    """The visible text of ``document``, one line per block (citations omitted).

    Code and raw blocks contribute their verbatim text (a listing its caption first), images
    their alt text, tables every cell.
    """
    return blocks_text(document.blocks)


def blocks_text(blocks: tuple[Block, ...]) -> str:
    """The visible text of ``blocks``, one line per block, as :func:`document_text` reads it."""
    lines: list[str] = []
    _collect(blocks, lines)
    return "\n".join(lines)


def _collect(blocks: tuple[Block, ...], lines: list[str]) -> None:
    for block in blocks:
        match block:
            case Heading(children=children) | Paragraph(children):
                lines.append(plain_text(children))
            case BulletList(items) | OrderedList(items):
                for item in items:
                    _collect(item.blocks, lines)
            case Table(header, rows, _, caption):
                for row in (header, *rows):
                    lines.append(" ".join(plain_text(cell.children) for cell in row))
                lines.append(plain_text(caption))
            case CodeBlock(text, _, caption) if caption:
                lines.append(plain_text(caption))
                lines.append(text)
            case CodeBlock(text) | RawBlock(text):
                lines.append(text)
            case BlockQuote(inner) | FootnoteDef(_, inner):
                _collect(inner, lines)
            case Figure(image, caption):
                lines.append(image.alt)
                lines.append(plain_text(caption))
            case ThematicBreak():
                pass


def slugify(text: str) -> str:
    """A GitHub-style anchor: lower case, words joined by ``-`` (``section`` when empty)."""
    normalized = unicodedata.normalize("NFKC", text).strip().lower()
    slug = _DASHES.sub("-", _NOT_SLUG.sub("", normalized)).strip("-")
    return slug or "section"


class HeadingIds:
    """Hands out unique heading ids (``intro``, ``intro-1`` …), never a writer's own anchors."""

    def __init__(self) -> None:
        self._used: set[str] = set()
        #: per slug, the last counter tried: every ``slug-n`` below it is taken (ids are never
        #: freed), so 20,000 headings of one text cost no quadratic search
        self._counters: dict[str, int] = {}

    def reserve(self, ident: str) -> None:
        """Mark ``ident`` taken, exactly as given (an id the document already has)."""
        self._used.add(ident)

    def take(self, given: str, text: str) -> str:
        """The id of a heading: ``given`` (an id its document gave it, which the document's
        links use) as it is when it is free, else a fresh one made from ``given`` (taken) or
        ``text`` (none given, or one no element may keep: a slug of it would be as long).
        An id as a slug is its own slug, so a reader's ids pass through writers unchanged."""
        if self.can_keep(given) and given not in self._used \
                and not RESERVED_ANCHOR.match(given):
            self._used.add(given)
            return given
        return self.assign(given if self.can_keep(given) else text)

    @staticmethod
    def can_keep(given: str) -> bool:
        """Whether ``given`` is an id a heading or an element may keep (:data:`GIVEN_ID_RULE`)."""
        return 0 < len(given) <= MAX_GIVEN_ID and not given.isspace()

    def __contains__(self, ident: object) -> bool:
        """Whether ``ident`` is taken (a heading's or an anchor's)."""
        return ident in self._used

    def claim(self, given: str) -> bool:
        """Take ``given`` exactly as it is for an anchor (an id the author's HTML gave an
        element that is not a heading): True when it was free and is not a writer's own;
        False leaves the id to what already has it."""
        if self.can_keep(given) and given not in self._used \
                and not RESERVED_ANCHOR.match(given):
            self._used.add(given)
            return True
        return False

    def assign(self, text: str) -> str:
        """A fresh id for a heading whose visible text is ``text``."""
        base = slugify(text)
        counter = self._counters.get(base, 0)
        candidate = f"{base}-{counter}" if counter else base
        while candidate in self._used or RESERVED_ANCHOR.match(candidate):
            counter += 1
            candidate = f"{base}-{counter}"
        self._counters[base] = counter
        self._used.add(candidate)
        return candidate


def paragraph_dir(direction: Direction | None, inherited: Direction = "ltr") -> str:
    """The ``dir`` of a paragraph or heading whose text starts in ``direction``.

    WeasyPrint ignores ``dir="auto"`` (the element inherits its parent's direction), so
    right-to-left, and left-to-right inside a right-to-left container, must be said; otherwise
    ``auto`` lets browsers resolve the direction themselves.
    """
    if direction == "rtl":
        return "rtl"
    if direction == "ltr" and inherited == "rtl":
        return "ltr"
    return "auto"
