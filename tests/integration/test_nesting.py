# SPDX-License-Identifier: LGPL-2.1-or-later
"""A sandlock inside a sandbox: under an outer --no-supervisor sandbox the inner one's rules
still apply; a supervised sandlock inside a supervised one is refused, naming --no-supervisor."""

import errno

from conftest import (BUILD, NR, SANDLOCK, SYSTEM_READ, X86_64, nested_env, py_inside,
                      py_outside, result_json, run)

# The outer sandbox needs: the system, /proc (sanitizer runtime), /etc (so the inner may grant
# it), and the build directory (the sandlock binary).
OUTER = [*SYSTEM_READ, "-r", "/proc", "-r", "/etc", "-r", str(BUILD)]


def inner(*outer_flags, inner_flags):
    return run(*OUTER, *outer_flags, "--", SANDLOCK, "run", *SYSTEM_READ, *inner_flags, "--",
               "cat", "/etc/group", env=nested_env(), timeout=60)


def test_inner_rules_apply_under_no_supervisor():
    with open("/etc/group", "rb") as f:
        content = f.read()
    denied = inner("--no-supervisor", inner_flags=[])
    assert denied.returncode == 1
    assert b"cat: /etc/group: Permission denied" in denied.stderr
    assert denied.stdout == b""

    allowed = inner("--no-supervisor", inner_flags=["-r", "/etc"])
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout == content


def test_outer_rules_still_bound_the_inner():
    # The inner grants /etc but the outer does not: Landlock layers intersect.
    outer_no_etc = [*SYSTEM_READ, "-r", "/proc", "-r", str(BUILD)]
    r = run(*outer_no_etc, "--no-supervisor", "--", SANDLOCK, "run", *SYSTEM_READ, "-r",
            "/etc", "--", "cat", "/etc/group", env=nested_env(), timeout=60)
    assert r.returncode == 1
    assert b"cat: /etc/group: Permission denied" in r.stderr
    assert r.stdout == b""


def test_supervised_inside_supervised_is_refused():
    r = inner(inner_flags=["-r", "/etc"])
    assert r.returncode == 127
    msg = r.stderr.decode()
    assert "--no-supervisor" in msg
    assert msg.startswith("sandlock: ")
    assert r.stdout == b""


def test_inner_no_supervisor_inside_supervised_works():
    with open("/etc/group", "rb") as f:
        content = f.read()
    r = inner(inner_flags=["--no-supervisor", "-r", "/etc"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == content


def test_no_supervisor_refuses_name():
    r = run("--no-supervisor", "--name", "x", *SYSTEM_READ, "--", "true", timeout=30)
    assert r.returncode == 1
    lines = r.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sandlock: ") and "name" in lines[0]
    # Control: each flag alone is fine.
    assert run("--no-supervisor", *SYSTEM_READ, "--", "true", timeout=30).returncode == 0
    assert run("--name", "x", *SYSTEM_READ, "--", "true", timeout=30).returncode == 0


def test_no_supervisor_keeps_blocklist_and_landlock(tmp_path):
    # Without the supervisor the kernel-only layers are still there.
    f = tmp_path / "f"
    f.write_text("x")
    r = run("--no-supervisor", *SYSTEM_READ, "--", "cat", str(f), timeout=30)
    assert r.returncode == 1
    assert b"Permission denied" in r.stderr
    if not X86_64:
        return  # the landlock half above is the whole test elsewhere
    code = f"out(sc({NR['personality']}, 0xffffffff))"
    assert result_json(py_inside(code, "--no-supervisor")) == [-1, errno.EPERM]
    # Control: the same snippet outside gets the persona back.
    assert result_json(py_outside(code))[1] == 0
