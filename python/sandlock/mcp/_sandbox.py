# SPDX-License-Identifier: LGPL-2.1-or-later
"""McpSandbox: a registry of tools, each call of a local one run in a fresh sandbox of its own.

A local tool is a top-level function the worker (sandlock.mcp._worker) imports by name inside
the sandbox; the call goes to it on stdin. A remote tool (add_mcp_session) runs on its own MCP
server: this process only forwards the call, and cannot confine it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import json
import marshal
import math
import os
import shutil
import sys
import tempfile
import threading
import time
import types
import weakref
from collections.abc import Iterator
from typing import Any, Callable, Mapping

from .. import _ffi
from .._core import ExitReason
from .._process import StdioMode
from ..sandbox import Sandbox
from . import _policy, _schema, _validate, _workspace

# The directory holding the sandlock package (a source tree or site-packages), readable in
# every call's sandbox. The worker runs as a script (python3 -I: no PYTHONPATH, no user site,
# no working directory on sys.path; -S: the site directories only when an import needs them)
# and imports nothing of sandlock unless the tool does, so a call costs an interpreter's start
# and little more.
_PKG_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_worker.py")
_WORKER_ARGV = (sys.executable, "-I", "-S", _WORKER)


_BUILTIN = "sandlock.mcp.builtin"

# The most a worker may write on stdout (its answer line: a built-in tool's 1 MiB of text is at
# most 6 MiB once JSON-escaped); past it the worker is killed and the call fails. Of its
# stderr (what the tool printed) the last 64 KiB are kept, for the error of a failed call.
ANSWER_LIMIT = 8 << 20
_STDERR_TAIL = 64 << 10


class ToolError(Exception):
    """A tool call failed: the tool raised, timed out, or its worker could not run it."""


class ArgumentError(ToolError, ValueError):
    """A call's arguments do not match its tool's input schema: refused before any worker
    starts."""


@dataclasses.dataclass
class _Local:
    func: Callable[..., Any]
    description: str
    schema: dict[str, Any]
    capabilities: Mapping[str, Any]  # frozen (_frozen): the caller's objects are not kept
    module: str
    function: str
    root: str
    takes_workspace: bool


@dataclasses.dataclass
class _Remote:
    tool: Any
    session: Any
    description: str
    schema: dict[str, Any]
    capabilities: dict[str, Any]


class _Call:
    """The process of one call, so that a cancelled call can kill it from another thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.cancelled = False
        self.proc: Any = None

    def cancel(self) -> None:
        with self.lock:
            self.cancelled = True
            if self.proc is not None:
                self.proc.kill()


def _mapped(*prefixes: str) -> list[str]:
    """The files of this process's shared libraries whose names start with @prefixes, in the
    order of @prefixes (a preload order)."""
    with open("/proc/self/maps") as maps:
        files = {line.split(maxsplit=5)[-1].strip() for line in maps}
    return [f for p in prefixes for f in sorted(files) if os.path.basename(f).startswith(p)]


def _library_path() -> str | None:
    """The file of the libsandlock this process uses, which a built-in tool's worker loads."""
    path = _ffi.library_path()
    if os.sep in path and os.path.exists(path):
        return os.path.realpath(path)
    _ffi.lib()  # found on the system's library path: the loader knows where
    found = _mapped("libsandlock.so")
    return found[0] if found else None


