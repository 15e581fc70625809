# SPDX-License-Identifier: LGPL-2.1-or-later
"""MCP over HTTP, on the standard library's asyncio streams: the Streamable HTTP transport
(POST /mcp answered with JSON or an SSE stream, Mcp-Session-Id, DELETE ends a session; GET
/mcp is 405, since this server never starts a message of its own) and the older HTTP+SSE
transport (GET /sse, POST /messages?sessionId=...). A POST body may be a batch (an array), for
the sessions whose protocol version has them.

Only what these transports need of HTTP/1.1 is parsed: a request line, headers and a body of
Content-Length bytes, each bounded. With a token, every request must carry
"Authorization: Bearer <token>" (401 otherwise); a browser page's request (an Origin header)
is refused unless its origin is a loopback name or the address the server is bound to, against
DNS rebinding.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import secrets
import sys
import urllib.parse
from typing import Any

from ._protocol import VERSIONS, Session, answers, check, error, is_request, load
from ._sandbox import McpSandbox

_MAX_BODY = 16 << 20
_MAX_HEADERS = 100
_MAX_SESSIONS = 1024
_REASONS = {200: "OK", 202: "Accepted", 400: "Bad Request", 401: "Unauthorized",
            403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
            406: "Not Acceptable", 411: "Length Required", 413: "Content Too Large",
            415: "Unsupported Media Type"}


class _Request:
    def __init__(self, method: str, target: str, headers: dict[str, str], body: bytes) -> None:
        self.method = method
        url = urllib.parse.urlsplit(target)
        self.path = url.path
        self.query = urllib.parse.parse_qs(url.query)
        self.headers = headers
        self.body = body


class _HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def _read_request(reader: asyncio.StreamReader) -> _Request | None:
    line = await reader.readline()
    if not line:
        return None
    try:
        method, target, _version = line.decode("latin-1").rstrip("\r\n").split(" ", 2)
    except ValueError:
        raise _HttpError(400, "malformed request line") from None
    headers: dict[str, str] = {}
    for _ in range(_MAX_HEADERS + 1):
        h = await reader.readline()
        if h in (b"\r\n", b"\n", b""):
            break
        name, sep, value = h.decode("latin-1").partition(":")
        if not sep:
            raise _HttpError(400, "malformed header")
        headers[name.strip().lower()] = value.strip()
    else:
        raise _HttpError(400, "too many headers")
    if "transfer-encoding" in headers:
        raise _HttpError(411, "a body needs Content-Length")
    try:
        n = int(headers.get("content-length", "0"))
    except ValueError:
        raise _HttpError(400, "bad Content-Length") from None
    if n < 0 or n > _MAX_BODY:
        raise _HttpError(413, f"a body is at most {_MAX_BODY} bytes")
    return _Request(method, target, headers, await reader.readexactly(n))


def _head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _sse(event: str, data: str) -> bytes:
    return f"event: {event}\ndata: {data}\n\n".encode()


def _stream_head(sid: str) -> bytes:
    return _head(200, {"Content-Type": "text/event-stream", "Cache-Control": "no-cache",
                       "Mcp-Session-Id": sid, "Connection": "close"})


class _Server:
    def __init__(self, mcp: McpSandbox, host: str, token: str | None) -> None:
        self.mcp = mcp
        self.host = host
        self.token = token
        self.sessions: dict[str, Session] = {}
        self.legacy: dict[str, asyncio.Queue[Any]] = {}

    def keep(self, sid: str, session: Session) -> None:
        """Hold @session; past _MAX_SESSIONS the oldest ends (its client gets 404 and starts
        another, as the transport provides), so clients that never DELETE cannot pile up."""
        while len(self.sessions) >= _MAX_SESSIONS:
            old = self.sessions.pop(next(iter(self.sessions)))
            old.cancel_all()
        self.sessions[sid] = session

    async def connection(self, reader: asyncio.StreamReader,
                         writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    req = await _read_request(reader)
                    if req is None:
                        break
                    if not await self.route(req, writer):
                        break
                except _HttpError as e:
                    self.send(writer, e.status, {"error": str(e)}, close=True)
                    break
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    def send(self, writer: asyncio.StreamWriter, status: int, body: Any = None,
             headers: dict[str, str] | None = None, close: bool = False) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        h = dict(headers or {})
        if body is not None:
            h["Content-Type"] = "application/json"
        h["Content-Length"] = str(len(data))
        if close:
            h["Connection"] = "close"
        writer.write(_head(status, h) + data)

    def _check(self, req: _Request) -> None:
        if self.token is not None:
            got = req.headers.get("authorization", "")
            if not hmac.compare_digest(got.encode(), f"Bearer {self.token}".encode()):
                raise _HttpError(401, "unauthorized: a bearer token is required")
        origin = req.headers.get("origin")
        if origin is not None:
            # Not the Host header's name: under DNS rebinding, the page's origin and the Host
            # it sends are both the attacker's name.
            host = urllib.parse.urlsplit(origin).hostname or ""
            if host not in ("localhost", "127.0.0.1", "::1", self.host):
                raise _HttpError(403, f"origin {origin} is not allowed")

    async def route(self, req: _Request, writer: asyncio.StreamWriter) -> bool:
        """Answer @req; False when the connection must close after it."""
        try:
            self._check(req)
        except _HttpError as e:
            extra = {"WWW-Authenticate": "Bearer"} if e.status == 401 else {}
            self.send(writer, e.status, {"error": str(e)}, extra)
            return True
        if req.path == "/mcp":
            if req.method == "POST":
                return await self.post(req, writer)
            if req.method == "DELETE":
                return self.delete(req, writer)
            self.send(writer, 405, {"error": "use POST or DELETE"}, {"Allow": "POST, DELETE"})
            return True
        if req.path == "/sse" and req.method == "GET":
            await self.legacy_stream(writer)
            return False
        if req.path == "/messages" and req.method == "POST":
            return await self.legacy_post(req, writer)
        self.send(writer, 404, {"error": f"no {req.method} {req.path} here"})
        return True

    async def post(self, req: _Request, writer: asyncio.StreamWriter) -> bool:
        value, err = load(req.body)
        msg, batch = None, err is None and isinstance(value, list)
        if err is None and not batch:
            msg, err = check(value)
        if err is not None:
            self.send(writer, 400, err)
            return True
        sid = req.headers.get("mcp-session-id")
        new = msg is not None and msg.get("method") == "initialize" and is_request(msg)
        if new:
            session, sid = Session(self.mcp), secrets.token_urlsafe(24)
        else:
            version = req.headers.get("mcp-protocol-version")
            if version is not None and version not in VERSIONS:
                self.send(writer, 400, error(None, -32600, f"unsupported protocol version "
                                                           f"{version}"))
                return True
            if sid is None:
                self.send(writer, 400, error(None, -32600, "Mcp-Session-Id is required"))
                return True
            session = self.sessions.get(sid)
            if session is None:
                self.send(writer, 404, error(None, -32001, "no such session"))
                return True
        if msg is None:
            return await self._post_batch(req, writer, session, sid, value)
        if not is_request(msg):
            await session.handle(msg)
            self.send(writer, 202)
            return True
        task = asyncio.create_task(session.handle(msg))
        if "text/event-stream" in req.headers.get("accept", ""):
            return await self._stream_reply(writer, task, sid, session if new else None)
        reply = await task
        if new and reply is not None and "result" in reply:
            self.keep(sid, session)
        self.send(writer, 200 if reply is not None else 202, reply, {"Mcp-Session-Id": sid})
        return True

    async def _post_batch(self, req: _Request, writer: asyncio.StreamWriter, session: Session,
                          sid: str, items: list[Any]) -> bool:
        """A batch: 202 when it holds only notifications and responses, else its answers as
        one JSON array or, when the client takes one, an SSE stream of an event each."""
        started = session.batch(items)
        if isinstance(started, dict):
            self.send(writer, 400, started)  # refused as a whole
            return True
        if not started:
            self.send(writer, 202)
            return True
        if "text/event-stream" in req.headers.get("accept", "") and \
                any(isinstance(s, asyncio.Task) for s in started):
            return await self._stream_batch(writer, started, sid)
        replies = await answers(started)
        self.send(writer, 200 if replies else 202, replies, {"Mcp-Session-Id": sid})
        return True

    async def _stream_batch(self, writer: asyncio.StreamWriter, slots: list[Any],
                            sid: str) -> bool:
        """A batch's answers as an SSE stream, an event each as it is ready (none for a
        cancelled request), the connection closed after the last."""
        writer.write(_stream_head(sid))
        for err in (s for s in slots if isinstance(s, dict)):
            writer.write(_sse("message", json.dumps(err)))
        await writer.drain()
        pending = {s for s in slots if isinstance(s, asyncio.Task)}
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for t in done:
                reply = None if t.cancelled() else t.result()
                if reply is not None:
                    writer.write(_sse("message", json.dumps(reply)))
            await writer.drain()
        return False

    async def _stream_reply(self, writer: asyncio.StreamWriter, task: asyncio.Task[Any],
                            sid: str, new: Session | None) -> bool:
        """The answer to one request as an SSE stream of one event (none when the request
        was cancelled), the connection closed after it. @new: the session it initializes."""
        writer.write(_stream_head(sid))
        await writer.drain()
        reply = await task
        if new is not None and reply is not None and "result" in reply:
            self.keep(sid, new)
        if reply is not None:
            writer.write(_sse("message", json.dumps(reply)))
        await writer.drain()
        return False

    def delete(self, req: _Request, writer: asyncio.StreamWriter) -> bool:
        sid = req.headers.get("mcp-session-id")
        session = self.sessions.pop(sid, None) if sid is not None else None
        if session is None:
            self.send(writer, 404 if sid else 400, {"error": "no such session"})
            return True
        session.cancel_all()
        self.send(writer, 200)
        return True

    async def legacy_stream(self, writer: asyncio.StreamWriter) -> None:
        """The older transport's event stream: its first event names where to POST."""
        sid = secrets.token_urlsafe(24)
        q: asyncio.Queue[Any] = asyncio.Queue()
        self.legacy[sid] = q
        self.keep(sid, Session(self.mcp))
        writer.write(_head(200, {"Content-Type": "text/event-stream",
                                 "Cache-Control": "no-cache", "Connection": "close"}))
        writer.write(_sse("endpoint", f"/messages?sessionId={sid}"))
        try:
            await writer.drain()
            while True:
                try:
                    reply = await asyncio.wait_for(q.get(), 15)
                except asyncio.TimeoutError:
                    writer.write(b": keep-alive\n\n")  # a comment: finds a closed client
                else:
                    writer.write(_sse("message", json.dumps(reply)))
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            self.legacy.pop(sid, None)
            s = self.sessions.pop(sid, None)
            if s is not None:
                s.cancel_all()

    async def legacy_post(self, req: _Request, writer: asyncio.StreamWriter) -> bool:
        sid = (req.query.get("sessionId") or [""])[0]
        q, session = self.legacy.get(sid), self.sessions.get(sid)
        if q is None or session is None:
            self.send(writer, 404, {"error": "no such session"})
            return True
        value, err = load(req.body)
        if err is None and isinstance(value, list):
            self._legacy_batch(session, q, value)
            self.send(writer, 202)
            return True
        msg, err = (None, err) if err is not None else check(value)
        if msg is None:
            q.put_nowait(err)
        elif is_request(msg):
            async def answer(m: dict[str, Any]) -> None:
                reply = await session.handle(m)
                if reply is not None:
                    q.put_nowait(reply)
            asyncio.create_task(answer(msg))
        else:
            await session.handle(msg)
        self.send(writer, 202)
        return True

    @staticmethod
    def _legacy_batch(session: Session, q: asyncio.Queue[Any], items: list[Any]) -> None:
        """A batch on the older transport: its answers as one event of the session's stream."""
        started = session.batch(items)
        if isinstance(started, dict):
            q.put_nowait(started)
            return

        async def answer(slots: list[Any]) -> None:
            replies = await answers(slots)
            if replies is not None:
                q.put_nowait(replies)
        asyncio.create_task(answer(started))


async def serve(mcp: McpSandbox, host: str, port: int, token: str | None, *, sse: bool) -> None:
    """Serve until cancelled. Both transports answer on every server; --transport sse names
    the endpoint printed."""
    srv = _Server(mcp, host, token)
    server = await asyncio.start_server(srv.connection, host, port, limit=1 << 16)
    bound = server.sockets[0].getsockname()
    shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
    path = "/sse" if sse else "/mcp"
    print(f"sandlock-mcp: listening on http://{shown}:{bound[1]}{path}", file=sys.stderr,
          flush=True)
    async with server:
        await server.serve_forever()
