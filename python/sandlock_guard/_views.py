# SPDX-License-Identifier: LGPL-2.1-or-later
"""Derived views of an input: the texts the rules also run on, so that an instruction hidden
by encoding is seen in the clear. From each text come its normalized form (NFKC, case folding,
the confusables table, default-ignorable characters removed, blanks read as spaces, line
breaks as \n and Unicode tag characters read as the ASCII they smuggle), its unescaped form
(HTML entities and line breaks, %XX, %uHHHH, backslash escapes), the text of each base64 or hex
blob in it, the bytes a run of variation selectors spells and those all its selectors spell,
and one view with each blob's text in place; each of those is taken apart the same way in
turn.

The work is bounded: decoding nests at most MAX_DEPTH levels, at most MAX_VIEWS texts come out,
and their total size is at most VIEW_CHARS_FACTOR times the input plus VIEW_CHARS_SLACK
characters. Past a bound the scan raises ScanError("processing_limit"), since a view not looked
at could be the one that holds the instruction."""

from __future__ import annotations

import html
import re
import unicodedata
from urllib.parse import unquote

from ._blobs import MIN_BLOB_TEXT, as_text, blobs, decoded_spans
from ._confusables import CONFUSABLES
from ._variants import PLAIN_SELECTORS, VARIATION_SELECTORS
from ._types import ScanError

MAX_DEPTH = 4
MAX_VIEWS = 256
VIEW_CHARS_FACTOR = 8
VIEW_CHARS_SLACK = 65536
SPLICE_CONTEXT = 256  # the clear text kept either side of a blob in the spliced view
REGION_GAP = 64  # escapes closer than this share one region (fewer, longer regions)
NORMALIZE_BLOCK = 1024  # the text is normalized in blocks this long, cut before ASCII

# Unicode's Default_Ignorable_Code_Point characters: invisible, and read through by models.
# The Hangul fillers are listed with the blanks below instead (they render as a space).
_INVISIBLE = ([0x00AD, 0x034F, 0x061C, 0x17B4, 0x17B5, 0xFEFF]
              + list(range(0x180B, 0x1810)) + list(range(0x200B, 0x2010))
              + list(range(0x202A, 0x202F)) + list(range(0x2060, 0x2070))
              + list(range(0xFE00, 0xFE10)) + list(range(0xFFF0, 0xFFF9))
              + list(range(0x1BCA0, 0x1BCA4)) + list(range(0x1D173, 0x1D17B))
              + list(range(0xE0000, 0xE1000)))
# Characters that show as a blank but are no Unicode space: read as one.
BLANKS = (0x115F, 0x1160, 0x2800, 0x3164, 0xFFA0)
# Line breaks other than \n (those of str.splitlines): read as \n, for the line-anchored rules.
_BREAKS = (0x0D, 0x0B, 0x0C, 0x1C, 0x1D, 0x1E, 0x85, 0x2028, 0x2029)
_ASCII_BREAKS = tuple(chr(c) for c in _BREAKS if c < 0x80)
_ASCII_BREAK = re.compile("[%s]" % "".join(_ASCII_BREAKS))
_BREAK_TABLE = {c: "\n" for c in _BREAKS}
# For reading blobs: invisible characters removed, tag characters as their ASCII, case kept.
_STRIP: dict[int, str | None] = {c: None for c in _INVISIBLE}
_STRIP.update({0xE0000 + c: chr(c) for c in range(0x20, 0x7F)})


def _char_class(codes) -> re.Pattern:
    """A character class of @codes, written as ranges (a class of single characters is
    tried one by one)."""
    out, codes = [], sorted(codes)
    lo = prev = codes[0]
    for c in codes[1:] + [None]:
        if c is not None and c == prev + 1:
            prev = c
            continue
        out.append(re.escape(chr(lo)) + ("-" + re.escape(chr(prev)) if prev > lo else ""))
        if c is not None:
            lo = prev = c
    return re.compile("[%s]" % "".join(out))


