# SPDX-License-Identifier: LGPL-2.1-or-later
"""Profiles: NAME.toml in the profile directory, parsed by the core (the CLI's parser)."""

from __future__ import annotations

import json
from ctypes import byref, c_void_p

from . import _core, _ffi, _fields
from .sandbox import Sandbox


def list_profiles() -> list[str]:
    """The names of the profiles in $XDG_CONFIG_HOME/sandlock/profiles (else
    ~/.config/sandlock/profiles), sorted."""
    out = c_void_p()
    _ffi.call(_ffi.lib().sandlock_profile_list, byref(out), raise_as=_core.raise_config)
    return _ffi.take_strv(out)


def load_profile(name: str, /, **runtime: object) -> Sandbox:
    """A Sandbox with the policy of profile @name. A profile holds policy only: pass runtime
    kwargs (name=..., ...) here. Its [program] exec/args, if any, is the command run() uses
    when given none. SandboxError with the core's message (line:column) for a bad profile."""
    ptr = c_void_p()
    L = _ffi.lib()
    _ffi.call(L.sandlock_policy_load_profile, name.encode(), byref(ptr),
              raise_as=_core.raise_config)
    try:
        text = c_void_p()
        rc = L.sandlock_policy_dump_json(ptr, byref(text))
        if rc < 0:
            raise _core.SandboxError(f"profile {name}: dump failed ({rc})")
        doc = json.loads(_ffi.take_string(text))
    finally:
        L.sandlock_policy_free(ptr)
    kwargs, command = _fields.from_document(doc)
    sb = Sandbox(**kwargs, **runtime)  # type: ignore[arg-type]
    sb._command = command
    return sb
