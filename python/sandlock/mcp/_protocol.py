# SPDX-License-Identifier: LGPL-2.1-or-later
"""The server side of the MCP subset sandlock-mcp speaks, independent of the transport:
JSON-RPC 2.0 messages in, responses out. initialize (with protocol-version negotiation),
notifications/initialized, ping, tools/list, tools/call and notifications/cancelled; JSON-RPC
batches for the sessions whose protocol version has them (BATCH_VERSIONS).

A transport gives each request its own task running Session.handle(), so calls run
concurrently and a cancellation can reach the one it names.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from .._version import __version__
from ..exceptions import SandlockError
from ._sandbox import McpSandbox, ToolError

# Newest first: the answer to a client asking for a version not listed here.
VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
INTERNAL_ERROR = -32603
NOT_INITIALIZED = -32002

# The versions whose sessions take JSON-RPC batches: 2025-03-26 requires servers to receive
# them, 2024-11-05 follows JSON-RPC 2.0, which has them; 2025-06-18 removed them.
BATCH_VERSIONS = ("2025-03-26", "2024-11-05")
MAX_BATCH = 1024


class RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def error(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # an id of NaN could not be answered in JSON


def load(data: bytes | str) -> tuple[Any, dict[str, Any] | None]:
    """(the JSON value of @data, None), or (None, the parse error response)."""
    try:
        return json.loads(data, parse_constant=_no_constant), None
    except (ValueError, UnicodeDecodeError) as e:
        return None, error(None, PARSE_ERROR, f"parse error: {e}")
    except RecursionError:  # arrays or objects nested past the interpreter's recursion limit
        return None, error(None, PARSE_ERROR, "parse error: nested too deeply")


def check(msg: Any) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(@msg, None) when it is one valid JSON-RPC message, else (None, the error response)."""
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
        return None, error(msg.get("id") if isinstance(msg, dict) else None, INVALID_REQUEST,
                           "invalid request: not a JSON-RPC 2.0 message")
    if "method" in msg and not isinstance(msg["method"], str):
        return None, error(msg.get("id"), INVALID_REQUEST,
                           "invalid request: method is not a string")
    if "method" not in msg and "id" not in msg:
        return None, error(None, INVALID_REQUEST, "invalid request: neither a method nor an id")
    if "id" in msg and not _is_id(msg["id"]):
        return None, error(None, INVALID_REQUEST,
                           "invalid request: an id is a string, a number or null")
    return msg, None


def _is_id(value: Any) -> bool:
    """JSON-RPC's id: a string, a number or null (so that it can key the calls in flight)."""
    return value is None or isinstance(value, (str, float)) or \
        (isinstance(value, int) and not isinstance(value, bool))


def read(data: bytes | str) -> tuple[dict[str, Any] | list[Any] | None, dict[str, Any] | None]:
    """What one line or body of a transport holds: (a batch, as the list Session.batch()
    takes, None), (one valid JSON-RPC message, None), or (None, the error response)."""
    value, err = load(data)
    if err is not None or isinstance(value, list):
        return value, err
    return check(value)


def is_request(msg: dict[str, Any]) -> bool:
    return "method" in msg and "id" in msg


async def answers(slots: list[Any]) -> list[dict[str, Any]] | None:
    """The answers of a started batch (Session.batch()) as one list, None when it has none
    (only cancelled requests): then nothing is sent."""
    tasks = [s for s in slots if isinstance(s, asyncio.Task)]
    if tasks:
        await asyncio.wait(tasks)
    out = [s if isinstance(s, dict) else task_answer(s) for s in slots]
    return [r for r in out if r is not None] or None


def _in_use(msg_id: Any) -> dict[str, Any]:
    # Two requests in flight under one id could not be told apart by their answers, nor by a
    # cancellation: the second is refused, and the first keeps its place.
    return error(msg_id, INVALID_REQUEST, f"invalid request: id {json.dumps(msg_id)} is in use "
                                          "by a request in flight")


def task_answer(task: asyncio.Task[Any]) -> dict[str, Any] | None:
    """The answer of a request's finished task: None when it was cancelled (nothing is sent)."""
    return None if task.cancelled() else task.result()


