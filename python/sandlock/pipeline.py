# SPDX-License-Identifier: LGPL-2.1-or-later
"""Stages, pipelines and gathers: several sandboxes, each under its own policy, joined by kernel
pipes and run concurrently.

    (a.cmd(["cat", "secret"]) | b.cmd(["tr", "a-z", "A-Z"])).run()
    (p.cmd([...]).as_("code") + q.cmd([...]).as_("data") | c.cmd([...])).run()

A stage runs under its sandbox's policy without taking the sandbox's one-process slot, so one
Sandbox may appear in several stages (unnamed: two processes cannot share a name).
"""

from __future__ import annotations

import fcntl
import os
import re
from typing import TYPE_CHECKING, Any, Sequence

from . import _core, _events, _ffi
from ._core import Result
from .exceptions import ChildError

if TYPE_CHECKING:
    from .sandbox import Sandbox

GATHER_ENV = "_SANDLOCK_GATHER"
_LABEL = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


def _fd_of(target: Any) -> int:
    return target if isinstance(target, int) else target.fileno()


class _Run:
    """The processes of one pipeline run: spawned in order, all killed if one fails to start."""

    def __init__(self, timeout: float | None) -> None:
        self.timeout = timeout
        self.handles: list[_core.Handle] = []
        self.fds: list[int] = []  # our copies of pipe ends, closed once every spawn is done

    def pipe(self) -> tuple[int, int]:
        """A pipe, O_CLOEXEC (only the stage given an end holds it), both ends above 2 (a
        host with stdio closed gets 0..2 from os.pipe; a passed descriptor must be above)."""
        r, w = os.pipe()
        ends = []
        for fd in (r, w):
            if fd <= 2:
                high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
                os.close(fd)
                fd = high
            ends.append(fd)
        self.fds += ends
        return ends[0], ends[1]

    def spawn(self, stage: "Stage", stdin: Any, stdout: Any, pass_fds: list[int] | None = None,
              extra_env: dict[str, str] | None = None, flags: int = 0) -> _core.Handle:
        opts, _keep = _core.stdio_opts(stdin, stdout, "pipe", timeout=self.timeout,
                                       pass_fds=pass_fds, flags=flags)
        sb = stage.sandbox
        listener = _events.listen(opts, sb.on_event, sb.log_denials)
        with sb._policy(stage.args, extra_env) as policy:
            h = _core.Handle.spawn(policy, stage.args, opts, self.timeout, listener)
        self.handles.append(h)
        h.policy_run = policy.policy_run  # the Result reports the last stage's policy_fn
        return h

    def close_fds(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = []

    def abort(self) -> None:
        self.close_fds()
        for h in self.handles:
            h.free()

    def finish(self, last: _core.Handle) -> Result:
        """Wait for every stage; the result is @last's, failed if any stage timed out."""
        self.close_fds()
        for h in self.handles:
            h.wait()
        result = last.result()
        if result.error is None and any(h.timed_out() for h in self.handles):
            result.success = False
            result.error = f"timed out after {self.timeout:g} s"
        self.gather_events(result, last)
        for h in self.handles:
            h.free()
        return result

    def gather_events(self, result: Result, last: _core.Handle) -> None:
        """Every stage's denials into @result, in stage order (each Denial's pid tells whose),
        with the events every stage dropped and the first callback exception of any."""
        if result._no_denials is not None:
            return
        denials: list[Any] = []
        for h in self.handles:
            if h is last:
                denials += result.denials
                continue
            ds, dropped, _, error = h.events()
            denials += ds
            result.events_dropped += dropped
            result.event_error = result.event_error or error
        result.denials = denials

    def start(self, body: Any) -> Result:
        """Spawn with @body, then wait. Whatever interrupts either (an exception, Ctrl-C)
        kills every stage started."""
        try:
            last = body(self)
            return self.finish(last)
        except ChildError as e:
            self.abort()
            return Result(success=False, exit_code=127, error=str(e))
        except BaseException:
            self.abort()
            raise


class Stage:
    """A command bound to a sandbox, run when its pipeline runs."""

    def __init__(self, sandbox: "Sandbox", args: Sequence[str]) -> None:
        self.sandbox = sandbox
        self.args = list(args)

    def __or__(self, other: "Stage") -> "Pipeline":
        if not isinstance(other, Stage):
            return NotImplemented
        return Pipeline([self, other])

    def as_(self, name: str) -> "NamedStage":
        """Label this stage's stdout for a gather's consumer (sandlock.inputs[name])."""
        return NamedStage(self, name)

    def run(self, stdout: Any = None, timeout: float | None = None) -> Result:
        """Run this stage alone, as the last stage of a pipeline runs."""
        return _run_stages([self], stdout, timeout)

    def __repr__(self) -> str:
        return f"Stage({self.args!r})"


class Pipeline:
    """Stages whose stdout feeds the next one's stdin."""

    def __init__(self, stages: Sequence[Stage]) -> None:
        self.stages = list(stages)
        if len(self.stages) < 2:
            raise ValueError(f"a pipeline has at least two stages, not {len(self.stages)}")

    def __or__(self, other: Stage) -> "Pipeline":
        if not isinstance(other, Stage):
            return NotImplemented
        return Pipeline(self.stages + [other])

    def run(self, stdout: Any = None, timeout: float | None = None) -> Result:
        """Run every stage concurrently; the first reads /dev/null, the last's stdout is
        captured (or goes to @stdout: a descriptor or an object with fileno()). Each stage's
        stderr is captured; the Result is the last stage's. @timeout (seconds) applies to
        every stage: one that outlives it is killed and the Result fails saying so."""
        return _run_stages(self.stages, stdout, timeout)

    def __repr__(self) -> str:
        return " | ".join(repr(s) for s in self.stages)


def _run_stages(stages: list[Stage], stdout: Any, timeout: float | None) -> Result:
    def body(run: _Run) -> _core.Handle:
        prev_read: int | None = None
        h = None
        for i, stage in enumerate(stages):
            last = i == len(stages) - 1
            if last:
                out: Any = "pipe" if stdout is None else _fd_of(stdout)
            else:
                r, out = run.pipe()
            h = run.spawn(stage, prev_read, out)
            if not last:
                prev_read = r
        assert h is not None
        return h

    return _Run(timeout).start(body)


class NamedStage:
    """A stage whose stdout a gather's consumer reads by name."""

    def __init__(self, stage: Stage, name: str) -> None:
        if not isinstance(name, str) or not _LABEL.match(name):
            raise ValueError(f"gather label {name!r}: letters, digits, '_', '.', '-'; "
                             "not starting with a digit")
        self.stage = stage
        self.name = name

    def __add__(self, other: "NamedStage | Gather") -> "Gather":
        return Gather([self]) + other

    def __or__(self, consumer: Stage) -> "GatherPipeline":
        return Gather([self]) | consumer


class Gather:
    """Named producers whose outputs one consumer reads (sandlock.inputs)."""

    def __init__(self, producers: Sequence[NamedStage]) -> None:
        self.producers = list(producers)
        names = [p.name for p in self.producers]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"gather label used twice: {', '.join(sorted(dup))}")

    @property
    def sources(self) -> list[tuple[str, Stage]]:
        """The producers as (name, stage), in order."""
        return [(p.name, p.stage) for p in self.producers]

    def __add__(self, other: "NamedStage | Gather") -> "Gather":
        if isinstance(other, NamedStage):
            return Gather(self.producers + [other])
        if isinstance(other, Gather):
            return Gather(self.producers + other.producers)
        return NotImplemented

    def __or__(self, consumer: Stage) -> "GatherPipeline":
        if not isinstance(consumer, Stage):
            return NotImplemented
        return GatherPipeline(self, consumer)


