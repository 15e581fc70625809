# SPDX-License-Identifier: LGPL-2.1-or-later
"""Classifiers: a character n-gram logistic regression read from a JSON file, and the
configuration of a Transformers one. The JSON format and its limits are written down in the
package docs (python/README.md, "Prompt guard"); load() checks every one of them."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from array import array
from collections.abc import Sequence
from itertools import accumulate, repeat
from typing import Any

from ._types import ScanError, short

FORMAT = "sandlock-guard-ngram-logreg"
MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_WEIGHTS = 500_000
MAX_NGRAM = 8
# The largest |weight| and |bias|: a MiB's prefix sums of weights this large stay exact enough
# and far from the float range, where a sum would overflow to inf and a window read nan.
MAX_ABS_WEIGHT = 1e6
_KEYS = {"format", "version", "ngram_min", "ngram_max", "window", "stride", "bias",
         "threshold", "weights"}
_SPACES = re.compile(r"\s+")


def _threshold(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{what}: a number strictly between 0 and 1")
    # Compared before float(): an integer past the float range is out of range, not an
    # OverflowError.
    if not 0.0 < value < 1.0:
        raise ValueError(f"{what} {value!r}: strictly between 0 and 1")
    return float(value)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d: dict[str, Any] = {}
    for k, v in pairs:
        if k in d:
            raise ValueError(f"duplicate key {k!r}")
        d[k] = v
    return d


def _int_field(doc: dict, key: str, lo: int, hi: int) -> int:
    v = doc[key]
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise ValueError(f"{key}: an integer from {lo} to {hi}, not {v!r}")
    return v


def _bounded(v: object, what: str) -> float:
    """@v as a float, from -MAX_ABS_WEIGHT to MAX_ABS_WEIGHT (an integer is compared as it
    is, so one past the float range is out of bounds, not an OverflowError)."""
    if (isinstance(v, bool) or not isinstance(v, (int, float))
            or not -MAX_ABS_WEIGHT <= v <= MAX_ABS_WEIGHT):
        raise ValueError(f"{what}: a number from -{MAX_ABS_WEIGHT:g} to {MAX_ABS_WEIGHT:g}, "
                         f"not {short(v)}")
    return float(v)


def _parse(data: bytes) -> dict[str, Any]:
    def bad_constant(name: str) -> None:
        raise ValueError(f"{name} is not a number")

    try:
        doc = json.loads(data.decode("utf-8"), object_pairs_hook=_no_duplicates,
                         parse_constant=bad_constant)
    except UnicodeDecodeError as e:
        raise ValueError(f"not UTF-8: {e}") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"not JSON: {e}") from None
    except RecursionError:
        raise ValueError("nested too deeply") from None
    if not isinstance(doc, dict):
        raise ValueError("the top level must be an object")
    if set(doc) != _KEYS:
        missing, extra = sorted(_KEYS - set(doc)), sorted(set(doc) - _KEYS)
        raise ValueError(f"fields: missing {missing}, unknown {extra}")
    if doc["format"] != FORMAT or doc["version"] != 1 or isinstance(doc["version"], bool):
        raise ValueError(f"format must be {FORMAT!r} version 1")
    return doc


def _check(doc: dict[str, Any]) -> dict[str, Any]:
    lo = _int_field(doc, "ngram_min", 1, MAX_NGRAM)
    hi = _int_field(doc, "ngram_max", lo, MAX_NGRAM)
    window = _int_field(doc, "window", 16, 65536)
    _int_field(doc, "stride", 1, window)
    _bounded(doc["bias"], "bias")
    _threshold(doc["threshold"], "threshold")
    weights = doc["weights"]
    if not isinstance(weights, dict) or not 1 <= len(weights) <= MAX_WEIGHTS:
        raise ValueError(f"weights: an object of 1 to {MAX_WEIGHTS} n-grams")
    for gram, w in weights.items():
        if not lo <= len(gram) <= hi:
            raise ValueError(f"weights: n-gram {gram!r} is not {lo} to {hi} characters")
        _bounded(w, f"weights[{gram!r}]")
    return doc


def prepare(text: str) -> str:
    """What the model reads: normalized text (see _views.normalize) with runs of whitespace as
    one space, padded by a space on each side."""
    from ._views import normalize

    return " " + _SPACES.sub(" ", normalize(text)).strip() + " "


class StatisticalClassifier:
    """A character n-gram logistic regression model loaded from a JSON file. ``threshold``
    overrides the file's (strictly between 0 and 1); ``digest`` is the file's SHA-256."""

    kind = "statistical"
    rule_id = "statistical-injection"

    def __init__(self, path: str | os.PathLike, threshold: float | None = None) -> None:
        if threshold is not None:
            threshold = _threshold(threshold, "threshold")
        self.path = os.path.abspath(os.fspath(path))
        with open(self.path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise ValueError(f"{self.path}: model file over {MAX_FILE_BYTES} bytes")
        try:
            doc = _check(_parse(data))
        except ValueError as e:
            raise ValueError(f"{self.path}: invalid model: {e}") from None
        self.digest = hashlib.sha256(data).hexdigest()
        self.ngram_min, self.ngram_max = doc["ngram_min"], doc["ngram_max"]
        self.window, self.stride = doc["window"], doc["stride"]
        self.bias = float(doc["bias"])
        self.weights = {k: float(v) for k, v in doc["weights"].items()}
        self.threshold = float(doc["threshold"]) if threshold is None else threshold

    def _prefix_sums(self, s: str) -> dict[int, array]:
        """Per n-gram length n, P[i]: the summed weight of the n-grams starting before i. Built
        by C-level iterators (zip, join, dict.get, accumulate): a MiB is 3 million n-grams."""
        get, sums = self.weights.get, {}
        for n in range(self.ngram_min, self.ngram_max + 1):
            grams = map("".join, zip(*(s[k:] for k in range(n))))
            sums[n] = array("d", accumulate(map(get, grams, repeat(0.0)), initial=0.0))
        return sums

    def _window(self, sums: dict[int, array], a: int, b: int) -> float:
        """The model's probability for the window [a, b): the sigmoid of the bias plus the
        mean weight of the n-grams inside it, all lengths together."""
        total, count = 0.0, 0
        for n, p in sums.items():
            k = b - a - n + 1
            if k > 0:
                total += p[a + k] - p[a]
                count += k
        z = self.bias + (total / count if count else 0.0)
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))

    def score_prepared(self, s: str) -> float:
        """The maximum window score of an already prepared text: windows of ``window``
        characters every ``stride``, the last one ending at the text's end."""
        sums = self._prefix_sums(s)
        if len(s) <= self.window:
            return self._window(sums, 0, len(s))
        starts = list(range(0, len(s) - self.window + 1, self.stride))
        if starts[-1] != len(s) - self.window:
            starts.append(len(s) - self.window)
        return max(self._window(sums, a, a + self.window) for a in starts)

    def score(self, text: str) -> float:
        """The maximum window score of @text, from 0 to 1."""
        return self.score_prepared(prepare(text))



