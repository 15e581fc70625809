# SPDX-License-Identifier: LGPL-2.1-or-later
"""MCP over stdio: one JSON-RPC message (or batch) a line on stdin, the answers a line each on
stdout (a batch's as one JSON array)."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import threading
from typing import Any

from ._protocol import Session, answers, is_request, read
from ._sandbox import McpSandbox

_LINE_LIMIT = 64 << 20


def _feed_from_file(loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader) -> None:
    while chunk := sys.stdin.buffer.read1(1 << 16):
        loop.call_soon_threadsafe(reader.feed_data, chunk)
    loop.call_soon_threadsafe(reader.feed_eof)


async def serve(mcp: McpSandbox) -> None:
    """Serve one client on stdin/stdout until stdin ends and the calls in flight have
    answered; SIGTERM or SIGINT cancels those calls (their processes killed) at once."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_LINE_LIMIT)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    except ValueError:  # a regular file, which the event loop cannot poll
        threading.Thread(target=_feed_from_file, args=(loop, reader), daemon=True).start()
    out = sys.stdout.buffer
    session = Session(mcp)
    tasks: set[asyncio.Task[Any]] = set()
    me = asyncio.current_task()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, me.cancel)  # type: ignore[union-attr]

    def send(reply: dict[str, Any] | list[Any] | None) -> None:
        if reply is not None:
            out.write(json.dumps(reply, separators=(",", ":")).encode() + b"\n")
            out.flush()

    async def answer(msg: dict[str, Any]) -> None:
        send(await session.handle(msg))

    async def answer_batch(slots: list[Any]) -> None:
        send(await answers(slots))

    def spawn(coro: Any) -> None:
        t = asyncio.create_task(coro)
        tasks.add(t)
        t.add_done_callback(tasks.discard)

    try:
        while True:
            try:
                line = await reader.readline()
            except ValueError:
                send({"jsonrpc": "2.0", "id": None,
                      "error": {"code": -32700, "message": "parse error: message too long"}})
                break
            if not line:
                break
            if not line.strip():
                continue
            msg, err = read(line)
            if isinstance(msg, list):
                # Started here, in the order of the lines: its notifications count at once.
                started = session.batch(msg)
                if isinstance(started, dict):
                    send(started)
                else:
                    spawn(answer_batch(started))
                continue
            if msg is None:
                send(err)
            elif is_request(msg) and msg["method"] == "initialize":
                # Answered before the next line is read: the version it settles decides
                # whether a batch that follows is taken.
                await answer(msg)
            elif is_request(msg):
                spawn(answer(msg))
            else:
                session.notify(msg)
    except asyncio.CancelledError:
        session.cancel_all()
    if tasks:
        await asyncio.gather(*tasks, return_exceptions=True)
