# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Sandbox fields and the schema's JSON document.

Every policy field of the profile schema maps to one (section, key) of the document the core
loads (sandlock_policy_load_json), so the core's validator is the only one: this module only
changes Python shapes into document shapes (a dict of mounts into "VIRTUAL:HOST" strings, an
enum into its value, an aware datetime into RFC 3339) and back.

The fields themselves are declared once, in the Sandbox dataclass, each with policy(), mount(),
runtime(), python_field() or python_only(): its section and key, its converters and its doc live
in the field's metadata, and the tables below are read from it when the class is made (@schema),
which also writes every field's doc into the class docstring that help(Sandbox) shows.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import inspect
import textwrap
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


def same(v: Any) -> Any:
    return v


def as_list(v: Any) -> Any:
    """A sequence as a list; a lone string stays one (the core refuses it where a list belongs)."""
    if isinstance(v, (str, bytes)):
        return v  # the core refuses a string where a list belongs, naming the field
    return list(v)


def size(v: Any) -> Any:
    """Sizes: "512M" or bytes as an int (the core's size grammar takes both as text)."""
    return str(v) if isinstance(v, int) and not isinstance(v, bool) else v


def ports(v: Any) -> Any:
    if isinstance(v, (str, bytes)):
        return v
    return [str(p) if isinstance(p, int) and not isinstance(p, bool) else p for p in v]


def action(v: Any) -> Any:
    return v.value if isinstance(v, BranchAction) else v


def protections(v: Any) -> Any:
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


def time(v: Any) -> Any:
    # A naive datetime gives a time without an offset, which the core refuses.
    return v.isoformat() if isinstance(v, _dt.datetime) else v


def env_map(v: Any) -> Any:
    return dict(v) if hasattr(v, "items") else v


def protection_list(v: Any) -> Any:
    """The core's dump names protections; the fields hold members."""
    return [Protection(p) for p in v]


# ---- the field declarations ------------------------------------------------------------------
#
# Each init field of the Sandbox dataclass is declared with one of these: its metadata says where
# it goes in the document, how its value is written there and read back, and what it does (the
# text help(Sandbox) shows). @schema reads the metadata into the tables below, so the list of
# fields and their defaults exist once, in the dataclass.


def policy(section: str, key: str, default: Any = None, *, doc: str,
           to_doc: Callable[[Any], Any] = same, from_doc: Callable[[Any], Any] = same,
           factory: Callable[[], Any] | None = None) -> Any:
    """A policy field, @section.@key of the document; @factory makes a mutable default."""
    meta = {"kind": "policy", "section": section, "key": key, "to_doc": to_doc,
            "from_doc": from_doc, "doc": doc}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def mount(*, ro: bool, doc: str) -> Any:
    """A mapping of virtual path to host path; the two mount fields share filesystem.mount."""
    meta = {"kind": "mount", "section": "filesystem", "key": "mount", "ro": ro, "doc": doc}
    return dataclasses.field(default_factory=dict, metadata=meta)


def runtime(default: Any = None, *, doc: str, to_doc: Callable[[Any], Any] = same) -> Any:
    """A runtime field: the document's "runtime" section, under the field's own name."""
    return dataclasses.field(default=default,
                             metadata={"kind": "runtime", "to_doc": to_doc, "doc": doc})


def python_field(default: Any = None, *, doc: str) -> Any:
    """A Python-only runtime field (a callback, a switch of the SDK's): never in the document,
    used by the SDK itself when a process starts."""
    return dataclasses.field(default=default, metadata={"kind": "sdk", "doc": doc})


def python_only(*, doc: str) -> Any:
    """A Python-only runtime field whose feature is not built yet: set, it is refused when the
    sandbox starts, with the core's "not supported yet" wording."""
    return dataclasses.field(default=None, metadata={"kind": "python", "doc": doc})


# (Python name, section, key, default, to-document). A field equal to its default is left out of
# the document, exactly as the core's dump leaves defaults out.
POLICY_FIELDS: list[tuple[str, str, str, Any, Callable[[Any], Any]]] = []
# Python name -> how a value of the core's dump becomes the field's value.
FROM_DOCUMENT: dict[str, Callable[[Any], Any]] = {}
# (Python name, read-only) of the fields that share filesystem.mount, the read-write one first.
MOUNT_FIELDS: list[tuple[str, bool]] = []
# Runtime fields the core knows (the document's "runtime" section): (name, default, to-document).
RUNTIME_FIELDS: list[tuple[str, Any, Callable[[Any], Any]]] = []
# Python-only runtime fields the SDK uses itself (never in the document): (name, default).
PYTHON_FIELDS: list[tuple[str, Any]] = []
# Python-only runtime fields whose features are not built yet.
PYTHON_ONLY_UNSUPPORTED: tuple[str, ...] = ()