class Session:
    """One client's session: its negotiated version and its calls in flight."""

    def __init__(self, mcp: McpSandbox) -> None:
        self.mcp = mcp
        self.version: str | None = None
        self.initialized = False
        self.calls: dict[Any, asyncio.Task[Any]] = {}

    async def handle(self, msg: dict[str, Any]) -> dict[str, Any] | None:
        """The response to @msg (None for a notification, a response, or a request cancelled
        while it ran: the client was told it is abandoned, so nothing is sent)."""
        if not is_request(msg):
            self.notify(msg)
            return None
        msg_id = msg["id"]
        task = asyncio.current_task()
        if self.calls.get(msg_id, task) is not task:
            return _in_use(msg_id)
        if task is not None:
            self.calls[msg_id] = task
        try:
            result = await self._request(msg["method"], msg.get("params"))
            return {"jsonrpc": "2.0", "id": msg_id, "result": result}
        except RpcError as e:
            return error(msg_id, e.code, str(e))
        except asyncio.CancelledError:
            return None
        except Exception as e:  # noqa: BLE001 - a client waits for an answer to every request
            return error(msg_id, INTERNAL_ERROR, f"internal error: {type(e).__name__}: {e}")
        finally:
            if self.calls.get(msg_id) is task:
                del self.calls[msg_id]

    def notify(self, msg: dict[str, Any]) -> None:
        """Take in a notification, or a response (to a request this server never sends:
        nothing to do)."""
        if "method" in msg:
            self._notification(msg)

    def batch(self, items: list[Any]) -> dict[str, Any] | list[Any]:
        """Start the batch @items: the one error answering all of it, or a slot for each member
        that gets an answer, in order: the error of an invalid member, or the task answering a
        request (answers() waits for them). Notifications and responses are taken in at once,
        and their requests run concurrently, as separate ones do."""
        refused = self._batch_refused(items)
        if refused is not None:
            return error(None, INVALID_REQUEST, f"invalid request: {refused}")
        slots: list[Any] = []
        for item in items:
            msg, err = check(item)
            if msg is None:
                slots.append(err)
            elif not is_request(msg):
                self.notify(msg)
            elif msg["method"] == "initialize":
                slots.append(error(msg["id"], INVALID_REQUEST,
                                   "invalid request: initialize cannot be in a batch"))
            elif msg["id"] in self.calls:
                slots.append(_in_use(msg["id"]))
            else:
                slots.append(self._start(msg))
        return slots

    def _batch_refused(self, items: list[Any]) -> str | None:
        if self.version not in BATCH_VERSIONS:
            now = f"this session's is {self.version}" if self.version else \
                "this session is not initialized"
            return ("batches are not supported at this protocol version (they are at "
                    f"{' and '.join(BATCH_VERSIONS)}; {now})")
        if not items:
            return "an empty batch"
        if len(items) > MAX_BATCH:
            return f"a batch of {len(items)} messages (at most {MAX_BATCH})"
        return None

    def _start(self, msg: dict[str, Any]) -> asyncio.Task[Any]:
        """The task answering the request @msg, known by its id at once: a cancellation later
        in the same batch finds it, even before it has started."""
        msg_id = msg["id"]
        task = asyncio.create_task(self.handle(msg))
        self.calls[msg_id] = task

        def forget(t: asyncio.Task[Any]) -> None:
            if self.calls.get(msg_id) is t:
                del self.calls[msg_id]
        task.add_done_callback(forget)
        return task

    def _notification(self, msg: dict[str, Any]) -> None:
        method, params = msg["method"], msg.get("params") or {}
        if method == "notifications/initialized":
            self.initialized = True
        elif method == "notifications/cancelled" and isinstance(params, dict):
            request_id = params.get("requestId")
            task = self.calls.get(request_id) if _is_id(request_id) else None
            if task is not None:
                task.cancel()

    def cancel_all(self) -> None:
        for task in list(self.calls.values()):
            task.cancel()

    async def _request(self, method: str, params: Any) -> dict[str, Any]:
        if params is not None and not isinstance(params, dict):
            raise RpcError(INVALID_PARAMS, "params must be an object")
        params = params or {}
        if method == "initialize":
            return self._initialize(params)
        if method == "ping":
            return {}
        if self.version is None:
            raise RpcError(NOT_INITIALIZED, f"{method}: the session is not initialized")
        if method == "tools/list":
            return {"tools": self.mcp.mcp_tool_definitions()}
        if method == "tools/call":
            return await self._call(params)
        raise RpcError(METHOD_NOT_FOUND, f"method not found: {method}")

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        if not isinstance(asked, str):
            raise RpcError(INVALID_PARAMS, "initialize: protocolVersion must be a string")
        self.version = asked if asked in VERSIONS else VERSIONS[0]
        return {"protocolVersion": self.version,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "sandlock-mcp", "version": __version__},
                "instructions": "Every tool call runs in a fresh sandlock sandbox confined to "
                                f"the workspace {self.mcp.workspace}, without network access."}

    async def _call(self, params: dict[str, Any]) -> dict[str, Any]:
        name, args = params.get("name"), params.get("arguments")
        if not isinstance(name, str) or name not in self.mcp.tools:
            raise RpcError(INVALID_PARAMS, f"unknown tool: {name!r}")
        if args is not None and not isinstance(args, dict):
            raise RpcError(INVALID_PARAMS, "tools/call: arguments must be an object")
        try:
            text = await self.mcp.call_tool(name, args)
        except (ToolError, SandlockError, ValueError, OSError, RuntimeError) as e:
            return {"content": [{"type": "text", "text": str(e)}], "isError": True}
        return {"content": [{"type": "text", "text": text}], "isError": False}
