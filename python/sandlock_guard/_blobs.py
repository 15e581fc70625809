# SPDX-License-Identifier: LGPL-2.1-or-later
"""The blobs a text holds and the texts they decode to: base64 runs (either alphabet, or
both read through the other's letters as junk), base64 wrapped over lines, hex runs and hex
bytes with a space or a colon between each two. A blob counts when what it decodes to holds
text: all of it, or its runs of MIN_BLOB_TEXT or more text characters."""

from __future__ import annotations

import binascii
import re

MIN_BLOB_TEXT = 8  # shorter decoded texts are not worth a view
MIXED_SPECIALS = 8  # a base64 run of both alphabets is read when one letter in this is +/-_

_BASE64 = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}")
_B64_LETTERS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"
_B64_MASK = bytes(ord("a") if c in _B64_LETTERS else ord(" ") for c in range(256))
_LINE_BREAK_BYTES = (b"\n", b"\r")
_B64_RUN = b"a" * 16
_HEX = re.compile(r"[0-9A-Fa-f]{24,}")
_B64_TAIL = re.compile(r"[A-Za-z0-9+/_-]{1,15}={0,2}(?![A-Za-z0-9+/_=-])")
_HEX_DIGIT = ord("h")
_HEX_MASK = bytes(_HEX_DIGIT if chr(c) in "0123456789abcdefABCDEF" else ord(":")
                  if chr(c) in " :" else ord(" ") for c in range(256))
_HEX_SEP_RUN = b"hh:" * 11 + b"hh"
_HEX_SEP_MIN = len(_HEX_SEP_RUN)
_HEX_SEPARATED = re.compile(r"[0-9A-Fa-f]{2}([ :])[0-9A-Fa-f]{2}(?:\1[0-9A-Fa-f]{2})*"
                            r"(?![0-9A-Fa-f])")


# The characters a decoded blob's text runs are made of: all but the C0 and C1 controls (tab
# and line breaks kept) and the replacement character that stands for bytes not UTF-8.
_TEXT_RUN = re.compile(r"[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd]{%d,}" % MIN_BLOB_TEXT)


def as_text(data: bytes) -> str | None:
    """The text @data holds: all of it when it is UTF-8 and nine tenths printable, else its
    runs of MIN_BLOB_TEXT or more text characters, one a line (a model reads through a junk
    byte, so the scan must too); None when there are none."""
    s = data.decode("utf-8", "replace")
    if len(s) < MIN_BLOB_TEXT:
        return None
    if "\ufffd" not in s:
        good = sum(1 for c in s if c.isprintable() or c in "\n\r\t")
        if good * 10 >= len(s) * 9:
            return s
    runs = _TEXT_RUN.findall(s)
    return "\n".join(runs) if runs else None


_STANDARD_ONLY = re.compile(r"[+/]+")
_URL_ONLY = re.compile(r"[-_]+")


def _as_standard(body: str) -> str:
    """@body with the URL-safe letters as the standard ones (str.replace: str.translate
    looks up every character in a table)."""
    return body.replace("-", "+").replace("_", "/")


def _b64_standard(body: str) -> bytes:
    """@body, letters of the standard alphabet only, decoded (a last odd letter dropped). It
    holds no other character, so the decoder's lenient mode, the fast one, reads it as the
    strict one would."""
    if len(body) % 4 == 1:
        body = body[:-1]
    return binascii.a2b_base64(body + "=" * (-len(body) % 4))


def _b64_junked(body: str, junk: re.Pattern) -> str:
    """@body with the letters @junk matches taken as junk: before each, the 4-letter groups up
    to it are kept; after the last, the rest. (Joined whole groups decode as each alone.)"""
    pieces = junk.split(body)
    return "".join([p[:len(p) & ~3] for p in pieces[:-1]] + [pieces[-1]])


def _b64(blob: str) -> list[bytes]:
    """The bytes a base64 run reads as. A run of both alphabets (one "-" or "_" and one "+"
    or "/") is read three ways, since a model reads through junk letters: both alphabets as
    one, and each alphabet with the other's letters as junk; but only where it has the shape
    of base64, at most one letter in MIXED_SPECIALS one of the four (base64 of text has
    almost none, of random bytes one in 32): a path has one in five, and reading each of a
    MiB of them three ways would cost more than the rest of the scan and give views of the
    runs of text that random bytes hold by chance."""
    body = blob.rstrip("=")
    if "-" not in body and "_" not in body:
        return [_b64_standard(body)]
    if "+" not in body and "/" not in body:
        return [_b64_standard(_as_standard(body))]
    specials = sum(map(body.count, "+/-_"))
    if specials * MIXED_SPECIALS > len(body):
        return []
    return [_b64_standard(_as_standard(body)), _b64_standard(_b64_junked(body, _URL_ONLY)),
            _b64_standard(_as_standard(_b64_junked(body, _STANDARD_ONLY)))]


