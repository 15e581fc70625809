# SPDX-License-Identifier: LGPL-2.1-or-later
"""Derived views of an input: the texts the rules also run on, so that an instruction hidden
by encoding is seen in the clear. From each text come its normalized form (NFKC, case folding,
the confusables table, invisible characters removed and Unicode tag characters read as the
ASCII they smuggle), its unescaped form (HTML entities, %XX, backslash escapes) and the text of
each base64 or hex blob in it, and each of those is taken apart the same way in turn.

The work is bounded: decoding nests at most MAX_DEPTH levels, at most MAX_VIEWS texts come out,
and their total size is at most VIEW_CHARS_FACTOR times the input plus VIEW_CHARS_SLACK
characters. Past a bound the scan raises ScanError("processing_limit"), since a view not looked
at could be the one that holds the instruction."""

from __future__ import annotations

import base64
import binascii
import html
import re
import unicodedata
from urllib.parse import unquote

from ._confusables import CONFUSABLES
from ._types import ScanError

MAX_DEPTH = 4
MAX_VIEWS = 256
VIEW_CHARS_FACTOR = 8
VIEW_CHARS_SLACK = 65536
MIN_BLOB_TEXT = 8  # shorter decoded texts are not worth a view
REGION_GAP = 64  # escapes closer than this share one region (fewer, longer regions)
NORMALIZE_BLOCK = 1024  # the text is normalized in blocks this long, cut before ASCII

_INVISIBLE = (list(range(0x200B, 0x2010)) + list(range(0x202A, 0x202F))
              + list(range(0x2060, 0x2065)) + list(range(0x2066, 0x206A))
              + [0xFEFF, 0x00AD, 0x180E, 0xE0000, 0xE0001, 0xE007F])
_TABLE: dict[int, str | None] = {ord(k): v for k, v in CONFUSABLES.items()}
_TABLE.update({c: None for c in _INVISIBLE})
_TABLE.update({0xE0000 + c: chr(c) for c in range(0x20, 0x7F)})

_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_ASCII = re.compile(r"[\x00-\x7f]")
_SEGMENT = re.compile(r"([\x00-\x7f]?[^\x00-\x7f]+)")
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}")
_B64_LETTERS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"
_B64_MASK = bytes(ord("a") if c in _B64_LETTERS else ord(" ") for c in range(256))
_B64_RUN = b"a" * 16
_HEX = re.compile(r"[0-9A-Fa-f]{24,}")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_BACKSLASH = re.compile(r"\\(?:u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|x[0-9A-Fa-f]{2}|[ntr\"'\\])")
_ESCAPES = re.compile(r"[&%\\]")
_WS = re.compile(r"[ \t\n\r\f\v]")
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "\\": "\\"}


def _nfkc(text: str) -> str:
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text
    return unicodedata.normalize("NFKC", text)


def _mapped(m: re.Match) -> str:
    return m.group(0).translate(_TABLE)


def _normalize_all(text: str) -> str:
    folded = _nfkc(text).casefold()
    if folded.isascii():
        return folded
    return _nfkc(_NON_ASCII.sub(_mapped, folded))


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
    """NFKC, case folded, confusables mapped, invisible characters removed. Only the runs of
    non-ASCII characters (each with the ASCII character before it, which a combining mark may
    join) go through Unicode normalization; the ASCII between them is only lowered. That is
    the same text: no character composes with an ASCII one that follows it, and case folding
    and the table map one character at a time (test_guard.py compares both on random text).
    The text is taken in blocks cut before ASCII characters, so that the all-ASCII ones, most
    of them, skip the search for non-ASCII runs."""
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


def _unescape_all(text: str) -> str:
    out = html.unescape(text) if "&" in text else text
    if "%" in out and _PERCENT.search(out):
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
    an escape character (&, %, \\) in it, and stretches of plain text between such runs when
    they are closer than REGION_GAP. No escape reaches across ASCII whitespace (entities, %XX
    runs and backslash escapes hold none, and ASCII bytes end any UTF-8 sequence), so
    unescaping each span alone and keeping the text between them as it is gives the same text
    as unescaping the whole; normalizing is the same piecewise too (see normalize)."""
    out: list[tuple[int, int]] = []
    nxt = _Escapes(text)
    i = nxt.at(0)
    while i >= 0:
        start = _run_start(text, i)
        end = _run_end(text, i + REGION_GAP)
        i = nxt.at(end)
        while 0 <= i < end + REGION_GAP:
            end = _run_end(text, i + REGION_GAP)
            i = nxt.at(end)
        out.append((start, end))
    return out


class _Escapes:
    """The next escape character at or after a position, by one str.find per character and
    stretch (a character class search is ten times slower)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.next = {c: -2 for c in "&%\\"}

    def at(self, pos: int) -> int:
        best = -1
        for c, i in self.next.items():
            if -1 < i < pos or i == -2:
                i = self.next[c] = self.text.find(c, pos)
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
    """One round of HTML entity, %XX and backslash-escape decoding."""
    return "".join(_unescape_all(p) if esc else p
                   for p, esc in pieces(text, escape_regions(text)))


def _as_text(data: bytes) -> str | None:
    try:
        s = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(s) < MIN_BLOB_TEXT:
        return None
    good = sum(1 for c in s if c.isprintable() or c in "\n\r\t")
    return s if good * 10 >= len(s) * 9 else None


