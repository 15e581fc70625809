#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Fuzz target: MCP JSON-RPC messages, one a line as the stdio transport reads them, through
read() and one Session's dispatch (initialize, ping, tools/list, tools/call, notifications).

The contract: read() gives a batch (its answers each a valid response), a message or a
JSON-RPC error response (-32700 parse error, -32600 invalid request), never an exception; every request gets a response with its id and
either a result of the method's shape or an error of -32602, -32601 or -32002 (a tools/call
answered by nothing only when cancelled); every response is valid JSON (no NaN)."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import fuzzlib
import mcpfake
from sandlock.mcp import _protocol as P

NAME = "mcp_message"
TOKENS = [b'"jsonrpc"', b'"2.0"', b'"id"', b'"method"', b'"params"', b'"initialize"',
          b'"ping"', b'"tools/list"', b'"tools/call"', b'"notifications/initialized"',
          b'"notifications/cancelled"', b'"requestId"', b'"protocolVersion"',
          b'"2025-06-18"', b'"name"', b'"arguments"', b'"echo"', b'"fail"', b'"wait"',
          b'"result"', b'"error"']

_PARSE_CODES = {P.PARSE_ERROR, P.INVALID_REQUEST}
# INVALID_REQUEST: a request whose id is that of one in flight.
_CALL_CODES = {P.INVALID_PARAMS, P.METHOD_NOT_FOUND, P.NOT_INITIALIZED, P.INVALID_REQUEST}
_loop = asyncio.new_event_loop()
_mcp = mcpfake.make_mcp(_loop)


def _valid_json(obj: Any) -> None:
    json.dumps(obj, allow_nan=False)  # what a client can read back: no NaN or Infinity


def _check_parse(msg: Any, err: Any) -> None:
    assert (msg is None) != (err is None), (msg, err)
    if err is not None:
        assert err["jsonrpc"] == "2.0" and set(err) == {"jsonrpc", "id", "error"}, err
        assert err["error"]["code"] in _PARSE_CODES, err
        assert isinstance(err["error"]["message"], str), err
        _valid_json(err)
        return
    assert isinstance(msg, dict) and msg["jsonrpc"] == "2.0", msg
    assert "method" in msg or "id" in msg, msg
    assert "method" not in msg or isinstance(msg["method"], str), msg


def _check_result(method: str, result: Any) -> None:
    assert isinstance(result, dict), result
    if method == "initialize":
        assert result["protocolVersion"] in P.VERSIONS, result
    elif method == "tools/list":
        assert [t["name"] for t in result["tools"]] == list(mcpfake.TOOLS), result
    elif method == "tools/call":
        assert isinstance(result["isError"], bool), result
        assert [c["type"] for c in result["content"]] == ["text"], result
        assert isinstance(result["content"][0]["text"], str), result
    else:
        assert method == "ping" and result == {}, (method, result)


def _check_reply(msg: dict[str, Any], reply: Any) -> tuple[Any, ...]:
    if reply is None:
        assert msg["method"] == "tools/call", f"a {msg['method']} request got no response"
        return ("none",)
    _valid_json(reply)
    assert reply["jsonrpc"] == "2.0" and reply["id"] == msg["id"], (msg, reply)
    assert ("result" in reply) != ("error" in reply), reply
    if "error" in reply:
        assert reply["error"]["code"] in _CALL_CODES, reply
        assert isinstance(reply["error"]["message"], str), reply
        return ("error", reply["error"]["code"])
    _check_result(msg["method"], reply["result"])
    return ("result", msg["method"], reply["result"].get("isError"))


async def _batch(session: P.Session, items: list[Any]) -> tuple[Any, ...]:
    """A batch, as the transports give it to the session: one error for all of it, or the
    answers of its members, each a valid response."""
    started = session.batch(items)
    if isinstance(started, dict):
        _valid_json(started)
        assert started["error"]["code"] == P.INVALID_REQUEST, started
        return ("batch refused",)
    for _ in range(16):  # as for single requests: the echo tool answers in a few turns
        await asyncio.sleep(0)
    for s in started:
        if isinstance(s, asyncio.Task):
            s.cancel()  # a member waiting on the "wait" tool would never end
    replies = await P.answers(started) or []
    for r in replies:
        _valid_json(r)
        assert r["jsonrpc"] == "2.0" and ("result" in r) != ("error" in r), r
    return ("batch", len(replies))


async def _session(lines: list[bytes]) -> list[tuple[Any, ...]]:
    session = P.Session(_mcp)
    outcomes: list[tuple[Any, ...]] = []
    asked: list[tuple[dict[str, Any], asyncio.Task[Any]]] = []
    for line in lines:
        msg, err = P.read(line)
        if isinstance(msg, list):
            outcomes.append(await _batch(session, msg))
            continue
        _check_parse(msg, err)
        if msg is None:
            outcomes.append(("parse", err["error"]["code"]))
        elif P.is_request(msg):
            asked.append((msg, asyncio.create_task(session.handle(msg))))
            await asyncio.sleep(0)
        else:
            assert await session.handle(msg) is None
            outcomes.append(("notification", msg.get("method")))
    for _ in range(16):  # the echo tool's answers take a few turns of the loop
        await asyncio.sleep(0)
    session.cancel_all()
    for _ in range(4):
        await asyncio.sleep(0)
    running = [msg for msg, task in asked if not task.done()]
    assert not running, f"calls cancel_all() does not reach: {running}"
    for msg, task in asked:
        outcomes.append(_check_reply(msg, await task))
    assert not session.calls, session.calls
    return outcomes


def fuzz(data: bytes) -> Any:
    lines = [ln for ln in data.split(b"\n") if ln.strip()]
    try:
        return tuple(_loop.run_until_complete(_session(lines))[:8])
    finally:
        mcpfake.settle(_loop)


if __name__ == "__main__":
    sys.exit(fuzzlib.main(NAME, fuzz, TOKENS))
