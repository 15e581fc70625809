# SPDX-License-Identifier: LGPL-2.1-or-later
"""The kernel's own denials in the log (`--log-denials`): a read, a write, an exec, a mkdir
Landlock refuses, a path under fs_denied, and the syscalls the filter blocks whole. Each one's
line and hint; the hint applied (the negative control) gives no line and the call succeeds;
and the program sees the same result with and without the logging mode (the judge never
changes an answer)."""

import json
import os
import re
import shutil

from conftest import NR, PRELUDE, PY, SYSTEM_READ, X86_64, require, run

LINE = re.compile(r'^sandlock: denied (\w+)\((.*)\) by pid \d+ \(([^)]*)\): (.*)$')


def py_run(code, *flags, log=True):
    """The snippet (with PRELUDE) under SYSTEM_READ + @flags, with or without the log."""
    extra = ("--log-denials",) if log else ()
    return run(*SYSTEM_READ, *flags, *extra, "--", PY, "-c", PRELUDE + code)


def denials(r):
    """The denial lines on stderr, as (syscall, object, reason; hint)."""
    found = []
    for line in r.stderr.decode().splitlines():
        m = LINE.match(line)
        if m:
            found.append((m.group(1), m.group(2), m.group(4)))
    return found


def same_answers(code, *flags):
    """Run @code with and without the log: the program's output is the same; return the
    logged run."""
    plain = py_run(code, *flags, log=False)
    logged = py_run(code, *flags)
    assert (logged.returncode, logged.stdout) == (plain.returncode, plain.stdout), (
        plain.stderr, logged.stderr)
    assert denials(plain) == []
    return logged


def about(r, path):
    return [d for d in denials(r) if d[1].startswith(f'"{path}"')]


OPEN_READ = "try:\n open({p!r}).read(); out(0)\nexcept OSError as e: out(e.errno)\n"
OPEN_WRITE = "try:\n open({p!r}, 'w').write('x'); out(0)\nexcept OSError as e: out(e.errno)\n"
MKDIR = "try:\n os.mkdir({p!r}); out(0)\nexcept OSError as e: out(e.errno)\n"
EXEC = ("import subprocess\ntry:\n out(subprocess.run([{p!r}]).returncode)\n"
        "except OSError as e: out(e.errno)\n")


def tree(tmp_path):
    d = os.path.realpath(tmp_path / "data")
    os.mkdir(d)
    with open(os.path.join(d, "f"), "w") as f:
        f.write("hello")
    return d


def test_read_refused_logged_and_granted(tmp_path):
    d = tree(tmp_path)
    f = os.path.join(d, "f")
    r = same_answers(OPEN_READ.format(p=f))
    assert r.stdout == b"13\n"
    assert about(r, f) == [
        ("openat", f'"{f}", O_RDONLY', f"no read grant covers {d}; add -r {d}")]
    r = py_run(OPEN_READ.format(p=f), "-r", d)
    assert (r.stdout, about(r, f)) == (b"0\n", [])


def test_write_refused_logged_and_granted(tmp_path):
    d = tree(tmp_path)
    new = os.path.join(d, "new")
    r = same_answers(OPEN_WRITE.format(p=new), "-r", d)
    assert r.stdout == b"13\n"
    assert about(r, new) == [("openat", f'"{new}", O_WRONLY|O_CREAT|O_TRUNC',
                              f"no write grant covers {d}; add -w {d}")]
    r = py_run(OPEN_WRITE.format(p=new), "-w", d)
    assert (r.stdout, about(r, new)) == (b"0\n", [])
    assert open(new).read() == "x"


def test_exec_refused_logged_and_granted(tmp_path):
    d = tree(tmp_path)
    prog = os.path.join(d, "prog")
    shutil.copy("/bin/true", prog)
    r = same_answers(EXEC.format(p=prog))
    assert r.stdout == b"13\n"
    assert about(r, prog) == [
        ("execve", f'"{prog}", exec', f"no read grant covers {d}; add -r {d}")]
    r = py_run(EXEC.format(p=prog), "-r", d)
    assert (r.stdout, about(r, prog)) == (b"0\n", [])


