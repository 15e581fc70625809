# SPDX-License-Identifier: LGPL-2.1-or-later
"""The guard's value types: severity levels, Rule, Finding, ScanReport and ScanError."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

LEVELS = ("low", "medium", "high", "critical")
RANK = {name: i for i, name in enumerate(LEVELS)}
RESERVED_IDS = frozenset({"statistical-injection", "transformers-injection"})

_RULE_ID = re.compile(r"[A-Za-z][A-Za-z0-9_.\-]{0,63}\Z", re.ASCII)


class ScanError(Exception):
    """Inspection could not complete; ``code`` names why (see the package docs for the list).
    A scan that hits a limit raises this instead of reporting the input clean."""

    def __init__(self, code: str, message: str | None = None) -> None:
        self.code = code
        self.message = message or code
        super().__init__(f"{code}: {self.message}" if message else code)


def check_level(what: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what}: one of {', '.join(LEVELS)}, not {type(value).__name__}")
    if value not in RANK:
        raise ValueError(f"{what} {value!r}: one of {', '.join(LEVELS)}")
    return value


@dataclass(frozen=True)
class Rule:
    """A custom rule: ``pattern`` (a Python regex, compiled case-insensitively) found in the
    input or any view derived from it yields a Finding of ``severity`` saying ``message``."""

    id: str
    pattern: str
    severity: str
    message: str
    compiled: re.Pattern = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not _RULE_ID.match(self.id):
            raise ValueError(f"rule id {self.id!r}: an ASCII letter, then up to 63 letters, "
                             "digits, '_', '.' or '-'")
        if not isinstance(self.pattern, str) or not self.pattern:
            raise ValueError(f"rule {self.id}: pattern must be a nonempty string")
        try:
            compiled = re.compile(self.pattern, re.IGNORECASE)
        except (re.error, RecursionError, OverflowError) as e:
            raise ValueError(f"rule {self.id}: pattern {self.pattern!r}: {e}") from None
        if not isinstance(self.severity, str) or self.severity not in RANK:
            raise ValueError(f"rule {self.id}: severity {self.severity!r}: one of "
                             f"{', '.join(LEVELS)}")
        if not isinstance(self.message, str) or not self.message.strip():
            raise ValueError(f"rule {self.id}: message must be a nonblank string")
        object.__setattr__(self, "compiled", compiled)


@dataclass(frozen=True)
class Finding:
    """One rule (or the classifier) that matched: its id, severity and message."""

    rule_id: str
    severity: str
    message: str


@dataclass(frozen=True)
class ScanReport:
    """What a scan found. ``flagged``: some finding meets the guard's threshold."""

    flagged: bool
    findings: tuple[Finding, ...]
    input_bytes: int
    ruleset_version: str
    model_score: float | None = None
    model_digest: str | None = None


def short(v: object) -> str:
    """@v as an error message quotes it: its repr, cut at 40 characters."""
    if isinstance(v, int) and v.bit_length() > 128:  # repr() refuses the longest ones
        return f"an integer of {v.bit_length()} bits"
    s = repr(v)
    return s if len(s) <= 40 else s[:37] + "..."
