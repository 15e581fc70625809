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
"Authorization: Bearer <token>" (401 otherwise); without one, its Host must name a loopback
address or the one the server is bound to, against DNS rebinding. A browser page's request (an
Origin header) is refused unless its origin is a loopback name or the bound address with the
bound port, and so is any request a browser marks as coming from another site
(Sec-Fetch-Site), which it sends even where it sends no Origin.

A connection counts against the connection cap only once its first request has passed these
checks; until then it is one of a bounded set of pending connections, in all and per peer
address, in which a new connection closes the oldest (unless that one has just been made: then
the newcomer is refused), so that idle connections which never show a token close their own
kind first.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
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
_MAX_CONNECTIONS = 256  # connections whose first request passed the checks
# Connections whose first request has not passed them yet, in all and from one peer address.
_MAX_PENDING = 128
_MAX_PENDING_PER_PEER = 16
# Seconds a pending connection is safe from a newer one: the asyncio loop takes in up to a
# hundred connections before it reads any, so without it a burst right after a client's
# connection would close that client's before its request is read. Past the bounds with
# every candidate this young, the newcomer is the one refused.
_MIN_PENDING_AGE = 0.25
_MAX_STREAMS = 64  # open GET /sse streams, each with its own session of the older transport
# Seconds: for a connection's first request line and its headers together, for a body, and
# from an answer to the next request's line and headers on a kept-alive connection. Past any,
# the connection closes, so a client that trickles bytes or sends nothing cannot hold one of
# the connections for long.
_HEAD_TIMEOUT = 5.0
_BODY_TIMEOUT = 30.0
_IDLE_TIMEOUT = 60.0
_REASONS = {200: "OK", 202: "Accepted", 400: "Bad Request", 401: "Unauthorized",
            403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
            406: "Not Acceptable", 408: "Request Timeout", 411: "Length Required",
            413: "Content Too Large", 415: "Unsupported Media Type",
            431: "Request Header Fields Too Large", 503: "Service Unavailable"}
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_LENGTH = re.compile(r"[0-9]{1,9}")
# A host and maybe a port, as in a Host header; an Origin is a scheme and that, nothing else.
_AUTHORITY = r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::([0-9]{1,5}))?"
_HOST = re.compile(_AUTHORITY)
_ORIGIN = re.compile(r"(http|https)://" + _AUTHORITY)
_DEFAULT_PORTS = {"http": 80, "https": 443}
_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


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


async def _read_request(reader: asyncio.StreamReader, limit: float,
                        deadline: float | None = None) -> _Request | None:
    """The request line and headers of the next request, both within @limit seconds, or by
    @deadline (the loop's clock) for a limit that began before the call (its body is read by
    _read_body once the request is allowed); None when the client closed, or sent no whole
    request line in that time."""
    seconds = limit if deadline is None else deadline - asyncio.get_running_loop().time()
    lines: list[bytes] = []
    try:
        return await asyncio.wait_for(_read_head(reader, lines), max(seconds, 0.0))
    except asyncio.TimeoutError:
        if not lines:
            return None
        raise _HttpError(408, f"the request line and headers took over {limit:g} s") from None


async def _read_head(reader: asyncio.StreamReader, lines: list[bytes]) -> _Request | None:
    line = await _readline(reader, "request line")
    if not line:
        return None
    lines.append(line)
    return await _read_headers(reader, line)


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


def _stream_head(sid: str | None) -> bytes:
    """An SSE stream's head; the older transport's (@sid None) names no session in it."""
    headers = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    if sid is not None:
        headers["Mcp-Session-Id"] = sid
    return _head(200, {**headers, "Connection": "close"})


def _name(host: str) -> str:
    """@host (a name, an IPv4 address or a bracketed IPv6 one) as it compares: an address in
    its one canonical spelling, a name in lower case."""
    host = host.strip("[]")
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host.lower()


def _peer(writer: Any) -> str:
    """The address a connection counts against: its peer's, or for IPv6 the /64 the peer's is
    in, since one host commonly holds a whole /64 of addresses to connect from."""
    name = writer.get_extra_info("peername")
    host = name[0] if isinstance(name, tuple) and name else str(name)
    try:
        addr = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            return str(addr.ipv4_mapped)
        return str(ipaddress.ip_network((addr, 64), strict=False))
    return str(addr)