_STRIPPED = _char_class(_STRIP)
_TABLE: dict[int, str | None] = {ord(k): v for k, v in CONFUSABLES.items()}
_TABLE.update({c: None for c in _INVISIBLE})
_TABLE.update({c: " " for c in BLANKS})
_TABLE.update(_BREAK_TABLE)
# Tag characters smuggle ASCII: read as it, case folded like the rest of the text.
_TABLE.update({0xE0000 + c: chr(c).lower() for c in range(0x20, 0x7F)})

_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_ASCII = re.compile(r"[\x00-\x7f]")
_SEGMENT = re.compile(r"([\x00-\x7f]?[^\x00-\x7f]+)")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_PERCENT_U = re.compile(r"%[uU]([0-9A-Fa-f]{4})")
# The HTML line breaks, as \n: the line-anchored rules must see the lines a page shows. A tag
# in the text, with or without whitespace before its end (<br />, <BR >), whose region holds
# it whole (see escape_regions); and one that entities spell, without whitespace, since no
# region reaches across the whitespace between entities.
_HTML_BREAK = re.compile(r"<(?:br[ \t\n\r\f\v]*/?|/p[ \t\n\r\f\v]*)>", re.IGNORECASE)
_ENTITY_BREAK = re.compile(r"<(?:br/?|/p)>", re.IGNORECASE)
_TAG_STARTS = ("br", "BR", "Br", "bR", "/p", "/P")
_BACKSLASH = re.compile(r"\\(?:u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|x[0-9A-Fa-f]{2}|[ntr\"'\\])")
_WS = re.compile(r"[ \t\n\r\f\v]")
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "\\": "\\"}


def _nfkc(text: str) -> str:
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text
    return unicodedata.normalize("NFKC", text)


def _mapped(m: re.Match) -> str:
    return m.group(0).translate(_TABLE)


def _ascii_breaks(text: str) -> str:
    """@text with its ASCII line breaks other than \n as \n (one str.find each for the
    text that has none, nearly all)."""
    if len(text) < 4096:  # one search costs less than six finds on a short text
        return text if _ASCII_BREAK.search(text) is None else text.translate(_BREAK_TABLE)
    if any(c in text for c in _ASCII_BREAKS):
        return text.translate(_BREAK_TABLE)
    return text


def _without_marks(text: str) -> str:
    """@text decomposed and without its combining marks: "ígnóré" reads "ignore", as a model
    reads it. The rules are English; a mark changes no word they look for."""
    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))


def _normalize_all(text: str) -> str:
    folded = _nfkc(text).casefold()
    if not folded.isascii():
        folded = _nfkc(_without_marks(_NON_ASCII.sub(_mapped, folded)))
    return _ascii_breaks(folded)


def _normalize_block(text: str) -> str:
    if text.isascii():
        return text.lower()
    parts = _SEGMENT.split(text)
    for i in range(1, len(parts), 2):
        parts[i] = _normalize_all(parts[i])
    for i in range(0, len(parts), 2):
        parts[i] = parts[i].lower()
    return "".join(parts)


def normalize(text: str) -> str:
    """NFKC, case folded, confusables mapped, combining marks (accents) and invisible
    (default-ignorable) characters removed, blank-looking ones read as a space, every line
    break as \n. Only the runs of non-ASCII characters (each with the ASCII character before
    it, which a combining mark may join) go through Unicode normalization; the ASCII between
    them is only lowered. That is the same text: no character composes with an ASCII one
    that follows it, and case folding and the table map one character at a time
    (test_guard.py compares both on random text). The text is taken in blocks cut before
    ASCII characters, so that the all-ASCII ones, most of them, skip the search for non-ASCII
    runs."""
    return _ascii_breaks(_fold(text))


def _fold(text: str) -> str:
    """normalize() but for the ASCII line breaks, which a scan maps once per view (they map
    one character to one, so the pieces of a view line up the same either way)."""
    if text.isascii():
        return text.lower()
    out, start, n = [], 0, len(text)
    while start < n:
        m = _ASCII.search(text, min(start + NORMALIZE_BLOCK, n))
        end = n if m is None else m.start()
        out.append(_normalize_block(text[start:end]))
        start = end
    return "".join(out)