class McpSandbox:
    """Tools for an agent, each call of a local tool in a fresh deny-by-default sandbox."""

    def __init__(self, workspace: str = "/tmp/sandlock", timeout: float = 30.0) -> None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or \
                not (timeout > 0 and math.isfinite(timeout)):
            raise ValueError(f"timeout must be a finite number of seconds > 0, not {timeout!r}")
        try:
            real = _workspace.prepare(workspace)
        except ValueError as e:
            raise ValueError(f"McpSandbox: {e}") from None
        # The library the built-in tools load is code this process runs as well.
        self._library = _library_path()  # the same for every call: looked up once
        found = _workspace.on_import_path(real, [_PKG_PARENT, *filter(None, [self._library])])
        if found is not None:
            raise ValueError(f"McpSandbox: the workspace {real} is on this process's import "
                             f"path ({found}): a tool could plant a module this process "
                             "imports; use another directory, and never start the server "
                             "from inside its workspace")
        self.workspace = real
        self.timeout = float(timeout)
        self._tools: dict[str, _Local | _Remote] = {}
        self._homes = _Homes(real)
        self._pool = concurrent.futures.ThreadPoolExecutor(32, thread_name_prefix="sandlock-mcp")

    @property
    def tools(self) -> dict[str, Any]:
        """Every registered tool: name -> its function (local) or its MCP tool (remote)."""
        return {n: (t.func if isinstance(t, _Local) else t.tool) for n, t in self._tools.items()}

    def add_tool(self, name: str, func: Callable[..., Any], *, description: str = "",
                 capabilities: Mapping[str, Any] | None = None,
                 input_schema: Mapping[str, Any] | None = None) -> None:
        """Register @func as the tool @name. ValueError if it is not a top-level function of
        an importable module, for a capability that is not a Sandbox field, for a name
        registered already, or for an @input_schema using a JSON Schema keyword that call_tool
        does not check."""
        if not isinstance(name, str) or not name:
            raise ValueError("add_tool: the name must be a non-empty string")
        if name in self._tools:
            raise ValueError(f"add_tool: a tool named {name!r} is registered already")
        module, function, root = _schema.check_importable(name, func)
        schema, takes_workspace = _schema.schema_of(func)
        if input_schema is not None:
            schema = dict(input_schema)
        _validate.check_schema(schema, name)  # every keyword checked at each call, or refused
        caps = _frozen(dict(capabilities or {}))
        _policy.build(self.workspace, caps, ())  # an unknown or bad capability fails here
        _check_root(name, root)
        caps = _resolved(caps)
        grants = _writable_of(caps)
        self._homes.check_grants(name, grants)
        self._check_writable(name, root, grants)
        self._tools[name] = _Local(func, description or (func.__doc__ or "").strip(), schema,
                                   caps, module, function, root, takes_workspace)

    def _check_writable(self, name: str, root: str, grants: list[tuple[str, str]]) -> None:
        """ValueError when a tool's module directory and a directory tools may write overlap:
        a tool could then rewrite the code of a tool granted more (the network, say). @root
        and @grants are the new tool's; both are checked against every registered tool."""
        writable = [(self.workspace, "the workspace")]
        writable += [(w, f"granted to {n!r}") for n, t in self._tools.items()
                     if isinstance(t, _Local) for w, _ in _writable_of(t.capabilities)]
        writable += [(w, f"granted to {name!r}") for w, _ in grants]
        # Every worker runs _worker.py from the package's directory, whichever tool it calls.
        roots = [(repr(n), t.root) for n, t in self._tools.items() if isinstance(t, _Local)]
        for tool, r in [(repr(name), root), ("the sandlock package", _PKG_PARENT), *roots]:
            for w, whose in writable:
                if _workspace.overlap(r, w):
                    raise ValueError(f"add_tool {name!r}: the module directory {r} of "
                                     f"{tool} overlaps {w}, writable by tools ({whose}): "
                                     "a tool could rewrite that code; move the module out of "
                                     "every writable directory")

    async def add_mcp_session(self, session: Any) -> None:
        """Register the tools of a remote MCP server (@session: a ClientSession of the mcp
        package, or anything with async list_tools() and call_tool(name, arguments)). They run
        on that server: their sandlock:* capabilities are recorded, not enforced here."""
        listed = await session.list_tools()
        tools = listed.get("tools", []) if isinstance(listed, Mapping) else listed.tools
        for t in tools:
            get = t.get if isinstance(t, Mapping) else (lambda k, d=None: getattr(t, k, d))
            if get("name") in self._tools:
                raise ValueError(f"add_mcp_session: a tool named {get('name')!r} is "
                                 "registered already")
            schema = get("inputSchema") or get("input_schema") or {"type": "object"}
            self._tools[get("name")] = _Remote(t, session, get("description") or "",
                                               dict(schema), _policy.capabilities_from_mcp_tool(t))

    def get_policy(self, name: str) -> Sandbox:
        """The Sandbox each call of the local tool @name runs in. KeyError for an unknown
        tool; ValueError for a remote one, which runs on its own server, unconfined by us."""
        t = self._tools[name]
        if isinstance(t, _Remote):
            raise ValueError(f"{name!r} is a remote MCP tool: it runs on its own server, "
                             "which this process cannot sandbox (no policy applies here)")
        return self._policy(t)

    def _policy(self, t: _Local, home: str | None = None) -> Sandbox:
        readable = [_PKG_PARENT, t.root]
        lib = self._library if _confines_itself(t) else None
        if lib is not None:
            readable.append(lib)  # the built-in file tools confine themselves further with it
        caps = t.capabilities
        if lib is not None and os.path.exists(os.path.join(os.path.dirname(lib), "SANITIZED")):
            # A sanitizer build of the library (a test build) loads only after its runtimes:
            # the ones this process has loaded.
            preload = {"LD_PRELOAD": " ".join(_mapped("libasan.so", "libubsan.so")),
                       "ASAN_OPTIONS": "detect_leaks=0"}
            caps = dict(caps, env=dict(caps.get("env") or {}, **preload))
        return _policy.build(self.workspace, caps, tuple(readable), home=home)

    def _call_in_home(self, t: _Local, name: str, request: bytes, limit: float,
                      call: _Call) -> str:
        """One call in a pool thread, with a private directory of its own as HOME."""
        self._check_unchanged(t, name)
        home = self._homes.make(name)
        try:
            return _run(self._policy(t, home), name, request, limit, call)
        finally:
            self._homes.drop(home)

    def _check_unchanged(self, t: _Local, name: str) -> None:
        """ToolError when the workspace or a directory @t may write is reached through a
        symlink: add_tool checked them resolved (and keeps them so), and a tool that can
        write a grant's parent could swap in a link to the calls' directory or to a tool's
        code, which the sandbox would follow when it opens the grant."""
        for path, what in [(self.workspace, "the workspace"), *_writable_of(t.capabilities)]:
            if not _workspace.free_of_links(path):
                raise ToolError(f"tool {name!r}: {what} {path} is not the directory add_tool "
                                "checked (a symlink is in its way, or it is gone; a tool may "
                                "have swapped it): the call is refused; put the directory back")

    def tool_definitions_openai(self) -> list[dict[str, Any]]:
        """Every tool in the OpenAI function-calling format."""
        return [{"type": "function", "function": {"name": n, "description": t.description,
                                                  "parameters": t.schema}}
                for n, t in self._tools.items()]

    def mcp_tool_definitions(self) -> list[dict[str, Any]]:
        """Every tool as MCP's tools/list gives it."""
        return [{"name": n, "description": t.description, "inputSchema": t.schema}
                for n, t in self._tools.items()]

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                        timeout: float | None = None) -> str:
        """Run the tool @name with @arguments and return its text. KeyError for an unknown
        tool; ArgumentError (a ToolError and a ValueError) when @arguments do not match the
        tool's input schema, before any worker starts; ToolError when the tool fails or runs
        past @timeout (the tool's default: the sandbox's), which kills it. A cancelled call
        kills its process. A remote tool's arguments are its server's to check."""
        t = self._tools[name]
        args = dict(arguments or {})
        if isinstance(t, _Remote):
            return await _call_remote(t, name, args)
        if t.takes_workspace and "workspace" in args:
            raise ToolError(f"tool {name!r}: workspace is set by the sandbox, not by the caller")
        why = _validate.problem(t.schema, args)
        if why is not None:
            raise ArgumentError(f"tool {name!r}: {why}")
        limit = self.timeout if timeout is None else float(timeout)
        if not (limit > 0 and math.isfinite(limit)):
            raise ValueError(f"timeout must be a finite number of seconds > 0, not {timeout!r}")
        try:
            request = marshal.dumps({
                "module": t.module, "function": t.function, "arguments": args, "path": [t.root],
                "library": self._library if _confines_itself(t) else None,
                "workspace": self.workspace if t.takes_workspace else None})
        except ValueError:
            raise ToolError(f"tool {name!r}: the arguments must be JSON values") from None
        call = _Call()
        loop = asyncio.get_running_loop()
        try:
            fut = loop.run_in_executor(self._pool, self._call_in_home, t, name, request,
                                       limit, call)
        except RuntimeError:  # the pool is shut down
            raise ToolError(_closed(name)) from None
        try:
            return await asyncio.shield(fut)
        except asyncio.CancelledError:
            call.cancel()
            with contextlib.suppress(BaseException):
                await fut
            raise

    def close(self) -> None:
        """Start no more calls; the calls' private directory goes once the running ones end
        (garbage collection and the interpreter's exit remove it as well)."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._homes.close()


def _closed(name: str) -> str:
    return f"tool {name!r}: the McpSandbox is closed: make another to call tools"


def _frozen(value: Any) -> Any:
    """A copy of @value that no one else holds and no one can change: mappings as read-only
    dicts, lists, tuples, sets and iterators as tuples, all the way down. A tool's grants are
    checked once, at add_tool; a caller that kept its list could otherwise widen them after."""
    if isinstance(value, Mapping):
        return types.MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, (list, tuple, set, frozenset, Iterator)):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return value


_WRITE_FIELDS = ("workdir", "fs_storage")  # besides fs_writable: directories a tool changes


def _resolved(caps: Mapping[str, Any]) -> Mapping[str, Any]:
    """@caps (frozen, checked by Sandbox) with the directories a tool writes resolved: the
    sandbox opens what add_tool checked, and each call checks that nothing swapped a symlink
    into their way since (_check_unchanged)."""
    out = dict(caps)
    if isinstance(caps.get("fs_writable"), tuple):
        out["fs_writable"] = tuple(os.path.realpath(g) if isinstance(g, str) else g
                                   for g in caps["fs_writable"])
    for k in _WRITE_FIELDS:
        if isinstance(caps.get(k), str):
            out[k] = os.path.realpath(caps[k])
    return types.MappingProxyType(out)


def _writable_of(caps: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The directories a tool of @caps (_resolved) may change, each with what grants it: its
    fs_writable grants, its workdir (whose changes land in it after a clean exit) and the
    fs_storage its branches are written to. Never resolved again here: a symlink swapped in
    since add_tool must not be followed (_check_unchanged)."""
    named = [("the fs_writable grant", g) for g in caps.get("fs_writable") or ()]
    named += [(f"the {k}", caps.get(k)) for k in _WRITE_FIELDS]
    return [(g, what) for what, g in named if isinstance(g, str)]


