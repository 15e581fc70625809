# SPDX-License-Identifier: LGPL-2.1-or-later
"""An McpSandbox for the MCP harnesses whose tools run in-process: remote tools of a fake MCP
client session, so that tools/call goes through McpSandbox.call_tool without starting a
sandbox. "echo" answers its arguments as JSON, "fail" reports an error, and "wait" answers
only when cancelled (for notifications/cancelled)."""

from __future__ import annotations

import asyncio
import atexit
import json
import shutil
import tempfile
from typing import Any

import fuzzlib  # first: it puts python/ on sys.path
from sandlock.mcp._sandbox import McpSandbox

TOOLS = ("echo", "fail", "wait")
# No tool runs here: the workspace is only named in initialize's instructions. It is a private
# directory off the source tree, since McpSandbox refuses a workspace on the import path.
_WORKSPACE = tempfile.mkdtemp(prefix="sandlock-fuzz-")
atexit.register(shutil.rmtree, _WORKSPACE, True)


class FakeSession:
    def __init__(self, tools: tuple[str, ...]) -> None:
        self.tools = tools

    async def list_tools(self) -> dict[str, Any]:
        return {"tools": [{"name": n, "description": f"the {n} tool",
                           "inputSchema": {"type": "object"}} for n in self.tools]}

    async def call_tool(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        if name == "wait":
            await asyncio.Event().wait()
        return {"content": [{"type": "text", "text": json.dumps(args)}],
                "isError": name == "fail"}


def make_mcp(loop: asyncio.AbstractEventLoop, tools: tuple[str, ...] = TOOLS) -> McpSandbox:
    mcp = McpSandbox(workspace=_WORKSPACE)
    loop.run_until_complete(mcp.add_mcp_session(FakeSession(tools)))
    return mcp


def settle(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel and collect every task a run left behind, so runs do not see each other."""
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for t in pending:
        t.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
