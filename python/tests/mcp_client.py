# SPDX-License-Identifier: LGPL-2.1-or-later
"""A raw JSON-RPC client of sandlock-mcp over stdio, for the protocol tests."""

import json
import os
import queue
import subprocess
import threading

from conftest import PKG_PARENT, PY


class StdioClient:
    def __init__(self, workspace, *extra):
        env = dict(os.environ, PYTHONPATH=PKG_PARENT)
        self.proc = subprocess.Popen(
            [PY, "-m", "sandlock.mcp", "--workspace", str(workspace), *extra],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.lines = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))
        self.lines.put(None)

    def send_raw(self, data: bytes):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, msg):
        self.send_raw(json.dumps(msg).encode() + b"\n")

    def recv(self, timeout=20.0):
        return self.lines.get(timeout=timeout)

    def request(self, msg_id, method, params=None):
        msg = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.recv()

    def initialize(self, version="2025-06-18"):
        r = self.request(0, "initialize", {"protocolVersion": version, "capabilities": {},
                                           "clientInfo": {"name": "test", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return r

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        self.reader.join()


class HttpServer:
    """sandlock-mcp --transport http on 127.0.0.1 and a port of its choosing."""

    def __init__(self, workspace, *extra):
        env = dict(os.environ, PYTHONPATH=PKG_PARENT)
        self.proc = subprocess.Popen(
            [PY, "-m", "sandlock.mcp", "--workspace", str(workspace), "--transport", "http",
             "--host", "127.0.0.1", "--port", "0", *extra],
            stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
        line = self.proc.stderr.readline()
        prefix = "sandlock-mcp: listening on "
        if not line.startswith(prefix):
            self.close()
            raise RuntimeError(f"sandlock-mcp did not start: {line!r}")
        self.url = line[len(prefix):].strip()
        self.base = self.url.rsplit("/", 1)[0]

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=20)
        self.proc.stderr.close()
