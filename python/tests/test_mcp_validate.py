# SPDX-License-Identifier: LGPL-2.1-or-later
"""A tools/call's arguments checked against the tool's input schema before any worker starts:
each keyword of the subset with an argument it takes (the worker runs) and one it refuses (an
ArgumentError naming the argument, and no worker); other keywords refused at add_tool."""

import json

import pytest

import mcp_tools
from conftest import run
from sandlock.mcp import ArgumentError, McpSandbox, ToolError


@pytest.fixture
def ws(tmp_path):
    return tmp_path


def marker_tool(ws, schema):
    m = McpSandbox(workspace=str(ws))
    m.add_tool("t", mcp_tools.mark, capabilities={"fs_writable": [str(ws)]},
               input_schema=schema)
    return m


def one(prop):
    """An object schema of one required argument, "v", of schema @prop."""
    return {"type": "object", "properties": {"v": prop}, "required": ["v"]}


CASES = [  # (schema of v, an argument it takes, one it refuses, the refusal)
    ({"type": "integer"}, 3, "3", 'argument "v": expected integer, got string'),
    ({"type": "integer"}, 2.0, 2.5, 'argument "v": expected integer, got number'),
    ({"type": "number"}, 1.5, True, 'argument "v": expected number, got boolean'),
    ({"type": "string"}, "s", None, 'argument "v": expected string, got null'),
    ({"type": "boolean"}, False, 0, 'argument "v": expected boolean, got integer'),
    ({"type": "null"}, None, "", 'argument "v": expected null, got string'),
    ({"type": "array"}, [1], {}, 'argument "v": expected array, got object'),
    ({"type": "object"}, {}, [], 'argument "v": expected object, got array'),
    ({"type": ["integer", "null"]}, None, "x", 'argument "v": expected integer or null, got '
                                               'string'),
    ({"type": "object", "properties": {"depth": {"type": "integer"}}}, {"depth": 1},
     {"depth": "a"}, 'argument "v.depth": expected integer, got string'),
    ({"type": "object", "required": ["depth"]}, {"depth": 1}, {},
     'argument "v.depth": missing (required)'),
    ({"type": "object", "properties": {"a": {}}, "additionalProperties": False}, {"a": 1},
     {"a": 1, "b": 2}, 'argument "v.b": not a known argument (known: a)'),
    ({"type": "object", "additionalProperties": {"type": "integer"}}, {"x": 1}, {"x": "1"},
     'argument "v.x": expected integer, got string'),
    ({"type": "array", "items": {"type": "integer"}}, [1, 2], [1, "2"],
     'argument "v[1]": expected integer, got string'),
    ({"enum": ["a", "b"]}, "b", "c", 'argument "v": expected one of "a", "b", got "c"'),
    ({"enum": [1]}, 1.0, True, 'argument "v": expected one of 1, got true'),
    ({"const": "x"}, "x", "y", 'argument "v": expected "x", got "y"'),
    ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, None, "x",
     'argument "v": expected integer or null, got string'),
    ({"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string"}]}, "s", -1,
     'argument "v": expected at least 0, got -1 (nor any other choice of its anyOf)'),
    ({"type": "integer", "minimum": 1}, 1, 0, 'argument "v": expected at least 1, got 0'),
    ({"type": "number", "maximum": 2.5}, 2.5, 3, 'argument "v": expected at most 2.5, got 3'),
    ({"type": "string", "minLength": 3}, "abc", "ab",
     'argument "v": expected at least 3 characters, got 2'),
    ({"type": "string", "maxLength": 1}, "\u00e9", "ab",
     'argument "v": expected at most 1 character, got 2'),
    ({"type": "array", "minItems": 1}, [0], [], 'argument "v": expected at least 1 item, got 0'),
    ({"type": "array", "maxItems": 2}, [0, 1], [0, 1, 2],
     'argument "v": expected at most 2 items, got 3'),
    ({"type": "object", "properties": {"a": True, "b": False}}, {"a": 1}, {"b": 1},
     'argument "v.b": not allowed'),
    ({"type": "string", "title": "V", "description": "d", "default": "x", "examples": ["y"],
      "$schema": "https://json-schema.org/draft/2020-12/schema"}, "s", 1,
     'argument "v": expected string, got integer'),
]