def _backslash(m: re.Match) -> str:
    s = m.group(0)
    if s[1] in _SIMPLE:
        return _SIMPLE[s[1]]
    c = int(s[2:], 16)
    if c > 0x10FFFF or 0xD800 <= c <= 0xDFFF:
        return s
    return chr(c)


def _percent_u(m: re.Match) -> str:
    c = int(m.group(1), 16)
    return m.group(0) if 0xD800 <= c <= 0xDFFF else chr(c)


# A decimal character reference of nine digits or more: html.unescape's int() refuses one of
# 4300 digits (ValueError), and a browser reads leading zeros through (&#0000000105; is "i").
_LONG_DECIMAL = re.compile(r"&#([0-9]{9,})")


def _short_decimal(m: re.Match) -> str:
    digits = m.group(1).lstrip("0") or "0"
    # Past eight digits a reference is past U+10FFFF, which html.unescape reads as U+FFFD.
    return "&#" + (digits if len(digits) <= 8 else "1114112")


def _unescape_all(text: str) -> str:
    out = _HTML_BREAK.sub("\n", text) if "<" in text else text
    if "&" in out:
        if "&#" in out:
            out = _LONG_DECIMAL.sub(_short_decimal, out)
        out = html.unescape(out)
        if "<" in out:
            out = _ENTITY_BREAK.sub("\n", out)
    if "%" in out:
        if "%u" in out or "%U" in out:
            out = _PERCENT_U.sub(_percent_u, out)
        if _PERCENT.search(out):
            out = unquote(out, errors="replace")
    if "\\" in out:
        out = _BACKSLASH.sub(_backslash, out)
    return out


def _run_start(text: str, i: int) -> int:
    """Where the run of non-ASCII-whitespace characters holding @i starts."""
    step = 64
    while True:
        lo = max(0, i - step)
        m = _WS.search(text[lo:i][::-1])
        if m is not None:
            return i - m.start()
        if lo == 0:
            return 0
        step *= 4


def _run_end(text: str, i: int) -> int:
    m = _WS.search(text, i)
    return len(text) if m is None else m.start()


def escape_regions(text: str) -> list[tuple[int, int]]:
    """The spans of @text that unescaping can change: each starts after ASCII whitespace (or
    at the start) and ends before it (or at the end), holds every run of non-whitespace with
    an escape character (&, %, \\, the < of <br> or </p>) in it, and stretches of plain text
    between such runs when they are closer than REGION_GAP. No escape reaches across ASCII
    whitespace (entities, %XX runs and backslash escapes hold none, and ASCII bytes end any
    UTF-8 sequence) but an HTML line break such as <br />, which a span holds whole, so
    unescaping each span alone and keeping the text between them as it is gives the same text
    as unescaping the whole; normalizing is the same piecewise too (see normalize)."""
    out: list[tuple[int, int]] = []
    nxt = _Escapes(text)
    i = nxt.at(0)
    while i >= 0:
        start = _run_start(text, i)
        end = _region_end(text, i, i + REGION_GAP)
        i = nxt.at(end)
        while 0 <= i < end + REGION_GAP:
            end = _region_end(text, i, i + REGION_GAP)
            i = nxt.at(end)
        out.append((start, end))
    return out


def _region_end(text: str, i: int, pos: int) -> int:
    """Where a span that holds the escape at @i ends: at the ASCII whitespace at or after @pos,
    or past it where that whitespace is inside an HTML line break that starts in the span."""
    end = _run_end(text, pos)
    j = text.find("<", i, end)
    while j >= 0:
        m = _HTML_BREAK.match(text, j)
        if m is not None and m.end() > end:
            end = _run_end(text, m.end())
        j = text.find("<", j + 1, end)
    return end