def _check_root(name: str, root: str) -> None:
    """ValueError when a tool's import root is / or the home directory: the tool could read
    all of it (~/.ssh, say)."""
    home = os.path.realpath(os.path.expanduser("~"))
    if root in ("/", home):
        raise ValueError(f"add_tool {name!r}: its module is imported from {root}, which each "
                         "call would then read whole: put the tools in a package directory "
                         "of their own")


class _Homes:
    """The calls' private directories: each call's HOME and TMPDIR (0700, removed after the
    call) in one parent of this McpSandbox's own (0700, a new name in the temporary
    directory), so that nothing one call leaves there configures a later one. No tool may
    write that parent (check_grants): as every call runs as the same user, a tool granted it
    (or /tmp, which holds it) could write into the HOME of another call running beside it.
    The parent goes at close() once no call runs, at garbage collection and at the
    interpreter's exit; a server that is killed leaves it and its running calls'
    directories."""

    def __init__(self, workspace: str) -> None:
        top = os.path.realpath(tempfile.gettempdir())
        if _workspace.beneath(top, workspace):
            raise ValueError(f"McpSandbox: the workspace {workspace} holds the temporary "
                             f"directory {top}: set TMPDIR outside the workspace")
        try:
            self.parent = tempfile.mkdtemp(prefix="sandlock-mcp-", dir=top)
        except OSError as e:
            raise ValueError(f"McpSandbox: the calls' directory cannot be made in {top}: "
                             f"{e.strerror}: set TMPDIR to a directory you can write") from None
        self._remove = weakref.finalize(self, shutil.rmtree, self.parent, ignore_errors=True)
        self._lock = threading.Lock()
        self._running = 0
        self._closed = False

    def check_grants(self, name: str, grants: list[tuple[str, str]]) -> None:
        """ValueError for a write grant (resolved) that is, holds or lies inside the parent."""
        for w, what in grants:
            if _workspace.overlap(w, self.parent):
                raise ValueError(f"add_tool {name!r}: {what} {w} overlaps "
                                 f"{self.parent}, which holds each call's private HOME: a tool "
                                 "could write into the HOME of another call; narrow the grant, "
                                 "or set TMPDIR elsewhere")

    def make(self, name: str) -> str:
        with self._lock:
            if self._closed:
                raise ToolError(_closed(name))
            try:
                home = tempfile.mkdtemp(prefix="home-", dir=self.parent)
            except FileNotFoundError:
                raise ToolError(f"tool {name!r}: the calls' directory {self.parent} is gone "
                                "(a cleaner of the temporary directory?): restart the "
                                "server") from None
            self._running += 1
            return home

    def drop(self, path: str) -> None:
        shutil.rmtree(path, ignore_errors=True)
        with self._lock:
            self._running -= 1
            if self._closed and not self._running:
                self._remove()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if not self._running:
                self._remove()


