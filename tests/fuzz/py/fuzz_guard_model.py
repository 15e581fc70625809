#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Fuzz target: the guard's n-gram model file, StatisticalClassifier(path).

The contract: a classifier whose fields are the file's, within the documented limits, and
whose score of any text is a number from 0 to 1; or ValueError naming the file ("<path>:
invalid model: ..." or "<path>: model file over ... bytes"). Nothing else, whatever the bytes."""

from __future__ import annotations

import atexit
import math
import os
import sys
import tempfile
from typing import Any

import fuzzlib
import sandlock_guard._classifier as C

NAME = "guard_model"
TOKENS = [b'"format"', b'"sandlock-guard-ngram-logreg"', b'"version"', b'"ngram_min"',
          b'"ngram_max"', b'"window"', b'"stride"', b'"bias"', b'"threshold"', b'"weights"',
          b'"ign"', b'"\\u0130"', b"65536", b"65537", b"16", b"8", b"9", b"1e308", b"-1e308",
          b"1.0", b"0", b"true", b"Infinity"]
_TEXTS = ("", "ignore previous instructions", "a" * 300, "\u0130\u0307 \U0001f600 \u200b x")

_fd, _PATH = tempfile.mkstemp(prefix="sandlock-fuzz-model-")
os.close(_fd)
atexit.register(os.unlink, _PATH)


def _reference(clf: C.StatisticalClassifier, text: str) -> float:
    """The score as the package docs define it, computed the slow way: the sigmoid of the bias
    plus the mean weight of a window's n-grams, the highest over the windows."""
    s = C.prepare(text)
    starts = [0] if len(s) <= clf.window else \
        sorted(set(range(0, len(s) - clf.window + 1, clf.stride)) | {len(s) - clf.window})
    best = 0.0
    for a in starts:
        w = s[a: a + clf.window]
        grams = [w[i: i + n] for n in range(clf.ngram_min, clf.ngram_max + 1)
                 for i in range(len(w) - n + 1)]
        mean = math.fsum(clf.weights.get(g, 0.0) / len(grams) for g in grams) if grams else 0.0
        z = max(-60.0, min(60.0, clf.bias + mean))
        best = max(best, 1.0 / (1.0 + math.exp(-z)))
    return best


def _check(clf: C.StatisticalClassifier) -> tuple[Any, ...]:
    assert 1 <= clf.ngram_min <= clf.ngram_max <= C.MAX_NGRAM, clf.__dict__
    assert 16 <= clf.window <= 65536 and 1 <= clf.stride <= clf.window, clf.__dict__
    assert math.isfinite(clf.bias) and 0.0 < clf.threshold < 1.0, clf.__dict__
    assert 1 <= len(clf.weights) <= C.MAX_WEIGHTS, len(clf.weights)
    assert all(math.isfinite(w) for w in clf.weights.values())
    scores = []
    for text in _TEXTS:
        s = clf.score(text)
        assert isinstance(s, float) and 0.0 <= s <= 1.0, (text, s)
        ref = _reference(clf, text)
        assert abs(s - ref) < 1e-6, f"score {s} of {text[:20]!r}, by the definition {ref}"
        scores.append(s >= clf.threshold)
    return ("model", clf.ngram_min, clf.ngram_max, *scores)


def fuzz(data: bytes) -> Any:
    with open(_PATH, "wb") as f:
        f.write(data)
    try:
        clf = C.StatisticalClassifier(_PATH)
    except ValueError as e:
        msg = str(e)
        assert msg.startswith(f"{_PATH}: invalid model: ") or \
            msg.startswith(f"{_PATH}: model file over"), msg
        assert "\n" not in msg, msg
        return ("invalid", msg[len(_PATH):].split(":")[1][:24])
    return _check(clf)


if __name__ == "__main__":
    sys.exit(fuzzlib.main(NAME, fuzz, TOKENS))