class _Conn:
    """One client connection, as the connection bounds see it."""

    __slots__ = ("peer", "writer", "task", "born", "deadline", "admitted", "answered")

    def __init__(self, writer: asyncio.StreamWriter, born: float) -> None:
        self.peer = _peer(writer)
        self.writer = writer
        self.task = asyncio.current_task()
        self.born = born  # when it was taken in, the loop's clock
        self.deadline = born + _HEAD_TIMEOUT  # for its first request's line and headers
        self.admitted = False  # its first request passed the checks
        self.answered = False  # an answer went out (a refusal), so none other may follow


class _Pending:
    """The connections whose first request has not passed the checks yet, oldest first: all
    of them, and by peer address."""

    def __init__(self) -> None:
        self.all: dict[_Conn, None] = {}
        self.by_peer: dict[str, dict[_Conn, None]] = {}

    def __len__(self) -> int:
        return len(self.all)

    def add(self, conn: _Conn) -> list[tuple[_Conn, str]]:
        """Hold @conn. Returns the connections that must close to make room for it, each with
        why, and holds them no more: its peer's oldest past _MAX_PENDING_PER_PEER, so that a
        peer's idle connections end its own first, and the oldest of all past _MAX_PENDING;
        or @conn itself, not held, when the one to close is under _MIN_PENDING_AGE old."""
        out = []
        for group, bound, why in ((self.by_peer.get(conn.peer, {}), _MAX_PENDING_PER_PEER,
                                   f"over {_MAX_PENDING_PER_PEER} connections from "
                                   f"{conn.peer}"),
                                  (self.all, _MAX_PENDING, f"over {_MAX_PENDING} connections")):
            if len(group) < bound:
                continue
            oldest = next(iter(group))
            if conn.born - oldest.born < _MIN_PENDING_AGE:
                return [*out, (conn, why)]
            self.remove(oldest)
            out.append((oldest, why))
        self.by_peer.setdefault(conn.peer, {})[conn] = None
        self.all[conn] = None
        return out

    def remove(self, conn: _Conn) -> None:
        self.all.pop(conn, None)
        mine = self.by_peer.get(conn.peer)
        if mine is not None:
            mine.pop(conn, None)
            if not mine:
                del self.by_peer[conn.peer]


