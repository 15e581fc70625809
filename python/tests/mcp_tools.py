# SPDX-License-Identifier: LGPL-2.1-or-later
"""Tools the MCP tests register: top-level functions of an importable module."""

import json
import os
import socket
import time


def where(*, workspace: str) -> str:
    return workspace


def environment() -> str:
    return json.dumps(dict(os.environ))


def write(path: str, *, workspace: str) -> str:
    with open(os.path.join(workspace, path), "w") as f:
        f.write("written")
    return "wrote"


def connect(port: int) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        return s.recv(16).decode()


def hang(seconds: float = 60.0) -> str:
    time.sleep(seconds)
    return "woke"


def add(a: int, b: int = 2) -> int:
    return a + b


def fail(message: str) -> str:
    raise RuntimeError(message)


class Holder:
    def method(self) -> str:
        return "no"


def mark(workspace: str, **args) -> str:
    """Record that a worker ran, with its arguments."""
    with open(os.path.join(workspace, "called.json"), "w") as f:
        json.dump(args, f)
    return "ran"


def mark_count(count: int, label: str = "", *, workspace: str) -> str:
    with open(os.path.join(workspace, "called.json"), "w") as f:
        json.dump({"count": count, "label": label}, f)
    return "ran"
