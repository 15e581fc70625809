# SPDX-License-Identifier: LGPL-2.1-or-later
"""Sandboxed tools for AI agents over MCP: every call of a local tool runs in a fresh sandbox
with deny-by-default permissions (policy_for_tool), granted more only by the capabilities the
tool is registered with.

    from sandlock.mcp import McpSandbox
    mcp = McpSandbox(workspace="/tmp/agent")
    mcp.add_tool("read_file", tools.read_file)
    text = await mcp.call_tool("read_file", {"path": "notes.txt"})
"""

from ._policy import capabilities_from_mcp_tool, policy_for_tool
from ._sandbox import ArgumentError, McpSandbox, ToolError

__all__ = ["ArgumentError", "McpSandbox", "ToolError", "capabilities_from_mcp_tool",
           "policy_for_tool"]
