# SPDX-License-Identifier: LGPL-2.1-or-later
"""MCP over HTTP, on the standard library's asyncio streams: the Streamable HTTP transport
(POST /mcp answered with JSON or an SSE stream, Mcp-Session-Id, DELETE ends a session; GET
/mcp is 405, since this server never starts a message of its own) and the older HTTP+SSE
transport (GET /sse, POST /messages?sessionId=...). A POST body may be a batch (an array), for
the sessions whose protocol version has them.

Only what these transports need of HTTP/1.1 is parsed: a request line, headers and a body of
Content-Length bytes, each bounded in size and in time, and strictly framed (one
Content-Length of digits, header names that are tokens, no folded lines), so that a proxy in
front cannot read request boundaries differently. The token and the origin are checked as soon
as the headers are in, before any body is read. With a token, every request must carry
"Authorization: Bearer <token>" (401 otherwise); a browser page's request (an Origin header)
is refused unless its origin is a loopback name or the address the server is bound to, against
DNS rebinding, and so is any request a browser marks as coming from another site
(Sec-Fetch-Site), which it sends even where it sends no Origin.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import re
import secrets
import sys
import urllib.parse
from typing import Any

from ._protocol import VERSIONS, Session, answers, error, is_request, read, task_answer
from ._sandbox import McpSandbox

_MAX_BODY = 16 << 20
_MAX_HEADERS = 100
_MAX_HEAD = 64 << 10  # the request line and the headers together; also the reader's line limit
_MAX_SESSIONS = 1024
_MAX_CONNECTIONS = 256
_MAX_STREAMS = 64  # open GET /sse streams, each with its own session of the older transport
# Seconds: for a request line and its headers, for its body, and for the next request on a
# kept-alive connection. Past any, the connection closes, so a client that trickles bytes or
# sends nothing cannot hold one of the connections for long.
_HEAD_TIMEOUT = 10.0
_BODY_TIMEOUT = 30.0
_IDLE_TIMEOUT = 60.0
_REASONS = {200: "OK", 202: "Accepted", 400: "Bad Request", 401: "Unauthorized",
            403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
            406: "Not Acceptable", 408: "Request Timeout", 411: "Length Required",
            413: "Content Too Large", 415: "Unsupported Media Type",
            431: "Request Header Fields Too Large", 503: "Service Unavailable"}
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_LENGTH = re.compile(r"[0-9]{1,9}")
# What a browser serializes as an Origin: a scheme, a host and maybe a port, nothing else.
_ORIGIN = re.compile(r"(?:http|https)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::[0-9]{1,5})?")


class _Request:
    def __init__(self, method: str, target: str, headers: dict[str, str], body: bytes) -> None:
        self.method = method
        try:
            url = urllib.parse.urlsplit(target)
        except ValueError:  # an authority it cannot read, such as http://[::1/
            raise _HttpError(400, f"malformed request target {target[:64]!r}") from None
        self.path = url.path
        self.query = urllib.parse.parse_qs(url.query)
        self.headers = headers
        self.body = body


class _HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def _readline(reader: asyncio.StreamReader, what: str) -> bytes:
    try:
        return await reader.readline()
    except ValueError:  # a line past the reader's limit
        raise _HttpError(431, f"{what} over {_MAX_HEAD >> 10} KiB") from None


async def _read_request(reader: asyncio.StreamReader, first: bool = True) -> _Request | None:
    """The request line and headers of the next request (its body is read by _read_body once
    the request is allowed); None when the client closed or stayed idle past the timeout."""
    try:
        line = await asyncio.wait_for(_readline(reader, "request line"),
                                      _HEAD_TIMEOUT if first else _IDLE_TIMEOUT)
    except asyncio.TimeoutError:
        return None
    if not line:
        return None
    try:
        return await asyncio.wait_for(_read_headers(reader, line), _HEAD_TIMEOUT)
    except asyncio.TimeoutError:
        raise _HttpError(408, f"the headers took over {_HEAD_TIMEOUT:g} s") from None


async def _read_headers(reader: asyncio.StreamReader, line: bytes) -> _Request:
    try:
        method, target, _version = line.decode("latin-1").rstrip("\r\n").split(" ", 2)
    except ValueError:
        raise _HttpError(400, "malformed request line") from None
    headers: dict[str, str] = {}
    size = len(line)
    for _ in range(_MAX_HEADERS + 1):
        h = await _readline(reader, "header line")
        size += len(h)
        if size > _MAX_HEAD:
            raise _HttpError(431, f"headers over {_MAX_HEAD >> 10} KiB")
        if h in (b"\r\n", b"\n"):
            break
        if not h.endswith(b"\n"):
            raise _HttpError(400, "the headers end before their blank line")
        _header(headers, h.decode("latin-1").rstrip("\r\n"))
    else:
        raise _HttpError(400, "too many headers")
    if "transfer-encoding" in headers:
        raise _HttpError(411, "a body needs Content-Length")
    return _Request(method, target, headers, b"")


def _header(headers: dict[str, str], text: str) -> None:
    """Add one header line to @headers, refusing what framing could be read two ways."""
    if text[:1] in (" ", "\t"):
        raise _HttpError(400, "a folded header line (obs-fold) is not accepted")
    name, sep, value = text.partition(":")
    if not sep or not _TOKEN.fullmatch(name):
        raise _HttpError(400, f"malformed header name {name[:64]!r}")
    name, value = name.lower(), value.strip(" \t")
    if name == "content-length":
        if name in headers:
            raise _HttpError(400, "Content-Length given more than once")
        if not _LENGTH.fullmatch(value):
            raise _HttpError(400, f"bad Content-Length {value[:64]!r}: decimal digits only")
    headers[name] = value


async def _read_body(reader: asyncio.StreamReader, req: _Request) -> None:
    n = int(req.headers.get("content-length", "0"))
    if n > _MAX_BODY:
        raise _HttpError(413, f"a body is at most {_MAX_BODY} bytes")
    try:
        req.body = await asyncio.wait_for(reader.readexactly(n), _BODY_TIMEOUT)
    except asyncio.TimeoutError:
        raise _HttpError(408, f"the body took over {_BODY_TIMEOUT:g} s") from None


async def _linger(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Let an error answer reach a client that is still sending: a socket closed with unread
    bytes resets the connection, and the client may lose the answer. What is read is dropped,
    and both its size and the time are bounded."""
    try:
        await writer.drain()
        writer.write_eof()
        await asyncio.wait_for(_discard(reader, 1 << 20), 1.0)
    except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError):
        pass