def _confines_itself(t: _Local) -> bool:
    """Whether @t is a built-in file tool, whose worker loads libsandlock to confine itself to
    the workspace (shell and python do not: their programs need the system)."""
    return t.module == _BUILTIN and t.function in ("read_file", "write_file", "list_files")


def _run(policy: Sandbox, name: str, request: bytes, limit: float, call: _Call) -> str:
    """Run one call's worker in @policy (a thread of the pool) and return its result."""
    with call.lock:
        if call.cancelled:
            raise ToolError(f"tool {name!r}: cancelled")
        proc = policy.popen(list(_WORKER_ARGV),
                            stdin=StdioMode.PIPED, stdout=StdioMode.PIPED,
                            stderr=StdioMode.PIPED)
        call.proc = proc
    out = _Capture(ANSWER_LIMIT, proc.kill)
    err = _Capture(_STDERR_TAIL, None)
    threads = [threading.Thread(target=_feed, args=(proc.stdin, request), daemon=True),
               threading.Thread(target=out.drain, args=(proc.stdout,), daemon=True),
               threading.Thread(target=err.drain, args=(proc.stderr,), daemon=True)]
    for th in threads:
        th.start()
    deadline = time.monotonic() + limit
    threads[0].join(limit)
    result = proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    for th in threads[1:]:
        th.join()
    if call.cancelled:
        raise ToolError(f"tool {name!r}: cancelled")
    if result.reason == ExitReason.TIMEOUT:
        raise ToolError(f"tool {name!r}: timed out after {limit:g} s (killed)")
    if out.over:
        raise ToolError(f"tool {name!r}: its answer is over {ANSWER_LIMIT} bytes (killed)")
    try:
        # The last line, split at b"\n" only: the text may hold other line breaks (U+2028).
        line = bytes(out.data).rstrip(b"\n").rsplit(b"\n", 1)[-1]
        reply = json.loads(line.decode("utf-8", "surrogatepass"))
        if not isinstance(reply, dict):
            raise ValueError("not an object")
    except ValueError:
        tail = bytes(err.data).decode("utf-8", "replace").strip()[-2000:]
        why = result.error or f"exit code {result.exit_code}"
        raise ToolError(f"tool {name!r}: its worker gave no answer ({why})"
                        f"{': ' + tail if tail else ''}") from None
    if not reply.get("ok"):
        raise ToolError(reply.get("error") or f"tool {name!r} failed")
    return str(reply.get("result", ""))


