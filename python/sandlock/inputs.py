# SPDX-License-Identifier: LGPL-2.1-or-later
"""sandlock.inputs: inside a gather's consumer, each producer's output by name.

The consumer inherits one pipe per producer: the last producer's as its stdin, the others' as
descriptors 3, 4, ... in order; $_SANDLOCK_GATHER lists them as "name:fd,..." (the last is
"name:0"). A value is read to the end, decoded as UTF-8, on first access, and kept.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Mapping

GATHER_ENV = "_SANDLOCK_GATHER"


class _Inputs(Mapping[str, str]):
    def __init__(self) -> None:
        self._fds: dict[str, int] | None = None
        self._values: dict[str, str] = {}
        self._lock = threading.RLock()

    def _table(self) -> dict[str, int]:
        if self._fds is None:
            spec = os.environ.get(GATHER_ENV, "")
            fds: dict[str, int] = {}
            for item in filter(None, spec.split(",")):
                name, _, fd = item.rpartition(":")
                if not name or not fd.isdigit():
                    raise RuntimeError(f"{GATHER_ENV}: malformed entry {item!r}")
                fds[name] = int(fd)
            self._fds = fds
        return self._fds

    def __getitem__(self, name: str) -> str:
        with self._lock:
            if name not in self._values:
                fd = self._table()[name]  # KeyError for a name no producer has
                if fd < 0:
                    raise ValueError(f"inputs[{name!r}]: not UTF-8 (read once already)")
                self._fds[name] = -1  # type: ignore[index]  # read once: never reopened
                with os.fdopen(fd, "rb", closefd=True) as f:
                    data = f.read()
                self._values[name] = data.decode("utf-8")
            return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())

    def __contains__(self, name: object) -> bool:
        return name in self._table()

    def __repr__(self) -> str:
        return f"<sandlock.inputs {list(self._table())}>"


inputs = _Inputs()
