# SPDX-License-Identifier: LGPL-2.1-or-later
"""sandlock: a rootless process sandbox for Linux (Landlock + seccomp), over libsandlock.

    from sandlock import Sandbox
    result = Sandbox(fs_readable=["/usr", "/lib", "/bin"]).run(["echo", "hello"])

Importing the package does not load the library (see _ffi), so ``from sandlock import inputs``
works inside a gather's consumer.
"""

from __future__ import annotations

from ._core import DryRunResult, ExitReason, Result
from ._events import Denial, Event
from ._fields import BranchAction, Protection
from ._helpers import Change, Entry, parse_ports, renames
from ._profile import list_profiles, load_profile
from .exceptions import (
    BranchConflictError,
    BranchError,
    ChildError,
    ConfinementError,
    ForkError,
    LandlockUnavailableError,
    MemoryProtectError,
    NotifError,
    PolicyError,
    SandboxError,
    SandboxRuntimeError,
    SandlockError,
    SeccompError,
)
from .handler import ExceptionPolicy, Handler, HandlerCtx, NotifAction
from .inputs import inputs
from ._process import Process, StdioMode
from ._version import __version__
from .policy_fn import PolicyContext, SyscallEvent
from .pipeline import Gather, GatherPipeline, NamedStage, Pipeline, Stage
from .sandbox import Sandbox, confine, landlock_abi_version, min_landlock_abi

__all__ = [
    "__version__",
    "Sandbox",
    "Result",
    "ExitReason",
    "Event",
    "Denial",
    "Process",
    "StdioMode",
    "DryRunResult",
    "SyscallEvent",
    "PolicyContext",
    "BranchAction",
    "Protection",
    "Change",
    "Entry",
    "renames",
    "parse_ports",
    "confine",
    "landlock_abi_version",
    "min_landlock_abi",
    "load_profile",
    "list_profiles",
    "inputs",
    "Handler",
    "HandlerCtx",
    "NotifAction",
    "ExceptionPolicy",
    "Stage",
    "Pipeline",
    "NamedStage",
    "Gather",
    "GatherPipeline",
    "SandlockError",
    "SandboxError",
    "PolicyError",
    "SandboxRuntimeError",
    "ForkError",
    "ChildError",
    "BranchError",
    "BranchConflictError",
    "ConfinementError",
    "LandlockUnavailableError",
    "SeccompError",
    "NotifError",
    "MemoryProtectError",
]
