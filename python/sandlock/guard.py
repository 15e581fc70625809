# SPDX-License-Identifier: LGPL-2.1-or-later
"""The prompt guard (the names of sandlock_guard) with PromptGuard.stage(): a sandboxed
pipeline stage that forwards its input only when the scan is clean.

    from sandlock.guard import PromptGuard
    (producer.cmd([...]) | PromptGuard().stage() | consumer.cmd([...])).run()
"""

from __future__ import annotations

import json
import os
import sys
import sysconfig

import sandlock_guard
from sandlock_guard import (
    Finding,
    Rule,
    ScanError,
    ScanReport,
    StatisticalClassifier,
    TransformersClassifier,
)

from .pipeline import Stage
from .sandbox import Sandbox

__all__ = [
    "PromptGuard",
    "Rule",
    "ScanReport",
    "Finding",
    "ScanError",
    "StatisticalClassifier",
    "TransformersClassifier",
]

DEFAULT_MEMORY = 256 * 1024 * 1024
CONFIG_ENV = "SANDLOCK_GUARD_CONFIG"
MAX_ENV_STRING = 32 * 4096  # the kernel's MAX_ARG_STRLEN: one "NAME=value", with its NUL
_PKG_DIR = os.path.dirname(os.path.abspath(sandlock_guard.__file__))
_SYSTEM = ("/usr", "/lib", "/lib64", "/bin")


def _python_paths() -> list[str]:
    """What the worker's interpreter needs readable: itself and its standard library."""
    paths = {os.path.dirname(os.path.realpath(sys.executable))}
    for key in ("stdlib", "platstdlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            paths.add(os.path.realpath(p))
    paths.update(d for d in _SYSTEM if os.path.exists(d))
    return sorted(paths)


class PromptGuard(sandlock_guard.PromptGuard):
    __doc__ = sandlock_guard.PromptGuard.__doc__

    def _config(self) -> str:
        clf = self.classifier
        if isinstance(clf, TransformersClassifier):
            raise ScanError("unavailable", "TransformersClassifier stages")
        return json.dumps({
            "threshold": self.threshold, "max_bytes": self.max_bytes,
            "scan_timeout": self.scan_timeout,
            "rules": [[r.id, r.pattern, r.severity, r.message] for r in self.rules],
            "model": clf.path if clf else None,
            "model_threshold": clf.threshold if clf else None,
            "model_digest": clf.digest if clf else None,
        })

    def stage(self, *, max_memory: int | str | None = None) -> Stage:
        """A pipeline stage running the scan in a sandboxed Python worker (no network, a
        clean environment, read access to the interpreter, this package and the model only,
        @max_memory or 256 MiB). It forwards the original bytes only when clean; exit 0
        accepted, 1 rejected (the findings on stderr), 2 input or scanning error."""
        config = self._config()
        if len(CONFIG_ENV) + 1 + len(config.encode()) >= MAX_ENV_STRING:
            raise ValueError(f"the guard's configuration ({len(config.encode())} bytes of "
                             "rules) is over what one environment variable may hold (128 KiB)")
        readable = _python_paths() + [_PKG_DIR]
        if self.classifier is not None:
            readable.append(self.classifier.path)
        sb = Sandbox(fs_readable=readable, clean_env=True,
                     env={CONFIG_ENV: config},
                     max_memory=DEFAULT_MEMORY if max_memory is None else max_memory)
        worker = os.path.join(_PKG_DIR, "_worker.py")
        return sb.cmd([os.path.realpath(sys.executable), "-I", "-B", worker])
