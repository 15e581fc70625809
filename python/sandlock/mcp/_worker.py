# SPDX-License-Identifier: LGPL-2.1-or-later
"""The process one tool call runs in, inside its sandbox, run as a script that imports only the
standard library and the tool's module: it reads the call (module, function, arguments) as one
JSON document on stdin, imports the module by name, calls the function and writes one JSON
line on stdout: {"ok": true, "result": TEXT} or {"ok": false, "error": TEXT}.

Nothing of the call is on the command line (other processes can read it there). Whatever the
tool prints goes to stderr, so it cannot forge the answer.
"""

import importlib
import json
import os
import sys


def _text(value):
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return str(value)


def _call(request):
    for p in reversed(request.get("path", [])):
        if p not in sys.path:
            sys.path.insert(0, p)
    if request.get("library"):
        os.environ["SANDLOCK_LIB"] = request["library"]  # the built-in tools' confine() loads it
        # A sanitizer build of it came preloaded into this process; the programs a tool runs
        # must not inherit it.
        os.environ.pop("LD_PRELOAD", None)
    module = importlib.import_module(request["module"])
    func = getattr(module, request["function"])
    kwargs = dict(request.get("arguments") or {})
    if request.get("workspace") is not None:
        kwargs["workspace"] = request["workspace"]
    return _text(func(**kwargs))


def main():
    answer = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        request = json.loads(sys.stdin.buffer.read())
        reply = {"ok": True, "result": _call(request)}
    except BaseException as e:  # the tool's own failure is the answer, SystemExit included
        reply = {"ok": False, "error": f"{type(e).__name__}: {e}"}
    answer.write(json.dumps(reply) + "\n")
    answer.flush()


if __name__ == "__main__":
    main()
