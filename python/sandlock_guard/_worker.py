# SPDX-License-Identifier: LGPL-2.1-or-later
"""The guard stage's worker, run as a script inside its sandbox: ``python3 -I -B _worker.py``.

Its configuration comes in the environment variable SANDLOCK_GUARD_CONFIG (JSON: threshold,
max_bytes, scan_timeout, the custom rules, and the model's path and SHA-256), not in argv,
which any user can read. It reads stdin to EOF (at most max_bytes), scans it in a child process
killed at scan_timeout (the regex engine cannot be interrupted from a thread), and writes the
original bytes to stdout only when the scan is clean. Exit 0 accepted, 1 rejected (the
findings on stderr), 2 input, configuration or scanning error."""

from __future__ import annotations

import importlib.util
import json
import os
import select
import signal
import sys
import time

CONFIG_ENV = "SANDLOCK_GUARD_CONFIG"
ACCEPT, REJECT, ERROR = 0, 1, 2


def _load_package():
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(
        "sandlock_guard", os.path.join(here, "__init__.py"), submodule_search_locations=[here])
    mod = importlib.util.module_from_spec(spec)
    sys.modules["sandlock_guard"] = mod
    spec.loader.exec_module(mod)
    return mod


def _fail(code: str, message: str) -> int:
    sys.stderr.write(f"sandlock-guard: error: {code}: {message}\n")
    sys.stderr.flush()
    return ERROR


def _guard_from(pkg, cfg: dict):
    rules = [pkg.Rule(*r) for r in cfg["rules"]]
    classifier = None
    if cfg.get("model") is not None:
        classifier = pkg.StatisticalClassifier(cfg["model"], cfg["model_threshold"])
        if classifier.digest != cfg["model_digest"]:
            raise pkg.ScanError("model_changed",
                                f"{cfg['model']}: SHA-256 {classifier.digest}, the guard was "
                                f"built with {cfg['model_digest']}")
    return pkg.PromptGuard(cfg["threshold"], cfg["max_bytes"], cfg["scan_timeout"], rules,
                           classifier=classifier)


def _read_input(limit: int) -> bytes | None:
    chunks, total = [], 0
    while True:
        b = os.read(0, 1 << 16)
        if not b:
            return b"".join(chunks)
        total += len(b)
        if total > limit:
            return None
        chunks.append(b)


def _scan_child(guard, text: str) -> int:
    try:
        report = guard.scan(text)
    except Exception as e:  # a ScanError, or anything else: never a clean verdict
        return _fail(getattr(e, "code", "scan_failed"), str(e))
    for f in report.findings:
        sys.stderr.write(f"sandlock-guard: {f.rule_id} ({f.severity}): {f.message}\n")
    sys.stderr.flush()
    return REJECT if report.flagged else ACCEPT


def _scan_with_deadline(guard, text: str) -> int:
    pid = os.fork()
    if pid == 0:
        os._exit(_scan_child(guard, text))
    fd = os.pidfd_open(pid)
    deadline = time.monotonic() + guard.scan_timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return _fail("scan_timeout", f"no verdict within {guard.scan_timeout:g} s")
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        return code if code in (ACCEPT, REJECT, ERROR) else _fail("scan_failed",
                                                                  f"scanner ended {code}")


def main() -> int:
    try:
        pkg = _load_package()
        cfg = json.loads(os.environ[CONFIG_ENV])
        guard = _guard_from(pkg, cfg)
    except Exception as e:
        return _fail(getattr(e, "code", "config"), str(e))
    try:
        data = _read_input(guard.max_bytes)
    except OSError as e:
        return _fail("input_error", f"reading stdin: {e.strerror}")
    if data is None:
        return _fail("input_too_large", f"over max_bytes {guard.max_bytes}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return _fail("invalid_input", f"not UTF-8: {e}")
    verdict = _scan_with_deadline(guard, text)
    if verdict == ACCEPT:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(1, view):]
        except OSError as e:  # the next stage is gone (EPIPE): not a rejection
            return _fail("output_error", f"writing stdout: {e.strerror}")
    return verdict


if __name__ == "__main__":
    sys.exit(main())
