# SPDX-License-Identifier: LGPL-2.1-or-later
"""The process one tool call runs in, inside its sandbox, run as a script that imports only the
tool's module: it reads the call (module, function, arguments) on stdin, imports the module by
name, calls the function and writes one JSON line on stdout: {"ok": true, "result": TEXT} or
{"ok": false, "error": TEXT}.

The call comes in marshal's format, from the process that starts the worker (which trusts
itself); the answer goes out as JSON, which that process parses as untrusted. Neither needs the
json module here (it costs more to import than the rest of the worker), unless a tool returns
something other than a string. Nothing of the call is on the command line (other processes can
read it there). What the tool prints goes to stderr, apart from the answer.

The worker starts with -S: the site module's work (the site directories, their .pth files,
sitecustomize) is a quarter of an interpreter's start, and a tool that imports only its own
module and the standard library never needs it. The first import that the standard paths
cannot satisfy runs that work (site.main()) and searches again, so a tool that imports an
installed package finds it as it would in a normal interpreter. For the same reason the worker
itself imports only modules built into the interpreter (posix, not os: os and importlib cost as
much again).
"""

import builtins
import io
import marshal
import posix
import sys

_ESCAPES = {c: f"\\u{c:04x}" for c in range(0x20)}
_ESCAPES.update({ord('"'): '\\"', ord("\\"): "\\\\"})


def _json_string(s):
    return '"' + s.translate(_ESCAPES) + '"'


def _text(value):
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    import json

    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return str(value)


class _SiteOnDemand:
    """The last finder on sys.meta_path: on its first miss it adds the site directories, takes
    itself off the path, and looks once more."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        sys.meta_path.remove(cls)
        import importlib.machinery
        import site

        site.main()
        return importlib.machinery.PathFinder.find_spec(name, path, target)


def _quit(code=None):
    """site's exit() and quit(), which a tool may call to give up."""
    raise SystemExit(code)


def _call(request):
    for p in reversed(request.get("path", [])):
        if p not in sys.path:
            sys.path.insert(0, p)
    if request.get("library"):
        import os

        # The built-in tools' confine() loads it: given to the loader directly, not in the
        # environment, which the programs a tool runs inherit.
        from sandlock import _ffi

        _ffi.use_library(request["library"])
        # A sanitizer build of it came preloaded into this process; the programs a tool runs
        # must not inherit it.
        os.environ.pop("LD_PRELOAD", None)
    __import__(request["module"])
    module = sys.modules[request["module"]]
    func = getattr(module, request["function"])
    kwargs = dict(request.get("arguments") or {})
    if request.get("workspace") is not None:
        kwargs["workspace"] = request["workspace"]
    return _text(func(**kwargs))


def main():
    if sys.flags.no_site:
        sys.meta_path.append(_SiteOnDemand)
        builtins.exit = builtins.quit = _quit
    answer = io.open(posix.dup(1), "w", encoding="utf-8", errors="surrogatepass")
    posix.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        result = _call(marshal.loads(sys.stdin.buffer.read()))
        reply = '{"ok": true, "result": ' + _json_string(result) + "}"
    except BaseException as e:  # the tool's own failure is the answer, SystemExit included
        reply = '{"ok": false, "error": ' + _json_string(f"{type(e).__name__}: {e}") + "}"
    answer.write(reply + "\n")
    answer.flush()


if __name__ == "__main__":
    main()