@pytest.mark.parametrize("prop,good,bad,why", CASES, ids=[str(i) for i in range(len(CASES))])
def test_each_keyword(ws, prop, good, bad, why):
    m = marker_tool(ws, one(prop))
    called = ws / "called.json"
    assert run(m.call_tool("t", {"v": good})) == "ran"
    assert json.loads(called.read_text()) == {"v": good}
    called.unlink()
    with pytest.raises(ArgumentError) as e:
        run(m.call_tool("t", {"v": bad}))
    assert str(e.value) == f"tool 't': {why}"
    assert isinstance(e.value, ToolError) and isinstance(e.value, ValueError)
    assert not called.exists()  # refused before any worker started


def test_top_level_required_and_unknown(ws):
    schema = dict(one({"type": "integer"}), additionalProperties=False)
    m = marker_tool(ws, schema)
    with pytest.raises(ArgumentError, match='^tool \'t\': argument "v": missing \\(required\\)$'):
        run(m.call_tool("t", {}))
    with pytest.raises(ArgumentError,
                       match='^tool \'t\': argument "w": not a known argument \\(known: v\\)$'):
        run(m.call_tool("t", {"v": 1, "w": 2}))
    assert not (ws / "called.json").exists()
    assert run(m.call_tool("t", {"v": 1})) == "ran"


def test_derived_schema_checked(ws):
    m = McpSandbox(workspace=str(ws))
    m.add_tool("count", mcp_tools.mark_count, capabilities={"fs_writable": [str(ws)]})
    called = ws / "called.json"
    for args, why in [({"count": "3"}, 'argument "count": expected integer, got string'),
                      ({}, 'argument "count": missing (required)'),
                      ({"count": 3, "colour": "red"},
                       'argument "colour": not a known argument (known: count, label)'),
                      ({"count": 3, "label": 4}, 'argument "label": expected string, got '
                                                 'integer')]:
        with pytest.raises(ArgumentError) as e:
            run(m.call_tool("count", args))
        assert str(e.value) == f"tool 'count': {why}"
        assert not called.exists()
    assert run(m.call_tool("count", {"count": 3, "label": "x"})) == "ran"
    assert json.loads(called.read_text()) == {"count": 3, "label": "x"}


@pytest.mark.parametrize("kw,value", [("pattern", "^a"), ("format", "email"),
                                      ("oneOf", [{"type": "string"}]), ("$ref", "#/$defs/x"),
                                      ("exclusiveMinimum", 0), ("multipleOf", 2),
                                      ("uniqueItems", True), ("patternProperties", {})])
def test_other_keywords_refused_at_add_tool(ws, kw, value):
    m = McpSandbox(workspace=str(ws))
    # Nested in a property, as at the top: no keyword is accepted and then left unchecked.
    for schema in (one({"type": "string", kw: value}), dict(one({"type": "string"}),
                                                               **{kw: value})):
        with pytest.raises(ValueError) as e:
            m.add_tool("t", mcp_tools.mark, input_schema=schema)
        assert str(e.value) == f'not supported yet: input_schema keyword "{kw}" (tool t)'
    assert m.tools == {}
    m.add_tool("t", mcp_tools.mark, input_schema=one({"type": "string"}))  # without it: taken
    assert list(m.tools) == ["t"]


@pytest.mark.parametrize("schema,why", [
    (one({"type": "integr"}), '"type" must be one of string, integer, number, boolean, null, '
                              "array, object (or a list of them), not 'integr'"),
    ({"type": "object", "required": "v"}, "\"required\" must be a list of names, not 'v'"),
    (one({"minLength": -1}), '"minLength" must be an integer >= 0, not -1'),
    (one({"enum": []}), '"enum" must be a non-empty list, not []'),
])
def test_malformed_schema_refused(ws, schema, why):
    m = McpSandbox(workspace=str(ws))
    with pytest.raises(ValueError) as e:
        m.add_tool("t", mcp_tools.mark, input_schema=schema)
    assert str(e.value) == f"add_tool 't': input_schema keyword {why}"