def test_mkdir_refused_logged_and_granted(tmp_path):
    d = tree(tmp_path)
    sub = os.path.join(d, "sub")
    r = same_answers(MKDIR.format(p=sub), "-r", d)
    assert r.stdout == b"13\n"
    found = about(r, sub)
    assert [(f[1], f[2]) for f in found] == [
        (f'"{sub}", mkdir', f"no write grant covers {d}; add -w {d}")]
    assert found[0][0] in ("mkdir", "mkdirat")
    r = py_run(MKDIR.format(p=sub), "-w", d)
    assert (r.stdout, about(r, sub)) == (b"0\n", [])
    assert os.path.isdir(sub)


def test_fs_deny_logged_and_removed(tmp_path):
    d = tree(tmp_path)
    secret = os.path.join(d, "secret")
    with open(secret, "w") as f:
        f.write("s")
    r = same_answers(OPEN_READ.format(p=secret), "-r", d, "--fs-deny", secret)
    assert r.stdout == b"13\n"
    assert about(r, secret) == [("openat", f'"{secret}", O_RDONLY',
                                 f"fs_denied covers {secret}; remove --fs-deny {secret}")]
    r = py_run(OPEN_READ.format(p=secret), "-r", d)
    assert (r.stdout, about(r, secret)) == (b"0\n", [])


def test_blocked_syscall_logged_same_errno():
    require(X86_64, "x86_64 syscall numbers")
    code = f"out(sc({NR['mount']}, 0, 0, 0, 0, 0))\n"
    r = same_answers(code)
    assert r.stdout == b"[-1, 1]\n"
    assert [d for d in denials(r) if d[0] == "mount"] == [("mount", "", "blocked syscall")]


def test_blocked_group_hint_applied():
    require(X86_64, "x86_64 syscall numbers")
    # shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600), removed again when it was made.
    code = (f"r = sc({NR['shmget']}, 0, 4096, 0o1600)\nout(r[1])\n"
            f"r[0] >= 0 and sc({NR['shmctl']}, r[0], 0, 0)\n")
    r = same_answers(code)
    assert r.stdout == b"1\n"
    assert [d for d in denials(r) if d[0] == "shmget"] == [
        ("shmget", "", "blocked syscall; add --extra-allow-syscall sysv_ipc")]
    r = py_run(code, "--extra-allow-syscall", "sysv_ipc")
    assert r.stdout == b"0\n"
    assert [d for d in denials(r) if d[0] == "shmget"] == []


def test_extra_deny_logged_and_removed():
    require(X86_64, "x86_64 syscall numbers")
    code = "out(sc(110)[1])\n"  # getppid, which nothing at Python's start calls
    r = same_answers(code, "--extra-deny-syscall", "getppid")
    assert r.stdout == b"1\n"
    assert [d for d in denials(r) if d[0] == "getppid"] == [
        ("getppid", "", "extra_deny_syscalls blocks getppid; "
                        "remove --extra-deny-syscall getppid")]
    r = py_run(code)
    assert r.stdout == b"0\n"
    assert [d for d in denials(r) if d[0] == "getppid"] == []


def test_extra_denied_sendmsg_fails_the_launch_as_without_the_log():
    # The launch hands the listener over with sendmsg: in logging mode that deny stays the
    # kernel's, so the launch fails at that step instead of waiting for an answer.
    for log in ([], ["--log-denials"]):
        r = run(*SYSTEM_READ, *log, "--extra-deny-syscall", "sendmsg", "--", "true",
                timeout=30)
        assert (r.returncode, r.stderr.decode().splitlines()[-1:]) == (
            127, ["sandlock: sendmsg(ready): Operation not permitted"]), (log, r.stderr)