class GatherPipeline:
    """A gather feeding one consumer stage."""

    def __init__(self, gather: Gather, consumer: Stage) -> None:
        self.gather = gather
        self.consumer = consumer

    def run(self, timeout: float | None = None) -> Result:
        """Run the producers and the consumer concurrently. Each producer's stdout goes to a
        pipe the consumer reads: the last producer's is its stdin, the others' are its
        descriptors 3, 4, ... in order (``cat <&3`` reads the first of three).
        $_SANDLOCK_GATHER ("name:fd,...") tells sandlock.inputs which is which. The Result is
        the consumer's."""

        if len(self.gather.producers) > _ffi.PASS_FDS_MAX + 1:
            raise ValueError(f"a gather has at most {_ffi.PASS_FDS_MAX + 1} producers")

        def body(run: _Run) -> _core.Handle:
            read_ends: list[int] = []
            for p in self.gather.producers:
                r, w = run.pipe()
                run.spawn(p.stage, None, w)
                read_ends.append(r)
            *passed, stdin = read_ends
            names = [p.name for p in self.gather.producers]
            numbers = [3 + i for i in range(len(passed))] + [0]
            env = {GATHER_ENV: ",".join(f"{n}:{fd}" for n, fd in zip(names, numbers))}
            return run.spawn(self.consumer, stdin, "pipe", pass_fds=passed, extra_env=env,
                             flags=_ffi.SPAWN_FDS_FROM_3)

        return _Run(timeout).start(body)