def _feed(stream: Any, data: bytes) -> None:
    """Write @data and close @stream, whether the worker read it all or not: the worker sees
    end-of-file, and no descriptor is left for the garbage collector to close."""
    try:
        with contextlib.suppress(OSError, ValueError):
            stream.write(data)
    finally:
        with contextlib.suppress(OSError):
            stream.close()


class _Capture:
    """What one of a worker's pipes gave, bounded: past @cap bytes, @kill (given) stops the
    worker and marks the capture over; without @kill only the last @cap bytes are kept."""

    def __init__(self, cap: int, kill: Callable[[], None] | None) -> None:
        self.cap = cap
        self.kill = kill
        self.data = bytearray()
        self.over = False

    def drain(self, stream: Any) -> None:
        """Read @stream to its end and close it."""
        try:
            with contextlib.suppress(OSError, ValueError):
                while chunk := stream.read(65536):
                    if self.over:
                        continue  # read on, so that the worker is never stuck on a full pipe
                    self.data += chunk
                    if len(self.data) <= self.cap:
                        continue
                    if self.kill is None:
                        del self.data[:-self.cap]
                    else:
                        self.over = True
                        self.data.clear()
                        with contextlib.suppress(OSError, ValueError):
                            self.kill()
        finally:
            stream.close()


async def _call_remote(t: _Remote, name: str, args: dict[str, Any]) -> str:
    res = await t.session.call_tool(name, args)
    get = res.get if isinstance(res, Mapping) else (lambda k, d=None: getattr(res, k, d))
    texts = []
    for c in get("content") or []:
        text = c.get("text") if isinstance(c, Mapping) else getattr(c, "text", None)
        if text is not None:
            texts.append(text)
    text = "\n".join(texts)
    if get("isError") or get("is_error"):
        raise ToolError(text or f"remote tool {name!r} failed")
    return text