async def _discard(reader: asyncio.StreamReader, limit: int) -> None:
    while limit > 0 and (chunk := await reader.read(min(limit, 1 << 16))):
        limit -= len(chunk)


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
        # The older transport's sessions, apart: each lives as long as its stream, and the
        # streams are bounded, so they never push a Streamable HTTP session out.
        self.legacy_sessions: dict[str, Session] = {}
        self.open = 0

    def keep(self, sid: str, session: Session) -> None:
        """Hold @session; past _MAX_SESSIONS the oldest ends (its client gets 404 and starts
        another, as the transport provides), so clients that never DELETE cannot pile up."""
        while len(self.sessions) >= _MAX_SESSIONS:
            old = self.sessions.pop(next(iter(self.sessions)))
            old.cancel_all()
        self.sessions[sid] = session

    async def connection(self, reader: asyncio.StreamReader,
                         writer: asyncio.StreamWriter) -> None:
        if self.open >= _MAX_CONNECTIONS:
            self.send(writer, 503, {"error": f"over {_MAX_CONNECTIONS} connections: retry "
                                             "later"}, close=True)
            await _linger(reader, writer)
            return
        self.open += 1
        try:
            first = True
            while True:
                try:
                    req = await _read_request(reader, first)
                    if req is None:
                        break
                    first = False
                    self._check(req)  # before the body, which an intruder must not make us hold
                    await _read_body(reader, req)
                    if not await self.route(req, writer):
                        break
                    if req.headers.get("connection", "").lower() == "close":
                        break
                except _HttpError as e:
                    extra = {"WWW-Authenticate": "Bearer"} if e.status == 401 else {}
                    self.send(writer, e.status, {"error": str(e)}, extra, close=True)
                    await _linger(reader, writer)
                    break
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            self.open -= 1
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
        site = req.headers.get("sec-fetch-site", "").lower()
        if site in ("cross-site", "same-site"):
            # A browser sends this on every request, no-cors ones (an <img src>) included,
            # which carry no Origin.
            raise _HttpError(403, f"a request from another site (Sec-Fetch-Site: {site}) "
                                  "is not allowed")
        origin = req.headers.get("origin")
        if origin is not None:
            # Not the Host header's name: under DNS rebinding, the page's origin and the Host
            # it sends are both the attacker's name.
            m = _ORIGIN.fullmatch(origin)
            host = m.group(1).strip("[]").lower() if m else ""
            if host not in ("localhost", "127.0.0.1", "::1", self.host):
                raise _HttpError(403, f"origin {origin} is not allowed")
        if req.method == "POST":
            ctype = req.headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if ctype != "application/json":
                # Else a page's form or "simple" fetch (text/plain, no preflight) would reach
                # the JSON parser.
                raise _HttpError(415, f"Content-Type {ctype or '(none)'} is not "
                                      "application/json")

    async def route(self, req: _Request, writer: asyncio.StreamWriter) -> bool:
        """Answer @req, which _check allowed; False when the connection must close after it."""
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
        value, err = read(req.body)
        msg = value if isinstance(value, dict) else None
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
                reply = task_answer(t)
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
        if len(self.legacy) >= _MAX_STREAMS:
            self.send(writer, 503, {"error": f"over {_MAX_STREAMS} open /sse streams: retry "
                                             "later"}, close=True)
            await writer.drain()
            return
        sid = secrets.token_urlsafe(24)
        q: asyncio.Queue[Any] = asyncio.Queue()
        self.legacy[sid] = q
        self.legacy_sessions[sid] = Session(self.mcp)
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
            s = self.legacy_sessions.pop(sid, None)
            if s is not None:
                s.cancel_all()

    async def legacy_post(self, req: _Request, writer: asyncio.StreamWriter) -> bool:
        sid = (req.query.get("sessionId") or [""])[0]
        q, session = self.legacy.get(sid), self.legacy_sessions.get(sid)
        if q is None or session is None:
            self.send(writer, 404, {"error": "no such session"})
            return True
        msg, err = read(req.body)
        if isinstance(msg, list):
            self._legacy_batch(session, q, msg)
            self.send(writer, 202)
            return True
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
    server = await asyncio.start_server(srv.connection, host, port, limit=_MAX_HEAD)
    bound = server.sockets[0].getsockname()
    shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
    path = "/sse" if sse else "/mcp"
    print(f"sandlock-mcp: listening on http://{shown}:{bound[1]}{path}", file=sys.stderr,
          flush=True)
    if token is None:
        print("sandlock-mcp: no bearer token: any local user can connect and run the tools; "
              "on a machine others use, give one (--token or SANDLOCK_MCP_TOKEN)",
              file=sys.stderr, flush=True)
    async with server:
        await server.serve_forever()
