# SPDX-License-Identifier: LGPL-2.1-or-later
"""sandlock-mcp: an MCP server whose built-in tools (shell, python, read_file, write_file,
list_files) each run in a fresh sandbox confined to one workspace directory."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import math
import os
import signal
import sys
from typing import Any, Coroutine

from . import builtin
from ..sandbox import Sandbox
from ._sandbox import McpSandbox


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _seconds(text: str) -> float:
    value = float(text)
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"{text}: a finite number of seconds > 0")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}: a whole number >= 1")
    return value


def _args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="sandlock-mcp", description=__doc__)
    p.add_argument("--workspace", default="/tmp/sandlock",
                   help="the directory the tools work in: made (mode 0700) if missing, "
                        "refused unless this user owns it and only this user can write it "
                        "(default %(default)s)")
    p.add_argument("--timeout", type=_seconds, default=30.0,
                   help="seconds a tool call may run before it is killed (default %(default)s)")
    p.add_argument("--transport", choices=("stdio", "http", "sse"), default="stdio",
                   help="stdio (default), http (Streamable HTTP at /mcp) or sse (the older "
                        "HTTP+SSE transport at /sse)")
    p.add_argument("--host", default="127.0.0.1", help="HTTP address (default %(default)s)")
    p.add_argument("--port", type=int, default=8080, help="HTTP port (default %(default)s)")
    p.add_argument("--token", default=os.environ.get("SANDLOCK_MCP_TOKEN"),
                   help="bearer token HTTP clients must send (default $SANDLOCK_MCP_TOKEN, "
                        "which other users cannot read as they can a command line); required "
                        "unless the host is a loopback address")
    p.add_argument("--max-memory", default=builtin.DEFAULT_MAX_MEMORY,
                   help="memory each shell or python call may use (default %(default)s)")
    p.add_argument("--max-processes", type=_count, default=builtin.DEFAULT_MAX_PROCESSES,
                   help="processes each shell or python call may run at once "
                        "(default %(default)s)")
    a = p.parse_args(argv)
    a.token_given = p.parse_known_args(argv, argparse.Namespace(token=None))[0].token
    return a


async def _until_terminated(coro: Coroutine[Any, Any, None]) -> None:
    """Run @coro until it ends or SIGTERM (how a service is stopped) cancels it, as Ctrl-C
    does: main() then closes the McpSandbox, which removes the calls' directory; the default
    action would end the process on the spot and leave it. (The stdio transport cancels
    itself.)"""
    me = asyncio.current_task()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, me.cancel)  # type: ignore[union-attr]
    with contextlib.suppress(asyncio.CancelledError):
        await coro


def main(argv: list[str] | None = None) -> int:
    a = _args(argv)
    if a.token == "":
        # An empty token would be no token to the loopback rule and yet match no request.
        if os.environ.get("SANDLOCK_MCP_TOKEN") == "" and a.token_given is None:
            print("sandlock-mcp: SANDLOCK_MCP_TOKEN is empty: unset it or give a token",
                  file=sys.stderr)
        else:
            print('sandlock-mcp: --token "" is empty: give a token or leave --token out',
                  file=sys.stderr)
        return 2
    if a.transport != "stdio" and not a.token and not _loopback(a.host):
        print(f"sandlock-mcp: --host {a.host} is not a loopback address: a bearer token is "
              "required (--token or SANDLOCK_MCP_TOKEN)", file=sys.stderr)
        return 2
    try:
        Sandbox(max_memory=a.max_memory)
    except ValueError as e:
        print(f"sandlock-mcp: --max-memory {a.max_memory}: {e}", file=sys.stderr)
        return 2
    try:
        mcp = McpSandbox(workspace=a.workspace, timeout=a.timeout)
        builtin.register(mcp, max_memory=a.max_memory, max_processes=a.max_processes)
    except ValueError as e:
        print(f"sandlock-mcp: {str(e).removeprefix('McpSandbox: ')}", file=sys.stderr)
        return 2
    try:
        if a.transport == "stdio":
            from . import _stdio
            asyncio.run(_stdio.serve(mcp))
        else:
            from . import _http
            asyncio.run(_until_terminated(
                _http.serve(mcp, a.host, a.port, a.token, sse=a.transport == "sse")))
    except KeyboardInterrupt:
        pass
    finally:
        mcp.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
