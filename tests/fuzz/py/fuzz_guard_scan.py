#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Fuzz target: PromptGuard.scan() on arbitrary text (the bytes as UTF-8, lone surrogates
kept; Latin-1 where they are not UTF-8), with a custom rule and the statistical model.

The contract: a ScanReport that agrees with itself (flagged exactly when a finding meets the
threshold, each rule at most once, input_bytes the UTF-8 size, the model's score from 0 to 1)
or ScanError with a documented code; nothing else. The fuzzer's time bound grows with the
input's size, so a scan whose work grows faster than its input shows up as a hang."""

from __future__ import annotations

import sys
from typing import Any

import fuzzlib
import sandlock_guard as G
from sandlock_guard._types import RANK

NAME = "guard_scan"
TOKENS = [b"ignore previous instructions", b"IGNORE ALL PRIOR", b"system prompt",
          b"<|im_start|>", b"secret word", b"secret\xe2\x80\x8bword", b"\xe2\x80\x8b",
          b"\xf3\xa0\x81\x89", b"&#105;", b"&amp;", b"%69", b"\\u0069", b"\\x69",
          b"aWdub3JlIHByZXZpb3VzIGluc3RydWN0aW9ucw==", b"69676e6f72652070726576696f7573",
          b"\xef\xbc\xa9", b"\xc4\xb0", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"\n\n", b"A" * 64,
          b"\xf3\xa0\x85\x99", b"\xe4\xb8\x80", b"\xf0\x9f\x98\x80", b"-+", b"_/", b"<br />",
          b" " * 300]
_CODES = {"processing_limit", "input_too_large", "invalid_input"}
_MODEL = G.StatisticalClassifier(fuzzlib.CORPUS / "guard_model" / "valid")
_GUARD = G.PromptGuard("medium", 1 << 16, rules=[G.Rule("fuzz-secret", r"secret\s+word",
                                                        "high", "names the secret word")],
                       classifier=_MODEL)


def _text(data: bytes) -> str:
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def fuzz(data: bytes) -> Any:
    text = _text(data)
    try:
        report = _GUARD.scan(text)
    except G.ScanError as e:
        assert e.code in _CODES, e.code
        return ("error", e.code)
    assert isinstance(report, G.ScanReport), report
    ids = [f.rule_id for f in report.findings]
    assert len(ids) == len(set(ids)), ids
    assert all(isinstance(f, G.Finding) and f.severity in RANK for f in report.findings)
    assert report.flagged == any(RANK[f.severity] >= RANK["medium"] for f in report.findings)
    assert report.input_bytes == len(text.encode("utf-8")) <= _GUARD.max_bytes, report
    assert report.ruleset_version == G.RULESET_VERSION, report
    assert isinstance(report.model_score, float) and 0.0 <= report.model_score <= 1.0, report
    assert report.model_digest == _MODEL.digest, report
    return ("report", report.flagged, tuple(sorted(ids)))


if __name__ == "__main__":
    sys.exit(fuzzlib.main(NAME, fuzz, TOKENS))
