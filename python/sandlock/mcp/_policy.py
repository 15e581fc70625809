# SPDX-License-Identifier: LGPL-2.1-or-later
"""The deny-by-default policy of one tool call, and the capabilities a remote MCP tool declares.

Nothing here starts a process: the policy is a Sandbox value, run by McpSandbox for each call.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from typing import Any, Mapping

from ..sandbox import Sandbox
from . import _workspace

# What a Python worker needs to start: the interpreter, its standard library and the shared
# libraries it loads. /etc stays closed (nothing an interpreter needs to start lives there).
_SYSTEM = ("/usr", "/lib", "/lib64", "/bin", "/sbin")

# The environment of every call: only these, set here, and the capabilities' env. clean_env
# keeps five of the caller's variables (PATH, HOME, USER, TERM, LANG); each is set here, so
# none of the caller's reaches the tool.
_BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "TERM": "dumb",
    "USER": "sandlock",
}

PREFIX = "sandlock:"


def field_names() -> frozenset[str]:
    return frozenset(f.name for f in dataclasses.fields(Sandbox) if f.init)


def system_paths() -> list[str]:
    """The read grants a Python interpreter needs: the system directories, and the prefix of
    this interpreter when it lives elsewhere (a virtual environment, /opt)."""
    paths = [p for p in _SYSTEM if os.path.exists(p)]
    for p in {sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable))}:
        if p and os.path.isdir(p) and \
                not any(_workspace.beneath(os.path.realpath(p), os.path.realpath(s))
                        for s in paths):
            paths.append(p)
    return paths


def policy_for_tool(*, workspace: str, capabilities: Mapping[str, Any] | None = None) -> Sandbox:
    """A deny-by-default Sandbox for one tool: @workspace and the interpreter readable,
    nothing writable, a clean environment, no network, no bind. Each key of @capabilities is
    a Sandbox field name granting more: fs_readable adds to the read grants, env to the
    environment, any other replaces the field's value. ValueError names an unknown key."""
    return build(workspace, capabilities, ())


# HOME when a policy has no private directory of a call (policy_for_tool alone): a path that
# does not exist, so that nothing reads or writes a home directory.
NO_HOME = "/nonexistent"


def build(workspace: str, capabilities: Mapping[str, Any] | None,
          readable: tuple[str, ...], *, home: str | None = None) -> Sandbox:
    """policy_for_tool with @readable granted too (the code a worker imports), and @home (a
    call's private directory) as HOME and TMPDIR, writable."""
    if not isinstance(workspace, str) or not workspace:
        raise ValueError("policy_for_tool: workspace must be a path")
    caps = dict(capabilities or {})
    known = field_names()
    unknown = sorted(k for k in caps if k not in known)
    if unknown:
        raise ValueError(f"unknown capability {unknown[0]!r}: capabilities are Sandbox "
                         "field names (fs_writable, net_allow, env, max_memory, ...)")
    workspace = os.path.abspath(workspace)
    read = [workspace] + system_paths()
    read += [p for p in readable if p not in read]
    read += [p for p in caps.pop("fs_readable", ()) if p not in read]
    # HOME is never the workspace: files an agent writes there (.gitconfig, .npmrc) would
    # configure the programs of every later call, of tools granted more too.
    env = dict(_BASE_ENV, HOME=home or NO_HOME)
    if home:
        env["TMPDIR"] = home
    env.update(caps.pop("env", {}) or {})
    values: dict[str, Any] = {"fs_readable": read, "env": env, "clean_env": True,
              "cwd": workspace}
    values.update(caps)
    grants = values.get("fs_writable")
    if home and (grants is None or isinstance(grants, (list, tuple))):
        values["fs_writable"] = [*(grants or ()), home]  # any other type fails in Sandbox
    return Sandbox(**values)


def _keys_of(obj: Any) -> Mapping[str, Any]:
    if obj is None:
        return {}
    if isinstance(obj, Mapping):
        return obj
    dump = getattr(obj, "model_dump", None)  # a pydantic model (the official mcp package)
    if callable(dump):
        return dump(by_alias=True, exclude_none=True)
    extra = getattr(obj, "model_extra", None) or {}
    return dict(vars(obj), **extra) if hasattr(obj, "__dict__") else {}


def capabilities_from_mcp_tool(tool: Any) -> dict[str, Any]:
    """The capabilities a remote MCP tool declares: its annotations' and meta's keys that
    start with "sandlock:", without the prefix (meta wins). @tool is a dict (the wire form) or
    an object with annotations / meta (_meta) attributes."""
    t = _keys_of(tool) if isinstance(tool, Mapping) else None
    out: dict[str, Any] = {}
    for name in ("annotations", "meta", "_meta"):
        src = t.get(name) if t is not None else getattr(tool, name, None)
        for k, v in _keys_of(src).items():
            if isinstance(k, str) and k.startswith(PREFIX):
                out[k[len(PREFIX):]] = v
    return out