def _default_of(f: dataclasses.Field[Any]) -> Any:
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return f.default


def schema(cls: type) -> type:
    """Class decorator, over @dataclass: fill the tables above from @cls's field metadata, and
    append every field's doc to the class docstring. A field declared otherwise is refused, so
    none is left out of the document unseen. The tables are one class's: Sandbox's."""
    global PYTHON_ONLY_UNSUPPORTED
    policy_rows, from_doc, mounts, runtime_rows, python_rows = [], {}, [], [], []
    sdk_rows = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        m = f.metadata
        kind = m.get("kind")
        if kind == "policy":
            policy_rows.append((f.name, m["section"], m["key"], _default_of(f), m["to_doc"]))
            from_doc[f.name] = m["from_doc"]
        elif kind == "mount":
            mounts.append((f.name, m["ro"]))
        elif kind == "runtime":
            runtime_rows.append((f.name, _default_of(f), m["to_doc"]))
        elif kind == "sdk":
            sdk_rows.append((f.name, _default_of(f)))
        elif kind == "python":
            python_rows.append(f.name)
        else:
            raise TypeError(f"{cls.__name__}.{f.name}: declared without _fields.policy(), "
                            "mount(), runtime(), python_field() or python_only()")
    if POLICY_FIELDS:
        raise TypeError(f"{cls.__name__}: the field tables are already those of another class")
    POLICY_FIELDS[:] = policy_rows
    FROM_DOCUMENT.update(from_doc)
    MOUNT_FIELDS[:] = mounts
    RUNTIME_FIELDS[:] = runtime_rows
    PYTHON_FIELDS[:] = sdk_rows
    PYTHON_ONLY_UNSUPPORTED = tuple(python_rows)
    cls.__doc__ = inspect.cleandoc(cls.__doc__ or "") + "\n\n" + field_docs(cls)
    return cls


DOC_WIDTH = 92  # help(Sandbox)'s field docs are wrapped to this many columns


def _shown(value: Any) -> str:
    return f"{type(value).__name__}.{value.name}" if isinstance(value, enum.Enum) else repr(value)


def field_docs(cls: type) -> str:
    """Every init field of @cls as "name: type = default", its doc below it, under the heading
    of its section of the profile schema."""
    heads = {"runtime": "Runtime (this run's, not the policy's: the JSON document's \"runtime\"; "
                        "no profile key)",
             "sdk": "Python only (this run's: never in the JSON document or a profile)",
             "python": "Python only (not supported yet: refused when a process starts)"}
    lines = textwrap.wrap("Fields, every one an optional keyword argument, by section of a "
                          "profile (a profile key that is not the field's name follows the "
                          "default):", DOC_WIDTH)
    heading = None
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        m = f.metadata
        head = f"[{m['section']}]" if "section" in m else heads[m["kind"]]
        if head != heading:
            lines += ["", head]
            heading = head
        where = f"  (profile key: {m['key']})" if m.get("key", f.name) != f.name else ""
        shown_type = str(f.type).replace("_dt.", "")  # sandbox.py's alias of datetime
        lines.append(f"  {f.name}: {shown_type} = {_shown(_default_of(f))}{where}")
        lines += textwrap.wrap(m["doc"], DOC_WIDTH, initial_indent="      ",
                               subsequent_indent="      ")
    return "\n".join(lines)


def python_message(msg: str) -> str:
    """The core names a field of a JSON document "section.key"; say the Python name instead."""
    head, sep, rest = msg.partition(": ")
    if sep:
        for name, section, key, _, _ in POLICY_FIELDS:
            if head == f"{section}.{key}":
                return f"{name}: {rest}"
        if head == "filesystem.mount" and MOUNT_FIELDS:
            return f"{MOUNT_FIELDS[0][0]}: {rest}"
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
        return action(value) == default.value
    return type(value) is type(default) and value == default


def _mounts(field: str, values: dict[str, Any], ro: bool) -> list[Any]:
    if not hasattr(values, "items"):
        raise PolicyError(f"{field}: a mapping of virtual path to host path")
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
    mounts = []
    for name, ro in MOUNT_FIELDS:
        mounts += _mounts(name, values.get(name) or {}, ro)
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
    by_key = {(s, k): n for n, s, k, _, _ in POLICY_FIELDS}
    mount_field = {ro: name for name, ro in MOUNT_FIELDS}
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
                    kwargs.setdefault(mount_field[ro], {})[virtual] = host
            elif (section, key) == ("program", "exec"):
                command = [value] + list(doc["program"].get("args", []))
            elif (section, key) == ("program", "args"):
                continue
            elif (section, key) not in by_key:
                raise PolicyError(f"{section}.{key}: a field this SDK does not know "
                                   "(a newer library?)")
            else:
                name = by_key[(section, key)]
                kwargs[name] = FROM_DOCUMENT[name](value)
    return kwargs, command