def _int_arg(name: str, value: object, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}: an integer, not {type(value).__name__}")
    if not lo <= value <= hi:
        raise ValueError(f"{name} {value}: from {lo} to {hi}")
    return value


class TransformersClassifier:
    """Local CPU inference with a Hugging Face sequence classifier. The arguments are checked
    as documented, then construction raises ScanError("unavailable"): this build has no
    Transformers backend (the package cannot be installed here), and a configured classifier
    that does not run must not let a scan report clean."""

    kind = "transformers"
    rule_id = "transformers-injection"

    def __init__(self, path: str | os.PathLike, positive_labels: Sequence[str],
                 threshold: float = 0.5, max_length: int = 512, stride: int = 256) -> None:
        if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
            raise TypeError("path: a nonempty path of a model directory")
        if isinstance(positive_labels, (str, bytes)) or not isinstance(positive_labels,
                                                                       Sequence):
            raise TypeError("positive_labels: a sequence of class names")
        if not positive_labels:
            raise ValueError("positive_labels: at least one class name")
        for label in positive_labels:
            if not isinstance(label, str) or not label:
                raise ValueError(f"positive_labels: {label!r} is not a nonempty string")
        if len(set(positive_labels)) != len(positive_labels):
            raise ValueError("positive_labels: a class is named twice")
        _threshold(threshold, "threshold")
        _int_arg("max_length", max_length, 4, 8192)
        # Two of a window's tokens are the model's start and end markers.
        _int_arg("stride", stride, 0, max_length - 3)
        try:
            import importlib.util

            found = importlib.util.find_spec("transformers") is not None
        except (ImportError, ValueError):
            found = False
        reason = ("not supported yet: Transformers inference in this build" if found else
                  "the transformers package is not installed")
        raise ScanError("unavailable", f"TransformersClassifier: {reason}")