def test_allowed_path_calls_in_the_event_log(tmp_path):
    """--log-events: the path calls the kernel let through are judged allowed (what `sandlock
    learn` reads), the refused one denied, with the same object fields."""
    d = tree(tmp_path)
    f = os.path.join(d, "f")
    prog = os.path.join(d, "prog")
    shutil.copy("/bin/true", prog)
    log = tmp_path / "events.jsonl"
    code = (OPEN_READ.format(p=f) + EXEC.format(p=prog) +
            OPEN_WRITE.format(p=os.path.join(d, "new")))
    r = run(*SYSTEM_READ, "-r", d, f"--log-events={log}", "--", PY, "-c", PRELUDE + code)
    assert r.stdout == b"0\n0\n13\n"
    events = [json.loads(line) for line in log.read_text().splitlines()]
    mine = [(e["syscall"], e["verdict"], e.get("access"), e.get("error"), e.get("judged"))
            for e in events if e.get("path") in (f, prog, os.path.join(d, "new"))]
    assert ("openat", "allow", "O_RDONLY", None, True) in mine
    assert ("execve", "allow", "exec", None, True) in mine
    assert ("openat", "deny", "O_WRONLY|O_CREAT|O_TRUNC", "EACCES", True) in mine


def test_fs_deny_in_a_writable_grant_told(tmp_path):
    """Beneath a writable grant the supervisor refuses what touches a denied path (it makes
    those calls itself): the refusal is told with the entry it protects."""
    d = tree(tmp_path)
    s = os.path.join(d, "s")
    os.mkdir(s)
    secret = os.path.join(s, "secret")
    with open(secret, "w") as f:
        f.write("s")
    code = ("try:\n os.unlink({p!r}); out(0)\nexcept OSError as e: out(e.errno)\n"
            "try:\n os.rmdir({q!r}); out(0)\nexcept OSError as e: out(e.errno)\n").format(
                p=secret, q=s)
    r = same_answers(code, "-w", d, "--fs-deny", secret)
    assert r.stdout == b"13\n13\n"
    why = f"fs_denied covers {secret}; remove --fs-deny {secret}"
    assert [(x[1], x[2]) for x in about(r, secret)] == [(f'"{secret}", unlink', why)]
    assert [(x[1], x[2]) for x in about(r, s)] == [(f'"{s}", rmdir', why)]
    r = py_run(code, "-w", d)
    assert (r.stdout, [x for x in denials(r) if d in x[1]]) == (b"0\n0\n", [])


def test_metadata_change_refused_told(tmp_path):
    """chmod outside every writable grant: the supervisor's EACCES (Landlock has no right for
    it), told with the write grant it needs; granted, it is made and nothing is told."""
    d = tree(tmp_path)
    f = os.path.join(d, "f")
    code = "try:\n os.chmod({p!r}, 0o600); out(0)\nexcept OSError as e: out(e.errno)\n".format(
        p=f)
    r = same_answers(code, "-r", d)
    assert r.stdout == b"13\n"
    assert [(x[1], x[2]) for x in about(r, f)] == [
        (f'"{f}", chmod', f"no write grant covers {d}; add -w {d}")]
    r = py_run(code, "-w", d)
    assert (r.stdout, about(r, f)) == (b"0\n", [])
    assert os.stat(f).st_mode & 0o777 == 0o600


def test_judged_again_in_a_directory_seen_before(tmp_path):
    # The judge keeps the chains of the directories it walked: an open judged in a directory
    # it has seen is still judged on its own file. A file granted alone, then its neighbour
    # (not granted), then the granted one again: one line, for the neighbour.
    d = tree(tmp_path)
    ok, other = os.path.join(d, "f"), os.path.join(d, "g")
    with open(other, "w") as f:
        f.write("x")
    code = "".join(OPEN_READ.format(p=p) for p in (ok, other, ok, other))
    r = same_answers(code, "-r", ok)
    assert r.stdout == b"0\n13\n0\n13\n"
    assert about(r, ok) == []
    assert about(r, other) == [
        ("openat", f'"{other}", O_RDONLY', f"no read grant covers {d}; add -r {d}")]
    # The control: granted the directory, neither is refused nor logged.
    r = py_run(code, "-r", d)
    assert (r.stdout, about(r, ok), about(r, other)) == (b"0\n0\n0\n0\n", [], [])
