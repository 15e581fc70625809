#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Fuzz target: MCP over HTTP on arbitrary bytes of one connection: _read_request() on its own,
then the server's connection handler (routing, the bearer token, Origin, sessions, both
transports) answering them.

The contract: _read_request() and _read_body() give a request, None at the end, or _HttpError
with a 4xx status it has a reason for (asyncio.IncompleteReadError for a body cut short); the
handler never lets an exception out and writes only well-formed HTTP/1.1 responses: a status
line, the headers, a JSON body of Content-Length bytes or an SSE stream of JSON events. Session ids are
made "FUZZSID", so that an input can initialize a session and then use it; and an older
transport's session "LEGACY" is open, whose event stream must carry JSON-RPC responses only."""

from __future__ import annotations

import asyncio
import json
import re
import sys
import types
from typing import Any

import fuzzlib
import mcpfake
from sandlock.mcp import _http as H

NAME = "mcp_http"
TOKEN = "T0K"
TOKENS = [b"POST ", b"GET ", b"DELETE ", b"PUT ", b" HTTP/1.1\r\n", b"/mcp", b"/sse",
          b"/messages?sessionId=LEGACY", b"Content-Length: ", b"Transfer-Encoding: chunked",
          b"Authorization: Bearer T0K\r\n", b"Origin: http://localhost\r\n",
          b"Origin: http://evil.example\r\n", b"Accept: text/event-stream\r\n",
          b"Mcp-Session-Id: FUZZSID\r\n", b"Mcp-Protocol-Version: 2025-06-18\r\n",
          b"Content-Type: application/json\r\n", b"\r\n\r\n", b"?", b"&", b"%00", b"[",
          b'{"jsonrpc":"2.0","id":1,"method":"ping"}']

_READER_ERRORS = (asyncio.IncompleteReadError,)
_DIGITS = re.compile(r"[0-9]+")  # RFC 9112: Content-Length = 1*DIGIT
_loop = asyncio.new_event_loop()
_mcp = mcpfake.make_mcp(_loop, ("echo", "fail"))
# A fixed session id, so that a corpus entry can name the session it initialized (only while
# a run goes: the tests of the real server share the process).
_SECRETS = types.SimpleNamespace(token_urlsafe=lambda n: "FUZZSID")


def _reader(data: bytes) -> asyncio.StreamReader:
    r = asyncio.StreamReader(limit=1 << 16, loop=_loop)  # serve()'s limit
    r.feed_data(data)
    r.feed_eof()
    return r


async def _requests(data: bytes) -> tuple[Any, ...]:
    reader, seen = _reader(data), []
    while True:
        try:
            req = await H._read_request(reader, H._IDLE_TIMEOUT if seen else H._HEAD_TIMEOUT)
            if req is not None:
                await H._read_body(reader, req)
        except H._HttpError as e:
            assert 400 <= e.status < 500 and e.status in H._REASONS, e.status
            return (*seen, ("http", e.status))
        except _READER_ERRORS as e:
            return (*seen, (type(e).__name__,))
        if req is None:
            return (*seen, ("end",))
        assert isinstance(req.method, str) and isinstance(req.path, str), req
        assert all(k == k.strip().lower() for k in req.headers), req.headers
        length = req.headers.get("content-length", "0")
        assert _DIGITS.fullmatch(length), f"Content-Length {length!r} is not digits"
        assert len(req.body) == int(length), req.headers
        seen.append(("req", req.method[:8], req.path[:16]))


class _Writer:
    def __init__(self) -> None:
        self.out, self.closed = bytearray(), False

    def write(self, b: bytes) -> None:
        assert not self.closed, "a write after close"
        self.out += b

    async def drain(self) -> None:
        # The client of an older-transport event stream goes away once it has its endpoint
        # (its posts would come on other connections).
        if b"event: endpoint" in self.out:
            raise ConnectionResetError("the fuzz client is gone")

    def write_eof(self) -> None:
        pass

    def get_extra_info(self, name: str) -> Any:
        return ("127.0.0.1", 40000) if name == "peername" else None

    def close(self) -> None:
        self.closed = True


_STATUS = re.compile(rb"HTTP/1\.1 (\d{3}) ([^\r\n]*)\r\n")


def _check_sse(stream: bytes) -> None:
    for event in stream.split(b"\n\n")[:-1]:
        if event.startswith(b":"):
            continue
        kind, data = event.split(b"\n")
        assert kind in (b"event: message", b"event: endpoint"), event
        if kind == b"event: message":
            json.loads(data[len(b"data: "):])


def _responses(out: bytes) -> tuple[int, ...]:
    statuses, rest = [], out
    while rest:
        m = _STATUS.match(rest)
        assert m, f"not a status line: {rest[:80]!r}"
        status = int(m.group(1))
        assert status in H._REASONS and m.group(2).decode() == H._REASONS[status], m.group(0)
        head, sep, rest = rest[m.end():].partition(b"\r\n\r\n")
        assert sep, f"headers without an end: {head[:80]!r}"
        headers = dict(h.split(": ", 1) for h in head.decode("latin-1").split("\r\n") if h)
        statuses.append(status)
        if headers.get("Content-Type") == "text/event-stream":
            _check_sse(rest)
            break
        n = int(headers["Content-Length"])
        body, rest = rest[:n], rest[n:]
        assert len(body) == n, "a body shorter than its Content-Length"
        if n:
            json.loads(body)
        if headers.get("Connection") == "close":
            assert not rest, "bytes after a response that closes the connection"
    return tuple(statuses)


async def _connection(data: bytes) -> tuple[int, ...]:
    server = H._Server(_mcp, "127.0.0.1", TOKEN)
    server.port = 80  # so that the Origin of the tokens, on no port, is the server's own
    stream: asyncio.Queue[Any] = asyncio.Queue()
    server.legacy["LEGACY"] = stream  # what GET /sse on another connection would have made
    server.legacy_sessions["LEGACY"] = H.Session(_mcp)
    reader = _reader(data)
    writer = _Writer()
    await server.connection(reader, writer)
    assert writer.closed, "the handler left the connection open"
    for _ in range(16):  # the answers to POST /messages come from tasks of their own
        await asyncio.sleep(0)
    while not stream.empty():
        event = stream.get_nowait()
        json.dumps(event, allow_nan=False)
        assert event["jsonrpc"] == "2.0" and ("result" in event) != ("error" in event), event
    return _responses(bytes(writer.out))


def fuzz(data: bytes) -> Any:
    real, H.secrets = H.secrets, _SECRETS
    try:
        parsed = _loop.run_until_complete(_requests(data))
        answered = _loop.run_until_complete(_connection(data))
    finally:
        mcpfake.settle(_loop)
        H.secrets = real
    return parsed[:4], answered[:4]


if __name__ == "__main__":
    sys.exit(fuzzlib.main(NAME, fuzz, TOKENS))