class _Server:
    def __init__(self, mcp: McpSandbox, host: str, token: str | None) -> None:
        self.mcp = mcp
        self.host = host
        self.token = token
        # The names a tokenless server answers to (Host), and a page's origin may have.
        self.names = dict.fromkeys(_name(n) for n in (*_LOOPBACK_NAMES, host))
        self.port: int | None = None  # the bound port, once bound; an Origin must have it
        self.sessions: dict[str, Session] = {}
        self.legacy: dict[str, asyncio.Queue[Any]] = {}
        # The older transport's sessions, apart: each lives as long as its stream, and the
        # streams are bounded, so they never push a Streamable HTTP session out.
        self.legacy_sessions: dict[str, Session] = {}
        self.open = 0  # admitted connections, against _MAX_CONNECTIONS
        self.pending = _Pending()
        self.tasks: set[asyncio.Task[None]] = set()  # every connection's, for stop()

    def keep(self, sid: str, session: Session) -> None:
        """Hold @session; past _MAX_SESSIONS the oldest ends (its client gets 404 and starts
        another, as the transport provides), so clients that never DELETE cannot pile up."""
        while len(self.sessions) >= _MAX_SESSIONS:
            old = self.sessions.pop(next(iter(self.sessions)))
            old.cancel_all()
        self.sessions[sid] = session

    async def connection(self, reader: asyncio.StreamReader,
                         writer: asyncio.StreamWriter) -> None:
        conn = _Conn(writer, asyncio.get_running_loop().time())
        if conn.task is not None:
            self.tasks.add(conn.task)
        refused = None
        for old, why in self.pending.add(conn):
            if old is conn:
                refused = why
            else:
                self._close_pending(old, why)
        try:
            if refused is not None:
                self.send(writer, 503, {"error": f"{refused} without an accepted request yet, "
                                                 f"each under {_MIN_PENDING_AGE:g} s old: retry "
                                                 "later"}, close=True)
                await _linger(reader, writer)
            else:
                await self._serve(conn, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            self.tasks.discard(conn.task)  # type: ignore[arg-type]
            self.pending.remove(conn)
            if conn.admitted:
                self.open -= 1
            writer.close()

    async def _serve(self, conn: _Conn, reader: asyncio.StreamReader,
                     writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                if conn.admitted:
                    req = await _read_request(reader, _IDLE_TIMEOUT)
                else:
                    req = await _read_request(reader, _HEAD_TIMEOUT, conn.deadline)
                if req is None or conn.answered:
                    # Answered: closed for a newer connection, a cancel that a read which
                    # finished at the same moment kept from this task (wait_for before 3.12).
                    return
                self._check(req)  # before the body, which an intruder must not make us hold
                if not conn.admitted:
                    self._admit(conn)
                await _read_body(reader, req)
                if not await self.route(req, writer):
                    return
                if req.headers.get("connection", "").lower() == "close":
                    return
            except _HttpError as e:
                if conn.answered:  # closed for a newer connection as the read failed
                    return
                conn.answered = True
                extra = {"WWW-Authenticate": "Bearer"} if e.status == 401 else {}
                self.send(writer, e.status, {"error": str(e)}, extra, close=True)
                await _linger(reader, writer)
                return
            await writer.drain()

    def _admit(self, conn: _Conn) -> None:
        """Count @conn, whose first request passed the checks, against _MAX_CONNECTIONS."""
        if self.open >= _MAX_CONNECTIONS:
            raise _HttpError(503, f"over {_MAX_CONNECTIONS} connections: retry later")
        self.pending.remove(conn)
        conn.admitted = True
        self.open += 1

    def _close_pending(self, conn: _Conn, why: str) -> None:
        """End @conn, the oldest of the pending ones, to make room for a newer one."""
        if not conn.answered:
            conn.answered = True
            self.send(conn.writer, 503, {"error": f"closed for a newer connection: {why} "
                                                  "without an accepted request yet; send the "
                                                  "request as soon as connected"}, close=True)
        if conn.task is not None:
            conn.task.cancel()  # its handler closes the connection

    async def stop(self) -> None:
        """End every connection, the calls they wait for with them: a server's wait_closed()
        waits for its connections (Python 3.12.1 on), which an idle or streaming client keeps
        open as long as it likes."""
        tasks = [t for t in self.tasks if t is not asyncio.current_task()]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

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
        else:
            self._check_host(req)
        site = req.headers.get("sec-fetch-site", "").lower()
        if site in ("cross-site", "same-site"):
            # A browser sends this on every request, no-cors ones (an <img src>) included,
            # which carry no Origin.
            raise _HttpError(403, f"a request from another site (Sec-Fetch-Site: {site}) "
                                  "is not allowed")
        origin = req.headers.get("origin")
        if origin is not None and not self._own_origin(origin):
            raise _HttpError(403, f"origin {origin[:64]} is not allowed: only a loopback name "
                                  f"or {self.host}, with port {self.port}")
        if req.method == "POST":
            ctype = req.headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if ctype != "application/json":
                # Else a page's form or "simple" fetch (text/plain, no preflight) would reach
                # the JSON parser.
                raise _HttpError(415, f"Content-Type {ctype or '(none)'} is not "
                                      "application/json")

    def _check_host(self, req: _Request) -> None:
        """Without a token, only requests for one of this server's names are served: a page
        that DNS rebinding points at 127.0.0.1 sends its own name as Host, and its same-origin
        GET carries no Origin and, from a plain-http name, no Sec-Fetch-Site."""
        host = req.headers.get("host")
        if host is None:
            raise _HttpError(400, "a request needs a Host header")
        m = _HOST.fullmatch(host)
        if m is None or _name(m.group(1)) not in self.names:
            names = ", ".join(f"[{n}]" if ":" in n else n for n in self.names)
            raise _HttpError(403, f"Host {host[:64]} is not this server's name: without a "
                                  f"bearer token only {names} (any port) are served; use one "
                                  "of them, or give the server a token")

    def _own_origin(self, origin: str) -> bool:
        """Whether @origin is a page of this server's own address: a loopback name or the
        bound address, and the bound port (a page on another port is someone else's)."""
        m = _ORIGIN.fullmatch(origin)
        if m is None:
            return False
        scheme, host, port = m.groups()
        return _name(host) in self.names and \
            (int(port) if port else _DEFAULT_PORTS[scheme]) == self.port

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
        writer.write(_stream_head(None))
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
    srv.port = bound[1]
    shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
    path = "/sse" if sse else "/mcp"
    print(f"sandlock-mcp: listening on http://{shown}:{bound[1]}{path}", file=sys.stderr,
          flush=True)
    if token is None:
        print("sandlock-mcp: no bearer token: any local user can connect and run the tools; "
              "on a machine others use, give one (--token or SANDLOCK_MCP_TOKEN)",
              file=sys.stderr, flush=True)
    async with server:
        try:
            await asyncio.Future()  # until cancelled (SIGTERM, Ctrl-C)
        finally:
            server.close()
            await srv.stop()