def _decode_blob(blob: str) -> list[str]:
    found = []
    # Of the ways to read a run of both alphabets, the one that gives the most text: one view
    # a run, as for the others.
    texts = [s for s in map(as_text, _b64(blob)) if s is not None]
    if texts:
        found.append(max(texts, key=len))
    # Hex digits are base64 letters too: a hex run is part of some base64 match.
    for h in _HEX.findall(blob):
        s = as_text(bytes.fromhex(h[:len(h) & ~1]))
        if s is not None:
            found.append(s)
    return found


def _spans(text: str, mask: bytes):
    """The spans of the base64 candidates of @text (see _candidates) in its @mask."""
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
        yield start, end


def _mask(text: str) -> bytes:
    return text.encode("ascii", "replace").translate(_B64_MASK)


def _candidates(text: str):
    """The base64 candidates of @text: what _BASE64.finditer finds (maximal runs of 16 or
    more base64 letters, and up to two "=" after), found by str.find on a mask of the text
    where each base64 letter reads "a" and every other character " "."""
    for start, end in _spans(text, _mask(text)):
        yield text[start:end]


def _line_break_after(text: str, end: int) -> int:
    """Where the next line starts when a single line break (\n or \r\n) is at @end; -1 if
    none is."""
    if text.startswith("\n", end):
        return end + 1
    if text.startswith("\r\n", end):
        return end + 2
    return -1


def _wrapped(text: str, spans: list[tuple[int, int]], encoded: bytes):
    """Base64 wrapped over lines (MIME, PEM): candidates that fill lines of a length a
    multiple of 4, one line break apart, with the short last line, as (start, end, letters).
    Only a candidate with a line break right after it (in @encoded, the text as ASCII bytes)
    can start one."""
    done = -1
    for k, (_, end) in enumerate(spans):
        if k > done and encoded[end:end + 1] in _LINE_BREAK_BYTES:
            done, found = _wrapped_from(text, spans, k)
            if found is not None:
                yield found


def _wrapped_from(text: str, spans: list[tuple[int, int]], k: int):
    """The wrapped base64 that starts with candidate @k, as (the last candidate in it,
    (start, end, letters) or None when it has one line only)."""
    start, end = spans[k]
    lines, j = [text[start:end]], k
    while (end - spans[j][0]) % 4 == 0 and text[end - 1] != "=":
        nxt = _line_break_after(text, end)
        if nxt < 0:
            break
        if j + 1 < len(spans) and spans[j + 1][0] == nxt:
            j += 1
            end = spans[j][1]
            lines.append(text[nxt:end])
            continue
        m = _B64_TAIL.match(text, nxt)
        if m is not None:
            lines.append(m.group(0))
            end = m.end()
        break
    return j, ((start, end, "".join(lines)) if len(lines) > 1 else None)


def _hex_spans(text: str, encoded: bytes):
    """Hex bytes with a space or a colon between each two, 12 or more (a MAC address is 6),
    as (start, end, digits)."""
    mask = encoded.translate(_HEX_MASK)
    pos = 0
    while True:
        i = mask.find(_HEX_SEP_RUN, pos)
        if i < 0:
            return
        if i > 0 and mask[i - 1] == _HEX_DIGIT:
            pos = i + 1
            continue
        m = _HEX_SEPARATED.match(text, i)
        if m is None:
            pos = i + 1
            continue
        pos = m.end()
        yield i, m.end(), m.group(0).replace(m.group(1), "")


def decoded_spans(text: str, cache: dict[str, list[str]]):
    """Each blob of @text that decodes to text, as (start, end, texts): the base64 and hex
    candidates, base64 wrapped over lines, hex bytes with separators."""
    if len(text) < len(_B64_RUN):
        return []
    encoded = text.encode("ascii", "replace")
    mask = encoded.translate(_B64_MASK)
    spans = list(_spans(text, mask))
    found = [(s, e, text[s:e]) for s, e in spans]
    if spans:
        found += _wrapped(text, spans, encoded)
    out = []
    for start, end, blob in found:
        decoded = cache.get(blob)
        if decoded is None:
            decoded = cache[blob] = _decode_blob(blob)
        if decoded:
            out.append((start, end, decoded))
    if len(text) < _HEX_SEP_MIN:
        return out
    for start, end, digits in _hex_spans(text, encoded):
        s = as_text(bytes.fromhex(digits))
        if s is not None:
            out.append((start, end, [s]))
    return out


def blobs(text: str, cache: dict[str, list[str]] | None = None) -> list[str]:
    """The texts that base64 and hex blobs in @text decode to (binary ones are skipped).
    @cache keeps each candidate's decoding for the other views of one scan, which share
    most of their candidates."""
    cache = {} if cache is None else cache
    return [s for _, _, decoded in decoded_spans(text, cache) for s in decoded]