def _b64(blob: str) -> bytes | None:
    body = blob.rstrip("=")
    if len(body) % 4 == 1:
        body = body[:-1]
    padded = body + "=" * (-len(body) % 4)
    alt = b"-_" if ("-" in body or "_" in body) else None
    if alt and ("+" in body or "/" in body):
        return None
    try:
        return base64.b64decode(padded, altchars=alt, validate=True)
    except (binascii.Error, ValueError):
        return None


def _decode_blob(blob: str) -> list[str]:
    found = []
    data = _b64(blob)
    s = _as_text(data) if data else None
    if s is not None:
        found.append(s)
    # Hex digits are base64 letters too: a hex run is part of some base64 match.
    for h in _HEX.findall(blob):
        s = _as_text(bytes.fromhex(h[:len(h) & ~1]))
        if s is not None:
            found.append(s)
    return found


def _candidates(text: str):
    """The base64 candidates of @text: what _BASE64.finditer finds (maximal runs of 16 or
    more base64 letters, and up to two "=" after), found by str.find on a mask of the text
    where each base64 letter reads "a" and every other character " "."""
    mask = text.encode("ascii", "replace").translate(_B64_MASK)
    find, n, pos = mask.find, len(text), 0
    while True:
        start = find(_B64_RUN, pos)
        if start < 0:
            return
        end = find(b" ", start + len(_B64_RUN))
        end = n if end < 0 else end
        pos = end
        while end < n and end - pos < 2 and text[end] == "=":
            end += 1
        yield text[start:end]


def blobs(text: str, cache: dict[str, list[str]] | None = None) -> list[str]:
    """The texts that base64 and hex blobs in @text decode to (binary ones are skipped).
    @cache keeps each candidate's decoding for the other views of one scan, which share
    most of their candidates."""
    cache = {} if cache is None else cache
    found = []
    for blob in _candidates(text):
        decoded = cache.get(blob)
        if decoded is None:
            decoded = cache[blob] = _decode_blob(blob)
        found += decoded
    return found


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
    normalized pieces and the child's pieces (None where it kept the text's). @blobs_seen:
    the text's blobs are views already, so only the unescaped pieces can add any."""

    __slots__ = ("text", "norm_parts", "parts", "blobs_seen", "cut")

    def __init__(self, cut: list[tuple[str, bool]], norm_parts: list[str],
                 blobs_seen: bool) -> None:
        self.cut = cut
        self.parts = [_unescape_all(p) if esc else None for p, esc in cut]
        self.text = "".join(p if q is None else q for (p, _), q in zip(cut, self.parts))
        self.norm_parts = norm_parts
        self.blobs_seen = blobs_seen

    def raw(self) -> Derived:
        """How the child lines up with the text it was unescaped from."""
        return _aligned([p for p, _ in self.cut], self.parts)[1]

    def normalized(self) -> tuple[str, Derived]:
        return _aligned(self.norm_parts, [None if p is None else normalize(p)
                                          for p in self.parts])

    def new_blobs(self, cache: dict[str, list[str]]) -> list[str]:
        """The blobs of the unescaped pieces: those of the kept pieces are the parent's,
        already views (no blob reaches across whitespace, which bounds every piece)."""
        if not self.blobs_seen:
            return blobs(self.text, cache)
        found = []
        for p in self.parts:
            if p is not None:
                found += blobs(p, cache)
        return found


def derive(text: str) -> list[tuple[str, bool, Derived | None]]:
    """Every text to scan, as (text, normalized, derived), the input first; a text that
    normalizing leaves alone is listed both ways; derived, for an unescaped view, says how it
    lines up with the text it was unescaped from, and for its normalized form how that lines
    up with the text's normalized form. Raises
    ScanError("processing_limit") past a bound."""
    budget = _Budget(text)
    decoded: dict[str, list[str]] = {}
    out: list[tuple[str, bool, Derived | None]] = []
    seen = {text}
    work: list[tuple[str, int, _Child | None]] = [(text, 0, None)]
    while work:
        cur, depth, child = work.pop()
        if cur is not text:
            budget.take(cur)
        out.append((cur, False, None if child is None else child.raw()))
        cut = pieces(cur, escape_regions(cur))
        if child is not None:
            norm, derived = child.normalized()
            found = child.new_blobs(decoded)
            norm_parts = [norm] if len(cut) == 1 else [normalize(p) for p, _ in cut]
        else:
            derived = None
            found = blobs(cur, decoded)
            norm_parts = [normalize(p) for p, _ in cut]
            norm = "".join(norm_parts)
        if norm == cur:
            out.append((cur, True, derived))
        elif norm not in seen:
            seen.add(norm)
            budget.take(norm)
            out.append((norm, True, derived))
        first = _Child(cut, norm_parts, True)
        children = [(first.text, first)] + [(b, None) for b in found]
        if norm != cur:
            norm_cut = pieces(norm, escape_regions(norm))
            last = _Child(norm_cut, [normalize(p) for p, _ in norm_cut], False)
            children.append((last.text, last))
        for sub, hint in children:
            if sub in seen:
                continue
            if depth + 1 > MAX_DEPTH:
                raise ScanError("processing_limit", f"encodings nested deeper than {MAX_DEPTH}")
            seen.add(sub)
            work.append((sub, depth + 1, hint))
    return out


def views(text: str) -> list[tuple[str, bool]]:
    """Every text to scan, as (text, normalized): derive() without the alignments."""
    return [(v, norm) for v, norm, _ in derive(text)]
