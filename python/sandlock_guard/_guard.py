# SPDX-License-Identifier: LGPL-2.1-or-later
"""PromptGuard: the built-in and custom rules, and an optional classifier, run over an input
and every view derived from it."""

from __future__ import annotations

import math
import os
from typing import Any, Iterable

from . import _views
from ._classifier import StatisticalClassifier, TransformersClassifier, prepare
from ._rules import (
    BUILTIN_RULES,
    RULESET_VERSION,
    TEXT_RULES,
    UNICODE_RULES,
    has_suspects,
    Leads,
)
from ._views import Derived
from ._types import RANK, RESERVED_IDS, Finding, Rule, ScanError, ScanReport, check_level, short


def _check_rules(rules: Iterable[Rule]) -> tuple[Rule, ...]:
    if isinstance(rules, (str, bytes, Rule)):
        raise TypeError("rules: an iterable of Rule objects")
    try:
        custom = tuple(rules)
    except TypeError:
        raise TypeError("rules: an iterable of Rule objects") from None
    seen = {r.id for r in BUILTIN_RULES}
    for r in custom:
        if not isinstance(r, Rule):
            raise TypeError(f"rules: {type(r).__name__} is not a Rule")
        if r.id in RESERVED_IDS:
            raise ValueError(f"rule id {r.id!r} is reserved for the classifier's findings")
        if r.id in seen:
            raise ValueError(f"rule id {r.id!r} used twice (built-in ids count)")
        seen.add(r.id)
    return custom


def _check_classifier(model: Any, classifier: Any) -> Any:
    if model is not None and classifier is not None:
        raise ValueError("model and classifier: give one of them")
    if model is not None:
        if not isinstance(model, (str, os.PathLike)):
            raise TypeError("model: the path of a classifier JSON file")
        return StatisticalClassifier(model)
    if classifier is not None and not isinstance(classifier, (StatisticalClassifier,
                                                              TransformersClassifier)):
        raise TypeError(f"classifier: a StatisticalClassifier, not {type(classifier).__name__}")
    return classifier


def _folded(views: list[tuple[str, bool, Derived | None]]) -> list[Leads]:
    """The Leads of each normalized view; an unescaped view's come from its parent's."""
    by_text: dict[str, Leads] = {}
    for v, norm, derived in views:
        if norm:
            base = by_text.get(derived.base) if derived is not None else None
            by_text[v] = (Leads(v) if base is None
                          else Leads(v, base, derived.parts))
    return list(by_text.values())


def _suspects(views: list[tuple[str, bool, Derived | None]]) -> list[str]:
    """The views other than the normalized ones that hold a character a Unicode rule looks
    for. An unescaped view of a text that holds none can hold one only in its unescaped
    pieces, the rest being the text's."""
    found: dict[str, bool] = {}
    for v, norm, derived in views:
        if norm:
            continue
        if derived is not None and found.get(derived.base) is False:
            found[v] = any(has_suspects(p) for _, _, _, p in derived.parts if p is not None)
        else:
            found[v] = has_suspects(v)
    return [v for v, hit in found.items() if hit]


def _matching(views: list[tuple[str, bool, Derived | None]],
              custom: tuple[Rule, ...]) -> list[Rule]:
    """The rules that match some view: built-in text rules on the normalized views, the
    invisible-character ones on the others (normalizing removes what they look for), custom
    rules on every view."""
    found = []
    folded = _folded(views)
    for text_rule in TEXT_RULES:
        if any(text_rule.search(leads) for leads in folded):
            found.append(text_rule.rule)
    suspect = _suspects(views)
    for rule, compiled in UNICODE_RULES:
        if any(compiled.search(v) for v in suspect):
            found.append(rule)
    for rule in custom:
        if any(rule.compiled.search(v) for v, _, _ in views):
            found.append(rule)
    return found


class PromptGuard:
    """Screens text for prompt injection. ``threshold``: the lowest severity that flags;
    ``max_bytes``: the largest input (UTF-8 bytes); ``scan_timeout``: a stage's scanning
    deadline in seconds after its input ends; ``rules``: custom Rules added to the built-in
    ones; ``classifier`` (or ``model``, a path for a StatisticalClassifier): a model whose
    score at its threshold adds a high finding."""

    def __init__(self, threshold: str = "medium", max_bytes: int = 1_048_576,
                 scan_timeout: float = 2.0, rules: Iterable[Rule] = (), model: Any = None,
                 classifier: Any = None) -> None:
        self.threshold = check_level("threshold", threshold)
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int):
            raise TypeError(f"max_bytes: an integer, not {type(max_bytes).__name__}")
        if max_bytes <= 0:
            raise ValueError(f"max_bytes {max_bytes}: must be positive")
        self.max_bytes = max_bytes
        if isinstance(scan_timeout, bool) or not isinstance(scan_timeout, (int, float)):
            raise TypeError(f"scan_timeout: a number of seconds, not "
                            f"{type(scan_timeout).__name__}")
        try:
            seconds = float(scan_timeout)
        except OverflowError:  # an integer past the float range
            seconds = math.inf
        if not math.isfinite(seconds) or seconds <= 0:
            raise ValueError(f"scan_timeout {short(scan_timeout)}: a positive finite number")
        self.scan_timeout = seconds
        self.rules = _check_rules(rules)
        self.classifier = _check_classifier(model, classifier)

    def _input_bytes(self, text: str) -> int:
        try:
            n = len(text.encode("utf-8"))
        except UnicodeEncodeError:
            raise ScanError("invalid_input", "text holds lone surrogates, not UTF-8") from None
        if n > self.max_bytes:
            raise ScanError("input_too_large", f"{n} bytes, over max_bytes {self.max_bytes}")
        return n

    def scan(self, text: str) -> ScanReport:
        """Scan @text and every view derived from it. ScanError when the scan cannot
        complete (input over max_bytes, a processing limit)."""
        if not isinstance(text, str):
            raise TypeError(f"scan: a str, not {type(text).__name__}")
        n = self._input_bytes(text)
        views = _views.derive(text)
        findings = [Finding(r.id, r.severity, r.message) for r in _matching(views, self.rules)]
        score = digest = None
        clf = self.classifier
        if clf is not None:
            score = max(clf.score_prepared(prepare(v)) for v, norm, _ in views if not norm)
            digest = clf.digest
            if score >= clf.threshold:
                findings.append(Finding(clf.rule_id, "high",
                                        f"classifier score {score:.3f} at or over its "
                                        f"threshold {clf.threshold:g}"))
        floor = RANK[self.threshold]
        flagged = any(RANK[f.severity] >= floor for f in findings)
        return ScanReport(flagged, tuple(findings), n, RULESET_VERSION, score, digest)
