# SPDX-License-Identifier: LGPL-2.1-or-later
"""The exception hierarchy of the SDK (the Rust sandlock Python SDK's, name for name).

SandlockError
  +-- SandboxError              invalid sandbox configuration (also a ValueError)
  |     +-- PolicyError             a policy field the core or the SDK refused
  +-- SandboxRuntimeError       sandbox lifecycle errors
  |     +-- ForkError               the sandbox could not be started
  |     +-- ChildError              the child failed before running the command
  |     +-- BranchError             COW branch operation failed
  |     |     +-- BranchConflictError
  |     +-- ConfinementError        Landlock/seccomp setup failed
  |           +-- LandlockUnavailableError
  |           +-- SeccompError
  |                 +-- NotifError
  +-- MemoryProtectError
"""

from __future__ import annotations


class SandlockError(Exception):
    """The base of every sandlock error."""


class SandboxError(SandlockError, ValueError):
    """Invalid sandbox configuration; the message is the core's, naming the field. A
    ValueError too, so code that catches ValueError for a bad argument catches it."""


class PolicyError(SandboxError):
    """A policy field refused (by the core's validator or by the SDK's conversion): what every
    invalid configuration raises."""


class SandboxRuntimeError(SandlockError):
    """A sandbox lifecycle error."""


class ForkError(SandboxRuntimeError):
    """The sandbox could not be started (out of processes, descriptors or memory)."""


class ChildError(SandboxRuntimeError):
    """The child failed before running the command (exec, chdir, ...).

    ``step`` names the failed step (``"execve"``, ``"chdir"``, ...)."""

    def __init__(self, message: str, step: str | None = None) -> None:
        super().__init__(message)
        self.step = step


class BranchError(SandboxRuntimeError):
    """A COW branch operation failed."""


class BranchConflictError(BranchError):
    """A sibling branch committed first (ESTALE)."""


class ConfinementError(SandboxRuntimeError):
    """Landlock or seccomp could not be set up."""


class LandlockUnavailableError(ConfinementError):
    """The kernel has no Landlock (or it is disabled)."""


class SeccompError(ConfinementError):
    """The seccomp filter could not be installed."""


class NotifError(SeccompError):
    """The seccomp user-notification supervisor failed."""


class MemoryProtectError(SandlockError):
    """mprotect failed."""


__all__ = [
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
