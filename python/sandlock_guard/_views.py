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

_INVISIBLE = (list(range(0x200B, 0x2010)) + list(range(0x202A, 0x202F))
              + list(range(0x2060, 0x2065)) + list(range(0x2066, 0x206A))
              + [0xFEFF, 0x00AD, 0x180E, 0xE0000, 0xE0001, 0xE007F])
_TABLE: dict[int, str | None] = {ord(k): v for k, v in CONFUSABLES.items()}
_TABLE.update({c: None for c in _INVISIBLE})
_TABLE.update({0xE0000 + c: chr(c) for c in range(0x20, 0x7F)})

_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX = re.compile(r"[0-9A-Fa-f]{24,}")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_BACKSLASH = re.compile(r"\\(?:u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|x[0-9A-Fa-f]{2}|[ntr\"'\\])")
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "\\": "\\"}


def _nfkc(text: str) -> str:
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text
    return unicodedata.normalize("NFKC", text)


def _mapped(m: re.Match) -> str:
    return m.group(0).translate(_TABLE)


def normalize(text: str) -> str:
    """NFKC, case folded, confusables mapped, invisible characters removed."""
    folded = _nfkc(text).casefold()
    if folded.isascii():
        return folded
    return _nfkc(_NON_ASCII.sub(_mapped, folded))


def _backslash(m: re.Match) -> str:
    s = m.group(0)
    if s[1] in _SIMPLE:
        return _SIMPLE[s[1]]
    c = int(s[2:], 16)
    if c > 0x10FFFF or 0xD800 <= c <= 0xDFFF:
        return s
    return chr(c)


def unescape(text: str) -> str:
    """One round of HTML entity, %XX and backslash-escape decoding."""
    out = html.unescape(text) if "&" in text else text
    if "%" in out and _PERCENT.search(out):
        out = unquote(out, errors="replace")
    if "\\" in out:
        out = _BACKSLASH.sub(_backslash, out)
    return out


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


def blobs(text: str, cache: dict[str, list[str]] | None = None) -> list[str]:
    """The texts that base64 and hex blobs in @text decode to (binary ones are skipped).
    @cache keeps each candidate's decoding for the other views of one scan, which share
    most of their candidates."""
    cache = {} if cache is None else cache
    found = []
    for m in _BASE64.finditer(text):
        blob = m.group(0)
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


def views(text: str) -> list[tuple[str, bool]]:
    """Every text to scan, as (text, normalized), the input first; a text that normalizing
    leaves alone is listed both ways. Raises ScanError("processing_limit") past a bound."""
    budget = _Budget(text)
    decoded: dict[str, list[str]] = {}
    out: list[tuple[str, bool]] = []
    seen = {text}
    work = [(text, 0)]
    while work:
        cur, depth = work.pop()
        if cur is not text:
            budget.take(cur)
        out.append((cur, False))
        norm = normalize(cur)
        if norm == cur:
            out.append((cur, True))
        elif norm not in seen:
            seen.add(norm)
            budget.take(norm)
            out.append((norm, True))
        children = [unescape(cur)] + blobs(cur, decoded)
        if norm != cur:
            children.append(unescape(norm))
        for child in children:
            if child in seen:
                continue
            if depth + 1 > MAX_DEPTH:
                raise ScanError("processing_limit", f"encodings nested deeper than {MAX_DEPTH}")
            seen.add(child)
            work.append((child, depth + 1))
    return out
