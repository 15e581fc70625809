# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Sandbox fields and the schema's JSON document.

Every policy field of the profile schema maps to one (section, key) of the document the core
loads (sandlock_policy_load_json), so the core's validator is the only one: this module only
changes Python shapes into document shapes (a dict of mounts into "VIRTUAL:HOST" strings, an
enum into its value, an aware datetime into RFC 3339) and back.
"""

from __future__ import annotations

import datetime as _dt
import enum
from typing import Any, Callable

from .exceptions import PolicyError


class BranchAction(enum.Enum):
    """What happens to the COW branch when the sandbox ends."""

    COMMIT = "commit"  # merge the branch's writes into the workdir
    ABORT = "abort"  # discard them
    KEEP = "keep"  # leave the branch on disk for recovery tooling
    DEFER = "defer"  # hold the branch for commit() / abort()


class Protection(enum.IntEnum):
    """A Landlock protection, for ``allow_degraded`` and ``disable``. Wherever one is taken, its
    name as the CLI and profiles spell it ("fs-refer", ...) is taken too, and so is the bare
    number; ``Protection("fs-refer")`` is ``Protection.FS_REFER``."""

    FS_REFER = 0  # ABI 2
    FS_TRUNCATE = 1  # ABI 3
    NET_TCP = 2  # ABI 4
    FS_IOCTL_DEV = 3  # ABI 5
    SIGNAL_SCOPE = 4  # ABI 6
    ABSTRACT_UNIX_SOCKET_SCOPE = 5  # ABI 6

    @property
    def label(self) -> str:
        """The name the CLI, profiles and the policy document use ("fs-refer")."""
        return self.name.lower().replace("_", "-")

    @classmethod
    def _missing_(cls, value: object) -> "Protection | None":
        if isinstance(value, str):
            for p in cls:
                if p.label == value:
                    return p
        return None


def _same(v: Any) -> Any:
    return v


def _list(v: Any) -> Any:
    """A sequence as a list; a lone string stays one (the core refuses it where a list belongs)."""
    if isinstance(v, (str, bytes)):
        return v  # the core refuses a string where a list belongs, naming the field
    return list(v)


def _scalar_or_str(v: Any) -> Any:
    """Sizes: "512M" or bytes as an int (the core's size grammar takes both as text)."""
    return str(v) if isinstance(v, int) and not isinstance(v, bool) else v


def _ports(v: Any) -> Any:
    if isinstance(v, (str, bytes)):
        return v
    return [str(p) if isinstance(p, int) and not isinstance(p, bool) else p for p in v]


def _action(v: Any) -> Any:
    return v.value if isinstance(v, BranchAction) else v


def _protections(v: Any) -> Any:
    """Members and numbers as the document's names; any other string goes to the core as it is
    (it names the field when it refuses one)."""
    if isinstance(v, (str, bytes)):
        return v
    out = []
    for p in v:
        if isinstance(p, int) and not isinstance(p, bool):
            try:
                p = Protection(p).label
            except ValueError:
                raise PolicyError(f"protection {p}: not one of 0..{len(Protection) - 1} "
                                  f"({', '.join(x.label for x in Protection)})") from None
        out.append(p)
    return out


def _time(v: Any) -> Any:
    # A naive datetime gives a time without an offset, which the core refuses.
    return v.isoformat() if isinstance(v, _dt.datetime) else v


def _env(v: Any) -> Any:
    return dict(v) if hasattr(v, "items") else v


# (Python name, section, key, default, to-document). A field equal to its default is left out of
# the document, exactly as the core's dump leaves defaults out.
POLICY_FIELDS: list[tuple[str, str, str, Any, Callable[[Any], Any]]] = [
    ("http_ca", "config", "http_ca", None, _same),
    ("http_key", "config", "http_key", None, _same),
    ("http_inject_ca", "config", "http_inject_ca", (), _list),
    ("http_ca_out", "config", "http_ca_out", None, _same),
    ("fs_storage", "config", "fs_storage", None, _same),
    ("workdir", "config", "workdir", None, _same),
    ("random_seed", "determinism", "random_seed", None, _same),
    ("time_start", "determinism", "time_start", None, _time),
    ("deterministic_dirs", "determinism", "deterministic_dirs", False, _same),
    ("no_randomize_memory", "determinism", "no_randomize_memory", False, _same),
    ("env", "program", "env", {}, _env),
    ("cwd", "program", "cwd", None, _same),
    ("uid", "program", "uid", None, _same),
    ("gid", "program", "gid", None, _same),
    ("clean_env", "program", "clean_env", False, _same),
    ("no_coredump", "program", "no_coredump", False, _same),
    ("no_huge_pages", "program", "no_huge_pages", False, _same),
    ("no_supervisor", "program", "no_supervisor", False, _same),
    ("fs_readable", "filesystem", "read", (), _list),
    ("fs_writable", "filesystem", "write", (), _list),
    ("fs_denied", "filesystem", "deny", (), _list),
    ("chroot", "filesystem", "chroot", None, _same),
    # fs_mount and fs_mount_ro share filesystem.mount (see render()).
    ("on_exit", "filesystem", "on_exit", BranchAction.COMMIT, _action),
    ("on_error", "filesystem", "on_error", BranchAction.ABORT, _action),
    ("private_tmp", "filesystem", "private_tmp", False, _same),
    ("net_allow", "network", "allow", (), _list),
    ("net_deny", "network", "deny", (), _list),
    ("net_allow_bind", "network", "allow_bind", (), _ports),
    ("net_deny_bind", "network", "deny_bind", (), _ports),
    ("port_remap", "network", "port_remap", False, _same),
    ("http_ports", "http", "ports", (), _list),  # () is [80] (and 443 with http_ca)
    ("http_allow", "http", "allow", (), _list),
    ("http_deny", "http", "deny", (), _list),
    ("extra_allow_syscalls", "syscalls", "extra_allow", (), _list),
    ("extra_deny_syscalls", "syscalls", "extra_deny", (), _list),
    ("max_memory", "limits", "memory", None, _scalar_or_str),
    ("max_processes", "limits", "processes", None, _same),
    ("max_open_files", "limits", "open_files", None, _same),
    ("max_cpu", "limits", "cpu", None, _same),
    ("max_disk", "limits", "disk", None, _scalar_or_str),
    ("gpu_devices", "limits", "gpu_devices", None, _list),
    ("cpu_cores", "limits", "cpu_cores", None, _list),
    ("num_cpus", "limits", "num_cpus", None, _same),
    ("allow_degraded", "protections", "allow_degraded", (), _protections),
    ("disable", "protections", "disable", (), _protections),
]

# Runtime fields the core knows (the document's "runtime" section).
RUNTIME_FIELDS: list[tuple[str, Any, Callable[[Any], Any]]] = [
    ("name", None, _same),
    ("control_socket", True, _same),
    ("credentials", (), _list),
    ("http_auth", (), _list),
]

# Python-only runtime kwargs whose features are not built yet: set, they are refused when the
# sandbox starts with the core's "not supported yet" wording.
PYTHON_ONLY_UNSUPPORTED = ("image", "policy_fn", "init_fn", "work_fn", "notif_policy")


def python_message(msg: str) -> str:
    """The core names a field of a JSON document "section.key"; say the Python name instead."""
    head, sep, rest = msg.partition(": ")
    if sep:
        for name, section, key, _, _ in POLICY_FIELDS:
            if head == f"{section}.{key}":
                return f"{name}: {rest}"
        if head == "filesystem.mount":
            return f"fs_mount: {rest}"
    return msg


def _is_default(value: Any, default: Any) -> bool:
    if value is None or default is None:
        return value is None and default is None
    if isinstance(default, tuple) and not isinstance(value, (str, bytes)):
        try:
            return len(value) == 0
        except TypeError:
            return False
    if isinstance(default, dict):
        return hasattr(value, "items") and len(value) == 0
    if isinstance(default, BranchAction):
        return _action(value) == default.value
    return type(value) is type(default) and value == default


def _mounts(values: dict[str, Any], ro: bool) -> list[Any]:
    if not hasattr(values, "items"):
        raise PolicyError(
            f"{'fs_mount_ro' if ro else 'fs_mount'}: a mapping of virtual path to host path"
        )
    field = "fs_mount_ro" if ro else "fs_mount"
    out = []
    for virtual, host in values.items():
        if not isinstance(virtual, str) or not isinstance(host, str):
            raise PolicyError(f"{field}: paths are strings")
        # The document joins the two with ':', so a ':' in either would change what is mounted
        # ("/w": "/a:ro" would read as a read-only mount of /a).
        if ":" in virtual or ":" in host:
            raise PolicyError(f"{field}: {virtual!r}: {host!r}: a path cannot hold ':'")
        out.append(f"{virtual}:{host}:ro" if ro else f"{virtual}:{host}")
    return out


def render(values: dict[str, Any], command: list[str] | None = None) -> dict[str, Any]:
    """The schema's JSON document for @values (Python name -> value)."""
    doc: dict[str, dict[str, Any]] = {}
    for name, section, key, default, conv in POLICY_FIELDS:
        value = values.get(name, default)
        if not _is_default(value, default):
            try:
                doc.setdefault(section, {})[key] = conv(value)
            except PolicyError as e:
                raise PolicyError(f"{name}: {e}") from None
    mounts = _mounts(values.get("fs_mount") or {}, False) + _mounts(
        values.get("fs_mount_ro") or {}, True
    )
    if mounts:
        doc.setdefault("filesystem", {})["mount"] = mounts
    if command:
        doc.setdefault("program", {})["exec"] = command[0]
        if len(command) > 1:
            doc["program"]["args"] = list(command[1:])
    for name, default, conv in RUNTIME_FIELDS:
        value = values.get(name, default)
        if not _is_default(value, default):
            doc.setdefault("runtime", {})[name] = conv(value)
    return doc


def from_document(doc: dict[str, Any]) -> tuple[dict[str, Any], list[str] | None]:
    """Sandbox keyword arguments and the [program] command of a document the core dumped."""
    by_key = {(s, k): (n, d) for n, s, k, d, _ in POLICY_FIELDS}
    kwargs: dict[str, Any] = {}
    command = None
    for section, table in doc.items():
        for key, value in table.items():
            if section == "runtime":
                kwargs[key] = value
            elif (section, key) == ("filesystem", "mount"):
                for entry in value:
                    ro = entry.endswith(":ro")
                    if ro or entry.endswith(":rw"):
                        entry = entry[:-3]
                    virtual, host = entry.split(":", 1)
                    kwargs.setdefault("fs_mount_ro" if ro else "fs_mount", {})[virtual] = host
            elif (section, key) == ("program", "exec"):
                command = [value] + list(doc["program"].get("args", []))
            elif (section, key) == ("program", "args"):
                continue
            elif (section, key) not in by_key:
                raise PolicyError(f"{section}.{key}: a field this SDK does not know "
                                   "(a newer library?)")
            else:
                name, default = by_key[(section, key)]
                if isinstance(default, BranchAction):
                    value = BranchAction(value)
                elif name in ("allow_degraded", "disable"):
                    value = [Protection(p) for p in value]
                kwargs[name] = value
    return kwargs, command
