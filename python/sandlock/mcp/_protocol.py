# SPDX-License-Identifier: LGPL-2.1-or-later
"""The server side of the MCP subset sandlock-mcp speaks, independent of the transport:
JSON-RPC 2.0 messages in, responses out. initialize (with protocol-version negotiation),
notifications/initialized, ping, tools/list, tools/call and notifications/cancelled.

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


class RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def error(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def parse(data: bytes | str) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(message, None) for one valid JSON-RPC message, else (None, the error response)."""
    try:
        msg = json.loads(data)
    except (ValueError, UnicodeDecodeError) as e:
        return None, error(None, PARSE_ERROR, f"parse error: {e}")
    except RecursionError:  # arrays or objects nested past the interpreter's recursion limit
        return None, error(None, PARSE_ERROR, "parse error: nested too deeply")
    if isinstance(msg, list):
        return None, error(None, INVALID_REQUEST, "invalid request: batches are not supported")
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
        return None, error(msg.get("id") if isinstance(msg, dict) else None, INVALID_REQUEST,
                           "invalid request: not a JSON-RPC 2.0 message")
    if "method" in msg and not isinstance(msg["method"], str):
        return None, error(msg.get("id"), INVALID_REQUEST,
                           "invalid request: method is not a string")
    if "method" not in msg and "id" not in msg:
        return None, error(None, INVALID_REQUEST, "invalid request: neither a method nor an id")
    return msg, None


def is_request(msg: dict[str, Any]) -> bool:
    return "method" in msg and "id" in msg


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
        if "method" not in msg:
            return None  # a response to a request this server never sends
        if not is_request(msg):
            self._notification(msg)
            return None
        msg_id = msg["id"]
        task = asyncio.current_task()
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
            self.calls.pop(msg_id, None)

    def _notification(self, msg: dict[str, Any]) -> None:
        method, params = msg["method"], msg.get("params") or {}
        if method == "notifications/initialized":
            self.initialized = True
        elif method == "notifications/cancelled" and isinstance(params, dict):
            task = self.calls.get(params.get("requestId"))
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