class _Escapes:
    """The next escape character at or after a position, by one str.find per character and
    stretch (a character class search is ten times slower)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.next = {c: -2 for c in "&%\\<"}

    def _find(self, c: str, pos: int) -> int:
        i = self.text.find(c, pos)
        if c == "<":  # only an HTML line break is an escape
            while i >= 0 and not self.text.startswith(_TAG_STARTS, i + 1):
                i = self.text.find(c, i + 1)
        return i

    def at(self, pos: int) -> int:
        best = -1
        for c, i in self.next.items():
            if -1 < i < pos or i == -2:
                i = self.next[c] = self._find(c, pos)
            if i >= 0 and (best < 0 or i < best):
                best = i
        return best


def pieces(text: str, regions: list[tuple[int, int]]) -> list[tuple[str, bool]]:
    """@text cut at @regions, as (piece, escaped), plain and escaped pieces alternating."""
    out, prev = [], 0
    for start, end in regions:
        out.append((text[prev:start], False))
        out.append((text[start:end], True))
        prev = end
    out.append((text[prev:], False))
    return out


def unescape(text: str) -> str:
    """One round of HTML entity, HTML line break, %XX, %uHHHH and backslash-escape decoding."""
    return "".join(_unescape_all(p) if esc else p
                   for p, esc in pieces(text, escape_regions(text)))


# What reads as a gap between words in a normalized view: whitespace, the blanks, and the
# invisible characters (removed there). A run of them that holds whitespace or a blank
# counts as one character in the spliced view's context, since the rules' \s+ has no bound.
_GAP_RUN = re.compile("[\\s%s]+" % _char_class(list(BLANKS) + _INVISIBLE).pattern[1:-1])
_GAP = re.compile("[\\s%s]" % "".join(map(chr, BLANKS)))
_LINE = re.compile("[\n%s]" % "".join(map(chr, _BREAKS)))


def _squeezed(m: re.Match) -> str:
    run = m.group(0)
    if _GAP.search(run) is None:
        return run  # invisible characters inside a word
    return "\n" if _LINE.search(run) else " "


def _squeeze(text: str) -> str:
    """@text with each run of gap characters that holds whitespace or a blank as one
    character: a newline where the run holds a line break, else a space."""
    return _GAP_RUN.sub(_squeezed, text)


def _before(text: str, start: int) -> str:
    """The context kept before a blob at @start: SPLICE_CONTEXT characters squeezed, out to
    ASCII whitespace (a phrase's word is read whole)."""
    width = SPLICE_CONTEXT
    while True:
        lo = _run_start(text, max(0, start - width))
        out = _squeeze(text[lo:start])
        if len(out) >= SPLICE_CONTEXT or lo == 0:
            break
        width *= 4
    cut = len(out) - SPLICE_CONTEXT
    if cut > 0:
        out = out[_run_start(out, cut + 1):]
    return out


def _after(text: str, end: int) -> str:
    """The context kept after a blob that ends at @end, as _before keeps it."""
    width, n = SPLICE_CONTEXT, len(text)
    while True:
        hi = _run_end(text, min(n, end + width))
        out = _squeeze(text[end:hi])
        if len(out) >= SPLICE_CONTEXT or hi == n:
            break
        width *= 4
    return out[:_run_end(out, SPLICE_CONTEXT)]


def _near(text: str, end: int, start: int) -> bool:
    """Whether blobs that end at @end and start at @start share one context: at most twice
    SPLICE_CONTEXT characters between them, squeezed. The gap is squeezed a piece at a time,
    out to ASCII whitespace, until it is longer than that (a whitespace run cut between two
    pieces counts twice)."""
    room, pos, width = 2 * SPLICE_CONTEXT, end, 4 * SPLICE_CONTEXT
    while pos < start:
        hi = min(start, _run_end(text, pos + width))
        room -= len(_squeeze(text[pos:hi]))
        if room < 0:
            return False
        pos, width = hi, width * 4
    return True


def spliced(text: str, spans: list[tuple[int, int, list[str]]]) -> str | None:
    """The blobs of @text that decode to text (@spans, from decoded_spans), each in place in
    its context (SPLICE_CONTEXT characters either side, each run of whitespace counted and
    kept as one, out to ASCII whitespace), so that a phrase begun in the clear and ended in a
    blob reads whole; one context per group of nearby blobs, a line each. The longest blob
    wins where two overlap (wrapped base64 over its lines). None when no blob decodes."""
    spans = sorted(spans, key=lambda s: (s[0], -s[1]))
    groups: list[list[tuple[int, int, list[str]]]] = []
    for span in spans:
        if groups and span[0] < groups[-1][-1][1]:
            continue
        if groups and _near(text, groups[-1][-1][1], span[0]):
            groups[-1].append(span)
        else:
            groups.append([span])
    out = []
    for group in groups:
        parts, prev = [_before(text, group[0][0])], None
        for start, end, decoded in group:
            if prev is not None:
                parts.append(_squeeze(text[prev:start]))
            parts.append(decoded[0])
            prev = end
        parts.append(_after(text, prev))
        out.append("".join(parts))
    return "\n".join(out) if out else None


_VS_RUN = re.compile(f"[{VARIATION_SELECTORS}]{{2,}}")
# The selectors but the two that choose a character's text or emoji form: benign text is full
# of those, and the bytes they stand for (14 and 15) are controls that no smuggled text holds.
_VS_BYTES = re.compile(f"[{PLAIN_SELECTORS}]")


def non_ascii_spans(text: str, block: int = 1024) -> list[tuple[int, int]]:
    """The spans of @text, in blocks of @block characters, that are not all ASCII; adjacent
    ones joined, so that a run of non-ASCII characters lies inside one span."""
    spans: list[tuple[int, int]] = []
    for start in range(0, len(text), block):
        end = start + block
        if not text[start:end].isascii():
            end = min(end, len(text))
            if spans and spans[-1][1] == start:
                spans[-1] = (spans[-1][0], end)
            else:
                spans.append((start, end))
    return spans


def _vs_byte(c: str) -> int:
    o = ord(c)
    return o - 0xFE00 if o < 0xFE10 else o - 0xE0100 + 16


def smuggled(text: str, spans: list[tuple[int, int]] | None = None) -> list[str]:
    """The texts that variation selectors spell, a byte each ("emoji smuggling": U+FE00-FE0F
    for 0-15, U+E0100-E01EF for 16-255): each run of them (after one visible character), and
    all of the text's selectors in order once there are MIN_BLOB_TEXT of them, but for the
    text and emoji presentation ones, since one selector after each of many characters spells
    bytes too. @spans: the text's non_ascii_spans() when known."""
    if text.isascii():
        return []
    found, every = [], []
    for start, end in non_ascii_spans(text) if spans is None else spans:
        for m in _VS_RUN.finditer(text, start, end):
            s = as_text(bytes(map(_vs_byte, m.group(0))))
            if s is not None:
                found.append(s)
        every += _VS_BYTES.findall(text, start, end)
    if len(every) >= MIN_BLOB_TEXT:
        s = as_text(bytes(map(_vs_byte, every)))
        if s is not None and s not in found:
            found.append(s)
    return found


def loose_pieces(text: str, spans: list[tuple[int, int]] | None = None) -> list[str]:
    """The pieces of @text that NFKC normalization and removing invisible characters change,
    in that form and not case folded, each from ASCII whitespace to ASCII whitespace (no
    blob reaches across it): where a full-width or zero-width-split base64 blob reads as
    one. Only the non-ASCII spans are normalized, each with the character before it, which a
    combining mark may join. @spans: the text's non_ascii_spans() when known."""
    if text.isascii():
        return []
    out = []
    for start, end in non_ascii_spans(text) if spans is None else spans:
        start = max(start - 1, 0)
        seg = text[start:end]
        new = _nfkc(seg)
        if _STRIPPED.search(new):
            new = new.translate(_STRIP)
        if new != seg:
            out.append(text[_run_start(text, start):start] + new + text[end:_run_end(text, end)])
    return out


class _Budget:
    def __init__(self, text: str) -> None:
        self.chars = VIEW_CHARS_FACTOR * len(text) + VIEW_CHARS_SLACK
        self.views = MAX_VIEWS

    def take(self, s: str) -> None:
        self.chars -= len(s)
        self.views -= 1
        if self.views < 0:
            raise ScanError("processing_limit", f"more than {MAX_VIEWS} derived views")
        if self.chars < 0:
            raise ScanError("processing_limit", "derived views exceed the size budget")


class Derived:
    """How an unescaped view's normalized form lines up with its parent's: @base is the
    parent's normalized text, @parts one (base_start, base_end, start, text) per piece, where
    text is None for a piece that equals base[base_start:base_end] and is the piece itself for
    an unescaped one. The rules' lead search reads the plain pieces' leads off the parent."""

    __slots__ = ("base", "parts")

    def __init__(self, base: str, parts: list[tuple[int, int, int, str | None]]) -> None:
        self.base = base
        self.parts = parts


def _aligned(base_parts: list[str], parts: list[str | None]) -> tuple[str, Derived]:
    """The text made of @parts (None: the base part kept), and how it lines up with the base."""
    out, spans, at, pos = [], [], 0, 0
    for base, part in zip(base_parts, parts):
        text = base if part is None else part
        spans.append((at, at + len(base), pos, part))
        out.append(text)
        at += len(base)
        pos += len(text)
    return "".join(out), Derived("".join(base_parts), spans)


class _Child:
    """An unescaped child of a text, with what its scan can take from the text's: the text's
    normalized pieces and the child's pieces (None where it kept the text's). @folded: the
    text is a normalized one, whose blobs are its parent's case folded: a hex blob gives the
    bytes it gave there, already a view, and a base64 one nothing readable (a mixed-case
    alphabet), so for either kind of text only the unescaped pieces can add blobs."""

    __slots__ = ("text", "norm_parts", "parts", "folded", "cut")

    def __init__(self, cut: list[tuple[str, bool]], norm_parts: list[str],
                 folded: bool) -> None:
        self.cut = cut
        self.parts = [_unescape_all(p) if esc else None for p, esc in cut]
        self.text = "".join(p if q is None else q for (p, _), q in zip(cut, self.parts))
        self.norm_parts = norm_parts
        self.folded = folded

    def raw(self) -> Derived:
        """How the child lines up with the text it was unescaped from."""
        return _aligned([p for p, _ in self.cut], self.parts)[1]

    def normalized(self) -> tuple[str, Derived]:
        return _aligned(self.norm_parts, [None if p is None else _fold(p)
                                          for p in self.parts])

    def new_blobs(self, cache: dict[str, list[str]]) -> list[str]:
        """The blobs of the unescaped pieces: those of the kept pieces are the parent's,
        already views (no blob reaches across whitespace, which bounds every piece)."""
        found = []
        for p in self.parts:
            if p is not None:
                found += blobs(p, cache)
        return found


def _hidden(cur: str, child: _Child | None, cache: dict[str, list[str]]) -> list[str]:
    """What @cur smuggles past its blobs: the bytes its variation selectors spell, and the
    blobs that read as one only after NFKC and invisible characters removed. An unescaped
    child of a text holds new ones only in its unescaped pieces, but for the sequence of all
    its selectors, which is read whole again when a piece holds one; one of a normalized text
    holds none (normalizing removes both)."""
    if child is None:
        texts = [cur]
    elif not child.folded:
        texts = [p for p in child.parts if p is not None]
    else:
        return []
    found, selectors = [], False
    for t in texts:
        if t.isascii():
            continue
        spans = non_ascii_spans(t)
        found += smuggled(t, spans)
        if child is not None and not selectors:
            selectors = any(_VS_BYTES.search(t, a, b) for a, b in spans)
        for piece in loose_pieces(t, spans):
            found += blobs(piece, cache)
    if child is not None and selectors:
        found += smuggled(cur)
    return found


def _forms(cur: str, cut: list[tuple[str, bool]], child: _Child | None,
           cache: dict[str, list[str]]):
    """What one text gives before its hidden blobs: (its normalized form, how that lines up
    with the parent's for an unescaped view, its normalized pieces, the texts of its blobs,
    their spans or None when they are not all of the text's)."""
    if child is not None:
        norm, derived = child.normalized()
        found = child.new_blobs(cache)
        norm_parts = [norm] if len(cut) == 1 else [_fold(p) for p, _ in cut]
        return _ascii_breaks(norm), derived, norm_parts, found, None
    spans = decoded_spans(cur, cache)
    found = [s for _, _, texts in spans for s in texts]
    norm_parts = [_fold(p) for p, _ in cut]
    return _ascii_breaks("".join(norm_parts)), None, norm_parts, found, spans


def _children(cur: str, norm: str, cut: list[tuple[str, bool]], norm_parts: list[str],
              found: list[str], spans, cache: dict[str, list[str]]):
    """The texts derived from @cur, as (text, _Child or None): its unescaped form, the texts
    its blobs decode to (@found), the spliced view, and its normalized form's unescaped form."""
    first = _Child(cut, norm_parts, False)
    children = [(first.text, first)] + [(b, None) for b in found]
    if found:
        joined = spliced(cur, decoded_spans(cur, cache) if spans is None else spans)
        if joined is not None:
            children.append((joined, None))
    if norm != cur:
        norm_cut = pieces(norm, escape_regions(norm))
        last = _Child(norm_cut, [_fold(p) for p, _ in norm_cut], True)
        if last.text != norm:  # else it is the normalized view itself, scanned as one
            children.append((last.text, last))
    return children


class _Walk:
    """The views of one input as they are found: each text taken apart in turn, within the
    budget. The raw and the normalized texts are kept apart: a decoded text that equals a
    normalized view is still a raw view (the classifier scores it, the Unicode rules and the
    decoders read it)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.budget = _Budget(text)
        self.decoded: dict[str, list[str]] = {}
        self.out: list[tuple[str, bool, Derived | None]] = []
        self.seen, self.seen_norm = {text}, set()
        self.work: list[tuple[str, int, _Child | None]] = [(text, 0, None)]

    def run(self) -> list[tuple[str, bool, Derived | None]]:
        while self.work:
            self.visit(*self.work.pop())
        return self.out

    def visit(self, cur: str, depth: int, child: _Child | None) -> None:
        if cur is not self.text:
            self.budget.take(cur)
        self.out.append((cur, False, None if child is None else child.raw()))
        cut = pieces(cur, escape_regions(cur))
        norm, derived, norm_parts, found, spans = _forms(cur, cut, child, self.decoded)
        self.add_normalized(cur, norm, derived)
        found += _hidden(cur, child, self.decoded)
        self.push(_children(cur, norm, cut, norm_parts, found, spans, self.decoded), depth + 1)

    def add_normalized(self, cur: str, norm: str, derived: Derived | None) -> None:
        """The normalized view, once: listed as @cur itself when normalizing leaves it alone."""
        if norm in self.seen_norm:
            return
        self.seen_norm.add(norm)
        if norm == cur:
            self.out.append((cur, True, derived))
        else:
            self.budget.take(norm)
            self.out.append((norm, True, derived))

    def push(self, children: list[tuple[str, _Child | None]], depth: int) -> None:
        """Queues the @children not seen yet, at @depth; past MAX_DEPTH, raises ScanError."""
        for sub, hint in children:
            if sub in self.seen:
                continue
            if depth > MAX_DEPTH:
                raise ScanError("processing_limit", f"encodings nested deeper than {MAX_DEPTH}")
            self.seen.add(sub)
            self.work.append((sub, depth, hint))


def derive(text: str) -> list[tuple[str, bool, Derived | None]]:
    """Every text to scan, as (text, normalized, derived), the input first; a text that
    normalizing leaves alone is listed both ways; derived, for an unescaped view, says how it
    lines up with the text it was unescaped from, and for its normalized form how that lines
    up with the text's normalized form. Raises
    ScanError("processing_limit") past a bound."""
    return _Walk(text).run()


def views(text: str) -> list[tuple[str, bool]]:
    """Every text to scan, as (text, normalized): derive() without the alignments."""
    return [(v, norm) for v, norm, _ in derive(text)]
