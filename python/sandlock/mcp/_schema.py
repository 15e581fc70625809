# SPDX-License-Identifier: LGPL-2.1-or-later
"""Which functions can be tools, and the JSON Schema of their arguments, from the signature."""

from __future__ import annotations

import importlib
import inspect
import os
import types
import typing
from typing import Any, Callable

_JSON = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array",
         tuple: "array", dict: "object"}


def check_importable(name: str, func: Callable[..., Any]) -> tuple[str, str, str]:
    """(module, function, import root) of @func, which the worker imports by name: a
    top-level function of an importable module. ValueError saying why otherwise."""
    if not inspect.isfunction(func):
        kind = "a method" if inspect.ismethod(func) else f"a {type(func).__name__}"
        raise ValueError(f"add_tool {name!r}: {kind} cannot be a tool: a tool is a top-level "
                         "function of an importable module (the worker imports it by name)")
    qual = func.__qualname__
    if func.__name__ == "<lambda>":
        why = "a lambda"
    elif "<locals>" in qual:
        why = "a nested function"
    elif "." in qual:
        why = "a method"
    elif func.__module__ in (None, "__main__"):
        why = "a function of __main__ (not importable by name)"
    else:
        why = ""
    if why:
        raise ValueError(f"add_tool {name!r}: {why} cannot be a tool: a tool is a top-level "
                         "function of an importable module (the worker imports it by name)")
    module = importlib.import_module(func.__module__)
    if getattr(module, func.__name__, None) is not func:
        raise ValueError(f"add_tool {name!r}: {func.__module__}.{func.__name__} is not this "
                         "function (the worker imports it by name)")
    return func.__module__, func.__name__, import_root(module)


def import_root(module: types.ModuleType) -> str:
    """The sys.path entry @module is imported from."""
    origin = getattr(module.__spec__, "origin", None) or getattr(module, "__file__", None)
    if not origin or not os.path.isabs(origin):
        raise ValueError(f"module {module.__name__} has no source file to import it from")
    d = os.path.dirname(os.path.realpath(origin))
    up = module.__name__.count(".") + (os.path.basename(origin) == "__init__.py")
    for _ in range(up):
        d = os.path.dirname(d)
    return d


def _type_of(hint: Any) -> dict[str, Any]:
    """The schema of a parameter annotated @hint: {} (any value) for what JSON cannot say."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        choices = [_type_of(a) for a in typing.get_args(hint)]
        return {} if not all(choices) else {"anyOf": choices}
    if origin is typing.Literal:
        values = list(typing.get_args(hint))
        plain = all(v is None or isinstance(v, (str, int, float, bool)) for v in values)
        return {"enum": values} if plain else {}
    if hint is type(None):
        return {"type": "null"}
    t = _JSON.get(origin or hint)
    if t is None:
        return {}
    args = typing.get_args(hint)
    if t == "array" and (origin is list and len(args) == 1 or
                         origin is tuple and len(args) == 2 and args[1] is Ellipsis):
        items = _type_of(args[0])
        if items:
            return {"type": t, "items": items}
    return {"type": t}


def schema_of(func: Callable[..., Any]) -> tuple[dict[str, Any], bool]:
    """The input schema of @func's parameters but `workspace`, and whether it takes one."""
    try:
        hints = typing.get_type_hints(func)
    except Exception:
        hints = {}
    props: dict[str, Any] = {}
    required: list[str] = []
    takes_workspace = False
    more = False  # **kwargs: any other name is the function's to take
    for p in inspect.signature(func).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.POSITIONAL_ONLY):
            raise ValueError(f"tool {func.__name__}: parameter {p.name!r} cannot be given "
                             "by name (tools are called with named arguments)")
        if p.kind == p.VAR_KEYWORD:
            more = True
            continue
        if p.name == "workspace":
            takes_workspace = True
            continue
        props[p.name] = _type_of(hints.get(p.name))
        if p.default is p.empty:
            required.append(p.name)
        elif isinstance(p.default, (str, int, float, bool)) or p.default is None:
            props[p.name]["default"] = p.default
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    if not more:
        schema["additionalProperties"] = False
    return schema, takes_workspace
