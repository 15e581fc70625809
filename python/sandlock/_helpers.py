# SPDX-License-Identifier: LGPL-2.1-or-later
"""Helpers of the SDK: parse_ports, and the COW change-set types."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Sequence

from . import _ffi


def parse_ports(specs: Sequence[int | str]) -> list[int]:
    """The ports of @specs (ints, and strings in the bind-port grammar: "443", "8000-8005",
    "80,443"), sorted without duplicates, by the core's parser. ValueError names a bad spec."""
    if isinstance(specs, (str, bytes, int)):
        raise TypeError("parse_ports takes a list of ports and port ranges")
    ports: set[int] = set()
    buf = (ctypes.c_uint16 * 65536)()
    for spec in specs:
        if isinstance(spec, bool) or not isinstance(spec, (int, str)):
            raise ValueError(f"invalid port spec: {spec!r}")
        text = str(spec)
        err = _ffi.Error()
        n = _ffi.lib().sandlock_ports_parse(text.encode(), buf, len(buf), err.ref())
        if n < 0:
            raise ValueError(f"{text}: {err.take(n)[0]}")
        ports.update(buf[:n])
    return sorted(ports)


@dataclass(frozen=True)
class Entry:
    """One side of a Change."""

    kind: str  # "file", "dir", "symlink", or "other"
    mode: int  # permission bits
    size: int  # byte length of a file; 0 otherwise
    digest: bytes | None  # SHA-256 of a file's bytes
    target: str | None  # a symlink's target


@dataclass(frozen=True)
class Change:
    """A path the run added, modified or deleted in its COW branch."""

    path: str
    before: Entry | None
    after: Entry | None

    @property
    def kind(self) -> str:
        """"A" (no before), "M" (both sides), "D" (no after)."""
        if self.after is None:
            return "D"
        return "A" if self.before is None else "M"

    @property
    def content_unchanged(self) -> bool:
        b, a = self.before, self.after
        return (b is not None and a is not None and b.kind == a.kind and b.digest == a.digest
                and b.target == a.target)

    @property
    def type_changed(self) -> bool:
        return self.before is not None and self.after is not None and \
            self.before.kind != self.after.kind

    def __str__(self) -> str:
        return f"{self.kind} {self.path}"


def renames(changes: Sequence[Change]) -> list[tuple[str, str]]:
    """Pair each deleted file with the added file of the same digest, as (old, new). A digest
    seen more than once on either side is ambiguous and left unpaired."""
    def unique(deleted: bool) -> dict[bytes, str | None]:
        seen: dict[bytes, str | None] = {}
        for c in changes:
            entry = c.before if deleted else c.after
            if c.kind != ("D" if deleted else "A") or entry is None or entry.digest is None:
                continue
            seen[entry.digest] = None if entry.digest in seen else c.path
        return seen

    gone, new = unique(True), unique(False)
    return sorted((old, new[d]) for d, old in gone.items()  # type: ignore[misc]
                  if old is not None and new.get(d) is not None)
