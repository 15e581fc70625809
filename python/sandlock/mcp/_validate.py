# SPDX-License-Identifier: LGPL-2.1-or-later
"""A tool's arguments checked against its input schema before any worker starts.

The JSON Schema subset here is what the schemas derived from signatures use (type, properties,
required, additionalProperties, items, enum, anyOf) and their plain siblings (const, minimum,
maximum, minLength, maxLength, minItems, maxItems); annotations are allowed and ignored. A
schema with any other keyword is refused when the tool is added, so no keyword is ever
accepted and then not checked. Hand-written: the package stays standard-library only.
"""

from __future__ import annotations

import json
import math
from typing import Any

_TYPES = ("string", "integer", "number", "boolean", "null", "array", "object")
_ANNOTATIONS = frozenset(("title", "description", "default", "examples", "$schema"))
_COUNTS = {"minLength": "character", "maxLength": "character", "minItems": "item",
           "maxItems": "item"}
_KEYWORDS = frozenset(("type", "properties", "required", "additionalProperties", "items",
                       "enum", "anyOf", "const", "minimum", "maximum", *_COUNTS))


def check_schema(schema: Any, tool: str) -> None:
    """ValueError naming what is wrong with @schema (a tool's input schema), for a keyword
    outside the subset first."""
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise ValueError(f"add_tool {tool!r}: input_schema: a schema must be an object or a "
                         f"boolean, not {_json_type(schema)}")
    for kw in schema:
        if kw not in _KEYWORDS and kw not in _ANNOTATIONS:
            raise ValueError(f'not supported yet: input_schema keyword "{kw}" (tool {tool})')
    for kw, value in schema.items():
        if kw in _KEYWORDS:
            _check_keyword(kw, value, tool)


def _check_keyword(kw: str, value: Any, tool: str) -> None:
    def bad(expected: str) -> ValueError:
        return ValueError(f'add_tool {tool!r}: input_schema keyword "{kw}" must be '
                          f"{expected}, not {value!r}")

    if kw == "type":
        names = value if isinstance(value, list) else [value]
        if not names or any(n not in _TYPES for n in names):
            raise bad(f"one of {', '.join(_TYPES)} (or a list of them)")
    elif kw == "properties":
        if not isinstance(value, dict):
            raise bad("an object of schemas")
        for sub in value.values():
            check_schema(sub, tool)
    elif kw == "required":
        if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
            raise bad("a list of names")
    elif kw in ("additionalProperties", "items"):
        if not isinstance(value, (dict, bool)):
            raise bad("a schema (an object or a boolean)")
        check_schema(value, tool)
    elif kw == "enum":
        if not isinstance(value, list) or not value:
            raise bad("a non-empty list")
    elif kw == "anyOf":
        if not isinstance(value, list) or not value:
            raise bad("a non-empty list of schemas")
        for sub in value:
            check_schema(sub, tool)
    elif kw in ("minimum", "maximum"):
        if _json_type(value) not in ("integer", "number") or not math.isfinite(value):
            raise bad("a finite number")
    elif kw in _COUNTS:
        if _json_type(value) != "integer" or value < 0:
            raise bad("an integer >= 0")


def problem(schema: Any, arguments: dict[str, Any]) -> str | None:
    """One line naming the first argument that does not match @schema and what was expected;
    None when they all match."""
    why = _mismatch(schema, arguments, "")
    if why is None:
        return None
    where, what = why
    return f'argument "{where}": {what}' if where else f"arguments: {what}"


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _is(value: Any, name: str) -> bool:
    got = _json_type(value)
    if name == "number":
        return got in ("integer", "number")
    if name == "integer" and got == "number":
        return value.is_integer()  # 1.0 is an integer in JSON Schema
    return got == name


def _same(a: Any, b: Any) -> bool:
    """JSON equality: 1 == 1.0, but true is not 1."""
    ta, tb = _json_type(a), _json_type(b)
    if {ta, tb} <= {"integer", "number"}:
        return a == b
    if ta != tb:
        return False
    if ta == "array":
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if ta == "object":
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _mismatch(schema: Any, value: Any, path: str) -> tuple[str, str] | None:
    """(where, what was expected) for the first part of @value at @path that @schema
    refuses, None when it matches."""
    if schema is True:
        return None
    if schema is False:
        return path, "not allowed"
    for check in (_type_mismatch, _value_mismatch, _size_mismatch, _any_of_mismatch):
        why = check(schema, value, path)
        if why is not None:
            return why
    if _json_type(value) == "object":
        return _object_mismatch(schema, value, path)
    if _json_type(value) == "array" and "items" in schema:
        for i, item in enumerate(value):
            why = _mismatch(schema["items"], item, _join(path, i))
            if why is not None:
                return why
    return None


def _type_mismatch(schema: dict[str, Any], value: Any, path: str) -> tuple[str, str] | None:
    if "type" not in schema:
        return None
    names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    if any(_is(value, n) for n in names):
        return None
    return path, f"expected {' or '.join(names)}, got {_json_type(value)}"


def _value_mismatch(schema: dict[str, Any], value: Any, path: str) -> tuple[str, str] | None:
    if "const" in schema and not _same(value, schema["const"]):
        return path, f"expected {_shown(schema['const'])}, got {_shown(value)}"
    if "enum" in schema and not any(_same(value, e) for e in schema["enum"]):
        options = ", ".join(_shown(e) for e in schema["enum"])
        return path, f"expected one of {options}, got {_shown(value)}"
    if _is(value, "number"):
        if "minimum" in schema and value < schema["minimum"]:
            return path, f"expected at least {schema['minimum']}, got {value}"
        if "maximum" in schema and value > schema["maximum"]:
            return path, f"expected at most {schema['maximum']}, got {value}"
    return None


def _size_mismatch(schema: dict[str, Any], value: Any, path: str) -> tuple[str, str] | None:
    kind = _json_type(value)
    for kw, unit in _COUNTS.items():
        if kw not in schema or kind != ("string" if unit == "character" else "array"):
            continue
        n, bound = len(value), schema[kw]
        if (n < bound) if kw.startswith("min") else (n > bound):
            least = "at least" if kw.startswith("min") else "at most"
            return path, f"expected {least} {bound} {unit}{'s' if bound != 1 else ''}, got {n}"
    return None


def _any_of_mismatch(schema: dict[str, Any], value: Any, path: str) -> tuple[str, str] | None:
    if "anyOf" not in schema:
        return None
    misses = []
    for sub in schema["anyOf"]:
        why = _mismatch(sub, value, path)
        if why is None:
            return None
        misses.append(why)
    if all(isinstance(s, dict) and set(s) - _ANNOTATIONS == {"type"} for s in schema["anyOf"]):
        names = [n for s in schema["anyOf"]
                 for n in (s["type"] if isinstance(s["type"], list) else [s["type"]])]
        return path, f"expected {' or '.join(names)}, got {_json_type(value)}"
    return misses[0][0], f"{misses[0][1]} (nor any other choice of its anyOf)"


def _object_mismatch(schema: dict[str, Any], value: dict[str, Any],
                     path: str) -> tuple[str, str] | None:
    props = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in value:
            return _join(path, name), "missing (required)"
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        if name in props:
            why = _mismatch(props[name], item, _join(path, name))
        elif extra is False:
            known = ", ".join(props) or "none"
            why = _join(path, name), f"not a known argument (known: {known})"
        else:
            why = _mismatch(extra, item, _join(path, name))
        if why is not None:
            return why
    return None


def _shown(value: Any) -> str:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
